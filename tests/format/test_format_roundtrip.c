/* Round trip of every encoder path: linear/MLP, do/shift, standardised or
 * not, K = all nodes and a subset, padded rows (ld > N), N = 1, S = 1, both
 * encodings (FAST, SMALL) with byte planes on and off, NULL arrays skipped on
 * decode, chunk records, and the version-1 golden frames (tf_golden_v1.h). */
#include "tf_common.h"
#include "tf_golden_v1.h"
#include "tf_golden_v2.h"
#include "tf_golden_v3.h"

/* The encoders: FAST (the default), SMALL, each plain and with byte planes. */
enum { N_ENC = TF_N_ENC };
static twincache_cctx *encs[N_ENC];
static const char *const *enc_names = tf_enc_names;
static twincache_cctx *cc; /* encs[0] */
static twincache_dctx *dc;

/* Encodes a graph sampled from sp (capacity cap_n nodes so ld = cap_n) and
 * decodes it into a poisoned graph of a different ld; compares bit-exactly. */
static void roundtrip(const tf_spec *sp, uint32_t cap_n) {
  twincache_graph *src = twincache_graph_alloc(cap_n, sp->s, sp->k ? sp->k : 1, sp->mlp ? 4 : 0);
  twincache_graph *dst = twincache_graph_alloc(cap_n + 3, sp->s, sp->k ? sp->k : 1, 4);
  TC_REQUIRE(src && dst);
  tf_sample(src, sp);
  size_t cap = twincache_frame_bound(sp->n, sp->s, sp->k, src->n_hidden), written = 0;
  uint8_t *buf = malloc(cap);
  TC_REQUIRE(buf);
  for (int e = 0; e < N_ENC; e++) {
    TC_CHECK_RC(twincache_frame_encode(encs[e], src, buf, cap, &written), 0);
    TC_CHECK(written <= cap);
    TC_CHECK(tc_load_u16(buf + 4) == TWINCACHE_FORMAT_VERSION_OF(src->flags));
    uint64_t index = 0;
    uint32_t n = 0, s = 0, k = 0, h = 9;
    TC_CHECK_RC(twincache_frame_peek(buf, written, &index, &n, &s, &k, &h), 0);
    TC_CHECK(index == sp->index && n == sp->n && s == sp->s && k == sp->k && h == src->n_hidden);
    tf_graph_poison(dst);
    TC_CHECK_RC(twincache_frame_decode(dc, buf, written, dst), 0);
    if (!tf_graph_same(src, dst)) {
      fprintf(stderr, "mismatch: n=%u s=%u k=%u mlp=%d kinds=%d std=%d cap=%u encoding=%s\n", sp->n,
              sp->s, sp->k, sp->mlp, sp->kinds, sp->standardize, cap_n, enc_names[e]);
      tc_test_count_failure();
    }
    /* decoding again into the same buffers gives the same bytes */
    TC_CHECK_RC(twincache_frame_decode(dc, buf, written, dst), 0);
    TC_CHECK(tf_graph_same(src, dst));
    /* a frame re-encoded from the decoded graph is byte-identical */
    uint8_t *again = malloc(cap);
    size_t written2 = 0;
    TC_REQUIRE(again);
    TC_CHECK_RC(twincache_frame_encode(encs[e], dst, again, cap, &written2), 0);
    TC_CHECK(written2 == written && memcmp(buf, again, written) == 0);
    free(again);
  }
  twincache_graph_free(src);
  twincache_graph_free(dst);
  free(buf);
}

