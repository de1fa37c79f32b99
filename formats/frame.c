/* frame.c — encoder and decoder of one graph frame (FORMAT.md, "Graph frame").
 *
 * A frame is a 48-byte header (40 in versions 1-2) followed by one zstd
 * frame (content size on) holding the payload; the header carries the
 * payload's XXH3-64 (versions 1-2: zstd's XXH64 content checksum inside the
 * zstd frame instead). The payload: adjacency bits, SCM
 * parameters, interventions, changed-column masks, base samples column-major
 * and, per intervention, only the columns it changed. */
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "tc_common.h"
#include "tc_error.h"
#include "tc_format_internal.h"
#include "twincache_format.h"

struct twincache_cctx {
  ZSTD_CCtx *z;
  int level;       /* zstd level of the SMALL encoding */
  int encoding;    /* enum twincache_encoding */
  int shuffle;     /* store sample floats as byte planes */
  uint8_t *buf;    /* payload scratch, grown to the largest payload seen */
  size_t buf_cap;
  uint8_t *tmp;    /* byte-plane scratch (shuffle only) */
  size_t tmp_cap;
  tc_dag dag;
};

struct twincache_dctx {
  ZSTD_DCtx *z;
  uint8_t *buf;
  size_t buf_cap;
  uint8_t *tmp;
  size_t tmp_cap;
  tc_dag dag;
  uint32_t ncols[TWINCACHE_MAX_INTER]; /* stored columns per intervention */
  /* the intervention records of the last view, decoded */
  uint16_t target[TWINCACHE_MAX_INTER];
  uint8_t kind[TWINCACHE_MAX_INTER];
  float value[TWINCACHE_MAX_INTER];
  uint8_t n_targets[TWINCACHE_MAX_INTER];
  uint16_t more_target[TWINCACHE_MAX_INTER * (TWINCACHE_MAX_TARGETS - 1)];
  float more_value[TWINCACHE_MAX_INTER * (TWINCACHE_MAX_TARGETS - 1)];
};

/* The header, decoded. */
typedef struct tc_frame_hdr {
  uint32_t version, header_bytes; /* 48 from version 3, else 40 */
  uint64_t payload_hash;          /* version 3: XXH3-64 of the payload */
  uint64_t index;
  uint32_t n, s, k, h;
  uint8_t mechanism, noise, flags, codec;
  uint8_t family; /* version 4: byte 27; UNKNOWN before */
  uint32_t decoded_bytes, compressed_bytes;
} tc_frame_hdr;

static int buf_grow(uint8_t **buf, size_t *cap, size_t need) {
  if (need <= *cap) return TWINCACHE_OK;
  size_t want = need < 4096 ? 4096 : need + need / 4;
  uint8_t *p = realloc(*buf, want);
  if (!p) return TWINCACHE_ENOMEM;
  *buf = p;
  *cap = want;
  return TWINCACHE_OK;
}

/* Payload bytes apart from the intervention columns: adjacency, weights,
 * mechanism, noise, norm, interventions, masks, base. */
static uint64_t payload_fixed_bytes(uint64_t n, uint64_t s, uint64_t k, uint64_t h,
                                    unsigned mechanism, unsigned flags, uint64_t edges) {
  uint64_t rb = (n + 7) / 8;
  uint64_t b = n * rb + 4 * edges;
  if (mechanism != TWINCACHE_MECH_LINEAR) b += 4 * n * (h * n + 2 * h); /* the unit blocks */
  if (mechanism == TWINCACHE_MECH_MIXED) b += n;                          /* node mechanisms */
  b += 4 * n;
  if (flags & TWINCACHE_GRAPH_HETERO) b += 4 * edges + 4 * n; /* section 4b */
  if (flags & TWINCACHE_GRAPH_STANDARDIZED) b += 8 * n;
  b += 8 * k + k * rb;
  b += 4 * n * s;
  return b;
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
  return payload_fixed_bytes(n, s, k, h, mechanism, flags, n * (n - 1) / 2) + 4 * k * n * s + v4;
}

size_t twincache_frame_bound(uint32_t n_nodes, uint32_t n_samples, uint32_t n_inter,
                             uint32_t n_hidden) {
  if (n_nodes == 0) n_nodes = 1;
  uint64_t p = payload_max_bytes(n_nodes, n_samples, n_inter, n_hidden, TWINCACHE_MECH_MIXED, /* the largest */
                                 TWINCACHE_GRAPH_STANDARDIZED | TWINCACHE_GRAPH_HETERO, TWINCACHE_FORMAT_VERSION);
  uint64_t lin = payload_max_bytes(n_nodes, n_samples, n_inter, 0, TWINCACHE_MECH_LINEAR,
                                   TWINCACHE_GRAPH_STANDARDIZED | TWINCACHE_GRAPH_HETERO, TWINCACHE_FORMAT_VERSION);
  if (lin > p) p = lin; /* H = 0: linear soft blocks (N floats) outgrow the unit blocks' */
  return TC_FRAME_HEADER_BYTES + ZSTD_compressBound((size_t)p);
}

/* ---- header ---------------------------------------------------------------- */
static void header_write(uint8_t *p, const tc_frame_hdr *h) {
  memcpy(p, TC_FRAME_MAGIC, 4);
  tc_store_u16(p + 4, TWINCACHE_FORMAT_VERSION); /* always the current layout */
  tc_store_u16(p + 6, TC_FRAME_HEADER_BYTES);
  tc_store_u64(p + 8, h->index);
  tc_store_u16(p + 16, (uint16_t)h->n);
  tc_store_u16(p + 18, (uint16_t)h->s);
  tc_store_u16(p + 20, (uint16_t)h->k);
  p[22] = (uint8_t)h->h;
  p[23] = h->mechanism;
  p[24] = h->noise;
  p[25] = h->flags;
  p[26] = h->codec;
  p[27] = h->family;
  tc_store_u32(p + 28, h->decoded_bytes);
  tc_store_u32(p + 32, h->compressed_bytes);
  tc_store_u64(p + 36, h->payload_hash);
  tc_store_u32(p + 44, tc_fnv1a32(p, 44));
}

/* Validates everything the header alone can tell; a failure leaves the
 * message "frame: what is wrong". */
static int header_read(const void *src, size_t size, tc_frame_hdr *h) {
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
                    (version >= 4 ? TWINCACHE_GRAPH_HETERO | TWINCACHE_GRAPH_ISCM : 0u))) ||
      ((h->flags & TWINCACHE_GRAPH_ISCM) && !(h->flags & TWINCACHE_GRAPH_STANDARDIZED)) ||
      (h->codec & ~TC_FRAME_CODEC_SHUFFLE))
    return tc_error_set(TWINCACHE_ECORRUPT, "frame: header fields out of range");
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
  int rc = header_read(src, size, &h);
  if (rc != TWINCACHE_OK) return rc;
  if (index) *index = h.index;
  if (n_nodes) *n_nodes = h.n;
  if (n_samples) *n_samples = h.s;
  if (n_inter) *n_inter = h.k;
  if (n_hidden) *n_hidden = h.h;
  return TWINCACHE_OK;
}

/* Byte planes: plane b holds byte b of every float (n_floats each). */
static void planes_split(uint8_t *dst, const uint8_t *src, size_t n_floats) {
  for (size_t i = 0; i < n_floats; i++)
    for (size_t b = 0; b < 4; b++) dst[b * n_floats + i] = src[4 * i + b];
}
static void planes_join(uint8_t *dst, const uint8_t *src, size_t n_floats) {
  for (size_t i = 0; i < n_floats; i++)
    for (size_t b = 0; b < 4; b++) dst[4 * i + b] = src[b * n_floats + i];
}

static uint32_t popcount_set(const uint64_t *set, uint32_t n) {
  uint32_t c = 0;
  for (uint32_t q = 0; q < (n + 63) / 64; q++) c += tc_popcount64(set[q]);
  return c;
}

