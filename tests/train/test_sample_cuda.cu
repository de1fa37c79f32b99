// test_sample_cuda: the fresh-world sampler on the device (kernels/sample.cu)
// against its host emulation (twincache_sample_cpu, the same per-thread
// code compiled as C), BIT FOR BIT, on random SCM batches: linear and MLP,
// every noise family, do and shift, standardised or not, graphs of 1..N
// nodes and 0..K interventions. Exits 77 without a usable GPU. (The
// emulation itself is held to scm/'s fresh worlds by test_sample_scm, in CI.)
// A seed may follow (default from the clock, printed).
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tc_bench_cuda.h"
#include "twincache_kernels.h"
#include "twincache_kernels_cuda.h"

static uint64_t rng_state;
static uint64_t rnd(void) { // splitmix64
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static float uni(float lo, float hi) { return lo + (hi - lo) * (float)((rnd() >> 40) / 16777216.0); }

template <typename T> static T *host(size_t n) {
  T *p = (T *)calloc(n ? n : 1, sizeof(T));
  if (!p) exit(1);
  return p;
}
template <typename T> static T *device(const T *h, size_t n) {
  T *d = NULL;
  cudaCheckOrExit(cudaMalloc(&d, (n ? n : 1) * sizeof(T)));
  if (h) cudaCheckOrExit(cudaMemcpy(d, h, n * sizeof(T), cudaMemcpyHostToDevice));
  else cudaCheckOrExit(cudaMemset(d, 0, (n ? n : 1) * sizeof(T)));
  return d;
}

// One random batch, sampled on both sides; returns the number of differences.
// mixed: every node a random mechanism (linear, MLP, RFF, sigmoid, poly; H > 0);
// het: heteroscedastic noise on every graph.
static int one_batch(uint32_t G, uint32_t N, uint32_t K, uint32_t H, uint32_t S, const double *zx,
                     const double *zr, int mixed = 0, int het = 0) {
  uint32_t *n_nodes = host<uint32_t>(G), *n_inter = host<uint32_t>(G), *order = host<uint32_t>((size_t)G * N);
  uint8_t *flags = host<uint8_t>(G), *noise = host<uint8_t>(G), *adj = host<uint8_t>((size_t)G * N * N);
  uint8_t *kind = host<uint8_t>((size_t)G * K), *desc = host<uint8_t>((size_t)G * K * N);
  uint64_t *key = host<uint64_t>(G);
  size_t mlp_per = (size_t)N * ((size_t)H * N + 2u * H);
  float *weight = host<float>((size_t)G * N * N), *mlp = host<float>((size_t)G * mlp_per);
  float *scale = host<float>((size_t)G * N), *value = host<float>((size_t)G * K);
  uint16_t *target = host<uint16_t>((size_t)G * K);
  uint8_t *mech = host<uint8_t>((size_t)G * N);
  float *het_w = host<float>((size_t)G * N * N), *het_c = host<float>((size_t)G * N);
  for (uint32_t g = 0; g < G; g++) {
    uint32_t n = 1 + (uint32_t)(rnd() % N), k = (uint32_t)(rnd() % (K + 1));
    if (k > n) k = n;
    n_nodes[g] = n;
    n_inter[g] = k;
    flags[g] = (uint8_t)(rnd() & 1);
    noise[g] = (uint8_t)(rnd() % 3);
    key[g] = rnd();
    uint32_t *o = order + (size_t)g * N, rank[TWINCACHE_SAMPLE_MAX_NODES];
    for (uint32_t j = 0; j < n; j++) o[j] = j;
    for (uint32_t j = n; j > 1; j--) {
      uint32_t u = (uint32_t)(rnd() % j), t = o[j - 1];
      o[j - 1] = o[u];
      o[u] = t;
    }
    for (uint32_t r = 0; r < n; r++) rank[o[r]] = r;
    for (uint32_t i = 0; i < n; i++)
      for (uint32_t j = 0; j < n; j++)
        if (rank[i] < rank[j] && rnd() % 10 < 3) {
          adj[(size_t)g * N * N + (size_t)i * N + j] = 1;
          weight[(size_t)g * N * N + (size_t)i * N + j] = uni(-2.0f, 2.0f);
        }
    for (size_t q = 0; q < (size_t)n * (H * n + 2u * H); q++) mlp[(size_t)g * mlp_per + q] = uni(-1.5f, 1.5f);
    for (uint32_t j = 0; j < n; j++) scale[(size_t)g * N + j] = uni(0.5f, 1.5f);
    for (uint32_t j = 0; j < n; j++) {
      mech[(size_t)g * N + j] = (uint8_t)(mixed ? rnd() % 5 : (H ? 1 : 0));
      het_c[(size_t)g * N + j] = uni(-0.5f, 0.5f);
      for (uint32_t i = 0; i < n; i++)
        if (adj[(size_t)g * N * N + (size_t)i * N + j]) het_w[(size_t)g * N * N + (size_t)i * N + j] = uni(-1.0f, 1.0f);
    }
    for (uint32_t q = 0; q < k; q++) {
      uint32_t t = (uint32_t)(rnd() % n);
      target[(size_t)g * K + q] = (uint16_t)t;
      kind[(size_t)g * K + q] = (uint8_t)(rnd() & 1);
      value[(size_t)g * K + q] = uni(-3.0f, 3.0f);
      uint8_t *d = desc + ((size_t)g * K + q) * N;
      d[t] = 1;
      for (uint32_t r = rank[t] + 1; r < n; r++) // descendants: in topological order
        for (uint32_t i = 0; i < n; i++)
          if (d[i] && adj[(size_t)g * N * N + (size_t)i * N + o[r]]) d[o[r]] = 1;
    }
  }
  twincache_scm_batch hb = {G, N, K, H, S, n_nodes, n_inter, flags, noise, key, order, adj, weight,
                            H ? mlp : NULL, scale, target, kind, value, desc, zx, zr,
                            mixed ? mech : NULL, het ? het_w : NULL, het ? het_c : NULL};
  size_t sn = (size_t)G * S * N, ksn = (size_t)G * K * S * N;
  float *noise_h = host<float>(sn), *mean_h = host<float>((size_t)G * N), *sd_h = host<float>((size_t)G * N);
  float *base_h = host<float>(sn), *inter_h = host<float>(ksn);
  if (twincache_sample_cpu(&hb, noise_h, mean_h, sd_h, base_h, inter_h) != 0) return 1;

  twincache_scm_batch db = hb;
  db.n_nodes = device(n_nodes, G);
  db.n_inter = device(n_inter, G);
  db.flags = device(flags, G);
  db.noise = device(noise, G);
  db.key = device(key, G);
  db.order = device(order, (size_t)G * N);
  db.adj = device(adj, (size_t)G * N * N);
  db.weight = device(weight, (size_t)G * N * N);
  db.mlp = H ? device(mlp, (size_t)G * mlp_per) : NULL;
  db.noise_scale = device(scale, (size_t)G * N);
  db.target = device(target, (size_t)G * K);
  db.kind = device(kind, (size_t)G * K);
  db.value = device(value, (size_t)G * K);
  db.desc = device(desc, (size_t)G * K * N);
  db.zig_x = device(zx, 257);
  db.zig_ratio = device(zr, 256);
  db.mech = mixed ? device(mech, (size_t)G * N) : NULL;
  db.het_w = het ? device(het_w, (size_t)G * N * N) : NULL;
  db.het_c = het ? device(het_c, (size_t)G * N) : NULL;
  float *noise_d = device<float>(NULL, sn), *mean_d = device<float>(NULL, (size_t)G * N);
  float *sd_d = device<float>(NULL, (size_t)G * N), *base_d = device<float>(NULL, sn);
  float *inter_d = device<float>(NULL, ksn);
  kernelCheckOrExit(twincache_sample_cuda(&db, noise_d, mean_d, sd_d, base_d, inter_d, NULL));
  cudaCheckOrExit(cudaDeviceSynchronize());
  { // an iSCM graph (flags bit 1) is refused on both sides
    uint8_t f0 = flags[0];
    flags[0] |= 2u;
    uint8_t *flags_d = device(flags, G);
    twincache_scm_batch rb = db;
    rb.flags = flags_d;
    if (twincache_sample_cpu(&hb, noise_h, mean_h, sd_h, base_h, inter_h) != TWINCACHE_KERNELS_EINVAL ||
        twincache_sample_cuda(&rb, noise_d, mean_d, sd_d, base_d, inter_d, NULL) != TWINCACHE_KERNELS_EINVAL) {
      fprintf(stderr, "an iSCM batch was not refused\n");
      return 1;
    }
    flags[0] = f0;
  }
  float *base_g = host<float>(sn), *inter_g = host<float>(ksn);
  cudaCheckOrExit(cudaMemcpy(base_g, base_d, sn * sizeof(float), cudaMemcpyDeviceToHost));
  cudaCheckOrExit(cudaMemcpy(inter_g, inter_d, ksn * sizeof(float), cudaMemcpyDeviceToHost));
  int bad = 0;
  for (uint32_t g = 0; g < G; g++) {
    if (memcmp(base_g + (size_t)g * S * N, base_h + (size_t)g * S * N, (size_t)S * N * sizeof(float))) {
      fprintf(stderr, "H=%u graph %u: base world differs\n", H, g);
      bad++;
    }
    if (memcmp(inter_g + (size_t)g * K * S * N, inter_h + (size_t)g * K * S * N,
               (size_t)K * S * N * sizeof(float))) {
      fprintf(stderr, "H=%u graph %u: twin worlds differ\n", H, g);
      bad++;
    }
  }
  // device memory and host arrays are left to process exit (a test)
  return bad;
}

int main(int argc, char **argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    printf("test_sample_cuda: no usable GPU, skipped\n");
    return 77;
  }
  rng_state = argc > 1 ? strtoull(argv[1], NULL, 10) : (uint64_t)time(NULL);
  printf("test_sample_cuda: seed %llu\n", (unsigned long long)rng_state);
  double zx[257], zr[256];
  twincache_sample_tables(zx, zr);
  int bad = one_batch(64, 12, 12, 0, 200, zx, zr) + one_batch(48, 30, 3, 8, 800, zx, zr) +
            one_batch(32, 9, 9, 4, 64, zx, zr) + one_batch(32, 10, 10, 9, 64, zx, zr, 1, 0) +
            one_batch(32, 10, 5, 6, 128, zx, zr, 1, 1) + one_batch(32, 8, 8, 0, 64, zx, zr, 0, 1);
  if (bad) {
    fprintf(stderr, "test_sample_cuda: %d worlds differ between the device and the emulation\n", bad);
    return 1;
  }
  printf("test_sample_cuda: ok\n");
  return 0;
}
