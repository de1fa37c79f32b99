/* test_loader_compact_fill — tc_compact_decode_graph, the loader's compact
 * fill from a frame view, on frames made here (no cache): every encoding
 * (FAST/SMALL, plain and byte-plane shuffled), do/shift/mixed, K = N and
 * K < N, graphs smaller than the batch's N, N > 64 (masks of several
 * words). Each position of the batch, expanded by the rule of
 * twincache_loader.h (twin row = base row, do() column = value, then the
 * stored columns of (g,k) written over), equals the dense decode of its
 * frame bit for bit, padding zero. Frames that do not fit the batch are
 * refused (ETOOBIG beyond the capacities, ECORRUPT for a wrong index or
 * sample count or a graph larger than the batch) and leave its column count
 * as it was; a retried position is rewritten whole. */
#include "tc_compact.h"
#include "tf_common.h"

enum { N_ENC = TF_N_ENC };
static twincache_cctx *encs[N_ENC];
static twincache_dctx *dc, *dv;

static void *alloc64(size_t bytes, void *user) {
  (void)user;
  return aligned_alloc(64, (bytes + 63) & ~(size_t)63);
}
static void free64(void *p, void *user) {
  (void)user;
  free(p);
}

/* Encodes the graph of sp with encoder e into *frame (malloc'd); the dense
 * decode of the same frame into *dense (allocated with capacity cap_n). */
static size_t make_frame(const tf_spec *sp, int e, uint8_t **frame, twincache_graph **dense) {
  twincache_graph *g = twincache_graph_alloc(sp->n, sp->s, sp->k ? sp->k : 1, sp->mlp ? 4 : 0);
  TC_REQUIRE(g);
  tf_sample(g, sp);
  size_t cap = twincache_frame_bound(sp->n, sp->s, sp->k, g->n_hidden), w = 0;
  *frame = malloc(cap);
  *dense = twincache_graph_alloc(sp->n, sp->s, sp->k ? sp->k : 1, 4);
  TC_REQUIRE(*frame && *dense);
  TC_REQUIRE(twincache_frame_encode(encs[e], g, *frame, cap, &w) == 0);
  TC_REQUIRE(twincache_frame_decode(dc, *frame, w, *dense) == 0);
  twincache_graph_free(g);
  return w;
}

/* 1 when position pos of cb holds graph g (its dense decode), expanded. */
static int position_matches(const twincache_compact_batch *cb, uint32_t pos, const twincache_graph *g) {
  const twincache_compact_layout *L = &cb->layout;
  size_t N = L->nodes, K = L->inter, S = L->samples, W = L->mask_words;
  uint32_t n = g->n_nodes, k_n = g->n_inter, bad = 0;
  float *row = malloc(sizeof(float) * N);
  TC_REQUIRE(row);
  const float *base = cb->base + (size_t)pos * S * N;
  bad += cb->n_nodes[pos] != n || cb->n_inter[pos] != k_n || cb->graph_id[pos] != g->index;
  for (size_t s = 0; s < S; s++)
    for (size_t j = 0; j < N; j++) bad += !tf_f32_eq(base[s * N + j], j < n ? g->base[s * g->ld + j] : 0.0f);
  for (size_t i = 0; i < N; i++)
    for (size_t j = 0; j < N; j++)
      bad += cb->adj[((size_t)pos * N + i) * N + j] != (i < n && j < n ? g->adj[i * g->ld_adj + j] : 0);
  for (size_t k = 0; k < K; k++) {
    size_t gk = (size_t)pos * K + k;
    const uint64_t *mask = cb->col_mask + gk * W;
    if (k >= k_n) {
      for (size_t q = 0; q < W; q++) bad += mask[q] != 0;
      bad += cb->kind[gk] != 0 || cb->target[gk] != 0 || !tf_f32_eq(cb->value[gk], 0.0f);
      continue;
    }
    bad += cb->kind[gk] != g->kind[k] || cb->target[gk] != g->target[k] || !tf_f32_eq(cb->value[gk], g->value[k]);
    for (size_t j = n; j < 64 * W; j++) bad += (mask[j >> 6] >> (j & 63)) & 1; /* no bit past node n-1 */
    for (size_t s = 0; s < S; s++) {
      memcpy(row, base + s * N, sizeof(float) * N);
      if (cb->kind[gk] == TWINCACHE_DO) row[cb->target[gk]] = cb->value[gk];
      uint64_t c = cb->col_first[gk];
      for (size_t j = 0; j < N; j++)
        if ((mask[j >> 6] >> (j & 63)) & 1) {
          if (c >= cb->n_cols) return 0;
          row[j] = cb->cols[c++ * S + s];
        }
      const float *twin = g->inter + ((size_t)k * S + s) * g->ld;
      for (size_t j = 0; j < N; j++) bad += !tf_f32_eq(row[j], j < n ? twin[j] : 0.0f);
    }
  }
  free(row);
  return bad == 0;
}

