/* frame_decode.c — the graph frame decoders (FORMAT.md, "Graph frame"):
 * the payload walked section by section in the section table's order and
 * sizes (tc_frame.h), every rule checked with a message naming its section,
 * then the dense worlds (twincache_frame_decode) or a view of the sections
 * (twincache_frame_decode_view). */
#include <zstd.h>
#include <zstd_errors.h>

#include "tc_error.h"
#include "tc_frame.h"

struct twincache_dctx {
  ZSTD_DCtx *z;
  uint8_t *buf;
  size_t buf_cap;
  uint8_t *tmp;
  size_t tmp_cap;
  tc_dag dag;
  uint32_t ncols[TWINCACHE_MAX_INTER]; /* stored columns per intervention */
  uint32_t rows[TWINCACHE_MAX_INTER + 1]; /* rows per world (section 7b; S without it) */
  /* the intervention records of the last view, decoded */
  uint16_t target[TWINCACHE_MAX_INTER];
  uint8_t kind[TWINCACHE_MAX_INTER];
  float value[TWINCACHE_MAX_INTER];
  uint8_t n_targets[TWINCACHE_MAX_INTER];
  uint16_t more_target[TWINCACHE_MAX_INTER * (TWINCACHE_MAX_TARGETS - 1)];
  float more_value[TWINCACHE_MAX_INTER * (TWINCACHE_MAX_TARGETS - 1)];
};

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
  const int indep = (h->flags & TWINCACHE_GRAPH_INDEPENDENT) != 0; /* every world's mask: all nodes */
  const int observed = (h->flags & TWINCACHE_GRAPH_OBSERVED) != 0;  /* FORMAT.md 3.11: no SCM */
#define BAD(...) return tc_error_set(TWINCACHE_ECORRUPT, __VA_ARGS__)
  /* the sizes and names of the section table, the counts filled in as
   * the sections that define them are read */
  tc_frame_counts cnt = {.n = h->n, .s = h->s, .k = h->k, .h = h->h, .mechanism = h->mechanism, .flags = h->flags};
