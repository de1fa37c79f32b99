/* noise_uniform.c — the uniform noise on [-1, 1): tc_rng_range(-1, 1) on
 * the stream; fresh, the same transform of the cell's first draw. */
#include "tc_scm_noise.h"

static inline double uniform_stream(tc_rng *r) { return tc_rng_range(r, -1.0, 1.0); }

static inline double uniform_cell(uint64_t bits, uint64_t row_key, uint32_t j) {
  (void)row_key, (void)j;
  return tc_math_uniform_cell(bits);
}

TC_SCM_NOISE_DEFINE(uniform, TWINCACHE_NOISE_UNIFORM, uniform_stream, uniform_cell);
