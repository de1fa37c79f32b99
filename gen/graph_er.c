/* graph_er.c — Erdos-Renyi G(n, p): every pair an edge with probability p
 * (--edge-prob, or D/(n-1) with --expected-degree D), oriented along a
 * random node order. */
#include "tc_gen_family.h"

static int er_check(const tc_gen_config *c, tc_gen_refusal *bad) {
  if (!(c->edge_prob >= 0.0 && c->edge_prob <= 1.0)) return tc_gen_refuse(bad, "--edge-prob", NULL);
  if (!(c->expected_degree >= 0.0 && c->expected_degree <= TWINCACHE_MAX_NODES))
    return tc_gen_refuse(bad, "--expected-degree", NULL);
  return TWINCACHE_OK;
}

static int er_make_locked(const tc_gen_config *c, uint32_t n, igraph_vector_int_t *edges) {
  double p = c->edge_prob;
  if (c->expected_degree > 0.0) p = n > 1 ? c->expected_degree / (double)(n - 1) : 0.0;
  if (p > 1.0) p = 1.0;
  igraph_t g;
  return tc_gen_family_take(igraph_erdos_renyi_game_gnp(&g, n, p, IGRAPH_UNDIRECTED, 0), &g, edges);
}

static void er_defaults(tc_gen_config *c) {
  c->edge_prob = 0.3;
  c->expected_degree = 0.0; /* off: --edge-prob */
}

static size_t er_options(tc_gen_config *c, tc_gen_option *o) {
  const unsigned er = 1u << TWINCACHE_FAMILY_ER;
  o[0] = (tc_gen_option){{.name = "--edge-prob", .meta = "P", .kind = TC_OPT_F64, .dst = &c->edge_prob, .fhi = 1,
                          .help = "ER edge probability (default {})"},
                         er};
  o[1] = (tc_gen_option){{.name = "--expected-degree", .meta = "D", .kind = TC_OPT_F64, .dst = &c->expected_degree,
                          .fhi = TWINCACHE_MAX_NODES, .open = TC_OPEN_LO, .def = "off",
                          .help = "ER: edge probability min(1, D/(n-1)) instead of --edge-prob (default {})"},
                         er};
  return 2;
}

const tc_gen_family tc_gen_family_er = {TWINCACHE_FAMILY_ER, TC_ORIENT_RANDOM, er_check, er_make_locked, er_defaults,
                                        NULL, 0, er_options};
