/* tc_bench_graphs.h — the graphs of the codec benchmarks (bench_format,
 * bench_frames): graphs 0..n-1 of twincache-gen's default workload (linear
 * Gaussian SCMs, N uniform in 5..10, ER p = 0.3, S = 64, one do() per node),
 * drawn by the generator itself with seed 2024, each copied out of the
 * worker through the public frame codec (encode, then decode into a graph of
 * its own). A program's helper: it exits with one line on failure. */
#ifndef TC_BENCH_GRAPHS_H
#define TC_BENCH_GRAPHS_H

#include <stdio.h>
#include <stdlib.h>

#include "tc_gen.h"
#include "twincache_format.h"

#define BENCH_REQUIRE(cond)                                                         \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #cond,          \
              twincache_last_error());                                              \
      exit(1);                                                                      \
    }                                                                               \
  } while (0)

/* Returns graphs 0..n-1 (free with bench_graphs_free); adds their raw float32
 * bytes to *raw_bytes. */
static inline twincache_graph **bench_default_graphs(uint32_t n, uint64_t *raw_bytes) {
  tc_gen_config c;
  tc_gen_config_default(&c);
  c.seed = 2024;
  twincache_graph **g = calloc(n, sizeof *g);
  tc_gen_worker *w = tc_gen_worker_create(&c);
  twincache_cctx *cc = twincache_cctx_create(1);
  twincache_dctx *dc = twincache_dctx_create();
  size_t bound = twincache_frame_bound(c.nodes_max, c.samples, c.nodes_max, 0);
  uint8_t *frame = malloc(bound);
  BENCH_REQUIRE(g && w && cc && dc && frame);
  tc_gen_worker_plan(w, 0, n);
  for (uint32_t i = 0; i < n; i++) {
    const twincache_graph *src;
    uint64_t igraph_ns = 0, sample_ns = 0;
    size_t bytes;
    BENCH_REQUIRE(tc_gen_graph(w, i, &src, &igraph_ns, &sample_ns) == 0);
    BENCH_REQUIRE(twincache_frame_encode(cc, src, frame, bound, &bytes) == 0);
    g[i] = twincache_graph_alloc(src->n_nodes, src->n_samples, src->n_inter, 0);
    BENCH_REQUIRE(g[i] && twincache_frame_decode(dc, frame, bytes, g[i]) == 0);
    *raw_bytes += twincache_graph_raw_bytes(g[i]);
  }
  free(frame);
  twincache_dctx_free(dc);
  twincache_cctx_free(cc);
  tc_gen_worker_free(w);
  return g;
}

static inline void bench_graphs_free(twincache_graph **g, uint32_t n) {
  for (uint32_t i = 0; g && i < n; i++) twincache_graph_free(g[i]);
  free(g);
}

#endif /* TC_BENCH_GRAPHS_H */
