/* test_gen_shard — twincache-gen --shard I/N (issue 29):
 *  - N shards hold exactly the whole cache's graphs: their chunk records
 *    are the whole cache's records byte for byte (same keys, same tag), and
 *    the set of them, opened through twincache_cache_open, has the whole
 *    cache's count, dims, tag, config and stats, equal frames and equal
 *    decoded graphs; for N = 1, 3 and 7 (uneven), and SCM-only (--samples 0);
 *  - a shard killed with SIGKILL mid-run resumes to the bytes of an
 *    uninterrupted shard;
 *  - a shard directory of another range (other --graphs) or a whole-cache
 *    run on a shard is refused (exit 3), nothing changed; so is, before
 *    anything is made, a shard beside a sibling of another split or config,
 *    of another shard count than the set's, or into a whole cache;
 *  - usage errors (exit 2): I >= N, malformed, more shards than chunks, auto
 *    with no launcher; --shard auto takes SLURM_PROCID/SLURM_NTASKS.
 * usage: test_gen_shard TWINCACHE_GEN TMPDIR */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gen_test_util.h"
#include "tc_cache_raw.h"
#include "twincache_cache.h"

static const char *gen, *tmp;

static void rm_tree(const char *dir) {
  char cmd[8400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  TC_REQUIRE(system(cmd) == 0, "%s", cmd);
}

/* Runs gen with the common options plus extra (NULL-terminated); returns
 * the exit status, stderr in err. */
static int gen_run(const char *out, const char *graphs, const char *samples, const char *const *extra, char *err,
                   size_t cap) {
  const char *a[32] = {"--out", out, "--graphs", graphs, "--chunk-graphs", "8", "--samples", samples,
                       "--nodes", "3:8", "--threads", "2", "--quiet"};
  int n = 13;
  for (int i = 0; extra && extra[i]; i++) a[n++] = extra[i];
  a[n] = NULL;
  return tg_run(gen, a, err, cap);
}

/* Every record of the shard's graphs sub-DB equals the whole cache's record
 * of the same key; counts the records. */
typedef struct same_ctx {
  tc_cache_raw *whole;
  uint64_t records, differ;
} same_ctx;
static int same_record(const void *key, size_t key_len, const void *val, size_t val_len, void *user) {
  same_ctx *s = user;
  void *w = NULL;
  size_t w_len = 0;
  s->records++;
  if (tc_cache_raw_get(s->whole, "graphs", key, key_len, &w, &w_len) != 0 || w_len != val_len ||
      memcmp(w, val, val_len) != 0)
    s->differ++;
  free(w);
  return 0;
}

/* Opens both and compares everything the API shows, graph by graph. */
static void compare_set(const char *whole, const char *set, uint32_t shards) {
  twincache_cache *a = NULL, *b = NULL;
  TC_REQUIRE(twincache_cache_open(whole, &a) == 0, "%s", twincache_last_error());
  int rc = twincache_cache_open(set, &b);
  TC_REQUIRE(rc == 0, "open set %s: %s", set, twincache_last_error());
  TC_CHECK(twincache_cache_members(b) == shards, "%u members", twincache_cache_members(b));
  TC_CHECK(twincache_cache_count(a) == twincache_cache_count(b), "count");
  TC_CHECK(twincache_cache_first(b) == 0 && !twincache_cache_shard(b, NULL, NULL, NULL), "a set is not a shard");
  TC_CHECK(twincache_cache_tag(a) == twincache_cache_tag(b), "tag");
  TC_CHECK(strcmp(twincache_cache_config(a), twincache_cache_config(b)) == 0, "config");
  TC_CHECK(memcmp(twincache_cache_dims(a), twincache_cache_dims(b), sizeof(twincache_dims)) == 0, "dims");
  TC_CHECK(memcmp(twincache_cache_stats(a), twincache_cache_stats(b), sizeof(twincache_stats)) == 0, "stats");
  const twincache_dims *d = twincache_cache_dims(a);
  twincache_graph *ga = twincache_graph_alloc(d->max_nodes, d->samples, d->max_inter, d->hidden);
  twincache_graph *gb = twincache_graph_alloc(d->max_nodes, d->samples, d->max_inter, d->hidden);
  twincache_dctx *dc = twincache_dctx_create();
  TC_REQUIRE(ga && gb && dc);
  uint64_t bad_frames = 0, bad_graphs = 0;
  for (uint64_t i = 0; i < twincache_cache_count(a); i++) {
    void *fa = NULL, *fb = NULL;
    size_t na = 0, nb = 0;
    if (twincache_cache_read_frame(a, i, &fa, &na) || twincache_cache_read_frame(b, i, &fb, &nb) || na != nb ||
        memcmp(fa, fb, na))
      bad_frames++;
    free(fa);
    free(fb);
    if (twincache_cache_read_graph(a, dc, i, ga) || twincache_cache_read_graph(b, dc, i, gb) ||
        ga->index != i || gb->index != i || ga->n_nodes != gb->n_nodes || ga->n_inter != gb->n_inter ||
        memcmp(ga->adj, gb->adj, (size_t)ga->n_nodes * ga->ld_adj) ||
        memcmp(ga->base, gb->base, sizeof(float) * ga->n_samples * ga->ld))
      bad_graphs++;
  }
  TC_CHECK(bad_frames == 0, "%s: %llu frames differ", set, (unsigned long long)bad_frames);
  TC_CHECK(bad_graphs == 0, "%s: %llu decoded graphs differ", set, (unsigned long long)bad_graphs);
  /* chunk records: every shard's records are the whole cache's, and
   * together they are all of them */
  tc_cache_raw *rw = NULL;
  TC_REQUIRE(tc_cache_raw_open(whole, 0, &rw) == 0);
  same_ctx s = {rw, 0, 0};
  for (uint32_t m = 0; m < twincache_cache_members(b); m++) {
    const twincache_cache *mc = twincache_cache_member(b, m);
    uint32_t index = 99, count = 0;
    TC_CHECK(twincache_cache_shard(mc, &index, &count, NULL) && index == m && count == shards, "member %u", m);
    char dir[4300];
    snprintf(dir, sizeof dir, "%s/shard-%05u-of-%05u", set, m, shards);
    tc_cache_raw *r = NULL;
    TC_REQUIRE(tc_cache_raw_open(dir, 0, &r) == 0, "%s", dir);
    tc_cache_raw_foreach(r, "graphs", same_record, &s);
    tc_cache_raw_abort(r);
  }
  TC_CHECK(s.differ == 0, "%s: %llu chunk records differ from the whole cache's", set,
           (unsigned long long)s.differ);
  TC_CHECK(s.records == tc_cache_raw_count(rw, "graphs"), "%s: %llu records, the whole cache has %llu", set,
           (unsigned long long)s.records, (unsigned long long)tc_cache_raw_count(rw, "graphs"));
  tc_cache_raw_abort(rw);
  twincache_dctx_free(dc);
  twincache_graph_free(ga);
  twincache_graph_free(gb);
  twincache_cache_close(a);
  twincache_cache_close(b);
}

static void shards_equal_whole(const char *samples) {
  char whole[4200], set[4200], spec[32], err[4096];
  snprintf(whole, sizeof whole, "%s/shard_whole_%s", tmp, samples);
  rm_tree(whole);
  TC_REQUIRE(gen_run(whole, "203", samples, NULL, err, sizeof err) == 0, "whole: %s", err);
  const uint32_t counts[] = {1, 3, 7};
  for (int k = 0; k < 3; k++) {
    snprintf(set, sizeof set, "%s/shard_set_%s_%u", tmp, samples, counts[k]);
    rm_tree(set);
    for (uint32_t i = 0; i < counts[k]; i++) { /* highest first: order does not matter */
      snprintf(spec, sizeof spec, "%u/%u", counts[k] - 1 - i, counts[k]);
      const char *x[] = {"--shard", spec, NULL};
      TC_REQUIRE(gen_run(set, "203", samples, x, err, sizeof err) == 0, "shard %s: %s", spec, err);
    }
    compare_set(whole, set, counts[k]);
  }
}

/* SIGKILL a shard's generator once it has committed some graphs, rerun it:
 * the shard ends byte-identical to an uninterrupted one. */
static void resume(void) {
  char set[4200], ref[4200], dir[4300], err[4096], why[512];
  snprintf(set, sizeof set, "%s/shard_resume", tmp);
  snprintf(ref, sizeof ref, "%s/shard_resume_ref", tmp);
  rm_tree(set);
  rm_tree(ref);
  const char *x[] = {"--shard", "1/2", NULL};
  TC_REQUIRE(gen_run(ref, "40000", "16", x, err, sizeof err) == 0, "%s", err);
  snprintf(dir, sizeof dir, "%s/shard-00001-of-00002", set);
  const char *a[] = {"--out", set, "--graphs", "40000", "--chunk-graphs", "8", "--samples", "16", "--nodes", "3:8",
                     "--threads", "2", "--quiet", "--shard", "1/2", NULL};
  pid_t pid = tg_spawn(gen, a);
  TC_REQUIRE(pid > 0);
  struct timespec pause = {0, 2000000};
  uint64_t first = 20000, seen = 0; /* shard 1/2 of 5000 chunks: graphs 20000.. */
  for (int i = 0; i < 60000 && seen <= first; i++) {
    seen = tg_committed(dir);
    if (seen <= first) nanosleep(&pause, NULL);
  }
  kill(pid, SIGKILL);
  tg_wait(pid);
  uint64_t after = tg_committed(dir);
  printf("resume: killed at %llu of graphs %llu..39999\n", (unsigned long long)after, (unsigned long long)first);
  TC_CHECK(after >= seen && seen > first, "committed %llu after the kill, %llu seen", (unsigned long long)after,
           (unsigned long long)seen);
  TC_REQUIRE(tg_run(gen, a, err, sizeof err) == 0, "resume: %s", err);
  char ref_dir[4300];
  snprintf(ref_dir, sizeof ref_dir, "%s/shard-00001-of-00002", ref);
  TC_CHECK(tg_cache_compare(dir, ref_dir, why, sizeof why) == 0, "resumed shard differs: %s", why);
}

static void refusals(void) {
  char set[4200], dir[4300], err[4096];
  snprintf(set, sizeof set, "%s/shard_refuse", tmp);
  rm_tree(set);
  const char *one[] = {"--shard", "1/3", NULL};
  TC_REQUIRE(gen_run(set, "100", "16", one, err, sizeof err) == 0, "%s", err);
  snprintf(dir, sizeof dir, "%s/shard-00001-of-00003", set);
  uint64_t before = tg_committed(dir);
  /* the same shard name of another split (--graphs 300): exit 3, unchanged */
  TC_CHECK(gen_run(set, "300", "16", one, err, sizeof err) == 3, "other --graphs accepted: %s", err);
  TC_CHECK(strstr(err, "shard 1/3") && strstr(err, dir), "message: %s", err);
  /* the real reason: the range moved (not "holds shard 1/3, not shard 1/3") */
  TC_CHECK(strstr(err, "holds shard 1/3 as graphs 32..63") && strstr(err, "is graphs 96..199") &&
           strstr(err, "cannot be extended"), "message: %s", err);
  /* refused at the writer, before anything is made (issue 35): a sibling
   * of another split or config, a shard of another count beside the set's,
   * a shard into a whole cache */
  char sib[4400];
  snprintf(sib, sizeof sib, "%s/shard-00002-of-00003", set);
  const char *two[] = {"--shard", "2/3", NULL}, *two_seed[] = {"--shard", "2/3", "--seed", "9", NULL};
  TC_CHECK(gen_run(set, "300", "16", two, err, sizeof err) == 3, "a sibling of another split: %s", err);
  TC_CHECK(strstr(err, "already holds shard-00001-of-00003, split from 100 graphs in chunks of 8") &&
           strstr(err, "this run splits 300 graphs"), "message: %s", err);
  TC_CHECK(gen_run(set, "100", "16", two_seed, err, sizeof err) == 3, "a sibling of another seed: %s", err);
  TC_CHECK(strstr(err, "already holds shard-00001-of-00003, of another config (seed:"), "message: %s", err);
  TC_CHECK(access(sib, F_OK) != 0, "a refused sibling made %s", sib);
  const char *fourth[] = {"--shard", "1/4", NULL};
  snprintf(sib, sizeof sib, "%s/shard-00001-of-00004", set);
  TC_CHECK(gen_run(set, "100", "16", fourth, err, sizeof err) == 3, "a shard of 4 beside a set of 3: %s", err);
  TC_CHECK(strstr(err, "holds shard-00001-of-00003, a set of 3 shards") && strstr(err, "--shard I/3"),
           "message: %s", err);
  TC_CHECK(access(sib, F_OK) != 0, "a shard of another count was made: %s", sib);
  char whole[4300];
  snprintf(whole, sizeof whole, "%s/whole", set);
  TC_REQUIRE(gen_run(whole, "40", "16", NULL, err, sizeof err) == 0, "%s", err);
  const char *half[] = {"--shard", "0/2", NULL};
  TC_CHECK(gen_run(whole, "40", "16", half, err, sizeof err) == 3, "a shard into a whole cache: %s", err);
  TC_CHECK(strstr(err, "is a whole cache (it holds data.mdb), not a set's directory"), "message: %s", err);
  snprintf(sib, sizeof sib, "%s/shard-00000-of-00002", whole);
  TC_CHECK(access(sib, F_OK) != 0, "a shard was made inside a whole cache: %s", sib);
  /* a whole-cache run on a shard directory */
  TC_CHECK(gen_run(dir, "100", "16", NULL, err, sizeof err) == 3, "whole run on a shard accepted: %s", err);
  TC_CHECK(strstr(err, "a whole cache"), "message: %s", err);
  TC_CHECK(tg_committed(dir) == before, "the shard changed");
  /* usage errors: exit 2, nothing made */
  const char *bad[] = {"3/3", "1/0", "1/", "/3", "a/3", "1/3x", "-1/3", "1", "", "13/14", NULL};
  for (int i = 0; bad[i]; i++) {
    const char *x[] = {"--shard", bad[i], NULL};
    char out[4300];
    snprintf(out, sizeof out, "%s/shard_bad", tmp);
    rm_tree(out);
    TC_CHECK(gen_run(out, "100", "16", x, err, sizeof err) == 2, "--shard '%s' accepted: %s", bad[i], err);
    TC_CHECK(strstr(err, "--shard"), "--shard '%s': message %s", bad[i], err);
    TC_CHECK(access(out, F_OK) != 0, "--shard '%s' made %s", bad[i], out);
  }
  /* auto: no launcher, then Slurm's variables */
  const char *names[] = {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE",
                         "SLURM_PROCID", "SLURM_NTASKS", "RANK", "WORLD_SIZE"};
  for (int i = 0; i < 8; i++) unsetenv(names[i]);
  const char *autox[] = {"--shard", "auto", NULL};
  snprintf(set, sizeof set, "%s/shard_auto", tmp);
  rm_tree(set);
  TC_CHECK(gen_run(set, "100", "16", autox, err, sizeof err) == 2, "auto with no launcher: %s", err);
  TC_CHECK(strstr(err, "SLURM_PROCID"), "message: %s", err);
  setenv("SLURM_PROCID", "2", 1);
  setenv("SLURM_NTASKS", "3", 1);
  TC_CHECK(gen_run(set, "100", "16", autox, err, sizeof err) == 0, "auto under Slurm: %s", err);
  snprintf(dir, sizeof dir, "%s/shard-00002-of-00003", set);
  TC_CHECK(tg_committed(dir) == 100, "shard 2/3 of 100 graphs ends at 100, not %llu",
           (unsigned long long)tg_committed(dir));
  unsetenv("SLURM_PROCID");
  unsetenv("SLURM_NTASKS");
}

int main(int argc, char **argv) {
  TC_REQUIRE(argc == 3, "usage: test_gen_shard TWINCACHE_GEN TMPDIR");
  gen = argv[1];
  tmp = argv[2];
  shards_equal_whole("16");
  shards_equal_whole("0");
  refusals();
  resume();
  return tc_test_finish("gen_shard");
}
