/* graph_ws.c — Watts-Strogatz small world: a ring lattice of --ws-k
 * neighbours on each side, each edge rewired with probability --ws-p,
 * oriented along a random node order. */
#include "tc_gen_family.h"

static int ws_check(const tc_gen_config *c, tc_gen_refusal *bad) {
  if (c->ws_k < 1 || c->ws_k > TWINCACHE_MAX_NODES) return tc_gen_refuse(bad, "--ws-k", NULL);
  if (2 * c->ws_k >= c->nodes_min) /* igraph needs 2k < n */
    return tc_gen_refuse(bad, "--ws-k", "2 x K must stay below the smallest node count of --nodes");
  if (!(c->ws_p >= 0.0 && c->ws_p <= 1.0)) return tc_gen_refuse(bad, "--ws-p", NULL);
  return TWINCACHE_OK;
}

static int ws_make_locked(const tc_gen_config *c, uint32_t n, igraph_vector_int_t *edges) {
  igraph_t g;
  return tc_gen_family_take(igraph_watts_strogatz_game(&g, 1, n, c->ws_k, c->ws_p, 0, 0), &g, edges);
}

static void ws_defaults(tc_gen_config *c) {
  c->ws_k = 2;
  c->ws_p = 0.1;
}

static size_t ws_options(tc_gen_config *c, tc_gen_option *o) {
  const unsigned ws = 1u << TWINCACHE_FAMILY_WS;
  o[0] = (tc_gen_option){{.name = "--ws-k", .meta = "K", .kind = TC_OPT_U32, .dst = &c->ws_k, .lo = 1,
                          .hi = TWINCACHE_MAX_NODES, .help = "WS ring neighbours on each side, 2K < nodes (default {})"},
                         ws};
  o[1] = (tc_gen_option){{.name = "--ws-p", .meta = "P", .kind = TC_OPT_F64, .dst = &c->ws_p, .fhi = 1,
                          .help = "WS rewiring probability (default {})"},
                         ws};
  return 2;
}

const tc_gen_family tc_gen_family_ws = {TWINCACHE_FAMILY_WS, TC_ORIENT_RANDOM, ws_check, ws_make_locked, ws_defaults,
                                        NULL, 0, ws_options};
