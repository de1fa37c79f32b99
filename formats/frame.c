/* frame.c — the graph frame's header and sizes (FORMAT.md, "Graph frame"):
 * the section table (what each payload section holds, its size and when it
 * is present, described once), the bound of a frame, and the header's
 * decoder shared by twincache_frame_peek and the decoders. The encoder is
 * frame_encode.c, the decoder frame_decode.c.
 *
 * A frame is a 48-byte header (40 in versions 1-2) followed by one zstd
 * frame (content size on) holding the payload; the header carries the
 * payload's XXH3-64 (versions 1-2: zstd's XXH64 content checksum inside the
 * zstd frame instead). The payload: adjacency bits, SCM
 * parameters, interventions, changed-column masks, base samples column-major
 * and, per intervention, only the columns it changed. */
#include <zstd.h>

#include "tc_error.h"
#include "tc_frame.h"

const char *const tc_frame_section_names[TC_SEC_COUNT] = {
    [TC_SEC_ADJ] = TC_SEC_NAME_ADJ,
    [TC_SEC_WEIGHT] = TC_SEC_NAME_WEIGHT,
    [TC_SEC_UNITS] = TC_SEC_NAME_UNITS,
    [TC_SEC_NODE_MECH] = TC_SEC_NAME_NODE_MECH,
    [TC_SEC_NOISE] = TC_SEC_NAME_NOISE,
    [TC_SEC_HETERO_W] = TC_SEC_NAME_HETERO_W,
    [TC_SEC_HETERO_C] = TC_SEC_NAME_HETERO_C,
    [TC_SEC_NORM] = TC_SEC_NAME_NORM,
    [TC_SEC_INTER] = TC_SEC_NAME_INTER,
    [TC_SEC_MORE] = TC_SEC_NAME_MORE,
    [TC_SEC_MASKS] = TC_SEC_NAME_MASKS,
    [TC_SEC_SOFT] = TC_SEC_NAME_SOFT,
    [TC_SEC_ROWS] = TC_SEC_NAME_ROWS,
    [TC_SEC_BASE] = TC_SEC_NAME_BASE,
    [TC_SEC_COLS] = TC_SEC_NAME_COLS,
};

/* Payload bytes apart from the intervention columns: adjacency, weights,
 * mechanism, noise, norm, interventions, masks, base. */
static uint64_t payload_fixed_bytes(uint64_t n, uint64_t s, uint64_t k, uint64_t h,
                                    unsigned mechanism, unsigned flags, uint64_t edges) {
  /* ROWS: the base world holds at least one row (the least), the twin
   * columns are counted by the caller at S rows (the most) */
  tc_frame_counts c = {.n = n, .s = s, .k = k, .h = h, .mechanism = mechanism, .flags = flags, .edges = edges,
                       .base_rows = 1};
  return tc_frame_payload_bytes(&c);
}

/* Largest payload a header's dimensions allow: a complete DAG, every
 * intervention a shift on a root (all N columns stored) and, from version
 * 4, every intervention soft (section 7a: one parameter block each) or
 * of min(N, TWINCACHE_MAX_TARGETS) targets (section 6a), whichever is more. */
static uint64_t payload_max_bytes(uint64_t n, uint64_t s, uint64_t k, uint64_t h,
                                  unsigned mechanism, unsigned flags, uint32_t version) {
  /* a world is soft (one block in 7a) or has extra targets (6a), not both */
  uint64_t soft = 4ull * twincache_soft_stride((uint32_t)n, (uint32_t)h, (int)mechanism);
  uint64_t more = 8ull * (n - 1 < TWINCACHE_MAX_TARGETS - 1 ? n - 1 : TWINCACHE_MAX_TARGETS - 1);
  uint64_t v4 = version >= 4 ? k * (soft > more ? soft : more) : 0;
  uint64_t base_more = (flags & TWINCACHE_GRAPH_ROWS) ? 4 * n * (s - 1) : 0; /* r_0 up to S */
  return payload_fixed_bytes(n, s, k, h, mechanism, flags, n * (n - 1) / 2) + base_more + 4 * k * n * s + v4;
}

size_t twincache_frame_bound(uint32_t n_nodes, uint32_t n_samples, uint32_t n_inter,
                             uint32_t n_hidden) {
  if (n_nodes == 0) n_nodes = 1;
  const unsigned most = TWINCACHE_GRAPH_STANDARDIZED | TWINCACHE_GRAPH_HETERO | (n_samples ? TWINCACHE_GRAPH_ROWS : 0);
  uint64_t p = payload_max_bytes(n_nodes, n_samples, n_inter, n_hidden, TWINCACHE_MECH_MIXED, /* the largest */
                                 most, TWINCACHE_FORMAT_VERSION);
  uint64_t lin = payload_max_bytes(n_nodes, n_samples, n_inter, 0, TWINCACHE_MECH_LINEAR,
                                   most, TWINCACHE_FORMAT_VERSION);
  if (lin > p) p = lin; /* H = 0: linear soft blocks (N floats) outgrow the unit blocks' */
  return TC_FRAME_HEADER_BYTES + ZSTD_compressBound((size_t)p);
}

/* ---- header ---------------------------------------------------------------- */
/* Validates everything the header alone can tell; a failure leaves the
 * message "frame: what is wrong". */
