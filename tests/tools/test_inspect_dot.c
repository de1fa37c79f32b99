/* test_inspect_dot.c — `dot` prints exactly one "xi -> xj" line per
 * adjacency 1 (and no other), for every graph of a small cache, and labels
 * each edge of a linear graph with its weight ("%.3g").
 * usage: test_inspect_dot GEN INSPECT SCRATCH */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "inspect_test.h"
#include "twincache_loader.h"

static void check_dot(const char *dot, const twincache_graph *g) {
  uint32_t n = g->n_nodes;
  uint8_t seen[TWINCACHE_MAX_NODES * 8] = {0}; /* n <= 6 here */
  size_t edge_lines = 0;
  TC_CHECK(strncmp(dot, "digraph ", 8) == 0, "starts with digraph");
  for (const char *line = dot; line && *line;) {
    const char *nl = strchr(line, '\n');
    size_t len = nl ? (size_t)(nl - line) : strlen(line);
    char buf[256];
    snprintf(buf, sizeof buf, "%.*s", (int)(len < 255 ? len : 255), line);
    if (strstr(buf, "->")) {
      unsigned a = 0, b = 0;
      edge_lines++;
      int got = sscanf(buf, " x%u -> x%u", &a, &b);
      TC_CHECK(got == 2 && a < n && b < n, "graph %llu: bad edge line '%s'",
            (unsigned long long)g->index, buf);
      if (got == 2 && a < n && b < n) {
        TC_CHECK(g->adj[a * g->ld_adj + b], "graph %llu: edge x%u -> x%u not in adj",
              (unsigned long long)g->index, a, b);
        TC_CHECK(!seen[a * n + b], "graph %llu: edge x%u -> x%u twice", (unsigned long long)g->index, a, b);
        seen[a * n + b] = 1;
        if (g->mechanism == TWINCACHE_MECH_LINEAR) {
          char label[64];
          snprintf(label, sizeof label, "[label=\"%.3g\"]", (double)g->weight[a * g->ld_adj + b]);
          TC_CHECK(strstr(buf, label) != NULL, "graph %llu: '%s' lacks %s", (unsigned long long)g->index,
                buf, label);
        }
      }
    }
    line = nl ? nl + 1 : NULL;
  }
  size_t edges = 0;
  for (uint32_t a = 0; a < n; a++)
    for (uint32_t b = 0; b < n; b++) edges += g->adj[a * g->ld_adj + b] != 0;
  TC_CHECK(edge_lines == edges, "graph %llu: %zu edge lines, %zu edges", (unsigned long long)g->index,
        edge_lines, edges);
}

int main(int argc, char **argv) {
  char cache[4096];
  int rc = tt_begin(argc, argv, 20, cache, sizeof cache);
  if (rc) return rc;
  const char *scratch = argv[3];
  char *inspect = argv[2];
  tt_reader lib;
  rc = tt_reader_open(cache, &lib);
  TC_CHECK(rc == 0, "open: %s", twincache_strerror(rc));
  if (rc != 0) return 1;
  twincache_graph *g = lib.graph;
  size_t total_edges = 0;
  for (uint64_t i = 0; i < twincache_cache_count(lib.cache); i++) {
    char idx[32];
    snprintf(idx, sizeof idx, "%llu", (unsigned long long)i);
    rc = twincache_cache_read_graph(lib.cache, lib.dctx, i, g);
    TC_CHECK(rc == 0, "read graph %llu: %s", (unsigned long long)i, twincache_strerror(rc));
    char *a[] = {inspect, "dot", cache, idx, NULL};
    tt_result r;
    if (rc != 0 || tt_run(a, scratch, &r) != 0) continue;
    TC_CHECK(r.status == 0, "dot %s exited %d: %s", idx, r.status, r.err);
    check_dot(r.out, g);
    for (uint32_t x = 0; x < g->n_nodes; x++)
      for (uint32_t y = 0; y < g->n_nodes; y++) total_edges += g->adj[x * g->ld_adj + y] != 0;
    tt_result_clear(&r);
  }
  TC_CHECK(total_edges > 0, "the test cache has edges at all");
  tt_reader_close(&lib);
  if (tc_test_failures() == 0) tt_remove_tree(scratch);
  printf("%s: %d failures\n", argv[0], tc_test_failures());
  return tc_test_failures() ? 1 : 0;
}
