/* test_inspect_cli.c — the command line's contract: --help (top level and
 * per command) exits 0 listing its flags; a bad command, flag, value or index
 * exits 2 with one line on stderr; a missing or non-cache directory exits 1
 * with one line naming the path.
 * usage: test_inspect_cli GEN INSPECT SCRATCH */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "inspect_test.h"

/* Runs argv; checks exit status, stderr line count (when err_lines >= 0) and
 * that `needle` (when not NULL) occurs in stdout+stderr. */
static void expect(char **argv, const char *scratch, int status, int err_lines, const char *needle) {
  tt_result r;
  if (tt_run(argv, scratch, &r) != 0) {
    TC_CHECK(0, "could not run %s", argv[0]);
    return;
  }
  char cmd[512] = "";
  for (int i = 1; argv[i]; i++) {
    strncat(cmd, argv[i], sizeof cmd - strlen(cmd) - 2);
    strncat(cmd, " ", sizeof cmd - strlen(cmd) - 1);
  }
  TC_CHECK(r.status == status, "'%s' exited %d, want %d; stderr: %s", cmd, r.status, status, r.err);
  if (err_lines >= 0)
    TC_CHECK(tt_count_lines(r.err) == (size_t)err_lines, "'%s': %zu stderr lines, want %d: %s", cmd,
          tt_count_lines(r.err), err_lines, r.err);
  if (needle)
    TC_CHECK(strstr(r.out, needle) || strstr(r.err, needle), "'%s' output lacks '%s': %s%s", cmd,
          needle, r.out, r.err);
  tt_result_clear(&r);
}

int main(int argc, char **argv) {
  char cache[4096], missing[4096], plain[4096];
  int rc = tt_begin(argc, argv, 5, cache, sizeof cache);
  if (rc) return rc;
  const char *scratch = argv[3];
  char *in = argv[2];
  snprintf(missing, sizeof missing, "%s/no-such-cache", scratch);
  snprintf(plain, sizeof plain, "%s/plain-dir", scratch);
  mkdir(plain, 0755);

  /* help */
  char *h0[] = {in, "--help", NULL};
  expect(h0, scratch, 0, 0, "verify");
  const char *cmds[][2] = {{"info", "--json"},   {"show", "--rows"},  {"verify", "--quiet"},
                           {"stats", "--limit"}, {"export", "--force"}, {"dot", "DOT"}};
  for (int i = 0; i < 6; i++) {
    char *h[] = {in, (char *)cmds[i][0], "--help", NULL};
    expect(h, scratch, 0, 0, cmds[i][1]);
  }
  /* usage errors: exit 2, one line */
  char *u0[] = {in, NULL};
  expect(u0, scratch, 2, -1, "usage");
  char *u1[] = {in, "frobnicate", cache, NULL};
  expect(u1, scratch, 2, 1, "frobnicate");
  char *u2[] = {in, "info", cache, "--bogus", NULL};
  expect(u2, scratch, 2, 1, "--bogus");
  char *u3[] = {in, "info", NULL};
  expect(u3, scratch, 2, 1, NULL);
  char *u4[] = {in, "show", cache, "5", NULL};
  expect(u4, scratch, 2, 1, "0..4");
  /* an index past the end: the same status and words for show, dot, export */
  char *u4d[] = {in, "dot", cache, "5", NULL};
  expect(u4d, scratch, 2, 1, "out of range: the cache has 5 graphs (0..4)");
  char prefix[4200];
  snprintf(prefix, sizeof prefix, "%s/exported", scratch);
  char *u4e[] = {in, "export", cache, "5", "--format", "csv", "--out", prefix, NULL};
  expect(u4e, scratch, 2, 1, "out of range: the cache has 5 graphs (0..4)");
  char *u4s[] = {in, "show", cache, "18446744073709551615", NULL};
  expect(u4s, scratch, 2, 1, "0..4");
  char *u5[] = {in, "dot", cache, "x1", NULL};
  expect(u5, scratch, 2, 1, "x1");
  char *u6[] = {in, "stats", cache, "--limit", NULL};
  expect(u6, scratch, 2, 1, "--limit");
  char *u7[] = {in, "info", cache, "--json=yes", NULL};
  expect(u7, scratch, 2, 1, "--json");
  char *u8[] = {in, "verify", cache, "extra", NULL};
  expect(u8, scratch, 2, 1, NULL);
  /* runtime errors: exit 1, one line naming the path */
  const char *per_cache[] = {"info", "verify", "stats"};
  for (int i = 0; i < 3; i++) {
    char *m[] = {in, (char *)per_cache[i], missing, NULL};
    expect(m, scratch, 1, 1, missing);
    char *p[] = {in, (char *)per_cache[i], plain, NULL};
    expect(p, scratch, 1, 1, plain);
  }
  char *m2[] = {in, "show", missing, "0", NULL};
  expect(m2, scratch, 1, 1, missing);
  /* a lone shard's index range is its own (issue 35: the message named the
   * whole cache's count): shard 1 of 2 of 40 graphs in chunks of 16 holds 16..39 */
  char set[4200], shard[4300];
  snprintf(set, sizeof set, "%s/set", scratch);
  snprintf(shard, sizeof shard, "%s/shard-00001-of-00002", set);
  const char *half[] = {"--shard", "1/2", NULL};
  TC_REQUIRE(tt_make_cache(argv[1], set, scratch, 40, half) == 0);
  char *s1[] = {in, "show", shard, "40", NULL};
  expect(s1, scratch, 2, 1, "out of range: shard 1 of 2 holds 24 graphs (16..39); open the set for the others");
  char *s2[] = {in, "dot", shard, "15", NULL};
  expect(s2, scratch, 2, 1, "out of range: shard 1 of 2 holds 24 graphs (16..39)");
  char *s3[] = {in, "show", shard, "x", NULL};
  expect(s3, scratch, 2, 1, "expected an integer in 16..39");
  char *s4[] = {in, "show", shard, "16", NULL};
  expect(s4, scratch, 0, 0, "graph 16");
  /* and the good path */
  char *ok[] = {in, "verify", cache, NULL};
  expect(ok, scratch, 0, 0, "all 5 graphs");

  if (tc_test_failures() == 0) tt_remove_tree(scratch);
  printf("%s: %d failures\n", argv[0], tc_test_failures());
  return tc_test_failures() ? 1 : 0;
}
