/* tc_corr_body.h — one entry of the edge model's correlation matrix, one
 * body compiled twice: as C by corr_cpu.c (a loop over the entries) and as
 * CUDA device code by corr.cu (one thread an entry). Two passes, means
 * first, then centred moments (stable for S small), summed as doubles over
 * s ascending in both builds. Pure. */
#ifndef TC_CORR_BODY_H
#define TC_CORR_BODY_H

#include <math.h>
#include <stdint.h>

#include "tc_math.h" /* TC_MATH: static inline, __host__ __device__ under nvcc */

/* corr(x_i, x_j) of one graph's base world bg [S x N] row-major, over its
 * first S rows (the rows the base world holds: the caller passes that
 * count), nm [N] its node mask: 0 for a masked node or a (near) constant
 * column, 1 on the diagonal otherwise. */
TC_MATH float tc_corr_one(const float *bg, const uint8_t *nm, int i, int j, int S, int N) {
  if (S <= 0) return 0.0f;
  if (!nm[i] || !nm[j]) return 0.0f;
  double mi = 0.0, mj = 0.0;
  for (int s = 0; s < S; s++) mi += bg[(size_t)s * N + i], mj += bg[(size_t)s * N + j];
  mi /= S, mj /= S;
  double sij = 0.0, sii = 0.0, sjj = 0.0;
  for (int s = 0; s < S; s++) {
    double a = bg[(size_t)s * N + i] - mi, b = bg[(size_t)s * N + j] - mj;
    sij += a * b, sii += a * a, sjj += b * b;
  }
  if (sii < 1e-12 * S || sjj < 1e-12 * S) return 0.0f;
  return (i == j) ? 1.0f : (float)(sij / sqrt(sii * sjj));
}

/* The rows graph g's base world holds: rows[g * rows_ld] capped at S; S
 * when rows is NULL. */
TC_MATH int tc_corr_rows(const uint32_t *rows, int rows_ld, int g, int S) {
  if (!rows) return S;
  uint32_t r = rows[(size_t)g * rows_ld];
  return r < (uint32_t)S ? (int)r : S;
}

#endif
