// corr.cu — the CUDA version of the edge model's correlation, beside its plain-C
// reference of the same name in corr_cpu.c; tests/train/test_kernels_cuda
// compares them on random inputs.
#include <cuda_runtime.h>
#include <math.h>

#include "tc_kernels_error.h"
#include "tc_launch.h"
#include "twincache_kernels.h"
#include "twincache_kernels_cuda.h"

// ---- correlation: one thread per (g, i, j) ----------------------------------
__global__ void corr_kernel(float *C, const float *base, const uint8_t *node_mask, int G, int S,
                            int N) {
  size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  size_t nn = (size_t)N * N;
  if (idx >= (size_t)G * nn) return;
  int g = (int)(idx / nn), i = (int)(idx % nn) / N, j = (int)(idx % N);
  const float *bg = base + (size_t)g * S * N;
  const uint8_t *nm = node_mask + (size_t)g * N;
  C[idx] = 0.0f;
  if (!nm[i] || !nm[j]) return;
  double mi = 0.0, mj = 0.0;
  for (int s = 0; s < S; s++) mi += bg[(size_t)s * N + i], mj += bg[(size_t)s * N + j];
  mi /= S, mj /= S;
  double sij = 0.0, sii = 0.0, sjj = 0.0;
  for (int s = 0; s < S; s++) {
    double a = bg[(size_t)s * N + i] - mi, b = bg[(size_t)s * N + j] - mj;
    sij += a * b, sii += a * a, sjj += b * b;
  }
  if (sii < 1e-12 * S || sjj < 1e-12 * S) return;
  C[idx] = (i == j) ? 1.0f : (float)(sij / sqrt(sii * sjj));
}

extern "C" int twincache_corr_cuda(float *C, const float *base, const uint8_t *node_mask, int G,
                                   int S, int N, void *stream) {
  size_t n = (size_t)G * N * N;
  if (n == 0) return 0;
  corr_kernel<<<tc_blocks(n, 128), 128, 0, tc_stream(stream)>>>(C, base, node_mask, G, S, N);
  launchReturnIfError();
  return 0;
}
