/* tc_node_body.h — the SCM sampler's per-node rule, one copy: the value of
 * node j in a world from its parents' values and its noise term — the
 * mechanism, the noise term (heteroscedastic or not) and, for an
 * intervention's target, the rule of each intervention kind (FORMAT.md 3.6).
 * scm/scm.c (the generator's and the CPU loader's sampler) and
 * kernels/tc_sample_body.h (the fresh-world kernel and its host emulation)
 * both compile it; a new mechanism or intervention kind is written here once.
 *
 * Values are columns of S lanes: node i's values are S floats, lane s of
 * every column belonging to row s. scm/ passes S rows at once (its columns,
 * so the lane loops vectorise); the kernel passes one row (S = 1, a thread a
 * row). Every lane sees the same float operations in the same order:
 *   linear: acc = 0; acc += w_p x_p for each parent p ascending; x = acc + e
 *   block (MLP, RFF, sigmoid, poly): out = 0; for h ascending:
 *           a = b1[h]; a += W1[h][i] x_i per parent i ascending;
 *           out += w2[h] u(a); x = out + e
 *   noise term e: the scaled draw, or with heteroscedastic noise
 *           tc_math_het(draw, c + sum v_p x_p) (parents ascending)
 * so the two callers agree bit for bit (test_sample_scm checks it).
 *
 * A layout describes node j through a tc_node (where its parameters are)
 * and a (col, row) pair (where its parents' values are), filled from its own
 * arrays without copying them. The per-parent pass is TC_NODE_PASS: an
 * includer may define it before including this file to run the same loop
 * through its own SIMD dispatch (scm/ does); by default it is
 * tc_node_pass, the scalar reference.
 *
 * Pure float math (common/tc_math.h's rules): `static inline`, no
 * allocation, no I/O, no globals; libc headers only. Kinds are plain ints
 * here, checked against enum twincache_inter_kind by static asserts in scm/
 * and kernels/, as tc_math.h's mechanism codes are. */
#ifndef TC_NODE_BODY_H
#define TC_NODE_BODY_H

#include <stdint.h>

#include "tc_math.h"

/* the per-parent pass is always inlined (scm/ compiles it into its SIMD twin) */
#ifdef __CUDACC__
#define TC_NODE_INLINE __host__ __device__ static __forceinline__
#define TC_RESTRICT __restrict__
#else
#define TC_NODE_INLINE static inline __attribute__((always_inline))
#define TC_RESTRICT restrict
#endif

/* The intervention kinds, as their format codes (enum twincache_inter_kind). */
#define TC_NODE_DO 0
#define TC_NODE_SHIFT 1
#define TC_NODE_NOISE 2
#define TC_NODE_SOFT 3
#define TC_NODE_KIND_COUNT 4

/* A per-edge value of node j's parents: parent p (node i) reads
 * v[p * by_pos + i * by_node]. scm/'s edge arrays (aligned with the parent
 * list) are (1, 0); the kernel's dense (N, N) column of j is (0, N); a soft
 * block's weights (by node) are (0, 1). */
typedef struct tc_node_vals {
  const float *v;
  uint32_t by_pos, by_node;
} tc_node_vals;

/* Node j's parameters. */
typedef struct tc_node {
  uint32_t self;         /* j */
  int mech;              /* TC_MATH_MECH_*, not MIXED */
  uint32_t n_pa;         /* parents */
  const uint32_t *pa;    /* (n_pa) their node indices, ascending */
  tc_node_vals w;        /* linear: the weight of each parent */
  const float *blk;      /* block mechanisms: W1 (H, ld) by node index, b1 (H), w2 (H) */
  uint32_t hidden, ld;   /* H, and the row length of W1 (the graph's n) */
  tc_node_vals het;      /* heteroscedastic noise: v of each parent; het.v NULL: homoscedastic */
  float het_c;           /* and c_j */
} tc_node;

/* Where the parents' values are, the functions' (col, row) pair: node i's
 * S lanes at col[i] (scm/'s columns, row NULL), or its one lane at row[i]
 * (the kernel's row, S = 1, col NULL). Passed by value, so a caller that
 * always passes a NULL row compiles the test away. */

