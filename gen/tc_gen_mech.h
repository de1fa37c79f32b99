/* tc_gen_mech.h — the mechanisms of twincache-gen: ONE dispatch table
 * (tc_gen_mech.c) with one file per mechanism behind it (mech_linear.c,
 * mech_mlp.c, mech_rff.c, mech_sigmoid.c, mech_poly.c, mech_mixed.c). A mechanism here checks its options and draws its
 * parameters for one graph from the graph's weights stream; evaluating it
 * is the one SCM sampler's job (scm/), which reads the stored parameters.
 * A new mechanism is its own file, one row here, one name in
 * formats/names.c and its evaluation in scm/. */
#ifndef TC_GEN_MECH_H
#define TC_GEN_MECH_H

#include "tc_args.h"
#include "tc_common.h"
#include "tc_gen.h"

/* One graph's SCM parameters being drawn: the DAG is in g->adj (n, n) and
 * its parent lists are built; a mechanism fills what it stores. */
typedef struct tc_gen_params {
  twincache_graph *g;        /* weight (n,n), mlp (n, H*n+2H): what the frame stores */
  uint32_t n, hidden;        /* nodes; H (0 for linear) */
  const uint32_t *pa_start;  /* (n+1) parents of j: pa_idx[pa_start[j] .. pa_start[j+1]) */
  const uint32_t *pa_idx;    /* ascending within a node */
  float *pa_w;               /* (E) linear weight per parent, what the sampler reads */
  uint8_t *node_mech;        /* (n) each node's mechanism, preset to the cache's */
} tc_gen_params;

typedef struct tc_gen_mech {
  int code; /* enum twincache_mechanism */
  /* H of the frames: 0 for linear. */
  uint32_t (*hidden)(const tc_gen_config *c);
  /* Checks the mechanism's options; TWINCACHE_EINVAL with *bad filled. NULL: none. */
  int (*check)(const tc_gen_config *c, tc_gen_refusal *bad);
  /* Draws node j's parameters from rw, in a fixed order (graph i stays a
   * pure function of (seed, i, config)): linear weights into g->weight and
   * pa_w, or units 0.. of node j's block (stride H*n + 2H, H = p->hidden,
   * which a mixture may make larger than the mechanism's own unit count).
   * The caller has zeroed the weights, pa_w and the blocks and calls it for
   * j ascending. NULL for MIXED (tc_gen_scm.c picks a component per node). */
  void (*draw_node)(const tc_gen_config *c, tc_gen_params *p, uint32_t j, tc_rng *rw);
  /* Sets the mechanism's own options in *c to their defaults (called by
   * tc_gen_config_default for every mechanism). NULL: it has none. */
  void (*defaults)(tc_gen_config *c);
  /* The mechanism's identity keys in the config JSON, written only when the
   * config uses it (alone or in a mixture), after the common optional keys
   * (iscm, hetero), mechanisms in code order: ",\"key\":value..." into buf
   * (cap bytes). Returns the bytes written (0: none for this config), or -1
   * when they do not fit. NULL: none beyond the config's fixed keys
   * (weight_min, weight_max, mlp_hidden, mlp_scale are there for every
   * cache, mlp_tanh for an MLP cache). */
  int (*identity)(const tc_gen_config *c, char *buf, size_t cap);
  /* Writes the mechanism's own options (at most TC_GEN_MECH_MAX_OPTS), their
   * destinations in *c, to o; returns how many. They follow --mechanism in
   * the flag table and in --help, mechanism by mechanism in code order, and
   * are taken whatever --mechanism says (their values are part of the
   * config). NULL: none. */
  size_t (*options)(tc_gen_config *c, tc_opt *o);
} tc_gen_mech;
enum { TC_GEN_MECH_MAX_OPTS = 5 }; /* options of one mechanism, at most */

/* The mechanism of a code, or NULL. */
const tc_gen_mech *tc_gen_mech_get(int code);

/* --weights LO:HI as every mechanism checks it (part of the config even where
 * unused): 0 <= LO <= HI < 1e6. TWINCACHE_EINVAL with *bad filled. */
int tc_gen_mech_check_weights(const tc_gen_config *c, tc_gen_refusal *bad);
/* H of the mechanisms with one unit per parent (sigmoid, poly): nodes_max - 1
 * (at least 1); their check: at most TWINCACHE_MAX_HIDDEN + 1 nodes, *bad
 * naming --nodes and `why` ("sigmoid: one unit per parent, ..."). */
uint32_t tc_gen_mech_unit_per_parent(const tc_gen_config *c);
int tc_gen_mech_check_unit_per_parent(const tc_gen_config *c, tc_gen_refusal *bad, const char *why);

/* |w| uniform in [lo, hi), then a sign +-1 with probability 1/2 (two draws,
 * in that order). */
static inline double tc_gen_signed_range(tc_rng *r, double lo, double hi) {
  double m = tc_rng_range(r, lo, hi);
  return (tc_rng_u64(r) >> 63) ? -m : m;
}

#endif /* TC_GEN_MECH_H */
