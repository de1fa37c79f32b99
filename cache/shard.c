/* shard.c — the split of a cache into shards and the shard meta entry
 * (tc_cache_shard.h; FORMAT.md section 7). */
#include "tc_cache_shard.h"

#include "tc_common.h"
#include "tc_error.h"
#include "twincache_format.h"

#define TC_SHARD_LAYOUT 1u

int tc_cache_shard_split(uint64_t graphs, uint32_t chunk_graphs, uint32_t index, uint32_t count,
                         tc_cache_shard *s) {
  if (count == 0 || index >= count || chunk_graphs == 0)
    return tc_error_set(TWINCACHE_EINVAL, "shard %u of %u: the index must be below the count", index, count);
  uint64_t chunks = graphs / chunk_graphs + (graphs % chunk_graphs != 0);
  if (count > chunks)
    return tc_error_set(TWINCACHE_EINVAL,
                        "%u shards of %llu graphs in chunks of %u: at most %llu shards (one chunk each)", count,
                        (unsigned long long)graphs, chunk_graphs, (unsigned long long)chunks);
  /* 128-bit products: I*M needs up to 32 + 60 bits */
  uint64_t lo = (uint64_t)((unsigned __int128)index * chunks / count);
  uint64_t hi = (uint64_t)((unsigned __int128)(index + 1) * chunks / count);
  s->index = index;
  s->count = count;
  s->first = lo * chunk_graphs;
  s->end = hi * chunk_graphs < graphs ? hi * chunk_graphs : graphs;
  return TWINCACHE_OK;
}

/* FNV-1a 64 of the first 32 bytes, then the cache tag (8 bytes LE). */
static uint64_t entry_check(const uint8_t *b, uint64_t tag) {
  uint8_t t[8];
  tc_store_u64(t, tag);
  return tc_fnv1a64_update(tc_fnv1a64(b, 32), t, 8);
}

void tc_cache_shard_encode(const tc_cache_shard *s, uint64_t tag, uint8_t out[TC_SHARD_ENTRY_BYTES]) {
  tc_store_u32(out, TC_SHARD_LAYOUT);
  tc_store_u32(out + 4, s->index);
  tc_store_u32(out + 8, s->count);
  tc_store_u32(out + 12, 0);
  tc_store_u64(out + 16, s->first);
  tc_store_u64(out + 24, s->end);
  tc_store_u64(out + 32, entry_check(out, tag));
}

int tc_cache_shard_decode(const void *data, size_t size, uint64_t tag, uint64_t graphs, uint32_t chunk_graphs,
                          tc_cache_shard *s) {
  const uint8_t *b = data;
  if (size != TC_SHARD_ENTRY_BYTES)
    return tc_error_set(TWINCACHE_ECORRUPT, "the shard entry is %zu bytes, not %d", size, TC_SHARD_ENTRY_BYTES);
  uint32_t layout = tc_load_u32(b);
  if (layout == 0 || tc_load_u32(b + 12) != 0)
    return tc_error_set(TWINCACHE_ECORRUPT, "the shard entry's layout or reserved word is damaged");
  if (layout > TC_SHARD_LAYOUT)
    return tc_error_set(TWINCACHE_EVERSION, "the shard entry has layout %u (this reader knows %u)", layout,
                        TC_SHARD_LAYOUT);
  if (tc_load_u64(b + 32) != entry_check(b, tag))
    return tc_error_set(TWINCACHE_ECORRUPT, "the shard entry fails its checksum (damaged, or copied from "
                        "another cache)");
  tc_cache_shard got = {tc_load_u32(b + 4), tc_load_u32(b + 8), tc_load_u64(b + 16), tc_load_u64(b + 24)};
  tc_cache_shard want;
  if (tc_cache_shard_split(graphs, chunk_graphs, got.index, got.count, &want) != TWINCACHE_OK ||
      want.first != got.first || want.end != got.end)
    return tc_error_set(TWINCACHE_ECORRUPT,
                        "the shard entry says shard %u of %u holds graphs %llu..%llu, which is not that shard's "
                        "range of a %llu-graph cache",
                        got.index, got.count, (unsigned long long)got.first, (unsigned long long)got.end,
                        (unsigned long long)graphs);
  *s = got;
  return TWINCACHE_OK;
}
