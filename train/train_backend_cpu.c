/* train_backend_cpu.c — the CPU backend: the reference kernels of model.c
 * (tc_cpu_forward_backward, tc_cpu_adamw) in plain C, the same workspace
 * serving training and evaluation; the loader's slots are plain memory and
 * its batches dense. */
#include <stdio.h>

#include "tc_train.h"

static int cpu_create(run *r) {
  const twincache_batch_layout *l = &r->layout;
  r->cpu = tc_cpu_create((int)l->graphs, (int)l->nodes);
  if (!r->cpu) {
    fprintf(stderr, PROG ": out of memory\n");
    return 1;
  }
  tc_cpu_set_threads(r->cpu, (int)r->o.cpu_threads);
  return 0;
}

static void cpu_destroy(run *r) {
  tc_cpu_free(r->cpu);
  tc_cpu_free(r->cpu_eval);
  r->cpu = r->cpu_eval = NULL;
}

static int cpu_loop(run *r, twincache_loader *l, loop_stats *ls) {
  for (uint64_t s = r->step0; s < r->end_step; s++) {
    twincache_batch *b = NULL;
    if (train_next_batch(r, l, &b, ls)) return 1;
    tc_batch_view v;
    tc_batch_view_init(&v, &b->layout, b->slab);
    float loss = tc_cpu_forward_backward(r->cpu, r->model, &v, r->optim.pos_weight, 1);
    if (train_grads_average(r, r->model->grads, TC_MODEL_PARAMS, r->cpu->wsum, &loss, ls)) {
      twincache_loader_release(l, b);
      return 1;
    }
    float lr = tc_lr_at(&r->optim, s);
    tc_cpu_adamw(r->model, &r->optim, lr, (int)(s + 1));
    twincache_loader_release(l, b);
    ls->steps++;
    if (train_record(r, s + 1, loss, lr)) return 1;
  }
  return 0;
}

/* The workspace for batches of G graphs of N nodes: the training one when
 * it fits, else one made for the validation loader's shape (a suite cell of
 * another N, or another batch size in --predict-only), kept for the run. */
static tc_cpu *cpu_workspace(run *r, int G, int N) {
  if (r->cpu->G == G && r->cpu->N == N) return r->cpu;
  if (r->cpu_eval && r->cpu_eval->G == G && r->cpu_eval->N == N) return r->cpu_eval;
  tc_cpu_free(r->cpu_eval);
  r->cpu_eval = tc_cpu_create(G, N);
  if (r->cpu_eval) tc_cpu_set_threads(r->cpu_eval, (int)r->o.cpu_threads);
  return r->cpu_eval;
}

static int cpu_eval_batch(run *r, const twincache_batch *b, float *loss, const float **logit,
                          const float **T, const float **pair_w) {
  tc_batch_view v;
  tc_batch_view_init(&v, &b->layout, b->slab);
  tc_cpu *c = cpu_workspace(r, (int)b->layout.graphs, (int)b->layout.nodes);
  if (!c) {
    fprintf(stderr, PROG ": out of memory (the workspace for %u graphs of %u nodes)\n",
            b->layout.graphs, b->layout.nodes);
    return 1;
  }
  *loss = tc_cpu_forward_backward(c, r->model, &v, r->optim.pos_weight, 0);
  *logit = c->logit, *T = c->T, *pair_w = c->pair_w;
  return 0;
}

static int cpu_sync_model(run *r) {
  (void)r; /* r->model is the one the kernels update */
  return 0;
}

static int cpu_timing(const run *r, tc_cuda_timing *t) {
  (void)r;
  *t = (tc_cuda_timing){0};
  return 0;
}

const train_backend train_backend_cpu = {
    .name = "cpu", .layout = TWINCACHE_LAYOUT_DENSE, .any_shape = 1, .host_alloc = NULL, .host_free = NULL,
    .create = cpu_create, .destroy = cpu_destroy, .loop = cpu_loop, .eval_batch = cpu_eval_batch,
    .sync_model = cpu_sync_model, .timing = cpu_timing,
};
