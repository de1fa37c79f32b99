/* compact.c — the compact batch layout (twincache_loader.h, "the compact
 * batch"): base worlds plus, per twin world, only the columns its
 * intervention changed, packed at the end of the slab.
 *
 * Filling: a frame's stored twin columns are exactly the compact layout's
 * columns (per intervention, the target and its descendants in increasing
 * node order, minus a do() target, whose column is the value), so a graph is
 * decoded into a view of its sections (twincache_frame_decode_view) and
 * written straight into the slab: the base transposed (N,S) -> (S,N), all
 * stored columns in one memcpy, masks from the descendant sets, adjacency
 * rows from the child sets. No dense twin world is ever built. */
#include <stdlib.h>
#include <string.h>

#include "tc_compact.h"
#include "tc_error.h"
#include "tc_loader_internal.h"

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
  if (c->max_cols > UINT32_MAX)
    return tc_error_set(TWINCACHE_EINVAL, "compact layout: %zu graphs x %zu interventions x %zu nodes = %llu "
                        "columns, more than 2^32 - 1", G, K, N, (unsigned long long)c->max_cols);
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
  c->rows = off;      /* uint32 (G,K+1) */
  off = align64(off + G * (K + 1) * sizeof(uint32_t));
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
  TC_RETURN_IF(!cb, TWINCACHE_ENOMEM, "compact slot: out of memory");
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
  cb->rows = (uint32_t *)(p + L->rows);
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

/* Bits [0, 8*nbytes) of a packed little-endian set, nbytes <= 8, as a word. */
static uint64_t load_set_word(const uint8_t *p, uint32_t nbytes) {
  uint64_t v = 0;
  for (uint32_t b = 0; b < nbytes; b++) v |= (uint64_t)p[b] << (8 * b);
  return v;
}

/* Words [0, W) of a packed set of R bytes (0 beyond it). */
static void load_set(uint64_t *words, size_t W, const uint8_t *set, uint32_t R) {
  for (size_t q = 0; q < W; q++) {
    uint32_t at = (uint32_t)q * 8;
    words[q] = at < R ? load_set_word(set + at, R - at < 8 ? R - at : 8) : 0;
  }
}

