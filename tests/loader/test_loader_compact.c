/* test_loader_compact — the compact layout expands to the dense one: for
 * the same options, a dense and a compact loader give the same stream, and
 * twincache_expand_cpu of every compact batch equals the dense slab byte for
 * byte (every array, padding and alignment gaps included), for full and
 * partial batches, shuffled or not, several epochs (slots reused, so a small
 * graph follows a larger one in the same place), and another rank, caches
 * whose worlds hold fewer rows than S (twin and independent) among them. The
 * expansion writes into one buffer reused across batches, so an element it
 * failed to rewrite shows up as a stale value. Under the SKIP policy, with
 * damaged graphs in a copy of the first cache, both layouts still agree (a
 * failed graph leaves no columns behind). Prints the bytes a batch occupies
 * per graph in each layout.
 * usage: test_loader_compact SCRATCH_DIR CACHE_DIR... */
#include <lmdb.h>

#include "tc_common.h"
#include "tl_common.h"
#include "tl_expand.h"

/* Names the dense array holding byte offset off (for a failure message). */
static const char *array_at(const twincache_batch_layout *L, size_t off) {
  if (off >= L->rows) return "rows";
  if (off >= L->valid) return "valid";
  if (off >= L->graph_id) return "graph_id";
  if (off >= L->int_mask) return "int_mask";
  if (off >= L->node_mask) return "node_mask";
  if (off >= L->adj) return "adj";
  if (off >= L->kind) return "kind";
  if (off >= L->value) return "value";
  if (off >= L->target) return "target";
  if (off >= L->inter_off) return "inter";
  return "base";
}

typedef struct totals {
  uint64_t graphs, batches, dense_bytes, compact_bytes, partial, corrupt;
} totals;

static void check_stream(const char *cache, const twincache_loader_options *opt, totals *t) {
  twincache_loader_options od = *opt, oc = *opt;
  twincache_loader *ld = NULL, *lc = NULL;
  od.layout = TWINCACHE_LAYOUT_DENSE;
  oc.layout = TWINCACHE_LAYOUT_COMPACT;
  TC_REQUIRE(twincache_loader_open(cache, &od, NULL, &ld) == TWINCACHE_OK);
  TC_REQUIRE(twincache_loader_open(cache, &oc, NULL, &lc) == TWINCACHE_OK);
  const twincache_batch_layout *L = twincache_loader_layout(ld);
  tl_expander x;
  tl_expander_init(&x, L);
  const twincache_compact_layout *CL = &x.layout;
  uint64_t used_sum = 0;
  int bad_reported = 0;
  for (;;) {
    twincache_batch *bd, *bc;
    int rd = twincache_loader_next(ld, &bd), rc = twincache_loader_next(lc, &bc);
    TC_CHECK_RC(rc, rd);
    if (rd != TWINCACHE_OK || rc != TWINCACHE_OK) break;
    TC_CHECK(bc->n_graphs == bd->n_graphs && bc->seq == bd->seq && bc->epoch == bd->epoch);
    TC_CHECK(bd->compact == NULL && bc->slab == NULL && bc->inter == NULL);
    const twincache_compact_batch *cb = bc->compact;
    TC_REQUIRE(cb && cb->slab);
    TC_CHECK(cb->layout.bytes == CL->bytes && cb->layout.cols == CL->cols);
    TC_CHECK(cb->used_bytes == twincache_compact_used_bytes(CL, cb->n_cols));
    TC_CHECK(cb->used_bytes <= CL->bytes && cb->used_bytes % 64 == 0);
    TC_CHECK(bc->base == cb->base && bc->graph_id == cb->graph_id);
    /* only the used prefix may matter: spoil the rest before expanding */
    memset((uint8_t *)cb->slab + cb->used_bytes, 0xA5, CL->bytes - cb->used_bytes);
    twincache_expand_cpu(x.out, cb->slab, &x.offsets);
    if (memcmp(x.out, bd->slab, L->bytes) != 0) {
      size_t at = 0;
      while (x.out[at] == ((const uint8_t *)bd->slab)[at]) at++;
      if (bad_reported++ < 3)
        fprintf(stderr, "%s batch %llu (G=%u, %u graphs): expansion differs at byte %zu (%s)\n",
                cache, (unsigned long long)bd->seq, L->graphs, bd->n_graphs, at, array_at(L, at));
      tc_test_count_failure();
    }
    t->graphs += bd->n_graphs;
    t->batches++;
    t->partial += bd->n_graphs < L->graphs;
    t->dense_bytes += L->bytes;
    t->compact_bytes += cb->used_bytes;
    used_sum += cb->used_bytes;
    twincache_loader_release(ld, bd);
    twincache_loader_release(lc, bc);
  }
  twincache_loader_stats st;
  twincache_loader_get_stats(lc, &st);
  TC_CHECK(st.bytes_decoded == used_sum);
  t->corrupt += st.corrupt;
  tl_expander_free(&x);
  twincache_loader_close(ld);
  twincache_loader_close(lc);
}

/* Flips 4 bytes in the middle of graph `victim`'s frame in the cache at dir
 * (as test_loader_corrupt does). */
