/* tc_scm.h — the one SCM sampler of twincache (libtwincache_scm, internal).
 *
 * Given an SCM (structure, parameters, interventions: what a graph frame
 * stores, FORMAT.md 3.2), draws the exogenous noise, computes the base world
 * in topological order, each twin world by recomputing only the target and
 * its descendants on the same noise, and standardises by the base world.
 * The generator (gen/) samples stored worlds with it; the loader (loader/)
 * samples fresh worlds with it. Both call the same functions, so a world
 * computed from the same noise has the same bits wherever it is computed.
 *
 * Noise comes from one of two sources, both tc_rng (common/tc_common.h):
 *  - a stream (the generator): cell (s, j) takes the next draws of one
 *    sequential stream, rows in order, nodes in index order;
 *  - counters (fresh worlds): row s of graph i in epoch group q has the
 *    stream tc_rng_init(key(tag, i, q), s); cell (s, j) takes draw j+1 of
 *    it and, when the noise transform needs more (a ziggurat rejection or
 *    tail, ~1% of normals), the stream tc_rng_init(row state, j). So every
 *    cell is a pure function of (tag, i, q, s, j) whatever the order, the
 *    thread, the node count or the row count S asked for (rows 0..63 of
 *    S = 800 are those of S = 64). Twin worlds share the base world's
 *    noise, so the world is not part of the counter.
 * Independent worlds (m->independent, FORMAT.md 3.9) draw their own: world
 * k's noise is drawn as the base world's is, from the key
 * tc_math_world_key(K0, k + 1), K0 the base world's key (fresh) or its
 * stream's first state (the generator), so a world is a pure function of
 * (tag or seed, i, q, k) in any order; every node is recomputed on it.
 *
 * Every function acts on caller-owned state: thread-safe for distinct
 * samplers. Shapes: n nodes, S samples, H hidden units, K interventions. */
#ifndef TC_SCM_H
#define TC_SCM_H

#include <stddef.h>
#include <stdint.h>

#include "tc_common.h"
#include "twincache_format.h"

/* An SCM to sample, as views of caller-owned arrays (see twincache_graph
 * for the mechanisms). x_j = f_j(parents) + noise_scale[j] * e_j. The MLP's
 * tanh is scm's own float tanh (common/tc_math.h: basic operations, max 2.4 ulp from
 * tanh), the same on every machine. */
typedef struct tc_scm {
  uint32_t n;              /* nodes, 1..TWINCACHE_MAX_NODES */
  uint32_t hidden;         /* H: 0 = linear mechanism, else the hidden units of a block */
  int noise;               /* enum twincache_noise */
  int standardize;         /* 1: worlds are standardised by the base world */
  int independent;         /* 1: world k draws its own noise (tc_math_world_key) and every node
                            * is recomputed on it; 0: twin worlds (the base world's noise) */
  int iscm;                /* 1 (with standardize): internally standardised (iSCM): node j's
                            * values are standardised as they are generated, by the base world's
                            * mean and std of node j, and its children read those; twin worlds
                            * apply the same per-node maps. A do() value is the standardised value */
  const uint8_t *adj;      /* (n, ld_adj): adj[i*ld_adj + j] = 1 <=> edge i -> j */
  uint32_t ld_adj;
  const uint32_t *order;   /* (n) a topological order of the nodes */
  const uint32_t *pa_start;/* (n+1) parents of j are pa_idx[pa_start[j] .. pa_start[j+1]) */
  const uint32_t *pa_idx;  /* (E) ascending within a node */
  const float *pa_w;       /* (E) linear weight of each parent (ignored for MLP) */
  const float *mlp;        /* (n, H*n + 2H) node blocks W1 (H,n), b1 (H), w2 (H), or NULL */
  const uint8_t *node_mech;/* (n) enum twincache_mechanism of each node, or NULL: every node
                            * linear when H = 0, MLP otherwise. A non-linear node reads its
                            * block: sum_h w2[h] u(a_h), a_h = b1[h] + W1[h].x, with u = tanh
                            * (MLP), cos (RFF), 1/(1+e^-a) (SIGMOID), clamp(a,-4,4)^2 (POLY),
                            * scm's own float functions */
  const float *noise_scale;/* (n) */
  const float *het_w;      /* (E) heteroscedastic noise: v of each parent (aligned with pa_idx), */
  const float *het_c;      /* (n) and c_j; or both NULL (homoscedastic). The noise term of node j
                            * is then noise_scale[j] * e_j * (1 + tanh((c_j + sum v x_pa) / 2)),
                            * scm's tanh: x_j = f_j + e * sigma, acc = c, acc += v x in parent
                            * order, sigma = 1 + tanh(0.5 acc) */
  uint32_t n_inter;        /* K */
  const uint16_t *target;  /* (K) */
  const uint8_t *kind;     /* (K) enum twincache_inter_kind */
  const float *value;      /* (K) do value (standardised space when standardize) or shift */
  const uint8_t *desc;     /* (K, n) 1 where node j is target k or its descendant, or NULL:
                            * computed from adj */
  const float *soft;       /* (K, soft_ld) row k: SOFT world k's parameter block
                            * (twincache_graph.soft), or NULL when no world is SOFT */
  uint32_t soft_ld;        /* twincache_soft_stride(n, hidden, mechanism) */
  /* multi-target worlds (twincache_graph's fields): world k intervenes on
   * target[k] and more_target[k*(TWINCACHE_MAX_TARGETS-1) + i], i <
   * n_targets[k]-1, each with its value, all of kind[k]; desc (when given)
   * is then the union of their sets. n_targets NULL: one target each. */
  const uint8_t *n_targets;
  const uint16_t *more_target;
  const float *more_value;
} tc_scm;