#define TAKE(ptr, sec)                                                              \
  do {                                                                              \
    uint64_t nb_ = tc_frame_section_bytes(sec, &cnt);                               \
    if ((uint64_t)(end - q) < nb_)                                                  \
      BAD("section %s: %llu bytes, %zu left of the payload's %zu", tc_frame_section_names[sec], \
          (unsigned long long)nb_, (size_t)(end - q), size);                        \
    (ptr) = q;                                                                      \
    q += nb_;                                                                       \
  } while (0)
  const uint8_t *adj;
  TAKE(adj, TC_SEC_ADJ);
  x->adj = adj;
  tc_dag *w = &d->dag;
  uint8_t last_mask = (uint8_t)((n & 7) ? (1u << (n & 7)) - 1 : 0xffu);
  x->edges = 0;
  for (uint32_t i = 0; i < n; i++) {
    const uint8_t *row = adj + (size_t)i * rb;
    if (row[rb - 1] & ~last_mask) BAD("section " TC_SEC_NAME_ADJ ": row %u has bits past node %u", i, n - 1);
    if (n <= 64) { /* one word per set: tc_dag_close reads no other */
      w->child[i][0] = tc_frame_load_bits(row, rb);
    } else {
      memset(w->child[i], 0, sizeof w->child[i]);
      for (uint32_t b = 0; b < rb; b++) w->child[i][b >> 3] |= (uint64_t)row[b] << (8 * (b & 7));
    }
    x->edges += tc_frame_popcount_set(w->child[i], n);
  }
  if (tc_dag_close(w, n) != 0) BAD("section " TC_SEC_NAME_ADJ ": a directed cycle or a self-loop");
  cnt.edges = x->edges;
  if ((h->flags & TWINCACHE_GRAPH_NO_DAG) && x->edges != 0)
    BAD("section " TC_SEC_NAME_ADJ ": %u edges in a frame whose graph is unknown (NO_DAG)", x->edges);
  TAKE(x->weight, TC_SEC_WEIGHT);
  if (observed && !tc_frame_f32_all_zero(x->weight, x->edges))
    BAD("section " TC_SEC_NAME_WEIGHT ": an observed frame has no SCM, its weights are +0.0");
  x->mlp = NULL;
  if (h->mechanism != TWINCACHE_MECH_LINEAR) {
    TAKE(x->mlp, TC_SEC_UNITS);
    if (!tc_frame_mlp_nonparents_zero(w, x->mlp, n, h->h))
      BAD("section " TC_SEC_NAME_UNITS ": an input weight (W1) on a non-parent is not +0.0");
  }
  x->node_mech = NULL;
  if (h->mechanism == TWINCACHE_MECH_MIXED) {
    TAKE(x->node_mech, TC_SEC_NODE_MECH);
    for (uint32_t j = 0; j < n; j++)
      if (x->node_mech[j] >= TWINCACHE_MECH_MIXED)
        BAD("section " TC_SEC_NAME_NODE_MECH ": node %u has mechanism %u, not 0..%d", j, x->node_mech[j],
            TWINCACHE_MECH_MIXED - 1);
  }
  uint32_t bi = 0, bj = 0;
  if (!tc_frame_edge_weights_zero_off_linear(w, x->weight, n, h->mechanism, x->node_mech, &bi, &bj))
    BAD("section " TC_SEC_NAME_WEIGHT ": edge %u -> %u has a weight, but node %u's mechanism is not linear "
        "(must be +0.0)", bi, bj, bj);
  if (h->mechanism == TWINCACHE_MECH_MIXED && !tc_frame_linear_blocks_zero(x->mlp, x->node_mech, n, h->h, &bi))
    BAD("section " TC_SEC_NAME_UNITS ": node %u is linear, but its block is not all +0.0", bi);
  TAKE(x->noise, TC_SEC_NOISE);
  if (observed && !tc_frame_f32_all_zero(x->noise, n))
    BAD("section " TC_SEC_NAME_NOISE ": an observed frame has no SCM, its noise scales are +0.0");
  x->het_w = x->het_c = NULL;
  if (h->flags & TWINCACHE_GRAPH_HETERO) {
    TAKE(x->het_w, TC_SEC_HETERO_W);
    TAKE(x->het_c, TC_SEC_HETERO_C);
  }
  x->norm = NULL;
  if (h->flags & TWINCACHE_GRAPH_STANDARDIZED) {
    TAKE(x->norm, TC_SEC_NORM);
    if (h->s == 0 && !tc_frame_scm_only_norm_identity(x->norm, x->norm + 4 * (size_t)n, n, &bi))
      BAD("section " TC_SEC_NAME_NORM ": an SCM-only frame stores mean 0 and std 1, node %u does not", bi);
  }
  TAKE(x->rec, TC_SEC_INTER);
  /* version 4: byte 3 counts a world's extra targets (section 6a), kinds 2-3 exist */
  uint64_t n_more = 0;
  for (uint32_t k = 0; k < h->k; k++) {
    const uint8_t *r = x->rec + 8 * (size_t)k;
    if (tc_load_u16(r) >= n) BAD("section " TC_SEC_NAME_INTER ": world %u targets node %u of %u", k, tc_load_u16(r), n);
    if (observed ? r[2] != TWINCACHE_INTER_OBSERVED
                 : r[2] >= (h->version >= 4 ? TWINCACHE_INTER_KIND_COUNT : TWINCACHE_SHIFT + 1))
      BAD("section " TC_SEC_NAME_INTER ": world %u has kind %u, unknown in version %u%s", k, r[2], h->version,
          observed ? " (an observed frame's worlds are all of kind 4)" : "");
    if (observed && tc_load_u32(r + 4) != 0)
      BAD("section " TC_SEC_NAME_INTER ": world %u of an observed frame has a value; it must be +0.0", k);
    if ((h->flags & TWINCACHE_GRAPH_NO_TARGETS) && (tc_load_u16(r) != 0 || r[3] != 0))
      BAD("section " TC_SEC_NAME_INTER ": world %u names targets, but they are withheld (NO_TARGETS): one "
          "target, node 0", k);
    if (r[3] > (h->version >= 4 ? TWINCACHE_MAX_TARGETS - 1 : 0) || (r[2] == TWINCACHE_INTER_SOFT && r[3] != 0))
      BAD("section " TC_SEC_NAME_INTER ": world %u of kind %u has %u extra targets", k, r[2], r[3]);
    if (tc_frame_inter_value_unused(w, n, r[2], tc_load_u16(r)) && tc_load_u32(r + 4) != 0)
      BAD("section " TC_SEC_NAME_INTER ": world %u is of kind %u on a node with parents, whose value must be +0.0",
          k, r[2]);
    n_more += r[3];
  }
  cnt.n_more = n_more;
  TAKE(x->more, TC_SEC_MORE);
  const uint8_t *masks;
  TAKE(masks, TC_SEC_MASKS);
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
      if (ts[i] >= n || more[2] != 0 || more[3] != 0 || tc_frame_target_index(ts, i, ts[i]) >= 0 ||
          (observed && tc_load_u32(more + 4) != 0))
        BAD("section " TC_SEC_NAME_MORE ": world %u's target %u is out of range, repeated, has reserved "
            "bytes set, or a value in an observed frame", k, ts[i]);
    }
    uint64_t uni[TC_BITSET_WORDS];
    const uint64_t *set = w->desc[ts[0]];
    if (c > 1 || indep) { /* a multi-target world: the union of the targets' sets; independent: all */
      tc_frame_world_set(w, n, ts, c, indep, uni);
      set = uni;
    }
    if (n <= 64) {
      if (tc_frame_load_bits(masks + (size_t)k * rb, rb) != set[0])
        BAD("section " TC_SEC_NAME_MASKS ": world %u's mask is not its targets and their descendants", k);
    } else {
      for (uint32_t b = 0; b < rb; b++)
        if (masks[(size_t)k * rb + b] != tc_frame_set_byte(set, b))
          BAD("section " TC_SEC_NAME_MASKS ": world %u's mask is not its targets and their descendants", k);
    }
    d->ncols[k] = tc_frame_popcount_set(set, n) - (r[2] == TWINCACHE_DO ? c : 0u);
    cols_total += d->ncols[k];
  }
  /* section 7a (version 4): the soft worlds' parameter blocks, in world order */
  uint32_t soft_p = twincache_soft_stride(n, h->h, h->mechanism), n_soft = 0;
  for (uint32_t k = 0; k < h->k; k++) n_soft += x->rec[8 * (size_t)k + 2] == TWINCACHE_INTER_SOFT;
  x->soft = NULL;
  if (n_soft) {
    cnt.n_soft = n_soft;
    TAKE(x->soft, TC_SEC_SOFT);
    const uint8_t *blk = x->soft;
    for (uint32_t k = 0; k < h->k; k++)
      if (x->rec[8 * (size_t)k + 2] == TWINCACHE_INTER_SOFT) {
        uint32_t t = tc_load_u16(x->rec + 8 * (size_t)k);
        unsigned mech_t = h->mechanism == TWINCACHE_MECH_MIXED ? x->node_mech[t] : h->mechanism;
        if (!tc_frame_soft_nonparents_zero(w, blk, n, h->h, mech_t, t))
          BAD("section " TC_SEC_NAME_SOFT ": world %u sets parameters of non-parents of node %u "
              "(a root's own entry: +0.0 or finite > 0)", k, t);
        if (h->mechanism == TWINCACHE_MECH_MIXED && mech_t == TWINCACHE_MECH_LINEAR &&
            !tc_frame_soft_linear_tail_zero(blk, n, soft_p))
          BAD("section " TC_SEC_NAME_SOFT ": world %u: a linear target's block past its %u weights is not "
              "all +0.0", k, n);
        blk += 4 * (size_t)soft_p;
      }
  }
  /* section 7b (version 5, ROWS): rows per world, 1..S, not all S; a twin
   * world at most the base world's */
  const uint8_t *rows_sec = NULL;
  for (uint32_t v = 0; v <= h->k; v++) d->rows[v] = h->s;
  if (h->flags & TWINCACHE_GRAPH_ROWS) {
    TAKE(rows_sec, TC_SEC_ROWS);
    int fewer = 0;
    for (uint32_t v = 0; v <= h->k; v++) {
      uint32_t r = tc_load_u32(rows_sec + 4 * (size_t)v);
      if (r == 0 || r > h->s) BAD("section " TC_SEC_NAME_ROWS ": world %u holds %u rows, not 1..%u", v, r, h->s);
      if (!indep && v > 0 && r > d->rows[0])
        BAD("section " TC_SEC_NAME_ROWS ": twin world %u holds %u rows, more than the base world's %u", v - 1, r,
            d->rows[0]);
      d->rows[v] = r;
      fewer |= r != h->s;
    }
    if (!fewer) BAD("section " TC_SEC_NAME_ROWS ": every world holds all %u rows (the section must be absent)", h->s);
    cnt.base_rows = d->rows[0];
    for (uint32_t k = 0; k < h->k; k++) cnt.col_rows += (uint64_t)d->ncols[k] * d->rows[k + 1];
  }
  cnt.cols = cols_total;
  TAKE(x->base, TC_SEC_BASE);
  TAKE(x->cols, TC_SEC_COLS);
  x->cols_total = cols_total;
  if (q != end) BAD("%zu bytes after section " TC_SEC_NAME_COLS " (the payload is %zu)", (size_t)(end - q), size);
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

