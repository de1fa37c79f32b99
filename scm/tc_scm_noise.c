/* tc_scm_noise.c — the dispatch table of the noise families, and the
 * transforms they share: the ziggurat (its tables and slow path) and the
 * cells' stream keys. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "tc_scm_noise.h"

extern const tc_scm_noise tc_scm_noise_gauss, tc_scm_noise_laplace, tc_scm_noise_uniform, tc_scm_noise_cauchy,
    tc_scm_noise_gumbel;

/* One row per family, indexed by its code (enum twincache_noise). */
static const tc_scm_noise *const k_noises[] = {
    [TWINCACHE_NOISE_GAUSS] = &tc_scm_noise_gauss,
    [TWINCACHE_NOISE_LAPLACE] = &tc_scm_noise_laplace,
    [TWINCACHE_NOISE_UNIFORM] = &tc_scm_noise_uniform,
    [TWINCACHE_NOISE_CAUCHY] = &tc_scm_noise_cauchy,
    [TWINCACHE_NOISE_GUMBEL] = &tc_scm_noise_gumbel,
};
_Static_assert(sizeof k_noises / sizeof k_noises[0] == TWINCACHE_NOISE_COUNT, "one row per enum twincache_noise");

const tc_scm_noise *tc_scm_noise_get(int code) {
  if (code < 0 || code >= (int)(sizeof k_noises / sizeof k_noises[0])) return &tc_scm_noise_gauss;
  return k_noises[code];
}

/* ---- the ziggurat: Marsaglia-Tsang, 256 layers -------------------------------
 * A transform of tc_rng draws (not another RNG): ~99% of draws cost one
 * tc_rng_u64 and a multiply, against log+sqrt+cos for Box-Muller. Layer
 * edges are computed once (Doornik's construction), so the output is a pure
 * function of the stream. */
#define TC_ZIG_N 256
#define TC_ZIG_R 3.6541528853610088
#define TC_ZIG_V 0.00492867323399
double tc_scm_zig_x[TC_ZIG_N + 1], tc_scm_zig_ratio[TC_ZIG_N];
tc_scm_zig_layer tc_scm_zig_fast[TC_ZIG_N];
uint64_t tc_scm_node_stream[TWINCACHE_MAX_NODES];
static pthread_once_t g_tables_once = PTHREAD_ONCE_INIT;

static void tables_init(void) {
  double f = exp(-0.5 * TC_ZIG_R * TC_ZIG_R);
  tc_scm_zig_x[0] = TC_ZIG_V / f;
  tc_scm_zig_x[1] = TC_ZIG_R;
  tc_scm_zig_x[TC_ZIG_N] = 0.0;
  for (int i = 2; i < TC_ZIG_N; i++) {
    tc_scm_zig_x[i] = sqrt(-2.0 * log(TC_ZIG_V / tc_scm_zig_x[i - 1] + f));
    f = exp(-0.5 * tc_scm_zig_x[i] * tc_scm_zig_x[i]);
  }
  for (int i = 0; i < TC_ZIG_N; i++) {
    tc_scm_zig_ratio[i] = tc_scm_zig_x[i + 1] / tc_scm_zig_x[i];
    tc_scm_zig_fast[i].ratio = tc_scm_zig_ratio[i];
    tc_scm_zig_fast[i].x = tc_scm_zig_x[i];
  }
  for (uint32_t j = 0; j < TWINCACHE_MAX_NODES; j++) tc_scm_node_stream[j] = tc_mix64(j + 0x9e3779b97f4a7c15ull);
#ifdef TC_SCM_HAVE_AVX512
  /* TWINCACHE_SIMD=0 in the environment keeps the scalar fills (the same
   * bits, slower: for comparing the two) */
  const char *simd = getenv("TWINCACHE_SIMD");
  __builtin_cpu_init();
  tc_scm_simd = !(simd && strcmp(simd, "0") == 0) && __builtin_cpu_supports("avx512f") &&
                      __builtin_cpu_supports("avx512dq");
#endif
}

int tc_scm_simd;

void tc_scm_noise_init(void) { pthread_once(&g_tables_once, tables_init); }

void tc_scm_set_simd(int on) {
  tc_scm_noise_init();
#ifdef TC_SCM_HAVE_AVX512
  tc_scm_simd = on && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
#else
  (void)on;
  tc_scm_simd = 0;
#endif
}

/* exp of the fresh noise, from basic operations only (see tc_scm_fresh_log).
 * floor(t) is taken as the truncation, one less when that is above t: the
 * same integer (|t| < 2^63, and t is never -0), without a call to libm's
 * floor (baseline x86-64 has no roundsd). Inline: the ziggurat's wedge test
 * evaluates two of them, whose chains then overlap. */
static inline double fresh_exp(double y) { /* y in [-700, 700] */
  double t = y * 1.4426950408889634 + 0.5;
  double kd = (double)(int64_t)t;
  kd = kd > t ? kd - 1.0 : kd;
  double r = (y - kd * 6.93147180369123816490e-01) - kd * 1.90821492927058770002e-10;
  double p = 1.0 / 6227020800.0; /* Taylor to r^13, |r| <= 0.35 */
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

static double normal_tail(tc_rng *r, int negative, int fresh) {
  double x, y;
  do {
    double u1 = 1.0 - tc_rng_uniform(r), u2 = 1.0 - tc_rng_uniform(r); /* (0, 1] */
    x = (fresh ? tc_scm_fresh_log(u1) : log(u1)) / TC_ZIG_R;
    y = fresh ? tc_scm_fresh_log(u2) : log(u2);
  } while (-2.0 * y < x * x);
  return negative ? x - TC_ZIG_R : TC_ZIG_R - x;
}

double tc_scm_zig_normal_slow(uint64_t bits, tc_rng *r, int fresh) {
  const double *zx = tc_scm_zig_x;
  for (;; bits = tc_rng_u64(r)) {
    unsigned i = (unsigned)(bits & 0xff);                           /* layer: low 8 bits */
    double u = 2.0 * ((double)(bits >> 11) * (1.0 / 9007199254740992.0)) - 1.0; /* top 53 */
    if (fabs(u) < tc_scm_zig_ratio[i]) return u * zx[i];
    if (i == 0) return normal_tail(r, u < 0.0, fresh);
    double x = u * zx[i];
    double a0 = -0.5 * (zx[i] * zx[i] - x * x);
    double a1 = -0.5 * (zx[i + 1] * zx[i + 1] - x * x);
    double f0 = fresh ? fresh_exp(a0) : exp(a0), f1 = fresh ? fresh_exp(a1) : exp(a1);
    if (f1 + tc_rng_uniform(r) * (f0 - f1) < 1.0) return x;
  }
}
