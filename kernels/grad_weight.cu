// grad_weight.cu — the CUDA twin of grad_weight_cpu.c: the same arithmetic,
// its scalars read from device memory (they are the BCE kernel's sums, and
// after the all-reduce the job's), so the step never waits on the host.
#include <cuda_runtime.h>

#include "tc_kernels_error.h"
#include "tc_launch.h"
#include "twincache_kernels.h"
#include "twincache_kernels_cuda.h"

__global__ void grad_weight_kernel(float *grad, size_t n, const double *wsum) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) grad[i] *= (float)*wsum;
}

__global__ void grad_unweight_kernel(float *grad, size_t n, const double *tot, float *loss) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  double inv = tot[0] > 0 ? 1.0 / tot[0] : 0.0;
  if (i < n) grad[i] = (float)((double)grad[i] * inv);
  if (i == 0) *loss = (float)(tot[1] * inv);
}

extern "C" int twincache_grad_weight_cuda(float *grad, size_t n, const double *wsum, void *stream) {
  if (n == 0) return 0;
  grad_weight_kernel<<<tc_blocks(n, 256), 256, 0, tc_stream(stream)>>>(grad, n, wsum);
  launchReturnIfError();
  return 0;
}

extern "C" int twincache_grad_unweight_cuda(float *grad, size_t n, const double *tot, float *loss,
                                            void *stream) {
  unsigned blocks = n ? tc_blocks(n, 256) : 1; // one thread at least: the loss
  grad_unweight_kernel<<<blocks, 256, 0, tc_stream(stream)>>>(grad, n, tot, loss);
  launchReturnIfError();
  return 0;
}
