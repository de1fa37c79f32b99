/* scm_batch.c — the loader's third way of filling a batch position: the
 * graph's SCM itself, packed into the padded arrays of the SCM batch
 * (twincache_scm_layout) with the counter key of its fresh noise, for a
 * sampler outside the loader (kernels/'s twincache_sample_cuda). The worlds
 * that sampler computes are those fresh.c writes for the same key. */
#include <stdlib.h>
#include <string.h>

#include "tc_error.h"
#include "tc_loader_internal.h"
#include "tc_scm_batch.h"

struct tc_scm_packer {
  tc_scm_store *store; /* the SCM of the graph being packed */
};

tc_scm_packer *tc_scm_packer_create(const twincache_dims *d) {
  tc_scm_packer *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  if (!(p->store = tc_scm_store_create(d->max_nodes, d->max_inter, d->hidden))) {
    free(p);
    return NULL;
  }
  return p;
}

void tc_scm_packer_free(tc_scm_packer *p) {
  if (!p) return;
  tc_scm_store_free(p->store);
  free(p);
}

/* Typed pointers to position g's part of each array of an SCM slab. */
typedef struct scm_pos {
  uint32_t *n_nodes, *n_inter, *order;
  uint8_t *flags, *noise, *adj, *kind, *desc, *mech, *valid;
  uint64_t *key, *graph_id;
  float *weight, *mlp, *noise_scale, *value, *het_w, *het_c;
  uint16_t *target;
} scm_pos;

static scm_pos position(const twincache_scm_layout *L, uint8_t *slab, uint32_t g) {
  const size_t N = L->nodes, K = L->inter, H = L->hidden;
  scm_pos p;
  p.n_nodes = (uint32_t *)(slab + L->n_nodes) + g;
  p.n_inter = (uint32_t *)(slab + L->n_inter) + g;
  p.flags = slab + L->flags + g;
  p.noise = slab + L->noise + g;
  p.key = (uint64_t *)(slab + L->key) + g;
  p.order = (uint32_t *)(slab + L->order) + g * N;
  p.adj = slab + L->adj + g * N * N;
  p.weight = (float *)(slab + L->weight) + g * N * N;
  p.mlp = (float *)(slab + L->mlp) + g * N * (H * N + 2 * H);
  p.noise_scale = (float *)(slab + L->noise_scale) + g * N;
  p.target = (uint16_t *)(slab + L->target) + g * K;
  p.kind = slab + L->kind + g * K;
  p.value = (float *)(slab + L->value) + g * K;
  p.desc = slab + L->desc + g * K * N;
  p.mech = slab + L->mech + g * N;
  p.het_w = (float *)(slab + L->het_w) + g * N * N;
  p.het_c = (float *)(slab + L->het_c) + g * N;
  p.graph_id = (uint64_t *)(slab + L->graph_id) + g;
  p.valid = slab + L->valid + g;
  return p;
}

/* Zeroes position g's SCM arrays (not graph_id and valid). */
static void clear(const twincache_scm_layout *L, const scm_pos p) {
  const size_t N = L->nodes, K = L->inter, H = L->hidden;
  *p.n_nodes = *p.n_inter = 0;
  *p.flags = *p.noise = 0;
  *p.key = 0;
  memset(p.order, 0, N * sizeof *p.order);
  memset(p.adj, 0, N * N);
  memset(p.weight, 0, N * N * sizeof(float));
  memset(p.mlp, 0, N * (H * N + 2 * H) * sizeof(float));
  memset(p.noise_scale, 0, N * sizeof(float));
  memset(p.target, 0, K * sizeof *p.target);
  memset(p.kind, 0, K);
  memset(p.value, 0, K * sizeof(float));
  memset(p.desc, 0, K * N);
  memset(p.mech, 0, N);
  memset(p.het_w, 0, N * N * sizeof(float));
  memset(p.het_c, 0, N * sizeof(float));
}

void tc_scm_pack_zero(const twincache_scm_layout *L, uint8_t *slab, uint32_t g) {
  scm_pos p = position(L, slab, g);
  clear(L, p);
  *p.graph_id = 0;
  *p.valid = 0;
}

