// bce.cu — the CUDA version of the edge model's BCE loss, beside its plain-C
// reference of the same name in bce_cpu.c; tests/train/test_kernels_cuda
// compares them on random inputs.
#include <cuda_runtime.h>
#include <math.h>

#include "tc_gemm.h"
#include "tc_kernels_error.h"
#include "tc_launch.h"
#include "twincache_kernels.h"
#include "twincache_kernels_cuda.h"

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
