/* scm.c — the one SCM sampler: noise, base world in topological order, twin
 * worlds recomputing only the target and its descendants, standardisation.
 * See tc_scm.h for the contract; the noise families sit behind one table
 * (tc_scm_noise.h), one file each (noise_*.c).
 *
 * Worlds are computed column by column: node j's S values at once, from
 * its parents' columns, so the inner loops run over rows (contiguous, and
 * vectorised by the compiler) while every single value still sees exactly
 * the float operations of the row-by-row definition, in the same order.
 * What a node's value is — mechanism, noise term, each intervention kind's
 * rule — is common/tc_node_body.h's, one copy that the GPU sampler
 * (kernels/tc_sample_body.h) compiles too; this file orders the work:
 * which nodes, which columns, which statistics. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tc_scm.h"
#include "tc_scm_noise.h"

/* the body's per-parent pass runs through scm's SIMD dispatch (below) */
static void weighted_pass(float *restrict x, const float *restrict xp, float w, const float *restrict e, int first,
                          uint32_t S);
#define TC_NODE_PASS weighted_pass
#include "tc_node_body.h"


/* ---- columns into rows ------------------------------------------------------------
 * A world is computed column by column and written as rows: column x (S)
 * goes to out[s * stride], s in [0, S). Unrolled by 4: a store and a load
 * per value, the loop's bookkeeping shared by four. */
static void column_put(float *restrict out, size_t stride, const float *restrict x, uint32_t S) {
#pragma GCC unroll 4
  for (uint32_t s = 0; s < S; s++) out[s * stride] = x[s];
}
/* the same, standardised by (mean, sd) */
static void column_put_std(float *restrict out, size_t stride, const float *restrict x, uint32_t S, float mean,
                           float sd) {
  for (uint32_t s = 0; s < S; s++) out[s * stride] = tc_math_standardize(x[s], mean, sd);
}
/* the constant v */
static void column_fill(float *restrict out, size_t stride, float v, uint32_t S) {
#pragma GCC unroll 4
  for (uint32_t s = 0; s < S; s++) out[s * stride] = v;
}

/* ---- the unit functions ----------------------------------------------------------
 * The MLP's tanh, the RFF's cos, the sigmoid and the clamped square are the
 * shared math's (common/tc_math.h: basic operations only, so every machine
 * that rounds IEEE binary32 without contracting into FMA gets the same bits,
 * the GPU sampler included, and the column loops vectorise). */
_Static_assert(TC_MATH_MECH_LINEAR == TWINCACHE_MECH_LINEAR && TC_MATH_MECH_MLP == TWINCACHE_MECH_MLP &&
                   TC_MATH_MECH_RFF == TWINCACHE_MECH_RFF && TC_MATH_MECH_SIGMOID == TWINCACHE_MECH_SIGMOID &&
                   TC_MATH_MECH_POLY == TWINCACHE_MECH_POLY,
               "tc_math.h's mechanism codes are enum twincache_mechanism's");

struct tc_scm_sampler {
  uint32_t nmax, smax;
  uint32_t S;           /* rows of the last base world */
  float *noise;         /* (n, S) scaled exogenous noise, column-major, shared by every twin world */
  float *noise_w;       /* (n, S) an independent world's own noise */
  const float *wnoise;  /* the noise the last twin read: noise, or noise_w (independent) */
  uint64_t noise_key;   /* the last noise call's key (fresh) or its stream's first state */
  int noise_fresh;      /* 1: the last noise came from counters, 0: from a stream */
  uint64_t *row_key;    /* (S) fresh noise: the rows' stream states */
  float *raw_base;      /* (n, S) unstandardised base world, column-major */
  float *raw_twin;      /* (n, S) the changed columns of the last twin (others unused) */
  const float **col;    /* (n) the column each node reads: raw_base's, or raw_twin's when changed */
  tc_node *node;        /* (n) the SCM of the last base world as the node body reads it (scm_nodes) */
  float *hid;           /* (S) MLP scratch: one hidden unit's pre-activation */
  float *e_twin;        /* (S) a NOISE target's scaled noise term */
  float *norm_mean;     /* (n) of the last base world (standardize only) */
  float *norm_std;      /* (n) */
  uint8_t *desc;        /* (n) changed set of the last twin: its targets and their descendants */
  int16_t *tidx;        /* (n) index of node j among the last twin's targets, or -1 */
  uint8_t *changed_mark; /* (n) scratch: one more target's descendant set */
  float tval[TWINCACHE_MAX_TARGETS]; /* the last twin's target values */
  uint32_t *changed;    /* (n) changed nodes of the last twin, topological order */
  uint32_t n_changed;
};

