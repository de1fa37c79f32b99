// kernels.cu — CUDA versions of the edge model's kernels. Each mirrors the
// plain-C reference of the same name in features_cpu.c / mlp_cpu.c (same
// loops, same clip and guard constants); tests/train/test_kernels_cuda
// compares them on random inputs.
#include <cuda_runtime.h>
#include <math.h>

#include "tc_gemm.h"
#include "tc_kernels_error.h"
#include "twincache_kernels.h"
#include "twincache_kernels_cuda.h"

static inline cudaStream_t tc_stream(void *s) { return (cudaStream_t)s; }
static inline unsigned tc_blocks(size_t n, unsigned threads) {
  return (unsigned)((n + threads - 1) / threads);
}

// ---- effects: one block per (g, t), threads over j --------------------------
__global__ void effects_kernel(float *T, uint8_t *observed, const float *base,
                               const float *inter, const uint8_t *target,
                               const uint8_t *node_mask, const uint8_t *int_mask, int K, int S,
                               int N) {
  int g = blockIdx.x / N, t = blockIdx.x % N;
  const float *bg = base + (size_t)g * S * N;
  const uint8_t *nm = node_mask + (size_t)g * N;
  float *row = T + ((size_t)g * N + t) * N;
  // every thread computes den and count itself (cheap, avoids a reduction)
  double den = 0.0;
  int count = 0;
  for (int k = 0; k < K; k++) {
    if (!int_mask[(size_t)g * K + k]) continue;
    const uint8_t *tk = target + ((size_t)g * K + k) * N;
    int n_targets = 0, only = -1;
    for (int j = 0; j < N; j++)
      if (tk[j]) n_targets++, only = j;
    if (n_targets != 1 || only != t) continue;
    count++;
    const float *ik = inter + ((size_t)g * K + k) * S * N;
    for (int s = 0; s < S; s++) {
      double dt = (double)ik[(size_t)s * N + t] - (double)bg[(size_t)s * N + t];
      den += dt * dt;
    }
  }
  bool obs = nm[t] && count > 0 && den > TWINCACHE_EFFECT_EPS * S * count;
  if (threadIdx.x == 0) observed[(size_t)g * N + t] = obs ? 1 : 0;
  for (int j = threadIdx.x; j < N; j += blockDim.x) {
    if (!obs || !nm[j]) {
      row[j] = 0.0f;
      continue;
    }
    if (j == t) {
      row[j] = 1.0f;
      continue;
    }
    double num = 0.0;
    for (int k = 0; k < K; k++) {
      if (!int_mask[(size_t)g * K + k]) continue;
      const uint8_t *tk = target + ((size_t)g * K + k) * N;
      int n_targets = 0, only = -1;
      for (int q = 0; q < N; q++)
        if (tk[q]) n_targets++, only = q;
      if (n_targets != 1 || only != t) continue;
      const float *ik = inter + ((size_t)g * K + k) * S * N;
      for (int s = 0; s < S; s++) {
        double dt = (double)ik[(size_t)s * N + t] - (double)bg[(size_t)s * N + t];
        num += dt * ((double)ik[(size_t)s * N + j] - (double)bg[(size_t)s * N + j]);
      }
    }
    row[j] = (float)(num / den);
  }
}

extern "C" int twincache_effects_cuda(float *T, uint8_t *observed, const float *base,
                                      const float *inter, const uint8_t *target,
                                      const uint8_t *node_mask, const uint8_t *int_mask, int G,
                                      int K, int S, int N, void *stream) {
  if (G <= 0 || N <= 0) return 0;
  int threads = N < 32 ? 32 : (N < 256 ? ((N + 31) / 32) * 32 : 256);
  effects_kernel<<<G * N, threads, 0, tc_stream(stream)>>>(T, observed, base, inter, target,
                                                           node_mask, int_mask, K, S, N);
  launchReturnIfError();
  return 0;
}

// ---- correlation: one thread per (g, i, j) ----------------------------------
__global__ void corr_kernel(float *C, const float *base, const uint8_t *node_mask, int G, int S,
                            int N) {
  size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  size_t nn = (size_t)N * N;
  if (idx >= (size_t)G * nn) return;
  int g = (int)(idx / nn), i = (int)(idx % nn) / N, j = (int)(idx % N);
  const float *bg = base + (size_t)g * S * N;
  const uint8_t *nm = node_mask + (size_t)g * N;
  C[idx] = 0.0f;
  if (!nm[i] || !nm[j]) return;
  double mi = 0.0, mj = 0.0;
  for (int s = 0; s < S; s++) mi += bg[(size_t)s * N + i], mj += bg[(size_t)s * N + j];
  mi /= S, mj /= S;
  double sij = 0.0, sii = 0.0, sjj = 0.0;
  for (int s = 0; s < S; s++) {
    double a = bg[(size_t)s * N + i] - mi, b = bg[(size_t)s * N + j] - mj;
    sij += a * b, sii += a * a, sjj += b * b;
  }
  if (sii < 1e-12 * S || sjj < 1e-12 * S) return;
  C[idx] = (i == j) ? 1.0f : (float)(sij / sqrt(sii * sjj));
}

