/* test_flags — every numeric flag of every program against hostile values:
 * negative, 2^64, 2^64-199, 2^64-1, 1e3, empty, 0x10, trailing junk, a
 * leading space or plus. Each must exit 2 with exactly one stderr line that
 * names the flag and the accepted range, and create nothing: no cache
 * directory (gen), no log or checkpoint (train), no export files (inspect).
 * Also: show, export and dot give the same status (2) and line for an
 * INDEX outside the cache; a graph index near 2^64 is refused, not wrapped.
 * And every program's --help: status 0, its usage line on stdout, nothing on
 * stderr (the loader bench's once overran its flag array: caught under ASan).
 * usage: test_flags GEN INSPECT TRAIN LOADER_BENCH GEN_BENCH SCRATCH */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inspect_test.h"

static const char *const k_hostile[] = {"-1", "18446744073709551616", "18446744073709551417",
                                        "18446744073709551615", "1e3", "", "0x10", "12junk",
                                        " 7", "+7", "-0", NULL};

static const char *scratch;

static int exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* Runs argv; wants exit `status`, one stderr line holding `flag` and `range`
 * (when not NULL), and none of the paths in `never` (NULL-terminated). */
static void expect_refused(char **argv, int status, const char *flag, const char *range,
                           const char *const *never) {
  tt_result r;
  char cmd[1024] = "";
  for (int i = 0; argv[i]; i++) {
    strncat(cmd, "'", sizeof cmd - strlen(cmd) - 1);
    strncat(cmd, argv[i], sizeof cmd - strlen(cmd) - 1);
    strncat(cmd, "' ", sizeof cmd - strlen(cmd) - 1);
  }
  if (tt_run(argv, scratch, &r) != 0) {
    TC_CHECK(0, "could not run %s", cmd);
    return;
  }
  TC_CHECK(r.status == status, "%s: exit %d, want %d; stderr: %s", cmd, r.status, status, r.err);
  TC_CHECK(tt_count_lines(r.err) == 1, "%s: %zu stderr lines, want 1: %s", cmd, tt_count_lines(r.err), r.err);
  TC_CHECK(strstr(r.err, flag) != NULL, "%s: stderr does not name %s: %s", cmd, flag, r.err);
  if (range) TC_CHECK(strstr(r.err, range) != NULL, "%s: stderr lacks the range '%s': %s", cmd, range, r.err);
  for (int i = 0; never && never[i]; i++) {
    TC_CHECK(!exists(never[i]), "%s created %s", cmd, never[i]);
    tt_remove_tree(never[i]);
  }
  tt_result_clear(&r);
}

/* The few "hostile" spellings that are good values of a flag: 2^64-1 is a
 * seed and a --limit, -0 is the number 0, 1:1e3 and 1:+7 are weight ranges. */
static int legit(const char *flag, const char *value) {
  int near_max = !strcmp(value, "18446744073709551417") || !strcmp(value, "18446744073709551615");
  if ((!strcmp(flag, "--seed") || !strcmp(flag, "--limit")) && near_max) return 1;
  if ((!strcmp(flag, "--edge-prob") || !strcmp(flag, "--ws-p") || !strcmp(flag, "--val-split")) &&
      !strcmp(value, "-0"))
    return 1;
  if (!strcmp(flag, "--weights") && (!strcmp(value, "1:1e3") || !strcmp(value, "1:+7"))) return 1;
  return 0;
}

typedef struct flag_case {
  const char *flag;
  const char *range; /* what the line must say */
} flag_case;

