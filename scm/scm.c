/* scm.c — the one SCM sampler: noise, base world in topological order, twin
 * worlds recomputing only the target and its descendants, standardisation.
 * See tc_scm.h for the contract. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "tc_scm.h"

/* ---- fast standard normal: Marsaglia-Tsang ziggurat, 256 layers ---------------
 * A transform of tc_rng draws (not another RNG): ~99% of draws cost one
 * tc_rng_u64 and a multiply, against log+sqrt+cos for Box-Muller. Layer
 * edges are computed once (Doornik's construction), so the output is a pure
 * function of the stream. */
#define TC_ZIG_N 256
#define TC_ZIG_R 3.6541528853610088
#define TC_ZIG_V 0.00492867323399
static double g_zig_x[TC_ZIG_N + 1], g_zig_ratio[TC_ZIG_N];
static pthread_once_t g_zig_once = PTHREAD_ONCE_INIT;

static void zig_init(void) {
  double f = exp(-0.5 * TC_ZIG_R * TC_ZIG_R);
  g_zig_x[0] = TC_ZIG_V / f;
  g_zig_x[1] = TC_ZIG_R;
  g_zig_x[TC_ZIG_N] = 0.0;
  for (int i = 2; i < TC_ZIG_N; i++) {
    g_zig_x[i] = sqrt(-2.0 * log(TC_ZIG_V / g_zig_x[i - 1] + f));
    f = exp(-0.5 * g_zig_x[i] * g_zig_x[i]);
  }
  for (int i = 0; i < TC_ZIG_N; i++) g_zig_ratio[i] = g_zig_x[i + 1] / g_zig_x[i];
}

static double normal_tail(tc_rng *r, int negative) {
  double x, y;
  do {
    x = log(1.0 - tc_rng_uniform(r)) / TC_ZIG_R; /* log of (0, 1] */
    y = log(1.0 - tc_rng_uniform(r));
  } while (-2.0 * y < x * x);
  return negative ? x - TC_ZIG_R : TC_ZIG_R - x;
}

static inline double zig_normal(tc_rng *r) {
  for (;;) {
    uint64_t bits = tc_rng_u64(r);
    unsigned i = (unsigned)(bits & 0xff);                           /* layer: low 8 bits */
    double u = 2.0 * ((double)(bits >> 11) * (1.0 / 9007199254740992.0)) - 1.0; /* top 53 */
    if (fabs(u) < g_zig_ratio[i]) return u * g_zig_x[i];
    if (i == 0) return normal_tail(r, u < 0.0);
    double x = u * g_zig_x[i];
    double f0 = exp(-0.5 * (g_zig_x[i] * g_zig_x[i] - x * x));
    double f1 = exp(-0.5 * (g_zig_x[i + 1] * g_zig_x[i + 1] - x * x));
    if (f1 + tc_rng_uniform(r) * (f0 - f1) < 1.0) return x;
  }
}

/* Standard Cauchy by inversion: tan(pi (u - 1/2)), u in (0, 1) (u = 0 is
 * moved to 2^-54 so no draw is infinite). */
static inline double cauchy(tc_rng *r) {
  double u = tc_rng_uniform(r);
  if (u <= 0.0) u = 0x1p-54;
  return tan(3.14159265358979323846 * (u - 0.5));
}

/* Standard Gumbel (of maxima) by inversion: -log(-log u), u in (0, 1). */
static inline double gumbel(tc_rng *r) {
  double u = tc_rng_uniform(r);
  if (u <= 0.0) u = 0x1p-54;
  return -log(-log(u));
}

/* Standard draw of a noise family (FORMAT.md 3.6). */
static inline double draw_noise(tc_rng *r, int family) {
  switch (family) {
  case TWINCACHE_NOISE_LAPLACE: return tc_rng_laplace(r);
  case TWINCACHE_NOISE_UNIFORM: return tc_rng_range(r, -1.0, 1.0);
  case TWINCACHE_NOISE_CAUCHY: return cauchy(r);
  case TWINCACHE_NOISE_GUMBEL: return gumbel(r);
  default: return zig_normal(r);
  }
}

static inline float standardize(float x, float mean, float sd) { return (x - mean) / sd; }

struct tc_scm_sampler {
  uint32_t nmax, smax;
  uint32_t S;           /* rows of the last base world */
  float *noise;         /* (S, n) scaled exogenous noise, shared by every world */
  float *raw_base;      /* (S, n) unstandardised base world */
  float *raw_world;     /* (S, n) raw_base but for the changed columns of the last twin */
  float *norm_mean;     /* (n) of the last base world (standardize only) */
  float *norm_std;      /* (n) */
  uint8_t *desc;        /* (n) descendant mask of one target */
  uint32_t *changed;    /* (n) changed nodes of the last twin, topological order */
  uint32_t n_changed;
};