/* Node i's values; the value of parent p (node i) of an edge array. */
TC_MATH const float *tc_node_input(const float *const *col, const float *row, uint32_t i) {
  return row ? row + i : col[i];
}
TC_MATH float tc_node_val(tc_node_vals a, uint32_t p, uint32_t i) {
  return a.v[p * a.by_pos + i * a.by_node];
}

/* One parent's pass of a weighted sum over S lanes: x += w xp; the first
 * pass from 0 (0 + w xp: the sum's first add, kept for the sign of a zero);
 * e not NULL: the last pass, adding e after it ((x + w xp) + e). */
TC_NODE_INLINE void tc_node_pass(float *TC_RESTRICT x, const float *TC_RESTRICT xp, float w,
                                 const float *TC_RESTRICT e, int first, uint32_t S) {
  if (first && e)
    for (uint32_t s = 0; s < S; s++) x[s] = (0.0f + w * xp[s]) + e[s];
  else if (first)
    for (uint32_t s = 0; s < S; s++) x[s] = 0.0f + w * xp[s];
  else if (e)
    for (uint32_t s = 0; s < S; s++) x[s] = (x[s] + w * xp[s]) + e[s];
  else
    for (uint32_t s = 0; s < S; s++) x[s] += w * xp[s];
}
#ifndef TC_NODE_PASS
#define TC_NODE_PASS tc_node_pass
#endif

/* x += the noise term of draw e (S): e, or e (1 + tanh(0.5 (c + sum v x))),
 * the sum in tmp (S). */
TC_MATH void tc_node_add_noise(const tc_node *nd, const float *const *col, const float *row,
                               const float *TC_RESTRICT e, float *TC_RESTRICT x, float *TC_RESTRICT tmp, uint32_t S) {
  if (!nd->het.v) {
    for (uint32_t s = 0; s < S; s++) x[s] += e[s];
    return;
  }
  for (uint32_t s = 0; s < S; s++) tmp[s] = nd->het_c;
  for (uint32_t p = 0; p < nd->n_pa; p++) {
    const float v = tc_node_val(nd->het, p, nd->pa[p]), *TC_RESTRICT xp = tc_node_input(col, row, nd->pa[p]);
    for (uint32_t s = 0; s < S; s++) tmp[s] += v * xp[s];
  }
  for (uint32_t s = 0; s < S; s++) x[s] += tc_math_het(e[s], tmp[s]);
}

/* Node j's values x (S) from its parents' (col, row) and its draw e (S): the
 * mechanism plus the noise term. tmp: S floats of scratch. */
TC_MATH void tc_node_eval(const tc_node *nd, const float *const *col, const float *row, const float *TC_RESTRICT e,
                          float *TC_RESTRICT x, float *TC_RESTRICT tmp, uint32_t S) {
  const uint32_t np = nd->n_pa;
  if (nd->mech == TC_MATH_MECH_LINEAR) {
    /* with homoscedastic noise the last parent's pass adds e too */
    const int fuse = !nd->het.v && np > 0;
    if (np == 0)
      for (uint32_t s = 0; s < S; s++) x[s] = 0.0f;
    for (uint32_t p = 0; p < np; p++)
      TC_NODE_PASS(x, tc_node_input(col, row, nd->pa[p]), tc_node_val(nd->w, p, nd->pa[p]),
                   fuse && p + 1 == np ? e : (const float *)0, p == 0, S);
    if (!fuse) tc_node_add_noise(nd, col, row, e, x, tmp, S);
    return;
  }
  const uint32_t H = nd->hidden;
  const float *b1 = nd->blk + (size_t)H * nd->ld, *w2 = b1 + H;
  float *TC_RESTRICT a = tmp;
  for (uint32_t s = 0; s < S; s++) x[s] = 0.0f;
  for (uint32_t h = 0; h < H; h++) {
    const float *w1 = nd->blk + (size_t)h * nd->ld;
    for (uint32_t s = 0; s < S; s++) a[s] = b1[h];
    for (uint32_t p = 0; p < np; p++)
      TC_NODE_PASS(a, tc_node_input(col, row, nd->pa[p]), w1[nd->pa[p]], (const float *)0, 0, S);
    /* one loop per unit function, so each vectorises */
    if (nd->mech == TC_MATH_MECH_RFF)
      for (uint32_t s = 0; s < S; s++) x[s] += w2[h] * tc_math_cosf(a[s]);
    else if (nd->mech == TC_MATH_MECH_SIGMOID)
      for (uint32_t s = 0; s < S; s++) x[s] += w2[h] * tc_math_sigmoidf(a[s]);
    else if (nd->mech == TC_MATH_MECH_POLY)
      for (uint32_t s = 0; s < S; s++) x[s] += w2[h] * tc_math_sqclampf(a[s]);
    else
      for (uint32_t s = 0; s < S; s++) x[s] += w2[h] * tc_math_tanhf(a[s]);
  }
  tc_node_add_noise(nd, col, row, e, x, tmp, S); /* the units are done with tmp */
}

