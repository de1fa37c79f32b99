/* twincache_kernels.h — the edge model's kernels, plain-C reference versions.
 *
 * Every function here has a CUDA twin in twincache_kernels_cuda.h with the
 * same arguments (device pointers plus a stream); tests compare the two. The
 * CPU backend of twincache-train runs a whole training step with these.
 *
 * Nothing of twincache is included: arguments are raw pointers and sizes.
 * Shapes are given as (dims) row-major; G graphs, K interventions, S samples,
 * N nodes, P = G*N*N ordered node pairs (pair p = (g*N + i)*N + j is the
 * candidate edge i -> j of graph g), F features, H hidden units.
 *
 * All functions are deterministic: one fixed summation order, no threads, so
 * results do not depend on anything but the inputs. Thread-safe (no state).
 * train/MODEL.md explains the model and every feature.
 */
#ifndef TWINCACHE_KERNELS_H
#define TWINCACHE_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Features per ordered pair (see twincache_pair_features_cpu). */
#define TWINCACHE_FEATURES 16
/* |value| clip of the unbounded features (T, W_hat, row sums). */
#define TWINCACHE_FEATURE_CLIP 10.0f
/* An intervention's target counts as moved when sum_s d_t^2 > this * S. */
#define TWINCACHE_EFFECT_EPS 1e-8
/* Ridge added to C's diagonal before the precision matrix. */
#define TWINCACHE_CORR_RIDGE 1e-3
/* A Gauss-Jordan pivot below this marks the matrix singular. */
#define TWINCACHE_PIVOT_EPS 1e-10

/* ---- status of the CUDA launchers ------------------------------------------
 * The launchers of twincache_kernels_cuda.h return 0,
 * TWINCACHE_KERNELS_EDEVICE (a CUDA call or launch failed: the CUDA error
 * is left in the runtime's per-thread state, for the caller's
 * cudaGetLastError) or TWINCACHE_KERNELS_EINVAL (sizes out of the kernel's
 * range; no CUDA call made) — the values of twincache_format.h's
 * TWINCACHE_EDEVICE and TWINCACHE_EINVAL, repeated here because kernels/
 * includes nothing of ours. They keep no message and never print: the
 * caller (train/'s device layer) writes the message. */
#define TWINCACHE_KERNELS_EDEVICE (-21)
#define TWINCACHE_KERNELS_EINVAL (-2)

/* ---- features (forward only: they have no parameters) -------------------- */

/* Normalised total effects from the twin pairs. For every graph g and node t,
 * pooling every intervention k of g whose only target is t (int_mask[k] = 1):
 *   d[s][j] = inter[g][k][s][j] - base[g][s][j]          (exact twin pairs)
 *   T[g][t][j] = sum_{k,s} d[s][t]*d[s][j] / sum_{k,s} d[s][t]^2
 * s over the rows both worlds hold: s < min(rows[g][0], rows[g][k+1])
 * (rows (G,K+1) u32, the batch's rows per world, FORMAT.md 3.10; NULL: S)
 * (the least-squares slope of d_j on d_t; equals mean_s d_j / mean_s d_t for a
 * shift, and the total causal effect t -> j in a linear SCM either way).
 * observed[g][t] = 1 when t was moved (denominator > EFFECT_EPS * pairs, pairs
 * = the s counted over its worlds: S * count with every row held);
 * rows of unobserved nodes and padding (node_mask 0) are all 0, and so are
 * columns of padding nodes. T[g][t][t] = 1 for observed t.
 *   base (G,S,N) f32, inter (G,K,S,N) f32, target (G,K,N) u8,
 *   node_mask (G,N) u8, int_mask (G,K) u8 -> T (G,N,N) f32, observed (G,N) u8 */
void twincache_effects_cpu(float *T, uint8_t *observed, const float *base, const float *inter,
                           const uint8_t *target, const uint8_t *node_mask,
                           const uint8_t *int_mask, const uint32_t *rows, int G, int K, int S, int N);

/* Pearson correlation of the base world over the rows it holds, per graph:
 * r = rows[g * rows_ld] (the batch's rows array, rows_ld = K+1; rows NULL:
 * r = S), capped at S. C[g][i][j] for real i, j (C[i][i] = 1; 0 when a
 * variance is < 1e-12 * r, or r = 0); 0 wherever i or j is padding.
 *   base (G,S,N) f32, node_mask (G,N) u8 -> C (G,N,N) f32 */
