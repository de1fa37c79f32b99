/* tc_sample_body.h — the fresh-world sampler's per-thread code, compiled
 * twice: as C for the host emulation (sample_cpu.c) and as CUDA device code
 * (sample.cu). Every function is a pure function of its arguments.
 *
 * Its math is scm/'s own, not a twin: the counters, the noise cells, log and
 * exp, tanh, cos and the other unit functions, the heteroscedastic factor
 * and the standardisation statistics are common/tc_math.h's, which scm/
 * compiles too. What is here is the order of a row's work: scm/ computes a
 * world column by column, this code row by row (one thread a row), with the
 * same float operations in the same order for every value: row s of a graph
 * has the stream tc_math_stream(key, s); cell (s, j) is tc_math_cell of it;
 * linear: acc = 0, acc += w x over parents ascending, + e; a block: out = 0,
 * out += w2 u(b1 + W1 x), + e; the twin rules of scm.c's twin_target; the
 * statistics as double sums over rows in order. Values agree bit for bit
 * when no multiply-add is contracted: ISO C on the host, nvcc --fmad=false on
 * the device. test_sample_scm (CI) checks the C build against scm/;
 * test_sample_cuda the device against the C build. */
#ifndef TC_SAMPLE_BODY_H
#define TC_SAMPLE_BODY_H

#include <stdint.h>

#include "tc_math.h"
#include "twincache_format.h" /* the constants: kinds, mechanisms */
#include "twincache_kernels.h"

#ifdef __CUDACC__
#define TC_SB __host__ __device__ static inline
#else
#define TC_SB static inline
#endif

/* The intervention kinds the sampler computes (scm's twin_target); a soft
 * one carries parameters the batch lacks. */
TC_SB int tc_sb_kind_supported(uint8_t kind) {
  return kind == TWINCACHE_DO || kind == TWINCACHE_SHIFT || kind == TWINCACHE_INTER_NOISE;
}

/* A quiet NaN: what an unsupported world is filled with. */
TC_SB float tc_sb_nan(void) {
  union {
    uint32_t u;
    float f;
  } v = {0x7fc00000u};
  return v.f;
}

/* The noise term of node j: e, or e (1 + tanh(0.5 (c + sum v x))) (scm's add_noise). */
TC_SB float tc_sb_noise_term(const twincache_scm_batch *b, uint32_t g, uint32_t j, const float *row, float e) {
  if (!b->het_c) return e;
  const uint32_t N = b->nodes, n = b->n_nodes[g];
  const uint8_t *adj = b->adj + (size_t)g * N * N;
  const float *v = b->het_w + (size_t)g * N * N;
  float acc = b->het_c[(size_t)g * N + j];
  for (uint32_t i = 0; i < n; i++)
    if (adj[(size_t)i * N + j]) acc += v[(size_t)i * N + j] * row[i];
  return tc_math_het(e, acc);
}

/* x_j of one row (N floats) before an intervention's change. */
TC_SB float tc_sb_eval(const twincache_scm_batch *b, uint32_t g, uint32_t j, const float *row, float e) {
  const uint32_t N = b->nodes, n = b->n_nodes[g], H = b->hidden;
  const uint8_t *adj = b->adj + (size_t)g * N * N;
  e = tc_sb_noise_term(b, g, j, row, e);
  const int mech = b->mech ? b->mech[(size_t)g * N + j] : (H ? TWINCACHE_MECH_MLP : TWINCACHE_MECH_LINEAR);
  if (mech == TWINCACHE_MECH_LINEAR) {
    const float *w = b->weight + (size_t)g * N * N;
    float acc = 0.0f;
    for (uint32_t i = 0; i < n; i++)
      if (adj[(size_t)i * N + j]) acc += w[(size_t)i * N + j] * row[i];
    return acc + e;
  }
  /* node j's block: W1 (H, n) row-major, b1 (H), w2 (H), as in the frame */
  const float *blk = b->mlp + (size_t)g * N * ((size_t)H * N + 2u * H) + (size_t)j * ((size_t)H * n + 2u * H);
  const float *b1 = blk + (size_t)H * n, *w2 = b1 + H;
  float out = 0.0f;
  for (uint32_t h = 0; h < H; h++) {
    float a = b1[h];
    for (uint32_t i = 0; i < n; i++)
      if (adj[(size_t)i * N + j]) a += blk[(size_t)h * n + i] * row[i];
    out += w2[h] * tc_math_unit(mech, a);
  }
  return out + e;
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
 * (when the graph is). Twin blocks k >= n_inter are 0. */
TC_SB void tc_sb_twin_row(const twincache_scm_batch *b, uint32_t g, uint32_t s, const float *noise,
                          float *base, const float *mean, const float *sd, float *inter) {
  const uint32_t N = b->nodes, S = b->rows, K = b->inter, n = b->n_nodes[g];
  const int stdz = (b->flags[g] & 1u) != 0;
  const float *e = noise + ((size_t)g * S + s) * N;
  float *xb = base + ((size_t)g * S + s) * N;
  const float *mu = mean + (size_t)g * N, *sg = sd + (size_t)g * N;
  const uint32_t *order = b->order + (size_t)g * N;
  float row[TWINCACHE_SAMPLE_MAX_NODES];
  for (uint32_t k = 0; k < K; k++) {
    float *out = inter + (((size_t)g * K + k) * S + s) * N;
    if (k >= b->n_inter[g]) {
      for (uint32_t j = 0; j < N; j++) out[j] = 0.0f;
      continue;
    }
    const uint8_t *desc = b->desc + ((size_t)g * K + k) * N;
    uint32_t t = b->target[(size_t)g * K + k];
    float v = b->value[(size_t)g * K + k];
    const uint8_t kind = b->kind[(size_t)g * K + k]; /* scm.c's twin_target */
    int is_do = kind == TWINCACHE_DO;
    if (!tc_sb_kind_supported(kind)) { /* soft: its parameters are not in the batch */
      for (uint32_t j = 0; j < N; j++) out[j] = tc_sb_nan();
      continue;
    }
    float do_raw = stdz ? v * sg[t] + mu[t] : v;
    for (uint32_t j = 0; j < n; j++) row[j] = xb[j];
    for (uint32_t r = 0; r < n; r++) { /* changed nodes in topological order */
      uint32_t j = order[r];
      if (!desc[j]) continue;
      if (j == t)
        row[j] = is_do ? do_raw
                 : kind == TWINCACHE_INTER_NOISE ? tc_sb_eval(b, g, j, row, v * e[j])
                                                 : tc_sb_eval(b, g, j, row, e[j]) + v; /* SHIFT */
      else row[j] = tc_sb_eval(b, g, j, row, e[j]);
    }
    for (uint32_t j = 0; j < N; j++) {
      float y = 0.0f;
      if (j < n) {
        if (desc[j] && j == t && is_do) y = v;
        else y = stdz ? tc_math_standardize(row[j], mu[j], sg[j]) : row[j];
      }
      out[j] = y;
    }
  }
  if (stdz)
    for (uint32_t j = 0; j < n; j++) xb[j] = tc_math_standardize(xb[j], mu[j], sg[j]);
}

#endif /* TC_SAMPLE_BODY_H */
