/* inverse_cpu.c — the reference inverse features of the edge model (contract in
 * twincache_kernels.h; train/MODEL.md for the why). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "twincache_kernels.h"

/* In-place inverse of the n x n row-major matrix a (double) by Gauss-Jordan
 * with partial pivoting; inv receives the result. Returns 0, or -1 when a
 * pivot is below TWINCACHE_PIVOT_EPS. */
static int tc_invert(double *a, double *inv, int n) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) inv[i * n + j] = (i == j) ? 1.0 : 0.0;
  for (int c = 0; c < n; c++) {
    int p = c;
    for (int r = c + 1; r < n; r++)
      if (fabs(a[r * n + c]) > fabs(a[p * n + c])) p = r;
    if (!(fabs(a[p * n + c]) > TWINCACHE_PIVOT_EPS)) return -1;
    if (p != c) {
      for (int j = 0; j < n; j++) {
        double t = a[c * n + j];
        a[c * n + j] = a[p * n + j], a[p * n + j] = t;
        t = inv[c * n + j];
        inv[c * n + j] = inv[p * n + j], inv[p * n + j] = t;
      }
    }
    double d = 1.0 / a[c * n + c];
    for (int j = 0; j < n; j++) a[c * n + j] *= d, inv[c * n + j] *= d;
    for (int r = 0; r < n; r++) {
      if (r == c) continue;
      double f = a[r * n + c];
      if (f == 0.0) continue;
      for (int j = 0; j < n; j++) a[r * n + j] -= f * a[c * n + j], inv[r * n + j] -= f * inv[c * n + j];
    }
  }
  return 0;
}

void twincache_inverse_cpu(float *W_hat, float *Pc, const float *T, const uint8_t *observed,
                           const float *C, const uint8_t *node_mask, int G, int N) {
  size_t nn = (size_t)N * N;
  memset(W_hat, 0, sizeof(float) * G * nn);
  memset(Pc, 0, sizeof(float) * G * nn);
  double *a = malloc(sizeof(double) * (nn ? nn : 1)), *inv = malloc(sizeof(double) * (nn ? nn : 1));
  if (!a || !inv) goto cleanup;
  for (int g = 0; g < G; g++) {
    const uint8_t *nm = node_mask + (size_t)g * N;
    const uint8_t *ob = observed + (size_t)g * N;
    const float *Tg = T + g * nn, *Cg = C + g * nn;
    float *Wg = W_hat + g * nn, *Pg = Pc + g * nn;
    /* W_hat = I - T_full^{-1} */
    for (int i = 0; i < N; i++)
      for (int j = 0; j < N; j++) {
        double v = (i == j) ? 1.0 : 0.0;
        if (i != j && nm[i] && nm[j] && ob[i]) v = Tg[i * N + j];
        a[i * N + j] = v;
      }
    if (tc_invert(a, inv, N) == 0) {
      for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
          if (i != j && nm[i] && nm[j]) Wg[i * N + j] = (float)(-inv[i * N + j]);
    }
    /* precision of the ridged correlation */
    for (int i = 0; i < N; i++)
      for (int j = 0; j < N; j++) {
        double v = (i == j) ? 1.0 : 0.0;
        if (nm[i] && nm[j]) v = Cg[i * N + j] + (i == j ? TWINCACHE_CORR_RIDGE : 0.0);
        a[i * N + j] = v;
      }
    if (tc_invert(a, inv, N) == 0) {
      for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
          if (i == j || !nm[i] || !nm[j]) continue;
          double q = inv[i * N + i] * inv[j * N + j];
          if (q > 0.0) Pg[i * N + j] = (float)(-inv[i * N + j] / sqrt(q));
        }
    }
  }
cleanup:
  free(a);
  free(inv);
}
