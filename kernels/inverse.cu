// inverse.cu — the CUDA version of the edge model's inverse features, beside its plain-C
// reference of the same name in inverse_cpu.c; tests/train/test_kernels_cuda
// compares them on random inputs.
#include <cuda_runtime.h>
#include <math.h>

#include "tc_kernels_error.h"
#include "tc_launch.h"
#include "twincache_kernels.h"
#include "twincache_kernels_cuda.h"

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
