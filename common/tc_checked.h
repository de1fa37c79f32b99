/* tc_checked.h — overflow-checked unsigned arithmetic for counts and sizes.
 * Header-only, libc only. Each returns 1 when the exact result does not fit
 * (then *out is left unchanged), 0 after storing it in *out. Use them on
 * every count x size product that comes from a flag, a file or a header
 * before allocating or creating anything with it. Thread-safe (pure). */
#ifndef TC_CHECKED_H
#define TC_CHECKED_H

#include <stddef.h>
#include <stdint.h>

static inline int tc_add_u64_overflow(uint64_t a, uint64_t b, uint64_t *out) {
  if (b > UINT64_MAX - a) return 1;
  *out = a + b;
  return 0;
}

static inline int tc_mul_u64_overflow(uint64_t a, uint64_t b, uint64_t *out) {
  if (a != 0 && b > UINT64_MAX / a) return 1;
  *out = a * b;
  return 0;
}

/* a * b * c, checked at each step. */
static inline int tc_mul3_u64_overflow(uint64_t a, uint64_t b, uint64_t c, uint64_t *out) {
  uint64_t ab;
  if (tc_mul_u64_overflow(a, b, &ab)) return 1;
  return tc_mul_u64_overflow(ab, c, out);
}

/* ceil(a / b) for b > 0, without the a + b - 1 that wraps near 2^64. */
static inline uint64_t tc_div_ceil_u64(uint64_t a, uint64_t b) {
  return a / b + (a % b != 0);
}

/* A uint64 that must also fit a size_t (32-bit hosts). */
static inline int tc_u64_to_size_overflow(uint64_t v, size_t *out) {
  if (v > (uint64_t)SIZE_MAX) return 1;
  *out = (size_t)v;
  return 0;
}

#endif /* TC_CHECKED_H */
