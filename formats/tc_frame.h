/* tc_frame.h — what the frame encoder (frame_encode.c), the decoder
 * (frame_decode.c) and the header code (frame.c) share: the decoded header,
 * the payload's sections described once (FORMAT.md 3.2: order, size,
 * presence, name), and the rules both sides apply to the same bytes (the
 * bitset helpers and the values that must be zero). Internal to formats/. */
#ifndef TC_FRAME_H
#define TC_FRAME_H

#include <stdlib.h>
#include <string.h>

#include "tc_common.h"
#include "tc_error.h"
#include "tc_format_internal.h"
#include "twincache_format.h"

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


/* Reads and validates a frame header (everything the header alone can
 * tell); a failure leaves the message "frame: what is wrong". frame.c. */
int tc_frame_header_read(const void *src, size_t size, tc_frame_hdr *h);

/* ---- the payload's sections (FORMAT.md 3.2), in payload order ----------- */
enum tc_frame_section {
  TC_SEC_ADJ,       /* 1: N*rb */
  TC_SEC_WEIGHT,    /* 2: 4*E */
  TC_SEC_UNITS,     /* 3: 4*N*(H*N + 2H), every mechanism but linear */
  TC_SEC_NODE_MECH, /* 3b: N, mixed only */
  TC_SEC_NOISE,     /* 4: 4*N */
  TC_SEC_HETERO_W,  /* 4b: 4*E, HETERO only */
  TC_SEC_HETERO_C,  /* 4b: 4*N, HETERO only */
  TC_SEC_NORM,      /* 5: 8*N, STANDARDIZED only */
  TC_SEC_INTER,     /* 6: 8*K */
  TC_SEC_MORE,      /* 6a: 8 * sum a_k */
  TC_SEC_MASKS,     /* 7: K*rb */
  TC_SEC_SOFT,      /* 7a: 4*P*K_s */
  TC_SEC_ROWS,      /* 7b: 4*(K+1), ROWS only */
  TC_SEC_BASE,      /* 8: 4*N*S (ROWS: 4*N*r_0) */
  TC_SEC_COLS,      /* 9: 4*S * sum c_k (ROWS: 4 * sum c_k*r_k) */
  TC_SEC_COUNT
};
/* What the sizes depend on: the header's fields and the counts read from
 * earlier sections (0 until known). */
typedef struct tc_frame_counts {
  uint64_t n, s, k, h;       /* N, S, K, H */
  unsigned mechanism, flags; /* header bytes 23 and 25 */
  uint64_t edges;            /* E: set bits of section 1 */
  uint64_t n_more;           /* sum of a_k: extra targets (section 6) */
  uint64_t n_soft;           /* K_s: soft worlds (section 6) */
  uint64_t cols;             /* sum of c_k: stored twin columns (sections 6-7) */
  /* ROWS frames (section 7b): r_0, and sum of c_k * r_{k+1}; unused without */
  uint64_t base_rows, col_rows;
} tc_frame_counts;
/* "7a (soft mechanisms)": a section's number and name, for messages. Each
 * spelled once, as a literal so a fixed message concatenates it
 * ("section " TC_SEC_NAME_ADJ ": ...") and the table below indexes it. */
#define TC_SEC_NAME_ADJ "1 (adjacency)"
#define TC_SEC_NAME_WEIGHT "2 (edge weights)"
#define TC_SEC_NAME_UNITS "3 (unit blocks)"
#define TC_SEC_NAME_NODE_MECH "3b (node mechanisms)"
#define TC_SEC_NAME_NOISE "4 (noise scale)"
#define TC_SEC_NAME_HETERO_W "4b (heteroscedastic noise)"
#define TC_SEC_NAME_HETERO_C "4b (heteroscedastic noise)"
#define TC_SEC_NAME_NORM "5 (normalisation)"
#define TC_SEC_NAME_INTER "6 (interventions)"
#define TC_SEC_NAME_MORE "6a (extra targets)"
#define TC_SEC_NAME_MASKS "7 (changed masks)"
#define TC_SEC_NAME_SOFT "7a (soft mechanisms)"
#define TC_SEC_NAME_ROWS "7b (rows per world)"
#define TC_SEC_NAME_BASE "8 (base samples)"
#define TC_SEC_NAME_COLS "9 (twin columns)"
extern const char *const tc_frame_section_names[TC_SEC_COUNT];
/* Bytes of section `sec` for the counts c; 0 when the section is absent.
 * Inline: with a constant sec (the decoder's walk) it folds to its formula. */
