/* test_loader_content — every delivered batch holds exactly what the cache
 * reader decodes for the same graphs: samples, twin rows, targets, values,
 * kinds, adjacency, masks, ids; every padding byte zero. Slots are reused
 * over several epochs so that a small graph follows a larger one in the same
 * place (stale rows must be cleared). On a cache of multi-target worlds the
 * target row has a one (and the value row the value) at every target, and
 * the compact layout is refused with EINVAL naming the dense layout.
 * usage: test_loader_content CACHE_DIR */
#include "tl_common.h"

static twincache_cache *cache;
static twincache_dctx *dctx;
static twincache_graph *gr;
static uint64_t graphs_checked, padded_checked, multi_worlds;

static int all_zero(const void *p, size_t bytes) {
  const uint8_t *b = p;
  for (size_t i = 0; i < bytes; i++)
    if (b[i]) return 0;
  return 1;
}

/* Compares position g of batch b with the reader's decode of its graph. */
static void check_graph(const twincache_batch *b, uint32_t g) {
  const twincache_batch_layout *L = &b->layout;
  size_t N = L->nodes, K = L->inter, S = L->samples;
  const float *base = b->base + g * S * N, *inter = b->inter + g * K * S * N;
  const uint8_t *target = b->target + g * K * N, *kind = b->kind + g * K, *adj = b->adj + g * N * N;
  const float *value = b->value + g * K * N;
  const uint8_t *node_mask = b->node_mask + g * N, *int_mask = b->int_mask + g * K;

  if (g >= b->n_graphs) { /* an empty place of a partial batch: all zero */
    TC_CHECK(all_zero(base, S * N * 4) && all_zero(inter, K * S * N * 4));
    TC_CHECK(all_zero(target, K * N) && all_zero(value, K * N * 4) && all_zero(kind, K));
    TC_CHECK(all_zero(adj, N * N) && all_zero(node_mask, N) && all_zero(int_mask, K));
    TC_CHECK(b->graph_id[g] == 0);
    padded_checked++;
    return;
  }
  uint64_t id = b->graph_id[g];
  TC_CHECK_RC(twincache_cache_read_graph(cache, dctx, id, gr), TWINCACHE_OK);
  size_t n = gr->n_nodes, k = gr->n_inter, ld = gr->ld;
  TC_REQUIRE(n <= N && k <= K && gr->n_samples == S);
  int ok = 1;
  for (size_t s = 0; s < S; s++)
    for (size_t j = 0; j < N; j++)
      ok &= j < n ? !memcmp(&base[s * N + j], &gr->base[s * ld + j], 4) : base[s * N + j] == 0.0f;
  for (size_t q = 0; q < K; q++)
    for (size_t s = 0; s < S; s++)
      for (size_t j = 0; j < N; j++) {
        float got = inter[(q * S + s) * N + j];
        ok &= q < k && j < n ? !memcmp(&got, &gr->inter[(q * S + s) * ld + j], 4) : got == 0.0f;
      }
  for (size_t q = 0; q < K; q++) {
    ok &= int_mask[q] == (q < k);
    ok &= kind[q] == (q < k ? gr->kind[q] : 0);
    if (q < k) multi_worlds += gr->n_targets[q] > 1;
    for (size_t j = 0; j < N; j++) {
      int hit = q < k && j == gr->target[q];
      const float *want = &gr->value[q];
      for (uint32_t i = 1; q < k && i < gr->n_targets[q]; i++) /* a multi-target world */
        if (j == gr->more_target[q * (TWINCACHE_MAX_TARGETS - 1) + i - 1]) {
          hit = 1;
          want = &gr->more_value[q * (TWINCACHE_MAX_TARGETS - 1) + i - 1];
        }
      ok &= target[q * N + j] == hit;
      ok &= hit ? !memcmp(&value[q * N + j], want, 4) : value[q * N + j] == 0.0f;
    }
  }
  for (size_t i = 0; i < N; i++) {
    ok &= node_mask[i] == (i < n);
    for (size_t j = 0; j < N; j++)
      ok &= adj[i * N + j] == (i < n && j < n ? gr->adj[i * gr->ld_adj + j] : 0);
  }
  if (!ok) {
    fprintf(stderr, "batch %llu place %u graph %llu differs from the reader's decode\n",
            (unsigned long long)b->seq, g, (unsigned long long)id);
    tc_test_count_failure();
  }
  graphs_checked++;
}

