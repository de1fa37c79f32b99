/* graph_rgg.c — random geometric graph: n points uniform in the unit square
 * (no torus), an edge between every two points closer than --rgg-radius;
 * oriented along a random node order. The positions are not stored. */
#include "tc_gen_family.h"

static int rgg_check(const tc_gen_config *c, tc_gen_refusal *bad) {
  if (!(c->rgg_radius >= 0.0 && c->rgg_radius <= 1.5)) return tc_gen_refuse(bad, "--rgg-radius", NULL);
  return TWINCACHE_OK;
}

static int rgg_make_locked(const tc_gen_config *c, uint32_t n, igraph_vector_int_t *edges) {
  igraph_t g;
  return tc_gen_family_take(igraph_grg_game(&g, n, c->rgg_radius, 0, NULL, NULL), &g, edges);
}

static void rgg_defaults(tc_gen_config *c) { c->rgg_radius = 0.4; }

static int rgg_identity(const tc_gen_config *c, char *buf, size_t cap) {
  int w = snprintf(buf, cap, ",\"rgg_radius\":%.17g", c->rgg_radius);
  return w >= 0 && (size_t)w < cap ? w : -1;
}

static size_t rgg_options(tc_gen_config *c, tc_gen_option *o) {
  o[0] = (tc_gen_option){{.name = "--rgg-radius", .meta = "R", .kind = TC_OPT_F64, .dst = &c->rgg_radius, .fhi = 1.5,
                          .help = "RGG radius in the unit square (default {})"},
                         1u << TWINCACHE_FAMILY_RGG};
  return 1;
}

const tc_gen_family tc_gen_family_rgg = {TWINCACHE_FAMILY_RGG, TC_ORIENT_RANDOM, rgg_check, rgg_make_locked,
                                         rgg_defaults, rgg_identity, 0, rgg_options};