/* Decoding with only inter (base NULL) or only base still rebuilds rows. */
static void partial_arrays(void) {
  tf_spec sp = {.seed = 5, .index = 77, .n = 9, .s = 16, .k = 9, .kinds = 2, .edge_p = 0.4};
  twincache_graph *src = twincache_graph_alloc(9, 16, 9, 0);
  twincache_graph *dst = twincache_graph_alloc(12, 16, 9, 0);
  TC_REQUIRE(src && dst);
  tf_sample(src, &sp);
  size_t cap = twincache_frame_bound(9, 16, 9, 0), written;
  uint8_t *buf = malloc(cap);
  TC_REQUIRE(buf);
  TC_CHECK_RC(twincache_frame_encode(cc, src, buf, cap, &written), 0);
  TC_CHECK_RC(twincache_frame_decode(dc, buf, written, dst), 0);
  TC_REQUIRE(tf_graph_same(src, dst));
  float *ref = malloc(4 * (size_t)9 * 16 * 12);
  TC_REQUIRE(ref);
  memcpy(ref, dst->inter, 4 * (size_t)9 * 16 * 12);
  float *base = dst->base;
  dst->base = NULL; /* rows of the twins must not depend on base being asked for */
  memset(dst->inter, 0xff, 4 * (size_t)9 * 16 * 12);
  TC_CHECK_RC(twincache_frame_decode(dc, buf, written, dst), 0);
  TC_CHECK(memcmp(ref, dst->inter, 4 * (size_t)9 * 16 * 12) == 0);
  dst->base = base;
  float *inter = dst->inter;
  uint8_t *adj = dst->adj;
  dst->inter = NULL;
  dst->adj = NULL;
  TC_CHECK_RC(twincache_frame_decode(dc, buf, written, dst), 0);
  dst->inter = inter;
  dst->adj = adj;
  /* capacities too small: ETOOBIG, nothing read out of bounds */
  twincache_graph *tiny = twincache_graph_alloc(8, 16, 9, 0);
  TC_REQUIRE(tiny);
  TC_CHECK_RC(twincache_frame_decode(dc, buf, written, tiny), TWINCACHE_ETOOBIG);
  tiny->cap_nodes = 9;
  TC_CHECK_RC(twincache_frame_decode(dc, buf, written, tiny), TWINCACHE_ETOOBIG); /* ld 8 < 9 */
  twincache_graph_free(tiny);
  tiny = twincache_graph_alloc(9, 15, 9, 0);
  TC_REQUIRE(tiny);
  TC_CHECK_RC(twincache_frame_decode(dc, buf, written, tiny), TWINCACHE_ETOOBIG);
  twincache_graph_free(tiny);
  tiny = twincache_graph_alloc(9, 16, 8, 0);
  TC_REQUIRE(tiny);
  TC_CHECK_RC(twincache_frame_decode(dc, buf, written, tiny), TWINCACHE_ETOOBIG);
  twincache_graph_free(tiny);
  /* destination too small for the encoder */
  TC_CHECK_RC(twincache_frame_encode(cc, src, buf, 10, &written), TWINCACHE_ETOOBIG);
  TC_CHECK_RC(twincache_frame_encode(cc, src, buf, 60, &written), TWINCACHE_ETOOBIG);
  free(ref);
  free(buf);
  twincache_graph_free(src);
  twincache_graph_free(dst);
}

