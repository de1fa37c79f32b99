/* train_loop.c — the training loops: the CPU one, and the CUDA one that
 * overlaps each batch's host-to-device copy with the previous step; after
 * every step, record() writes the CSV row and runs the evaluation and the
 * checkpoint when they are due. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "tc_checkpoint.h"
#include "tc_common.h"
#include "tc_train.h"

static int save_checkpoint(run *r, uint64_t steps_done) {
  if (r->cuda && tc_cuda_download(r->dev, r->model) != 0) return train_device_failed();
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

/* After step `done` (1-based count): CSV row, evaluation, checkpoint. */
static int record(run *r, uint64_t done, float loss, float lr) {
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

static int next_batch(run *r, twincache_loader *l, twincache_batch **b, loop_stats *ls) {
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
      fprintf(r->batch_log, g ? " %" PRIu64 : "%" PRIu64, x->graph_id[g]);
    fputc('\n', r->batch_log);
  }
  return 0;
}

static int train_cpu(run *r, twincache_loader *l, loop_stats *ls) {
  for (uint64_t s = r->step0; s < r->end_step; s++) {
    twincache_batch *b = NULL;
    if (next_batch(r, l, &b, ls)) return 1;
    tc_batch_view v;
    tc_batch_view_init(&v, &b->layout, b->slab);
    float loss = tc_cpu_forward_backward(r->cpu, r->model, &v, r->optim.pos_weight, 1);
    float lr = tc_lr_at(&r->optim, s);
    tc_cpu_adamw(r->model, &r->optim, lr, (int)(s + 1));
    twincache_loader_release(l, b);
    ls->steps++;
    if (record(r, s + 1, loss, lr)) return 1;
  }
  return 0;
}

/* Double-buffered: step s runs on buffer s&1. Before step s is queued, batch
 * s+1 is fetched from the loader and its copy into the other buffer queued
 * (the copy stream first waits for step s-1, the last reader of that
 * buffer). So the host's loader wait overlaps the GPU's work, and the copy
 * of batch s, queued an iteration earlier, has had that whole wait to finish
 * before step s needs it: the compute stream only waits on a copy when
 * copies are slower than the data arrives. The loss of step s is read after
 * step s+1 is queued, except before evaluations and checkpoints, which need
 * the parameters of exactly step s. */
static int train_cuda(run *r, twincache_loader *l, loop_stats *ls) {
  twincache_batch *held[2] = {NULL, NULL};
  int rc = 1, pending = 0;
  float pending_lr = 0;
  uint64_t s = r->step0;
  if (s >= r->end_step) return 0;
  if (r->o.sync_copies) { /* the comparison: copy, then compute, serialised */
    for (; s < r->end_step; s++) {
      twincache_batch *b = NULL;
      float loss, lr = tc_lr_at(&r->optim, s);
      if (next_batch(r, l, &b, ls)) return 1;
      held[0] = b;
      if (tc_cuda_copy(r->dev, 0, b) || tc_cuda_step(r->dev, 0, &r->optim, lr, (int)(s + 1)) ||
          tc_cuda_step_result(r->dev, 0, &loss) || tc_cuda_copy_wait(r->dev, 0)) {
        train_device_failed();
        goto cleanup;
      }
      twincache_loader_release(l, b);
      held[0] = NULL;
      ls->steps++;
      if (record(r, s + 1, loss, lr)) return 1;
    }
    return 0;
  }
  if (next_batch(r, l, &held[s & 1], ls)) goto cleanup;
  if (tc_cuda_copy(r->dev, (int)(s & 1), held[s & 1])) goto device_failed;
  for (; s < r->end_step; s++) {
    int cur = (int)(s & 1), nxt = 1 - cur;
    float lr = tc_lr_at(&r->optim, s), loss;
    if (s + 1 < r->end_step) { /* stage batch s+1 while step s-1 runs */
      if (next_batch(r, l, &held[nxt], ls)) goto cleanup;
      if (tc_cuda_copy(r->dev, nxt, held[nxt])) goto device_failed;
    }
    if (tc_cuda_step(r->dev, cur, &r->optim, lr, (int)(s + 1))) goto device_failed;
    if (pending) { /* step s-1, read while step s is queued behind it */
      if (tc_cuda_step_result(r->dev, nxt, &loss)) goto device_failed;
      pending = 0;
      if (record(r, s, loss, pending_lr)) goto cleanup;
    }
    /* the slot goes back only once its copy has completed */
    if (tc_cuda_copy_wait(r->dev, cur)) goto device_failed;
    twincache_loader_release(l, held[cur]);
    held[cur] = NULL;
    ls->steps++;
    if (is_eval_step(r, s + 1) || is_ckpt_step(r, s + 1) || s + 1 == r->end_step) {
      if (tc_cuda_step_result(r->dev, cur, &loss)) goto device_failed;
      if (record(r, s + 1, loss, lr)) goto cleanup;
    } else {
      pending = 1, pending_lr = lr;
    }
  }
  rc = 0; /* the last step is always a sync point, so nothing is pending */
  goto cleanup;
device_failed:
  train_device_failed();
cleanup:
  for (int b = 0; b < 2; b++)
    if (held[b]) {
      tc_cuda_copy_wait(r->dev, b); /* never hand back a slot mid-copy */
      twincache_loader_release(l, held[b]);
    }
  return rc;
}

int train_device_failed(void) {
  fprintf(stderr, PROG ": %s\n", twincache_last_error());
  return 1;
}

int train_loop_run(run *r, twincache_loader *l, loop_stats *ls) {
  return r->cuda ? train_cuda(r, l, ls) : train_cpu(r, l, ls);
}
