/* test_scm_independent.c — independent worlds (twincache-gen --worlds
 * independent, FORMAT.md 3.9) against twin worlds of the same SCMs: per
 * case, a twin cache T and an independent cache I of the same options and
 * seed (and I again with one thread). Checked:
 *  - 1 vs 2 threads: every frame of I is the same bytes;
 *  - the same SCMs: graph, parameters, interventions, normalisation and the
 *    base world of I are T's bit for bit; only the INDEPENDENT flag differs;
 *  - no shared noise: in every world of I the columns a twin shares with its
 *    base world (neither a target nor a descendant) hold no value equal to
 *    the base world's, and matching rows are uncorrelated (mean Pearson r of
 *    world column vs base column, per graph, within 4.5 standard errors of
 *    0). The same two checks run on T must report shared noise (all values
 *    equal, r far from 0): they can fail;
 *  - the same law (unstandardised cases with moments): world k of I against
 *    twin world k of T, per column, (mean_I - mean_T) / se and
 *    log(var_I / var_T), per-graph averages within 4.5 standard errors of 0
 *    (as test_loader_fresh_dist compares fresh with stored worlds);
 *  - the rule, bit for bit (unstandardised cases): a stored world k of I is
 *    the twin world k of its SCM on the noise stream that starts at
 *    world_key(s0, k + 1) (s0: graph i's noise stream, seed and 8i + 2), and
 *    a fresh world k (scm/, as the loader and the GPU sampler's host
 *    emulation compute it) is the twin world k on the fresh noise of
 *    world_key(key, k + 1); the loader's fresh batches are those worlds.
 *
 * usage: test_scm_independent TWINCACHE_GEN SCRATCH_DIR */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_math.h"
#include "tc_scm.h"
#include "tc_test.h"
#include "twincache_cache.h"
#include "twincache_format.h"
#include "twincache_loader.h"
#include "tc_acc.h"

enum { S = 64, SEED = 5 };

/* mean and population variance of column j of rows (S, ld) */
static void col_moments(const float *rows, uint32_t ld, uint32_t j, double *mean, double *var) {
  double s = 0, q = 0;
  for (uint32_t r = 0; r < S; r++) s += rows[(size_t)r * ld + j];
  *mean = s / S;
  for (uint32_t r = 0; r < S; r++) {
    double d = rows[(size_t)r * ld + j] - *mean;
    q += d * d;
  }
  *var = q / S;
}

static double col_corr(const float *a, const float *b, uint32_t ld, uint32_t j) {
  double ma, va, mb, vb, c = 0;
  col_moments(a, ld, j, &ma, &va);
  col_moments(b, ld, j, &mb, &vb);
  for (uint32_t r = 0; r < S; r++) c += (a[(size_t)r * ld + j] - ma) * (b[(size_t)r * ld + j] - mb);
  return c / S / sqrt(va * vb);
}

/* 1 when node j is one of world k's targets, 2 when it is a do() target
 * (its column is the value), else 0 */
static int target_of(const twincache_graph *g, uint32_t k, uint32_t j) {
  uint32_t nt = g->n_targets[k];
  for (uint32_t i = 0; i < nt; i++) {
    uint32_t t = i ? g->more_target[(size_t)k * (TWINCACHE_MAX_TARGETS - 1) + i - 1] : g->target[k];
    if (t == j) return g->kind[k] == TWINCACHE_DO ? 2 : 1;
  }
  return 0;
}

/* world k's changed set as a twin has it: targets and their descendants */
static void changed_set(const twincache_graph *g, uint32_t k, uint8_t *ch) {
  uint8_t one[TWINCACHE_MAX_NODES];
  memset(ch, 0, g->n_nodes);
  for (uint32_t i = 0; i < g->n_targets[k]; i++) {
    uint32_t t = i ? g->more_target[(size_t)k * (TWINCACHE_MAX_TARGETS - 1) + i - 1] : g->target[k];
    twincache_graph_descendants(g->adj, g->n_nodes, g->ld_adj, t, one);
    for (uint32_t j = 0; j < g->n_nodes; j++) ch[j] |= one[j];
  }
}

typedef struct shared_stats {
  uint64_t cells, equal; /* values of twin-unchanged columns; of them bit-equal to base */
  acc r;                 /* per-graph mean correlation of matching rows, world vs base */
} shared_stats;

