/* train_eval.c — the validation loader, opened once per run, and one pass
 * over it: the model's loss, AUROC, AUPRC and SHD against the |T| baseline
 * (train/MODEL.md), on whichever backend the run chose. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tc_metrics.h"
#include "tc_train.h"

static float sigmoidf_(float z) { return 1.0f / (1.0f + expf(-z)); }

int train_has_validation(const run *r) { return r->o.val_cache || r->o.val_split > 0; }

int train_eval_open(run *r) {
  const char *cache = r->o.val_cache ? r->o.val_cache : r->o.cache;
  if (r->dist.rank != 0) return 0; /* rank 0 evaluates for the job */
  if (!train_has_validation(r) || (!r->o.val_cache && r->train_end >= r->count)) return 0;
  twincache_loader_options lo;
  twincache_loader_options_init(&lo);
  /* endless and unshuffled: every epoch is the same batches in the same order */
  lo.batch_size = r->o.batch, lo.epochs = 0, lo.shuffle = 0, lo.seed = r->loader_seed;
  lo.threads = r->o.threads, lo.index_begin = r->train_end, lo.index_end = r->count;
  if (r->o.val_cache) lo.index_begin = 0, lo.index_end = r->val_count;
  lo.withhold_targets = r->o.val_withhold; /* target and int_mask stay 0 */
  if (r->val_fresh) /* epoch 0's draw at every evaluation: all epochs share it */
    lo.samples = TWINCACHE_SAMPLES_FRESH, lo.rows = r->o.fresh_rows, lo.resample_every = UINT32_MAX;
  lo.alloc = r->be->host_alloc, lo.free = r->be->host_free;
  int st = twincache_loader_open(cache, &lo, NULL, &r->val);
  if (st != 0) {
    fprintf(stderr, PROG ": cannot open the validation range of %s: %s\n", cache, twincache_last_error());
    return 1;
  }
  /* the model scores every pair alone, so on the CPU a validation cache
   * may have any N, K, S and rows per world; the CUDA backend's device
   * buffers and captured graphs have the training batches' shape */
  const twincache_batch_layout *vlay = twincache_loader_layout(r->val);
  if (!r->be->any_shape && (vlay->graphs != r->layout.graphs || vlay->nodes != r->layout.nodes ||
                            vlay->inter != r->layout.inter || vlay->samples != r->layout.samples)) {
    fprintf(stderr, PROG ": --val-cache: %s gives batches of N=%u K=%u S=%u, the training cache N=%u K=%u "
            "S=%u; the %s backend evaluates batches of the training shape only: use --device cpu, which "
            "evaluates and predicts at any shape, or a validation cache of the same --nodes, --targets "
            "and --samples\n", cache, vlay->nodes, vlay->inter, vlay->samples, r->layout.nodes,
            r->layout.inter, r->layout.samples, r->be->name);
    return 1;
  }
  return 0;
}

void train_withheld_targets(run *r, twincache_batch *b) {
  if (!r->o.val_withhold) return;
  uint64_t seen = 0;
  r->infer_found += tc_infer_targets(&b->layout, b->slab, &seen);
  r->infer_seen += seen;
}

/* One pass over the validation graphs: the next epoch of r->val. Returns 0
 * or 1 (message printed). */
int train_evaluate(run *r, val_result *out) {
  int rc = 1;
  tc_scores sc = {0};
  double loss_w = 0, loss_sum = 0, shd = 0, base_shd = 0;
  uint64_t graphs = 0;
  uint8_t *pred = NULL, *bpred = NULL;
  memset(out, 0, sizeof *out);
  if (!r->val) return 0; /* nothing held out */
  twincache_loader *vl = r->val;
  uint64_t batches = twincache_loader_batches_per_epoch(vl);
  int N = (int)twincache_loader_layout(vl)->nodes; /* the validation batches' (any on the CPU) */
  pred = malloc((size_t)N * N), bpred = malloc((size_t)N * N);
  if (!pred || !bpred) goto oom;
  for (uint64_t i = 0; i < batches; i++) {
    twincache_batch *b = NULL;
    int st = twincache_loader_next(vl, &b);
    if (st != 0) {
      fprintf(stderr, PROG ": validation batch: %s\n", twincache_last_error());
      goto cleanup;
    }
    float loss;
    const float *logit, *T, *w;
    train_withheld_targets(r, b);
    if (r->be->eval_batch(r, b, &loss, &logit, &T, &w) != 0) {
      twincache_loader_release(vl, b);
      goto cleanup;
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
  return rc;
}

