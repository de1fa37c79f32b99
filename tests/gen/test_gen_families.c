/* test_gen_families — the graph families of twincache-gen, read back from
 * real caches: each graph records its family (format v4, byte 27); sf has a
 * power-law in-degree (out-degree <= m, CCDF slope near -2) and ba does not
 * point its hubs; sbm's densities inside and between blocks match p_in and
 * p_out; rgg's density matches the chance that two uniform points of the
 * unit square are closer than r (none at r = 0, all at r = 1.5); a mixture
 * draws families in proportion to its weights; a --graph-file DAG is every
 * graph's structure; bad edge lists fail with one line naming file and
 * line; all of it byte-identical across thread counts.
 * usage: test_gen_families TWINCACHE_GEN TMPDIR */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_test_util.h"

static const char *gen;
static char tmp[4096];

static void build_dir(char *dir, size_t cap, const char *name) { snprintf(dir, cap, "%s/%s", tmp, name); }

static void build(const char *name, const char *threads, const char *graphs, const char *const *opts) {
  char dir[4600], err[8192];
  build_dir(dir, sizeof dir, name);
  tg_rmrf(dir);
  const char *args[64] = {"--out", dir, "--threads", threads, "--graphs", graphs, "--quiet", "--samples", "4"};
  int n = 9;
  for (int i = 0; opts[i]; i++) args[n++] = opts[i];
  args[n] = NULL;
  int rc = tg_run(gen, args, err, sizeof err);
  TC_REQUIRE(rc == 0, "%s: exit %d: %s", name, rc, err);
}

/* ---- per-graph accumulators ---------------------------------------------------- */
typedef struct acc {
  uint64_t graphs, family[256];
  uint64_t in_ge[5];          /* nodes with in-degree >= 4, 8, 16, 32, 64 */
  uint64_t nodes, max_out, max_in_sum;
  double pairs_in, edges_in, pairs_out, edges_out; /* sbm: label blocks [0,n/2), [n/2,n) */
  double pairs, edges;
  const uint8_t *want_adj;    /* file: the expected (n,n) adjacency */
  uint32_t want_n, adj_mismatch;
} acc;

static void visit(const twincache_graph *g, const twincache_dims *dims, void *user) {
  (void)dims;
  acc *a = user;
  uint32_t n = g->n_nodes, in[TWINCACHE_MAX_NODES] = {0}, out[TWINCACHE_MAX_NODES] = {0}, max_in = 0;
  a->graphs++;
  a->family[g->family]++;
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t j = 0; j < n; j++) {
      int e = g->adj[(size_t)i * g->ld_adj + j] != 0;
      in[j] += e;
      out[i] += e;
      if (i < j) {
        int e2 = e || g->adj[(size_t)j * g->ld_adj + i];
        int same = (i < n / 2) == (j < n / 2);
        if (same) a->pairs_in++, a->edges_in += e2;
        else a->pairs_out++, a->edges_out += e2;
        a->pairs++, a->edges += e2;
      }
      if (a->want_adj && (n != a->want_n || e != a->want_adj[i * a->want_n + j])) a->adj_mismatch++;
    }
  for (uint32_t j = 0; j < n; j++) {
    for (int b = 0; b < 5; b++) a->in_ge[b] += in[j] >= (4u << b);
    if (out[j] > a->max_out) a->max_out = out[j];
    if (in[j] > max_in) max_in = in[j];
  }
  a->nodes += n;
  a->max_in_sum += max_in;
}

static acc scan(const char *name) {
  char dir[4600];
  build_dir(dir, sizeof dir, name);
  acc a;
  memset(&a, 0, sizeof a);
  tg_for_each_graph(dir, visit, &a);
  return a;
}

static void same(const char *x, const char *y) {
  char a[4600], b[4600], why[512];
  build_dir(a, sizeof a, x);
  build_dir(b, sizeof b, y);
  TC_REQUIRE(tg_cache_compare(a, b, why, sizeof why) == 0, "%s vs %s: %s", x, y, why);
}

