/* test_scm_noise_simd — scm's SIMD loops (AVX-512, where the CPU has it)
 * give the scalar loops' bits:
 *  - every noise family's fresh fill, for row counts around the vector
 *    width and past it, node counts up to the format's limit, scales of
 *    every sign and size, and enough cells that the ziggurat's slow path
 *    (~1% of normals) runs thousands of times;
 *  - whole worlds (base and every do() twin) of random linear SCMs with
 *    0..n-1 parents per node, homo- and heteroscedastic: the mechanisms'
 *    weighted sums in all their passes.
 * Exit 77 when the CPU has no SIMD path to compare. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_scm.h"
#include "tc_scm_noise.h"
#include "tc_toy_scm.h"
#include "tc_test.h"

/* Base and twin worlds of a random linear SCM (n nodes, S rows, key), every
 * node a do() target, into out (n + 1 worlds of (S, n)). */
static void worlds(uint32_t n, uint32_t S, uint64_t key, int hetero, float *out) {
  static uint32_t ord[TWINCACHE_MAX_NODES], pa_start[TWINCACHE_MAX_NODES + 1];
  static uint32_t pa_idx[TWINCACHE_MAX_NODES * TWINCACHE_MAX_NODES];
  static float weight[TWINCACHE_MAX_NODES * TWINCACHE_MAX_NODES], pa_w[TWINCACHE_MAX_NODES * TWINCACHE_MAX_NODES];
  static float het_w[TWINCACHE_MAX_NODES * TWINCACHE_MAX_NODES], het_c[TWINCACHE_MAX_NODES];
  static float scale[TWINCACHE_MAX_NODES], value[TWINCACHE_MAX_NODES];
  static uint8_t adj[TWINCACHE_MAX_NODES * TWINCACHE_MAX_NODES], kind[TWINCACHE_MAX_NODES];
  static uint16_t target[TWINCACHE_MAX_NODES];
  tc_rng r;
  tc_rng_init(&r, key, 1);
  memset(weight, 0, (size_t)n * n * sizeof(float));
  tc_toy_scm_dag(&r, n, 0.4, 0.5, 2.0, ord, weight, n); /* ord: a topological order */
  uint32_t q = 0;
  for (uint32_t j = 0; j < n; j++) {
    pa_start[j] = q;
    for (uint32_t i = 0; i < n; i++) {
      adj[(size_t)i * n + j] = weight[(size_t)i * n + j] != 0.0f;
      if (!adj[(size_t)i * n + j]) continue;
      pa_idx[q] = i;
      pa_w[q] = weight[(size_t)i * n + j];
      het_w[q] = (float)tc_rng_range(&r, -1, 1);
      q++;
    }
    scale[j] = (float)tc_rng_range(&r, 0.5, 1.5);
    het_c[j] = (float)tc_rng_range(&r, -0.5, 0.5);
    target[j] = (uint16_t)j;
    kind[j] = TWINCACHE_DO;
    value[j] = (float)tc_rng_range(&r, -3, 3);
  }
  pa_start[n] = q;
  tc_scm m = {.n = n, .noise = TWINCACHE_NOISE_GAUSS, .adj = adj, .ld_adj = n, .order = ord,
              .pa_start = pa_start, .pa_idx = pa_idx, .pa_w = pa_w, .noise_scale = scale,
              .het_w = hetero ? het_w : NULL, .het_c = hetero ? het_c : NULL, .n_inter = n,
              .target = target, .kind = kind, .value = value};
  tc_scm_sampler *sp = tc_scm_sampler_create(n, S);
  TC_REQUIRE(sp != NULL);
  tc_scm_noise_fresh(sp, &m, S, key);
  tc_scm_sample_base(sp, &m, S, out, n, NULL, NULL);
  for (uint32_t k = 0; k < n; k++) {
    tc_scm_twin(sp, &m, k, S, NULL);
    tc_scm_twin_rows(sp, &m, k, S, out, n, out + (size_t)(k + 1) * S * n, n);
  }
  tc_scm_sampler_free(sp);
}