/* A chunk of several graphs, built by both add paths; every slot decodes. */
static void chunk_roundtrip(void) {
  enum { C = 6 };
  twincache_chunk_builder *b = twincache_chunk_builder_create();
  twincache_graph *src[C], *dst = twincache_graph_alloc(10, 32, 10, 4);
  TC_REQUIRE(b && dst);
  twincache_chunk_builder_reset(b, 1000);
  for (int i = 0; i < C; i++) {
    tf_spec sp = {.seed = 9, .index = 1000 + i, .n = 2 + i, .s = 32, .k = 2 + i, .mlp = i == 3,
                  .kinds = i % 7, .standardize = i % 2, .edge_p = 0.5};
    src[i] = twincache_graph_alloc(10, 32, 10, 4);
    TC_REQUIRE(src[i]);
    tf_sample(src[i], &sp);
    if (i % 2 == 0) {
      TC_CHECK_RC(twincache_chunk_builder_add(b, cc, src[i]), 0);
    } else {
      size_t cap = twincache_frame_bound(sp.n, sp.s, sp.k, 4), written;
      uint8_t *f = malloc(cap);
      TC_REQUIRE(f);
      TC_CHECK_RC(twincache_frame_encode(cc, src[i], f, cap, &written), 0);
      TC_CHECK_RC(twincache_chunk_builder_add_frame(b, f, written), 0);
      free(f);
    }
  }
  TC_CHECK(twincache_chunk_builder_count(b) == C);
  /* a graph out of sequence is refused */
  TC_CHECK_RC(twincache_chunk_builder_add(b, cc, src[0]), TWINCACHE_EINVAL);
  const void *data;
  size_t size;
  TC_CHECK_RC(twincache_chunk_builder_finish(b, &data, &size), 0);
  twincache_chunk_view v;
  TC_CHECK_RC(twincache_chunk_parse(data, size, &v), 0);
  TC_CHECK(v.first_index == 1000 && v.count == C);
  for (uint32_t i = 0; i < C; i++) {
    const void *f;
    size_t fs;
    TC_CHECK_RC(twincache_chunk_frame(&v, i, &f, &fs), 0);
    tf_graph_poison(dst);
    TC_CHECK_RC(twincache_frame_decode(dc, f, fs, dst), 0);
    TC_CHECK(tf_graph_same(src[i], dst));
  }
  const void *f;
  size_t fs;
  TC_CHECK_RC(twincache_chunk_frame(&v, C, &f, &fs), TWINCACHE_EINVAL);
  twincache_chunk_builder_reset(b, 5);
  TC_CHECK(twincache_chunk_builder_count(b) == 0);
  TC_CHECK_RC(twincache_chunk_builder_finish(b, &data, &size), TWINCACHE_EINVAL); /* empty */
  for (int i = 0; i < C; i++) twincache_graph_free(src[i]);
  twincache_graph_free(dst);
  twincache_chunk_builder_free(b);
}

/* Version-1 frames (written before the FAST encoding) and version-2 frames
 * (zstd's checksum, before version 3's header checksum) still decode, bit
 * for bit; a chunk record holds frames of its own version only. */
static void golden_v1(void) {
  tf_spec sp = {.seed = 42, .index = 5, .n = 5, .s = 8, .k = 5, .kinds = 2, .standardize = 1, .edge_p = 0.5};
  twincache_graph *src = twincache_graph_alloc(5, 8, 5, 0), *dst = twincache_graph_alloc(7, 8, 5, 0);
  twincache_chunk_builder *b = twincache_chunk_builder_create();
  TC_REQUIRE(src && dst && b);
  tf_sample(src, &sp);
  const uint8_t *frames[4] = {tf_golden_v1_plain, tf_golden_v1_shuffle, tf_golden_v2_plain,
                              tf_golden_v2_shuffle};
  size_t sizes[4] = {sizeof tf_golden_v1_plain, sizeof tf_golden_v1_shuffle,
                     sizeof tf_golden_v2_plain, sizeof tf_golden_v2_shuffle};
  for (int i = 0; i < 4; i++) { /* versions 1 and 2 (tf_golden_v2.h), 40-byte headers */
    TC_CHECK(tc_load_u16(frames[i] + 4) == (i < 2 ? 1 : 2));
    TC_CHECK(tc_load_u16(frames[i] + 6) == 40);
    uint64_t index = 0;
    uint32_t n = 0, s = 0, k = 0, h = 9;
    TC_CHECK_RC(twincache_frame_peek(frames[i], sizes[i], &index, &n, &s, &k, &h), 0);
    TC_CHECK(index == 5 && n == 5 && s == 8 && k == 5 && h == 0);
    tf_graph_poison(dst);
    TC_CHECK_RC(twincache_frame_decode(dc, frames[i], sizes[i], dst), 0);
    TC_CHECK(tf_graph_same(src, dst));
  }
  /* a record never mixes layouts: the builder refuses a v1 or v2 frame,
   * and a frame whose version differs from its record's is refused when
   * taken from it (the same record with the version field patched) */
  size_t cap = twincache_frame_bound(5, 8, 5, 0), w;
  uint8_t *f = malloc(cap);
  TC_REQUIRE(f);
  for (int i = 0; i < 4; i++) {
    twincache_chunk_builder_reset(b, 5);
    TC_CHECK_RC(twincache_chunk_builder_add_frame(b, frames[i], sizes[i]), TWINCACHE_EINVAL);
  }
  twincache_chunk_builder_reset(b, 5);
  src->index = 5;
  TC_CHECK_RC(twincache_frame_encode(encs[0], src, f, cap, &w), 0);
  TC_CHECK_RC(twincache_chunk_builder_add_frame(b, f, w), 0);
  const void *data;
  size_t size;
  twincache_chunk_view v;
  TC_CHECK_RC(twincache_chunk_builder_finish(b, &data, &size), 0);
  uint8_t *rec = malloc(size);
  TC_REQUIRE(rec);
  memcpy(rec, data, size);
  TC_CHECK_RC(twincache_chunk_parse(rec, size, &v), 0);
  const void *fr;
  size_t fs;
  TC_CHECK_RC(twincache_chunk_frame(&v, 0, &fr, &fs), 0);
  v.version = 2; /* as if the record said 2 */
  TC_CHECK_RC(twincache_chunk_frame(&v, 0, &fr, &fs), TWINCACHE_ECORRUPT);
  free(rec);
  free(f);
  twincache_chunk_builder_free(b);
  twincache_graph_free(src);
  twincache_graph_free(dst);
}

