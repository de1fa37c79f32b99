/* tc_synth.h — in-memory synthetic batches for the train tests: a tiny
 * linear (or tanh) SCM generator writing a padded batch slab of the loader's
 * layout, with one DO intervention per node on twin noise; its DAG comes
 * from tests/tc_toy_scm.h. Header-only. */
#ifndef TC_SYNTH_H
#define TC_SYNTH_H

#include <stdlib.h>
#include <string.h>

#include "tc_common.h"
#include "tc_toy_scm.h"
#include "twincache_loader.h"

typedef struct tc_synth {
  twincache_batch_layout layout;
  void *slab;
  float *weight; /* (G,N,N) true linear weights (0 = no edge) */
} tc_synth;

/* Fills a batch of G graphs with n_nodes in [n_min, N], edge probability
 * p_edge, S samples; nonlinear = 0: x_j = sum_i W_ij x_i + e_j, else
 * x_j = sum_i W_ij tanh(x_i) + e_j. Graph g uses RNG stream (seed, g).
 * Returns 0, or -1 when out of memory. Free with tc_synth_free. */
static inline int tc_synth_make(tc_synth *y, int G, int N, int S, int n_min, double p_edge,
                                int nonlinear, uint64_t seed) {
  memset(y, 0, sizeof *y);
  if (twincache_batch_layout_init(&y->layout, (uint32_t)G, (uint32_t)N, (uint32_t)N, (uint32_t)S) != 0)
    return -1;
  y->slab = aligned_alloc(64, y->layout.bytes);
  y->weight = (float *)calloc((size_t)G * N * N, sizeof(float));
  double *x = (double *)malloc(sizeof(double) * N);
  double *e = (double *)malloc(sizeof(double) * (size_t)S * N);
  uint32_t *order = (uint32_t *)malloc(sizeof(uint32_t) * N);
  if (!y->slab || !y->weight || !x || !e || !order) {
    free(x), free(e), free(order);
    free(y->slab), free(y->weight);
    return -1;
  }
  memset(y->slab, 0, y->layout.bytes);
  uint8_t *s8 = (uint8_t *)y->slab;
  const twincache_batch_layout *l = &y->layout;
  float *base = (float *)(s8 + l->base), *inter = (float *)(s8 + l->inter_off);
  float *value = (float *)(s8 + l->value);
  uint8_t *target = s8 + l->target, *adj = s8 + l->adj, *nm = s8 + l->node_mask;
  uint8_t *im = s8 + l->int_mask;
  uint64_t *gid = (uint64_t *)(s8 + l->graph_id);
  uint32_t *rows = (uint32_t *)(s8 + l->rows); /* (G, N+1): every real world all S rows */
  for (int g = 0; g < G; g++) {
    tc_rng r;
    tc_rng_init(&r, seed, (uint64_t)g);
    int n = n_min + (int)tc_rng_below(&r, (uint32_t)(N - n_min + 1));
    gid[g] = (uint64_t)g;
    float *W = y->weight + (size_t)g * N * N;
    tc_toy_scm_dag(&r, (uint32_t)n, p_edge, 0.5, 1.5, order, W, (size_t)N);
    for (int q = 0; q < n * N; q++) adj[(size_t)g * N * N + q] = W[q] != 0.0f;
    for (int i = 0; i < n; i++) nm[(size_t)g * N + i] = 1;
    for (int q = 0; q < S * n; q++) e[q] = tc_rng_normal(&r);
    /* world -1 = base, world k = do(node k = value) */
    for (int k = -1; k < n; k++) {
      double v = 0.0;
      rows[(size_t)g * (N + 1) + k + 1] = (uint32_t)S;
      if (k >= 0) {
        v = 2.0 * tc_rng_normal(&r);
        im[(size_t)g * N + k] = 1;
        target[((size_t)g * N + k) * N + k] = 1;
        value[((size_t)g * N + k) * N + k] = (float)v;
      }
      for (int s = 0; s < S; s++) {
        for (int a = 0; a < n; a++) {
          int j = order[a];
          double acc = e[s * n + j];
          for (int b = 0; b < a; b++) {
            int i = order[b];
            double pi = nonlinear ? tanh(x[i]) : x[i];
            acc += W[i * N + j] * pi;
          }
          x[j] = (j == k) ? v : acc;
        }
        float *row = k < 0 ? base + ((size_t)g * S + s) * N
                           : inter + (((size_t)g * N + k) * S + s) * N;
        for (int j = 0; j < n; j++) row[j] = (float)x[j];
      }
    }
  }
  free(x), free(e), free(order);
  return 0;
}

static inline void tc_synth_free(tc_synth *y) {
  free(y->slab);
  free(y->weight);
  y->slab = NULL, y->weight = NULL;
}

#endif /* TC_SYNTH_H */
