/* batch.c — the batch slab layout: every array of DESIGN.md's batch table at
 * a fixed, 64-byte aligned offset of one contiguous slab. */
#include "twincache_loader.h"

/* Rounds up to the slab alignment. */
static size_t align64(size_t x) { return (x + 63) & ~(size_t)63; }

void twincache_batch_layout_init(twincache_batch_layout *l, uint32_t graphs, uint32_t nodes,
                                 uint32_t inter, uint32_t samples) {
  size_t G = graphs, N = nodes, K = inter, S = samples, off = 0;
  l->graphs = graphs;
  l->nodes = nodes;
  l->inter = inter;
  l->samples = samples;
  l->base = off;      /* float (G,S,N) */
  off = align64(off + G * S * N * sizeof(float));
  l->inter_off = off; /* float (G,K,S,N) */
  off = align64(off + G * K * S * N * sizeof(float));
  l->target = off;    /* uint8 (G,K,N) */
  off = align64(off + G * K * N);
  l->value = off;     /* float (G,K,N) */
  off = align64(off + G * K * N * sizeof(float));
  l->kind = off;      /* uint8 (G,K) */
  off = align64(off + G * K);
  l->adj = off;       /* uint8 (G,N,N) */
  off = align64(off + G * N * N);
  l->node_mask = off; /* uint8 (G,N) */
  off = align64(off + G * N);
  l->int_mask = off;  /* uint8 (G,K) */
  off = align64(off + G * K);
  l->graph_id = off;  /* uint64 (G) */
  off = align64(off + G * sizeof(uint64_t));
  l->bytes = off;
}