void twincache_corr_cpu(float *C, const float *base, const uint8_t *node_mask, const uint32_t *rows,
                        int rows_ld, int G, int S, int N);

/* Matrix-inverse features, per graph, in double precision (Gauss-Jordan with
 * partial pivoting; N is small):
 *   W_hat = I - T_full^{-1}, T_full = T with 1 on the diagonal and identity
 *     rows for unobserved and padding nodes. With every node intervened in a
 *     linear SCM, T_full = (I - W)^{-1}, so W_hat = W: the direct edges.
 *   Pc = partial correlation from the precision matrix (C + ridge*I)^{-1}
 *     (identity rows/columns for padding): Pc_ij = -P_ij / sqrt(P_ii P_jj).
 * Diagonals and padding entries are 0. A singular matrix gives all-0 output
 * for that graph.
 *   T (G,N,N), observed (G,N), C (G,N,N), node_mask (G,N)
 *   -> W_hat (G,N,N) f32, Pc (G,N,N) f32 */
void twincache_inverse_cpu(float *W_hat, float *Pc, const float *T, const uint8_t *observed,
                           const float *C, const uint8_t *node_mask, int G, int N);

/* Feature vector of every ordered pair p = (g,i,j) (TWINCACHE_FEATURES
 * floats; the list is in MODEL.md) and its loss weight: pair_w[p] = 1 when
 * i != j and both are real nodes, else 0 (and the features are 0).
 *   T, C, W_hat, Pc (G,N,N) f32, observed (G,N) u8, node_mask (G,N) u8
 *   -> feat (G*N*N, F) f32, pair_w (G*N*N) f32 */
void twincache_pair_features_cpu(float *feat, float *pair_w, const float *T,
                                 const uint8_t *observed, const float *C, const float *W_hat,
                                 const float *Pc, const uint8_t *node_mask, int G, int N);

/* ---- the MLP --------------------------------------------------------------- */

/* out = in * w^T + b.  in (P,I), w (O,I), b (O) -> out (P,O). */
void twincache_linear_forward_cpu(float *out, const float *in, const float *w, const float *b,
                                  int P, int I, int O);

/* Gradients of linear_forward given dout (P,O):
 *   din (P,I) = dout * w        (skipped when din is NULL)
 *   dw  (O,I) = dout^T * in     (overwritten, not accumulated)
 *   db  (O)   = column sums of dout (overwritten) */
void twincache_linear_backward_cpu(float *din, float *dw, float *db, const float *dout,
                                   const float *in, const float *w, int P, int I, int O);

/* GELU, tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
 * n elements; backward: din = dout * gelu'(in). */
void twincache_gelu_forward_cpu(float *out, const float *in, size_t n);
void twincache_gelu_backward_cpu(float *din, const float *in, const float *dout, size_t n);

/* Masked binary cross-entropy with logits. Label y_p = adj[p] (0/1), weight
 * w_p = pair_w[p]. With W = sum_p w_p (if 0, loss and dlogit are 0):
 *   loss = (1/W) sum_p w_p [pos_weight y log(1+e^-z) + (1-y) log(1+e^z)]
 *   dlogit[p] = (w_p/W) [pos_weight y (sigmoid(z)-1) + (1-y) sigmoid(z)]
 * Summed in double in index order. Returns the loss.
 *   logit (P), adj (P) u8, pair_w (P) -> dlogit (P) (may be NULL) */
float twincache_bce_cpu(float *dlogit, const float *logit, const uint8_t *adj,
                        const float *pair_w, size_t P, float pos_weight);

/* ---- the optimiser --------------------------------------------------------- */

/* One AdamW step (decoupled weight decay) on n parameters, step t >= 1:
 *   m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2
 *   p -= lr * ( (m/(1-b1^t)) / (sqrt(v/(1-b2^t)) + eps) + wd p ) */
void twincache_adamw_cpu(float *param, const float *grad, float *m, float *v, size_t n,
                         float lr, float beta1, float beta2, float eps, float weight_decay,
                         int t);

/* ---- data parallel: gradients around the sum over ranks -------------------- */

