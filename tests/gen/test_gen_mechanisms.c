/* test_gen_mechanisms — the nonlinear mechanisms' equations and priors,
 * checked on caches of the real generator with independent double-precision
 * code (libm's cos and tanh, not scm's):
 *  - equation: in every twin world, a changed node's residual
 *    x_j - f_j(x_pa), f_j evaluated from the stored block (FORMAT.md 3.6),
 *    equals its base-world residual (the same noise), plus the shift on a
 *    shift target: MLP (tanh), RFF (cos), sigmoid, poly (clamped square);
 *  - sigmoid and poly are additive: every unit reads exactly one parent and
 *    every parent has a unit;
 *  - RFF is a GP draw: for a node with parents, rows s != s' of one graph
 *    have independent noise and E[x_j(s) x_j(s')] = k(x_pa(s), x_pa(s')) =
 *    exp(-|x_pa(s) - x_pa(s')|^2 / (2 l^2)) for any number of features (the
 *    features' a_m ~ N(0, 2/M), b_m ~ U[0, 2pi), w_m ~ N(0, I/l^2)); binned
 *    by distance, the mean product matches the mean kernel within 4.5
 *    standard errors (the error from the spread of per-(graph, node) means,
 *    since pairs of one node share its function draw).
 * usage: test_gen_mechanisms TWINCACHE_GEN TMPDIR */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_test_util.h"

static double unit_f(int mechanism, double a) {
  switch (mechanism) {
  case TWINCACHE_MECH_RFF: return cos(a);
  case TWINCACHE_MECH_SIGMOID: return 1.0 / (1.0 + exp(-a));
  case TWINCACHE_MECH_POLY: a = a < -4.0 ? -4.0 : a > 4.0 ? 4.0 : a; return a * a;
  default: return tanh(a);
  }
}

/* f_j(row) of node j's mechanism, in double, with its own parameters or
 * (soft not NULL) a soft world's (FORMAT.md 3.2 section 7a) */
static double block_f_with(const twincache_graph *g, uint32_t j, const float *row, const float *soft) {
  uint32_t n = g->n_nodes, H = g->n_hidden, stride = H * n + 2 * H;
  int mech = g->mechanism == TWINCACHE_MECH_MIXED ? g->node_mech[j] : g->mechanism;
  double f = 0.0;
  if (mech == TWINCACHE_MECH_LINEAR) {
    for (uint32_t i = 0; i < n; i++)
      if (g->adj[(size_t)i * g->ld_adj + j])
        f += (double)(soft ? soft[i] : g->weight[(size_t)i * g->ld_adj + j]) * row[i];
    return f;
  }
  const float *blk = soft ? soft : g->mlp + (size_t)j * stride;
  for (uint32_t h = 0; h < H; h++) {
    double a = blk[(size_t)H * n + h];
    for (uint32_t i = 0; i < n; i++)
      if (g->adj[(size_t)i * g->ld_adj + j]) a += (double)blk[(size_t)h * n + i] * row[i];
    f += (double)blk[(size_t)H * n + H + h] * unit_f(mech, a);
  }
  return f;
}

static double block_f(const twincache_graph *g, uint32_t j, const float *row) { return block_f_with(g, j, row, NULL); }

/* The heteroscedastic factor of node j's noise: 1 + tanh((c_j + sum_i v_ij x_i)/2), or 1 */
static double hetero_f(const twincache_graph *g, uint32_t j, const float *row) {
  if (!(g->flags & TWINCACHE_GRAPH_HETERO)) return 1.0;
  double a = g->hetero_c[j];
  for (uint32_t i = 0; i < g->n_nodes; i++)
    if (g->adj[(size_t)i * g->ld_adj + j]) a += (double)g->hetero_w[(size_t)i * g->ld_adj + j] * row[i];
  return 1.0 + tanh(0.5 * a);
}

typedef struct {
  int mechanism;
  int hetero;                /* the cache's noise is heteroscedastic */
  int iscm;                  /* the cache is an iSCM */
  double e_sum, e_sq, e_n;   /* base-world standard noise e = r / (noise_scale sigma), gauss caches */
  double small_sigma, big_sigma; /* factors < 0.5, > 1.5 */
  uint64_t graphs, checked;
  uint64_t nodes_of[TWINCACHE_MECH_COUNT]; /* nodes per mechanism */
  double worst;
  uint64_t soft_checked, multi; /* residuals of soft targets; multi-target worlds */
  uint64_t soft_roots;          /* residuals of soft targets that are roots */
} eq_ctx;

