/* tc_toy_scm.h — the toy SCM graph sampler shared by the tests: a random DAG
 * with signed edge weights, drawn from a tc_rng stream. The format tests
 * (tests/format/tf_common.h, tf_sample) and the train tests
 * (tests/train/tc_synth.h, tc_synth_make) build their mechanisms, noise and
 * worlds on it. Header-only; needs tc_common.h (tc_rng). */
#ifndef TC_TOY_SCM_H
#define TC_TOY_SCM_H

#include <stddef.h>
#include <stdint.h>

#include "tc_common.h"

/* Draws a DAG on n nodes from r, in this order (the callers' expected values
 * depend on it):
 *  1. ord (n): a uniformly random topological order (Fisher-Yates, one
 *     tc_rng_below per position from the end);
 *  2. for every pair a < b of positions in ord, in row order: an edge
 *     ord[a] -> ord[b] with probability p_edge (one tc_rng_uniform), and for
 *     an edge its weight: magnitude U[w_lo, w_hi) (one tc_rng_range), then
 *     its sign (one tc_rng_below(2): 1 = positive).
 * weight (n, ld), row = parent, col = child: each edge's weight is stored
 * there as float (w_lo > 0, so an edge is exactly a non-zero entry); other
 * entries are left as they are (callers zero them first). */
static inline void tc_toy_scm_dag(tc_rng *r, uint32_t n, double p_edge, double w_lo, double w_hi,
                                  uint32_t *ord, float *weight, size_t ld) {
  for (uint32_t i = 0; i < n; i++) ord[i] = i;
  for (uint32_t i = n; i > 1; i--) {
    uint32_t j = tc_rng_below(r, i), t = ord[i - 1];
    ord[i - 1] = ord[j];
    ord[j] = t;
  }
  for (uint32_t a = 0; a < n; a++)
    for (uint32_t b = a + 1; b < n; b++)
      if (tc_rng_uniform(r) < p_edge) {
        double w = tc_rng_range(r, w_lo, w_hi);
        weight[(size_t)ord[a] * ld + ord[b]] = (float)(tc_rng_below(r, 2) ? w : -w);
      }
}

#endif /* TC_TOY_SCM_H */
