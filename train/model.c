/* model.c — parameter layout, schedule and the CPU backend of the edge model. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "tc_common.h"
#include "tc_model.h"

tc_model *tc_model_create(uint64_t seed) {
  const size_t F = TC_MODEL_F, H = TC_MODEL_H;
  tc_model *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  size_t len[TC_MODEL_TENSORS] = {H * F, H, H * H, H, H, 1};
  size_t fan_in[TC_MODEL_TENSORS] = {F, 0, H, 0, H, 0};
  size_t total = 0;
  for (int t = 0; t < TC_MODEL_TENSORS; t++) {
    m->off[t] = total;
    m->len[t] = len[t];
    m->decay[t] = fan_in[t] != 0;
    total += len[t];
  }
  m->n_params = total; /* == TC_MODEL_PARAMS, the CPU backend's partial-gradient size */
  if (total != TC_MODEL_PARAMS) {
    free(m);
    return NULL;
  }
  m->params = calloc(total, sizeof(float));
  m->grads = calloc(total, sizeof(float));
  m->m = calloc(total, sizeof(float));
  m->v = calloc(total, sizeof(float));
  if (!m->params || !m->grads || !m->m || !m->v) {
    tc_model_free(m);
    return NULL;
  }
  tc_rng r;
  tc_rng_init(&r, seed, 0x6d6f64656cull); /* "model" stream */
  for (int t = 0; t < TC_MODEL_TENSORS; t++) {
    if (!fan_in[t]) continue;
    float bound = 1.0f / sqrtf((float)fan_in[t]);
    for (size_t i = 0; i < len[t]; i++)
      m->params[m->off[t] + i] = (float)tc_rng_range(&r, -bound, bound);
  }
  return m;
}

void tc_model_free(tc_model *m) {
  if (!m) return;
  free(m->params);
  free(m->grads);
  free(m->m);
  free(m->v);
  free(m);
}

float tc_lr_at(const tc_optim *o, uint64_t step) {
  if (o->warmup_steps > 0 && step < o->warmup_steps)
    return o->lr * (float)(step + 1) / (float)o->warmup_steps;
  uint64_t span = o->total_steps > o->warmup_steps ? o->total_steps - o->warmup_steps : 1;
  double progress = (double)(step - o->warmup_steps) / (double)span;
  if (progress > 1.0) progress = 1.0;
  double min_lr = 0.1 * o->lr;
  return (float)(min_lr + 0.5 * (o->lr - min_lr) * (1.0 + cos(3.141592653589793 * progress)));
}

void tc_batch_view_init(tc_batch_view *v, const twincache_batch_layout *l, const void *slab) {
  const uint8_t *s = (const uint8_t *)slab;
  v->G = (int)l->graphs, v->K = (int)l->inter, v->S = (int)l->samples, v->N = (int)l->nodes;
  v->base = (const float *)(s + l->base);
  v->inter = (const float *)(s + l->inter_off);
  v->target = s + l->target;
  v->adj = s + l->adj;
  v->node_mask = s + l->node_mask;
  v->int_mask = s + l->int_mask;
  v->rows = (const uint32_t *)(s + l->rows);
}

tc_cpu *tc_cpu_create(int G, int N) {
  tc_cpu *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  size_t gnn = (size_t)G * N * N, H = TC_MODEL_H;
  c->G = G, c->N = N, c->P = gnn;
  float **pf[] = {&c->T, &c->C, &c->W_hat, &c->Pc, &c->pair_w, &c->logit, &c->wc, &c->logitc,
                  &c->dlogit};
  for (size_t i = 0; i < sizeof pf / sizeof pf[0]; i++)
    if (!(*pf[i] = malloc(sizeof(float) * gnn))) goto fail;
  float **ph[] = {&c->h1pre, &c->h1, &c->h2pre, &c->h2, &c->dh2, &c->dh1};
  for (size_t i = 0; i < sizeof ph / sizeof ph[0]; i++)
    if (!(*ph[i] = malloc(sizeof(float) * gnn * H))) goto fail;
  c->feat = malloc(sizeof(float) * gnn * TC_MODEL_F);
  c->featc = malloc(sizeof(float) * gnn * TC_MODEL_F);
  c->observed = malloc((size_t)G * N);
  c->idx = malloc(sizeof(uint32_t) * gnn);
  c->adjc = malloc(gnn);
  c->part_grads = malloc(sizeof(float) * TC_CPU_CHUNKS * TC_MODEL_PARAMS);
  c->threads = 1;
  if (!c->feat || !c->featc || !c->observed || !c->idx || !c->adjc || !c->part_grads) goto fail;
  return c;
fail:
  tc_cpu_free(c);
  return NULL;
}

