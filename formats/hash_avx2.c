/* hash_avx2.c — tc_payload_hash's AVX2 variant (hash.c): the same XXH3-64,
 * this file alone compiled with -mavx2, called only where the CPU has AVX2. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <stddef.h>
#include <stdint.h>

uint64_t tc_payload_hash_avx2(const void *p, size_t n);
uint64_t tc_payload_hash_avx2(const void *p, size_t n) { return (uint64_t)XXH3_64bits(p, n); }
