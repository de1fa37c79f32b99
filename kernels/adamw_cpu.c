/* adamw_cpu.c — the reference AdamW step of the edge model (contract in
 * twincache_kernels.h; train/MODEL.md for the why). */
#include <math.h>
#include <string.h>

#include "twincache_kernels.h"

void twincache_adamw_cpu(float *param, const float *grad, float *m, float *v, size_t n,
                         float lr, float beta1, float beta2, float eps, float weight_decay,
                         int t) {
  float c1 = 1.0f - powf(beta1, (float)t), c2 = 1.0f - powf(beta2, (float)t);
  for (size_t i = 0; i < n; i++) {
    float g = grad[i];
    m[i] = beta1 * m[i] + (1.0f - beta1) * g;
    v[i] = beta2 * v[i] + (1.0f - beta2) * g * g;
    float mhat = m[i] / c1, vhat = v[i] / c2;
    param[i] -= lr * (mhat / (sqrtf(vhat) + eps) + weight_decay * param[i]);
  }
}
