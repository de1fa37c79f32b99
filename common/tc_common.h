/* tc_common.h — internal helpers shared by every twincache component: the one
 * RNG, the header checksums, the one timer, little-endian access, aligned
 * allocation and the stateless permutation. Header-only (CMake target
 * twincache_common); not installed, not part of the public API.
 * All functions are pure or act on caller-owned state: thread-safe. */
#ifndef TC_COMMON_H
#define TC_COMMON_H

#include <math.h>
#include <stdlib.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "tc_math.h" /* the counter RNG's mixing and conversions (one copy, shared with CUDA) */

/* ---- little-endian loads and stores (unaligned-safe) ---------------------- */
static inline uint16_t tc_load_u16(const void *p) {
  const uint8_t *b = (const uint8_t *)p;
  return (uint16_t)(b[0] | (b[1] << 8));
}
static inline uint32_t tc_load_u32(const void *p) {
  const uint8_t *b = (const uint8_t *)p;
  return (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) | ((uint32_t)b[3] << 24);
}
static inline uint64_t tc_load_u64(const void *p) {
  return (uint64_t)tc_load_u32(p) | ((uint64_t)tc_load_u32((const uint8_t *)p + 4) << 32);
}
static inline void tc_store_u16(void *p, uint16_t v) {
  uint8_t *b = (uint8_t *)p;
  b[0] = (uint8_t)v;
  b[1] = (uint8_t)(v >> 8);
}
static inline void tc_store_u32(void *p, uint32_t v) {
  uint8_t *b = (uint8_t *)p;
  for (int i = 0; i < 4; i++) b[i] = (uint8_t)(v >> (8 * i));
}
static inline void tc_store_u64(void *p, uint64_t v) {
  tc_store_u32(p, (uint32_t)v);
  tc_store_u32((uint8_t *)p + 4, (uint32_t)(v >> 32));
}
/* 8-byte big-endian key: LMDB's byte order equals numeric order. */
static inline void tc_store_be64(void *p, uint64_t v) {
  uint8_t *b = (uint8_t *)p;
  for (int i = 0; i < 8; i++) b[i] = (uint8_t)(v >> (56 - 8 * i));
}
static inline uint64_t tc_load_be64(const void *p) {
  const uint8_t *b = (const uint8_t *)p;
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v = (v << 8) | b[i];
  return v;
}

/* ---- checksum: FNV-1a 32 over small headers (frame payloads: XXH3, formats/hash.c) */
static inline uint32_t tc_fnv1a32(const void *data, size_t n) {
  const uint8_t *p = (const uint8_t *)data;
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 16777619u;
  return h;
}
/* FNV-1a 64 (offset basis 0xcbf29ce484222325, prime 0x100000001b3): the cache
 * tag and the meta checksum. */
#define TC_FNV1A64_BASIS 0xcbf29ce484222325ull
/* Continues an FNV-1a 64 hash h (start from TC_FNV1A64_BASIS) over more bytes. */
static inline uint64_t tc_fnv1a64_update(uint64_t h, const void *data, size_t n) {
  const uint8_t *p = (const uint8_t *)data;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}
static inline uint64_t tc_fnv1a64(const void *data, size_t n) {
  return tc_fnv1a64_update(TC_FNV1A64_BASIS, data, n);
}

/* ---- aligned allocation -------------------------------------------------------
 * bytes of memory aligned to `align` (a power of two, multiple of
 * sizeof(void *)), or NULL; free with free() (tc_aligned_free accepts NULL). */
static inline void *tc_aligned_alloc(size_t align, size_t bytes) {
  void *p = NULL;
  return posix_memalign(&p, align, bytes ? bytes : align) == 0 ? p : NULL;
}
static inline void tc_aligned_free(void *p) { free(p); }

