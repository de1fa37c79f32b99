// linear.cu — the CUDA version of the edge model's linear layers, beside its plain-C
// reference of the same name in linear_cpu.c; tests/train/test_kernels_cuda
// compares them on random inputs.
#include <cuda_runtime.h>
#include <math.h>

#include "tc_gemm.h"
#include "tc_kernels_error.h"
#include "tc_launch.h"
#include "twincache_kernels.h"
#include "twincache_kernels_cuda.h"

// ---- linear layers: cuBLAS sgemm on row-major data ---------------------------
// A row-major (R,C) matrix is the column-major (C,R) matrix, its transpose, so
// out(P,O) = in(P,I) w(O,I)^T becomes out^T = w^T-view^T in^T-view in cuBLAS terms.
__global__ void add_bias_kernel(float *out, const float *b, int P, int O) {
  size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= (size_t)P * O) return;
  out[idx] += b[idx % O];
}

// db[o] = sum_p dout[p][o]: one block per o, fixed-shape tree (deterministic)
__global__ void bias_grad_kernel(float *db, const float *dout, int P, int O) {
  __shared__ float part[256];
  int o = blockIdx.x;
  float acc = 0.0f;
  for (int p = threadIdx.x; p < P; p += blockDim.x) acc += dout[(size_t)p * O + o];
  part[threadIdx.x] = acc;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if ((int)threadIdx.x < stride) part[threadIdx.x] += part[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) db[o] = part[0];
}

extern "C" int twincache_linear_forward_cuda(float *out, const float *in, const float *w,
                                             const float *b, int P, int I, int O, void *stream) {
  if (P <= 0) return 0;
  kernelReturnIfError(tc_linear_gemm_forward(out, in, w, P, I, O, stream));
  if (b) {
    size_t n = (size_t)P * O;
    add_bias_kernel<<<tc_blocks(n, 256), 256, 0, tc_stream(stream)>>>(out, b, P, O);
    launchReturnIfError();
  }
  return 0;
}

extern "C" int twincache_linear_backward_cuda(float *din, float *dw, float *db, const float *dout,
                                              const float *in, const float *w, int P, int I,
                                              int O, void *stream) {
  if (P <= 0) din = NULL; // no rows: dw is all zero, din has nothing to hold
  kernelReturnIfError(tc_linear_gemm_backward(din, dw, dout, in, w, P, I, O, stream));
  if (db) {
    if (P <= 0) {
      cudaReturnIfError(cudaMemsetAsync(db, 0, sizeof(float) * (size_t)O, tc_stream(stream)));
    } else {
      bias_grad_kernel<<<O, 256, 0, tc_stream(stream)>>>(db, dout, P, O);
      launchReturnIfError();
    }
  }
  return 0;
}