/* One batch layout: fills batches of its G positions from frames of the
 * given specs (cycling through them and the encoders), checks each. */
static void fill_batches(uint32_t G, uint32_t N, uint32_t K, uint32_t S, const tf_spec *specs, size_t n_specs) {
  twincache_batch_layout L;
  twincache_batch b;
  memset(&b, 0, sizeof b);
  TC_REQUIRE(twincache_batch_layout_init(&L, G, N, K, S) == 0);
  TC_REQUIRE(tc_compact_slot_open(&b, &L, alloc64, NULL) == 0);
  twincache_compact_batch *cb = b.compact;
  twincache_graph caps = {.cap_nodes = N, .cap_samples = S, .cap_inter = K, .cap_hidden = 4};
  twincache_graph **dense = calloc(G, sizeof *dense);
  TC_REQUIRE(dense);
  size_t at = 0;
  for (int round = 0; round < 4; round++) {
    uint64_t cols = 0;
    for (uint32_t pos = 0; pos < G; pos++, at++) {
      tf_spec sp = specs[at % n_specs];
      sp.index = 100 + at;
      uint8_t *frame;
      twincache_graph_free(dense[pos]);
      size_t size = make_frame(&sp, (int)(at % N_ENC), &frame, &dense[pos]);
      TC_CHECK_RC(tc_compact_decode_graph(dv, frame, size, sp.index, &caps, cb, pos), 0);
      TC_CHECK(cb->n_cols >= cols && cb->used_bytes == twincache_compact_used_bytes(&cb->layout, cb->n_cols));
      cols = cb->n_cols;
      free(frame);
    }
    for (uint32_t pos = 0; pos < G; pos++)
      if (!position_matches(cb, pos, dense[pos])) {
        fprintf(stderr, "G=%u N=%u K=%u S=%u round %d: position %u (n=%u k=%u) differs\n", G, N, K, S,
                round, pos, dense[pos]->n_nodes, dense[pos]->n_inter);
        tc_test_count_failure();
      }
  }
  for (uint32_t pos = 0; pos < G; pos++) twincache_graph_free(dense[pos]);
  free(dense);
  tc_compact_slot_close(&b, free64, NULL);
}

/* Frames that do not fit: refused, the column count unchanged; a retry of
 * the position then fills it whole. */