/* Byte b of a bitset, in the packed little-endian bit order of the format. */
static uint8_t set_byte(const uint64_t *set, uint32_t b) {
  return (uint8_t)(set[b >> 3] >> (8 * (b & 7)));
}

/* The first nbytes (<= 8) bytes at p as one little-endian word. */
static uint64_t load_bits(const uint8_t *p, uint32_t nbytes) {
  uint64_t v = 0;
  for (uint32_t b = 0; b < nbytes; b++) v |= (uint64_t)p[b] << (8 * b);
  return v;
}

/* 1 when every W1 input weight of a non-parent is +0.0 (all bits zero) in
 * the MLP section mlp (N blocks of H*N + 2H f32, W1 (H, N) first), given
 * the children sets of w; else 0. */
static int mlp_nonparents_zero(const tc_dag *w, const uint8_t *mlp, uint32_t n, uint32_t h_n) {
  size_t stride = 4 * ((size_t)h_n * n + 2 * (size_t)h_n);
  for (uint32_t j = 0; j < n; j++)
    for (uint32_t i = 0; i < n; i++) {
      if (tc_bit_get(w->child[i], j)) continue; /* i is a parent of j */
      const uint8_t *col = mlp + j * stride + 4 * (size_t)i;
      for (uint32_t hh = 0; hh < h_n; hh++)
        if (tc_load_u32(col + 4 * (size_t)hh * n) != 0) return 0;
    }
  return 1;
}

/* 1 when a soft parameter block for target t (P f32, FORMAT.md 3.2
 * section 7a) is +0.0 on every non-parent of t: a linear target (mechanism:
 * the target's own, node_mech[t] in a mixture), entry i; another, W1
 * column i. Else 0. */
static int soft_nonparents_zero(const tc_dag *w, const uint8_t *blk, uint32_t n, uint32_t h_n,
                                unsigned mechanism, uint32_t t) {
  for (uint32_t i = 0; i < n; i++) {
    if (tc_bit_get(w->child[i], t)) continue; /* i is a parent of t */
    if (mechanism == TWINCACHE_MECH_LINEAR) {
      if (tc_load_u32(blk + 4 * (size_t)i) != 0) return 0;
      continue;
    }
    for (uint32_t hh = 0; hh < h_n; hh++)
      if (tc_load_u32(blk + 4 * ((size_t)hh * n + i)) != 0) return 0;
  }
  return 1;
}

/* Values FORMAT.md 3.2 says are +0.0 (all bits zero) whatever they would
 * mean, so that no stored byte goes unchecked. Each returns 1 when the rule
 * holds, else 0; the encoder refuses a graph that breaks one (EINVAL), the
 * decoder a frame (ECORRUPT), each with its own message. */

/* The mechanism of node j: its own in a mixed frame (section 3b), else the frame's. */
static unsigned node_mechanism(unsigned mechanism, const uint8_t *node_mech, uint32_t j) {
  return mechanism == TWINCACHE_MECH_MIXED ? node_mech[j] : mechanism;
}

/* Section 2: an edge into a node whose mechanism is not linear carries
 * weight +0.0 (the node's parameters are its unit block). weights holds one
 * f32 per edge, edges row-major (children sets of w). On failure *bad_i and
 * *bad_j name the edge. */
static int edge_weights_zero_off_linear(const tc_dag *w, const uint8_t *weights, uint32_t n, unsigned mechanism,
                                        const uint8_t *node_mech, uint32_t *bad_i, uint32_t *bad_j) {
  if (mechanism == TWINCACHE_MECH_LINEAR) return 1;
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t j = 0; j < n; j++) {
      if (!tc_bit_get(w->child[i], j)) continue;
      if (node_mechanism(mechanism, node_mech, j) != TWINCACHE_MECH_LINEAR && tc_load_u32(weights) != 0) {
        *bad_i = i;
        *bad_j = j;
        return 0;
      }
      weights += 4;
    }
  return 1;
}

/* Section 3 of a mixed frame: a linear node's unit block is all +0.0 (its
 * weights are in section 2). On failure *bad names the node. */
static int linear_blocks_zero(const uint8_t *mlp, const uint8_t *node_mech, uint32_t n, uint32_t h_n,
                              uint32_t *bad) {
  size_t stride = 4 * ((size_t)h_n * n + 2 * (size_t)h_n);
  for (uint32_t j = 0; j < n; j++) {
    if (node_mech[j] != TWINCACHE_MECH_LINEAR) continue;
    for (size_t b = 0; b < stride; b += 4)
      if (tc_load_u32(mlp + j * stride + b) != 0) {
        *bad = j;
        return 0;
      }
  }
  return 1;
}

/* Section 7a of a mixed frame: a linear target's block holds its weights
 * in its first n floats; the other P - n are +0.0. */
static int soft_linear_tail_zero(const uint8_t *blk, uint32_t n, uint32_t p) {
  for (uint32_t i = n; i < p; i++)
    if (tc_load_u32(blk + 4 * (size_t)i) != 0) return 0;
  return 1;
}

/* Section 6: the value of an intervention of this kind must be +0.0 (a soft
 * world's parameters are in section 7a; its value says nothing). The one
 * place that says which kinds carry no value. */
static int inter_value_unused(unsigned kind) { return kind == TWINCACHE_INTER_SOFT; }

/* Section 5 of an SCM-only frame (S = 0): no base world to take statistics
 * of, so mean +0.0 and std 1.0 for every node (FORMAT.md 3.8). mean and std
 * hold n f32 each. On failure *bad names the node. */
static int scm_only_norm_identity(const uint8_t *mean, const uint8_t *std, uint32_t n, uint32_t *bad) {
  const uint32_t one = 0x3f800000u; /* 1.0f */
  for (uint32_t j = 0; j < n; j++)
    if (tc_load_u32(mean + 4 * (size_t)j) != 0 || tc_load_u32(std + 4 * (size_t)j) != one) {
      *bad = j;
      return 0;
    }
  return 1;
}

/* The targets of world k of g: target[k] and its extra ones (n_targets),
 * with their values, into t and v; returns their count (0 when n_targets
 * says more than TWINCACHE_MAX_TARGETS or none). */
static uint32_t world_targets(const twincache_graph *g, uint32_t k, uint16_t *t, float *v) {
  uint32_t c = g->n_targets ? g->n_targets[k] : 1;
  if (c < 1 || c > TWINCACHE_MAX_TARGETS) return 0;
  t[0] = g->target[k];
  v[0] = g->value[k];
  for (uint32_t i = 1; i < c; i++) {
    t[i] = g->more_target[(size_t)k * (TWINCACHE_MAX_TARGETS - 1) + i - 1];
    v[i] = g->more_value[(size_t)k * (TWINCACHE_MAX_TARGETS - 1) + i - 1];
  }
  return c;
}

/* The changed set of a world: the union of its targets' descendant sets
 * (w->desc; for n <= 64 only word 0 is meaningful), into out. */
static void world_set(const tc_dag *w, uint32_t n, const uint16_t *t, uint32_t c, uint64_t *out) {
  uint32_t words = n <= 64 ? 1 : (n + 63) / 64;
  memset(out, 0, sizeof(uint64_t) * TC_BITSET_WORDS);
  for (uint32_t i = 0; i < c; i++)
    for (uint32_t q = 0; q < words; q++) out[q] |= w->desc[t[i]][q];
}

/* The index of node j among a world's c targets, or -1. */
static int target_index(const uint16_t *t, uint32_t c, uint32_t j) {
  for (uint32_t i = 0; i < c; i++)
    if (t[i] == j) return (int)i;
  return -1;
}

