/* features_cpu.c — reference feature kernels of the edge model (see
 * twincache_kernels.h for the contract, train/MODEL.md for the why). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "twincache_kernels.h"

void twincache_effects_cpu(float *T, uint8_t *observed, const float *base, const float *inter,
                           const uint8_t *target, const uint8_t *node_mask,
                           const uint8_t *int_mask, int G, int K, int S, int N) {
  memset(T, 0, sizeof(float) * (size_t)G * N * N);
  memset(observed, 0, (size_t)G * N);
  /* num[j] accumulates sum d_t d_j for the current target, den sum d_t^2 */
  double *num = malloc(sizeof(double) * (size_t)(N > 0 ? N : 1));
  if (!num) return; /* N is tiny; the caller sees all-zero T */
  for (int g = 0; g < G; g++) {
    const float *bg = base + (size_t)g * S * N;
    const uint8_t *nm = node_mask + (size_t)g * N;
    for (int t = 0; t < N; t++) {
      if (!nm[t]) continue;
      double den = 0.0;
      int count = 0;
      for (int j = 0; j < N; j++) num[j] = 0.0;
      for (int k = 0; k < K; k++) {
        if (!int_mask[(size_t)g * K + k]) continue;
        const uint8_t *tk = target + ((size_t)g * K + k) * N;
        int n_targets = 0, only = -1;
        for (int j = 0; j < N; j++)
          if (tk[j]) n_targets++, only = j;
        if (n_targets != 1 || only != t) continue;
        count++;
        const float *ik = inter + ((size_t)g * K + k) * S * N;
        for (int s = 0; s < S; s++) {
          double dt = (double)ik[(size_t)s * N + t] - (double)bg[(size_t)s * N + t];
          den += dt * dt;
          for (int j = 0; j < N; j++)
            num[j] += dt * ((double)ik[(size_t)s * N + j] - (double)bg[(size_t)s * N + j]);
        }
      }
      if (count == 0 || !(den > TWINCACHE_EFFECT_EPS * S * count)) continue;
      observed[(size_t)g * N + t] = 1;
      float *row = T + ((size_t)g * N + t) * N;
      for (int j = 0; j < N; j++) row[j] = nm[j] ? (float)(num[j] / den) : 0.0f;
      row[t] = 1.0f;
    }
  }
  free(num);
}

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

static float tc_clip(float x) {
  if (x > TWINCACHE_FEATURE_CLIP) return TWINCACHE_FEATURE_CLIP;
  if (x < -TWINCACHE_FEATURE_CLIP) return -TWINCACHE_FEATURE_CLIP;
  if (x != x) return 0.0f; /* NaN from a degenerate graph: no information */
  return x;
}

void twincache_pair_features_cpu(float *feat, float *pair_w, const float *T,
                                 const uint8_t *observed, const float *C, const float *W_hat,
                                 const float *Pc, const uint8_t *node_mask, int G, int N) {
  const int F = TWINCACHE_FEATURES;
  size_t nn = (size_t)N * N;
  for (int g = 0; g < G; g++) {
    const uint8_t *nm = node_mask + (size_t)g * N, *ob = observed + (size_t)g * N;
    const float *Tg = T + g * nn, *Cg = C + g * nn, *Wg = W_hat + g * nn, *Pg = Pc + g * nn;
    for (int i = 0; i < N; i++) {
      for (int j = 0; j < N; j++) {
        size_t p = g * nn + (size_t)i * N + j;
        float *f = feat + p * F;
        for (int q = 0; q < F; q++) f[q] = 0.0f;
        pair_w[p] = 0.0f;
        if (i == j || !nm[i] || !nm[j]) continue;
        pair_w[p] = 1.0f;
        /* aggregates, in fixed index order */
        float row_max = 0.0f, col_max = 0.0f, wcol_max = 0.0f, wcol_sum = 0.0f;
        for (int k = 0; k < N; k++) {
          if (!nm[k]) continue;
          if (k != i) row_max = fmaxf(row_max, fabsf(Tg[i * N + k]));
          if (k != j) {
            col_max = fmaxf(col_max, fabsf(Tg[k * N + j]));
            wcol_max = fmaxf(wcol_max, fabsf(Wg[k * N + j]));
            wcol_sum += fabsf(Wg[k * N + j]);
          }
        }
        float tij = Tg[i * N + j], tji = Tg[j * N + i];
        float wij = Wg[i * N + j], wji = Wg[j * N + i];
        f[0] = tc_clip(tij);
        f[1] = tc_clip(tji);
        f[2] = tc_clip(fabsf(tij));
        f[3] = tc_clip(wij);
        f[4] = tc_clip(wji);
        f[5] = tc_clip(fabsf(wij));
        f[6] = Cg[i * N + j];
        f[7] = fabsf(Cg[i * N + j]);
        f[8] = Pg[i * N + j];
        f[9] = fabsf(Pg[i * N + j]);
        f[10] = (float)ob[i];
        f[11] = (float)ob[j];
        f[12] = tc_clip(row_max);
        f[13] = tc_clip(col_max);
        f[14] = tc_clip(fabsf(wij) / (wcol_max + 1e-6f));
        f[15] = tc_clip(wcol_sum);
      }
    }
  }
}
