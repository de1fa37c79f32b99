/* bench_format — compression ratio and decode speed of graph frames on the
 * default workload (Gaussian linear SCM, N uniform in 5..10, ER p = 0.3,
 * S = 64, one do() per node), plain and with byte planes, against
 * ZSTD_decompress of the same zstd frames (the physical limit the decoder
 * chases) and plain zstd on the raw float32 tensors. Frames use the SMALL
 * encoding at LEVEL (the FAST default ignores the level; bench_frames
 * compares the encodings).
 * Usage: bench_format [GRAPHS (default 2000)] [LEVEL (default 1)] */
#include <zstd.h>

#include "tc_args.h"
#include "tc_bench_graphs.h"
#include "tc_common.h"

int main(int argc, char **argv) {
  uint32_t graphs = 2000, level_u = 1; /* usage: bench_format [GRAPHS] [LEVEL] */
  if (argc > 1 && tc_parse_u32_in(argv[1], 1, 10000000, &graphs) != 0)
    return tc_args_report_value(stderr, "bench_format", "GRAPHS", argv[1], "an integer in [1, 10000000]");
  if (argc > 2 && tc_parse_u32_in(argv[2], 1, 19, &level_u) != 0)
    return tc_args_report_value(stderr, "bench_format", "LEVEL", argv[2], "an integer in [1, 19]");
  int level = (int)level_u;
  uint64_t raw = 0;
  twincache_graph **g = bench_default_graphs(graphs, &raw);
  twincache_graph *out = twincache_graph_alloc(10, 64, 10, 0);
  BENCH_REQUIRE(out);
  /* plain zstd over the raw tensors (base then inter), for reference */
  uint64_t plain = 0;
  {
    size_t cap = ZSTD_compressBound(4 * 64 * 10 * 11);
    uint8_t *dst = malloc(cap);
    BENCH_REQUIRE(dst);
    for (uint32_t i = 0; i < graphs; i++) {
      size_t rb = 4ull * 64 * g[i]->n_nodes;
      uint8_t *src = malloc(rb * (1 + g[i]->n_inter));
      BENCH_REQUIRE(src);
      memcpy(src, g[i]->base, rb);
      memcpy(src + rb, g[i]->inter, rb * g[i]->n_inter);
      plain += ZSTD_compress(dst, cap, src, rb * (1 + g[i]->n_inter), level);
      free(src);
    }
    free(dst);
  }
  printf("graphs %u, level %d, raw float32 %.2f MB, plain zstd on raw tensors: %.3f of raw\n",
         graphs, level, raw / 1e6, (double)plain / raw);
  printf("%-8s %10s %8s %14s %14s %8s\n", "shuffle", "frame MB", "ratio", "decode MB/s", "zstd MB/s",
         "vs zstd");
  size_t bound = twincache_frame_bound(10, 64, 10, 0);
  for (int shuffle = 0; shuffle < 2; shuffle++) {
    twincache_cctx *cc = twincache_cctx_create(level);
    twincache_dctx *dc = twincache_dctx_create();
    ZSTD_DCtx *zd = ZSTD_createDCtx();
    uint8_t *frames = malloc((size_t)graphs * bound), *scratch = malloc(1 << 20);
    size_t *off = calloc(graphs + 1, sizeof *off);
    BENCH_REQUIRE(cc && dc && zd && frames && scratch && off);
    BENCH_REQUIRE(twincache_cctx_set_encoding(cc, TWINCACHE_ENCODING_SMALL) == 0);
    twincache_cctx_set_shuffle(cc, shuffle);
    for (uint32_t i = 0; i < graphs; i++) {
      size_t w;
      BENCH_REQUIRE(twincache_frame_encode(cc, g[i], frames + off[i], bound, &w) == 0);
      off[i + 1] = off[i] + w;
    }
    /* decode, best of 5 passes each */
    double best_dec = 1e30, best_z = 1e30;
    for (int rep = 0; rep < 5; rep++) {
      uint64_t t0 = tc_now_ns();
      for (uint32_t i = 0; i < graphs; i++)
        BENCH_REQUIRE(twincache_frame_decode(dc, frames + off[i], off[i + 1] - off[i], out) == 0);
      uint64_t t1 = tc_now_ns();
      for (uint32_t i = 0; i < graphs; i++) {
        const uint8_t *f = frames + off[i];
        size_t r = ZSTD_decompressDCtx(zd, scratch, 1 << 20, f + tc_load_u16(f + 6), tc_load_u32(f + 32));
        BENCH_REQUIRE(!ZSTD_isError(r));
      }
      uint64_t t2 = tc_now_ns();
      if ((t1 - t0) / 1e9 < best_dec) best_dec = (t1 - t0) / 1e9;
      if ((t2 - t1) / 1e9 < best_z) best_z = (t2 - t1) / 1e9;
    }
    printf("%-8s %10.3f %8.3f %14.1f %14.1f %8.2f\n", shuffle ? "on" : "off", off[graphs] / 1e6,
           (double)off[graphs] / raw, raw / 1e6 / best_dec, raw / 1e6 / best_z, best_z / best_dec);
    free(frames);
    free(scratch);
    free(off);
    ZSTD_freeDCtx(zd);
    twincache_cctx_free(cc);
    twincache_dctx_free(dc);
  }
  printf("(MB/s are raw float32 bytes rebuilt per second; vs zstd = decode speed / ZSTD_decompress speed)\n");
  bench_graphs_free(g, graphs);
  twincache_graph_free(out);
  return 0;
}