/* ---- encoder --------------------------------------------------------------- */
/* zstd level of the FAST encoding: a negative level, at which zstd stores
 * literals raw (no Huffman stage) and still finds the repeats. Chosen by
 * tests/format/bench_frames (BENCHMARKS.md, "Frame encodings"). */
#define TC_FAST_ZSTD_LEVEL (-1)

twincache_cctx *twincache_cctx_create(int level) {
  twincache_cctx *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  if (level < 1) level = 1;
  if (level > 19) level = 19;
  c->level = level;
  c->z = ZSTD_createCCtx();
  /* no zstd checksum: the header carries the payload's XXH3 (hash.c) */
  if (!c->z || ZSTD_isError(ZSTD_CCtx_setParameter(c->z, ZSTD_c_checksumFlag, 0)) ||
      ZSTD_isError(ZSTD_CCtx_setParameter(c->z, ZSTD_c_contentSizeFlag, 1)) ||
      twincache_cctx_set_encoding(c, TWINCACHE_ENCODING_FAST) != TWINCACHE_OK) {
    twincache_cctx_free(c);
    return NULL;
  }
  return c;
}

int twincache_cctx_set_encoding(twincache_cctx *c, int encoding) {
  if (!c || (encoding != TWINCACHE_ENCODING_FAST && encoding != TWINCACHE_ENCODING_SMALL))
    return tc_error_set(TWINCACHE_EINVAL, "encoding %d: expected FAST (0) or SMALL (1)", encoding);
  int level = encoding == TWINCACHE_ENCODING_FAST ? TC_FAST_ZSTD_LEVEL : c->level;
  size_t z = ZSTD_CCtx_setParameter(c->z, ZSTD_c_compressionLevel, level);
  if (ZSTD_isError(z)) return tc_error_set(TWINCACHE_EZSTD, "zstd level %d: %s", level, ZSTD_getErrorName(z));
  c->encoding = encoding;
  return TWINCACHE_OK;
}

void twincache_cctx_free(twincache_cctx *c) {
  if (!c) return;
  ZSTD_freeCCtx(c->z);
  free(c->buf);
  free(c->tmp);
  free(c);
}

int twincache_cctx_set_shuffle(twincache_cctx *c, int on) {
  if (!c) return TWINCACHE_EINVAL;
  c->shuffle = on != 0;
  return TWINCACHE_OK;
}

static int f32_same(const float *a, const float *b) { return memcmp(a, b, sizeof(float)) == 0; }

/* Checks g and fills c->dag; *edges and cols[k] (stored columns) out. */
static int encode_check(twincache_cctx *c, const twincache_graph *g, uint32_t *edges,
                        uint64_t *cols_total) {
  uint32_t n = g->n_nodes, s_n = g->n_samples, k_n = g->n_inter;
  if (n == 0 || n > TWINCACHE_MAX_NODES || s_n > TWINCACHE_MAX_SAMPLES ||
      k_n > TWINCACHE_MAX_INTER || g->ld < n || g->ld_adj < n || g->noise >= TWINCACHE_NOISE_COUNT ||
      (g->family >= TWINCACHE_FAMILY_COUNT && g->family != TWINCACHE_FAMILY_UNKNOWN) ||
      (g->flags & ~(TWINCACHE_GRAPH_STANDARDIZED | TWINCACHE_GRAPH_HETERO | TWINCACHE_GRAPH_ISCM)) ||
      ((g->flags & TWINCACHE_GRAPH_ISCM) && !(g->flags & TWINCACHE_GRAPH_STANDARDIZED)))
    return TWINCACHE_EINVAL;
  if (g->mechanism == TWINCACHE_MECH_LINEAR) {
    if (g->n_hidden != 0 || !g->weight) return TWINCACHE_EINVAL;
  } else if (g->mechanism < TWINCACHE_MECH_COUNT) { /* MLP, RFF: unit blocks */
    if (g->n_hidden == 0 || g->n_hidden > TWINCACHE_MAX_HIDDEN || !g->mlp) return TWINCACHE_EINVAL;
    if (g->mechanism == TWINCACHE_MECH_MIXED) {
      if (!g->node_mech) return TWINCACHE_EINVAL;
      for (uint32_t j = 0; j < n; j++)
        if (g->node_mech[j] >= TWINCACHE_MECH_MIXED)
          return tc_error_set(TWINCACHE_EINVAL, "node %u: mechanism %u in a mixed graph", j, g->node_mech[j]);
    }
  } else {
    return TWINCACHE_EINVAL;
  }
  if (!g->adj || !g->noise_scale || (s_n > 0 && !g->base)) return TWINCACHE_EINVAL;
  if ((g->flags & TWINCACHE_GRAPH_HETERO) && (!g->hetero_w || !g->hetero_c)) return TWINCACHE_EINVAL;
  if ((g->flags & TWINCACHE_GRAPH_STANDARDIZED) && (!g->norm_mean || !g->norm_std))
    return TWINCACHE_EINVAL;
  if (k_n > 0 && (!g->target || !g->kind || !g->value || (s_n > 0 && !g->inter))) return TWINCACHE_EINVAL;

  tc_dag *w = &c->dag;
  uint32_t e = 0;
  for (uint32_t i = 0; i < n; i++) {
    memset(w->child[i], 0, sizeof w->child[i]);
    for (uint32_t j = 0; j < n; j++)
      if (g->adj[(size_t)i * g->ld_adj + j]) {
        w->child[i][j >> 6] |= (uint64_t)1 << (j & 63);
        e++;
      }
  }
  if (tc_dag_close(w, n) != 0) return tc_error_set(TWINCACHE_EINVAL, "the graph is not a DAG");
  /* W1 columns of non-parents are +0.0: a reader refuses anything else */
  if (g->mechanism != TWINCACHE_MECH_LINEAR &&
      !mlp_nonparents_zero(w, (const uint8_t *)g->mlp, n, g->n_hidden))
    return tc_error_set(TWINCACHE_EINVAL, "unit input weights (W1) on non-parents must be +0.0");

  uint64_t total = 0;
  for (uint32_t k = 0; k < k_n; k++) {
    uint32_t t = g->target[k];
    uint16_t ts[TWINCACHE_MAX_TARGETS];
    float vs[TWINCACHE_MAX_TARGETS];
    uint32_t nt = world_targets(g, k, ts, vs);
    if (nt == 0) return tc_error_set(TWINCACHE_EINVAL, "intervention %u: %u targets, 1..%d allowed", k,
                                     (unsigned)g->n_targets[k], TWINCACHE_MAX_TARGETS);
    for (uint32_t i = 0; i < nt; i++)
      if (ts[i] >= n || target_index(ts, i, ts[i]) >= 0)
        return tc_error_set(TWINCACHE_EINVAL, "intervention %u: target %u out of range or repeated", k,
                            (unsigned)ts[i]);
    if (g->kind[k] >= TWINCACHE_INTER_KIND_COUNT)
      return tc_error_set(TWINCACHE_EINVAL, "intervention %u: target %u or kind %u out of range", k, t,
                          (unsigned)g->kind[k]);
    if (g->kind[k] == TWINCACHE_INTER_SOFT && nt > 1)
      return tc_error_set(TWINCACHE_EINVAL, "intervention %u: a soft intervention has one target, not %u", k, nt);
    uint32_t vbits;
    memcpy(&vbits, &g->value[k], 4);
    if (inter_value_unused(g->kind[k]) && vbits != 0)
      return tc_error_set(TWINCACHE_EINVAL, "intervention %u: a %s world's value must be +0.0, not %g", k,
                          twincache_choice_name(TWINCACHE_CHOICE_INTER_KIND, g->kind[k]), (double)g->value[k]);
    int is_do = g->kind[k] == TWINCACHE_DO;
    uint64_t set[TC_BITSET_WORDS];
    world_set(w, n, ts, nt, set);
    total += popcount_set(set, n) - (is_do ? nt : 0);
    int8_t tix[TWINCACHE_MAX_NODES]; /* index of node j among the do() targets, or -1 */
    memset(tix, -1, n);
    for (uint32_t i = 0; i < nt && is_do; i++) tix[ts[i]] = (int8_t)i;
    if (g->kind[k] == TWINCACHE_INTER_SOFT) {
      uint32_t P = twincache_soft_stride(n, g->n_hidden, g->mechanism);
      if (!g->soft) return tc_error_set(TWINCACHE_EINVAL, "intervention %u is soft but the graph has no soft parameters", k);
      unsigned mech_t = g->mechanism == TWINCACHE_MECH_MIXED ? g->node_mech[t] : g->mechanism;
      if (!soft_nonparents_zero(w, (const uint8_t *)(g->soft + (size_t)k * P), n, g->n_hidden, mech_t, t))
        return tc_error_set(TWINCACHE_EINVAL, "intervention %u: soft parameters on non-parents of target %u "
                            "must be +0.0", k, t);
    }
    /* the twin property: what the structure says is unchanged must be */
    for (uint32_t s = 0; s < s_n; s++) {
      const float *rb = g->base + (size_t)s * g->ld;
      const float *ri = g->inter + ((size_t)k * s_n + s) * g->ld;
      for (uint32_t j = 0; j < n; j++) {
        int ti = tix[j];
        if (!tc_bit_get(set, j)) {
          if (!f32_same(rb + j, ri + j))
            return tc_error_set(TWINCACHE_EINVAL, "intervention %u, sample %u: node %u is no "
                                "descendant of target %u but differs from the base world", k, s, j, t);
        } else if (ti >= 0 && !f32_same(ri + j, &vs[ti])) {
          return tc_error_set(TWINCACHE_EINVAL, "intervention %u, sample %u: the do() target %u "
                              "is not the intervention value", k, s, j);
        }
      }
    }
  }
  *edges = e;
  *cols_total = total;
  return TWINCACHE_OK;
}

