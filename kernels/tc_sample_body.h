/* tc_sample_body.h — the fresh-world sampler's per-thread code, compiled
 * twice: as C for the host emulation (sample_cpu.c) and as CUDA device code
 * (sample.cu). Every function is a pure function of its arguments.
 *
 * Its math is scm/'s own, not a twin: the counters, the noise cells, log and
 * exp, the unit functions and the standardisation statistics are
 * common/tc_math.h's, and a node's value — mechanism, noise term, the rule
 * of each intervention kind — is common/tc_node_body.h's, both of which
 * scm/ compiles too. What is here is the order of a row's work and the SCM
 * batch's layout: scm/ computes a world column by column (S lanes at once),
 * this code row by row (one thread a row: the body with S = 1), with the
 * same float operations in the same order for every value: row s of a graph
 * has the stream tc_math_stream(key, s); cell (s, j) is tc_math_cell of it;
 * node j is tc_node_eval over the row's parents; a target tc_node_twin_target;
 * the statistics double sums over rows in order; an independent world k
 * (flags bit 2, FORMAT.md 3.9) draws its row from the stream
 * tc_math_stream(tc_math_world_key(key, k + 1), s) and recomputes every
 * node on it, as scm/ does. Values agree bit for bit
 * when no multiply-add is contracted: ISO C on the host, nvcc --fmad=false on
 * the device. test_sample_scm (CI) checks the C build against scm/;
 * test_sample_cuda the device against the C build. */
#ifndef TC_SAMPLE_BODY_H
#define TC_SAMPLE_BODY_H

#include <stdint.h>

#include "tc_math.h"
#include "tc_node_body.h"
#include "twincache_kernels.h"

#ifdef __CUDACC__
#define TC_SB __host__ __device__ static inline
#else
#define TC_SB static inline
#endif

/* The intervention kinds the sampler computes: every kind whose world
 * needs only (target, value); a soft one carries a block the batch lacks. */
TC_SB int tc_sb_kind_supported(uint8_t kind) { return kind < TC_NODE_KIND_COUNT && !tc_node_kind_has_block(kind); }

/* A quiet NaN: what an unsupported world is filled with. */
TC_SB float tc_sb_nan(void) {
  union {
    uint32_t u;
    float f;
  } v = {0x7fc00000u};
  return v.f;
}

/* Node j of graph g as the body reads it: the dense (N, N) columns of j
 * (weights, heteroscedastic v), its block, and its parents listed from the
 * adjacency into pa (N). */
TC_SB tc_node tc_sb_node(const twincache_scm_batch *b, uint32_t g, uint32_t j, uint32_t *pa) {
  const uint32_t N = b->nodes, n = b->n_nodes[g], H = b->hidden;
  const uint8_t *adj = b->adj + (size_t)g * N * N;
  tc_node nd;
  nd.self = j;
  nd.mech = b->mech ? b->mech[(size_t)g * N + j] : (H ? TC_MATH_MECH_MLP : TC_MATH_MECH_LINEAR);
  nd.n_pa = 0;
  for (uint32_t i = 0; i < n; i++)
    if (adj[(size_t)i * N + j]) pa[nd.n_pa++] = i;
  nd.pa = pa;
  nd.w.v = b->weight ? b->weight + (size_t)g * N * N + j : 0;
  nd.w.by_pos = 0;
  nd.w.by_node = N;
  /* node j's block: W1 (H, n) row-major, b1 (H), w2 (H), as in the frame */
  nd.blk = b->mlp ? b->mlp + (size_t)g * N * ((size_t)H * N + 2u * H) + (size_t)j * ((size_t)H * n + 2u * H) : 0;
  nd.hidden = H;
  nd.ld = n;
  nd.het.v = b->het_c ? b->het_w + (size_t)g * N * N + j : 0;
  nd.het.by_pos = 0;
  nd.het.by_node = N;
  nd.het_c = b->het_c ? b->het_c[(size_t)g * N + j] : 0.0f;
  return nd;
}

/* x_j of one row (N floats, the parents' values) and draw e, before an
 * intervention's change. */
TC_SB float tc_sb_eval(const twincache_scm_batch *b, uint32_t g, uint32_t j, const float *row, float e) {
  uint32_t pa[TWINCACHE_SAMPLE_MAX_NODES];
  const tc_node nd = tc_sb_node(b, g, j, pa);
  float x, tmp;
  tc_node_eval(&nd, 0, row, &e, &x, &tmp, 1);
  return x;
}

/* Phase 1, thread (g, s): the noise of row s (noise (G,S,N)) and the raw
 * base world's row s (base (G,S,N)), nodes in topological order; columns
 * [n, N) of both rows 0. */
TC_SB void tc_sb_base_row(const twincache_scm_batch *b, uint32_t g, uint32_t s, float *noise, float *base) {
  const uint32_t N = b->nodes, S = b->rows, n = b->n_nodes[g];
  float *e = noise + ((size_t)g * S + s) * N, *x = base + ((size_t)g * S + s) * N;
  const float *scale = b->noise_scale + (size_t)g * N;
  const uint32_t *order = b->order + (size_t)g * N;
  uint64_t row = tc_math_stream(b->key[g], s);
  for (uint32_t j = 0; j < N; j++) {
    e[j] = j < n ? scale[j] * (float)tc_math_cell(b->noise[g], row, j, b->zig_x, b->zig_ratio) : 0.0f;
    x[j] = 0.0f;
  }
  for (uint32_t r = 0; r < n; r++) {
    uint32_t j = order[r];
    x[j] = tc_sb_eval(b, g, j, x, e[j]);
  }
}