static void check_equation(const twincache_graph *g, const twincache_dims *dims, void *user) {
  eq_ctx *cx = user;
  (void)dims;
  uint32_t n = g->n_nodes, S = g->n_samples;
  TC_REQUIRE(g->mechanism == cx->mechanism && (g->n_hidden > 0) == (g->mechanism != TWINCACHE_MECH_LINEAR),
             "graph %llu: mechanism %u", (unsigned long long)g->index, g->mechanism);
  TC_REQUIRE(!!(g->flags & TWINCACHE_GRAPH_HETERO) == cx->hetero, "graph %llu: flags", (unsigned long long)g->index);
  /* raw worlds, or an iSCM's: node j's stored value is (x_j - mean_j) / std_j and its children
   * read that value, so x_j = stored * std + mean = f_j(stored parents) + noise */
  const int iscm = (g->flags & TWINCACHE_GRAPH_ISCM) != 0;
  TC_REQUIRE(!(g->flags & TWINCACHE_GRAPH_STANDARDIZED) || iscm, "the equation test reads raw worlds or an iSCM's");
  TC_REQUIRE(iscm == cx->iscm, "graph %llu: flags", (unsigned long long)g->index);
  for (uint32_t s = 0; cx->hetero && s < S; s++) /* the base world's standard noise */
    for (uint32_t j = 0; j < n; j++) {
      const float *b = g->base + (size_t)s * g->ld;
      double xj = iscm ? (double)b[j] * g->norm_std[j] + g->norm_mean[j] : b[j];
      double h = hetero_f(g, j, b), e = (xj - block_f(g, j, b)) / (g->noise_scale[j] * h);
      if (h < 1e-3) continue; /* e would be all rounding */
      cx->e_sum += e;
      cx->e_sq += e * e;
      cx->e_n++;
      cx->small_sigma += h < 0.5;
      cx->big_sigma += h > 1.5;
    }
  uint32_t H = g->n_hidden, stride = H * n + 2 * H;
  for (uint32_t j = 0; H && j < n; j++) {
    int mech = g->mechanism == TWINCACHE_MECH_MIXED ? g->node_mech[j] : g->mechanism;
    TC_REQUIRE(mech < TWINCACHE_MECH_MIXED);
    cx->nodes_of[mech]++;
    if (mech == TWINCACHE_MECH_LINEAR) { /* a linear node has weights on its edges and a zero block */
      for (uint32_t i = 0; i < n; i++)
        TC_REQUIRE((g->weight[(size_t)i * g->ld_adj + j] != 0.0f) == (g->adj[(size_t)i * g->ld_adj + j] != 0));
      for (uint32_t q = 0; q < stride; q++) TC_REQUIRE(g->mlp[(size_t)j * stride + q] == 0.0f);
      continue;
    }
    for (uint32_t i = 0; i < n; i++) TC_REQUIRE(g->weight[(size_t)i * g->ld_adj + j] == 0.0f);
    if (mech == TWINCACHE_MECH_SIGMOID || mech == TWINCACHE_MECH_POLY) { /* unit u reads the u-th parent only */
      const float *blk = g->mlp + (size_t)j * stride;
      uint32_t u = 0;
      for (uint32_t i = 0; i < n; i++) {
        if (!g->adj[(size_t)i * g->ld_adj + j]) continue;
        TC_REQUIRE(u < H, "graph %llu node %u: more parents than units", (unsigned long long)g->index, j);
        for (uint32_t i2 = 0; i2 < n; i2++)
          TC_REQUIRE((blk[(size_t)u * n + i2] != 0.0f) == (i2 == i), "graph %llu node %u unit %u: not additive",
                     (unsigned long long)g->index, j, u);
        TC_REQUIRE(blk[(size_t)H * n + H + u] != 0.0f);
        u++;
      }
      for (; u < H; u++) TC_REQUIRE(blk[(size_t)H * n + H + u] == 0.0f && blk[(size_t)H * n + u] == 0.0f);
    }
  }
  uint8_t desc[TWINCACHE_MAX_NODES], more[TWINCACHE_MAX_NODES];
  float tval[TWINCACHE_MAX_NODES];
  int8_t is_t[TWINCACHE_MAX_NODES];
  const uint32_t P = twincache_soft_stride(n, H, g->mechanism);
  for (uint32_t k = 0; k < g->n_inter; k++) {
    uint32_t t = g->target[k], nt = g->n_targets ? g->n_targets[k] : 1;
    const int kind = g->kind[k];
    twincache_graph_descendants(g->adj, n, g->ld_adj, t, desc);
    memset(is_t, 0, n);
    is_t[t] = 1;
    tval[t] = g->value[k];
    for (uint32_t i = 1; i < nt; i++) { /* a multi-target world: the union of the targets' sets */
      uint32_t u = g->more_target[(size_t)k * (TWINCACHE_MAX_TARGETS - 1) + i - 1];
      is_t[u] = 1;
      tval[u] = g->more_value[(size_t)k * (TWINCACHE_MAX_TARGETS - 1) + i - 1];
      twincache_graph_descendants(g->adj, n, g->ld_adj, u, more);
      for (uint32_t j = 0; j < n; j++) desc[j] |= more[j];
    }
    if (nt > 1) cx->multi++;
    for (uint32_t s = 0; s < S; s++) {
      const float *b = g->base + (size_t)s * g->ld, *x = g->inter + ((size_t)k * S + s) * g->ld;
      for (uint32_t j = 0; j < n; j++) {
        if (!desc[j] || (is_t[j] && kind == TWINCACHE_DO)) continue;
        /* x = f + e sigma (+ value on a shift target): r_x sigma_b = r_b sigma_x;
         * a noise target: r_x sigma_b = value r_b sigma_x; a soft target: f
         * from its stored new parameters */
        const float *soft = is_t[j] && kind == TWINCACHE_INTER_SOFT ? g->soft + (size_t)k * P : NULL;
        /* a soft root (FORMAT.md 3.6): its noise term times the block's entry
         * j (+0.0: 1), plus the value, its new mean */
        int soft_root = soft != NULL;
        for (uint32_t i = 0; i < n && soft_root; i++) soft_root = !g->adj[(size_t)i * g->ld_adj + j];
        double xb = iscm ? (double)b[j] * g->norm_std[j] + g->norm_mean[j] : b[j];
        double xx = iscm ? (double)x[j] * g->norm_std[j] + g->norm_mean[j] : x[j];
        double rb = xb - block_f(g, j, b);
        double rx = xx - block_f_with(g, j, x, soft) -
                    (is_t[j] && (kind == TWINCACHE_SHIFT || soft_root) ? tval[j] : 0.0);
        double fac = is_t[j] && kind == TWINCACHE_INTER_NOISE ? tval[j] : 1.0;
        if (soft_root) {
          fac = soft[j] != 0.0f ? soft[j] : 1.0;
          cx->soft_roots++;
        }
        double hb = hetero_f(g, j, b), hx = hetero_f(g, j, x);
        double err = fabs(rx * hb - fac * rb * hx) / (1.0 + fabs(xx) + fabs(xb));
        if (soft) cx->soft_checked++;
        if (err > cx->worst) cx->worst = err;
        TC_REQUIRE(err < 2e-4, "graph %llu inter %u row %u node %u: residual %.9g in the twin, %.9g in base",
                   (unsigned long long)g->index, k, s, j, rx, rb);
        cx->checked++;
      }
    }
  }
  cx->graphs++;
}

