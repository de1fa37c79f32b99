/* test_errors — the public API's failure paths each return their status and
 * leave ONE message, read by twincache_last_error(), that names what is
 * wrong (issue 20): a missing cache, a file or an empty directory where a
 * cache should be, a truncated data file, bad loader options and resume
 * states, a damaged graph (reader, loader, frame decoder), a missing chunk
 * record, a stale batch handle, and train's checkpoint reader on a missing,
 * garbage, truncated and bit-flipped checkpoint. A call that succeeds after
 * a failure does not report the old message as its own where it says so
 * (loader open clears it).
 * Called as: test_errors GEN SCRATCH */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inspect_test.h"
#include "tc_cache_raw.h"
#include "tc_checkpoint.h"
#include "tc_test.h"
#include "twincache_loader.h"

static char scratch[2048];

/* rc is the status `want` and the message names every word of `names`
 * (NULL-terminated). */
static void expect_msg(const char *what, int rc, int want, const char *const *names) {
  const char *m = twincache_last_error();
  TC_CHECK(rc == want, "%s: status %d (%s), want %d (%s); message: %s", what, rc, twincache_strerror(rc), want,
           twincache_strerror(want), m);
  TC_CHECK(m && m[0] && !strchr(m, '\n'), "%s: want one non-empty line, got '%s'", what, m ? m : "(null)");
  for (int i = 0; names && names[i]; i++)
    TC_CHECK(m && strstr(m, names[i]), "%s: message does not name '%s': %s", what, names[i], m ? m : "");
  printf("%-34s -> %s\n", what, m ? m : "(null)");
}

static int loader_open_opts(const char *path, const twincache_loader_options *o,
                            const twincache_loader_state *st, twincache_loader **l) {
  *l = NULL;
  return twincache_loader_open(path, o, st, l);
}

static void test_not_a_cache(void) {
  char missing[2100], empty[2100], file[2100];
  snprintf(missing, sizeof missing, "%s/no-such-cache", scratch);
  snprintf(empty, sizeof empty, "%s/empty-dir", scratch);
  snprintf(file, sizeof file, "%s/plain-file", scratch);
  TC_CHECK(mkdir(empty, 0755) == 0, "mkdir %s", empty);
  FILE *f = fopen(file, "w");
  TC_CHECK(f && fputs("not a cache\n", f) >= 0, "write %s", file);
  if (f) fclose(f);

  twincache_cache *c = NULL;
  twincache_loader *l = NULL;
  expect_msg("cache_open missing", twincache_cache_open(missing, &c), TWINCACHE_ENOTFOUND,
             (const char *const[]){missing, "no such", NULL});
  expect_msg("loader_open missing", loader_open_opts(missing, NULL, NULL, &l), TWINCACHE_ENOTFOUND,
             (const char *const[]){missing, "cannot open cache", NULL});
  expect_msg("cache_open empty directory", twincache_cache_open(empty, &c), TWINCACHE_ENOTCACHE,
             (const char *const[]){empty, "data.mdb", NULL});
  expect_msg("cache_open plain file", twincache_cache_open(file, &c), TWINCACHE_ENOTCACHE,
             (const char *const[]){file, "not a directory", NULL});
  TC_CHECK(!c && !l, "no handle on failure");
}

static void test_truncated(const char *cache) {
  char copy[2100], data[2200];
  snprintf(copy, sizeof copy, "%s/truncated", scratch);
  snprintf(data, sizeof data, "%s/data.mdb", copy);
  TC_CHECK(tt_copy_cache(cache, copy) == 0, "copy");
  TC_CHECK(truncate(data, 4096) == 0, "truncate %s", data);
  twincache_cache *c = NULL;
  expect_msg("cache_open truncated", twincache_cache_open(copy, &c), TWINCACHE_ETRUNCATED,
             (const char *const[]){data, "truncated", NULL});
  twincache_cache_close(c);
}

/* A cache whose committed graphs LMDB cannot see (its newest meta page
 * damaged: LMDB falls back to the state before any graph was committed)
 * reads as holding 0 graphs: the loader says so, of how many, and how to
 * finish, instead of "graph range [0, 0) is empty". */
