/* train_loop.c — what every backend's training loop shares: fetching the
 * next batch (counted, written to --batch-log), and after every step
 * train_record(): the CSV row, the evaluation and the checkpoint when due.
 * The loops themselves are the backends' (train_backend_*.c). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "tc_checkpoint.h"
#include "tc_common.h"
#include "tc_train.h"

static int save_checkpoint(run *r, uint64_t steps_done) {
  if (r->be->sync_model(r) != 0) return 1;
  /* the loader's own state may run ahead (CUDA stages the next batch):
   * the checkpoint's position is one batch per step done */
  tc_checkpoint_info info = {.step = steps_done, .seed = r->o.seed, .stream = r->stream,
                             .fresh_rows = r->o.fresh_rows, .resample_every = r->o.resample_every};
  info.stream.next_seq = r->seq0 + (steps_done - r->step0);
  if (tc_checkpoint_save(r->o.checkpoint, r->model, &info) != 0) {
    fprintf(stderr, PROG ": %s\n", twincache_last_error());
    return 1;
  }
  return 0;
}

static int is_eval_step(const run *r, uint64_t done) {
  return done == r->o.steps || done % r->o.eval_every == 0;
}
static int is_ckpt_step(const run *r, uint64_t done) {
  if (!r->o.checkpoint) return 0;
  if (done == r->o.steps || done == r->end_step) return 1;
  if (r->o.checkpoint_every) return done % r->o.checkpoint_every == 0;
  return done % r->o.eval_every == 0;
}

static void fmt_metric(char *buf, size_t cap, double x) {
  if (isnan(x)) snprintf(buf, cap, "nan");
  else snprintf(buf, cap, "%.4f", x);
}

int train_is_sync_step(const run *r, uint64_t done) {
  return is_eval_step(r, done) || is_ckpt_step(r, done);
}

int train_record(run *r, uint64_t done, float loss, float lr) {
  val_result v = {0};
  uint64_t t0 = tc_now_ns();
  if (is_eval_step(r, done) && train_has_validation(r)) {
    if (train_evaluate(r, &v) != 0) return 1;
    if (v.done) r->last = v;
  }
  r->eval_ns += tc_now_ns() - t0;
  if (r->log) {
    fprintf(r->log, "%" PRIu64 ",%.9g,%.9g", done, loss, lr);
    if (v.done)
      fprintf(r->log, ",%.9g,%.6f,%.6f,%.4f,%.6f\n", v.loss, v.auroc, v.auprc, v.shd,
              v.base_auprc);
    else
      fprintf(r->log, ",,,,,\n");
  }
  if (v.done && !r->o.quiet) {
    char a[16], b[16], c[16], d[16];
    fmt_metric(a, sizeof a, v.auroc), fmt_metric(b, sizeof b, v.auprc);
    fmt_metric(c, sizeof c, v.base_auprc), fmt_metric(d, sizeof d, v.base_auroc);
    fprintf(r->text,
            "step %6" PRIu64 "/%" PRIu64 "  train_loss %.4f  lr %.2e | val loss %.4f  AUROC %s"
            "  AUPRC %s  SHD %.2f | |T| baseline AUROC %s  AUPRC %s  SHD %.2f\n",
            done, r->o.steps, loss, lr, v.loss, a, b, v.shd, d, c, v.base_shd);
    fflush(r->text);
  }
  t0 = tc_now_ns();
  if (is_ckpt_step(r, done) && save_checkpoint(r, done) != 0) return 1;
  r->ckpt_ns += tc_now_ns() - t0;
  return 0;
}

int train_next_batch(run *r, twincache_loader *l, twincache_batch **b, loop_stats *ls) {
  uint64_t t0 = tc_now_ns();
  int st = twincache_loader_next(l, b);
  ls->wait_ns += tc_now_ns() - t0;
  if (st != 0) {
    fprintf(stderr, PROG ": training batch: %s\n",
            st == TWINCACHE_END ? "the training range is empty" : twincache_last_error());
    return 1;
  }
  ls->graphs += (*b)->n_graphs;
  if (r->batch_log) { /* batch seq is trained at step seq - seq0 + step0 + 1 */
    const twincache_batch *x = *b;
    fprintf(r->batch_log, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",", x->seq - r->seq0 + r->step0 + 1,
            x->epoch, x->seq);
    for (uint32_t g = 0; g < x->n_graphs; g++)
      if (r->o.mix_n) /* a mixture's id: source:index (source 0 = --mix's first cache) */
        fprintf(r->batch_log, "%s%" PRIu32 ":%" PRIu64, g ? " " : "", TWINCACHE_MIX_SOURCE(x->graph_id[g]),
                (uint64_t)TWINCACHE_MIX_INDEX(x->graph_id[g]));
      else
        fprintf(r->batch_log, g ? " %" PRIu64 : "%" PRIu64, x->graph_id[g]);
    fputc('\n', r->batch_log);
  }
  return 0;
}


int train_grads_average(run *r, float *grads, size_t n, double wsum, float *loss, loop_stats *ls) {
  if (r->dist.world == 1) return 0;
  uint64_t t0 = tc_now_ns();
  twincache_grad_weight_cpu(grads, n, wsum);
  double tot[2] = {wsum, (double)*loss * wsum};
  if (tc_dist_sum_f32(&r->dist, grads, n) != 0 || tc_dist_sum_f64(&r->dist, tot, 2) != 0) {
    fprintf(stderr, PROG ": rank %d: gradient all-reduce: %s\n", r->dist.rank, twincache_last_error());
    return 1;
  }
  twincache_grad_unweight_cpu(grads, n, tot, loss);
  ls->reduce_ns += tc_now_ns() - t0;
  return 0;
}
