/* tc_gen_mech.c — the dispatch table of the mechanisms. */
#include "tc_gen_mech.h"

extern const tc_gen_mech tc_gen_mech_linear, tc_gen_mech_mlp, tc_gen_mech_rff, tc_gen_mech_sigmoid,
    tc_gen_mech_poly, tc_gen_mech_mixed;

/* One row per mechanism, indexed by its code (enum twincache_mechanism). */
static const tc_gen_mech *const k_mechs[] = {
    [TWINCACHE_MECH_LINEAR] = &tc_gen_mech_linear,
    [TWINCACHE_MECH_MLP] = &tc_gen_mech_mlp,
    [TWINCACHE_MECH_RFF] = &tc_gen_mech_rff,
    [TWINCACHE_MECH_SIGMOID] = &tc_gen_mech_sigmoid,
    [TWINCACHE_MECH_POLY] = &tc_gen_mech_poly,
    [TWINCACHE_MECH_MIXED] = &tc_gen_mech_mixed,
};
/* closed: a new code in enum twincache_mechanism (and names.c) fails here
 * until its row exists */
_Static_assert(sizeof k_mechs / sizeof k_mechs[0] == TWINCACHE_MECH_COUNT, "one row per enum twincache_mechanism");

const tc_gen_mech *tc_gen_mech_get(int code) {
  if (code < 0 || code >= (int)(sizeof k_mechs / sizeof k_mechs[0])) return NULL;
  return k_mechs[code];
}

int tc_gen_mech_check_weights(const tc_gen_config *c, tc_gen_refusal *bad) {
  if (!(c->weight_min >= 0.0 && c->weight_max >= c->weight_min && c->weight_max < 1e6))
    return tc_gen_refuse(bad, "--weights", NULL);
  return TWINCACHE_OK;
}

uint32_t tc_gen_mech_unit_per_parent(const tc_gen_config *c) { return c->nodes_max > 1 ? c->nodes_max - 1 : 1; }

int tc_gen_mech_check_unit_per_parent(const tc_gen_config *c, tc_gen_refusal *bad, const char *why) {
  if (tc_gen_mech_check_weights(c, bad) != TWINCACHE_OK) return TWINCACHE_EINVAL;
  if (c->nodes_max > TWINCACHE_MAX_HIDDEN + 1) return tc_gen_refuse(bad, "--nodes", why);
  return TWINCACHE_OK;
}
