/* test_loader_corrupt — a cache copy with one damaged graph frame: the FAIL
 * policy ends the stream with the decode error at that batch; SKIP counts
 * it, reports it, fills the batch from the next position, and gives the same
 * stream for any thread count.
 * usage: test_loader_corrupt CACHE_DIR SCRATCH_DIR */
#include <lmdb.h>
#include <pthread.h>

#include "tc_common.h"
#include "tl_common.h"

#define G 16

static pthread_mutex_t report_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t reports, last_index;
static int last_status;

static void on_corrupt(uint64_t index, int status, void *user) {
  pthread_mutex_lock(&report_mu);
  reports++;
  last_index = index;
  last_status = status;
  (*(uint64_t *)user)++;
  pthread_mutex_unlock(&report_mu);
}

static int is_record_error(int rc) {
  return rc == TWINCACHE_ECORRUPT || rc == TWINCACHE_ECHECKSUM || rc == TWINCACHE_EZSTD ||
         rc == TWINCACHE_ETOOBIG || rc == TWINCACHE_EVERSION;
}

/* Flips bytes in the middle of graph `victim`'s frame inside the copy at dir. */
static void damage_graph(const char *dir, uint32_t chunk_graphs, uint64_t victim) {
  MDB_env *env;
  MDB_txn *txn;
  MDB_dbi dbi;
  twincache_chunk_view view;
  const void *frame;
  size_t size;
  uint8_t key_bytes[8];
  TL_REQUIRE(mdb_env_create(&env) == 0);
  mdb_env_set_maxdbs(env, 4);
  TL_REQUIRE(mdb_env_open(env, dir, 0, 0644) == 0);
  TL_REQUIRE(mdb_txn_begin(env, NULL, 0, &txn) == 0);
  TL_REQUIRE(mdb_dbi_open(txn, "graphs", 0, &dbi) == 0);
  tc_store_be64(key_bytes, victim / chunk_graphs);
  MDB_val k = {8, key_bytes}, v;
  TL_REQUIRE(mdb_get(txn, dbi, &k, &v) == 0);
  uint8_t *copy = malloc(v.mv_size);
  TL_REQUIRE(copy);
  memcpy(copy, v.mv_data, v.mv_size);
  TL_REQUIRE(twincache_chunk_parse(copy, v.mv_size, &view) == 0);
  TL_REQUIRE(twincache_chunk_frame(&view, (uint32_t)(victim % chunk_graphs), &frame, &size) == 0);
  uint8_t *p = (uint8_t *)frame;
  for (size_t i = size / 2; i < size / 2 + 4 && i < size; i++) p[i] ^= 0x5a;
  MDB_val nv = {v.mv_size, copy};
  TL_REQUIRE(mdb_put(txn, dbi, &k, &nv, 0) == 0);
  TL_REQUIRE(mdb_txn_commit(txn) == 0);
  mdb_env_close(env);
  free(copy);
}

