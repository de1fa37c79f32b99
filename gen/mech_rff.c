/* mech_rff.c — the random Fourier features mechanism (FORMAT.md 3.6): a
 * draw from a Gaussian-process prior with the RBF kernel
 * k(x, x') = exp(-|x - x'|^2 / (2 l^2)) over the parents, approximated by
 * M features (Rahimi and Recht 2007; AVICI's "rff" mechanism):
 *   x_j = sum_m a_m cos(w_m . x_pa + b_m) + noise,
 *   w_m ~ N(0, I / l^2), b_m ~ U[0, 2pi), a_m ~ N(0, 2/M),
 * so f_j has prior variance 1 and covariance k as M grows. l = --rff-length
 * (short: wiggly, far from linear), M = --rff-features. Stored in the MLP's
 * block layout: W1 = w (M, n) on parent columns, b1 = b, w2 = a; drawn per
 * node j ascending: W1 (unit, then parent ascending), b1, w2. A root's f is
 * the constant sum_m a_m cos(b_m). Linear weights stay 0. */
#include <math.h>
#include <stdio.h>

#include "tc_gen_mech.h"

static uint32_t rff_hidden(const tc_gen_config *c) { return c->rff_features; }

static int rff_check(const tc_gen_config *c, tc_gen_refusal *bad) {
  if (tc_gen_mech_check_weights(c, bad) != TWINCACHE_OK) return TWINCACHE_EINVAL; /* unused here, but part of the config */
  if (c->rff_features < 1 || c->rff_features > TWINCACHE_MAX_HIDDEN) return tc_gen_refuse(bad, "--rff-features", NULL);
  if (!(c->rff_lengthscale >= 1e-3 && c->rff_lengthscale <= 1e3)) return tc_gen_refuse(bad, "--rff-length", NULL);
  return TWINCACHE_OK;
}

static void rff_draw_node(const tc_gen_config *c, tc_gen_params *p, uint32_t j, tc_rng *rw) {
  uint32_t n = p->n, H = p->hidden, m_n = c->rff_features;
  double sw = 1.0 / c->rff_lengthscale, sa = sqrt(2.0 / (double)m_n);
  float *blk = p->g->mlp + (size_t)j * (H * n + 2 * H);
  for (uint32_t m = 0; m < m_n; m++)
    for (uint32_t k = p->pa_start[j]; k < p->pa_start[j + 1]; k++)
      blk[(size_t)m * n + p->pa_idx[k]] = (float)(sw * tc_rng_normal(rw));
  for (uint32_t m = 0; m < m_n; m++) blk[(size_t)H * n + m] = (float)tc_rng_range(rw, 0.0, 6.283185307179586);
  for (uint32_t m = 0; m < m_n; m++) blk[(size_t)H * n + H + m] = (float)(sa * tc_rng_normal(rw));
}

static void rff_defaults(tc_gen_config *c) {
  c->rff_features = 16;
  c->rff_lengthscale = 1.0;
}

static int rff_identity(const tc_gen_config *c, char *buf, size_t cap) {
  int w = snprintf(buf, cap, ",\"rff_features\":%u,\"rff_length\":%.17g", c->rff_features, c->rff_lengthscale);
  return w >= 0 && (size_t)w < cap ? w : -1;
}

static size_t rff_options(tc_gen_config *c, tc_opt *o) {
  o[0] = (tc_opt){.name = "--rff-features", .meta = "M", .kind = TC_OPT_U32, .dst = &c->rff_features, .lo = 1,
                  .hi = TWINCACHE_MAX_HIDDEN, .help = "RFF: random Fourier features per node (default {})"};
  o[1] = (tc_opt){.name = "--rff-length", .meta = "L", .kind = TC_OPT_F64, .dst = &c->rff_lengthscale, .flo = 1e-3,
                  .fhi = 1000, .help = "RFF: the GP's RBF length scale; frequencies ~N(0,1/L^2)\n"
                                       "(default {})"};
  return 2;
}

const tc_gen_mech tc_gen_mech_rff = {TWINCACHE_MECH_RFF, rff_hidden, rff_check, rff_draw_node,
                                     rff_defaults, rff_identity, rff_options};
