/* tc_gelu_body.h — the edge model's GELU per element, one body compiled
 * twice: as C by gelu_cpu.c and as CUDA device code by gelu.cu.
 *
 * GELU(x) ~ 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3). Each
 * caller supplies th = tanh(u) its own way (the CPU through one expf, the
 * device with tanhf: within ~1e-7 of each other, test_kernels_cuda's
 * tolerance); the polynomial, the value and the gradient are written once
 * here, in the order both files used before. Pure functions of their
 * arguments; x, th are float scalars. */
#ifndef TC_GELU_BODY_H
#define TC_GELU_BODY_H

#include "tc_math.h" /* TC_MATH: static inline, __host__ __device__ under nvcc */

#define TC_GELU_K 0.7978845608028654f /* sqrt(2/pi) */

/* u, the argument of GELU's tanh. */
TC_MATH float tc_gelu_arg(float x) { return TC_GELU_K * (x + 0.044715f * x * x * x); }

/* GELU(x), given th = tanh(tc_gelu_arg(x)). */
TC_MATH float tc_gelu_value(float x, float th) { return 0.5f * x * (1.0f + th); }

/* d GELU / dx at x, given th = tanh(tc_gelu_arg(x)). */
TC_MATH float tc_gelu_grad(float x, float th) {
  float sech2 = 1.0f - th * th;
  return 0.5f * (1.0f + th) + 0.5f * x * sech2 * TC_GELU_K * (1.0f + 3.0f * 0.044715f * x * x);
}

#endif
