/* noise_laplace.c — the standard Laplace noise (location 0, scale 1):
 * tc_rng_laplace on the stream; fresh, its transform of the cell's first
 * draw with scm's log. */
#include "tc_scm_noise.h"

static inline double laplace_stream(tc_rng *r) { return tc_rng_laplace(r); }

static inline double laplace_cell(uint64_t bits, uint64_t row_key, uint32_t j) {
  (void)row_key, (void)j;
  double u = tc_scm_uniform_of(bits) - 0.5;
  double a = 1.0 - 2.0 * fabs(u);
  if (a <= 0.0) a = 1e-300;
  return (u < 0 ? 1.0 : -1.0) * tc_scm_fresh_log(a);
}

TC_SCM_NOISE_DEFINE(laplace, TWINCACHE_NOISE_LAPLACE, laplace_stream, laplace_cell);
