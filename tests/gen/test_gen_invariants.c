/* test_gen_invariants — decode every graph of caches built with each graph
 * model, mechanism, noise, intervention kind and target mode, and check:
 *  - dimensions within the options, distinct targets, a DAG;
 *  - twin property: every column outside the target's descendants is
 *    bit-identical to base; a DO target column equals its value bit for bit;
 *  - linear SCMs: every twin row reuses the base row's noise, i.e. the
 *    residual x_j - sum_i W[i][j] x_i of a changed non-target node equals the
 *    base residual (a SHIFT target's residual is the base's plus value, a
 *    NOISE target's is value times the base's: its noise term scaled, the
 *    same exogenous draw; a SOFT target's residual under its stored new
 *    weights is the base's: the new mechanism in effect, the same noise);
 *  - standardised caches: base columns have mean 0 and std 1.
 * usage: test_gen_invariants TWINCACHE_GEN TMPDIR */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_test_util.h"

typedef struct {
  uint32_t nodes_min, nodes_max, targets; /* targets 0 = all */
  int kind, standardized, linear;
  uint64_t graphs, changed_cols, edges;
  uint32_t tpw_min, tpw_max; /* targets per world (0: 1:1) */
  uint64_t multi_worlds;     /* worlds with more than one target */
} ctx;

static double residual(const twincache_graph *g, const float *row, uint32_t j) {
  double r = row[j];
  for (uint32_t i = 0; i < g->n_nodes; i++)
    if (g->adj[i * g->ld_adj + j]) r -= (double)g->weight[i * g->ld_adj + j] * row[i];
  return r;
}

/* The residual of target t under soft world k's stored weights (linear). */
static double soft_residual(const twincache_graph *g, uint32_t k, const float *row, uint32_t t) {
  const float *w = g->soft + (size_t)k * g->n_nodes;
  double r = row[t];
  for (uint32_t i = 0; i < g->n_nodes; i++)
    if (g->adj[i * g->ld_adj + t]) r -= (double)w[i] * row[i];
  return r;
}