static inline uint64_t tc_frame_section_bytes(int sec, const tc_frame_counts *c) {
  uint64_t n = c->n, rb = (n + 7) / 8;
  int blocks = c->mechanism != TWINCACHE_MECH_LINEAR, hetero = (c->flags & TWINCACHE_GRAPH_HETERO) != 0;
  int rows = (c->flags & TWINCACHE_GRAPH_ROWS) != 0;
  switch (sec) {
  case TC_SEC_ADJ: return n * rb;
  case TC_SEC_WEIGHT: return 4 * c->edges;
  case TC_SEC_UNITS: return blocks ? 4 * n * (c->h * n + 2 * c->h) : 0;
  case TC_SEC_NODE_MECH: return c->mechanism == TWINCACHE_MECH_MIXED ? n : 0;
  case TC_SEC_NOISE: return 4 * n;
  case TC_SEC_HETERO_W: return hetero ? 4 * c->edges : 0;
  case TC_SEC_HETERO_C: return hetero ? 4 * n : 0;
  case TC_SEC_NORM: return c->flags & TWINCACHE_GRAPH_STANDARDIZED ? 8 * n : 0;
  case TC_SEC_INTER: return 8 * c->k;
  case TC_SEC_MORE: return 8 * c->n_more;
  case TC_SEC_MASKS: return c->k * rb;
  case TC_SEC_SOFT: return 4 * c->n_soft * twincache_soft_stride((uint32_t)n, (uint32_t)c->h, (int)c->mechanism);
  case TC_SEC_ROWS: return rows ? 4 * (c->k + 1) : 0;
  case TC_SEC_BASE: return 4 * n * (rows ? c->base_rows : c->s);
  case TC_SEC_COLS: return rows ? 4 * c->col_rows : 4 * c->cols * c->s;
  default: return 0;
  }
}

/* The payload's bytes: the sum over every section. */
static inline uint64_t tc_frame_payload_bytes(const tc_frame_counts *c) {
  uint64_t b = 0;
  for (int sec = 0; sec < TC_SEC_COUNT; sec++) b += tc_frame_section_bytes(sec, c);
  return b;
}

/* ---- shared helpers and rules ------------------------------------------ */
/* The flags of observed data (FORMAT.md 3.11). */
#define TC_FRAME_OBSERVED_FLAGS (TWINCACHE_GRAPH_OBSERVED | TWINCACHE_GRAPH_NO_DAG | TWINCACHE_GRAPH_NO_TARGETS)

/* FORMAT.md 3.11's header rule: 1 when the flags and fields agree, else 0.
 * Without OBSERVED: neither NO_DAG nor NO_TARGETS. With it: INDEPENDENT,
 * linear, H 0, noise gauss, family unknown, samples, and no STANDARDIZED,
 * HETERO or ISCM (ROWS may be set: regimes of their own row counts). */
static inline int tc_frame_observed_header_ok(unsigned flags, unsigned mechanism, uint32_t h, unsigned noise,
                                              unsigned family, uint32_t s) {
  if (!(flags & TWINCACHE_GRAPH_OBSERVED)) return (flags & TC_FRAME_OBSERVED_FLAGS) == 0;
  return (flags & ~(TC_FRAME_OBSERVED_FLAGS | TWINCACHE_GRAPH_ROWS)) == TWINCACHE_GRAPH_INDEPENDENT &&
         mechanism == TWINCACHE_MECH_LINEAR &&
         h == 0 && noise == TWINCACHE_NOISE_GAUSS && family == TWINCACHE_FAMILY_UNKNOWN && s > 0;
}

