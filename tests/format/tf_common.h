/* tf_common.h — helpers of the format tests: a tiny SCM sampler (linear or
 * MLP, twin worlds sharing the base noise) on the shared DAG of
 * tests/tc_toy_scm.h, graph comparison; checks come from tests/tc_test.h. */
#ifndef TF_COMMON_H
#define TF_COMMON_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_common.h"
#include "tc_toy_scm.h"
#include "twincache_format.h"

/* checks: TC_CHECK & co. (tests/tc_test.h), status names through strerror */
#define TC_TEST_STRERROR twincache_strerror
#include "tc_test.h"

/* What to sample. */
typedef struct tf_spec {
  uint64_t seed, index;
  uint32_t n, s;
  uint32_t k;        /* 0 < k <= n: interventions on the first k nodes of a random order */
  int mlp;           /* 1: MLP mechanism (hidden 4), 2: RFF (hidden 4), 3: MIXED (node j:
                      * linear, MLP, RFF for j % 3 = 0, 1, 2; hidden 4), 0: linear */
  int kinds;         /* 0: all do, 1: all shift, 2: alternate do/shift, 3: all noise, 4: do/shift/noise in
                      * turn, 5: all soft, 6: do/shift/noise/soft in turn */
  int standardize;
  double edge_p;
  uint32_t multi;    /* > 1: world k intervenes on 1 + k % multi nodes (not soft ones) */
  int hetero;        /* heteroscedastic noise (flag HETERO, section 4b) */
} tf_spec;

/* Evaluates one world in topological order (nodes are labelled by a random
 * order `ord`, edges go from earlier to later in it): node j is a target
 * when tmask[j] (NULL: the base world), with value tval[j]; a SOFT target's
 * mechanism takes its parameters from soft (twincache_soft_stride floats). */
static inline void tf_world(const twincache_graph *g, const uint32_t *ord, const float *e, int kind,
                     const uint8_t *tmask, const float *tval, const float *soft, float *x /* (S, ld) */) {
  uint32_t n = g->n_nodes, H = g->n_hidden, stride = H * n + 2 * H;
  for (uint32_t s = 0; s < g->n_samples; s++) {
    float *row = x + (size_t)s * g->ld;
    for (uint32_t t = 0; t < n; t++) {
      uint32_t j = ord[t];
      float m = 0.0f;
      int mech = g->mechanism == TWINCACHE_MECH_MIXED ? g->node_mech[j] : g->mechanism;
      int is_t = tmask && tmask[j];
      float value = is_t ? tval[j] : 0.0f;
      int own = !(is_t && kind == TWINCACHE_INTER_SOFT);
      if (mech == TWINCACHE_MECH_LINEAR) {
        for (uint32_t i = 0; i < n; i++)
          if (g->adj[i * g->ld_adj + j]) m += (own ? g->weight[i * g->ld_adj + j] : soft[i]) * row[i];
      } else {
        const float *blk = own ? g->mlp + (size_t)j * stride : soft;
        for (uint32_t h = 0; h < H; h++) {
          float a = blk[H * n + h];
          for (uint32_t i = 0; i < n; i++) a += blk[h * n + i] * row[i];
          m += blk[H * n + H + h] * (mech == TWINCACHE_MECH_RFF ? cosf(a) : tanhf(a));
        }
      }
      float sig = 1.0f;
      if (g->flags & TWINCACHE_GRAPH_HETERO) {
        float a = g->hetero_c[j];
        for (uint32_t i = 0; i < n; i++)
          if (g->adj[i * g->ld_adj + j]) a += g->hetero_w[i * g->ld_adj + j] * row[i];
        sig = 1.0f + tanhf(0.5f * a);
      }
      float ne = g->noise_scale[j] * e[(size_t)s * n + j], v = m + ne * sig;
      if (is_t) /* a noise target: (value * noise term) * sigma, as scm/ computes it */
        v = kind == TWINCACHE_DO ? value : kind == TWINCACHE_INTER_NOISE ? m + (value * ne) * sig : v + value;
      row[j] = v;
    }
  }
}

/* Fills g (allocated with enough capacity) with a sampled graph and its
 * worlds. Padding columns are set to NaN garbage, which encoders ignore. */
