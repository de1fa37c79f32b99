/* mech_mlp.c — the MLP mechanism: x_j = sum_h w2[h] tanh(W1[h] . x + b1[h])
 * + noise, H = --mlp-hidden units, no output bias (FORMAT.md 3.6). Per node
 * j (ascending), with A = --mlp-scale, B = --mlp-bias, G = --mlp-gain and
 * W = --mlp-bump: W1 ~ N(0, A^2/|pa|) on parent columns (h, then parent
 * ascending), b1 ~ N(0, (B*A)^2), w2 ~ N(0, G^2/H). A moves the units from
 * tanh's linear middle into saturation; B spreads their kinks over ~B parent
 * standard deviations; G sets the mechanism's size against the noise. With
 * W > 0 the units come in pairs (h, h+1), h even: unit h+1 copies unit h's
 * input row, has b1[h+1] = b1[h] - W*A and w2[h+1] = -w2[h] and draws no
 * random number, so the pair is a bump ~W parent standard deviations wide
 * that a line through the parents cannot follow (an odd H's last unit
 * stands alone). W = 0 with B = 1/2, G = 1 is the draw from before
 * these options, bit for bit. Linear weights stay 0 (the frame's 4*E zero
 * bytes). */
#include <math.h>

#include <stdio.h>

#include "tc_gen_mech.h"

/* The MLP's bias spread, output gain and bump width as drawn before those
 * options existed: a config with all three is written without their keys, so
 * such a cache keeps its identity (and its bytes, with --mlp-scale 4). */
#define MLP_BIAS_V1 0.5
#define MLP_GAIN_V1 1.0
#define MLP_BUMP_V1 0.0

static uint32_t mlp_hidden(const tc_gen_config *c) { return c->mlp_hidden; }

static int mlp_check(const tc_gen_config *c, tc_gen_refusal *bad) {
  if (tc_gen_mech_check_weights(c, bad) != TWINCACHE_OK) return TWINCACHE_EINVAL; /* unused here, but part of the config */
  if (c->mlp_hidden < 1 || c->mlp_hidden > TWINCACHE_MAX_HIDDEN) return tc_gen_refuse(bad, "--mlp-hidden", NULL);
  if (!(c->mlp_scale > 0.0 && c->mlp_scale <= 1000.0)) return tc_gen_refuse(bad, "--mlp-scale", NULL);
  if (!(c->mlp_bias >= 0.0 && c->mlp_bias <= 1000.0)) return tc_gen_refuse(bad, "--mlp-bias", NULL);
  if (!(c->mlp_bump >= 0.0 && c->mlp_bump <= 1000.0)) return tc_gen_refuse(bad, "--mlp-bump", NULL);
  if (!(c->mlp_gain > 0.0 && c->mlp_gain <= 1000.0)) return tc_gen_refuse(bad, "--mlp-gain", NULL);
  return TWINCACHE_OK;
}

static void mlp_draw_node(const tc_gen_config *c, tc_gen_params *p, uint32_t j, tc_rng *rw) {
  uint32_t n = p->n, H = p->hidden, units = c->mlp_hidden;
  float *blk = p->g->mlp + (size_t)j * (H * n + 2 * H);
  uint32_t npa = p->pa_start[j + 1] - p->pa_start[j];
  double s1 = c->mlp_scale / sqrt(npa ? (double)npa : 1.0), s2 = c->mlp_gain / sqrt((double)units);
  double sb = c->mlp_bias * c->mlp_scale;
  double wb = c->mlp_bump * c->mlp_scale;
  /* with bumps, unit h+1 (h even) copies unit h's input row, sits wb further
   * along it and takes the opposite output weight: w2 (tanh(z+b) - tanh(z+b-wb)) */
#define PAIRED(h_) (wb > 0.0 && ((h_) & 1u) && (h_) < (units & ~1u))
  for (uint32_t h = 0; h < units; h++)
    for (uint32_t k = p->pa_start[j]; k < p->pa_start[j + 1]; k++)
      blk[(size_t)h * n + p->pa_idx[k]] =
          PAIRED(h) ? blk[(size_t)(h - 1) * n + p->pa_idx[k]] : (float)(s1 * tc_rng_normal(rw));
  for (uint32_t h = 0; h < units; h++)
    blk[(size_t)H * n + h] = PAIRED(h) ? (float)(blk[(size_t)H * n + h - 1] - wb) : (float)(sb * tc_rng_normal(rw));
  for (uint32_t h = 0; h < units; h++)
    blk[(size_t)H * n + H + h] = PAIRED(h) ? -blk[(size_t)H * n + H + h - 1] : (float)(s2 * tc_rng_normal(rw));
#undef PAIRED
}