static void test_nothing_committed(const char *cache) {
  char copy[2100];
  snprintf(copy, sizeof copy, "%s/nothing-committed", scratch);
  TC_CHECK(tt_copy_cache(cache, copy) == 0 && tt_lmdb_meta_poke(copy, 144, 0) == 0, "damage %s", copy);
  twincache_cache *c = NULL;
  TC_CHECK(twincache_cache_open(copy, &c) == 0 && twincache_cache_count(c) == 0,
           "the older meta page of %s holds graphs: %s", copy, twincache_last_error());
  twincache_cache_close(c);
  twincache_loader *l = NULL;
  expect_msg("loader_open nothing committed", loader_open_opts(copy, NULL, NULL, &l), TWINCACHE_EINVAL,
             (const char *const[]){copy, "0 of the", "rerun twincache-gen to finish", "damaged", NULL});
  twincache_loader_close(l);
}

static void test_options(const char *cache) {
  twincache_loader_options o;
  twincache_loader *l = NULL;
  twincache_loader_options_init(&o);
  o.batch_size = 0;
  expect_msg("loader option batch_size 0", loader_open_opts(cache, &o, NULL, &l), TWINCACHE_EINVAL,
             (const char *const[]){"batch_size", NULL});
  twincache_loader_options_init(&o);
  o.threads = 100000;
  expect_msg("loader option threads 100000", loader_open_opts(cache, &o, NULL, &l), TWINCACHE_EINVAL,
             (const char *const[]){"threads", "100000", NULL});
  twincache_loader_options_init(&o);
  o.index_end = 1u << 30;
  expect_msg("loader option index_end", loader_open_opts(cache, &o, NULL, &l), TWINCACHE_EINVAL,
             (const char *const[]){"index_end", NULL});
  twincache_loader_options_init(&o);
  o.rank = 3, o.world_size = 2;
  expect_msg("loader option rank", loader_open_opts(cache, &o, NULL, &l), TWINCACHE_EINVAL,
             (const char *const[]){"rank", NULL});

  /* a resume state of another seed names the field */
  twincache_loader_options_init(&o);
  o.threads = 1;
  TC_CHECK(loader_open_opts(cache, &o, NULL, &l) == 0, "open: %s", twincache_last_error());
  TC_CHECK(twincache_last_error()[0] == '\0', "a successful open clears the message: %s", twincache_last_error());
  twincache_loader_state st;
  if (l) twincache_loader_get_state(l, &st);
  twincache_loader_close(l);
  st.seed ^= 1;
  twincache_loader *l2 = NULL;
  expect_msg("loader resume of another seed", loader_open_opts(cache, &o, &st, &l2), TWINCACHE_EINVAL,
             (const char *const[]){"seed", NULL});
  uint8_t bytes[TWINCACHE_LOADER_STATE_BYTES];
  memset(bytes, 0x5a, sizeof bytes);
  expect_msg("loader state garbage", twincache_loader_state_decode(bytes, &st), TWINCACHE_EINVAL,
             (const char *const[]){"loader state", "magic", NULL});
}

/* Flips a byte in the middle of graph `slot`'s frame in chunk 0 of dir. */
static int damage_graph(const char *dir, uint32_t slot) {
  tc_cache_raw *raw = NULL;
  void *got = NULL;
  size_t n = 0;
  uint8_t key[8];
  tc_cache_raw_chunk_key(key, 0);
  int ok = tc_cache_raw_open(dir, 1, &raw) == 0 && tc_cache_raw_get(raw, "graphs", key, 8, &got, &n) == 0;
  twincache_chunk_view v;
  const void *frame;
  size_t size;
  ok = ok && twincache_chunk_parse(got, n, &v) == 0 && twincache_chunk_frame(&v, slot, &frame, &size) == 0;
  if (ok) ((uint8_t *)frame)[size / 2] ^= 0x5a; /* frame points into got */
  ok = ok && tc_cache_raw_put(raw, "graphs", key, 8, got, n) == 0 && tc_cache_raw_close(raw) == 0;
  if (!ok) tc_cache_raw_abort(raw);
  free(got);
  return ok ? 0 : -1;
}

