/* twincache-train — train the edge model of MODEL.md on a twincache cache,
 * on the GPU (double-buffered async copies) when one is usable, else on the
 * CPU with the reference kernels. Evaluates on a held-out tail of the cache
 * against the |T| baseline. Run with --help for the flags.
 *
 * main() is the run as named steps; the parts live beside it (tc_train.h):
 * flags, evaluation, the training loops, the report. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tc_checkpoint.h"
#include "tc_common.h"
#include "tc_train.h"

/* Data parallel: every rank must take the same backend (one sums over MPI,
 * the other over NCCL: mixed, they would wait on each other forever). */
static int backends_agree(run *r, int usable) {
  double n = usable;
  if (r->dist.world == 1) return 0;
  if (tc_dist_sum_f64(&r->dist, &n, 1) != 0) {
    fprintf(stderr, PROG ": rank %d: agreeing on the device: %s\n", r->dist.rank, twincache_last_error());
    return 1;
  }
  if (n != 0 && n != r->dist.world) {
    fprintf(stderr, PROG ": rank %d of %d: %.0f of the %d ranks found a usable GPU (this one %s); all "
            "ranks must train on the same device kind: give --device cpu, or --device cuda to make a "
            "rank without a GPU fail with its reason\n", r->dist.rank, r->dist.world, n,
            r->dist.world, usable ? "did" : "did not");
    return 1;
  }
  return 0;
}

/* --mix on the CUDA backend: its compact batches carry one S, so the stored
 * caches must store one S (fresh worlds all have --fresh-rows rows); the
 * CPU's dense batches pad them. 1 with why[cap] saying which S differ; 0
 * otherwise (a cache that does not open is split_mixture's to report). */
static int mix_needs_dense(const opts *o, char *why, size_t cap) {
  uint32_t s0 = 0;
  if (!o->mix_n || o->fresh_rows) return 0;
  for (uint32_t i = 0; i < o->mix_n; i++) {
    twincache_cache *c = NULL;
    if (twincache_cache_open(o->mix_path[i], &c) != 0) return 0;
    uint32_t s = twincache_cache_dims(c)->samples;
    twincache_cache_close(c);
    if (i == 0) s0 = s;
    if (s != s0) {
      snprintf(why, cap, "--mix: caches of S = %u (%s) and S = %u (%s): the CUDA backend reads compact batches, "
               "which do not pad a source's rows to another S (the CPU's dense ones do)", s0, o->mix_path[0], s,
               o->mix_path[i]);
      return 1;
    }
  }
  return 0;
}

/* --device: CUDA when asked for or usable, on the GPU tc_device_index picks
 * (--gpu, else the node-local rank's); says which on r->text. */
static int pick_device(run *r) {
  const opts *o = &r->o;
  char why[1024] = "", name[256] = "";
  int index = -1, count = 0;
  int dense = o->device != DEV_CPU && mix_needs_dense(o, why, sizeof why);
  int usable = o->device != DEV_CPU && !dense &&
               tc_cuda_select(r->dist.local_rank, o->gpu, &index, &count) == 0 && tc_cuda_check() == 0;
  if (o->device != DEV_CPU && !usable && !dense) snprintf(why, sizeof why, "%s", twincache_last_error());
  if ((o->device == DEV_CUDA || o->gpu >= 0 || o->nccl) && !usable) {
    fprintf(stderr, PROG ": %s: %s\n", o->gpu >= 0 ? "--gpu" : o->nccl ? "--nccl" : "--device cuda", why);
    return 1;
  }
  if (backends_agree(r, usable)) return 1;
  r->be = usable ? &train_backend_cuda : &train_backend_cpu;
  if (usable) tc_cuda_device_name(name, sizeof name);
  if (!o->quiet) {
    if (usable) fprintf(r->text, "device: cuda %d of %d (%s)\n", index, count, name);
    else if (o->device == DEV_CPU) fprintf(r->text, "device: cpu (--device cpu)\n");
    else fprintf(r->text, "device: cpu (%s)\n", why);
  }
  if (o->sync_copies && !usable && !o->quiet)
    fprintf(r->text, "note: --sync-copies only changes the CUDA data path\n");
  return 0;
}

/* Mean var- and R^2-sortability (twincache_graph_sortability) of the first
 * up to 256 training graphs, for the log: how much a model could learn from
 * sorting by scale instead of causal structure. Best effort: NaN if unread. */
