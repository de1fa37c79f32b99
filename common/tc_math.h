/* tc_math.h — the fresh sampler's pure math, one copy compiled by scm/ (C)
 * and by the CUDA sampler (kernels/tc_sample_body.h, host emulation and
 * device alike): the counter RNG's mixing, the integer -> uniform
 * conversions, log and exp of doubles and tanh and cos of floats from basic
 * operations only, the ziggurat's slow path and the fresh cell draws of
 * every noise family, the mechanisms' unit functions, standardisation.
 *
 * Rules that keep every bit the same on every machine: IEEE binary32 and
 * binary64 operations in the written order, no multiply-add contracted into
 * an FMA (ISO C's default; nvcc --fmad=false, kernels/CMakeLists.txt), and
 * only +, -, *, /, sqrt, fabs, comparisons, conversions and bit fields (no
 * libm call on the fresh path). Every function is `static inline`, pure or
 * acting on caller-owned state: no allocation, no I/O, no globals (tables,
 * such as the ziggurat's, are passed in). Includes libc headers only.
 *
 * Codes are passed as plain ints here (common/ sees no format header); the
 * callers name them: the noise family (enum twincache_noise) and the
 * mechanism (enum twincache_mechanism) values are checked against these by
 * static asserts in scm/ and kernels/. */
#ifndef TC_MATH_H
#define TC_MATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define TC_MATH __host__ __device__ static inline
#else
#define TC_MATH static inline
#endif

/* The noise families and the unit functions, as their format codes. */
#define TC_MATH_NOISE_GAUSS 0
#define TC_MATH_NOISE_LAPLACE 1
#define TC_MATH_NOISE_UNIFORM 2
#define TC_MATH_NOISE_CAUCHY 3
#define TC_MATH_NOISE_GUMBEL 4
#define TC_MATH_MECH_LINEAR 0
#define TC_MATH_MECH_MLP 1
#define TC_MATH_MECH_RFF 2
#define TC_MATH_MECH_SIGMOID 3
#define TC_MATH_MECH_POLY 4

/* ---- the counter RNG (SplitMix64; tc_common.h's tc_rng is this) ------------- */
#define TC_MATH_GAMMA 0x9e3779b97f4a7c15ull
TC_MATH uint64_t tc_math_mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
/* The state a stream keyed by (seed, stream) starts from: tc_rng_init. */
TC_MATH uint64_t tc_math_stream(uint64_t seed, uint64_t stream) {
  return tc_math_mix64(seed ^ tc_math_mix64(stream + TC_MATH_GAMMA));
}
/* The key of world w of a graph whose base world is keyed `key` (FORMAT.md
 * 3.9, independent worlds): w = 0 is the base world, key itself; world
 * k + 1 is intervention k's, drawing its own noise. The constant keeps
 * w from cancelling the key's own mixing. */
TC_MATH uint64_t tc_math_world_key(uint64_t key, uint64_t w) {
  return w ? tc_math_mix64(key ^ tc_math_mix64(w + 0xd6e8feb86659fd93ull)) : key;
}
/* The stream's next draw: tc_rng_u64. */
TC_MATH uint64_t tc_math_next(uint64_t *state) {
  *state += TC_MATH_GAMMA;
  return tc_math_mix64(*state);
}
/* A draw's top 53 bits as a uniform in [0, 1). */
TC_MATH double tc_math_uniform(uint64_t bits) { return (double)(bits >> 11) * (1.0 / 9007199254740992.0); }
/* 2 tc_math_uniform(bits) - 1, in [-1, 1), with one multiply: scaling by
 * 2^-53 and then by 2 are both exact, so this is the same double. */
TC_MATH double tc_math_signed(uint64_t bits) { return (double)(bits >> 11) * (1.0 / 4503599627370496.0) - 1.0; }

/* ---- log and exp of doubles ---------------------------------------------------
 * libm's and CUDA's differ in the last bit now and then; these use basic
 * operations and bit fields only (max error a few ulp). The generator's
 * stream noise keeps libm's (its caches keep their bytes). */
