/* test_loader_corrupt — a cache copy with one damaged graph frame: the FAIL
 * policy ends the stream with the decode error at that batch; SKIP counts
 * it, reports it, fills the batch from the next position, and gives the same
 * stream for any thread count. A second copy with two damaged graphs in one
 * batch whose first borrowed replacement is damaged too: SKIP fills the
 * batch with distinct, undamaged graphs and the stream ends normally.
 * And a mixture of the damaged copy and the intact cache, FAIL and SKIP.
 * usage: test_loader_corrupt CACHE_DIR SCRATCH_DIR */
#include <pthread.h>

#include "tc_cache_raw.h"
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
  tc_cache_raw *r = NULL;
  twincache_chunk_view view;
  const void *frame;
  size_t size, v_size;
  uint8_t key_bytes[8];
  void *v_data = NULL;
  TC_REQUIRE(tc_cache_raw_open(dir, 1, &r) == 0);
  tc_cache_raw_chunk_key(key_bytes, victim / chunk_graphs);
  TC_REQUIRE(tc_cache_raw_get(r, "graphs", key_bytes, 8, &v_data, &v_size) == 0);
  uint8_t *copy = v_data;
  TC_REQUIRE(copy);
  TC_REQUIRE(twincache_chunk_parse(copy, v_size, &view) == 0);
  TC_REQUIRE(twincache_chunk_frame(&view, (uint32_t)(victim % chunk_graphs), &frame, &size) == 0);
  uint8_t *p = (uint8_t *)frame;
  for (size_t i = size / 2; i < size / 2 + 4 && i < size; i++) p[i] ^= 0x5a;
  TC_REQUIRE(tc_cache_raw_put(r, "graphs", key_bytes, 8, copy, v_size) == 0);
  TC_REQUIRE(tc_cache_raw_close(r) == 0);
  free(copy);
}

/* Batch 1 (no shuffle, G graphs a batch) holds two damaged graphs, and the
 * first position it borrows from (2G, the next batch's first) is damaged
 * too: SKIP gives G distinct graphs, none damaged, the borrowed ones the
 * next undamaged positions, and every batch of the stream distinct ids. */
static void skip_twice_in_one_batch(const char *cache, const char *scratch, uint32_t chunk_graphs,
                                    uint64_t count) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/copy-two", scratch);
  tl_mkdir(dir);
  TC_REQUIRE(tc_cache_raw_copy(cache, dir) == 0);
  const uint64_t bad[3] = {G + 5, G + 9, 2 * G};
  for (int i = 0; i < 3; i++) damage_graph(dir, chunk_graphs, bad[i]);
  twincache_loader_options o;
  twincache_loader_options_init(&o);
  o.batch_size = G;
  o.shuffle = 0;
  o.threads = 2;
  o.corrupt_policy = TWINCACHE_CORRUPT_SKIP;
  twincache_loader *l = NULL;
  TC_CHECK_RC(twincache_loader_open(dir, &o, NULL, &l), TWINCACHE_OK);
  if (!l) return;
  twincache_batch_layout L = *twincache_loader_layout(l);
  tl_stream s = {0};
  TC_CHECK_RC(tl_stream_read(l, 0, &s), TWINCACHE_END);
  twincache_loader_stats st;
  twincache_loader_get_stats(l, &st);
  twincache_loader_close(l);
  TC_CHECK(st.corrupt == 4, "corrupt %llu, want 4 (2G + 5, 2G + 9, 2G borrowed and in its own batch)",
           (unsigned long long)st.corrupt);
  TC_CHECK(s.count == (count + G - 1) / G, "%zu batches", s.count);
  for (size_t i = 0; i < s.count; i++)
    for (uint32_t a = 0; a < s.n_graphs[i]; a++) {
      uint64_t id = tl_graph_id(&s, &L, i, a);
      TC_CHECK(id != bad[0] && id != bad[1] && id != bad[2], "batch %zu holds damaged graph %llu", i,
               (unsigned long long)id);
      for (uint32_t q = 0; q < a; q++)
        TC_CHECK(tl_graph_id(&s, &L, i, q) != id, "batch %zu holds graph %llu twice", i, (unsigned long long)id);
    }
  /* batch 1: its own graphs but the two damaged, then 2G + 1 and 2G + 2 */
  if (s.count > 1) {
    TC_CHECK(s.n_graphs[1] == G);
    TC_CHECK(tl_graph_id(&s, &L, 1, 5) == 2 * G + 1 && tl_graph_id(&s, &L, 1, 9) == 2 * G + 2,
             "batch 1 borrowed %llu and %llu", (unsigned long long)tl_graph_id(&s, &L, 1, 5),
             (unsigned long long)tl_graph_id(&s, &L, 1, 9));
  }
  tl_stream_free(&s);
}

