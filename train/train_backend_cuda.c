/* train_backend_cuda.c — the CUDA backend over tc_device.h (plain C: the
 * device code is tc_device_cuda.cu, linked or loaded from its plugin by
 * tc_device_dlopen.c, so this file builds either way). Slots are pinned (cudaHostAlloc), training
 * batches compact (expanded on the GPU), and the loop overlaps each batch's
 * host-to-device copy with the previous step. */
#include <stdio.h>
#include <stdlib.h>

#include "tc_checked.h"
#include "tc_train.h"

/* The one stderr line of a failed tc_device.h or tc_nccl.h call (its
 * message names the CUDA or NCCL call and error), with the rank in a job of
 * several; returns 1. */
static int device_failed(const run *r) {
  if (r->dist.world > 1) fprintf(stderr, PROG ": rank %d: %s\n", r->dist.rank, twincache_last_error());
  else fprintf(stderr, PROG ": %s\n", twincache_last_error());
  return 1;
}

/* tc_cuda_reduce_fn over NCCL: the gradients and the two weights, fused. */
static int nccl_reduce(void *user, float *grads, size_t n, double *tot, void *stream) {
  return tc_nccl_sum(user, grads, n, tot, 2, stream);
}

/* With several ranks (or --nccl on one, to time it) the gradients are
 * summed with NCCL on the device. */
static int nccl_join(run *r) {
  if (r->dist.world == 1 && !r->o.nccl) return 0;
  if (tc_nccl_open(&r->nccl, &r->dist, NULL) != 0) return device_failed(r);
  tc_cuda_set_reduce(r->dev, nccl_reduce, r->nccl);
  return 0;
}

/* The context, and the host copies of its evaluation outputs (G*N*N floats
 * each). */
static int cuda_create(run *r) {
  const twincache_batch_layout *l = &r->layout;
  uint64_t pair_bytes;
  size_t bytes;
  if (tc_mul3_u64_overflow(l->graphs, l->nodes, l->nodes, &pair_bytes) ||
      tc_mul_u64_overflow(pair_bytes, sizeof(float), &pair_bytes) ||
      tc_u64_to_size_overflow(pair_bytes, &bytes)) {
    fprintf(stderr, PROG ": --batch: %u graphs x %u x %u node pairs do not fit in memory\n",
            l->graphs, l->nodes, l->nodes);
    return 1;
  }
  r->ev_logit = malloc(bytes), r->ev_T = malloc(bytes), r->ev_w = malloc(bytes);
  if (!r->ev_logit || !r->ev_T || !r->ev_w) {
    fprintf(stderr, PROG ": out of memory\n");
    return 1;
  }
  if (tc_cuda_create(&r->dev, l, r->model) != 0) return device_failed(r);
  return nccl_join(r);
}

static void cuda_destroy(run *r) {
  tc_cuda_free(r->dev); /* synchronises first: no sum is in flight after */
  tc_nccl_close(r->nccl);
  r->nccl = NULL;
  free(r->ev_logit), free(r->ev_T), free(r->ev_w);
  r->dev = NULL, r->ev_logit = r->ev_T = r->ev_w = NULL;
}

/* --sync-copies, the comparison: copy, then compute, serialised. */
static int cuda_loop_sync(run *r, twincache_loader *l, loop_stats *ls) {
  for (uint64_t s = r->step0; s < r->end_step; s++) {
    twincache_batch *b = NULL;
    float loss, lr = tc_lr_at(&r->optim, s);
    if (train_next_batch(r, l, &b, ls)) return 1;
    if (tc_cuda_copy(r->dev, 0, b) || tc_cuda_step(r->dev, 0, &r->optim, lr, (int)(s + 1)) ||
        tc_cuda_step_result(r->dev, 0, &loss) || tc_cuda_copy_wait(r->dev, 0)) {
      device_failed(r);
      tc_cuda_copy_wait(r->dev, 0); /* never hand back a slot mid-copy */
      twincache_loader_release(l, b);
      return 1;
    }
    twincache_loader_release(l, b);
    ls->steps++;
    if (train_record(r, s + 1, loss, lr)) return 1;
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
static int cuda_loop(run *r, twincache_loader *l, loop_stats *ls) {
  twincache_batch *held[2] = {NULL, NULL};
  int rc = 1, pending = 0;
  float pending_lr = 0;
  uint64_t s = r->step0;
  if (s >= r->end_step) return 0;
  if (r->o.sync_copies) return cuda_loop_sync(r, l, ls);
  if (train_next_batch(r, l, &held[s & 1], ls)) goto cleanup;
  if (tc_cuda_copy(r->dev, (int)(s & 1), held[s & 1])) goto device_failed;
  for (; s < r->end_step; s++) {
    int cur = (int)(s & 1), nxt = 1 - cur;
    float lr = tc_lr_at(&r->optim, s), loss;
    if (s + 1 < r->end_step) { /* stage batch s+1 while step s-1 runs */
      if (train_next_batch(r, l, &held[nxt], ls)) goto cleanup;
      if (tc_cuda_copy(r->dev, nxt, held[nxt])) goto device_failed;
    }
    if (tc_cuda_step(r->dev, cur, &r->optim, lr, (int)(s + 1))) goto device_failed;
    if (pending) { /* step s-1, read while step s is queued behind it */
      if (tc_cuda_step_result(r->dev, nxt, &loss)) goto device_failed;
      pending = 0;
      if (train_record(r, s, loss, pending_lr)) goto cleanup;
    }
    /* the slot goes back only once its copy has completed */
    if (tc_cuda_copy_wait(r->dev, cur)) goto device_failed;
    twincache_loader_release(l, held[cur]);
    held[cur] = NULL;
    ls->steps++;
    if (train_is_sync_step(r, s + 1) || s + 1 == r->end_step) {
      if (tc_cuda_step_result(r->dev, cur, &loss)) goto device_failed;
      if (train_record(r, s + 1, loss, lr)) goto cleanup;
    } else {
      pending = 1, pending_lr = lr;
    }
  }
  rc = 0; /* the last step is always a sync point, so nothing is pending */
  goto cleanup;
device_failed:
  device_failed(r);
cleanup:
  for (int b = 0; b < 2; b++)
    if (held[b]) {
      tc_cuda_copy_wait(r->dev, b); /* never hand back a slot mid-copy */
      twincache_loader_release(l, held[b]);
    }
  return rc;
}

static int cuda_eval_batch(run *r, const twincache_batch *b, float *loss, const float **logit,
                           const float **T, const float **pair_w) {
  if (tc_cuda_eval(r->dev, b->slab, r->optim.pos_weight, loss, r->ev_logit, r->ev_T, r->ev_w) != 0)
    return device_failed(r);
  *logit = r->ev_logit, *T = r->ev_T, *pair_w = r->ev_w;
  return 0;
}

static int cuda_sync_model(run *r) {
  return tc_cuda_download(r->dev, r->model) != 0 ? device_failed(r) : 0;
}

static int cuda_timing(const run *r, tc_cuda_timing *t) {
  tc_cuda_get_timing(r->dev, t);
  return 1;
}

const train_backend train_backend_cuda = {
    .name = "cuda", .layout = TWINCACHE_LAYOUT_COMPACT, .host_alloc = tc_cuda_host_alloc,
    .host_free = tc_cuda_host_free, .create = cuda_create, .destroy = cuda_destroy,
    .loop = cuda_loop, .eval_batch = cuda_eval_batch, .sync_model = cuda_sync_model,
    .timing = cuda_timing,
};
