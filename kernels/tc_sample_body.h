/* tc_sample_body.h — the fresh-world sampler's per-thread code, compiled
 * twice: as C for the host emulation (sample_cpu.c) and as CUDA device code
 * (sample.cu). Every function is a pure function of its arguments.
 *
 * It repeats scm/'s fresh sampler operation for operation (kernels/ includes
 * nothing of ours, so the code is a twin, not a shared file): the same
 * counters (scm/tc_scm.h: row s of a graph has the stream
 * tc_rng_init(key, s); cell (s, j) takes draw j+1 of it, further draws from
 * tc_rng_init(row, j)), the same noise transforms (the ziggurat with tables
 * computed on the host, Laplace, uniform; log and exp from basic operations),
 * the same mechanisms (linear: acc = 0, acc += w x over parents ascending,
 * + e; MLP: out = 0, out += w2 tanh(b1 + W1 x), + e, with scm's float tanh;
 * RFF, sigmoid and the clamped square the same with their unit functions),
 * the same twin rules and standardisation (double sums over rows in order).
 * Values agree bit for bit when no multiply-add is contracted: ISO C on the
 * host, nvcc --fmad=false on the device. test_sample_scm (CI) checks the C
 * build against scm/; test_sample_cuda the device against the C build. */
#ifndef TC_SAMPLE_BODY_H
#define TC_SAMPLE_BODY_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "twincache_kernels.h"

#ifdef __CUDACC__
#define TC_SB __host__ __device__ static inline
#else
#define TC_SB static inline
#endif

#define TC_SB_GAMMA 0x9e3779b97f4a7c15ull
#define TC_SB_ZIG_R 3.6541528853610088

/* The intervention kinds the sampler computes: 0 do, 1 shift, 2 noise
 * (scm's twin_target); a soft one (3) carries parameters the batch lacks. */
TC_SB int tc_sb_kind_supported(uint8_t kind) { return kind <= 2; }

/* A quiet NaN: what an unsupported world is filled with. */
TC_SB float tc_sb_nan(void) {
  union {
    uint32_t u;
    float f;
  } v = {0x7fc00000u};
  return v.f;
}

TC_SB uint64_t tc_sb_mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
/* the state tc_rng_init(seed, stream) starts from */
TC_SB uint64_t tc_sb_stream(uint64_t seed, uint64_t stream) {
  return tc_sb_mix64(seed ^ tc_sb_mix64(stream + TC_SB_GAMMA));
}
TC_SB uint64_t tc_sb_next(uint64_t *state) {
  *state += TC_SB_GAMMA;
  return tc_sb_mix64(*state);
}
TC_SB double tc_sb_uniform(uint64_t bits) { return (double)(bits >> 11) * (1.0 / 9007199254740992.0); }

TC_SB double tc_sb_log(double x) { /* scm's fresh_log */
  uint64_t b;
  memcpy(&b, &x, sizeof b);
  int k = (int)((b >> 52) & 0x7ff) - 1023;
  b = (b & 0x000fffffffffffffull) | 0x3ff0000000000000ull;
  double m;
  memcpy(&m, &b, sizeof m);
  if (m > 1.4142135623730951) {
    m = 0.5 * m;
    k++;
  }
  double f = m - 1.0, s = f / (2.0 + f), z = s * s;
  double p = 1.0 / 19.0;
  p = p * z + 1.0 / 17.0;
  p = p * z + 1.0 / 15.0;
  p = p * z + 1.0 / 13.0;
  p = p * z + 1.0 / 11.0;
  p = p * z + 1.0 / 9.0;
  p = p * z + 1.0 / 7.0;
  p = p * z + 1.0 / 5.0;
  p = p * z + 1.0 / 3.0;
  double kd = (double)k;
  return kd * 6.93147180369123816490e-01 + (kd * 1.90821492927058770002e-10 + (2.0 * s + 2.0 * s * (z * p)));
}

TC_SB double tc_sb_exp(double y) { /* scm's fresh_exp */
  double kd = floor(y * 1.4426950408889634 + 0.5);
  double r = (y - kd * 6.93147180369123816490e-01) - kd * 1.90821492927058770002e-10;
  double p = 1.0 / 6227020800.0;
  p = p * r + 1.0 / 479001600.0;
  p = p * r + 1.0 / 39916800.0;
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  uint64_t bits = (uint64_t)((int64_t)kd + 1023) << 52;
  double scale;
  memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}

