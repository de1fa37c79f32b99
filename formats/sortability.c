/* sortability.c — how well sorting the nodes by a score recovers the causal
 * order of one graph (Reisach, Seiler, Weichwald 2021; Reisach et al. 2023):
 * the fraction of directed paths i ~> j, counted with multiplicity over all
 * path lengths, whose cause scores strictly lower than its effect, ties
 * counting 1/2. Scores: the population variance of each node's base-world
 * samples (varsortability) and R^2_j = 1 - 1/[corr(X)^-1]_jj, the share of
 * node j's variance a linear fit on all other nodes explains
 * (R^2-sortability). 0.5 is what a random order gives.
 *
 * Here (not in gen/ or tools/) because inspect, the trainer and Python all
 * reach formats/, and it is a pure function of a decoded graph, like
 * twincache_graph_descendants. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tc_error.h"
#include "twincache_format.h"

/* Fraction of paths (weights paths (n,n), paths[i*n+j] = number of directed
 * paths i ~> j) whose scores increase; NaN when there is no path. */
static double order_alignment(const double *paths, const double *score, uint32_t n) {
  double total = 0.0, good = 0.0;
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t j = 0; j < n; j++) {
      double p = paths[(size_t)i * n + j];
      if (p == 0.0) continue;
      total += p;
      if (score[i] < score[j]) good += p;
      else if (score[i] == score[j]) good += 0.5 * p;
    }
  return total > 0.0 ? good / total : NAN;
}

/* R^2_j = 1 - 1/[C^-1]_jj of the correlation matrix c (n,n), inverted in
 * place by Gauss-Jordan elimination with partial pivoting (inv: (n,n)
 * scratch). 0 on success, -1 when c is singular (or not finite). */
static int r2_scores(double *c, double *inv, uint32_t n, double *r2) {
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t j = 0; j < n; j++) inv[(size_t)i * n + j] = i == j;
  for (uint32_t col = 0; col < n; col++) {
    uint32_t piv = col;
    for (uint32_t r = col + 1; r < n; r++)
      if (fabs(c[(size_t)r * n + col]) > fabs(c[(size_t)piv * n + col])) piv = r;
    double pv = c[(size_t)piv * n + col];
    if (!(fabs(pv) > 1e-10)) return -1;
    if (piv != col)
      for (uint32_t k = 0; k < n; k++) {
        double t = c[(size_t)piv * n + k];
        c[(size_t)piv * n + k] = c[(size_t)col * n + k];
        c[(size_t)col * n + k] = t;
        t = inv[(size_t)piv * n + k];
        inv[(size_t)piv * n + k] = inv[(size_t)col * n + k];
        inv[(size_t)col * n + k] = t;
      }
    for (uint32_t k = 0; k < n; k++) {
      c[(size_t)col * n + k] /= pv;
      inv[(size_t)col * n + k] /= pv;
    }
    for (uint32_t r = 0; r < n; r++) {
      double f = c[(size_t)r * n + col];
      if (r == col || f == 0.0) continue;
      for (uint32_t k = 0; k < n; k++) {
        c[(size_t)r * n + k] -= f * c[(size_t)col * n + k];
        inv[(size_t)r * n + k] -= f * inv[(size_t)col * n + k];
      }
    }
  }
  for (uint32_t j = 0; j < n; j++) {
    double d = inv[(size_t)j * n + j];
    if (!isfinite(d) || d == 0.0) return -1;
    r2[j] = 1.0 - 1.0 / d;
  }
  return 0;
}