/* Least-squares slope of log P(in >= d) against log d over d = 4..32. For
 * sf with m = 2, P(in = d) ~ (d + 2)^-3, so P(in >= d) ~ (d + 2)^-2: a slope
 * of -1.7 over 4..32; at 100 nodes the largest in-degrees (~30) cut the tail
 * and steepen it (measured -1.91). A Poisson tail of the same mean falls off
 * far faster (er below). */
static double ccdf_slope(const acc *a) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  int m = 0;
  for (int b = 0; b < 4; b++) {
    if (!a->in_ge[b]) break;
    double x = log(4.0 * (1 << b)), y = log((double)a->in_ge[b] / (double)a->nodes);
    sx += x, sy += y, sxx += x * x, sxy += x * y, m++;
  }
  TC_REQUIRE(m >= 3, "in-degree tail too short (%d points)", m);
  return (m * sxy - sx * sy) / (m * sxx - sx * sx);
}

static void scale_free(void) {
  const char *sf[] = {"--graph", "sf", "--ba-m", "2", "--nodes", "100:100", NULL};
  build("sf", "2", "300", sf);
  acc a = scan("sf");
  TC_CHECK(a.graphs == 300 && a.family[TWINCACHE_FAMILY_SF] == 300);
  TC_CHECK(a.max_out <= 2); /* every node sends m edges to older nodes: out-degree <= m */
  double slope = ccdf_slope(&a); /* BA: P(in = d) ~ d^-3, so P(in >= d) ~ d^-2 */
  printf("sf: in-degree CCDF slope %.2f, mean max in-degree %.1f\n", slope, (double)a.max_in_sum / a.graphs);
  TC_CHECK(slope > -2.5 && slope < -1.4);
  TC_CHECK((double)a.max_in_sum / a.graphs > 15.0); /* hubs; ER of the same mean has max ~ 7 */
  /* ba oriented at random: hubs send as much as they receive */
  const char *ba[] = {"--graph", "ba", "--ba-m", "2", "--nodes", "100:100", NULL};
  build("ba", "2", "100", ba);
  acc b = scan("ba");
  TC_CHECK(b.family[TWINCACHE_FAMILY_BA] == 100 && b.max_out > 10);
  /* er with the same mean degree: no heavy in-degree tail */
  const char *er[] = {"--graph", "er", "--expected-degree", "4", "--nodes", "100:100", NULL};
  build("er", "2", "100", er);
  acc e = scan("er");
  printf("er: mean max in-degree %.1f\n", (double)e.max_in_sum / e.graphs);
  TC_CHECK((double)e.max_in_sum / e.graphs < 10.0);
  TC_CHECK(e.in_ge[2] * 1000 < e.nodes); /* P(in >= 16) < 0.1% for Poisson(2) */
  TC_CHECK(a.in_ge[2] * 100 > a.nodes);  /* > 1% for sf */
}

static void block_model(void) {
  const char *sbm[] = {"--graph", "sbm", "--sbm-blocks", "2", "--sbm-p-in", "0.6", "--sbm-p-out", "0.05",
                       "--nodes", "20:20", NULL};
  build("sbm", "2", "1000", sbm);
  acc a = scan("sbm");
  double pin = a.edges_in / a.pairs_in, pout = a.edges_out / a.pairs_out;
  printf("sbm: density in blocks %.4f (p_in 0.6), between %.4f (p_out 0.05)\n", pin, pout);
  TC_CHECK(a.family[TWINCACHE_FAMILY_SBM] == 1000);
  /* 90000 pairs in blocks, 100000 between: 4 sigma is < 0.007 */
  TC_CHECK(fabs(pin - 0.6) < 0.01 && fabs(pout - 0.05) < 0.005);
}