static uint8_t *put_f32(uint8_t *q, float v) {
  memcpy(q, &v, 4);
  return q + 4;
}

int twincache_frame_encode(twincache_cctx *c, const twincache_graph *g, void *dst, size_t cap,
                           size_t *written) {
  if (!c || !g || !dst || !written) return tc_error_set(TWINCACHE_EINVAL, "twincache_frame_encode: NULL argument");
  uint32_t edges = 0;
  uint64_t cols_total = 0;
  tc_error_clear();
  int rc = encode_check(c, g, &edges, &cols_total);
  if (rc != TWINCACHE_OK) /* sizes, mechanism or a missing array when encode_check left no message */
    return tc_error_wrap(rc, "frame encode: graph %llu", (unsigned long long)g->index);
  uint32_t n = g->n_nodes, s_n = g->n_samples, k_n = g->n_inter, h_n = g->n_hidden;
  uint32_t rb = (n + 7) / 8;
  uint32_t soft_p = twincache_soft_stride(n, h_n, g->mechanism), n_soft = 0, n_more = 0;
  for (uint32_t k = 0; k < k_n; k++) {
    n_soft += g->kind[k] == TWINCACHE_INTER_SOFT;
    n_more += (g->n_targets ? g->n_targets[k] : 1) - 1; /* checked by encode_check */
  }
  uint64_t size = payload_fixed_bytes(n, s_n, k_n, h_n, g->mechanism, g->flags, edges) +
                  4 * cols_total * s_n + 4ull * n_soft * soft_p + 8ull * n_more;
  if (size > UINT32_MAX) return tc_error_set(TWINCACHE_ETOOBIG, "frame encode: payload over 4 GiB");
  if ((rc = buf_grow(&c->buf, &c->buf_cap, (size_t)size)) != TWINCACHE_OK)
    return tc_error_set(rc, "frame encode: out of memory");

  const tc_dag *w = &c->dag;
  uint8_t *q = c->buf;
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t b = 0; b < rb; b++) *q++ = set_byte(w->child[i], b);
  const uint8_t *sec_weight = q, *sec_mlp = NULL, *sec_norm = NULL, *sec_soft = NULL;
  for (uint32_t i = 0; i < n; i++) /* weights of the edges, row-major */
    for (uint32_t j = 0; j < n; j++)
      if (tc_bit_get(w->child[i], j)) q = put_f32(q, g->weight ? g->weight[(size_t)i * g->ld_adj + j] : 0.0f);
  if (g->mechanism != TWINCACHE_MECH_LINEAR) {
    size_t m = (size_t)n * ((size_t)h_n * n + 2 * h_n) * 4;
    sec_mlp = q;
    memcpy(q, g->mlp, m);
    q += m;
  }
  if (g->mechanism == TWINCACHE_MECH_MIXED) {
    memcpy(q, g->node_mech, n);
    q += n;
  }
  memcpy(q, g->noise_scale, 4 * (size_t)n);
  q += 4 * (size_t)n;
  if (g->flags & TWINCACHE_GRAPH_HETERO) { /* section 4b: v per edge (row-major), c per node */
    for (uint32_t i = 0; i < n; i++)
      for (uint32_t j = 0; j < n; j++)
        if (tc_bit_get(w->child[i], j)) q = put_f32(q, g->hetero_w[(size_t)i * g->ld_adj + j]);
    memcpy(q, g->hetero_c, 4 * (size_t)n);
    q += 4 * (size_t)n;
  }
  if (g->flags & TWINCACHE_GRAPH_STANDARDIZED) {
    sec_norm = q;
    memcpy(q, g->norm_mean, 4 * (size_t)n);
    memcpy(q + 4 * (size_t)n, g->norm_std, 4 * (size_t)n);
    q += 8 * (size_t)n;
  }
  for (uint32_t k = 0; k < k_n; k++) {
    tc_store_u16(q, g->target[k]);
    q[2] = g->kind[k];
    q[3] = (uint8_t)((g->n_targets ? g->n_targets[k] : 1) - 1); /* extra targets, section 6a */
    q = put_f32(q + 4, g->value[k]);
  }
  uint16_t ts[TWINCACHE_MAX_TARGETS];
  float vs[TWINCACHE_MAX_TARGETS];
  for (uint32_t k = 0; k < k_n; k++) { /* section 6a: the extra targets of each world */
    uint32_t nt = world_targets(g, k, ts, vs);
    for (uint32_t i = 1; i < nt; i++) {
      tc_store_u16(q, ts[i]);
      q[2] = 0;
      q[3] = 0;
      q = put_f32(q + 4, vs[i]);
    }
  }
  for (uint32_t k = 0; k < k_n; k++) {
    uint64_t set[TC_BITSET_WORDS];
    uint32_t nt = world_targets(g, k, ts, vs);
    world_set(w, n, ts, nt, set);
    for (uint32_t b = 0; b < rb; b++) *q++ = set_byte(set, b);
  }
  sec_soft = q;
  for (uint32_t k = 0; k < k_n; k++) /* section 7a: the soft worlds' parameter blocks */
    if (g->kind[k] == TWINCACHE_INTER_SOFT) {
      memcpy(q, g->soft + (size_t)k * soft_p, 4 * (size_t)soft_p);
      q += 4 * (size_t)soft_p;
    }
  /* the values that must be zero, checked on the packed sections by the
   * decoder's own rules */
  uint32_t bi = 0, bj = 0;
  if (!edge_weights_zero_off_linear(w, sec_weight, n, g->mechanism, g->node_mech, &bi, &bj))
    return tc_error_set(TWINCACHE_EINVAL, "frame encode: graph %llu: edge %u -> %u has weight %g, but node %u's "
                        "mechanism is not linear (its weights must be +0.0)", (unsigned long long)g->index, bi, bj,
                        (double)g->weight[(size_t)bi * g->ld_adj + bj], bj);
  if (g->mechanism == TWINCACHE_MECH_MIXED && !linear_blocks_zero(sec_mlp, g->node_mech, n, h_n, &bi))
    return tc_error_set(TWINCACHE_EINVAL, "frame encode: graph %llu: node %u is linear in a mixed graph, but its "
                        "unit block is not all +0.0", (unsigned long long)g->index, bi);
  if (s_n == 0 && sec_norm && !scm_only_norm_identity(sec_norm, sec_norm + 4 * (size_t)n, n, &bi))
    return tc_error_set(TWINCACHE_EINVAL, "frame encode: graph %llu: an SCM-only standardised graph stores mean 0 "
                        "and std 1, not node %u's %g and %g", (unsigned long long)g->index, bi,
                        (double)g->norm_mean[bi], (double)g->norm_std[bi]);
  for (uint32_t k = 0; k < k_n && g->mechanism == TWINCACHE_MECH_MIXED; k++)
    if (g->kind[k] == TWINCACHE_INTER_SOFT) {
      if (g->node_mech[g->target[k]] == TWINCACHE_MECH_LINEAR && !soft_linear_tail_zero(sec_soft, n, soft_p))
        return tc_error_set(TWINCACHE_EINVAL, "frame encode: graph %llu: intervention %u: soft parameters of a "
                            "linear target past its %u weights must be +0.0", (unsigned long long)g->index, k, n);
      sec_soft += 4 * (size_t)soft_p;
    }
  uint8_t *samples = q;
  for (uint32_t j = 0; j < n; j++) /* base (N, S) column-major */
    for (uint32_t s = 0; s < s_n; s++) q = put_f32(q, g->base[(size_t)s * g->ld + j]);
  for (uint32_t k = 0; k < k_n; k++) {
    uint64_t set[TC_BITSET_WORDS];
    uint32_t nt = world_targets(g, k, ts, vs);
    world_set(w, n, ts, nt, set);
    for (uint32_t j = 0; j < n; j++) {
      if (!tc_bit_get(set, j) || (g->kind[k] == TWINCACHE_DO && target_index(ts, nt, j) >= 0)) continue;
      for (uint32_t s = 0; s < s_n; s++)
        q = put_f32(q, g->inter[((size_t)k * s_n + s) * g->ld + j]);
    }
  }
  size_t sample_floats = (size_t)(q - samples) / 4;
  uint8_t codec = 0;
  if (c->shuffle) {
    if ((rc = buf_grow(&c->tmp, &c->tmp_cap, sample_floats * 4)) != TWINCACHE_OK)
      return tc_error_set(rc, "frame encode: out of memory");
    planes_split(c->tmp, samples, sample_floats);
    memcpy(samples, c->tmp, sample_floats * 4);
    codec |= TC_FRAME_CODEC_SHUFFLE;
  }

  if (cap < TC_FRAME_HEADER_BYTES)
    return tc_error_set(TWINCACHE_ETOOBIG, "frame encode: %zu bytes of room, less than a header", cap);
  size_t z = ZSTD_compress2(c->z, (uint8_t *)dst + TC_FRAME_HEADER_BYTES,
                            cap - TC_FRAME_HEADER_BYTES, c->buf, (size_t)size);
  if (ZSTD_isError(z))
    return tc_error_set(ZSTD_getErrorCode(z) == ZSTD_error_dstSize_tooSmall ? TWINCACHE_ETOOBIG : TWINCACHE_EZSTD,
                        "frame encode: zstd: %s", ZSTD_getErrorName(z));
  if (z > UINT32_MAX) return tc_error_set(TWINCACHE_ETOOBIG, "frame encode: compressed frame over 4 GiB");
  tc_frame_hdr h = {.index = g->index, .n = n, .s = s_n, .k = k_n, .h = h_n,
                    .mechanism = g->mechanism, .noise = g->noise, .flags = g->flags, .family = g->family,
                    .codec = codec, .decoded_bytes = (uint32_t)size, .compressed_bytes = (uint32_t)z,
                    .payload_hash = tc_payload_hash(c->buf, (size_t)size)};
  header_write(dst, &h);
  *written = TC_FRAME_HEADER_BYTES + z;
  return TWINCACHE_OK;
}

