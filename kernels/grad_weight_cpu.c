/* grad_weight_cpu.c — the data-parallel weighting of a batch's gradients
 * around the sum over ranks (twincache_kernels.h), plain C; grad_weight.cu
 * is its CUDA twin. The CPU backend's MPI path runs exactly these. */
#include "twincache_kernels.h"

void twincache_grad_weight_cpu(float *grad, size_t n, double wsum) {
  float w = (float)wsum;
  for (size_t i = 0; i < n; i++) grad[i] *= w;
}

void twincache_grad_unweight_cpu(float *grad, size_t n, const double *tot, float *loss) {
  double inv = tot[0] > 0 ? 1.0 / tot[0] : 0.0;
  for (size_t i = 0; i < n; i++) grad[i] = (float)((double)grad[i] * inv);
  *loss = (float)(tot[1] * inv);
}
