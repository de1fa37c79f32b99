// bench_kernels_cuda — where a training step's GPU time goes: each kernel of
// the step (features, MLP forward/backward, BCE, AdamW) timed alone with
// events on a batch of twincache-gen's default workload (tc_bench_batch.h:
// N/2..N nodes, a do() on every node), median of R runs, next to the whole step run
// back to back and replayed as one CUDA graph. A program, not a test; exits
// 77 without a usable GPU.
//
// usage: bench_kernels_cuda [G [N [S [R]]]]   (default 256 10 64 200)
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "tc_args.h"
#include "tc_model.h"
#include "tc_bench_cuda.h"
#include "tc_bench_batch.h"
#include "twincache_kernels_cuda.h"

enum { ST_EFFECTS, ST_CORR, ST_INVERSE, ST_PAIRS, ST_FWD, ST_BCE, ST_BWD, ST_ADAMW, ST_COUNT };
static const char *kStageName[ST_COUNT] = {"effects T",         "correlation C",
                                           "inverse W_hat, Pc", "pair features",
                                           "MLP forward (3 gemm+bias, 2 gelu)",
                                           "BCE loss + dlogit", "MLP backward (5 gemm, 2 gelu)",
                                           "AdamW (6 tensors)"};

typedef struct dev {
  int G, K, S, N, P;
  tc_batch_view b;
  cudaStream_t s;
  float *params, *grads, *m, *v, *T, *C, *W, *Pc, *feat, *pw, *h1pre, *h1, *h2pre, *h2, *logit,
      *dlogit, *dh1, *dh2, *loss;
  uint8_t *observed;
  void *inv_work, *bce_work;
  size_t off[TC_MODEL_TENSORS], len[TC_MODEL_TENSORS];
} dev;

static float *fbuf(size_t n) {
  float *p = NULL;
  cudaCheckOrExit(cudaMalloc(&p, sizeof(float) * (n ? n : 1)));
  cudaCheckOrExit(cudaMemset(p, 0, sizeof(float) * (n ? n : 1)));
  return p;
}

// Enqueues stage st of one training step (the order of tc_device_cuda.cu).
static void run_stage(dev *d, int st) {
  const int F = TC_MODEL_F, H = TC_MODEL_H, G = d->G, N = d->N, P = d->P;
  float *p = d->params, *g = d->grads;
  const size_t *o = d->off;
  void *s = (void *)d->s;
  const tc_batch_view *b = &d->b;
  switch (st) {
  case ST_EFFECTS:
    kernelCheckOrExit(twincache_effects_cuda(d->T, d->observed, b->base, b->inter, b->target, b->node_mask,
                                  b->int_mask, b->rows, G, b->K, b->S, N, s));
    break;
  case ST_CORR: kernelCheckOrExit(twincache_corr_cuda(d->C, b->base, b->node_mask, b->rows, b->K + 1, G, b->S, N, s)); break;
  case ST_INVERSE:
    kernelCheckOrExit(twincache_inverse_cuda(d->W, d->Pc, d->T, d->observed, d->C, b->node_mask, G, N,
                                  d->inv_work, s));
    break;
  case ST_PAIRS:
    kernelCheckOrExit(twincache_pair_features_cuda(d->feat, d->pw, d->T, d->observed, d->C, d->W, d->Pc,
                                        b->node_mask, G, N, s));
    break;
  case ST_FWD:
    kernelCheckOrExit(twincache_linear_forward_cuda(d->h1pre, d->feat, p + o[0], p + o[1], P, F, H, s));
    kernelCheckOrExit(twincache_gelu_forward_cuda(d->h1, d->h1pre, (size_t)P * H, s));
    kernelCheckOrExit(twincache_linear_forward_cuda(d->h2pre, d->h1, p + o[2], p + o[3], P, H, H, s));
    kernelCheckOrExit(twincache_gelu_forward_cuda(d->h2, d->h2pre, (size_t)P * H, s));
    kernelCheckOrExit(twincache_linear_forward_cuda(d->logit, d->h2, p + o[4], p + o[5], P, H, 1, s));
    break;
  case ST_BCE:
    kernelCheckOrExit(twincache_bce_cuda(d->dlogit, d->loss, d->logit, b->adj, d->pw, (size_t)P, 1.0f,
                              d->bce_work, s));
    break;
  case ST_BWD:
    kernelCheckOrExit(twincache_linear_backward_cuda(d->dh2, g + o[4], g + o[5], d->dlogit, d->h2, p + o[4],
                                          P, H, 1, s));
    kernelCheckOrExit(twincache_gelu_backward_cuda(d->dh2, d->h2pre, d->dh2, (size_t)P * H, s));
    kernelCheckOrExit(twincache_linear_backward_cuda(d->dh1, g + o[2], g + o[3], d->dh2, d->h1, p + o[2], P,
                                          H, H, s));
    kernelCheckOrExit(twincache_gelu_backward_cuda(d->dh1, d->h1pre, d->dh1, (size_t)P * H, s));
    kernelCheckOrExit(twincache_linear_backward_cuda(NULL, g + o[0], g + o[1], d->dh1, d->feat, p + o[0], P,
                                          F, H, s));
    break;
  case ST_ADAMW:
    for (int k = 0; k < TC_MODEL_TENSORS; k++)
      kernelCheckOrExit(twincache_adamw_cuda(p + o[k], g + o[k], d->m + o[k], d->v + o[k], d->len[k], 1e-3f,
                                  0.9f, 0.999f, 1e-8f, 1e-4f, 1 + k, s));
    break;
  }
}

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

