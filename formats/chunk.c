/* chunk.c — chunk records: a header, an offset table, then independent graph
 * frames (FORMAT.md, "Chunk record"). */
#include <stdlib.h>
#include <string.h>

#include "tc_common.h"
#include "tc_error.h"
#include "tc_format_internal.h"
#include "twincache_format.h"

/* v2 records end with a trailer: the cache tag u64, FNV-1a of those 8 bytes
 * u32. (A trailer, not a longer header: the v1 header and table offsets stay
 * where every reader expects them.) */
#define TC_CHUNK_TRAILER_BYTES 12u

struct twincache_chunk_builder {
  uint64_t tag;
  uint64_t first_index;
  uint32_t count;
  uint32_t version; /* the format version of the frames added (one per record), 0 before the first */
  uint8_t *frames; /* frames appended back to back */
  size_t frames_len, frames_cap;
  uint32_t *starts; /* (count) start of each frame in `frames` */
  size_t starts_cap;
  uint8_t *out; /* the finished record */
  size_t out_cap;
};

static int grow(void **buf, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return TWINCACHE_OK;
  size_t want = need < 64 ? 64 : need + need / 2;
  void *p = realloc(*buf, want * elem);
  TC_RETURN_IF(!p, TWINCACHE_ENOMEM, "chunk builder: out of memory for %zu elements of %zu bytes", want, elem);
  *buf = p;
  *cap = want;
  return TWINCACHE_OK;
}

twincache_chunk_builder *twincache_chunk_builder_create(void) {
  return calloc(1, sizeof(twincache_chunk_builder));
}

void twincache_chunk_builder_free(twincache_chunk_builder *b) {
  if (!b) return;
  free(b->frames);
  free(b->starts);
  free(b->out);
  free(b);
}

void twincache_chunk_builder_reset(twincache_chunk_builder *b, uint64_t first_index) {
  if (!b) return;
  b->first_index = first_index;
  b->count = 0;
  b->version = 0;
  b->frames_len = 0;
}

/* The record takes its version from its first frame (4 for twin worlds, 5
 * for independent ones); a frame of another version is refused, so a
 * record never mixes layouts. */
static int frame_version_fits(twincache_chunk_builder *b, const void *frame, uint64_t index) {
  uint32_t v = tc_load_u16((const uint8_t *)frame + 4);
  if (v != TWINCACHE_FORMAT_VERSION_TWIN && v != TWINCACHE_FORMAT_VERSION)
    return tc_error_set(TWINCACHE_EINVAL, "chunk: frame of graph %llu is of format version %u, not %u or %u",
                        (unsigned long long)index, v, (unsigned)TWINCACHE_FORMAT_VERSION_TWIN,
                        (unsigned)TWINCACHE_FORMAT_VERSION);
  if (b->version && v != b->version)
    return tc_error_set(TWINCACHE_EINVAL, "chunk: frame of graph %llu is of format version %u, the record's "
                        "others of %u", (unsigned long long)index, v, b->version);
  b->version = v;
  return TWINCACHE_OK;
}

void twincache_chunk_builder_set_tag(twincache_chunk_builder *b, uint64_t tag) {
  if (b) b->tag = tag;
}

uint32_t twincache_chunk_builder_count(const twincache_chunk_builder *b) {
  return b ? b->count : 0;
}

static int push_start(twincache_chunk_builder *b) {
  if (b->count >= TWINCACHE_MAX_CHUNK_GRAPHS)
    return tc_error_set(TWINCACHE_ETOOBIG, "chunk: more than %d graphs", TWINCACHE_MAX_CHUNK_GRAPHS);
  int rc = grow((void **)&b->starts, &b->starts_cap, (size_t)b->count + 1, sizeof(uint32_t));
  if (rc != TWINCACHE_OK) return tc_error_set(rc, "chunk: out of memory");
  if (b->frames_len > UINT32_MAX) return tc_error_set(TWINCACHE_ETOOBIG, "chunk: frames exceed 4 GiB");
  b->starts[b->count] = (uint32_t)b->frames_len;
  return TWINCACHE_OK;
}

