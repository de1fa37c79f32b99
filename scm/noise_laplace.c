/* noise_laplace.c — the standard Laplace noise (location 0, scale 1):
 * tc_rng_laplace on the stream; fresh, its transform of the cell's first
 * draw with scm's log. */
#include "tc_scm_noise.h"

static inline double laplace_stream(tc_rng *r) { return tc_rng_laplace(r); }

static inline double laplace_cell(uint64_t bits, uint64_t row_key, uint32_t j) {
  (void)row_key, (void)j;
  return tc_math_laplace_cell(bits);
}

TC_SCM_NOISE_DEFINE(laplace, TWINCACHE_NOISE_LAPLACE, laplace_stream, laplace_cell);
