/* inter_noise.c — the noise intervention: the target keeps its mechanism
 * and its exogenous draw e_t, its noise term is scaled by v:
 * x_t = f_t(pa) + v * (noise_scale[t] * e_t) (format version 4). v, the
 * factor, is uniform in --values [LO, HI) with LO >= 0; no sign is drawn
 * (--value-dist does not apply). */
#include "tc_gen_inter.h"

static int noise_check(const tc_gen_config *c, tc_gen_refusal *bad) {
  if (!(c->value_min >= 0.0)) return tc_gen_refuse(bad, "--values", "a noise intervention's factor: LO >= 0");
  return TWINCACHE_OK;
}

static float noise_draw(const tc_gen_config *c, const tc_gen_params *p, uint32_t target, float *soft,
                        tc_rng *ri) {
  (void)p, (void)target, (void)soft;
  return (float)tc_rng_range(ri, c->value_min, c->value_max);
}

const tc_gen_inter tc_gen_inter_noise = {TWINCACHE_INTER_NOISE, noise_check, noise_draw, NULL, NULL}; /* --values: inter_do.c */