/* Version-3 frames (byte 27 reserved) decode with family UNKNOWN; version-4
 * frames carry the family in byte 27 and decode it, through both decoders;
 * a fresh frame is version 4 with its graph's family. */
static void golden_v3_v4(void) {
  tf_spec sp = {.seed = 42, .index = 5, .n = 5, .s = 8, .k = 5, .kinds = 2, .standardize = 1, .edge_p = 0.5};
  twincache_graph *src = twincache_graph_alloc(5, 8, 5, 0), *dst = twincache_graph_alloc(7, 8, 5, 0);
  TC_REQUIRE(src && dst);
  TC_CHECK(src->family == TWINCACHE_FAMILY_UNKNOWN); /* what alloc sets */
  tf_sample(src, &sp);
  const uint8_t *frames[4] = {tf_golden_v3_plain, tf_golden_v3_shuffle, tf_golden_v4_plain,
                              tf_golden_v4_shuffle};
  size_t sizes[4] = {sizeof tf_golden_v3_plain, sizeof tf_golden_v3_shuffle, sizeof tf_golden_v4_plain,
                     sizeof tf_golden_v4_shuffle};
  for (int i = 0; i < 4; i++) {
    TC_CHECK(tc_load_u16(frames[i] + 4) == (i < 2 ? 3 : 4));
    TC_CHECK(tc_load_u16(frames[i] + 6) == 48);
    tf_graph_poison(dst);
    dst->family = 77;
    TC_CHECK_RC(twincache_frame_decode(dc, frames[i], sizes[i], dst), 0);
    TC_CHECK(tf_graph_same(src, dst));
    TC_CHECK(dst->family == (i < 2 ? TWINCACHE_FAMILY_UNKNOWN : TWINCACHE_FAMILY_SBM));
    twincache_frame_view v;
    TC_CHECK_RC(twincache_frame_decode_view(dc, frames[i], sizes[i], &v), 0);
    TC_CHECK(v.family == dst->family);
  }
  size_t cap = twincache_frame_bound(5, 8, 5, 0), w;
  uint8_t *f = malloc(cap);
  TC_REQUIRE(f);
  for (int fam = 0; fam < TWINCACHE_FAMILY_COUNT; fam++) {
    src->family = (uint8_t)fam;
    TC_CHECK_RC(twincache_frame_encode(encs[0], src, f, cap, &w), 0);
    TC_CHECK(tc_load_u16(f + 4) == TWINCACHE_FORMAT_VERSION_TWIN && TWINCACHE_FORMAT_VERSION_TWIN == 4);
    TC_CHECK(f[27] == fam);
    TC_CHECK_RC(twincache_frame_decode(dc, f, w, dst), 0);
    TC_CHECK(dst->family == fam);
  }
  src->family = TWINCACHE_FAMILY_COUNT; /* no such family: refused */
  TC_CHECK_RC(twincache_frame_encode(encs[0], src, f, cap, &w), TWINCACHE_EINVAL);
  free(f);
  twincache_graph_free(src);
  twincache_graph_free(dst);
}

