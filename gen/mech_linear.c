/* mech_linear.c — the linear mechanism: x_j = sum_i w_ij x_i + noise.
 * |w_ij| uniform in --weights [LO, HI), sign +-1 with probability 1/2, drawn
 * per edge in (j ascending, parent i ascending) order. */
#include <string.h>

#include "tc_gen_mech.h"

static uint32_t linear_hidden(const tc_gen_config *c) {
  (void)c;
  return 0;
}

static int linear_check(const tc_gen_config *c, const char **flag) {
  if (!(c->weight_min >= 0.0 && c->weight_max >= c->weight_min && c->weight_max < 1e6))
    return *flag = "--weights", TWINCACHE_EINVAL;
  return TWINCACHE_OK;
}

static void linear_draw(const tc_gen_config *c, tc_gen_params *p, tc_rng *rw) {
  uint32_t n = p->n;
  memset(p->g->weight, 0, (size_t)n * n * sizeof(float));
  for (uint32_t j = 0; j < n; j++)
    for (uint32_t q = p->pa_start[j]; q < p->pa_start[j + 1]; q++) {
      double mag = tc_rng_range(rw, c->weight_min, c->weight_max);
      float wt = (float)((tc_rng_u64(rw) >> 63) ? -mag : mag);
      p->g->weight[(size_t)p->pa_idx[q] * n + j] = wt;
      p->pa_w[q] = wt;
    }
}

/* out (n): the weight of parent i of j at out[i], parents ascending */
static void linear_node(const tc_gen_config *c, const tc_gen_params *p, uint32_t j, float *out, tc_rng *r) {
  memset(out, 0, (size_t)p->n * sizeof(float));
  for (uint32_t q = p->pa_start[j]; q < p->pa_start[j + 1]; q++) {
    double mag = tc_rng_range(r, c->weight_min, c->weight_max);
    out[p->pa_idx[q]] = (float)((tc_rng_u64(r) >> 63) ? -mag : mag);
  }
}

const tc_gen_mech tc_gen_mech_linear = {TWINCACHE_MECH_LINEAR, linear_hidden, linear_check, linear_draw,
                                        linear_node};
