/* tc_launch.h — the launch arithmetic the CUDA files of kernels/ share: the
 * stream handle behind the public void * and the block count of a
 * one-thread-per-element grid. Internal to kernels/ (CUDA only). */
#ifndef TC_LAUNCH_H
#define TC_LAUNCH_H

#include <cuda_runtime.h>
#include <stddef.h>

static inline cudaStream_t tc_stream(void *s) { return (cudaStream_t)s; }
static inline unsigned tc_blocks(size_t n, unsigned threads) {
  return (unsigned)((n + threads - 1) / threads);
}

#endif /* TC_LAUNCH_H */