#define N_BINS 6
static const double k_bin_lo[N_BINS] = {0.0, 0.3, 0.6, 1.0, 1.5, 2.5};
static const double k_bin_hi[N_BINS] = {0.2, 0.5, 0.9, 1.3, 2.0, 4.0};

typedef struct {
  double length;
  /* per bin: over (graph, node) units, the unit means of the product and of the kernel */
  double sum_p[N_BINS], sum_p2[N_BINS], sum_k[N_BINS];
  uint64_t units[N_BINS], pairs[N_BINS];
} gp_ctx;

static void gp_accumulate(const twincache_graph *g, const twincache_dims *dims, void *user) {
  gp_ctx *cx = user;
  (void)dims;
  uint32_t n = g->n_nodes, S = g->n_samples;
  for (uint32_t j = 0; j < n; j++) {
    uint32_t npa = 0;
    for (uint32_t i = 0; i < n; i++) npa += g->adj[(size_t)i * g->ld_adj + j] != 0;
    if (!npa) continue;
    double p[N_BINS] = {0}, kk[N_BINS] = {0};
    uint64_t c[N_BINS] = {0};
    for (uint32_t s = 0; s < S; s++)
      for (uint32_t u = s + 1; u < S; u++) {
        const float *a = g->base + (size_t)s * g->ld, *b = g->base + (size_t)u * g->ld;
        double d2 = 0.0;
        for (uint32_t i = 0; i < n; i++)
          if (g->adj[(size_t)i * g->ld_adj + j]) d2 += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        double d = sqrt(d2);
        for (int q = 0; q < N_BINS; q++)
          if (d >= k_bin_lo[q] && d < k_bin_hi[q]) {
            p[q] += (double)a[j] * b[j];
            kk[q] += exp(-d2 / (2.0 * cx->length * cx->length));
            c[q]++;
          }
      }
    for (int q = 0; q < N_BINS; q++)
      if (c[q]) {
        double m = p[q] / (double)c[q];
        cx->sum_p[q] += m;
        cx->sum_p2[q] += m * m;
        cx->sum_k[q] += kk[q] / (double)c[q];
        cx->units[q]++;
        cx->pairs[q] += c[q];
      }
  }
}

