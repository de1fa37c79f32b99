/* test_scm_noise_simd — every noise family's fresh fill gives the same bits
 * with the SIMD path (AVX-512, where the CPU has it) as the scalar path, for
 * row counts around the vector width and past it, node counts up to the
 * format's limit, scales of every sign and size, and enough cells that the
 * ziggurat's slow path (~1% of normals) runs thousands of times. Exit 77
 * when the CPU has no SIMD path to compare. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_scm_noise.h"
#include "tc_test.h"

int main(void) {
  tc_scm_noise_set_simd(1);
  if (!tc_scm_noise_simd) {
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
          tc_scm_noise_set_simd(1);
          tc_scm_noise_get(code)->fresh(simd, scale, n, S, key, row_key);
          tc_scm_noise_set_simd(0);
          tc_scm_noise_get(code)->fresh(scalar, scale, n, S, key, row_key);
          TC_CHECK(memcmp(simd, scalar, bytes) == 0, "noise %d, S %u, n %u, key %llu: the SIMD fill differs",
                   code, S, n, (unsigned long long)key);
          cells += (uint64_t)n * S;
        }
  printf("test_scm_noise_simd: %llu cells compared\n", (unsigned long long)cells);
  free(simd);
  free(scalar);
  free(scale);
  free(row_key);
  return tc_test_finish("test_scm_noise_simd");
}