/* Scratch of one sampling thread, sized for up to max_nodes nodes and
 * max_samples rows. */
typedef struct tc_scm_sampler tc_scm_sampler;

/* Returns a sampler, or NULL when out of memory or a size is 0 or beyond
 * the format's limits. Free with tc_scm_sampler_free (accepts NULL). */
tc_scm_sampler *tc_scm_sampler_create(uint32_t max_nodes, uint32_t max_samples);
void tc_scm_sampler_free(tc_scm_sampler *sp);

/* ---- noise --------------------------------------------------------------- */
/* Exogenous noise (S, n) from a sequential stream (the generator's): for
 * s in [0, S), for j in [0, n): noise_scale[j] * (float)draw(rn). */
void tc_scm_noise_stream(tc_scm_sampler *sp, const tc_scm *m, uint32_t S, tc_rng *rn);

/* The counter key of graph `index` of the cache with tag `tag` in epoch
 * group `group` (= epoch / resample_every). */
uint64_t tc_scm_fresh_key(uint64_t tag, uint64_t index, uint64_t group);
/* Exogenous noise (S, n) from counters: cell (s, j) is
 * noise_scale[j] * (float)draw, the draw made from the cell's counters as
 * above (gauss: the same ziggurat; Laplace and uniform: the transforms of
 * tc_rng_laplace and tc_rng_range(-1, 1) on the cell's first draw), with
 * scm's own log and exp (basic operations only) where libm's served the
 * stream, so a GPU (kernels/tc_sample_body.h) reproduces every bit. */
void tc_scm_noise_fresh(tc_scm_sampler *sp, const tc_scm *m, uint32_t S, uint64_t key);

/* ---- worlds -------------------------------------------------------------- */
/* The base world from the noise drawn last: raw values kept in the sampler,
 * written to base (S, ld) (standardised when m->standardize; columns
 * [n, ld) are not touched). When standardising, writes the base world's
 * per-node mean and std (n) to norm_mean / norm_std (either may be NULL
 * otherwise). */
void tc_scm_sample_base(tc_scm_sampler *sp, const tc_scm *m, uint32_t S, float *base, uint32_t ld,
                        float *norm_mean, float *norm_std);

/* Twin world k of the base world sampled last: recomputes the target and
 * its descendants on the same noise (m->independent: draws world k's own
 * noise, keyed from the last noise call's key or stream, and recomputes
 * every node on it: then every node is "changed"). Returns the number of changed nodes c
 * and their list, in topological order, through *changed (valid until the
 * sampler's next call); their values are read with the two writers below.
 * The base world and the normalisation (from tc_scm_sample_base) must be
 * those of the same call sequence. */
uint32_t tc_scm_twin(tc_scm_sampler *sp, const tc_scm *m, uint32_t k, uint32_t S,
                     const uint32_t **changed);

/* Writes twin world k (computed by the last tc_scm_twin) as rows: dst (S,
 * ld) = base (S, ld_base) with the changed columns overwritten (a do()
 * target column is exactly value[k]). Columns [n, ld) are copied from base
 * when ld == ld_base, else not touched.
 * dst may equal base only when the caller no longer needs the base. */
void tc_scm_twin_rows(const tc_scm_sampler *sp, const tc_scm *m, uint32_t k, uint32_t S,
                      const float *base, uint32_t ld_base, float *dst, uint32_t ld);

/* Writes the changed columns of twin world k (from the last tc_scm_twin) in
 * increasing node order, except a do() target's, as (c_k, S) floats to cols:
 * the frame's section 9 order. Returns c_k. */
uint32_t tc_scm_twin_cols(const tc_scm_sampler *sp, const tc_scm *m, uint32_t k, uint32_t S,
                          float *cols);

/* ---- an SCM from a decoded frame ----------------------------------------- */
/* Storage for a tc_scm built from a frame view (aligned copies of its
 * parameters, the parent lists and a topological order). */
typedef struct tc_scm_store tc_scm_store;

tc_scm_store *tc_scm_store_create(uint32_t max_nodes, uint32_t max_inter, uint32_t max_hidden);
void tc_scm_store_free(tc_scm_store *st);
/* Fills *m (pointing into st) with the SCM of frame view v. Returns 0, or
 * TWINCACHE_ETOOBIG when v exceeds the store's capacities. */
int tc_scm_from_view(tc_scm_store *st, const twincache_frame_view *v, tc_scm *m);

#endif /* TC_SCM_H */
