// corr.cu — the CUDA version of the edge model's correlation, beside its plain-C
// reference of the same name in corr_cpu.c; tests/train/test_kernels_cuda
// compares them on random inputs.
#include <cuda_runtime.h>
#include <math.h>

#include "tc_corr_body.h"
#include "tc_kernels_error.h"
#include "tc_launch.h"
#include "twincache_kernels.h"
#include "twincache_kernels_cuda.h"

// ---- correlation: one thread per (g, i, j); the body is tc_corr_body.h's ----
__global__ void corr_kernel(float *C, const float *base, const uint8_t *node_mask, const uint32_t *rows,
                            int rows_ld, int G, int S, int N) {
  size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  size_t nn = (size_t)N * N;
  if (idx >= (size_t)G * nn) return;
  int g = (int)(idx / nn), i = (int)(idx % nn) / N, j = (int)(idx % N);
  C[idx] = tc_corr_one(base + (size_t)g * S * N, node_mask + (size_t)g * N, i, j, tc_corr_rows(rows, rows_ld, g, S), N);
}

extern "C" int twincache_corr_cuda(float *C, const float *base, const uint8_t *node_mask,
                                   const uint32_t *rows, int rows_ld, int G, int S, int N, void *stream) {
  size_t n = (size_t)G * N * N;
  if (n == 0) return 0;
  corr_kernel<<<tc_blocks(n, 128), 128, 0, tc_stream(stream)>>>(C, base, node_mask, rows, rows_ld, G, S, N);
  launchReturnIfError();
  return 0;
}
