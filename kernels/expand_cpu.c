/* expand_cpu.c — the CPU reference of the compact-batch expansion
 * (contract in twincache_kernels.h). Floats are moved as uint32 bits. */
#include <string.h>

#include "tc_node_body.h"
#include "twincache_kernels.h"

void twincache_expand_cpu(void *dense, const void *compact, const twincache_expand_offsets *o) {
  const size_t G = (size_t)o->G, K = (size_t)o->K, S = (size_t)o->S, N = (size_t)o->N,
               W = (size_t)o->W;
  const uint8_t *c = compact;
  uint8_t *d = dense;
  const uint32_t *c_base = (const uint32_t *)(c + o->c_base);
  const uint8_t *c_adj = c + o->c_adj, *c_kind = c + o->c_kind;
  const uint64_t *c_graph_id = (const uint64_t *)(c + o->c_graph_id);
  const uint8_t *c_valid = c + o->c_valid;
  const uint32_t *n_nodes = (const uint32_t *)(c + o->c_n_nodes);
  const uint32_t *n_inter = (const uint32_t *)(c + o->c_n_inter);
  const uint16_t *c_target = (const uint16_t *)(c + o->c_target);
  const uint32_t *c_value = (const uint32_t *)(c + o->c_value);
  const uint32_t *col_first = (const uint32_t *)(c + o->c_col_first);
  const uint64_t *col_mask = (const uint64_t *)(c + o->c_col_mask);
  const uint32_t *cols = (const uint32_t *)(c + o->c_cols);
  const uint32_t *c_rows = (const uint32_t *)(c + o->c_rows); /* (G,K+1) */
  uint32_t *base = (uint32_t *)(d + o->base), *inter = (uint32_t *)(d + o->inter);
  uint8_t *target = d + o->target, *kind = d + o->kind, *adj = d + o->adj;
  uint32_t *value = (uint32_t *)(d + o->value);
  uint8_t *node_mask = d + o->node_mask, *int_mask = d + o->int_mask;
  uint64_t *graph_id = (uint64_t *)(d + o->graph_id);
  uint8_t *valid = d + o->valid;
  uint32_t *rows = (uint32_t *)(d + o->rows); /* (G,K+1) */

  for (size_t g = 0; g < G; g++) {
    size_t nn = n_nodes[g], ni = n_inter[g];
    const uint32_t *bg = c_base + g * S * N; /* (S,N) */
    memcpy(base + g * S * N, bg, S * N * sizeof(uint32_t));
    memcpy(adj + g * N * N, c_adj + g * N * N, N * N);
    memcpy(kind + g * K, c_kind + g * K, K);
    graph_id[g] = c_graph_id[g];
    valid[g] = c_valid[g];
    for (size_t j = 0; j < N; j++) node_mask[g * N + j] = j < nn;
    memcpy(rows + g * (K + 1), c_rows + g * (K + 1), (K + 1) * sizeof(uint32_t));
    for (size_t k = 0; k < K; k++) {
      size_t gk = g * K + k, t = c_target[gk];
      int_mask[gk] = k < ni;
      for (size_t j = 0; j < N; j++) {
        int hit = k < ni && j == t;
        target[gk * N + j] = (uint8_t)hit;
        value[gk * N + j] = hit ? c_value[gk] : 0u;
      }
      uint32_t *blk = inter + gk * S * N; /* (S,N) */
      if (k >= ni) {
        memset(blk, 0, S * N * sizeof(uint32_t));
        continue;
      }
      size_t fill = tc_node_kind_fixes(c_kind[gk]) ? t : N; /* a do() target column; N = none */
      size_t r = c_rows[g * (K + 1) + k + 1]; /* rows the world holds: 0 past them */
      for (size_t s = 0; s < S; s++)
        for (size_t j = 0; j < N; j++) blk[s * N + j] = s >= r ? 0u : j == fill ? c_value[gk] : bg[s * N + j];
      const uint64_t *mask = col_mask + gk * W;
      size_t col = col_first[gk];
      for (size_t j = 0; j < N; j++) {
        if (!((mask[j >> 6] >> (j & 63)) & 1u)) continue;
        const uint32_t *src = cols + col * S;
        for (size_t s = 0; s < S; s++) blk[s * N + j] = src[s];
        col++;
      }
    }
  }
}
