/* tc_format_internal.h — helpers shared by the frame and chunk codecs. */
#ifndef TC_FORMAT_INTERNAL_H
#define TC_FORMAT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "twincache_format.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "twincache stores float32 in little-endian byte order and assumes a little-endian host"
#endif

#define TC_BITSET_WORDS ((TWINCACHE_MAX_NODES + 63) / 64)

/* Frame header: fixed size per version, little-endian (FORMAT.md, "Graph
 * frame"): 48 bytes from version 3 (the payload's XXH3-64 at byte 36), 40
 * in versions 1-2 (zstd's XXH64 content checksum instead). */
#define TC_FRAME_MAGIC "TCG1"
#define TC_FRAME_HEADER_BYTES 48u
/* First frame version whose S may be 0 (an SCM-only frame: no samples,
 * FORMAT.md 3.1); older frames keep S >= 1. */
#define TC_FRAME_SCM_ONLY_SINCE 4u
#define TC_FRAME_HEADER_BYTES_V2 40u
#define TC_FRAME_CODEC_SHUFFLE 0x1u /* sample floats stored as 4 byte planes */

/* XXH3-64 (seed 0) of n bytes: the payload checksum of version-3 frames
 * (hash.c). Thread-safe. */
uint64_t tc_payload_hash(const void *p, size_t n);

/* Chunk header v1. */
#define TC_CHUNK_MAGIC "TCC1"
#define TC_CHUNK_HEADER_BYTES 28u

/* Descendant sets of every node of a DAG of up to TWINCACHE_MAX_NODES nodes:
 * child[i] is the bitset of i's children, desc[i] that of i and everything
 * reachable from it. ~17 KiB: lives inside the codec contexts. */
typedef struct tc_dag {
  uint64_t child[TWINCACHE_MAX_NODES][TC_BITSET_WORDS];
  uint64_t desc[TWINCACHE_MAX_NODES][TC_BITSET_WORDS];
  uint16_t order[TWINCACHE_MAX_NODES];
  uint16_t indeg[TWINCACHE_MAX_NODES];
} tc_dag;

/* Fills w->desc from w->child (n nodes). Returns 0, or -1 when the graph has
 * a cycle or a self-loop. For n <= 64 only word 0 of child[i] is read and only
 * word 0 of desc[i] is written. */
int tc_dag_close(tc_dag *w, uint32_t n);

/* Set bits of x; portable (no libgcc call on baseline x86-64, which lacks
 * the popcnt instruction). */
static inline uint32_t tc_popcount64(uint64_t x) {
  x = x - ((x >> 1) & 0x5555555555555555ull);
  x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
  return (uint32_t)((x * 0x0101010101010101ull) >> 56);
}

static inline int tc_bit_get(const uint64_t *set, uint32_t i) {
  return (int)((set[i >> 6] >> (i & 63)) & 1u);
}

#endif /* TC_FORMAT_INTERNAL_H */
