/* test_cache_set — cache sets (issue 29, FORMAT.md section 7):
 *  - the loader reads a set of 4 shards (a directory, a manifest written by
 *    hand and one written by `twincache-inspect manifest`) with
 *    1 and 2 decode threads, 1 and 2 ranks, 2 shuffled epochs: the same
 *    batches, byte for byte, as the whole cache; an SCM-only set in fresh
 *    mode too (its noise is keyed by the cache tag, the whole cache's);
 *  - a set with a shard missing, duplicated, of another split, of another
 *    seed, incomplete, or with a whole cache among its shards, and
 *    manifests with a wrong range, tag or first line: open fails with one
 *    message naming the shard (or line), and no handle (nothing read);
 *  - `readonly`: the set made read-only (chmod -R a-w) is verified by
 *    twincache-inspect run as nobody, and no lock file is written (needs
 *    root and setpriv; exit 77 otherwise).
 *  - the loader on one shard alone reads its graphs, each once per epoch;
 *  - twincache-train on the set trains on the whole cache's batches and
 *    reports its validation metrics;
 * usage: test_cache_set GEN INSPECT TRAIN SCRATCH [readonly] */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tc_cache_writer.h"
#include "twincache_cache.h"
#include "twincache_loader.h"

#define TC_TEST_STRERROR twincache_strerror
#include "tc_test.h"

#define SHARDS 4
static const char *gen, *inspect, *train, *scratch;


static const char *common_args = "--graphs 100 --chunk-graphs 8 --nodes 3:8 --threads 2 --quiet";

/* whole cache W and set S (4 shards) of the same options */
static void make(const char *name, const char *extra) {
  TC_REQUIRE(tc_test_sh("rm -rf '%s/%s_whole' '%s/%s_set'", scratch, name, scratch, name) == 0);
  TC_REQUIRE(tc_test_sh("'%s' --out '%s/%s_whole' %s %s", gen, scratch, name, common_args, extra) == 0);
  for (int i = 0; i < SHARDS; i++)
    TC_REQUIRE(tc_test_sh("'%s' --out '%s/%s_set' %s %s --shard %d/%d", gen, scratch, name, common_args, extra, i,
                  SHARDS) == 0);
}

/* A whole stream's bytes: every batch's slab appended. */
typedef struct stream {
  uint8_t *bytes;
  size_t n, batches;
} stream;

static int load(const char *path, const twincache_loader_options *o, stream *s) {
  twincache_loader *l = NULL;
  memset(s, 0, sizeof *s);
  int rc = twincache_loader_open(path, o, NULL, &l);
  if (rc != TWINCACHE_OK) return rc;
  twincache_batch *b;
  while ((rc = twincache_loader_next(l, &b)) == TWINCACHE_OK) {
    uint8_t *nb = realloc(s->bytes, s->n + b->layout.bytes);
    TC_REQUIRE(nb);
    s->bytes = nb;
    memcpy(s->bytes + s->n, b->slab, b->layout.bytes);
    s->n += b->layout.bytes;
    s->batches++;
    twincache_loader_release(l, b);
  }
  twincache_loader_close(l);
  return rc == TWINCACHE_END ? TWINCACHE_OK : rc;
}

static void same_epochs(const char *whole, const char *set, int fresh) {
  for (uint32_t threads = 1; threads <= 2; threads++)
    for (uint32_t world = 1; world <= 2; world++)
      for (uint32_t rank = 0; rank < world; rank++) {
        twincache_loader_options o;
        twincache_loader_options_init(&o);
        o.batch_size = 12;
        o.epochs = 2;
        o.seed = 5;
        o.threads = threads;
        o.world_size = world;
        o.rank = rank;
        if (fresh) {
          o.samples = TWINCACHE_SAMPLES_FRESH;
          o.rows = 16;
        }
        stream a, b;
        TC_REQUIRE(load(whole, &o, &a) == 0, "%s: %s", whole, twincache_last_error());
        int rc = load(set, &o, &b);
        TC_CHECK(rc == 0, "%s: %s", set, twincache_last_error());
        TC_CHECK(a.batches > 0 && a.batches == b.batches && a.n == b.n && memcmp(a.bytes, b.bytes, a.n) == 0,
                 "%s, %u threads, rank %u of %u: %zu batches, the whole cache %zu; the bytes differ", set,
                 threads, rank, world, b.batches, a.batches);
        free(a.bytes);
        free(b.bytes);
      }
}

