/* tc_model.h — the edge model of twincache-train (see MODEL.md): parameter
 * layout, initialisation, the learning-rate schedule and the CPU backend
 * (a whole training step with the reference kernels of twincache_kernels.h).
 * Internal to train/. */
#ifndef TC_MODEL_H_INCLUDED
#define TC_MODEL_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include "twincache_kernels.h"
#include "twincache_loader.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TC_MODEL_F TWINCACHE_FEATURES /* input features per pair */
#define TC_MODEL_H 64                 /* hidden units, both layers */
#define TC_MODEL_TENSORS 6            /* w1 b1 w2 b2 w3 b3 */

/* Parameters, gradients and AdamW moments, each one contiguous array of
 * n_params floats with the tensors at off[]: w1 (H,F), b1 (H), w2 (H,H),
 * b2 (H), w3 (1,H), b3 (1). */
typedef struct tc_model {
  size_t n_params;
  size_t off[TC_MODEL_TENSORS], len[TC_MODEL_TENSORS];
  int decay[TC_MODEL_TENSORS]; /* weight decay applies to matrices only */
  float *params, *grads, *m, *v;
} tc_model;

/* Allocates the model with deterministic initial weights from `seed`
 * (uniform +-1/sqrt(fan_in), biases 0). Returns NULL when out of memory. */
tc_model *tc_model_create(uint64_t seed);
void tc_model_free(tc_model *m);

/* Hyper-parameters of the optimiser and schedule. */
typedef struct tc_optim {
  float lr, weight_decay, beta1, beta2, eps, pos_weight;
  uint64_t warmup_steps, total_steps;
} tc_optim;

/* Learning rate at step (0-based): linear warm-up to lr over warmup_steps,
 * then cosine decay to lr/10 at total_steps. */
float tc_lr_at(const tc_optim *o, uint64_t step);

/* Views of one batch slab (host or device addresses alike). */
typedef struct tc_batch_view {
  int G, K, S, N;
  const float *base, *inter;
  const uint8_t *target, *adj, *node_mask, *int_mask;
  const uint32_t *rows; /* (G,K+1) rows per world (FORMAT.md 3.10) */
} tc_batch_view;
void tc_batch_view_init(tc_batch_view *v, const twincache_batch_layout *l, const void *slab);

/* Withheld targets (targets.c, MODEL.md): for every real world of a dense
 * slab (int_mask 1), rewrites its target row (and value) as the real nodes
 * whose held rows (rows[g][k+1], at least 2) all carry one value: the
 * targets of a do(), exactly. Returns the worlds given a target; *worlds
 * (when not NULL) the real worlds seen. */
uint64_t tc_infer_targets(const twincache_batch_layout *l, void *slab, uint64_t *worlds);

/* ---- CPU backend --------------------------------------------------------- */
#define TC_CPU_CHUNKS 16
#define TC_MODEL_PARAMS (TC_MODEL_H * TC_MODEL_F + TC_MODEL_H + TC_MODEL_H * TC_MODEL_H + \
                         TC_MODEL_H + TC_MODEL_H + 1)

/* Workspace for batches of one layout (G, N): features and activations. */
typedef struct tc_cpu {
  int G, N;
  size_t P; /* G*N*N pairs */
  float *T, *C, *W_hat, *Pc, *feat, *pair_w;
  uint8_t *observed;
  float *logit; /* (P) logits of every pair, 0 for padding pairs */
  /* the MLP runs on the Pr real pairs only, gathered in index order (the
   * results equal a run over all P rows: padding rows add exact zeros) */
  uint32_t *idx;               /* (Pr) pair index of each compact row */
  float *featc, *wc;           /* (Pr,F), (Pr) */
  uint8_t *adjc;               /* (Pr) labels */
  float *h1pre, *h1, *h2pre, *h2, *dh2, *dh1; /* (Pr,H) */
  float *logitc, *dlogit;      /* (Pr) */
  /* the Pr rows are cut into TC_CPU_CHUNKS fixed chunks, each with its own
   * partial gradient, summed in chunk order: the result never depends on
   * the number of threads */
  int threads;
  float *part_grads;           /* (TC_CPU_CHUNKS, TC_MODEL_PARAMS) */
  double chunk_loss[TC_CPU_CHUNKS], chunk_w[TC_CPU_CHUNKS];
  double wsum; /* the last batch's sum of pair weights: its loss and gradients are means by it */
} tc_cpu;

/* Workspace for batches of G graphs of N nodes, computing with 1 thread.
 * Returns NULL when out of memory. */
tc_cpu *tc_cpu_create(int G, int N);
void tc_cpu_free(tc_cpu *c);
/* Threads (>= 1) used by tc_cpu_forward_backward: features by graph
 * ranges, the MLP by chunks. Results are bit-identical for any count. */
void tc_cpu_set_threads(tc_cpu *c, int threads);

/* Features and forward pass; with grad, also the backward pass into
 * m->grads. Returns the batch's masked BCE loss. Afterwards c->logit holds
 * the logits and c->T, c->pair_w the features the metrics need. */
float tc_cpu_forward_backward(tc_cpu *c, tc_model *m, const tc_batch_view *b, float pos_weight,
                              int grad);

/* One AdamW update of every tensor with the current gradients; t = step+1. */
void tc_cpu_adamw(tc_model *m, const tc_optim *o, float lr, int t);

#ifdef __cplusplus
}
#endif
#endif /* TC_MODEL_H_INCLUDED */
