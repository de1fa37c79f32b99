/* inter_soft.c — the soft intervention: the target keeps its exogenous
 * draw e_t, its noise scale (and, with --hetero, its noise factor), its
 * mechanism is replaced by one drawn anew from the target's own mechanism
 * (the cache's, or the node's component in a mixture) through the mechanism
 * table's draw_node: linear weights in --weights with random signs, or a
 * unit block (MLP, RFF, sigmoid, poly), stored in the frame (format
 * version 4, FORMAT.md 3.2 section 7a). The value is 0; --values and
 * --value-dist do not apply, except on a root, which has no weight to
 * redraw: there the world also multiplies the root's noise term by a drawn
 * factor (stored in the block's entry t) and adds a drawn mean (the value,
 * as a shift's). */
#include <math.h>
#include <string.h>

#include "tc_gen_inter.h"

static int soft_check(const tc_gen_config *c, tc_gen_refusal *bad) {
  const tc_gen_mech *m = tc_gen_mech_get(c->mechanism);
  if (m && m->code != TWINCACHE_MECH_MIXED && !m->draw_node)
    return tc_gen_refuse(bad, "--intervention", "soft: the mechanism draws no node alone");
  for (uint32_t k = 0; m && m->code == TWINCACHE_MECH_MIXED && k < c->n_mechs; k++) {
    const tc_gen_mech *mk = tc_gen_mech_get(c->mechs[k]);
    if (mk && !mk->draw_node)
      return tc_gen_refuse(bad, "--intervention", "soft: a mixture component draws no node alone");
  }
  if (c->targets_per_world_max > 1)
    return tc_gen_refuse(bad, "--targets-per-world", "a soft intervention has one target");
  return TWINCACHE_OK;
}

/* The new parameters of node t into soft (twincache_soft_stride floats,
 * +0.0 on non-parents): draw_node writes node t's parameters into the
 * graph, so the graph's are kept in soft meanwhile and swapped back. A
 * linear node's weights go to soft[parent] (in a mixture the rest of the
 * block stays +0.0), another node's block to soft[0 .. H*n+2H). */
static float soft_draw(const tc_gen_config *c, const tc_gen_params *cp, uint32_t t, float *soft,
                       tc_rng *ri) {
  tc_gen_params p = *cp;
  const uint32_t n = p.n, H = p.hidden;
  const int mech = c->mechanism == TWINCACHE_MECH_MIXED ? p.node_mech[t] : c->mechanism;
  const tc_gen_mech *m = tc_gen_mech_get(mech); /* checked by tc_gen_config_check */
  memset(soft, 0, (size_t)twincache_soft_stride(n, H, c->mechanism) * sizeof(float));
  if (mech == TWINCACHE_MECH_LINEAR) {
    float *wt = p.g->weight;
    for (uint32_t q = p.pa_start[t]; q < p.pa_start[t + 1]; q++) {
      size_t at = (size_t)p.pa_idx[q] * n + t;
      soft[p.pa_idx[q]] = wt[at];
      wt[at] = 0.0f;
      p.pa_w[q] = 0.0f;
    }
    m->draw_node(c, &p, t, ri);
    for (uint32_t q = p.pa_start[t]; q < p.pa_start[t + 1]; q++) {
      size_t at = (size_t)p.pa_idx[q] * n + t;
      float old = soft[p.pa_idx[q]];
      soft[p.pa_idx[q]] = wt[at];
      wt[at] = p.pa_w[q] = old;
    }
  } else {
    const size_t stride = (size_t)H * n + 2u * H;
    float *blk = p.g->mlp + (size_t)t * stride;
    memcpy(soft, blk, stride * sizeof(float));
    memset(blk, 0, stride * sizeof(float));
    m->draw_node(c, &p, t, ri);
    for (size_t i = 0; i < stride; i++) {
      float old = soft[i];
      soft[i] = blk[i];
      blk[i] = old;
    }
  }
  if (p.pa_start[t] == p.pa_start[t + 1]) {
    /* a root has no weight to redraw (a linear or additive one nothing at
     * all): its noise scale times a factor 2^u, u ~ U[-1, 1) (entry t of the
     * block, the weight of no edge), and a new mean, the value, drawn as a
     * shift's (FORMAT.md 3.6) */
    soft[t] = (float)exp2(tc_rng_range(ri, -1.0, 1.0));
    return tc_gen_inter_signed_value(c, cp, t, soft, ri);
  }
  return 0.0f;
}

const tc_gen_inter tc_gen_inter_soft = {TWINCACHE_INTER_SOFT, soft_check, soft_draw, NULL, NULL};
