/* test_inspect_info.c — `info --json` and `stats --json` are strict JSON with
 * the right counts and dims for a known cache (50 graphs, 3..6 nodes, 16
 * samples); the histograms add up to the graph count and agree with the
 * graphs' real node and edge counts; the text forms run.
 * usage: test_inspect_info GEN INSPECT SCRATCH */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "inspect_test.h"
#include "mini_json.h"
#include "twincache_loader.h"

static tj_value *run_json(char **argv, const char *scratch) {
  tt_result r;
  if (tt_run(argv, scratch, &r) != 0) {
    TC_CHECK(0, "could not run %s", argv[0]);
    return NULL;
  }
  TC_CHECK(r.status == 0, "%s %s exited %d: %s", argv[1], argv[2], r.status, r.err);
  char err[256] = "";
  tj_value *o = tj_parse(r.out, err, sizeof err);
  TC_CHECK(o != NULL, "%s --json is not valid JSON: %s\n%s", argv[1], err, r.out);
  tt_result_clear(&r);
  return o;
}

/* histogram bins [{lo,hi,count}] equal to the exact per-value counts */
static void check_hist(const char *what, const tj_value *h, const uint64_t *counts, size_t n) {
  size_t bins = tj_len(h);
  TC_CHECK(bins != (size_t)-1 && bins > 0, "%s is a non-empty array", what);
  for (size_t b = 0; bins != (size_t)-1 && b < bins; b++) {
    const tj_value *bin = tj_at(h, b);
    double lo = tj_num(tj_get(bin, "lo")), hi = tj_num(tj_get(bin, "hi"));
    double cnt = tj_num(tj_get(bin, "count"));
    uint64_t want = 0;
    for (size_t v = 0; v < n; v++)
      if (v >= lo && v <= hi) want += counts[v];
    TC_CHECK(cnt == (double)want, "%s bin %g..%g: %g graphs, want %llu", what, lo, hi, cnt,
          (unsigned long long)want);
  }
}

int main(int argc, char **argv) {
  char cache[4096];
  int status = tt_begin(argc, argv, 50, cache, sizeof cache);
  if (status) return status;
  const char *scratch = argv[3];
  char *inspect = argv[2];

  /* the truth, from the library */
  uint64_t node_counts[8] = {0}, edge_counts[16] = {0}, edges_total = 0;
  {
    tt_reader lib;
    int rc = tt_reader_open(cache, &lib);
    TC_CHECK(rc == 0, "open: %s", twincache_strerror(rc));
    if (rc != 0) return 1;
    twincache_graph *g = lib.graph;
    for (uint64_t i = 0; i < twincache_cache_count(lib.cache); i++) {
      if (twincache_cache_read_graph(lib.cache, lib.dctx, i, g) != 0 || g->n_nodes > 6) {
        TC_CHECK(0, "graph %llu unreadable or too big", (unsigned long long)i);
        continue;
      }
      uint64_t e = 0;
      for (uint32_t a = 0; a < g->n_nodes; a++)
        for (uint32_t b = 0; b < g->n_nodes; b++) e += g->adj[a * g->ld_adj + b] != 0;
      node_counts[g->n_nodes]++;
      if (e < 16) edge_counts[e]++;
      edges_total += e;
    }
    tt_reader_close(&lib);
  }

  char *info[] = {inspect, "info", cache, "--json", NULL};
  tj_value *o = run_json(info, scratch);
  if (o) {
    TC_CHECK(tj_num(tj_get(o, "graphs")) == 50, "graphs");
    TC_CHECK(tj_num(tj_get(o, "graphs_requested")) == 50, "graphs_requested");
    TC_CHECK(tj_num(tj_get(o, "samples")) == 16, "samples");
    TC_CHECK(tj_num(tj_get(o, "max_nodes")) == 6, "max_nodes = %g", tj_num(tj_get(o, "max_nodes")));
    TC_CHECK(tj_num(tj_get(o, "decode_errors")) == 0, "decode_errors");
    TC_CHECK(tj_num(tj_get(o, "disk_bytes")) > 0, "disk_bytes");
    double fr = tj_num(tj_get(o, "frame_raw_ratio"));
    TC_CHECK(fr > 0 && fr < 1.5, "frame_raw_ratio %g", fr);
    TC_CHECK(fabs(tj_num(tj_get(o, "mean_edges")) - (double)edges_total / 50.0) < 1e-4, "mean_edges");
    const tj_value *cfg = tj_get(o, "config");
    TC_CHECK(cfg && cfg->type == TJ_OBJECT, "config is an object");
    check_hist("node_histogram", tj_get(o, "node_histogram"), node_counts, 8);
    check_hist("edge_histogram", tj_get(o, "edge_histogram"), edge_counts, 16);
    tj_free(o);
  }

  char *stats[] = {inspect, "stats", cache, "--json", NULL};
  o = run_json(stats, scratch);
  if (o) {
    TC_CHECK(tj_num(tj_get(o, "graphs")) == 50, "stats graphs");
    TC_CHECK(tj_len(tj_get(o, "nodes")) == 6, "stats: one entry per node position");
    double f = tj_num(tj_get(o, "changed_column_fraction"));
    TC_CHECK(f > 0 && f <= 1, "changed_column_fraction %g", f);
    double base_n = tj_num(tj_get(tj_get(tj_get(o, "worlds"), "base"), "count"));
    uint64_t want = 0;
    for (int n = 0; n < 8; n++) want += node_counts[n] * (uint64_t)n * 16;
    TC_CHECK(base_n == (double)want, "base sample count %g, want %llu", base_n,
          (unsigned long long)want);
    tj_free(o);
  }
  char *stats10[] = {inspect, "stats", cache, "--limit", "10", "--json", NULL};
  o = run_json(stats10, scratch);
  if (o) TC_CHECK(tj_num(tj_get(o, "graphs")) == 10, "stats --limit 10");
  tj_free(o);

  /* the text forms */
  char *text_cmds[][4] = {{inspect, "info", cache, NULL}, {inspect, "stats", cache, NULL}};
  for (int i = 0; i < 2; i++) {
    tt_result r;
    if (tt_run(text_cmds[i], scratch, &r) != 0) continue;
    TC_CHECK(r.status == 0 && r.out_len > 0, "%s text: status %d %s", text_cmds[i][1], r.status, r.err);
    tt_result_clear(&r);
  }
  if (tc_test_failures() == 0) tt_remove_tree(scratch);
  printf("%s: %d failures\n", argv[0], tc_test_failures());
  return tc_test_failures() ? 1 : 0;
}
