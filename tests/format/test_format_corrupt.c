/* Hostile bytes: truncated (every length), bit-flipped (every bit of small
 * frames), random garbage, hand-made absurd headers and well-compressed but
 * inconsistent payloads. Every decode returns an error code or, where a flip
 * lands in bytes that do not matter, the original graph; never a crash (this
 * test runs under ASan in the sanitizer build). Chunk records likewise. */
#include <zstd.h>
#define XXH_INLINE_ALL /* the v3 payload checksum, computed here from its spec */
#include <xxhash.h>

#include "tf_common.h"
#include "tf_golden_v1.h"
#include "tf_golden_v2.h"
#include "tf_golden_v3.h"

static twincache_dctx *dc;
static ZSTD_CCtx *zc;
static twincache_graph *ref_g, *out_g;
static int accepted;

/* Decode must fail, or succeed with exactly the reference graph. */
static int decode_safe(const void *p, size_t n) {
  tf_graph_poison(out_g);
  int rc = twincache_frame_decode(dc, p, n, out_g);
  if (rc == 0) {
    accepted++;
    return tf_graph_same(ref_g, out_g);
  }
  return rc < 0 && strcmp(twincache_strerror(rc), "unknown twincache error") != 0;
}

/* The header's size: 48 bytes from version 3 (payload XXH3-64 at 36, FNV-1a
 * at 44), 40 before (FNV-1a at 36). */
static size_t header_bytes(const uint8_t *frame) { return tc_load_u16(frame + 6); }

/* Re-wraps a payload into a frame with a valid header and the payload
 * checksum its version asks for (version 3: XXH3 in the header; 1-2: zstd's). */
static size_t wrap(const uint8_t *frame, const void *payload, size_t psize, uint8_t *out, size_t cap) {
  size_t hb = header_bytes(frame);
  memcpy(out, frame, hb);
  /* zstd's own checksum exactly in versions 1-2 (40-byte headers) */
  TC_REQUIRE(!ZSTD_isError(ZSTD_CCtx_setParameter(zc, ZSTD_c_checksumFlag, hb == 40)));
  size_t z = ZSTD_compress2(zc, out + hb, cap - hb, payload, psize);
  TC_REQUIRE(!ZSTD_isError(z));
  tc_store_u32(out + 28, (uint32_t)psize);
  tc_store_u32(out + 32, (uint32_t)z);
  if (hb == 48) tc_store_u64(out + 36, (uint64_t)XXH3_64bits(payload, psize));
  tc_store_u32(out + hb - 4, tc_fnv1a32(out, hb - 4));
  return hb + z;
}

/* Sets a header field and fixes the header checksum (where the header's
 * size before the change puts it). */
static void header_set(uint8_t *h, int off, int width, uint32_t v) {
  size_t hb = header_bytes(h);
  if (width == 1) h[off] = (uint8_t)v;
  if (width == 2) tc_store_u16(h + off, (uint16_t)v);
  if (width == 4) tc_store_u32(h + off, v);
  tc_store_u32(h + hb - 4, tc_fnv1a32(h, hb - 4));
}

/* Section 7a (soft parameter blocks): a non-zero weight on a non-parent of
 * the target (here the target itself) is ECORRUPT in a decoded frame and
 * EINVAL to the encoder; the unchanged payload decodes. Linear, not
 * standardised, every world soft. */
static void soft_rules(uint8_t *frame, size_t cap, twincache_cctx *cc) {
  tf_spec sp = {.seed = 25, .index = 9, .n = 6, .s = 5, .k = 3, .kinds = 5, .edge_p = 0.5};
  tf_sample(ref_g, &sp);
  size_t size;
  TC_REQUIRE(twincache_frame_encode(cc, ref_g, frame, cap, &size) == 0);
  uint32_t dsize = tc_load_u32(frame + 28), csize = tc_load_u32(frame + 32);
  uint8_t *pay = malloc(dsize), *out = malloc(size + 4096);
  TC_REQUIRE(pay && out);
  TC_REQUIRE(ZSTD_decompress(pay, dsize, frame + header_bytes(frame), csize) == dsize);
  uint32_t n = sp.n, rb = (n + 7) / 8, k_n = sp.k, edges = 0;
  for (uint32_t i = 0; i < n * rb; i++) edges += (uint32_t)__builtin_popcount(pay[i]);
  uint8_t *soft = pay + n * rb + 4 * edges + 4 * n + 8 * k_n + k_n * rb; /* world 0's block */
  uint32_t t = ref_g->target[0];
  size_t m = wrap(frame, pay, dsize, out, size + 4096);
  TC_CHECK_RC(twincache_frame_decode(dc, out, m, out_g), 0);
  TC_CHECK(tf_graph_same(ref_g, out_g));
  uint8_t saved[4];
  memcpy(saved, soft + 4 * t, 4);
  tc_store_u32(soft + 4 * t, 0x3f800000u); /* 1.0f on the edge t -> t */
  m = wrap(frame, pay, dsize, out, size + 4096);
  TC_CHECK_RC(twincache_frame_decode(dc, out, m, out_g), TWINCACHE_ECORRUPT);
  tc_store_u32(soft + 4 * t, 0x80000000u); /* -0.0 is not +0.0 either */
  m = wrap(frame, pay, dsize, out, size + 4096);
  TC_CHECK_RC(twincache_frame_decode(dc, out, m, out_g), TWINCACHE_ECORRUPT);
  memcpy(soft + 4 * t, saved, 4);
  ref_g->soft[t] = 1.0f; /* the encoder's rule: row 0, entry t */
  TC_CHECK_RC(twincache_frame_encode(cc, ref_g, frame, cap, &size), TWINCACHE_EINVAL);
  ref_g->soft[t] = 0.0f;
  TC_CHECK_RC(twincache_frame_encode(cc, ref_g, frame, cap, &size), 0);
  free(pay);
  free(out);
}

/* One must-be-zero rule (FORMAT.md 3.2): the frame of ref_g, encoded, then
 * its payload's u32 at byte `at` set to `bits` and re-wrapped, is refused
 * by both decoders with a message naming `section`; unchanged it decodes. */
static void zero_rule(uint8_t *frame, size_t cap, twincache_cctx *cc, size_t at, uint32_t bits,
                      const char *section) {
  size_t size;
  TC_REQUIRE(twincache_frame_encode(cc, ref_g, frame, cap, &size) == 0);
  uint32_t dsize = tc_load_u32(frame + 28), csize = tc_load_u32(frame + 32);
  uint8_t *pay = malloc(dsize), *out = malloc(size + 4096);
  TC_REQUIRE(pay && out && at + 4 <= dsize);
  TC_REQUIRE(ZSTD_decompress(pay, dsize, frame + header_bytes(frame), csize) == dsize);
  size_t m = wrap(frame, pay, dsize, out, size + 4096);
  TC_CHECK_RC(twincache_frame_decode(dc, out, m, out_g), 0);
  TC_CHECK(tc_load_u32(pay + at) != bits, "%s: the byte poked is already %08x", section, bits);
  tc_store_u32(pay + at, bits);
  m = wrap(frame, pay, dsize, out, size + 4096);
  TC_CHECK_RC(twincache_frame_decode(dc, out, m, out_g), TWINCACHE_ECORRUPT);
  TC_CHECK(strstr(twincache_last_error(), section) != NULL, "want '%s' in: %s", section, twincache_last_error());
  twincache_frame_view v;
  TC_CHECK_RC(twincache_frame_decode_view(dc, out, m, &v), TWINCACHE_ECORRUPT);
  free(pay);
  free(out);
}

/* The values FORMAT.md says are +0.0 whatever they would mean: section-2
 * weights of edges into block-mechanism nodes, a mixed frame's linear node's
 * unit block, a soft world's value, an SCM-only standardised frame's
 * mean/std (0 and 1), and the tail of a mixed frame's linear soft target's
 * block. Each: ECORRUPT from the decoders naming its section, EINVAL from
 * the encoder. */