static void measure_sortability(run *r, twincache_cache *cache) {
  enum { SORT_GRAPHS = 256 };
  const twincache_dims *dims = twincache_cache_dims(cache);
  twincache_dctx *d = twincache_dctx_create();
  twincache_graph *g = twincache_graph_alloc(dims->max_nodes, dims->samples, dims->max_inter ? dims->max_inter : 1,
                                             dims->hidden);
  double var = 0, r2 = 0;
  uint32_t nv = 0, nr = 0;
  r->sort_graphs = 0;
  for (uint64_t i = r->first; d && g && i < r->train_end && i < r->first + SORT_GRAPHS; i++) {
    twincache_sortability s;
    if (twincache_cache_read_graph(cache, d, i, g) || twincache_graph_sortability(g, &s)) break;
    r->sort_graphs++;
    if (!isnan(s.var)) var += s.var, nv++;
    if (!isnan(s.r2)) r2 += s.r2, nr++;
  }
  r->sort_var = nv ? var / nv : NAN;
  r->sort_r2 = nr ? r2 / nr : NAN;
  twincache_graph_free(g);
  twincache_dctx_free(d);
}

/* --val-cache: opens it, and refuses one that holds no graph, or stores
 * SCMs only without --fresh-rows. Its N, K, S and rows per world may differ
 * from the training cache's: the model scores each pair alone (MODEL.md);
 * train_eval_open refuses them where the backend cannot (CUDA). */
static int val_cache_check(run *r) {
  const opts *o = &r->o;
  twincache_cache *vc = NULL;
  int st = twincache_cache_open(o->val_cache, &vc);
  if (st != 0) {
    fprintf(stderr, PROG ": --val-cache: cannot open cache: %s\n", twincache_last_error());
    return 1;
  }
  const twincache_dims *v = twincache_cache_dims(vc);
  r->val_count = twincache_cache_count(vc);
  int rc = 0;
  r->val_fresh = o->fresh_rows && v->samples != o->fresh_rows;
  if (r->val_count == 0) {
    fprintf(stderr, PROG ": --val-cache: cache %s holds no graphs yet\n", o->val_cache);
    rc = 1;
  } else if (v->samples == 0 && !o->fresh_rows) {
    fprintf(stderr, PROG ": --val-cache: cache %s stores SCMs only (no samples): validate or predict on "
            "fresh worlds with --fresh-rows S\n", o->val_cache);
    rc = 1;
  }
  twincache_cache_close(vc);
  return rc;
}

/* --mix: every source read whole ([0, count) = the graphs of all sources);
 * the dims are the largest of each (the batches pad to them), the tag one
 * over the sources' tags, independent when any source is. */
static int split_mixture(run *r) {
  const opts *o = &r->o;
  r->first = r->count = 0;
  r->cache_tag = TC_FNV1A64_BASIS; /* FNV-1a 64 over the sources' tags (little-endian), in order */
  for (uint32_t i = 0; i < o->mix_n; i++) {
    twincache_cache *cache = NULL;
    if (twincache_cache_open(o->mix_path[i], &cache) != 0) {
      fprintf(stderr, PROG ": --mix: cache %u: cannot open cache: %s\n", i + 1, twincache_last_error());
      return 1;
    }
    const twincache_dims *d = twincache_cache_dims(cache);
    uint64_t n = twincache_cache_count(cache), tag = twincache_cache_tag(cache);
    if (i == 0) r->dims = *d, r->cache_seed = train_agree_config_seed(twincache_cache_config(cache));
    if (d->max_nodes > r->dims.max_nodes) r->dims.max_nodes = d->max_nodes;
    if (d->max_inter > r->dims.max_inter) r->dims.max_inter = d->max_inter;
    if (d->samples > r->dims.samples) r->dims.samples = d->samples;
    uint8_t le[8];
    tc_store_u64(le, tag);
    r->cache_tag = tc_fnv1a64_update(r->cache_tag, le, sizeof le);
    r->independent |= twincache_cache_worlds(cache) == TWINCACHE_WORLDS_INDEPENDENT;
    int scm_only = d->samples == 0;
    if (i == 0 && !o->quiet && !scm_only) { /* of the first source's first graphs */
      r->train_end = n;
      measure_sortability(r, cache);
    }
    twincache_cache_close(cache);
    if (n == 0) {
      fprintf(stderr, PROG ": --mix: cache %u (%s) holds no graphs yet\n", i + 1, o->mix_path[i]);
      return 1;
    }
    if (scm_only && !o->fresh_rows) {
      fprintf(stderr, PROG ": --mix: cache %u (%s) stores SCMs only (no samples): train on fresh worlds "
              "with --fresh-rows S\n", i + 1, o->mix_path[i]);
      return 1;
    }
    r->count += n;
  }
  r->train_end = r->count;
  if (o->val_cache && val_cache_check(r) != 0) return 1;
  return 0;
}