static inline void tf_sample(twincache_graph *g, const tf_spec *sp) {
  tc_rng r;
  tc_rng_init(&r, sp->seed, sp->index);
  uint32_t n = sp->n, S = sp->s, K = sp->k, ord[TWINCACHE_MAX_NODES];
  g->index = sp->index;
  g->n_nodes = n;
  g->n_samples = S;
  g->n_inter = K;
  g->mechanism = sp->mlp == 3   ? TWINCACHE_MECH_MIXED
                 : sp->mlp == 2 ? TWINCACHE_MECH_RFF
                 : sp->mlp      ? TWINCACHE_MECH_MLP
                                : TWINCACHE_MECH_LINEAR;
  for (uint32_t j = 0; sp->mlp == 3 && j < n; j++)
    g->node_mech[j] = (uint8_t)(j % 3 == 0 ? TWINCACHE_MECH_LINEAR : j % 3 == 1 ? TWINCACHE_MECH_MLP : TWINCACHE_MECH_RFF);
  g->n_hidden = sp->mlp ? 4 : 0;
  g->noise = TWINCACHE_NOISE_GAUSS;
  g->flags = (uint8_t)((sp->standardize ? TWINCACHE_GRAPH_STANDARDIZED : 0u) |
                       (sp->hetero ? TWINCACHE_GRAPH_HETERO : 0u));
  memset(g->adj, 0, (size_t)n * g->ld_adj);
  for (uint32_t a = 0; a < n; a++)
    for (uint32_t b = 0; b < g->ld_adj; b++) g->weight[a * g->ld_adj + b] = 0.0f;
  tc_toy_scm_dag(&r, n, sp->edge_p, 0.5, 2.0, ord, g->weight, g->ld_adj);
  for (uint32_t a = 0; a < n; a++)
    for (uint32_t b = 0; b < n; b++) g->adj[a * g->ld_adj + b] = g->weight[a * g->ld_adj + b] != 0.0f;
  if (sp->mlp) {
    uint32_t H = g->n_hidden, stride = H * n + 2 * H;
    for (uint32_t j = 0; j < n; j++)
      for (uint32_t q = 0; q < stride; q++) {
        float v = (float)tc_rng_range(&r, -1.0, 1.0);
        if (q < H * n && !g->adj[(q % n) * g->ld_adj + j]) v = 0.0f; /* non-parent */
        if (sp->mlp == 3 && g->node_mech[j] == TWINCACHE_MECH_LINEAR) v = 0.0f;
        g->mlp[(size_t)j * stride + q] = v;
      }
    for (uint32_t j = 0; j < n; j++) /* block nodes keep no linear weights (section 2 is +0.0 there) */
      if (sp->mlp != 3 || g->node_mech[j] != TWINCACHE_MECH_LINEAR)
        for (uint32_t i = 0; i < n; i++) g->weight[i * g->ld_adj + j] = 0.0f;
  }
  for (uint32_t j = 0; j < n; j++) g->noise_scale[j] = (float)tc_rng_range(&r, 0.5, 1.5);
  for (uint32_t j = 0; sp->hetero && j < n; j++) {
    g->hetero_c[j] = (float)tc_rng_range(&r, -0.5, 0.5);
    for (uint32_t i = 0; i < g->ld_adj; i++)
      g->hetero_w[i * g->ld_adj + j] = i < n && g->adj[i * g->ld_adj + j] ? (float)tc_rng_range(&r, -1.0, 1.0) : 0.0f;
  }
  float *e = malloc(sizeof(float) * n * S);
  TC_REQUIRE(e);
  for (size_t q = 0; q < (size_t)n * S; q++) e[q] = (float)tc_rng_normal(&r);
  for (size_t q = 0; q < (size_t)S * g->ld; q++) g->base[q] = NAN;
  tf_world(g, ord, e, 0, NULL, NULL, NULL, g->base);
  for (uint32_t k = 0; k < K; k++) {
    /* one per node when K = N, else a spread of roots and sinks */
    g->target[k] = (uint16_t)(K == n ? k : ord[(k * 7 + 3) % n]);
    static const uint8_t kinds_of[] = {0, 1, 0, TWINCACHE_INTER_NOISE, 0, TWINCACHE_INTER_SOFT};
    g->kind[k] = (uint8_t)(sp->kinds == 2 ? k % 2 : sp->kinds == 4 ? k % 3 : sp->kinds == 6 ? k % 4
                                                                             : kinds_of[sp->kinds]);
    double v = tc_rng_range(&r, 1.0, 3.0); /* the generator's default: ±[1, 3] */
    g->value[k] = (float)(tc_rng_below(&r, 2) ? v : -v);
    float *soft = NULL;
    if (g->kind[k] == TWINCACHE_INTER_SOFT) { /* new parameters on the target's parents only */
      uint32_t t = g->target[k], H = g->n_hidden, P = twincache_soft_stride(n, H, g->mechanism);
      soft = g->soft + (size_t)k * P;
      g->value[k] = 0.0f;
      for (uint32_t q = 0; q < P; q++) {
        float w = (float)tc_rng_range(&r, -2.0, 2.0);
        uint32_t i = q % n; /* linear: entry i; MLP: W1 column i while q < H*n */
        if ((H == 0 || q < H * n) && !g->adj[i * g->ld_adj + t]) w = 0.0f;
        if (g->mechanism == TWINCACHE_MECH_MIXED && g->node_mech[t] == TWINCACHE_MECH_LINEAR && q >= n)
          w = 0.0f; /* a mixed graph's linear target: n weights, the rest of its block +0.0 */
        soft[q] = w;
      }
    }
    uint8_t tmask[TWINCACHE_MAX_NODES] = {0};
    float tval[TWINCACHE_MAX_NODES];
    tmask[g->target[k]] = 1;
    tval[g->target[k]] = g->value[k];
    g->n_targets[k] = 1;
    if (sp->multi > 1 && g->kind[k] != TWINCACHE_INTER_SOFT) { /* extra targets: the next nodes */
      uint32_t c = 1 + k % sp->multi;
      if (c > n) c = n;
      for (uint32_t i = 1; i < c; i++) {
        uint32_t u = (g->target[k] + i) % n;
        double x = tc_rng_range(&r, 1.0, 3.0);
        size_t at = (size_t)k * (TWINCACHE_MAX_TARGETS - 1) + i - 1;
        g->more_target[at] = (uint16_t)u;
        g->more_value[at] = (float)(tc_rng_below(&r, 2) ? x : -x);
        tmask[u] = 1;
        tval[u] = g->more_value[at];
      }
      g->n_targets[k] = (uint8_t)c;
    }
    float *blk = g->inter + (size_t)k * S * g->ld;
    for (size_t q = 0; q < (size_t)S * g->ld; q++) blk[q] = NAN;
    tf_world(g, ord, e, g->kind[k], tmask, tval, soft, blk);
  }
  if (sp->standardize) {
    for (uint32_t j = 0; j < n; j++) {
      double m = 0, v = 0;
      for (uint32_t s = 0; s < S; s++) m += g->base[(size_t)s * g->ld + j];
      m /= S;
      for (uint32_t s = 0; s < S; s++) {
        double d = g->base[(size_t)s * g->ld + j] - m;
        v += d * d;
      }
      g->norm_mean[j] = (float)m;
      g->norm_std[j] = (float)(S > 1 && v > 0 ? sqrt(v / (S - 1)) : 1.0);
    }
    for (uint32_t w = 0; w <= K; w++) {
      float *blk = w == 0 ? g->base : g->inter + (size_t)(w - 1) * S * g->ld;
      for (uint32_t s = 0; s < S; s++)
        for (uint32_t j = 0; j < n; j++)
          blk[(size_t)s * g->ld + j] = (blk[(size_t)s * g->ld + j] - g->norm_mean[j]) / g->norm_std[j];
    }
    for (uint32_t k = 0; k < K; k++)
      if (g->kind[k] == TWINCACHE_DO) {
        uint32_t t = g->target[k];
        g->value[k] = (g->value[k] - g->norm_mean[t]) / g->norm_std[t];
        for (uint32_t i = 1; i < g->n_targets[k]; i++) {
          size_t at = (size_t)k * (TWINCACHE_MAX_TARGETS - 1) + i - 1;
          uint32_t u = g->more_target[at];
          g->more_value[at] = (g->more_value[at] - g->norm_mean[u]) / g->norm_std[u];
        }
      }
  }
  free(e);
}

