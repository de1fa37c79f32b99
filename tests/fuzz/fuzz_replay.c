/* fuzz_replay — runs the fuzz target without libFuzzer so every build
 * exercises it: over the files named on the command line (crash inputs,
 * a corpus), or, with none, over built-in seeds (a frame and a chunk of the
 * test SCM, and the golden frames of format versions 1 to 4), all their
 * truncations and a few thousand mutations.
 *   fuzz_replay [FILE...]
 *   fuzz_replay --mutate FILE...    the files as seeds (frames and chunks of
 *                                   real caches: tests/cache's fuzz_seeds),
 *                                   with their truncations and mutations
 *   fuzz_replay --write-seeds DIR   writes the seeds as a libFuzzer corpus */
#include <errno.h>
#include <stdio.h>

#include "../format/tf_common.h"
#include "../format/tf_golden_v1.h"
#include "../format/tf_golden_v2.h"
#include "../format/tf_golden_v3.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reads a whole file into *buf (malloc'd) and *n. 0, or 1 after a message. */
static int read_file(const char *path, uint8_t **out, size_t *out_n) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "fuzz_replay: cannot open %s: %s\n", path, strerror(errno));
    return 1;
  }
  uint8_t *buf = NULL;
  size_t n = 0, cap = 0, got;
  do {
    if (n == cap) {
      cap = cap ? 2 * cap : 65536;
      uint8_t *p = realloc(buf, cap);
      if (!p) {
        fclose(f);
        free(buf);
        fprintf(stderr, "fuzz_replay: out of memory reading %s\n", path);
        return 1;
      }
      buf = p;
    }
    got = fread(buf + n, 1, cap - n, f);
    n += got;
  } while (got > 0);
  fclose(f);
  *out = buf;
  *out_n = n;
  return 0;
}

static int replay_file(const char *path) {
  uint8_t *buf;
  size_t n;
  if (read_file(path, &buf, &n) != 0) return 1;
  LLVMFuzzerTestOneInput(buf, n);
  free(buf);
  return 0;
}

/* One seed: every truncation, then `mutations` copies with 1-4 random bytes
 * changed. Returns the inputs run. */
static size_t fuzz_seed(const uint8_t *seed, size_t size, tc_rng *r, int mutations) {
  size_t runs = 0;
  uint8_t *m = malloc(size ? size : 1);
  TC_REQUIRE(m);
  for (size_t n = 0; n <= size; n++, runs++) LLVMFuzzerTestOneInput(seed, n);
  for (int t = 0; t < mutations && size > 0; t++, runs++) {
    memcpy(m, seed, size);
    int flips = 1 + (int)tc_rng_below(r, 4);
    for (int f = 0; f < flips; f++) m[tc_rng_below(r, (uint32_t)size)] ^= (uint8_t)(1 + tc_rng_below(r, 255));
    LLVMFuzzerTestOneInput(m, size);
  }
  free(m);
  return runs;
}

/* seeds[0] a linear frame, [1] an MLP standardised frame whose worlds hold
 * 8, 5, 3 and 8 rows (section 7b, FORMAT.md 3.10), [2] a chunk, [3] an
 * observed frame (FORMAT.md 3.11, graph known, multi-target regimes). */
#define N_SEEDS 4
static size_t make_seeds(uint8_t *seeds[N_SEEDS], size_t sizes[N_SEEDS]) {
  twincache_cctx *cc = twincache_cctx_create(1);
  twincache_graph *g = twincache_graph_alloc(6, 8, 6, 4);
  twincache_chunk_builder *b = twincache_chunk_builder_create();
  TC_REQUIRE(cc && g && b);
  size_t cap = twincache_frame_bound(6, 8, 6, 4);
  for (int i = 0; i < 2; i++) {
    tf_spec sp = {.seed = 31, .index = (uint64_t)i, .n = 6, .s = 8, .k = i ? 3 : 6, .mlp = i,
                  .kinds = 2, .standardize = i, .edge_p = 0.4};
    tf_sample(g, &sp);
    const uint32_t rows[4] = {8, 5, 3, 8};
    if (i) memcpy(g->world_rows, rows, sizeof rows);
    seeds[i] = malloc(cap);
    TC_REQUIRE(seeds[i] && twincache_frame_encode(cc, g, seeds[i], cap, &sizes[i]) == 0);
  }
  memset(g->world_rows, 0, 4 * sizeof(uint32_t)); /* the chunk's frames: every row */
  twincache_chunk_builder_reset(b, 7);
  for (int i = 0; i < 2; i++) {
    tf_spec sp = {.seed = 32, .index = 7 + (uint64_t)i, .n = 3 + i, .s = 4, .k = 2, .kinds = i, .edge_p = 0.5};
    tf_sample(g, &sp);
    TC_REQUIRE(twincache_chunk_builder_add(b, cc, g) == 0);
  }
  const void *data;
  TC_REQUIRE(twincache_chunk_builder_finish(b, &data, &sizes[2]) == 0);
  seeds[2] = malloc(sizes[2]);
  TC_REQUIRE(seeds[2]);
  memcpy(seeds[2], data, sizes[2]);
  tf_spec so = {.seed = 33, .index = 9, .n = 6, .s = 8, .k = 4, .kinds = 2, .edge_p = 0.4, .multi = 2};
  tf_sample(g, &so);
  tf_observe(g, 0);
  seeds[3] = malloc(cap);
  TC_REQUIRE(seeds[3] && twincache_frame_encode(cc, g, seeds[3], cap, &sizes[3]) == 0);
  twincache_chunk_builder_free(b);
  twincache_graph_free(g);
  twincache_cctx_free(cc);
  return N_SEEDS;
}

