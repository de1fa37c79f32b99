// gelu.cu — the CUDA version of the edge model's GELU, beside its plain-C
// reference of the same name in gelu_cpu.c; tests/train/test_kernels_cuda
// compares them on random inputs.
#include <cuda_runtime.h>
#include <math.h>

#include "tc_gelu_body.h"
#include "tc_gemm.h"
#include "tc_kernels_error.h"
#include "tc_launch.h"
#include "twincache_kernels.h"
#include "twincache_kernels_cuda.h"

// ---- GELU: the per-element body is tc_gelu_body.h's, tanh is tanhf -----------

__global__ void gelu_forward_kernel(float *out, const float *in, size_t n) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = in[i];
  out[i] = tc_gelu_value(x, tanhf(tc_gelu_arg(x)));
}

__global__ void gelu_backward_kernel(float *din, const float *in, const float *dout, size_t n) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = in[i];
  din[i] = dout[i] * tc_gelu_grad(x, tanhf(tc_gelu_arg(x)));
}

extern "C" int twincache_gelu_forward_cuda(float *out, const float *in, size_t n, void *stream) {
  if (n == 0) return 0;
  gelu_forward_kernel<<<tc_blocks(n, 256), 256, 0, tc_stream(stream)>>>(out, in, n);
  launchReturnIfError();
  return 0;
}

extern "C" int twincache_gelu_backward_cuda(float *din, const float *in, const float *dout,
                                            size_t n, void *stream) {
  if (n == 0) return 0;
  gelu_backward_kernel<<<tc_blocks(n, 256), 256, 0, tc_stream(stream)>>>(din, in, dout, n);
  launchReturnIfError();
  return 0;
}