/* Open must fail with status want and a message holding every needle;
 * the loader too. */
static void refused(const char *what, const char *path, int want, const char *const *needles) {
  twincache_cache *c = NULL;
  int rc = twincache_cache_open(path, &c);
  const char *msg = twincache_last_error();
  TC_CHECK(rc == want, "%s: status %d (%s), want %d: %s", what, rc, twincache_strerror(rc), want, msg);
  TC_CHECK(c == NULL, "%s: a handle on failure", what);
  for (int i = 0; needles[i]; i++) TC_CHECK(strstr(msg, needles[i]) != NULL, "%s: '%s' not in: %s", what, needles[i], msg);
  twincache_cache_close(c);
  twincache_loader *l = NULL;
  twincache_loader_options o;
  twincache_loader_options_init(&o);
  rc = twincache_loader_open(path, &o, NULL, &l);
  TC_CHECK(rc == want && l == NULL, "%s: the loader opened it (%d)", what, rc);
  TC_CHECK(strstr(twincache_last_error(), needles[0]) != NULL, "%s: loader message: %s", what,
           twincache_last_error());
  twincache_loader_close(l);
}

#define NEEDLES(...) ((const char *const[]){__VA_ARGS__, NULL})

/* A copy of the good set at scratch/bad, minus nothing. */
static void copy_set(char *bad, size_t cap) {
  snprintf(bad, cap, "%s/bad_set", scratch);
  TC_REQUIRE(tc_test_sh("rm -rf '%s' && cp -r '%s/lin_set' '%s' && rm -f '%s'/*/lock.mdb", bad, scratch, bad, bad) == 0);
}

static void bad_sets(void) {
  char bad[4200], shard[4400], other[4400];
  copy_set(bad, sizeof bad);
  TC_REQUIRE(tc_test_sh("rm -rf '%s/shard-00002-of-00004'", bad) == 0);
  refused("missing", bad, TWINCACHE_EMISMATCH, NEEDLES(bad, "shard 2 of 4", "missing"));

  copy_set(bad, sizeof bad);
  TC_REQUIRE(tc_test_sh("cp -r '%s/shard-00001-of-00004' '%s/copy-of-1'", bad, bad) == 0);
  snprintf(shard, sizeof shard, "%s/shard-00001-of-00004", bad);
  refused("duplicated", bad, TWINCACHE_EMISMATCH, NEEDLES(bad, "shard 1 of 4 twice", "copy-of-1", shard));

  /* the generator refuses to write these into a set (issue 35): they are
   * made in a set of their own, then moved in, as a careless copy would */
  copy_set(bad, sizeof bad); /* a shard of a 3-way split overlaps */
  TC_REQUIRE(tc_test_sh("rm -rf '%s/alien' && '%s' --out '%s/alien' %s --samples 16 --shard 1/3 && "
                        "mv '%s/alien/shard-00001-of-00003' '%s/'", scratch, gen, scratch, common_args, scratch,
                        bad) == 0);
  snprintf(shard, sizeof shard, "%s/shard-00001-of-00003", bad);
  refused("other split", bad, TWINCACHE_EMISMATCH, NEEDLES(bad, shard, "of 3", "overlap"));

  copy_set(bad, sizeof bad); /* shard 3 of another seed */
  TC_REQUIRE(tc_test_sh("rm -rf '%s/shard-00003-of-00004' '%s/alien' && '%s' --out '%s/alien' %s --samples 16 --seed 2 "
                        "--shard 3/4 && mv '%s/alien/shard-00003-of-00004' '%s/'", bad, scratch, gen, scratch,
                        common_args, scratch, bad) == 0);
  snprintf(shard, sizeof shard, "%s/shard-00003-of-00004", bad);
  refused("other seed", bad, TWINCACHE_EMISMATCH, NEEDLES(bad, shard, "another config or seed"));

  copy_set(bad, sizeof bad); /* a whole cache among the shards */
  TC_REQUIRE(tc_test_sh("cp -r '%s/lin_whole' '%s/whole'", scratch, bad) == 0);
  snprintf(other, sizeof other, "%s/whole", bad);
  refused("whole cache inside", bad, TWINCACHE_EMISMATCH, NEEDLES(bad, other, "a whole cache, not a shard"));

  copy_set(bad, sizeof bad); /* shard 0 created by a writer that committed nothing */
  {
    twincache_cache *c = NULL;
    snprintf(shard, sizeof shard, "%s/shard-00000-of-00004", bad);
    TC_REQUIRE(twincache_cache_open(shard, &c) == 0, "%s", twincache_last_error());
    char *config = strdup(twincache_cache_config(c));
    twincache_dims dims = *twincache_cache_dims(c);
    tc_cache_shard s = {0, SHARDS, 0, 0};
    TC_REQUIRE(tc_cache_shard_split(dims.graphs, dims.chunk_graphs, 0, SHARDS, &s) == 0);
    twincache_cache_close(c);
    TC_REQUIRE(tc_test_sh("rm -rf '%s'", shard) == 0);
    tc_cache_writer *w = NULL;
    TC_REQUIRE(tc_cache_writer_open_shard(shard, &dims, config, "test", 1 << 20, &s, &w) == 0, "%s",
               twincache_last_error());
    tc_cache_writer_close(w);
    free(config);
  }
  refused("incomplete", bad, TWINCACHE_EMISMATCH, NEEDLES(bad, shard, "incomplete", "0 of its 24 graphs"));
  TC_REQUIRE(tc_test_sh("rm -rf '%s'", bad) == 0);
}