void tc_cpu_free(tc_cpu *c) {
  if (!c) return;
  free(c->T), free(c->C), free(c->W_hat), free(c->Pc), free(c->feat), free(c->pair_w);
  free(c->observed), free(c->logit), free(c->idx), free(c->featc), free(c->wc), free(c->adjc);
  free(c->h1pre), free(c->h1), free(c->h2pre), free(c->h2), free(c->dh2), free(c->dh1);
  free(c->logitc), free(c->dlogit), free(c->part_grads);
  free(c);
}

void tc_cpu_set_threads(tc_cpu *c, int threads) { c->threads = threads < 1 ? 1 : threads; }

/* One worker's share of a step: phase 0 = features of a graph range,
 * phase 1 = MLP forward/backward of chunks tid, tid+T, ... */
typedef struct tc_work {
  tc_cpu *c;
  const tc_model *m;
  const tc_batch_view *b;
  float pos_weight;
  int grad, phase, tid, nthreads, rows; /* rows: Pr */
  double wsum;                          /* sum of all pair weights (phase 1) */
} tc_work;

static void tc_features_range(tc_cpu *c, const tc_batch_view *b, int g0, int g1) {
  const int N = b->N, K = b->K, S = b->S, G = g1 - g0;
  size_t nn = (size_t)N * N;
  if (G <= 0) return;
  float *T = c->T + g0 * nn, *C = c->C + g0 * nn, *W = c->W_hat + g0 * nn, *Pc = c->Pc + g0 * nn;
  uint8_t *ob = c->observed + (size_t)g0 * N;
  const uint8_t *nm = b->node_mask + (size_t)g0 * N;
  const float *base = b->base + (size_t)g0 * S * N;
  twincache_effects_cpu(T, ob, base, b->inter + (size_t)g0 * K * S * N,
                        b->target + (size_t)g0 * K * N, nm, b->int_mask + (size_t)g0 * K,
                        b->rows + (size_t)g0 * (K + 1), G, K, S, N);
  twincache_corr_cpu(C, base, nm, b->rows + (size_t)g0 * (K + 1), K + 1, G, S, N);
  twincache_inverse_cpu(W, Pc, T, ob, C, nm, G, N);
  twincache_pair_features_cpu(c->feat + g0 * nn * TC_MODEL_F, c->pair_w + g0 * nn, T, ob, C, W,
                              Pc, nm, G, N);
}

static void tc_chunk_run(tc_work *w, int k) {
  const int F = TC_MODEL_F, H = TC_MODEL_H;
  tc_cpu *c = w->c;
  const float *p = w->m->params;
  const size_t *o = w->m->off;
  int per = (w->rows + TC_CPU_CHUNKS - 1) / TC_CPU_CHUNKS;
  int lo = k * per < w->rows ? k * per : w->rows;
  int n = lo + per < w->rows ? per : w->rows - lo;
  float *featc = c->featc + (size_t)lo * F, *h1pre = c->h1pre + (size_t)lo * H;
  float *h1 = c->h1 + (size_t)lo * H, *h2pre = c->h2pre + (size_t)lo * H;
  float *h2 = c->h2 + (size_t)lo * H, *logit = c->logitc + lo, *dlogit = c->dlogit + lo;
  float *dh2 = c->dh2 + (size_t)lo * H, *dh1 = c->dh1 + (size_t)lo * H;
  /* MLP F -> H -> H -> 1 on rows [lo, lo+n) */
  twincache_linear_forward_cpu(h1pre, featc, p + o[0], p + o[1], n, F, H);
  twincache_gelu_forward_cpu(h1, h1pre, (size_t)n * H);
  twincache_linear_forward_cpu(h2pre, h1, p + o[2], p + o[3], n, H, H);
  twincache_gelu_forward_cpu(h2, h2pre, (size_t)n * H);
  twincache_linear_forward_cpu(logit, h2, p + o[4], p + o[5], n, H, 1);
  double wk = 0.0;
  for (int r = 0; r < n; r++) wk += c->wc[lo + r];
  float loss = twincache_bce_cpu(w->grad ? dlogit : NULL, logit, c->adjc + lo, c->wc + lo,
                                 (size_t)n, w->pos_weight);
  c->chunk_loss[k] = loss, c->chunk_w[k] = wk;
  if (!w->grad) return;
  /* the chunk's BCE gradient is normalised by its own weight: rescale to the batch's */
  float scale = w->wsum > 0 ? (float)(wk / w->wsum) : 0.0f;
  for (int r = 0; r < n; r++) dlogit[r] *= scale;
  float *g = c->part_grads + (size_t)k * TC_MODEL_PARAMS;
  twincache_linear_backward_cpu(dh2, g + o[4], g + o[5], dlogit, h2, p + o[4], n, H, 1);
  twincache_gelu_backward_cpu(dh2, h2pre, dh2, (size_t)n * H);
  twincache_linear_backward_cpu(dh1, g + o[2], g + o[3], dh2, h1, p + o[2], n, H, H);
  twincache_gelu_backward_cpu(dh1, h1pre, dh1, (size_t)n * H);
  twincache_linear_backward_cpu(NULL, g + o[0], g + o[1], dh1, featc, p + o[0], n, F, H);
}

