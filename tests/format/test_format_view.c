/* test_format_view — twincache_frame_decode_view against twincache_frame_decode:
 * for every encoder path (linear/MLP, do/shift/mixed, standardised or not,
 * K = N and K < N, N = 1, N > 64 so sets span several words, N = 256,
 * S = 1, both encodings with byte planes on and off, the version-1 golden
 * frames), every section of the view equals what the dense decode wrote,
 * bit for bit: the stored columns are exactly the descendants of each target
 * minus a do() target, in increasing node order, and twin world k is base
 * with them written over (and the do() column set to the value). Damaged
 * frames are refused by both decoders with the same status, and a view
 * stays valid until the next decode on its context. */
#include "tf_common.h"
#include "tf_golden_v1.h"
#include "tf_golden_v2.h"

enum { N_ENC = TF_N_ENC };
static twincache_cctx *encs[N_ENC];
static const char *const *enc_names = tf_enc_names;
static twincache_dctx *dc, *dv;

static float f32_at(const uint8_t *p) {
  float v;
  memcpy(&v, p, 4);
  return v;
}

static int set_has(const uint8_t *set, uint32_t j) { return (set[j >> 3] >> (j & 7)) & 1; }

/* 1 when the view v equals the dense decode g of the same frame. */
static int view_matches(const twincache_frame_view *v, const twincache_graph *g) {
  uint32_t n = g->n_nodes, S = g->n_samples, K = g->n_inter, R = (n + 7) / 8, bad = 0;
  uint8_t desc[TWINCACHE_MAX_NODES];
  if (v->index != g->index || v->n_nodes != n || v->n_samples != S || v->n_inter != K ||
      v->n_hidden != g->n_hidden || v->mechanism != g->mechanism || v->noise != g->noise ||
      v->flags != g->flags || v->set_bytes != R)
    return 0;
  /* adjacency sets and the edge weights, row-major */
  uint32_t e = 0;
  for (uint32_t i = 0; i < n; i++) {
    for (uint32_t j = 0; j < 8 * R; j++) {
      int edge = j < n && g->adj[(size_t)i * g->ld_adj + j];
      bad += set_has(v->adj + (size_t)i * R, j) != edge;
      if (edge) bad += e >= v->n_edges || !tf_f32_eq(f32_at(v->weight + 4 * (size_t)e++), g->weight[(size_t)i * g->ld_adj + j]);
    }
  }
  bad += e != v->n_edges;
  if (g->mechanism == TWINCACHE_MECH_MLP)
    bad += !v->mlp || memcmp(v->mlp, g->mlp, 4 * (size_t)n * (g->n_hidden * n + 2 * g->n_hidden)) != 0;
  else
    bad += v->mlp != NULL;
  bad += memcmp(v->noise_scale, g->noise_scale, 4 * (size_t)n) != 0;
  if (g->flags & TWINCACHE_GRAPH_STANDARDIZED)
    bad += !v->norm_mean || !v->norm_std || memcmp(v->norm_mean, g->norm_mean, 4 * (size_t)n) != 0 ||
           memcmp(v->norm_std, g->norm_std, 4 * (size_t)n) != 0;
  else
    bad += v->norm_mean != NULL || v->norm_std != NULL;
  /* base (N, S) column-major, and as rows with padding */
  for (uint32_t j = 0; j < n; j++)
    for (uint32_t s = 0; s < S; s++)
      bad += !tf_f32_eq(f32_at(v->base + 4 * ((size_t)j * S + s)), g->base[(size_t)s * g->ld + j]);
  uint32_t ld = n + 3;
  float *rows = malloc(sizeof(float) * S * ld);
  TC_REQUIRE(rows);
  memset(rows, 0xff, sizeof(float) * S * ld);
  twincache_frame_view_base_rows(v, rows, ld);
  for (uint32_t s = 0; s < S; s++)
    for (uint32_t j = 0; j < ld; j++)
      bad += !tf_f32_eq(rows[(size_t)s * ld + j], j < n ? g->base[(size_t)s * g->ld + j] : 0.0f);
  free(rows);
  /* interventions, descendant sets, stored columns */
  uint64_t c = 0;
  for (uint32_t k = 0; k < K; k++) {
    uint32_t t = g->target[k], stored = 0;
    bad += v->target[k] != t || v->kind[k] != g->kind[k] || !tf_f32_eq(v->value[k], g->value[k]);
    twincache_graph_descendants(g->adj, n, g->ld_adj, t, desc);
    const float *twin = g->inter + (size_t)k * S * g->ld;
    for (uint32_t j = 0; j < 8 * R; j++) {
      int in = j < n && desc[j];
      bad += set_has(v->desc + (size_t)k * R, j) != in;
      if (!in) {
        if (j < n) /* not stored: the twin's column is base's */
          for (uint32_t s = 0; s < S; s++) bad += !tf_f32_eq(twin[(size_t)s * g->ld + j], g->base[(size_t)s * g->ld + j]);
        continue;
      }
      if (j == t && g->kind[k] == TWINCACHE_DO) { /* not stored: the value */
        for (uint32_t s = 0; s < S; s++) bad += !tf_f32_eq(twin[(size_t)s * g->ld + j], g->value[k]);
        continue;
      }
      if (c >= v->n_cols) return 0;
      for (uint32_t s = 0; s < S; s++)
        bad += !tf_f32_eq(f32_at(v->cols + 4 * (c * S + s)), twin[(size_t)s * g->ld + j]);
      c++;
      stored++;
    }
    bad += v->n_cols_of[k] != stored;
  }
  bad += c != v->n_cols;
  return bad == 0;
}

