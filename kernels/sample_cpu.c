/* sample_cpu.c — the fresh-world sampler's host emulation: the kernel's
 * per-thread code (tc_sample_body.h) compiled as C and run for every thread
 * of each phase in turn. Contract in twincache_kernels.h. */
#include <math.h>

#include "tc_sample_body.h"
#include "twincache_kernels.h"

void twincache_sample_tables(double zig_x[257], double zig_ratio[256]) {
  /* scm/tc_scm_noise.c's tables_init, the same operations with the same libm */
  const double R = 3.6541528853610088, V = 0.00492867323399;
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
