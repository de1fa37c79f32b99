/* mech_mixed.c — a per-node mixture of mechanisms (--mechanism
 * linear:0.5,mlp:0.3,rff:0.2; FORMAT.md 3.6): node j (ascending) draws its
 * mechanism from the weights with one tc_rng_uniform of the weights stream,
 * then that mechanism's parameters for node j (tc_gen_scm.c does both).
 * H is the largest H of the components (0 for linear), at least 1; each
 * component keeps its own unit count and options. */
#include "tc_gen_mech.h"

static uint32_t mixed_hidden(const tc_gen_config *c) {
  uint32_t h = 1;
  for (uint32_t k = 0; k < c->n_mechs; k++) {
    const tc_gen_mech *m = tc_gen_mech_get(c->mechs[k]);
    uint32_t hk = m ? m->hidden(c) : 0;
    if (hk > h) h = hk;
  }
  return h;
}

static int mixed_check(const tc_gen_config *c, tc_gen_refusal *bad) {
  if (c->n_mechs < 2 || c->n_mechs > TWINCACHE_MECH_MIXED) return tc_gen_refuse(bad, "--mechanism", NULL);
  for (uint32_t k = 0; k < c->n_mechs; k++) {
    const tc_gen_mech *m = c->mechs[k] < TWINCACHE_MECH_MIXED ? tc_gen_mech_get(c->mechs[k]) : NULL;
    if (!m) return tc_gen_refuse(bad, "--mechanism", NULL);
    if (!(c->mech_weights[k] > 0.0 && c->mech_weights[k] < TC_GEN_MAX_WEIGHT))
      return tc_gen_refuse(bad, "--mechanism", "a mixture weight must be > 0 and below 1e300");
    for (uint32_t q = 0; q < k; q++)
      if (c->mechs[q] == c->mechs[k]) return tc_gen_refuse(bad, "--mechanism", "a mechanism twice in the mixture");
    if (m->check && m->check(c, bad)) return TWINCACHE_EINVAL;
  }
  return TWINCACHE_OK;
}

const tc_gen_mech tc_gen_mech_mixed = {TWINCACHE_MECH_MIXED, mixed_hidden, mixed_check, NULL, NULL, NULL, NULL};
