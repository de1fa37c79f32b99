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
  int rc = tc_args_begin(argc, argv, NULL, 0, k_help, 2, &a);
  if (rc != TC_ARGS_GO) return rc;

  tc_one_graph og;
  int status = tc_one_graph_open("dot", a.positional[0], a.positional[1], &og);
  if (status) goto cleanup;
  const twincache_graph *g = og.graph;
  uint64_t index = og.index;

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
  tc_one_graph_close(&og);
  return status;
}