void tc_scm_sampler_free(tc_scm_sampler *sp) {
  if (!sp) return;
  free(sp->noise);
  free(sp->noise_w);
  free(sp->row_key);
  free(sp->raw_base);
  free(sp->raw_twin);
  free(sp->col);
  free(sp->node);
  free(sp->hid);
  free(sp->e_twin);
  free(sp->norm_mean);
  free(sp->norm_std);
  free(sp->desc);
  free(sp->tidx);
  free(sp->changed_mark);
  free(sp->changed);
  free(sp);
}

tc_scm_sampler *tc_scm_sampler_create(uint32_t max_nodes, uint32_t max_samples) {
  if (max_nodes < 1 || max_nodes > TWINCACHE_MAX_NODES || max_samples < 1 ||
      max_samples > TWINCACHE_MAX_SAMPLES)
    return NULL;
  tc_scm_noise_init(); /* the noise families' tables */
  tc_scm_sampler *sp = calloc(1, sizeof *sp);
  if (!sp) return NULL;
  size_t sn = (size_t)max_samples * max_nodes;
  sp->nmax = max_nodes;
  sp->smax = max_samples;
  sp->noise = malloc(sn * sizeof(float));
  sp->noise_w = malloc(sn * sizeof(float));
  sp->row_key = malloc(max_samples * sizeof(uint64_t));
  sp->raw_base = malloc(sn * sizeof(float));
  sp->raw_twin = malloc(sn * sizeof(float));
  sp->col = malloc(max_nodes * sizeof *sp->col);
  sp->node = malloc(max_nodes * sizeof *sp->node);
  sp->hid = malloc(max_samples * sizeof(float));
  sp->e_twin = malloc(max_samples * sizeof(float));
  sp->norm_mean = malloc(max_nodes * sizeof(float));
  sp->norm_std = malloc(max_nodes * sizeof(float));
  sp->desc = malloc(max_nodes);
  sp->tidx = malloc(max_nodes * sizeof(int16_t));
  sp->changed_mark = malloc(max_nodes);
  sp->changed = malloc(max_nodes * sizeof(uint32_t));
  if (!sp->noise || !sp->noise_w || !sp->row_key || !sp->raw_base || !sp->raw_twin || !sp->col || !sp->node || !sp->hid ||
      !sp->e_twin || !sp->norm_mean || !sp->norm_std || !sp->desc || !sp->tidx || !sp->changed_mark || !sp->changed) {
    tc_scm_sampler_free(sp);
    return NULL;
  }
  for (uint32_t j = 0; j < max_nodes; j++) /* what scm_nodes leaves as it is */
    sp->node[j] = (tc_node){.self = j, .w = {NULL, 1, 0}, .het = {NULL, 1, 0}};
  return sp;
}

/* ---- noise ------------------------------------------------------------------ */
void tc_scm_noise_stream(tc_scm_sampler *sp, const tc_scm *m, uint32_t S, tc_rng *rn) {
  sp->noise_key = rn->state; /* independent worlds key their streams from it */
  sp->noise_fresh = 0;
  tc_scm_noise_get(m->noise)->stream(sp->noise, m->noise_scale, m->n, S, rn);
}

uint64_t tc_scm_fresh_key(uint64_t tag, uint64_t index, uint64_t group) {
  /* distinct constants keep (tag, index, group) from cancelling each other */
  uint64_t k = tc_mix64(tag ^ 0x5bd1e9955bd1e995ull);
  k = tc_mix64(k ^ tc_mix64(index + 0x9e3779b97f4a7c15ull));
  return tc_mix64(k ^ tc_mix64(group + 0xc2b2ae3d27d4eb4full));
}

void tc_scm_noise_fresh(tc_scm_sampler *sp, const tc_scm *m, uint32_t S, uint64_t key) {
  sp->noise_key = key;
  sp->noise_fresh = 1;
  tc_scm_noise_get(m->noise)->fresh(sp->noise, m->noise_scale, m->n, S, key, sp->row_key);
}