/* The ziggurat from a first draw; later draws from *more (scm's
 * zig_normal_from with fresh log/exp). */
TC_SB double tc_sb_zig(uint64_t bits, uint64_t *more, const double *zx, const double *zr) {
  for (;; bits = tc_sb_next(more)) {
    unsigned i = (unsigned)(bits & 0xff);
    double u = 2.0 * ((double)(bits >> 11) * (1.0 / 9007199254740992.0)) - 1.0;
    if (fabs(u) < zr[i]) return u * zx[i];
    if (i == 0) {
      double x, y;
      do {
        double u1 = 1.0 - tc_sb_uniform(tc_sb_next(more)), u2 = 1.0 - tc_sb_uniform(tc_sb_next(more));
        x = tc_sb_log(u1) / TC_SB_ZIG_R;
        y = tc_sb_log(u2);
      } while (-2.0 * y < x * x);
      return u < 0.0 ? x - TC_SB_ZIG_R : TC_SB_ZIG_R - x;
    }
    double x = u * zx[i];
    double a0 = -0.5 * (zx[i] * zx[i] - x * x);
    double a1 = -0.5 * (zx[i + 1] * zx[i + 1] - x * x);
    double f0 = tc_sb_exp(a0), f1 = tc_sb_exp(a1);
    if (f1 + tc_sb_uniform(tc_sb_next(more)) * (f0 - f1) < 1.0) return x;
  }
}

/* The standard draw of cell j of a row whose stream state is row (the fresh cell draws of scm/noise_*.c). */
TC_SB double tc_sb_cell(uint64_t row, uint32_t j, int family, const double *zx, const double *zr) {
  uint64_t bits = tc_sb_mix64(row + (uint64_t)(j + 1) * TC_SB_GAMMA);
  if (family == 1) { /* Laplace */
    double u = tc_sb_uniform(bits) - 0.5;
    double a = 1.0 - 2.0 * fabs(u);
    if (a <= 0.0) a = 1e-300;
    return (u < 0 ? 1.0 : -1.0) * tc_sb_log(a);
  }
  if (family == 2) return -1.0 + 2.0 * tc_sb_uniform(bits); /* uniform [-1, 1) */
  if (family == 4) { /* Gumbel: -log(-log u) */
    double u = tc_sb_uniform(bits);
    if (u <= 0.0) u = 0x1p-54;
    return -tc_sb_log(-tc_sb_log(u));
  }
  if (family == 3) { /* Cauchy: the ratio of two standard normals */
    uint64_t more = tc_sb_stream(row, j);
    double a = tc_sb_zig(bits, &more, zx, zr), b = tc_sb_zig(tc_sb_next(&more), &more, zx, zr);
    return a / (b != 0.0 ? b : 0x1p-60);
  }
  unsigned i = (unsigned)(bits & 0xff);
  double u = 2.0 * tc_sb_uniform(bits) - 1.0;
  if (fabs(u) < zr[i]) return u * zx[i];
  uint64_t more = tc_sb_stream(row, j);
  return tc_sb_zig(bits, &more, zx, zr);
}

TC_SB float tc_sb_tanhf(float x) { /* scm's tc_tanhf */
  float a = x < 0.0f ? -x : x;
  float z = x * x;
  float q = 62.0f / 2835.0f;
  q = q * z - 17.0f / 315.0f;
  q = q * z + 2.0f / 15.0f;
  q = q * z - 1.0f / 3.0f;
  float small = x + x * (z * q);
  float y = 2.0f * (a < 9.0f ? a : 9.0f);
  int32_t k = (int32_t)(y * 1.44269504f + 0.5f);
  float kf = (float)k;
  float r = (y - kf * 0.693145751953125f) - kf * 1.428606765330187e-06f;
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  uint32_t bits = (uint32_t)(k + 127) << 23;
  float scale;
  memcpy(&scale, &bits, sizeof scale);
  float e = p * scale;
  float big = 1.0f - 2.0f / (e + 1.0f);
  big = x < 0.0f ? -big : big;
  return a < 0.3f ? small : big;
}