static void zero_rules(uint8_t *frame, size_t cap, twincache_cctx *cc) {
  size_t size;
  /* MLP: section 2 carries 4*E zero bytes */
  tf_spec sp = {.seed = 26, .index = 1, .n = 6, .s = 5, .k = 3, .mlp = 1, .edge_p = 0.6};
  tf_sample(ref_g, &sp);
  uint32_t n = sp.n, rb = (n + 7) / 8, h = ref_g->n_hidden, P = h * n + 2 * h, ld = ref_g->ld_adj, fi = n, fj = n;
  for (uint32_t i = 0; i < n && fi == n; i++) /* the first edge, row-major */
    for (uint32_t j = 0; j < n; j++)
      if (ref_g->adj[i * ld + j]) {
        fi = i;
        fj = j;
        break;
      }
  TC_REQUIRE(fi < n);
  zero_rule(frame, cap, cc, (size_t)n * rb, 0x3f800000u, "section 2 (edge weights)");
  ref_g->weight[fi * ld + fj] = 0.5f;
  TC_CHECK_RC(twincache_frame_encode(cc, ref_g, frame, cap, &size), TWINCACHE_EINVAL);
  /* mixed: node 0 is linear (tf_sample), its unit block all zero */
  sp = (tf_spec){.seed = 26, .index = 2, .n = 6, .s = 5, .k = 6, .mlp = 3, .kinds = 5, .edge_p = 0.6};
  tf_sample(ref_g, &sp);
  TC_REQUIRE(ref_g->node_mech[0] == TWINCACHE_MECH_LINEAR && ref_g->kind[0] == TWINCACHE_INTER_SOFT &&
             ref_g->target[0] == 0);
  uint32_t edges = 0;
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t j = 0; j < n; j++) edges += ref_g->adj[i * ld + j];
  size_t mlp_at = (size_t)n * rb + 4 * edges;
  zero_rule(frame, cap, cc, mlp_at + 4 * (size_t)h * n, 0x3f800000u, "section 3 (unit blocks)"); /* b1[0] */
  ref_g->mlp[h * n] = 0.5f;
  TC_CHECK_RC(twincache_frame_encode(cc, ref_g, frame, cap, &size), TWINCACHE_EINVAL);
  ref_g->mlp[h * n] = 0.0f;
  /* ... and its world 0, soft on linear node 0: n weights, then +0.0 */
  size_t soft_at = mlp_at + 4 * (size_t)n * P + n + 4 * n + 8 * 6 + 6 * rb;
  zero_rule(frame, cap, cc, soft_at + 4 * (size_t)n, 0x80000000u, "section 7a (soft mechanisms)");
  ref_g->soft[n] = 0.5f;
  TC_CHECK_RC(twincache_frame_encode(cc, ref_g, frame, cap, &size), TWINCACHE_EINVAL);
  /* a soft world's value (linear, every world soft) */
  sp = (tf_spec){.seed = 26, .index = 3, .n = 6, .s = 5, .k = 3, .kinds = 5, .edge_p = 0.6};
  tf_sample(ref_g, &sp);
  edges = 0;
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t j = 0; j < n; j++) edges += ref_g->adj[i * ld + j];
  zero_rule(frame, cap, cc, (size_t)n * rb + 4 * edges + 4 * n + 4, 0x3f800000u, "section 6 (interventions)");
  ref_g->value[0] = 1.0f;
  TC_CHECK_RC(twincache_frame_encode(cc, ref_g, frame, cap, &size), TWINCACHE_EINVAL);
  /* an SCM-only standardised frame: mean 0, std 1 */
  sp = (tf_spec){.seed = 26, .index = 4, .n = 6, .s = 0, .k = 3, .standardize = 1, .edge_p = 0.6};
  tf_sample(ref_g, &sp);
  for (uint32_t j = 0; j < n; j++) {
    ref_g->norm_mean[j] = 0.0f;
    ref_g->norm_std[j] = 1.0f;
  }
  edges = 0;
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t j = 0; j < n; j++) edges += ref_g->adj[i * ld + j];
  size_t norm_at = (size_t)n * rb + 4 * edges + 4 * n;
  zero_rule(frame, cap, cc, norm_at + 8, 0x3f000000u, "section 5 (normalisation)");          /* mean[2] */
  zero_rule(frame, cap, cc, norm_at + 4 * n + 4, 0x40000000u, "section 5 (normalisation)"); /* std[1] */
  ref_g->norm_std[1] = 2.0f;
  TC_CHECK_RC(twincache_frame_encode(cc, ref_g, frame, cap, &size), TWINCACHE_EINVAL);
}

/* Section 6a (extra targets): a repeated or out-of-range extra target, a
 * non-zero reserved byte, an a_k over 15 and a version-3 label are
 * ECORRUPT; the unchanged payload decodes. Linear, not standardised. */
static void multi_rules(uint8_t *frame, size_t cap, twincache_cctx *cc) {
  tf_spec sp = {.seed = 26, .index = 10, .n = 7, .s = 4, .k = 4, .kinds = 4, .edge_p = 0.5, .multi = 3};
  tf_sample(ref_g, &sp);
  size_t size;
  TC_REQUIRE(twincache_frame_encode(cc, ref_g, frame, cap, &size) == 0);
  TC_CHECK_RC(twincache_frame_decode(dc, frame, size, out_g), 0);
  TC_CHECK(tf_graph_same(ref_g, out_g));
  uint32_t dsize = tc_load_u32(frame + 28), csize = tc_load_u32(frame + 32);
  uint8_t *pay = malloc(dsize), *out = malloc(size + 4096);
  TC_REQUIRE(pay && out);
  TC_REQUIRE(ZSTD_decompress(pay, dsize, frame + header_bytes(frame), csize) == dsize);
  uint32_t n = sp.n, rb = (n + 7) / 8, k_n = sp.k, edges = 0;
  for (uint32_t i = 0; i < n * rb; i++) edges += (uint32_t)__builtin_popcount(pay[i]);
  uint8_t *rec = pay + n * rb + 4 * edges + 4 * n, *more = rec + 8 * k_n;
  TC_REQUIRE(rec[8 * 1 + 3] == 1, "world 1 has one extra target"); /* 1 + 1 % 3 targets */
  uint8_t saved[8];
  memcpy(saved, more, 8);
  const struct { int off; uint8_t v; } bad[] = {
      {0, 0}, /* the extra target replaced by ... (set below) */
      {2, 1}, {3, 1}, /* reserved bytes */
  };
  for (size_t c = 0; c < sizeof bad / sizeof bad[0]; c++) {
    if (c == 0) tc_store_u16(more, ref_g->target[1]); /* repeats the world's first target */
    else more[bad[c].off] = bad[c].v;
    size_t m = wrap(frame, pay, dsize, out, size + 4096);
    TC_CHECK_RC(twincache_frame_decode(dc, out, m, out_g), TWINCACHE_ECORRUPT);
    memcpy(more, saved, 8);
  }
  tc_store_u16(more, (uint16_t)n); /* out of range */
  size_t m = wrap(frame, pay, dsize, out, size + 4096);
  TC_CHECK_RC(twincache_frame_decode(dc, out, m, out_g), TWINCACHE_ECORRUPT);
  memcpy(more, saved, 8);
  rec[8 * 1 + 3] = TWINCACHE_MAX_TARGETS; /* 16 extra targets: more than a world may have */
  m = wrap(frame, pay, dsize, out, size + 4096);
  TC_CHECK_RC(twincache_frame_decode(dc, out, m, out_g), TWINCACHE_ECORRUPT);
  rec[8 * 1 + 3] = 1;
  m = wrap(frame, pay, dsize, out, size + 4096);
  TC_CHECK_RC(twincache_frame_decode(dc, out, m, out_g), 0);
  header_set(out, 4, 2, 3); /* labelled version 3: no extra targets then */
  header_set(out, 27, 1, 0);
  TC_CHECK_RC(twincache_frame_decode(dc, out, m, out_g), TWINCACHE_ECORRUPT);
  /* the encoder: a repeated target, too many targets */
  ref_g->more_target[1 * (TWINCACHE_MAX_TARGETS - 1)] = ref_g->target[1];
  TC_CHECK_RC(twincache_frame_encode(cc, ref_g, frame, cap, &size), TWINCACHE_EINVAL);
  ref_g->more_target[1 * (TWINCACHE_MAX_TARGETS - 1)] = (uint16_t)((ref_g->target[1] + 1) % n);
  ref_g->n_targets[1] = TWINCACHE_MAX_TARGETS + 1;
  TC_CHECK_RC(twincache_frame_encode(cc, ref_g, frame, cap, &size), TWINCACHE_EINVAL);
  ref_g->n_targets[1] = 2;
  TC_CHECK_RC(twincache_frame_encode(cc, ref_g, frame, cap, &size), 0);
  free(pay);
  free(out);
}