/* Writes a manifest of the good set with its shard lines (paths relative
 * to the manifest) after the header lines given. */
static void manifest(const char *path, const char *tag_line, const char *range_of_2) {
  twincache_cache *c = NULL;
  char set[4200];
  snprintf(set, sizeof set, "%s/lin_set", scratch);
  TC_REQUIRE(twincache_cache_open(set, &c) == 0, "%s", twincache_last_error());
  FILE *f = fopen(path, "w");
  TC_REQUIRE(f);
  fprintf(f, "twincache-set 1\n# a comment\n");
  if (tag_line) fprintf(f, "%s\n", tag_line);
  else fprintf(f, "tag %016llx\n", (unsigned long long)twincache_cache_tag(c));
  fprintf(f, "config %s\n", twincache_cache_config(c));
  for (uint32_t i = 0; i < twincache_cache_members(c); i++) {
    const twincache_cache *m = twincache_cache_member(c, i);
    uint64_t first = twincache_cache_first(m), end = twincache_cache_count(m);
    if (i == 2 && range_of_2) fprintf(f, "shard 2 4 %s lin_set/shard-00002-of-00004\n", range_of_2);
    else fprintf(f, "shard %u 4 %llu %llu lin_set/shard-%05u-of-00004\n", i, (unsigned long long)first,
                 (unsigned long long)end, i);
  }
  fclose(f);
  twincache_cache_close(c);
}