int tc_compact_decode_graph(twincache_dctx *d, const void *frame, size_t size, uint64_t index,
                            const twincache_graph *caps, twincache_compact_batch *cb,
                            uint32_t pos) {
  const twincache_compact_layout *L = &cb->layout;
  size_t N = L->nodes, K = L->inter, S = L->samples, W = L->mask_words;
  twincache_frame_view v;
  uint32_t n, s_n, k_n, h_n;
  int rc;

  if (pos == 0) { /* a new batch */
    cb->n_cols = 0;
    cb->used_bytes = twincache_compact_used_bytes(L, 0);
  }
  uint64_t cursor = cb->n_cols;
  /* the capacities, before decompressing (as twincache_frame_decode) */
  if ((rc = twincache_frame_peek(frame, size, NULL, &n, &s_n, &k_n, &h_n)) != TWINCACHE_OK) return rc;
  TC_RETURN_IF(n > caps->cap_nodes || s_n > caps->cap_samples || k_n > caps->cap_inter || h_n > caps->cap_hidden,
               TWINCACHE_ETOOBIG, "frame: %u nodes, %u samples, %u interventions, %u hidden units exceed the "
               "cache's caps (%u, %u, %u, %u)", n, s_n, k_n, h_n, caps->cap_nodes, caps->cap_samples,
               caps->cap_inter, caps->cap_hidden);
  if ((rc = twincache_frame_decode_view(d, frame, size, &v)) != TWINCACHE_OK) return rc;
  n = v.n_nodes;
  k_n = v.n_inter;
  if ((rc = tc_loader_frame_fits(v.index, v.n_samples, n, k_n, index, S, N, K)) != TWINCACHE_OK) return rc;
  /* rows per world: the frame's counts (FORMAT.md 3.10), else S each */
  const int counted = (v.flags & TWINCACHE_GRAPH_ROWS) && v.world_rows;
  uint64_t cols = 0;
  for (uint32_t k = 0; k < k_n; k++) {
    TC_RETURN_IF(v.target[k] >= n || !twincache_inter_kind_valid(v.flags, v.kind[k]), TWINCACHE_ECORRUPT,
                 "frame: world %u targets node %u of %u with kind %u (flags 0x%x)", k, (unsigned)v.target[k], n,
                 (unsigned)v.kind[k], (unsigned)v.flags);
    if (v.n_targets[k] > 1)
      return tc_error_set(TWINCACHE_EINVAL, "graph %llu: world %u intervenes on %u nodes; the compact "
                          "layout holds one target per world: read this cache with the dense layout",
                          (unsigned long long)index, k, (unsigned)v.n_targets[k]);
    cols += v.n_cols_of[k];
  }
  TC_RETURN_IF(cols != v.n_cols || v.n_cols > L->max_cols - cursor, TWINCACHE_ECORRUPT,
               "frame: %llu twin columns, its worlds' targets need %llu, the slab has room for %llu",
               (unsigned long long)v.n_cols, (unsigned long long)cols, (unsigned long long)(L->max_cols - cursor));

  for (uint32_t k = 0; counted && k <= k_n; k++)
    TC_RETURN_IF(v.world_rows[k] == 0 || v.world_rows[k] > S, TWINCACHE_ECORRUPT,
                 "frame: world %u holds %u rows, S is %zu", k, (unsigned)v.world_rows[k], S);

  /* all checks are done; a retry of this position rewrites all of it.
   * The frame's columns are in (k, j) order: the slab's order. A counted
   * world's columns hold its r rows each: copied one by one, zero past r. */
  uint32_t *rows = cb->rows + (size_t)pos * (K + 1);
  rows[0] = counted ? v.world_rows[0] : (uint32_t)S;
  if (!counted) {
    memcpy(cb->cols + cursor * S, v.cols, (size_t)v.n_cols * S * sizeof(float));
  } else {
    const uint8_t *src = (const uint8_t *)v.cols;
    float *dst = cb->cols + cursor * S;
    for (uint32_t k = 0; k < k_n; k++) {
      uint32_t r = v.world_rows[k + 1];
      for (uint32_t q = 0; q < v.n_cols_of[k]; q++, dst += S, src += (size_t)r * sizeof(float)) {
        memcpy(dst, src, (size_t)r * sizeof(float));
        memset(dst + r, 0, (S - r) * sizeof(float));
      }
    }
  }
  for (uint32_t k = 0; k < K; k++) {
    rows[k + 1] = k < k_n ? (counted ? v.world_rows[k + 1] : (uint32_t)S) : 0u;
    size_t gk = (size_t)pos * K + k;
    uint64_t *mask = cb->col_mask + gk * W;
    cb->col_first[gk] = (uint32_t)cursor;
    if (k >= k_n) {
      memset(mask, 0, W * sizeof *mask);
      cb->kind[gk] = 0;
      cb->target[gk] = 0;
      cb->value[gk] = 0.0f;
      continue;
    }
    uint32_t t = v.target[k];
    load_set(mask, W, v.desc + (size_t)k * v.set_bytes, v.set_bytes);
    /* a do() target's column is the value: the expansion fills it */
    if (v.kind[k] == TWINCACHE_DO) mask[t >> 6] &= ~(1ull << (t & 63));
    cursor += v.n_cols_of[k];
    cb->kind[gk] = v.kind[k];
    cb->target[gk] = (uint16_t)t;
    cb->value[gk] = v.value[k];
  }
  twincache_frame_view_base_rows(&v, cb->base + (size_t)pos * S * N, (uint32_t)N);
  uint8_t *adj = cb->adj + (size_t)pos * N * N; /* (N,N): row i from i's children */
  memset(adj, 0, N * N);
  for (uint32_t i = 0; i < n; i++) {
    const uint8_t *row = v.adj + (size_t)i * v.set_bytes;
    for (uint32_t b = 0; b < v.set_bytes; b++)
      for (uint32_t m = row[b]; m; m &= m - 1) adj[(size_t)i * N + 8 * b + (uint32_t)__builtin_ctz(m)] = 1;
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
  memset(cb->rows + (size_t)pos * (K + 1), 0, (K + 1) * sizeof(uint32_t));
  for (size_t k = 0; k < K; k++) cb->col_first[(size_t)pos * K + k] = (uint32_t)cb->n_cols;
  cb->n_nodes[pos] = 0;
  cb->n_inter[pos] = 0;
  cb->graph_id[pos] = 0;
  cb->valid[pos] = 0;
}
