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

/* Whether a target moved: count worlds target it alone and their squared
 * deviations sum to den over S samples each. */
TC_MATH int tc_effects_observed(double den, int count, int S) {
  return count > 0 && den > TWINCACHE_EFFECT_EPS * S * count;
}

#endif
