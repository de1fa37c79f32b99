// gemm.cu — the linear layers' matrix products on the device, without cuBLAS
// (a CUDA toolkit need not ship it; the model's products are small).
//
// One kernel: C (M,Nc) row-major = sum over k of A(m,k) * B(k,n), A and B read
// through strides, so the forward pass and both backward products are one
// code path:
//   forward  out (P,O) = in (P,I) . w^T         A = in,        B(k,n) = w[n][k]
//   din      (P,I)     = dout (P,O) . w (O,I)   A = dout,      B = w
//   dw       (O,I)     = dout^T (O,P) . in      A(m,k) = dout[k][m], B = in
// Each output is one thread's running sum over k ascending, every product and
// sum rounded on its own (no FMA), so the result does not depend on the tile
// shape and twincache_gemm_emulate reproduces it bit for bit on the host.
//
// Block: TILE x TILE threads own a TILE x TILE tile of C; per step a TILE-wide
// slab of A and B is staged in shared memory (phase 1), then accumulated
// (phase 2). Both phases are __host__ __device__ functions of one thread, so
// the host emulation runs the kernel's own indexing.
#include <cuda_runtime.h>
#include <string.h>

#include "tc_kernels_error.h"
#include "twincache_kernels_cuda.h"

#define HD __host__ __device__
#define TC_GEMM_TILE 16