// Median event time (ms) of R runs of stages [first, last].
static float time_stages(dev *d, int first, int last, int R, float *scratch) {
  cudaEvent_t a, z;
  cudaCheckOrExit(cudaEventCreate(&a));
  cudaCheckOrExit(cudaEventCreate(&z));
  for (int w = 0; w < 3; w++) // warm-up: module load, cuBLAS heuristics
    for (int st = first; st <= last; st++) run_stage(d, st);
  for (int r = 0; r < R; r++) {
    cudaCheckOrExit(cudaEventRecord(a, d->s));
    for (int st = first; st <= last; st++) run_stage(d, st);
    cudaCheckOrExit(cudaEventRecord(z, d->s));
    cudaCheckOrExit(cudaEventSynchronize(z));
    cudaCheckOrExit(cudaEventElapsedTime(&scratch[r], a, z));
  }
  cudaCheckOrExit(cudaEventDestroy(a));
  cudaCheckOrExit(cudaEventDestroy(z));
  qsort(scratch, (size_t)R, sizeof(float), cmp_float);
  return scratch[R / 2];
}

// Median time (ms) of R replays of the whole step captured as one CUDA graph
// (what twincache-train launches, AdamW aside).
static float time_graph(dev *d, int R, float *scratch) {
  cudaGraph_t g;
  cudaGraphExec_t ge;
  cudaCheckOrExit(cudaStreamBeginCapture(d->s, cudaStreamCaptureModeThreadLocal));
  for (int st = 0; st < ST_COUNT; st++) run_stage(d, st);
  cudaCheckOrExit(cudaStreamEndCapture(d->s, &g));
  cudaCheckOrExit(cudaGraphInstantiate(&ge, g, 0));
  cudaEvent_t a, z;
  cudaCheckOrExit(cudaEventCreate(&a));
  cudaCheckOrExit(cudaEventCreate(&z));
  for (int w = 0; w < 3; w++) cudaCheckOrExit(cudaGraphLaunch(ge, d->s));
  for (int r = 0; r < R; r++) {
    cudaCheckOrExit(cudaEventRecord(a, d->s));
    cudaCheckOrExit(cudaGraphLaunch(ge, d->s));
    cudaCheckOrExit(cudaEventRecord(z, d->s));
    cudaCheckOrExit(cudaEventSynchronize(z));
    cudaCheckOrExit(cudaEventElapsedTime(&scratch[r], a, z));
  }
  cudaCheckOrExit(cudaEventDestroy(a));
  cudaCheckOrExit(cudaEventDestroy(z));
  cudaCheckOrExit(cudaGraphExecDestroy(ge));
  cudaCheckOrExit(cudaGraphDestroy(g));
  qsort(scratch, (size_t)R, sizeof(float), cmp_float);
  return scratch[R / 2];
}