static void geometric(void) {
  const char *rgg[] = {"--graph", "rgg", "--rgg-radius", "0.3", "--nodes", "12:12", NULL};
  build("rgg", "2", "2000", rgg);
  acc a = scan("rgg");
  double r = 0.3, want = M_PI * r * r - 8.0 * r * r * r / 3.0 + r * r * r * r / 2.0; /* 0.2124 */
  printf("rgg: density %.4f, P(|U-V| < %.1f) = %.4f\n", a.edges / a.pairs, r, want);
  TC_CHECK(a.family[TWINCACHE_FAMILY_RGG] == 2000);
  TC_CHECK(fabs(a.edges / a.pairs - want) < 0.01);
  const char *none[] = {"--graph", "rgg", "--rgg-radius", "0", NULL};
  const char *all[] = {"--graph", "rgg", "--rgg-radius", "1.5", NULL};
  build("rgg0", "1", "50", none);
  build("rgg1", "1", "50", all);
  acc z = scan("rgg0"), o = scan("rgg1");
  TC_CHECK(z.edges == 0 && o.edges == o.pairs);
}

static void mixture(void) {
  const char *mix[] = {"--graph", "er:0.5,sf:0.3,sbm:0.15,rgg:0.05", "--chunk-graphs", "8", NULL};
  build("mix_t1", "1", "4000", mix);
  build("mix_t2", "2", "4000", mix);
  build("mix_t8", "8", "4000", mix);
  same("mix_t1", "mix_t2");
  same("mix_t1", "mix_t8");
  acc a = scan("mix_t1");
  const int fam[4] = {TWINCACHE_FAMILY_ER, TWINCACHE_FAMILY_SF, TWINCACHE_FAMILY_SBM, TWINCACHE_FAMILY_RGG};
  const double w[4] = {0.5, 0.3, 0.15, 0.05};
  uint64_t sum = 0;
  for (int k = 0; k < 4; k++) {
    double p = w[k], got = (double)a.family[fam[k]], mean = 4000 * p, sd = sqrt(4000 * p * (1 - p));
    printf("mixture: %s %.0f graphs (expected %.0f +- %.0f)\n",
           twincache_choice_name(TWINCACHE_CHOICE_FAMILY, fam[k]), got, mean, sd);
    TC_CHECK(fabs(got - mean) < 4 * sd);
    sum += a.family[fam[k]];
  }
  TC_CHECK(sum == 4000);
}