int tc_frame_header_read(const void *src, size_t size, tc_frame_hdr *h) {
  const uint8_t *p = src;
  if (!p || size < 8 || memcmp(p, TC_FRAME_MAGIC, 4) != 0)
    return tc_error_set(TWINCACHE_ECORRUPT, "frame: no frame magic (%zu bytes)", p ? size : 0);
  uint16_t version = tc_load_u16(p + 4);
  if (version == 0) return tc_error_set(TWINCACHE_ECORRUPT, "frame: version 0");
  if (version > TWINCACHE_FORMAT_VERSION)
    return tc_error_set(TWINCACHE_EVERSION, "frame: format version %u, this build reads 1..%d", version,
                        TWINCACHE_FORMAT_VERSION);
  uint32_t hb = version >= 3 ? TC_FRAME_HEADER_BYTES : TC_FRAME_HEADER_BYTES_V2;
  if (tc_load_u16(p + 6) != hb || size < hb)
    return tc_error_set(TWINCACHE_ECORRUPT, "frame: header size %u (%zu bytes in all), version %u has %u",
                        tc_load_u16(p + 6), size, version, hb);
  if (tc_load_u32(p + hb - 4) != tc_fnv1a32(p, hb - 4))
    return tc_error_set(TWINCACHE_ECHECKSUM, "frame: header checksum mismatch: the header is damaged");
  h->version = version;
  h->header_bytes = hb;
  h->payload_hash = version >= 3 ? tc_load_u64(p + 36) : 0;
  h->index = tc_load_u64(p + 8);
  h->n = tc_load_u16(p + 16);
  h->s = tc_load_u16(p + 18);
  h->k = tc_load_u16(p + 20);
  h->h = p[22];
  h->mechanism = p[23];
  h->noise = p[24];
  h->flags = p[25];
  h->codec = p[26];
  h->family = version >= 4 ? p[27] : TWINCACHE_FAMILY_UNKNOWN;
  h->decoded_bytes = tc_load_u32(p + 28);
  h->compressed_bytes = tc_load_u32(p + 32);
  /* S = 0: an SCM-only frame (sections 8-9 empty), FORMAT.md 3.1 */
  if (h->n == 0 || h->n > TWINCACHE_MAX_NODES || (h->s == 0 && version < TC_FRAME_SCM_ONLY_SINCE) ||
      h->s > TWINCACHE_MAX_SAMPLES ||
      h->k > TWINCACHE_MAX_INTER ||
      h->mechanism >= (version >= 4 ? TWINCACHE_MECH_COUNT : TWINCACHE_MECH_MLP + 1) ||
      h->noise >= (version >= 4 ? TWINCACHE_NOISE_COUNT : TWINCACHE_NOISE_UNIFORM + 1) ||
      (version >= 4 ? h->family >= TWINCACHE_FAMILY_COUNT && h->family != TWINCACHE_FAMILY_UNKNOWN
                    : p[27] != 0) ||
      (h->flags & ~(TWINCACHE_GRAPH_STANDARDIZED |
                    (version >= 4 ? TWINCACHE_GRAPH_HETERO | TWINCACHE_GRAPH_ISCM : 0u) |
                    (version >= 5 ? TWINCACHE_GRAPH_INDEPENDENT | TWINCACHE_GRAPH_ROWS | TC_FRAME_OBSERVED_FLAGS : 0u))) ||
      ((h->flags & TWINCACHE_GRAPH_ROWS) && h->s == 0) ||
      ((h->flags & TWINCACHE_GRAPH_ISCM) && !(h->flags & TWINCACHE_GRAPH_STANDARDIZED)) ||
      (h->codec & ~TC_FRAME_CODEC_SHUFFLE))
    return tc_error_set(TWINCACHE_ECORRUPT, "frame: header fields out of range");
  if (!tc_frame_observed_header_ok(h->flags, h->mechanism, h->h, h->noise, h->family, h->s))
    return tc_error_set(TWINCACHE_ECORRUPT, "frame: flags 0x%x: an observed frame is INDEPENDENT, linear, H 0, "
                        "noise gauss, family unknown, S > 0 and nothing else (NO_DAG/NO_TARGETS only with OBSERVED)",
                        h->flags);
  if (h->mechanism == TWINCACHE_MECH_LINEAR ? h->h != 0
                                            : (h->h == 0 || h->h > TWINCACHE_MAX_HIDDEN))
    return tc_error_set(TWINCACHE_ECORRUPT, "frame: hidden size %u does not fit its mechanism", h->h);
  if (h->compressed_bytes == 0 || h->compressed_bytes > size - hb)
    return tc_error_set(TWINCACHE_ECORRUPT, "frame: %u compressed bytes, %zu present", h->compressed_bytes,
                        size - hb);
  uint64_t lo = payload_fixed_bytes(h->n, h->s, h->k, h->h, h->mechanism, h->flags, 0);
  uint64_t hi = payload_max_bytes(h->n, h->s, h->k, h->h, h->mechanism, h->flags, h->version);
  if (h->decoded_bytes < lo || h->decoded_bytes > hi)
    return tc_error_set(TWINCACHE_ECORRUPT, "frame: %u decoded bytes, outside %llu..%llu", h->decoded_bytes,
                        (unsigned long long)lo, (unsigned long long)hi);
  return TWINCACHE_OK;
}

int twincache_frame_peek(const void *src, size_t size, uint64_t *index, uint32_t *n_nodes,
                         uint32_t *n_samples, uint32_t *n_inter, uint32_t *n_hidden) {
  tc_frame_hdr h;
  int rc = tc_frame_header_read(src, size, &h);
  if (rc != TWINCACHE_OK) return rc;
  if (index) *index = h.index;
  if (n_nodes) *n_nodes = h.n;
  if (n_samples) *n_samples = h.s;
  if (n_inter) *n_inter = h.k;
  if (n_hidden) *n_hidden = h.h;
  return TWINCACHE_OK;
}

