/* noise_gauss.c — the standard normal noise (FORMAT.md 3.6): the ziggurat
 * on the stream; fresh, its fast path on the cell's first draw and, past it
 * (~1%), the rest of the ziggurat with scm's log and exp on the cell's own
 * stream. */
#include "tc_scm_noise.h"

static inline double gauss_stream(tc_rng *r) { return tc_scm_zig_normal(tc_rng_u64(r), r, 0); }

static inline double gauss_cell(uint64_t bits, uint64_t row_key, uint32_t j) {
  const tc_scm_zig_layer *z = &tc_scm_zig_fast[bits & 0xff]; /* the fast path, as tc_scm_zig_normal */
  double u = tc_scm_signed_of(bits);
  if (fabs(u) < z->ratio) return u * z->x;
  tc_rng more = tc_scm_cell_stream(row_key, j); /* made only when needed */
  return tc_scm_zig_normal_slow(bits, &more, 1);
}

TC_SCM_NOISE_DEFINE(gauss, TWINCACHE_NOISE_GAUSS, gauss_stream, gauss_cell);
