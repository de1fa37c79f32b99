/* linear_cpu.c — the reference linear layers of the edge model (contract in
 * twincache_kernels.h; train/MODEL.md for the why). */
#include <math.h>
#include <string.h>

#include "twincache_kernels.h"

void twincache_linear_forward_cpu(float *out, const float *in, const float *w, const float *b,
                                  int P, int I, int O) {
  for (int p = 0; p < P; p++) {
    const float *x = in + (size_t)p * I;
    float *y = out + (size_t)p * O;
    for (int o = 0; o < O; o++) {
      const float *wo = w + (size_t)o * I;
      float acc = 0.0f;
      /* a fixed-width SIMD reduction: the order is fixed by the build, so
       * results stay deterministic run to run */
#pragma omp simd reduction(+ : acc)
      for (int i = 0; i < I; i++) acc += wo[i] * x[i];
      acc += b ? b[o] : 0.0f;
      y[o] = acc;
    }
  }
}

void twincache_linear_backward_cpu(float *din, float *dw, float *db, const float *dout,
                                   const float *in, const float *w, int P, int I, int O) {
  memset(dw, 0, sizeof(float) * (size_t)O * I);
  if (db) memset(db, 0, sizeof(float) * (size_t)O);
  for (int p = 0; p < P; p++) {
    const float *dy = dout + (size_t)p * O;
    const float *x = in + (size_t)p * I;
    float *dx = din ? din + (size_t)p * I : NULL;
    if (dx) memset(dx, 0, sizeof(float) * (size_t)I);
    for (int o = 0; o < O; o++) {
      float g = dy[o];
      if (g == 0.0f) continue; /* masked pairs: nothing flows back */
      if (db) db[o] += g;
      float *dwo = dw + (size_t)o * I;
      const float *wo = w + (size_t)o * I;
      for (int i = 0; i < I; i++) dwo[i] += g * x[i];
      if (dx)
        for (int i = 0; i < I; i++) dx[i] += g * wo[i];
    }
  }
}