static void *tc_work_run(void *arg) {
  tc_work *w = arg;
  if (w->phase == 0) {
    int G = w->b->G;
    tc_features_range(w->c, w->b, (int)((long)G * w->tid / w->nthreads),
                      (int)((long)G * (w->tid + 1) / w->nthreads));
  } else {
    for (int k = w->tid; k < TC_CPU_CHUNKS; k += w->nthreads) tc_chunk_run(w, k);
  }
  return NULL;
}

/* Runs tc_work_run for tid 0..T-1: T-1 threads plus the caller. A thread
 * that cannot be created has its share run by the caller: same result. */
static void tc_parallel(tc_work *proto, int phase) {
  enum { MAX_T = 64 };
  int T = proto->c->threads < MAX_T ? proto->c->threads : MAX_T;
  tc_work w[MAX_T];
  pthread_t th[MAX_T];
  int started[MAX_T] = {0};
  for (int t = 0; t < T; t++) {
    w[t] = *proto;
    w[t].phase = phase, w[t].tid = t, w[t].nthreads = T;
  }
  for (int t = 1; t < T; t++) started[t] = pthread_create(&th[t], NULL, tc_work_run, &w[t]) == 0;
  tc_work_run(&w[0]);
  for (int t = 1; t < T; t++) {
    if (started[t]) pthread_join(th[t], NULL);
    else tc_work_run(&w[t]);
  }
}

float tc_cpu_forward_backward(tc_cpu *c, tc_model *m, const tc_batch_view *b, float pos_weight,
                              int grad) {
  const int F = TC_MODEL_F;
  tc_work proto = {.c = c, .m = m, .b = b, .pos_weight = pos_weight, .grad = grad};
  /* features (G,N,N,F), by graph ranges */
  tc_parallel(&proto, 0);
  /* gather the real pairs, in index order */
  int P = 0;
  double wsum = 0.0;
  for (size_t q = 0; q < c->P; q++) {
    if (c->pair_w[q] == 0.0f) continue;
    c->idx[P] = (uint32_t)q;
    memcpy(c->featc + (size_t)P * F, c->feat + q * F, sizeof(float) * F);
    c->wc[P] = c->pair_w[q];
    c->adjc[P] = b->adj[q];
    wsum += c->pair_w[q];
    P++;
  }
  proto.rows = P, proto.wsum = wsum;
  c->wsum = wsum;
  /* MLP and loss by fixed chunks */
  tc_parallel(&proto, 1);
  memset(c->logit, 0, sizeof(float) * c->P);
  for (int r = 0; r < P; r++) c->logit[c->idx[r]] = c->logitc[r];
  double loss = 0.0;
  for (int k = 0; k < TC_CPU_CHUNKS; k++) loss += c->chunk_loss[k] * c->chunk_w[k];
  loss = wsum > 0 ? loss / wsum : 0.0;
  if (grad) {
    /* partial gradients summed in chunk order */
    memcpy(m->grads, c->part_grads, sizeof(float) * TC_MODEL_PARAMS);
    for (int k = 1; k < TC_CPU_CHUNKS; k++) {
      const float *pg = c->part_grads + (size_t)k * TC_MODEL_PARAMS;
      for (size_t i = 0; i < TC_MODEL_PARAMS; i++) m->grads[i] += pg[i];
    }
  }
  return (float)loss;
}

void tc_cpu_adamw(tc_model *m, const tc_optim *o, float lr, int t) {
  for (int k = 0; k < TC_MODEL_TENSORS; k++)
    twincache_adamw_cpu(m->params + m->off[k], m->grads + m->off[k], m->m + m->off[k],
                        m->v + m->off[k], m->len[k], lr, o->beta1, o->beta2, o->eps,
                        m->decay[k] ? o->weight_decay : 0.0f, t);
}
