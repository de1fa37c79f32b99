/* test_node_body — common/tc_node_body.h, the per-node rule scm/ and the GPU
 * sampler share, on its own:
 *  - layouts: a node read as scm/ reads it (S lanes of columns, weights
 *    aligned with the parent list) and as the kernel reads it (one row,
 *    S = 1, weights in a dense (n, n) matrix) gives the same bits, for every
 *    mechanism, with and without heteroscedastic noise, and for every
 *    intervention kind on a root and on a node with parents (soft included,
 *    which the kernel never computes, so test_sample_scm cannot see it);
 *  - the rule: each value equals a scalar reference written here from
 *    FORMAT.md 3.8.1 (a node's column, the kinds of a twin world), using
 *    only tc_math.h's unit functions.
 * Random nodes from a fixed seed; no files, no threads. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tc_common.h"
#include "tc_node_body.h"
#include "tc_test.h"

enum { N = 6, H = 3, S = 7, BLK = H * N + 2 * H };

/* One random SCM of N nodes (parents: lower indices, each with p = 1/2). */
typedef struct scm6 {
  uint32_t pa[N][N], n_pa[N];
  float dense_w[N * N], edge_w[N][N]; /* (i, j) weight of i -> j; the same by parent position */
  float dense_v[N * N], edge_v[N][N], het_c[N];
  float blk[N][BLK], soft_lin[N], soft_blk[BLK];
} scm6;

static float draw(tc_rng *r, double lo, double hi) { return (float)tc_rng_range(r, lo, hi); }

static void scm6_draw(scm6 *g, tc_rng *r) {
  memset(g, 0, sizeof *g);
  for (uint32_t j = 0; j < N; j++) {
    for (uint32_t i = 0; i < j; i++) {
      if (tc_rng_uniform(r) < 0.5) continue;
      const uint32_t p = g->n_pa[j]++;
      g->pa[j][p] = i;
      g->edge_w[j][p] = g->dense_w[i * N + j] = draw(r, -2, 2);
      g->edge_v[j][p] = g->dense_v[i * N + j] = draw(r, -1, 1);
    }
    g->het_c[j] = draw(r, -0.5, 0.5);
    for (uint32_t q = 0; q < BLK; q++) g->blk[j][q] = draw(r, -1.5, 1.5);
    g->soft_lin[j] = draw(r, -2, 2);
  }
  for (uint32_t q = 0; q < BLK; q++) g->soft_blk[q] = draw(r, -1.5, 1.5);
}

/* Node j as scm/ fills it (edge arrays) or as the kernel does (dense). */
static tc_node node_of(const scm6 *g, uint32_t j, int mech, int het, int dense) {
  tc_node nd = {.self = j, .mech = mech, .n_pa = g->n_pa[j], .pa = g->pa[j], .blk = g->blk[j], .hidden = H, .ld = N};
  nd.w = dense ? (tc_node_vals){g->dense_w + j, 0, N} : (tc_node_vals){g->edge_w[j], 1, 0};
  if (het) {
    nd.het = dense ? (tc_node_vals){g->dense_v + j, 0, N} : (tc_node_vals){g->edge_v[j], 1, 0};
    nd.het_c = g->het_c[j];
  }
  return nd;
}

/* ---- the reference: one value, FORMAT.md 3.8.1's operations in its order ---- */
static float ref_column(const scm6 *g, uint32_t j, int mech, int het, const float *w_by_node, const float *blk,
                        const float *x, float e) {
  if (het) { /* e (1 + tanh(0.5 acc)), acc = c + sum v x */
    float acc = g->het_c[j];
    for (uint32_t p = 0; p < g->n_pa[j]; p++) acc = acc + g->edge_v[j][p] * x[g->pa[j][p]];
    e = tc_math_het(e, acc);
  }
  if (mech == TC_MATH_MECH_LINEAR) {
    float acc = 0.0f;
    for (uint32_t p = 0; p < g->n_pa[j]; p++) acc = acc + w_by_node[g->pa[j][p]] * x[g->pa[j][p]];
    return acc + e;
  }
  float out = 0.0f;
  for (uint32_t h = 0; h < H; h++) {
    float a = blk[H * N + h];
    for (uint32_t p = 0; p < g->n_pa[j]; p++) a = a + blk[h * N + g->pa[j][p]] * x[g->pa[j][p]];
    out = out + blk[H * N + H + h] * tc_math_unit(mech, a);
  }
  return out + e;
}

