/* test_loader_bucket — size buckets through the loader (issue 29) on the
 * 3..7-node test cache:
 * - every batch reports nodes = the largest N of its graphs (node_mask), and
 *   base, inter, adj, node_mask are zero from that column on;
 * - the node slots of the batches (count * nodes) are fewer than without
 *   buckets;
 * - two ranks read every graph once per epoch, equal batch counts;
 * - the same bytes and nodes for 1 and 3 decode threads;
 * - a state of 2 ranks of batch 8 after some steps, resumed on 1 rank of
 *   batch 16 (the same global batch), continues that rank's uninterrupted
 *   stream of graphs; the state in a loader without buckets, or buckets in
 *   a mixture, is refused.
 * usage: test_loader_bucket CACHE_DIR */
#include "tl_common.h"

#define G 8

static void options(twincache_loader_options *o, uint32_t W, uint32_t r, uint32_t threads, int buckets) {
  twincache_loader_options_init(o);
  o->batch_size = G * 2 / W;
  o->epochs = 2;
  o->seed = 11;
  o->world_size = W;
  o->rank = r;
  o->threads = threads;
  o->buckets = buckets;
}

/* What a stream's batches held: graph ids (valid ones, in order), the
 * batches' nodes, and the node slots count * nodes. */
typedef struct seen {
  uint64_t ids[4096];
  size_t n_ids;
  uint32_t nodes[1024];
  size_t n_batches;
  uint64_t slots;
} seen;

/* Reads up to max batches (0 = all) of l, checking each batch's nodes and
 * its zero columns; appends to *s; returns the status that ended it. */
static int read_batches(twincache_loader *l, size_t max, seen *s) {
  const twincache_batch_layout *L = twincache_loader_layout(l);
  uint32_t N = L->nodes, S = L->samples, K = L->inter;
  for (size_t i = 0; max == 0 || i < max; i++) {
    twincache_batch *b;
    int rc = twincache_loader_next(l, &b);
    if (rc != TWINCACHE_OK) return rc;
    uint32_t largest = 0;
    for (uint32_t g = 0; g < b->n_graphs; g++) {
      uint32_t n = 0;
      for (uint32_t j = 0; j < N; j++) n += b->node_mask[(size_t)g * N + j];
      if (n > largest) largest = n;
      for (uint32_t j = b->nodes; j < N; j++) {
        TC_CHECK(b->node_mask[(size_t)g * N + j] == 0);
        for (uint32_t r = 0; r < S; r++) TC_CHECK(b->base[((size_t)g * S + r) * N + j] == 0.0f);
        for (uint32_t k = 0; k < K; k++)
          for (uint32_t r = 0; r < S; r++) TC_CHECK(b->inter[(((size_t)g * K + k) * S + r) * N + j] == 0.0f);
        for (uint32_t a = 0; a < N; a++)
          TC_CHECK(b->adj[((size_t)g * N + a) * N + j] == 0 && b->adj[((size_t)g * N + j) * N + a] == 0);
      }
      if (b->valid[g]) {
        TC_REQUIRE(s->n_ids < sizeof s->ids / sizeof s->ids[0]);
        s->ids[s->n_ids++] = b->graph_id[g];
      }
    }
    TC_CHECK(b->nodes == largest, "batch %llu reports nodes %u, its largest graph has %u",
             (unsigned long long)b->seq, b->nodes, largest);
    TC_REQUIRE(s->n_batches < sizeof s->nodes / sizeof s->nodes[0]);
    s->nodes[s->n_batches++] = b->nodes;
    s->slots += (uint64_t)b->n_graphs * b->nodes;
    twincache_loader_release(l, b);
  }
  return TWINCACHE_OK;
}

static void read_all(const char *cache, const twincache_loader_options *o, const twincache_loader_state *resume,
                     seen *s) {
  twincache_loader *l = NULL;
  TC_CHECK_RC(twincache_loader_open(cache, o, resume, &l), TWINCACHE_OK);
  TC_REQUIRE(l);
  TC_CHECK_RC(read_batches(l, 0, s), TWINCACHE_END);
  twincache_loader_close(l);
}

