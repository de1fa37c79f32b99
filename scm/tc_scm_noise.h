/* tc_scm_noise.h — the noise families of the SCM sampler (internal to scm/):
 * ONE dispatch table (tc_scm_noise.c) with one file per family behind it
 * (noise_gauss.c, noise_laplace.c, noise_uniform.c, noise_cauchy.c,
 * noise_gumbel.c). A family gives its stream draw (the generator's, from a
 * sequential tc_rng) and its fresh cell draw (from a cell's counters), and
 * TC_SCM_NOISE_DEFINE makes the two fill loops around them, so the draw is
 * inlined and a matrix costs one table look-up, not a call per cell. A new
 * family is its own file, one row in tc_scm_noise.c, one name in
 * formats/names.c; its fresh cell draw is written once, in common/tc_math.h
 * (tc_math_cell), which the GPU sampler compiles too. */
#ifndef TC_SCM_NOISE_H
#define TC_SCM_NOISE_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "tc_common.h"
#include "twincache_format.h"

typedef struct tc_scm_noise {
  int code; /* enum twincache_noise */
  /* noise (n, S), column-major: for s in [0, S), for j in [0, n):
   * noise[j S + s] = scale[j] * (float)(the stream draw from rn). */
  void (*stream)(float *noise, const float *scale, uint32_t n, uint32_t S, tc_rng *rn);
  /* noise (n, S): cell (s, j) = scale[j] * (float)(the fresh cell draw of
   * row s of key), the row's stream state tc_rng_init(key, s); row_key (S)
   * is scratch (it gets the row states). */
  void (*fresh)(float *noise, const float *scale, uint32_t n, uint32_t S, uint64_t key, uint64_t *row_key);
} tc_scm_noise;

/* The family of a code; a code outside the table draws gauss (the
 * frames and the generator's options refuse such codes first). */
const tc_scm_noise *tc_scm_noise_get(int code);

/* Builds the shared tables below once (thread-safe; before any draw). */
void tc_scm_noise_init(void);

/* ---- the transforms the families share (tc_scm_noise.c) ------------------- */
/* The ziggurat's layer edges (257) and ratios (256). */
extern double tc_scm_zig_x[257], tc_scm_zig_ratio[256];
/* The fast path's two numbers of layer i side by side (one cache line holds
 * four layers, one base address serves both): ratio[i] and x[i]. */
typedef struct tc_scm_zig_layer {
  double ratio, x;
} tc_scm_zig_layer;
extern tc_scm_zig_layer tc_scm_zig_fast[256];

/* The ziggurat's slow path from a first draw `bits` whose fast path failed
 * (the same loop from the start: the fast test fails again); later draws
 * come from r; fresh: the shared math's log and exp (tc_math.h), else libm's. */
static inline double tc_scm_zig_normal_slow(uint64_t bits, tc_rng *r, int fresh) {
  return tc_math_zig_slow(bits, &r->state, tc_scm_zig_x, tc_scm_zig_ratio, fresh);
}

/* Standard normal: the Marsaglia-Tsang ziggurat (256 layers) from a first
 * draw `bits`; ~99% return here, the rest go on in tc_scm_zig_normal_slow. */
static inline double tc_scm_zig_normal(uint64_t bits, tc_rng *r, int fresh) {
  const tc_scm_zig_layer *z = &tc_scm_zig_fast[bits & 0xff]; /* layer: low 8 bits */
  double u = tc_math_signed(bits);                            /* top 53 */
  if (fabs(u) < z->ratio) return u * z->x;
  return tc_scm_zig_normal_slow(bits, r, fresh);
}

/* ---- the fresh cell draws ------------------------------------------------------
 * Fresh worlds must come out the same on a GPU: the cells' draws are the
 * shared math's (common/tc_math.h: tc_math_*_cell, its log and exp from
 * basic operations), which kernels/tc_sample_body.h compiles too. The
 * generator's stream noise keeps libm's, so its caches keep their bytes. */

/* The stream state of every row s in [0, S) of key: tc_rng_init(key, s),
 * into row_key (S). */
