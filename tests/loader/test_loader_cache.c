/* test_loader_cache — the cache reader: facts of a real cache, every graph
 * readable (also from two threads at once), and the error codes of a missing
 * path, a plain file, an empty directory, foreign LMDB environments and a
 * cache of a newer format.
 * usage: test_loader_cache CACHE_DIR SCRATCH_DIR */
#include <pthread.h>
#include <unistd.h>

#include "tc_cache_raw.h"
#include "tc_common.h"
#include "tl_common.h"

static char scratch[2048];

static void path_in_scratch(char *out, size_t cap, const char *name) {
  snprintf(out, cap, "%s/%s", scratch, name);
}

/* Writes one key into an LMDB env at dir (a sub-DB when db is not NULL). */
static void lmdb_put_one(const char *dir, const char *db, const char *key, const void *val, size_t size) {
  tc_cache_raw *r = NULL;
  TC_REQUIRE(tc_cache_raw_open(dir, 1, &r) == 0);
  TC_REQUIRE(tc_cache_raw_put(r, db, key, strlen(key), val, size) == 0);
  TC_REQUIRE(tc_cache_raw_close(r) == 0);
}

/* Copies the cache at src into the empty directory dst. */
static void cache_copy(const char *src, const char *dst) {
  tl_mkdir(dst);
  TC_REQUIRE(tc_cache_raw_copy(src, dst) == 0);
}

typedef struct reader_arg {
  twincache_cache *c;
  uint64_t first, step, ok;
} reader_arg;

/* Reads every step-th graph from `first` with its own dctx. */
static void *reader_main(void *p) {
  reader_arg *a = p;
  const twincache_dims *d = twincache_cache_dims(a->c);
  twincache_graph *g = twincache_graph_alloc(d->max_nodes, d->samples, d->max_inter, d->hidden);
  twincache_dctx *dctx = twincache_dctx_create();
  if (g && dctx)
    for (uint64_t i = a->first; i < twincache_cache_count(a->c); i += a->step)
      a->ok += twincache_cache_read_graph(a->c, dctx, i, g) == TWINCACHE_OK && g->index == i;
  twincache_graph_free(g);
  twincache_dctx_free(dctx);
  return NULL;
}