static inline int tf_f32_eq(float a, float b) { return memcmp(&a, &b, 4) == 0; }

/* Bit-exact comparison of every field a decoder fills; padding must be 0. */
/* Turns a sampled linear graph into observed data (FORMAT.md 3.11): flags
 * INDEPENDENT | OBSERVED | extra (NO_DAG, NO_TARGETS), no SCM (weights and
 * noise scales +0.0, noise gauss, family unknown), every world of kind
 * OBSERVED with value +0.0; NO_DAG clears adj, NO_TARGETS leaves each world
 * one target, node 0. The rows stay as sampled: every column is stored. */
static inline void tf_observe(twincache_graph *g, unsigned extra) {
  uint32_t n = g->n_nodes;
  g->flags = (uint8_t)(TWINCACHE_GRAPH_INDEPENDENT | TWINCACHE_GRAPH_OBSERVED | extra);
  g->mechanism = TWINCACHE_MECH_LINEAR;
  g->n_hidden = 0;
  g->noise = TWINCACHE_NOISE_GAUSS;
  g->family = TWINCACHE_FAMILY_UNKNOWN;
  for (uint32_t i = 0; i < n; i++) {
    g->noise_scale[i] = 0.0f;
    for (uint32_t j = 0; j < n; j++) {
      g->weight[(size_t)i * g->ld_adj + j] = 0.0f;
      if (extra & TWINCACHE_GRAPH_NO_DAG) g->adj[(size_t)i * g->ld_adj + j] = 0;
    }
  }
  for (uint32_t k = 0; k < g->n_inter; k++) {
    g->kind[k] = TWINCACHE_INTER_OBSERVED;
    g->value[k] = 0.0f;
    for (uint32_t i = 0; i + 1 < TWINCACHE_MAX_TARGETS; i++) g->more_value[(size_t)k * (TWINCACHE_MAX_TARGETS - 1) + i] = 0.0f;
    if (extra & TWINCACHE_GRAPH_NO_TARGETS) {
      g->target[k] = 0;
      g->n_targets[k] = 1;
    }
  }
}

