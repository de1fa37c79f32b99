/* test_inspect_stats.c — what `stats`/`info` say about the worlds of a cache:
 * the family counts; var- and R2-sortability equal to the library's
 * twincache_graph_sortability averaged over the graphs (the truth); the
 * mechanism fit: a linear cache's linear share is ~1, a --mlp-scale 1 MLP
 * cache of the first draw's stays near 1 (tanh units in their linear
 * middle), the default MLP's (bumps) is at most 0.5: measured 0.29-0.32
 * over seeds 1-10 (300 graphs, 5-10 nodes, S = 64; standard deviation
 * 0.01), 0.74 with the first draw at --mlp-scale 4.
 * usage: test_inspect_stats GEN INSPECT SCRATCH */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inspect_test.h"
#include "mini_json.h"
#include "twincache_loader.h"

static const char *g_inspect, *g_scratch;

static tj_value *run_json(const char *cmd, const char *cache) {
  char *argv[] = {(char *)g_inspect, (char *)cmd, (char *)cache, "--json", NULL};
  tt_result r;
  if (tt_run(argv, g_scratch, &r) != 0) {
    TC_CHECK(0, "could not run %s", g_inspect);
    return NULL;
  }
  TC_CHECK(r.status == 0, "%s exited %d: %s", cmd, r.status, r.err);
  char err[256] = "";
  tj_value *o = tj_parse(r.out, err, sizeof err);
  TC_CHECK(o != NULL, "%s --json is not valid JSON: %s", cmd, err);
  tt_result_clear(&r);
  return o;
}

/* The share stats reports for a cache made with extra flags. */
static double linear_share(const char *gen, const char *name, const char *const *extra) {
  char dir[4200];
  snprintf(dir, sizeof dir, "%s/%s", g_scratch, name);
  TC_REQUIRE(tt_make_cache(gen, dir, g_scratch, 300, extra) == 0, "cannot make %s", name);
  tj_value *o = run_json("stats", dir);
  TC_REQUIRE(o);
  const tj_value *fit = tj_get(o, "mechanism_fit");
  double share = tj_num(tj_get(fit, "linear_share"));
  printf("%s: mechanism R2 %.3f, linear R2 %.3f, share %.3f\n", name, tj_num(tj_get(fit, "r2_mechanism")),
         tj_num(tj_get(fit, "r2_linear")), share);
  TC_CHECK(tj_num(tj_get(fit, "nodes")) > 300);
  tj_free(o);
  return share;
}

int main(int argc, char **argv) {
  char cache[4096];
  int rc = tt_begin(argc, argv, 200, cache, sizeof cache);
  if (rc) return rc;
  const char *gen = argv[1];
  g_inspect = argv[2], g_scratch = argv[3];
  /* a mixture, so the family counts say something */
  char mix[4200];
  snprintf(mix, sizeof mix, "%s/mix", g_scratch);
  const char *mixf[] = {"--graph", "er:0.6,sf:0.4", "--samples", "32", NULL};
  TC_REQUIRE(tt_make_cache(gen, mix, g_scratch, 200, mixf) == 0);
  /* the truth through the library */
  tt_reader rd;
  TC_REQUIRE(tt_reader_open(mix, &rd) == TWINCACHE_OK);
  double var = 0, r2 = 0;
  uint64_t nv = 0, nr = 0, fam[256] = {0};
  for (uint64_t i = 0; i < 200; i++) {
    twincache_sortability s;
    TC_REQUIRE(twincache_cache_read_graph(rd.cache, rd.dctx, i, rd.graph) == TWINCACHE_OK);
    TC_CHECK_RC(twincache_graph_sortability(rd.graph, &s), 0);
    fam[rd.graph->family]++;
    if (!isnan(s.var)) var += s.var, nv++;
    if (!isnan(s.r2)) r2 += s.r2, nr++;
  }
  tt_reader_close(&rd);
  TC_CHECK(fam[TWINCACHE_FAMILY_ER] + fam[TWINCACHE_FAMILY_SF] == 200 && fam[TWINCACHE_FAMILY_SF] > 40);
  const char *cmds[2] = {"stats", "info"};
  for (int c = 0; c < 2; c++) {
    tj_value *o = run_json(cmds[c], mix);
    TC_REQUIRE(o);
    const tj_value *s = tj_get(o, "sortability");
    TC_CHECK(s != NULL, "%s: no sortability", cmds[c]);
    TC_CHECK(fabs(tj_num(tj_get(s, "var")) - var / nv) < 1e-6, "%s: var %g, want %g", cmds[c],
             tj_num(tj_get(s, "var")), var / nv);
    TC_CHECK(fabs(tj_num(tj_get(s, "r2")) - r2 / nr) < 1e-6);
    TC_CHECK(tj_num(tj_get(s, "var_graphs")) == (double)nv && tj_num(tj_get(s, "graphs")) == 200);
    const tj_value *f = tj_get(o, c == 0 ? "families" : "family_histogram");
    TC_CHECK(tj_num(tj_get(f, "er")) == (double)fam[TWINCACHE_FAMILY_ER]);
    TC_CHECK(tj_num(tj_get(f, "sf")) == (double)fam[TWINCACHE_FAMILY_SF]);
    tj_free(o);
  }
  /* the mechanism fit */
  const char *lin[] = {"--samples", "64", "--nodes", "5:10", NULL};
  const char *mlp1[] = {"--samples", "64", "--nodes", "5:10", "--mechanism", "mlp", "--mlp-scale", "1",
                        "--mlp-bias", "0.5", "--mlp-bump", "0", "--mlp-gain", "1", NULL}; /* the first MLP */
  const char *mlpd[] = {"--samples", "64", "--nodes", "5:10", "--mechanism", "mlp", NULL};
  double s_lin = linear_share(gen, "lin", lin), s_mlp1 = linear_share(gen, "mlp1", mlp1),
         s_mlp = linear_share(gen, "mlp", mlpd);
  TC_CHECK(s_lin > 0.97 && s_lin < 1.1);   /* in-sample least squares can exceed the truth */
  TC_CHECK(s_mlp1 > 0.9);
  TC_CHECK(s_mlp < 0.5 && s_mlp < s_mlp1 - 0.4);
  tt_remove_tree(g_scratch);
  return tc_test_finish("test_inspect_stats");
}
