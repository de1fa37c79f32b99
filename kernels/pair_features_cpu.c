/* pair_features_cpu.c — the reference pair features of the edge model (contract in
 * twincache_kernels.h; train/MODEL.md for the why). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "twincache_kernels.h"

static float tc_clip(float x) {
  if (x > TWINCACHE_FEATURE_CLIP) return TWINCACHE_FEATURE_CLIP;
  if (x < -TWINCACHE_FEATURE_CLIP) return -TWINCACHE_FEATURE_CLIP;
  if (x != x) return 0.0f; /* NaN from a degenerate graph: no information */
  return x;
}

void twincache_pair_features_cpu(float *feat, float *pair_w, const float *T,
                                 const uint8_t *observed, const float *C, const float *W_hat,
                                 const float *Pc, const uint8_t *node_mask, int G, int N) {
  const int F = TWINCACHE_FEATURES;
  size_t nn = (size_t)N * N;
  for (int g = 0; g < G; g++) {
    const uint8_t *nm = node_mask + (size_t)g * N, *ob = observed + (size_t)g * N;
    const float *Tg = T + g * nn, *Cg = C + g * nn, *Wg = W_hat + g * nn, *Pg = Pc + g * nn;
    for (int i = 0; i < N; i++) {
      for (int j = 0; j < N; j++) {
        size_t p = g * nn + (size_t)i * N + j;
        float *f = feat + p * F;
        for (int q = 0; q < F; q++) f[q] = 0.0f;
        pair_w[p] = 0.0f;
        if (i == j || !nm[i] || !nm[j]) continue;
        pair_w[p] = 1.0f;
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
        f[0] = tc_clip(tij);
        f[1] = tc_clip(tji);
        f[2] = tc_clip(fabsf(tij));
        f[3] = tc_clip(wij);
        f[4] = tc_clip(wji);
        f[5] = tc_clip(fabsf(wij));
        f[6] = Cg[i * N + j];
        f[7] = fabsf(Cg[i * N + j]);
        f[8] = Pg[i * N + j];
        f[9] = fabsf(Pg[i * N + j]);
        f[10] = (float)ob[i];
        f[11] = (float)ob[j];
        f[12] = tc_clip(row_max);
        f[13] = tc_clip(col_max);
        f[14] = tc_clip(fabsf(wij) / (wcol_max + 1e-6f));
        f[15] = tc_clip(wcol_sum);
      }
    }
  }
}