static float ref_twin(const scm6 *g, uint32_t j, int mech, int het, int kind, float v, int stdz, float mean, float sd,
                      const float *x, float e) {
  float own_w[N] = {0};
  for (uint32_t p = 0; p < g->n_pa[j]; p++) own_w[g->pa[j][p]] = g->edge_w[j][p];
  switch (kind) {
  case TC_NODE_DO: return stdz ? v * sd + mean : v;
  case TC_NODE_NOISE: return ref_column(g, j, mech, het, own_w, g->blk[j], x, v * e);
  case TC_NODE_SOFT: {
    const float *soft = mech == TC_MATH_MECH_LINEAR ? g->soft_lin : g->soft_blk;
    if (g->n_pa[j]) return ref_column(g, j, mech, het, soft, soft, x, e);
    const float a = soft[j]; /* a root: entry t is the noise factor */
    return ref_column(g, j, mech, het, soft, soft, x, a != 0.0f ? a * e : e) + v;
  }
  default: return ref_column(g, j, mech, het, own_w, g->blk[j], x, e) + v; /* shift */
  }
}

int main(void) {
  tc_rng r;
  tc_rng_init(&r, 2025, 25);
  scm6 g;
  float cols[N][S], e[S], x_col[S], tmp[S], e_twin[S];
  const float *col[N];
  uint64_t values = 0;
  for (int rep = 0; rep < 40; rep++) {
    scm6_draw(&g, &r);
    if (rep % 4 == 0) g.soft_lin[0] = g.soft_blk[0] = 0.0f; /* node 0, a root: a = +0.0 keeps the noise term */
    for (uint32_t i = 0; i < N; i++) {
      for (uint32_t s = 0; s < S; s++) cols[i][s] = draw(&r, -3, 3);
      col[i] = cols[i];
    }
    for (uint32_t s = 0; s < S; s++) e[s] = draw(&r, -2, 2);
    const float v = draw(&r, -2, 2), mean = draw(&r, -1, 1), sd = draw(&r, 0.5, 2);
    for (int mech = TC_MATH_MECH_LINEAR; mech <= TC_MATH_MECH_POLY; mech++)
      for (int het = 0; het < 2; het++)
        for (uint32_t j = 0; j < N; j++)
          for (int kind = -1; kind < TC_NODE_KIND_COUNT; kind++) { /* -1: the node's own column */
            const int stdz = rep % 2;
            const tc_node by_pos = node_of(&g, j, mech, het, 0), by_node = node_of(&g, j, mech, het, 1);
            const float *soft = mech == TC_MATH_MECH_LINEAR ? g.soft_lin : g.soft_blk;
            if (kind < 0)
              tc_node_eval(&by_pos, col, NULL, e, x_col, tmp, S);
            else
              tc_node_twin_target(&by_pos, col, NULL, kind, v, soft, stdz, mean, sd, e, x_col, tmp, e_twin, S);
            for (uint32_t s = 0; s < S; s++) {
              float row[N], x_row, t1, t2, want;
              for (uint32_t i = 0; i < N; i++) row[i] = cols[i][s];
              if (kind < 0) {
                tc_node_eval(&by_node, NULL, row, &e[s], &x_row, &t1, 1);
                float own_w[N] = {0};
                for (uint32_t p = 0; p < g.n_pa[j]; p++) own_w[g.pa[j][p]] = g.edge_w[j][p];
                want = ref_column(&g, j, mech, het, own_w, g.blk[j], row, e[s]);
              } else {
                tc_node_twin_target(&by_node, NULL, row, kind, v, soft, stdz, mean, sd, &e[s], &x_row, &t1, &t2, 1);
                want = ref_twin(&g, j, mech, het, kind, v, stdz, mean, sd, row, e[s]);
              }
              TC_CHECK(memcmp(&x_col[s], &x_row, sizeof x_row) == 0,
                       "rep %d mech %d het %d node %u kind %d lane %u: columns %a, row %a", rep, mech, het, j, kind,
                       s, (double)x_col[s], (double)x_row);
              TC_CHECK(memcmp(&x_row, &want, sizeof want) == 0,
                       "rep %d mech %d het %d node %u kind %d lane %u: body %a, reference %a", rep, mech, het, j,
                       kind, s, (double)x_row, (double)want);
              values++;
            }
          }
  }
  TC_CHECK(tc_node_kind_fixes(TC_NODE_DO) && !tc_node_kind_fixes(TC_NODE_SHIFT) &&
           !tc_node_kind_fixes(TC_NODE_NOISE) && !tc_node_kind_fixes(TC_NODE_SOFT));
  TC_CHECK(tc_node_kind_has_block(TC_NODE_SOFT) && !tc_node_kind_has_block(TC_NODE_DO));
  printf("test_node_body: %llu values compared\n", (unsigned long long)values);
  return tc_test_finish("test_node_body");
}
