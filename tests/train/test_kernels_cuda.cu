// test_kernels_cuda: every CUDA kernel of kernels/ against its CPU reference
// on random inputs redrawn each run (seed from the clock, printed; pass a
// seed as argv[1] to replay). Each kernel gets the SAME inputs on both sides
// (the CPU outputs of the previous stage), so an error is the kernel's own.
// Bound: max |cuda - cpu| / (1 + |cpu|) <= 1e-4 for every output (the
// float sums run in another order on the GPU; features use double on both).
// Exits 77 (skipped) when no CUDA device is usable.
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_bench_cuda.h"
#include "tc_synth.h"
#include "twincache_kernels.h"
#include "twincache_kernels_cuda.h"

static const double kBound = 1e-4;
static int failures = 0;

static void *up(const void *host, size_t bytes) {
  void *d = NULL;
  cudaCheckOrExit(cudaMalloc(&d, bytes ? bytes : 1));
  if (host) cudaCheckOrExit(cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice));
  return d;
}

static void compare_f(const char *what, const float *dev, const float *ref, size_t n) {
  float *h = (float *)malloc(sizeof(float) * (n ? n : 1));
  cudaCheckOrExit(cudaDeviceSynchronize());
  cudaCheckOrExit(cudaMemcpy(h, dev, sizeof(float) * n, cudaMemcpyDeviceToHost));
  double worst = 0;
  size_t at = 0;
  for (size_t i = 0; i < n; i++) {
    double e = fabs((double)h[i] - (double)ref[i]) / (1.0 + fabs((double)ref[i]));
    if (!(e <= worst)) worst = e, at = i; // NaN counts as worst
  }
  int ok = worst <= kBound;
  printf("%-22s n=%-8zu max rel err %.3g %s\n", what, n, worst, ok ? "ok" : "FAIL");
  if (!ok) {
    fprintf(stderr, "  at %zu: cuda %.9g cpu %.9g\n", at, h[at], ref[at]);
    failures++;
  }
  free(h);
}

static void compare_u8(const char *what, const uint8_t *dev, const uint8_t *ref, size_t n) {
  uint8_t *h = (uint8_t *)malloc(n ? n : 1);
  cudaCheckOrExit(cudaDeviceSynchronize());
  cudaCheckOrExit(cudaMemcpy(h, dev, n, cudaMemcpyDeviceToHost));
  size_t bad = 0;
  for (size_t i = 0; i < n; i++) bad += h[i] != ref[i];
  printf("%-22s n=%-8zu mismatches %zu %s\n", what, n, bad, bad ? "FAIL" : "ok");
  if (bad) failures++;
  free(h);
}