static void frame_attacks(const uint8_t *frame, size_t size, const char *what) {
  int bad = 0;
  accepted = 0;
  for (size_t n = 0; n < size; n++) bad += !decode_safe(frame, n) || accepted;
  if (bad) fprintf(stderr, "%s: %d truncations were not refused\n", what, bad);
  TC_CHECK(bad == 0);
  bad = 0;
  uint8_t *copy = malloc(size + 64);
  TC_REQUIRE(copy);
  for (size_t i = 0; i < size; i++)
    for (int bit = 0; bit < 8; bit++) {
      memcpy(copy, frame, size);
      copy[i] ^= (uint8_t)(1u << bit);
      bad += !decode_safe(copy, size);
    }
  if (bad) fprintf(stderr, "%s: %d bit flips decoded wrongly\n", what, bad);
  TC_CHECK(bad == 0);
  /* flips in the header or the payload checksum are always refused */
  size_t hb = header_bytes(frame);
  accepted = 0;
  for (size_t i = 0; i < hb; i++) {
    memcpy(copy, frame, size);
    copy[i] ^= 0x10;
    TC_CHECK(decode_safe(copy, size));
  }
  TC_CHECK(accepted == 0);
  memcpy(copy, frame, size);
  if (hb == 48) { /* version 3: the payload's XXH3 in the header, header FNV fixed */
    copy[36] ^= 1;
    tc_store_u32(copy + 44, tc_fnv1a32(copy, 44));
  } else {
    copy[size - 1] ^= 1; /* last byte of zstd's XXH64 content checksum */
  }
  TC_CHECK_RC(twincache_frame_decode(dc, copy, size, out_g), TWINCACHE_ECHECKSUM);
  /* bytes after the frame's end inside its slot are covered by no checksum:
   * refused by both decoders (peek reads the header only) */
  memcpy(copy, frame, size);
  memset(copy + size, 0xab, 64);
  TC_CHECK_RC(twincache_frame_decode(dc, copy, size + 64, out_g), TWINCACHE_ECORRUPT);
  TC_CHECK(strstr(twincache_last_error(), "64 bytes after its end") != NULL, "%s", twincache_last_error());
  twincache_frame_view tv;
  TC_CHECK_RC(twincache_frame_decode_view(dc, copy, size + 1, &tv), TWINCACHE_ECORRUPT);
  TC_CHECK_RC(twincache_frame_peek(copy, size + 64, NULL, NULL, NULL, NULL, NULL), TWINCACHE_OK);
  /* random garbage, with and without a valid magic */
  tc_rng r;
  tc_rng_init(&r, 99, 0);
  for (int t = 0; t < 2000; t++) {
    for (size_t i = 0; i < size; i++) copy[i] = (uint8_t)tc_rng_u64(&r);
    if (t % 2) memcpy(copy, frame, 8 + (size_t)(t % 33));
    TC_CHECK(decode_safe(copy, size));
  }
  free(copy);
}

static void absurd_headers(const uint8_t *frame, size_t size) {
  uint8_t *h = malloc(size + 4096);
  TC_REQUIRE(h);
  struct { int off, width; uint32_t v; int want; } cases[] = {
    {4, 2, 0, TWINCACHE_ECORRUPT},                              /* version 0 */
    {4, 2, TWINCACHE_FORMAT_VERSION + 1, TWINCACHE_EVERSION},   /* newer version */
    {4, 2, 0xffff, TWINCACHE_EVERSION},
    {6, 2, 41, TWINCACHE_ECORRUPT},                             /* header size */
    {16, 2, 0, TWINCACHE_ECORRUPT},                             /* N = 0 */
    {16, 2, 300, TWINCACHE_ECORRUPT},                           /* N > max */
    {16, 2, 0xffff, TWINCACHE_ECORRUPT},
    {18, 2, 0, TWINCACHE_ECORRUPT},                             /* S = 0 */
    {18, 2, 0xffff, TWINCACHE_ECORRUPT},                        /* S huge: sizes disagree */
    {20, 2, 257, TWINCACHE_ECORRUPT},                           /* K > max */
    {20, 2, 0xffff, TWINCACHE_ECORRUPT},
    {22, 1, 200, TWINCACHE_ECORRUPT},                           /* H on linear */
    {23, 1, 2, TWINCACHE_ECORRUPT},                             /* mechanism */
    {24, 1, TWINCACHE_NOISE_COUNT, TWINCACHE_ECORRUPT},         /* noise */
    {25, 1, 0x80, TWINCACHE_ECORRUPT},                          /* unknown graph flag */
    {26, 1, 0x80, TWINCACHE_ECORRUPT},                          /* unknown codec flag */
    {27, 1, TWINCACHE_FAMILY_COUNT, TWINCACHE_ECORRUPT},        /* v4: unknown family code */
    {27, 1, 254, TWINCACHE_ECORRUPT},
    {28, 4, 0xffffffffu, TWINCACHE_ECORRUPT},                   /* decoded size absurd */
    {28, 4, 0, TWINCACHE_ECORRUPT},
    {32, 4, 0xffffffffu, TWINCACHE_ECORRUPT},                   /* compressed > remaining */
    {32, 4, 0, TWINCACHE_ECORRUPT},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    memcpy(h, frame, size);
    header_set(h, cases[c].off, cases[c].width, cases[c].v);
    int rc = twincache_frame_decode(dc, h, size, out_g);
    if (rc != cases[c].want)
      fprintf(stderr, "absurd header case %zu (offset %d = %u): rc %d (%s)\n", c, cases[c].off,
              cases[c].v, rc, twincache_strerror(rc));
    TC_CHECK(rc == cases[c].want);
    rc = twincache_frame_peek(h, size, NULL, NULL, NULL, NULL, NULL);
    if (rc != cases[c].want) fprintf(stderr, "peek case %zu: rc %d\n", c, rc);
    TC_CHECK(rc == cases[c].want); /* all of these are visible in the header */
  }
  /* a valid-looking header asking for big dimensions with a tiny body */
  size_t hb = header_bytes(frame);
  memcpy(h, frame, hb);
  header_set(h, 16, 2, 256);
  header_set(h, 18, 2, 65535);
  header_set(h, 20, 2, 256);
  header_set(h, 28, 4, 0x7fffffffu);
  header_set(h, 32, 4, 16);
  memset(h + hb, 0, 16);
  twincache_graph *huge_cap = twincache_graph_alloc(256, 64, 1, 0);
  TC_REQUIRE(huge_cap);
  huge_cap->cap_samples = 65535; /* claims more than it has: never reached */
  huge_cap->cap_inter = 256;
  TC_CHECK(twincache_frame_decode(dc, h, hb + 16, huge_cap) < 0);
  TC_CHECK_RC(twincache_frame_decode(dc, h, hb + 16, out_g), TWINCACHE_ETOOBIG);
  twincache_graph_free(huge_cap);
  /* wrong magic, NULLs */
  memcpy(h, frame, size);
  h[0] = 'X';
  TC_CHECK_RC(twincache_frame_decode(dc, h, size, out_g), TWINCACHE_ECORRUPT);
  TC_CHECK_RC(twincache_frame_decode(dc, NULL, size, out_g), TWINCACHE_EINVAL);
  TC_CHECK_RC(twincache_frame_decode(NULL, frame, size, out_g), TWINCACHE_EINVAL);
  TC_CHECK_RC(twincache_frame_decode(dc, frame, size, NULL), TWINCACHE_EINVAL);
  TC_CHECK(twincache_frame_peek(NULL, 0, NULL, NULL, NULL, NULL, NULL) < 0);
  free(h);
}

