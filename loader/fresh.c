/* fresh.c — the loader's second way of filling a batch position: fresh
 * worlds. The frame gives the SCM (structure, parameters, interventions);
 * scm/ draws new exogenous noise from counters keyed by (cache tag, graph,
 * epoch group) and computes the base world and every twin world, which are
 * written straight into the dense or the compact slab. The worlds of a graph
 * are therefore a pure function of (tag, index, epoch group, rows): the same
 * whatever thread, rank or reading order produced them. */
#include <stdlib.h>
#include <string.h>

#include "tc_error.h"
#include "tc_fresh.h"
#include "tc_scm_batch.h" /* tc_scm_load_frame: the frame checks both share */

struct tc_fresh {
  uint32_t rows;          /* S of the batch */
  tc_scm_store *store;    /* the SCM of the graph being filled */
  tc_scm_sampler *sampler;
};

tc_fresh *tc_fresh_create(const twincache_dims *d, uint32_t rows) {
  tc_fresh *f = calloc(1, sizeof *f);
  if (!f) return NULL;
  f->rows = rows;
  f->store = tc_scm_store_create(d->max_nodes, d->max_inter, d->hidden);
  f->sampler = tc_scm_sampler_create(d->max_nodes, rows);
  if (!f->store || !f->sampler) {
    tc_fresh_free(f);
    return NULL;
  }
  return f;
}

void tc_fresh_free(tc_fresh *f) {
  if (!f) return;
  tc_scm_store_free(f->store);
  tc_scm_sampler_free(f->sampler);
  free(f);
}

uint64_t tc_fresh_key(uint64_t tag, uint64_t index, uint64_t group) {
  return tc_scm_fresh_key(tag, index, group);
}

/* Decodes and checks the frame, builds its SCM in f->store (*m) and samples
 * the base world into base (S, ld) with fresh noise. */
static int load(tc_fresh *f, twincache_dctx *d, const void *frame, size_t size, uint64_t index,
                uint64_t key, const twincache_graph *caps, uint32_t stored_samples, uint32_t N,
                uint32_t K, twincache_frame_view *v, tc_scm *m, float *base, uint32_t ld) {
  int rc = tc_scm_load_frame(f->store, d, frame, size, index, caps, stored_samples, N, K, v, m);
  if (rc != TWINCACHE_OK) return rc;
  tc_scm_noise_fresh(f->sampler, m, f->rows, key);
  tc_scm_sample_base(f->sampler, m, f->rows, base, ld, NULL, NULL);
  return TWINCACHE_OK;
}

/* Zeroes columns [n, ld) of S rows of ld floats. */
static void zero_pad(float *rows, uint32_t S, uint32_t n, uint32_t ld) {
  for (uint32_t s = 0; s < S; s++) /* a few floats a row: no memset call each */
    for (uint32_t c = n; c < ld; c++) rows[(size_t)s * ld + c] = 0.0f;
}

/* Rows world w (0 = base) of a fresh graph holds: the stored frame's count
 * (section 7b, FORMAT.md 3.10) cut to the batch's S; without counts (SCM-only
 * frames too) all S. */
static uint32_t world_count(const twincache_frame_view *v, uint32_t w, uint32_t S) {
  return (v->flags & TWINCACHE_GRAPH_ROWS) && v->world_rows[w] < S ? v->world_rows[w] : S;
}

int tc_fresh_dense(tc_fresh *f, twincache_dctx *d, const void *frame, size_t size, uint64_t index,
                   uint64_t key, const twincache_graph *caps, uint32_t stored_samples,
                   const twincache_batch_layout *L, float *base, float *inter, uint8_t *adj,
                   uint32_t *n_nodes, uint32_t *n_inter, uint16_t *target, uint8_t *kind,
                   float *value, uint8_t *n_targets, uint16_t *more_target, float *more_value,
                   uint32_t *world_rows) {
  const uint32_t N = L->nodes, K = L->inter, S = f->rows;
  twincache_frame_view v;
  tc_scm m;
  int rc = load(f, d, frame, size, index, key, caps, stored_samples, N, K, &v, &m, base, N);
  if (rc != TWINCACHE_OK) return rc;
  const uint32_t n = m.n;
  zero_pad(base, S, n, N);
  for (uint32_t k = 0; k < m.n_inter; k++) { /* twin world k (S, N) */
    float *dst = inter + (size_t)k * S * N;
    tc_scm_twin(f->sampler, &m, k, S, NULL);
    tc_scm_twin_rows(f->sampler, &m, k, S, base, N, dst, N); /* base's zero padding too */
    target[k] = m.target[k];
    kind[k] = m.kind[k];
    value[k] = m.value[k];
    n_targets[k] = m.n_targets[k];
    for (uint32_t i = 0; i + 1u < m.n_targets[k]; i++) {
      size_t at = (size_t)k * (TWINCACHE_MAX_TARGETS - 1) + i;
      more_target[at] = m.more_target[at];
      more_value[at] = m.more_value[at];
    }
  }
  /* rows per world (FORMAT.md 3.10): the stored frame's counts (section
   * 7b), drawn as above and cut; a frame without them (SCM-only ones too):
   * every world all S = rows of the batch */
  for (uint32_t w = 0; w <= m.n_inter; w++) {
    uint32_t r = world_count(&v, w, S);
    float *blk = w == 0 ? base : inter + (size_t)(w - 1) * S * N;
    if (r < S) memset(blk + (size_t)r * N, 0, (size_t)(S - r) * N * sizeof(float));
    world_rows[w] = r;
  }
  memset(adj, 0, (size_t)N * N);
  for (uint32_t i = 0; i < n; i++) memcpy(adj + (size_t)i * N, m.adj + (size_t)i * n, n);
  *n_nodes = n;
  *n_inter = m.n_inter;
  return TWINCACHE_OK;
}