int main(int argc, char **argv) {
  if (argc != 7) {
    fprintf(stderr, "usage: %s GEN INSPECT TRAIN LOADER_BENCH GEN_BENCH SCRATCH\n", argv[0]);
    return 2;
  }
  char *gen = argv[1], *inspect = argv[2], *train = argv[3], *lbench = argv[4], *gbench = argv[5];
  scratch = argv[6];
  char cache[4096], out[4200], log[4200], ck[4200], prefix[4200], base_csv[4300];
  if (tt_scratch_init(scratch) != 0) {
    fprintf(stderr, "cannot make %s\n", scratch);
    return 1;
  }
  snprintf(cache, sizeof cache, "%s/cache", scratch);
  snprintf(out, sizeof out, "%s/gen-out", scratch);
  snprintf(log, sizeof log, "%s/train.csv", scratch);
  snprintf(ck, sizeof ck, "%s/train.ck", scratch);
  snprintf(prefix, sizeof prefix, "%s/export", scratch);
  snprintf(base_csv, sizeof base_csv, "%s_base.csv", prefix);
  if (tt_make_cache(gen, cache, scratch, 5, NULL) != 0) {
    fprintf(stderr, "cannot make the test cache\n");
    return 1;
  }

  /* --help of every program */
  {
    char *progs[] = {gen, inspect, train, lbench, gbench, NULL};
    for (int i = 0; progs[i]; i++) {
      char *a[] = {progs[i], "--help", NULL};
      tt_result r;
      if (tt_run(a, scratch, &r) != 0) {
        TC_CHECK(0, "could not run %s --help", progs[i]);
        continue;
      }
      TC_CHECK(r.status == 0, "%s --help: exit %d; stderr: %s", progs[i], r.status, r.err);
      TC_CHECK(strstr(r.out, "usage") != NULL, "%s --help: no usage line: %s", progs[i], r.out);
      TC_CHECK(tt_count_lines(r.err) == 0, "%s --help: stderr: %s", progs[i], r.err);
      tt_result_clear(&r);
    }
  }

  /* twincache-gen: every numeric flag; nothing may be created at --out */
  {
    const flag_case f[] = {{"--graphs", "[0, 1152921504606846976]"}, {"--seed", "[0, 18446744073709551615]"},
                           {"--threads", "[1, 1024]"},  {"--samples", "[0, 65535]"},
                           {"--ba-m", "[1, 256]"},      {"--ws-k", "[1, 256]"},
                           {"--mlp-hidden", "[1, 64]"}, {"--zstd-level", "[1, 19]"},
                           {"--chunk-graphs", "[1, 65536]"}, {"--map-size", "[65536, 70368744177664]"},
                           {"--targets", "[1, 256]"},   {"--edge-prob", "[0, 1]"},
                           {"--ws-p", "[0, 1]"},        {"--nodes", "[1, 256]"},
                           {"--weights", "LO:HI"},      {NULL, NULL}};
    const char *never[] = {out, NULL};
    for (int i = 0; f[i].flag; i++)
      for (int v = 0; k_hostile[v]; v++) {
        char value[64];
        int pair = !strcmp(f[i].flag, "--nodes") || !strcmp(f[i].flag, "--weights");
        snprintf(value, sizeof value, pair ? "1:%s" : "%s", k_hostile[v]);
        if (legit(f[i].flag, value)) continue;
        char *a[] = {gen, "--out", out, (char *)f[i].flag, value, "--quiet", NULL};
        expect_refused(a, 2, f[i].flag, f[i].range, never);
      }
    /* the two commands, verbatim */
    char *g1[] = {gen, "--out", out, "--graphs", "18446744073709551417", NULL};
    expect_refused(g1, 2, "--graphs", "1152921504606846976", never);
    char *g2[] = {gen, "--out", out, "--map-size", "18446744073709551615", NULL};
    expect_refused(g2, 2, "--map-size", "70368744177664", never);
  }

  /* twincache-train: no log, no checkpoint */
  {
    const flag_case f[] = {{"--batch", "[1, 4096]"},          {"--steps", "[1, 4294967295]"},
                           {"--warmup", "[0, 4294967295]"},   {"--threads", "[1, 64]"},
                           {"--cpu-threads", "[1, 64]"},      {"--seed", "[0, 18446744073709551615]"},
                           {"--eval-every", "[0, 4294967295]"}, {"--checkpoint-every", "[0, 4294967295]"},
                           {"--stop-after", "[0, 4294967295]"}, {"--val-split", "[0, 1)"},
                           {NULL, NULL}};
    const char *never[] = {log, ck, NULL};
    for (int i = 0; f[i].flag; i++)
      for (int v = 0; k_hostile[v]; v++) {
        if (legit(f[i].flag, k_hostile[v])) continue;
        char *a[] = {train, "--cache", cache, "--device", "cpu", "--log", log, "--checkpoint", ck,
                     (char *)f[i].flag, (char *)k_hostile[v], NULL};
        expect_refused(a, 2, f[i].flag, f[i].range, never);
      }
  }

  /* twincache-loader-bench and twincache-gen-bench */
  {
    const flag_case f[] = {{"--threads", "[1, 100]"}, {"--batch", "[1, 65536]"}, {"--epochs", "[1, 1000]"},
                           {"--repeat", "[1, 100]"}, {NULL, NULL}};
    for (int i = 0; f[i].flag; i++)
      for (int v = 0; k_hostile[v]; v++) {
        char *a[] = {lbench, "--cache", cache, (char *)f[i].flag, (char *)k_hostile[v], NULL};
        expect_refused(a, 2, f[i].flag, f[i].range, NULL);
      }
    const flag_case g[] = {{"--graphs", "[1, 1152921504606846976]"}, {"--zstd-level", "[1, 19]"}, {NULL, NULL}};
    for (int i = 0; g[i].flag; i++)
      for (int v = 0; k_hostile[v]; v++) {
        char *a[] = {gbench, (char *)g[i].flag, (char *)k_hostile[v], NULL};
        expect_refused(a, 2, g[i].flag, g[i].range, NULL);
      }
  }

  /* twincache-inspect: --rows, --limit, and INDEX of show, export, dot */
  {
    const char *never[] = {base_csv, NULL};
    for (int v = 0; k_hostile[v]; v++) {
      char *rows[] = {inspect, "show", cache, "0", "--rows", (char *)k_hostile[v], NULL};
      expect_refused(rows, 2, "--rows", "[0, 65535]", NULL);
      if (!legit("--limit", k_hostile[v])) {
        char *limit[] = {inspect, "stats", cache, "--limit", (char *)k_hostile[v], NULL};
        expect_refused(limit, 2, "--limit", "[0, 18446744073709551615]", NULL);
      }
      char *show[] = {inspect, "show", cache, (char *)k_hostile[v], NULL};
      expect_refused(show, 2, "index", "0..4", NULL);
      char *dot[] = {inspect, "dot", cache, (char *)k_hostile[v], NULL};
      expect_refused(dot, 2, "index", "0..4", NULL);
      char *exp[] = {inspect, "export", cache, (char *)k_hostile[v], "--format", "csv", "--out", prefix, NULL};
      expect_refused(exp, 2, "index", "0..4", never);
    }
    /* one rule for an index past the end: the same status and words for all three */
    const char *past[] = {"5", "1000", NULL};
    for (int v = 0; past[v]; v++) {
      char *show[] = {inspect, "show", cache, (char *)past[v], NULL};
      expect_refused(show, 2, "out of range", "the cache has 5 graphs (0..4)", NULL);
      char *dot[] = {inspect, "dot", cache, (char *)past[v], NULL};
      expect_refused(dot, 2, "out of range", "the cache has 5 graphs (0..4)", NULL);
      char *exp[] = {inspect, "export", cache, (char *)past[v], "--format", "npy", "--out", prefix, NULL};
      expect_refused(exp, 2, "out of range", "the cache has 5 graphs (0..4)", never);
    }
  }

  if (tc_test_failures() == 0) tt_remove_tree(scratch);
  printf("%s: %d failures\n", argv[0], tc_test_failures());
  return tc_test_failures() ? 1 : 0;
}
