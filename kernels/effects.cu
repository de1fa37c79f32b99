// effects.cu — the CUDA version of the edge model's interventional effects, beside its plain-C
// reference of the same name in effects_cpu.c; tests/train/test_kernels_cuda
// compares them on random inputs.
#include <cuda_runtime.h>
#include <math.h>

#include "tc_effects_body.h"
#include "tc_kernels_error.h"
#include "tc_launch.h"
#include "twincache_kernels.h"
#include "twincache_kernels_cuda.h"

// ---- effects: one block per (g, t), threads over j --------------------------
__global__ void effects_kernel(float *T, uint8_t *observed, const float *base,
                               const float *inter, const uint8_t *target,
                               const uint8_t *node_mask, const uint8_t *int_mask,
                               const uint32_t *rows, int K, int S, int N) {
  int g = blockIdx.x / N, t = blockIdx.x % N;
  const float *bg = base + (size_t)g * S * N;
  const uint8_t *nm = node_mask + (size_t)g * N;
  float *row = T + ((size_t)g * N + t) * N;
  // every thread computes den and count itself (cheap, avoids a reduction)
  double den = 0.0;
  int count = 0;
  long pairs = 0;
  const uint32_t *rg = rows ? rows + (size_t)g * (K + 1) : NULL;
  for (int k = 0; k < K; k++) {
    if (!int_mask[(size_t)g * K + k]) continue;
    if (tc_effects_only_target(target + ((size_t)g * K + k) * N, N) != t) continue;
    count++;
    const float *ik = inter + ((size_t)g * K + k) * S * N;
    const int m = tc_effects_pairs(rg, k, S); // rows both worlds hold
    pairs += m;
    for (int s = 0; s < m; s++) {
      double dt = tc_effects_dev(ik, bg, s, t, N);
      den += dt * dt;
    }
  }
  bool obs = nm[t] && tc_effects_observed(den, count, S, pairs);
  if (threadIdx.x == 0) observed[(size_t)g * N + t] = obs ? 1 : 0;
  for (int j = threadIdx.x; j < N; j += blockDim.x) {
    if (!obs || !nm[j]) {
      row[j] = 0.0f;
      continue;
    }
    if (j == t) {
      row[j] = 1.0f;
      continue;
    }
    double num = 0.0;
    for (int k = 0; k < K; k++) {
      if (!int_mask[(size_t)g * K + k]) continue;
      if (tc_effects_only_target(target + ((size_t)g * K + k) * N, N) != t) continue;
      const float *ik = inter + ((size_t)g * K + k) * S * N;
      const int m = tc_effects_pairs(rg, k, S);
      for (int s = 0; s < m; s++) num += tc_effects_dev(ik, bg, s, t, N) * tc_effects_dev(ik, bg, s, j, N);
    }
    row[j] = (float)(num / den);
  }
}

extern "C" int twincache_effects_cuda(float *T, uint8_t *observed, const float *base,
                                      const float *inter, const uint8_t *target,
                                      const uint8_t *node_mask, const uint8_t *int_mask,
                                      const uint32_t *rows, int G, int K, int S, int N, void *stream) {
  if (G <= 0 || N <= 0) return 0;
  int threads = N < 32 ? 32 : (N < 256 ? ((N + 31) / 32) * 32 : 256);
  effects_kernel<<<G * N, threads, 0, tc_stream(stream)>>>(T, observed, base, inter, target,
                                                           node_mask, int_mask, rows, K, S, N);
  launchReturnIfError();
  return 0;
}