static HD inline float tc_mul(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fmul_rn(a, b);
#else
  return a * b; // host: built with -ffp-contract=off
#endif
}
static HD inline float tc_add(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

struct tc_gemm {
  float *c;
  const float *a, *b;
  int M, N, K;
  size_t a_m, a_k, b_k, b_n; // element strides of A(m,k) and B(k,n)
};

typedef float tc_gemm_tile[TC_GEMM_TILE][TC_GEMM_TILE + 1]; // +1: no bank conflicts

// Phase 1, thread (ty,tx) of block (by,bx), step t: stage A(row, t*T+tx) and
// B(t*T+ty, col), zero outside the matrices.
static HD inline void tc_gemm_stage(const tc_gemm &g, tc_gemm_tile As, tc_gemm_tile Bs, int by,
                                    int bx, int ty, int tx, int t) {
  int row = by * TC_GEMM_TILE + ty, col = bx * TC_GEMM_TILE + tx;
  int ka = t * TC_GEMM_TILE + tx, kb = t * TC_GEMM_TILE + ty;
  As[ty][tx] = row < g.M && ka < g.K ? g.a[(size_t)row * g.a_m + (size_t)ka * g.a_k] : 0.0f;
  Bs[ty][tx] = kb < g.K && col < g.N ? g.b[(size_t)kb * g.b_k + (size_t)col * g.b_n] : 0.0f;
}

// Phase 2: the thread's sum over this step's k, ascending (k beyond K is not
// added, so a padded zero never changes the sum's rounding).
static HD inline float tc_gemm_accumulate(const tc_gemm &g, const tc_gemm_tile As,
                                          const tc_gemm_tile Bs, int ty, int tx, int t, float acc) {
  int kn = g.K - t * TC_GEMM_TILE;
  if (kn > TC_GEMM_TILE) kn = TC_GEMM_TILE;
  for (int k = 0; k < kn; k++) acc = tc_add(acc, tc_mul(As[ty][k], Bs[k][tx]));
  return acc;
}

static HD inline void tc_gemm_store(const tc_gemm &g, int by, int bx, int ty, int tx, float acc) {
  int row = by * TC_GEMM_TILE + ty, col = bx * TC_GEMM_TILE + tx;
  if (row < g.M && col < g.N) g.c[(size_t)row * g.N + col] = acc;
}

__global__ void gemm_kernel(tc_gemm g) {
  __shared__ tc_gemm_tile As, Bs;
  int steps = (g.K + TC_GEMM_TILE - 1) / TC_GEMM_TILE;
  float acc = 0.0f;
  for (int t = 0; t < steps; t++) {
    tc_gemm_stage(g, As, Bs, blockIdx.y, blockIdx.x, threadIdx.y, threadIdx.x, t);
    __syncthreads();
    acc = tc_gemm_accumulate(g, As, Bs, threadIdx.y, threadIdx.x, t, acc);
    __syncthreads();
  }
  tc_gemm_store(g, blockIdx.y, blockIdx.x, threadIdx.y, threadIdx.x, acc);
}

static tc_gemm tc_gemm_make(float *c, const float *a, const float *b, int M, int N, int K,
                            size_t a_m, size_t a_k, size_t b_k, size_t b_n) {
  tc_gemm g = {c, a, b, M, N, K, a_m, a_k, b_k, b_n};
  return g;
}

static int tc_gemm_launch(const tc_gemm &g, cudaStream_t s) {
  if (g.M <= 0 || g.N <= 0) return 0;
  dim3 block(TC_GEMM_TILE, TC_GEMM_TILE);
  dim3 grid((unsigned)((g.N + TC_GEMM_TILE - 1) / TC_GEMM_TILE),
            (unsigned)((g.M + TC_GEMM_TILE - 1) / TC_GEMM_TILE));
  gemm_kernel<<<grid, block, 0, s>>>(g);
  launchReturnIfError();
  return 0;
}

// The three products of a linear layer, as tc_gemm views (shapes above).
static tc_gemm tc_gemm_forward(float *out, const float *in, const float *w, int P, int I, int O) {
  return tc_gemm_make(out, in, w, P, O, I, (size_t)I, 1, 1, (size_t)I);
}
static tc_gemm tc_gemm_din(float *din, const float *dout, const float *w, int P, int I, int O) {
  return tc_gemm_make(din, dout, w, P, I, O, (size_t)O, 1, (size_t)I, 1);
}
static tc_gemm tc_gemm_dw(float *dw, const float *dout, const float *in, int P, int I, int O) {
  return tc_gemm_make(dw, dout, in, O, I, P, 1, (size_t)O, (size_t)I, 1);
}

extern "C" int tc_linear_gemm_forward(float *out, const float *in, const float *w, int P, int I,
                                      int O, void *stream) {
  return tc_gemm_launch(tc_gemm_forward(out, in, w, P, I, O), (cudaStream_t)stream);
}

extern "C" int tc_linear_gemm_backward(float *din, float *dw, const float *dout, const float *in,
                                       const float *w, int P, int I, int O, void *stream) {
  cudaStream_t s = (cudaStream_t)stream;
  if (din) kernelReturnIfError(tc_gemm_launch(tc_gemm_din(din, dout, w, P, I, O), s));
  return tc_gemm_launch(tc_gemm_dw(dw, dout, in, P, I, O), s);
}

// ---- host emulation ------------------------------------------------------------
// The kernel's phases for every thread of every block in turn, a barrier
// between phases (the per-thread sums live in `acc`).
static void tc_gemm_emulate(const tc_gemm &g) {
  static tc_gemm_tile As, Bs;
  float acc[TC_GEMM_TILE][TC_GEMM_TILE];
  int steps = (g.K + TC_GEMM_TILE - 1) / TC_GEMM_TILE;
  for (int by = 0; by * TC_GEMM_TILE < g.M; by++)
    for (int bx = 0; bx * TC_GEMM_TILE < g.N; bx++) {
      memset(acc, 0, sizeof acc);
      for (int t = 0; t < steps; t++) {
        for (int ty = 0; ty < TC_GEMM_TILE; ty++)
          for (int tx = 0; tx < TC_GEMM_TILE; tx++) tc_gemm_stage(g, As, Bs, by, bx, ty, tx, t);
        for (int ty = 0; ty < TC_GEMM_TILE; ty++)
          for (int tx = 0; tx < TC_GEMM_TILE; tx++)
            acc[ty][tx] = tc_gemm_accumulate(g, As, Bs, ty, tx, t, acc[ty][tx]);
      }
      for (int ty = 0; ty < TC_GEMM_TILE; ty++)
        for (int tx = 0; tx < TC_GEMM_TILE; tx++) tc_gemm_store(g, by, bx, ty, tx, acc[ty][tx]);
    }
}

extern "C" void twincache_linear_gemm_emulate(float *out, float *din, float *dw, const float *in,
                                              const float *w, const float *dout, int P, int I,
                                              int O) {
  if (out) tc_gemm_emulate(tc_gemm_forward(out, in, w, P, I, O));
  if (din) tc_gemm_emulate(tc_gemm_din(din, dout, w, P, I, O));
  if (dw) tc_gemm_emulate(tc_gemm_dw(dw, dout, in, P, I, O));
}
