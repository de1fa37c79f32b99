/* bce_cpu.c — the reference BCE loss of the edge model (contract in
 * twincache_kernels.h; train/MODEL.md for the why). */
#include <math.h>
#include <string.h>

#include "twincache_kernels.h"

/* log(1 + e^x) without overflow */
static double tc_softplus(double x) { return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)); }

float twincache_bce_cpu(float *dlogit, const float *logit, const uint8_t *adj,
                        const float *pair_w, size_t P, float pos_weight) {
  double wsum = 0.0, loss = 0.0;
  for (size_t p = 0; p < P; p++) wsum += pair_w[p];
  if (wsum <= 0.0) {
    if (dlogit) memset(dlogit, 0, sizeof(float) * P);
    return 0.0f;
  }
  double inv = 1.0 / wsum;
  for (size_t p = 0; p < P; p++) {
    double w = pair_w[p], z = logit[p];
    if (w == 0.0) {
      if (dlogit) dlogit[p] = 0.0f;
      continue;
    }
    double sig = 1.0 / (1.0 + exp(-z));
    if (adj[p]) {
      loss += w * pos_weight * tc_softplus(-z);
      if (dlogit) dlogit[p] = (float)(w * inv * pos_weight * (sig - 1.0));
    } else {
      loss += w * tc_softplus(z);
      if (dlogit) dlogit[p] = (float)(w * inv * sig);
    }
  }
  return (float)(loss * inv);
}
