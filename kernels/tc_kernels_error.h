/* tc_kernels_error.h — how kernels/ checks its CUDA calls: a failed call
 * makes the enclosing int launcher return TWINCACHE_KERNELS_EDEVICE, and
 * nothing else. kernels/ links nothing of ours, so it keeps no message:
 * the CUDA error stays in the runtime's own per-thread state (launch errors
 * are read with cudaPeekAtLastError, which leaves them there), and the
 * caller names it — train/'s device layer turns the status and
 * cudaGetLastError() into its one message (twincache_last_error). Programs'
 * exit-on-error checks live with the benchmarks (bench/tc_bench_cuda.h).
 * Internal to kernels/. The names say what the macros do (return the
 * status), apart from train/'s device layer's cudaCheck/kernelCheck (which
 * set the message) and the programs' cudaCheckOrExit/kernelCheckOrExit: one
 * name per meaning. */
#ifndef TC_KERNELS_ERROR_H
#define TC_KERNELS_ERROR_H

#include "twincache_kernels.h"

#ifdef __CUDACC__
#define cudaReturnIfError(call)                                  \
  do {                                                           \
    if ((call) != cudaSuccess) return TWINCACHE_KERNELS_EDEVICE; \
  } while (0)
/* the launch of the kernel just enqueued (the error is left for the caller) */
#define launchReturnIfError() cudaReturnIfError(cudaPeekAtLastError())
/* a launcher of kernels/ failed: pass its status on */
#define kernelReturnIfError(call) \
  do {                            \
    int k_ = (call);              \
    if (k_ != 0) return k_;       \
  } while (0)
#endif /* __CUDACC__ */

#endif /* TC_KERNELS_ERROR_H */
