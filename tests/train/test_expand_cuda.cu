// test_expand_cuda: the compact-batch expansion kernel against
// twincache_expand_cpu, bit for bit over the whole dense slab, on synthetic
// compact slabs whose floats are random bit patterns (NaNs, -0, denormals
// included): partial batches (padding graphs), K < N and K = 0, several
// mask words (N > 64), row tiles (S*N beyond one shared tile), a do() target
// column also stored (the stored column wins), worlds of fewer rows than S
// (rows per world: their other rows 0).
//   test_expand_cuda            on the device; exits 77 without a usable GPU
//   test_expand_cuda --emulate  the kernel's code run on the host
//                               (twincache_expand_emulate): needs no GPU
// A seed may follow (default from the clock, printed).
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tc_bench_cuda.h"
#include "tc_expand.h"
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
static uint32_t below(uint32_t n) { return n ? (uint32_t)(rnd() % n) : 0; }

// A compact slab of layout L holding n_graphs random graphs; padding graphs
// are zero. Returns the slab (L->bytes, malloc'd).
static uint8_t *make_compact(const twincache_compact_layout *L, uint32_t n_graphs) {
  uint8_t *slab = (uint8_t *)calloc(1, L->bytes);
  if (!slab) exit(1);
  size_t G = L->graphs, K = L->inter, S = L->samples, N = L->nodes, W = L->mask_words;
  uint32_t *base = (uint32_t *)(slab + L->base), *value = (uint32_t *)(slab + L->value);
  uint32_t *cols = (uint32_t *)(slab + L->cols), *col_first = (uint32_t *)(slab + L->col_first);
  uint32_t *n_nodes = (uint32_t *)(slab + L->n_nodes), *n_inter = (uint32_t *)(slab + L->n_inter);
  uint16_t *target = (uint16_t *)(slab + L->target);
  uint64_t *mask = (uint64_t *)(slab + L->col_mask), *graph_id = (uint64_t *)(slab + L->graph_id);
  uint8_t *valid = slab + L->valid;
  uint8_t *adj = slab + L->adj, *kind = slab + L->kind;
  uint32_t *rows = (uint32_t *)(slab + L->rows); // (G,K+1): a third of the worlds hold fewer rows than S
  uint64_t cursor = 0;
  for (size_t g = 0; g < G; g++) {
    uint32_t n = g < n_graphs ? 1 + below((uint32_t)N) : 0;
    uint32_t ni = g < n_graphs ? below((uint32_t)K + 1) : 0;
    if (g == 0 && n_graphs) n = (uint32_t)N, ni = (uint32_t)K; // the largest graph once
    n_nodes[g] = n, n_inter[g] = ni;
    for (size_t w = 0; w <= K; w++)
      rows[g * (K + 1) + w] = (w == 0 ? n > 0 : w - 1 < ni) ? (below(3) == 0 ? 1 + below((uint32_t)S) : (uint32_t)S) : 0;
    graph_id[g] = g < n_graphs ? rnd() : 0;
    valid[g] = g < n_graphs ? (uint8_t)(rnd() & 1) : 0;
    for (size_t e = 0; g < n_graphs && e < S * N; e++) base[g * S * N + e] = (uint32_t)rnd();
    for (size_t e = 0; g < n_graphs && e < N * N; e++) adj[g * N * N + e] = (uint8_t)(rnd() & 1);
    for (size_t k = 0; k < K; k++) {
      size_t gk = g * K + k;
      col_first[gk] = (uint32_t)cursor;
      if (k >= ni) continue;
      kind[gk] = (uint8_t)(rnd() & 1);
      target[gk] = (uint16_t)below(n);
      value[gk] = (uint32_t)rnd();
      for (uint32_t j = 0; j < n; j++) {
        // the target's column mostly left to the fill, sometimes stored too
        int stored = j == target[gk] ? (kind[gk] == 0 ? below(4) == 0 : 1) : (int)(rnd() & 1);
        if (!stored) continue;
        mask[gk * W + j / 64] |= 1ull << (j % 64);
        for (size_t s = 0; s < S; s++) cols[cursor * S + s] = (uint32_t)rnd();
        cursor++;
      }
    }
  }
  return slab;
}

static void compare(const char *what, const uint8_t *got, const uint8_t *want, size_t bytes) {
  if (memcmp(got, want, bytes) == 0) return;
  size_t at = 0;
  while (got[at] == want[at]) at++;
  fprintf(stderr, "%s: differs at byte %zu of %zu (got %02x, want %02x)\n", what, at, bytes,
          got[at], want[at]);
  failures++;
}