TC_SB float tc_sb_cosf(float x) { /* scm's tc_cosf */
  float a = x < 0.0f ? -x : x;
  a = a <= 65536.0f ? a : 65536.0f;
  float kf = (float)(int32_t)(a * 0.159154937f + 0.5f);
  float r = ((a - kf * 6.28125f) - kf * 1.93530717e-03f) - kf * 1.02533763e-11f;
  r = r < 0.0f ? -r : r;
  float sgn = r > 1.57079633f ? -1.0f : 1.0f;
  r = r > 1.57079633f ? 3.14159274f - r : r;
  float z = r * r;
  float p = -1.0f / 87178291200.0f;
  p = p * z + 1.0f / 479001600.0f;
  p = p * z - 1.0f / 3628800.0f;
  p = p * z + 1.0f / 40320.0f;
  p = p * z - 1.0f / 720.0f;
  p = p * z + 1.0f / 24.0f;
  p = p * z - 0.5f;
  p = p * z + 1.0f;
  return sgn * p;
}

TC_SB float tc_sb_unit(int mech, float a) { /* the unit function of a block mechanism */
  if (mech == 2) return tc_sb_cosf(a);
  if (mech == 3) return 0.5f + 0.5f * tc_sb_tanhf(0.5f * a); /* sigmoid */
  if (mech == 4) {                                           /* clamped square */
    float c = a < -4.0f ? -4.0f : a;
    c = c > 4.0f ? 4.0f : c;
    return c * c;
  }
  return tc_sb_tanhf(a);
}

/* The noise term of node j: e, or e (1 + tanh(0.5 (c + sum v x))) (scm's add_noise). */
TC_SB float tc_sb_noise_term(const twincache_scm_batch *b, uint32_t g, uint32_t j, const float *row, float e) {
  if (!b->het_c) return e;
  const uint32_t N = b->nodes, n = b->n_nodes[g];
  const uint8_t *adj = b->adj + (size_t)g * N * N;
  const float *v = b->het_w + (size_t)g * N * N;
  float acc = b->het_c[(size_t)g * N + j];
  for (uint32_t i = 0; i < n; i++)
    if (adj[(size_t)i * N + j]) acc += v[(size_t)i * N + j] * row[i];
  return e * (1.0f + tc_sb_tanhf(0.5f * acc));
}

/* x_j of one row (N floats) before an intervention's change. */
TC_SB float tc_sb_eval(const twincache_scm_batch *b, uint32_t g, uint32_t j, const float *row, float e) {
  const uint32_t N = b->nodes, n = b->n_nodes[g], H = b->hidden;
  const uint8_t *adj = b->adj + (size_t)g * N * N;
  e = tc_sb_noise_term(b, g, j, row, e);
  const int mech = b->mech ? b->mech[(size_t)g * N + j] : (H ? 1 : 0);
  if (mech == 0) {
    const float *w = b->weight + (size_t)g * N * N;
    float acc = 0.0f;
    for (uint32_t i = 0; i < n; i++)
      if (adj[(size_t)i * N + j]) acc += w[(size_t)i * N + j] * row[i];
    return acc + e;
  }
  /* node j's block: W1 (H, n) row-major, b1 (H), w2 (H), as in the frame */
  const float *blk = b->mlp + (size_t)g * N * ((size_t)H * N + 2u * H) + (size_t)j * ((size_t)H * n + 2u * H);
  const float *b1 = blk + (size_t)H * n, *w2 = b1 + H;
  float out = 0.0f;
  for (uint32_t h = 0; h < H; h++) {
    float a = b1[h];
    for (uint32_t i = 0; i < n; i++)
      if (adj[(size_t)i * N + j]) a += blk[(size_t)h * n + i] * row[i];
    out += w2[h] * tc_sb_unit(mech, a);
  }
  return out + e;
}

TC_SB float tc_sb_std(float x, float mean, float sd) { return (x - mean) / sd; }

/* Phase 1, thread (g, s): the noise of row s (noise (G,S,N)) and the raw
 * base world's row s (base (G,S,N)), nodes in topological order; columns
 * [n, N) of both rows 0. */
TC_SB void tc_sb_base_row(const twincache_scm_batch *b, uint32_t g, uint32_t s, float *noise, float *base) {
  const uint32_t N = b->nodes, S = b->rows, n = b->n_nodes[g];
  float *e = noise + ((size_t)g * S + s) * N, *x = base + ((size_t)g * S + s) * N;
  const float *scale = b->noise_scale + (size_t)g * N;
  const uint32_t *order = b->order + (size_t)g * N;
  uint64_t row = tc_sb_stream(b->key[g], s);
  for (uint32_t j = 0; j < N; j++) {
    e[j] = j < n ? scale[j] * (float)tc_sb_cell(row, j, b->noise[g], b->zig_x, b->zig_ratio) : 0.0f;
    x[j] = 0.0f;
  }
  for (uint32_t r = 0; r < n; r++) {
    uint32_t j = order[r];
    x[j] = tc_sb_eval(b, g, j, x, e[j]);
  }
}

