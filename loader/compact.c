/* compact.c — the compact batch layout (twincache_loader.h, "the compact
 * batch"): base worlds plus, per twin world, only the columns its
 * intervention changed, packed at the end of the slab.
 *
 * Filling: each graph is decoded into a per-thread dense scratch graph with
 * twincache_frame_decode, then its changed columns (the target and its
 * descendants, twincache_graph_descendants) are picked out of the scratch
 * twin worlds. Correctness first: a direct decode-to-compact (copying the
 * frame's stored columns, which are exactly these, without building the K
 * dense twin blocks) would save writing and re-reading K*S*N floats per
 * graph in the scratch (25.6 KB at N=10, K=10, S=64; 640 KB at N=K=50), i.e.
 * most of a decode thread's memory traffic; it needs a hook in formats/. */
#include <stdlib.h>
#include <string.h>

#include "tc_compact.h"

static size_t align64(size_t x) { return (x + 63) & ~(size_t)63; }

int twincache_compact_layout_init(twincache_compact_layout *c, const twincache_batch_layout *d) {
  size_t G = d->graphs, N = d->nodes, K = d->inter, S = d->samples, off = 0;
  size_t W = (N + 63) / 64;
  memset(c, 0, sizeof *c);
  c->dense = *d;
  c->graphs = d->graphs;
  c->nodes = d->nodes;
  c->inter = d->inter;
  c->samples = d->samples;
  c->mask_words = (uint32_t)W;
  c->max_cols = (uint64_t)G * K * N;
  if (c->max_cols > UINT32_MAX) return TWINCACHE_EINVAL;
  c->base = off;      /* float (G,S,N) */
  off = align64(off + G * S * N * sizeof(float));
  c->adj = off;       /* uint8 (G,N,N) */
  off = align64(off + G * N * N);
  c->kind = off;      /* uint8 (G,K) */
  off = align64(off + G * K);
  c->graph_id = off;  /* uint64 (G) */
  off = align64(off + G * sizeof(uint64_t));
  c->valid = off;     /* uint8 (G) */
  off = align64(off + G);
  c->n_nodes = off;   /* uint32 (G) */
  off = align64(off + G * sizeof(uint32_t));
  c->n_inter = off;   /* uint32 (G) */
  off = align64(off + G * sizeof(uint32_t));
  c->target = off;    /* uint16 (G,K) */
  off = align64(off + G * K * sizeof(uint16_t));
  c->value = off;     /* float (G,K) */
  off = align64(off + G * K * sizeof(float));
  c->col_first = off; /* uint32 (G,K) */
  off = align64(off + G * K * sizeof(uint32_t));
  c->col_mask = off;  /* uint64 (G,K,W) */
  off = align64(off + G * K * W * sizeof(uint64_t));
  c->cols = off;      /* float (max_cols,S) */
  off = align64(off + (size_t)c->max_cols * S * sizeof(float));
  c->bytes = off;
  return TWINCACHE_OK;
}

size_t twincache_compact_used_bytes(const twincache_compact_layout *c, uint64_t n_cols) {
  return align64(c->cols + (size_t)n_cols * c->samples * sizeof(float));
}

int tc_compact_slot_open(twincache_batch *b, const twincache_batch_layout *dense,
                         void *(*alloc)(size_t, void *), void *user) {
  twincache_compact_batch *cb = calloc(1, sizeof *cb);
  int rc;
  if (!cb) return TWINCACHE_ENOMEM;
  if ((rc = twincache_compact_layout_init(&cb->layout, dense)) != TWINCACHE_OK) goto cleanup;
  const twincache_compact_layout *L = &cb->layout;
  cb->slab = alloc(L->bytes, user);
  if (!cb->slab) {
    rc = TWINCACHE_ENOMEM;
    goto cleanup;
  }
  if ((uintptr_t)cb->slab % 64 != 0) { /* the alloc hook broke its contract */
    b->compact = cb; /* tc_compact_slot_close frees it */
    cb = NULL;
    rc = TWINCACHE_EINVAL;
    goto cleanup;
  }
  memset(cb->slab, 0, L->bytes); /* alignment gaps stay zero: a prefix copy is deterministic */
  uint8_t *p = cb->slab;
  cb->base = (float *)(p + L->base);
  cb->adj = p + L->adj;
  cb->kind = p + L->kind;
  cb->graph_id = (uint64_t *)(p + L->graph_id);
  cb->valid = p + L->valid;
  cb->n_nodes = (uint32_t *)(p + L->n_nodes);
  cb->n_inter = (uint32_t *)(p + L->n_inter);
  cb->target = (uint16_t *)(p + L->target);
  cb->value = (float *)(p + L->value);
  cb->col_first = (uint32_t *)(p + L->col_first);
  cb->col_mask = (uint64_t *)(p + L->col_mask);
  cb->cols = (float *)(p + L->cols);
  cb->used_bytes = twincache_compact_used_bytes(L, 0);
  b->layout = *dense;
  b->slab = NULL;
  b->base = cb->base;
  b->inter = NULL;
  b->target = NULL;
  b->value = NULL;
  b->kind = cb->kind;
  b->adj = cb->adj;
  b->node_mask = NULL;
  b->int_mask = NULL;
  b->graph_id = cb->graph_id;
  b->valid = cb->valid;
  b->compact = cb;
  cb = NULL;
  rc = TWINCACHE_OK;

cleanup:
  free(cb);
  return rc;
}

