/* test_targets: tc_infer_targets on a hand-made dense slab — a do() world's
 * constant node found (value too), a multi-target world's two, a shift
 * world (nothing constant) left without a target, a padded node and a
 * padded world never marked, a world of one held row not judged, the held
 * rows only read (a constant prefix with other values past the count), and
 * a NaN column not taken for a constant. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tc_model.h"
#include "tc_test.h"

enum { G = 2, K = 4, S = 5, N = 4 };

int main(void) {
  twincache_batch_layout l;
  TC_CHECK(twincache_batch_layout_init(&l, G, N, K, S) == 0);
  unsigned char *slab = calloc(1, l.bytes);
  float *inter = (float *)(slab + l.inter_off), *value = (float *)(slab + l.value);
  uint8_t *target = slab + l.target, *nm = slab + l.node_mask, *im = slab + l.int_mask;
  uint32_t *rows = (uint32_t *)(slab + l.rows);
  for (int g = 0; g < G; g++)
    for (int k = 0; k < K; k++)
      for (int s = 0; s < S; s++)
        for (int j = 0; j < N; j++) /* every cell different: no constant column */
          inter[(((size_t)g * K + k) * S + s) * N + j] = (float)(1 + g * 1000 + k * 100 + s * 10 + j);
#define X(g, k, s, j) inter[(((size_t)(g) * K + (k)) * S + (s)) * N + (j)]
  /* graph 0: 3 real nodes (node 3 padding, all zero there), 4 worlds */
  memset(nm, 1, 3);
  memset(im, 1, 4);
  for (int k = 0; k < K; k++) rows[0 * (K + 1) + k + 1] = S;
  rows[0] = S;
  for (int s = 0; s < S; s++) {
    X(0, 0, s, 1) = 2.5f;                     /* world 0: do(X1 = 2.5) */
    X(0, 1, s, 0) = -1.0f, X(0, 1, s, 2) = 3.0f; /* world 1: do(X0, X2) at once */
    /* world 2: a shift (nothing constant) */
    X(0, 3, s, 2) = 7.0f;                     /* world 3: do(X2 = 7) but only 1 row held */
    for (int k = 0; k < K; k++) X(0, k, s, 3) = 0.0f; /* the padded node: zeros */
  }
  rows[0 * (K + 1) + 3 + 1] = 1;
  target[0 * K * N + 2 * N + 1] = 1; /* a stale target the rule must clear */
  /* graph 1: 4 nodes, 2 real worlds of 3 held rows; world 2, 3 padding */
  memset(nm + N, 1, 4);
  memset(im + K, 1, 2);
  rows[1 * (K + 1)] = S, rows[1 * (K + 1) + 1] = 3, rows[1 * (K + 1) + 2] = 3;
  for (int s = 0; s < 3; s++) X(1, 0, s, 3) = 0.5f; /* held rows constant, rows past the count differ */
  for (int s = 0; s < S; s++) X(1, 1, s, 0) = NAN;  /* NaN: not a constant */
  for (int s = 0; s < S; s++) X(1, 2, s, 1) = 4.0f; /* a padded world: never read */

  uint64_t seen = 0, found = tc_infer_targets(&l, slab, &seen);
  TC_CHECK(seen == 6, "seen %llu real worlds, want 6", (unsigned long long)seen);
  TC_CHECK(found == 3, "found %llu worlds with a target, want 3", (unsigned long long)found);
  uint8_t want[G][K][N] = {{{0, 1, 0, 0}, {1, 0, 1, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}},
                           {{0, 0, 0, 1}, {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}}};
  for (int g = 0; g < G; g++)
    for (int k = 0; k < K; k++)
      for (int j = 0; j < N; j++)
        TC_CHECK(target[((size_t)g * K + k) * N + j] == want[g][k][j], "graph %d world %d node %d: target %d", g,
                 k, j, target[((size_t)g * K + k) * N + j]);
  TC_CHECK(value[0 * K * N + 0 * N + 1] == 2.5f && value[1 * N + 0] == -1.0f && value[1 * N + 2] == 3.0f &&
           value[(size_t)1 * K * N + 3] == 0.5f);
  free(slab);
  return tc_test_result();
}
