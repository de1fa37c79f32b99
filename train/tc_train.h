/* tc_train.h — the parts of twincache-train (program-internal):
 *   train_flags.c        the options: table, parsing, --help, what may change on resume
 *   train_backend_cpu.c  the CPU backend: the reference kernels' loop and forward pass
 *   train_backend_cuda.c the CUDA backend: the double-buffered loop, the device forward pass
 *   train_loop.c         what every backend's loop shares: fetching a batch, and
 *                        after each step the CSV row, evaluation and checkpoint
 *   train_eval.c         the validation loader (kept open) and one pass over it:
 *                        loss, AUROC, AUPRC, SHD; withheld targets read back (targets.c)
 *   train_predict.c      --predict: the model's probabilities on --val-cache as the suite's .npz
 *   train_report.c       the summary (text and JSON) and --bench-h2d
 *   train_agree.c        data parallel: every rank agrees with rank 0 on the options
 *   train.c              main: the run as named steps
 * Calls run down this list's dependency order, never back: the backends call
 * train_loop.c, which calls train_eval.c, which reaches the backend only
 * through the table (r->be). Functions print their one error line themselves
 * and return 0 or 1 (the program's exit status for a runtime error). */
#ifndef TC_TRAIN_H
#define TC_TRAIN_H

#include <stdint.h>
#include <stdio.h>

#include "tc_device.h"
#include "tc_dist.h"
#include "tc_model.h"
#include "tc_nccl.h"
#include "twincache_loader.h"

#define PROG "twincache-train"

enum { DEV_AUTO = 0, DEV_CPU = 1, DEV_CUDA = 2 }; /* order of --device's choices */
#define TC_TRAIN_MIX_MAX 16 /* a loader mixture's most sources (twincache_loader_open_mixture) */

typedef struct opts {
  const char *cache, *val_cache, *checkpoint, *resume, *log, *batch_log, *predict;
  double val_split;
  uint32_t batch, threads, cpu_threads;
  uint32_t fresh_rows, resample_every; /* 0: stored worlds; else fresh worlds of S rows, R epochs each */
  uint32_t local_nodes;                /* --local-nodes M: the loader's local mode, 0 = off */
  uint64_t steps, warmup, eval_every, checkpoint_every, stop_after, seed;
  double lr, weight_decay, pos_weight;
  int device, json, quiet, sync_copies, bench_h2d;
  int gpu; /* --gpu N: the CUDA device index; -1: local rank mod visible devices */
  int nccl; /* --nccl: NCCL's sums on one rank too (always on with several) */
  int val_withhold; /* --val-withhold-targets: validation batches carry no targets */
  int predict_only; /* --predict-only: --resume's model, no training, --predict */
  uint32_t suite_version; /* --suite-version V: --predict's file is for suite/vV.json's cells */
  /* --mix DIR=W,DIR=W,...: train on a mixture of whole caches (cache =
   * mix_path[0] then, for messages); mix_n 0 without */
  const char *mix;
  uint32_t mix_n;
  const char *mix_path[TC_TRAIN_MIX_MAX];
  double mix_weight[TC_TRAIN_MIX_MAX];
  char mix_text[4096]; /* --mix's value, cut at the commas and '=' */
} opts;

/* Parses argv into *o (defaults first). Returns -1 to go on, else the exit
 * status: 0 after --help, 2 after one line naming the bad flag. */
int train_flags_parse(int argc, char **argv, opts *o);
/* One line to `text` listing the options in effect for a resumed run that
 * may differ from the checkpoint's run (schedule, cadence, outputs). */
void train_flags_print_resumable(FILE *text, const opts *o);

typedef struct val_result {
  int done;
  double loss, auroc, auprc, shd, base_auroc, base_auprc, base_shd;
  uint64_t graphs, pairs;
} val_result;

typedef struct run run;
typedef struct loop_stats loop_stats;

/* One backend: everything that differs between CPU and CUDA, chosen once at
 * start (train.c's pick_device); no call site asks which one it is. */
