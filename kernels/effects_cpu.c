/* effects_cpu.c — the reference interventional effects of the edge model (contract in
 * twincache_kernels.h; train/MODEL.md for the why). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tc_effects_body.h"
#include "twincache_kernels.h"

void twincache_effects_cpu(float *T, uint8_t *observed, const float *base, const float *inter,
                           const uint8_t *target, const uint8_t *node_mask,
                           const uint8_t *int_mask, const uint32_t *rows, int G, int K, int S, int N) {
  memset(T, 0, sizeof(float) * (size_t)G * N * N);
  memset(observed, 0, (size_t)G * N);
  /* num[j] accumulates sum d_t d_j for the current target, den sum d_t^2 */
  double *num = malloc(sizeof(double) * (size_t)(N > 0 ? N : 1));
  if (!num) return; /* N is tiny; the caller sees all-zero T */
  for (int g = 0; g < G; g++) {
    const float *bg = base + (size_t)g * S * N;
    const uint8_t *nm = node_mask + (size_t)g * N;
    for (int t = 0; t < N; t++) {
      if (!nm[t]) continue;
      double den = 0.0;
      int count = 0;
      long pairs = 0;
      const uint32_t *rg = rows ? rows + (size_t)g * (K + 1) : NULL;
      for (int j = 0; j < N; j++) num[j] = 0.0;
      for (int k = 0; k < K; k++) {
        if (!int_mask[(size_t)g * K + k]) continue;
        if (tc_effects_only_target(target + ((size_t)g * K + k) * N, N) != t) continue;
        count++;
        const float *ik = inter + ((size_t)g * K + k) * S * N;
        const int m = tc_effects_pairs(rg, k, S); /* rows both worlds hold */
        pairs += m;
        for (int s = 0; s < m; s++) {
          double dt = tc_effects_dev(ik, bg, s, t, N);
          den += dt * dt;
          for (int j = 0; j < N; j++) num[j] += dt * tc_effects_dev(ik, bg, s, j, N);
        }
      }
      if (!tc_effects_observed(den, count, S, pairs)) continue;
      observed[(size_t)g * N + t] = 1;
      float *row = T + ((size_t)g * N + t) * N;
      for (int j = 0; j < N; j++) row[j] = nm[j] ? (float)(num[j] / den) : 0.0f;
      row[t] = 1.0f;
    }
  }
  free(num);
}