int main(int argc, char **argv) {
  TL_REQUIRE(argc == 3);
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/copy", argv[2]);
  tl_mkdir(dir);
  {
    MDB_env *env;
    TL_REQUIRE(mdb_env_create(&env) == 0);
    mdb_env_set_maxdbs(env, 4);
    TL_REQUIRE(mdb_env_open(env, argv[1], MDB_RDONLY, 0644) == 0);
    TL_REQUIRE(mdb_env_copy(env, dir) == 0);
    mdb_env_close(env);
  }
  twincache_cache *c;
  TL_REQUIRE(twincache_cache_open(dir, &c) == TWINCACHE_OK);
  const twincache_dims dims = *twincache_cache_dims(c);
  uint64_t count = twincache_cache_count(c);
  TL_REQUIRE(count > 4 * G);
  const uint64_t victim = G + 5; /* in batch 1 without shuffle */
  twincache_cache_close(c);
  damage_graph(dir, dims.chunk_graphs, victim);

  /* the reader sees the damage; the neighbours are intact */
  TL_REQUIRE(twincache_cache_open(dir, &c) == TWINCACHE_OK);
  twincache_graph *g = twincache_graph_alloc(dims.max_nodes, dims.samples, dims.max_inter, dims.hidden);
  twincache_dctx *dctx = twincache_dctx_create();
  TL_REQUIRE(g && dctx);
  int rc = twincache_cache_read_graph(c, dctx, victim, g);
  TL_CHECK(is_record_error(rc));
  TL_CHECK_RC(twincache_cache_read_graph(c, dctx, victim - 1, g), TWINCACHE_OK);
  TL_CHECK_RC(twincache_cache_read_graph(c, dctx, victim + 1, g), TWINCACHE_OK);
  twincache_graph_free(g);
  twincache_dctx_free(dctx);
  twincache_cache_close(c);

  twincache_loader_options o;
  twincache_loader *l = NULL;
  twincache_batch *b;
  uint64_t calls = 0;

  /* FAIL: batch 0 comes, batch 1 is the error, and stays the error */
  twincache_loader_options_init(&o);
  o.batch_size = G;
  o.shuffle = 0;
  o.threads = 2;
  o.slots = 3;
  o.on_corrupt = on_corrupt;
  o.corrupt_user = &calls;
  TL_CHECK_RC(twincache_loader_open(dir, &o, NULL, &l), TWINCACHE_OK);
  if (l) {
    TL_CHECK_RC(twincache_loader_next(l, &b), TWINCACHE_OK);
    if (b) twincache_loader_release(l, b);
    int err = twincache_loader_next(l, &b);
    TL_CHECK(err == rc && is_record_error(err));
    TL_CHECK(b == NULL);
    TL_CHECK_RC(twincache_loader_next(l, &b), err);
    twincache_loader_close(l);
    TL_CHECK(calls == 1 && last_index == victim && last_status == rc);
  }

  /* FAIL with no hook: nothing printed, the last error names the graph */
  o.on_corrupt = NULL;
  o.threads = 1;
  TL_CHECK_RC(twincache_loader_open(dir, &o, NULL, &l), TWINCACHE_OK);
  if (l) {
    tl_stream s = {0};
    TL_CHECK_RC(tl_stream_read(l, 0, &s), rc);
    TL_CHECK(s.count == 1);
    char want[64];
    snprintf(want, sizeof want, "graph %llu", (unsigned long long)victim);
    TL_CHECK(strstr(twincache_loader_last_error(), want) != NULL);
    tl_stream_free(&s);
    twincache_loader_close(l);
  }

  /* SKIP: the same stream for 1 and 3 threads; each epoch has every graph
   * but the victim, and one borrowed graph twice */
  tl_stream ref = {0};
  const uint32_t epochs = 3;
  for (uint32_t threads = 1; threads <= 3; threads += 2) {
    tl_stream s = {0};
    calls = 0;
    twincache_loader_options_init(&o);
    o.batch_size = G;
    o.epochs = epochs;
    o.seed = 99;
    o.threads = threads;
    o.slots = 2;
    o.corrupt_policy = TWINCACHE_CORRUPT_SKIP;
    o.on_corrupt = on_corrupt;
    o.corrupt_user = &calls;
    TL_CHECK_RC(twincache_loader_open(dir, &o, NULL, &l), TWINCACHE_OK);
    if (!l) continue;
    twincache_batch_layout L = *twincache_loader_layout(l);
    TL_CHECK_RC(tl_stream_read(l, 0, &s), TWINCACHE_END);
    twincache_loader_stats st;
    twincache_loader_get_stats(l, &st);
    twincache_loader_close(l);
    TL_CHECK(st.corrupt == epochs && calls == epochs && last_index == victim);
    TL_CHECK(st.graphs == epochs * count);
    uint64_t bpe = (count + G - 1) / G;
    TL_CHECK(s.count == epochs * bpe);
    uint32_t *seen = calloc(count, sizeof *seen);
    TL_REQUIRE(seen);
    for (uint32_t e = 0; e < epochs; e++) {
      memset(seen, 0, count * sizeof *seen);
      for (size_t i = e * bpe; i < (e + 1) * bpe && i < s.count; i++)
        for (uint32_t q = 0; q < s.n_graphs[i]; q++) {
          uint64_t id = tl_graph_id(&s, &L, i, q);
          TL_REQUIRE(id < count);
          seen[id]++;
        }
      uint64_t missing = 0, twice = 0, more = 0;
      for (uint64_t i = 0; i < count; i++) {
        missing += seen[i] == 0;
        twice += seen[i] == 2;
        more += seen[i] > 2;
      }
      TL_CHECK(seen[victim] == 0 && missing == 1 && twice == 1 && more == 0);
    }
    free(seen);
    if (threads == 1) ref = s;
    else {
      TL_CHECK(tl_stream_equal(&s, &ref));
      tl_stream_free(&s);
    }
  }
  tl_stream_free(&ref);
  (void)reports;
  return tl_finish("test_loader_corrupt");
}
