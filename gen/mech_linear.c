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

static void linear_defaults(tc_gen_config *c) {
  c->weight_min = 0.5;
  c->weight_max = 2.0;
}

static size_t linear_options(tc_gen_config *c, tc_opt *o) {
  o[0] = (tc_opt){.name = "--weights", .meta = "LO:HI", .kind = TC_OPT_F64_PAIR, .dst = &c->weight_min,
                  .dst2 = &c->weight_max, .fhi = 1e6, .open = TC_OPEN_HI,
                  .help = "linear weights +-[LO,HI), random sign (default {})"};
  return 1;
}

/* weight_min, weight_max: fixed keys of every config (also a soft
 * intervention's redrawn linear node reads them) */
const tc_gen_mech tc_gen_mech_linear = {TWINCACHE_MECH_LINEAR, linear_hidden, tc_gen_mech_check_weights,
                                        linear_draw_node, linear_defaults, NULL, linear_options};