static void check_graph(const twincache_graph *g, const twincache_dims *dims, void *user) {
  ctx *cx = user;
  uint32_t n = g->n_nodes, S = g->n_samples, K = g->n_inter;
  unsigned long long id = (unsigned long long)g->index;
  TC_REQUIRE(n >= cx->nodes_min && n <= cx->nodes_max, "graph %llu: %u nodes", id, n);
  TC_REQUIRE(S == dims->samples && n <= dims->max_nodes && K <= dims->max_inter, "graph %llu: dims", id);
  TC_REQUIRE(K == (cx->targets == 0 || cx->targets > n ? n : cx->targets), "graph %llu: K=%u", id, K);
  TC_REQUIRE(twincache_graph_is_dag(g->adj, n, g->ld_adj), "graph %llu is not a DAG", id);
  TC_REQUIRE(!!(g->flags & TWINCACHE_GRAPH_STANDARDIZED) == cx->standardized, "graph %llu: flags", id);
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t j = 0; j < n; j++) {
      cx->edges += g->adj[i * g->ld_adj + j];
      if (cx->linear && g->adj[i * g->ld_adj + j])
        TC_REQUIRE(g->weight[i * g->ld_adj + j] != 0.0f, "graph %llu: zero weight on an edge", id);
    }
  uint8_t seen[TWINCACHE_MAX_NODES] = {0}, desc[TWINCACHE_MAX_NODES], one[TWINCACHE_MAX_NODES];
  for (uint32_t k = 0; k < K; k++) {
    uint32_t t = g->target[k];
    TC_REQUIRE(t < n && !seen[t], "graph %llu: target %u repeated or out of range", id, t);
    seen[t] = 1;
    TC_REQUIRE(g->kind[k] == cx->kind, "graph %llu: kind", id);
    /* the world's targets (several: multi-target) and the union of their sets */
    uint32_t nt = g->n_targets[k], lo = cx->tpw_min ? cx->tpw_min : 1, hi = cx->tpw_max ? cx->tpw_max : 1;
    TC_REQUIRE(nt >= (lo < n ? lo : n) && nt <= hi, "graph %llu world %u: %u targets", id, k, nt);
    cx->multi_worlds += nt > 1;
    int16_t tix[TWINCACHE_MAX_NODES];
    float tv[TWINCACHE_MAX_TARGETS];
    for (uint32_t j = 0; j < n; j++) tix[j] = -1;
    twincache_graph_descendants(g->adj, n, g->ld_adj, t, desc);
    tix[t] = 0;
    tv[0] = g->value[k];
    for (uint32_t i = 1; i < nt; i++) {
      uint32_t u = g->more_target[(size_t)k * (TWINCACHE_MAX_TARGETS - 1) + i - 1];
      TC_REQUIRE(u < n && tix[u] < 0, "graph %llu world %u: extra target %u repeated or out of range", id, k, u);
      tix[u] = (int16_t)i;
      tv[i] = g->more_value[(size_t)k * (TWINCACHE_MAX_TARGETS - 1) + i - 1];
      twincache_graph_descendants(g->adj, n, g->ld_adj, u, one);
      for (uint32_t j = 0; j < n; j++) desc[j] |= one[j];
    }
    for (uint32_t s = 0; s < S; s++) {
      const float *b = g->base + (size_t)s * g->ld;
      const float *x = g->inter + ((size_t)k * S + s) * g->ld;
      for (uint32_t j = 0; j < n; j++) {
        if (!desc[j]) {
          TC_REQUIRE(!memcmp(&x[j], &b[j], sizeof(float)), "graph %llu inter %u row %u: non-descendant %u differs", id,
                k, s, j);
        } else if (tix[j] >= 0 && g->kind[k] == TWINCACHE_DO) {
          TC_REQUIRE(!memcmp(&x[j], &tv[tix[j]], sizeof(float)), "graph %llu inter %u: do column %u != value", id, k, j);
        } else if (cx->linear && !cx->standardized) {
          int soft = j == t && g->kind[k] == TWINCACHE_INTER_SOFT;
          float tvj = tix[j] >= 0 ? tv[tix[j]] : 0.0f;
          double rb = residual(g, b, j), rx = soft ? soft_residual(g, k, x, j) : residual(g, x, j);
          double want = tix[j] < 0 || soft ? rb : g->kind[k] == TWINCACHE_INTER_NOISE ? tvj * rb : rb + tvj;
          int root = soft;
          for (uint32_t i = 0; i < n && root; i++) root = !g->adj[i * g->ld_adj + j];
          if (root) { /* a soft root (FORMAT.md 3.6): noise term times entry j (+0.0: 1), + the value */
            const float a = g->soft[(size_t)k * n + j];
            want = (a != 0.0f ? a : 1.0) * rb + tvj;
          }
          double scale = 1.0 + fabs(x[j]) + fabs(b[j]);
          for (uint32_t i = 0; i < n; i++)
            if (g->adj[i * g->ld_adj + j])
              scale += (fabs(g->weight[i * g->ld_adj + j]) + (soft ? fabs(g->soft[(size_t)k * n + i]) : 0.0)) *
                       (fabs(x[i]) + fabs(b[i]));
          TC_REQUIRE(fabs(rx - want) <= 1e-5 * scale, "graph %llu inter %u row %u node %u: noise not shared (%g vs %g)",
                id, k, s, j, rx, want);
        }
      }
    }
    for (uint32_t j = 0; j < n; j++) cx->changed_cols += desc[j];
  }
  if (cx->standardized) {
    for (uint32_t j = 0; j < n; j++) {
      double m = 0, v = 0;
      for (uint32_t s = 0; s < S; s++) m += g->base[(size_t)s * g->ld + j];
      m /= S;
      for (uint32_t s = 0; s < S; s++) {
        double d = g->base[(size_t)s * g->ld + j] - m;
        v += d * d;
      }
      double sd = sqrt(v / S);
      TC_REQUIRE(fabs(m) < 1e-4, "graph %llu node %u: standardised mean %g", id, j, m);
      TC_REQUIRE(fabs(sd - 1.0) < 1e-3 || g->norm_std[j] == 1.0f, "graph %llu node %u: standardised std %g", id, j, sd);
    }
  }
  cx->graphs++;
}

