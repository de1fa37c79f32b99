/* tc_effects_body.h — the rules of the edge model's interventional effects
 * that effects_cpu.c and effects.cu share, compiled by both: which world
 * counts for target t, its deviation from the base world, and when t is
 * observed. The loops around them differ (the CPU sums every j in one pass
 * over the samples, the device one j a thread) but each sum adds the same
 * doubles in the same order (k ascending, then s). Pure functions. */
#ifndef TC_EFFECTS_BODY_H
#define TC_EFFECTS_BODY_H

#include <stdint.h>

#include "tc_math.h" /* TC_MATH: static inline, __host__ __device__ under nvcc */
#include "twincache_kernels.h"

/* The one node a world targets, from its target row tk [N] (0/1); -1 when
 * it targets none or several (such a world measures no single effect). */
TC_MATH int tc_effects_only_target(const uint8_t *tk, int N) {
  int n_targets = 0, only = -1;
  for (int j = 0; j < N; j++)
    if (tk[j]) n_targets++, only = j;
  return n_targets == 1 ? only : -1;
}

/* Node j's deviation in sample s: world ik [S x N] minus base bg [S x N]. */
TC_MATH double tc_effects_dev(const float *ik, const float *bg, int s, int j, int N) {
  return (double)ik[(size_t)s * N + j] - (double)bg[(size_t)s * N + j];
}

/* Twin pairs of world k of a graph: the rows both it and the base world
 * hold, min(rows_g[0], rows_g[k+1]) capped at S; S when rows_g is NULL
 * (every world all S rows). rows_g: the graph's (K+1) row counts. */
TC_MATH int tc_effects_pairs(const uint32_t *rows_g, int k, int S) {
  if (!rows_g) return S;
  uint32_t a = rows_g[0], b = rows_g[k + 1], m = a < b ? a : b;
  return m < (uint32_t)S ? (int)m : S;
}

/* Whether a target moved: count worlds target it alone and their squared
 * deviations sum to den over `pairs` twin pairs in all (S each when every
 * world holds all S rows: the threshold is then computed as it always was,
 * EPS * S * count, so equal counts give the same bits). */
TC_MATH int tc_effects_observed(double den, int count, int S, long pairs) {
  double eps = pairs == (long)S * count ? TWINCACHE_EFFECT_EPS * S * count : TWINCACHE_EFFECT_EPS * (double)pairs;
  return count > 0 && den > eps;
}

#endif
