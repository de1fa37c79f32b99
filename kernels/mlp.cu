// mlp.cu — the CUDA versions of the edge model's MLP kernels (linear layers,
// GELU, the BCE loss, AdamW), each beside its plain-C reference of the same
// name in mlp_cpu.c; tests/train/test_kernels_cuda compares them on random
// inputs.
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

// ---- BCE: block partials, one block sums them, then an elementwise gradient --
// Fixed reduction shapes (the partial count depends on P only), so the loss
// is the same on every run. work: [sum w, sum loss] then 2 per partial block.
#define TC_BCE_THREADS 256
#define TC_BCE_MAX_BLOCKS 256
static unsigned tc_bce_blocks(size_t P) {
  size_t b = (P + 4 * TC_BCE_THREADS - 1) / (4 * TC_BCE_THREADS); // ~4 pairs a thread
  return (unsigned)(b < 1 ? 1 : (b > TC_BCE_MAX_BLOCKS ? TC_BCE_MAX_BLOCKS : b));
}

__device__ double tc_softplus_dev(double x) { return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)); }

// Tree sum of sw and sl over the block (blockDim.x == TC_BCE_THREADS).
__device__ void tc_block_sum2(double *sw, double *sl) {
  for (int stride = TC_BCE_THREADS / 2; stride > 0; stride /= 2) {
    __syncthreads();
    if ((int)threadIdx.x < stride) {
      sw[threadIdx.x] += sw[threadIdx.x + stride];
      sl[threadIdx.x] += sl[threadIdx.x + stride];
    }
  }
  __syncthreads();
}

__global__ void bce_partial_kernel(double *work, const float *logit, const uint8_t *adj,
                                   const float *pair_w, size_t P, float pos_weight) {
  __shared__ double sw[TC_BCE_THREADS], sl[TC_BCE_THREADS];
  double aw = 0.0, al = 0.0;
  for (size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x; p < P;
       p += (size_t)gridDim.x * blockDim.x) {
    double w = pair_w[p];
    if (w == 0.0) continue;
    double z = logit[p];
    aw += w;
    al += adj[p] ? w * pos_weight * tc_softplus_dev(-z) : w * tc_softplus_dev(z);
  }
  sw[threadIdx.x] = aw, sl[threadIdx.x] = al;
  tc_block_sum2(sw, sl);
  if (threadIdx.x == 0) work[2 + 2 * blockIdx.x] = sw[0], work[3 + 2 * blockIdx.x] = sl[0];
}

__global__ void bce_finish_kernel(double *work, float *loss, unsigned blocks) {
  __shared__ double sw[TC_BCE_THREADS], sl[TC_BCE_THREADS];
  unsigned t = threadIdx.x;
  sw[t] = t < blocks ? work[2 + 2 * t] : 0.0;
  sl[t] = t < blocks ? work[3 + 2 * t] : 0.0;
  tc_block_sum2(sw, sl);
  if (t == 0) {
    work[0] = sw[0], work[1] = sl[0];
    *loss = sw[0] > 0.0 ? (float)(sl[0] / sw[0]) : 0.0f;
  }
}

__global__ void bce_grad_kernel(float *dlogit, const double *work, const float *logit,
                                const uint8_t *adj, const float *pair_w, size_t P,
                                float pos_weight) {
  size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= P) return;
  double wsum = work[0], w = pair_w[p];
  if (wsum <= 0.0 || w == 0.0) {
    dlogit[p] = 0.0f;
    return;
  }
  double sig = 1.0 / (1.0 + exp(-(double)logit[p]));
  double scale = w / wsum;
  dlogit[p] = (float)(adj[p] ? scale * pos_weight * (sig - 1.0) : scale * sig);
}

extern "C" size_t twincache_bce_cuda_work_bytes(size_t P) {
  return sizeof(double) * (2 + 2 * (size_t)tc_bce_blocks(P));
}

extern "C" int twincache_bce_cuda(float *dlogit, float *loss, const float *logit,
                                  const uint8_t *adj, const float *pair_w, size_t P,
                                  float pos_weight, void *work, void *stream) {
  unsigned blocks = tc_bce_blocks(P);
  bce_partial_kernel<<<blocks, TC_BCE_THREADS, 0, tc_stream(stream)>>>(
      (double *)work, logit, adj, pair_w, P, pos_weight);
  launchReturnIfError();
  bce_finish_kernel<<<1, TC_BCE_THREADS, 0, tc_stream(stream)>>>((double *)work, loss, blocks);
  launchReturnIfError();
  if (dlogit && P > 0) {
    bce_grad_kernel<<<tc_blocks(P, 256), 256, 0, tc_stream(stream)>>>(
        dlogit, (const double *)work, logit, adj, pair_w, P, pos_weight);
    launchReturnIfError();
  }
  return 0;
}

// ---- AdamW ---------------------------------------------------------------------
__global__ void adamw_kernel(float *param, const float *grad, float *m, float *v, size_t n,
                             float lr, float beta1, float beta2, float eps, float wd, float c1,
                             float c2) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float g = grad[i];
  float mi = beta1 * m[i] + (1.0f - beta1) * g;
  float vi = beta2 * v[i] + (1.0f - beta2) * g * g;
  m[i] = mi, v[i] = vi;
  float mhat = mi / c1, vhat = vi / c2;
  param[i] -= lr * (mhat / (sqrtf(vhat) + eps) + wd * param[i]);
}

extern "C" int twincache_adamw_cuda(float *param, const float *grad, float *m, float *v,
                                    size_t n, float lr, float beta1, float beta2, float eps,
                                    float weight_decay, int t, void *stream) {
  if (n == 0) return 0;
  float c1 = 1.0f - powf(beta1, (float)t), c2 = 1.0f - powf(beta2, (float)t);
  adamw_kernel<<<tc_blocks(n, 256), 256, 0, tc_stream(stream)>>>(param, grad, m, v, n, lr, beta1,
                                                                  beta2, eps, weight_decay, c1, c2);
  launchReturnIfError();
  return 0;
}
