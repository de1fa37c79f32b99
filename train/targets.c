/* targets.c — tc_infer_targets (tc_model.h): the intervention targets a
 * batch withholds (--val-withhold-targets, a suite cell marked
 * withhold_targets), read back from its worlds.
 *
 * The rule (train/MODEL.md, "Withheld targets"): a do(X_t = v) sets X_t to
 * one value in every row of its world, while every other node keeps its
 * noise (every noise scale is > 0), so the nodes whose held rows all carry
 * the same value are the world's targets, exactly, also for multi-target
 * worlds and on independent worlds. Other kinds (shift, noise, soft) leave
 * their target varying: no node qualifies and the world keeps no target,
 * as before (the model then sees only its base-world features). A world
 * needs 2 held rows to show it; NaN never equals itself, so a NaN cell
 * marks no target. */
#include <string.h>

#include "tc_model.h"

uint64_t tc_infer_targets(const twincache_batch_layout *l, void *slab, uint64_t *worlds) {
  uint8_t *s = (uint8_t *)slab;
  const size_t G = l->graphs, K = l->inter, S = l->samples, N = l->nodes;
  const float *inter = (const float *)(s + l->inter_off);
  const uint8_t *node_mask = s + l->node_mask, *int_mask = s + l->int_mask;
  const uint32_t *rows = (const uint32_t *)(s + l->rows);
  uint8_t *target = s + l->target;
  float *value = (float *)(s + l->value);
  uint64_t found = 0, seen = 0;
  for (size_t g = 0; g < G; g++)
    for (size_t k = 0; k < K; k++) {
      if (!int_mask[g * K + k]) continue;
      seen++;
      size_t r = rows[g * (K + 1) + k + 1], gk = g * K + k;
      if (r > S) r = S;
      memset(target + gk * N, 0, N);
      memset(value + gk * N, 0, N * sizeof(float));
      if (r < 2) continue;
      const float *x = inter + gk * S * N; /* (S, N) */
      int any = 0;
      for (size_t j = 0; j < N; j++) {
        if (!node_mask[g * N + j]) continue;
        size_t q = 1;
        while (q < r && x[q * N + j] == x[j]) q++;
        if (q == r) target[gk * N + j] = 1, value[gk * N + j] = x[j], any = 1;
      }
      found += (uint64_t)any;
    }
  if (worlds) *worlds = seen;
  return found;
}
