/* mech_poly.c — the additive quadratic mechanism (FORMAT.md 3.6):
 * x_j = sum_{i in pa(j)} a_i clamp(s_i x_i + b_i, -4, 4)^2 + noise: within
 * the clamp, a degree-2 polynomial of each parent (a_i s_i^2 x_i^2 +
 * 2 a_i s_i b_i x_i + a_i b_i^2); the clamp keeps deep graphs finite (an
 * unclamped square squares magnitudes at every level). One unit per parent
 * in the block layout: unit u (u-th parent i, ascending) has W1[u][i] = s_i,
 * b1[u] = b_i, w2[u] = a_i; units past |pa(j)| are all zero. Per node j
 * ascending, per parent ascending: |s_i| ~ U[0.5, 1.5) and its sign,
 * b_i ~ U[-1, 1), |a_i| ~ U[0.5, 1.5)/sqrt(|pa(j)|) and its sign. H =
 * min(nodes_max - 1, 64) (at least 1), so --nodes is at most 65. Linear
 * weights stay 0. */
#include <math.h>

#include "tc_gen_mech.h"

static int poly_check(const tc_gen_config *c, tc_gen_refusal *bad) {
  return tc_gen_mech_check_unit_per_parent(c, bad, "poly: one unit per parent, at most 65 nodes");
}

static void poly_draw_node(const tc_gen_config *c, tc_gen_params *p, uint32_t j, tc_rng *rw) {
  (void)c;
  uint32_t n = p->n, h_n = p->hidden;
  float *blk = p->g->mlp + (size_t)j * (h_n * n + 2 * h_n);
  uint32_t npa = p->pa_start[j + 1] - p->pa_start[j];
  double sa = 1.0 / sqrt(npa ? (double)npa : 1.0);
  for (uint32_t q = p->pa_start[j]; q < p->pa_start[j + 1]; q++) {
    uint32_t u = q - p->pa_start[j];
    double s = tc_gen_signed_range(rw, 0.5, 1.5), b = tc_rng_range(rw, -1.0, 1.0);
    double a = sa * tc_gen_signed_range(rw, 0.5, 1.5);
    blk[(size_t)u * n + p->pa_idx[q]] = (float)s;
    blk[(size_t)h_n * n + u] = (float)b;
    blk[(size_t)h_n * n + h_n + u] = (float)a;
  }
}

const tc_gen_mech tc_gen_mech_poly = {TWINCACHE_MECH_POLY, tc_gen_mech_unit_per_parent, poly_check, poly_draw_node,
                                      NULL, NULL, NULL};