/* Encodes a sampled graph with every encoder and checks the view of each. */
static void check_spec(const tf_spec *sp) {
  twincache_graph *src = twincache_graph_alloc(sp->n, sp->s, sp->k ? sp->k : 1, sp->mlp ? 4 : 0);
  twincache_graph *dst = twincache_graph_alloc(sp->n, sp->s, sp->k ? sp->k : 1, 4);
  TC_REQUIRE(src && dst);
  tf_sample(src, sp);
  size_t cap = twincache_frame_bound(sp->n, sp->s, sp->k, src->n_hidden), written = 0;
  uint8_t *buf = malloc(cap);
  TC_REQUIRE(buf);
  for (int e = 0; e < N_ENC; e++) {
    TC_CHECK_RC(twincache_frame_encode(encs[e], src, buf, cap, &written), 0);
    tf_graph_poison(dst);
    TC_CHECK_RC(twincache_frame_decode(dc, buf, written, dst), 0);
    twincache_frame_view v;
    memset(&v, 0xff, sizeof v);
    TC_CHECK_RC(twincache_frame_decode_view(dv, buf, written, &v), 0);
    if (!view_matches(&v, dst)) {
      fprintf(stderr, "view differs: n=%u s=%u k=%u mlp=%d kinds=%d std=%d encoding=%s\n", sp->n,
              sp->s, sp->k, sp->mlp, sp->kinds, sp->standardize, enc_names[e]);
      tc_test_count_failure();
    }
  }
  twincache_graph_free(src);
  twincache_graph_free(dst);
  free(buf);
}

/* The version-1 and version-2 golden frames give the same view as their dense decode. */
static void golden_v1(void) {
  const uint8_t *frames[4] = {tf_golden_v1_plain, tf_golden_v1_shuffle, tf_golden_v2_plain,
                              tf_golden_v2_shuffle};
  size_t sizes[4] = {sizeof tf_golden_v1_plain, sizeof tf_golden_v1_shuffle,
                     sizeof tf_golden_v2_plain, sizeof tf_golden_v2_shuffle};
  twincache_graph *dst = twincache_graph_alloc(5, 8, 5, 0);
  TC_REQUIRE(dst);
  for (int i = 0; i < 4; i++) {
    twincache_frame_view v;
    tf_graph_poison(dst);
    TC_CHECK_RC(twincache_frame_decode(dc, frames[i], sizes[i], dst), 0);
    TC_CHECK_RC(twincache_frame_decode_view(dv, frames[i], sizes[i], &v), 0);
    TC_CHECK(view_matches(&v, dst));
  }
  twincache_graph_free(dst);
}

/* Damaged frames: both decoders give the same status; NULL arguments are
 * EINVAL; a view survives decodes on other contexts and is replaced by the
 * next decode on its own. */
