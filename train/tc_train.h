/* tc_train.h — the parts of twincache-train (program-internal):
 *   train_flags.c   the options: table, parsing, --help, what may change on resume
 *   train_eval.c    one pass over the held-out range: loss, AUROC, AUPRC, SHD
 *   train_loop.c    the CPU and the double-buffered CUDA training loops, and
 *                   what happens after each step (CSV row, evaluation, checkpoint)
 *   train_report.c  the summary (text and JSON) and --bench-h2d
 *   train.c         main: the run as named steps
 * Functions print their one error line themselves and return 0 or 1 (the
 * program's exit status for a runtime error). */
#ifndef TC_TRAIN_H
#define TC_TRAIN_H

#include <stdint.h>
#include <stdio.h>

#include "tc_device.h"
#include "tc_model.h"
#include "twincache_loader.h"

#define PROG "twincache-train"

enum { DEV_AUTO = 0, DEV_CPU = 1, DEV_CUDA = 2 }; /* order of --device's choices */

typedef struct opts {
  const char *cache, *val_cache, *checkpoint, *resume, *log, *batch_log;
  double val_split;
  uint32_t batch, threads, cpu_threads;
  uint32_t fresh_rows, resample_every; /* 0: stored worlds; else fresh worlds of S rows, R epochs each */
  uint64_t steps, warmup, eval_every, checkpoint_every, stop_after, seed;
  double lr, weight_decay, pos_weight;
  int device, json, quiet, sync_copies, bench_h2d;
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

/* Everything one run holds. */
typedef struct run {
  opts o;
  int cuda; /* backend: 1 CUDA, 0 CPU */
  tc_model *model;
  tc_cpu *cpu;
  tc_cuda *dev;
  tc_optim optim;
  twincache_batch_layout layout; /* the training loader's */
  uint64_t train_end, count, seq0, step0, end_step; /* end_step: where this process stops */
  double sort_var, sort_r2; /* mean sortability of the first training graphs (NaN: none) */
  uint32_t sort_graphs;     /* graphs it was measured on */
  uint64_t val_count; /* --val-cache: its graphs, all validated on; else 0 */
  int val_fresh;      /* validate on fresh worlds (epoch 0's draw): the validation cache's
                       * stored S is not the training batches' (or it stores none) */
  uint64_t loader_seed;
  /* the train loader's state: on --resume the checkpoint's until the loader
   * opens, then the loader's own at open (next_seq = seq0); a checkpoint
   * stores it with next_seq advanced by the steps done since */
  twincache_loader_state stream;
  FILE *log, *batch_log, *text; /* text: where human-readable lines go */
  float *ev_logit, *ev_T, *ev_w; /* CUDA eval host copies, G*N*N each */
  val_result last;
  uint64_t eval_ns, ckpt_ns;
} run;

/* Counters of the training loop. */
typedef struct loop_stats {
  uint64_t wait_ns, steps, graphs;
} loop_stats;

/* 1 when the run evaluates: a --val-cache, or a held-out tail (--val-split). */
int train_has_validation(const run *r);
/* One pass over the validation graphs: all of --val-cache, else
 * [train_end, count) of --cache; out->done = 0 when there are none. */
int train_evaluate(run *r, val_result *out);
/* Steps [step0, end_step) on the backend r->cuda picks. */
int train_loop_run(run *r, twincache_loader *l, loop_stats *ls);
/* The summary lines (unless --quiet) and the --json object; wall_ns is the
 * loop's wall time, evaluations and checkpoints included. */
void train_report(run *r, twincache_loader *l, const loop_stats *ls, uint64_t wall_ns);
/* --bench-h2d: a plain pinned cudaMemcpy of one batch slab. */
int train_bench_h2d(const opts *o);
/* The one stderr line of a failed tc_device.h call (its message names the
 * CUDA call and error); returns 1. */
int train_device_failed(void);

#endif /* TC_TRAIN_H */