/* A batch's loss and gradients are means over its pair weight W (BCE above);
 * ranks hold different W, so their means are combined as sums of W-weighted
 * values, then divided by the summed W (never an average of means):
 *   weight:   grad[i] *= (float)wsum                        grad (n)
 *   unweight: grad[i] = (float)((double)grad[i] / tot[0]), *loss = tot[1] / tot[0]
 * where tot = {sum of W, sum of loss*W} over the ranks (both by the
 * reciprocal, 0 when tot[0] <= 0). */
void twincache_grad_weight_cpu(float *grad, size_t n, double wsum);
void twincache_grad_unweight_cpu(float *grad, size_t n, const double *tot, float *loss);

/* ---- compact batch expansion ------------------------------------------------ */

/* Where the arrays of a compact slab and of a dense slab sit (byte offsets
 * from each slab's start), and the sizes. loader/twincache_loader.h's
 * twincache_compact_layout and twincache_batch_layout hold the same numbers
 * (train/tc_expand.h copies them over). W = (N + 63) / 64.
 *   compact: base (G,S,N) f32, adj (G,N,N) u8, kind (G,K) u8, graph_id (G)
 *     u64, valid (G) u8, n_nodes (G) u32, n_inter (G) u32, target (G,K) u16, value (G,K)
 *     f32, col_first (G,K) u32, col_mask (G,K,W) u64, rows (G,K+1) u32, cols (*,S) f32
 *   dense: base (G,S,N) f32, inter (G,K,S,N) f32, target (G,K,N) u8,
 *     value (G,K,N) f32, kind (G,K) u8, adj (G,N,N) u8, node_mask (G,N) u8,
 *     int_mask (G,K) u8, graph_id (G) u64, valid (G) u8, rows (G,K+1) u32 */
typedef struct twincache_expand_offsets {
  int G, K, S, N, W;
  size_t c_base, c_adj, c_kind, c_graph_id, c_valid, c_n_nodes, c_n_inter, c_target, c_value,
      c_col_first, c_col_mask, c_cols;
  size_t base, inter, target, value, kind, adj, node_mask, int_mask, graph_id, valid;
  size_t rows;   /* added with rows per world (FORMAT.md 3.10), at the end */
  size_t c_rows; /* the compact rows (G,K+1) u32 */
} twincache_expand_offsets;

/* Rebuilds every array of the dense slab from a compact slab (the compact
 * layout's contract is in twincache_loader.h): per graph g,
 *   base, adj, kind, graph_id, valid copied; node_mask[j] = j < n_nodes;
 *   int_mask[k] = k < n_inter; rows copied (rows per world, FORMAT.md 3.10:
 *   r_0 = rows[0], r_k = rows[k+1]);
 *   target[k][j] = 1 and value[k][j] = value[k]
 *   at j = target[k] for k < n_inter, else 0;
 *   inter[k] for k < n_inter: rows s < r_k the base rows, column target[k]
 *   set to value[k] when kind[k] fixes it (do), rows s >= r_k 0; then stored
 *   column c = col_first[k] + r (the r-th set bit j of col_mask[k], j < N)
 *   written over column j (all S rows: the loader zeroes a stored column
 *   past its world's count); for k >= n_inter all 0.
 * Floats are moved as bits (NaN payloads and -0 kept). Every element of
 * every array is written; the alignment gaps between arrays are not (zero
 * them once). Input comes from the loader: indices are trusted, except that
 * a target >= N or a mask bit >= N is ignored. */
void twincache_expand_cpu(void *dense, const void *compact, const twincache_expand_offsets *o);

/* ---- the fresh-world sampler (issue 17, the GPU stage) ------------------------
 * G SCMs as plain arrays (an "SCM batch": what an SCM-only cache stores,
 * padded to N nodes, K interventions, H hidden units) in, the dense worlds
 * of S rows out: the worlds scm/'s fresh sampler (the loader's samples =
 * FRESH) computes for the same SCMs and counter keys, bit for bit
 * (kernels/tc_sample_body.h says how). Graph g: */