typedef struct train_backend {
  const char *name; /* "cpu" or "cuda": the summary's device */
  int layout;       /* the training loader's batch layout (TWINCACHE_LAYOUT_DENSE or _COMPACT) */
  /* 1: eval_batch takes validation batches of any N, K, S and batch size
   * (the model is per pair); 0: only batches of the training layout's */
  int any_shape;
  /* the loaders' slot memory (NULL: the loader's malloc) */
  void *(*host_alloc)(size_t bytes, void *user);
  void (*host_free)(void *ptr, void *user);
  /* After the training loader opened (r->layout set): the workspace or
   * device context. destroy accepts a run whose create failed or never ran. */
  int (*create)(run *r);
  void (*destroy)(run *r);
  /* Steps [r->step0, r->end_step) on batches of l. */
  int (*loop)(run *r, twincache_loader *l, loop_stats *ls);
  /* Forward pass on one dense validation batch: its loss and pointers to
   * the logits, T statistics and pair weights (each G*N*N floats, valid
   * until the next call). */
  int (*eval_batch)(run *r, const twincache_batch *b, float *loss, const float **logit,
                    const float **T, const float **pair_w);
  /* Brings r->model up to date (params and AdamW moments) for a checkpoint. */
  int (*sync_model)(run *r);
  /* The data path's event timings; 0 when the backend has none (*t zeroed). */
  int (*timing)(const run *r, tc_cuda_timing *t);
} train_backend;

extern const train_backend train_backend_cpu;
extern const train_backend train_backend_cuda;

/* Everything one run holds. */
struct run {
  opts o;
  const train_backend *be; /* chosen once by pick_device */
  tc_dist dist;            /* this process's rank of the job (1 process: rank 0 of 1) */
  tc_model *model;
  tc_cpu *cpu;
  tc_cpu *cpu_eval; /* the CPU backend's workspace for validation batches of another G or N */
  tc_cuda *dev;
  tc_nccl *nccl; /* the CUDA backend's gradient sums under an MPI launcher (else NULL) */
  tc_optim optim;
  twincache_batch_layout layout; /* the training loader's */
  uint64_t first, train_end, count; /* graphs [first, train_end) train, [train_end, count) validate */
  uint64_t seq0, step0, end_step;   /* end_step: where this process stops */
  twincache_dims dims;               /* --cache's (a part's in local mode) */
  uint64_t cache_tag, cache_seed;    /* its config digest and generator seed (UINT64_MAX: none) */
  int independent;                   /* its worlds draw their own noise (gen --worlds independent) */
  int agree_failed;                  /* train_agree found a disagreement: every rank knows */
  double sort_var, sort_r2; /* mean sortability of the first training graphs (NaN: none) */
  uint32_t sort_graphs;     /* graphs it was measured on */
  uint64_t val_count; /* --val-cache: its graphs, all validated on; else 0 */
  int val_fresh;      /* validate on fresh worlds (epoch 0's draw): the validation cache's
                       * stored S is not the training batches' (or it stores none) */
  uint64_t loader_seed;
  int predict_only; /* nothing to train (--predict-only, or --resume at --steps with --predict) */
  /* the train loader's state: on --resume the checkpoint's until the loader
   * opens, then the loader's own at open (next_seq = seq0); a checkpoint
   * stores it with next_seq advanced by the steps done since */
  twincache_loader_state stream;
  FILE *log, *batch_log, *text; /* text: where human-readable lines go */
  float *ev_logit, *ev_T, *ev_w; /* CUDA eval host copies, G*N*N each */
  twincache_loader *val;         /* the validation loader, open for the whole run (or NULL) */
  val_result last;
  uint64_t infer_found, infer_seen; /* --val-withhold-targets: worlds given an inferred target, of those seen */
  uint64_t eval_ns, ckpt_ns;
};

/* Counters of the training loop. */
struct loop_stats {
  uint64_t wait_ns, steps, graphs; /* graphs: this rank's */
  uint64_t reduce_ns;              /* in the gradient all-reduce (world > 1) */
};

