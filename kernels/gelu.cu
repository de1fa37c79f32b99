// gelu.cu — the CUDA version of the edge model's GELU, beside its plain-C
// reference of the same name in gelu_cpu.c; tests/train/test_kernels_cuda
// compares them on random inputs.
#include <cuda_runtime.h>
#include <math.h>

#include "tc_gemm.h"
#include "tc_kernels_error.h"
#include "tc_launch.h"
#include "twincache_kernels.h"
#include "twincache_kernels_cuda.h"

// ---- GELU ---------------------------------------------------------------------
#define TC_GELU_K 0.7978845608028654f

__global__ void gelu_forward_kernel(float *out, const float *in, size_t n) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = in[i];
  out[i] = 0.5f * x * (1.0f + tanhf(TC_GELU_K * (x + 0.044715f * x * x * x)));
}

__global__ void gelu_backward_kernel(float *din, const float *in, const float *dout, size_t n) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = in[i];
  float u = TC_GELU_K * (x + 0.044715f * x * x * x);
  float th = tanhf(u);
  float sech2 = 1.0f - th * th;
  float grad = 0.5f * (1.0f + th) + 0.5f * x * sech2 * TC_GELU_K * (1.0f + 3.0f * 0.044715f * x * x);
  din[i] = dout[i] * grad;
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