/* ---- decoder --------------------------------------------------------------- */
static float get_f32(const uint8_t *p) {
  float v;
  memcpy(&v, p, 4);
  return v;
}

/* One f32 per edge, edges in row-major order (payload sections 2 and 4b),
 * into the (n, ld) matrix dst: 0 where there is no edge. */
static void edge_floats_scatter(float *dst, uint32_t ld, const uint8_t *p, const tc_dag *w, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t j = 0; j < ld; j++) {
      float v = 0.0f;
      if (j < n && tc_bit_get(w->child[i], j)) {
        v = get_f32(p);
        p += 4;
      }
      dst[(size_t)i * ld + j] = v;
    }
}

twincache_dctx *twincache_dctx_create(void) {
  twincache_dctx *d = calloc(1, sizeof *d);
  if (!d) return NULL;
  d->z = ZSTD_createDCtx();
  if (!d->z) {
    free(d);
    return NULL;
  }
  return d;
}

void twincache_dctx_free(twincache_dctx *d) {
  if (!d) return;
  ZSTD_freeDCtx(d->z);
  free(d->buf);
  free(d->tmp);
  free(d);
}

/* The payload's sections, located and validated. */
typedef struct tc_sections {
  const uint8_t *adj, *weight, *mlp, *node_mech, *noise, *het_w, *het_c, *norm, *rec, *more, *masks, *soft, *base,
      *cols;
  uint32_t edges;
  uint64_t cols_total; /* stored columns, all interventions */
} tc_sections;

/* Walks the payload with bounds checks; fills d->dag, d->ncols and *x.
 * Every failure is TWINCACHE_ECORRUPT with a message naming its section
 * (FORMAT.md 3.2) and what is wrong. */