/* Valid zstd with a checksum over a payload that breaks one rule each. */
static void payload_attacks(const uint8_t *frame, size_t size) {
  uint32_t dsize = tc_load_u32(frame + 28), csize = tc_load_u32(frame + 32);
  uint8_t *pay = malloc(dsize + 64), *out = malloc(size + 4096);
  size_t cap = size + 4096;
  TC_REQUIRE(pay && out);
  TC_REQUIRE(ZSTD_decompress(pay, dsize, frame + header_bytes(frame), csize) == dsize);
  uint32_t n = tc_load_u16(frame + 16), rb = (n + 7) / 8;
  /* unchanged payload re-wrapped decodes */
  size_t m = wrap(frame, pay, dsize, out, cap);
  TC_CHECK_RC(twincache_frame_decode(dc, out, m, out_g), 0);
  if (header_bytes(frame) == 48) {
    /* version 3: zstd has no checksum of its own; a valid zstd frame of a
     * changed payload under the original XXH3 is refused */
    pay[dsize - 1] ^= 1;
    m = wrap(frame, pay, dsize, out, cap);
    memcpy(out + 36, frame + 36, 8);
    tc_store_u32(out + 44, tc_fnv1a32(out, 44));
    TC_CHECK_RC(twincache_frame_decode(dc, out, m, out_g), TWINCACHE_ECHECKSUM);
    pay[dsize - 1] ^= 1;
  }
  /* sizes: one byte short / long (header adjusted, so only the parse sees it) */
  m = wrap(frame, pay, dsize - 1, out, cap);
  TC_CHECK_RC(twincache_frame_decode(dc, out, m, out_g), TWINCACHE_ECORRUPT);
  pay[dsize] = 0;
  m = wrap(frame, pay, dsize + 1, out, cap);
  TC_CHECK_RC(twincache_frame_decode(dc, out, m, out_g), TWINCACHE_ECORRUPT);
  /* header's decoded size differs from zstd's content size */
  m = wrap(frame, pay, dsize, out, cap);
  header_set(out, 28, 4, dsize + 4);
  TC_CHECK_RC(twincache_frame_decode(dc, out, m, out_g), TWINCACHE_ECORRUPT);
  /* a bit past node N-1 in an adjacency row (N = 7: bit 7 of byte 0) */
  uint8_t save = pay[0];
  pay[0] |= 0x80;
  m = wrap(frame, pay, dsize, out, cap);
  TC_CHECK_RC(twincache_frame_decode(dc, out, m, out_g), TWINCACHE_ECORRUPT);
  pay[0] = save;
  /* a self-loop on node 0; every other one-bit change of the adjacency */
  for (uint32_t i = 0; i < n * rb * 8; i++) {
    pay[i / 8] ^= (uint8_t)(1u << (i % 8));
    m = wrap(frame, pay, dsize, out, cap);
    TC_CHECK_RC(twincache_frame_decode(dc, out, m, out_g), TWINCACHE_ECORRUPT);
    pay[i / 8] ^= (uint8_t)(1u << (i % 8));
  }
  /* the interventions and masks follow adj, weights, noise (linear, no norm) */
  uint32_t edges = 0;
  for (uint32_t i = 0; i < n * rb; i++) edges += (uint32_t)__builtin_popcount(pay[i]);
  uint8_t *rec = pay + n * rb + 4 * edges + 4 * n;
  uint32_t k_n = tc_load_u16(frame + 20);
  uint8_t *masks = rec + 8 * k_n;
  uint8_t r0[8];
  memcpy(r0, rec, 8);
  tc_store_u16(rec, (uint16_t)n); /* target out of range */
  m = wrap(frame, pay, dsize, out, cap);
  TC_CHECK_RC(twincache_frame_decode(dc, out, m, out_g), TWINCACHE_ECORRUPT);
  memcpy(rec, r0, 8);
  rec[2] = TWINCACHE_INTER_KIND_COUNT; /* an unknown kind */
  m = wrap(frame, pay, dsize, out, cap);
  TC_CHECK_RC(twincache_frame_decode(dc, out, m, out_g), TWINCACHE_ECORRUPT);
  memcpy(rec, r0, 8);
  rec[3] = 1; /* pad */
  m = wrap(frame, pay, dsize, out, cap);
  TC_CHECK_RC(twincache_frame_decode(dc, out, m, out_g), TWINCACHE_ECORRUPT);
  memcpy(rec, r0, 8);
  for (uint32_t i = 0; i < k_n * rb * 8; i++) { /* every mask bit */
    masks[i / 8] ^= (uint8_t)(1u << (i % 8));
    m = wrap(frame, pay, dsize, out, cap);
    TC_CHECK_RC(twincache_frame_decode(dc, out, m, out_g), TWINCACHE_ECORRUPT);
    masks[i / 8] ^= (uint8_t)(1u << (i % 8));
  }
  m = wrap(frame, pay, dsize, out, cap);
  TC_CHECK_RC(twincache_frame_decode(dc, out, m, out_g), 0);
  TC_CHECK(tf_graph_same(ref_g, out_g));
  free(pay);
  free(out);
}

/* The payload checksum can never be missing or doubled (issue 19): zstd's
 * content checksum is required in versions 1-2 and refused in version 3;
 * a second (skippable) zstd frame after the first is refused. Each case is
 * a well-formed frame otherwise (header and payload checksums valid). */
static void zstd_frame_rules(const uint8_t *frame, size_t size) {
  uint32_t dsize = tc_load_u32(frame + 28), csize = tc_load_u32(frame + 32);
  size_t hb = header_bytes(frame), cap = size + 4096;
  uint8_t *pay = malloc(dsize), *out = malloc(cap);
  TC_REQUIRE(pay && out);
  TC_REQUIRE(ZSTD_decompress(pay, dsize, frame + hb, csize) == dsize);
  size_t m = wrap(frame, pay, dsize, out, cap);
  TC_CHECK_RC(twincache_frame_decode(dc, out, m, out_g), 0);
  /* the checksum flag the other way round: off in v1-2, on in v3 */
  TC_REQUIRE(!ZSTD_isError(ZSTD_CCtx_setParameter(zc, ZSTD_c_checksumFlag, hb != 40)));
  size_t z = ZSTD_compress2(zc, out + hb, cap - hb, pay, dsize);
  TC_REQUIRE(!ZSTD_isError(z));
  tc_store_u32(out + 32, (uint32_t)z);
  tc_store_u32(out + hb - 4, tc_fnv1a32(out, hb - 4));
  TC_CHECK_RC(twincache_frame_decode(dc, out, hb + z, out_g), TWINCACHE_ECORRUPT);
  twincache_frame_view view;
  TC_CHECK_RC(twincache_frame_decode_view(dc, out, hb + z, &view), TWINCACHE_ECORRUPT);
  /* a skippable frame (magic 0x184D2A50, 4-byte size, 4 bytes) appended */
  m = wrap(frame, pay, dsize, out, cap);
  static const uint8_t skip[12] = {0x50, 0x2a, 0x4d, 0x18, 4, 0, 0, 0, 1, 2, 3, 4};
  memcpy(out + m, skip, sizeof skip);
  z = m - hb + sizeof skip;
  tc_store_u32(out + 32, (uint32_t)z);
  tc_store_u32(out + hb - 4, tc_fnv1a32(out, hb - 4));
  TC_CHECK_RC(twincache_frame_decode(dc, out, hb + z, out_g), TWINCACHE_ECORRUPT);
  free(pay);
  free(out);
}

/* MLP frames: W1 columns of non-parents must be +0.0 (FORMAT.md 3.2); a
 * frame with one such weight non-zero (or -0.0) is refused, and the
 * encoder refuses to write one. frame: an MLP frame of ref_g. */
static void mlp_nonparent_rules(const uint8_t *frame, size_t size, twincache_cctx *cc) {
  uint32_t dsize = tc_load_u32(frame + 28), csize = tc_load_u32(frame + 32);
  uint32_t n = tc_load_u16(frame + 16), h = frame[22], rb = (n + 7) / 8;
  size_t hb = header_bytes(frame), cap = size + 4096;
  uint8_t *pay = malloc(dsize), *out = malloc(cap);
  TC_REQUIRE(pay && out && h > 0);
  TC_REQUIRE(ZSTD_decompress(pay, dsize, frame + hb, csize) == dsize);
  uint32_t edges = 0, pj = n, pi = n;
  for (uint32_t i = 0; i < n * rb; i++) edges += (uint32_t)__builtin_popcount(pay[i]);
  for (uint32_t j = 0; j < n && pj == n; j++) /* a non-parent i of some j */
    for (uint32_t i = 0; i < n; i++)
      if (!((pay[i * rb + j / 8] >> (j % 8)) & 1)) {
        pj = j;
        pi = i;
        break;
      }
  TC_REQUIRE(pj < n);
  uint8_t *mlp = pay + n * rb + 4 * edges;
  size_t at = 4 * ((size_t)pj * (h * n + 2 * h) + (size_t)(h - 1) * n + pi); /* W1[h-1][pi] of node pj */
  TC_REQUIRE(tc_load_u32(mlp + at) == 0);
  size_t m = wrap(frame, pay, dsize, out, cap);
  TC_CHECK_RC(twincache_frame_decode(dc, out, m, out_g), 0);
  static const uint32_t bad[2] = {0x3f800000u, 0x80000000u}; /* 1.0f, -0.0f */
  for (int b = 0; b < 2; b++) {
    tc_store_u32(mlp + at, bad[b]);
    m = wrap(frame, pay, dsize, out, cap);
    TC_CHECK_RC(twincache_frame_decode(dc, out, m, out_g), TWINCACHE_ECORRUPT);
  }
  tc_store_u32(mlp + at, 0);
  /* the encoder: the same weight set in the graph */
  float *w = ref_g->mlp + (size_t)pj * (h * n + 2 * h) + (size_t)(h - 1) * n + pi;
  *w = 0.5f;
  size_t written;
  TC_CHECK_RC(twincache_frame_encode(cc, ref_g, out, cap, &written), TWINCACHE_EINVAL);
  *w = 0.0f;
  TC_CHECK_RC(twincache_frame_encode(cc, ref_g, out, cap, &written), 0);
  free(pay);
  free(out);
}

