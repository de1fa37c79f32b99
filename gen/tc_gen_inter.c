/* tc_gen_inter.c — the dispatch table of the intervention kinds. */
#include "tc_gen_inter.h"

extern const tc_gen_inter tc_gen_inter_do, tc_gen_inter_shift, tc_gen_inter_noise, tc_gen_inter_soft;

/* One row per kind, indexed by its code (enum twincache_inter_kind). */
static const tc_gen_inter *const k_inters[] = {
    [TWINCACHE_DO] = &tc_gen_inter_do,
    [TWINCACHE_SHIFT] = &tc_gen_inter_shift,
    [TWINCACHE_INTER_NOISE] = &tc_gen_inter_noise,
    [TWINCACHE_INTER_SOFT] = &tc_gen_inter_soft,
};
/* closed: a new code in enum twincache_inter_kind (and names.c) fails here
 * until its row exists */
_Static_assert(sizeof k_inters / sizeof k_inters[0] == TWINCACHE_INTER_KIND_COUNT,
               "one row per enum twincache_inter_kind");

const tc_gen_inter *tc_gen_inter_get(int code) {
  if (code < 0 || code >= (int)(sizeof k_inters / sizeof k_inters[0])) return NULL;
  return k_inters[code];
}

float tc_gen_inter_signed_value(const tc_gen_config *c, const tc_gen_params *p, uint32_t target, float *soft,
                                tc_rng *ri) {
  (void)p, (void)target, (void)soft;
  double v = tc_rng_range(ri, c->value_min, c->value_max);
  if (c->value_dist == TC_VALUES_SIGNED && (tc_rng_u64(ri) >> 63)) v = -v;
  return (float)v;
}
