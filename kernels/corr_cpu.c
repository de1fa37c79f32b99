/* corr_cpu.c — the reference correlation of the edge model (contract in
 * twincache_kernels.h; train/MODEL.md for the why). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "twincache_kernels.h"

void twincache_corr_cpu(float *C, const float *base, const uint8_t *node_mask, int G, int S,
                        int N) {
  for (int g = 0; g < G; g++) {
    const float *bg = base + (size_t)g * S * N;
    const uint8_t *nm = node_mask + (size_t)g * N;
    float *Cg = C + (size_t)g * N * N;
    for (int i = 0; i < N; i++) {
      for (int j = 0; j < N; j++) {
        Cg[i * N + j] = 0.0f;
        if (!nm[i] || !nm[j]) continue;
        /* two-pass: means first, then centred moments (stable for S small) */
        double mi = 0.0, mj = 0.0;
        for (int s = 0; s < S; s++) mi += bg[(size_t)s * N + i], mj += bg[(size_t)s * N + j];
        mi /= S, mj /= S;
        double sij = 0.0, sii = 0.0, sjj = 0.0;
        for (int s = 0; s < S; s++) {
          double a = bg[(size_t)s * N + i] - mi, b = bg[(size_t)s * N + j] - mj;
          sij += a * b, sii += a * a, sjj += b * b;
        }
        if (sii < 1e-12 * S || sjj < 1e-12 * S) continue;
        Cg[i * N + j] = (i == j) ? 1.0f : (float)(sij / sqrt(sii * sjj));
      }
    }
  }
}