/* Phase 2, thread (g, j): mean and std (G,N) of node j's raw base column
 * (scm's standardisation statistics); mean 0, std 1 when the graph is not
 * standardised or j >= n. */
TC_SB void tc_sb_stats(const twincache_scm_batch *b, uint32_t g, uint32_t j, const float *base, float *mean,
                       float *sd_out) {
  const uint32_t N = b->nodes, S = b->rows;
  float fm = 0.0f, fs = 1.0f;
  if ((b->flags[g] & 1u) && j < b->n_nodes[g]) {
    const float *x = base + (size_t)g * S * N + j;
    double sum = 0.0, sq = 0.0;
    for (uint32_t s = 0; s < S; s++) sum += x[(size_t)s * N];
    double mu = sum / S;
    for (uint32_t s = 0; s < S; s++) {
      double d = x[(size_t)s * N] - mu;
      sq += d * d;
    }
    double sd = sqrt(sq / S);
    fm = (float)mu;
    fs = (sd > 1e-12 && sd - sd == 0.0) ? (float)sd : 1.0f; /* sd - sd == 0: finite */
    if (!(fm - fm == 0.0f) || fs == 0.0f) fs = 1.0f;
  }
  mean[(size_t)g * N + j] = fm;
  sd_out[(size_t)g * N + j] = fs;
}

/* Phase 3, thread (g, s): row s of every twin world (inter (G,K,S,N)) from
 * the raw base row and the noise, then the base row standardised in place
 * (when the graph is). Twin blocks k >= n_inter are 0. */
TC_SB void tc_sb_twin_row(const twincache_scm_batch *b, uint32_t g, uint32_t s, const float *noise,
                          float *base, const float *mean, const float *sd, float *inter) {
  const uint32_t N = b->nodes, S = b->rows, K = b->inter, n = b->n_nodes[g];
  const int stdz = (b->flags[g] & 1u) != 0;
  const float *e = noise + ((size_t)g * S + s) * N;
  float *xb = base + ((size_t)g * S + s) * N;
  const float *mu = mean + (size_t)g * N, *sg = sd + (size_t)g * N;
  const uint32_t *order = b->order + (size_t)g * N;
  float row[TWINCACHE_SAMPLE_MAX_NODES];
  for (uint32_t k = 0; k < K; k++) {
    float *out = inter + (((size_t)g * K + k) * S + s) * N;
    if (k >= b->n_inter[g]) {
      for (uint32_t j = 0; j < N; j++) out[j] = 0.0f;
      continue;
    }
    const uint8_t *desc = b->desc + ((size_t)g * K + k) * N;
    uint32_t t = b->target[(size_t)g * K + k];
    float v = b->value[(size_t)g * K + k];
    const uint8_t kind = b->kind[(size_t)g * K + k]; /* scm.c's twin_target: 0 do, 1 shift, 2 noise */
    int is_do = kind == 0;
    if (!tc_sb_kind_supported(kind)) { /* soft: its parameters are not in the batch */
      for (uint32_t j = 0; j < N; j++) out[j] = tc_sb_nan();
      continue;
    }
    float do_raw = stdz ? v * sg[t] + mu[t] : v;
    for (uint32_t j = 0; j < n; j++) row[j] = xb[j];
    for (uint32_t r = 0; r < n; r++) { /* changed nodes in topological order */
      uint32_t j = order[r];
      if (!desc[j]) continue;
      if (j == t) row[j] = is_do ? do_raw : kind == 2 ? tc_sb_eval(b, g, j, row, v * e[j]) : tc_sb_eval(b, g, j, row, e[j]) + v;
      else row[j] = tc_sb_eval(b, g, j, row, e[j]);
    }
    for (uint32_t j = 0; j < N; j++) {
      float y = 0.0f;
      if (j < n) {
        if (desc[j] && j == t && is_do) y = v;
        else y = stdz ? tc_sb_std(row[j], mu[j], sg[j]) : row[j];
      }
      out[j] = y;
    }
  }
  if (stdz)
    for (uint32_t j = 0; j < n; j++) xb[j] = tc_sb_std(xb[j], mu[j], sg[j]);
}

#endif /* TC_SAMPLE_BODY_H */
