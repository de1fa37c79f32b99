/* frame_encode.c — the graph frame encoder (FORMAT.md, "Graph frame"):
 * checks a graph (sizes, DAG, targets, the twin property, the values that
 * must be zero), lays its sections out in the order and sizes of the
 * section table (tc_frame.h) and compresses them behind the header. */
#include <zstd.h>
#include <zstd_errors.h>

#include "tc_error.h"
#include "tc_frame.h"

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
  /* the last graph's rows per world (world_rows, 0 read as S), and whether
   * they differ from S anywhere (then section 7b is written) */
  uint32_t rows[TWINCACHE_MAX_INTER + 1];
  int has_rows;
};

/* Writes header h as 48 bytes of version h->version at p, its FNV-1a last. */
static void header_write(uint8_t *p, const tc_frame_hdr *h) {
  memcpy(p, TC_FRAME_MAGIC, 4);
  tc_store_u16(p + 4, (uint16_t)h->version); /* twin frames: version 4, unchanged */
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
  TC_RETURN_IF(!c, TWINCACHE_EINVAL, "twincache_cctx_set_shuffle: NULL context");
  c->shuffle = on != 0;
  return TWINCACHE_OK;
}

static int f32_same(const float *a, const float *b) { return memcmp(a, b, sizeof(float)) == 0; }