/* How much of the base world's noise the worlds of g share. */
static void shared_add(const twincache_graph *g, shared_stats *st) {
  const uint32_t n = g->n_nodes, ld = g->ld;
  uint8_t ch[TWINCACHE_MAX_NODES];
  double rsum = 0;
  uint32_t rn = 0;
  for (uint32_t k = 0; k < g->n_inter; k++) {
    const float *w = g->inter + (size_t)k * S * ld;
    changed_set(g, k, ch);
    for (uint32_t j = 0; j < n; j++) {
      if (target_of(g, k, j) == 2) continue; /* a constant */
      if (!ch[j])
        for (uint32_t s = 0; s < S; s++, st->cells++)
          st->equal += memcmp(&w[(size_t)s * ld + j], &g->base[(size_t)s * ld + j], 4) == 0;
      double m, va, vb;
      col_moments(w, ld, j, &m, &va);
      col_moments(g->base, ld, j, &m, &vb);
      if (va > 1e-12 && vb > 1e-12 && isfinite(va) && isfinite(vb)) {
        rsum += col_corr(w, g->base, ld, j);
        rn++;
      }
    }
  }
  if (rn) acc_add(&st->r, rsum / rn);
}

/* World k of I against twin world k of T (the same SCM), per column. */
static void law_add(const twincache_graph *gi, const twincache_graph *gt, acc *z, acc *lv) {
  const uint32_t n = gi->n_nodes, ld = gi->ld;
  double zs = 0, ls = 0;
  uint32_t c = 0;
  for (uint32_t k = 0; k < gi->n_inter; k++) {
    const float *a = gi->inter + (size_t)k * S * ld, *b = gt->inter + (size_t)k * S * ld;
    for (uint32_t j = 0; j < n; j++) {
      if (target_of(gi, k, j) == 2) continue;
      double ma, va, mb, vb;
      col_moments(a, ld, j, &ma, &va);
      col_moments(b, ld, j, &mb, &vb);
      if (!(va > 1e-12 && vb > 1e-12) || !isfinite(va) || !isfinite(vb)) continue;
      zs += (ma - mb) / sqrt(va / S + vb / S);
      ls += log(va / vb);
      c++;
    }
  }
  if (c) {
    acc_add(z, zs / c);
    acc_add(lv, ls / c);
  }
}

static int same_f32(const float *a, const float *b, size_t n) { return memcmp(a, b, n * sizeof(float)) == 0; }

/* The SCM of graph i of cache c, from its frame, in st (*m). */
static void scm_of(twincache_cache *c, twincache_dctx *d, tc_scm_store *st, uint64_t i, tc_scm *m) {
  void *frame = NULL;
  size_t size = 0;
  twincache_frame_view v;
  TC_REQUIRE(twincache_cache_read_frame(c, i, &frame, &size) == TWINCACHE_OK);
  TC_REQUIRE(twincache_frame_decode_view(d, frame, size, &v) == TWINCACHE_OK);
  TC_REQUIRE(tc_scm_from_view(st, &v, m) == TWINCACHE_OK);
  free(frame);
}

/* The rule, bit for bit, on graph i (unstandardised): stored world k of gi
 * is twin world k on the stream world_key(s0, k + 1); fresh world k
 * (key) is twin world k on the fresh noise of world_key(key, k + 1).
 * fresh (K+1, S, n) gets the fresh independent worlds: base then world k. */
