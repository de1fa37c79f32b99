/* inspect_dot.c — `twincache-inspect dot CACHE INDEX`: graph INDEX as
 * Graphviz DOT, one "xi -> xj" line per edge, labelled with the linear
 * weight ("%.3g"). Render with: twincache-inspect dot CACHE 7 | dot -Tsvg. */
#include "inspect.h"

static const char k_help[] =
    "usage: " TC_PROG " dot CACHE INDEX\n"
    "Prints graph INDEX as Graphviz DOT: every node, one line per edge with its\n"
    "weight as label (linear mechanism). Example: ... dot CACHE 7 | dot -Tsvg >g.svg\n"
    "  --help   this text\n";

int tc_cmd_dot(int argc, char **argv) {
  tc_args a;
  int rc = tc_args_parse(argc, argv, NULL, 0, &a);
  if (rc) return rc;
  if (a.help) {
    fputs(k_help, stdout);
    return TC_EXIT_OK;
  }
  if (a.n_positional != 2) return tc_usage_error("dot", "expected CACHE and INDEX (see --help)");

  twincache_cache *c = NULL;
  twincache_dctx *d = NULL;
  twincache_graph *g = NULL;
  uint64_t index = 0;
  int status = tc_cache_open_or_report(a.positional[0], &c);
  if (status) goto cleanup;
  status = tc_index_parse("dot", a.positional[1], c, &index);
  if (status) goto cleanup;
  d = twincache_dctx_create();
  g = tc_graph_alloc_for(c);
  if (!d || !g) {
    fprintf(stderr, "%s: out of memory\n", TC_PROG);
    status = TC_EXIT_FAIL;
    goto cleanup;
  }
  status = tc_graph_read_or_report(c, d, index, g);
  if (status) goto cleanup;

  printf("digraph graph_%llu {\n", (unsigned long long)index);
  printf("  label=\"graph %llu: %u nodes, %s mechanism\";\n  node [shape=circle];\n",
         (unsigned long long)index, g->n_nodes, tc_mechanism_name(g->mechanism));
  for (uint32_t i = 0; i < g->n_nodes; i++) printf("  x%u;\n", i);
  for (uint32_t i = 0; i < g->n_nodes; i++)
    for (uint32_t j = 0; j < g->n_nodes; j++) {
      size_t at = (size_t)i * g->ld_adj + j;
      if (!g->adj[at]) continue;
      if (g->mechanism == TWINCACHE_MECH_LINEAR)
        printf("  x%u -> x%u [label=\"%.3g\"];\n", i, j, (double)g->weight[at]);
      else
        printf("  x%u -> x%u;\n", i, j);
    }
  printf("}\n");

cleanup:
  twincache_graph_free(g);
  twincache_dctx_free(d);
  twincache_cache_close(c);
  return status;
}