static int delete_chunk(const char *dir, uint64_t chunk) {
  tc_cache_raw *raw = NULL;
  uint8_t key[8];
  tc_cache_raw_chunk_key(key, chunk);
  if (tc_cache_raw_open(dir, 1, &raw) != 0) return -1;
  if (tc_cache_raw_del(raw, "graphs", key, 8) != 0) {
    tc_cache_raw_abort(raw);
    return -1;
  }
  return tc_cache_raw_close(raw) == 0 ? 0 : -1;
}

static void test_damaged(const char *cache) {
  char copy[2100];
  snprintf(copy, sizeof copy, "%s/damaged", scratch);
  TC_CHECK(tt_copy_cache(cache, copy) == 0 && damage_graph(copy, 5) == 0, "damage graph 5 of %s", copy);
  twincache_cache *c = NULL;
  TC_CHECK(twincache_cache_open(copy, &c) == 0, "open %s: %s", copy, twincache_last_error());
  if (!c) return;
  const twincache_dims *d = twincache_cache_dims(c);
  twincache_graph *g = twincache_graph_alloc(d->max_nodes, d->samples, d->max_inter ? d->max_inter : 1, d->hidden);
  twincache_dctx *dx = twincache_dctx_create();
  int rc = twincache_cache_read_graph(c, dx, 5, g);
  TC_CHECK(rc == TWINCACHE_ECHECKSUM || rc == TWINCACHE_ECORRUPT, "read graph 5: %d", rc);
  expect_msg("read_graph damaged", rc, rc, (const char *const[]){copy, "graph 5", "frame", NULL});
  TC_CHECK(twincache_cache_read_graph(c, dx, 4, g) == 0, "graph 4 reads");
  expect_msg("read_graph out of range", twincache_cache_read_graph(c, dx, 1u << 20, g), TWINCACHE_ENOTFOUND,
             (const char *const[]){"graph 1048576", NULL});

  /* the decoder alone on the damaged frame names the frame */
  void *frame = NULL;
  size_t size = 0;
  TC_CHECK(twincache_cache_read_frame(c, 5, &frame, &size) == 0, "read frame 5");
  if (frame) expect_msg("frame_decode damaged", twincache_frame_decode(dx, frame, size, g), rc,
                        (const char *const[]){"frame", NULL});
  free(frame);
  uint8_t junk[64] = {0};
  expect_msg("frame_decode garbage", twincache_frame_decode(dx, junk, sizeof junk, g), TWINCACHE_ECORRUPT,
             (const char *const[]){"frame", "magic", NULL});
  twincache_dctx_free(dx);
  twincache_graph_free(g);
  twincache_cache_close(c);

  /* the loader under the FAIL policy: next() names the graph */
  twincache_loader_options o;
  twincache_loader_options_init(&o);
  o.batch_size = 8, o.shuffle = 0, o.threads = 2;
  twincache_loader *l = NULL;
  TC_CHECK(loader_open_opts(copy, &o, NULL, &l) == 0, "loader open: %s", twincache_last_error());
  twincache_batch *b = NULL;
  rc = l ? twincache_loader_next(l, &b) : TWINCACHE_EINVAL;
  TC_CHECK(rc == TWINCACHE_ECHECKSUM || rc == TWINCACHE_ECORRUPT, "next: %d", rc);
  expect_msg("loader_next damaged", rc, rc, (const char *const[]){copy, "batch 0", "graph 5", "frame", NULL});
  twincache_loader_close(l);

  /* a stale handle: released twice */
  o.threads = 1;
  TC_CHECK(loader_open_opts(cache, &o, NULL, &l) == 0, "loader open: %s", twincache_last_error());
  if (l && twincache_loader_next(l, &b) == 0) {
    twincache_batch keep = *b;
    TC_CHECK(twincache_loader_release(l, b) == 0, "release");
    expect_msg("release twice", twincache_loader_release(l, &keep), TWINCACHE_ESTALE,
               (const char *const[]){"stale", NULL});
  }
  twincache_loader_close(l);

  /* a missing chunk record */
  char gone[2100];
  snprintf(gone, sizeof gone, "%s/chunk-deleted", scratch);
  TC_CHECK(tt_copy_cache(cache, gone) == 0 && delete_chunk(gone, 1) == 0, "delete chunk 1 of %s", gone);
  TC_CHECK(twincache_cache_open(gone, &c) == 0, "open %s", gone);
  if (c) {
    frame = NULL;
    expect_msg("read_frame of a deleted chunk", twincache_cache_read_frame(c, 17, &frame, &size),
               TWINCACHE_ECORRUPT, (const char *const[]){gone, "graph 17", "chunk 1", "missing", NULL});
    free(frame);
    twincache_cache_close(c);
  }
}