/* ---- the intervention kinds ----------------------------------------------------
 * What each kind does to its target's values; the rest of a twin world (the
 * descendants) follows from tc_node_eval on the twin's parents. */

/* 1 when the kind fixes the target to the world's value: its stored value
 * is the value itself (not computed, not stored in section 9). */
TC_MATH int tc_node_kind_fixes(int kind) { return kind == TC_NODE_DO; }
/* 1 when the kind reads parameters beyond (target, value): a soft world's
 * block (section 7a). */
TC_MATH int tc_node_kind_has_block(int kind) { return kind == TC_NODE_SOFT; }

/* Target t's raw values x (S) in a twin world of kind `kind`, value v: the
 * parents' values of the twin are in (col, row), e (S) is t's draw in the base
 * world. soft: the world's block when the kind has one (the layout of t's
 * own parameters: linear weights by node, or a node block), else unused.
 * stdz, mean, sd: whether the worlds are standardised (by the base world's
 * statistics of t) in the space a DO value lives in. tmp, e_twin: S floats
 * of scratch each. A code beyond the kinds computes as a shift (decoders
 * refuse such codes before a world is sampled). */
TC_MATH void tc_node_twin_target(const tc_node *nd, const float *const *col, const float *row, int kind, float v,
                                 const float *soft, int stdz, float mean, float sd, const float *TC_RESTRICT e,
                                 float *TC_RESTRICT x, float *TC_RESTRICT tmp, float *TC_RESTRICT e_twin, uint32_t S) {
  if (kind == TC_NODE_DO) { /* a DO value lives in the stored space: raw = v sd + mean when standardised */
    const float raw = stdz ? v * sd + mean : v;
    for (uint32_t s = 0; s < S; s++) x[s] = raw;
    return;
  }
  tc_node own = *nd;
  const float *et = e;
  int add_v = kind != TC_NODE_NOISE; /* shift: the mechanism, then + v */
  if (kind == TC_NODE_SOFT) { /* the world's own parameters, the base world's noise term */
    own.w.v = soft;
    own.w.by_pos = 0;
    own.w.by_node = 1;
    own.blk = soft;
    add_v = nd->n_pa == 0;
    if (add_v) { /* a root: the noise term times the factor soft[t] (its own slot: the weight of
                  * no edge), then + v, the new mean */
      const float fa = soft[nd->self];
      for (uint32_t s = 0; s < S; s++) e_twin[s] = tc_math_soft_root_noise(fa, e[s]);
      et = e_twin;
    }
  } else if (kind == TC_NODE_NOISE) { /* the mechanism on v * (the base world's noise term) */
    for (uint32_t s = 0; s < S; s++) e_twin[s] = v * e[s];
    et = e_twin;
  }
  tc_node_eval(&own, col, row, et, x, tmp, S);
  if (add_v)
    for (uint32_t s = 0; s < S; s++) x[s] += v;
}

#endif /* TC_NODE_BODY_H */