static int payload_parse(twincache_dctx *d, const tc_frame_hdr *h, const uint8_t *p, size_t size,
                         tc_sections *x) {
  const uint8_t *q = p, *end = p + size;
  uint32_t n = h->n, rb = (n + 7) / 8;
#define BAD(...) return tc_error_set(TWINCACHE_ECORRUPT, __VA_ARGS__)
#define TAKE(ptr, nbytes, section)                                                  \
  do {                                                                              \
    uint64_t nb_ = (nbytes);                                                        \
    if ((uint64_t)(end - q) < nb_)                                                  \
      BAD("section %s: %llu bytes, %zu left of the payload's %zu", section,         \
          (unsigned long long)nb_, (size_t)(end - q), size);                        \
    (ptr) = q;                                                                      \
    q += nb_;                                                                       \
  } while (0)
  const uint8_t *adj;
  TAKE(adj, (uint64_t)n * rb, "1 (adjacency)");
  x->adj = adj;
  tc_dag *w = &d->dag;
  uint8_t last_mask = (uint8_t)((n & 7) ? (1u << (n & 7)) - 1 : 0xffu);
  x->edges = 0;
  for (uint32_t i = 0; i < n; i++) {
    const uint8_t *row = adj + (size_t)i * rb;
    if (row[rb - 1] & ~last_mask) BAD("section 1 (adjacency): row %u has bits past node %u", i, n - 1);
    if (n <= 64) { /* one word per set: tc_dag_close reads no other */
      w->child[i][0] = load_bits(row, rb);
    } else {
      memset(w->child[i], 0, sizeof w->child[i]);
      for (uint32_t b = 0; b < rb; b++) w->child[i][b >> 3] |= (uint64_t)row[b] << (8 * (b & 7));
    }
    x->edges += popcount_set(w->child[i], n);
  }
  if (tc_dag_close(w, n) != 0) BAD("section 1 (adjacency): a directed cycle or a self-loop");
  TAKE(x->weight, 4ull * x->edges, "2 (edge weights)");
  x->mlp = NULL;
  if (h->mechanism != TWINCACHE_MECH_LINEAR) {
    TAKE(x->mlp, 4ull * n * ((uint64_t)h->h * n + 2ull * h->h), "3 (unit blocks)");
    if (!mlp_nonparents_zero(w, x->mlp, n, h->h))
      BAD("section 3 (unit blocks): an input weight (W1) on a non-parent is not +0.0");
  }
  x->node_mech = NULL;
  if (h->mechanism == TWINCACHE_MECH_MIXED) {
    TAKE(x->node_mech, n, "3b (node mechanisms)");
    for (uint32_t j = 0; j < n; j++)
      if (x->node_mech[j] >= TWINCACHE_MECH_MIXED)
        BAD("section 3b (node mechanisms): node %u has mechanism %u, not 0..%d", j, x->node_mech[j],
            TWINCACHE_MECH_MIXED - 1);
  }
  uint32_t bi = 0, bj = 0;
  if (!edge_weights_zero_off_linear(w, x->weight, n, h->mechanism, x->node_mech, &bi, &bj))
    BAD("section 2 (edge weights): edge %u -> %u has a weight, but node %u's mechanism is not linear "
        "(must be +0.0)", bi, bj, bj);
  if (h->mechanism == TWINCACHE_MECH_MIXED && !linear_blocks_zero(x->mlp, x->node_mech, n, h->h, &bi))
    BAD("section 3 (unit blocks): node %u is linear, but its block is not all +0.0", bi);
  TAKE(x->noise, 4ull * n, "4 (noise scale)");
  x->het_w = x->het_c = NULL;
  if (h->flags & TWINCACHE_GRAPH_HETERO) {
    TAKE(x->het_w, 4ull * x->edges, "4b (heteroscedastic noise)");
    TAKE(x->het_c, 4ull * n, "4b (heteroscedastic noise)");
  }
  x->norm = NULL;
  if (h->flags & TWINCACHE_GRAPH_STANDARDIZED) {
    TAKE(x->norm, 8ull * n, "5 (normalisation)");
    if (h->s == 0 && !scm_only_norm_identity(x->norm, x->norm + 4 * (size_t)n, n, &bi))
      BAD("section 5 (normalisation): an SCM-only frame stores mean 0 and std 1, node %u does not", bi);
  }
  TAKE(x->rec, 8ull * h->k, "6 (interventions)");
  /* version 4: byte 3 counts a world's extra targets (section 6a), kinds 2-3 exist */
  uint64_t n_more = 0;
  for (uint32_t k = 0; k < h->k; k++) {
    const uint8_t *r = x->rec + 8 * (size_t)k;
    if (tc_load_u16(r) >= n) BAD("section 6 (interventions): world %u targets node %u of %u", k, tc_load_u16(r), n);
    if (r[2] >= (h->version >= 4 ? TWINCACHE_INTER_KIND_COUNT : TWINCACHE_SHIFT + 1))
      BAD("section 6 (interventions): world %u has kind %u, unknown in version %u", k, r[2], h->version);
    if (r[3] > (h->version >= 4 ? TWINCACHE_MAX_TARGETS - 1 : 0) || (r[2] == TWINCACHE_INTER_SOFT && r[3] != 0))
      BAD("section 6 (interventions): world %u of kind %u has %u extra targets", k, r[2], r[3]);
    if (inter_value_unused(r[2]) && tc_load_u32(r + 4) != 0)
      BAD("section 6 (interventions): world %u is of kind %u, whose value must be +0.0", k, r[2]);
    n_more += r[3];
  }
  TAKE(x->more, 8ull * n_more, "6a (extra targets)");
  const uint8_t *masks;
  TAKE(masks, (uint64_t)h->k * rb, "7 (changed masks)");
  x->masks = masks;
  uint64_t cols_total = 0;
  const uint8_t *more = x->more;
  for (uint32_t k = 0; k < h->k; k++) {
    const uint8_t *r = x->rec + 8 * (size_t)k;
    uint16_t ts[TWINCACHE_MAX_TARGETS];
    uint32_t c = 1u + r[3];
    ts[0] = tc_load_u16(r);
    for (uint32_t i = 1; i < c; i++, more += 8) { /* in range, distinct, reserved bytes 0 */
      ts[i] = tc_load_u16(more);
      if (ts[i] >= n || more[2] != 0 || more[3] != 0 || target_index(ts, i, ts[i]) >= 0)
        BAD("section 6a (extra targets): world %u's target %u is out of range, repeated, or has reserved "
            "bytes set", k, ts[i]);
    }
    uint64_t uni[TC_BITSET_WORDS];
    const uint64_t *set = w->desc[ts[0]];
    if (c > 1) { /* a multi-target world: the union of the targets' sets */
      world_set(w, n, ts, c, uni);
      set = uni;
    }
    if (n <= 64) {
      if (load_bits(masks + (size_t)k * rb, rb) != set[0])
        BAD("section 7 (changed masks): world %u's mask is not its targets and their descendants", k);
    } else {
      for (uint32_t b = 0; b < rb; b++)
        if (masks[(size_t)k * rb + b] != set_byte(set, b))
          BAD("section 7 (changed masks): world %u's mask is not its targets and their descendants", k);
    }
    d->ncols[k] = popcount_set(set, n) - (r[2] == TWINCACHE_DO ? c : 0u);
    cols_total += d->ncols[k];
  }
  /* section 7a (version 4): the soft worlds' parameter blocks, in world order */
  uint32_t soft_p = twincache_soft_stride(n, h->h, h->mechanism), n_soft = 0;
  for (uint32_t k = 0; k < h->k; k++) n_soft += x->rec[8 * (size_t)k + 2] == TWINCACHE_INTER_SOFT;
  x->soft = NULL;
  if (n_soft) {
    TAKE(x->soft, 4ull * n_soft * soft_p, "7a (soft mechanisms)");
    const uint8_t *blk = x->soft;
    for (uint32_t k = 0; k < h->k; k++)
      if (x->rec[8 * (size_t)k + 2] == TWINCACHE_INTER_SOFT) {
        uint32_t t = tc_load_u16(x->rec + 8 * (size_t)k);
        unsigned mech_t = h->mechanism == TWINCACHE_MECH_MIXED ? x->node_mech[t] : h->mechanism;
        if (!soft_nonparents_zero(w, blk, n, h->h, mech_t, t))
          BAD("section 7a (soft mechanisms): world %u sets parameters of non-parents of node %u", k, t);
        if (h->mechanism == TWINCACHE_MECH_MIXED && mech_t == TWINCACHE_MECH_LINEAR &&
            !soft_linear_tail_zero(blk, n, soft_p))
          BAD("section 7a (soft mechanisms): world %u: a linear target's block past its %u weights is not "
              "all +0.0", k, n);
        blk += 4 * (size_t)soft_p;
      }
  }
  TAKE(x->base, 4ull * n * h->s, "8 (base samples)");
  TAKE(x->cols, 4ull * cols_total * h->s, "9 (twin columns)");
  x->cols_total = cols_total;
  if (q != end) BAD("%zu bytes after section 9 (the payload is %zu)", (size_t)(end - q), size);
#undef TAKE
#undef BAD
  return TWINCACHE_OK;
}

/* Column j of a world block (S, ld): S floats from a stored column (which
 * need not be 4-byte aligned in the payload). Unrolled: this is the inner
 * loop of every decode. */
