/* meta.c — the meta codecs: fixed-size "dims" and "stats" entries, and the
 * meta record as a whole (v2: cache tag and checksum). Pure functions. */
#include <string.h>

#include "tc_common.h"
#include "tc_error.h"
#include "tc_format_internal.h"
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
  if (!p || !d) return tc_error_set(TWINCACHE_EINVAL, "twincache_dims_decode: NULL argument");
  /* size first: the cache's format_version entry already refuses newer
   * layouts, so a wrong size here is damage */
  if (size != TWINCACHE_DIMS_BYTES)
    return tc_error_set(TWINCACHE_ECORRUPT, "meta dims: %zu bytes, not %d", size, TWINCACHE_DIMS_BYTES);
  uint32_t version = tc_load_u32(p);
  if (version == 0) return tc_error_set(TWINCACHE_ECORRUPT, "meta dims: version 0");
  if (version > TC_DIMS_VERSION) return tc_error_set(TWINCACHE_EVERSION, "meta dims: version %u", version);
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
  if (!p || !s) return tc_error_set(TWINCACHE_EINVAL, "twincache_stats_decode: NULL argument");
  /* size first: the cache's format_version entry already refuses newer
   * layouts, so a wrong size here is damage */
  if (size != TWINCACHE_STATS_BYTES)
    return tc_error_set(TWINCACHE_ECORRUPT, "meta stats: %zu bytes, not %d", size, TWINCACHE_STATS_BYTES);
  uint32_t version = tc_load_u32(p);
  if (version == 0) return tc_error_set(TWINCACHE_ECORRUPT, "meta stats: version 0");
  if (version > TC_STATS_VERSION) return tc_error_set(TWINCACHE_EVERSION, "meta stats: version %u", version);
  TC_RETURN_IF(tc_load_u32(p + 4) != 0, TWINCACHE_ECORRUPT, "meta stats: reserved word %u, not 0", tc_load_u32(p + 4));
  s->raw_bytes = tc_load_u64(p + 8);
  s->frame_bytes = tc_load_u64(p + 16);
  s->edges = tc_load_u64(p + 24);
  s->nodes = tc_load_u64(p + 32);
  return TWINCACHE_OK;
}

/* ---- the meta record (v2: tag and checksum) ------------------------------ */
#define TC_META_CHECK_VERSION 1u
static const char tc_meta_domain[8] = {'T', 'C', 'M', 'E', 'T', 'A', '2', 0};

static const char *const tc_meta_keys[TWINCACHE_MK_COUNT] = {
    TWINCACHE_META_VERSION, TWINCACHE_META_CONFIG, TWINCACHE_META_DIMS,  TWINCACHE_META_COMMITTED,
    TWINCACHE_META_STATS,   TWINCACHE_META_LIBRARY, TWINCACHE_META_TAG, TWINCACHE_META_CHECK};

const char *twincache_meta_key_name(int k) {
  return k >= 0 && k < TWINCACHE_MK_COUNT ? tc_meta_keys[k] : NULL;
}

uint64_t twincache_meta_tag(const char *config, size_t config_len) {
  return tc_fnv1a64(config ? config : "", config ? config_len : 0);
}

/* Canonical serialisation, hashed as it is produced:
 *   "TCMETA2\0", u32 version, dims (32 bytes), u64 committed, stats (40 bytes),
 *   u64 tag, u32 config length, config bytes, u32 library length, library. */
uint64_t twincache_meta_checksum(const twincache_meta *m) {
  uint8_t b[TWINCACHE_STATS_BYTES];
  uint64_t h = tc_fnv1a64_update(TC_FNV1A64_BASIS, tc_meta_domain, sizeof tc_meta_domain);
  tc_store_u32(b, m->version);
  h = tc_fnv1a64_update(h, b, 4);
  twincache_dims_encode(&m->dims, b);
  h = tc_fnv1a64_update(h, b, TWINCACHE_DIMS_BYTES);
  tc_store_u64(b, m->committed);
  h = tc_fnv1a64_update(h, b, 8);
  twincache_stats_encode(&m->stats, b);
  h = tc_fnv1a64_update(h, b, TWINCACHE_STATS_BYTES);
  tc_store_u64(b, m->tag);
  h = tc_fnv1a64_update(h, b, 8);
  tc_store_u32(b, (uint32_t)m->config_len);
  h = tc_fnv1a64_update(h, b, 4);
  h = tc_fnv1a64_update(h, m->config, m->config_len);
  tc_store_u32(b, (uint32_t)m->library_len);
  h = tc_fnv1a64_update(h, b, 4);
  return tc_fnv1a64_update(h, m->library, m->library_len);
}

