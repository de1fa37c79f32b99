/* graph_sbm.c — stochastic block model: the n nodes split into
 * B = min(--sbm-blocks, n) consecutive blocks of sizes as equal as possible
 * (the first n mod B blocks one larger); a pair is an edge with probability
 * --sbm-p-in inside a block and --sbm-p-out between blocks; oriented along a
 * random node order. Node labels stay igraph's: block b is a range of labels. */
#include "tc_error.h"
#include "tc_gen_family.h"

static int sbm_check(const tc_gen_config *c, tc_gen_refusal *bad) {
  if (c->sbm_blocks < 1 || c->sbm_blocks > TWINCACHE_MAX_NODES) return tc_gen_refuse(bad, "--sbm-blocks", NULL);
  if (!(c->sbm_p_in >= 0.0 && c->sbm_p_in <= 1.0)) return tc_gen_refuse(bad, "--sbm-p-in", NULL);
  if (!(c->sbm_p_out >= 0.0 && c->sbm_p_out <= 1.0)) return tc_gen_refuse(bad, "--sbm-p-out", NULL);
  return TWINCACHE_OK;
}

static int sbm_make_locked(const tc_gen_config *c, uint32_t n, igraph_vector_int_t *edges) {
  uint32_t B = c->sbm_blocks < n ? c->sbm_blocks : n;
  igraph_matrix_t pref;
  igraph_vector_int_t sizes;
  TC_RETURN_IF(igraph_matrix_init(&pref, B, B) != IGRAPH_SUCCESS, TWINCACHE_ENOMEM,
               "sbm: out of memory for a %u x %u block matrix", B, B);
  if (igraph_vector_int_init(&sizes, B) != IGRAPH_SUCCESS) {
    igraph_matrix_destroy(&pref);
    return tc_error_set(TWINCACHE_ENOMEM, "sbm: out of memory for %u block sizes", B);
  }
  for (uint32_t a = 0; a < B; a++) {
    VECTOR(sizes)[a] = n / B + (a < n % B ? 1 : 0);
    for (uint32_t b = 0; b < B; b++) MATRIX(pref, a, b) = a == b ? c->sbm_p_in : c->sbm_p_out;
  }
  igraph_t g;
  int rc = tc_gen_family_take(igraph_sbm_game(&g, n, &pref, &sizes, IGRAPH_UNDIRECTED, 0), &g, edges);
  igraph_vector_int_destroy(&sizes);
  igraph_matrix_destroy(&pref);
  return rc;
}

static void sbm_defaults(tc_gen_config *c) {
  c->sbm_blocks = 2;
  c->sbm_p_in = 0.6;
  c->sbm_p_out = 0.05;
}

static int sbm_identity(const tc_gen_config *c, char *buf, size_t cap) {
  int w = snprintf(buf, cap, ",\"sbm_blocks\":%u,\"sbm_p_in\":%.17g,\"sbm_p_out\":%.17g", c->sbm_blocks,
                   c->sbm_p_in, c->sbm_p_out);
  return w >= 0 && (size_t)w < cap ? w : -1;
}

static size_t sbm_options(tc_gen_config *c, tc_gen_option *o) {
  const unsigned sbm = 1u << TWINCACHE_FAMILY_SBM;
  o[0] = (tc_gen_option){{.name = "--sbm-blocks", .meta = "B", .kind = TC_OPT_U32, .dst = &c->sbm_blocks, .lo = 1,
                          .hi = TWINCACHE_MAX_NODES, .help = "SBM blocks of equal sizes, at most n for n nodes (default {})"},
                         sbm};
  o[1] = (tc_gen_option){{.name = "--sbm-p-in", .meta = "P", .kind = TC_OPT_F64, .dst = &c->sbm_p_in, .fhi = 1,
                          .help = "SBM edge probability inside a block (default {})"},
                         sbm};
  o[2] = (tc_gen_option){{.name = "--sbm-p-out", .meta = "P", .kind = TC_OPT_F64, .dst = &c->sbm_p_out, .fhi = 1,
                          .help = "SBM edge probability between blocks (default {})"},
                         sbm};
  return 3;
}

const tc_gen_family tc_gen_family_sbm = {TWINCACHE_FAMILY_SBM, TC_ORIENT_RANDOM, sbm_check, sbm_make_locked,
                                         sbm_defaults, sbm_identity, 0, sbm_options};
