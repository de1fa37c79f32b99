/* twincache-train — train the edge model of MODEL.md on a twincache cache,
 * on the GPU (double-buffered async copies) when one is usable, else on the
 * CPU with the reference kernels. Evaluates on a held-out tail of the cache
 * against the |T| baseline. Run with --help for the flags. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tc_checkpoint.h"
#include "tc_common.h"
#include "tc_device.h"
#include "tc_metrics.h"
#include "tc_model.h"
#include "twincache_loader.h"

#define PROG "twincache-train"

enum { DEV_AUTO, DEV_CPU, DEV_CUDA };

typedef struct opts {
  const char *cache, *checkpoint, *resume, *log;
  double val_split;
  uint32_t batch, threads, cpu_threads;
  uint64_t steps, warmup, eval_every, checkpoint_every, stop_after, seed;
  double lr, weight_decay, pos_weight;
  int device, json, quiet, sync_copies, bench_h2d;
} opts;

static void usage(FILE *f) {
  fprintf(f,
          "usage: " PROG " --cache DIR [options]\n"
          "Trains the twin-world edge model (train/MODEL.md) on a twincache cache.\n"
          "  --cache DIR            cache directory (required)\n"
          "  --val-split F          fraction of the index range held out at the end for\n"
          "                         validation, 0 <= F < 1 (default 0.1; 0 = no evaluation)\n"
          "  --batch G              graphs per batch, 1..4096 (default 32)\n"
          "  --steps N              optimiser steps, >= 1 (default 1000)\n"
          "  --lr X                 peak learning rate, > 0 (default 0.003)\n"
          "  --weight-decay X       AdamW decoupled weight decay, >= 0 (default 0.0001)\n"
          "  --warmup N             linear warm-up steps before the cosine decay (default 50)\n"
          "  --pos-weight X         weight of positive (edge) pairs in the loss, > 0 (default 1)\n"
          "  --device D             auto | cpu | cuda (default auto: CUDA when usable)\n"
          "  --threads T            loader decode threads, 1..64 (default 2)\n"
          "  --cpu-threads T        CPU backend compute threads, 1..64; results do not depend\n"
          "                         on it (default: online cores)\n"
          "  --seed S               model init and shuffle seed (default 1)\n"
          "  --eval-every E         evaluate every E steps (default 0 = steps/5) and at the end\n"
          "  --checkpoint FILE      write a checkpoint at every evaluation and at the end\n"
          "  --checkpoint-every K   also/instead every K steps (default 0 = with evaluations)\n"
          "  --stop-after K         stop after K steps of this run (checkpoint written), as\n"
          "                         if interrupted; --resume continues (default 0 = off)\n"
          "  --resume FILE          continue from a checkpoint (same flags reproduce the\n"
          "                         uninterrupted run exactly on the CPU)\n"
          "  --log FILE             metrics CSV: one row per step (eval columns on eval steps)\n"
          "  --sync-copies          CUDA: copy then compute, no overlap (for comparison)\n"
          "  --bench-h2d            CUDA: time a plain pinned cudaMemcpy of one batch slab, exit\n"
          "  --json                 print one JSON summary object on stdout (text to stderr)\n"
          "  --quiet                no learning-curve lines\n"
          "  --help                 this text\n");
}

/* ---- flag parsing: a bad flag or value prints one line and exits 2 ------- */
static void bad(const char *flag, const char *what, const char *got) {
  if (got) fprintf(stderr, PROG ": %s: %s, got '%s' (see --help)\n", flag, what, got);
  else fprintf(stderr, PROG ": %s: %s (see --help)\n", flag, what);
  exit(2);
}

static uint64_t parse_u64(const char *flag, const char *v, uint64_t lo, uint64_t hi) {
  char *end = NULL;
  errno = 0;
  if (!v || !*v || *v == '-') bad(flag, "expected a non-negative integer", v);
  unsigned long long x = strtoull(v, &end, 10);
  if (errno || *end || x < lo || x > hi) {
    char what[96];
    snprintf(what, sizeof what, "expected an integer in [%" PRIu64 ", %" PRIu64 "]", lo, hi);
    bad(flag, what, v);
  }
  return (uint64_t)x;
}

