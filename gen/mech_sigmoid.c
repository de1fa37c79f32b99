/* mech_sigmoid.c — the additive sigmoid mechanism (FORMAT.md 3.6; CDT's
 * "sigmoid_add"): x_j = sum_{i in pa(j)} a_i sigmoid(s_i (x_i - c_i)) + noise,
 * one unit per parent in the block layout: unit u (u-th parent i,
 * ascending) has W1[u][i] = s_i, b1[u] = -s_i c_i, w2[u] = a_i; units past
 * |pa(j)| are all zero. Per node j ascending, per parent ascending: |s_i| ~
 * U[1, 3) and its sign, c_i ~ U[-1, 1), |a_i| ~ U[1, 3) and its sign. H =
 * min(nodes_max - 1, 64) (at least 1), so --nodes is at most 65. Linear
 * weights stay 0. */
#include "tc_gen_mech.h"

static int sigmoid_check(const tc_gen_config *c, tc_gen_refusal *bad) {
  return tc_gen_mech_check_unit_per_parent(c, bad, "sigmoid: one unit per parent, at most 65 nodes");
}

static void sigmoid_draw_node(const tc_gen_config *c, tc_gen_params *p, uint32_t j, tc_rng *rw) {
  (void)c;
  uint32_t n = p->n, h_n = p->hidden;
  float *blk = p->g->mlp + (size_t)j * (h_n * n + 2 * h_n);
  for (uint32_t q = p->pa_start[j]; q < p->pa_start[j + 1]; q++) {
    uint32_t u = q - p->pa_start[j];
    double s = tc_gen_signed_range(rw, 1.0, 3.0), centre = tc_rng_range(rw, -1.0, 1.0);
    double a = tc_gen_signed_range(rw, 1.0, 3.0);
    blk[(size_t)u * n + p->pa_idx[q]] = (float)s;
    blk[(size_t)h_n * n + u] = (float)(-s * centre);
    blk[(size_t)h_n * n + h_n + u] = (float)a;
  }
}

const tc_gen_mech tc_gen_mech_sigmoid = {TWINCACHE_MECH_SIGMOID, tc_gen_mech_unit_per_parent, sigmoid_check, sigmoid_draw_node,
                                         NULL, NULL, NULL};