/* The first `want` rows (want <= S) of a world block (S, ld) from a
 * column-major base that holds r_0 rows a column; rows r_0..want-1 +0.0. */
static void base_rows_put(float *dst, uint32_t ld, const uint8_t *cols, uint32_t n, uint32_t r_0, uint32_t want) {
  uint32_t got = r_0 < want ? r_0 : want;
  for (uint32_t j = n; j < ld; j++) col_fill(dst + j, ld, 0.0f, got); /* padding columns */
  for (uint32_t j = 0; j < n; j++) col_put(dst + j, ld, cols + 4 * (size_t)j * r_0, got);
  if (got < want) memset(dst + (size_t)got * ld, 0, (size_t)(want - got) * ld * sizeof(float));
}

static void graph_fill(twincache_dctx *d, const tc_frame_hdr *h, const tc_sections *x,
                       twincache_graph *g) {
  uint32_t n = h->n, s_n = h->s, k_n = h->k, ld = g->ld;
  const int indep = (h->flags & TWINCACHE_GRAPH_INDEPENDENT) != 0;
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
  const uint32_t *rows = d->rows;
  if (g->world_rows) memcpy(g->world_rows, rows, sizeof(uint32_t) * (k_n + 1));
  if (g->base) base_rows_put(g->base, ld, x->base, n, rows[0], s_n);
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
    if (c > 1 || indep) { /* a multi-target world: the union of the targets' sets; independent: all */
      tc_frame_world_set(w, n, ts, c, indep, uni);
      set = uni;
    }
    float *blk = g->inter + k * block;
    uint32_t r_k = rows[k + 1]; /* rows world k holds: r_k <= S (twin: <= r_0) */
    /* a twin starts as a copy of base, then its changed columns are set */
    if (g->base)
      memcpy(blk, g->base, (size_t)r_k * ld * sizeof(float));
    else
      base_rows_put(blk, ld, x->base, n, rows[0], r_k);
    for (uint32_t q = 0; q < (n + 63) / 64; q++) /* set bits of the mask, ascending */
      for (uint64_t m = set[q]; m; m &= m - 1) {
        uint32_t j = q * 64 + (uint32_t)__builtin_ctzll(m);
        int ti = !is_do ? -1 : c == 1 ? (j == t ? 0 : -1) : tc_frame_target_index(ts, c, j);
        if (ti >= 0) {
          col_fill(blk + j, ld, vs[ti], r_k);
        } else {
          col_put(blk + j, ld, col, r_k);
          col += 4 * (size_t)r_k;
        }
      }
    if (r_k < s_n) memset(blk + (size_t)r_k * ld, 0, (size_t)(s_n - r_k) * ld * sizeof(float)); /* past its count */
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
  if ((rc = tc_frame_buf_grow(&d->buf, &d->buf_cap, h->decoded_bytes)) != TWINCACHE_OK)
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
    if ((rc = tc_frame_buf_grow(&d->tmp, &d->tmp_cap, floats * 4)) != TWINCACHE_OK)
      return tc_error_set(rc, "frame: out of memory");
    tc_frame_planes_join(d->tmp, x->base, floats);
    x->cols = d->tmp + (x->cols - x->base);
    x->base = d->tmp;
  }
  return TWINCACHE_OK;
}

int twincache_frame_decode(twincache_dctx *d, const void *src, size_t size, twincache_graph *g) {
  if (!d || !src || !g) return tc_error_set(TWINCACHE_EINVAL, "twincache_frame_decode: NULL argument");
  tc_frame_hdr h;
  tc_sections x;
  int rc = tc_frame_header_read(src, size, &h);
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
  int rc = tc_frame_header_read(src, size, &h);
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
  v->world_rows = d->rows;
  return TWINCACHE_OK;
}

void twincache_frame_view_base_rows(const twincache_frame_view *v, float *dst, uint32_t ld) {
  base_rows_put(dst, ld, v->base, v->n_nodes, v->world_rows ? v->world_rows[0] : v->n_samples, v->n_samples);
}

