/* train_agree.c — data parallel: before the first step every rank checks that
 * it agrees with rank 0 on everything the gradient sums assume (issue 35).
 * A rank with another --batch, --lr or cache would otherwise train to exit 0
 * on a wrong global batch, and one with other --steps waits forever in an
 * all-reduce that the others have left.
 *
 * The list of values and their comparison are pure functions of a run
 * (train_agree_items, train_agree_compare: tested without MPI); train_agree
 * is the exchange: rank 0's values to every rank (two MPI_Bcast: the list's
 * shape, then the values), then one sum so every rank learns which ranks
 * disagree. The lowest such rank prints the one line; every rank returns 1
 * with r->agree_failed set, so the job ends by MPI_Finalize (no MPI_Abort
 * racing the line to the terminal). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_common.h"
#include "tc_train.h"

static uint64_t f64_bits(double x) {
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

/* The generator's seed from the cache's config JSON ("seed": N); UINT64_MAX
 * when absent (the config digest still tells caches apart). */
uint64_t train_agree_config_seed(const char *json) {
  const char *p = json ? strstr(json, "\"seed\":") : NULL;
  if (!p) return UINT64_MAX;
  return strtoull(p + 7, NULL, 10);
}

size_t train_agree_items(const run *r, train_agree_item *it, size_t cap) {
  const opts *o = &r->o;
  size_t n = 0;
#define ITEM(flag_, kind_, value_)                                        \
  do {                                                                    \
    if (n < cap) it[n] = (train_agree_item){(flag_), (kind_), (value_)}; \
    n++;                                                                  \
  } while (0)
  /* the stream every rank takes its share of */
  ITEM("--batch", AGREE_U64, o->batch);
  ITEM("--seed", AGREE_U64, o->seed);
  ITEM("--val-split", AGREE_F64, f64_bits(o->val_split));
  ITEM("--fresh-rows", AGREE_U64, o->fresh_rows);
  ITEM("--resample-every", AGREE_U64, o->resample_every);
  ITEM("--local-nodes", AGREE_U64, o->local_nodes);
  /* how many all-reduces: each rank runs steps [step0, end_step) */
  ITEM("--steps", AGREE_U64, o->steps);
  ITEM("--stop-after", AGREE_U64, o->stop_after);
  ITEM("--resume (its step)", AGREE_U64, r->step0);
  ITEM("--predict-only", AGREE_U64, (uint64_t)r->predict_only);
  /* the update every rank applies to the summed gradients */
  ITEM("--lr", AGREE_F64, f64_bits(o->lr));
  ITEM("--warmup", AGREE_U64, o->warmup);
  ITEM("--weight-decay", AGREE_F64, f64_bits(o->weight_decay));
  ITEM("--pos-weight", AGREE_F64, f64_bits(o->pos_weight));
  ITEM("--device (the backend)", AGREE_U64, r->be && strcmp(r->be->name, "cuda") == 0);
  /* the cache (after the flags: a flag that differs is named first): the
   * batches' shape and which graphs they hold */
  ITEM("--cache (its generator seed)", AGREE_U64, r->cache_seed);
  ITEM("--cache (N, nodes per graph)", AGREE_U64, r->dims.max_nodes);
  ITEM("--cache (K, interventions per graph)", AGREE_U64, r->dims.max_inter);
  ITEM("--cache (S, samples per world)", AGREE_U64, r->dims.samples);
  ITEM("--cache (its config digest)", AGREE_HEX, r->cache_tag);
  /* local mode: each node opens its own part, whose count is its own (0
   * here: the list keeps its shape); the loader checks the parts against the set */
  uint64_t local = o->local_nodes != 0;
  ITEM("--cache (graphs)", AGREE_U64, local ? 0 : r->count - r->first);
  ITEM("--cache (first graph)", AGREE_U64, local ? 0 : r->first);
  ITEM("--val-split (training graphs)", AGREE_U64, local ? 0 : r->train_end - r->first);
  /* the parameters the first step starts from (--seed, or --resume's file) */
  ITEM("--seed/--resume (the model's parameters)", AGREE_HEX,
       r->model ? tc_fnv1a64(r->model->params, r->model->n_params * sizeof(float)) : 0);
#undef ITEM
  return n;
}