/* The encoding option: FAST is the default, SMALL is the level's entropy
 * coding (smaller on sampled floats), bad values are refused. */
static void encoding_option(void) {
  tf_spec sp = {.seed = 11, .index = 3, .n = 10, .s = 64, .k = 10, .edge_p = 0.3};
  twincache_graph *src = twincache_graph_alloc(10, 64, 10, 0);
  twincache_cctx *c = twincache_cctx_create(1);
  TC_REQUIRE(src && c);
  tf_sample(src, &sp);
  size_t cap = twincache_frame_bound(10, 64, 10, 0), w_default, w_fast, w_small;
  uint8_t *f = malloc(cap), *f2 = malloc(cap);
  TC_REQUIRE(f && f2);
  TC_CHECK_RC(twincache_frame_encode(c, src, f, cap, &w_default), 0);
  TC_CHECK_RC(twincache_cctx_set_encoding(c, TWINCACHE_ENCODING_SMALL), 0);
  TC_CHECK_RC(twincache_frame_encode(c, src, f2, cap, &w_small), 0);
  TC_CHECK(w_small < w_default); /* Huffman-coded mantissas are smaller */
  TC_CHECK_RC(twincache_cctx_set_encoding(c, TWINCACHE_ENCODING_FAST), 0);
  TC_CHECK_RC(twincache_frame_encode(c, src, f2, cap, &w_fast), 0);
  TC_CHECK(w_fast == w_default && memcmp(f, f2, w_fast) == 0); /* the default is FAST */
  TC_CHECK_RC(twincache_cctx_set_encoding(c, 2), TWINCACHE_EINVAL);
  TC_CHECK_RC(twincache_cctx_set_encoding(c, -1), TWINCACHE_EINVAL);
  TC_CHECK_RC(twincache_cctx_set_encoding(NULL, TWINCACHE_ENCODING_FAST), TWINCACHE_EINVAL);
  TC_CHECK_RC(twincache_frame_encode(c, src, f2, cap, &w_fast), 0); /* unchanged by refusals */
  TC_CHECK(w_fast == w_default && memcmp(f, f2, w_fast) == 0);
  free(f);
  free(f2);
  twincache_cctx_free(c);
  twincache_graph_free(src);
}

/* twincache_frame_bound on the worst cases it promises to cover: a complete
 * DAG (every edge i -> j, i < j) of N up to 256 with random, incompressible
 * floats, and every world of one extreme kind. A buffer of exactly the
 * bound's bytes must hold the frame (ETOOBIG otherwise), and it decodes.
 *   soft_sink: every world soft on the sink (N-1 parents: a full soft
 *              block each), S = 0: the soft section is all the payload;
 *   shift_root: every world shifts the root (all N columns stored);
 *   mixed_soft: a mixed graph (MLP units on every node but 0, which is
 *              linear) with H = 64, every world soft on the sink. */