static void manifests(void) {
  char path[4200], whole[4200];
  snprintf(path, sizeof path, "%s/lin.tcset", scratch);
  snprintf(whole, sizeof whole, "%s/lin_whole", scratch);
  manifest(path, NULL, NULL);
  same_epochs(whole, path, 0);
  /* the one inspect writes (absolute paths), read from another directory */
  char written[4300];
  snprintf(written, sizeof written, "%s/elsewhere/written.tcset", scratch);
  TC_REQUIRE(tc_test_sh("mkdir -p '%s/elsewhere' && '%s' manifest '%s/lin_set' --out '%s' > /dev/null", scratch, inspect,
                scratch, written) == 0);
  same_epochs(whole, written, 0);
  manifest(path, NULL, "24 48");
  refused("manifest range", path, TWINCACHE_EMISMATCH, NEEDLES(path, "line 7", "shard-00002-of-00004"));
  manifest(path, "tag 0123456789abcdef", NULL);
  refused("manifest tag", path, TWINCACHE_EMISMATCH, NEEDLES(path, "another config or seed", "0123456789abcdef"));
  manifest(path, "tag 12345", NULL);
  refused("manifest tag line", path, TWINCACHE_ECORRUPT, NEEDLES(path, ":3:"));
  manifest(path, "tag 0x0123456789abcd", NULL);
  refused("manifest tag 0x", path, TWINCACHE_ECORRUPT, NEEDLES(path, ":3:"));
  { /* the right tag twice: refused at the second line, not read as one (issue 35 item 12) */
    twincache_cache *c = NULL;
    char set[4300], two[128];
    snprintf(set, sizeof set, "%s/lin_set", scratch);
    TC_REQUIRE(twincache_cache_open(set, &c) == 0, "%s", twincache_last_error());
    snprintf(two, sizeof two, "tag %016llx\ntag %016llx", (unsigned long long)twincache_cache_tag(c),
             (unsigned long long)twincache_cache_tag(c));
    twincache_cache_close(c);
    manifest(path, two, NULL);
    refused("manifest with two tag lines", path, TWINCACHE_ECORRUPT, NEEDLES(path, ":4:", "16 hex digits, once"));
  }
  manifest(path, NULL, "+24 48");
  refused("manifest signed range", path, TWINCACHE_ECORRUPT, NEEDLES(path, ":7:"));
  /* a manifest naming itself as a shard: refused, not followed */
  TC_REQUIRE(tc_test_sh("printf 'twincache-set 1\\ntag 0123456789abcdef\\nshard 0 1 0 100 lin.tcset\\n' > '%s'", path) == 0);
  refused("manifest naming itself", path, TWINCACHE_EMISMATCH, NEEDLES(path, "is not a shard directory"));
  TC_REQUIRE(tc_test_sh("printf 'twincache-set 2\\n' > '%s'", path) == 0);
  refused("manifest magic", path, TWINCACHE_ENOTCACHE, NEEDLES(path, "not a twincache cache"));
}

/* As nobody, on a read-only copy: verify reads every graph; no lock file. */
static int read_only(void) {
  if (geteuid() != 0 || access("/usr/bin/setpriv", X_OK) != 0) {
    printf("test_cache_set readonly: skipped (needs root and /usr/bin/setpriv)\n");
    return 77;
  }
  char ro[4200];
  snprintf(ro, sizeof ro, "%s/ro_set", scratch);
  TC_REQUIRE(tc_test_sh("rm -rf '%s' && cp -r '%s/lin_set' '%s' && rm -f '%s'/*/lock.mdb '%s'/*/twincache-gen.lock && "
                "chmod -R a-w,a+rX '%s'", ro, scratch, ro, ro, ro, ro) == 0);
  int rc = tc_test_sh("/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups '%s' verify '%s' > /dev/null", inspect,
              ro);
  TC_CHECK(rc == 0, "verify of a read-only set as nobody: exit %d", rc);
  TC_CHECK(tc_test_sh("ls '%s'/*/lock.mdb > /dev/null 2>&1", ro) != 0, "a lock file was written");
  tc_test_sh("chmod -R u+w '%s' && rm -rf '%s'", ro, ro);
  return tc_test_finish("cache_set_readonly");
}

/* twincache-train on the set: the batches it trained on (its batch log)
 * and its validation metrics are the whole cache's. */
static void trainer(void) {
  const char *s = scratch;
  int rc = tc_test_sh("cd '%s' && for c in lin_whole lin_set; do '%s' --cache $c --steps 12 --batch 16 --device cpu "
              "--threads 2 --batch-log $c.batches --quiet --json > $c.json || exit 1; "
              "grep -o '\"val_[a-z]*\": [-0-9.e]*' $c.json > $c.val; done && grep -q val_loss lin_set.val && "
              "cmp lin_whole.batches lin_set.batches && cmp lin_whole.val lin_set.val", s, train);
  TC_CHECK(rc == 0, "twincache-train on the set: other batches or metrics than on the whole cache");
}

/* The loader on shard 2 of 4 alone (graphs 48..71): each of them once per
 * epoch by default, the whole cache's graphs; a range below it refused. */
