// adamw.cu — the CUDA version of the edge model's AdamW step, beside its plain-C
// reference of the same name in adamw_cpu.c; tests/train/test_kernels_cuda
// compares them on random inputs.
#include <cuda_runtime.h>
#include <math.h>

#include "tc_gemm.h"
#include "tc_kernels_error.h"
#include "tc_launch.h"
#include "twincache_kernels.h"
#include "twincache_kernels_cuda.h"

// ---- AdamW ---------------------------------------------------------------------
__global__ void adamw_kernel(float *param, const float *grad, float *m, float *v, size_t n,
                             float lr, float beta1, float beta2, float eps, float wd, float c1,
                             float c2) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float g = grad[i];
  float mi = beta1 * m[i] + (1.0f - beta1) * g;
  float vi = beta2 * v[i] + (1.0f - beta2) * g * g;
  m[i] = mi, v[i] = vi;
  float mhat = mi / c1, vhat = vi / c2;
  param[i] -= lr * (mhat / (sqrtf(vhat) + eps) + wd * param[i]);
}

extern "C" int twincache_adamw_cuda(float *param, const float *grad, float *m, float *v,
                                    size_t n, float lr, float beta1, float beta2, float eps,
                                    float weight_decay, int t, void *stream) {
  if (n == 0) return 0;
  float c1 = 1.0f - powf(beta1, (float)t), c2 = 1.0f - powf(beta2, (float)t);
  adamw_kernel<<<tc_blocks(n, 256), 256, 0, tc_stream(stream)>>>(param, grad, m, v, n, lr, beta1,
                                                                  beta2, eps, weight_decay, c1, c2);
  launchReturnIfError();
  return 0;
}