/* n f32 at p all +0.0 (bits zero): 1, else 0. */
static inline int tc_frame_f32_all_zero(const uint8_t *p, uint64_t n) {
  for (uint64_t i = 0; i < n; i++)
    if (tc_load_u32(p + 4 * i) != 0) return 0;
  return 1;
}

static inline int tc_frame_buf_grow(uint8_t **buf, size_t *cap, size_t need) {
  if (need <= *cap) return TWINCACHE_OK;
  size_t want = need < 4096 ? 4096 : need + need / 4;
  uint8_t *p = realloc(*buf, want);
  TC_RETURN_IF(!p, TWINCACHE_ENOMEM, "frame: cannot allocate a %zu-byte buffer", want);
  *buf = p;
  *cap = want;
  return TWINCACHE_OK;
}

/* Byte planes: plane b holds byte b of every float (n_floats each). */
static inline void tc_frame_planes_split(uint8_t *dst, const uint8_t *src, size_t n_floats) {
  for (size_t i = 0; i < n_floats; i++)
    for (size_t b = 0; b < 4; b++) dst[b * n_floats + i] = src[4 * i + b];
}
static inline void tc_frame_planes_join(uint8_t *dst, const uint8_t *src, size_t n_floats) {
  for (size_t i = 0; i < n_floats; i++)
    for (size_t b = 0; b < 4; b++) dst[4 * i + b] = src[b * n_floats + i];
}

static inline uint32_t tc_frame_popcount_set(const uint64_t *set, uint32_t n) {
  uint32_t c = 0;
  for (uint32_t q = 0; q < (n + 63) / 64; q++) c += tc_popcount64(set[q]);
  return c;
}

/* Byte b of a bitset, in the packed little-endian bit order of the format. */
static inline uint8_t tc_frame_set_byte(const uint64_t *set, uint32_t b) {
  return (uint8_t)(set[b >> 3] >> (8 * (b & 7)));
}

/* The first nbytes (<= 8) bytes at p as one little-endian word. */
static inline uint64_t tc_frame_load_bits(const uint8_t *p, uint32_t nbytes) {
  uint64_t v = 0;
  for (uint32_t b = 0; b < nbytes; b++) v |= (uint64_t)p[b] << (8 * b);
  return v;
}

/* 1 when every W1 input weight of a non-parent is +0.0 (all bits zero) in
 * the MLP section mlp (N blocks of H*N + 2H f32, W1 (H, N) first), given
 * the children sets of w; else 0. */