static uint64_t rule_check(twincache_cache *c, twincache_dctx *d, tc_scm_store *st, tc_scm_sampler *sp,
                           const twincache_graph *gi, uint64_t key, float *fresh, float *a, float *b) {
  tc_scm m;
  scm_of(c, d, st, gi->index, &m);
  const uint32_t n = m.n;
  const size_t sn = (size_t)S * n;
  uint64_t bad = 0;
  TC_CHECK(m.independent == 1);
  tc_scm twin = m;
  twin.independent = 0;
  /* stored: the generator's noise stream of graph i, then world k's own */
  const uint64_t s0 = tc_math_stream(SEED, gi->index * 8 + 2);
  for (uint32_t k = 0; k < m.n_inter; k++) {
    tc_rng r = {tc_math_world_key(s0, (uint64_t)k + 1)};
    tc_scm_noise_stream(sp, &twin, S, &r);
    tc_scm_sample_base(sp, &twin, S, a, n, NULL, NULL);
    tc_scm_twin(sp, &twin, k, S, NULL);
    tc_scm_twin_rows(sp, &twin, k, S, a, n, b, n);
    for (uint32_t s = 0; s < S; s++)
      bad += !same_f32(b + (size_t)s * n, gi->inter + ((size_t)k * S + s) * gi->ld, n);
  }
  /* fresh: the independent worlds of key, then each as a twin of its own key */
  tc_scm_noise_fresh(sp, &m, S, key);
  tc_scm_sample_base(sp, &m, S, fresh, n, NULL, NULL);
  for (uint32_t k = 0; k < m.n_inter; k++) {
    tc_scm_twin(sp, &m, k, S, NULL);
    tc_scm_twin_rows(sp, &m, k, S, fresh, n, fresh + (k + 1) * sn, n);
  }
  for (uint32_t k = 0; k < m.n_inter; k++) {
    tc_scm_noise_fresh(sp, &twin, S, tc_math_world_key(key, (uint64_t)k + 1));
    tc_scm_sample_base(sp, &twin, S, a, n, NULL, NULL);
    tc_scm_twin(sp, &twin, k, S, NULL);
    tc_scm_twin_rows(sp, &twin, k, S, a, n, b, n);
    bad += !same_f32(b, fresh + (k + 1) * sn, sn);
  }
  return bad;
}

typedef struct tcase {
  const char *name, *flags;
  int law; /* unstandardised, a noise with moments: the law and the rule are checked */
} tcase;

static void gen(const char *gen_path, const char *out, const tcase *c, int graphs, int threads, const char *worlds) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "'%s' --out '%s' --graphs %d --samples %d --seed %d --threads %d --quiet --nodes 3:8 "
           "--worlds %s %s", gen_path, out, graphs, S, SEED, threads, worlds, c->flags);
  TC_REQUIRE(system(cmd) == 0, "%s failed", cmd);
}

static twincache_cache *open_c(const char *path) {
  twincache_cache *c = NULL;
  TC_REQUIRE(twincache_cache_open(path, &c) == TWINCACHE_OK, "%s: %s", path, twincache_last_error());
  return c;
}

/* every frame of a and b the same bytes */
static void same_frames(twincache_cache *a, twincache_cache *b, const char *name) {
  uint64_t n = twincache_cache_count(a), diff = 0;
  TC_CHECK(n == twincache_cache_count(b));
  for (uint64_t i = 0; i < n; i++) {
    void *fa, *fb;
    size_t za, zb;
    TC_REQUIRE(twincache_cache_read_frame(a, i, &fa, &za) == TWINCACHE_OK &&
               twincache_cache_read_frame(b, i, &fb, &zb) == TWINCACHE_OK);
    diff += za != zb || memcmp(fa, fb, za) != 0;
    free(fa);
    free(fb);
  }
  TC_CHECK(diff == 0, "%s: %llu frames differ between 1 and 2 threads", name, (unsigned long long)diff);
}

/* the SCM and the base world of gi are gt's, bit for bit */
static int same_scm(const twincache_graph *gi, const twincache_graph *gt) {
  const uint32_t n = gi->n_nodes, K = gi->n_inter;
  if (n != gt->n_nodes || K != gt->n_inter || gi->mechanism != gt->mechanism ||
      (gi->flags ^ gt->flags) != TWINCACHE_GRAPH_INDEPENDENT)
    return 0;
  for (uint32_t i = 0; i < n; i++)
    if (memcmp(gi->adj + (size_t)i * gi->ld_adj, gt->adj + (size_t)i * gt->ld_adj, n) ||
        !same_f32(gi->weight + (size_t)i * gi->ld_adj, gt->weight + (size_t)i * gt->ld_adj, n))
      return 0;
  for (uint32_t s = 0; s < S; s++)
    if (!same_f32(gi->base + (size_t)s * gi->ld, gt->base + (size_t)s * gt->ld, n)) return 0;
  if ((gi->flags & TWINCACHE_GRAPH_STANDARDIZED) &&
      (!same_f32(gi->norm_mean, gt->norm_mean, n) || !same_f32(gi->norm_std, gt->norm_std, n)))
    return 0;
  return same_f32(gi->noise_scale, gt->noise_scale, n) && !memcmp(gi->target, gt->target, 2 * (size_t)K) &&
         !memcmp(gi->kind, gt->kind, K) && same_f32(gi->value, gt->value, K) &&
         !memcmp(gi->n_targets, gt->n_targets, K);
}