static void test_checkpoint(void) {
  char path[2100], bad[2100];
  snprintf(path, sizeof path, "%s/model.ckpt", scratch);
  snprintf(bad, sizeof bad, "%s/bad.ckpt", scratch);
  tc_model *m = tc_model_create(1);
  if (!m) {
    TC_CHECK(0, "tc_model_create");
    return;
  }
  tc_checkpoint_info info = {.step = 1, .seed = 1};
  twincache_loader_state_decode((const uint8_t[TWINCACHE_LOADER_STATE_BYTES]){0}, &info.stream);
  info.stream.magic = TWINCACHE_LOADER_STATE_MAGIC, info.stream.version = TWINCACHE_LOADER_STATE_VERSION;
  info.stream.batch_size = 8, info.stream.world_size = 1;
  TC_CHECK(tc_checkpoint_save(path, m, &info) == 0, "save: %s", twincache_last_error());

  char missing[2200];
  snprintf(missing, sizeof missing, "%s/no-dir/x.ckpt", scratch);
  expect_msg("checkpoint load missing", tc_checkpoint_load(missing, m, &info), TWINCACHE_ENOTFOUND,
             (const char *const[]){missing, NULL});
  expect_msg("checkpoint save into no directory", tc_checkpoint_save(missing, m, &info), TWINCACHE_ENOTFOUND,
             (const char *const[]){missing, NULL});

  size_t n = 0;
  char *bytes = tt_read_file(path, &n);
  TC_CHECK(bytes && n > 200, "read back %s", path);
  if (!bytes) goto done;
  struct { size_t at, len; int want; const char *name; const char *what; } cases[] = {
      {0, n, TWINCACHE_ECORRUPT, "magic", "checkpoint load garbage"},
      {SIZE_MAX, n / 2, TWINCACHE_ETRUNCATED, "truncated", "checkpoint load truncated"},
      {n - 100, n, TWINCACHE_ECHECKSUM, "checksum", "checkpoint load bit flip"}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    if (cases[k].at != SIZE_MAX) bytes[cases[k].at] ^= 0x5a;
    FILE *f = fopen(bad, "wb");
    TC_CHECK(f && fwrite(bytes, 1, cases[k].len, f) == cases[k].len, "write %s", bad);
    if (f) fclose(f);
    if (cases[k].at != SIZE_MAX) bytes[cases[k].at] ^= 0x5a;
    expect_msg(cases[k].what, tc_checkpoint_load(bad, m, &info), cases[k].want,
               (const char *const[]){bad, cases[k].name, NULL});
  }
  free(bytes);
done:
  tc_model_free(m);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s GEN SCRATCH\n", argv[0]);
    return 2;
  }
  snprintf(scratch, sizeof scratch, "%s", argv[2]);
  char cache[2100];
  snprintf(cache, sizeof cache, "%s/cache", scratch);
  if (tt_scratch_init(scratch) != 0 || tt_make_cache(argv[1], cache, scratch, 64, NULL) != 0) {
    fprintf(stderr, "test_errors: cannot make the test cache in %s\n", scratch);
    return 1;
  }
  test_not_a_cache();
  test_truncated(cache);
  test_options(cache);
  test_nothing_committed(cache);
  test_damaged(cache);
  test_checkpoint();
  if (tc_test_failures()) return 1;
  printf("test_errors: ok\n");
  return 0;
}
