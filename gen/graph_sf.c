/* graph_sf.c — scale-free with a power-law IN-degree: the transpose of
 * Barabasi-Albert. igraph grows a directed BA graph (each new node sends
 * --ba-m edges to older nodes, chosen with probability ~ in-degree + 1), so
 * every edge points from a newer to an older node and the hubs collect
 * in-edges. The attraction of a node is its in-degree + m (igraph's A = m),
 * i.e. its total degree, as in BA: P(in-degree = d) ~ (d + m)^-3 (with A = 1,
 * Price's model, the exponent would be 2 + 1/m). Node ids are turned around (newest
 * first) so that a -> b implies a < b; orient_dag then relabels the nodes at
 * random. (BA oriented along a random order, graph_ba.c, has no preferred
 * direction.) */
#include "tc_gen_family.h"

static int sf_check(const tc_gen_config *c, tc_gen_refusal *bad) {
  if (c->ba_m < 1 || c->ba_m > TWINCACHE_MAX_NODES) return tc_gen_refuse(bad, "--ba-m", NULL);
  return TWINCACHE_OK;
}

static int sf_make_locked(const tc_gen_config *c, uint32_t n, igraph_vector_int_t *edges) {
  igraph_t g;
  int rc = tc_gen_family_take(igraph_barabasi_game(&g, n, 1.0, c->ba_m, NULL, 0, (double)c->ba_m, IGRAPH_DIRECTED,
                                                   IGRAPH_BARABASI_PSUMTREE, NULL),
                              &g, edges);
  if (rc) return rc;
  /* (new, old) -> (n-1-new, n-1-old): from a smaller id to a larger one */
  igraph_integer_t len = igraph_vector_int_size(edges);
  for (igraph_integer_t q = 0; q < len; q++) VECTOR(*edges)[q] = (igraph_integer_t)n - 1 - VECTOR(*edges)[q];
  return TWINCACHE_OK;
}

/* no options of its own: m is --ba-m (graph_ba.c's option and default) */
const tc_gen_family tc_gen_family_sf = {TWINCACHE_FAMILY_SF, TC_ORIENT_GIVEN, sf_check, sf_make_locked, NULL, NULL, 0,
                                        NULL};