int tc_scm_load_frame(tc_scm_store *st, twincache_dctx *d, const void *frame, size_t size, uint64_t index,
                      const twincache_graph *caps, uint32_t stored_samples, uint32_t N, uint32_t K,
                      twincache_frame_view *v, tc_scm *m) {
  uint32_t n, s_n, k_n, h_n;
  int rc = twincache_frame_peek(frame, size, NULL, &n, &s_n, &k_n, &h_n);
  if (rc != TWINCACHE_OK) return rc;
  TC_RETURN_IF(n > caps->cap_nodes || k_n > caps->cap_inter || h_n > caps->cap_hidden, TWINCACHE_ETOOBIG,
               "frame: %u nodes, %u interventions, %u hidden units exceed the cache's caps (%u, %u, %u)", n, k_n,
               h_n, caps->cap_nodes, caps->cap_inter, caps->cap_hidden);
  if ((rc = twincache_frame_decode_view(d, frame, size, v)) != TWINCACHE_OK) return rc;
  rc = tc_loader_frame_fits(v->index, v->n_samples, v->n_nodes, v->n_inter, index, stored_samples, N, K);
  if (rc != TWINCACHE_OK) return rc;
  TC_RETURN_IF(v->flags & TWINCACHE_GRAPH_OBSERVED, TWINCACHE_EINVAL, "graph %llu holds observed data (imported, "
               "FORMAT.md 3.11): it has no SCM to draw fresh worlds from; read it with samples = STORED",
               (unsigned long long)index);
  for (uint32_t k = 0; k < v->n_inter; k++)
    TC_RETURN_IF(v->target[k] >= v->n_nodes || v->kind[k] >= TWINCACHE_INTER_KIND_COUNT, TWINCACHE_ECORRUPT,
                 "frame: world %u targets node %u of %u with kind %u (of %d kinds)", k, (unsigned)v->target[k],
                 v->n_nodes, (unsigned)v->kind[k], TWINCACHE_INTER_KIND_COUNT);
  return tc_scm_from_view(st, v, m);
}

int tc_scm_pack_graph(tc_scm_packer *pk, twincache_dctx *d, const void *frame, size_t size, uint64_t index,
                      uint64_t key, const twincache_graph *caps, uint32_t stored_samples,
                      const twincache_scm_layout *L, uint8_t *slab, uint32_t g) {
  const uint32_t N = L->nodes, K = L->inter, H = L->hidden;
  twincache_frame_view v;
  tc_scm m;
  int rc = tc_scm_load_frame(pk->store, d, frame, size, index, caps, stored_samples, N, K, &v, &m);
  if (rc != TWINCACHE_OK) return rc;
  for (uint32_t k = 0; k < m.n_inter; k++) {
    if (m.kind[k] == TWINCACHE_INTER_SOFT)
      return tc_error_set(TWINCACHE_EINVAL, "world %u is a soft intervention, whose redrawn "
                          "mechanism the SCM batch has no room for: use the dense or compact layout", k);
    if (m.n_targets && m.n_targets[k] > 1)
      return tc_error_set(TWINCACHE_EINVAL, "world %u intervenes on %u nodes; the SCM batch "
                          "holds one target per world: use the dense layout", k, (unsigned)m.n_targets[k]);
  }
  if (v.flags & TWINCACHE_GRAPH_ROWS)
    return tc_error_set(TWINCACHE_EINVAL, "graph %llu: its worlds hold fewer rows than S (FORMAT.md 3.10), which "
                        "the SCM batch does not carry: use the dense layout", (unsigned long long)index);
  const uint32_t n = m.n;
  scm_pos p = position(L, slab, g);
  clear(L, p); /* padding and what an older graph left */
  *p.n_nodes = n;
  *p.n_inter = m.n_inter;
  *p.flags = (uint8_t)((m.standardize ? 1 : 0) | (m.iscm ? 2 : 0) | (m.independent ? 4 : 0));
  *p.noise = (uint8_t)m.noise;
  *p.key = key;
  memcpy(p.order, m.order, n * sizeof *p.order);
  for (uint32_t j = 0; j < n; j++) {
    p.noise_scale[j] = m.noise_scale[j];
    p.mech[j] = m.node_mech ? m.node_mech[j] : (uint8_t)(m.hidden ? TWINCACHE_MECH_MLP : TWINCACHE_MECH_LINEAR);
    if (m.het_c) p.het_c[j] = m.het_c[j];
    for (uint32_t q = m.pa_start[j]; q < m.pa_start[j + 1]; q++) {
      size_t ij = (size_t)m.pa_idx[q] * N + j;
      p.adj[ij] = 1;
      p.weight[ij] = m.pa_w[q];
      if (m.het_w) p.het_w[ij] = m.het_w[q];
    }
  }
  if (m.hidden) {
    if (m.hidden != H) /* a non-linear frame has the cache's H */
      return tc_error_set(TWINCACHE_ECORRUPT, "%u hidden units, the cache's dims say %u", m.hidden, H);
    memcpy(p.mlp, m.mlp, (size_t)n * (H * n + 2u * H) * sizeof(float));
  }
  for (uint32_t k = 0; k < m.n_inter; k++) {
    p.target[k] = m.target[k];
    p.kind[k] = m.kind[k];
    p.value[k] = m.value[k];
    memcpy(p.desc + (size_t)k * N, m.desc + (size_t)k * n, n);
  }
  *p.graph_id = index;
  return TWINCACHE_OK;
}