/* The graphs the cache holds, [first, count) (a shard opened alone starts
 * past 0), and the train/validation split point inside them. */
static int split_cache(run *r) {
  const opts *o = &r->o;
  twincache_cache *cache = NULL;
  if (o->mix_n) return split_mixture(r);
  if (!o->cache) { /* --predict-only without --cache: the validation cache gives the layout */
    if (val_cache_check(r) != 0) return 1;
    r->first = 0, r->train_end = r->count = r->val_count;
    r->cache_seed = UINT64_MAX;
    return 0;
  }
  uint32_t M = o->local_nodes, W = (uint32_t)r->dist.world;
  if (M && W % M != 0) {
    fprintf(stderr, PROG ": --local-nodes %u must divide the %u rank(s): each node runs ranks / M of them "
            "(see --help)\n", M, W);
    return 1;
  }
  /* local mode: this rank's node's part of the set (rank / (W / M)) */
  int st = M ? twincache_cache_open_part(o->cache, (uint32_t)r->dist.rank / (W / M), M, &cache)
             : twincache_cache_open(o->cache, &cache);
  if (st != 0) {
    fprintf(stderr, PROG ": cannot open cache: %s\n", twincache_last_error());
    return 1;
  }
  r->count = twincache_cache_count(cache);
  r->first = twincache_cache_first(cache);
  if (r->first > r->count) r->first = r->count; /* a shard none of whose graphs is committed */
  twincache_dims dims = *twincache_cache_dims(cache);
  r->dims = dims;
  r->cache_tag = twincache_cache_tag(cache);
  r->cache_seed = train_agree_config_seed(twincache_cache_config(cache));
  r->independent = twincache_cache_worlds(cache) == TWINCACHE_WORLDS_INDEPENDENT;
  if (dims.samples == 0 && !o->fresh_rows) {
    fprintf(stderr, PROG ": cache %s stores SCMs only (no samples): train on fresh worlds with "
            "--fresh-rows S\n", o->cache);
    twincache_cache_close(cache);
    return 1;
  }
  r->val_fresh = o->fresh_rows && dims.samples != o->fresh_rows; /* the held-out tail's */
  r->train_end = r->first + (uint64_t)floor((1.0 - o->val_split) * (double)(r->count - r->first));
  if (!o->quiet) measure_sortability(r, cache);
  twincache_cache_close(cache);
  if (o->val_cache && val_cache_check(r) != 0) return 1;
  if (r->train_end == r->first) {
    fprintf(stderr, PROG ": cache %s holds %" PRIu64 " graphs: nothing left to train on with "
            "--val-split %g\n", o->cache, r->count - r->first, o->val_split);
    return 1;
  }
  return 0;
}

/* --checkpoint FILE: refused before anything is trained when FILE is a
 * directory (or anything but a regular file) or FILE.tmp cannot be created
 * (no such directory, no write permission, read-only file system): else the
 * run would fail only at its first checkpoint, its steps lost. Probes by
 * creating FILE.tmp, as tc_checkpoint_save does first, and removing it. */