static double parse_f64(const char *flag, const char *v, double lo, double hi, int lo_open,
                        int hi_open) {
  char *end = NULL;
  errno = 0;
  double x = v && *v ? strtod(v, &end) : NAN;
  if (!v || !*v || errno || *end || !isfinite(x) || x < lo || x > hi || (lo_open && x == lo) ||
      (hi_open && x == hi)) {
    char what[96];
    snprintf(what, sizeof what, "expected a number in %c%g, %g%c", lo_open ? '(' : '[', lo, hi,
             hi_open ? ')' : ']');
    bad(flag, what, v);
  }
  return x;
}

static void parse_args(int argc, char **argv, opts *o) {
  memset(o, 0, sizeof *o);
  o->val_split = 0.1, o->batch = 32, o->threads = 2, o->steps = 1000, o->warmup = 50;
  o->seed = 1, o->lr = 3e-3, o->weight_decay = 1e-4, o->pos_weight = 1.0, o->device = DEV_AUTO;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      exit(0);
    }
    /* boolean flags */
    if (!strcmp(a, "--json")) { o->json = 1; continue; }
    if (!strcmp(a, "--quiet")) { o->quiet = 1; continue; }
    if (!strcmp(a, "--sync-copies")) { o->sync_copies = 1; continue; }
    if (!strcmp(a, "--bench-h2d")) { o->bench_h2d = 1; continue; }
    /* flags with a value: --flag V or --flag=V */
    char name[64];
    const char *v = NULL, *eq = strchr(a, '=');
    if (strncmp(a, "--", 2) != 0) bad(a, "unexpected argument", NULL);
    if (eq) {
      size_t n = (size_t)(eq - a);
      if (n >= sizeof name) bad(a, "unknown flag", a);
      memcpy(name, a, n), name[n] = '\0', v = eq + 1;
    } else {
      snprintf(name, sizeof name, "%s", a);
      if (i + 1 >= argc) {
        /* report unknown flags as unknown, known ones as missing a value */
        v = NULL;
      } else {
        v = argv[++i];
      }
    }
    const char *f = name;
#define VALUE_REQUIRED() \
  if (!v) bad(f, "missing value", NULL)
    if (!strcmp(f, "--cache")) { VALUE_REQUIRED(); if (!*v) bad(f, "expected a directory", v); o->cache = v; }
    else if (!strcmp(f, "--val-split")) { VALUE_REQUIRED(); o->val_split = parse_f64(f, v, 0, 1, 0, 1); }
    else if (!strcmp(f, "--batch")) { VALUE_REQUIRED(); o->batch = (uint32_t)parse_u64(f, v, 1, 4096); }
    else if (!strcmp(f, "--steps")) { VALUE_REQUIRED(); o->steps = parse_u64(f, v, 1, UINT32_MAX); }
    else if (!strcmp(f, "--lr")) { VALUE_REQUIRED(); o->lr = parse_f64(f, v, 0, 10, 1, 0); }
    else if (!strcmp(f, "--weight-decay")) { VALUE_REQUIRED(); o->weight_decay = parse_f64(f, v, 0, 10, 0, 0); }
    else if (!strcmp(f, "--warmup")) { VALUE_REQUIRED(); o->warmup = parse_u64(f, v, 0, UINT32_MAX); }
    else if (!strcmp(f, "--pos-weight")) { VALUE_REQUIRED(); o->pos_weight = parse_f64(f, v, 0, 1000, 1, 0); }
    else if (!strcmp(f, "--threads")) { VALUE_REQUIRED(); o->threads = (uint32_t)parse_u64(f, v, 1, 64); }
    else if (!strcmp(f, "--cpu-threads")) { VALUE_REQUIRED(); o->cpu_threads = (uint32_t)parse_u64(f, v, 1, 64); }
    else if (!strcmp(f, "--seed")) { VALUE_REQUIRED(); o->seed = parse_u64(f, v, 0, UINT64_MAX); }
    else if (!strcmp(f, "--eval-every")) { VALUE_REQUIRED(); o->eval_every = parse_u64(f, v, 0, UINT32_MAX); }
    else if (!strcmp(f, "--checkpoint-every")) { VALUE_REQUIRED(); o->checkpoint_every = parse_u64(f, v, 0, UINT32_MAX); }
    else if (!strcmp(f, "--stop-after")) { VALUE_REQUIRED(); o->stop_after = parse_u64(f, v, 0, UINT32_MAX); }
    else if (!strcmp(f, "--checkpoint")) { VALUE_REQUIRED(); if (!*v) bad(f, "expected a file name", v); o->checkpoint = v; }
    else if (!strcmp(f, "--resume")) { VALUE_REQUIRED(); if (!*v) bad(f, "expected a file name", v); o->resume = v; }
    else if (!strcmp(f, "--log")) { VALUE_REQUIRED(); if (!*v) bad(f, "expected a file name", v); o->log = v; }
    else if (!strcmp(f, "--device")) {
      VALUE_REQUIRED();
      if (!strcmp(v, "auto")) o->device = DEV_AUTO;
      else if (!strcmp(v, "cpu")) o->device = DEV_CPU;
      else if (!strcmp(v, "cuda")) o->device = DEV_CUDA;
      else bad(f, "expected auto, cpu or cuda", v);
    } else bad(f, "unknown flag", f);
