/* noise_cauchy.c — the standard Cauchy noise (location 0, scale 1; no mean,
 * no variance). */
#include "tc_scm_noise.h"

/* By inversion: tan(pi (u - 1/2)), u in (0, 1) (u = 0 is moved to 2^-54 so
 * no draw is infinite). */
static inline double cauchy_stream(tc_rng *r) {
  double u = tc_rng_uniform(r);
  if (u <= 0.0) u = 0x1p-54;
  return tan(3.14159265358979323846 * (u - 0.5));
}

/* Fresh: the ratio of two standard normals (fresh ziggurats, the first from
 * the cell's first draw, the rest from its own stream): no tan needed. */
static inline double cauchy_cell(uint64_t bits, uint64_t row_key, uint32_t j) {
  return tc_math_cauchy_cell(bits, row_key, j, tc_scm_zig_x, tc_scm_zig_ratio);
}

TC_SCM_NOISE_DEFINE(cauchy, TWINCACHE_NOISE_CAUCHY, cauchy_stream, cauchy_cell);
