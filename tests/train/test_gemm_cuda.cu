// test_gemm_cuda: the linear layers' GEMM kernel (kernels/gemm.cu) on shapes
// that cover partial tiles, K below, at and above a tile, and P = 0.
//   test_gemm_cuda --emulate  the kernel's own code run on the host
//                             (twincache_linear_gemm_emulate) against a plain
//                             sequential sum, BIT FOR BIT, and against the CPU
//                             reference twincache_linear_*_cpu within 1e-5
//                             (its SIMD reduction sums in another order)
//   test_gemm_cuda            the device against the emulation, bit for bit;
//                             exits 77 without a usable GPU
// A seed may follow (default from the clock, printed).
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tc_bench_cuda.h"
#include "twincache_kernels.h"
#include "twincache_kernels_cuda.h"

static int failures = 0;
static uint64_t rng_state;

static uint64_t rnd(void) { // splitmix64
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static float uni(void) { return (float)((double)(rnd() >> 11) / 9007199254740992.0 * 2.0 - 1.0); }

static float *fill(size_t n) {
  float *p = (float *)malloc(sizeof(float) * (n ? n : 1));
  if (!p) exit(1);
  for (size_t i = 0; i < n; i++) p[i] = uni();
  return p;
}

static void same_bits(const char *what, const float *got, const float *want, size_t n) {
  if (n && memcmp(got, want, sizeof(float) * n) != 0) {
    size_t at = 0;
    while (memcmp(got + at, want + at, sizeof(float)) == 0) at++;
    fprintf(stderr, "%s: differs at %zu of %zu (got %.9g, want %.9g)\n", what, at, n, got[at],
            want[at]);
    failures++;
  }
}

static void near(const char *what, const float *got, const float *want, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!(fabs((double)got[i] - want[i]) <= 1e-5 * (1.0 + fabs((double)want[i])))) {
      fprintf(stderr, "%s: %.9g vs %.9g at %zu\n", what, got[i], want[i], i);
      failures++;
      return;
    }
}

// The contract written plainly: each output a sum over k ascending, products
// and sums rounded one by one (this file is built with -ffp-contract=off).
static void plain(float *out, float *din, float *dw, const float *in, const float *w,
                  const float *dout, int P, int I, int O) {
  for (int p = 0; p < P; p++)
    for (int o = 0; o < O; o++) {
      float acc = 0.0f;
      for (int i = 0; i < I; i++) acc = acc + in[(size_t)p * I + i] * w[(size_t)o * I + i];
      out[(size_t)p * O + o] = acc;
    }
  for (int p = 0; p < P; p++)
    for (int i = 0; i < I; i++) {
      float acc = 0.0f;
      for (int o = 0; o < O; o++) acc = acc + dout[(size_t)p * O + o] * w[(size_t)o * I + i];
      din[(size_t)p * I + i] = acc;
    }
  for (int o = 0; o < O; o++)
    for (int i = 0; i < I; i++) {
      float acc = 0.0f;
      for (int p = 0; p < P; p++) acc = acc + dout[(size_t)p * O + o] * in[(size_t)p * I + i];
      dw[(size_t)o * I + i] = acc;
    }
}

static float *dev_copy(const float *h, size_t n) {
  float *d = NULL;
  cudaCheckOrExit(cudaMalloc(&d, sizeof(float) * (n ? n : 1)));
  if (n) cudaCheckOrExit(cudaMemcpy(d, h, sizeof(float) * n, cudaMemcpyHostToDevice));
  return d;
}
static void host_copy(float *h, const float *d, size_t n) {
  if (n) cudaCheckOrExit(cudaMemcpy(h, d, sizeof(float) * n, cudaMemcpyDeviceToHost));
}

