/* tc_gen_mech.h — the mechanisms of twincache-gen: ONE dispatch table
 * (tc_gen_mech.c) with one file per mechanism behind it (mech_linear.c,
 * mech_mlp.c). A mechanism here checks its options and draws its
 * parameters for one graph from the graph's weights stream; evaluating it
 * is the one SCM sampler's job (scm/), which reads the stored parameters.
 * A new mechanism is its own file, one row here, one name in
 * formats/names.c and its evaluation in scm/. */
#ifndef TC_GEN_MECH_H
#define TC_GEN_MECH_H

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
} tc_gen_params;

typedef struct tc_gen_mech {
  int code; /* enum twincache_mechanism */
  /* H of the frames: 0 for linear. */
  uint32_t (*hidden)(const tc_gen_config *c);
  /* Checks the mechanism's options; TWINCACHE_EINVAL with *flag set. NULL: none. */
  int (*check)(const tc_gen_config *c, const char **flag);
  /* Draws the parameters from rw, in a fixed order (graph i stays a pure
   * function of (seed, i, config)). */
  void (*draw)(const tc_gen_config *c, tc_gen_params *p, tc_rng *rw);
  /* Draws a new parameter block for node j alone (a soft intervention's:
   * twincache_soft_stride(n, H, mechanism) floats into out, +0.0 on
   * non-parents) from r, with the same distribution as draw gives node j. */
  void (*draw_node)(const tc_gen_config *c, const tc_gen_params *p, uint32_t j, float *out, tc_rng *r);
} tc_gen_mech;

/* The mechanism of a code, or NULL. */
const tc_gen_mech *tc_gen_mech_get(int code);

#endif /* TC_GEN_MECH_H */