/* Phase 2, thread (g, j): mean and std (G,N) of node j's raw base column
 * (scm's standardisation statistics); mean 0, std 1 when the graph is not
 * standardised or j >= n. */
TC_SB void tc_sb_stats(const twincache_scm_batch *b, uint32_t g, uint32_t j, const float *base, float *mean,
                       float *sd_out) {
  const uint32_t N = b->nodes, S = b->rows;
  float fm = 0.0f, fs = 1.0f;
  if ((b->flags[g] & 1u) && j < b->n_nodes[g]) {
    const float *x = base + (size_t)g * S * N + j;
    double sum = 0.0, sq = 0.0;
    for (uint32_t s = 0; s < S; s++) sum += x[(size_t)s * N];
    double mu = sum / S;
    for (uint32_t s = 0; s < S; s++) {
      double d = x[(size_t)s * N] - mu;
      sq += d * d;
    }
    tc_math_norm(mu, sq, S, &fm, &fs);
  }
  mean[(size_t)g * N + j] = fm;
  sd_out[(size_t)g * N + j] = fs;
}

/* Phase 3, thread (g, s): row s of every twin world (inter (G,K,S,N)) from
 * the raw base row and the noise, then the base row standardised in place
 * (when the graph is). Twin blocks k >= n_inter are 0. An independent
 * graph's world k draws its own noise row (world key k + 1) and every node
 * is recomputed; standardised, by the base world's map, as a twin is. */
TC_SB void tc_sb_twin_row(const twincache_scm_batch *b, uint32_t g, uint32_t s, const float *noise,
                          float *base, const float *mean, const float *sd, float *inter) {
  const uint32_t N = b->nodes, S = b->rows, K = b->inter, n = b->n_nodes[g];
  const int stdz = (b->flags[g] & 1u) != 0, indep = (b->flags[g] & 4u) != 0;
  const float *e = noise + ((size_t)g * S + s) * N, *scale = b->noise_scale + (size_t)g * N;
  float *xb = base + ((size_t)g * S + s) * N;
  const float *mu = mean + (size_t)g * N, *sg = sd + (size_t)g * N;
  const uint32_t *order = b->order + (size_t)g * N;
  float row[TWINCACHE_SAMPLE_MAX_NODES], ew[TWINCACHE_SAMPLE_MAX_NODES];
  for (uint32_t k = 0; k < K; k++) {
    float *out = inter + (((size_t)g * K + k) * S + s) * N;
    if (k >= b->n_inter[g]) {
      for (uint32_t j = 0; j < N; j++) out[j] = 0.0f;
      continue;
    }
    const uint8_t *desc = b->desc + ((size_t)g * K + k) * N;
    uint32_t t = b->target[(size_t)g * K + k];
    float v = b->value[(size_t)g * K + k];
    const uint8_t kind = b->kind[(size_t)g * K + k];
    const int fixes = tc_node_kind_fixes(kind);
    if (!tc_sb_kind_supported(kind)) { /* soft: its block is not in the batch */
      for (uint32_t j = 0; j < N; j++) out[j] = tc_sb_nan();
      continue;
    }
    const float *ek = e; /* the world's noise row: the base world's, or its own */
    if (indep) {
      uint64_t rw = tc_math_stream(tc_math_world_key(b->key[g], (uint64_t)k + 1), s);
      for (uint32_t j = 0; j < n; j++)
        ew[j] = scale[j] * (float)tc_math_cell(b->noise[g], rw, j, b->zig_x, b->zig_ratio);
      ek = ew;
    }
    for (uint32_t j = 0; j < n; j++) row[j] = xb[j];
    for (uint32_t r = 0; r < n; r++) { /* changed nodes in topological order */
      uint32_t j = order[r];
      if (!desc[j] && !indep) continue;
      if (j == t) { /* the kind's rule (tc_node_body.h), on the twin's parents */
        uint32_t pa[TWINCACHE_SAMPLE_MAX_NODES];
        const tc_node nd = tc_sb_node(b, g, j, pa);
        float x, tmp, e_twin;
        tc_node_twin_target(&nd, 0, row, kind, v, 0, stdz, mu[t], sg[t], &ek[j], &x, &tmp, &e_twin, 1);
        row[j] = x;
      } else
        row[j] = tc_sb_eval(b, g, j, row, ek[j]);
    }
    for (uint32_t j = 0; j < N; j++) {
      float y = 0.0f;
      if (j < n) {
        if ((desc[j] || indep) && j == t && fixes) y = v;
        else y = stdz ? tc_math_standardize(row[j], mu[j], sg[j]) : row[j];
      }
      out[j] = y;
    }
  }
  if (stdz)
    for (uint32_t j = 0; j < n; j++) xb[j] = tc_math_standardize(xb[j], mu[j], sg[j]);
}

#endif /* TC_SAMPLE_BODY_H */