static void chunk_attacks(const uint8_t *chunk, size_t size) {
  twincache_chunk_view v;
  int bad = 0;
  for (size_t n = 0; n < size; n++) bad += twincache_chunk_parse(chunk, n, &v) >= 0;
  TC_CHECK(bad == 0);
  uint8_t *c = malloc(size);
  TC_REQUIRE(c);
  /* flips: the header and table are checksummed; frames are checked on decode */
  bad = 0;
  for (size_t i = 0; i < size; i++)
    for (int bit = 0; bit < 8; bit++) {
      memcpy(c, chunk, size);
      c[i] ^= (uint8_t)(1u << bit);
      int rc = twincache_chunk_parse(c, size, &v);
      if (rc == 0) {
        bad += i < 28 + 4 * ((size_t)v.count + 1); /* header/table flips must be caught */
        for (uint32_t s = 0; s < v.count; s++) {
          const void *f;
          size_t fs;
          int crc = twincache_chunk_frame(&v, s, &f, &fs);
          if (crc != 0) { /* a flipped frame magic or version: refused here */
            bad += crc != TWINCACHE_ECORRUPT;
            continue;
          }
          tf_graph_poison(out_g);
          int frc = twincache_frame_decode(dc, f, fs, out_g);
          bad += frc > 0;
        }
      } else {
        bad += rc > 0;
      }
    }
  TC_CHECK(bad == 0);
  /* hand-made tables with a valid checksum */
  uint32_t count = tc_load_u32(chunk + 16);
  uint8_t *t = c + 28;
  /* frame 0 of exactly the frame header's size (48 bytes from version 3,
   * 40 before) has no zstd byte: ECORRUPT; one byte more parses (its
   * frame is then the decoder's to refuse) */
  uint32_t hb = tc_load_u16(chunk + 4) >= 3 ? 48u : 40u;
  struct { uint32_t slot, v; int rc; } cases[] = {
      {0, 1, TWINCACHE_ECORRUPT}, {1, 0, TWINCACHE_ECORRUPT}, {1, 0xffffffffu, TWINCACHE_ECORRUPT},
      {count, 0, TWINCACHE_ECORRUPT}, {1, 39, TWINCACHE_ECORRUPT}, {1, hb, TWINCACHE_ECORRUPT},
      {1, hb + 1, TWINCACHE_OK}};
  TC_REQUIRE(count >= 2 && tc_load_u32(t + 8) > hb + 1 + hb); /* frame 1 stays longer than a header */
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    memcpy(c, chunk, size);
    tc_store_u32(t + 4 * cases[k].slot, cases[k].v);
    tc_store_u32(c + 20, tc_fnv1a32(t, 4 * ((size_t)count + 1)));
    tc_store_u32(c + 24, tc_fnv1a32(c, 24));
    TC_CHECK_RC(twincache_chunk_parse(c, size, &v), cases[k].rc);
  }
  /* the tag trailer (versions >= 2): its checksum, or the tag under it, flipped */
  if (tc_load_u16(chunk + 4) >= 2) {
    memcpy(c, chunk, size);
    c[size - 1] ^= 0x04; /* the trailer's FNV-1a */
    TC_CHECK_RC(twincache_chunk_parse(c, size, &v), TWINCACHE_ECHECKSUM);
    memcpy(c, chunk, size);
    c[size - 12] ^= 0x01; /* the tag */
    TC_CHECK_RC(twincache_chunk_parse(c, size, &v), TWINCACHE_ECHECKSUM);
  }
  uint32_t counts[] = {0, count + 1, 0xffffffffu, TWINCACHE_MAX_CHUNK_GRAPHS + 1};
  for (size_t k = 0; k < 4; k++) {
    memcpy(c, chunk, size);
    tc_store_u32(c + 16, counts[k]);
    tc_store_u32(c + 24, tc_fnv1a32(c, 24));
    int rc = twincache_chunk_parse(c, size, &v); /* the table's checksum may differ first */
    TC_CHECK(rc == TWINCACHE_ECORRUPT || (k == 1 && rc == TWINCACHE_ECHECKSUM));
  }
  memcpy(c, chunk, size);
  tc_store_u16(c + 4, TWINCACHE_FORMAT_VERSION + 1);
  TC_CHECK_RC(twincache_chunk_parse(c, size, &v), TWINCACHE_EVERSION);
  memcpy(c, chunk, size);
  c[20] ^= 1;
  TC_CHECK_RC(twincache_chunk_parse(c, size, &v), TWINCACHE_ECHECKSUM);
  TC_CHECK_RC(twincache_chunk_parse(NULL, size, &v), TWINCACHE_EINVAL);
  TC_CHECK_RC(twincache_chunk_parse(chunk, size, &v), 0);
  const void *f;
  size_t fs;
  TC_CHECK_RC(twincache_chunk_frame(&v, v.count, &f, &fs), TWINCACHE_EINVAL);
  free(c);
}

/* Independent worlds (version 5, FORMAT.md 3.9): a frame whose worlds share
 * nothing with its base world encodes only with the INDEPENDENT flag (every
 * column stored), is version 5 and survives the attacks; the flag in a
 * version-4 frame, a version-5 frame whose masks are twin masks (flag set)
 * or all-node masks without the flag are ECORRUPT; a chunk refuses to mix
 * version-4 and version-5 frames. */
static void independent_rules(uint8_t *frame, size_t cap, twincache_cctx *cc) {
  tf_spec sp = {.seed = 27, .index = 11, .n = 7, .s = 6, .k = 5, .kinds = 4, .standardize = 1, .edge_p = 0.4,
                .multi = 2};
  tf_sample(ref_g, &sp);
  size_t size, tsize;
  uint8_t *twin = malloc(cap), *out = malloc(cap + 4096);
  TC_REQUIRE(twin && out);
  TC_REQUIRE(twincache_frame_encode(cc, ref_g, twin, cap, &tsize) == 0); /* the twin frame, version 4 */
  TC_CHECK(tc_load_u16(twin + 4) == TWINCACHE_FORMAT_VERSION_TWIN);
  /* every world's every column its own (not a do() target's: its value) */
  const uint32_t n = sp.n, ld = ref_g->ld;
  for (uint32_t k = 0; k < ref_g->n_inter; k++)
    for (uint32_t s = 0; s < sp.s; s++)
      for (uint32_t j = 0; j < n; j++) {
        float *x = &ref_g->inter[((size_t)k * sp.s + s) * ld + j];
        int fixed = 0;
        for (uint32_t i = 0; i < ref_g->n_targets[k] && ref_g->kind[k] == TWINCACHE_DO; i++)
          fixed |= (i ? ref_g->more_target[(size_t)k * (TWINCACHE_MAX_TARGETS - 1) + i - 1] : ref_g->target[k]) == j;
        if (!fixed) *x += 0.25f + (float)s;
      }
  TC_CHECK_RC(twincache_frame_encode(cc, ref_g, frame, cap, &size), TWINCACHE_EINVAL); /* not twin worlds */
  ref_g->flags |= TWINCACHE_GRAPH_INDEPENDENT;
  TC_REQUIRE(twincache_frame_encode(cc, ref_g, frame, cap, &size) == 0);
  TC_CHECK(tc_load_u16(frame + 4) == 5);
  TC_CHECK_RC(twincache_frame_decode(dc, frame, size, out_g), 0);
  TC_CHECK(tf_graph_same(ref_g, out_g), "an independent frame decodes to its graph");
  frame_attacks(frame, size, "independent");
  memcpy(out, frame, size);
  header_set(out, 4, 2, 4); /* the flag is version 5's */
  TC_CHECK_RC(twincache_frame_peek(out, size, NULL, NULL, NULL, NULL, NULL), TWINCACHE_ECORRUPT);
  memcpy(out, frame, size);
  header_set(out, 25, 1, out[25] & ~TWINCACHE_GRAPH_INDEPENDENT); /* all-node masks without the flag */
  TC_CHECK_RC(twincache_frame_decode(dc, out, size, out_g), TWINCACHE_ECORRUPT);
  memcpy(out, twin, tsize); /* twin masks with the flag */
  header_set(out, 4, 2, 5);
  header_set(out, 25, 1, out[25] | TWINCACHE_GRAPH_INDEPENDENT);
  TC_CHECK_RC(twincache_frame_decode(dc, out, tsize, out_g), TWINCACHE_ECORRUPT);
  /* one version per chunk record */
  twincache_chunk_builder *b = twincache_chunk_builder_create();
  TC_REQUIRE(b);
  twincache_chunk_builder_reset(b, 11);
  TC_CHECK_RC(twincache_chunk_builder_add_frame(b, twin, tsize), 0);
  ref_g->index = 12;
  TC_CHECK_RC(twincache_chunk_builder_add(b, cc, ref_g), TWINCACHE_EINVAL);
  twincache_chunk_builder_reset(b, 11);
  TC_CHECK_RC(twincache_chunk_builder_add_frame(b, frame, size), 0);
  TC_CHECK_RC(twincache_chunk_builder_add(b, cc, ref_g), 0);
  const void *chunk;
  size_t csize;
  twincache_chunk_view cv;
  TC_REQUIRE(twincache_chunk_builder_finish(b, &chunk, &csize) == 0);
  TC_CHECK_RC(twincache_chunk_parse(chunk, csize, &cv), 0);
  TC_CHECK(cv.version == 5 && cv.count == 2);
  twincache_chunk_builder_free(b);
  free(twin);
  free(out);
}