int main(int argc, char **argv) {
  TC_REQUIRE(argc == 3);
  const char *cache_dir = argv[1];
  snprintf(scratch, sizeof scratch, "%s", argv[2]);
  tl_mkdir(scratch);
  char path[4096];
  twincache_cache *c = NULL;

  /* --- a real cache -------------------------------------------------------- */
  TC_REQUIRE(twincache_cache_open(cache_dir, &c) == TWINCACHE_OK);
  const twincache_dims *d = twincache_cache_dims(c);
  uint64_t count = twincache_cache_count(c);
  TC_CHECK(count > 0 && count <= d->graphs);
  TC_CHECK(d->chunk_graphs > 0 && d->max_nodes > 0 && d->samples > 0);
  TC_CHECK(twincache_cache_config(c)[0] == '{');
  TC_CHECK(strlen(twincache_cache_library(c)) > 0);
  TC_CHECK(twincache_cache_disk_bytes(c) > 0);
  const twincache_stats *st = twincache_cache_stats(c);
  TC_CHECK(st->frame_bytes > 0 && st->raw_bytes > st->frame_bytes && st->nodes > 0);

  twincache_graph *g = twincache_graph_alloc(d->max_nodes, d->samples, d->max_inter, d->hidden);
  twincache_dctx *dctx = twincache_dctx_create();
  TC_REQUIRE(g && dctx);
  uint64_t nodes = 0;
  for (uint64_t i = 0; i < count; i++) {
    TC_CHECK_RC(twincache_cache_read_graph(c, dctx, i, g), TWINCACHE_OK);
    TC_CHECK(g->index == i && g->n_nodes >= 1 && g->n_nodes <= d->max_nodes);
    TC_CHECK(g->n_samples == d->samples && g->n_inter <= d->max_inter);
    nodes += g->n_nodes;
    void *frame = NULL;
    size_t size = 0;
    TC_CHECK_RC(twincache_cache_read_frame(c, i, &frame, &size), TWINCACHE_OK);
    uint64_t peek_index = 0;
    uint32_t peek_nodes = 0;
    TC_CHECK_RC(twincache_frame_peek(frame, size, &peek_index, &peek_nodes, NULL, NULL, NULL), TWINCACHE_OK);
    TC_CHECK(peek_index == i && peek_nodes == g->n_nodes);
    free(frame);
  }
  if (count == d->graphs) TC_CHECK(nodes == st->nodes);
  TC_CHECK_RC(twincache_cache_read_graph(c, dctx, count, g), TWINCACHE_ENOTFOUND);
  void *frame = (void *)1;
  size_t size = 1;
  TC_CHECK_RC(twincache_cache_read_frame(c, count, &frame, &size), TWINCACHE_ENOTFOUND);
  TC_CHECK(frame == NULL && size == 0);

  /* one handle, two threads */
  reader_arg args[2] = {{c, 0, 2, 0}, {c, 1, 2, 0}};
  pthread_t th[2];
  for (int i = 0; i < 2; i++) TC_REQUIRE(pthread_create(&th[i], NULL, reader_main, &args[i]) == 0);
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  TC_CHECK(args[0].ok + args[1].ok == count);
  twincache_graph_free(g);
  twincache_dctx_free(dctx);
  twincache_cache_close(c);
  twincache_cache_close(NULL);

  /* --- what is not a cache ------------------------------------------------ */
  c = (twincache_cache *)1;
  path_in_scratch(path, sizeof path, "missing");
  TC_CHECK_RC(twincache_cache_open(path, &c), TWINCACHE_ENOTFOUND);
  TC_CHECK(c == NULL);
  path_in_scratch(path, sizeof path, "missing/deeper");
  TC_CHECK_RC(twincache_cache_open(path, &c), TWINCACHE_ENOTFOUND);

  path_in_scratch(path, sizeof path, "plain-file");
  FILE *f = fopen(path, "w");
  TC_REQUIRE(f);
  fputs("not a cache\n", f);
  fclose(f);
  TC_CHECK_RC(twincache_cache_open(path, &c), TWINCACHE_ENOTCACHE);

  path_in_scratch(path, sizeof path, "empty");
  tl_mkdir(path);
  TC_CHECK_RC(twincache_cache_open(path, &c), TWINCACHE_ENOTCACHE);
  char lock[4200];
  snprintf(lock, sizeof lock, "%s/lock.mdb", path);
  TC_CHECK(access(lock, F_OK) != 0); /* opening left nothing behind */

  path_in_scratch(path, sizeof path, "garbage-data");
  tl_mkdir(path);
  snprintf(lock, sizeof lock, "%s/data.mdb", path);
  f = fopen(lock, "w");
  TC_REQUIRE(f);
  for (int i = 0; i < 3000; i++) fputs("garbage ", f);
  fclose(f);
  TC_CHECK_RC(twincache_cache_open(path, &c), TWINCACHE_ENOTCACHE);

  path_in_scratch(path, sizeof path, "foreign-main");
  tl_mkdir(path);
  lmdb_put_one(path, NULL, "hello", "world", 5);
  TC_CHECK_RC(twincache_cache_open(path, &c), TWINCACHE_ENOTCACHE);

  path_in_scratch(path, sizeof path, "foreign-meta");
  tl_mkdir(path);
  lmdb_put_one(path, "meta", "something", "else", 4);
  TC_CHECK_RC(twincache_cache_open(path, &c), TWINCACHE_ENOTCACHE);

  /* a newer format version is refused; a broken dims entry is corrupt */
  path_in_scratch(path, sizeof path, "newer");
  cache_copy(cache_dir, path);
  uint8_t v[4];
  tc_store_u32(v, TWINCACHE_FORMAT_VERSION + 1);
  lmdb_put_one(path, "meta", TWINCACHE_META_VERSION, v, 4);
  TC_CHECK_RC(twincache_cache_open(path, &c), TWINCACHE_EVERSION);

  path_in_scratch(path, sizeof path, "bad-dims");
  cache_copy(cache_dir, path);
  lmdb_put_one(path, "meta", TWINCACHE_META_DIMS, "short", 5);
  int rc = twincache_cache_open(path, &c);
  TC_CHECK(rc == TWINCACHE_ECORRUPT || rc == TWINCACHE_EVERSION);
  if (rc == TWINCACHE_OK) twincache_cache_close(c);

  TC_CHECK_RC(twincache_cache_open(NULL, &c), TWINCACHE_EINVAL);
  return tc_test_finish("test_loader_cache");
}
