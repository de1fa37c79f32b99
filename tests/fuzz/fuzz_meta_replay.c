/* fuzz_meta_replay — runs the meta fuzz target without libFuzzer so every
 * build exercises it: over the files named on the command line, or, with
 * none, over built-in seeds (valid meta records of versions 1 to 4, the
 * last also SCM-only, in the target's input format), all their truncations
 * and a few thousand mutations.
 *   fuzz_meta_replay [FILE...]
 *   fuzz_meta_replay --mutate FILE...    the files as seeds (meta records of
 *                                        real caches: tests/cache's fuzz_seeds)
 *   fuzz_meta_replay --write-seeds DIR   writes the seeds as a libFuzzer corpus */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_common.h"
#include "twincache_format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Appends entry bytes to buf in the target's format. */
static size_t put_entry(uint8_t *buf, size_t at, const void *v, size_t n) {
  tc_store_u16(buf + at, (uint16_t)n);
  memcpy(buf + at + 2, v, n);
  return at + 2 + n;
}

/* A meta record of format version `version` in the target's input format,
 * of an SCM-only cache (dims samples 0) when scm_only. */
static size_t make_seed(uint8_t *buf, uint32_t version, int scm_only) {
  static const char config[] = "{\"format_version\":1,\"seed\":11,\"nodes_max\":10}";
  static const char library[] = "twincache-gen 0.1.0";
  twincache_meta m = {.version = version,
                      .dims = {.graphs = 5000, .chunk_graphs = 200, .max_nodes = 10, .max_inter = 10,
                               .samples = scm_only ? 0 : 64},
                      .committed = 3000,
                      .stats = {.raw_bytes = 1u << 20, .frame_bytes = 1u << 18, .edges = 9000, .nodes = 21000},
                      .config = config, .config_len = sizeof config - 1,
                      .library = library, .library_len = sizeof library - 1};
  m.tag = twincache_meta_tag(m.config, m.config_len);
  uint8_t ver[4], dims[TWINCACHE_DIMS_BYTES], cnt[8], stats[TWINCACHE_STATS_BYTES], tag[8];
  uint8_t check[TWINCACHE_META_CHECK_BYTES];
  tc_store_u32(ver, version);
  twincache_dims_encode(&m.dims, dims);
  tc_store_u64(cnt, m.committed);
  twincache_stats_encode(&m.stats, stats);
  tc_store_u64(tag, m.tag);
  twincache_meta_check_encode(&m, check);
  size_t at = 1;
  buf[0] = version >= 2 ? 0xff : 0x3f;
  at = put_entry(buf, at, ver, 4);
  at = put_entry(buf, at, config, m.config_len);
  at = put_entry(buf, at, dims, sizeof dims);
  at = put_entry(buf, at, cnt, 8);
  at = put_entry(buf, at, stats, sizeof stats);
  at = put_entry(buf, at, library, m.library_len);
  if (version >= 2) {
    at = put_entry(buf, at, tag, 8);
    at = put_entry(buf, at, check, sizeof check);
  }
  return at;
}

/* One seed: every truncation, then `mutations` copies with 1-4 random bytes
 * changed. Returns the inputs run. */
static size_t fuzz_seed(const uint8_t *seed, size_t size, tc_rng *r, int mutations) {
  static uint8_t m[1 << 20];
  size_t runs = 0;
  if (size > sizeof m) size = sizeof m;
  for (size_t n = 0; n <= size; n++, runs++) LLVMFuzzerTestOneInput(seed, n);
  for (int t = 0; t < mutations && size > 0; t++, runs++) {
    memcpy(m, seed, size);
    int flips = 1 + (int)tc_rng_below(r, 4);
    for (int f = 0; f < flips; f++) m[tc_rng_below(r, (uint32_t)size)] ^= (uint8_t)(1 + tc_rng_below(r, 255));
    LLVMFuzzerTestOneInput(m, size);
  }
  return runs;
}

/* Reads a file of at most 1 MiB into buf; returns its size, or -1. */
static long read_file(const char *path, uint8_t *buf, size_t cap) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "fuzz_meta_replay: cannot open %s: %s\n", path, strerror(errno));
    return -1;
  }
  size_t n = fread(buf, 1, cap, f);
  fclose(f);
  return (long)n;
}

static int replay_file(const char *path) {
  static uint8_t buf[1 << 20];
  long n = read_file(path, buf, sizeof buf);
  if (n < 0) return 1;
  LLVMFuzzerTestOneInput(buf, (size_t)n);
  return 0;
}

int main(int argc, char **argv) {
  enum { N_SEEDS = 5 };
  uint8_t seeds[N_SEEDS][512];
  size_t sizes[N_SEEDS] = {make_seed(seeds[0], 2, 0), make_seed(seeds[1], 1, 0), make_seed(seeds[2], 3, 0),
                           make_seed(seeds[3], 4, 0), make_seed(seeds[4], 4, 1)};
  /* the seeds must parse: otherwise the mutations explore nothing */
  for (int i = 0; i < N_SEEDS; i++) {
    twincache_meta_entry e[TWINCACHE_MK_COUNT];
    memset(e, 0, sizeof e);
    size_t at = 1;
    for (int k = 0; k < TWINCACHE_MK_COUNT; k++) {
      if (!(seeds[i][0] & (1u << k))) continue;
      e[k].size = tc_load_u16(seeds[i] + at);
      e[k].data = seeds[i] + at + 2;
      at += 2 + e[k].size;
    }
    twincache_meta m;
    if (twincache_meta_parse(e, &m) != TWINCACHE_OK) {
      fprintf(stderr, "fuzz_meta_replay: seed %d does not parse\n", i);
      return 1;
    }
    LLVMFuzzerTestOneInput(seeds[i], sizes[i]); /* and meets the target's invariants */
  }
  if (argc == 3 && strcmp(argv[1], "--write-seeds") == 0) {
    for (int i = 0; i < N_SEEDS; i++) {
      char path[4096];
      snprintf(path, sizeof path, "%s/meta-seed-%d", argv[2], i);
      FILE *f = fopen(path, "wb");
      int bad = !f || fwrite(seeds[i], 1, sizes[i], f) != sizes[i];
      if (f) fclose(f);
      if (bad) {
        fprintf(stderr, "fuzz_meta_replay: cannot write %s\n", path);
        return 1;
      }
    }
    return 0;
  }
  tc_rng r;
  if (argc > 2 && strcmp(argv[1], "--mutate") == 0) {
    static uint8_t buf[1 << 20];
    tc_rng_init(&r, 80, 0);
    size_t runs = 0;
    for (int i = 2; i < argc; i++) {
      long n = read_file(argv[i], buf, sizeof buf);
      if (n < 0) return 1;
      runs += fuzz_seed(buf, (size_t)n, &r, 2000);
    }
    printf("fuzz_meta_replay: %d seed file(s), %zu inputs ok\n", argc - 2, runs);
    return 0;
  }
  if (argc > 1) {
    if (argv[1][0] == '-') {
      fprintf(stderr, "usage: fuzz_meta_replay [FILE...] | --mutate FILE... | --write-seeds DIR\n");
      return 2;
    }
    for (int i = 1; i < argc; i++)
      if (replay_file(argv[i]) != 0) return 1;
    printf("fuzz_meta_replay: %d input(s) ok\n", argc - 1);
    return 0;
  }
  tc_rng_init(&r, 78, 0);
  size_t runs = 0;
  for (int i = 0; i < N_SEEDS; i++) runs += fuzz_seed(seeds[i], sizes[i], &r, 5000);
  printf("fuzz_meta_replay: %zu inputs ok\n", runs);
  return 0;
}
