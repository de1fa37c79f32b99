// features.cu — the CUDA versions of the edge model's feature kernels
// (effects, correlation, inverse features, pair features), each beside its
// plain-C reference of the same name in features_cpu.c (same loops, same clip
// and guard constants); tests/train/test_kernels_cuda compares them on random
// inputs.
#include <cuda_runtime.h>
#include <math.h>

#include "tc_kernels_error.h"
#include "tc_launch.h"
#include "twincache_kernels.h"
#include "twincache_kernels_cuda.h"

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