int twincache_graph_sortability(const twincache_graph *g, twincache_sortability *out) {
  if (!g || !out || !g->adj || !g->base || g->n_nodes == 0 || g->n_samples == 0 || g->ld < g->n_nodes ||
      g->ld_adj < g->n_nodes)
    return tc_error_set(TWINCACHE_EINVAL, "sortability: a graph without adjacency or base samples");
  /* the rows the base world holds (FORMAT.md 3.10; 0 or no array: S) */
  const uint32_t r0 = g->world_rows ? g->world_rows[0] : 0;
  const uint32_t n = g->n_nodes, S = r0 && r0 < g->n_samples ? r0 : g->n_samples;
  out->var = out->r2 = NAN;
  out->paths = 0.0;
  if (!twincache_graph_is_dag(g->adj, n, g->ld_adj))
    return tc_error_set(TWINCACHE_EINVAL, "sortability: graph %llu is not a DAG", (unsigned long long)g->index);
  size_t nn = (size_t)n * n;
  double *paths = malloc(nn * sizeof *paths), *c = malloc(nn * sizeof *c), *inv = malloc(nn * sizeof *inv);
  double *mean = malloc(n * sizeof *mean), *var = malloc(n * sizeof *var), *r2 = malloc(n * sizeof *r2);
  uint32_t *order = malloc(n * sizeof *order), *indeg = malloc(n * sizeof *indeg);
  int rc = TWINCACHE_OK;
  if (!paths || !c || !inv || !mean || !var || !r2 || !order || !indeg) {
    rc = tc_error_set(TWINCACHE_ENOMEM, "sortability: out of memory (%u nodes)", n);
    goto done;
  }
  /* a topological order (Kahn), then paths[i][j] = number of directed paths
   * i ~> j of any length: the sum over k >= 1 of A^k, built parents first */
  memset(indeg, 0, n * sizeof *indeg);
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t j = 0; j < n; j++) indeg[j] += g->adj[(size_t)i * g->ld_adj + j] != 0;
  uint32_t head = 0, tail = 0;
  for (uint32_t j = 0; j < n; j++)
    if (!indeg[j]) order[tail++] = j;
  while (head < tail) {
    uint32_t v = order[head++];
    for (uint32_t j = 0; j < n; j++)
      if (g->adj[(size_t)v * g->ld_adj + j] && --indeg[j] == 0) order[tail++] = j;
  }
  memset(paths, 0, nn * sizeof *paths);
  for (uint32_t t = 0; t < n; t++) {
    uint32_t j = order[t];
    for (uint32_t p = 0; p < n; p++) {
      if (!g->adj[(size_t)p * g->ld_adj + j]) continue;
      paths[(size_t)p * n + j] += 1.0;
      for (uint32_t i = 0; i < n; i++) paths[(size_t)i * n + j] += paths[(size_t)i * n + p];
    }
  }
  for (size_t q = 0; q < nn; q++) out->paths += paths[q];
  /* population moments of the base world, base (S, ld) */
  for (uint32_t j = 0; j < n; j++) {
    double s = 0.0;
    for (uint32_t r = 0; r < S; r++) s += g->base[(size_t)r * g->ld + j];
    mean[j] = s / S;
  }
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t j = i; j < n; j++) {
      double s = 0.0;
      for (uint32_t r = 0; r < S; r++)
        s += (g->base[(size_t)r * g->ld + i] - mean[i]) * (g->base[(size_t)r * g->ld + j] - mean[j]);
      c[(size_t)i * n + j] = c[(size_t)j * n + i] = s / S;
    }
  for (uint32_t j = 0; j < n; j++) var[j] = c[(size_t)j * n + j];
  out->var = order_alignment(paths, var, n);
  /* correlation: covariance over the product of the standard deviations */
  int constant = 0;
  for (uint32_t j = 0; j < n; j++) constant |= !(var[j] > 0.0);
  if (!constant && out->paths > 0.0) {
    for (uint32_t i = 0; i < n; i++)
      for (uint32_t j = 0; j < n; j++) c[(size_t)i * n + j] /= sqrt(var[i] * var[j]);
    if (r2_scores(c, inv, n, r2) == 0) out->r2 = order_alignment(paths, r2, n);
  }
done:
  free(paths), free(c), free(inv), free(mean), free(var), free(r2), free(order), free(indeg);
  return rc;
}