extern "C" int twincache_corr_cuda(float *C, const float *base, const uint8_t *node_mask, int G,
                                   int S, int N, void *stream) {
  size_t n = (size_t)G * N * N;
  if (n == 0) return 0;
  corr_kernel<<<tc_blocks(n, 128), 128, 0, tc_stream(stream)>>>(C, base, node_mask, G, S, N);
  launchReturnIfError();
  return 0;
}

// ---- inverse features: one block per graph ----------------------------------
// Gauss-Jordan with partial pivoting, parallel over the block: the pivot is
// chosen by thread 0 with the reference's rule (first strictly larger), each
// element gets the reference's updates in the reference's order, and the
// column of factors is read before the elimination writes it. a and inv are
// (n,n) row-major doubles, f (n) scratch; all in shared or global memory.
// Returns -1 (on every thread) when a pivot is below TWINCACHE_PIVOT_EPS.
__device__ int tc_invert_block(double *a, double *inv, double *f, int n) {
  __shared__ int pivot;
  const int tid = threadIdx.x, nt = blockDim.x, nn = n * n;
  for (int q = tid; q < nn; q += nt) inv[q] = (q / n == q % n) ? 1.0 : 0.0;
  __syncthreads();
  for (int c = 0; c < n; c++) {
    if (tid == 0) {
      int p = c;
      for (int r = c + 1; r < n; r++)
        if (fabs(a[r * n + c]) > fabs(a[p * n + c])) p = r;
      pivot = fabs(a[p * n + c]) > TWINCACHE_PIVOT_EPS ? p : -1;
    }
    __syncthreads();
    const int p = pivot;
    if (p < 0) return -1; // the same value on every thread: the block leaves together
    if (p != c)
      for (int j = tid; j < n; j += nt) {
        double t = a[c * n + j];
        a[c * n + j] = a[p * n + j], a[p * n + j] = t;
        t = inv[c * n + j];
        inv[c * n + j] = inv[p * n + j], inv[p * n + j] = t;
      }
    __syncthreads();
    const double d = 1.0 / a[c * n + c];
    __syncthreads(); // every thread has d before row c changes
    for (int j = tid; j < n; j += nt) a[c * n + j] *= d, inv[c * n + j] *= d;
    for (int r = tid; r < n; r += nt) f[r] = a[r * n + c]; // row c: its own entry, 1
    __syncthreads();
    for (int q = tid; q < nn; q += nt) {
      int r = q / n, j = q % n;
      if (r == c || f[r] == 0.0) continue;
      a[q] -= f[r] * a[c * n + j], inv[q] -= f[r] * inv[c * n + j];
    }
    __syncthreads();
  }
  return 0;
}

// smem != 0: a, inv and f live in dynamic shared memory, else in work.
__global__ void inverse_kernel(float *W_hat, float *Pc, const float *T, const uint8_t *observed,
                               const float *C, const uint8_t *node_mask, int N, double *work,
                               int smem) {
  extern __shared__ double shared[];
  const int g = blockIdx.x, tid = threadIdx.x, nt = blockDim.x;
  const size_t nn = (size_t)N * N;
  double *a = smem ? shared : work + (size_t)g * (2 * nn + N);
  double *inv = a + nn, *f = inv + nn;
  const uint8_t *nm = node_mask + (size_t)g * N, *ob = observed + (size_t)g * N;
  const float *Tg = T + g * nn, *Cg = C + g * nn;
  float *Wg = W_hat + g * nn, *Pg = Pc + g * nn;
  for (int q = tid; q < (int)nn; q += nt) {
    int i = q / N, j = q % N;
    Wg[q] = 0.0f, Pg[q] = 0.0f;
    double v = (i == j) ? 1.0 : 0.0;
    if (i != j && nm[i] && nm[j] && ob[i]) v = Tg[q];
    a[q] = v;
  }
  __syncthreads();
  if (tc_invert_block(a, inv, f, N) == 0)
    for (int q = tid; q < (int)nn; q += nt) {
      int i = q / N, j = q % N;
      if (i != j && nm[i] && nm[j]) Wg[q] = (float)(-inv[q]);
    }
  __syncthreads();
  for (int q = tid; q < (int)nn; q += nt) {
    int i = q / N, j = q % N;
    double v = (i == j) ? 1.0 : 0.0;
    if (nm[i] && nm[j]) v = Cg[q] + (i == j ? TWINCACHE_CORR_RIDGE : 0.0);
    a[q] = v;
  }
  __syncthreads();
  if (tc_invert_block(a, inv, f, N) == 0)
    for (int q = tid; q < (int)nn; q += nt) {
      int i = q / N, j = q % N;
      if (i == j || !nm[i] || !nm[j]) continue;
      double d = inv[i * N + i] * inv[j * N + j];
      if (d > 0.0) Pg[q] = (float)(-inv[q] / sqrt(d));
    }
}

