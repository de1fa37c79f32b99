/* corr_cpu.c — the reference correlation of the edge model (contract in
 * twincache_kernels.h; train/MODEL.md for the why). The per-entry body is
 * tc_corr_body.h's, which corr.cu compiles too. */
#include <stddef.h>
#include <stdint.h>

#include "tc_corr_body.h"
#include "twincache_kernels.h"

void twincache_corr_cpu(float *C, const float *base, const uint8_t *node_mask, const uint32_t *rows,
                        int rows_ld, int G, int S, int N) {
  for (int g = 0; g < G; g++) {
    const float *bg = base + (size_t)g * S * N;
    const uint8_t *nm = node_mask + (size_t)g * N;
    float *Cg = C + (size_t)g * N * N;
    const int r = tc_corr_rows(rows, rows_ld, g, S);
    for (int i = 0; i < N; i++)
      for (int j = 0; j < N; j++) Cg[i * N + j] = tc_corr_one(bg, nm, i, j, r, N);
  }
}