int main(int argc, char **argv) {
  int n_dev = 0;
  if (cudaGetDeviceCount(&n_dev) != cudaSuccess || n_dev == 0) {
    printf("test_kernels_cuda: no usable CUDA device, skipped\n");
    return 77;
  }
  void *probe = NULL;
  if (cudaMalloc(&probe, 1 << 20) != cudaSuccess) {
    printf("test_kernels_cuda: CUDA test allocation failed, skipped\n");
    return 77;
  }
  cudaFree(probe);
  uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 10) : tc_now_ns();
  printf("test_kernels_cuda: seed %llu (bound: max |cuda-cpu|/(1+|cpu|) <= %g)\n",
         (unsigned long long)seed, kBound);
  tc_rng r;
  tc_rng_init(&r, seed, 0);
  const int G = 6 + (int)tc_rng_below(&r, 10), N = 4 + (int)tc_rng_below(&r, 9);
  const int S = 8 + (int)tc_rng_below(&r, 40), K = N, F = TWINCACHE_FEATURES, H = 64;
  printf("G=%d N=%d S=%d\n", G, N, S);
  tc_synth y;
  if (tc_synth_make(&y, G, N, S, 2, 0.4, (int)tc_rng_below(&r, 2), seed) != 0) return 1;
  const twincache_batch_layout *l = &y.layout;
  uint8_t *s8 = (uint8_t *)y.slab;
  // rows per world (FORMAT.md 3.10): odd graphs' worlds hold fewer rows, the
  // rows past a count zero as in a loader's batch; the device must skip them too
  for (int g = 1; g < G; g += 2)
    for (int w = 0; w <= K; w++) {
      uint32_t *rw = (uint32_t *)(s8 + l->rows) + (size_t)g * (K + 1) + w;
      if (*rw == 0) continue;
      *rw = 2 + (uint32_t)tc_rng_below(&r, (uint32_t)S - 1);  // 2..S
      float *blk = (float *)(s8 + (w == 0 ? l->base : l->inter_off)) + ((size_t)(w == 0 ? g : g * K + w - 1) * S) * N;
      memset(blk + (size_t)*rw * N, 0, sizeof(float) * (size_t)(S - *rw) * N);
    }
  uint8_t *dslab = (uint8_t *)up(y.slab, l->bytes);
  cudaStream_t st;
  cudaCheckOrExit(cudaStreamCreate(&st));
  size_t gnn = (size_t)G * N * N, P = gnn;
  // CPU reference chain
  float *T = (float *)malloc(4 * gnn), *C = (float *)malloc(4 * gnn), *W = (float *)malloc(4 * gnn);
  float *Pc = (float *)malloc(4 * gnn), *feat = (float *)malloc(4 * gnn * F), *pw = (float *)malloc(4 * gnn);
  uint8_t *ob = (uint8_t *)malloc((size_t)G * N);
  const float *base = (const float *)(s8 + l->base), *inter = (const float *)(s8 + l->inter_off);
  const uint32_t *rows = (const uint32_t *)(s8 + l->rows);
  twincache_effects_cpu(T, ob, base, inter, s8 + l->target, s8 + l->node_mask, s8 + l->int_mask, rows, G, K, S, N);
  twincache_corr_cpu(C, base, s8 + l->node_mask, rows, K + 1, G, S, N);
  twincache_inverse_cpu(W, Pc, T, ob, C, s8 + l->node_mask, G, N);
  twincache_pair_features_cpu(feat, pw, T, ob, C, W, Pc, s8 + l->node_mask, G, N);
  // device: each kernel from the same inputs
  float *dT = (float *)up(NULL, 4 * gnn), *dC = (float *)up(NULL, 4 * gnn);
  uint8_t *dob = (uint8_t *)up(NULL, (size_t)G * N);
  kernelCheckOrExit(twincache_effects_cuda(dT, dob, (const float *)(dslab + l->base), (const float *)(dslab + l->inter_off),
                                dslab + l->target, dslab + l->node_mask, dslab + l->int_mask,
                                (const uint32_t *)(dslab + l->rows), G, K, S, N, st));
  compare_f("effects T", dT, T, gnn);
  compare_u8("effects observed", dob, ob, (size_t)G * N);
  kernelCheckOrExit(twincache_corr_cuda(dC, (const float *)(dslab + l->base), dslab + l->node_mask,
                                        (const uint32_t *)(dslab + l->rows), K + 1, G, S, N, st));
  compare_f("corr C", dC, C, gnn);
  float *dTin = (float *)up(T, 4 * gnn), *dCin = (float *)up(C, 4 * gnn);
  uint8_t *dobin = (uint8_t *)up(ob, (size_t)G * N);
  float *dW = (float *)up(NULL, 4 * gnn), *dPc = (float *)up(NULL, 4 * gnn);
  void *work = up(NULL, twincache_inverse_cuda_work_bytes(G, N));
  kernelCheckOrExit(twincache_inverse_cuda(dW, dPc, dTin, dobin, dCin, dslab + l->node_mask, G, N, work, st));
  compare_f("inverse W_hat", dW, W, gnn);
  compare_f("inverse Pc", dPc, Pc, gnn);
  {
    // large N: the inverse's matrices no longer fit in shared memory
    const int G2 = 3, N2 = 56 + (int)tc_rng_below(&r, 16);
    size_t n2 = (size_t)G2 * N2 * N2;
    float *T2 = (float *)malloc(4 * n2), *C2 = (float *)malloc(4 * n2);
    float *W2 = (float *)malloc(4 * n2), *P2 = (float *)malloc(4 * n2);
    uint8_t *ob2 = (uint8_t *)malloc((size_t)G2 * N2), *nm2 = (uint8_t *)malloc((size_t)G2 * N2);
    for (int q = 0; q < G2 * N2; q++) ob2[q] = tc_rng_below(&r, 8) != 0, nm2[q] = q % N2 < N2 - 3;
    for (size_t q = 0; q < n2; q++) {
      int i = (int)(q / N2 % N2), j = (int)(q % N2);
      T2[q] = i == j ? 1.0f : (float)tc_rng_range(&r, -0.05, 0.05);
      C2[q] = i == j ? 1.0f : 0.0f;
    }
    for (size_t q = 0; q < n2; q++) { // symmetric, diagonally dominant: a valid correlation
      int g = (int)(q / ((size_t)N2 * N2)), i = (int)(q / N2 % N2), j = (int)(q % N2);
      if (i < j) C2[q] = C2[(size_t)g * N2 * N2 + (size_t)j * N2 + i] = (float)tc_rng_range(&r, -0.01, 0.01);
    }
    twincache_inverse_cpu(W2, P2, T2, ob2, C2, nm2, G2, N2);
    float *dT2 = (float *)up(T2, 4 * n2), *dC2 = (float *)up(C2, 4 * n2);
    float *dW2 = (float *)up(NULL, 4 * n2), *dP2 = (float *)up(NULL, 4 * n2);
    uint8_t *dob2 = (uint8_t *)up(ob2, (size_t)G2 * N2), *dnm2 = (uint8_t *)up(nm2, (size_t)G2 * N2);
    void *work2 = up(NULL, twincache_inverse_cuda_work_bytes(G2, N2));
    kernelCheckOrExit(twincache_inverse_cuda(dW2, dP2, dT2, dob2, dC2, dnm2, G2, N2, work2, st));
    printf("inverse at N=%d (global scratch of %zu bytes)\n", N2, twincache_inverse_cuda_work_bytes(G2, N2));
    compare_f("inverse W_hat, big N", dW2, W2, n2);
    compare_f("inverse Pc, big N", dP2, P2, n2);
    free(T2), free(C2), free(W2), free(P2), free(ob2), free(nm2);
  }
  float *dWin = (float *)up(W, 4 * gnn), *dPcin = (float *)up(Pc, 4 * gnn);
  float *dfeat = (float *)up(NULL, 4 * gnn * F), *dpw = (float *)up(NULL, 4 * gnn);
  kernelCheckOrExit(twincache_pair_features_cuda(dfeat, dpw, dTin, dobin, dCin, dWin, dPcin, dslab + l->node_mask, G, N, st));
  compare_f("pair features", dfeat, feat, gnn * F);
  compare_f("pair weights", dpw, pw, gnn);
  // MLP layer F -> H, GELU, H -> 1, BCE, backward, AdamW on random weights
  float *w1 = (float *)malloc(4 * H * F), *b1 = (float *)malloc(4 * H), *h1 = (float *)malloc(4 * P * H);
  float *g1 = (float *)malloc(4 * P * H), *dh = (float *)malloc(4 * P * H), *din = (float *)malloc(4 * P * F);
  float *dw1 = (float *)malloc(4 * H * F), *db1 = (float *)malloc(4 * H);
  for (int i = 0; i < H * F; i++) w1[i] = (float)tc_rng_range(&r, -0.3, 0.3);
  for (int i = 0; i < H; i++) b1[i] = (float)tc_rng_range(&r, -0.1, 0.1);
  for (size_t i = 0; i < P * H; i++) dh[i] = (float)tc_rng_range(&r, -1, 1);
  twincache_linear_forward_cpu(h1, feat, w1, b1, (int)P, F, H);
  float *dw1d = (float *)up(w1, 4 * H * F), *db1d = (float *)up(b1, 4 * H), *dh1 = (float *)up(NULL, 4 * P * H);
  float *dfeatin = (float *)up(feat, 4 * gnn * F);
  kernelCheckOrExit(twincache_linear_forward_cuda(dh1, dfeatin, dw1d, db1d, (int)P, F, H, st));
  compare_f("linear forward", dh1, h1, P * H);
  twincache_gelu_forward_cpu(g1, h1, P * H);
  float *dh1in = (float *)up(h1, 4 * P * H), *dg1 = (float *)up(NULL, 4 * P * H);
  kernelCheckOrExit(twincache_gelu_forward_cuda(dg1, dh1in, P * H, st));
  compare_f("gelu forward", dg1, g1, P * H);
  float *gb = (float *)malloc(4 * P * H);
  twincache_gelu_backward_cpu(gb, h1, dh, P * H);
  float *ddh = (float *)up(dh, 4 * P * H), *dgb = (float *)up(NULL, 4 * P * H);
  kernelCheckOrExit(twincache_gelu_backward_cuda(dgb, dh1in, ddh, P * H, st));
  compare_f("gelu backward", dgb, gb, P * H);
  twincache_linear_backward_cpu(din, dw1, db1, dh, feat, w1, (int)P, F, H);
  float *ddin = (float *)up(NULL, 4 * P * F), *ddw = (float *)up(NULL, 4 * H * F), *ddb = (float *)up(NULL, 4 * H);
  kernelCheckOrExit(twincache_linear_backward_cuda(ddin, ddw, ddb, ddh, dfeatin, dw1d, (int)P, F, H, st));
  compare_f("linear backward din", ddin, din, P * F);
  compare_f("linear backward dw", ddw, dw1, (size_t)H * F);
  compare_f("linear backward db", ddb, db1, H);
  // BCE on random logits against the batch's adjacency
  float *logit = (float *)malloc(4 * P), *dl = (float *)malloc(4 * P);
  for (size_t i = 0; i < P; i++) logit[i] = (float)tc_rng_range(&r, -4, 4);
  float loss = twincache_bce_cpu(dl, logit, s8 + l->adj, pw, P, 1.7f);
  float *dlogit_in = (float *)up(logit, 4 * P), *ddl = (float *)up(NULL, 4 * P), *dloss = (float *)up(NULL, 4);
  void *bwork = up(NULL, twincache_bce_cuda_work_bytes(P));
  float *dpwin = (float *)up(pw, 4 * P);
  kernelCheckOrExit(twincache_bce_cuda(ddl, dloss, dlogit_in, dslab + l->adj, dpwin, P, 1.7f, bwork, st));
  compare_f("bce loss", dloss, &loss, 1);
  compare_f("bce dlogit", ddl, dl, P);
  {
    // many pairs: more partial blocks than the finishing block has threads
    size_t P2 = 300000 + tc_rng_below(&r, 100000);
    float *lg2 = (float *)malloc(4 * P2), *pw2 = (float *)malloc(4 * P2), *dl2 = (float *)malloc(4 * P2);
    uint8_t *adj2 = (uint8_t *)malloc(P2);
    for (size_t i = 0; i < P2; i++) {
      lg2[i] = (float)tc_rng_range(&r, -6, 6);
      pw2[i] = tc_rng_below(&r, 5) ? 1.0f : 0.0f;
      adj2[i] = tc_rng_below(&r, 3) == 0;
    }
    float loss2 = twincache_bce_cpu(dl2, lg2, adj2, pw2, P2, 0.8f);
    float *dlg2 = (float *)up(lg2, 4 * P2), *dpw2 = (float *)up(pw2, 4 * P2), *ddl2 = (float *)up(NULL, 4 * P2);
    uint8_t *dadj2 = (uint8_t *)up(adj2, P2);
    void *bwork2 = up(NULL, twincache_bce_cuda_work_bytes(P2));
    kernelCheckOrExit(twincache_bce_cuda(ddl2, dloss, dlg2, dadj2, dpw2, P2, 0.8f, bwork2, st));
    compare_f("bce loss, many pairs", dloss, &loss2, 1);
    compare_f("bce dlogit, many", ddl2, dl2, P2);
    free(lg2), free(pw2), free(dl2), free(adj2);
  }
  // AdamW, step t drawn at random
  size_t n = 1000 + tc_rng_below(&r, 5000);
  int t = 1 + (int)tc_rng_below(&r, 100);
  float *p = (float *)malloc(4 * n), *g = (float *)malloc(4 * n), *m = (float *)malloc(4 * n), *v = (float *)malloc(4 * n);
  for (size_t i = 0; i < n; i++) {
    p[i] = (float)tc_rng_range(&r, -1, 1), g[i] = (float)tc_rng_range(&r, -1, 1);
    m[i] = (float)tc_rng_range(&r, -0.1, 0.1), v[i] = (float)tc_rng_range(&r, 0, 0.01);
  }
  float *dp = (float *)up(p, 4 * n), *dg = (float *)up(g, 4 * n), *dm = (float *)up(m, 4 * n), *dv = (float *)up(v, 4 * n);
  twincache_adamw_cpu(p, g, m, v, n, 1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f, t);
  kernelCheckOrExit(twincache_adamw_cuda(dp, dg, dm, dv, n, 1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f, t, st));
  compare_f("adamw param", dp, p, n);
  compare_f("adamw m", dm, m, n);
  compare_f("adamw v", dv, v, n);
  // the data-parallel weighting around the all-reduce: scalars on the device
  {
    double wsum = tc_rng_range(&r, 1, 500), tot[2] = {wsum * 3.0, tc_rng_range(&r, 1, 900)};
    float loss = 0.0f, *dgw = (float *)up(g, 4 * n), *dlw = (float *)up(NULL, sizeof(float));
    double *dws = (double *)up(&wsum, sizeof wsum), *dtot = (double *)up(tot, sizeof tot);
    twincache_grad_weight_cpu(g, n, wsum);
    kernelCheckOrExit(twincache_grad_weight_cuda(dgw, n, dws, st));
    compare_f("grad weight", dgw, g, n);
    twincache_grad_unweight_cpu(g, n, tot, &loss);
    kernelCheckOrExit(twincache_grad_unweight_cuda(dgw, n, dtot, dlw, st));
    compare_f("grad unweight", dgw, g, n);
    compare_f("grad unweight loss", dlw, &loss, 1);
  }
  cudaCheckOrExit(cudaStreamSynchronize(st));
  cudaCheckOrExit(cudaGetLastError());
  // the test process exits right after: device memory is released with the context
  cudaStreamDestroy(st);
  free(T), free(C), free(W), free(Pc), free(feat), free(pw), free(ob), free(w1), free(b1), free(h1);
  free(g1), free(dh), free(din), free(dw1), free(db1), free(gb), free(logit), free(dl);
  free(p), free(g), free(m), free(v);
  tc_synth_free(&y);
  if (failures) {
    fprintf(stderr, "%d comparison(s) out of bound (seed %llu)\n", failures, (unsigned long long)seed);
    return 1;
  }
  printf("all CUDA kernels match their CPU references\n");
  return 0;
}