/* Independent world k's own noise (n, S) into sp->noise_w, drawn as the
 * base world's was (stream or counters) from world k + 1's key. */
static void world_noise(tc_scm_sampler *sp, const tc_scm *m, uint32_t k, uint32_t S) {
  const tc_scm_noise *nf = tc_scm_noise_get(m->noise);
  uint64_t key = tc_math_world_key(sp->noise_key, (uint64_t)k + 1);
  if (sp->noise_fresh) {
    nf->fresh(sp->noise_w, m->noise_scale, m->n, S, key, sp->row_key);
  } else {
    tc_rng r = {key};
    nf->stream(sp->noise_w, m->noise_scale, m->n, S, &r);
  }
}

/* ---- nodes ------------------------------------------------------------------------
 * A node's value is common/tc_node_body.h's rule (mechanism, noise term,
 * intervention kinds: one copy, the GPU sampler compiles it too), run here
 * over S rows at once: node i's values are the column sp->col[i]. Its
 * weighted sums' passes run through weighted_pass: the body's scalar loop
 * (tc_node_pass) compiled for the baseline and, where the CPU has it,
 * AVX-512 (the same loop inlined into both). */
_Static_assert(TC_NODE_DO == TWINCACHE_DO && TC_NODE_SHIFT == TWINCACHE_SHIFT &&
                   TC_NODE_NOISE == TWINCACHE_INTER_NOISE && TC_NODE_SOFT == TWINCACHE_INTER_SOFT &&
                   TC_NODE_KIND_COUNT == TWINCACHE_INTER_KIND_COUNT,
               "tc_node_body.h's kind codes are enum twincache_inter_kind's");

#ifdef TC_SCM_HAVE_AVX512
TC_SCM_AVX512 static void weighted_pass_avx512(float *restrict x, const float *restrict xp, float w,
                                               const float *restrict e, int first, uint32_t S) {
  tc_node_pass(x, xp, w, e, first, S);
}
#endif
static void weighted_pass(float *restrict x, const float *restrict xp, float w, const float *restrict e, int first,
                          uint32_t S) {
#ifdef TC_SCM_HAVE_AVX512
  if (tc_scm_simd) {
    weighted_pass_avx512(x, xp, w, e, first, S);
    return;
  }
#endif
  tc_node_pass(x, xp, w, e, first, S);
}

/* The nodes of m as the body reads them (sp->node, n): each one's parent
 * list and its edge arrays (aligned with it: strides (1, 0), and self, set
 * at create), its block (n, H*n + 2H). Once per base world, so the many
 * evaluations of its twins read them as they are. */
static void scm_nodes(tc_scm_sampler *sp, const tc_scm *m) {
  const uint32_t H = m->hidden, n = m->n;
  const size_t blk = (size_t)H * n + 2 * H;
  const int mech = H ? TWINCACHE_MECH_MLP : TWINCACHE_MECH_LINEAR;
  for (uint32_t j = 0; j < n; j++) {
    tc_node *nd = &sp->node[j];
    const uint32_t q0 = m->pa_start[j];
    nd->mech = m->node_mech ? m->node_mech[j] : mech;
    nd->n_pa = m->pa_start[j + 1] - q0;
    nd->pa = m->pa_idx + q0;
    nd->w.v = m->pa_w ? m->pa_w + q0 : NULL;
    nd->blk = m->mlp ? m->mlp + j * blk : NULL;
    nd->hidden = H;
    nd->ld = n;
    nd->het.v = m->het_c ? m->het_w + q0 : NULL;
    nd->het_c = m->het_c ? m->het_c[j] : 0.0f;
  }
}

/* Column j (S values) from the columns its parents read (sp->col) and its
 * draw e (S), into x (S). */
static void eval_column(tc_scm_sampler *sp, uint32_t j, const float *restrict e, float *restrict x, uint32_t S) {
  tc_node_eval(&sp->node[j], sp->col, NULL, e, x, sp->hid, S);
}

/* Target t's raw column (S) of twin world k, value v, into x: the parents'
 * columns of the twin are in sp->col already. A DO value lives in the
 * stored space (iSCM: the columns hold stored values, v itself). */
