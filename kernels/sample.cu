// sample.cu — the fresh-world sampler on the device: dense base and twin
// worlds of an SCM batch (contract in twincache_kernels.h), the twin of
// sample_cpu.c: the same per-thread code (tc_sample_body.h), so the same bits
// when built with --fmad=false (kernels/CMakeLists.txt sets it for this file).
//
// Three kernels, one thread per element, in stream order:
//   rows    (g, s): row s's noise and raw base world (nodes in topological order)
//   columns (g, j): node j's standardisation statistics (double sums over rows,
//                   in row order: the order scm/ sums them)
//   twins   (g, s): row s of every twin world, then the base row standardised
#include <cuda_runtime.h>
#include <stdlib.h>

#include "tc_kernels_error.h"
#include "tc_sample_body.h"
#include "twincache_kernels.h"
#include "twincache_kernels_cuda.h"

#define TC_SAMPLE_THREADS 128

__global__ void tc_sample_rows(twincache_scm_batch b, float *noise, float *base) {
  uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (uint64_t)b.graphs * b.rows) return;
  tc_sb_base_row(&b, (uint32_t)(t / b.rows), (uint32_t)(t % b.rows), noise, base);
}

__global__ void tc_sample_columns(twincache_scm_batch b, const float *base, float *mean, float *sd) {
  uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (uint64_t)b.graphs * b.nodes) return;
  tc_sb_stats(&b, (uint32_t)(t / b.nodes), (uint32_t)(t % b.nodes), base, mean, sd);
}

__global__ void tc_sample_twins(twincache_scm_batch b, const float *noise, float *base, const float *mean,
                                const float *sd, float *inter) {
  uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (uint64_t)b.graphs * b.rows) return;
  tc_sb_twin_row(&b, (uint32_t)(t / b.rows), (uint32_t)(t % b.rows), noise, base, mean, sd, inter);
}

static unsigned blocks_for(uint64_t threads) {
  return (unsigned)((threads + TC_SAMPLE_THREADS - 1) / TC_SAMPLE_THREADS);
}

extern "C" int twincache_sample_cuda(const twincache_scm_batch *b, float *noise, float *mean, float *sd,
                                     float *base, float *inter, void *stream) {
  if (b->nodes > TWINCACHE_SAMPLE_MAX_NODES) return TWINCACHE_KERNELS_EINVAL;
  cudaStream_t s = (cudaStream_t)stream;
  uint64_t rows = (uint64_t)b->graphs * b->rows, cols = (uint64_t)b->graphs * b->nodes;
  if (rows == 0) return 0;
  { /* an iSCM graph (flags bit 1) is refused: one copy of the G flag bytes, synchronous */
    uint8_t *fl = (uint8_t *)malloc(b->graphs);
    if (!fl) return TWINCACHE_KERNELS_EINVAL;
    cudaError_t e = cudaMemcpyAsync(fl, b->flags, b->graphs, cudaMemcpyDeviceToHost, s);
    if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    int iscm = 0;
    for (uint32_t g = 0; e == cudaSuccess && g < b->graphs; g++) iscm |= (fl[g] & 2u) != 0;
    free(fl);
    cudaReturnIfError(e);
    if (iscm) return TWINCACHE_KERNELS_EINVAL;
  }
  tc_sample_rows<<<blocks_for(rows), TC_SAMPLE_THREADS, 0, s>>>(*b, noise, base);
  launchReturnIfError();
  tc_sample_columns<<<blocks_for(cols), TC_SAMPLE_THREADS, 0, s>>>(*b, base, mean, sd);
  launchReturnIfError();
  tc_sample_twins<<<blocks_for(rows), TC_SAMPLE_THREADS, 0, s>>>(*b, noise, base, mean, sd, inter);
  launchReturnIfError();
  return 0;
}