/* 1 when the run evaluates: a --val-cache, or a held-out tail (--val-split). */
int train_has_validation(const run *r);
/* Opens r->val over the validation graphs (all of --val-cache, else
 * [train_end, count) of --cache) once for the run: unshuffled and endless,
 * so each evaluation reads the next epoch, which holds the same batches
 * (fresh worlds keep epoch 0's draw). No-op when nothing is held out, and on
 * ranks other than 0 (rank 0 evaluates for the job). */
int train_eval_open(run *r);
/* --val-withhold-targets: the batch's withheld targets inferred from its
 * worlds (tc_infer_targets) before the model sees it; counted in r. */
void train_withheld_targets(run *r, twincache_batch *b);
/* One pass (one epoch of r->val); out->done = 0 when there is nothing to
 * validate on. */
int train_evaluate(run *r, val_result *out);

/* The loops' shared parts (train_loop.c). Fetches the next training batch
 * (counted in ls, written to --batch-log). */
int train_next_batch(run *r, twincache_loader *l, twincache_batch **b, loop_stats *ls);
/* After step `done` (1-based): CSV row, evaluation, checkpoint when due. */
int train_record(run *r, uint64_t done, float loss, float lr);
/* Data parallel (world > 1): the gradients grads[n] of a batch whose loss
 * and gradients are means over pair weight wsum become, on every rank, those
 * of the whole global batch (sums of grads*wsum and wsum over the ranks, one
 * MPI_Allreduce each; then divided), and *loss its loss; so W ranks at batch
 * B step as one process at batch W*B. Does nothing on one process. */
int train_grads_average(run *r, float *grads, size_t n, double wsum, float *loss, loop_stats *ls);
/* 1 when step `done` is followed by an evaluation or a checkpoint, which
 * need the parameters of exactly that step. */
int train_is_sync_step(const run *r, uint64_t done);
/* The summary lines (unless --quiet) and the --json object; wall_ns is the
 * loop's wall time, evaluations and checkpoints included. */
void train_report(run *r, twincache_loader *l, const loop_stats *ls, uint64_t wall_ns);
/* --predict FILE (rank 0, after training): one pass over r->val writing the
 * suite's predictions file (suite/SUITE.md) for the cell --val-cache names. */
int train_predict(run *r);
/* --predict FILE, before anything is trained: refused (one line, 1) when
 * FILE.tmp cannot be created or --val-cache names no cell. */
int train_predict_check(const opts *o);
/* Data parallel: one value every rank must share with rank 0 (train_agree.c).
 * bits: the value (a double's bit pattern for AGREE_F64). */
enum { AGREE_U64 = 0, AGREE_F64 = 1, AGREE_HEX = 2 };
typedef struct train_agree_item {
  const char *flag; /* what the message names: "--batch", "--cache (N, nodes per graph)" */
  int kind;
  uint64_t bits;
} train_agree_item;
/* The values of r the gradient sums assume equal on every rank, in a fixed
 * order, into it[cap]; returns how many there are (> cap: it holds the
 * first cap). Pure: no MPI, no I/O. */
size_t train_agree_items(const run *r, train_agree_item *it, size_t cap);
/* The first i with mine[i].bits != root[i]: its index, and in msg[cap] one
 * line naming the flag and both values ("rank 1 disagrees with rank 0 on
 * --batch: 24 here, 32 on rank 0; ..."); -1 (msg "") when all agree. Pure. */
long train_agree_compare(const train_agree_item *mine, const uint64_t *root, size_t n, int rank,
                         char *msg, size_t cap);
/* "seed": N of a cache's config JSON; UINT64_MAX when absent or json NULL. */
uint64_t train_agree_config_seed(const char *json);
/* World > 1: rank 0's items to every rank, compared; on any disagreement
 * the lowest disagreeing rank prints the one line, every rank sets
 * r->agree_failed and returns 1 (the job ends by MPI_Finalize, exit 1).
 * Collective: every rank calls it at the same point. 0 on one process. */
int train_agree(run *r);
/* --bench-h2d: a plain pinned cudaMemcpy of one batch slab. */
int train_bench_h2d(const opts *o);

#endif /* TC_TRAIN_H */