int twincache_chunk_builder_add(twincache_chunk_builder *b, twincache_cctx *c,
                                const twincache_graph *g) {
  if (!b || !c || !g) return tc_error_set(TWINCACHE_EINVAL, "twincache_chunk_builder_add: NULL argument");
  if (g->index != b->first_index + b->count)
    return tc_error_set(TWINCACHE_EINVAL, "chunk: graph %llu added where graph %llu belongs",
                        (unsigned long long)g->index, (unsigned long long)(b->first_index + b->count));
  int rc = push_start(b);
  if (rc != TWINCACHE_OK) return rc;
  size_t bound = twincache_frame_bound(g->n_nodes, g->n_samples, g->n_inter, g->n_hidden);
  if ((rc = grow((void **)&b->frames, &b->frames_cap, b->frames_len + bound, 1)) != TWINCACHE_OK)
    return tc_error_set(rc, "chunk: out of memory");
  size_t written = 0;
  rc = twincache_frame_encode(c, g, b->frames + b->frames_len, b->frames_cap - b->frames_len, &written);
  if (rc != TWINCACHE_OK) return rc;
  if ((rc = frame_version_fits(b, b->frames + b->frames_len, g->index)) != TWINCACHE_OK) return rc;
  b->frames_len += written;
  b->count++;
  return TWINCACHE_OK;
}

int twincache_chunk_builder_add_frame(twincache_chunk_builder *b, const void *frame, size_t size) {
  if (!b || !frame) return tc_error_set(TWINCACHE_EINVAL, "twincache_chunk_builder_add_frame: NULL argument");
  uint64_t index;
  int rc = twincache_frame_peek(frame, size, &index, NULL, NULL, NULL, NULL);
  if (rc != TWINCACHE_OK) return rc; /* the frame's message */
  if (index != b->first_index + b->count)
    return tc_error_set(TWINCACHE_EINVAL, "chunk: frame of graph %llu added where graph %llu belongs",
                        (unsigned long long)index, (unsigned long long)(b->first_index + b->count));
  /* the record is of its frames' version, so they must all be (chunk_frame) */
  if ((rc = frame_version_fits(b, frame, index)) != TWINCACHE_OK) return rc;
  if ((rc = push_start(b)) != TWINCACHE_OK) return rc;
  if ((rc = grow((void **)&b->frames, &b->frames_cap, b->frames_len + size, 1)) != TWINCACHE_OK)
    return tc_error_set(rc, "chunk: out of memory");
  memcpy(b->frames + b->frames_len, frame, size);
  b->frames_len += size;
  b->count++;
  return TWINCACHE_OK;
}

/* Header (28 bytes, v1 and v2): magic "TCC1", version u16, header bytes u16,
 * first_index u64, count u32, FNV-1a of the offset table u32, FNV-1a of
 * bytes [0, 24) u32. v2 appends the tag trailer after the frames. */
int twincache_chunk_builder_finish(twincache_chunk_builder *b, const void **data, size_t *size) {
  if (!b || !data || !size || b->count == 0)
    return tc_error_set(TWINCACHE_EINVAL, "twincache_chunk_builder_finish: NULL argument or no graph added");
  if (b->frames_len > UINT32_MAX) return tc_error_set(TWINCACHE_ETOOBIG, "chunk: frames exceed 4 GiB");
  size_t table = 4 * ((size_t)b->count + 1);
  size_t total = TC_CHUNK_HEADER_BYTES + table + b->frames_len + TC_CHUNK_TRAILER_BYTES;
  int rc = grow((void **)&b->out, &b->out_cap, total, 1);
  if (rc != TWINCACHE_OK) return tc_error_set(rc, "chunk: out of memory");
  uint8_t *p = b->out, *t = p + TC_CHUNK_HEADER_BYTES;
  for (uint32_t i = 0; i < b->count; i++) tc_store_u32(t + 4 * (size_t)i, b->starts[i]);
  tc_store_u32(t + 4 * (size_t)b->count, (uint32_t)b->frames_len);
  memcpy(p, TC_CHUNK_MAGIC, 4);
  tc_store_u16(p + 4, (uint16_t)b->version); /* its frames' (count >= 1) */
  tc_store_u16(p + 6, TC_CHUNK_HEADER_BYTES);
  tc_store_u64(p + 8, b->first_index);
  tc_store_u32(p + 16, b->count);
  tc_store_u32(p + 20, tc_fnv1a32(t, table));
  tc_store_u32(p + 24, tc_fnv1a32(p, 24));
  memcpy(t + table, b->frames, b->frames_len);
  uint8_t *tr = t + table + b->frames_len;
  tc_store_u64(tr, b->tag);
  tc_store_u32(tr + 8, tc_fnv1a32(tr, 8));
  *data = p;
  *size = total;
  return TWINCACHE_OK;
}