static void mlp_defaults(tc_gen_config *c) {
  c->mlp_hidden = 8;
  c->mlp_scale = 4.0;
  c->mlp_bias = 2.0; /* the MLP default of issue 18: linear share ~0.3 (FORMAT.md 3.6) */
  c->mlp_gain = 3.0;
  c->mlp_bump = 0.5;
}

/* mlp_hidden, mlp_scale (and mlp_tanh) are fixed keys; these three only off
 * the first draw's values, so a cache drawn as before keeps its identity */
static int mlp_identity(const tc_gen_config *c, char *buf, size_t cap) {
  if (c->mlp_bias == MLP_BIAS_V1 && c->mlp_gain == MLP_GAIN_V1 && c->mlp_bump == MLP_BUMP_V1) return 0;
  int w = snprintf(buf, cap, ",\"mlp_bias\":%.17g,\"mlp_gain\":%.17g,\"mlp_bump\":%.17g", c->mlp_bias, c->mlp_gain,
                   c->mlp_bump);
  return w >= 0 && (size_t)w < cap ? w : -1;
}

static size_t mlp_options(tc_gen_config *c, tc_opt *o) {
  o[0] = (tc_opt){.name = "--mlp-hidden", .meta = "H", .kind = TC_OPT_U32, .dst = &c->mlp_hidden, .lo = 1,
                  .hi = TWINCACHE_MAX_HIDDEN, .help = "MLP hidden units (default {})"};
  o[1] = (tc_opt){.name = "--mlp-scale", .meta = "A", .kind = TC_OPT_F64, .dst = &c->mlp_scale, .fhi = 1000,
                  .open = TC_OPEN_LO, .help = "MLP nonlinearity: input weights ~N(0,A^2/|pa|); small A\n"
                                              "is nearly linear (default {})"};
  o[2] = (tc_opt){.name = "--mlp-bias", .meta = "B", .kind = TC_OPT_F64, .dst = &c->mlp_bias, .fhi = 1000,
                  .help = "MLP kink spread: biases ~N(0,(B*A)^2), so unit h's kink\n"
                          "lies ~N(0,B^2) parent std devs from the centre (default {})"};
  o[3] = (tc_opt){.name = "--mlp-bump", .meta = "W", .kind = TC_OPT_F64, .dst = &c->mlp_bump, .fhi = 1000,
                  .help = "MLP bumps: W > 0 pairs the units into bumps W parent std\n"
                          "devs wide (same input row, kink W*A further, opposite\n"
                          "output weight); 0 = independent units (default {})"};
  o[4] = (tc_opt){.name = "--mlp-gain", .meta = "G", .kind = TC_OPT_F64, .dst = &c->mlp_gain, .fhi = 1000,
                  .open = TC_OPEN_LO, .help = "MLP output weights ~N(0,G^2/H): the mechanism's size\n"
                                              "against the noise (default {})"};
  return 5;
}

const tc_gen_mech tc_gen_mech_mlp = {TWINCACHE_MECH_MLP, mlp_hidden, mlp_check, mlp_draw_node,
                                     mlp_defaults, mlp_identity, mlp_options};
