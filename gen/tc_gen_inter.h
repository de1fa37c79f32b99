/* tc_gen_inter.h — the intervention kinds of twincache-gen: ONE dispatch
 * table (tc_gen_inter.c) with one file per kind behind it (inter_do.c,
 * inter_shift.c, inter_noise.c, inter_soft.c). A kind here checks its options and draws
 * the value of one intervention from the graph's inter stream; applying it
 * to a world is the one SCM sampler's job: its rule is written once, in
 * common/tc_node_body.h (tc_node_twin_target), which scm/ and the GPU's
 * kernels/tc_sample_body.h both compile, reading the stored kind and value.
 * A new kind is its own file, one row here, one name in formats/names.c and
 * its rule in tc_node_body.h. */
#ifndef TC_GEN_INTER_H
#define TC_GEN_INTER_H

#include "tc_args.h"
#include "tc_common.h"
#include "tc_gen.h"
#include "tc_gen_mech.h"

typedef struct tc_gen_inter {
  int code; /* enum twincache_inter_kind */
  /* Checks the kind's options (--values, --value-dist); TWINCACHE_EINVAL
   * with *bad filled (tc_gen_refuse). NULL: none. */
  int (*check)(const tc_gen_config *c, tc_gen_refusal *bad);
  /* The stored value of one intervention on node `target` of the graph
   * whose parameters p holds, from ri in a fixed order (graph i stays a
   * pure function of (seed, i, config)); a kind with parameters of its own
   * (SOFT) also writes them to soft (twincache_soft_stride floats). */
  float (*draw)(const tc_gen_config *c, const tc_gen_params *p, uint32_t target, float *soft, tc_rng *ri);
  /* Sets the kind's own options in *c to their defaults (called by
   * tc_gen_config_default for every kind). NULL: it has none. Its identity
   * keys are the config's fixed value_dist, value_min, value_max (there for
   * every cache, as "intervention" and "targets" are). */
  void (*defaults)(tc_gen_config *c);
  /* Writes the kind's own options (at most TC_GEN_INTER_MAX_OPTS), their
   * destinations in *c, to o; returns how many. They follow --targets-per-
   * world in the flag table and in --help, kind by kind in code order, and
   * are taken whatever --intervention says (their values are part of the
   * config). NULL: none. */
  size_t (*options)(tc_gen_config *c, tc_opt *o);
} tc_gen_inter;
enum { TC_GEN_INTER_MAX_OPTS = 2 }; /* options of one kind, at most */

/* The kind of a code, or NULL. */
const tc_gen_inter *tc_gen_inter_get(int code);

/* The value draw that do and shift share: uniform in --values [LO, HI),
 * then, with --value-dist signed, a sign +-1 with probability 1/2. */
float tc_gen_inter_signed_value(const tc_gen_config *c, const tc_gen_params *p, uint32_t target, float *soft,
                                tc_rng *ri);

#endif /* TC_GEN_INTER_H */