#define TWINCACHE_SAMPLE_MAX_NODES 256
typedef struct twincache_scm_batch {
  uint32_t graphs, nodes, inter, hidden, rows; /* G, N, K, H (0 = linear), S */
  const uint32_t *n_nodes;   /* (G) n, 1..N */
  const uint32_t *n_inter;   /* (G) k, 0..K */
  const uint8_t *flags;      /* (G) bit 0: standardised; bit 1 (an internally standardised SCM,
                              * FORMAT.md's ISCM) is refused: it needs each node's statistics
                              * before its children, which this kernel's three phases lack;
                              * bit 2: independent worlds (FORMAT.md 3.9): world k draws its
                              * own noise from the key tc_math_world_key(key, k + 1) */
  const uint8_t *noise;      /* (G) 0 gauss, 1 Laplace, 2 uniform */
  const uint64_t *key;       /* (G) the counter key (scm's tc_scm_fresh_key(tag, i, group)) */
  const uint32_t *order;     /* (G,N) a topological order of nodes 0..n-1 */
  const uint8_t *adj;        /* (G,N,N) adj[i][j] = 1 <=> edge i -> j */
  const float *weight;       /* (G,N,N) linear weight of edge i -> j (H = 0) */
  const float *mlp;          /* (G, N*(H*N+2H)) MLP, RFF: node j's block at j*(H*n+2H):
                              * W1 (H,n), b1 (H), w2 (H), as in a frame; NULL if H = 0 */
  const float *noise_scale;  /* (G,N) */
  const uint16_t *target;    /* (G,K) one target per world: a multi-target world
                              * (twincache_graph.n_targets > 1) has no place here, so a
                              * caller packing SCMs refuses it */
  const uint8_t *kind;       /* (G,K) 0 do, 1 shift, 2 noise (enum twincache_inter_kind); a soft
                              * intervention (3) has parameters the batch has no room for: the
                              * sampler refuses it (twincache_sample_check) */
  const float *value;        /* (G,K) */
  const uint8_t *desc;       /* (G,K,N) 1: node j is target k or its descendant */
  const double *zig_x;       /* (257) the ziggurat's tables, from twincache_sample_tables */
  const double *zig_ratio;   /* (256) */
  const uint8_t *mech;       /* (G,N) mechanism of node j: 0 linear (weight), 1 MLP (tanh units),
                              * 2 RFF (cos units), 3 sigmoid, 4 clamped square (FORMAT.md 3.6);
                              * NULL: every node linear when H = 0, else MLP */
  const float *het_w;        /* (G,N,N) heteroscedastic noise: v of edge i -> j, and */
  const float *het_c;        /* (G,N) c_j: node j's noise is e (1 + tanh((c_j + sum_i v_ij x_i)/2));
                              * both NULL: homoscedastic (a graph without it has v = c = 0 and
                              * e (1 + tanh 0) = e) */
} twincache_scm_batch;

/* The ziggurat tables scm/ computes (the same code, on the host). */
void twincache_sample_tables(double zig_x[257], double zig_ratio[256]);
/* The host emulation of the sampler kernel: its three phases (rows: noise
 * and raw base; columns: standardisation statistics; rows: twins and the
 * standardised base) run for every thread in turn. Writes base (G,S,N),
 * inter (G,K,S,N) (padding 0) and uses noise (G,S,N), mean and sd (G,N) as
 * scratch. N <= TWINCACHE_SAMPLE_MAX_NODES. Returns 0, or
 * TWINCACHE_KERNELS_EINVAL (nothing written) when twincache_sample_check does. */
int twincache_sample_cpu(const twincache_scm_batch *b, float *noise, float *mean, float *sd,
                         float *base, float *inter);
/* What the sampler refuses, checked on host arrays: N > TWINCACHE_SAMPLE_MAX_NODES,
 * a graph that is an iSCM (flags bit 1), or a real intervention (k < n_inter[g]) of a kind other than do, shift or
 * noise (a soft one). Returns 0 or TWINCACHE_KERNELS_EINVAL; the CPU
 * sampler returns that before computing anything. The CUDA sampler's arrays
 * are on the device, so its caller runs this on the host copies first; a
 * world of such a kind it is given anyway comes out all NaN, never bits
 * that could pass for a sample. */
int twincache_sample_check(const twincache_scm_batch *b);

#ifdef __cplusplus
}
#endif
#endif /* TWINCACHE_KERNELS_H */