static void col_put(float *restrict dst, size_t ld, const uint8_t *restrict col, uint32_t s_n) {
  uint32_t s = 0;
  for (; s + 4 <= s_n; s += 4, col += 16, dst += 4 * ld) {
    float v0 = get_f32(col), v1 = get_f32(col + 4), v2 = get_f32(col + 8), v3 = get_f32(col + 12);
    dst[0] = v0;
    dst[ld] = v1;
    dst[2 * ld] = v2;
    dst[3 * ld] = v3;
  }
  for (; s < s_n; s++, col += 4, dst += ld) dst[0] = get_f32(col);
}

/* Column j of a world block (S, ld) set to v. */
static void col_fill(float *dst, size_t ld, float v, uint32_t s_n) {
  uint32_t s = 0;
  for (; s + 4 <= s_n; s += 4, dst += 4 * ld) {
    dst[0] = v;
    dst[ld] = v;
    dst[2 * ld] = v;
    dst[3 * ld] = v;
  }
  for (; s < s_n; s++, dst += ld) dst[0] = v;
}

/* Rows of one world block (S, ld) from the column-major base (N, S). */
static void base_transpose(float *dst, uint32_t ld, const uint8_t *cols, uint32_t n, uint32_t s_n) {
  for (uint32_t j = n; j < ld; j++) col_fill(dst + j, ld, 0.0f, s_n); /* padding columns */
  for (uint32_t j = 0; j < n; j++) col_put(dst + j, ld, cols + 4 * (size_t)j * s_n, s_n);
}

static void graph_fill(twincache_dctx *d, const tc_frame_hdr *h, const tc_sections *x,
                       twincache_graph *g) {
  uint32_t n = h->n, s_n = h->s, k_n = h->k, ld = g->ld;
  const tc_dag *w = &d->dag;
  g->index = h->index;
  g->n_nodes = n;
  g->n_samples = s_n;
  g->n_inter = k_n;
  g->n_hidden = h->h;
  g->mechanism = h->mechanism;
  g->noise = h->noise;
  g->family = h->family;
  g->flags = h->flags;
  if (n <= 64) { /* one word per set; bits past node N-1 are zero: walk set bits only */
    const uint8_t *p = x->weight;
    for (uint32_t i = 0; i < n; i++) {
      uint64_t m = w->child[i][0];
      uint8_t *arow = g->adj ? g->adj + (size_t)i * g->ld_adj : NULL;
      float *wrow = g->weight ? g->weight + (size_t)i * g->ld_adj : NULL;
      if (arow) memset(arow, 0, g->ld_adj);
      if (wrow) memset(wrow, 0, sizeof(float) * g->ld_adj);
      for (; m; m &= m - 1) {
        uint32_t j = (uint32_t)__builtin_ctzll(m);
        if (arow) arow[j] = 1;
        if (wrow) wrow[j] = get_f32(p);
        p += 4;
      }
    }
  } else {
    if (g->adj)
      for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < g->ld_adj; j++)
          g->adj[(size_t)i * g->ld_adj + j] = (uint8_t)(j < n && tc_bit_get(w->child[i], j));
    if (g->weight) edge_floats_scatter(g->weight, g->ld_adj, x->weight, w, n);
  }
  if (g->mlp && x->mlp) memcpy(g->mlp, x->mlp, 4 * (size_t)n * ((size_t)h->h * n + 2 * (size_t)h->h));
  if (g->node_mech && x->node_mech) memcpy(g->node_mech, x->node_mech, n);
  if (x->het_w && g->hetero_w && g->hetero_c) { /* section 4b: edges row-major, as section 2 */
    edge_floats_scatter(g->hetero_w, g->ld_adj, x->het_w, w, n);
    memcpy(g->hetero_c, x->het_c, 4 * (size_t)n);
  }
  if (g->noise_scale) memcpy(g->noise_scale, x->noise, 4 * (size_t)n);
  if (x->norm) {
    if (g->norm_mean) memcpy(g->norm_mean, x->norm, 4 * (size_t)n);
    if (g->norm_std) memcpy(g->norm_std, x->norm + 4 * (size_t)n, 4 * (size_t)n);
  }
  const uint8_t *soft = x->soft;
  size_t soft_p = twincache_soft_stride(n, h->h, h->mechanism);
  const uint8_t *more = x->more;
  for (uint32_t k = 0; k < k_n; k++) {
    const uint8_t *r = x->rec + 8 * (size_t)k;
    if (g->target) g->target[k] = tc_load_u16(r);
    if (g->kind) g->kind[k] = r[2];
    if (g->value) g->value[k] = get_f32(r + 4);
    if (g->n_targets) g->n_targets[k] = (uint8_t)(1u + r[3]);
    for (uint32_t i = 0; i < r[3]; i++, more += 8)
      if (g->n_targets) {
        g->more_target[(size_t)k * (TWINCACHE_MAX_TARGETS - 1) + i] = tc_load_u16(more);
        g->more_value[(size_t)k * (TWINCACHE_MAX_TARGETS - 1) + i] = get_f32(more + 4);
      }
    if (r[2] == TWINCACHE_INTER_SOFT) {
      if (g->soft) memcpy(g->soft + k * soft_p, soft, 4 * soft_p);
      soft += 4 * soft_p;
    }
  }
  size_t block = (size_t)s_n * ld; /* floats of one world (S, ld) */
  if (g->base) base_transpose(g->base, ld, x->base, n, s_n);
  if (!g->inter) return;
  const uint8_t *col = x->cols;
  more = x->more;
  for (uint32_t k = 0; k < k_n; k++) {
    const uint8_t *r = x->rec + 8 * (size_t)k;
    uint32_t t = tc_load_u16(r), c = 1u + r[3];
    int is_do = r[2] == TWINCACHE_DO;
    uint16_t ts[TWINCACHE_MAX_TARGETS];
    float vs[TWINCACHE_MAX_TARGETS];
    ts[0] = (uint16_t)t;
    vs[0] = get_f32(r + 4);
    for (uint32_t i = 1; i < c; i++, more += 8) {
      ts[i] = tc_load_u16(more);
      vs[i] = get_f32(more + 4);
    }
    const uint64_t *set = w->desc[t];
    uint64_t uni[TC_BITSET_WORDS];
    if (c > 1) { /* a multi-target world: the union of the targets' sets */
      world_set(w, n, ts, c, uni);
      set = uni;
    }
    float *blk = g->inter + k * block;
    /* a twin starts as a copy of base, then its changed columns are set */
    if (g->base)
      memcpy(blk, g->base, block * sizeof(float));
    else
      base_transpose(blk, ld, x->base, n, s_n);
    for (uint32_t q = 0; q < (n + 63) / 64; q++) /* set bits of the mask, ascending */
      for (uint64_t m = set[q]; m; m &= m - 1) {
        uint32_t j = q * 64 + (uint32_t)__builtin_ctzll(m);
        int ti = !is_do ? -1 : c == 1 ? (j == t ? 0 : -1) : target_index(ts, c, j);
        if (ti >= 0) {
          col_fill(blk + j, ld, vs[ti], s_n);
        } else {
          col_put(blk + j, ld, col, s_n);
          col += 4 * (size_t)s_n;
        }
      }
  }
}

/* The zstd frame after the header must be exactly one frame of Z bytes
 * (nothing appended, not even a skippable frame), with no dictionary, and
 * carry zstd's XXH64 content checksum exactly when the frame version says
 * so (versions 1-2: on; version 3: off, the header's XXH3 instead) — so no
 * payload is ever accepted unchecked. Frame_Header_Descriptor (RFC 8878,
 * 3.1.1.1.1) is the byte after the 4-byte magic: bit 2 the checksum flag,
 * bits 0-1 the dictionary ID size. The caller checked the content size. */
