/* test_gen_cli — the command line's contract: --help lists every flag with a
 * default; a bad flag or value exits 2 with one line naming it; a different
 * config against an existing cache exits 1 naming the differing fields; an
 * output path that is a file exits 1; a tiny --map-size grows and the cache is
 * the same as with the default map; an LMDB env that is not a cache is refused;
 * --targets none writes graphs without twin worlds.
 * usage: test_gen_cli TWINCACHE_GEN TMPDIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tc_cache_raw.h"

#include "gen_test_util.h"

static const char *gen;

static void expect(int want_rc, const char *must_contain, const char *const *args) {
  char err[8192];
  int rc = tg_run(gen, args, err, sizeof err);
  TC_REQUIRE(rc == want_rc, "args starting '%s %s': exit %d, expected %d; stderr: %s", args[0],
        args[1] ? args[1] : "", rc, want_rc, err);
  if (must_contain) TC_REQUIRE(strstr(err, must_contain) != NULL, "stderr lacks '%s': %s", must_contain, err);
  if (want_rc == 2) {
    char *nl = strchr(err, '\n');
    TC_REQUIRE(nl && nl[1] == 0, "usage error is not exactly one line: %s", err);
  }
}

static void count_inter(const twincache_graph *g, const twincache_dims *dims, void *user) {
  (void)dims;
  *(uint64_t *)user += g->n_inter;
}

int main(int argc, char **argv) {
  TC_REQUIRE(argc == 3, "usage: %s TWINCACHE_GEN TMPDIR", argv[0]);
  gen = argv[1];
  char root[4096], a[4600], b[4600], file[4600], help[16384];
  snprintf(root, sizeof root, "%s/gen_cli", argv[2]);
  snprintf(a, sizeof a, "%s/a", root);
  snprintf(b, sizeof b, "%s/b", root);
  snprintf(file, sizeof file, "%s/plain-file", root);
  tg_rmrf(a);
  tg_rmrf(b);
  unlink(file);
  TC_REQUIRE(tg_mkdir(root), "mkdir");

  /* --help: exit 0 and every flag with a default */
  {
    int fds[2];
    TC_REQUIRE(pipe(fds) == 0, "pipe");
    pid_t pid = fork();
    if (pid == 0) {
      dup2(fds[1], 1);
      close(fds[0]);
      execl(gen, gen, "--help", (char *)NULL);
      _exit(127);
    }
    close(fds[1]);
    size_t used = 0;
    ssize_t got;
    while ((got = read(fds[0], help + used, sizeof help - 1 - used)) > 0) used += (size_t)got;
    help[used] = 0;
    close(fds[0]);
    TC_REQUIRE(tg_wait(pid) == 0, "--help exit");
    const char *flags[] = {"--out", "--graphs", "--seed", "--threads", "--nodes", "--samples",
                           "--graph", "--edge-prob", "--expected-degree", "--ba-m", "--ws-k",
                           "--ws-p", "--mechanism", "--weights", "--mlp-hidden", "--noise",
                           "--noise-scale", "--standardize", "--intervention", "--targets",
                           "--values", "--value-dist", "--zstd-level", "--chunk-graphs",
                           "--map-size", "--quiet", "--help", NULL};
    for (int i = 0; flags[i]; i++) TC_REQUIRE(strstr(help, flags[i]) != NULL, "--help lacks %s", flags[i]);
    TC_REQUIRE(strstr(help, "default 5:10") && strstr(help, "default 0.3") && strstr(help, "default 64"),
          "--help lacks defaults");
    /* help and parser agree: every name a choice flag's help lists is accepted
     * (the run then fails on the later --nodes 10:5, never on the choice) */
    const char *choice_flags[] = {"--graph ", "--mechanism ", "--noise ", "--intervention ", "--value-dist ",
                                  "--encoding ", NULL};
    for (int i = 0; choice_flags[i]; i++) {
      const char *line = strstr(help, choice_flags[i]);
      TC_REQUIRE(line, "--help lacks %s", choice_flags[i]);
      const char *p = line + strlen(choice_flags[i]);
      int names = 0;
      for (;;) {
        char name[64];
        size_t len = strcspn(p, "| \n");
        TC_REQUIRE(len > 0 && len < sizeof name, "%s: odd choice list in --help", choice_flags[i]);
        memcpy(name, p, len);
        name[len] = 0;
        char flag[32];
        snprintf(flag, sizeof flag, "%.*s", (int)strlen(choice_flags[i]) - 1, choice_flags[i]);
        const char *x[] = {"--out", a, flag, name, "--nodes", "10:5", NULL};
        expect(2, "--nodes", x);
        names++;
        if (p[len] != '|') break;
        p += len + 1;
      }
      TC_REQUIRE(names >= 2, "%s lists %d choices", choice_flags[i], names);
    }
    TC_REQUIRE(!strstr(help, "|mixed"), "--help lists --mechanism mixed, which the parser refuses");
  }

  /* usage errors: exit 2, one line, naming the flag */
  { const char *x[] = {"--graphs", "10", NULL}; expect(2, "--out", x); }
  { const char *x[] = {"--out", a, "--bogus", "1", NULL}; expect(2, "--bogus", x); }
  { const char *x[] = {"--out", a, "--graphs", "ten", NULL}; expect(2, "--graphs", x); }
  { const char *x[] = {"--out", a, "--graphs", "-5", NULL}; expect(2, "--graphs", x); }
  { const char *x[] = {"--out", a, "--nodes", "10:5", NULL}; expect(2, "--nodes", x); }
  { const char *x[] = {"--out", a, "--nodes", "0:5", NULL}; expect(2, "--nodes", x); }
  { const char *x[] = {"--out", a, "--nodes", "5", NULL}; expect(2, "--nodes", x); }
  { const char *x[] = {"--out", a, "--nodes", "5:300", NULL}; expect(2, "--nodes", x); }
  { const char *x[] = {"--out", a, "--edge-prob", "1.5", NULL}; expect(2, "--edge-prob", x); }
  { const char *x[] = {"--out", a, "--noise", "student", NULL}; expect(2, "--noise", x); }
  { const char *x[] = {"--out", a, "--mechanism", "gp", NULL}; expect(2, "--mechanism", x); }
  { const char *x[] = {"--out", a, "--intervention", "hard", NULL}; expect(2, "--intervention", x); }
  { const char *x[] = {"--out", a, "--intervention", "noise", "--value-dist", "uniform", "--values", "-1:1", NULL};
    expect(2, "factor: LO >= 0", x); }
  { const char *x[] = {"--out", a, "--targets", "nothing", NULL}; expect(2, "--targets", x); }
  { const char *x[] = {"--out", a, "--targets", "0", NULL}; expect(2, "all, none or an integer", x); }
  { const char *x[] = {"--out", a, "--zstd-level", "99", NULL}; expect(2, "--zstd-level", x); }
  { const char *x[] = {"--out", a, "--threads", "0", NULL}; expect(2, "--threads", x); }
  { const char *x[] = {"--out", a, "--samples", "65536", NULL}; expect(2, "--samples", x); }
  { const char *x[] = {"--out", a, "--weights", "2:1", NULL}; expect(2, "--weights", x); }
  { const char *x[] = {"--out", a, "--map-size", "100", NULL}; expect(2, "--map-size", x); }
  { const char *x[] = {"--out", a, "--seed", NULL}; expect(2, "--seed", x); }
  { const char *x[] = {"--out", a, "--graph", "ws", "--ws-k", "3", "--nodes", "5:10", NULL}; expect(2, "--ws-k", x); }
  { const char *x[] = {"--out", a, "--graph", "er", "--ba-m", "3", NULL}; expect(2, "--ba-m", x); }
  /* a flag and the rule it broke, apart: each family's, mechanism's and
   * kind's own check says why; a range alone says nothing more */
  { const char *x[] = {"--out", a, "--graph", "ws", "--ws-k", "3", "--nodes", "6:10", NULL};
    expect(2, "invalid value for --ws-k: 2 x K must stay below the smallest node count of --nodes (see", x); }
  { const char *x[] = {"--out", a, "--mechanism", "poly", "--nodes", "66:66", NULL};
    expect(2, "invalid value for --nodes: poly: one unit per parent, at most 65 nodes (see", x); }
  { const char *x[] = {"--out", a, "--intervention", "soft", "--targets-per-world", "1:2", NULL};
    expect(2, "invalid value for --targets-per-world: a soft intervention has one target (see", x); }
  { const char *x[] = {"--out", a, "extra", NULL}; expect(2, "extra", x); }
  /* more targets per world than any graph has nodes: refused, not clamped
   * under a config that records what never happened */
  { const char *x[] = {"--out", a, "--targets-per-world", "11:11", "--nodes", "10:10", NULL};
    expect(2, "invalid value for --targets-per-world: HI must be at most the largest --nodes (see --help)", x); }
  { const char *x[] = {"--out", a, "--targets-per-world", "2:11", "--nodes", "5:10", NULL};
    expect(2, "--targets-per-world", x); }
  /* --targets K above the largest --nodes: refused likewise (every graph
   * would intervene on all its nodes under a config recording K) */
  { const char *x[] = {"--out", a, "--targets", "11", "--nodes", "10:10", NULL};
    expect(2, "invalid value for --targets: K must be at most the largest --nodes (see --help)", x); }
  { const char *x[] = {"--out", a, "--targets", "4", "--nodes", "1:3", NULL};
    expect(2, "invalid value for --targets: K must be at most the largest --nodes (see --help)", x); }
  /* --inter-samples M: at least one row a world (M >= the most worlds a
   * graph has), at most S a world (M <= S x the fewest): never cut silently
   * under a config recording M */
  { const char *x[] = {"--out", a, "--samples", "10", "--nodes", "3:6", "--inter-samples", "5", NULL};
    expect(2, "invalid value for --inter-samples: M must be at least the most worlds a graph has", x); }
  { const char *x[] = {"--out", a, "--samples", "10", "--nodes", "3:6", "--inter-samples", "31", NULL};
    expect(2, "invalid value for --inter-samples: M must be at most S x the fewest worlds a graph has (--targets, "
              "else the smallest --nodes), 10 x 3 = 30: each world holds at most S rows (see --help)\n", x); }
  { const char *x[] = {"--out", a, "--samples", "100", "--nodes", "5:10", "--targets", "7", "--inter-samples", "2000",
                       NULL};
    expect(2, "invalid value for --inter-samples: M must be at most S x the fewest worlds a graph has (--targets, "
              "else the smallest --nodes), 100 x 5 = 500:", x); }
  { const char *x[] = {"--out", a, "--samples", "100", "--nodes", "5:10", "--targets", "2", "--inter-samples", "201",
                       NULL};
    expect(2, "100 x 2 = 200:", x); }
  /* mixture weights whose sum overflows: refused with the reason */
  { const char *x[] = {"--out", a, "--graph", "er:1e308,ba:1e308", NULL}; expect(2, "below 1e300", x); }
  { const char *x[] = {"--out", a, "--mechanism", "linear:1e308,mlp:1e308", NULL}; expect(2, "below 1e300", x); }
  { const char *x[] = {"--out", a, "--mechanism", "mixed", NULL}; expect(2, "unknown mechanism 'mixed'", x); }
  TC_REQUIRE(access(a, F_OK) != 0, "a usage error created %s", a);
  { /* the limit itself is accepted: 10 rows in each of a 3-node graph's worlds */
    char c3[4600];
    snprintf(c3, sizeof c3, "%s/rows-limit", root);
    tg_rmrf(c3);
    const char *x[] = {"--out", c3, "--graphs", "4", "--samples", "10", "--nodes", "3:6", "--inter-samples", "30",
                       "--quiet", NULL};
    expect(0, NULL, x);
    tg_rmrf(c3);
  }

  /* numbers near 2^64 and other hostile spellings: exit 2 naming the flag
   * and its range, and no directory, no LMDB environment */
  {
    const char *hostile[] = {"18446744073709551417", "18446744073709551615", "18446744073709551616",
                             "-1", "1e3", "", "0x10", "7junk", "+7", " 7", NULL};
    const char *flags[][2] = {{"--graphs", "[0, 1152921504606846976]"},
                              {"--map-size", "[65536, 70368744177664]"},
                              {"--chunk-graphs", "[1, 65536]"},
                              {"--threads", "[1, 1024]"},
                              {"--samples", "[0, 65535]"},
                              {NULL, NULL}};
    for (int f = 0; flags[f][0]; f++)
      for (int v = 0; hostile[v]; v++) {
        const char *x[] = {"--out", a, flags[f][0], hostile[v], "--quiet", NULL};
        expect(2, flags[f][0], x);
        expect(2, flags[f][1], x);
        TC_REQUIRE(access(a, F_OK) != 0, "%s %s created %s", flags[f][0], hostile[v], a);
      }
    /* the commands: nothing written, not even an empty environment */
    { const char *x[] = {"--out", a, "--graphs", "18446744073709551417", NULL}; expect(2, "--graphs", x); }
    { const char *x[] = {"--out", a, "--map-size", "18446744073709551615", NULL}; expect(2, "--map-size", x); }
    TC_REQUIRE(access(a, F_OK) != 0, "the 2^64 commands created %s", a);
    /* the ends of the ranges pass parsing (the config check is what runs) */
    { const char *x[] = {"--out", a, "--graphs", "1152921504606846977", NULL}; expect(2, "--graphs", x); }
    TC_REQUIRE(access(a, F_OK) != 0, "2^60+1 graphs created %s", a);
  }

  /* a cache, then a different config against it: exit 3, the cache untouched */
  { const char *x[] = {"--out", a, "--graphs", "40", "--chunk-graphs", "8", "--quiet", NULL}; expect(0, NULL, x); }
  { const char *x[] = {"--out", a, "--graphs", "40", "--chunk-graphs", "8", "--seed", "3", NULL};
    expect(3, "seed", x); }
  { const char *x[] = {"--out", a, "--graphs", "40", "--chunk-graphs", "8", "--samples", "32", NULL};
    expect(3, "samples", x); }
  { const char *x[] = {"--out", a, "--graphs", "40", "--chunk-graphs", "4", NULL};
    expect(3, "chunk_graphs", x); }
  /* another kind of worlds: a twin cache (format 4) is not extended with independent ones (5) */
  { const char *x[] = {"--out", a, "--graphs", "40", "--chunk-graphs", "8", "--worlds", "independent", NULL};
    expect(3, "another kind of worlds", x); }
  { const char *x[] = {"--out", a, "--graphs", "40", "--chunk-graphs", "8", "--worlds", "both", NULL};
    expect(2, "--worlds", x); }
  TC_REQUIRE(tg_committed(a) == 40, "refused runs changed the cache");
  /* same config again: nothing to do, success; fewer graphs: success, untouched */
  { const char *x[] = {"--out", a, "--graphs", "40", "--chunk-graphs", "8", NULL}; expect(0, NULL, x); }
  { const char *x[] = {"--out", a, "--graphs", "10", "--chunk-graphs", "8", NULL}; expect(0, "already holds 40", x); }
  TC_REQUIRE(tg_committed(a) == 40, "committed changed");

  /* --out is a plain file */
  FILE *f = fopen(file, "w");
  TC_REQUIRE(f != NULL, "create %s", file);
  fputs("not a cache\n", f);
  fclose(f);
  { const char *x[] = {"--out", file, "--graphs", "4", NULL}; expect(1, "not a directory", x); }

  /* an LMDB environment holding something else */
  {
    char c[4600];
    snprintf(c, sizeof c, "%s/other-lmdb", root);
    tg_rmrf(c);
    TC_REQUIRE(tg_mkdir(c), "mkdir");
    tc_cache_raw *raw = NULL;
    TC_REQUIRE(tc_cache_raw_open(c, 1, &raw) == 0, "lmdb open");
    TC_REQUIRE(raw && tc_cache_raw_put(raw, NULL, "key", 3, "value", 5) == 0 && tc_cache_raw_close(raw) == 0, "put");
    const char *x[] = {"--out", c, "--graphs", "4", NULL};
    expect(1, "not a twincache cache", x);
    tg_rmrf(c);
  }

  /* map growth: a 64 KiB map must grow (many times) and give the same cache */
  tg_rmrf(a);
  { const char *x[] = {"--out", a, "--graphs", "600", "--chunk-graphs", "16", "--quiet", NULL}; expect(0, NULL, x); }
  { const char *x[] = {"--out", b, "--graphs", "600", "--chunk-graphs", "16", "--quiet", "--map-size",
                       "65536", NULL};
    expect(0, NULL, x); }
  char why[512];
  TC_REQUIRE(tg_cache_compare(a, b, why, sizeof why) == 0, "map growth changed the cache: %s", why);
  TC_REQUIRE(tg_committed(b) == 600, "map growth run committed %llu", (unsigned long long)tg_committed(b));

  /* the meta entries a reader needs */
  size_t n;
  char *cfg = tg_meta(a, TWINCACHE_META_CONFIG, &n);
  TC_REQUIRE(cfg && strstr(cfg, "\"seed\":0") && strstr(cfg, "\"chunk_graphs\":16"), "config: %s", cfg ? cfg : "(none)");
  free(cfg);
  char *dims_raw = tg_meta(a, TWINCACHE_META_DIMS, &n);
  twincache_dims dims;
  TC_REQUIRE(dims_raw && twincache_dims_decode(dims_raw, n, &dims) == 0, "dims");
  TC_REQUIRE(dims.graphs == 600 && dims.chunk_graphs == 16 && dims.max_nodes == 10 && dims.max_inter == 10 &&
            dims.samples == 64 && dims.hidden == 0,
        "dims %llu %u %u %u %u %u", (unsigned long long)dims.graphs, dims.chunk_graphs, dims.max_nodes,
        dims.max_inter, dims.samples, dims.hidden);
  free(dims_raw);
  char *stats_raw = tg_meta(a, TWINCACHE_META_STATS, &n);
  twincache_stats st;
  TC_REQUIRE(stats_raw && twincache_stats_decode(stats_raw, n, &st) == 0, "stats");
  TC_REQUIRE(st.nodes >= 600 * 5 && st.nodes <= 600 * 10 && st.frame_bytes > 0 &&
            st.frame_bytes < st.raw_bytes && st.raw_bytes >= st.nodes * 64 * 4,
        "stats implausible");
  free(stats_raw);
  char *lib = tg_meta(a, TWINCACHE_META_LIBRARY, &n);
  TC_REQUIRE(lib && strstr(lib, TWINCACHE_VERSION_STRING), "library");
  free(lib);

  /* --targets none: observational only, every graph without a twin world,
   * the config says so (a capacity of one world stays in the dims) */
  tg_rmrf(b);
  { const char *x[] = {"--out", b, "--graphs", "12", "--nodes", "4:6", "--targets", "none", "--quiet", NULL};
    expect(0, NULL, x); }
  cfg = tg_meta(b, TWINCACHE_META_CONFIG, &n);
  TC_REQUIRE(cfg && strstr(cfg, "\"targets\":\"none\""), "--targets none config: %s", cfg ? cfg : "(none)");
  free(cfg);
  uint64_t obs_inter = 0;
  TC_REQUIRE(tg_for_each_graph(b, count_inter, &obs_inter) == 12, "--targets none: 12 graphs");
  TC_REQUIRE(obs_inter == 0, "--targets none: %llu twin worlds", (unsigned long long)obs_inter);

  tg_rmrf(a);
  tg_rmrf(b);
  unlink(file);
  tg_rmrf(root);
  printf("test_gen_cli: ok\n");
  return 0;
}