static void damaged(void) {
  tf_spec sp = {.seed = 9, .index = 3, .n = 12, .s = 16, .k = 12, .kinds = 2, .edge_p = 0.3};
  twincache_graph *src = twincache_graph_alloc(12, 16, 12, 0), *dst = twincache_graph_alloc(12, 16, 12, 0);
  TC_REQUIRE(src && dst);
  tf_sample(src, &sp);
  size_t cap = twincache_frame_bound(12, 16, 12, 0), w = 0;
  uint8_t *buf = malloc(cap), *bad = malloc(cap);
  TC_REQUIRE(buf && bad);
  for (int e = 0; e < N_ENC; e++) {
    TC_CHECK_RC(twincache_frame_encode(encs[e], src, buf, cap, &w), 0);
    twincache_frame_view v;
    for (size_t at = 0; at < w; at += 1 + at / 8) {
      memcpy(bad, buf, w);
      bad[at] ^= 0x21;
      int rd = twincache_frame_decode(dc, bad, w, dst), rv = twincache_frame_decode_view(dv, bad, w, &v);
      if (rd != rv) {
        fprintf(stderr, "%s: byte %zu flipped: decode %s, view %s\n", enc_names[e], at,
                twincache_strerror(rd), twincache_strerror(rv));
        tc_test_count_failure();
      }
      TC_CHECK(rv != TWINCACHE_OK);
    }
    for (size_t cut = 0; cut < w; cut += 1 + cut / 4) /* truncated */
      TC_CHECK_RC(twincache_frame_decode_view(dv, buf, cut, &v), twincache_frame_decode(dc, buf, cut, dst));
  }
  twincache_frame_view v;
  TC_CHECK_RC(twincache_frame_decode_view(NULL, buf, w, &v), TWINCACHE_EINVAL);
  TC_CHECK_RC(twincache_frame_decode_view(dv, NULL, w, &v), TWINCACHE_EINVAL);
  TC_CHECK_RC(twincache_frame_decode_view(dv, buf, w, NULL), TWINCACHE_EINVAL);
  /* lifetime: decoding with dc leaves dv's view intact */
  TC_CHECK_RC(twincache_frame_encode(encs[1], src, buf, cap, &w), 0);
  TC_CHECK_RC(twincache_frame_decode_view(dv, buf, w, &v), 0);
  TC_CHECK_RC(twincache_frame_decode(dc, buf, w, dst), 0);
  TC_CHECK(view_matches(&v, dst));
  twincache_graph_free(src);
  twincache_graph_free(dst);
  free(buf);
  free(bad);
}

int main(void) {
  tf_encoders_create(encs, 3);
  dc = twincache_dctx_create();
  dv = twincache_dctx_create();
  TC_REQUIRE(dc && dv);
  const tf_spec specs[] = {
      {.seed = 1, .index = 0, .n = 10, .s = 64, .k = 10, .kinds = 0, .edge_p = 0.3},
      {.seed = 2, .index = 7, .n = 9, .s = 13, .k = 4, .kinds = 1, .edge_p = 0.4},  /* K < N, shift */
      {.seed = 3, .index = 8, .n = 8, .s = 5, .k = 8, .kinds = 2, .mlp = 1, .standardize = 1, .edge_p = 0.5},
      {.seed = 4, .index = 9, .n = 1, .s = 1, .k = 1, .kinds = 0, .edge_p = 0.5},
      {.seed = 5, .index = 10, .n = 6, .s = 3, .k = 0, .kinds = 0, .edge_p = 0.5}, /* no intervention */
      {.seed = 6, .index = 11, .n = 50, .s = 16, .k = 50, .kinds = 0, .edge_p = 0.1},
      {.seed = 7, .index = 12, .n = 64, .s = 4, .k = 20, .kinds = 2, .edge_p = 0.1},
      {.seed = 8, .index = 13, .n = 65, .s = 4, .k = 65, .kinds = 0, .edge_p = 0.08}, /* 2 words */
      {.seed = 9, .index = 14, .n = 130, .s = 3, .k = 40, .kinds = 2, .edge_p = 0.05},
      {.seed = 10, .index = 15, .n = 256, .s = 2, .k = 256, .kinds = 1, .edge_p = 0.02},
  };
  for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) check_spec(&specs[i]);
  golden_v1();
  damaged();
  for (int e = 0; e < N_ENC; e++) twincache_cctx_free(encs[e]);
  twincache_dctx_free(dc);
  twincache_dctx_free(dv);
  return tc_test_finish("test_format_view");
}