static void run_case(const char *gen_path, const char *dir, const tcase *c) {
  char pi[512], pt[512], p1[512];
  const int graphs = c->law ? 300 : 60;
  snprintf(pi, sizeof pi, "%s/%s-independent", dir, c->name);
  snprintf(pt, sizeof pt, "%s/%s-twin", dir, c->name);
  snprintf(p1, sizeof p1, "%s/%s-independent-1", dir, c->name);
  gen(gen_path, pi, c, graphs, 2, "independent");
  gen(gen_path, pt, c, graphs, 2, "twin");
  gen(gen_path, p1, c, graphs, 1, "independent");
  twincache_cache *ci = open_c(pi), *ct = open_c(pt), *c1 = open_c(p1);
  same_frames(ci, c1, c->name);
  TC_CHECK(twincache_cache_format_version(ci) == 5 && twincache_cache_format_version(ct) == 4,
           "%s: versions %u and %u", c->name, twincache_cache_format_version(ci), twincache_cache_format_version(ct));
  const twincache_dims *dm = twincache_cache_dims(ci);
  twincache_graph *gi = twincache_graph_alloc(dm->max_nodes, S, dm->max_inter, dm->hidden);
  twincache_graph *gt = twincache_graph_alloc(dm->max_nodes, S, dm->max_inter, dm->hidden);
  twincache_dctx *d = twincache_dctx_create();
  tc_scm_store *st = tc_scm_store_create(dm->max_nodes, dm->max_inter, dm->hidden);
  tc_scm_sampler *sp = tc_scm_sampler_create(dm->max_nodes, S);
  const size_t wf = (size_t)S * dm->max_nodes;
  float *fresh = malloc(wf * (dm->max_inter + 1) * sizeof(float)), *a = malloc(wf * sizeof(float)),
        *b = malloc(wf * sizeof(float));
  TC_REQUIRE(gi && gt && d && st && sp && fresh && a && b);
  /* the loader's fresh worlds of I, epoch 0, every graph once */
  twincache_loader_options o;
  twincache_loader_options_init(&o);
  o.samples = TWINCACHE_SAMPLES_FRESH;
  o.rows = S;
  o.batch_size = 16;
  o.threads = 2;
  twincache_loader *l = NULL;
  TC_REQUIRE(twincache_loader_open(pi, &o, NULL, &l) == TWINCACHE_OK, "%s: %s", pi, twincache_last_error());
  shared_stats si = {0}, stw = {0};
  acc z = {0}, lv = {0};
  uint64_t scm_bad = 0, rule_bad = 0, loader_bad = 0, seen = 0;
  const uint64_t tag = twincache_cache_tag(ci);
  twincache_batch *bt;
  while (twincache_loader_next(l, &bt) == TWINCACHE_OK) {
    const twincache_batch_layout *L = &bt->layout;
    const uint32_t N = L->nodes, K = L->inter;
    for (uint32_t g = 0; g < bt->n_graphs; g++) {
      const uint64_t i = bt->graph_id[g];
      TC_REQUIRE(twincache_cache_read_graph(ci, d, i, gi) == TWINCACHE_OK);
      TC_REQUIRE(twincache_cache_read_graph(ct, d, i, gt) == TWINCACHE_OK);
      seen++;
      scm_bad += !same_scm(gi, gt);
      shared_add(gi, &si);
      shared_add(gt, &stw);
      if (!c->law) continue;
      law_add(gi, gt, &z, &lv);
      rule_bad += rule_check(ci, d, st, sp, gi, tc_scm_fresh_key(tag, i, 0), fresh, a, b);
      const uint32_t n = gi->n_nodes;
      for (uint32_t s = 0; s < S; s++) {
        loader_bad += !same_f32(bt->base + ((size_t)g * S + s) * N, fresh + (size_t)s * n, n);
        for (uint32_t k = 0; k < gi->n_inter; k++)
          loader_bad += !same_f32(bt->inter + (((size_t)g * K + k) * S + s) * N,
                                  fresh + ((size_t)(k + 1) * S + s) * n, n);
      }
    }
    twincache_loader_release(l, bt);
  }
  TC_CHECK(seen == (uint64_t)graphs, "%s: %llu graphs seen", c->name, (unsigned long long)seen);
  TC_CHECK(scm_bad == 0, "%s: %llu graphs' SCM or base world differ between I and T", c->name,
           (unsigned long long)scm_bad);
  /* no shared noise in I; all of it in T (the check can fail) */
  TC_CHECK(si.cells > 0 && si.equal * 1000 < si.cells, "%s: %llu of %llu unchanged cells equal to base", c->name,
           (unsigned long long)si.equal, (unsigned long long)si.cells);
  TC_CHECK(stw.equal == stw.cells, "%s: twin: %llu of %llu", c->name, (unsigned long long)stw.equal,
           (unsigned long long)stw.cells);
  TC_CHECK(fabs(acc_mean(&si.r)) < 4.5 * acc_se(&si.r), "%s: independent worlds correlate with base: r %.4f "
           "(se %.4f)", c->name, acc_mean(&si.r), acc_se(&si.r));
  TC_CHECK(acc_mean(&stw.r) > 0.5 && acc_mean(&stw.r) > 4.5 * acc_se(&stw.r), "%s: twin r %.4f", c->name,
           acc_mean(&stw.r));
  printf("%-22s %3llu graphs: unchanged cells equal to base %llu of %llu (twin: %llu); r world-base %+.4f "
         "(se %.4f; twin %+.3f)", c->name, (unsigned long long)seen, (unsigned long long)si.equal,
         (unsigned long long)si.cells, (unsigned long long)stw.equal, acc_mean(&si.r), acc_se(&si.r),
         acc_mean(&stw.r));
  if (c->law) {
    TC_CHECK(fabs(acc_mean(&z)) < 4.5 * acc_se(&z), "%s: mean statistic %.4f (se %.4f)", c->name, acc_mean(&z),
             acc_se(&z));
    TC_CHECK(fabs(acc_mean(&lv)) < 4.5 * acc_se(&lv), "%s: log variance ratio %.4f (se %.4f)", c->name,
             acc_mean(&lv), acc_se(&lv));
    TC_CHECK(rule_bad == 0, "%s: %llu worlds break the world-key rule", c->name, (unsigned long long)rule_bad);
    TC_CHECK(loader_bad == 0, "%s: %llu loader rows differ from scm's fresh worlds", c->name,
             (unsigned long long)loader_bad);
    printf("; law z %+.3f (se %.3f), log var %+.3f (se %.3f); rule ok", acc_mean(&z), acc_se(&z), acc_mean(&lv),
           acc_se(&lv));
  }
  printf("\n");
  twincache_loader_close(l);
  free(fresh);
  free(a);
  free(b);
  tc_scm_sampler_free(sp);
  tc_scm_store_free(st);
  twincache_dctx_free(d);
  twincache_graph_free(gi);
  twincache_graph_free(gt);
  twincache_cache_close(ci);
  twincache_cache_close(ct);
  twincache_cache_close(c1);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s TWINCACHE_GEN SCRATCH_DIR\n", argv[0]);
    return 2;
  }
  static const tcase cases[] = {
      {"linear-gauss-do", "--mechanism linear --intervention do", 1},
      {"mlp-laplace-shift", "--mechanism mlp --noise laplace --intervention shift", 1},
      {"rff-uniform-noise", "--mechanism rff --noise uniform --intervention noise --values 0:2", 1},
      {"sigmoid-gumbel-soft", "--mechanism sigmoid --noise gumbel --intervention soft", 1},
      {"mixed-hetero-multi", "--mechanism linear:0.5,poly:0.5 --hetero 1 --intervention shift "
                             "--targets-per-world 1:3", 1},
      {"linear-std-do", "--mechanism linear --standardize --intervention do --targets-per-world 1:2", 0},
      {"mlp-iscm-shift", "--mechanism mlp --iscm --intervention shift", 0},
      {"poly-cauchy-std-soft", "--mechanism poly --noise cauchy --standardize --intervention soft", 0},
  };
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", argv[2], argv[2]);
  TC_REQUIRE(system(cmd) == 0);
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) run_case(argv[1], argv[2], &cases[c]);
  return tc_test_finish("test_scm_independent");
}
