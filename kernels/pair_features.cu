// pair_features.cu — the CUDA version of the edge model's pair features, beside its plain-C
// reference of the same name in pair_features_cpu.c; tests/train/test_kernels_cuda
// compares them on random inputs.
#include <cuda_runtime.h>
#include <math.h>

#include "tc_kernels_error.h"
#include "tc_launch.h"
#include "tc_pair_features_body.h"
#include "twincache_kernels.h"
#include "twincache_kernels_cuda.h"

// ---- pair features: one thread per pair; the body is tc_pair_features_body.h's
__global__ void pair_features_kernel(float *feat, float *pair_w, const float *T,
                                     const uint8_t *observed, const float *C, const float *W_hat,
                                     const float *Pc, const uint8_t *node_mask, int G, int N) {
  size_t nn = (size_t)N * N;
  size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= (size_t)G * nn) return;
  int g = (int)(p / nn), i = (int)(p % nn) / N, j = (int)(p % N);
  const uint8_t *nm = node_mask + (size_t)g * N, *ob = observed + (size_t)g * N;
  const float *Tg = T + g * nn, *Cg = C + g * nn, *Wg = W_hat + g * nn, *Pg = Pc + g * nn;
  tc_pair_features_one(feat + p * TWINCACHE_FEATURES, pair_w + p, Tg, ob, Cg, Wg, Pg, nm, i, j, N);
}

extern "C" int twincache_pair_features_cuda(float *feat, float *pair_w, const float *T,
                                            const uint8_t *observed, const float *C,
                                            const float *W_hat, const float *Pc,
                                            const uint8_t *node_mask, int G, int N,
                                            void *stream) {
  size_t n = (size_t)G * N * N;
  if (n == 0) return 0;
  pair_features_kernel<<<tc_blocks(n, 128), 128, 0, tc_stream(stream)>>>(
      feat, pair_w, T, observed, C, W_hat, Pc, node_mask, G, N);
  launchReturnIfError();
  return 0;
}