/* Observed data (version 5, FORMAT.md 3.11): an observed frame (graph
 * known or not, targets known or withheld) round-trips and survives the
 * attacks; each of its rules broken in the payload (a weight, a noise scale,
 * a kind, a value, an edge under NO_DAG, a target under NO_TARGETS) or the
 * header (OBSERVED without INDEPENDENT, NO_DAG alone, a mechanism) is
 * ECORRUPT, and the encoder refuses the same with EINVAL. */
static void observed_rules(uint8_t *frame, size_t cap, twincache_cctx *cc) {
  const unsigned extras[3] = {0, TWINCACHE_GRAPH_NO_DAG | TWINCACHE_GRAPH_NO_TARGETS, TWINCACHE_GRAPH_NO_TARGETS};
  size_t size;
  uint8_t *out = malloc(cap + 4096);
  TC_REQUIRE(out);
  for (int v = 0; v < 3; v++) {
    tf_spec sp = {.seed = 28 + (uint64_t)v, .index = 3, .n = 6, .s = 6, .k = 5, .kinds = 2, .edge_p = 0.4, .multi = 3};
    tf_sample(ref_g, &sp);
    tf_observe(ref_g, extras[v]);
    TC_REQUIRE(twincache_frame_encode(cc, ref_g, frame, cap, &size) == 0);
    TC_CHECK(tc_load_u16(frame + 4) == 5);
    TC_CHECK_RC(twincache_frame_decode(dc, frame, size, out_g), 0);
    TC_CHECK(tf_graph_same(ref_g, out_g), "observed frame %d decodes to its graph", v);
    twincache_frame_view view;
    TC_CHECK_RC(twincache_frame_decode_view(dc, frame, size, &view), 0);
    TC_CHECK(view.n_cols == (uint64_t)sp.k * sp.n, "every column of every world stored");
    frame_attacks(frame, size, v ? "observed, withheld" : "observed");
  }
  /* payload rules on a known graph with known targets: find the first edge
   * and the section offsets (1: N*R, 2: 4E, 4: 4N, 6: 8K) */
  tf_spec sp = {.seed = 28, .index = 3, .n = 6, .s = 6, .k = 5, .kinds = 2, .edge_p = 0.4};
  tf_sample(ref_g, &sp);
  tf_observe(ref_g, 0);
  uint32_t n = sp.n, rb = (n + 7) / 8, e = 0;
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t j = 0; j < n; j++) e += ref_g->adj[(size_t)i * ref_g->ld_adj + j] != 0;
  TC_REQUIRE(e > 0);
  size_t sec2 = (size_t)n * rb, sec4 = sec2 + 4 * (size_t)e, sec6 = sec4 + 4 * (size_t)n;
  zero_rule(frame, cap, cc, sec2, 0x3f800000u, "2 (edge weights)");
  zero_rule(frame, cap, cc, sec4 + 4, 0x3f800000u, "4 (noise scale)");
  zero_rule(frame, cap, cc, sec6 + 4, 0x3f800000u, "6 (interventions)");         /* a value */
  TC_REQUIRE(twincache_frame_encode(cc, ref_g, frame, cap, &size) == 0);
  {
    uint32_t dsize = tc_load_u32(frame + 28), csize = tc_load_u32(frame + 32);
    uint8_t *pay = malloc(dsize);
    TC_REQUIRE(pay && ZSTD_decompress(pay, dsize, frame + header_bytes(frame), csize) == dsize);
    pay[sec6 + 2] = TWINCACHE_DO; /* a generator's kind in an observed frame */
    size_t m = wrap(frame, pay, dsize, out, cap + 4096);
    TC_CHECK_RC(twincache_frame_decode(dc, out, m, out_g), TWINCACHE_ECORRUPT);
    pay[sec6 + 2] = TWINCACHE_INTER_OBSERVED;
    m = wrap(frame, pay, dsize, out, cap + 4096);
    TC_CHECK_RC(twincache_frame_decode(dc, out, m, out_g), 0);
    header_set(out, 25, 1, out[25] | TWINCACHE_GRAPH_NO_DAG); /* edges under NO_DAG */
    TC_CHECK_RC(twincache_frame_decode(dc, out, m, out_g), TWINCACHE_ECORRUPT);
    TC_CHECK(strstr(twincache_last_error(), "1 (adjacency)") != NULL, "%s", twincache_last_error());
    m = wrap(frame, pay, dsize, out, cap + 4096);
    header_set(out, 25, 1, out[25] | TWINCACHE_GRAPH_NO_TARGETS); /* targets under NO_TARGETS */
    TC_CHECK_RC(twincache_frame_decode(dc, out, m, out_g), TWINCACHE_ECORRUPT);
    m = wrap(frame, pay, dsize, out, cap + 4096);
    /* kind OBSERVED without the flag: an unknown kind */
    header_set(out, 25, 1, TWINCACHE_GRAPH_INDEPENDENT);
    TC_CHECK_RC(twincache_frame_decode(dc, out, m, out_g), TWINCACHE_ECORRUPT);
    free(pay);
  }
  { /* an extra target's value (section 6a) in a multi-target observed frame */
    tf_spec sm = {.seed = 29, .index = 3, .n = 6, .s = 6, .k = 5, .kinds = 2, .edge_p = 0.4, .multi = 3};
    tf_sample(ref_g, &sm);
    tf_observe(ref_g, 0);
    uint32_t em = 0;
    for (uint32_t i = 0; i < n; i++)
      for (uint32_t j = 0; j < n; j++) em += ref_g->adj[(size_t)i * ref_g->ld_adj + j] != 0;
    TC_REQUIRE(ref_g->n_targets[1] > 1);
    zero_rule(frame, cap, cc, (size_t)n * rb + 4 * (size_t)em + 4 * (size_t)n + 8 * (size_t)sm.k + 4, 0x3f800000u,
              "6a (extra targets)");
    tf_sample(ref_g, &sp);
    tf_observe(ref_g, 0);
    TC_REQUIRE(twincache_frame_encode(cc, ref_g, frame, cap, &size) == 0);
  }
  /* header rules: each refused by peek already */
  const struct { int off; uint32_t v; } bad[] = {
      {25, TWINCACHE_GRAPH_OBSERVED},                                      /* without INDEPENDENT */
      {25, TWINCACHE_GRAPH_INDEPENDENT | TWINCACHE_GRAPH_NO_DAG},          /* NO_DAG alone */
      {25, TWINCACHE_GRAPH_INDEPENDENT | TWINCACHE_GRAPH_NO_TARGETS},      /* NO_TARGETS alone */
      {25, TWINCACHE_GRAPH_INDEPENDENT | TWINCACHE_GRAPH_OBSERVED | TWINCACHE_GRAPH_STANDARDIZED},
      {24, TWINCACHE_NOISE_LAPLACE},
      {27, TWINCACHE_FAMILY_ER},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    memcpy(out, frame, size);
    header_set(out, bad[i].off, 1, bad[i].v);
    TC_CHECK_RC(twincache_frame_peek(out, size, NULL, NULL, NULL, NULL, NULL), TWINCACHE_ECORRUPT);
  }
  memcpy(out, frame, size);
  header_set(out, 4, 2, 4); /* the flag is version 5's */
  TC_CHECK_RC(twincache_frame_peek(out, size, NULL, NULL, NULL, NULL, NULL), TWINCACHE_ECORRUPT);
  /* the encoder refuses what the decoder would */
  ref_g->weight[0] = 0.0f;
  ref_g->noise_scale[2] = 1.0f;
  TC_CHECK_RC(twincache_frame_encode(cc, ref_g, frame, cap, &size), TWINCACHE_EINVAL);
  ref_g->noise_scale[2] = 0.0f;
  ref_g->value[1] = 2.0f;
  TC_CHECK_RC(twincache_frame_encode(cc, ref_g, frame, cap, &size), TWINCACHE_EINVAL);
  ref_g->value[1] = 0.0f;
  ref_g->kind[1] = TWINCACHE_SHIFT;
  TC_CHECK_RC(twincache_frame_encode(cc, ref_g, frame, cap, &size), TWINCACHE_EINVAL);
  ref_g->kind[1] = TWINCACHE_INTER_OBSERVED;
  ref_g->flags |= TWINCACHE_GRAPH_NO_DAG; /* edges remain */
  TC_CHECK_RC(twincache_frame_encode(cc, ref_g, frame, cap, &size), TWINCACHE_EINVAL);
  ref_g->flags = TWINCACHE_GRAPH_OBSERVED; /* without INDEPENDENT */
  TC_CHECK_RC(twincache_frame_encode(cc, ref_g, frame, cap, &size), TWINCACHE_EINVAL);
  ref_g->flags = TWINCACHE_GRAPH_INDEPENDENT | TWINCACHE_GRAPH_OBSERVED;
  TC_CHECK_RC(twincache_frame_encode(cc, ref_g, frame, cap, &size), 0);
  free(out);
}

