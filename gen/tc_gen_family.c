/* tc_gen_family.c — the dispatch table of the graph families. */
#include "tc_gen_family.h"

extern const tc_gen_family tc_gen_family_er, tc_gen_family_ba, tc_gen_family_ws, tc_gen_family_sf,
    tc_gen_family_sbm, tc_gen_family_rgg, tc_gen_family_file;

/* One row per family, indexed by its code (enum twincache_family). */
static const tc_gen_family *const k_families[] = {
    [TWINCACHE_FAMILY_ER] = &tc_gen_family_er,
    [TWINCACHE_FAMILY_BA] = &tc_gen_family_ba,
    [TWINCACHE_FAMILY_WS] = &tc_gen_family_ws,
    [TWINCACHE_FAMILY_SF] = &tc_gen_family_sf,
    [TWINCACHE_FAMILY_SBM] = &tc_gen_family_sbm,
    [TWINCACHE_FAMILY_RGG] = &tc_gen_family_rgg,
    [TWINCACHE_FAMILY_FILE] = &tc_gen_family_file,
};
/* closed: a new code in enum twincache_family (and names.c) fails here
 * until its row exists */
_Static_assert(sizeof k_families / sizeof k_families[0] == TWINCACHE_FAMILY_COUNT, "one row per enum twincache_family");

const tc_gen_family *tc_gen_family_get(int code) {
  if (code < 0 || code >= TWINCACHE_FAMILY_COUNT) return NULL;
  return k_families[code];
}

int tc_gen_family_take(igraph_error_t made, igraph_t *graph, igraph_vector_int_t *edges) {
  if (made != IGRAPH_SUCCESS) return made == IGRAPH_ENOMEM ? TWINCACHE_ENOMEM : TWINCACHE_EINVAL;
  igraph_error_t e = igraph_get_edgelist(graph, edges, 0);
  igraph_destroy(graph);
  return e == IGRAPH_SUCCESS ? TWINCACHE_OK : TWINCACHE_ENOMEM;
}