#undef VALUE_REQUIRED
  }
  if (!o->cache) bad("--cache", "required flag missing", NULL);
  if (o->cpu_threads == 0) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    o->cpu_threads = n < 1 ? 1 : (n > 64 ? 64 : (uint32_t)n);
  }
  if (o->eval_every == 0) o->eval_every = o->steps / 5 ? o->steps / 5 : 1;
}

/* ---- the run ------------------------------------------------------------ */
typedef struct val_result {
  int done;
  double loss, auroc, auprc, shd, base_auroc, base_auprc, base_shd;
  uint64_t graphs, pairs;
} val_result;

typedef struct run {
  opts o;
  int cuda; /* backend: 1 CUDA, 0 CPU */
  tc_model *model;
  tc_cpu *cpu;
  tc_cuda *dev;
  tc_optim optim;
  twincache_batch_layout layout;
  uint64_t train_end, count, seq0, step0, end_step; /* end_step: where this process stops */
  uint64_t loader_seed;
  FILE *log, *text; /* text: where human-readable lines go */
  float *ev_logit, *ev_T, *ev_w; /* CUDA eval host copies (P) */
  val_result last;
  uint64_t eval_ns, ckpt_ns;
} run;

static float sigmoidf_(float z) { return 1.0f / (1.0f + expf(-z)); }

