/* hash.c — the payload checksum of version-3 frames: XXH3-64 (xxHash >= 0.8,
 * seed 0) of the decoded payload (FORMAT.md, "Graph frame").
 *
 * Why not zstd's own content checksum (XXH64, versions 1-2): on FAST frames
 * zstd's decode is nearly a memcpy and XXH64 was ~80% of a frame's decode
 * time (11.6 GB/s with it, 93 GB/s without, on 93 KB payloads, CI VM).
 * XXH3's vector loop reaches ~55 GB/s with AVX2 and ~17 GB/s with the SSE2
 * baseline of x86-64, so the AVX2 variant is compiled separately
 * (hash_avx2.c, -mavx2) and picked at run time. Every variant gives the
 * same 64 bits. xxhash.h is used header-only: no library to link or ship. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "tc_format_internal.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && defined(TWINCACHE_HASH_AVX2)
uint64_t tc_payload_hash_avx2(const void *p, size_t n); /* hash_avx2.c */
#define TC_HASH_DISPATCH 1
#endif

uint64_t tc_payload_hash(const void *p, size_t n) {
#ifdef TC_HASH_DISPATCH
  /* the CPU model is read once by libgcc's constructor: a plain load here */
  if (__builtin_cpu_supports("avx2")) return tc_payload_hash_avx2(p, n);
#endif
  return (uint64_t)XXH3_64bits(p, n);
}