static int checkpoint_path_check(const opts *o) {
  struct stat st;
  if (!o->checkpoint) return 0;
  if (o->checkpoint[0] == '\0') {
    fprintf(stderr, PROG ": --checkpoint: empty file name\n");
    return 1;
  }
  if (stat(o->checkpoint, &st) == 0 && !S_ISREG(st.st_mode)) {
    fprintf(stderr, PROG ": --checkpoint: %s is %s, not a file; give a file name (the checkpoint is "
            "written to FILE.tmp, then renamed over FILE)\n", o->checkpoint,
            S_ISDIR(st.st_mode) ? "a directory" : "not a regular file");
    return 1;
  }
  size_t n = strlen(o->checkpoint);
  char *tmp = malloc(n + sizeof ".tmp");
  if (!tmp) {
    fprintf(stderr, PROG ": out of memory\n");
    return 1;
  }
  memcpy(tmp, o->checkpoint, n);
  memcpy(tmp + n, ".tmp", sizeof ".tmp");
  int existed = stat(tmp, &st) == 0, rc = 0;
  int fd = open(tmp, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    fprintf(stderr, PROG ": --checkpoint: cannot create %s: %s\n", tmp, strerror(errno));
    rc = 1;
  } else {
    close(fd);
    if (!existed) unlink(tmp); /* a leftover of a crashed save is the next save's to replace */
  }
  free(tmp);
  return rc;
}

/* The model (initialised from --seed) and the AdamW settings. */
static int model_create(run *r) {
  const opts *o = &r->o;
  r->model = tc_model_create(o->seed);
  if (!r->model) {
    fprintf(stderr, PROG ": out of memory\n");
    return 1;
  }
  r->optim = (tc_optim){.lr = (float)o->lr, .weight_decay = (float)o->weight_decay,
                        .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f,
                        .pos_weight = (float)o->pos_weight, .warmup_steps = o->warmup,
                        .total_steps = o->steps};
  r->loader_seed = o->seed;
  return 0;
}

/* --resume: loads the checkpoint into the model and its loader state into
 * r->stream; refuses, naming the flag, an option that fixes the batch
 * stream and differs from the checkpoint's (--batch, --seed, the train
 * range = --val-split of the cache); the loader checks the rest of the
 * state (the cache's tag, ...) when it opens. The other options apply to
 * this run and are printed in one line. */
static int resume_from(run *r) {
  const opts *o = &r->o;
  tc_checkpoint_info info;
  if (tc_checkpoint_load(o->resume, r->model, &info) != 0) {
    fprintf(stderr, PROG ": --resume: %s\n", twincache_last_error());
    return 1;
  }
  const twincache_loader_state *s = &info.stream;
  /* nothing to train: the model alone is used, so the options that fix the
   * stream need not match the checkpoint's */
  r->predict_only = o->predict_only || (o->predict && info.step >= o->steps);
  if (r->predict_only) {
    r->step0 = info.step;
    if (!o->quiet)
      fprintf(r->text, "predict only: the model of %s at step %" PRIu64 ", nothing trained\n",
              o->resume, info.step);
    return 0;
  }
  /* the global batch (per-rank --batch x ranks) fixes the stream and the
   * steps; the ranks may change (elastic resume: the loader continues the
   * global order where every rank of the checkpoint's world had read to) */
  uint64_t global = (uint64_t)s->batch_size * s->world_size;
  uint32_t world = (uint32_t)r->dist.world;
  if (global % world != 0) {
    fprintf(stderr, PROG ": --resume: checkpoint %s has a global batch of %" PRIu64 " graphs (--batch %"
            PRIu32 " x %" PRIu32 " rank(s)), which does not divide over %" PRIu32 " rank(s); resume "
            "with a number of ranks that divides %" PRIu64 " (see --help)\n", o->resume, global,
            s->batch_size, s->world_size, world, global);
    return 1;
  }
  if ((uint64_t)o->batch * world != global) {
    fprintf(stderr, PROG ": --batch: checkpoint %s was written with a global batch of %" PRIu64
            " graphs (--batch %" PRIu32 " x %" PRIu32 " rank(s)), this run has --batch %" PRIu32
            " x %" PRIu32 " rank(s); the global batch cannot change on --resume: use --batch %"
            PRIu64 " (see --help)\n", o->resume, global, s->batch_size, s->world_size, o->batch,
            world, global / world);
    return 1;
  }
  if (info.fresh_rows != o->fresh_rows || info.resample_every != o->resample_every) {
    fprintf(stderr, PROG ": --fresh-rows/--resample-every: checkpoint %s was written with --fresh-rows %"
            PRIu32 " --resample-every %" PRIu32 " (0 rows: the stored worlds), this run has %" PRIu32 " and %"
            PRIu32 "; they cannot change on --resume (see --help)\n", o->resume, info.fresh_rows,
            info.resample_every, o->fresh_rows, o->resample_every);
    return 1;
  }
  if (info.seed != o->seed) { /* the loader's seed is checked at open */
    fprintf(stderr, PROG ": --seed: checkpoint %s was written with --seed %" PRIu64 ", this run "
            "has %" PRIu64 "; --seed cannot change on --resume (see --help)\n", o->resume,
            info.seed, o->seed);
    return 1;
  }
  if (!o->mix_n && (s->index_begin != r->first || s->index_end != r->train_end)) { /* a mixture's: the loader's */
    fprintf(stderr, PROG ": --val-split: checkpoint %s was written with a train range of [%" PRIu64
            ", %" PRIu64 ") graphs, this run has [%" PRIu64 ", %" PRIu64 ") (--val-split %g of %" PRIu64
            " graphs in %s); --val-split and the cache cannot change on --resume (see --help)\n",
            o->resume, s->index_begin, s->index_end, r->first, r->train_end, o->val_split,
            r->count - r->first, o->cache);
    return 1;
  }
  /* each step takes one batch of the endless stream, from batch 0 at step 0
   * (a stream resumed at another world counts from its origin) */
  if (s->origin == 0 && s->next_seq != info.step) {
    fprintf(stderr, PROG ": --resume: checkpoint %s is inconsistent: step %" PRIu64 " but the "
            "loader is at batch %" PRIu64 "\n", o->resume, info.step, s->next_seq);
    return 1;
  }
  if (info.step >= o->steps) {
    fprintf(stderr, PROG ": --resume: checkpoint %s is at step %" PRIu64 ", nothing left "
            "of --steps %" PRIu64 " (to predict with it: --predict-only, see --help)\n", o->resume,
            info.step, o->steps);
    return 1;
  }
  r->stream = *s;
  /* rank 0 wrote it. In the same world every rank takes its own rank (the
   * ranks step in lockstep); in another world the state stays rank 0's, a
   * point of the global order that the loader maps onto this rank (a rank
   * of the new world may not exist in the old one) */
  if (s->world_size == (uint32_t)r->dist.world) r->stream.rank = (uint32_t)r->dist.rank;
  r->step0 = info.step; /* seq0: the loader's next_seq at open (0 after a change of world) */
  if (!o->quiet) {
    fprintf(r->text, "resumed from %s at step %" PRIu64 " (loader state: batch %" PRIu64
            " of the stream)\n", o->resume, info.step, s->next_seq);
    train_flags_print_resumable(r->text, o);
  }
  return 0;
}