int main(int argc, char **argv) {
  int emulate = argc > 1 && strcmp(argv[1], "--emulate") == 0;
  uint64_t seed = argc > 1 + emulate ? strtoull(argv[1 + emulate], NULL, 10) : (uint64_t)time(NULL);
  rng_state = seed;
  printf("test_expand_cuda%s: seed %llu\n", emulate ? " --emulate" : "", (unsigned long long)seed);
  if (!emulate) {
    int n_dev = 0;
    if (cudaGetDeviceCount(&n_dev) != cudaSuccess || n_dev == 0) {
      printf("test_expand_cuda: no CUDA device, skipped\n");
      return 77;
    }
  }
  const struct { uint32_t G, K, N, S, n_graphs; } cases[] = {
      {4, 3, 5, 7, 3},      // partial batch, K < N
      {8, 10, 10, 64, 8},   // the default workload's shape
      {6, 50, 50, 64, 5},   // N = 50, one padding graph
      {3, 10, 200, 50, 3},  // rows in 3 shared tiles
      {2, 2, 70, 100, 2},   // two mask words, two tiles
      {2, 0, 3, 4, 1},      // no interventions at all
      {3, 4, 256, 17, 2},   // the format's largest N
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    twincache_batch_layout D;
    twincache_compact_layout L;
    if (twincache_batch_layout_init(&D, cases[c].G, cases[c].N, cases[c].K, cases[c].S) != 0 ||
        twincache_compact_layout_init(&L, &D) != 0)
      exit(1);
    twincache_expand_offsets o;
    tc_expand_offsets_init(&o, &L);
    uint8_t *compact = make_compact(&L, cases[c].n_graphs);
    uint8_t *want = (uint8_t *)calloc(1, D.bytes), *got = (uint8_t *)calloc(1, D.bytes);
    if (!want || !got) exit(1);
    twincache_expand_cpu(want, compact, &o);
    char what[128];
    if (emulate) {
      const int threads[] = {256, 96, 1};
      for (int t = 0; t < 3; t++) {
        memset(got, 0, D.bytes);
        twincache_expand_emulate(got, compact, &o, threads[t]);
        snprintf(what, sizeof what, "G=%u K=%u N=%u S=%u, %d threads", L.graphs, L.inter,
                 L.nodes, L.samples, threads[t]);
        compare(what, got, want, D.bytes);
      }
    } else {
      void *d_compact = NULL, *d_dense = NULL;
      cudaCheckOrExit(cudaMalloc(&d_compact, L.bytes));
      cudaCheckOrExit(cudaMalloc(&d_dense, D.bytes));
      // only the used prefix travels, as in the trainer; the rest is garbage
      cudaCheckOrExit(cudaMemset(d_compact, 0xA5, L.bytes));
      cudaCheckOrExit(cudaMemset(d_dense, 0, D.bytes));
      uint64_t n_cols = 0;
      const uint32_t *cf = (const uint32_t *)(compact + L.col_first);
      const uint64_t *mk = (const uint64_t *)(compact + L.col_mask);
      for (size_t gk = 0; gk < (size_t)L.graphs * L.inter; gk++) {
        uint64_t n = 0;
        for (uint32_t q = 0; q < L.mask_words; q++) n += (uint64_t)__builtin_popcountll(mk[gk * L.mask_words + q]);
        if (cf[gk] + n > n_cols) n_cols = cf[gk] + n;
      }
      size_t used = twincache_compact_used_bytes(&L, n_cols);
      cudaCheckOrExit(cudaMemcpy(d_compact, compact, used, cudaMemcpyHostToDevice));
      kernelCheckOrExit(twincache_expand_cuda(d_dense, d_compact, &o, NULL));
      cudaCheckOrExit(cudaDeviceSynchronize());
      cudaCheckOrExit(cudaMemcpy(got, d_dense, D.bytes, cudaMemcpyDeviceToHost));
      snprintf(what, sizeof what, "G=%u K=%u N=%u S=%u on the device", L.graphs, L.inter,
               L.nodes, L.samples);
      compare(what, got, want, D.bytes);
      cudaCheckOrExit(cudaFree(d_compact));
      cudaCheckOrExit(cudaFree(d_dense));
    }
    printf("G=%-2u K=%-2u N=%-3u S=%-3u graphs %u: %s\n", L.graphs, L.inter, L.nodes, L.samples,
           cases[c].n_graphs, failures ? "FAIL so far" : "ok");
    free(compact);
    free(want);
    free(got);
  }
  if (failures) fprintf(stderr, "test_expand_cuda: %d mismatch(es) (seed %llu)\n", failures, (unsigned long long)seed);
  return failures ? 1 : 0;
}
