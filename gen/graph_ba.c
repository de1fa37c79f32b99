/* graph_ba.c — Barabasi-Albert preferential attachment (--ba-m edges per new
 * node, linear preference), undirected, oriented along a random node order. */
#include "tc_gen_family.h"

static int ba_check(const tc_gen_config *c, tc_gen_refusal *bad) {
  if (c->ba_m < 1 || c->ba_m > TWINCACHE_MAX_NODES) return tc_gen_refuse(bad, "--ba-m", NULL);
  return TWINCACHE_OK;
}

static int ba_make_locked(const tc_gen_config *c, uint32_t n, igraph_vector_int_t *edges) {
  igraph_t g;
  return tc_gen_family_take(igraph_barabasi_game(&g, n, 1.0, c->ba_m, NULL, 0, 1.0, IGRAPH_UNDIRECTED,
                                                 IGRAPH_BARABASI_PSUMTREE, NULL),
                            &g, edges);
}

static void ba_defaults(tc_gen_config *c) { c->ba_m = 2; /* also sf's m */ }

static size_t ba_options(tc_gen_config *c, tc_gen_option *o) {
  o[0] = (tc_gen_option){{.name = "--ba-m", .meta = "M", .kind = TC_OPT_U32, .dst = &c->ba_m, .lo = 1,
                          .hi = TWINCACHE_MAX_NODES, .help = "BA/SF edges per new node, at most the nodes already there (default {})"},
                         (1u << TWINCACHE_FAMILY_BA) | (1u << TWINCACHE_FAMILY_SF)}; /* sf's m too */
  return 1;
}

const tc_gen_family tc_gen_family_ba = {TWINCACHE_FAMILY_BA, TC_ORIENT_RANDOM, ba_check, ba_make_locked, ba_defaults,
                                        NULL, 0, ba_options};