void twincache_meta_check_encode(const twincache_meta *m, uint8_t out[TWINCACHE_META_CHECK_BYTES]) {
  tc_store_u32(out, TC_META_CHECK_VERSION);
  tc_store_u32(out + 4, 0);
  tc_store_u64(out + 8, twincache_meta_checksum(m));
}

#define TC_META_BAD(status, what) return tc_error_set(status, "meta: " what)
int twincache_meta_parse(const twincache_meta_entry e[TWINCACHE_MK_COUNT], twincache_meta *m) {
  if (!e || !m) return tc_error_set(TWINCACHE_EINVAL, "twincache_meta_parse: NULL argument");
  memset(m, 0, sizeof *m);
  m->config = m->library = "";
  const twincache_meta_entry *v = &e[TWINCACHE_MK_VERSION];
  if (!v->data) TC_META_BAD(TWINCACHE_ENOTCACHE, "no format_version entry");
  if (v->size != 4) TC_META_BAD(TWINCACHE_ECORRUPT, "format_version is not 4 bytes");
  m->version = tc_load_u32(v->data);
  if (m->version > TWINCACHE_FORMAT_VERSION)
    return tc_error_set(TWINCACHE_EVERSION, "meta: format version %u, this build reads 1..%d", m->version,
                        TWINCACHE_FORMAT_VERSION);
  if (m->version == 0) TC_META_BAD(TWINCACHE_ECORRUPT, "format version 0");

  v = &e[TWINCACHE_MK_DIMS];
  if (!v->data) TC_META_BAD(TWINCACHE_ECORRUPT, "no dims entry");
  int rc = twincache_dims_decode(v->data, v->size, &m->dims);
  if (rc != TWINCACHE_OK) return rc;
  const twincache_dims *d = &m->dims;
  if (d->chunk_graphs == 0 || d->chunk_graphs > TWINCACHE_MAX_CHUNK_GRAPHS || d->max_nodes == 0 ||
      d->max_nodes > TWINCACHE_MAX_NODES || d->samples > TWINCACHE_MAX_SAMPLES ||
      d->max_inter > TWINCACHE_MAX_INTER || d->hidden > TWINCACHE_MAX_HIDDEN)
    TC_META_BAD(TWINCACHE_ECORRUPT, "dims out of the format's limits");
  if (d->samples == 0 && m->version < TC_FRAME_SCM_ONLY_SINCE) /* SCM-only caches exist from version 4 */
    return tc_error_set(TWINCACHE_ECORRUPT, "meta: dims say 0 samples (SCM-only) in a version %u cache; "
                        "SCM-only caches exist from format version %u", m->version, TC_FRAME_SCM_ONLY_SINCE);

  /* committed is written with the first chunks; a cache without it has none */
  v = &e[TWINCACHE_MK_COMMITTED];
  if (v->data) {
    if (v->size != 8) TC_META_BAD(TWINCACHE_ECORRUPT, "committed is not 8 bytes");
    m->committed = tc_load_u64(v->data);
  }
  v = &e[TWINCACHE_MK_STATS];
  if (v->data && (rc = twincache_stats_decode(v->data, v->size, &m->stats)) != TWINCACHE_OK) return rc;
  v = &e[TWINCACHE_MK_CONFIG];
  if (v->data) {
    m->config = v->data;
    m->config_len = v->size;
  }
  v = &e[TWINCACHE_MK_LIBRARY];
  if (v->data) {
    m->library = v->data;
    m->library_len = v->size;
  }
  if (m->config_len > UINT32_MAX || m->library_len > UINT32_MAX)
    TC_META_BAD(TWINCACHE_ECORRUPT, "config or library text over 4 GiB");
  uint64_t config_tag = twincache_meta_tag(m->config, m->config_len);
  if (m->version < 2) { /* v1: no tag, no checksum */
    m->tag = config_tag;
    return TWINCACHE_OK;
  }
  v = &e[TWINCACHE_MK_TAG];
  if (!v->data || v->size != 8) TC_META_BAD(TWINCACHE_ECORRUPT, "no 8-byte tag entry");
  m->tag = tc_load_u64(v->data);
  if (m->tag != config_tag) TC_META_BAD(TWINCACHE_ECORRUPT, "the tag is not that of the stored config");
  v = &e[TWINCACHE_MK_CHECK];
  if (!v->data || v->size != TWINCACHE_META_CHECK_BYTES) TC_META_BAD(TWINCACHE_ECORRUPT, "no checksum entry");
  const uint8_t *c = v->data;
  if (tc_load_u32(c) != TC_META_CHECK_VERSION || tc_load_u32(c + 4) != 0)
    TC_META_BAD(TWINCACHE_ECORRUPT, "checksum entry of an unknown version");
  if (tc_load_u64(c + 8) != twincache_meta_checksum(m)) TC_META_BAD(TWINCACHE_ECORRUPT, "checksum mismatch");
  return TWINCACHE_OK;
}