static void build(const char *gen, const char *dir, const char *const *extra) {
  const char *args[40];
  int a = 0;
  const char *fixed[] = {"--out", dir, "--seed", "5", "--threads", "2", "--quiet", NULL};
  for (int i = 0; fixed[i]; i++) args[a++] = fixed[i];
  for (int i = 0; extra[i]; i++) args[a++] = extra[i];
  args[a] = NULL;
  tg_rmrf(dir);
  char err[4096];
  int rc = tg_run(gen, args, err, sizeof err);
  TC_REQUIRE(rc == 0, "generator exit %d: %s", rc, err);
}

static eq_ctx equation_case(const char *gen, const char *dir, int mechanism, int hetero, const char *const *extra) {
  build(gen, dir, extra);
  eq_ctx cx = {.mechanism = mechanism, .hetero = hetero};
  for (int i = 0; extra[i]; i++) cx.iscm |= strcmp(extra[i], "--iscm") == 0;
  uint64_t got = tg_for_each_graph(dir, check_equation, &cx);
  TC_REQUIRE(got > 0 && cx.checked > 1000, "%llu graphs, %llu residuals", (unsigned long long)got,
             (unsigned long long)cx.checked);
  printf("equation %-6s %llu graphs, %llu twin residuals equal to the base's (worst relative %.2g)\n",
         twincache_choice_name(TWINCACHE_CHOICE_MECHANISM, mechanism), (unsigned long long)cx.graphs,
         (unsigned long long)cx.checked, cx.worst);
  tg_rmrf(dir);
  return cx;
}