/* Rows per world (version 5, section 7b, FORMAT.md 3.10): a twin frame whose
 * worlds hold fewer rows than S stores only those (rows past a count decode
 * to +0.0), every count S stores no section (the frame of before, byte for
 * byte); hostile counts (over S, zero, a twin world over the base's, all S,
 * a count that disagrees with the sample bytes) are ECORRUPT naming the
 * section; the encoder refuses a count over S or a twin world over base. */
static void rows_expect(uint8_t *payload, size_t psize, size_t at, const uint32_t *rows, uint32_t k1,
                        const uint8_t *frame, uint8_t *out, size_t cap, const char *what, int names_7b) {
  uint8_t *p = malloc(psize);
  TC_REQUIRE(p);
  memcpy(p, payload, psize);
  for (uint32_t v = 0; v < k1; v++) tc_store_u32(p + at + 4 * v, rows[v]);
  size_t sz = wrap(frame, p, psize, out, cap);
  int rc = twincache_frame_decode(dc, out, sz, out_g);
  TC_CHECK(rc == TWINCACHE_ECORRUPT, "%s: rc %d", what, rc);
  if (names_7b)
    TC_CHECK(strstr(twincache_last_error(), "7b (rows per world)") != NULL, "%s: %s", what, twincache_last_error());
  free(p);
}

static void rows_rules(uint8_t *frame, size_t cap, twincache_cctx *cc) {
  tf_spec sp = {.seed = 31, .index = 4, .n = 7, .s = 12, .k = 5, .kinds = 4, .standardize = 1, .edge_p = 0.4,
                .multi = 2};
  tf_sample(ref_g, &sp);
  size_t size, plain_size;
  uint8_t *plain = malloc(cap), *out = malloc(cap + 4096);
  TC_REQUIRE(plain && out);
  TC_REQUIRE(twincache_frame_encode(cc, ref_g, plain, cap, &plain_size) == 0);
  for (uint32_t v = 0; v <= sp.k; v++) ref_g->world_rows[v] = sp.s; /* all S: no section, the same bytes */
  TC_REQUIRE(twincache_frame_encode(cc, ref_g, frame, cap, &size) == 0);
  TC_CHECK(size == plain_size && memcmp(frame, plain, size) == 0, "every count S changes no byte");
  ref_g->flags |= TWINCACHE_GRAPH_ROWS; /* asks for version 5: a cache with counts has one version */
  TC_REQUIRE(twincache_frame_encode(cc, ref_g, frame, cap, &size) == 0);
  TC_CHECK(tc_load_u16(frame + 4) == 5 && !(frame[25] & TWINCACHE_GRAPH_ROWS) && size == plain_size);
  TC_CHECK_RC(twincache_frame_decode(dc, frame, size, out_g), 0);
  TC_CHECK(out_g->world_rows[0] == sp.s && out_g->world_rows[sp.k] == sp.s);
  ref_g->flags &= ~TWINCACHE_GRAPH_ROWS;
  const uint32_t rows[6] = {12, 5, 12, 3, 1, 7};
  memcpy(ref_g->world_rows, rows, sizeof rows);
  TC_REQUIRE(twincache_frame_encode(cc, ref_g, frame, cap, &size) == 0);
  TC_CHECK(tc_load_u16(frame + 4) == 5 && (frame[25] & TWINCACHE_GRAPH_ROWS), "rows per world: version 5");
  TC_CHECK(size < plain_size);
  for (uint32_t k = 0; k < sp.k; k++) /* what the frame holds: rows past a count are +0.0 */
    memset(ref_g->inter + ((size_t)k * sp.s + rows[k + 1]) * ref_g->ld, 0,
           sizeof(float) * (sp.s - rows[k + 1]) * ref_g->ld);
  ref_g->flags |= TWINCACHE_GRAPH_ROWS;
  TC_CHECK_RC(twincache_frame_decode(dc, frame, size, out_g), 0);
  TC_CHECK(tf_graph_same(ref_g, out_g), "a rows-per-world frame decodes to its stored rows, zeros past them");
  TC_CHECK(memcmp(out_g->world_rows, rows, sizeof rows) == 0);
  twincache_frame_view v;
  TC_CHECK_RC(twincache_frame_decode_view(dc, frame, size, &v), 0);
  TC_CHECK(memcmp(v.world_rows, rows, sizeof rows) == 0);
  frame_attacks(frame, size, "rows per world");
  /* the payload: section 7b sits right before the samples */
  size_t psize = tc_load_u32(frame + 28), sample_floats = 7 * (size_t)rows[0];
  for (uint32_t k = 0; k < sp.k; k++) sample_floats += (size_t)v.n_cols_of[k] * rows[k + 1];
  uint8_t *payload = malloc(psize);
  TC_REQUIRE(payload);
  TC_REQUIRE(ZSTD_decompress(payload, psize, frame + 48, tc_load_u32(frame + 32)) == psize);
  size_t at = psize - 4 * sample_floats - 4 * (sp.k + 1);
  TC_CHECK(memcmp(payload + at, rows, 4) == 0 && tc_load_u32(payload + at + 4 * 5) == 7);
  const uint32_t over[6] = {12, 5, 13, 3, 1, 7}, zero[6] = {12, 5, 12, 0, 1, 7}, above[6] = {6, 5, 12, 3, 1, 7},
                 all[6] = {12, 12, 12, 12, 12, 12}, sum[6] = {12, 5, 12, 4, 1, 7};
  rows_expect(payload, psize, at, over, 6, frame, out, cap + 4096, "a count over S", 1);
  rows_expect(payload, psize, at, zero, 6, frame, out, cap + 4096, "a zero count", 1);
  rows_expect(payload, psize, at, above, 6, frame, out, cap + 4096, "a twin world over the base's", 1);
  rows_expect(payload, psize, at, all, 6, frame, out, cap + 4096, "every count S", 1);
  rows_expect(payload, psize, at, sum, 6, frame, out, cap + 4096, "counts that disagree with the samples", 0);
  memcpy(out, frame, size);
  header_set(out, 4, 2, 4); /* the flag is version 5's */
  TC_CHECK_RC(twincache_frame_peek(out, size, NULL, NULL, NULL, NULL, NULL), TWINCACHE_ECORRUPT);
  memcpy(out, frame, size);
  header_set(out, 25, 1, out[25] & ~TWINCACHE_GRAPH_ROWS);
  TC_CHECK_RC(twincache_frame_decode(dc, out, size, out_g), TWINCACHE_ECORRUPT);
  /* the encoder's refusals */
  ref_g->world_rows[3] = 13;
  TC_CHECK_RC(twincache_frame_encode(cc, ref_g, out, cap, &size), TWINCACHE_EINVAL);
  ref_g->world_rows[3] = 3;
  ref_g->world_rows[0] = 4; /* twin worlds 1 (12 rows) and 4 (7) over the base's 4 */
  TC_CHECK_RC(twincache_frame_encode(cc, ref_g, out, cap, &size), TWINCACHE_EINVAL);
  memset(ref_g->world_rows, 0, 4 * (sp.k + 1));
  ref_g->flags &= ~TWINCACHE_GRAPH_ROWS;
  free(payload);
  free(plain);
  free(out);
}