static inline int tf_graph_same(const twincache_graph *a, const twincache_graph *b) {
  uint32_t n = a->n_nodes, S = a->n_samples, K = a->n_inter, bad = 0;
  if (a->index != b->index || n != b->n_nodes || S != b->n_samples || K != b->n_inter ||
      a->n_hidden != b->n_hidden || a->mechanism != b->mechanism || a->noise != b->noise ||
      a->flags != b->flags)
    return 0;
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t j = 0; j < b->ld_adj; j++) {
      int ea = j < n ? a->adj[i * a->ld_adj + j] != 0 : 0;
      float wa = j < n ? a->weight[i * a->ld_adj + j] : 0.0f;
      bad += ea != b->adj[i * b->ld_adj + j];
      bad += !tf_f32_eq(ea ? wa : 0.0f, b->weight[i * b->ld_adj + j]);
    }
  if (a->mechanism == TWINCACHE_MECH_MIXED) bad += memcmp(a->node_mech, b->node_mech, n) != 0;
  if (a->mechanism != TWINCACHE_MECH_LINEAR)
    bad += memcmp(a->mlp, b->mlp, 4 * (size_t)n * (a->n_hidden * n + 2 * a->n_hidden)) != 0;
  bad += memcmp(a->noise_scale, b->noise_scale, 4 * (size_t)n) != 0;
  if (a->flags & TWINCACHE_GRAPH_HETERO) {
    bad += memcmp(a->hetero_c, b->hetero_c, 4 * (size_t)n) != 0;
    for (uint32_t i = 0; i < n; i++)
      for (uint32_t j = 0; j < n; j++)
        bad += !tf_f32_eq(a->hetero_w[i * a->ld_adj + j], b->hetero_w[i * b->ld_adj + j]);
  }
  if (a->flags & TWINCACHE_GRAPH_STANDARDIZED)
    bad += memcmp(a->norm_mean, b->norm_mean, 4 * (size_t)n) != 0 ||
           memcmp(a->norm_std, b->norm_std, 4 * (size_t)n) != 0;
  for (uint32_t k = 0; k < K; k++)
    bad += a->target[k] != b->target[k] || a->kind[k] != b->kind[k] || !tf_f32_eq(a->value[k], b->value[k]);
  for (uint32_t k = 0; k < K; k++) { /* multi-target worlds */
    bad += !b->n_targets || a->n_targets[k] != b->n_targets[k];
    for (uint32_t i = 1; b->n_targets && i < a->n_targets[k]; i++) {
      size_t at = (size_t)k * (TWINCACHE_MAX_TARGETS - 1) + i - 1;
      bad += a->more_target[at] != b->more_target[at] || !tf_f32_eq(a->more_value[at], b->more_value[at]);
    }
  }
  uint32_t P = twincache_soft_stride(n, a->n_hidden, a->mechanism);
  for (uint32_t k = 0; k < K; k++) /* a soft world's parameters */
    if (a->kind[k] == TWINCACHE_INTER_SOFT)
      bad += !b->soft || memcmp(a->soft + (size_t)k * P, b->soft + (size_t)k * P, 4 * (size_t)P) != 0;
  for (uint32_t w = 0; w <= K && a->world_rows && b->world_rows; w++) /* rows per world, 0 read as S */
    bad += (a->world_rows[w] ? a->world_rows[w] : S) != b->world_rows[w];
  for (uint32_t w = 0; w <= K; w++) {
    const float *pa = w == 0 ? a->base : a->inter + (size_t)(w - 1) * S * a->ld;
    const float *pb = w == 0 ? b->base : b->inter + (size_t)(w - 1) * S * b->ld;
    for (uint32_t s = 0; s < S; s++)
      for (uint32_t j = 0; j < b->ld; j++)
        bad += !tf_f32_eq(j < n ? pa[(size_t)s * a->ld + j] : 0.0f, pb[(size_t)s * b->ld + j]);
  }
  return bad == 0;
}