static inline int tc_frame_mlp_nonparents_zero(const tc_dag *w, const uint8_t *mlp, uint32_t n, uint32_t h_n) {
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
 * column i. Else 0. A root's entry t (linear: entry t; a block: W1[0][t])
 * is its noise scale factor instead: +0.0 or a finite float > 0 (bits below
 * +inf's; FORMAT.md 3.6). */
static inline int tc_frame_soft_nonparents_zero(const tc_dag *w, const uint8_t *blk, uint32_t n, uint32_t h_n,
                                unsigned mechanism, uint32_t t) {
  int root = 1;
  for (uint32_t i = 0; i < n; i++) root &= !tc_bit_get(w->child[i], t);
  for (uint32_t i = 0; i < n; i++) {
    if (tc_bit_get(w->child[i], t)) continue; /* i is a parent of t */
    const uint32_t own = tc_load_u32(blk + 4 * (size_t)i);
    if (root && i == t && own != 0 && own >= 0x7f800000u) return 0;
    if (mechanism == TWINCACHE_MECH_LINEAR) {
      if (own != 0 && !(root && i == t)) return 0;
      continue;
    }
    for (uint32_t hh = 0; hh < h_n; hh++)
      if (tc_load_u32(blk + 4 * ((size_t)hh * n + i)) != 0 && !(root && i == t && hh == 0)) return 0;
  }
  return 1;
}

/* Values FORMAT.md 3.2 says are +0.0 (all bits zero) whatever they would
 * mean, so that no stored byte goes unchecked. Each returns 1 when the rule
 * holds, else 0; the encoder refuses a graph that breaks one (EINVAL), the
 * decoder a frame (ECORRUPT), each with its own message. */

/* The mechanism of node j: its own in a mixed frame (section 3b), else the frame's. */
static inline unsigned tc_frame_node_mechanism(unsigned mechanism, const uint8_t *node_mech, uint32_t j) {
  return mechanism == TWINCACHE_MECH_MIXED ? node_mech[j] : mechanism;
}

/* Section 2: an edge into a node whose mechanism is not linear carries
 * weight +0.0 (the node's parameters are its unit block). weights holds one
 * f32 per edge, edges row-major (children sets of w). On failure *bad_i and
 * *bad_j name the edge. */
static inline int tc_frame_edge_weights_zero_off_linear(const tc_dag *w, const uint8_t *weights, uint32_t n, unsigned mechanism,
                                        const uint8_t *node_mech, uint32_t *bad_i, uint32_t *bad_j) {
  if (mechanism == TWINCACHE_MECH_LINEAR) return 1;
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t j = 0; j < n; j++) {
      if (!tc_bit_get(w->child[i], j)) continue;
      if (tc_frame_node_mechanism(mechanism, node_mech, j) != TWINCACHE_MECH_LINEAR && tc_load_u32(weights) != 0) {
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
static inline int tc_frame_linear_blocks_zero(const uint8_t *mlp, const uint8_t *node_mech, uint32_t n, uint32_t h_n,
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
static inline int tc_frame_soft_linear_tail_zero(const uint8_t *blk, uint32_t n, uint32_t p) {
  for (uint32_t i = n; i < p; i++)
    if (tc_load_u32(blk + 4 * (size_t)i) != 0) return 0;
  return 1;
}

/* Section 6: 1 when world's value must be +0.0 — a soft world (its
 * parameters are in section 7a) whose target t has parents; a soft world on
 * a root stores the root's new mean there (FORMAT.md 3.6). The one place
 * that says which worlds carry no value. */
static inline int tc_frame_inter_value_unused(const tc_dag *w, uint32_t n, unsigned kind, uint32_t t) {
  if (kind != TWINCACHE_INTER_SOFT) return 0;
  for (uint32_t i = 0; i < n; i++)
    if (tc_bit_get(w->child[i], t)) return 1;
  return 0;
}

/* Section 5 of an SCM-only frame (S = 0): no base world to take statistics
 * of, so mean +0.0 and std 1.0 for every node (FORMAT.md 3.8). mean and std
 * hold n f32 each. On failure *bad names the node. */
static inline int tc_frame_scm_only_norm_identity(const uint8_t *mean, const uint8_t *std, uint32_t n, uint32_t *bad) {
  const uint32_t one = 0x3f800000u; /* 1.0f */
  for (uint32_t j = 0; j < n; j++)
    if (tc_load_u32(mean + 4 * (size_t)j) != 0 || tc_load_u32(std + 4 * (size_t)j) != one) {
      *bad = j;
      return 0;
    }
  return 1;
}

/* The changed set of a world: the union of its targets' descendant sets
 * (w->desc; for n <= 64 only word 0 is meaningful), into out; every node
 * 0..n-1 when `all` (an INDEPENDENT frame: each world has its own noise). */
static inline void tc_frame_world_set(const tc_dag *w, uint32_t n, const uint16_t *t, uint32_t c, int all,
                                      uint64_t *out) {
  uint32_t words = n <= 64 ? 1 : (n + 63) / 64;
  memset(out, 0, sizeof(uint64_t) * TC_BITSET_WORDS);
  if (all) {
    for (uint32_t j = 0; j < n; j++) out[j >> 6] |= (uint64_t)1 << (j & 63);
    return;
  }
  for (uint32_t i = 0; i < c; i++)
    for (uint32_t q = 0; q < words; q++) out[q] |= w->desc[t[i]][q];
}

/* The index of node j among a world's c targets, or -1. */
static inline int tc_frame_target_index(const uint16_t *t, uint32_t c, uint32_t j) {
  for (uint32_t i = 0; i < c; i++)
    if (t[i] == j) return (int)i;
  return -1;
}


#endif /* TC_FRAME_H */
