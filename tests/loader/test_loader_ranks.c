/* test_loader_ranks.c — equal batch counts per rank (equal_ranks, the
 * default when world_size > 1): for W = 2..7 over odd graph counts, with and
 * without drop_last, every rank gets the same number of full batches, the
 * valid graphs of all ranks are the epoch's graphs exactly once (without
 * drop_last) or a duplicate-free subset of the right size (with it), and the
 * padding graphs (valid = 0) are the epoch's first graphs again. */
#include "tl_common.h"

/* Checks one (n, G, W, drop_last) case over `epochs` epochs. */
static void check_case(const char *cache, uint64_t begin, uint64_t n, uint32_t G, uint32_t W,
                       int drop_last, int shuffle) {
  const uint32_t epochs = 2;
  uint64_t per_rank = drop_last ? n / ((uint64_t)G * W) : (n + (uint64_t)G * W - 1) / ((uint64_t)G * W);
  uint32_t *hits = calloc(n * epochs, sizeof *hits);
  TC_REQUIRE(hits);
  uint64_t invalid = 0;
  for (uint32_t r = 0; r < W; r++) {
    twincache_loader_options o;
    twincache_loader_options_init(&o);
    o.batch_size = G;
    o.epochs = epochs;
    o.world_size = W;
    o.rank = r;
    o.drop_last = drop_last;
    o.shuffle = shuffle;
    o.seed = 17;
    o.threads = 1 + r % 2;
    o.slots = 2;
    o.index_begin = begin;
    o.index_end = begin + n;
    twincache_loader *l = NULL;
    TC_CHECK_RC(twincache_loader_open(cache, &o, NULL, &l), TWINCACHE_OK);
    if (!l) continue;
    TC_CHECK(twincache_loader_batches_per_epoch(l) == per_rank);
    twincache_batch *b;
    uint64_t count = 0;
    int rc;
    while ((rc = twincache_loader_next(l, &b)) == TWINCACHE_OK) {
      TC_CHECK(b->n_graphs == G); /* every batch full */
      TC_CHECK(b->epoch == count / (per_rank ? per_rank : 1));
      for (uint32_t g = 0; g < G; g++) {
        uint64_t id = b->graph_id[g];
        TC_CHECK(id >= begin && id < begin + n);
        TC_CHECK(b->valid[g] == 0 || b->valid[g] == 1);
        if (id < begin || id >= begin + n || b->epoch >= epochs) continue;
        if (b->valid[g]) hits[b->epoch * n + (id - begin)]++;
        else invalid++;
      }
      TC_CHECK_RC(twincache_loader_release(l, b), TWINCACHE_OK);
      count++;
    }
    TC_CHECK_RC(rc, TWINCACHE_END);
    TC_CHECK(count == per_rank * epochs);
    twincache_loader_close(l);
  }
  uint64_t valid = 0;
  for (uint64_t i = 0; i < n * epochs; i++) {
    TC_CHECK(hits[i] <= 1);
    if (!drop_last) TC_CHECK(hits[i] == 1); /* the union of valid graphs is the epoch */
    valid += hits[i];
  }
  uint64_t slots_total = per_rank * W * G * epochs;
  if (drop_last) {
    TC_CHECK(valid == slots_total && invalid == 0);
  } else {
    TC_CHECK(valid == n * epochs && invalid == slots_total - n * epochs);
  }
  if (tc_test_failures()) fprintf(stderr, "  (case n=%llu G=%u W=%u drop_last=%d shuffle=%d)\n",
                           (unsigned long long)n, G, W, drop_last, shuffle);
  free(hits);
}

/* Padding is deterministic and repeats the epoch's first graphs: without
 * shuffling, position p >= n of the padded order holds graph begin + p - n. */
static void check_padding_graphs(const char *cache) {
  const uint32_t G = 4, W = 3;
  const uint64_t n = 13; /* P = 24 positions: 11 padding */
  for (uint32_t r = 0; r < W; r++) {
    twincache_loader_options o;
    twincache_loader_options_init(&o);
    o.batch_size = G;
    o.world_size = W;
    o.rank = r;
    o.shuffle = 0;
    o.index_begin = 100;
    o.index_end = 100 + n;
    twincache_loader *l = NULL;
    TC_CHECK_RC(twincache_loader_open(cache, &o, NULL, &l), TWINCACHE_OK);
    if (!l) continue;
    twincache_batch *b;
    for (uint64_t j = 0; twincache_loader_next(l, &b) == TWINCACHE_OK; j++) {
      uint64_t first = (j * W + r) * G;
      for (uint32_t g = 0; g < G; g++) {
        uint64_t p = first + g, want = 100 + (p < n ? p : (p - n) % n);
        TC_CHECK(b->graph_id[g] == want);
        TC_CHECK(b->valid[g] == (p < n));
      }
      twincache_loader_release(l, b);
    }
    twincache_loader_close(l);
  }
}

int main(int argc, char **argv) {
  TC_REQUIRE(argc == 2);
  const char *cache = argv[1];
  const uint64_t counts[] = {101, 37, 5};
  for (uint32_t W = 2; W <= 7; W++)
    for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++)
      for (int drop_last = 0; drop_last <= 1; drop_last++)
        check_case(cache, 11 * W, counts[ci], 4, W, drop_last, (int)(ci + W) % 2);
  check_padding_graphs(cache);

  /* world_size 1: equal_ranks changes nothing (the last batch stays partial) */
  twincache_loader_options o;
  twincache_loader_options_init(&o);
  o.batch_size = 4;
  o.index_end = 13;
  tl_stream a = {0}, b = {0};
  TC_CHECK_RC(tl_stream_load(cache, &o, NULL, &a), TWINCACHE_OK);
  o.equal_ranks = 0;
  TC_CHECK_RC(tl_stream_load(cache, &o, NULL, &b), TWINCACHE_OK);
  TC_CHECK(a.count == 4 && a.n_graphs[3] == 1 && tl_stream_equal(&a, &b));
  tl_stream_free(&a);
  tl_stream_free(&b);
  return tc_test_finish("test_loader_ranks");
}
