/* inter_soft.c — the soft intervention: the target keeps its exogenous
 * draw e_t and its noise scale, its mechanism is replaced by one drawn anew
 * from the graph's mechanism (the mechanism table's draw_node: linear
 * weights in --weights with random signs, or an MLP block), stored in the
 * frame (format version 4, FORMAT.md 3.2 section 7a). The value is 0;
 * --values and --value-dist do not apply. */
#include "tc_gen_inter.h"

static int soft_check(const tc_gen_config *c, const char **flag) {
  const tc_gen_mech *m = tc_gen_mech_get(c->mechanism);
  if (m && !m->draw_node) return *flag = "--intervention (soft: the mechanism draws no node alone)", TWINCACHE_EINVAL;
  if (c->targets_per_world_max > 1) return *flag = "--targets-per-world (a soft intervention has one target)", TWINCACHE_EINVAL;
  return TWINCACHE_OK;
}

static float soft_draw(const tc_gen_config *c, const tc_gen_params *p, uint32_t target, float *soft,
                       tc_rng *ri) {
  tc_gen_mech_get(c->mechanism)->draw_node(c, p, target, soft, ri); /* checked by tc_gen_config_check */
  return 0.0f;
}

const tc_gen_inter tc_gen_inter_soft = {TWINCACHE_INTER_SOFT, soft_check, soft_draw};