/* One pass over the held-out range. Returns 0 or 1 (message printed). */
static int evaluate(run *r, val_result *out) {
  int rc = 1;
  twincache_loader *vl = NULL;
  tc_scores sc = {0};
  double loss_w = 0, loss_sum = 0, shd = 0, base_shd = 0;
  uint64_t graphs = 0;
  uint8_t *pred = NULL, *bpred = NULL;
  memset(out, 0, sizeof *out);
  if (r->train_end >= r->count) return 0; /* nothing held out */
  twincache_loader_options lo;
  twincache_loader_options_init(&lo);
  lo.batch_size = r->o.batch, lo.epochs = 1, lo.shuffle = 0, lo.seed = r->loader_seed;
  lo.threads = r->o.threads, lo.index_begin = r->train_end, lo.index_end = r->count;
  if (r->cuda) lo.alloc = tc_cuda_host_alloc, lo.free = tc_cuda_host_free;
  int st = twincache_loader_open(r->o.cache, &lo, NULL, &vl);
  if (st != 0) {
    fprintf(stderr, PROG ": cannot open the validation range of %s: %s\n", r->o.cache,
            twincache_strerror(st));
    goto cleanup;
  }
  int N = (int)r->layout.nodes;
  pred = malloc((size_t)N * N), bpred = malloc((size_t)N * N);
  if (!pred || !bpred) goto oom;
  for (;;) {
    twincache_batch *b = NULL;
    st = twincache_loader_next(vl, &b);
    if (st == TWINCACHE_END) break;
    if (st != 0) {
      fprintf(stderr, PROG ": validation batch: %s\n", twincache_strerror(st));
      goto cleanup;
    }
    float loss;
    const float *logit, *T, *w;
    if (r->cuda) {
      if (tc_cuda_eval(r->dev, b->slab, r->optim.pos_weight, &loss, r->ev_logit, r->ev_T,
                       r->ev_w) != 0) {
        twincache_loader_release(vl, b);
        goto cleanup;
      }
      logit = r->ev_logit, T = r->ev_T, w = r->ev_w;
    } else {
      tc_batch_view v;
      tc_batch_view_init(&v, &b->layout, b->slab);
      loss = tc_cpu_forward_backward(r->cpu, r->model, &v, r->optim.pos_weight, 0);
      logit = r->cpu->logit, T = r->cpu->T, w = r->cpu->pair_w;
    }
    double bw = 0;
    for (uint32_t g = 0; g < b->n_graphs; g++) {
      size_t base = (size_t)g * N * N;
      for (int q = 0; q < N * N; q++) {
        size_t p = base + (size_t)q;
        pred[q] = w[p] > 0 && logit[p] > 0.0f;               /* sigmoid > 0.5 */
        bpred[q] = w[p] > 0 && fabsf(T[p]) > 0.5f;          /* |T| > 0.5 */
        if (w[p] > 0) {
          bw += w[p];
          if (tc_scores_push(&sc, sigmoidf_(logit[p]), fabsf(T[p]), b->adj[p]) != 0) {
            twincache_loader_release(vl, b);
            goto oom;
          }
        }
      }
      const uint8_t *mask = b->node_mask + (size_t)g * N;
      shd += tc_shd(pred, b->adj + base, mask, N);
      base_shd += tc_shd(bpred, b->adj + base, mask, N);
      graphs++;
    }
    loss_sum += (double)loss * bw, loss_w += bw;
    twincache_loader_release(vl, b);
  }
  out->done = 1;
  out->graphs = graphs, out->pairs = sc.n;
  out->loss = loss_w > 0 ? loss_sum / loss_w : NAN;
  out->auroc = tc_auroc(sc.model, sc.label, sc.n);
  out->auprc = tc_auprc(sc.model, sc.label, sc.n);
  out->base_auroc = tc_auroc(sc.baseline, sc.label, sc.n);
  out->base_auprc = tc_auprc(sc.baseline, sc.label, sc.n);
  out->shd = graphs ? shd / graphs : NAN;
  out->base_shd = graphs ? base_shd / graphs : NAN;
  rc = 0;
  goto cleanup;
oom:
  fprintf(stderr, PROG ": out of memory during evaluation\n");
cleanup:
  free(pred);
  free(bpred);
  tc_scores_free(&sc);
  twincache_loader_close(vl);
  return rc;
}