/* One value as the message prints it. */
static void format_value(char *buf, size_t cap, int kind, uint64_t bits) {
  double f;
  if (kind == AGREE_F64) {
    memcpy(&f, &bits, sizeof f);
    /* the shortest of %.15g..%.17g that reads back to the same double */
    for (int digits = 15; digits <= 17; digits++) {
      snprintf(buf, cap, "%.*g", digits, f);
      if (strtod(buf, NULL) == f) break;
    }
  } else if (kind == AGREE_HEX) {
    snprintf(buf, cap, "%016" PRIx64, bits);
  } else if (bits == UINT64_MAX) {
    snprintf(buf, cap, "none");
  } else {
    snprintf(buf, cap, "%" PRIu64, bits);
  }
}

long train_agree_compare(const train_agree_item *mine, const uint64_t *root, size_t n, int rank,
                         char *msg, size_t cap) {
  for (size_t i = 0; i < n; i++) {
    if (mine[i].bits == root[i]) continue;
    char here[32], there[32];
    format_value(here, sizeof here, mine[i].kind, mine[i].bits);
    format_value(there, sizeof there, mine[i].kind, root[i]);
    snprintf(msg, cap, "rank %d disagrees with rank 0 on %s: %s here, %s on rank 0; every rank must "
             "run with the same options on the same cache", rank, mine[i].flag, here, there);
    return (long)i;
  }
  if (cap) msg[0] = '\0';
  return -1;
}

enum { AGREE_MAX = 64 };

int train_agree(run *r) {
  int W = r->dist.world, rc = 1;
  if (W == 1) return 0;
  train_agree_item it[AGREE_MAX];
  uint64_t vals[AGREE_MAX], shape[2];
  double *bad = NULL;
  char msg[512] = "";
  size_t n = train_agree_items(r, it, AGREE_MAX);
  if (n > AGREE_MAX) n = AGREE_MAX; /* the list is fixed at compile time, far below */
  /* the list's shape (its length, a digest of its names): two builds with
   * other lists must not compare their values item by item */
  shape[0] = n, shape[1] = TC_FNV1A64_BASIS;
  for (size_t i = 0; i < n; i++) shape[1] = tc_fnv1a64_update(shape[1], it[i].flag, strlen(it[i].flag));
  uint64_t mine0 = shape[0], mine1 = shape[1];
  for (size_t i = 0; i < n; i++) vals[i] = it[i].bits;
  bad = calloc((size_t)W, sizeof *bad);
  if (!bad) {
    fprintf(stderr, PROG ": out of memory\n");
    return 1;
  }
  if (tc_dist_bcast(&r->dist, shape, sizeof shape, 0) != 0) goto mpi_error;
  int differs = shape[0] != mine0 || shape[1] != mine1;
  if (differs)
    snprintf(msg, sizeof msg, "rank %d runs another build of " PROG " than rank 0 (their "
             "checks of the options differ): run one build on every rank", r->dist.rank);
  /* rank 0's values, as many as rank 0 sends (this rank's list may be another length) */
  size_t recv = differs ? (shape[0] < AGREE_MAX ? (size_t)shape[0] : AGREE_MAX) : n;
  if (tc_dist_bcast(&r->dist, vals, recv * sizeof *vals, 0) != 0) goto mpi_error;
  if (!differs) differs = train_agree_compare(it, vals, n, r->dist.rank, msg, sizeof msg) >= 0;
  bad[r->dist.rank] = differs;
  if (tc_dist_sum_f64(&r->dist, bad, (size_t)W) != 0) goto mpi_error;
  int first = -1;
  for (int k = 0; k < W && first < 0; k++)
    if (bad[k] != 0) first = k;
  if (first < 0) {
    rc = 0;
  } else {
    if (first == r->dist.rank) fprintf(stderr, PROG ": %s\n", msg);
    r->agree_failed = 1; /* every rank knows: each ends by MPI_Finalize */
  }
  free(bad);
  return rc;
mpi_error:
  fprintf(stderr, PROG ": rank %d: comparing the options with rank 0: %s\n", r->dist.rank,
          twincache_last_error());
  free(bad);
  return 1;
}