int main(int argc, char **argv) {
  int emulate = argc > 1 && strcmp(argv[1], "--emulate") == 0;
  uint64_t seed = argc > 1 + emulate ? strtoull(argv[1 + emulate], NULL, 10) : (uint64_t)time(NULL);
  rng_state = seed;
  printf("test_gemm_cuda%s: seed %llu\n", emulate ? " --emulate" : "", (unsigned long long)seed);
  if (!emulate) {
    int n_dev = 0;
    if (cudaGetDeviceCount(&n_dev) != cudaSuccess || n_dev == 0) {
      printf("test_gemm_cuda: no CUDA device, skipped\n");
      return 77;
    }
  }
  const struct { int P, I, O; } cases[] = {
      {1, 1, 1}, {17, 15, 16}, {33, 16, 17}, {500, 23, 64}, {700, 64, 64}, {300, 64, 1}, {0, 12, 5},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    int P = cases[c].P, I = cases[c].I, O = cases[c].O;
    size_t nin = (size_t)P * I, nw = (size_t)O * I, nout = (size_t)P * O;
    float *in = fill(nin), *w = fill(nw), *dout = fill(nout);
    float *e_out = fill(nout), *e_din = fill(nin), *e_dw = fill(nw); // garbage: all must be written
    twincache_linear_gemm_emulate(e_out, e_din, e_dw, in, w, dout, P, I, O);
    char what[96];
    if (emulate) {
      float *p_out = fill(nout), *p_din = fill(nin), *p_dw = fill(nw);
      plain(p_out, p_din, p_dw, in, w, dout, P, I, O);
      snprintf(what, sizeof what, "P=%d I=%d O=%d emulated vs plain", P, I, O);
      same_bits(what, e_out, p_out, nout), same_bits(what, e_din, p_din, nin);
      same_bits(what, e_dw, p_dw, nw);
      // and the CPU reference the trainer uses (bias 0), within rounding
      float *zero_b = (float *)calloc((size_t)O, sizeof(float)), *db = fill((size_t)O);
      twincache_linear_forward_cpu(p_out, in, w, zero_b, P, I, O);
      twincache_linear_backward_cpu(p_din, p_dw, db, dout, in, w, P, I, O);
      snprintf(what, sizeof what, "P=%d I=%d O=%d emulated vs cpu reference", P, I, O);
      near(what, e_out, p_out, nout), near(what, e_din, p_din, nin), near(what, e_dw, p_dw, nw);
      free(p_out), free(p_din), free(p_dw), free(zero_b), free(db);
    } else {
      float *d_in = dev_copy(in, nin), *d_w = dev_copy(w, nw), *d_dout = dev_copy(dout, nout);
      float *d_out = dev_copy(NULL, nout), *d_din = dev_copy(NULL, nin), *d_dw = dev_copy(NULL, nw);
      kernelCheckOrExit(twincache_linear_forward_cuda(d_out, d_in, d_w, NULL, P, I, O, NULL));
      kernelCheckOrExit(
          twincache_linear_backward_cuda(d_din, d_dw, NULL, d_dout, d_in, d_w, P, I, O, NULL));
      cudaCheckOrExit(cudaDeviceSynchronize());
      float *g_out = fill(nout), *g_din = fill(nin), *g_dw = fill(nw);
      host_copy(g_out, d_out, nout), host_copy(g_dw, d_dw, nw);
      if (P > 0) host_copy(g_din, d_din, nin);
      snprintf(what, sizeof what, "P=%d I=%d O=%d device vs emulated", P, I, O);
      same_bits(what, g_out, e_out, nout), same_bits(what, g_dw, e_dw, nw);
      if (P > 0) same_bits(what, g_din, e_din, nin);
      cudaFree(d_in), cudaFree(d_w), cudaFree(d_dout), cudaFree(d_out), cudaFree(d_din), cudaFree(d_dw);
      free(g_out), free(g_din), free(g_dw);
    }
    printf("P=%-4d I=%-3d O=%-3d %s\n", P, I, O, failures ? "FAIL" : "ok");
    free(in), free(w), free(dout), free(e_out), free(e_din), free(e_dw);
  }
  printf("test_gemm_cuda: %s\n", failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
}