enum { WORST_SOFT_SINK, WORST_SHIFT_ROOT, WORST_MIXED_SOFT };
static void bound_case(int which, uint32_t n, uint32_t s_n, uint32_t k_n, uint32_t h_n) {
  twincache_graph *g = twincache_graph_alloc(n, s_n, k_n, h_n);
  TC_REQUIRE(g);
  tc_rng r;
  tc_rng_init(&r, 91, (uint64_t)which);
  g->index = 3;
  g->n_nodes = n;
  g->n_samples = s_n;
  g->n_inter = k_n;
  g->n_hidden = h_n;
  g->mechanism = which == WORST_MIXED_SOFT ? TWINCACHE_MECH_MIXED : TWINCACHE_MECH_LINEAR;
  g->noise = TWINCACHE_NOISE_GAUSS;
  g->flags = 0;
  uint32_t P = twincache_soft_stride(n, h_n, g->mechanism), stride = h_n * n + 2 * h_n;
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t j = 0; j < n; j++) {
      g->adj[i * g->ld_adj + j] = i < j;
      /* a block node's edges carry no linear weight */
      int lin = which != WORST_MIXED_SOFT || j == 0;
      g->weight[i * g->ld_adj + j] = i < j && lin ? (float)tc_rng_range(&r, -2.0, 2.0) : 0.0f;
    }
  if (which == WORST_MIXED_SOFT) {
    for (uint32_t j = 0; j < n; j++) {
      g->node_mech[j] = j == 0 ? TWINCACHE_MECH_LINEAR : TWINCACHE_MECH_MLP;
      for (uint32_t q = 0; q < stride; q++) /* W1 (H,N): parents i < j only */
        g->mlp[(size_t)j * stride + q] =
            j == 0 || (q < h_n * n && q % n >= j) ? 0.0f : (float)tc_rng_range(&r, -1.0, 1.0);
    }
  }
  for (uint32_t j = 0; j < n; j++) g->noise_scale[j] = (float)tc_rng_range(&r, 0.5, 1.5);
  for (size_t q = 0; q < (size_t)s_n * g->ld; q++) g->base[q] = (float)tc_rng_normal(&r);
  for (uint32_t k = 0; k < k_n; k++) {
    uint32_t t = which == WORST_SHIFT_ROOT ? 0 : n - 1;
    g->target[k] = (uint16_t)t;
    g->kind[k] = which == WORST_SHIFT_ROOT ? TWINCACHE_SHIFT : TWINCACHE_INTER_SOFT;
    g->value[k] = which == WORST_SHIFT_ROOT ? (float)tc_rng_range(&r, 1.0, 3.0) : 0.0f;
    g->n_targets[k] = 1;
    for (uint32_t q = 0; which != WORST_SHIFT_ROOT && q < P; q++) /* the sink's parents: all i < n-1 */
      g->soft[(size_t)k * P + q] = q < (h_n ? h_n * n : n) && q % n == n - 1 ? 0.0f
                                   : q >= (h_n ? h_n * n + 2 * h_n : n) ? 0.0f
                                                                        : (float)tc_rng_range(&r, -2.0, 2.0);
    for (uint32_t s = 0; s < s_n; s++) /* the changed columns differ, the rest are base's */
      for (uint32_t j = 0; j < n; j++) {
        int changed = which == WORST_SHIFT_ROOT || j == t;
        float b = g->base[(size_t)s * g->ld + j];
        g->inter[((size_t)k * s_n + s) * g->ld + j] = changed ? (float)tc_rng_normal(&r) : b;
      }
  }
  size_t bound = twincache_frame_bound(n, s_n, k_n, h_n), written = 0;
  uint8_t *buf = malloc(bound);
  TC_REQUIRE(buf);
  int rc = twincache_frame_encode(cc, g, buf, bound, &written);
  TC_CHECK(rc == TWINCACHE_OK, "worst case %d (n=%u s=%u k=%u h=%u): encode into the bound's %zu bytes: %s (%s)",
           which, n, s_n, k_n, h_n, bound, twincache_strerror(rc), twincache_last_error());
  if (rc == TWINCACHE_OK) {
    twincache_graph *out = twincache_graph_alloc(n, s_n, k_n, h_n);
    TC_REQUIRE(out);
    TC_CHECK_RC(twincache_frame_decode(dc, buf, written, out), TWINCACHE_OK);
    printf("frame_bound worst case %d: n=%u s=%u k=%u h=%u: frame %zu of %zu bytes\n", which, n, s_n, k_n, h_n,
           written, bound);
    twincache_graph_free(out);
  }
  free(buf);
  twincache_graph_free(g);
}

static void bound_worst_cases(void) {
  bound_case(WORST_SOFT_SINK, 256, 0, 256, 0);
  bound_case(WORST_SOFT_SINK, 256, 2, 64, 0);
  bound_case(WORST_SHIFT_ROOT, 256, 3, 64, 0);
  bound_case(WORST_MIXED_SOFT, 96, 0, 64, 64);
}