int main(int argc, char **argv) {
  TC_REQUIRE(argc == 2);
  const char *cache = argv[1];
  twincache_loader_options o;
  twincache_loader *l = NULL;
  static seen plain, one, three, r0, r1, part, rest;
  /* options(W, ...): batch 16 / W, the global batch 16 at W = 1 and 2 */

  /* nodes without buckets too; buckets need fewer node slots */
  options(&o, 1, 0, 2, 0);
  read_all(cache, &o, NULL, &plain);
  options(&o, 1, 0, 1, 1);
  read_all(cache, &o, NULL, &one);
  TC_CHECK(one.n_batches == plain.n_batches && one.n_ids == plain.n_ids);
  TC_CHECK(one.slots < plain.slots, "buckets: %llu node slots, without: %llu", (unsigned long long)one.slots,
           (unsigned long long)plain.slots);
  printf("node slots (count * nodes): %llu without buckets, %llu with\n", (unsigned long long)plain.slots,
         (unsigned long long)one.slots);

  /* the same stream for any thread count (graph ids and nodes; the bytes
   * are test_loader_stream's guard, the order is the plan's) */
  options(&o, 1, 0, 3, 1);
  read_all(cache, &o, NULL, &three);
  TC_CHECK(three.n_ids == one.n_ids && memcmp(three.ids, one.ids, one.n_ids * 8) == 0 &&
           memcmp(three.nodes, one.nodes, one.n_batches * 4) == 0, "1 and 3 decode threads differ");

  /* two ranks: every graph once per epoch, equal batches */
  options(&o, 2, 0, 2, 1);
  read_all(cache, &o, NULL, &r0);
  options(&o, 2, 1, 2, 1);
  read_all(cache, &o, NULL, &r1);
  TC_CHECK(r0.n_batches == r1.n_batches);
  twincache_cache *c = NULL;
  TC_REQUIRE(twincache_cache_open(cache, &c) == TWINCACHE_OK);
  uint64_t n = twincache_cache_count(c);
  twincache_cache_close(c);
  uint8_t *count = calloc(n, 1);
  TC_REQUIRE(count);
  for (size_t i = 0; i < r0.n_ids; i++) count[r0.ids[i]]++;
  for (size_t i = 0; i < r1.n_ids; i++) count[r1.ids[i]]++;
  for (uint64_t i = 0; i < n; i++) TC_CHECK(count[i] == 2, "graph %llu read %u times in 2 epochs",
                                            (unsigned long long)i, count[i]);
  free(count);

  /* elastic: 2 ranks of batch 8 read 7 steps, then one rank of batch 16 resumes from rank 0's state */
  twincache_loader *ranks[2];
  twincache_batch *b[2];
  for (uint32_t r = 0; r < 2; r++) {
    options(&o, 2, r, 2, 1);
    TC_CHECK_RC(twincache_loader_open(cache, &o, NULL, &ranks[r]), TWINCACHE_OK);
  }
  for (int step = 0; step < 7; step++) {
    for (uint32_t r = 0; r < 2; r++) TC_CHECK_RC(twincache_loader_next(ranks[r], &b[r]), TWINCACHE_OK);
    for (uint32_t r = 0; r < 2; r++) { /* global order: rank 0's batch, then rank 1's */
      for (uint32_t g = 0; g < b[r]->n_graphs; g++)
        if (b[r]->valid[g]) part.ids[part.n_ids++] = b[r]->graph_id[g];
      twincache_loader_release(ranks[r], b[r]);
    }
  }
  twincache_loader_state st;
  twincache_loader_get_state(ranks[0], &st);
  TC_CHECK(st.bucket == 1);
  for (uint32_t r = 0; r < 2; r++) twincache_loader_close(ranks[r]);
  options(&o, 1, 0, 2, 1);
  read_all(cache, &o, &st, &rest);
  TC_CHECK(part.n_ids + rest.n_ids == one.n_ids);
  int same = part.n_ids + rest.n_ids == one.n_ids && memcmp(part.ids, one.ids, part.n_ids * 8) == 0 &&
             memcmp(rest.ids, one.ids + part.n_ids, rest.n_ids * 8) == 0;
  TC_CHECK(same, "2 ranks then 1 rank differ from one rank's uninterrupted stream");

  /* refusals: the state in a loader without buckets; a mixture with them */
  options(&o, 1, 0, 1, 0);
  TC_CHECK_RC(twincache_loader_open(cache, &o, &st, &l), TWINCACHE_EINVAL);
  TC_CHECK(strstr(twincache_last_error(), "bucket") != NULL, "%s", twincache_last_error());
  const char *paths[2] = {cache, cache};
  const double w[2] = {1, 1};
  options(&o, 1, 0, 1, 1);
  TC_CHECK_RC(twincache_loader_open_mixture(paths, w, 2, &o, NULL, &l), TWINCACHE_EINVAL);
  TC_CHECK(strstr(twincache_last_error(), "buckets") != NULL, "%s", twincache_last_error());
  options(&o, 1, 0, 1, 3);
  TC_CHECK_RC(twincache_loader_open(cache, &o, NULL, &l), TWINCACHE_EINVAL);
  TC_CHECK(strstr(twincache_last_error(), "buckets must be 0 or 1") != NULL, "%s", twincache_last_error());
  return tc_test_finish("test_loader_bucket");
}