int main(int argc, char **argv) {
  uint8_t *seeds[N_SEEDS];
  size_t sizes[N_SEEDS];
  if (argc == 3 && strcmp(argv[1], "--write-seeds") == 0) {
    make_seeds(seeds, sizes);
    int rc = 0;
    for (int i = 0; i < N_SEEDS; i++) {
      char path[4096];
      snprintf(path, sizeof path, "%s/seed-%d", argv[2], i);
      FILE *f = fopen(path, "wb");
      if (!f || fwrite(seeds[i], 1, sizes[i], f) != sizes[i]) {
        fprintf(stderr, "fuzz_replay: cannot write %s\n", path);
        rc = 1;
      }
      if (f) fclose(f);
      free(seeds[i]);
    }
    return rc;
  }
  if (argc > 2 && strcmp(argv[1], "--mutate") == 0) {
    tc_rng r;
    tc_rng_init(&r, 79, 0);
    size_t runs = 0;
    for (int i = 2; i < argc; i++) {
      uint8_t *buf;
      size_t n;
      if (read_file(argv[i], &buf, &n) != 0) return 1;
      runs += fuzz_seed(buf, n, &r, 1000);
      free(buf);
    }
    printf("fuzz_replay: %d seed file(s), %zu inputs ok\n", argc - 2, runs);
    return 0;
  }
  if (argc > 1) {
    if (strcmp(argv[1], "--help") == 0 || argv[1][0] == '-') {
      fprintf(argv[1][1] == '-' && strcmp(argv[1], "--help") == 0 ? stdout : stderr,
              "usage: fuzz_replay [FILE...] | --mutate FILE... | --write-seeds DIR\n");
      return strcmp(argv[1], "--help") == 0 ? 0 : 2;
    }
    for (int i = 1; i < argc; i++)
      if (replay_file(argv[i]) != 0) return 1;
    printf("fuzz_replay: %d input(s) ok\n", argc - 1);
    return 0;
  }
  make_seeds(seeds, sizes);
  tc_rng r;
  tc_rng_init(&r, 77, 0);
  size_t runs = 0;
  for (int i = 0; i < N_SEEDS; i++) {
    runs += fuzz_seed(seeds[i], sizes[i], &r, 3000);
    free(seeds[i]);
  }
  /* the golden frames: real bytes of every format version's encoder */
  static const struct { const uint8_t *p; size_t n; } golden[] = {
      {tf_golden_v1_plain, sizeof tf_golden_v1_plain}, {tf_golden_v1_shuffle, sizeof tf_golden_v1_shuffle},
      {tf_golden_v2_plain, sizeof tf_golden_v2_plain}, {tf_golden_v2_shuffle, sizeof tf_golden_v2_shuffle},
      {tf_golden_v3_plain, sizeof tf_golden_v3_plain}, {tf_golden_v3_shuffle, sizeof tf_golden_v3_shuffle},
      {tf_golden_v4_plain, sizeof tf_golden_v4_plain}, {tf_golden_v4_shuffle, sizeof tf_golden_v4_shuffle}};
  for (size_t i = 0; i < sizeof golden / sizeof golden[0]; i++) runs += fuzz_seed(golden[i].p, golden[i].n, &r, 500);
  printf("fuzz_replay: %zu inputs ok\n", runs);
  return 0;
}