TC_MATH double tc_math_log(double x) { /* x normal, > 0: here (0, 1] */
  uint64_t b;
  memcpy(&b, &x, sizeof b);
  int k = (int)((b >> 52) & 0x7ff) - 1023;
  b = (b & 0x000fffffffffffffull) | 0x3ff0000000000000ull;
  double m;
  memcpy(&m, &b, sizeof m); /* x = m 2^k, m in [1, 2) */
  if (m > 1.4142135623730951) {
    m = 0.5 * m;
    k++;
  }
  double f = m - 1.0, s = f / (2.0 + f), z = s * s; /* log m = 2 atanh s, |s| < 0.172 */
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

/* exp, y in [-700, 700]: y = k ln2 + r (ln2 in two parts), Taylor to r^13,
 * times 2^k from its bits. floor(t) is taken as the truncation, one less
 * when that is above t: the same integer (|t| < 2^63, t never -0), without
 * a call to floor (baseline x86-64 has no roundsd). */
TC_MATH double tc_math_exp(double y) {
  double t = y * 1.4426950408889634 + 0.5;
  double kd = (double)(int64_t)t;
  kd = kd > t ? kd - 1.0 : kd;
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

/* ---- the ziggurat (Marsaglia-Tsang, 256 layers) ---------------------------------
 * Tables: zx (257) layer edges, zr (256) ratios zx[i+1]/zx[i] (scm builds
 * them once; twincache_sample_tables gives the same). Draws are the first
 * `bits` and then *state's stream (tc_math_next). fresh: tc_math_log/exp,
 * else libm's (the generator's stream noise, host only). */
#define TC_MATH_ZIG_R 3.6541528853610088
TC_MATH double tc_math_zig_slow(uint64_t bits, uint64_t *state, const double *zx, const double *zr, int fresh) {
  for (;; bits = tc_math_next(state)) {
    unsigned i = (unsigned)(bits & 0xff);                                        /* layer: low 8 bits */
    double u = 2.0 * ((double)(bits >> 11) * (1.0 / 9007199254740992.0)) - 1.0; /* top 53 */
    if (fabs(u) < zr[i]) return u * zx[i];
    if (i == 0) { /* the tail beyond R */
      double x, y;
      do {
        double u1 = 1.0 - tc_math_uniform(tc_math_next(state)), u2 = 1.0 - tc_math_uniform(tc_math_next(state));
        x = (fresh ? tc_math_log(u1) : log(u1)) / TC_MATH_ZIG_R;
        y = fresh ? tc_math_log(u2) : log(u2);
      } while (-2.0 * y < x * x);
      return u < 0.0 ? x - TC_MATH_ZIG_R : TC_MATH_ZIG_R - x;
    }
    double x = u * zx[i];
    double a0 = -0.5 * (zx[i] * zx[i] - x * x);
    double a1 = -0.5 * (zx[i + 1] * zx[i + 1] - x * x);
    double f0 = fresh ? tc_math_exp(a0) : exp(a0), f1 = fresh ? tc_math_exp(a1) : exp(a1);
    if (f1 + tc_math_uniform(tc_math_next(state)) * (f0 - f1) < 1.0) return x;
  }
}

/* ---- the fresh cell draws ------------------------------------------------------
 * Cell j of a row whose stream state is row: its first draw is
 * bits = tc_math_mix64(row + (j+1) gamma) (draw j+1 of the row's stream);
 * any further draw comes from the cell's own stream, state
 * tc_math_stream(row, j), made only then. Standard draws (scale 1). */
TC_MATH uint64_t tc_math_cell_bits(uint64_t row, uint32_t j) {
  return tc_math_mix64(row + (uint64_t)(j + 1) * TC_MATH_GAMMA);
}
TC_MATH double tc_math_gauss_cell(uint64_t bits, uint64_t row, uint32_t j, const double *zx, const double *zr) {
  unsigned i = (unsigned)(bits & 0xff);
  double u = tc_math_signed(bits);
  if (fabs(u) < zr[i]) return u * zx[i]; /* ~99% */
  uint64_t more = tc_math_stream(row, j);
  return tc_math_zig_slow(bits, &more, zx, zr, 1);
}
TC_MATH double tc_math_laplace_cell(uint64_t bits) {
  double u = tc_math_uniform(bits) - 0.5;
  double a = 1.0 - 2.0 * fabs(u);
  if (a <= 0.0) a = 1e-300;
  return (u < 0 ? 1.0 : -1.0) * tc_math_log(a);
}
TC_MATH double tc_math_uniform_cell(uint64_t bits) { return -1.0 + 2.0 * tc_math_uniform(bits); } /* [-1, 1) */
TC_MATH double tc_math_gumbel_cell(uint64_t bits) { /* -log(-log u), u = 0 moved to 2^-54 */
  double u = tc_math_uniform(bits);
  if (u <= 0.0) u = 0x1p-54;
  return -tc_math_log(-tc_math_log(u));
}
/* Cauchy: the ratio of two standard normals (fresh ziggurats, the first from
 * the cell's first draw, the rest from its own stream): no tan needed. */
TC_MATH double tc_math_cauchy_cell(uint64_t bits, uint64_t row, uint32_t j, const double *zx, const double *zr) {
  uint64_t more = tc_math_stream(row, j);
  double a = tc_math_zig_slow(bits, &more, zx, zr, 1);
  double b = tc_math_zig_slow(tc_math_next(&more), &more, zx, zr, 1);
  return a / (b != 0.0 ? b : 0x1p-60);
}
/* Cell j of family `noise` (a code outside the families draws gauss). */
TC_MATH double tc_math_cell(int noise, uint64_t row, uint32_t j, const double *zx, const double *zr) {
  uint64_t bits = tc_math_cell_bits(row, j);
  switch (noise) {
  case TC_MATH_NOISE_LAPLACE: return tc_math_laplace_cell(bits);
  case TC_MATH_NOISE_UNIFORM: return tc_math_uniform_cell(bits);
  case TC_MATH_NOISE_CAUCHY: return tc_math_cauchy_cell(bits, row, j, zx, zr);
  case TC_MATH_NOISE_GUMBEL: return tc_math_gumbel_cell(bits);
  default: return tc_math_gauss_cell(bits, row, j, zx, zr);
  }
}

/* ---- tanh and cos of floats ------------------------------------------------------
 * tanh: |x| < 0.3: x + x*z*q(z), z = x^2, Taylor to x^9; else
 * 1 - 2/(e^(2|x|) + 1) with the sign of x, |x| clamped at 9 (tanh(9) rounds
 * to 1). e^y for y in [0, 18]: y = k ln2 + r (ln2 in two parts), r in
 * [-0.35, 0.35], Taylor to r^7, times 2^k made from its bits. Max error 2.4
 * ulp against tanh in double over [-12, 12]; NaN gives +-1. (libm's tanhf
 * was ~95% of an MLP world and is neither portable nor vectorisable.) */
TC_MATH float tc_math_expf_pos(float y) { /* y in [0, 18] */
  int32_t k = (int32_t)(y * 1.44269504f + 0.5f); /* round(y / ln2): y >= 0, so truncation floors */
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
  return p * scale;
}
TC_MATH float tc_math_tanhf(float x) {
  float a = x < 0.0f ? -x : x;
  float z = x * x;
  float q = 62.0f / 2835.0f;
  q = q * z - 17.0f / 315.0f;
  q = q * z + 2.0f / 15.0f;
  q = q * z - 1.0f / 3.0f;
  float small = x + x * (z * q);
  float e = tc_math_expf_pos(2.0f * (a < 9.0f ? a : 9.0f));
  float big = 1.0f - 2.0f / (e + 1.0f);
  big = x < 0.0f ? -big : big;
  return a < 0.3f ? small : big;
}
/* cos: |x| clamped at 65536 (NaN goes there too); a = |x| - k 2pi with
 * k = round(|x| / 2pi) and 2pi in three parts (6.28125 exact in k * 6.28125
 * for k < 2^16), folded to [0, pi/2] by cos(a) = cos(-a) = -cos(pi - a),
 * then Taylor to z^7, z = a^2 (truncation < 7e-11). Max error a few float
 * ulp of 1 for |x| <= 100 (~1e-6 absolute at 65536, through the reduction). */
TC_MATH float tc_math_cosf(float x) {
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
/* The unit functions of the block mechanisms: sigmoid(a) = 1/(1 + e^-a) =
 * (1 + tanh(a/2))/2 through tc_math_tanhf, and the clamped square. */
TC_MATH float tc_math_sigmoidf(float a) { return 0.5f + 0.5f * tc_math_tanhf(0.5f * a); }
TC_MATH float tc_math_sqclampf(float a) {
  float c = a < -4.0f ? -4.0f : a;
  c = c > 4.0f ? 4.0f : c;
  return c * c;
}
/* The unit of block mechanism `mech` (MLP: tanh; RFF: cos; SIGMOID; POLY). */
TC_MATH float tc_math_unit(int mech, float a) {
  if (mech == TC_MATH_MECH_RFF) return tc_math_cosf(a);
  if (mech == TC_MATH_MECH_SIGMOID) return tc_math_sigmoidf(a);
  if (mech == TC_MATH_MECH_POLY) return tc_math_sqclampf(a);
  return tc_math_tanhf(a);
}
/* The heteroscedastic factor of a noise term: e (1 + tanh(0.5 acc)). */
TC_MATH float tc_math_het(float e, float acc) { return e * (1.0f + tc_math_tanhf(0.5f * acc)); }

/* ---- the soft intervention on a root -------------------------------------------------
 * A root has no weight a soft intervention could redraw (a linear or
 * additive one no parameter at all); its soft world changes the node's
 * distribution too (FORMAT.md 3.6): the noise term times the scale factor a
 * (entry t of the target's soft block; a = +0.0, written before this rule,
 * keeps the noise term as it is), then the world's value added as the new
 * mean. This is the noise term's part: the factor on the scaled draw
 * e = noise_scale * e_t, in float32. */
TC_MATH float tc_math_soft_root_noise(float a, float e) { return a != 0.0f ? a * e : e; }

/* ---- standardisation ---------------------------------------------------------------
 * A column's statistics from its double sum of x and (after the mean) of
 * (x - mean)^2 over S rows in row order: mean and population sd as floats;
 * sd 1 when it is not finite, <= 1e-12 or rounds to 0, or the mean is not
 * finite (x - x == 0 tests finiteness without libm's isfinite). */
TC_MATH void tc_math_norm(double mean, double sq, uint32_t S, float *mean_out, float *sd_out) {
  double sd = sqrt(sq / S);
  float fm = (float)mean, fs = (sd > 1e-12 && sd - sd == 0.0) ? (float)sd : 1.0f;
  if (!(fm - fm == 0.0f) || fs == 0.0f) fs = 1.0f;
  *mean_out = fm;
  *sd_out = fs;
}
TC_MATH float tc_math_standardize(float x, float mean, float sd) { return (x - mean) / sd; }

#endif /* TC_MATH_H */