void tc_scm_sampler_free(tc_scm_sampler *sp) {
  if (!sp) return;
  free(sp->noise);
  free(sp->raw_base);
  free(sp->raw_world);
  free(sp->norm_mean);
  free(sp->norm_std);
  free(sp->desc);
  free(sp->changed);
  free(sp);
}

tc_scm_sampler *tc_scm_sampler_create(uint32_t max_nodes, uint32_t max_samples) {
  if (max_nodes < 1 || max_nodes > TWINCACHE_MAX_NODES || max_samples < 1 ||
      max_samples > TWINCACHE_MAX_SAMPLES)
    return NULL;
  pthread_once(&g_zig_once, zig_init);
  tc_scm_sampler *sp = calloc(1, sizeof *sp);
  if (!sp) return NULL;
  size_t sn = (size_t)max_samples * max_nodes;
  sp->nmax = max_nodes;
  sp->smax = max_samples;
  sp->noise = malloc(sn * sizeof(float));
  sp->raw_base = malloc(sn * sizeof(float));
  sp->raw_world = malloc(sn * sizeof(float));
  sp->norm_mean = malloc(max_nodes * sizeof(float));
  sp->norm_std = malloc(max_nodes * sizeof(float));
  sp->desc = malloc(max_nodes);
  sp->changed = malloc(max_nodes * sizeof(uint32_t));
  if (!sp->noise || !sp->raw_base || !sp->raw_world || !sp->norm_mean || !sp->norm_std ||
      !sp->desc || !sp->changed) {
    tc_scm_sampler_free(sp);
    return NULL;
  }
  return sp;
}

/* ---- noise ------------------------------------------------------------------ */
void tc_scm_noise_stream(tc_scm_sampler *sp, const tc_scm *m, uint32_t S, tc_rng *rn) {
  const uint32_t n = m->n;
  for (uint32_t s = 0; s < S; s++)
    for (uint32_t j = 0; j < n; j++)
      sp->noise[(size_t)s * n + j] = m->noise_scale[j] * (float)draw_noise(rn, m->noise);
}

uint64_t tc_scm_fresh_key(uint64_t tag, uint64_t index, uint64_t group) {
  /* distinct constants keep (tag, index, group) from cancelling each other */
  uint64_t k = tc_mix64(tag ^ 0x5bd1e9955bd1e995ull);
  k = tc_mix64(k ^ tc_mix64(index + 0x9e3779b97f4a7c15ull));
  return tc_mix64(k ^ tc_mix64(group + 0xc2b2ae3d27d4eb4full));
}

void tc_scm_noise_fresh(tc_scm_sampler *sp, const tc_scm *m, uint32_t S, uint64_t key) {
  const uint32_t n = m->n;
  for (uint32_t s = 0; s < S; s++)
    for (uint32_t j = 0; j < n; j++) {
      tc_rng r;
      tc_rng_init(&r, key, (uint64_t)s << 8 | j); /* j < 256, s < 65536 */
      sp->noise[(size_t)s * n + j] = m->noise_scale[j] * (float)draw_noise(&r, m->noise);
    }
}

/* ---- mechanisms ----------------------------------------------------------------
 * x_j of one row before an intervention's change. Every world evaluates a
 * node through this one function, in the same float operation order. */
static inline float eval_linear(const tc_scm *m, uint32_t j, const float *row, float e) {
  float acc = 0.0f;
  for (uint32_t q = m->pa_start[j]; q < m->pa_start[j + 1]; q++) acc += m->pa_w[q] * row[m->pa_idx[q]];
  return acc + e;
}

static inline float eval_mlp(const tc_scm *m, uint32_t j, const float *row, float e) {
  const uint32_t h_n = m->hidden, n = m->n;
  const float *blk = m->mlp + (size_t)j * (h_n * n + 2 * h_n);
  const float *b1 = blk + (size_t)h_n * n, *w2 = b1 + h_n;
  float out = 0.0f;
  for (uint32_t h = 0; h < h_n; h++) {
    float a = b1[h];
    const float *w1 = blk + (size_t)h * n;
    for (uint32_t q = m->pa_start[j]; q < m->pa_start[j + 1]; q++) a += w1[m->pa_idx[q]] * row[m->pa_idx[q]];
    out += w2[h] * tanhf(a);
  }
  return out + e;
}

static inline float eval_node(const tc_scm *m, uint32_t j, const float *row, float e) {
  return m->hidden ? eval_mlp(m, j, row, e) : eval_linear(m, j, row, e);
}

