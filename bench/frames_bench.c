/* bench_frames — which zstd setting should graph frames use? On the default
 * workload (Gaussian linear SCM, N uniform in 5..10, ER p = 0.3, S = 64, one
 * do() per node) the frames' payloads (FORMAT.md 3.2, already sparse) are
 * recompressed with each candidate and timed on one thread next to the
 * physical limits: ZSTD_decompress of the same bytes is what a frame decoder
 * chases, memcpy of the decoded bytes is what any decoder is bounded by.
 * Then the real codec (twincache_frame_encode/decode) per encoding.
 * Usage: bench_frames [GRAPHS (default 2000)] */
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_c_literalCompressionMode, for the table only */
#include <zstd.h>

#include "tc_args.h"
#include "tc_bench_graphs.h"
#include "tc_common.h"

#define REPS 5

typedef struct variant {
  const char *name;
  int level;
  int literals_off; /* ZSTD_ps_disable */
  int checksum;
  int planes;       /* 0: payload as is; 1: samples as 4 byte planes (SHUFFLE);
                       2: planes, high (sign/exponent) plane in its own zstd frame
                          with literals compressed, the rest literals off */
} variant;

static double secs(uint64_t t0, uint64_t t1) { return (t1 - t0) / 1e9; }

static ZSTD_CCtx *cctx_for(const variant *v, int entropy) {
  ZSTD_CCtx *z = ZSTD_createCCtx();
  BENCH_REQUIRE(z);
  BENCH_REQUIRE(!ZSTD_isError(ZSTD_CCtx_setParameter(z, ZSTD_c_compressionLevel, v->level)));
  BENCH_REQUIRE(!ZSTD_isError(ZSTD_CCtx_setParameter(z, ZSTD_c_checksumFlag, v->checksum)));
  if (v->literals_off && !entropy)
    BENCH_REQUIRE(!ZSTD_isError(ZSTD_CCtx_setParameter(z, ZSTD_c_literalCompressionMode, ZSTD_ps_disable)));
  return z;
}