static inline void tc_scm_row_keys(uint64_t *restrict row_key, uint32_t S, uint64_t key) {
  for (uint32_t s = 0; s < S; s++) {
    tc_rng row;
    tc_rng_init(&row, key, s);
    row_key[s] = row.state;
  }
}

/* ---- one family's file -------------------------------------------------------
 * TC_SCM_NOISE_DEFINE(name, CODE, stream_draw, cell_draw) defines the row
 * tc_scm_noise_<name> from the family's two draws (TC_SCM_NOISE_FILLS only
 * the two loops, name_stream_fill and name_fresh_fill, for a family that
 * makes its own row):
 *   double stream_draw(tc_rng *rn)                                one stream draw
 *   double cell_draw(uint64_t bits, uint64_t row_key, uint32_t j) cell j of the row
 *     whose stream state is row_key; bits = its first draw, draw j+1 of the row's
 *     stream; any further draw from tc_math_stream(row_key, j), made only then.
 * The loops are written once, here; each family's copy inlines its draws.
 * The fresh loop runs down each column (the rows' stream states first), so
 * its stores are contiguous; a cell's value does not depend on the order. */
#define TC_SCM_NOISE_FILLS(name, stream_draw, cell_draw)                                                    \
  static void name##_stream_fill(float *noise, const float *scale, uint32_t n, uint32_t S, tc_rng *rn) {    \
    for (uint32_t s = 0; s < S; s++)                                                                         \
      for (uint32_t j = 0; j < n; j++) noise[(size_t)j * S + s] = scale[j] * (float)stream_draw(rn);         \
  }                                                                                                          \
  static void name##_fresh_fill(float *restrict noise, const float *restrict scale, uint32_t n, uint32_t S,  \
                                uint64_t key, uint64_t *restrict row_key) {                                  \
    tc_scm_row_keys(row_key, S, key);                                                                        \
    for (uint32_t j = 0; j < n; j++) { /* column j, contiguous: cell (s, j) for every row s */              \
      const uint64_t step = (uint64_t)(j + 1) * 0x9e3779b97f4a7c15ull; /* draw j+1 of a row's stream */      \
      const float sc = scale[j];                                                                             \
      float *restrict col = noise + (size_t)j * S;                                                           \
      for (uint32_t s = 0; s < S; s++)                                                                       \
        col[s] = sc * (float)cell_draw(tc_mix64(row_key[s] + step), row_key[s], j);                          \
    }                                                                                                        \
  }
#define TC_SCM_NOISE_DEFINE(name, CODE, stream_draw, cell_draw)                                             \
  TC_SCM_NOISE_FILLS(name, stream_draw, cell_draw)                                                           \
  const tc_scm_noise tc_scm_noise_##name = {CODE, name##_stream_fill, name##_fresh_fill}

/* ---- SIMD -------------------------------------------------------------------
 * scm/ has AVX-512 twins of a few loops (the gauss fresh fill, the
 * mechanisms' weighted sums) for CPUs that have the instructions: chosen at
 * run time by a flag, so the library runs on any x86-64 (no ifunc: its
 * resolvers run before a sanitizer's runtime is up). A twin must give the
 * scalar loop's bits: integer steps, and IEEE operations element by element
 * in the same order (ISO C: no FMA contraction); the rare cells past a fast
 * path go through the scalar code. tests/scm/test_scm_noise_simd checks them
 * against the scalar loops.
 * tc_scm_simd is 1 when the CPU has AVX-512 F and DQ (set by
 * tc_scm_noise_init) and the environment has no TWINCACHE_SIMD=0;
 * tc_scm_set_simd(0) makes every loop scalar (tests; call it before any
 * sampling thread starts). */
extern int tc_scm_simd;
void tc_scm_set_simd(int on);
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TC_SCM_HAVE_AVX512 1
#define TC_SCM_AVX512 __attribute__((target("avx512f,avx512dq")))
#endif

#endif /* TC_SCM_NOISE_H */