int tc_fresh_compact(tc_fresh *f, twincache_dctx *d, const void *frame, size_t size, uint64_t index,
                     uint64_t key, const twincache_graph *caps, uint32_t stored_samples,
                     twincache_compact_batch *cb, uint32_t pos) {
  const twincache_compact_layout *L = &cb->layout;
  const uint32_t N = L->nodes, K = L->inter, S = f->rows;
  const size_t W = L->mask_words;
  twincache_frame_view v;
  tc_scm m;
  if (pos == 0) { /* a new batch */
    cb->n_cols = 0;
    cb->used_bytes = twincache_compact_used_bytes(L, 0);
  }
  uint64_t cursor = cb->n_cols;
  float *base = cb->base + (size_t)pos * S * N;
  int rc = load(f, d, frame, size, index, key, caps, stored_samples, N, K, &v, &m, base, N);
  if (rc != TWINCACHE_OK) return rc;
  const uint32_t n = m.n;
  zero_pad(base, S, n, N);
  TC_RETURN_IF(v.n_cols > L->max_cols - cursor, TWINCACHE_ECORRUPT,
               "frame: %llu twin columns, the slab has room for %llu", (unsigned long long)v.n_cols,
               (unsigned long long)(L->max_cols - cursor));
  for (uint32_t k = 0; k < m.n_inter; k++)
    if (m.n_targets[k] > 1)
      return tc_error_set(TWINCACHE_EINVAL, "graph %llu: world %u intervenes on %u nodes; the compact "
                          "layout holds one target per world: read this cache with the dense layout",
                          (unsigned long long)index, k, (unsigned)m.n_targets[k]);
  for (uint32_t k = 0; k < K; k++) {
    size_t gk = (size_t)pos * K + k;
    uint64_t *mask = cb->col_mask + gk * W;
    memset(mask, 0, W * sizeof *mask);
    cb->col_first[gk] = (uint32_t)cursor;
    if (k >= m.n_inter) {
      cb->kind[gk] = 0;
      cb->target[gk] = 0;
      cb->value[gk] = 0.0f;
      continue;
    }
    const uint32_t *changed;
    uint32_t nc = tc_scm_twin(f->sampler, &m, k, S, &changed), t = m.target[k];
    for (uint32_t c = 0; c < nc; c++) mask[changed[c] >> 6] |= 1ull << (changed[c] & 63);
    /* a do() target's column is the value: the expansion fills it */
    if (m.kind[k] == TWINCACHE_DO) mask[t >> 6] &= ~(1ull << (t & 63));
    float *cols = cb->cols + cursor * S;
    uint32_t written = tc_scm_twin_cols(f->sampler, &m, k, S, cols);
    uint32_t r = world_count(&v, k + 1, S); /* rows past its count: 0, as the dense fill leaves them */
    for (uint32_t c = 0; r < S && c < written; c++) memset(cols + (size_t)c * S + r, 0, (S - r) * sizeof(float));
    cursor += written;
    cb->kind[gk] = m.kind[k];
    cb->target[gk] = (uint16_t)t;
    cb->value[gk] = m.value[k];
  }
  /* rows per world (as tc_fresh_dense): the base's rows past its count are 0 */
  uint32_t *rows = cb->rows + (size_t)pos * (K + 1);
  for (uint32_t w = 0; w <= K; w++) rows[w] = w <= m.n_inter ? world_count(&v, w, S) : 0u;
  if (rows[0] < S) memset(base + (size_t)rows[0] * N, 0, (size_t)(S - rows[0]) * N * sizeof(float));
  uint8_t *adj = cb->adj + (size_t)pos * N * N; /* (N, N) */
  memset(adj, 0, (size_t)N * N);
  for (uint32_t i = 0; i < n; i++) memcpy(adj + (size_t)i * N, m.adj + (size_t)i * n, n);
  cb->n_nodes[pos] = n;
  cb->n_inter[pos] = m.n_inter;
  cb->graph_id[pos] = index;
  cb->n_cols = cursor;
  cb->used_bytes = twincache_compact_used_bytes(L, cursor);
  return TWINCACHE_OK;
}