static void lone_shard(void) {
  char shard[4300];
  snprintf(shard, sizeof shard, "%s/lin_set/shard-00002-of-00004", scratch);
  twincache_loader_options o;
  twincache_loader_options_init(&o);
  o.batch_size = 5;
  o.threads = 2;
  twincache_loader *l = NULL;
  TC_REQUIRE(twincache_loader_open(shard, &o, NULL, &l) == 0, "%s", twincache_last_error());
  int seen[100] = {0}, others = 0;
  twincache_batch *b;
  int rc;
  while ((rc = twincache_loader_next(l, &b)) == TWINCACHE_OK) {
    for (uint32_t g = 0; g < b->n_graphs; g++) {
      uint64_t id = b->graph_id[g];
      if (id >= 48 && id < 72) seen[id]++;
      else others++;
    }
    twincache_loader_release(l, b);
  }
  TC_CHECK(rc == TWINCACHE_END, "%s", twincache_last_error());
  twincache_loader_close(l);
  int once = 0;
  for (int i = 48; i < 72; i++) once += seen[i] == 1;
  TC_CHECK(once == 24 && others == 0, "%d of graphs 48..71 once, %d others", once, others);
  o.index_begin = 40;
  o.index_end = 60;
  TC_CHECK(twincache_loader_open(shard, &o, NULL, &l) == TWINCACHE_EINVAL && !l, "range below the shard");
  TC_CHECK(strstr(twincache_last_error(), "holds graphs 48.. only"), "%s", twincache_last_error());
}

/* twincache-inspect on the set and on one shard alone. */
static void tools(void) {
  const char *s = scratch, *in = inspect;
  TC_CHECK(tc_test_sh("'%s' verify '%s/lin_set' | grep -q 'all 100 graphs'", in, s) == 0, "verify of the set");
  TC_CHECK(tc_test_sh("'%s' verify '%s/lin_set/shard-00001-of-00004' | grep -q 'all 24 graphs in 3 chunks good'", in, s) == 0,
           "verify of shard 1 alone");
  TC_CHECK(tc_test_sh("'%s' info '%s/lin_set/shard-00003-of-00004' | grep -q 'shard            3 of 4: graphs 72..99'", in, s) == 0,
           "info of shard 3 alone");
  TC_CHECK(tc_test_sh("'%s' stats '%s/lin_set/shard-00003-of-00004' | grep -q ': 28 graphs'", in, s) == 0,
           "stats of shard 3 alone");
  TC_CHECK(tc_test_sh("'%s' show '%s/lin_set/shard-00003-of-00004' 5 2>&1 | grep -q 'out of range: shard 3 of 4 holds 28 graphs (72..99)'", in, s) == 0,
           "show of a graph another shard holds");
  TC_CHECK(tc_test_sh("cd '%s' && rm -f ex_* && '%s' export lin_whole 77 --format npy --out ex_w > /dev/null && "
              "'%s' export lin_set 77 --format npy --out ex_s > /dev/null && ls ex_w_*.npy | grep -q base && "
              "for f in ex_w_*.npy; do cmp -s \"$f\" \"ex_s_${f#ex_w_}\" || exit 1; done", s, in, in) == 0,
           "export from the set differs from the whole cache's");
}

int main(int argc, char **argv) {
  TC_REQUIRE(argc >= 5, "usage: test_cache_set GEN INSPECT TRAIN SCRATCH [readonly]");
  gen = argv[1];
  inspect = argv[2];
  train = argv[3];
  scratch = argv[4];
  TC_REQUIRE(tc_test_sh("mkdir -p '%s'", scratch) == 0);
  make("lin", "--samples 16");
  if (argc > 5 && strcmp(argv[5], "readonly") == 0) return read_only();
  char whole[4200], set[4200];
  snprintf(whole, sizeof whole, "%s/lin_whole", scratch);
  snprintf(set, sizeof set, "%s/lin_set", scratch);
  same_epochs(whole, set, 0);
  tools();
  trainer();
  lone_shard();
  make("scm", "--samples 0");
  snprintf(whole, sizeof whole, "%s/scm_whole", scratch);
  snprintf(set, sizeof set, "%s/scm_set", scratch);
  same_epochs(whole, set, 1);
  bad_sets();
  manifests();
  return tc_test_finish("cache_set");
}