int main(int argc, char **argv) {
  uint32_t graphs = 2000; /* usage: bench_frames [GRAPHS] */
  if (argc > 1 && tc_parse_u32_in(argv[1], 1, 10000000, &graphs) != 0)
    return tc_args_report_value(stderr, "bench_frames", "GRAPHS", argv[1], "an integer in [1, 10000000]");
  uint64_t raw = 0;
  twincache_graph **g = bench_default_graphs(graphs, &raw);
  twincache_graph *out = twincache_graph_alloc(10, 64, 10, 0);
  BENCH_REQUIRE(out);
  /* the payloads, from frames of the small encoding (level 1, entropy on) */
  size_t bound = twincache_frame_bound(10, 64, 10, 0);
  uint8_t *frame = malloc(bound);
  size_t *poff = calloc(graphs + 1, sizeof *poff), *sboff = calloc(graphs + 1, sizeof *sboff);
  uint8_t *payload = malloc((size_t)graphs * bound), *shuf = malloc((size_t)graphs * bound);
  uint8_t *copy = malloc((size_t)graphs * bound);
  twincache_cctx *small = twincache_cctx_create(1);
  BENCH_REQUIRE(frame && poff && sboff && payload && shuf && copy && small);
  BENCH_REQUIRE(twincache_cctx_set_encoding(small, TWINCACHE_ENCODING_SMALL) == 0);
  for (uint32_t i = 0; i < graphs; i++) {
    size_t w;
    BENCH_REQUIRE(twincache_frame_encode(small, g[i], frame, bound, &w) == 0);
    size_t hb = tc_load_u16(frame + 6); /* the frame header's own size */
    size_t d = ZSTD_decompress(payload + poff[i], bound, frame + hb, w - hb);
    BENCH_REQUIRE(!ZSTD_isError(d));
    poff[i + 1] = poff[i] + d;
    /* where the samples start: the payload minus the sample floats */
    uint32_t n = g[i]->n_nodes, s = g[i]->n_samples, samples = 0;
    for (uint32_t k = 0; k < n; k++) { /* do() on every node: descendants minus the target */
      uint8_t desc[TWINCACHE_MAX_NODES] = {0};
      samples += twincache_graph_descendants(g[i]->adj, n, g[i]->ld_adj, g[i]->target[k], desc) - 1;
    }
    samples = (samples + n) * s;
    sboff[i] = d - 4 * (size_t)samples; /* offset of the sample floats in payload i */
    /* byte planes of the sample floats */
    memcpy(shuf + poff[i], payload + poff[i], sboff[i]);
    const uint8_t *sp_ = payload + poff[i] + sboff[i];
    uint8_t *dp = shuf + poff[i] + sboff[i];
    for (uint32_t x = 0; x < samples; x++)
      for (int b = 0; b < 4; b++) dp[(size_t)b * samples + x] = sp_[4 * (size_t)x + b];
  }
  uint64_t dec_bytes = poff[graphs];
  /* memcpy of the decoded bytes, graph by graph */
  double best_mc = 1e30;
  for (int rep = 0; rep < REPS; rep++) {
    uint64_t t0 = tc_now_ns();
    for (uint32_t i = 0; i < graphs; i++) memcpy(copy + poff[i], payload + poff[i], poff[i + 1] - poff[i]);
    uint64_t t1 = tc_now_ns();
    if (secs(t0, t1) < best_mc) best_mc = secs(t0, t1);
  }
  BENCH_REQUIRE(memcmp(copy, payload, dec_bytes) == 0);
  printf("bench_frames: %u graphs, raw float32 %.1f B/graph, payload (decoded) %.1f B/graph, libzstd %s\n",
         graphs, (double)raw / graphs, (double)dec_bytes / graphs, ZSTD_versionString());
  printf("memcpy of the decoded bytes: %.2f GB/s (%.0fk graphs/s)\n\n", dec_bytes / 1e9 / best_mc,
         graphs / best_mc / 1e3);

  static const variant vs[] = {
      {"level 1 (v1 default)", 1, 0, 1, 0},
      {"level 1, literals off", 1, 1, 1, 0},
      {"level 1, literals off, no XXH64", 1, 1, 0, 0},
      {"level 3", 3, 0, 1, 0},
      {"level -1", -1, 0, 1, 0},
      {"level -1, no XXH64", -1, 0, 0, 0},
      {"level -5", -5, 0, 1, 0},
      {"level 1, byte planes", 1, 0, 1, 1},
      {"level 1, planes, hi plane entropy", 1, 1, 1, 2},
  };
  printf("%-34s %9s %7s %9s %10s %11s %9s %9s\n", "payload zstd'd with", "B/graph", "x raw",
         "enc kg/s", "dec GB/s", "dec kg/s", "vs memcpy", "vs v1");
  double v1_bytes = 0;
  size_t zcap = ZSTD_compressBound(bound);
  uint8_t *z = malloc((size_t)graphs * zcap);
  size_t *zoff = calloc(2 * (size_t)graphs + 1, sizeof *zoff);
  ZSTD_DCtx *zd = ZSTD_createDCtx();
  BENCH_REQUIRE(z && zoff && zd);
  for (size_t vi = 0; vi < sizeof vs / sizeof vs[0]; vi++) {
    const variant *v = &vs[vi];
    ZSTD_CCtx *zc = cctx_for(v, 0), *ze = cctx_for(v, 1);
    const uint8_t *src = v->planes ? shuf : payload;
    double best_enc = 1e30, best_dec = 1e30;
    for (int rep = 0; rep < REPS; rep++) {
      uint64_t t0 = tc_now_ns();
      size_t at = 0;
      for (uint32_t i = 0; i < graphs; i++) {
        const uint8_t *p = src + poff[i];
        size_t len = poff[i + 1] - poff[i], r;
        if (v->planes == 2) { /* [fixed sections + planes 0..2] then [plane 3] */
          size_t hi = (len - sboff[i]) / 4, lo_len = len - hi;
          r = ZSTD_compress2(zc, z + at, zcap, p, lo_len);
          BENCH_REQUIRE(!ZSTD_isError(r));
          zoff[2 * i + 1] = at += r;
          r = ZSTD_compress2(ze, z + at, zcap, p + lo_len, hi);
        } else {
          r = ZSTD_compress2(zc, z + at, zcap, p, len);
          BENCH_REQUIRE(!ZSTD_isError(r));
          zoff[2 * i + 1] = at += r;
          r = 0;
        }
        BENCH_REQUIRE(!ZSTD_isError(r));
        zoff[2 * i + 2] = at += r;
      }
      uint64_t t1 = tc_now_ns();
      for (uint32_t i = 0; i < graphs; i++) {
        uint8_t *dst = copy + poff[i];
        size_t len = poff[i + 1] - poff[i];
        size_t r = ZSTD_decompressDCtx(zd, dst, len, z + zoff[2 * i], zoff[2 * i + 1] - zoff[2 * i]);
        BENCH_REQUIRE(!ZSTD_isError(r));
        if (zoff[2 * i + 2] > zoff[2 * i + 1]) {
          size_t r2 = ZSTD_decompressDCtx(zd, dst + r, len - r, z + zoff[2 * i + 1],
                                          zoff[2 * i + 2] - zoff[2 * i + 1]);
          BENCH_REQUIRE(!ZSTD_isError(r2));
        }
      }
      uint64_t t2 = tc_now_ns();
      if (secs(t0, t1) < best_enc) best_enc = secs(t0, t1);
      if (secs(t1, t2) < best_dec) best_dec = secs(t1, t2);
    }
    BENCH_REQUIRE(memcmp(copy, src, dec_bytes) == 0);
    double bytes = (double)(zoff[2 * (size_t)graphs] + 40ull * graphs) / graphs; /* + frame header */
    if (vi == 0) v1_bytes = bytes;
    printf("%-34s %9.1f %7.4f %9.1f %10.2f %11.0f %9.2f %8.3fx\n", v->name, bytes,
           bytes * graphs / raw, graphs / best_enc / 1e3, dec_bytes / 1e9 / best_dec,
           graphs / best_dec / 1e3, best_mc / best_dec, bytes / v1_bytes);
    ZSTD_freeCCtx(zc);
    ZSTD_freeCCtx(ze);
  }
  printf("(payload only: enc = ZSTD_compress2, dec = ZSTD_decompress into the payload buffer;\n"
         " GB/s are decoded payload bytes; B/graph includes the 48-byte frame header)\n\n");

  /* the codec itself: build the payload, compress, header; decode = checks,
   * zstd, parse, rebuild the dense (S, N) worlds */
  static const struct { const char *name; int enc, shuffle; } ws[] = {
      {"SMALL (v1: level 1)", TWINCACHE_ENCODING_SMALL, 0},
      {"SMALL + byte planes", TWINCACHE_ENCODING_SMALL, 1},
      {"FAST (v2 default)", TWINCACHE_ENCODING_FAST, 0},
  };
  printf("%-22s %9s %7s %9s %9s %10s %9s %9s\n", "twincache frames", "B/graph", "x raw", "enc kg/s",
         "dec kg/s", "dec GB/s", "zstd kg/s", "vs zstd");
  uint8_t *frames = malloc((size_t)graphs * bound), *check = malloc(bound);
  size_t *off = calloc(graphs + 1, sizeof *off);
  twincache_dctx *dc = twincache_dctx_create();
  BENCH_REQUIRE(frames && check && off && dc);
  for (size_t wi = 0; wi < sizeof ws / sizeof ws[0]; wi++) {
    twincache_cctx *cc = twincache_cctx_create(1);
    BENCH_REQUIRE(cc && twincache_cctx_set_encoding(cc, ws[wi].enc) == 0 &&
               twincache_cctx_set_shuffle(cc, ws[wi].shuffle) == 0);
    double best_enc = 1e30, best_dec = 1e30, best_z = 1e30;
    for (int rep = 0; rep < REPS; rep++) {
      uint64_t t0 = tc_now_ns();
      for (uint32_t i = 0; i < graphs; i++) {
        size_t w;
        BENCH_REQUIRE(twincache_frame_encode(cc, g[i], frames + off[i], bound, &w) == 0);
        off[i + 1] = off[i] + w;
      }
      uint64_t t1 = tc_now_ns();
      for (uint32_t i = 0; i < graphs; i++) {
        out->ld = out->ld_adj = g[i]->n_nodes; /* dense rows of the graph's own width */
        BENCH_REQUIRE(twincache_frame_decode(dc, frames + off[i], off[i + 1] - off[i], out) == 0);
      }
      uint64_t t2 = tc_now_ns();
      for (uint32_t i = 0; i < graphs; i++) {
        const uint8_t *f = frames + off[i];
        size_t r = ZSTD_decompressDCtx(zd, copy, bound, f + tc_load_u16(f + 6), tc_load_u32(f + 32));
        BENCH_REQUIRE(!ZSTD_isError(r));
      }
      uint64_t t3 = tc_now_ns();
      if (secs(t0, t1) < best_enc) best_enc = secs(t0, t1);
      if (secs(t1, t2) < best_dec) best_dec = secs(t1, t2);
      if (secs(t2, t3) < best_z) best_z = secs(t2, t3);
    }
    for (uint32_t i = 0; i < graphs; i += 97) {
      out->ld = out->ld_adj = 10;
      BENCH_REQUIRE(twincache_frame_decode(dc, frames + off[i], off[i + 1] - off[i], out) == 0);
      /* lossless: the decoded graph encodes to the same frame again */
      size_t again;
      BENCH_REQUIRE(twincache_frame_encode(cc, out, check, bound, &again) == 0);
      BENCH_REQUIRE(again == off[i + 1] - off[i] && memcmp(check, frames + off[i], again) == 0);
    }
    printf("%-22s %9.1f %7.4f %9.1f %9.1f %10.2f %9.1f %9.2f\n", ws[wi].name,
           (double)off[graphs] / graphs, (double)off[graphs] / raw, graphs / best_enc / 1e3,
           graphs / best_dec / 1e3, raw / 1e9 / best_dec, graphs / best_z / 1e3, best_z / best_dec);
    twincache_cctx_free(cc);
  }
  printf("(dec = twincache_frame_decode into rows of the graph's own N; its GB/s are raw float32\n"
         " bytes rebuilt; zstd = ZSTD_decompress of the same frames; vs zstd = zstd time / decode time)\n");

  /* Into a dense, padded slab as the loader writes it: per graph base (S,N)
   * and inter (K,S,N) with N = K = 10, S = 64 (28.2 KB of floats), batches
   * of 32 graphs in a ring of 4 slots (3.6 MB, past the L2 cache). The bound
   * is memcpy of the same slab bytes. */
  enum { SLAB_G = 32, SLAB_SLOTS = 4, SN = 10, SS = 64, SK = 10 };
  size_t per_graph = (size_t)SS * SN * (1 + SK); /* floats */
  float *slab = malloc(sizeof(float) * per_graph * SLAB_G * SLAB_SLOTS);
  float *slab_src = malloc(sizeof(float) * per_graph * SLAB_G);
  BENCH_REQUIRE(slab && slab_src);
  memset(slab, 0, sizeof(float) * per_graph * SLAB_G * SLAB_SLOTS);
  memset(slab_src, 1, sizeof(float) * per_graph * SLAB_G);
  double best_slab_mc = 1e30;
  for (int rep = 0; rep < REPS; rep++) {
    uint64_t t0 = tc_now_ns();
    for (uint32_t i = 0; i < graphs; i++)
      memcpy(slab + per_graph * (i % (SLAB_G * SLAB_SLOTS)), slab_src + per_graph * (i % SLAB_G),
             sizeof(float) * per_graph);
    uint64_t t1 = tc_now_ns();
    if (secs(t0, t1) < best_slab_mc) best_slab_mc = secs(t0, t1);
  }
  printf("\ninto a dense slab (N=K=%d, S=%d: %.1f KB of floats per graph; memcpy of it: %.2f GB/s, %.0fk graphs/s)\n",
         SN, SS, per_graph * 4 / 1e3, graphs * per_graph * 4 / 1e9 / best_slab_mc, graphs / best_slab_mc / 1e3);
  printf("%-22s %10s %10s %9s\n", "twincache frames", "kgraphs/s", "slab GB/s", "vs memcpy");
  for (size_t wi = 0; wi < sizeof ws / sizeof ws[0]; wi++) {
    twincache_cctx *cc = twincache_cctx_create(1);
    BENCH_REQUIRE(cc && twincache_cctx_set_encoding(cc, ws[wi].enc) == 0 &&
               twincache_cctx_set_shuffle(cc, ws[wi].shuffle) == 0);
    for (uint32_t i = 0; i < graphs; i++) {
      size_t w;
      BENCH_REQUIRE(twincache_frame_encode(cc, g[i], frames + off[i], bound, &w) == 0);
      off[i + 1] = off[i] + w;
    }
    twincache_graph sg = *out;
    sg.ld = sg.ld_adj = SN;
    double best = 1e30;
    for (int rep = 0; rep < REPS; rep++) {
      uint64_t t0 = tc_now_ns();
      for (uint32_t i = 0; i < graphs; i++) {
        sg.base = slab + per_graph * (i % (SLAB_G * SLAB_SLOTS));
        sg.inter = sg.base + (size_t)SS * SN;
        BENCH_REQUIRE(twincache_frame_decode(dc, frames + off[i], off[i + 1] - off[i], &sg) == 0);
      }
      uint64_t t1 = tc_now_ns();
      if (secs(t0, t1) < best) best = secs(t0, t1);
    }
    printf("%-22s %10.1f %10.2f %9.2f\n", ws[wi].name, graphs / best / 1e3,
           graphs * per_graph * 4 / 1e9 / best, best_slab_mc / best);
    twincache_cctx_free(cc);
  }
  printf("(the loader's dense slab also clears the twin worlds beyond K of the graph; not done here)\n");
  free(slab);
  free(slab_src);
  bench_graphs_free(g, graphs);
  free(frames), free(check);
  free(off);
  free(z);
  free(zoff);
  free(frame);
  free(poff);
  free(sboff);
  free(payload);
  free(shuf);
  free(copy);
  ZSTD_freeDCtx(zd);
  twincache_cctx_free(small);
  twincache_dctx_free(dc);
  twincache_graph_free(out);
  return 0;
}
