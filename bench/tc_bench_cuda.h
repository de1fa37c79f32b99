/* tc_bench_cuda.h — the exit-on-error checks of the CUDA programs (the
 * kernel benchmark; the CUDA tests borrow them): print one line naming
 * file:line and the CUDA error, and exit 1. Libraries never use these:
 * kernels/ returns statuses (twincache_kernels.h). */
#ifndef TC_BENCH_CUDA_H
#define TC_BENCH_CUDA_H

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "twincache_kernels.h"

#define cudaCheckOrExit(call)                                                              \
  do {                                                                                     \
    cudaError_t e_ = (call);                                                               \
    if (e_ != cudaSuccess) {                                                               \
      fprintf(stderr, "%s:%d: CUDA error %s: %s\n", __FILE__, __LINE__, cudaGetErrorName(e_), \
              cudaGetErrorString(e_));                                                     \
      exit(1);                                                                             \
    }                                                                                      \
  } while (0)
/* a launcher of kernels/ failed: its CUDA error is the runtime's last one */
#define kernelCheckOrExit(call)                                                             \
  do {                                                                                      \
    int k_ = (call);                                                                        \
    if (k_ != 0) {                                                                          \
      cudaError_t e_ = cudaGetLastError();                                                  \
      fprintf(stderr, "%s:%d: launcher failed (%s): %s\n", __FILE__, __LINE__,              \
              k_ == TWINCACHE_KERNELS_EINVAL ? "sizes out of range" : cudaGetErrorName(e_), \
              k_ == TWINCACHE_KERNELS_EINVAL ? "no kernel launched" : cudaGetErrorString(e_)); \
      exit(1);                                                                              \
    }                                                                                       \
  } while (0)

#endif /* TC_BENCH_CUDA_H */
