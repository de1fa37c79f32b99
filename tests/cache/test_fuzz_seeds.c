/* test_fuzz_seeds — the fuzz replays seeded from real caches of every kind.
 * The replays' built-in seeds are hand-made graphs (fuzz_replay: the test
 * SCM and golden frames of versions 1-4; fuzz_meta_replay: meta records of
 * versions 1-4); a kind they lack goes unfuzzed (an SCM-only meta made
 * fuzz_meta abort, unseen). This program generates a small cache of each
 * kind with the real generator — default, SCM-only, soft (MLP), noise,
 * multi-target, mixtures of families and mechanisms with Cauchy
 * heteroscedastic noise, iSCM — writes its meta record (also relabelled as
 * versions 1-3: v1 without tag and checksum, v2-3 with the checksum
 * recomputed), its first chunk record and first frame as seed files, and
 * runs both replays with --mutate over them (every truncation and random
 * byte changes of each): any abort, crash or sanitizer report fails.
 * usage: test_fuzz_seeds GEN FRAME_REPLAY META_REPLAY SCRATCH */
#include <stdlib.h>
#include <string.h>

#include "inspect_test.h"
#include "tc_cache_raw.h"
#include "tc_common.h"

enum { MAX_FILES = 64 };
static char *frame_files[MAX_FILES], *meta_files[MAX_FILES];
static int n_frame_files, n_meta_files;

static char *write_seed(const char *dir, const char *name, const void *data, size_t size) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  int ok = f && fwrite(data, 1, size, f) == size;
  if (f) ok = fclose(f) == 0 && ok;
  TC_CHECK(ok, "write %s", path);
  return strdup(path);
}

/* The meta entries e in fuzz_meta's input format (tests/fuzz/fuzz_meta.c):
 * a presence mask byte, then per present entry a u16 length and its bytes. */
static char *write_meta_seed(const char *dir, const char *name, const twincache_meta_entry e[TWINCACHE_MK_COUNT]) {
  size_t cap = 1;
  for (int k = 0; k < TWINCACHE_MK_COUNT; k++) cap += e[k].data ? 2 + e[k].size : 0;
  uint8_t *buf = malloc(cap), mask = 0;
  TC_REQUIRE(buf);
  size_t at = 1;
  for (int k = 0; k < TWINCACHE_MK_COUNT; k++) {
    if (!e[k].data) continue;
    TC_REQUIRE(e[k].size <= 0xffff);
    mask |= (uint8_t)(1u << k);
    tc_store_u16(buf + at, (uint16_t)e[k].size);
    memcpy(buf + at + 2, e[k].data, e[k].size);
    at += 2 + e[k].size;
  }
  buf[0] = mask;
  char *path = write_seed(dir, name, buf, at);
  free(buf);
  return path;
}

/* Seeds of the cache at dir (kind `name`) into scratch. */
static void seeds_of(const char *dir, const char *scratch, const char *name) {
  tc_cache_raw *raw = NULL;
  TC_REQUIRE(tc_cache_raw_open(dir, 0, &raw) == 0);
  void *val[TWINCACHE_MK_COUNT] = {0};
  twincache_meta_entry e[TWINCACHE_MK_COUNT];
  for (int k = 0; k < TWINCACHE_MK_COUNT; k++) {
    const char *key = twincache_meta_key_name(k);
    size_t size = 0;
    e[k].data = NULL;
    e[k].size = 0;
    if (tc_cache_raw_get(raw, "meta", key, strlen(key), &val[k], &size) == 0) {
      e[k].data = val[k];
      e[k].size = size;
    }
  }
  twincache_meta m;
  TC_REQUIRE(twincache_meta_parse(e, &m) == 0);
  char file[256];
  snprintf(file, sizeof file, "meta-%s", name);
  meta_files[n_meta_files++] = write_meta_seed(scratch, file, e);
  /* the same record relabelled as the older versions (samples 0 stays: the
   * parser must refuse it there, and the target checks that it does) */
  for (uint32_t v = 1; v < TWINCACHE_FORMAT_VERSION && n_meta_files < MAX_FILES; v++) {
    twincache_meta_entry o[TWINCACHE_MK_COUNT];
    memcpy(o, e, sizeof o);
    uint8_t ver[4], check[TWINCACHE_META_CHECK_BYTES];
    tc_store_u32(ver, v);
    o[TWINCACHE_MK_VERSION] = (twincache_meta_entry){ver, 4};
    twincache_meta mv = m;
    mv.version = v;
    if (v == 1) {
      o[TWINCACHE_MK_TAG].data = o[TWINCACHE_MK_CHECK].data = NULL;
      o[TWINCACHE_MK_TAG].size = o[TWINCACHE_MK_CHECK].size = 0;
    } else {
      twincache_meta_check_encode(&mv, check);
      o[TWINCACHE_MK_CHECK] = (twincache_meta_entry){check, sizeof check};
    }
    snprintf(file, sizeof file, "meta-%s-as-v%u", name, v);
    meta_files[n_meta_files++] = write_meta_seed(scratch, file, o);
  }
  /* chunk 0 and its first frame */
  uint8_t key[8];
  tc_cache_raw_chunk_key(key, 0);
  void *chunk = NULL;
  size_t size = 0;
  TC_REQUIRE(tc_cache_raw_get(raw, "graphs", key, 8, &chunk, &size) == 0);
  twincache_chunk_view cv;
  const void *frame;
  size_t fsize;
  TC_REQUIRE(twincache_chunk_parse(chunk, size, &cv) == 0 && twincache_chunk_frame(&cv, 0, &frame, &fsize) == 0);
  snprintf(file, sizeof file, "chunk-%s", name);
  frame_files[n_frame_files++] = write_seed(scratch, file, chunk, size);
  snprintf(file, sizeof file, "frame-%s", name);
  frame_files[n_frame_files++] = write_seed(scratch, file, frame, fsize);
  free(chunk);
  for (int k = 0; k < TWINCACHE_MK_COUNT; k++) free(val[k]);
  tc_cache_raw_abort(raw);
}