/* The train stream (shuffled, endless, resumable: on --resume from the
 * checkpoint's loader state, which must match the cache and options); the
 * batch layout is the loader's. */
static int open_train_stream(run *r, twincache_loader **tl) {
  const opts *o = &r->o;
  twincache_loader_options lo;
  twincache_loader_options_init(&lo);
  lo.batch_size = o->batch, lo.epochs = 0, lo.shuffle = 1, lo.seed = r->loader_seed;
  lo.threads = o->threads, lo.index_begin = r->first, lo.index_end = r->train_end;
  lo.rank = (uint32_t)r->dist.rank, lo.world_size = (uint32_t)r->dist.world;
  if (o->local_nodes) lo.local_nodes = o->local_nodes, lo.index_begin = lo.index_end = 0; /* the whole set: --val-cache validates */
  if (o->fresh_rows)
    lo.samples = TWINCACHE_SAMPLES_FRESH, lo.rows = o->fresh_rows, lo.resample_every = o->resample_every;
  lo.alloc = r->be->host_alloc, lo.free = r->be->host_free, lo.layout = r->be->layout;
  /* predict only: opened for its layout alone, at the stream's start (over
   * the validation cache when no --cache is given) */
  const char *path = o->cache ? o->cache : o->val_cache;
  if (!o->cache) { /* as train_eval_open opens it */
    lo.samples = TWINCACHE_SAMPLES_STORED, lo.rows = 0, lo.resample_every = 1;
    if (r->val_fresh)
      lo.samples = TWINCACHE_SAMPLES_FRESH, lo.rows = o->fresh_rows, lo.resample_every = UINT32_MAX;
  }
  const twincache_loader_state *state = o->resume && !r->predict_only ? &r->stream : NULL;
  int st;
  if (o->mix_n) { /* each source whole */
    lo.index_begin = lo.index_end = 0;
    st = twincache_loader_open_mixture(o->mix_path, o->mix_weight, o->mix_n, &lo, state, tl);
  } else {
    st = twincache_loader_open(path, &lo, state, tl);
  }
  if (st == TWINCACHE_EINVAL && o->resume) {
    /* the loader names the field of the state that differs */
    fprintf(stderr, PROG ": --resume: checkpoint %s does not match cache %s with these options: "
            "%s\n", o->resume, path, twincache_last_error());
    return 1;
  }
  if (st != 0) {
    if (o->mix_n)
      fprintf(stderr, PROG ": --mix: cannot open the mixture: %s\n", twincache_last_error());
    else
      fprintf(stderr, PROG ": cannot open the training range of %s: %s\n", path, twincache_last_error());
    return 1;
  }
  twincache_loader_get_state(*tl, &r->stream);
  r->seq0 = r->stream.next_seq;
  r->layout = *twincache_loader_layout(*tl);
  return 0;
}

