/* noise_gumbel.c — the standard Gumbel noise (of maxima; location 0, scale
 * 1), by inversion: -log(-log u), u in (0, 1) (u = 0 is moved to 2^-54);
 * libm's log on the stream, scm's on the fresh cell's first draw. */
#include "tc_scm_noise.h"

static inline double gumbel_stream(tc_rng *r) {
  double u = tc_rng_uniform(r);
  if (u <= 0.0) u = 0x1p-54;
  return -log(-log(u));
}

static inline double gumbel_cell(uint64_t bits, uint64_t row_key, uint32_t j) {
  (void)row_key, (void)j;
  return tc_math_gumbel_cell(bits);
}

TC_SCM_NOISE_DEFINE(gumbel, TWINCACHE_NOISE_GUMBEL, gumbel_stream, gumbel_cell);
