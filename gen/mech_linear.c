/* mech_linear.c — the linear mechanism: x_j = sum_i w_ij x_i + noise.
 * |w_ij| uniform in --weights [LO, HI), sign +-1 with probability 1/2, drawn
 * per edge in (j ascending, parent i ascending) order. */
#include "tc_gen_mech.h"

static uint32_t linear_hidden(const tc_gen_config *c) {
  (void)c;
  return 0;
}

static void linear_draw_node(const tc_gen_config *c, tc_gen_params *p, uint32_t j, tc_rng *rw) {
  uint32_t n = p->n;
  for (uint32_t q = p->pa_start[j]; q < p->pa_start[j + 1]; q++) {
    float wt = (float)tc_gen_signed_range(rw, c->weight_min, c->weight_max);
    p->g->weight[(size_t)p->pa_idx[q] * n + j] = wt;
    p->pa_w[q] = wt;
  }
}

const tc_gen_mech tc_gen_mech_linear = {TWINCACHE_MECH_LINEAR, linear_hidden, tc_gen_mech_check_weights,
                                        linear_draw_node};