static void refusals(void) {
  const uint32_t G = 3, N = 8, K = 8, S = 6;
  twincache_batch_layout L;
  twincache_batch b;
  memset(&b, 0, sizeof b);
  TC_REQUIRE(twincache_batch_layout_init(&L, G, N, K, S) == 0);
  TC_REQUIRE(tc_compact_slot_open(&b, &L, alloc64, NULL) == 0);
  twincache_compact_batch *cb = b.compact;
  twincache_graph caps = {.cap_nodes = N, .cap_samples = S, .cap_inter = K, .cap_hidden = 4};
  twincache_graph wide = {.cap_nodes = 20, .cap_samples = 20, .cap_inter = 20, .cap_hidden = 4};
  tf_spec ok = {.seed = 3, .index = 50, .n = 8, .s = S, .k = 8, .kinds = 2, .edge_p = 0.4};
  twincache_graph *g0, *g1, *gx;
  uint8_t *f0, *f1, *fx;
  size_t s0 = make_frame(&ok, 1, &f0, &g0);
  ok.index = 51;
  size_t s1 = make_frame(&ok, 0, &f1, &g1);
  TC_CHECK_RC(tc_compact_decode_graph(dv, f0, s0, 50, &caps, cb, 0), 0);
  uint64_t cols = cb->n_cols;
  size_t used = cb->used_bytes;
  TC_CHECK(cols > 0);
  /* the wrong index */
  TC_CHECK_RC(tc_compact_decode_graph(dv, f1, s1, 52, &caps, cb, 1), TWINCACHE_ECORRUPT);
  TC_CHECK(strstr(twincache_last_error(), "frame: graph 51 of") && strstr(twincache_last_error(), "expects graph 52"),
           "\"%s\"", twincache_last_error());
  TC_CHECK(cb->n_cols == cols && cb->used_bytes == used);
  const struct {
    tf_spec sp;
    const twincache_graph *caps;
    int want;
  } bad[] = {
      {{.seed = 4, .index = 51, .n = 9, .s = S, .k = 3, .edge_p = 0.3}, &caps, TWINCACHE_ETOOBIG},  /* n > N */
      {{.seed = 4, .index = 51, .n = 9, .s = S, .k = 3, .edge_p = 0.3}, &wide, TWINCACHE_ECORRUPT}, /* n > N, within capacity */
      {{.seed = 5, .index = 51, .n = 5, .s = S + 1, .k = 3, .edge_p = 0.3}, &caps, TWINCACHE_ETOOBIG},
      {{.seed = 5, .index = 51, .n = 5, .s = S - 1, .k = 3, .edge_p = 0.3}, &caps, TWINCACHE_ECORRUPT},
      {{.seed = 6, .index = 51, .n = 7, .s = S, .k = 7, .edge_p = 0.3}, &caps, 0},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    size_t sx = make_frame(&bad[i].sp, (int)i % N_ENC, &fx, &gx);
    int want = bad[i].want;
    TC_CHECK_RC(tc_compact_decode_graph(dv, fx, sx, 51, bad[i].caps, cb, 1), want);
    if (want != 0) TC_CHECK(cb->n_cols == cols && cb->used_bytes == used);
    else TC_CHECK(position_matches(cb, 1, gx));
    free(fx);
    twincache_graph_free(gx);
  }
  /* k > K: a batch of K = 4 */
  twincache_batch_layout L4;
  twincache_batch b4;
  memset(&b4, 0, sizeof b4);
  TC_REQUIRE(twincache_batch_layout_init(&L4, 2, N, 4, S) == 0);
  TC_REQUIRE(tc_compact_slot_open(&b4, &L4, alloc64, NULL) == 0);
  TC_CHECK_RC(tc_compact_decode_graph(dv, f1, s1, 51, &caps, b4.compact, 0), TWINCACHE_ECORRUPT);
  twincache_graph caps4 = caps;
  caps4.cap_inter = 4;
  TC_CHECK_RC(tc_compact_decode_graph(dv, f1, s1, 51, &caps4, b4.compact, 0), TWINCACHE_ETOOBIG);
  TC_CHECK(strstr(twincache_last_error(), "exceed the cache's caps") != NULL, "\"%s\"", twincache_last_error());
  tc_compact_slot_close(&b4, free64, NULL);
  /* a damaged frame */
  f1[s1 / 2] ^= 0x40;
  int rc = tc_compact_decode_graph(dv, f1, s1, 51, &caps, cb, 2);
  TC_CHECK(rc == TWINCACHE_ECORRUPT || rc == TWINCACHE_ECHECKSUM);
  f1[s1 / 2] ^= 0x40;
  /* the retry of position 1 left position 0 intact and filled 1 and 2 */
  uint64_t before = cb->n_cols;
  TC_CHECK_RC(tc_compact_decode_graph(dv, f1, s1, 51, &caps, cb, 2), 0);
  TC_CHECK(cb->n_cols > before);
  TC_CHECK(position_matches(cb, 0, g0));
  TC_CHECK(position_matches(cb, 2, g1));
  /* position 0 starts a new batch */
  TC_CHECK_RC(tc_compact_decode_graph(dv, f0, s0, 50, &caps, cb, 0), 0);
  TC_CHECK(cb->n_cols == cols && cb->used_bytes == used);
  free(f0);
  free(f1);
  twincache_graph_free(g0);
  twincache_graph_free(g1);
  tc_compact_slot_close(&b, free64, NULL);
}

int main(void) {
  tf_encoders_create(encs, 1);
  dc = twincache_dctx_create();
  dv = twincache_dctx_create();
  TC_REQUIRE(dc && dv);
  const tf_spec small[] = {
      {.seed = 1, .n = 10, .s = 9, .k = 10, .kinds = 0, .edge_p = 0.3},
      {.seed = 2, .n = 4, .s = 9, .k = 4, .kinds = 1, .edge_p = 0.5},
      {.seed = 3, .n = 7, .s = 9, .k = 3, .kinds = 2, .mlp = 1, .standardize = 1, .edge_p = 0.4},
      {.seed = 4, .n = 1, .s = 9, .k = 1, .kinds = 0, .edge_p = 0.5},
      {.seed = 5, .n = 9, .s = 9, .k = 0, .kinds = 0, .edge_p = 0.5},
      {.seed = 10, .n = 8, .s = 9, .k = 8, .kinds = 4, .mlp = 1, .edge_p = 0.4}, /* do/shift/noise */
  };
  fill_batches(6, 10, 10, 9, small, sizeof small / sizeof small[0]);
  const tf_spec large[] = {
      {.seed = 6, .n = 70, .s = 3, .k = 70, .kinds = 0, .edge_p = 0.06},
      {.seed = 7, .n = 64, .s = 3, .k = 20, .kinds = 2, .edge_p = 0.08},
      {.seed = 8, .n = 66, .s = 3, .k = 33, .kinds = 1, .edge_p = 0.05},
  };
  fill_batches(3, 70, 70, 3, large, sizeof large / sizeof large[0]);
  fill_batches(2, 130, 8, 2, (const tf_spec[]){{.seed = 9, .n = 130, .s = 2, .k = 8, .kinds = 2, .edge_p = 0.03}}, 1);
  refusals();
  for (int e = 0; e < N_ENC; e++) twincache_cctx_free(encs[e]);
  twincache_dctx_free(dc);
  twincache_dctx_free(dv);
  return tc_test_finish("test_loader_compact_fill");
}