/* Checks g and fills c->dag; *edges and cols[k] (stored columns) out. */
static int encode_check(twincache_cctx *c, const twincache_graph *g, uint32_t *edges,
                        uint64_t *cols_total) {
  uint32_t n = g->n_nodes, s_n = g->n_samples, k_n = g->n_inter;
  const int indep = (g->flags & TWINCACHE_GRAPH_INDEPENDENT) != 0; /* every column of a world stored */
  const int observed = (g->flags & TWINCACHE_GRAPH_OBSERVED) != 0;  /* FORMAT.md 3.11: no SCM */
  TC_RETURN_IF(n == 0 || n > TWINCACHE_MAX_NODES, TWINCACHE_EINVAL, "%u nodes, 1..%d allowed", n,
               TWINCACHE_MAX_NODES);
  TC_RETURN_IF(s_n > TWINCACHE_MAX_SAMPLES, TWINCACHE_EINVAL, "%u samples, at most %d allowed", s_n,
               TWINCACHE_MAX_SAMPLES);
  TC_RETURN_IF(k_n > TWINCACHE_MAX_INTER, TWINCACHE_EINVAL, "%u interventions, at most %d allowed", k_n,
               TWINCACHE_MAX_INTER);
  TC_RETURN_IF(g->ld < n || g->ld_adj < n, TWINCACHE_EINVAL, "ld %u / ld_adj %u below %u nodes", g->ld,
               g->ld_adj, n);
  TC_RETURN_IF(g->noise >= TWINCACHE_NOISE_COUNT, TWINCACHE_EINVAL, "noise %u unknown", g->noise);
  TC_RETURN_IF(g->family >= TWINCACHE_FAMILY_COUNT && g->family != TWINCACHE_FAMILY_UNKNOWN, TWINCACHE_EINVAL,
               "family %u unknown", g->family);
  TC_RETURN_IF(g->flags & ~(TWINCACHE_GRAPH_STANDARDIZED | TWINCACHE_GRAPH_HETERO | TWINCACHE_GRAPH_ISCM |
                            TWINCACHE_GRAPH_INDEPENDENT | TWINCACHE_GRAPH_ROWS | /* ROWS: from world_rows */
                            TC_FRAME_OBSERVED_FLAGS),
               TWINCACHE_EINVAL, "flags 0x%x: unknown bits", g->flags);
  TC_RETURN_IF(!tc_frame_observed_header_ok(g->flags, g->mechanism, g->n_hidden, g->noise, g->family, s_n),
               TWINCACHE_EINVAL, "flags 0x%x: an observed graph is INDEPENDENT, linear, H 0, noise gauss, family "
               "unknown, with samples, and nothing else (NO_DAG and NO_TARGETS only with OBSERVED)", g->flags);
  TC_RETURN_IF((g->flags & TWINCACHE_GRAPH_ISCM) && !(g->flags & TWINCACHE_GRAPH_STANDARDIZED), TWINCACHE_EINVAL,
               "flags 0x%x: ISCM without STANDARDIZED", g->flags);
  if (g->mechanism == TWINCACHE_MECH_LINEAR) {
    TC_RETURN_IF(g->n_hidden != 0, TWINCACHE_EINVAL, "a linear graph with %u hidden units", g->n_hidden);
    TC_RETURN_IF(!g->weight && !observed, TWINCACHE_EINVAL, "a linear graph without weight");
  } else if (g->mechanism < TWINCACHE_MECH_COUNT) { /* MLP, RFF: unit blocks */
    TC_RETURN_IF(g->n_hidden == 0 || g->n_hidden > TWINCACHE_MAX_HIDDEN, TWINCACHE_EINVAL,
                 "mechanism %u with %u hidden units, 1..%d allowed", g->mechanism, g->n_hidden,
                 TWINCACHE_MAX_HIDDEN);
    TC_RETURN_IF(!g->mlp, TWINCACHE_EINVAL, "mechanism %u without unit parameters (mlp)", g->mechanism);
    if (g->mechanism == TWINCACHE_MECH_MIXED) {
      TC_RETURN_IF(!g->node_mech, TWINCACHE_EINVAL, "a mixed graph without node_mech");
      for (uint32_t j = 0; j < n; j++)
        TC_RETURN_IF(g->node_mech[j] >= TWINCACHE_MECH_MIXED, TWINCACHE_EINVAL,
                     "node %u: mechanism %u in a mixed graph", j, g->node_mech[j]);
    }
  } else {
    return tc_error_set(TWINCACHE_EINVAL, "mechanism %u unknown", g->mechanism);
  }
  TC_RETURN_IF(!g->adj || (!g->noise_scale && !observed), TWINCACHE_EINVAL, "adj or noise_scale missing");
  TC_RETURN_IF(s_n > 0 && !g->base, TWINCACHE_EINVAL, "%u samples without base", s_n);
  TC_RETURN_IF((g->flags & TWINCACHE_GRAPH_HETERO) && (!g->hetero_w || !g->hetero_c), TWINCACHE_EINVAL,
               "HETERO without hetero_w or hetero_c");
  TC_RETURN_IF((g->flags & TWINCACHE_GRAPH_STANDARDIZED) && (!g->norm_mean || !g->norm_std), TWINCACHE_EINVAL,
               "STANDARDIZED without norm_mean or norm_std");
  TC_RETURN_IF(k_n > 0 && (!g->target || !g->kind || !g->value), TWINCACHE_EINVAL,
               "%u interventions without target, kind or value", k_n);
  TC_RETURN_IF(k_n > 0 && s_n > 0 && !g->inter, TWINCACHE_EINVAL, "%u interventions without inter", k_n);
  /* rows per world (section 7b): 1..S each, a twin world at most the base's */
  c->has_rows = 0;
  for (uint32_t v = 0; v <= k_n; v++) {
    uint32_t r = g->world_rows && g->world_rows[v] ? g->world_rows[v] : s_n;
    TC_RETURN_IF(r > s_n, TWINCACHE_EINVAL, "world %u holds %u rows, more than the graph's %u samples", v, r, s_n);
    TC_RETURN_IF(!indep && v > 0 && r > c->rows[0], TWINCACHE_EINVAL,
                 "twin world %u holds %u rows, more than the base world's %u (row s is the twin of base row s)",
                 v - 1, r, c->rows[0]);
    c->rows[v] = r;
    c->has_rows |= r != s_n;
  }
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
  TC_RETURN_IF((g->flags & TWINCACHE_GRAPH_NO_DAG) && e != 0, TWINCACHE_EINVAL,
               "%u edges in a graph marked unknown (NO_DAG): adj must be all zero", e);
  /* W1 columns of non-parents are +0.0: a reader refuses anything else */
  if (g->mechanism != TWINCACHE_MECH_LINEAR &&
      !tc_frame_mlp_nonparents_zero(w, (const uint8_t *)g->mlp, n, g->n_hidden))
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
      if (ts[i] >= n || tc_frame_target_index(ts, i, ts[i]) >= 0)
        return tc_error_set(TWINCACHE_EINVAL, "intervention %u: target %u out of range or repeated", k,
                            (unsigned)ts[i]);
    if (observed) { /* FORMAT.md 3.11: kind OBSERVED, values +0.0, withheld targets node 0 */
      for (uint32_t i = 0; i < nt; i++)
        if (tc_load_u32(&vs[i]) != 0)
          return tc_error_set(TWINCACHE_EINVAL, "intervention %u: an observed world has no value (+0.0), not %g", k,
                              (double)vs[i]);
      if (g->kind[k] != TWINCACHE_INTER_OBSERVED)
        return tc_error_set(TWINCACHE_EINVAL, "intervention %u: kind %u in an observed graph, only %d", k,
                            (unsigned)g->kind[k], TWINCACHE_INTER_OBSERVED);
      if ((g->flags & TWINCACHE_GRAPH_NO_TARGETS) && (nt != 1 || t != 0))
        return tc_error_set(TWINCACHE_EINVAL, "intervention %u: targets withheld (NO_TARGETS): one target, node 0", k);
    } else if (g->kind[k] >= TWINCACHE_INTER_KIND_COUNT)
      return tc_error_set(TWINCACHE_EINVAL, "intervention %u: target %u or kind %u out of range", k, t,
                          (unsigned)g->kind[k]);
    if (g->kind[k] == TWINCACHE_INTER_SOFT && nt > 1)
      return tc_error_set(TWINCACHE_EINVAL, "intervention %u: a soft intervention has one target, not %u", k, nt);
    uint32_t vbits;
    memcpy(&vbits, &g->value[k], 4);
    if (tc_frame_inter_value_unused(w, n, g->kind[k], t) && vbits != 0)
      return tc_error_set(TWINCACHE_EINVAL, "intervention %u: a %s world on a node with parents has value +0.0, not %g", k,
                          twincache_choice_name(TWINCACHE_CHOICE_INTER_KIND, g->kind[k]), (double)g->value[k]);
    int is_do = g->kind[k] == TWINCACHE_DO;
    uint64_t set[TC_BITSET_WORDS];
    tc_frame_world_set(w, n, ts, nt, indep, set);
    total += tc_frame_popcount_set(set, n) - (is_do ? nt : 0);
    int8_t tix[TWINCACHE_MAX_NODES]; /* index of node j among the do() targets, or -1 */
    memset(tix, -1, n);
    for (uint32_t i = 0; i < nt && is_do; i++) tix[ts[i]] = (int8_t)i;
    if (g->kind[k] == TWINCACHE_INTER_SOFT) {
      uint32_t P = twincache_soft_stride(n, g->n_hidden, g->mechanism);
      if (!g->soft) return tc_error_set(TWINCACHE_EINVAL, "intervention %u is soft but the graph has no soft parameters", k);
      unsigned mech_t = g->mechanism == TWINCACHE_MECH_MIXED ? g->node_mech[t] : g->mechanism;
      if (!tc_frame_soft_nonparents_zero(w, (const uint8_t *)(g->soft + (size_t)k * P), n, g->n_hidden, mech_t, t))
        return tc_error_set(TWINCACHE_EINVAL, "intervention %u: soft parameters on non-parents of target %u "
                            "must be +0.0 (a root's own entry: +0.0 or finite > 0)", k, t);
    }
    /* the twin property: what the structure says is unchanged must be (in
     * the rows the world holds) */
    for (uint32_t s = 0; s < c->rows[k + 1]; s++) {
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
  if (rc != TWINCACHE_OK) /* every refusal of encode_check left its reason */
    return tc_error_wrap(rc, "frame encode: graph %llu", (unsigned long long)g->index);
  uint32_t n = g->n_nodes, s_n = g->n_samples, k_n = g->n_inter, h_n = g->n_hidden;
  uint32_t rb = (n + 7) / 8;
  const int indep = (g->flags & TWINCACHE_GRAPH_INDEPENDENT) != 0;
  const int observed = (g->flags & TWINCACHE_GRAPH_OBSERVED) != 0;
  uint32_t soft_p = twincache_soft_stride(n, h_n, g->mechanism), n_soft = 0, n_more = 0;
  for (uint32_t k = 0; k < k_n; k++) {
    n_soft += g->kind[k] == TWINCACHE_INTER_SOFT;
    n_more += (g->n_targets ? g->n_targets[k] : 1) - 1; /* checked by encode_check */
  }
  /* the header's flags: ROWS set here, from world_rows alone */
  const uint8_t flags = (uint8_t)((g->flags & ~TWINCACHE_GRAPH_ROWS) | (c->has_rows ? TWINCACHE_GRAPH_ROWS : 0u));
  tc_frame_counts cnt = {.n = n, .s = s_n, .k = k_n, .h = h_n, .mechanism = g->mechanism, .flags = flags,
                         .edges = edges, .n_more = n_more, .n_soft = n_soft, .cols = cols_total,
                         .base_rows = c->rows[0]};
  for (uint32_t k = 0; k < k_n && c->has_rows; k++) { /* the stored columns of world k, r_k rows each */
    uint16_t ts[TWINCACHE_MAX_TARGETS];
    float vs[TWINCACHE_MAX_TARGETS];
    uint64_t set[TC_BITSET_WORDS];
    uint32_t nt = world_targets(g, k, ts, vs);
    tc_frame_world_set(&c->dag, n, ts, nt, indep, set);
    uint64_t ck = tc_frame_popcount_set(set, n) - (g->kind[k] == TWINCACHE_DO ? nt : 0);
    cnt.col_rows += ck * c->rows[k + 1];
  }
  uint64_t size = tc_frame_payload_bytes(&cnt);
  if (size > UINT32_MAX) return tc_error_set(TWINCACHE_ETOOBIG, "frame encode: payload over 4 GiB");
  if ((rc = tc_frame_buf_grow(&c->buf, &c->buf_cap, (size_t)size)) != TWINCACHE_OK)
    return tc_error_set(rc, "frame encode: out of memory");

  const tc_dag *w = &c->dag;
  uint8_t *q = c->buf;
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t b = 0; b < rb; b++) *q++ = tc_frame_set_byte(w->child[i], b);
  const uint8_t *sec_weight = q, *sec_mlp = NULL, *sec_norm = NULL, *sec_soft = NULL;
  for (uint32_t i = 0; i < n; i++) /* weights of the edges, row-major */
    for (uint32_t j = 0; j < n; j++)
      if (tc_bit_get(w->child[i], j)) q = put_f32(q, g->weight ? g->weight[(size_t)i * g->ld_adj + j] : 0.0f);
  if (observed && !tc_frame_f32_all_zero(sec_weight, edges))
    return tc_error_set(TWINCACHE_EINVAL, "frame encode: graph %llu: an observed graph has no SCM: weight must be "
                        "+0.0 (or NULL)", (unsigned long long)g->index);
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
  if (g->noise_scale)
    memcpy(q, g->noise_scale, 4 * (size_t)n);
  else
    memset(q, 0, 4 * (size_t)n); /* an observed graph: no SCM */
  if (observed && !tc_frame_f32_all_zero(q, n))
    return tc_error_set(TWINCACHE_EINVAL, "frame encode: graph %llu: an observed graph has no SCM: noise_scale "
                        "must be +0.0 (or NULL)", (unsigned long long)g->index);
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
    tc_frame_world_set(w, n, ts, nt, indep, set);
    for (uint32_t b = 0; b < rb; b++) *q++ = tc_frame_set_byte(set, b);
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
  if (!tc_frame_edge_weights_zero_off_linear(w, sec_weight, n, g->mechanism, g->node_mech, &bi, &bj))
    return tc_error_set(TWINCACHE_EINVAL, "frame encode: graph %llu: edge %u -> %u has weight %g, but node %u's "
                        "mechanism is not linear (its weights must be +0.0)", (unsigned long long)g->index, bi, bj,
                        (double)g->weight[(size_t)bi * g->ld_adj + bj], bj);
  if (g->mechanism == TWINCACHE_MECH_MIXED && !tc_frame_linear_blocks_zero(sec_mlp, g->node_mech, n, h_n, &bi))
    return tc_error_set(TWINCACHE_EINVAL, "frame encode: graph %llu: node %u is linear in a mixed graph, but its "
                        "unit block is not all +0.0", (unsigned long long)g->index, bi);
  if (s_n == 0 && sec_norm && !tc_frame_scm_only_norm_identity(sec_norm, sec_norm + 4 * (size_t)n, n, &bi))
    return tc_error_set(TWINCACHE_EINVAL, "frame encode: graph %llu: an SCM-only standardised graph stores mean 0 "
                        "and std 1, not node %u's %g and %g", (unsigned long long)g->index, bi,
                        (double)g->norm_mean[bi], (double)g->norm_std[bi]);
  for (uint32_t k = 0; k < k_n && g->mechanism == TWINCACHE_MECH_MIXED; k++)
    if (g->kind[k] == TWINCACHE_INTER_SOFT) {
      if (g->node_mech[g->target[k]] == TWINCACHE_MECH_LINEAR && !tc_frame_soft_linear_tail_zero(sec_soft, n, soft_p))
        return tc_error_set(TWINCACHE_EINVAL, "frame encode: graph %llu: intervention %u: soft parameters of a "
                            "linear target past its %u weights must be +0.0", (unsigned long long)g->index, k, n);
      sec_soft += 4 * (size_t)soft_p;
    }
  for (uint32_t v = 0; v <= k_n && c->has_rows; v++) { /* section 7b: rows per world */
    tc_store_u32(q, c->rows[v]);
    q += 4;
  }
  uint8_t *samples = q;
  for (uint32_t j = 0; j < n; j++) /* base (N, r_0) column-major */
    for (uint32_t s = 0; s < c->rows[0]; s++) q = put_f32(q, g->base[(size_t)s * g->ld + j]);
  for (uint32_t k = 0; k < k_n; k++) {
    uint64_t set[TC_BITSET_WORDS];
    uint32_t nt = world_targets(g, k, ts, vs);
    tc_frame_world_set(w, n, ts, nt, indep, set);
    for (uint32_t j = 0; j < n; j++) {
      if (!tc_bit_get(set, j) || (g->kind[k] == TWINCACHE_DO && tc_frame_target_index(ts, nt, j) >= 0)) continue;
      for (uint32_t s = 0; s < c->rows[k + 1]; s++)
        q = put_f32(q, g->inter[((size_t)k * s_n + s) * g->ld + j]);
    }
  }
  size_t sample_floats = (size_t)(q - samples) / 4;
  uint8_t codec = 0;
  if (c->shuffle) {
    if ((rc = tc_frame_buf_grow(&c->tmp, &c->tmp_cap, sample_floats * 4)) != TWINCACHE_OK)
      return tc_error_set(rc, "frame encode: out of memory");
    tc_frame_planes_split(c->tmp, samples, sample_floats);
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
  /* the caller's ROWS bit asks for version 5 even when every count is S:
   * one version for every record of a cache made with counts */
  tc_frame_hdr h = {.version = TWINCACHE_FORMAT_VERSION_OF(flags | (g->flags & TWINCACHE_GRAPH_ROWS)),
                    .index = g->index, .n = n, .s = s_n, .k = k_n, .h = h_n,
                    .mechanism = g->mechanism, .noise = g->noise, .flags = flags, .family = g->family,
                    .codec = codec, .decoded_bytes = (uint32_t)size, .compressed_bytes = (uint32_t)z,
                    .payload_hash = tc_payload_hash(c->buf, (size_t)size)};
  header_write(dst, &h);
  *written = TC_FRAME_HEADER_BYTES + z;
  return TWINCACHE_OK;
}