/* A mixture of the damaged copy (source 0) and the intact cache (source 1),
 * 8 + 8 a batch, no shuffle: global batch 2 holds source 0's positions
 * [16, 24), the victim among them. FAIL ends the stream there naming the
 * copy; SKIP reports it once and fills its slot from the same source's
 * order after the batch's own positions (graph 24 of source 0), every other
 * slot as planned. */
static void mixture_skip(const char *copy, const char *cache, uint64_t victim) {
  const char *paths[2] = {copy, cache};
  const double w[2] = {1, 1};
  for (int policy = 0; policy < 2; policy++) {
    twincache_loader_options o;
    twincache_loader_options_init(&o);
    o.batch_size = G;
    o.shuffle = 0;
    o.threads = 2;
    o.corrupt_policy = policy ? TWINCACHE_CORRUPT_SKIP : TWINCACHE_CORRUPT_FAIL;
    uint64_t calls = 0;
    o.on_corrupt = on_corrupt;
    o.corrupt_user = &calls;
    twincache_loader *l;
    TC_REQUIRE(twincache_loader_open_mixture(paths, w, 2, &o, NULL, &l) == TWINCACHE_OK, "%s",
               twincache_last_error());
    twincache_batch *b;
    int rc = 0;
    for (uint64_t k = 0; k < 4 && (rc = twincache_loader_next(l, &b)) == TWINCACHE_OK; k++) {
      for (uint32_t g = 0; g < G; g++) {
        uint64_t want = g < G / 2 ? TWINCACHE_MIX_ID(0, k * (G / 2) + g) : TWINCACHE_MIX_ID(1, k * (G / 2) + g - G / 2);
        if (want == TWINCACHE_MIX_ID(0, victim)) want = TWINCACHE_MIX_ID(0, (k + 1) * (G / 2));
        TC_CHECK(b->graph_id[g] == want, "mixture batch %llu slot %u: id %#llx, want %#llx", (unsigned long long)k,
                 g, (unsigned long long)b->graph_id[g], (unsigned long long)want);
      }
      twincache_loader_release(l, b);
    }
    if (policy) {
      TC_CHECK(rc == TWINCACHE_OK && calls == 1, "mixture SKIP: rc %d, %llu reports", rc, (unsigned long long)calls);
    } else {
      TC_CHECK(is_record_error(rc) && strstr(twincache_last_error(), copy) && strstr(twincache_last_error(), "batch 2"),
               "mixture FAIL: rc %d, \"%s\"", rc, twincache_last_error());
    }
    twincache_loader_close(l);
  }
}

