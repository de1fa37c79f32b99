/* pair_features_cpu.c — the reference pair features of the edge model (contract in
 * twincache_kernels.h; train/MODEL.md for the why). The per-pair body is
 * tc_pair_features_body.h's, which pair_features.cu compiles too. */
#include <stddef.h>
#include <stdint.h>

#include "tc_pair_features_body.h"
#include "twincache_kernels.h"

void twincache_pair_features_cpu(float *feat, float *pair_w, const float *T,
                                 const uint8_t *observed, const float *C, const float *W_hat,
                                 const float *Pc, const uint8_t *node_mask, int G, int N) {
  const int F = TWINCACHE_FEATURES;
  size_t nn = (size_t)N * N;
  for (int g = 0; g < G; g++) {
    const uint8_t *nm = node_mask + (size_t)g * N, *ob = observed + (size_t)g * N;
    const float *Tg = T + g * nn, *Cg = C + g * nn, *Wg = W_hat + g * nn, *Pg = Pc + g * nn;
    for (int i = 0; i < N; i++)
      for (int j = 0; j < N; j++) {
        size_t p = g * nn + (size_t)i * N + j;
        tc_pair_features_one(feat + p * F, pair_w + p, Tg, ob, Cg, Wg, Pg, nm, i, j, N);
      }
  }
}