static void damage_graph(const char *dir, uint32_t chunk_graphs, uint64_t victim) {
  MDB_env *env;
  MDB_txn *txn;
  MDB_dbi dbi;
  twincache_chunk_view view;
  const void *frame;
  size_t size;
  uint8_t key_bytes[8];
  TC_REQUIRE(mdb_env_create(&env) == 0);
  mdb_env_set_maxdbs(env, 4);
  TC_REQUIRE(mdb_env_open(env, dir, 0, 0644) == 0);
  TC_REQUIRE(mdb_txn_begin(env, NULL, 0, &txn) == 0);
  TC_REQUIRE(mdb_dbi_open(txn, "graphs", 0, &dbi) == 0);
  tc_store_be64(key_bytes, victim / chunk_graphs);
  MDB_val k = {8, key_bytes}, v;
  TC_REQUIRE(mdb_get(txn, dbi, &k, &v) == 0);
  uint8_t *copy = malloc(v.mv_size);
  TC_REQUIRE(copy);
  memcpy(copy, v.mv_data, v.mv_size);
  TC_REQUIRE(twincache_chunk_parse(copy, v.mv_size, &view) == 0);
  TC_REQUIRE(twincache_chunk_frame(&view, (uint32_t)(victim % chunk_graphs), &frame, &size) == 0);
  uint8_t *p = (uint8_t *)frame;
  for (size_t i = size / 2; i < size / 2 + 4 && i < size; i++) p[i] ^= 0x5a;
  MDB_val nv = {v.mv_size, copy};
  TC_REQUIRE(mdb_put(txn, dbi, &k, &nv, 0) == 0);
  TC_REQUIRE(mdb_txn_commit(txn) == 0);
  mdb_env_close(env);
  free(copy);
}

static void silent(uint64_t index, int status, void *user) { (void)index, (void)status, (void)user; }

/* A copy of cache with graphs 10, 11 and 40 damaged, read with SKIP. */
static void check_skip(const char *cache, const char *scratch) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/copy", scratch);
  tl_mkdir(dir);
  MDB_env *env;
  TC_REQUIRE(mdb_env_create(&env) == 0);
  mdb_env_set_maxdbs(env, 4);
  TC_REQUIRE(mdb_env_open(env, cache, MDB_RDONLY, 0644) == 0);
  TC_REQUIRE(mdb_env_copy(env, dir) == 0);
  mdb_env_close(env);
  twincache_cache *c;
  TC_REQUIRE(twincache_cache_open(dir, &c) == TWINCACHE_OK);
  uint32_t chunk_graphs = twincache_cache_dims(c)->chunk_graphs;
  twincache_cache_close(c);
  const uint64_t victims[] = {10, 11, 40};
  for (int i = 0; i < 3; i++) damage_graph(dir, chunk_graphs, victims[i]);
  twincache_loader_options o;
  twincache_loader_options_init(&o);
  o.batch_size = 7; /* graph 10 is position 3 of batch 1 in index order */
  o.shuffle = 0;
  o.corrupt_policy = TWINCACHE_CORRUPT_SKIP;
  o.on_corrupt = silent;
  totals t = {0};
  check_stream(dir, &o, &t);
  o.shuffle = 1;
  check_stream(dir, &o, &t);
  TC_CHECK(t.batches > 0 && t.corrupt == 6); /* 3 damaged graphs met once per stream */
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: test_loader_compact SCRATCH_DIR CACHE_DIR...\n");
    return 2;
  }
  const char *scratch = argv[1];
  argv++, argc--;
  /* an unknown layout is refused */
  twincache_loader_options o;
  twincache_loader *l = NULL;
  twincache_loader_options_init(&o);
  o.layout = 2;
  TC_CHECK_RC(twincache_loader_open(argv[1], &o, NULL, &l), TWINCACHE_EINVAL);
  TC_CHECK(l == NULL);

  for (int a = 1; a < argc; a++) {
    totals t = {0};
    const struct {
      uint32_t batch, epochs, threads, world_size, rank;
      int shuffle, drop_last;
    } runs[] = {
        {7, 2, 2, 1, 0, 1, 0},      /* partial last batch, slots reused over epochs */
        {32, 1, 1, 1, 0, 0, 0},     /* index order, one thread */
        {5, 1, 3, 2, 1, 1, 0},      /* rank 1 of 2 */
        {1000, 1, 2, 1, 0, 1, 0},   /* one batch, most of it padding */
        {64, 1, 2, 1, 0, 1, 1},     /* drop_last: full batches only */
    };
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
      twincache_loader_options_init(&o);
      o.batch_size = runs[r].batch;
      o.epochs = runs[r].epochs;
      o.threads = runs[r].threads;
      o.world_size = runs[r].world_size;
      o.rank = runs[r].rank;
      o.shuffle = runs[r].shuffle;
      o.drop_last = runs[r].drop_last;
      o.seed = 11 + r;
      check_stream(argv[a], &o, &t);
    }
    TC_CHECK(t.partial > 0);
    TC_CHECK(t.compact_bytes < t.dense_bytes);
    printf("%s: %llu batches (%llu partial), %llu graphs: dense %.0f bytes/graph, compact %.0f "
           "bytes/graph (%.2fx fewer)\n",
           argv[a], (unsigned long long)t.batches, (unsigned long long)t.partial,
           (unsigned long long)t.graphs, (double)t.dense_bytes / (double)t.graphs,
           (double)t.compact_bytes / (double)t.graphs,
           (double)t.dense_bytes / (double)t.compact_bytes);
  }
  check_skip(argv[1], scratch);
  return tc_test_finish("test_loader_compact");
}