// (2 N^2 + N) doubles per graph; in shared memory when they fit the default 48 KB
static size_t tc_inverse_graph_bytes(int N) {
  return sizeof(double) * (2 * (size_t)N * N + (size_t)N);
}
#define TC_INVERSE_SMEM_MAX (48u << 10)

extern "C" size_t twincache_inverse_cuda_work_bytes(int G, int N) {
  size_t per = tc_inverse_graph_bytes(N);
  return per <= TC_INVERSE_SMEM_MAX ? 0 : (size_t)G * per;
}

extern "C" int twincache_inverse_cuda(float *W_hat, float *Pc, const float *T,
                                      const uint8_t *observed, const float *C,
                                      const uint8_t *node_mask, int G, int N, void *work,
                                      void *stream) {
  if (G <= 0 || N <= 0) return 0;
  size_t per = tc_inverse_graph_bytes(N);
  int smem = per <= TC_INVERSE_SMEM_MAX;
  // threads: about one per matrix element, whole warps, at most 256
  int threads = N * N < 256 ? ((N * N + 31) / 32) * 32 : 256;
  inverse_kernel<<<G, threads, smem ? per : 0, tc_stream(stream)>>>(
      W_hat, Pc, T, observed, C, node_mask, N, (double *)work, smem);
  launchReturnIfError();
  return 0;
}

// ---- pair features: one thread per pair --------------------------------------
__device__ float tc_clip_dev(float x) {
  if (x > TWINCACHE_FEATURE_CLIP) return TWINCACHE_FEATURE_CLIP;
  if (x < -TWINCACHE_FEATURE_CLIP) return -TWINCACHE_FEATURE_CLIP;
  if (x != x) return 0.0f;
  return x;
}

__global__ void pair_features_kernel(float *feat, float *pair_w, const float *T,
                                     const uint8_t *observed, const float *C, const float *W_hat,
                                     const float *Pc, const uint8_t *node_mask, int G, int N) {
  const int F = TWINCACHE_FEATURES;
  size_t nn = (size_t)N * N;
  size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= (size_t)G * nn) return;
  int g = (int)(p / nn), i = (int)(p % nn) / N, j = (int)(p % N);
  const uint8_t *nm = node_mask + (size_t)g * N, *ob = observed + (size_t)g * N;
  const float *Tg = T + g * nn, *Cg = C + g * nn, *Wg = W_hat + g * nn, *Pg = Pc + g * nn;
  float *f = feat + p * F;
  for (int q = 0; q < F; q++) f[q] = 0.0f;
  pair_w[p] = 0.0f;
  if (i == j || !nm[i] || !nm[j]) return;
  pair_w[p] = 1.0f;
  float row_max = 0.0f, col_max = 0.0f, wcol_max = 0.0f, wcol_sum = 0.0f;
  for (int k = 0; k < N; k++) {
    if (!nm[k]) continue;
    if (k != i) row_max = fmaxf(row_max, fabsf(Tg[i * N + k]));
    if (k != j) {
      col_max = fmaxf(col_max, fabsf(Tg[k * N + j]));
      wcol_max = fmaxf(wcol_max, fabsf(Wg[k * N + j]));
      wcol_sum += fabsf(Wg[k * N + j]);
    }
  }
  float tij = Tg[i * N + j], tji = Tg[j * N + i];
  float wij = Wg[i * N + j], wji = Wg[j * N + i];
  f[0] = tc_clip_dev(tij);
  f[1] = tc_clip_dev(tji);
  f[2] = tc_clip_dev(fabsf(tij));
  f[3] = tc_clip_dev(wij);
  f[4] = tc_clip_dev(wji);
  f[5] = tc_clip_dev(fabsf(wij));
  f[6] = Cg[i * N + j];
  f[7] = fabsf(Cg[i * N + j]);
  f[8] = Pg[i * N + j];
  f[9] = fabsf(Pg[i * N + j]);
  f[10] = (float)ob[i];
  f[11] = (float)ob[j];
  f[12] = tc_clip_dev(row_max);
  f[13] = tc_clip_dev(col_max);
  f[14] = tc_clip_dev(fabsf(wij) / (wcol_max + 1e-6f));
  f[15] = tc_clip_dev(wcol_sum);
}

extern "C" int twincache_pair_features_cuda(float *feat, float *pair_w, const float *T,
                                            const uint8_t *observed, const float *C,
                                            const float *W_hat, const float *Pc,
                                            const uint8_t *node_mask, int G, int N,
                                            void *stream) {
  size_t n = (size_t)G * N * N;
  if (n == 0) return 0;
  pair_features_kernel<<<tc_blocks(n, 128), 128, 0, tc_stream(stream)>>>(
      feat, pair_w, T, observed, C, W_hat, Pc, node_mask, G, N);
  launchReturnIfError();
  return 0;
}

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