static void twin_target(tc_scm_sampler *sp, const tc_scm *m, uint32_t k, uint32_t t, float v,
                        float *restrict x, uint32_t S) {
  const int kind = m->kind[k], stdz = m->standardize && !m->iscm;
  const float *soft = tc_node_kind_has_block(kind) ? m->soft + (size_t)k * m->soft_ld : NULL;
  const float mean = stdz ? sp->norm_mean[t] : 0.0f, sd = stdz ? sp->norm_std[t] : 1.0f;
  tc_node_twin_target(&sp->node[t], sp->col, NULL, kind, v, soft, stdz, mean, sd, sp->wnoise + (size_t)t * S, x,
                      sp->hid, sp->e_twin, S);
}

/* ---- worlds ----------------------------------------------------------------- */
/* Population mean and std of column x (S) into sp->norm_mean/std[j]. */
static void column_stats(tc_scm_sampler *sp, uint32_t j, const float *xj, uint32_t S) {
  double sum = 0.0, sq = 0.0;
  for (uint32_t s = 0; s < S; s++) sum += xj[s];
  double mean = sum / S;
  for (uint32_t s = 0; s < S; s++) {
    double d = xj[s] - mean;
    sq += d * d;
  }
  tc_math_norm(mean, sq, S, &sp->norm_mean[j], &sp->norm_std[j]);
}

/* iSCM: the base world with each column standardised as soon as it is made. */
static void sample_base_iscm(tc_scm_sampler *sp, const tc_scm *m, uint32_t S) {
  float *xb = sp->raw_base;
  for (uint32_t r = 0; r < m->n; r++) {
    uint32_t j = m->order[r];
    float *x = xb + (size_t)j * S;
    eval_column(sp, j, sp->noise + (size_t)j * S, x, S);
    column_stats(sp, j, x, S);
    const float mean = sp->norm_mean[j], sd = sp->norm_std[j];
    for (uint32_t s = 0; s < S; s++) x[s] = tc_math_standardize(x[s], mean, sd);
  }
}

void tc_scm_sample_base(tc_scm_sampler *sp, const tc_scm *m, uint32_t S, float *base, uint32_t ld,
                        float *norm_mean, float *norm_std) {
  const uint32_t n = m->n;
  float *xb = sp->raw_base; /* (n, S) */
  for (uint32_t j = 0; j < n; j++) sp->col[j] = xb + (size_t)j * S;
  sp->S = S;
  sp->n_changed = 0;
  sp->wnoise = sp->noise;
  scm_nodes(sp, m);
  if (m->iscm) { /* the columns are the stored values already */
    sample_base_iscm(sp, m, S);
    if (norm_mean) memcpy(norm_mean, sp->norm_mean, n * sizeof(float));
    if (norm_std) memcpy(norm_std, sp->norm_std, n * sizeof(float));
    for (uint32_t j = 0; j < n; j++) column_put(base + j, ld, xb + (size_t)j * S, S);
    return;
  }
  for (uint32_t r = 0; r < n; r++) {
    uint32_t j = m->order[r];
    eval_column(sp, j, sp->noise + (size_t)j * S, xb + (size_t)j * S, S);
  }
  if (!m->standardize) {
    for (uint32_t j = 0; j < n; j++) column_put(base + j, ld, xb + (size_t)j * S, S);
    return;
  }
  for (uint32_t j = 0; j < n; j++) column_stats(sp, j, xb + (size_t)j * S, S);
  if (norm_mean) memcpy(norm_mean, sp->norm_mean, n * sizeof(float));
  if (norm_std) memcpy(norm_std, sp->norm_std, n * sizeof(float));
  for (uint32_t j = 0; j < n; j++)
    column_put_std(base + j, ld, xb + (size_t)j * S, S, sp->norm_mean[j], sp->norm_std[j]);
}

