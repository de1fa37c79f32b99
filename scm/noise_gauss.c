/* noise_gauss.c — the standard normal noise (FORMAT.md 3.6): the ziggurat
 * on the stream; fresh, its fast path on the cell's first draw and, past it
 * (~1%), the rest of the ziggurat with scm's log and exp on the cell's own
 * stream. The fresh fill has an AVX-512 twin (below), used where the CPU
 * has it. */
#include "tc_scm_noise.h"

static inline double gauss_stream(tc_rng *r) { return tc_scm_zig_normal(tc_rng_u64(r), r, 0); }

static inline double gauss_cell(uint64_t bits, uint64_t row_key, uint32_t j) {
  return tc_math_gauss_cell(bits, row_key, j, tc_scm_zig_x, tc_scm_zig_ratio);
}

TC_SCM_NOISE_FILLS(gauss, gauss_stream, gauss_cell)

#ifdef TC_SCM_HAVE_AVX512
#include <immintrin.h>

/* tc_mix64 of 8 lanes (vpmullq is AVX-512 DQ). */
TC_SCM_AVX512 static inline __m512i mix64_x8(__m512i z) {
  z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64(z, 30)), _mm512_set1_epi64((long long)0xbf58476d1ce4e5b9ull));
  z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64(z, 27)), _mm512_set1_epi64((long long)0x94d049bb133111ebull));
  return _mm512_xor_si512(z, _mm512_srli_epi64(z, 31));
}

/* gauss_fresh_fill, 8 cells of a column at a time: the same integers, the
 * same double operations (the 53-bit integer converts exactly, 2^-52 and
 * - 1 as tc_math_signed, the layer's ratio and edge loaded), the same
 * float rounding and scale; a lane that fails the fast test is redone by
 * gauss_cell, which is the scalar cell itself. Rows past the last multiple
 * of 8 go through gauss_cell too. */
TC_SCM_AVX512 static void gauss_fresh_fill_avx512(float *restrict noise, const float *restrict scale, uint32_t n,
                                              uint32_t S, uint64_t key, uint64_t *restrict row_key) {
  const uint32_t S8 = S & ~7u;
  const __m512i gamma = _mm512_set1_epi64((long long)0x9e3779b97f4a7c15ull);
  /* row keys: tc_rng_init(key, s) = mix64(key ^ mix64(s + gamma)) */
  const __m512i vkey = _mm512_set1_epi64((long long)key);
  __m512i vs = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
  for (uint32_t s = 0; s < S8; s += 8, vs = _mm512_add_epi64(vs, _mm512_set1_epi64(8)))
    _mm512_storeu_si512((void *)(row_key + s),
                        mix64_x8(_mm512_xor_si512(vkey, mix64_x8(_mm512_add_epi64(vs, gamma)))));
  for (uint32_t s = S8; s < S; s++) {
    tc_rng row;
    tc_rng_init(&row, key, s);
    row_key[s] = row.state;
  }
  const double *zt = &tc_scm_zig_fast[0].ratio; /* (256, 2): ratio, x */
  const __m512i low8 = _mm512_set1_epi64(0xff);
  const __m512d two_m52 = _mm512_set1_pd(1.0 / 4503599627370496.0), one = _mm512_set1_pd(1.0);
  const __m512i even = _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0), odd = _mm512_set_epi64(15, 13, 11, 9, 7, 5, 3, 1);
  for (uint32_t j = 0; j < n; j++) {
    const uint64_t step = (uint64_t)(j + 1) * 0x9e3779b97f4a7c15ull;
    const __m512i vstep = _mm512_set1_epi64((long long)step);
    const float sc = scale[j];
    const __m256 vsc = _mm256_set1_ps(sc);
    float *restrict col = noise + (size_t)j * S;
    for (uint32_t s = 0; s < S8; s += 8) {
      __m512i bits = mix64_x8(_mm512_add_epi64(_mm512_loadu_si512((const void *)(row_key + s)), vstep));
      /* each lane's layer (ratio, x): eight 16-byte loads, then split into
       * ratios and edges (faster here than two gathers) */
      uint64_t layer[8];
      _mm512_storeu_si512((void *)layer, _mm512_and_si512(bits, low8));
      __m512d lo = _mm512_castpd128_pd512(_mm_loadu_pd(zt + 2 * layer[0]));
      lo = _mm512_insertf64x2(lo, _mm_loadu_pd(zt + 2 * layer[1]), 1);
      lo = _mm512_insertf64x2(lo, _mm_loadu_pd(zt + 2 * layer[2]), 2);
      lo = _mm512_insertf64x2(lo, _mm_loadu_pd(zt + 2 * layer[3]), 3);
      __m512d hi = _mm512_castpd128_pd512(_mm_loadu_pd(zt + 2 * layer[4]));
      hi = _mm512_insertf64x2(hi, _mm_loadu_pd(zt + 2 * layer[5]), 1);
      hi = _mm512_insertf64x2(hi, _mm_loadu_pd(zt + 2 * layer[6]), 2);
      hi = _mm512_insertf64x2(hi, _mm_loadu_pd(zt + 2 * layer[7]), 3);
      __m512d ratio = _mm512_permutex2var_pd(lo, even, hi), edge = _mm512_permutex2var_pd(lo, odd, hi);
      __m512d u = _mm512_sub_pd(_mm512_mul_pd(_mm512_cvtepi64_pd(_mm512_srli_epi64(bits, 11)), two_m52), one);
      __mmask8 fast = _mm512_cmp_pd_mask(_mm512_abs_pd(u), ratio, _CMP_LT_OQ);
      _mm256_storeu_ps(col + s, _mm256_mul_ps(vsc, _mm512_cvtpd_ps(_mm512_mul_pd(u, edge))));
      for (unsigned slow = ~(unsigned)fast & 0xffu; slow; slow &= slow - 1) { /* ~9% of the 8s */
        const uint32_t l = s + (uint32_t)__builtin_ctz(slow);
        col[l] = sc * (float)gauss_cell(tc_mix64(row_key[l] + step), row_key[l], j);
      }
    }
    for (uint32_t s = S8; s < S; s++) col[s] = sc * (float)gauss_cell(tc_mix64(row_key[s] + step), row_key[s], j);
  }
}
#endif

static void gauss_fresh(float *restrict noise, const float *restrict scale, uint32_t n, uint32_t S, uint64_t key,
                        uint64_t *restrict row_key) {
#ifdef TC_SCM_HAVE_AVX512
  if (tc_scm_simd) {
    gauss_fresh_fill_avx512(noise, scale, n, S, key, row_key);
    return;
  }
#endif
  gauss_fresh_fill(noise, scale, n, S, key, row_key);
}

const tc_scm_noise tc_scm_noise_gauss = {TWINCACHE_NOISE_GAUSS, gauss_stream_fill, gauss_fresh};