static void edge_file(void) {
  char path[4600], err[8192], dir[4600];
  snprintf(path, sizeof path, "%s/dag.txt", tmp);
  FILE *f = fopen(path, "w");
  TC_REQUIRE(f != NULL);
  fputs("# a small DAG; node 6 is isolated\nnodes 7\n0 1\n1 2\n0 3 # comment\n\n3 2\n5 4\n4 0\n", f);
  fclose(f);
  const char *opts[] = {"--graph-file", path, "--chunk-graphs", "8", NULL};
  build("file_t1", "1", "60", opts);
  build("file_t2", "2", "60", opts);
  same("file_t1", "file_t2");
  uint8_t want[49] = {0};
  const int e[][2] = {{0, 1}, {1, 2}, {0, 3}, {3, 2}, {5, 4}, {4, 0}};
  for (int k = 0; k < 6; k++) want[e[k][0] * 7 + e[k][1]] = 1;
  acc a;
  memset(&a, 0, sizeof a);
  a.want_adj = want;
  a.want_n = 7;
  build_dir(dir, sizeof dir, "file_t1");
  tg_for_each_graph(dir, visit, &a);
  TC_CHECK(a.graphs == 60 && a.family[TWINCACHE_FAMILY_FILE] == 60 && a.adj_mismatch == 0);
  /* bad files: one line naming the file and the line, exit 2, nothing created */
  struct { const char *text, *want; } bad[] = {
      {"0 1\n1 2\n2 0\n", "lies on a directed cycle"},
      {"0 1\n\n1 x\n", ":3: expected an edge"},
      {"0 1\n0 1\n", ":2: edge 0 -> 1 again (first on line 1)"},
      {"0 1\n1 0\n", ":2: edge 1 -> 0 and 0 -> 1 (line 1) make a cycle"},
      {"3 3\n", ":1: self-loop"},
      {"0 300\n", ":1: node id out of range"},
      {"nodes 2\n0 5\n", "'nodes 2' but node id 5 appears"},
      {"# nothing\n", "no edges"},
  };
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    f = fopen(path, "w");
    TC_REQUIRE(f != NULL);
    fputs(bad[k].text, f);
    fclose(f);
    build_dir(dir, sizeof dir, "file_bad");
    tg_rmrf(dir);
    const char *args[] = {"--out", dir, "--graph-file", path, "--quiet", NULL};
    int rc = tg_run(gen, args, err, sizeof err);
    TC_CHECK(rc == 2);
    TC_CHECK(strstr(err, path) != NULL && strstr(err, bad[k].want) != NULL);
    if (!strstr(err, bad[k].want)) fprintf(stderr, "case %zu: %s", k, err);
    TC_CHECK(strchr(err, '\n') == err + strlen(err) - 1); /* one line */
    TC_CHECK(tg_committed(dir) == 0);
  }
  /* a NUL byte: refused (the bytes after it were neither parsed nor hashed) */
  f = fopen(path, "wb");
  TC_REQUIRE(f != NULL);
  fwrite("0 1\n1 2\0 2 3\n", 1, 14, f);
  fclose(f);
  {
    const char *args[] = {"--out", dir, "--graph-file", path, "--quiet", NULL};
    TC_CHECK(tg_run(gen, args, err, sizeof err) == 2);
    TC_CHECK(strstr(err, "--graph-file") && strstr(err, ":2: a NUL byte"));
    TC_CHECK(tg_committed(dir) == 0);
  }
  const char *missing[] = {"--out", dir, "--graph", "file", "--quiet", NULL};
  TC_CHECK(tg_run(gen, missing, err, sizeof err) == 2 && strstr(err, "--graph-file") != NULL);
  /* a file that cannot be read: an I/O failure (1) naming the flag and the path */
  char nofile[4700];
  snprintf(nofile, sizeof nofile, "%s/no-such-dag.txt", tmp);
  const char *unreadable[] = {"--out", dir, "--graph-file", nofile, "--quiet", NULL};
  TC_CHECK(tg_run(gen, unreadable, err, sizeof err) == 1);
  TC_CHECK(strstr(err, "--graph-file") && strstr(err, nofile) && strchr(err, '\n') == err + strlen(err) - 1);
  TC_CHECK(tg_committed(dir) == 0);
  const char *mixed[] = {"--out", dir, "--graph", "er:1,file:1", "--graph-file", path, "--quiet", NULL};
  TC_CHECK(tg_run(gen, mixed, err, sizeof err) == 2);
}

int main(int argc, char **argv) {
  TC_REQUIRE(argc == 3, "usage: %s TWINCACHE_GEN TMPDIR", argv[0]);
  gen = argv[1];
  snprintf(tmp, sizeof tmp, "%s/gen_families", argv[2]);
  tg_mkdir(argv[2]);
  tg_mkdir(tmp);
  scale_free();
  block_model();
  geometric();
  mixture();
  edge_file();
  const char *names[] = {"sf", "ba", "er", "sbm", "rgg", "rgg0", "rgg1", "mix_t1", "mix_t2", "mix_t8",
                         "file_t1", "file_t2", "file_bad", NULL};
  char dir[4600];
  for (int i = 0; names[i]; i++) {
    build_dir(dir, sizeof dir, names[i]);
    tg_rmrf(dir);
  }
  return tc_test_finish("test_gen_families");
}