int main(void) {
  twincache_cctx *cc = twincache_cctx_create(3);
  twincache_cctx *cs = twincache_cctx_create(3);
  dc = twincache_dctx_create();
  zc = ZSTD_createCCtx();
  TC_REQUIRE(cc && cs && dc && zc);
  ZSTD_CCtx_setParameter(zc, ZSTD_c_checksumFlag, 1);
  twincache_cctx_set_shuffle(cs, 1);
  ref_g = twincache_graph_alloc(7, 12, 7, 4);
  out_g = twincache_graph_alloc(7, 12, 7, 4);
  TC_REQUIRE(ref_g && out_g);
  size_t cap = twincache_frame_bound(7, 12, 7, 4), size;
  uint8_t *frame = malloc(cap);
  TC_REQUIRE(frame);

  /* linear, mixed do/shift, FAST encoding (the default), small enough to
   * flip every bit */
  tf_spec sp = {.seed = 21, .index = 5, .n = 7, .s = 12, .k = 7, .kinds = 2, .edge_p = 0.4};
  tf_sample(ref_g, &sp);
  TC_REQUIRE(twincache_frame_encode(cc, ref_g, frame, cap, &size) == 0);
  frame_attacks(frame, size, "linear");
  absurd_headers(frame, size);
  payload_attacks(frame, size);
  zstd_frame_rules(frame, size);

  /* the same graph in the SMALL encoding (Huffman-coded literals) */
  twincache_cctx *small = twincache_cctx_create(3);
  TC_REQUIRE(small && twincache_cctx_set_encoding(small, TWINCACHE_ENCODING_SMALL) == 0);
  TC_REQUIRE(twincache_frame_encode(small, ref_g, frame, cap, &size) == 0);
  frame_attacks(frame, size, "linear small");
  twincache_cctx_free(small);

  /* version-1 and version-2 frames (tf_golden_v1.h, tf_golden_v2.h) */
  tf_spec sg = {.seed = 42, .index = 5, .n = 5, .s = 8, .k = 5, .kinds = 2, .standardize = 1, .edge_p = 0.5};
  tf_sample(ref_g, &sg);
  frame_attacks(tf_golden_v1_plain, sizeof tf_golden_v1_plain, "golden v1");
  frame_attacks(tf_golden_v1_shuffle, sizeof tf_golden_v1_shuffle, "golden v1 shuffle");
  frame_attacks(tf_golden_v2_plain, sizeof tf_golden_v2_plain, "golden v2");
  frame_attacks(tf_golden_v2_shuffle, sizeof tf_golden_v2_shuffle, "golden v2 shuffle");
  frame_attacks(tf_golden_v3_plain, sizeof tf_golden_v3_plain, "golden v3");
  frame_attacks(tf_golden_v4_shuffle, sizeof tf_golden_v4_shuffle, "golden v4 shuffle");
  { /* a version-3 frame's byte 27 is reserved: non-zero is corrupt (header
     * checksum recomputed, so only the byte's meaning is tested) */
    uint8_t h[sizeof tf_golden_v3_plain];
    memcpy(h, tf_golden_v3_plain, sizeof h);
    header_set(h, 27, 1, TWINCACHE_FAMILY_SBM);
    TC_CHECK_RC(twincache_frame_peek(h, sizeof h, NULL, NULL, NULL, NULL, NULL), TWINCACHE_ECORRUPT);
    /* nor did version 3 know the noise families of version 4 */
    memcpy(h, tf_golden_v3_plain, sizeof h);
    header_set(h, 24, 1, TWINCACHE_NOISE_CAUCHY);
    TC_CHECK_RC(twincache_frame_peek(h, sizeof h, NULL, NULL, NULL, NULL, NULL), TWINCACHE_ECORRUPT);
    memcpy(h, tf_golden_v4_plain, sizeof h);
    header_set(h, 24, 1, TWINCACHE_NOISE_GUMBEL);
    TC_CHECK_RC(twincache_frame_peek(h, sizeof h, NULL, NULL, NULL, NULL, NULL), TWINCACHE_OK);
  }
  { /* the noise and soft kinds are version 4's: the same frame labelled
     * version 3 (byte 27 then reserved, 0) is corrupt, a shift frame so
     * labelled is not */
    for (int kinds = 1; kinds <= 5; kinds += 2) {
      tf_spec sv = {.seed = 24, .index = 8, .n = 6, .s = 5, .k = 4, .kinds = kinds, .edge_p = 0.5};
      tf_sample(ref_g, &sv);
      TC_REQUIRE(twincache_frame_encode(cc, ref_g, frame, cap, &size) == 0);
      TC_CHECK_RC(twincache_frame_decode(dc, frame, size, out_g), 0);
      TC_CHECK(tf_graph_same(ref_g, out_g));
      header_set(frame, 4, 2, 3);
      header_set(frame, 27, 1, 0);
      TC_CHECK_RC(twincache_frame_decode(dc, frame, size, out_g), kinds != 1 ? TWINCACHE_ECORRUPT : 0);
    }
  }
  soft_rules(frame, cap, cc);
  multi_rules(frame, cap, cc);
  independent_rules(frame, cap, cc);
  observed_rules(frame, cap, cc);
  rows_rules(frame, cap, cc);
  rows_rules(frame, cap, cs); /* byte planes: section 7b is not shuffled, the samples after it are */
  zero_rules(frame, cap, cc);
  zstd_frame_rules(tf_golden_v1_plain, sizeof tf_golden_v1_plain);
  zstd_frame_rules(tf_golden_v2_shuffle, sizeof tf_golden_v2_shuffle);

  /* MLP, standardised, byte planes (FAST encoding) */
  tf_spec sm = {.seed = 22, .index = 6, .n = 7, .s = 12, .k = 4, .mlp = 1, .kinds = 2,
                .standardize = 1, .edge_p = 0.5};
  tf_sample(ref_g, &sm);
  TC_REQUIRE(twincache_frame_encode(cs, ref_g, frame, cap, &size) == 0);
  frame_attacks(frame, size, "mlp+shuffle");
  mlp_nonparent_rules(frame, size, cs);
  { /* the RFF mechanism (code 2) is version 4's: the same frame relabelled
     * RFF reads as version 4 and is corrupt as version 3 (whose MLP it was) */
    uint8_t *h = malloc(size);
    TC_REQUIRE(h);
    memcpy(h, frame, size);
    header_set(h, 23, 1, TWINCACHE_MECH_RFF);
    TC_CHECK_RC(twincache_frame_decode(dc, h, size, out_g), TWINCACHE_OK);
    TC_CHECK(out_g->mechanism == TWINCACHE_MECH_RFF);
    header_set(h, 23, 1, TWINCACHE_MECH_COUNT);
    TC_CHECK_RC(twincache_frame_peek(h, size, NULL, NULL, NULL, NULL, NULL), TWINCACHE_ECORRUPT);
    header_set(h, 27, 1, 0);
    header_set(h, 4, 2, 3);
    header_set(h, 23, 1, TWINCACHE_MECH_RFF);
    TC_CHECK_RC(twincache_frame_peek(h, size, NULL, NULL, NULL, NULL, NULL), TWINCACHE_ECORRUPT);
    header_set(h, 23, 1, TWINCACHE_MECH_MLP);
    TC_CHECK_RC(twincache_frame_peek(h, size, NULL, NULL, NULL, NULL, NULL), TWINCACHE_OK);
    header_set(h, 25, 1, h[25] | TWINCACHE_GRAPH_HETERO); /* nor the HETERO flag (version 4's) */
    TC_CHECK_RC(twincache_frame_peek(h, size, NULL, NULL, NULL, NULL, NULL), TWINCACHE_ECORRUPT);
    free(h);
  }

  /* a chunk of three graphs */
  twincache_chunk_builder *b = twincache_chunk_builder_create();
  TC_REQUIRE(b);
  twincache_chunk_builder_reset(b, 40);
  for (int i = 0; i < 3; i++) {
    tf_spec sc = {.seed = 23, .index = 40 + i, .n = 3 + i, .s = 4, .k = 2, .kinds = i % 2, .edge_p = 0.6};
    tf_sample(ref_g, &sc);
    TC_REQUIRE(twincache_chunk_builder_add(b, cc, ref_g) == 0);
  }
  const void *chunk;
  TC_REQUIRE(twincache_chunk_builder_finish(b, &chunk, &size) == 0);
  chunk_attacks(chunk, size);

  free(frame);
  twincache_chunk_builder_free(b);
  twincache_graph_free(ref_g);
  twincache_graph_free(out_g);
  twincache_cctx_free(cc);
  twincache_cctx_free(cs);
  twincache_dctx_free(dc);
  ZSTD_freeCCtx(zc);
  return tc_test_finish("test_format_corrupt");
}
