// pair_features.cu — the CUDA version of the edge model's pair features, beside its plain-C
// reference of the same name in pair_features_cpu.c; tests/train/test_kernels_cuda
// compares them on random inputs.
#include <cuda_runtime.h>
#include <math.h>

#include "tc_kernels_error.h"
#include "tc_launch.h"
#include "twincache_kernels.h"
#include "twincache_kernels_cuda.h"

// ---- pair features: one thread per pair --------------------------------------
__device__ float tc_clip_dev(float x) {
  if (x > TWINCACHE_FEATURE_CLIP) return TWINCACHE_FEATURE_CLIP;
  if (x < -TWINCACHE_FEATURE_CLIP) return -TWINCACHE_FEATURE_CLIP;
  if (x != x) return 0.0f;
  return x;
}

__global__ void pair_features_kernel(float *feat, float *pair_w, const float *T,
                                     const uint8_t *observed, const float *C, const float *W_hat,
                                     const float *Pc, const uint8_t *node_mask, int G, int N) {
  const int F = TWINCACHE_FEATURES;
  size_t nn = (size_t)N * N;
  size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= (size_t)G * nn) return;
  int g = (int)(p / nn), i = (int)(p % nn) / N, j = (int)(p % N);
  const uint8_t *nm = node_mask + (size_t)g * N, *ob = observed + (size_t)g * N;
  const float *Tg = T + g * nn, *Cg = C + g * nn, *Wg = W_hat + g * nn, *Pg = Pc + g * nn;
  float *f = feat + p * F;
  for (int q = 0; q < F; q++) f[q] = 0.0f;
  pair_w[p] = 0.0f;
  if (i == j || !nm[i] || !nm[j]) return;
  pair_w[p] = 1.0f;
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
  f[0] = tc_clip_dev(tij);
  f[1] = tc_clip_dev(tji);
  f[2] = tc_clip_dev(fabsf(tij));
  f[3] = tc_clip_dev(wij);
  f[4] = tc_clip_dev(wji);
  f[5] = tc_clip_dev(fabsf(wij));
  f[6] = Cg[i * N + j];
  f[7] = fabsf(Cg[i * N + j]);
  f[8] = Pg[i * N + j];
  f[9] = fabsf(Pg[i * N + j]);
  f[10] = (float)ob[i];
  f[11] = (float)ob[j];
  f[12] = tc_clip_dev(row_max);
  f[13] = tc_clip_dev(col_max);
  f[14] = tc_clip_dev(fabsf(wij) / (wcol_max + 1e-6f));
  f[15] = tc_clip_dev(wcol_sum);
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
