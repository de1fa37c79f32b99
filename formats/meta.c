/* meta.c — fixed-size codecs of the "dims" and "stats" meta entries. */
#include "tc_common.h"
#include "twincache_format.h"

#define TC_DIMS_VERSION 1u
#define TC_STATS_VERSION 1u

/* dims (32 bytes): version u32, chunk_graphs u32, graphs u64, max_nodes u32,
 * max_inter u32, samples u32, hidden u32. */
void twincache_dims_encode(const twincache_dims *d, uint8_t out[TWINCACHE_DIMS_BYTES]) {
  tc_store_u32(out + 0, TC_DIMS_VERSION);
  tc_store_u32(out + 4, d->chunk_graphs);
  tc_store_u64(out + 8, d->graphs);
  tc_store_u32(out + 16, d->max_nodes);
  tc_store_u32(out + 20, d->max_inter);
  tc_store_u32(out + 24, d->samples);
  tc_store_u32(out + 28, d->hidden);
}

int twincache_dims_decode(const void *src, size_t size, twincache_dims *d) {
  const uint8_t *p = src;
  if (!p || !d) return TWINCACHE_EINVAL;
  /* size first: the cache's format_version entry already refuses newer
   * layouts, so a wrong size here is damage */
  if (size != TWINCACHE_DIMS_BYTES) return TWINCACHE_ECORRUPT;
  uint32_t version = tc_load_u32(p);
  if (version == 0) return TWINCACHE_ECORRUPT;
  if (version > TC_DIMS_VERSION) return TWINCACHE_EVERSION;
  d->chunk_graphs = tc_load_u32(p + 4);
  d->graphs = tc_load_u64(p + 8);
  d->max_nodes = tc_load_u32(p + 16);
  d->max_inter = tc_load_u32(p + 20);
  d->samples = tc_load_u32(p + 24);
  d->hidden = tc_load_u32(p + 28);
  return TWINCACHE_OK;
}

/* stats (40 bytes): version u32, reserved u32 (0), raw_bytes u64,
 * frame_bytes u64, edges u64, nodes u64. */
void twincache_stats_encode(const twincache_stats *s, uint8_t out[TWINCACHE_STATS_BYTES]) {
  tc_store_u32(out + 0, TC_STATS_VERSION);
  tc_store_u32(out + 4, 0);
  tc_store_u64(out + 8, s->raw_bytes);
  tc_store_u64(out + 16, s->frame_bytes);
  tc_store_u64(out + 24, s->edges);
  tc_store_u64(out + 32, s->nodes);
}

int twincache_stats_decode(const void *src, size_t size, twincache_stats *s) {
  const uint8_t *p = src;
  if (!p || !s) return TWINCACHE_EINVAL;
  /* size first: the cache's format_version entry already refuses newer
   * layouts, so a wrong size here is damage */
  if (size != TWINCACHE_STATS_BYTES) return TWINCACHE_ECORRUPT;
  uint32_t version = tc_load_u32(p);
  if (version == 0) return TWINCACHE_ECORRUPT;
  if (version > TC_STATS_VERSION) return TWINCACHE_EVERSION;
  if (tc_load_u32(p + 4) != 0) return TWINCACHE_ECORRUPT;
  s->raw_bytes = tc_load_u64(p + 8);
  s->frame_bytes = tc_load_u64(p + 16);
  s->edges = tc_load_u64(p + 24);
  s->nodes = tc_load_u64(p + 32);
  return TWINCACHE_OK;
}