/* ---- timer ------------------------------------------------------------------ */
static inline uint64_t tc_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- RNG: counter-based SplitMix64 ------------------------------------------
 * A stream is keyed by (seed, stream id); value n of a stream is
 * mix(key + n * gamma), so any stream is reproducible from its key alone and
 * streams of different ids are independent for our purposes. Graph i of a
 * cache uses tc_rng_init(&r, seed, i * TC_STREAMS_PER_GRAPH + purpose). */
typedef struct tc_rng {
  uint64_t state;
} tc_rng;

static inline uint64_t tc_mix64(uint64_t z) { return tc_math_mix64(z); }
static inline void tc_rng_init(tc_rng *r, uint64_t seed, uint64_t stream) { r->state = tc_math_stream(seed, stream); }
static inline uint64_t tc_rng_u64(tc_rng *r) { return tc_math_next(&r->state); }
/* Uniform in [0, 1) with 53 random bits. */
static inline double tc_rng_uniform(tc_rng *r) { return tc_math_uniform(tc_rng_u64(r)); }
/* Uniform in [lo, hi). */
static inline double tc_rng_range(tc_rng *r, double lo, double hi) {
  return lo + (hi - lo) * tc_rng_uniform(r);
}
/* Uniform integer in [0, n), n > 0 (Lemire's multiply-shift; bias < 2^-32 for n < 2^32). */
static inline uint32_t tc_rng_below(tc_rng *r, uint32_t n) {
  return (uint32_t)(((tc_rng_u64(r) >> 32) * (uint64_t)n) >> 32);
}
/* Standard normal by Box-Muller; uses two uniforms per call (the second
 * normal is discarded so the stream position never depends on history). */
static inline double tc_rng_normal(tc_rng *r) {
  double u1 = 1.0 - tc_rng_uniform(r); /* (0, 1] */
  double u2 = tc_rng_uniform(r);
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
/* Standard Laplace (scale 1). */
static inline double tc_rng_laplace(tc_rng *r) {
  double u = tc_rng_uniform(r) - 0.5;
  double a = 1.0 - 2.0 * fabs(u);
  if (a <= 0.0) a = 1e-300;
  return (u < 0 ? 1.0 : -1.0) * log(a);
}

/* ---- stateless permutation of [0, n) keyed by a 64-bit key -----------------
 * A 4-round Feistel network over the smallest even number of bits covering n,
 * with cycle-walking: a bijection of [0, n) computed in O(1) expected time per
 * element and no memory, so a loader's epoch order is a pure function of
 * (seed, epoch) and resume state is a few integers. tc_perm holds what
 * depends on (n, key) only, so a caller permuting many elements of one order
 * computes it once (tc_perm_init) and pays only the rounds per element. */
typedef struct tc_perm {
  uint64_t n, mask;
  uint64_t round_key[4]; /* tc_mix64(key + round) */
  unsigned half;         /* bits of each Feistel half */
} tc_perm;

static inline void tc_perm_init(tc_perm *p, uint64_t n, uint64_t key) {
  unsigned bits = 2;
  while (bits < 64 && ((uint64_t)1 << bits) < n) bits += 2;
  p->n = n;
  p->half = bits / 2;
  p->mask = ((uint64_t)1 << p->half) - 1;
  for (unsigned round = 0; round < 4; round++) p->round_key[round] = tc_mix64(key + round);
}

static inline uint64_t tc_perm_at(const tc_perm *p, uint64_t x) {
  if (p->n <= 1) return 0;
  do {
    uint64_t l = x >> p->half, rr = x & p->mask;
    for (unsigned round = 0; round < 4; round++) {
      uint64_t f = tc_mix64(rr ^ p->round_key[round]) & p->mask;
      uint64_t t = l ^ f;
      l = rr;
      rr = t;
    }
    x = (l << p->half) | rr;
  } while (x >= p->n);
  return x;
}

static inline uint64_t tc_permute(uint64_t x, uint64_t n, uint64_t key) {
  tc_perm p;
  tc_perm_init(&p, n, key);
  return tc_perm_at(&p, x);
}

#endif /* TC_COMMON_H */