static int save_checkpoint(run *r, uint64_t steps_done) {
  char err[512];
  if (r->cuda && tc_cuda_download(r->dev, r->model) != 0) return 1;
  tc_checkpoint_info info = {.batch = r->o.batch, .step = steps_done, .seed = r->loader_seed,
                             .next_seq = r->seq0 + (steps_done - r->step0),
                             .index_end = r->train_end};
  if (tc_checkpoint_save(r->o.checkpoint, r->model, &info, err, sizeof err) != 0) {
    fprintf(stderr, PROG ": %s\n", err);
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
  if (is_eval_step(r, done) && r->o.val_split > 0) {
    if (evaluate(r, &v) != 0) return 1;
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

/* Counters of the training loop. */
typedef struct loop_stats {
  uint64_t wait_ns, steps, graphs;
} loop_stats;

static int next_batch(run *r, twincache_loader *l, twincache_batch **b, loop_stats *ls) {
  uint64_t t0 = tc_now_ns();
  int st = twincache_loader_next(l, b);
  ls->wait_ns += tc_now_ns() - t0;
  if (st != 0) {
    fprintf(stderr, PROG ": training batch: %s\n",
            st == TWINCACHE_END ? "the training range is empty" : twincache_strerror(st));
    return 1;
  }
  ls->graphs += (*b)->n_graphs;
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
          tc_cuda_step_result(r->dev, 0, &loss) || tc_cuda_copy_wait(r->dev, 0))
        goto cleanup;
      twincache_loader_release(l, b);
      held[0] = NULL;
      ls->steps++;
      if (record(r, s + 1, loss, lr)) return 1;
    }
    return 0;
  }
  if (next_batch(r, l, &held[s & 1], ls) || tc_cuda_copy(r->dev, (int)(s & 1), held[s & 1]))
    goto cleanup;
  for (; s < r->end_step; s++) {
    int cur = (int)(s & 1), nxt = 1 - cur;
    float lr = tc_lr_at(&r->optim, s), loss;
    if (s + 1 < r->end_step) { /* stage batch s+1 while step s-1 runs */
      if (next_batch(r, l, &held[nxt], ls) || tc_cuda_copy(r->dev, nxt, held[nxt]))
        goto cleanup;
    }
    if (tc_cuda_step(r->dev, cur, &r->optim, lr, (int)(s + 1))) goto cleanup;
    if (pending) { /* step s-1, read while step s is queued behind it */
      if (tc_cuda_step_result(r->dev, nxt, &loss)) goto cleanup;
      pending = 0;
      if (record(r, s, loss, pending_lr)) goto cleanup;
    }
    /* the slot goes back only once its copy has completed */
    if (tc_cuda_copy_wait(r->dev, cur)) goto cleanup;
    twincache_loader_release(l, held[cur]);
    held[cur] = NULL;
    ls->steps++;
    if (is_eval_step(r, s + 1) || is_ckpt_step(r, s + 1) || s + 1 == r->end_step) {
      if (tc_cuda_step_result(r->dev, cur, &loss) || record(r, s + 1, loss, lr)) goto cleanup;
    } else {
      pending = 1, pending_lr = lr;
    }
  }
  rc = 0; /* the last step is always a sync point, so nothing is pending */
cleanup:
  for (int b = 0; b < 2; b++)
    if (held[b]) {
      tc_cuda_copy_wait(r->dev, b); /* never hand back a slot mid-copy */
      twincache_loader_release(l, held[b]);
    }
  return rc;
}

static int bench_h2d(const opts *o) {
  twincache_cache *c = NULL;
  char why[256];
  int st = twincache_cache_open(o->cache, &c);
  if (st != 0) {
    fprintf(stderr, PROG ": cannot open cache %s: %s\n", o->cache, twincache_strerror(st));
    return 1;
  }
  const twincache_dims *d = twincache_cache_dims(c);
  twincache_batch_layout l;
  twincache_batch_layout_init(&l, o->batch, d->max_nodes, d->max_inter, d->samples);
  twincache_cache_close(c);
  if (!tc_cuda_usable(why, sizeof why)) {
    fprintf(stderr, PROG ": --bench-h2d needs a GPU: %s\n", why);
    return 1;
  }
  double gbs = 0;
  if (tc_cuda_bench_h2d(l.bytes, 50, &gbs) != 0) return 1;
  if (o->json)
    printf("{\"slab_bytes\": %zu, \"pinned_memcpy_h2d_gb_per_s\": %.3f}\n", l.bytes, gbs);
  else
    printf("plain pinned cudaMemcpy H2D of one batch slab (%zu bytes, batch %u): %.2f GB/s\n",
           l.bytes, o->batch, gbs);
  return 0;
}

