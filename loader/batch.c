/* batch.c — the slab layouts: every array of DESIGN.md's batch table (and
 * of the SCM batch) at a fixed, 64-byte aligned offset of one contiguous
 * slab. */
#include <string.h>

#include "twincache_loader.h"
#include "tc_error.h"

/* Appends an array of count elements of elem_bytes at the 64-byte aligned
 * offset *off, returns its offset and advances *off; sets *overflow instead
 * when the sizes do not fit in size_t. */
static size_t place(size_t *off, size_t count, size_t elem_bytes, int *overflow) {
  size_t at = *off, bytes, end;
  if (__builtin_mul_overflow(count, elem_bytes, &bytes) || __builtin_add_overflow(at, bytes, &end) ||
      __builtin_add_overflow(end, (size_t)63, &end)) {
    *overflow = 1;
    return 0;
  }
  *off = end & ~(size_t)63;
  return at;
}

/* Product a*b*c*d of sizes, or 0 with *overflow set when it exceeds size_t. */
static size_t product(size_t a, size_t b, size_t c, size_t d, int *overflow) {
  size_t r;
  if (__builtin_mul_overflow(a, b, &r) || __builtin_mul_overflow(r, c, &r) ||
      __builtin_mul_overflow(r, d, &r)) {
    *overflow = 1;
    return 0;
  }
  return r;
}

int twincache_batch_layout_init(twincache_batch_layout *l, uint32_t graphs, uint32_t nodes,
                                uint32_t inter, uint32_t samples) {
  size_t G = graphs, N = nodes, K = inter, S = samples, off = 0;
  int overflow = 0;
  twincache_batch_layout r = {0};
  r.graphs = graphs;
  r.nodes = nodes;
  r.inter = inter;
  r.samples = samples;
  r.base = place(&off, product(G, S, N, 1, &overflow), sizeof(float), &overflow);      /* (G,S,N) */
  r.inter_off = place(&off, product(G, K, S, N, &overflow), sizeof(float), &overflow); /* (G,K,S,N) */
  r.target = place(&off, product(G, K, N, 1, &overflow), 1, &overflow);               /* (G,K,N) */
  r.value = place(&off, product(G, K, N, 1, &overflow), sizeof(float), &overflow);     /* (G,K,N) */
  r.kind = place(&off, product(G, K, 1, 1, &overflow), 1, &overflow);       /* (G,K) */
  r.adj = place(&off, product(G, N, N, 1, &overflow), 1, &overflow);                  /* (G,N,N) */
  r.node_mask = place(&off, product(G, N, 1, 1, &overflow), 1, &overflow);  /* (G,N) */
  r.int_mask = place(&off, product(G, K, 1, 1, &overflow), 1, &overflow);   /* (G,K) */
  r.graph_id = place(&off, G, sizeof(uint64_t), &overflow);                            /* (G) */
  r.valid = place(&off, G, 1, &overflow);                                              /* (G) */
  r.rows = place(&off, product(G, K + 1, 1, 1, &overflow), sizeof(uint32_t), &overflow); /* (G,K+1), last */
  r.bytes = off;
  if (overflow) {
    memset(l, 0, sizeof *l);
    return tc_error_set(TWINCACHE_EINVAL, "batch layout: %zu graphs of %zu nodes, %zu interventions, %zu "
                        "samples: the slab size overflows", G, N, K, S);
  }
  *l = r;
  return TWINCACHE_OK;
}

int twincache_scm_layout_init(twincache_scm_layout *l, uint32_t graphs, uint32_t nodes, uint32_t inter,
                              uint32_t hidden, uint32_t rows) {
  size_t G = graphs, N = nodes, K = inter, H = hidden, off = 0;
  int overflow = 0;
  if (graphs == 0 || nodes == 0 || nodes > TWINCACHE_MAX_NODES || inter > TWINCACHE_MAX_INTER ||
      hidden > TWINCACHE_MAX_HIDDEN || rows == 0 || rows > TWINCACHE_MAX_SAMPLES) {
    memset(l, 0, sizeof *l);
    return tc_error_set(TWINCACHE_EINVAL, "SCM batch layout: G %u, N %u, K %u, H %u, S %u: out of range "
                        "(G, N and S >= 1; N <= %d, K <= %d, H <= %d, S <= %d)", graphs, nodes, inter, hidden,
                        rows, TWINCACHE_MAX_NODES, TWINCACHE_MAX_INTER, TWINCACHE_MAX_HIDDEN,
                        TWINCACHE_MAX_SAMPLES);
  }
  twincache_scm_layout r = {0};
  r.graphs = graphs, r.nodes = nodes, r.inter = inter, r.hidden = hidden, r.rows = rows;
  size_t block = N * (H * N + 2 * H); /* (N, H*N + 2H) MLP floats of one graph */
  r.n_nodes = place(&off, G, sizeof(uint32_t), &overflow);
  r.n_inter = place(&off, G, sizeof(uint32_t), &overflow);
  r.flags = place(&off, G, 1, &overflow);
  r.noise = place(&off, G, 1, &overflow);
  r.key = place(&off, G, sizeof(uint64_t), &overflow);
  r.order = place(&off, product(G, N, 1, 1, &overflow), sizeof(uint32_t), &overflow);
  r.adj = place(&off, product(G, N, N, 1, &overflow), 1, &overflow);
  r.weight = place(&off, product(G, N, N, 1, &overflow), sizeof(float), &overflow);
  r.mlp = place(&off, product(G, block, 1, 1, &overflow), sizeof(float), &overflow);
  r.noise_scale = place(&off, product(G, N, 1, 1, &overflow), sizeof(float), &overflow);
  r.target = place(&off, product(G, K, 1, 1, &overflow), sizeof(uint16_t), &overflow);
  r.kind = place(&off, product(G, K, 1, 1, &overflow), 1, &overflow);
  r.value = place(&off, product(G, K, 1, 1, &overflow), sizeof(float), &overflow);
  r.desc = place(&off, product(G, K, N, 1, &overflow), 1, &overflow);
  r.mech = place(&off, product(G, N, 1, 1, &overflow), 1, &overflow);
  r.het_w = place(&off, product(G, N, N, 1, &overflow), sizeof(float), &overflow);
  r.het_c = place(&off, product(G, N, 1, 1, &overflow), sizeof(float), &overflow);
  r.graph_id = place(&off, G, sizeof(uint64_t), &overflow);
  r.valid = place(&off, G, 1, &overflow);
  r.bytes = off;
  if (overflow) {
    memset(l, 0, sizeof *l);
    return tc_error_set(TWINCACHE_EINVAL, "SCM batch layout: %zu graphs of %zu nodes, %zu interventions, %zu "
                        "hidden units: the slab size overflows", G, N, K, H);
  }
  *l = r;
  return TWINCACHE_OK;
}