int main(int argc, char **argv) {
  TC_REQUIRE(argc == 3);
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/copy", argv[2]);
  tl_mkdir(dir);
  TC_REQUIRE(tc_cache_raw_copy(argv[1], dir) == 0);
  twincache_cache *c;
  TC_REQUIRE(twincache_cache_open(dir, &c) == TWINCACHE_OK);
  const twincache_dims dims = *twincache_cache_dims(c);
  uint64_t count = twincache_cache_count(c);
  TC_REQUIRE(count > 4 * G);
  const uint64_t victim = G + 5; /* in batch 1 without shuffle */
  twincache_cache_close(c);
  damage_graph(dir, dims.chunk_graphs, victim);

  /* the reader sees the damage; the neighbours are intact */
  TC_REQUIRE(twincache_cache_open(dir, &c) == TWINCACHE_OK);
  twincache_graph *g = twincache_graph_alloc(dims.max_nodes, dims.samples, dims.max_inter, dims.hidden);
  twincache_dctx *dctx = twincache_dctx_create();
  TC_REQUIRE(g && dctx);
  int rc = twincache_cache_read_graph(c, dctx, victim, g);
  TC_CHECK(is_record_error(rc));
  TC_CHECK_RC(twincache_cache_read_graph(c, dctx, victim - 1, g), TWINCACHE_OK);
  TC_CHECK_RC(twincache_cache_read_graph(c, dctx, victim + 1, g), TWINCACHE_OK);
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
  TC_CHECK_RC(twincache_loader_open(dir, &o, NULL, &l), TWINCACHE_OK);
  if (l) {
    TC_CHECK_RC(twincache_loader_next(l, &b), TWINCACHE_OK);
    if (b) twincache_loader_release(l, b);
    int err = twincache_loader_next(l, &b);
    TC_CHECK(err == rc && is_record_error(err));
    TC_CHECK(b == NULL);
    TC_CHECK_RC(twincache_loader_next(l, &b), err);
    twincache_loader_close(l);
    TC_CHECK(calls == 1 && last_index == victim && last_status == rc);
  }

  /* FAIL with no hook: nothing printed, the last error names the graph */
  o.on_corrupt = NULL;
  o.threads = 1;
  TC_CHECK_RC(twincache_loader_open(dir, &o, NULL, &l), TWINCACHE_OK);
  if (l) {
    tl_stream s = {0};
    TC_CHECK_RC(tl_stream_read(l, 0, &s), rc);
    TC_CHECK(s.count == 1);
    char want[64];
    snprintf(want, sizeof want, "graph %llu", (unsigned long long)victim);
    TC_CHECK(strstr(twincache_last_error(), want) != NULL);
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
    TC_CHECK_RC(twincache_loader_open(dir, &o, NULL, &l), TWINCACHE_OK);
    if (!l) continue;
    twincache_batch_layout L = *twincache_loader_layout(l);
    TC_CHECK_RC(tl_stream_read(l, 0, &s), TWINCACHE_END);
    twincache_loader_stats st;
    twincache_loader_get_stats(l, &st);
    twincache_loader_close(l);
    TC_CHECK(st.corrupt == epochs && calls == epochs && last_index == victim);
    TC_CHECK(st.graphs == epochs * count);
    uint64_t bpe = (count + G - 1) / G;
    TC_CHECK(s.count == epochs * bpe);
    uint32_t *seen = calloc(count, sizeof *seen);
    TC_REQUIRE(seen);
    for (uint32_t e = 0; e < epochs; e++) {
      memset(seen, 0, count * sizeof *seen);
      for (size_t i = e * bpe; i < (e + 1) * bpe && i < s.count; i++)
        for (uint32_t q = 0; q < s.n_graphs[i]; q++) {
          uint64_t id = tl_graph_id(&s, &L, i, q);
          TC_REQUIRE(id < count);
          seen[id]++;
        }
      uint64_t missing = 0, twice = 0, more = 0;
      for (uint64_t i = 0; i < count; i++) {
        missing += seen[i] == 0;
        twice += seen[i] == 2;
        more += seen[i] > 2;
      }
      TC_CHECK(seen[victim] == 0 && missing == 1 && twice == 1 && more == 0);
    }
    free(seen);
    if (threads == 1) ref = s;
    else {
      TC_CHECK(tl_stream_equal(&s, &ref));
      tl_stream_free(&s);
    }
  }
  tl_stream_free(&ref);
  mixture_skip(dir, argv[1], victim);
  skip_twice_in_one_batch(argv[1], argv[2], dims.chunk_graphs, count);
  (void)reports;
  return tc_test_finish("test_loader_corrupt");
}