int main(int argc, char **argv) {
  run R;
  memset(&R, 0, sizeof R);
  run *r = &R;
  int rc = 1;
  twincache_loader *tl = NULL;
  twincache_cache *cache = NULL;
  parse_args(argc, argv, &r->o);
  const opts *o = &r->o;
  r->text = o->json ? stderr : stdout;
  if (o->bench_h2d) return bench_h2d(o);

  /* device */
  char why[256] = "", name[256] = "";
  int usable = o->device == DEV_CPU ? 0 : tc_cuda_usable(why, sizeof why);
  if (o->device == DEV_CUDA && !usable) {
    fprintf(stderr, PROG ": --device cuda: %s\n", why);
    return 1;
  }
  r->cuda = usable;
  if (r->cuda) tc_cuda_device_name(name, sizeof name);
  if (!o->quiet) {
    if (r->cuda) fprintf(r->text, "device: cuda (%s)\n", name);
    else if (o->device == DEV_CPU) fprintf(r->text, "device: cpu (--device cpu)\n");
    else fprintf(r->text, "device: cpu (%s)\n", why);
  }
  if (o->sync_copies && !r->cuda && !o->quiet)
    fprintf(r->text, "note: --sync-copies only changes the CUDA data path\n");

  /* the cache: count and split */
  int st = twincache_cache_open(o->cache, &cache);
  if (st != 0) {
    fprintf(stderr, PROG ": cannot open cache %s: %s\n", o->cache, twincache_strerror(st));
    goto cleanup;
  }
  r->count = twincache_cache_count(cache);
  const twincache_dims *dims = twincache_cache_dims(cache);
  twincache_batch_layout_init(&r->layout, o->batch, dims->max_nodes, dims->max_inter,
                              dims->samples);
  twincache_cache_close(cache);
  cache = NULL;
  r->train_end = (uint64_t)floor((1.0 - o->val_split) * (double)r->count);
  if (r->train_end == 0) {
    fprintf(stderr, PROG ": cache %s has %" PRIu64 " graphs: nothing left to train on with "
            "--val-split %g\n", o->cache, r->count, o->val_split);
    goto cleanup;
  }

  /* model, optimiser, resume */
  r->model = tc_model_create(o->seed);
  if (!r->model) goto oom;
  r->optim = (tc_optim){.lr = (float)o->lr, .weight_decay = (float)o->weight_decay,
                        .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f,
                        .pos_weight = (float)o->pos_weight, .warmup_steps = o->warmup,
                        .total_steps = o->steps};
  r->loader_seed = o->seed;
  if (o->resume) {
    char err[512];
    tc_checkpoint_info info;
    if (tc_checkpoint_load(o->resume, r->model, &info, err, sizeof err) != 0) {
      fprintf(stderr, PROG ": --resume: %s\n", err);
      goto cleanup;
    }
    if (info.batch != o->batch || info.index_end != r->train_end || info.seed != o->seed) {
      fprintf(stderr, PROG ": --resume: checkpoint %s was written with --batch %u, --seed %"
              PRIu64 " and a train range of %" PRIu64 " graphs; this run has %u, %" PRIu64
              " and %" PRIu64 "\n", o->resume, info.batch, info.seed, info.index_end, o->batch,
              o->seed, r->train_end);
      goto cleanup;
    }
    if (info.step >= o->steps) {
      fprintf(stderr, PROG ": --resume: checkpoint %s is at step %" PRIu64 ", nothing left "
              "of --steps %" PRIu64 "\n", o->resume, info.step, o->steps);
      goto cleanup;
    }
    r->step0 = info.step, r->seq0 = info.next_seq;
    if (!o->quiet)
      fprintf(r->text, "resumed from %s at step %" PRIu64 "\n", o->resume, info.step);
  }

  r->end_step = o->steps;
  if (o->stop_after && r->step0 + o->stop_after < o->steps) r->end_step = r->step0 + o->stop_after;

  /* backend */
  if (r->cuda) {
    size_t P = (size_t)r->layout.graphs * r->layout.nodes * r->layout.nodes;
    r->ev_logit = malloc(P * sizeof(float)), r->ev_T = malloc(P * sizeof(float));
    r->ev_w = malloc(P * sizeof(float));
    if (!r->ev_logit || !r->ev_T || !r->ev_w) goto oom;
    if (tc_cuda_create(&r->dev, &r->layout, r->model) != 0) goto cleanup;
  }
  /* the CPU workspace also serves CPU-side evaluation */
  if (!r->cuda) {
    r->cpu = tc_cpu_create((int)r->layout.graphs, (int)r->layout.nodes);
    if (!r->cpu) goto oom;
    tc_cpu_set_threads(r->cpu, (int)o->cpu_threads);
  }

  if (o->log) {
    r->log = fopen(o->log, "w");
    if (!r->log) {
      fprintf(stderr, PROG ": --log: cannot create %s: %s\n", o->log, strerror(errno));
      goto cleanup;
    }
    fprintf(r->log, "step,train_loss,lr,val_loss,val_auroc,val_auprc,val_shd,baseline_auprc\n");
  }

  /* the train stream: shuffled, endless, resumable */
  twincache_loader_options lo;
  twincache_loader_options_init(&lo);
  lo.batch_size = o->batch, lo.epochs = 0, lo.shuffle = 1, lo.seed = r->loader_seed;
  lo.threads = o->threads, lo.index_begin = 0, lo.index_end = r->train_end;
  if (r->cuda) lo.alloc = tc_cuda_host_alloc, lo.free = tc_cuda_host_free;
  if (r->cuda) lo.layout = TWINCACHE_LAYOUT_COMPACT; /* expanded on the GPU */
  twincache_loader_state resume_state = {.seed = r->loader_seed, .next_seq = r->seq0};
  st = twincache_loader_open(o->cache, &lo, o->resume ? &resume_state : NULL, &tl);
  if (st != 0) {
    fprintf(stderr, PROG ": cannot open the training range of %s: %s\n", o->cache,
            twincache_strerror(st));
    goto cleanup;
  }
  if (!o->quiet)
    fprintf(r->text, "cache %s: %" PRIu64 " graphs (train %" PRIu64 ", validation %" PRIu64
            "), N=%u K=%u S=%u, batch %u, %zu-byte slabs, %" PRIu64 " steps\n",
            o->cache, r->count, r->train_end, r->count - r->train_end, r->layout.nodes,
            r->layout.inter, r->layout.samples, o->batch, r->layout.bytes, o->steps);

  loop_stats ls = {0};
  uint64_t t0 = tc_now_ns();
  if ((r->cuda ? train_cuda(r, tl, &ls) : train_cpu(r, tl, &ls)) != 0) goto cleanup;
  uint64_t wall_ns = tc_now_ns() - t0;
  uint64_t train_ns = wall_ns - r->eval_ns - r->ckpt_ns;
  if (train_ns == 0) train_ns = 1;

  /* summary */
  double train_s = (double)train_ns * 1e-9;
  double gps = (double)ls.graphs / train_s;
  double ms_step = ls.steps ? train_s * 1e3 / (double)ls.steps : 0;
  double host_wait = (double)ls.wait_ns / (double)train_ns;
  /* the decode threads: their rate while busy, and how busy they were */
  twincache_loader_stats lst;
  twincache_loader_get_stats(tl, &lst);
  uint64_t busy_ns = 0, decoded = 0;
  for (uint32_t t = 0; t < lst.threads && t < sizeof lst.thread_busy_ns / sizeof lst.thread_busy_ns[0]; t++)
    busy_ns += lst.thread_busy_ns[t], decoded += lst.thread_graphs[t];
  double decode_per_thread_s = busy_ns ? (double)decoded / ((double)busy_ns * 1e-9) : 0;
  /* of the training time: evaluations pause the stream once the ring is full */
  double decode_busy = lst.threads ? (double)busy_ns / ((double)train_ns * lst.threads) : 0;
  if (decode_busy > 1) decode_busy = 1;
  tc_cuda_timing tm = {0};
  double copy_wait = 0, h2d_gbs = 0;
  if (r->cuda) {
    tc_cuda_get_timing(r->dev, &tm);
    copy_wait = tm.copy_wait_ms * 1e-3 / train_s;
    h2d_gbs = tm.copy_ms > 0 ? (double)tm.copy_bytes / (tm.copy_ms * 1e-3) / 1e9 : 0;
  }
  const val_result *v = &r->last;
  if (!o->quiet) {
    fprintf(r->text, "summary: %s, %" PRIu64 " steps in %.1f s (+%.1f s evaluation): %.0f graphs/s, "
            "%.2f ms/step, host waited in the loader %.1f%% of the time\n",
            r->cuda ? "cuda" : "cpu", ls.steps, train_s, (double)r->eval_ns * 1e-9, gps,
            ms_step, 100 * host_wait);
    fprintf(r->text, "loader: %u decode threads, %.0f graphs/s per busy thread, busy %.0f%% of the "
            "training time\n", lst.threads, decode_per_thread_s, 100 * decode_busy);
    if (r->cuda)
      fprintf(r->text, "data path (%s): compute stream waited on copies %.2f%% of the time "
              "(%.1f ms), H2D %.2f GB/s over %" PRIu64 " copies (compact, %.0f bytes/graph), "
              "compute %.2f ms/step (expansion %.3f ms)\n",
              o->sync_copies ? "--sync-copies" : "double-buffered", 100 * copy_wait,
              tm.copy_wait_ms, h2d_gbs, tm.copies,
              tm.copies ? (double)tm.copy_bytes / ((double)tm.copies * o->batch) : 0,
              tm.steps ? tm.step_ms / tm.steps : 0, tm.steps ? tm.expand_ms / tm.steps : 0);
    if (v->done)
      fprintf(r->text, "final validation (%" PRIu64 " graphs, %" PRIu64 " pairs): model loss %.4f "
              "AUROC %.4f AUPRC %.4f SHD %.2f  vs |T| baseline AUROC %.4f AUPRC %.4f SHD %.2f\n",
              v->graphs, v->pairs, v->loss, v->auroc, v->auprc, v->shd, v->base_auroc,
              v->base_auprc, v->base_shd);
  }
  if (o->json) {
    printf("{\"device\": \"%s\", \"steps\": %" PRIu64 ", \"batch\": %u, \"graphs_per_s\": %.2f, "
           "\"ms_per_step\": %.4f, \"host_wait_fraction\": %.6f, \"copy_wait_fraction\": %.6f, "
           "\"h2d_gb_per_s\": %.3f, \"copy_wait_ms\": %.3f, \"compute_ms_per_step\": %.4f, "
           "\"decode_graphs_per_thread_s\": %.0f, \"decode_busy_fraction\": %.4f, \"sync_copies\": %s, "
           "\"expand_ms_per_step\": %.4f, \"copy_bytes_per_graph\": %.0f, ",
           r->cuda ? "cuda" : "cpu", o->steps, o->batch, gps, ms_step, host_wait, copy_wait,
           h2d_gbs, tm.copy_wait_ms, tm.steps ? tm.step_ms / (double)tm.steps : 0.0,
           decode_per_thread_s, decode_busy, o->sync_copies ? "true" : "false",
           tm.steps ? tm.expand_ms / (double)tm.steps : 0.0,
           tm.copies ? (double)tm.copy_bytes / ((double)tm.copies * o->batch) : 0.0);
    const char *keys[] = {"val_loss", "val_auroc", "val_auprc", "val_shd", "baseline_auroc",
                          "baseline_auprc", "baseline_shd"};
    double vals[] = {v->loss, v->auroc, v->auprc, v->shd, v->base_auroc, v->base_auprc,
                     v->base_shd};
    for (int k = 0; k < 7; k++) {
      if (v->done && isfinite(vals[k])) printf("\"%s\": %.6f", keys[k], vals[k]);
      else printf("\"%s\": null", keys[k]); /* JSON has no NaN */
      printf(k < 6 ? ", " : "}\n");
    }
  }
  rc = 0;
  goto cleanup;
oom:
  fprintf(stderr, PROG ": out of memory\n");
cleanup:
  twincache_loader_close(tl);
  twincache_cache_close(cache);
  if (r->log && fclose(r->log) != 0 && rc == 0) {
    fprintf(stderr, PROG ": --log: cannot write %s\n", o->log);
    rc = 1;
  }
  tc_cuda_free(r->dev);
  tc_cpu_free(r->cpu);
  tc_model_free(r->model);
  free(r->ev_logit), free(r->ev_T), free(r->ev_w);
  return rc;
}
