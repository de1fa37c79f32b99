/* tc_cache_shard.h — shards of a cache (FORMAT.md section 7): which graphs
 * shard I of N holds, and the `shard` meta entry that records it. Pure
 * functions (no LMDB, no I/O); internal to the project (gen/, cache/). */
#ifndef TC_CACHE_SHARD_H
#define TC_CACHE_SHARD_H

#include <stddef.h>
#include <stdint.h>

#define TC_META_SHARD "shard"  /* the meta key of a shard's entry */
#define TC_SHARD_ENTRY_BYTES 40

/* Shard `index` of `count`: graphs [first, end) of the whole cache. */
typedef struct tc_cache_shard {
  uint32_t index, count;
  uint64_t first, end;
} tc_cache_shard;

/* Splits a cache of `graphs` graphs in chunks of C into `count` contiguous
 * runs of whole chunks: with M = ceil(graphs / C) chunks, shard I holds
 * chunks [floor(I*M/N), floor((I+1)*M/N)), so every shard holds whole
 * chunks (the last shard may end in the cache's short last chunk) and the
 * shards' sizes differ by at most one chunk. Fills s (index, count, first,
 * end). Returns 0, or TWINCACHE_EINVAL when count is 0, index >= count, C
 * is 0, or count > M (a shard would be empty; the message says how many
 * shards the cache allows). */
int tc_cache_shard_split(uint64_t graphs, uint32_t chunk_graphs, uint32_t index, uint32_t count,
                         tc_cache_shard *s);

/* The shard entry: 40 bytes (FORMAT.md 7.1), its checksum keyed by the cache
 * tag so an entry copied from another cache fails it. */
void tc_cache_shard_encode(const tc_cache_shard *s, uint64_t tag, uint8_t out[TC_SHARD_ENTRY_BYTES]);
/* Decodes and checks an entry of `size` bytes against the cache's tag and
 * dims (graphs requested, C): size, layout version (0 ECORRUPT, newer
 * EVERSION), reserved word, checksum, and that first/end are exactly
 * tc_cache_shard_split's for (index, count). Returns 0 and fills *s, or
 * TWINCACHE_ECORRUPT / TWINCACHE_EVERSION with a message saying which check
 * failed (no path: the caller prefixes it). */
int tc_cache_shard_decode(const void *data, size_t size, uint64_t tag, uint64_t graphs, uint32_t chunk_graphs,
                          tc_cache_shard *s);

#endif /* TC_CACHE_SHARD_H */