static void run_case(const char *gen, const char *dir, const char *graphs, const char *const *opts, ctx cx) {
  char err[8192];
  const char *args[64] = {"--out", dir, "--graphs", graphs, "--quiet", "--chunk-graphs", "32"};
  int n = 7;
  for (int i = 0; opts[i]; i++) args[n++] = opts[i];
  args[n] = NULL;
  tg_rmrf(dir);
  int rc = tg_run(gen, args, err, sizeof err);
  TC_REQUIRE(rc == 0, "generator exit %d: %s", rc, err);
  uint64_t want = strtoull(graphs, NULL, 10);
  uint64_t got = tg_for_each_graph(dir, check_graph, &cx);
  TC_REQUIRE(got == want && cx.graphs == want, "visited %llu of %llu graphs", (unsigned long long)got,
        (unsigned long long)want);
  TC_REQUIRE(cx.edges > 0, "no edges at all");
  TC_REQUIRE(cx.tpw_max < 2 || cx.multi_worlds > 0, "no multi-target world");
  printf("%-60s %llu graphs, %llu edges, %llu changed columns: ok\n", opts[0] ? opts[0] : "(defaults)",
         (unsigned long long)cx.graphs, (unsigned long long)cx.edges, (unsigned long long)cx.changed_cols);
  tg_rmrf(dir);
}