/* ---- worlds ----------------------------------------------------------------- */
void tc_scm_sample_base(tc_scm_sampler *sp, const tc_scm *m, uint32_t S, float *base, uint32_t ld,
                        float *norm_mean, float *norm_std) {
  const uint32_t n = m->n;
  float *xb = sp->raw_base; /* (S, n) */
  for (uint32_t s = 0; s < S; s++) {
    float *row = xb + (size_t)s * n;
    const float *e = sp->noise + (size_t)s * n;
    for (uint32_t r = 0; r < n; r++) {
      uint32_t j = m->order[r];
      row[j] = eval_node(m, j, row, e[j]);
    }
  }
  sp->S = S;
  sp->n_changed = 0;
  memcpy(sp->raw_world, xb, (size_t)S * n * sizeof(float));
  if (!m->standardize) {
    for (uint32_t s = 0; s < S; s++) memcpy(base + (size_t)s * ld, xb + (size_t)s * n, n * sizeof(float));
    return;
  }
  for (uint32_t j = 0; j < n; j++) {
    double sum = 0.0, sq = 0.0;
    for (uint32_t s = 0; s < S; s++) sum += xb[(size_t)s * n + j];
    double mean = sum / S;
    for (uint32_t s = 0; s < S; s++) {
      double d = xb[(size_t)s * n + j] - mean;
      sq += d * d;
    }
    double sd = sqrt(sq / S);
    float fm = (float)mean, fs = (sd > 1e-12 && isfinite(sd)) ? (float)sd : 1.0f;
    if (!isfinite(fm) || fs == 0.0f) fs = 1.0f;
    sp->norm_mean[j] = fm;
    sp->norm_std[j] = fs;
  }
  if (norm_mean) memcpy(norm_mean, sp->norm_mean, n * sizeof(float));
  if (norm_std) memcpy(norm_std, sp->norm_std, n * sizeof(float));
  for (uint32_t s = 0; s < S; s++)
    for (uint32_t j = 0; j < n; j++)
      base[(size_t)s * ld + j] = standardize(xb[(size_t)s * n + j], sp->norm_mean[j], sp->norm_std[j]);
}

uint32_t tc_scm_twin(tc_scm_sampler *sp, const tc_scm *m, uint32_t k, uint32_t S,
                     const uint32_t **changed) {
  const uint32_t n = m->n;
  float *xw = sp->raw_world; /* (S, n) */
  /* back to the raw base world: undo the columns of the previous twin */
  for (uint32_t s = 0; s < S; s++)
    for (uint32_t ci = 0; ci < sp->n_changed; ci++) {
      size_t at = (size_t)s * n + sp->changed[ci];
      xw[at] = sp->raw_base[at];
    }
  uint32_t t = m->target[k];
  float v = m->value[k];
  int is_do = m->kind[k] == TWINCACHE_DO;
  twincache_graph_descendants(m->adj, n, m->ld_adj, t, sp->desc);
  uint32_t nc = 0;
  for (uint32_t r = 0; r < n; r++)
    if (sp->desc[m->order[r]]) sp->changed[nc++] = m->order[r];
  sp->n_changed = nc;
  /* A DO value lives in the stored space: raw = v * sd + mean when standardised. */
  float do_raw = m->standardize ? v * sp->norm_std[t] + sp->norm_mean[t] : v;
  for (uint32_t s = 0; s < S; s++) {
    float *row = xw + (size_t)s * n;
    const float *e = sp->noise + (size_t)s * n;
    for (uint32_t ci = 0; ci < nc; ci++) {
      uint32_t j = sp->changed[ci];
      if (j == t) row[j] = is_do ? do_raw : eval_node(m, j, row, e[j]) + v;
      else row[j] = eval_node(m, j, row, e[j]);
    }
  }
  if (changed) *changed = sp->changed;
  return nc;
}

/* The stored-space value of changed node j in row s of the last twin. */
static inline float twin_value(const tc_scm_sampler *sp, const tc_scm *m, uint32_t k, uint32_t s,
                               uint32_t j) {
  if (j == m->target[k] && m->kind[k] == TWINCACHE_DO) return m->value[k];
  float x = sp->raw_world[(size_t)s * m->n + j];
  return m->standardize ? standardize(x, sp->norm_mean[j], sp->norm_std[j]) : x;
}

void tc_scm_twin_rows(const tc_scm_sampler *sp, const tc_scm *m, uint32_t k, uint32_t S,
                      const float *base, uint32_t ld_base, float *dst, uint32_t ld) {
  const uint32_t n = m->n;
  for (uint32_t s = 0; s < S; s++) {
    float *row = dst + (size_t)s * ld;
    if (row != base + (size_t)s * ld_base) memcpy(row, base + (size_t)s * ld_base, n * sizeof(float));
    for (uint32_t ci = 0; ci < sp->n_changed; ci++) {
      uint32_t j = sp->changed[ci];
      row[j] = twin_value(sp, m, k, s, j);
    }
  }
}

uint32_t tc_scm_twin_cols(const tc_scm_sampler *sp, const tc_scm *m, uint32_t k, uint32_t S,
                          float *cols) {
  uint32_t c = 0, t = m->target[k];
  int is_do = m->kind[k] == TWINCACHE_DO;
  for (uint32_t j = 0; j < m->n; j++) { /* increasing node order */
    if (!sp->desc[j] || (j == t && is_do)) continue;
    float *col = cols + (size_t)c * S;
    for (uint32_t s = 0; s < S; s++) col[s] = twin_value(sp, m, k, s, j);
    c++;
  }
  return c;
}