static int zstd_frame_check(const uint8_t *z, const tc_frame_hdr *h) {
  if (h->compressed_bytes < 5)
    return tc_error_set(TWINCACHE_ECORRUPT, "frame: %u compressed bytes, too few for a zstd frame",
                        h->compressed_bytes);
  uint8_t fhd = z[4];
  unsigned checksum = (fhd >> 2) & 1u, want = h->version <= 2 ? 1u : 0u;
  if (checksum != want)
    return tc_error_set(TWINCACHE_ECORRUPT, "frame: a version %u frame %s zstd's content checksum",
                        (unsigned)h->version, want ? "without" : "with");
  if ((fhd & 3u) != 0) return tc_error_set(TWINCACHE_ECORRUPT, "frame: a zstd frame with a dictionary");
  if (ZSTD_findFrameCompressedSize(z, h->compressed_bytes) != h->compressed_bytes)
    return tc_error_set(TWINCACHE_ECORRUPT, "frame: bytes after its zstd frame, or a damaged one");
  return TWINCACHE_OK;
}

/* Decompresses and parses the payload of a frame whose header is *h: fills
 * d->dag, d->ncols and *x, whose sample sections point into d->buf, or
 * into d->tmp when the samples are stored as byte planes. */
static int payload_load(twincache_dctx *d, const void *src, size_t size, const tc_frame_hdr *h,
                        tc_sections *x) {
  int rc;
  /* the frame is exactly HB + Z bytes: nothing unchecked may follow it in
   * its slot (header_read checked that HB + Z fits) */
  if (size != (size_t)h->header_bytes + h->compressed_bytes)
    return tc_error_set(TWINCACHE_ECORRUPT, "frame: %zu bytes after its end (the frame is %u + %u bytes, its "
                        "slot %zu)", size - h->header_bytes - h->compressed_bytes, h->header_bytes,
                        h->compressed_bytes, size);
  const uint8_t *z = (const uint8_t *)src + h->header_bytes;
  unsigned long long content = ZSTD_getFrameContentSize(z, h->compressed_bytes);
  if (content != h->decoded_bytes) /* incl. ERROR/UNKNOWN */
    return tc_error_set(TWINCACHE_ECORRUPT, "frame: the zstd frame's content size is not the "
                        "header's %u bytes", h->decoded_bytes);
  if ((rc = zstd_frame_check(z, h)) != TWINCACHE_OK) return rc;
  if ((rc = buf_grow(&d->buf, &d->buf_cap, h->decoded_bytes)) != TWINCACHE_OK)
    return tc_error_set(rc, "frame: out of memory (%u bytes)", h->decoded_bytes);
  size_t got = ZSTD_decompressDCtx(d->z, d->buf, h->decoded_bytes, z, h->compressed_bytes);
  if (ZSTD_isError(got)) {
    ZSTD_ErrorCode e = ZSTD_getErrorCode(got);
    rc = e == ZSTD_error_checksum_wrong ? TWINCACHE_ECHECKSUM
         : e == ZSTD_error_memory_allocation ? TWINCACHE_ENOMEM : TWINCACHE_ECORRUPT;
    return tc_error_set(rc, "frame: zstd: %s", ZSTD_getErrorName(got));
  }
  if (got != h->decoded_bytes)
    return tc_error_set(TWINCACHE_ECORRUPT, "frame: %zu bytes decoded, the header says %u", got,
                        h->decoded_bytes);
  /* versions 1-2: zstd checked its XXH64 above; version 3: ours, before
   * any byte of the payload is interpreted */
  if (h->version >= 3 && tc_payload_hash(d->buf, got) != h->payload_hash)
    return tc_error_set(TWINCACHE_ECHECKSUM, "frame: payload checksum mismatch: the record is damaged");
  if ((rc = payload_parse(d, h, d->buf, got, x)) != TWINCACHE_OK)
    return tc_error_wrap(rc, "frame: payload");
  if (h->codec & TC_FRAME_CODEC_SHUFFLE) {
    size_t floats = (size_t)(d->buf + got - x->base) / 4;
    if ((rc = buf_grow(&d->tmp, &d->tmp_cap, floats * 4)) != TWINCACHE_OK)
      return tc_error_set(rc, "frame: out of memory");
    planes_join(d->tmp, x->base, floats);
    x->cols = d->tmp + (x->cols - x->base);
    x->base = d->tmp;
  }
  return TWINCACHE_OK;
}

int twincache_frame_decode(twincache_dctx *d, const void *src, size_t size, twincache_graph *g) {
  if (!d || !src || !g) return tc_error_set(TWINCACHE_EINVAL, "twincache_frame_decode: NULL argument");
  tc_frame_hdr h;
  tc_sections x;
  int rc = header_read(src, size, &h);
  if (rc != TWINCACHE_OK) return rc;
  if (h.n > g->cap_nodes || h.s > g->cap_samples || h.k > g->cap_inter || h.h > g->cap_hidden ||
      g->ld < h.n || g->ld_adj < h.n)
    return tc_error_set(TWINCACHE_ETOOBIG, "frame: %u nodes, %u samples, %u interventions, %u "
                        "hidden exceed the graph's capacity (%u, %u, %u, %u)", h.n, h.s, h.k, h.h,
                        g->cap_nodes, g->cap_samples, g->cap_inter, g->cap_hidden);
  if ((rc = payload_load(d, src, size, &h, &x)) != TWINCACHE_OK) return rc;
  graph_fill(d, &h, &x, g);
  return TWINCACHE_OK;
}

int twincache_frame_decode_view(twincache_dctx *d, const void *src, size_t size,
                                twincache_frame_view *v) {
  if (!d || !src || !v) return tc_error_set(TWINCACHE_EINVAL, "twincache_frame_decode_view: NULL argument");
  tc_frame_hdr h;
  tc_sections x;
  int rc = header_read(src, size, &h);
  if (rc != TWINCACHE_OK) return rc;
  if ((rc = payload_load(d, src, size, &h, &x)) != TWINCACHE_OK) return rc;
  uint32_t n = h.n;
  const uint8_t *more = x.more;
  for (uint32_t k = 0; k < h.k; k++) { /* payload_parse checked every record */
    const uint8_t *r = x.rec + 8 * (size_t)k;
    d->target[k] = tc_load_u16(r);
    d->kind[k] = r[2];
    d->value[k] = get_f32(r + 4);
    d->n_targets[k] = (uint8_t)(1u + r[3]);
    for (uint32_t i = 0; i < r[3]; i++, more += 8) {
      d->more_target[(size_t)k * (TWINCACHE_MAX_TARGETS - 1) + i] = tc_load_u16(more);
      d->more_value[(size_t)k * (TWINCACHE_MAX_TARGETS - 1) + i] = get_f32(more + 4);
    }
  }
  v->index = h.index;
  v->n_nodes = n;
  v->n_samples = h.s;
  v->n_inter = h.k;
  v->n_hidden = h.h;
  v->mechanism = h.mechanism;
  v->noise = h.noise;
  v->family = h.family;
  v->flags = h.flags;
  v->set_bytes = (n + 7) / 8;
  v->n_edges = x.edges;
  v->n_cols = x.cols_total;
  v->adj = x.adj;
  v->weight = x.weight;
  v->mlp = x.mlp;
  v->node_mech = x.node_mech;
  v->hetero_w = x.het_w;
  v->hetero_c = x.het_c;
  v->noise_scale = x.noise;
  v->norm_mean = x.norm;
  v->norm_std = x.norm ? x.norm + 4 * (size_t)n : NULL;
  v->target = d->target;
  v->kind = d->kind;
  v->value = d->value;
  v->n_cols_of = d->ncols;
  v->desc = x.masks;
  v->n_targets = d->n_targets;
  v->more_target = d->more_target;
  v->more_value = d->more_value;
  v->soft = x.soft;
  v->base = x.base;
  v->cols = x.cols;
  return TWINCACHE_OK;
}

void twincache_frame_view_base_rows(const twincache_frame_view *v, float *dst, uint32_t ld) {
  base_transpose(dst, ld, v->base, v->n_nodes, v->n_samples);
}