#define TC_CHUNK_BAD(status, what) return tc_error_set(status, "chunk record: " what)
int twincache_chunk_parse(const void *src, size_t size, twincache_chunk_view *v) {
  const uint8_t *p = src;
  if (!p || !v) return tc_error_set(TWINCACHE_EINVAL, "twincache_chunk_parse: NULL argument");
  if (size < 8 || memcmp(p, TC_CHUNK_MAGIC, 4) != 0) TC_CHUNK_BAD(TWINCACHE_ECORRUPT, "no chunk magic");
  uint16_t version = tc_load_u16(p + 4);
  if (version == 0) TC_CHUNK_BAD(TWINCACHE_ECORRUPT, "version 0");
  if (version > TWINCACHE_FORMAT_VERSION)
    TC_CHUNK_BAD(TWINCACHE_EVERSION, "written by a newer format version");
  if (tc_load_u16(p + 6) != TC_CHUNK_HEADER_BYTES || size < TC_CHUNK_HEADER_BYTES)
    TC_CHUNK_BAD(TWINCACHE_ECORRUPT, "bad header size");
  if (tc_load_u32(p + 24) != tc_fnv1a32(p, 24)) TC_CHUNK_BAD(TWINCACHE_ECHECKSUM, "header checksum mismatch");
  uint32_t count = tc_load_u32(p + 16);
  if (count == 0 || count > TWINCACHE_MAX_CHUNK_GRAPHS)
    TC_CHUNK_BAD(TWINCACHE_ECORRUPT, "graph count out of range");
  size_t table = 4 * ((size_t)count + 1);
  if (table > size - TC_CHUNK_HEADER_BYTES)
    TC_CHUNK_BAD(TWINCACHE_ECORRUPT, "offset table beyond the record");
  const uint8_t *t = p + TC_CHUNK_HEADER_BYTES;
  if (tc_load_u32(p + 20) != tc_fnv1a32(t, table))
    TC_CHUNK_BAD(TWINCACHE_ECHECKSUM, "offset table checksum mismatch");
  size_t trailer = version >= 2 ? TC_CHUNK_TRAILER_BYTES : 0;
  if (trailer > size - TC_CHUNK_HEADER_BYTES - table)
    TC_CHUNK_BAD(TWINCACHE_ECORRUPT, "no room for the tag trailer");
  size_t frames_bytes = size - TC_CHUNK_HEADER_BYTES - table - trailer;
  if (tc_load_u32(t) != 0 || tc_load_u32(t + 4 * (size_t)count) != frames_bytes)
    TC_CHUNK_BAD(TWINCACHE_ECORRUPT, "offset table does not span the frames");
  uint64_t tag = 0;
  if (trailer) {
    const uint8_t *tr = t + table + frames_bytes;
    if (tc_load_u32(tr + 8) != tc_fnv1a32(tr, 8))
      TC_CHUNK_BAD(TWINCACHE_ECHECKSUM, "tag trailer checksum mismatch");
    tag = tc_load_u64(tr);
  }
  /* every frame is longer than its version's header (48 bytes; 40 in
   * versions 1-2): a frame holds at least one byte of zstd frame */
  uint32_t frame_min = version >= 3 ? TC_FRAME_HEADER_BYTES : TC_FRAME_HEADER_BYTES_V2;
  for (uint32_t i = 0; i < count; i++) {
    uint32_t a = tc_load_u32(t + 4 * (size_t)i), z = tc_load_u32(t + 4 * (size_t)i + 4);
    if (z < a || z - a <= frame_min)
      TC_CHUNK_BAD(TWINCACHE_ECORRUPT, "a frame no longer than its version's header");
  }
  v->version = version;
  v->tag = tag;
  v->first_index = tc_load_u64(p + 8);
  v->count = count;
  v->offsets = (const uint32_t *)(const void *)t;
  v->frames = t + table;
  v->frames_bytes = frames_bytes;
  return TWINCACHE_OK;
}

int twincache_chunk_frame(const twincache_chunk_view *v, uint32_t slot, const void **frame,
                          size_t *size) {
  if (!v || !frame || !size || !v->frames || !v->offsets)
    return tc_error_set(TWINCACHE_EINVAL, "twincache_chunk_frame: NULL argument");
  if (slot >= v->count)
    return tc_error_set(TWINCACHE_EINVAL, "chunk record: slot %u of %u", (unsigned)slot, (unsigned)v->count);
  const uint8_t *t = (const uint8_t *)(const void *)v->offsets;
  uint32_t a = tc_load_u32(t + 4 * (size_t)slot), z = tc_load_u32(t + 4 * (size_t)slot + 4);
  if (z < a || z > v->frames_bytes || z - a < 8)
    TC_CHUNK_BAD(TWINCACHE_ECORRUPT, "frame offsets out of the record");
  /* a record never mixes layouts: its frames are of its own version */
  const uint8_t *f = v->frames + a;
  if (memcmp(f, TC_FRAME_MAGIC, 4) != 0 || tc_load_u16(f + 4) != v->version)
    TC_CHUNK_BAD(TWINCACHE_ECORRUPT, "a frame of another version than its record, or no frame");
  *frame = f;
  *size = z - a;
  return TWINCACHE_OK;
}
