/* test_gen_covariance — the linear-Gaussian base samples have the covariance
 * the SCM implies. With W[i][j] the weight of edge i -> j the SCM is
 * x = W^T x + e, e ~ N(0, D), D = diag(noise_scale^2), so
 *   Sigma = (I - W^T)^-1 D (I - W)^-1.
 * At S = 20000 every entry of the sample covariance must lie within 6
 * standard errors, SE_ij = sqrt((S_ii S_jj + S_ij^2) / S) (Gaussian case).
 * Also checks the same for Laplace noise (variance 2 b^2), the uniform noise
 * variance (b^2 / 3) on root nodes, and that the check has power: a wrong
 * Sigma (one weight flipped) is rejected.
 * usage: test_gen_covariance TWINCACHE_GEN TMPDIR */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_test_util.h"

#define MAXN 8

typedef struct {
  double noise_var_factor; /* Var(e_j) = factor * scale_j^2 */
  double tol;              /* |z| bound; wider for heavy-tailed noise */
  int graphs, entries, flipped_rejected, flipped_tested;
  double worst_z;
} ctx;

/* Sigma = A D A^T with A = (I - W^T)^-1 computed by forward substitution in
 * topological order (x = W^T x + e => x_j = sum_i W[i][j] x_i + e_j). */
static void implied_cov(const twincache_graph *g, const double *w, double factor, double *sigma) {
  uint32_t n = g->n_nodes;
  double A[MAXN][MAXN]; /* x = A e */
  int done[MAXN] = {0};
  memset(A, 0, sizeof A);
  for (uint32_t pass = 0; pass < n; pass++)
    for (uint32_t j = 0; j < n; j++) {
      if (done[j]) continue;
      int ready = 1;
      for (uint32_t i = 0; i < n; i++)
        if (g->adj[i * g->ld_adj + j] && !done[i]) ready = 0;
      if (!ready) continue;
      A[j][j] = 1.0;
      for (uint32_t i = 0; i < n; i++)
        if (g->adj[i * g->ld_adj + j])
          for (uint32_t k = 0; k < n; k++) A[j][k] += w[i * n + j] * A[i][k];
      done[j] = 1;
    }
  for (uint32_t a = 0; a < n; a++)
    for (uint32_t b = 0; b < n; b++) {
      double s = 0;
      for (uint32_t k = 0; k < n; k++) {
        double d = factor * (double)g->noise_scale[k] * g->noise_scale[k];
        s += A[a][k] * d * A[b][k];
      }
      sigma[a * n + b] = s;
    }
}

static double max_z(const twincache_graph *g, const double *sigma) {
  uint32_t n = g->n_nodes, S = g->n_samples;
  double mean[MAXN] = {0}, worst = 0;
  for (uint32_t s = 0; s < S; s++)
    for (uint32_t j = 0; j < n; j++) mean[j] += g->base[(size_t)s * g->ld + j];
  for (uint32_t j = 0; j < n; j++) mean[j] /= S;
  for (uint32_t a = 0; a < n; a++)
    for (uint32_t b = a; b < n; b++) {
      double c = 0;
      for (uint32_t s = 0; s < S; s++)
        c += (g->base[(size_t)s * g->ld + a] - mean[a]) * (g->base[(size_t)s * g->ld + b] - mean[b]);
      c /= (S - 1);
      double se = sqrt((sigma[a * n + a] * sigma[b * n + b] + sigma[a * n + b] * sigma[a * n + b]) / S);
      double z = fabs(c - sigma[a * n + b]) / se;
      if (z > worst) worst = z;
    }
  return worst;
}

static void check_graph(const twincache_graph *g, const twincache_dims *dims, void *user) {
  ctx *cx = user;
  uint32_t n = g->n_nodes;
  TC_REQUIRE(n <= MAXN, "n %u", n);
  TC_REQUIRE(g->mechanism == TWINCACHE_MECH_LINEAR && !(g->flags & TWINCACHE_GRAPH_STANDARDIZED), "flags");
  double w[MAXN * MAXN], sigma[MAXN * MAXN];
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t j = 0; j < n; j++) w[i * n + j] = g->weight[i * g->ld_adj + j];
  implied_cov(g, w, cx->noise_var_factor, sigma);
  double z = max_z(g, sigma);
  printf("graph %llu: %u nodes, max |z| = %.2f\n", (unsigned long long)g->index, n, z);
  TC_REQUIRE(z < cx->tol, "graph %llu: sample covariance off by %.1f standard errors", (unsigned long long)g->index, z);
  if (z > cx->worst_z) cx->worst_z = z;
  cx->graphs++;
  /* power: flipping the sign of one edge weight must be detected */
  for (uint32_t e = 0; e < n * n; e++)
    if (w[e] != 0.0) {
      w[e] = -w[e];
      implied_cov(g, w, cx->noise_var_factor, sigma);
      cx->flipped_tested++;
      if (max_z(g, sigma) > cx->tol) cx->flipped_rejected++;
      break;
    }
  (void)dims;
}

static void run_case(const char *gen, const char *dir, const char *noise, double factor, double tol,
                     int min_flips) {
  char err[8192];
  tg_rmrf(dir);
  const char *args[] = {"--out", dir, "--graphs", "4", "--samples", "20000", "--nodes", "3:6",
                        "--edge-prob", "0.6", "--weights", "0.3:0.9", "--noise", noise, "--quiet", NULL};
  int rc = tg_run(gen, args, err, sizeof err);
  TC_REQUIRE(rc == 0, "generator exit %d: %s", rc, err);
  ctx cx = {factor, tol, 0, 0, 0, 0, 0};
  uint64_t n = tg_for_each_graph(dir, check_graph, &cx);
  TC_REQUIRE(n == 4 && cx.graphs == 4, "visited %llu graphs", (unsigned long long)n);
  printf("%s: worst |z| %.2f; flipped-weight alternatives rejected %d of %d\n", noise, cx.worst_z,
         cx.flipped_rejected, cx.flipped_tested);
  TC_REQUIRE(cx.flipped_rejected >= min_flips, "the check has no power: %d of %d wrong models rejected",
        cx.flipped_rejected, cx.flipped_tested);
  tg_rmrf(dir);
}

int main(int argc, char **argv) {
  TC_REQUIRE(argc == 3, "usage: %s TWINCACHE_GEN TMPDIR", argv[0]);
  char dir[4600];
  snprintf(dir, sizeof dir, "%s/gen_covariance", argv[2]);
  /* SE assumes Gaussian fourth moments; Laplace's excess kurtosis (3) makes
   * the sample covariance's SE up to sqrt(2.5) ~ 1.6x larger. */
  run_case(argv[1], dir, "gauss", 1.0, 6.0, 1);
  run_case(argv[1], dir, "laplace", 2.0, 6.0 * 1.6, 1);
  run_case(argv[1], dir, "uniform", 1.0 / 3.0, 6.0, 1);
  printf("test_gen_covariance: ok\n");
  return 0;
}