uint32_t tc_scm_twin(tc_scm_sampler *sp, const tc_scm *m, uint32_t k, uint32_t S,
                     const uint32_t **changed) {
  const uint32_t n = m->n;
  /* the previous twin's columns read the base world again */
  for (uint32_t ci = 0; ci < sp->n_changed; ci++)
    sp->col[sp->changed[ci]] = sp->raw_base + (size_t)sp->changed[ci] * S;
  /* the world's targets: target[k], then its extra ones (multi-target) */
  const uint32_t nt = m->n_targets ? m->n_targets[k] : 1;
  for (uint32_t j = 0; j < n; j++) sp->tidx[j] = -1;
  for (uint32_t i = 0; i < nt; i++) {
    uint32_t t = i ? m->more_target[(size_t)k * (TWINCACHE_MAX_TARGETS - 1) + i - 1] : m->target[k];
    sp->tidx[t] = (int16_t)i;
    sp->tval[i] = i ? m->more_value[(size_t)k * (TWINCACHE_MAX_TARGETS - 1) + i - 1] : m->value[k];
    if (m->desc || m->independent) continue; /* independent: every node, below */
    /* the changed set: the union of the targets' descendant sets */
    twincache_graph_descendants(m->adj, n, m->ld_adj, t, i ? sp->changed_mark : sp->desc);
    if (i)
      for (uint32_t j = 0; j < n; j++) sp->desc[j] |= sp->changed_mark[j];
  }
  if (m->desc) memcpy(sp->desc, m->desc + (size_t)k * n, n);
  sp->wnoise = sp->noise;
  if (m->independent) { /* its own noise: every node changes */
    world_noise(sp, m, k, S);
    sp->wnoise = sp->noise_w;
    memset(sp->desc, 1, n);
  }
  uint32_t nc = 0;
  for (uint32_t r = 0; r < n; r++) { /* every node stores, a changed one advances nc */
    sp->changed[nc] = m->order[r];
    nc += sp->desc[m->order[r]] != 0;
  }
  sp->n_changed = nc;
  for (uint32_t ci = 0; ci < nc; ci++) { /* topological order: parents first */
    uint32_t j = sp->changed[ci];
    float *x = sp->raw_twin + (size_t)j * S;
    const int is_target = sp->tidx[j] >= 0;
    if (is_target) twin_target(sp, m, k, j, sp->tval[sp->tidx[j]], x, S);
    else eval_column(sp, j, sp->wnoise + (size_t)j * S, x, S);
    if (m->iscm && !(is_target && tc_node_kind_fixes(m->kind[k]))) { /* the base world's map of node j */
      const float mean = sp->norm_mean[j], sd = sp->norm_std[j];
      for (uint32_t s = 0; s < S; s++) x[s] = tc_math_standardize(x[s], mean, sd);
    }
    sp->col[j] = x;
  }
  if (changed) *changed = sp->changed;
  return nc;
}

/* The stored-space values of changed node j of the last twin, (S) into out
 * with stride `stride`. */
static void twin_column(const tc_scm_sampler *sp, const tc_scm *m, uint32_t k, uint32_t S, uint32_t j,
                        float *out, size_t stride) {
  if (sp->tidx[j] >= 0 && tc_node_kind_fixes(m->kind[k])) {
    column_fill(out, stride, sp->tval[sp->tidx[j]], S);
    return;
  }
  const float *x = sp->raw_twin + (size_t)j * S;
  if (!m->standardize || m->iscm) /* iSCM: standardised already */
    column_put(out, stride, x, S);
  else
    column_put_std(out, stride, x, S, sp->norm_mean[j], sp->norm_std[j]);
}

void tc_scm_twin_rows(const tc_scm_sampler *sp, const tc_scm *m, uint32_t k, uint32_t S,
                      const float *base, uint32_t ld_base, float *dst, uint32_t ld) {
  const uint32_t n = m->n;
  if (dst != base) {
    if (ld == ld_base)
      memcpy(dst, base, (size_t)S * ld * sizeof(float)); /* padding columns come along */
    else
      for (uint32_t s = 0; s < S; s++) memcpy(dst + (size_t)s * ld, base + (size_t)s * ld_base, n * sizeof(float));
  }
  for (uint32_t ci = 0; ci < sp->n_changed; ci++)
    twin_column(sp, m, k, S, sp->changed[ci], dst + sp->changed[ci], ld);
}

uint32_t tc_scm_twin_cols(const tc_scm_sampler *sp, const tc_scm *m, uint32_t k, uint32_t S,
                          float *cols) {
  uint32_t c = 0;
  int fixed = tc_node_kind_fixes(m->kind[k]);
  for (uint32_t j = 0; j < m->n; j++) { /* increasing node order */
    if (!sp->desc[j] || (sp->tidx[j] >= 0 && fixed)) continue;
    twin_column(sp, m, k, S, j, cols + (size_t)c * S, 1);
    c++;
  }
  return c;
}