int main(void) {
  tf_encoders_create(encs, 3);
  cc = encs[0];
  dc = twincache_dctx_create();
  TC_REQUIRE(dc);
  bound_worst_cases();
  uint64_t index = 0;
  for (int mlp = 0; mlp < 4; mlp++) /* linear, MLP, RFF, mixed */
    for (int kinds = 0; kinds < 7; kinds++)
      for (int stdz = 0; stdz < 2; stdz++) {
        /* K = all nodes, ld == N */
        tf_spec sp = {.seed = 42, .index = index++, .n = 8, .s = 64, .k = 8, .mlp = mlp,
                      .kinds = kinds, .standardize = stdz, .edge_p = 0.3};
        roundtrip(&sp, 8);
        /* K a subset, ld > N (padding zeroed), a denser graph */
        sp.index = index++;
        sp.k = 3;
        sp.edge_p = 0.7;
        roundtrip(&sp, 13);
        /* multi-target worlds (1..4 targets, soft ones single), every node a target */
        sp.index = index++;
        sp.k = 8;
        sp.multi = 4;
        roundtrip(&sp, 9);
        /* N = 1 and S = 1 */
        tf_spec one = {.seed = 1, .index = index++, .n = 1, .s = 1, .k = 1, .mlp = mlp,
                       .kinds = kinds, .standardize = stdz, .edge_p = 0.3};
        roundtrip(&one, 1);
        one.index = index++;
        one.s = 5;
        roundtrip(&one, 4);
        /* S = 1 with more nodes (standardisation then has std = 1) */
        tf_spec s1 = {.seed = 3, .index = index++, .n = 10, .s = 1, .k = 10, .mlp = mlp,
                      .kinds = kinds, .standardize = stdz, .edge_p = 0.5};
        roundtrip(&s1, 10);
      }
  /* larger shapes: N not a multiple of 8 across byte boundaries, big index */
  tf_spec big = {.seed = 7, .index = UINT64_MAX - 3, .n = 67, .s = 40, .k = 20, .kinds = 2, .edge_p = 0.1};
  roundtrip(&big, 70);
  tf_spec big_multi = big; /* multi-target worlds across the 64-node word boundary */
  big_multi.index = 12345;
  big_multi.kinds = 4;
  big_multi.multi = 16;
  roundtrip(&big_multi, 70);
  tf_spec full = {.seed = 8, .index = 12, .n = 16, .s = 8, .k = 16, .kinds = 1, .edge_p = 1.0};
  roundtrip(&full, 16);
  tf_spec none = {.seed = 8, .index = 13, .n = 16, .s = 8, .k = 16, .kinds = 0, .edge_p = 0.0};
  roundtrip(&none, 16);
  for (int mlp = 0; mlp < 4; mlp++) { /* heteroscedastic noise with every mechanism kind */
    tf_spec het = {.seed = 31, .index = 20 + (uint64_t)mlp, .n = 9, .s = 16, .k = 4, .mlp = mlp, .kinds = 2,
                   .standardize = mlp & 1, .edge_p = 0.5, .hetero = 1};
    roundtrip(&het, 11);
    het.index = 30 + (uint64_t)mlp; /* with every intervention kind (noise, soft) in turn */
    het.kinds = 6;
    roundtrip(&het, 11);
    het.index = 40 + (uint64_t)mlp; /* and multi-target do/shift/noise worlds */
    het.kinds = 4;
    het.multi = 3;
    roundtrip(&het, 11);
  }
  tf_spec nok = {.seed = 8, .index = 14, .n = 9, .s = 20, .k = 0, .mlp = 1, .standardize = 1, .edge_p = 0.4};
  roundtrip(&nok, 9); /* no interventions at all */
  partial_arrays();
  chunk_roundtrip();
  golden_v1();
  golden_v3_v4();
  encoding_option();
  for (int e = 0; e < N_ENC; e++) twincache_cctx_free(encs[e]);
  twincache_dctx_free(dc);
  twincache_cctx_free(NULL);
  twincache_dctx_free(NULL);
  twincache_graph_free(NULL);
  twincache_chunk_builder_free(NULL);
  return tc_test_finish("test_format_roundtrip");
}
