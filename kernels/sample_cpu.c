/* sample_cpu.c — the fresh-world sampler's host emulation: the kernel's
 * per-thread code (tc_sample_body.h) compiled as C and run for every thread
 * of each phase in turn. Contract in twincache_kernels.h. */
#include <math.h>

#include "tc_sample_body.h"
#include "twincache_format.h" /* the codes the shared math names */
#include "twincache_kernels.h"

/* the shared math (common/tc_math.h) names noise families and mechanisms by
 * these codes */
_Static_assert(TC_MATH_NOISE_GAUSS == TWINCACHE_NOISE_GAUSS && TC_MATH_NOISE_LAPLACE == TWINCACHE_NOISE_LAPLACE &&
                   TC_MATH_NOISE_UNIFORM == TWINCACHE_NOISE_UNIFORM && TC_MATH_NOISE_CAUCHY == TWINCACHE_NOISE_CAUCHY &&
                   TC_MATH_NOISE_GUMBEL == TWINCACHE_NOISE_GUMBEL,
               "tc_math.h's noise codes");
_Static_assert(TC_MATH_MECH_LINEAR == TWINCACHE_MECH_LINEAR && TC_MATH_MECH_MLP == TWINCACHE_MECH_MLP &&
                   TC_MATH_MECH_RFF == TWINCACHE_MECH_RFF && TC_MATH_MECH_SIGMOID == TWINCACHE_MECH_SIGMOID &&
                   TC_MATH_MECH_POLY == TWINCACHE_MECH_POLY,
               "tc_math.h's mechanism codes");
_Static_assert(TC_NODE_DO == TWINCACHE_DO && TC_NODE_SHIFT == TWINCACHE_SHIFT &&
                   TC_NODE_NOISE == TWINCACHE_INTER_NOISE && TC_NODE_SOFT == TWINCACHE_INTER_SOFT &&
                   TC_NODE_KIND_COUNT == TWINCACHE_INTER_KIND_COUNT,
               "tc_node_body.h's kind codes");

void twincache_sample_tables(double zig_x[257], double zig_ratio[256]) {
  /* scm/tc_scm_noise.c's tables_init, the same operations with the same libm */
  const double R = TC_MATH_ZIG_R, V = 0.00492867323399;
  double f = exp(-0.5 * R * R);
  zig_x[0] = V / f;
  zig_x[1] = R;
  zig_x[256] = 0.0;
  for (int i = 2; i < 256; i++) {
    zig_x[i] = sqrt(-2.0 * log(V / zig_x[i - 1] + f));
    f = exp(-0.5 * zig_x[i] * zig_x[i]);
  }
  for (int i = 0; i < 256; i++) zig_ratio[i] = zig_x[i + 1] / zig_x[i];
}

int twincache_sample_check(const twincache_scm_batch *b) {
  if (b->nodes > TWINCACHE_SAMPLE_MAX_NODES) return TWINCACHE_KERNELS_EINVAL;
  for (uint32_t g = 0; g < b->graphs; g++)
    if (b->flags[g] & 2u) return TWINCACHE_KERNELS_EINVAL; /* iSCM: not this kernel's */
  for (uint32_t g = 0; g < b->graphs; g++)
    for (uint32_t k = 0; k < b->n_inter[g] && k < b->inter; k++)
      if (!tc_sb_kind_supported(b->kind[(size_t)g * b->inter + k])) return TWINCACHE_KERNELS_EINVAL;
  return 0;
}

int twincache_sample_cpu(const twincache_scm_batch *b, float *noise, float *mean, float *sd,
                         float *base, float *inter) {
  if (twincache_sample_check(b)) return TWINCACHE_KERNELS_EINVAL;
  for (uint32_t g = 0; g < b->graphs; g++)
    for (uint32_t s = 0; s < b->rows; s++) tc_sb_base_row(b, g, s, noise, base);
  for (uint32_t g = 0; g < b->graphs; g++)
    for (uint32_t j = 0; j < b->nodes; j++) tc_sb_stats(b, g, j, base, mean, sd);
  for (uint32_t g = 0; g < b->graphs; g++)
    for (uint32_t s = 0; s < b->rows; s++) tc_sb_twin_row(b, g, s, noise, base, mean, sd, inter);
  return 0;
}
