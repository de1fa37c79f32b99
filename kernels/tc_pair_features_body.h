/* tc_pair_features_body.h — the edge model's features of one ordered pair
 * (i, j), one body compiled twice: as C by pair_features_cpu.c (a loop over
 * the pairs) and as CUDA device code by pair_features.cu (one thread a pair).
 * The features are twincache_kernels.h's (TWINCACHE_FEATURES of them, clipped
 * to +-TWINCACHE_FEATURE_CLIP); the aggregates run over k in index order, so
 * both builds compute the same floats in the same order. Pure: writes only
 * f and *w. */
#ifndef TC_PAIR_FEATURES_BODY_H
#define TC_PAIR_FEATURES_BODY_H

#include <math.h>
#include <stdint.h>

#include "tc_math.h" /* TC_MATH: static inline, __host__ __device__ under nvcc */
#include "twincache_kernels.h"

/* x clipped to +-TWINCACHE_FEATURE_CLIP; NaN (a degenerate graph) -> 0. */
TC_MATH float tc_feature_clip(float x) {
  if (x > TWINCACHE_FEATURE_CLIP) return TWINCACHE_FEATURE_CLIP;
  if (x < -TWINCACHE_FEATURE_CLIP) return -TWINCACHE_FEATURE_CLIP;
  if (x != x) return 0.0f; /* NaN from a degenerate graph: no information */
  return x;
}

/* Pair (i, j) of one graph: f [TWINCACHE_FEATURES] its features, *w its
 * weight (0 for i == j or a masked node, whose features stay 0). Tg, Cg, Wg,
 * Pg [N x N] row-major: the graph's total effects, correlations, estimated
 * weights and partial correlations; ob, nm [N]: observed and node masks. */
TC_MATH void tc_pair_features_one(float *f, float *w, const float *Tg, const uint8_t *ob, const float *Cg,
                                  const float *Wg, const float *Pg, const uint8_t *nm, int i, int j, int N) {
  for (int q = 0; q < TWINCACHE_FEATURES; q++) f[q] = 0.0f;
  *w = 0.0f;
  if (i == j || !nm[i] || !nm[j]) return;
  *w = 1.0f;
  /* aggregates, in fixed index order */
  float row_max = 0.0f, col_max = 0.0f, wcol_max = 0.0f, wcol_sum = 0.0f;
  for (int k = 0; k < N; k++) {
    if (!nm[k]) continue;
    if (k != i) row_max = fmaxf(row_max, fabsf(Tg[i * N + k]));
    if (k != j) {
      col_max = fmaxf(col_max, fabsf(Tg[k * N + j]));
      wcol_max = fmaxf(wcol_max, fabsf(Wg[k * N + j]));
      wcol_sum += fabsf(Wg[k * N + j]);
    }
  }
  float tij = Tg[i * N + j], tji = Tg[j * N + i];
  float wij = Wg[i * N + j], wji = Wg[j * N + i];
  f[0] = tc_feature_clip(tij);
  f[1] = tc_feature_clip(tji);
  f[2] = tc_feature_clip(fabsf(tij));
  f[3] = tc_feature_clip(wij);
  f[4] = tc_feature_clip(wji);
  f[5] = tc_feature_clip(fabsf(wij));
  f[6] = Cg[i * N + j];
  f[7] = fabsf(Cg[i * N + j]);
  f[8] = Pg[i * N + j];
  f[9] = fabsf(Pg[i * N + j]);
  f[10] = (float)ob[i];
  f[11] = (float)ob[j];
  f[12] = tc_feature_clip(row_max);
  f[13] = tc_feature_clip(col_max);
  f[14] = tc_feature_clip(fabsf(wij) / (wcol_max + 1e-6f));
  f[15] = tc_feature_clip(wcol_sum);
}

#endif
