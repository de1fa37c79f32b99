/* tc_kernels_error.h — the one check of CUDA calls (kernels/,
 * train/'s device layer, the CUDA tests).
 *
 * In library code, cudaCheck / kernelCheck make the enclosing
 * int function return TWINCACHE_KERNELS_EDEVICE after recording
 * "file:line: CUDA error NAME: text" for twincache_kernels_last_error();
 * nothing is printed. Programs (tests, benchmarks) use cudaCheckOrExit /
 * kernelCheckOrExit, which print that text and exit 1. */
#ifndef TC_KERNELS_ERROR_H
#define TC_KERNELS_ERROR_H

#include "twincache_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif
/* Records "file:line: " + the formatted text; returns TWINCACHE_KERNELS_EDEVICE. */
int tc_kernels_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#ifdef __cplusplus
}
#endif

#ifdef __CUDACC__
#include <stdio.h>
#include <stdlib.h>

#define cudaCheck(call)                                                                    \
  do {                                                                                     \
    cudaError_t e_ = (call);                                                               \
    if (e_ != cudaSuccess)                                                                 \
      return tc_kernels_fail(__FILE__, __LINE__, "CUDA error %s: %s", cudaGetErrorName(e_), \
                             cudaGetErrorString(e_));                                      \
  } while (0)
/* a launcher of kernels/ failed: its text is recorded already */
#define kernelCheck(call)        \
  do {                           \
    int k_ = (call);             \
    if (k_ != 0) return k_;      \
  } while (0)

#define cudaCheckOrExit(call)                                                             \
  do {                                                                                    \
    cudaError_t e_ = (call);                                                              \
    if (e_ != cudaSuccess) {                                                              \
      tc_kernels_fail(__FILE__, __LINE__, "CUDA error %s: %s", cudaGetErrorName(e_),      \
                      cudaGetErrorString(e_));                                            \
      fprintf(stderr, "%s\n", twincache_kernels_last_error());                            \
      exit(1);                                                                            \
    }                                                                                     \
  } while (0)
#define kernelCheckOrExit(call)                                                             \
  do {                                                                                      \
    if ((call) != 0) {                                                                      \
      fprintf(stderr, "%s:%d: launcher failed: %s\n", __FILE__, __LINE__,                   \
              twincache_kernels_last_error());                                              \
      exit(1);                                                                              \
    }                                                                                       \
  } while (0)
#endif /* __CUDACC__ */

#endif /* TC_KERNELS_ERROR_H */
