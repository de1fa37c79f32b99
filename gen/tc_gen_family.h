/* tc_gen_family.h — the graph families of twincache-gen: ONE dispatch table
 * (tc_gen_family.c) with one file per family behind it (graph_er.c,
 * graph_ba.c, ...). A new family is its own file, one row in the table and
 * one name in formats/names.c (the name <-> code table of the format).
 *
 * A family makes the edges of graph i's structure under the global igraph
 * lock (Debian's igraph is not thread-safe: DESIGN.md); igraph's RNG is
 * already seeded from (seed, i) when make_locked is called, and nothing else
 * may be random in it, so a graph stays a pure function of (seed, i, config). */
#ifndef TC_GEN_FAMILY_H
#define TC_GEN_FAMILY_H

#include <igraph/igraph.h>

#include "tc_args.h"
#include "tc_gen.h"

/* How a family's edges become a DAG (orient_dag in tc_gen_scm.c). */
enum tc_gen_orient {
  /* Undirected edges, oriented along a uniformly random node order. */
  TC_ORIENT_RANDOM = 0,
  /* Directed edges a -> b with a < b: the family's node ids are a topological
   * order; nodes are then relabelled by a uniformly random permutation. */
  TC_ORIENT_GIVEN = 1,
  /* Directed edges a -> b kept as they are, labels too (the fixed graph of
   * an edge-list file); the topological order comes from the file. */
  TC_ORIENT_FIXED = 2
};

/* One command-line option of a family: its row of twincache-gen's flag
 * table (opt.seen is the caller's) and the families it applies to. Given
 * alone it picks the lowest of them; with a --graph that has none of them
 * it is refused (twincache_gen_main.c). */
typedef struct tc_gen_option {
  tc_opt opt;
  unsigned families; /* bit f: family code f */
} tc_gen_option;
enum { TC_GEN_FAMILY_MAX_OPTS = 4 }; /* options of one family, at most */

typedef struct tc_gen_family {
  int code;   /* enum twincache_family */
  int orient; /* enum tc_gen_orient */
  /* Checks the family's own options; on error returns TWINCACHE_EINVAL and
   * fills *bad (tc_gen_refuse). NULL: none. */
  int (*check)(const tc_gen_config *c, tc_gen_refusal *bad);
  /* Writes the structure of an n-node graph to edges as (2E) node ids,
   * pairs (a, b). Called under the igraph lock with igraph's RNG seeded.
   * Returns 0 or a negative status. */
  int (*make_locked)(const tc_gen_config *c, uint32_t n, igraph_vector_int_t *edges);
  /* Sets the family's own options in *c to their defaults (called by
   * tc_gen_config_default for every family). NULL: it has none. */
  void (*defaults)(tc_gen_config *c);
  /* The family's identity keys in the config JSON, written only when the
   * config uses the family (so a cache that does not keeps its identity):
   * ",\"key\":value..." into buf (cap bytes). Returns the bytes written,
   * or -1 when they do not fit. NULL: none beyond the config's common keys
   * (edge_prob, expected_degree, ba_m, ws_k, ws_p are there for every cache). */
  int (*identity)(const tc_gen_config *c, char *buf, size_t cap);
  /* 1: its identity keys follow the mechanisms' keys rather than precede
   * them (graph_file: where caches made before this table stored them). */
  int identity_late;
  /* Writes the family's own options (at most TC_GEN_FAMILY_MAX_OPTS), their
   * destinations in *c, to o; returns how many. They follow --graph in the
   * flag table and in --help, family by family in code order. NULL: none. */
  size_t (*options)(tc_gen_config *c, tc_gen_option *o);
} tc_gen_family;

/* The family of a code, or NULL for a code without a generator. Codes run
 * 0..TWINCACHE_FAMILY_COUNT-1. */
const tc_gen_family *tc_gen_family_get(int code);

/* Copies an igraph graph's edge list into edges and destroys the graph;
 * maps an igraph error to a status. The helper of every make_locked. */
int tc_gen_family_take(igraph_error_t made, igraph_t *graph, igraph_vector_int_t *edges);

#endif /* TC_GEN_FAMILY_H */