int main(int argc, char **argv) {
  TC_REQUIRE(argc == 3, "usage: %s TWINCACHE_GEN TMPDIR", argv[0]);
  const char *gen = argv[1];
  char dir[4600];
  snprintf(dir, sizeof dir, "%s/gen_mechanisms", argv[2]);

  const char *rff_eq[] = {"--graphs", "120", "--nodes", "4:9", "--samples", "8", "--mechanism", "rff",
                          "--intervention", "shift", "--rff-length", "0.6", NULL};
  equation_case(gen, dir, TWINCACHE_MECH_RFF, 0, rff_eq);
  const char *mlp_eq[] = {"--graphs", "120", "--nodes", "4:9", "--samples", "8", "--mechanism", "mlp",
                          "--intervention", "shift", NULL};
  equation_case(gen, dir, TWINCACHE_MECH_MLP, 0, mlp_eq);
  const char *sig_eq[] = {"--graphs", "120", "--nodes", "4:9", "--samples", "8", "--mechanism", "sigmoid",
                          "--intervention", "shift", "--noise", "laplace", NULL};
  equation_case(gen, dir, TWINCACHE_MECH_SIGMOID, 0, sig_eq);
  const char *poly_eq[] = {"--graphs", "120", "--nodes", "4:9", "--samples", "8", "--mechanism", "poly",
                           "--intervention", "shift", "--edge-prob", "0.6", NULL};
  equation_case(gen, dir, TWINCACHE_MECH_POLY, 0, poly_eq);
  const char *mix5[] = {"--graphs", "120", "--nodes", "4:9", "--samples", "8", "--intervention", "shift",
                        "--mechanism", "linear:1,mlp:1,rff:1,sigmoid:1,poly:1", NULL};
  equation_case(gen, dir, TWINCACHE_MECH_MIXED, 0, mix5);
  /* heteroscedastic noise: the twin equation with the noise factor, and the
   * standard noise recovered from the base world is N(0, 1) */
  const char *het_lin[] = {"--graphs", "150", "--nodes", "4:9", "--samples", "32", "--intervention", "shift",
                           "--hetero", "2", NULL};
  const char *het_mix[] = {"--graphs", "150", "--nodes", "4:9", "--samples", "32", "--hetero", "1.5",
                           "--mechanism", "mlp:1,rff:1,linear:1", NULL};
  for (int c = 0; c < 2; c++) {
    eq_ctx h = equation_case(gen, dir, c ? TWINCACHE_MECH_MIXED : TWINCACHE_MECH_LINEAR, 1, c ? het_mix : het_lin);
    double mean = h.e_sum / h.e_n, var = h.e_sq / h.e_n - mean * mean, se = 1.0 / sqrt(h.e_n);
    printf("hetero: standard noise mean %.4f var %.4f over %.0f cells; noise factor < 0.5 in %.3f, > 1.5 in %.3f\n",
           mean, var, h.e_n, h.small_sigma / h.e_n, h.big_sigma / h.e_n);
    TC_CHECK(fabs(mean) < 5.0 * se && fabs(var - 1.0) < 5.0 * sqrt(2.0) * se, "the noise is not N(0,1) after the factor");
    TC_CHECK(h.small_sigma > 0.05 * h.e_n && h.big_sigma > 0.05 * h.e_n, "the noise factor hardly varies");
  }
  /* iSCM: the same equations on the stored (standardised) parents, with the
   * base world's maps in the twin worlds; every base column has mean 0, std 1 */
  const char *iscm_rff[] = {"--graphs", "120", "--nodes", "4:9", "--samples", "16", "--intervention", "shift",
                            "--iscm", "--mechanism", "rff", NULL};
  equation_case(gen, dir, TWINCACHE_MECH_RFF, 0, iscm_rff);
  /* the intervention kinds of issue 19 on every mechanism: a soft target's
   * residual under its stored new block (drawn by the node's own mechanism)
   * equals the base residual; a noise target's is value times it; with
   * heteroscedastic noise, an iSCM and multi-target worlds */
  static const char *const soft_mechs[] = {"rff", "sigmoid", "poly", "linear:1,mlp:1,rff:1,sigmoid:1,poly:1"};
  static const int soft_codes[] = {TWINCACHE_MECH_RFF, TWINCACHE_MECH_SIGMOID, TWINCACHE_MECH_POLY,
                                   TWINCACHE_MECH_MIXED};
  for (int c = 0; c < 4; c++) {
    const char *soft_eq[] = {"--graphs", "120", "--nodes", "4:9", "--samples", "8", "--intervention", "soft",
                             "--mechanism", soft_mechs[c], NULL};
    eq_ctx e = equation_case(gen, dir, soft_codes[c], 0, soft_eq);
    TC_CHECK(e.soft_checked > 100, "%s: %llu soft residuals", soft_mechs[c], (unsigned long long)e.soft_checked);
    TC_CHECK(e.soft_roots > 10, "%s: %llu soft root residuals", soft_mechs[c], (unsigned long long)e.soft_roots);
  }
  const char *soft_het[] = {"--graphs", "120", "--nodes", "4:9", "--samples", "8", "--intervention", "soft",
                            "--hetero", "1", "--mechanism", "linear:1,rff:1,poly:1", NULL};
  eq_ctx eh = equation_case(gen, dir, TWINCACHE_MECH_MIXED, 1, soft_het);
  TC_CHECK(eh.soft_checked > 100 && eh.soft_roots > 10);
  const char *soft_iscm[] = {"--graphs", "120", "--nodes", "4:9", "--samples", "16", "--intervention", "soft",
                             "--iscm", "--mechanism", "sigmoid", NULL};
  TC_CHECK(equation_case(gen, dir, TWINCACHE_MECH_SIGMOID, 0, soft_iscm).soft_checked > 100);
  const char *noise_het[] = {"--graphs", "120", "--nodes", "4:9", "--samples", "8", "--intervention", "noise",
                             "--values", "0:2", "--hetero", "1.5", "--mechanism", "mlp:1,sigmoid:1,linear:1", NULL};
  equation_case(gen, dir, TWINCACHE_MECH_MIXED, 1, noise_het);
  const char *noise_iscm[] = {"--graphs", "120", "--nodes", "4:9", "--samples", "16", "--intervention", "noise",
                              "--values", "0.2:2", "--iscm", "--mechanism", "poly", NULL};
  equation_case(gen, dir, TWINCACHE_MECH_POLY, 0, noise_iscm);
  const char *multi_het[] = {"--graphs", "120", "--nodes", "4:9", "--samples", "8", "--intervention", "noise",
                             "--targets-per-world", "1:3", "--hetero", "1", "--mechanism", "rff:1,linear:1", NULL};
  TC_CHECK(equation_case(gen, dir, TWINCACHE_MECH_MIXED, 1, multi_het).multi > 50);
  const char *multi_iscm[] = {"--graphs", "120", "--nodes", "4:9", "--samples", "16", "--intervention", "shift",
                              "--targets-per-world", "2:3", "--iscm", "--mechanism", "mlp", NULL};
  TC_CHECK(equation_case(gen, dir, TWINCACHE_MECH_MLP, 0, multi_iscm).multi > 50);
  const char *iscm_lin[] = {"--graphs", "120", "--nodes", "4:9", "--samples", "16", "--iscm", "--hetero", "1",
                            "--targets", "3", "--intervention", "shift", NULL};
  equation_case(gen, dir, TWINCACHE_MECH_LINEAR, 1, iscm_lin);
  /* a per-node mixture draws each node's mechanism with the weights: the
   * counts of 400 graphs x 10 nodes within 5 binomial standard deviations */
  const char *mix[] = {"--graphs", "400", "--nodes", "10:10", "--samples", "4", "--intervention", "shift",
                       "--mechanism", "linear:0.5,mlp:0.3,rff:0.2", NULL};
  eq_ctx mx = equation_case(gen, dir, TWINCACHE_MECH_MIXED, 0, mix);
  const int codes[3] = {TWINCACHE_MECH_LINEAR, TWINCACHE_MECH_MLP, TWINCACHE_MECH_RFF};
  const double want[3] = {0.5, 0.3, 0.2};
  for (int k = 0; k < 3; k++) {
    double got = (double)mx.nodes_of[codes[k]], nn = 4000.0, sd = sqrt(nn * want[k] * (1.0 - want[k]));
    printf("mixture: %s on %.0f of %.0f nodes, expected %.0f +- %.0f\n",
           twincache_choice_name(TWINCACHE_CHOICE_MECHANISM, codes[k]), got, nn, nn * want[k], sd);
    TC_CHECK(fabs(got - nn * want[k]) <= 5.0 * sd, "mixture: %s on %.0f nodes", 
             twincache_choice_name(TWINCACHE_CHOICE_MECHANISM, codes[k]), got);
  }

  /* the GP prior's kernel, at a length scale that is not the default */
  const char *gp[] = {"--graphs", "600", "--nodes", "3:6", "--samples", "24", "--mechanism", "rff",
                      "--rff-length", "0.8", "--rff-features", "8", "--targets", "1", NULL};
  build(gen, dir, gp);
  gp_ctx cx = {.length = 0.8};
  TC_REQUIRE(tg_for_each_graph(dir, gp_accumulate, &cx) == 600);
  int bad = 0;
  for (int q = 0; q < N_BINS; q++) {
    double u = (double)cx.units[q];
    TC_REQUIRE(u >= 200, "bin %d: only %.0f (graph, node) units", q, u);
    double mp = cx.sum_p[q] / u, mk = cx.sum_k[q] / u;
    double se = sqrt(fmax(cx.sum_p2[q] / u - mp * mp, 0.0) / u);
    int ok = fabs(mp - mk) <= 4.5 * se + 0.01;
    bad += !ok;
    printf("|dx| in [%.1f, %.1f): E[x(s) x(s')] %.4f, kernel %.4f, se %.4f, %llu pairs of %.0f nodes%s\n",
           k_bin_lo[q], k_bin_hi[q], mp, mk, se, (unsigned long long)cx.pairs[q], u, ok ? "" : "  <-- off");
  }
  TC_CHECK(bad == 0, "the RFF worlds do not follow the GP prior's kernel in %d bins", bad);
  tg_rmrf(dir);
  printf("test_gen_mechanisms: %s\n", tc_test_failures() ? "FAILED" : "ok");
  return tc_test_result();
}