int main(int argc, char **argv) {
  TC_REQUIRE(argc == 3, "usage: %s TWINCACHE_GEN TMPDIR", argv[0]);
  const char *gen = argv[1];
  char dir[4600];
  snprintf(dir, sizeof dir, "%s/gen_invariants", argv[2]);

  const char *def[] = {NULL};
  run_case(gen, dir, "400", def, (ctx){5, 10, 0, TWINCACHE_DO, 0, 1, 0, 0, 0, 0, 0, 0});

  const char *mlp[] = {"--mechanism", "mlp", "--standardize", "--mlp-hidden", "6", NULL};
  run_case(gen, dir, "150", mlp, (ctx){5, 10, 0, TWINCACHE_DO, 1, 0, 0, 0, 0, 0, 0, 0});

  const char *shift[] = {"--intervention", "shift", "--targets", "3", "--graph", "ba", "--ba-m", "2", NULL};
  run_case(gen, dir, "300", shift, (ctx){5, 10, 3, TWINCACHE_SHIFT, 0, 1, 0, 0, 0, 0, 0, 0});

  const char *ws[] = {"--graph", "ws", "--ws-k", "2", "--ws-p", "0.5", "--noise", "laplace",
                      "--standardize", NULL};
  run_case(gen, dir, "200", ws, (ctx){5, 10, 0, TWINCACHE_DO, 1, 1, 0, 0, 0, 0, 0, 0});

  const char *er[] = {"--expected-degree", "2", "--noise", "uniform", "--value-dist", "uniform",
                      "--values", "-1:1", "--nodes", "1:4", "--targets", "2", NULL};
  run_case(gen, dir, "300", er, (ctx){1, 4, 2, TWINCACHE_DO, 0, 1, 0, 0, 0, 0, 0, 0});

  const char *mlp_shift[] = {"--mechanism", "mlp", "--intervention", "shift", "--nodes", "12:20",
                             "--samples", "16", "--edge-prob", "0.5", NULL};
  run_case(gen, dir, "100", mlp_shift, (ctx){12, 20, 0, TWINCACHE_SHIFT, 0, 0, 0, 0, 0, 0, 0, 0});

  /* the noise kind: factors far from 1, so a target left unscaled fails */
  const char *noise[] = {"--intervention", "noise", "--values", "0.2:0.6", "--targets", "3", NULL};
  run_case(gen, dir, "300", noise, (ctx){5, 10, 3, TWINCACHE_INTER_NOISE, 0, 1, 0, 0, 0, 0, 0, 0});
  const char *mlp_noise[] = {"--mechanism", "mlp", "--intervention", "noise", "--standardize",
                             "--noise", "gumbel", NULL};
  run_case(gen, dir, "150", mlp_noise, (ctx){5, 10, 0, TWINCACHE_INTER_NOISE, 1, 0, 0, 0, 0, 0, 0, 0});

  /* the soft kind: new weights for the target's parents (stored, in effect) */
  const char *soft[] = {"--intervention", "soft", "--targets", "4", "--weights", "0.5:2", NULL};
  run_case(gen, dir, "300", soft, (ctx){5, 10, 4, TWINCACHE_INTER_SOFT, 0, 1, 0, 0, 0, 0, 0, 0});
  const char *mlp_soft[] = {"--mechanism", "mlp", "--intervention", "soft", "--standardize", NULL};
  run_case(gen, dir, "100", mlp_soft, (ctx){5, 10, 0, TWINCACHE_INTER_SOFT, 1, 0, 0, 0, 0, 0, 0, 0});

  /* multi-target worlds: the union of the targets' sets changes, every
   * target follows its own value (do: fixed; shift: its residual moved) */
  const char *multi_do[] = {"--targets", "4", "--targets-per-world", "1:3", "--nodes", "5:10", NULL};
  ctx cm = {5, 10, 4, TWINCACHE_DO, 0, 1, 0, 0, 0, 1, 3, 0};
  run_case(gen, dir, "300", multi_do, cm);
  const char *multi_shift[] = {"--intervention", "shift", "--targets-per-world", "2:4", "--mechanism", "mlp",
                               "--standardize", NULL};
  run_case(gen, dir, "100", multi_shift, (ctx){5, 10, 0, TWINCACHE_SHIFT, 1, 0, 0, 0, 0, 2, 4, 0});
  const char *multi_noise[] = {"--intervention", "noise", "--targets-per-world", "3:3", "--values", "0.2:0.5", NULL};
  run_case(gen, dir, "200", multi_noise, (ctx){5, 10, 0, TWINCACHE_INTER_NOISE, 0, 1, 0, 0, 0, 3, 3, 0});

  const char *rff[] = {"--mechanism", "rff", "--standardize", "--rff-features", "12", "--noise", "gumbel",
                       "--graph", "sf", NULL};
  run_case(gen, dir, "150", rff, (ctx){5, 10, 0, TWINCACHE_DO, 1, 0, 0, 0, 0, 0, 0, 0});
  const char *rff_shift[] = {"--mechanism", "rff", "--intervention", "shift", "--targets", "4",
                             "--nodes", "8:14", "--samples", "16", "--rff-length", "0.5", NULL};
  run_case(gen, dir, "100", rff_shift, (ctx){8, 14, 4, TWINCACHE_SHIFT, 0, 0, 0, 0, 0, 0, 0, 0});
  const char *mixed[] = {"--mechanism", "linear:1,mlp:1,rff:1,sigmoid:1,poly:1", "--standardize", NULL};
  run_case(gen, dir, "150", mixed, (ctx){5, 10, 0, TWINCACHE_DO, 1, 0, 0, 0, 0, 0, 0, 0});
  const char *het[] = {"--hetero", "2", "--intervention", "shift", "--targets", "3", NULL};
  run_case(gen, dir, "150", het, (ctx){5, 10, 3, TWINCACHE_SHIFT, 0, 0, 0, 0, 0, 0, 0, 0});
  const char *iscm[] = {"--iscm", "--mechanism", "mlp", NULL};
  run_case(gen, dir, "150", iscm, (ctx){5, 10, 0, TWINCACHE_DO, 1, 0, 0, 0, 0, 0, 0, 0});

  tg_rmrf(dir);
  printf("test_gen_invariants: ok\n");
  return 0;
}