static void run_replay(const char *replay, char **files, int n, const char *scratch) {
  char **argv = calloc((size_t)n + 3, sizeof *argv);
  TC_REQUIRE(argv);
  argv[0] = (char *)replay;
  argv[1] = "--mutate";
  for (int i = 0; i < n; i++) argv[2 + i] = files[i];
  tt_result r;
  TC_REQUIRE(tt_run(argv, scratch, &r) == 0);
  TC_CHECK(r.status == 0 && strstr(r.out, "inputs ok"), "%s --mutate (%d seeds) exited %d:\n%s%s", replay, n,
           r.status, r.out, r.err);
  printf("%s", r.out);
  tt_result_clear(&r);
  free(argv);
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: test_fuzz_seeds GEN FRAME_REPLAY META_REPLAY SCRATCH\n");
    return 2;
  }
  const char *gen = argv[1], *scratch = argv[4];
  TC_REQUIRE(tt_scratch_init(scratch) == 0);
  static const struct {
    const char *name;
    const char *const flags[12];
  } kinds[] = {
      {"default", {NULL}},
      {"scm-only", {"--samples", "0", "--standardize", NULL}},
      {"soft-mlp", {"--intervention", "soft", "--mechanism", "mlp", "--mlp-hidden", "3", NULL}},
      {"noise", {"--intervention", "noise", "--values", "0.5:2", NULL}},
      {"multi-target", {"--targets-per-world", "1:3", "--intervention", "shift", NULL}},
      {"mixtures", {"--graph", "er:0.5,sf:0.3,sbm:0.2", "--mechanism", "linear:0.4,mlp:0.3,rff:0.3", "--noise",
                    "cauchy", "--hetero", "0.5", "--intervention", "soft", NULL}},
      {"iscm", {"--iscm", "--mechanism", "sigmoid", "--noise", "gumbel", NULL}},
      {"independent", {"--worlds", "independent", "--intervention", "noise", "--standardize", NULL}},
      {"independent-scm-only", {"--worlds", "independent", "--samples", "0", "--targets-per-world", "1:2", NULL}},
  };
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/cache-%s", scratch, kinds[i].name);
    const char *flags[16] = {"--chunk-graphs", "3"};
    int n = 2;
    for (int f = 0; kinds[i].flags[f] && n < 15; f++) flags[n++] = kinds[i].flags[f];
    flags[n] = NULL;
    int rc = tt_make_cache(gen, dir, scratch, 6, flags);
    TC_CHECK(rc == 0, "generate the %s cache", kinds[i].name);
    if (rc == 0) seeds_of(dir, scratch, kinds[i].name);
  }
  run_replay(argv[2], frame_files, n_frame_files, scratch);
  run_replay(argv[3], meta_files, n_meta_files, scratch);
  for (int i = 0; i < n_frame_files; i++) free(frame_files[i]);
  for (int i = 0; i < n_meta_files; i++) free(meta_files[i]);
  if (tc_test_failures() == 0) tt_remove_tree(scratch);
  return tc_test_finish("test_fuzz_seeds");
}
