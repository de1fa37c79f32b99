/* tc_scm_noise.c — the dispatch table of the noise families, and the
 * ziggurat's tables (its slow path is the shared math's: common/tc_math.h). */
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
/* the shared math (common/tc_math.h) names the families by these codes */
_Static_assert(TC_MATH_NOISE_GAUSS == TWINCACHE_NOISE_GAUSS && TC_MATH_NOISE_LAPLACE == TWINCACHE_NOISE_LAPLACE &&
                   TC_MATH_NOISE_UNIFORM == TWINCACHE_NOISE_UNIFORM && TC_MATH_NOISE_CAUCHY == TWINCACHE_NOISE_CAUCHY &&
                   TC_MATH_NOISE_GUMBEL == TWINCACHE_NOISE_GUMBEL && TWINCACHE_NOISE_COUNT == 5,
               "tc_math.h's noise codes are enum twincache_noise's");

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
#define TC_ZIG_R TC_MATH_ZIG_R
#define TC_ZIG_V 0.00492867323399
double tc_scm_zig_x[TC_ZIG_N + 1], tc_scm_zig_ratio[TC_ZIG_N];
tc_scm_zig_layer tc_scm_zig_fast[TC_ZIG_N];
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