int main(void) {
  tc_scm_set_simd(1);
  if (!tc_scm_simd) {
    printf("test_scm_noise_simd: no SIMD path on this CPU: skipped\n");
    return 77;
  }
  static const uint32_t rows[] = {1, 7, 8, 9, 15, 16, 63, 64, 65, 800};
  static const uint32_t nodes[] = {1, 2, 7, 10, 30, TWINCACHE_MAX_NODES};
  const size_t cap = (size_t)800 * TWINCACHE_MAX_NODES;
  float *simd = malloc(cap * sizeof(float)), *scalar = malloc(cap * sizeof(float)),
        *scale = malloc(TWINCACHE_MAX_NODES * sizeof(float));
  uint64_t *row_key = malloc(800 * sizeof(uint64_t));
  TC_REQUIRE(simd && scalar && scale && row_key);
  tc_rng r;
  tc_rng_init(&r, 17, 0);
  for (uint32_t j = 0; j < TWINCACHE_MAX_NODES; j++) /* +-[0.5, 1.5), a few far off */
    scale[j] = (float)((j % 2 ? -1.0 : 1.0) * (j % 97 == 5 ? 1e30 : 0.5 + tc_rng_uniform(&r)));
  uint64_t cells = 0;
  for (int code = 0; code < TWINCACHE_NOISE_COUNT; code++)
    for (size_t a = 0; a < sizeof rows / sizeof rows[0]; a++)
      for (size_t b = 0; b < sizeof nodes / sizeof nodes[0]; b++)
        for (uint64_t t = 0; t < 3; t++) {
          const uint32_t S = rows[a], n = nodes[b];
          const uint64_t key = tc_mix64(t * 1000003u + S * 131u + n);
          const size_t bytes = (size_t)n * S * sizeof(float);
          memset(simd, 0xa5, bytes);
          memset(scalar, 0x5a, bytes);
          tc_scm_set_simd(1);
          tc_scm_noise_get(code)->fresh(simd, scale, n, S, key, row_key);
          tc_scm_set_simd(0);
          tc_scm_noise_get(code)->fresh(scalar, scale, n, S, key, row_key);
          TC_CHECK(memcmp(simd, scalar, bytes) == 0, "noise %d, S %u, n %u, key %llu: the SIMD fill differs",
                   code, S, n, (unsigned long long)key);
          cells += (uint64_t)n * S;
        }
  printf("test_scm_noise_simd: %llu noise cells compared\n", (unsigned long long)cells);
  uint64_t values = 0;
  for (uint32_t n = 1; n <= 40; n += 3)
    for (uint32_t a = 0; a < sizeof rows / sizeof rows[0]; a++)
      for (int hetero = 0; hetero < 2; hetero++) {
        const uint32_t S = rows[a];
        const size_t count = (size_t)(n + 1) * S * n;
        float *w1 = malloc(count * sizeof(float)), *w0 = malloc(count * sizeof(float));
        TC_REQUIRE(w1 && w0);
        tc_scm_set_simd(1);
        worlds(n, S, 1000u * n + S + (uint64_t)hetero, hetero, w1);
        tc_scm_set_simd(0);
        worlds(n, S, 1000u * n + S + (uint64_t)hetero, hetero, w0);
        TC_CHECK(memcmp(w1, w0, count * sizeof(float)) == 0, "worlds of n %u, S %u, hetero %d: the SIMD sums differ",
                 n, S, hetero);
        values += count;
        free(w1);
        free(w0);
      }
  printf("test_scm_noise_simd: %llu world values compared\n", (unsigned long long)values);
  free(simd);
  free(scalar);
  free(scale);
  free(row_key);
  return tc_test_finish("test_scm_noise_simd");
}