int main(int argc, char **argv) {
  TC_REQUIRE(argc == 2);
  TC_REQUIRE(twincache_cache_open(argv[1], &cache) == TWINCACHE_OK);
  const twincache_dims *d = twincache_cache_dims(cache);
  gr = twincache_graph_alloc(d->max_nodes, d->samples, d->max_inter, d->hidden);
  dctx = twincache_dctx_create();
  TC_REQUIRE(gr && dctx);
  uint64_t count = twincache_cache_count(cache);

  /* batch sizes that do and do not divide the count, one slot reused by
   * graphs of every size, and several threads writing neighbouring slots */
  static const uint32_t configs[][4] = {/* batch, threads, slots, epochs */
                                        {32, 1, 1, 3}, {7, 2, 3, 2}, {64, 3, 2, 1}};
  for (size_t ci = 0; ci < sizeof configs / sizeof configs[0]; ci++) {
    twincache_loader_options o;
    twincache_loader *l = NULL;
    twincache_loader_options_init(&o);
    o.batch_size = configs[ci][0];
    o.threads = configs[ci][1];
    o.slots = configs[ci][2];
    o.epochs = configs[ci][3];
    o.seed = 11 + ci;
    TC_CHECK_RC(twincache_loader_open(argv[1], &o, NULL, &l), TWINCACHE_OK);
    if (!l) continue;
    twincache_batch *b;
    int rc;
    uint64_t seq = 0;
    while ((rc = twincache_loader_next(l, &b)) == TWINCACHE_OK) {
      TC_CHECK(b->seq == seq++);
      TC_CHECK(((uintptr_t)b->slab & 63) == 0);
      TC_CHECK((uint8_t *)b->base == (uint8_t *)b->slab + b->layout.base);
      TC_CHECK((uint8_t *)b->graph_id == (uint8_t *)b->slab + b->layout.graph_id);
      for (uint32_t g = 0; g < b->layout.graphs; g++) check_graph(b, g);
      twincache_loader_release(l, b);
    }
    TC_CHECK_RC(rc, TWINCACHE_END);
    twincache_loader_close(l);
  }
  TC_CHECK(graphs_checked == count * (3 + 2 + 1));
  TC_CHECK(padded_checked > 0 || count % 7 == 0);
  if (multi_worlds > 0) { /* the compact layout holds one target per world */
    twincache_loader_options o;
    twincache_loader *l = NULL;
    twincache_loader_options_init(&o);
    o.layout = TWINCACHE_LAYOUT_COMPACT;
    o.batch_size = (uint32_t)count;
    TC_CHECK_RC(twincache_loader_open(argv[1], &o, NULL, &l), TWINCACHE_OK);
    twincache_batch *b;
    if (l) TC_CHECK_RC(twincache_loader_next(l, &b), TWINCACHE_EINVAL);
    TC_CHECK(strstr(twincache_last_error(), "dense layout") != NULL, "message: %s", twincache_last_error());
    /* one "graph I: " (the fill's message names the graph already) */
    const char *at = strstr(twincache_last_error(), ": graph ");
    TC_CHECK(at && !strstr(at + 1, ": graph "), "the graph named twice: %s", twincache_last_error());
    twincache_loader_close(l);
    printf("%llu multi-target worlds checked; the compact layout refuses them\n", (unsigned long long)multi_worlds);
  }
  twincache_graph_free(gr);
  twincache_dctx_free(dctx);
  twincache_cache_close(cache);
  return tc_test_finish("test_loader_content");
}