/* --log: the metrics CSV and its header; --batch-log: the batches' CSV. */
static int log_open(run *r) {
  const opts *o = &r->o;
  if (o->log) {
    r->log = fopen(o->log, "w");
    if (!r->log) {
      fprintf(stderr, PROG ": --log: cannot create %s: %s\n", o->log, strerror(errno));
      return 1;
    }
    fprintf(r->log, "step,train_loss,lr,val_loss,val_auroc,val_auprc,val_shd,baseline_auprc\n");
  }
  if (o->batch_log) {
    r->batch_log = fopen(o->batch_log, "w");
    if (!r->batch_log) {
      fprintf(stderr, PROG ": --batch-log: cannot create %s: %s\n", o->batch_log,
              strerror(errno));
      return 1;
    }
    fprintf(r->batch_log, "step,epoch,seq,graph_ids\n");
  }
  return 0;
}

static void print_plan(const run *r, twincache_loader *tl) {
  const opts *o = &r->o;
  if (o->quiet) return;
  char range[64] = ""; /* a shard's graphs are not 0.. */
  if (r->first) snprintf(range, sizeof range, " %" PRIu64 "..%" PRIu64, r->first, r->count - 1);
  if (o->mix_n) {
    uint32_t per[TC_TRAIN_MIX_MAX] = {0};
    twincache_loader_mix_counts(tl, per, TC_TRAIN_MIX_MAX);
    fprintf(r->text, "mixture of %u caches, %" PRIu64 " graphs, each batch of %u:", o->mix_n, r->count, o->batch);
    for (uint32_t i = 0; i < o->mix_n; i++)
      fprintf(r->text, "%s %s (weight %g: %u)", i ? "," : "", o->mix_path[i], o->mix_weight[i], per[i]);
    fprintf(r->text, "; N=%u K=%u S=%u (the largest), %zu-byte slabs, %" PRIu64 " steps\n", r->layout.nodes,
            r->layout.inter, r->layout.samples, r->layout.bytes, o->steps);
  } else {
    fprintf(r->text, "cache %s: %" PRIu64 " graphs%s (train %" PRIu64 ", validation %" PRIu64
            "), N=%u K=%u S=%u, batch %u, %zu-byte slabs, %" PRIu64 " steps\n",
            o->cache, r->count - r->first, range, r->train_end - r->first, r->count - r->train_end,
            r->layout.nodes, r->layout.inter, r->layout.samples, o->batch, r->layout.bytes, o->steps);
  }
  if (r->sort_graphs)
    fprintf(r->text, "data: varsortability %.3f, R2-sortability %.3f (first %u training graphs; 0.5 = "
            "chance, near 1: sorting nodes by it nearly gives the causal order)\n",
            r->sort_var, r->sort_r2, r->sort_graphs);
  else
    fprintf(r->text, "data: sortability not measured (the cache stores no samples)\n");
  if (r->independent) /* MODEL.md's T pairs rows as twins: say what it measures here */
    fprintf(r->text, "worlds: %s (each its own noise): the model's twin differences pair row s of "
            "a world with base row s, which share no noise, so T is no longer an exact effect (for a do(): the "
            "base world's regression slope, biased where target and node share a cause; train/MODEL.md)\n",
            o->mix_n ? "independent in some sources" : "independent");
  if (r->dist.world > 1 || r->nccl) {
    char mpi[128], nccl[600] = "";
    tc_dist_describe(mpi, sizeof mpi);
    if (r->nccl) tc_nccl_describe(r->nccl, nccl, sizeof nccl);
    fprintf(r->text, "data parallel: %d rank(s) of batch %u (global batch %u), gradients averaged "
            "every step over %s%s%s; rank 0 logs, evaluates and checkpoints\n", r->dist.world, o->batch,
            o->batch * (uint32_t)r->dist.world, r->nccl ? nccl : mpi,
            r->nccl && r->dist.world > 1 ? ", its id over " : "", r->nccl && r->dist.world > 1 ? mpi : "");
  }
  if (o->val_cache)
    fprintf(r->text, "validation cache %s: %" PRIu64 " graphs, all validated on\n", o->val_cache,
            r->val_count);
  if (o->fresh_rows)
    fprintf(r->text, "worlds: fresh, %u rows each, drawn anew every %u epoch(s) of the stored SCMs; "
            "validation on %s\n", o->fresh_rows, o->resample_every,
            r->val_fresh ? "fresh worlds (epoch 0's draw, the same at every evaluation)" : "the stored worlds");
}