int main(int argc, char **argv) {
  // usage: bench_kernels_cuda [G [N [S [R]]]]; each positional value parsed strictly
  static const char *const names[4] = {"G", "N", "S", "R"};
  static const uint32_t lo[4] = {1, 2, 2, 1}, hi[4] = {65536, 256, 100000, 100000};
  uint32_t v[4] = {256, 10, 64, 200};
  for (int i = 0; i < 4 && i + 1 < argc; i++)
    if (tc_parse_u32_in(argv[i + 1], lo[i], hi[i], &v[i]) != 0) {
      char expect[64];
      tc_expect_u64(expect, sizeof expect, lo[i], hi[i]);
      return tc_args_report_value(stderr, "bench_kernels_cuda", names[i], argv[i + 1], expect);
    }
  int G = (int)v[0], N = (int)v[1], S = (int)v[2], R = (int)v[3];
  int n_dev = 0;
  if (cudaGetDeviceCount(&n_dev) != cudaSuccess || n_dev == 0) {
    printf("bench_kernels_cuda: no usable CUDA device, skipped\n");
    return 77;
  }
  twincache_batch_layout layout;
  void *host = tc_bench_default_batch((uint32_t)G, (uint32_t)N, (uint32_t)S, 7, &layout);
  if (!host) {
    fprintf(stderr, "bench_kernels_cuda: %s\n", twincache_last_error());
    return 1;
  }
  if (layout.nodes != (uint32_t)N || layout.inter != (uint32_t)N || layout.samples != (uint32_t)S) {
    fprintf(stderr, "bench_kernels_cuda: the loader's batch is N=%u K=%u S=%u, not %d %d %d\n",
            layout.nodes, layout.inter, layout.samples, N, N, S);
    return 1;
  }
  dev d = {0};
  d.G = G, d.K = N, d.S = S, d.N = N, d.P = G * N * N;
  void *slab = NULL;
  cudaCheckOrExit(cudaMalloc(&slab, layout.bytes));
  cudaCheckOrExit(cudaMemcpy(slab, host, layout.bytes, cudaMemcpyHostToDevice));
  tc_batch_view_init(&d.b, &layout, slab);
  tc_model *m = tc_model_create(1);
  if (!m) return 1;
  for (int k = 0; k < TC_MODEL_TENSORS; k++) d.off[k] = m->off[k], d.len[k] = m->len[k];
  d.params = fbuf(m->n_params), d.grads = fbuf(m->n_params);
  d.m = fbuf(m->n_params), d.v = fbuf(m->n_params);
  cudaCheckOrExit(cudaMemcpy(d.params, m->params, sizeof(float) * m->n_params, cudaMemcpyHostToDevice));
  size_t P = (size_t)d.P, PH = P * TC_MODEL_H;
  d.T = fbuf(P), d.C = fbuf(P), d.W = fbuf(P), d.Pc = fbuf(P), d.pw = fbuf(P);
  d.logit = fbuf(P), d.dlogit = fbuf(P), d.feat = fbuf(P * TC_MODEL_F), d.loss = fbuf(1);
  d.h1pre = fbuf(PH), d.h1 = fbuf(PH), d.h2pre = fbuf(PH), d.h2 = fbuf(PH);
  d.dh1 = fbuf(PH), d.dh2 = fbuf(PH);
  cudaCheckOrExit(cudaMalloc(&d.observed, (size_t)G * N));
  cudaCheckOrExit(cudaMalloc(&d.inv_work, twincache_inverse_cuda_work_bytes(G, N)));
  cudaCheckOrExit(cudaMalloc(&d.bce_work, twincache_bce_cuda_work_bytes(P)));
  cudaCheckOrExit(cudaStreamCreate(&d.s));
  float *scratch = (float *)malloc(sizeof(float) * R);

  cudaDeviceProp prop;
  cudaCheckOrExit(cudaGetDeviceProperties(&prop, 0));
  printf("%s: G=%d graphs, N=%d nodes, K=%d, S=%d samples, %d pairs; median of %d runs\n",
         prop.name, G, N, N, S, d.P, R);
  float stage_ms[ST_COUNT], sum = 0;
  for (int st = 0; st < ST_COUNT; st++) sum += stage_ms[st] = time_stages(&d, st, st, R, scratch);
  float whole = time_stages(&d, 0, ST_COUNT - 1, R, scratch);
  float graph = time_graph(&d, R, scratch);
  printf("%-36s %10s %8s\n", "stage", "us", "share");
  for (int st = 0; st < ST_COUNT; st++)
    printf("%-36s %10.1f %7.1f%%\n", kStageName[st], 1e3 * stage_ms[st], 100 * stage_ms[st] / sum);
  printf("%-36s %10.1f\n", "sum of the stages timed alone", 1e3 * sum);
  printf("%-36s %10.1f   (%.0f graphs/s if nothing else bound it)\n",
         "whole step back to back", 1e3 * whole, G / (whole * 1e-3));
  printf("%-36s %10.1f   (%.0f graphs/s)\n", "whole step as one CUDA graph", 1e3 * graph,
         G / (graph * 1e-3));
  free(scratch);
  tc_model_free(m);
  free(host);
  return 0;
}