/* Fills every array of g with 0xff bytes (so missed writes show). */
static inline void tf_graph_poison(twincache_graph *g) {
  size_t n = g->cap_nodes, s = g->cap_samples, k = g->cap_inter, h = g->cap_hidden;
  memset(g->adj, 0xff, n * g->ld_adj);
  if (g->world_rows) memset(g->world_rows, 0xff, 4 * (k + 1));
  memset(g->weight, 0xff, 4 * n * g->ld_adj);
  if (g->mlp) memset(g->mlp, 0xff, 4 * n * (h * n + 2 * h));
  memset(g->noise_scale, 0xff, 4 * n);
  memset(g->norm_mean, 0xff, 4 * n);
  memset(g->norm_std, 0xff, 4 * n);
  memset(g->target, 0xff, 2 * k);
  memset(g->kind, 0xff, k);
  memset(g->value, 0xff, 4 * k);
  memset(g->base, 0xff, 4 * s * g->ld);
  memset(g->inter, 0xff, 4 * k * s * g->ld);
}

/* The seeds' default workload as `graphs` in-memory graphs (5-10 nodes,
 * ER p=0.3, 64 samples, one do() per node; graph i from seed 2024 and i):
 * the input of the codec benchmarks. Returns an array the caller frees with
 * tf_default_graphs_free, and adds their raw float32 bytes to *raw_bytes. */
static inline twincache_graph **tf_default_graphs(uint32_t graphs, uint64_t *raw_bytes) {
  twincache_graph **g = calloc(graphs, sizeof *g);
  TC_REQUIRE(g);
  for (uint32_t i = 0; i < graphs; i++) {
    tc_rng r;
    tc_rng_init(&r, 2024, i);
    uint32_t n = 5 + tc_rng_below(&r, 6);
    tf_spec sp = {.seed = 2024, .index = i, .n = n, .s = 64, .k = n, .kinds = 0, .edge_p = 0.3};
    g[i] = twincache_graph_alloc(n, 64, n, 0);
    TC_REQUIRE(g[i]);
    tf_sample(g[i], &sp);
    *raw_bytes += twincache_graph_raw_bytes(g[i]);
  }
  return g;
}
static inline void tf_default_graphs_free(twincache_graph **g, uint32_t graphs) {
  for (uint32_t i = 0; g && i < graphs; i++) twincache_graph_free(g[i]);
  free(g);
}

/* The four frame encodings every codec test covers, in this order: FAST,
 * FAST + byte planes, SMALL (zstd level `level`), SMALL + byte planes. */
enum { TF_N_ENC = 4 };
static const char *const tf_enc_names[TF_N_ENC] = {"fast", "fast+shuffle", "small", "small+shuffle"};
static inline void tf_encoders_create(twincache_cctx *encs[TF_N_ENC], int level) {
  for (int e = 0; e < TF_N_ENC; e++) {
    encs[e] = twincache_cctx_create(level);
    TC_REQUIRE(encs[e]);
    TC_CHECK_RC(twincache_cctx_set_encoding(encs[e], e < 2 ? TWINCACHE_ENCODING_FAST
                                                         : TWINCACHE_ENCODING_SMALL), 0);
    TC_CHECK_RC(twincache_cctx_set_shuffle(encs[e], e % 2), 0);
  }
}

#endif /* TF_COMMON_H */