/* Ranks other than 0 train silently: no text, CSV, JSON, checkpoint or
 * evaluation (rank 0 does those for the job). */
static void quiet_other_ranks(run *r) {
  if (r->dist.rank == 0) return;
  r->o.quiet = 1, r->o.json = 0;
  r->o.log = r->o.batch_log = r->o.checkpoint = NULL;
}

/* The run as named steps; returns the exit status. */
static int train_main(run *r, int argc, char **argv) {
  twincache_loader *tl = NULL;
  int rc = train_flags_parse(argc, argv, &r->o);
  if (rc >= 0) return rc;
  quiet_other_ranks(r);
  const opts *o = &r->o;
  r->text = o->json ? stderr : stdout;
  if (o->bench_h2d) return train_bench_h2d(o);

  rc = 1;
  if (checkpoint_path_check(o) || train_predict_check(o) || pick_device(r) || split_cache(r) ||
      model_create(r))
    goto cleanup;
  if (o->resume && resume_from(r)) goto cleanup;
  r->end_step = o->steps;
  if (o->stop_after && r->step0 + o->stop_after < o->steps) r->end_step = r->step0 + o->stop_after;
  if (train_agree(r)) goto cleanup;
  if (open_train_stream(r, &tl) || r->be->create(r) || train_eval_open(r) || log_open(r))
    goto cleanup;
  if (!r->predict_only) print_plan(r, tl);

  if (!r->predict_only) {
    loop_stats ls = {0};
    uint64_t t0 = tc_now_ns();
    if (r->be->loop(r, tl, &ls) != 0) goto cleanup;
    train_report(r, tl, &ls, tc_now_ns() - t0);
  }
  if (train_predict(r) != 0) goto cleanup;
  rc = 0;

cleanup:
  twincache_loader_close(r->val);
  twincache_loader_close(tl);
  if (r->log && fclose(r->log) != 0 && rc == 0) {
    fprintf(stderr, PROG ": --log: cannot write %s\n", o->log);
    rc = 1;
  }
  if (r->batch_log && (ferror(r->batch_log) | fclose(r->batch_log)) != 0 && rc == 0) {
    fprintf(stderr, PROG ": --batch-log: cannot write %s\n", o->batch_log);
    rc = 1;
  }
  if (r->be) r->be->destroy(r);
  tc_model_free(r->model);
  return rc;
}

/* Under an MPI launcher every rank runs train_main; one that fails ends the
 * whole job with its status (its message printed first), so no rank waits
 * in an all-reduce for it; ranks that all found the same disagreement
 * (train_agree) leave together. */
int main(int argc, char **argv) {
  run R;
  memset(&R, 0, sizeof R);
  if (tc_dist_init(&R.dist, &argc, &argv) != 0) {
    fprintf(stderr, PROG ": cannot join the MPI job: %s\n", twincache_last_error());
    return 1;
  }
  int rc = train_main(&R, argc, argv);
  /* a disagreement every rank learnt of ends by MPI_Finalize: no rank waits */
  if (rc != 0 && !R.agree_failed) tc_dist_abort(&R.dist, rc);
  tc_dist_finalize(&R.dist);
  return rc;
}