void tc_compact_slot_close(twincache_batch *b, void (*free_fn)(void *, void *), void *user) {
  if (!b->compact) return;
  if (b->compact->slab) free_fn(b->compact->slab, user);
  free(b->compact);
  b->compact = NULL;
}

int tc_compact_scratch_init(twincache_graph *g) {
  size_t N = g->cap_nodes, S = g->cap_samples, K = g->cap_inter;
  g->ld = g->ld_adj = g->cap_nodes;
  g->base = malloc(S * N * sizeof(float));
  g->inter = malloc((K ? K : 1) * S * N * sizeof(float));
  g->adj = malloc(N * N);
  return g->base && g->inter && g->adj ? TWINCACHE_OK : TWINCACHE_ENOMEM;
}

void tc_compact_scratch_free(twincache_graph *g) {
  free(g->base);
  free(g->inter);
  free(g->adj);
  g->base = g->inter = NULL;
  g->adj = NULL;
}

/* 1 when column j of the world block blk (S,N) is the float v in every row,
 * bit for bit. */
static int column_is(const float *blk, size_t N, size_t S, size_t j, float v) {
  for (size_t s = 0; s < S; s++)
    if (memcmp(&blk[s * N + j], &v, sizeof v) != 0) return 0;
  return 1;
}

int tc_compact_decode_graph(twincache_dctx *d, const void *frame, size_t size, uint64_t index,
                            twincache_graph *gr, twincache_compact_batch *cb, uint32_t pos) {
  const twincache_compact_layout *L = &cb->layout;
  size_t N = L->nodes, K = L->inter, S = L->samples, W = L->mask_words;
  uint8_t desc[TWINCACHE_MAX_NODES];
  int rc;

  if (pos == 0) { /* a new batch */
    cb->n_cols = 0;
    cb->used_bytes = twincache_compact_used_bytes(L, 0);
  }
  uint64_t cursor = cb->n_cols;
  if ((rc = twincache_frame_decode(d, frame, size, gr)) != TWINCACHE_OK) return rc;
  uint32_t n = gr->n_nodes, k_n = gr->n_inter;
  if (gr->index != index || gr->n_samples != S || n == 0 || n > N || k_n > K) return TWINCACHE_ECORRUPT;
  for (uint32_t k = 0; k < k_n; k++)
    if (gr->target[k] >= n || gr->kind[k] > TWINCACHE_SHIFT) return TWINCACHE_ECORRUPT;

  /* all checks are done; a retry of this position rewrites all of it */
  for (uint32_t k = 0; k < K; k++) {
    uint64_t *mask = cb->col_mask + ((size_t)pos * K + k) * W;
    memset(mask, 0, W * sizeof *mask);
    cb->col_first[(size_t)pos * K + k] = (uint32_t)cursor;
    if (k >= k_n) continue;
    uint32_t t = gr->target[k];
    const float *blk = gr->inter + (size_t)k * S * N;
    twincache_graph_descendants(gr->adj, n, (uint32_t)N, t, desc);
    for (uint32_t j = 0; j < n; j++) {
      if (!desc[j]) continue;
      /* a do() target's column is the value: the expansion fills it */
      if (j == t && gr->kind[k] == TWINCACHE_DO && column_is(blk, N, S, j, gr->value[k])) continue;
      if (cursor >= L->max_cols) return TWINCACHE_ECORRUPT;
      mask[j >> 6] |= 1ull << (j & 63);
      float *dst = cb->cols + cursor * S;
      for (size_t s = 0; s < S; s++) dst[s] = blk[s * N + j];
      cursor++;
    }
  }
  /* the decoder wrote every column of the S base rows (padding 0) and of the
   * first n adj rows */
  memcpy(cb->base + (size_t)pos * S * N, gr->base, S * N * sizeof(float));
  uint8_t *adj = cb->adj + (size_t)pos * N * N;
  memcpy(adj, gr->adj, (size_t)n * N);
  memset(adj + (size_t)n * N, 0, (N - n) * N);
  for (uint32_t k = 0; k < K; k++) {
    size_t gk = (size_t)pos * K + k;
    cb->kind[gk] = k < k_n ? gr->kind[k] : 0;
    cb->target[gk] = k < k_n ? gr->target[k] : 0;
    cb->value[gk] = k < k_n ? gr->value[k] : 0.0f;
  }
  cb->n_nodes[pos] = n;
  cb->n_inter[pos] = k_n;
  cb->graph_id[pos] = index;
  cb->n_cols = cursor;
  cb->used_bytes = twincache_compact_used_bytes(L, cursor);
  return TWINCACHE_OK;
}

void tc_compact_zero_graph(twincache_compact_batch *cb, uint32_t pos) {
  const twincache_compact_layout *L = &cb->layout;
  size_t N = L->nodes, K = L->inter, S = L->samples, W = L->mask_words;
  memset(cb->base + (size_t)pos * S * N, 0, S * N * sizeof(float));
  memset(cb->adj + (size_t)pos * N * N, 0, N * N);
  memset(cb->kind + (size_t)pos * K, 0, K);
  memset(cb->target + (size_t)pos * K, 0, K * sizeof(uint16_t));
  memset(cb->value + (size_t)pos * K, 0, K * sizeof(float));
  memset(cb->col_mask + (size_t)pos * K * W, 0, K * W * sizeof(uint64_t));
  for (size_t k = 0; k < K; k++) cb->col_first[(size_t)pos * K + k] = (uint32_t)cb->n_cols;
  cb->n_nodes[pos] = 0;
  cb->n_inter[pos] = 0;
  cb->graph_id[pos] = 0;
  cb->valid[pos] = 0;
}
