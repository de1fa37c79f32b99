/* tc_cuda_check.h — checks for the CUDA test and benchmark programs: a
 * failed CUDA call or kernel launcher prints file:line and exits 1 (these
 * are programs, not library code). */
#ifndef TC_CUDA_CHECK_H
#define TC_CUDA_CHECK_H

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define cudaCheck(call)                                                                     \
  do {                                                                                      \
    cudaError_t e_ = (call);                                                                \
    if (e_ != cudaSuccess) {                                                                \
      fprintf(stderr, "%s:%d: CUDA error %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      exit(1);                                                                              \
    }                                                                                       \
  } while (0)

/* the launchers of kernels/ return non-zero after printing their error */
#define KCHECK(call)                                                   \
  do {                                                                 \
    if ((call) != 0) {                                                 \
      fprintf(stderr, "%s:%d: launcher failed\n", __FILE__, __LINE__); \
      exit(1);                                                         \
    }                                                                  \
  } while (0)

#endif /* TC_CUDA_CHECK_H */
