/* mech_mlp.c — the MLP mechanism: x_j = sum_h w2[h] tanh(W1[h] . x + b1[h])
 * + noise, H = --mlp-hidden units, no output bias (FORMAT.md 3.6). Per node
 * j (ascending): W1 ~ N(0, A^2/|pa|) on parent columns (h, then parent
 * ascending), b1 ~ N(0, (A/2)^2), w2 ~ N(0, 1/H), with A = --mlp-scale: each
 * mechanism's output stays O(1) whatever the in-degree, and A moves the
 * tanh units from their linear middle (A small) into saturation with kinks
 * spread over the parents' range (A large). Linear weights stay 0 (the
 * frame's 4*E zero bytes). */
#include <math.h>
#include <string.h>

#include "tc_gen_mech.h"

static uint32_t mlp_hidden(const tc_gen_config *c) { return c->mlp_hidden; }

static int mlp_check(const tc_gen_config *c, const char **flag) {
  if (!(c->weight_min >= 0.0 && c->weight_max >= c->weight_min && c->weight_max < 1e6))
    return *flag = "--weights", TWINCACHE_EINVAL; /* unused here, but part of the config */
  if (c->mlp_hidden < 1 || c->mlp_hidden > TWINCACHE_MAX_HIDDEN) return *flag = "--mlp-hidden", TWINCACHE_EINVAL;
  if (!(c->mlp_scale > 0.0 && c->mlp_scale <= 1000.0)) return *flag = "--mlp-scale", TWINCACHE_EINVAL;
  return TWINCACHE_OK;
}

/* Node j's block (H*n + 2H) into blk: W1 (h, then parent ascending), b1, w2. */
static void mlp_node(const tc_gen_config *c, const tc_gen_params *p, uint32_t j, float *blk, tc_rng *rw) {
  uint32_t n = p->n, h_n = p->hidden, stride = h_n * n + 2 * h_n;
  uint32_t npa = p->pa_start[j + 1] - p->pa_start[j];
  double s1 = c->mlp_scale / sqrt(npa ? (double)npa : 1.0), s2 = 1.0 / sqrt((double)h_n);
  double sb = 0.5 * c->mlp_scale;
  memset(blk, 0, (size_t)stride * sizeof(float));
  for (uint32_t h = 0; h < h_n; h++)
    for (uint32_t k = p->pa_start[j]; k < p->pa_start[j + 1]; k++)
      blk[(size_t)h * n + p->pa_idx[k]] = (float)(s1 * tc_rng_normal(rw));
  for (uint32_t h = 0; h < h_n; h++) blk[(size_t)h_n * n + h] = (float)(sb * tc_rng_normal(rw));
  for (uint32_t h = 0; h < h_n; h++) blk[(size_t)h_n * n + h_n + h] = (float)(s2 * tc_rng_normal(rw));
}

static void mlp_draw(const tc_gen_config *c, tc_gen_params *p, tc_rng *rw) {
  uint32_t n = p->n, h_n = p->hidden, stride = h_n * n + 2 * h_n;
  memset(p->g->weight, 0, (size_t)n * n * sizeof(float));
  for (uint32_t q = 0; q < p->pa_start[n]; q++) p->pa_w[q] = 0.0f;
  for (uint32_t j = 0; j < n; j++) mlp_node(c, p, j, p->g->mlp + (size_t)j * stride, rw);
}

const tc_gen_mech tc_gen_mech_mlp = {TWINCACHE_MECH_MLP, mlp_hidden, mlp_check, mlp_draw, mlp_node};
