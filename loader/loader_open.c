/* loader_open.c — opening a loader: the options (defaults and checks), a
 * source opened and sized (one cache, a set or a shard; local mode's part of
 * a set; a mixture's caches) with its plan (tc_plan.h, tc_mix.h), then the
 * ring started (tc_loader_start, loader.c). Every refusal names the option
 * or the source at fault. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tc_error.h"
#include "tc_loader.h"
#include "twincache_loader.h"

#define TC_MAX_THREADS 100 /* below LMDB's default 126 reader slots */
#define TC_MAX_SLOTS 4096
#define TC_MAX_BATCH 65536

/* ---- options ------------------------------------------------------------- */
void twincache_loader_options_init(twincache_loader_options *o) {
  memset(o, 0, sizeof *o);
  o->batch_size = 32;
  o->epochs = 1;
  o->shuffle = 1;
  o->world_size = 1;
  o->threads = 2;
  o->slots = 0; /* auto: 2*threads+2 of the threads given at open */
  o->corrupt_policy = TWINCACHE_CORRUPT_FAIL;
  o->release_on_any_thread = 1;
  o->equal_ranks = 1;
  o->samples = TWINCACHE_SAMPLES_STORED;
  o->rows = 0;
  o->resample_every = 1;
  o->withhold_targets = 0;
  o->buckets = 0;
  o->source_samples = NULL;
}

static void *default_alloc(size_t bytes, void *user) {
  void *p = NULL;
  (void)user;
  return posix_memalign(&p, 64, bytes) == 0 ? p : NULL;
}
static void default_free(void *ptr, void *user) {
  (void)user;
  free(ptr);
}

/* 1 when the cache holds observed data (an import, FORMAT.md 3.11): its
 * config says "observed":true, which every importer writes. The frames
 * say it too (flag OBSERVED), and a fresh fill refuses them one by one. */
static int tc_loader_cache_observed(const twincache_cache *c) {
  return twincache_cache_worlds(c) == TWINCACHE_WORLDS_OBSERVED;
}

/* ---- open / close --------------------------------------------------------- */
static int validate(const twincache_loader_options *o) {
  if (o->batch_size == 0 || o->batch_size > TC_MAX_BATCH)
    return tc_error_set(TWINCACHE_EINVAL, "option batch_size must be 1..%d (got %u)",
                        TC_MAX_BATCH, o->batch_size);
  if (o->world_size == 0)
    return tc_error_set(TWINCACHE_EINVAL, "option world_size must be >= 1 (got 0)");
  if (o->rank >= o->world_size)
    return tc_error_set(TWINCACHE_EINVAL, "option rank must be < world_size %u (got %u)",
                        o->world_size, o->rank);
  if (o->threads == 0 || o->threads > TC_MAX_THREADS)
    return tc_error_set(TWINCACHE_EINVAL, "option threads must be 1..%d (got %u)",
                        TC_MAX_THREADS, o->threads);
  if (o->slots > TC_MAX_SLOTS)
    return tc_error_set(TWINCACHE_EINVAL, "option slots must be 0 (auto) or 1..%d (got %u)",
                        TC_MAX_SLOTS, o->slots);
  if (o->corrupt_policy != TWINCACHE_CORRUPT_FAIL && o->corrupt_policy != TWINCACHE_CORRUPT_SKIP)
    return tc_error_set(TWINCACHE_EINVAL, "option corrupt_policy must be FAIL (0) or SKIP (1) (got %d)",
                        o->corrupt_policy);
  if (!o->alloc != !o->free)
    return tc_error_set(TWINCACHE_EINVAL, "options alloc and free must be set together");
  if (o->layout != TWINCACHE_LAYOUT_DENSE && o->layout != TWINCACHE_LAYOUT_COMPACT &&
      o->layout != TWINCACHE_LAYOUT_SCM)
    return tc_error_set(TWINCACHE_EINVAL, "option layout must be DENSE (0), COMPACT (1) or SCM (2) (got %d)",
                        o->layout);
  if (o->layout == TWINCACHE_LAYOUT_SCM && o->samples != TWINCACHE_SAMPLES_FRESH)
    return tc_error_set(TWINCACHE_EINVAL, "option layout SCM hands out SCMs for a sampler to draw fresh worlds "
                        "from: it needs samples = FRESH and rows = S");
  if (o->withhold_targets != 0 && o->withhold_targets != 1)
    return tc_error_set(TWINCACHE_EINVAL, "option withhold_targets must be 0 or 1 (got %d)", o->withhold_targets);
  if (o->withhold_targets && o->layout != TWINCACHE_LAYOUT_DENSE)
    return tc_error_set(TWINCACHE_EINVAL, "option withhold_targets needs the DENSE layout: a compact batch's "
                        "target and value rebuild the do() columns");
  if (o->samples == TWINCACHE_SAMPLES_FRESH) {
    if (o->rows == 0 || o->rows > TWINCACHE_MAX_SAMPLES)
      return tc_error_set(TWINCACHE_EINVAL, "option rows must be 1..%d with fresh samples (got %u)",
                       TWINCACHE_MAX_SAMPLES, o->rows);
    if (o->resample_every == 0)
      return tc_error_set(TWINCACHE_EINVAL, "option resample_every must be >= 1 (got 0)");
  } else if (o->samples == TWINCACHE_SAMPLES_STORED) {
    if (o->rows != 0)
      return tc_error_set(TWINCACHE_EINVAL, "option rows (%u) needs samples = FRESH: stored worlds have the cache's rows",
                       o->rows);
    if (o->resample_every != 1)
      return tc_error_set(TWINCACHE_EINVAL, "option resample_every (%u) needs samples = FRESH", o->resample_every);
  } else {
    return tc_error_set(TWINCACHE_EINVAL, "option samples must be STORED (0) or FRESH (1) (got %d)", o->samples);
  }
  return TWINCACHE_OK;
}

/* Size buckets: reads each graph's N from its frame header (no
 * decompression; the frame is checked in full when it is decoded) and
 * sorts the range by it into l->groups, the plan's. One pass over the
 * range's frames. */
static int read_nodes(twincache_loader *l) {
  uint64_t n = l->plan.n;
  tc_cache_txn *t = NULL;
  tc_chunk_cache cc = {1, calloc(TC_CHUNK_CACHE_ENTRIES, sizeof(tc_chunk_entry))};
  uint16_t *nodes = malloc(n * sizeof *nodes);
  int rc = TWINCACHE_ENOMEM;
  if (!cc.entries || !nodes) {
    tc_error_set(rc, "size buckets: no memory for the node counts of %llu graphs", (unsigned long long)n);
    goto cleanup;
  }
  if ((rc = tc_cache_txn_create(l->cache, &t)) != TWINCACHE_OK || (rc = tc_cache_txn_renew(t)) != TWINCACHE_OK)
    goto cleanup;
  for (uint64_t i = 0; i < n; i++) {
    const void *frame;
    size_t size;
    uint32_t n_nodes = 0;
    uint64_t index = l->plan.begin + i;
    if ((rc = tc_cache_find_frame(l->cache, t, &cc, index, &frame, &size)) != TWINCACHE_OK ||
        (rc = twincache_frame_peek(frame, size, NULL, &n_nodes, NULL, NULL, NULL)) != TWINCACHE_OK) {
      if (rc == TWINCACHE_ENOTFOUND) rc = TWINCACHE_ECORRUPT;
      tc_error_wrap(rc, "size buckets: the header of graph %llu", (unsigned long long)index);
      goto cleanup;
    }
    nodes[i] = (uint16_t)n_nodes; /* 1..256: the peek checked the header */
  }
  if ((rc = tc_plan_groups_init(&l->groups, nodes, n)) == TWINCACHE_OK) l->plan.groups = &l->groups;

cleanup:
  tc_cache_txn_free(t);
  free(cc.entries);
  free(nodes);
  return rc;
}

/* Local mode: opens node k's part of the set at path (the node of this
 * rank) and builds the node's plan. */
static int open_local(twincache_loader *l, const char *path) {
  const twincache_loader_options *o = &l->opt;
  uint32_t M = o->local_nodes;
  if (o->world_size % M)
    return tc_error_set(TWINCACHE_EINVAL, "option local_nodes %u must divide world_size %u (each node runs "
                        "world_size / local_nodes ranks)", M, o->world_size);
  if (o->index_begin || o->index_end)
    return tc_error_set(TWINCACHE_EINVAL, "option local_nodes reads the whole set: index_begin and index_end must "
                        "be 0 (got %llu, %llu)", (unsigned long long)o->index_begin,
                        (unsigned long long)o->index_end);
  uint32_t node = o->rank / (o->world_size / M);
  int rc = twincache_cache_open_part(path, node, M, &l->cache);
  if (rc != TWINCACHE_OK) return tc_error_wrap(rc, "local mode, node %u of %u (rank %u of %u)", node, M, o->rank,
                                               o->world_size);
  uint32_t shards = twincache_cache_members(l->cache);
  uint64_t *ends = malloc(shards * sizeof *ends), first;
  if (!ends) return tc_error_set(TWINCACHE_ENOMEM, "local mode: out of memory");
  for (uint32_t i = 0; i < shards; i++) tc_set_range(l->cache, i, &first, &ends[i]);
  rc = tc_plan_local_init(&l->local, ends, shards, node, M);
  free(ends);
  if (rc == TWINCACHE_OK) rc = tc_plan_init_local(&l->plan, o, twincache_cache_tag(l->cache), &l->local);
  return rc;
}

/* Step 1: opens the cache, resolves the graph range and the batch layout,
 * and sizes the stream (batches per epoch, positions, total). */
static int open_stream(twincache_loader *l, const char *path) {
  const twincache_loader_options *o = &l->opt;
  int rc = o->local_nodes ? open_local(l, path) : twincache_cache_open(path, &l->cache);
  if (rc != TWINCACHE_OK) {
    return tc_error_wrap(rc, "cannot open cache"); /* the cache's message names the file */
  }
  const twincache_dims *d = twincache_cache_dims(l->cache);
  uint64_t count = twincache_cache_count(l->cache);
  uint64_t end = o->index_end ? o->index_end : count;
  /* a shard opened alone holds graphs [first, count): by default its range */
  uint64_t first = twincache_cache_first(l->cache), begin = o->index_begin ? o->index_begin : first;
  if (end > count)
    return tc_error_set(TWINCACHE_EINVAL, "option index_end %llu is beyond the %llu graphs committed",
                        (unsigned long long)o->index_end, (unsigned long long)count);
  if (count == 0) /* an interrupted generation, or damage that made LMDB fall back to an older state */
    return tc_error_set(TWINCACHE_EINVAL, "cache %s holds 0 of the %llu graphs it was generated for: "
                        "the generation was interrupted (rerun twincache-gen to finish) or the cache is "
                        "damaged (twincache-inspect verify)", path, (unsigned long long)d->graphs);
  if (begin < first)
    return tc_error_set(TWINCACHE_EINVAL, "option index_begin %llu: %s holds graphs %llu.. only (a shard; open "
                        "its set)", (unsigned long long)begin, path, (unsigned long long)first);
  if (begin >= end)
    return tc_error_set(TWINCACHE_EINVAL, "graph range [index_begin %llu, %llu) is empty",
                        (unsigned long long)begin, (unsigned long long)end);
  if (!o->local_nodes &&
      (rc = tc_plan_init(&l->plan, o, twincache_cache_tag(l->cache), begin, end - begin)) != TWINCACHE_OK)
    return rc;
  if (l->plan.bucket && (rc = read_nodes(l)) != TWINCACHE_OK) return rc;
  if (o->samples == TWINCACHE_SAMPLES_FRESH && tc_loader_cache_observed(l->cache))
    return tc_error_set(TWINCACHE_EINVAL, "cache %s holds observed data (imported by twincache-import, FORMAT.md "
                        "3.11): it has no SCM to draw fresh worlds from; open it with samples = STORED", path);
  if (o->samples == TWINCACHE_SAMPLES_STORED && d->samples == 0)
    return tc_error_set(TWINCACHE_EINVAL, "cache %s stores SCMs only (no samples): open it with samples = FRESH and rows = S",
                     path);
  uint32_t rows = o->samples == TWINCACHE_SAMPLES_FRESH ? o->rows : d->samples;
  if (twincache_batch_layout_init(&l->layout, o->batch_size, d->max_nodes, d->max_inter, rows) != TWINCACHE_OK ||
      l->layout.bytes > SIZE_MAX / 4)
    return tc_error_set(TWINCACHE_EINVAL, "option batch_size %u makes a slab too large", o->batch_size);
  if (o->layout == TWINCACHE_LAYOUT_SCM) {
    if (twincache_scm_layout_init(&l->scm_layout, o->batch_size, d->max_nodes, d->max_inter, d->hidden,
                                  rows) != TWINCACHE_OK)
      return tc_error_wrap(TWINCACHE_EINVAL, "option layout SCM");
    twincache_batch_layout dims = {0}; /* no dense arrays: sizes and the slab's bytes only */
    dims.graphs = l->layout.graphs, dims.nodes = l->layout.nodes;
    dims.inter = l->layout.inter, dims.samples = l->layout.samples;
    dims.bytes = l->scm_layout.bytes;
    l->layout = dims;
  }
  return TWINCACHE_OK;
}

/* The first steps of every open: the options (NULL: the defaults) checked
 * and copied, with the allocator and slot count resolved, into a new
 * loader *out that owns nothing yet. */
static int loader_new(const twincache_loader_options *opt, twincache_loader **out) {
  twincache_loader_options defaults;
  if (!opt) {
    twincache_loader_options_init(&defaults);
    opt = &defaults;
  }
  int rc = validate(opt);
  if (rc != TWINCACHE_OK) return rc;
  twincache_loader *l = calloc(1, sizeof *l);
  if (!l) return tc_error_set(TWINCACHE_ENOMEM, "out of memory");
  l->opt = *opt;
  if (!l->opt.alloc) {
    l->opt.alloc = default_alloc;
    l->opt.free = default_free;
  }
  if (l->opt.slots == 0) l->opt.slots = 2 * l->opt.threads + 2;
  *out = l;
  return TWINCACHE_OK;
}

int twincache_loader_open(const char *path, const twincache_loader_options *opt,
                          const twincache_loader_state *resume, twincache_loader **out) {
  twincache_loader *l = NULL;
  int rc;

  if (out) *out = NULL;
  if (!path || !out) return tc_error_set(TWINCACHE_EINVAL, "path and out must not be NULL");
  if (opt && opt->source_samples)
    return tc_error_set(TWINCACHE_EINVAL, "option source_samples is a mixture's (twincache_loader_open_mixture); "
                        "one cache takes samples");
  if ((rc = loader_new(opt, &l)) != TWINCACHE_OK) return rc;
  if ((rc = open_stream(l, path)) != TWINCACHE_OK) goto cleanup;
  l->fill = tc_loader_fills[l->opt.layout][l->opt.samples]; /* validate() refused the NULL entry */
  uint64_t seq0 = 0;
  if (resume && (rc = tc_plan_resume(&l->plan, resume, &seq0)) != TWINCACHE_OK) goto cleanup;
  if ((rc = tc_loader_start(l, seq0, l->plan.total)) != TWINCACHE_OK) goto cleanup;
  *out = l;
  l = NULL;
  tc_error_clear();
  rc = TWINCACHE_OK;

cleanup:
  twincache_loader_close(l);
  return rc;
}

/* A mixture's sources: opens each cache (its whole range), checks that the
 * layouts pad together (N, K, H and, dense, the stored worlds' S pad to the
 * largest; with fresh sources S is their rows, which no stored S may
 * exceed; compact: one S, its fill pads no source to another) and builds the mixture
 * plan. */
static int open_sources(twincache_loader *l, const char *const *paths, const double *weights, uint32_t n) {
  const twincache_loader_options *o = &l->opt;
  uint64_t begin[TC_MIX_MAX], count[TC_MIX_MAX], tags[TC_MIX_MAX];
  int rc;
  uint32_t S = 0, fresh_rows = 0; /* the batch's S: the fresh sources' rows, else the largest stored S */
  for (uint32_t i = 0; i < n; i++)
    if (l->src_fresh[i]) S = fresh_rows = o->rows;
  if (o->layout != TWINCACHE_LAYOUT_DENSE && o->layout != TWINCACHE_LAYOUT_COMPACT)
    return tc_error_set(TWINCACHE_EINVAL, "a mixture reads the DENSE or COMPACT layout (layout %d): the SCM slab "
                        "is not padded across sources yet", o->layout);
  if (o->index_begin || o->index_end)
    return tc_error_set(TWINCACHE_EINVAL, "options index_begin/index_end have no meaning for a mixture: each "
                        "source is read whole (open a set or a shard to choose its graphs)");
  for (uint32_t i = 0; i < n; i++) {
    if (!paths[i]) return tc_error_set(TWINCACHE_EINVAL, "mixture source %u: path is NULL", i);
    if ((rc = twincache_cache_open(paths[i], &l->src[i])) != TWINCACHE_OK)
      return tc_error_wrap(rc, "mixture source %u: cannot open cache", i);
    l->nsrc = i + 1; /* close() closes what is open: cache (= src[0]) and src[1..nsrc) */
    if (i == 0) l->cache = l->src[0];
    const twincache_dims *d = twincache_cache_dims(l->src[i]);
    uint64_t first = twincache_cache_first(l->src[i]), end = twincache_cache_count(l->src[i]);
    if (end <= first)
      return tc_error_set(TWINCACHE_EINVAL, "mixture source %u: cache %s holds no graphs yet (an interrupted "
                          "generation: rerun twincache-gen to finish)", i, paths[i]);
    if (l->src_fresh[i] && tc_loader_cache_observed(l->src[i]))
      return tc_error_set(TWINCACHE_EINVAL, "mixture source %u: cache %s holds observed data (imported by "
                          "twincache-import, FORMAT.md 3.11): it has no SCM to draw fresh worlds from; read it "
                          "stored (source_samples STORED)", i, paths[i]);
    if (!l->src_fresh[i] && d->samples == 0)
      return tc_error_set(TWINCACHE_EINVAL, "mixture source %u: cache %s stores SCMs only (no samples): read it "
                          "fresh (samples = FRESH and rows = S)", i, paths[i]);
    if (!l->src_fresh[i] && fresh_rows && d->samples > fresh_rows)
      return tc_error_set(TWINCACHE_EINVAL, "mixture source %u: cache %s stores S = %u samples per world, more "
                          "than the fresh sources' rows = %u, the batch's S (a stored world's rows are padded, "
                          "never cut): give rows >= %u, or read this source fresh", i, paths[i], d->samples,
                          fresh_rows, d->samples);
    if (!l->src_fresh[i] && o->layout == TWINCACHE_LAYOUT_COMPACT && S && d->samples != S)
      return tc_error_set(TWINCACHE_EINVAL, "mixture source %u: cache %s stores S = %u samples per world, the "
                          "batch has S = %u: the compact layout does not pad a source's worlds to another "
                          "S; read the mixture DENSE, or give every source S = %u", i,
                          paths[i], d->samples, S, S);
    if (!l->src_fresh[i] && d->samples > S) S = d->samples;
    if (i == 0) l->dims = *d;
    l->dims.graphs = i ? l->dims.graphs + d->graphs : d->graphs;
    l->dims.max_nodes = d->max_nodes > l->dims.max_nodes ? d->max_nodes : l->dims.max_nodes;
    l->dims.max_inter = d->max_inter > l->dims.max_inter ? d->max_inter : l->dims.max_inter;
    l->dims.hidden = d->hidden > l->dims.hidden ? d->hidden : l->dims.hidden;
    l->dims.samples = d->samples > l->dims.samples ? d->samples : l->dims.samples;
    begin[i] = first;
    count[i] = end - first;
    tags[i] = l->src_tag[i] = twincache_cache_tag(l->src[i]);
  }
  if ((rc = tc_mix_init(&l->mix, weights, begin, count, n, o->batch_size, o->world_size, o->rank, o->epochs,
                        o->shuffle, o->seed)) != TWINCACHE_OK)
    return rc;
  tc_mix_set_tag(&l->mix, tags, l->src_fresh);
  if (twincache_batch_layout_init(&l->layout, o->batch_size, l->dims.max_nodes, l->dims.max_inter,
                                  S) != TWINCACHE_OK ||
      l->layout.bytes > SIZE_MAX / 4)
    return tc_error_set(TWINCACHE_EINVAL, "option batch_size %u makes a slab too large", o->batch_size);
  return TWINCACHE_OK;
}

/* A mixture's options as validate() sees them (*eff: samples = FRESH when
 * any source is fresh, source_samples NULL) and each source's worlds. */
static int mixture_samples(const twincache_loader_options *opt, uint32_t n, twincache_loader_options *eff,
                           uint8_t *fresh) {
  if (opt) *eff = *opt;
  else twincache_loader_options_init(eff);
  int any = 0;
  for (uint32_t i = 0; i < n; i++) {
    int v = eff->source_samples ? eff->source_samples[i] : eff->samples;
    if (v != TWINCACHE_SAMPLES_STORED && v != TWINCACHE_SAMPLES_FRESH)
      return tc_error_set(TWINCACHE_EINVAL, "option source_samples[%u] must be STORED (0) or FRESH (1) (got %d)",
                          i, v);
    fresh[i] = (uint8_t)v;
    any |= v;
  }
  if (eff->source_samples) eff->samples = any ? TWINCACHE_SAMPLES_FRESH : TWINCACHE_SAMPLES_STORED;
  eff->source_samples = NULL;
  return TWINCACHE_OK;
}

int twincache_loader_open_mixture(const char *const *paths, const double *weights, uint32_t n,
                                  const twincache_loader_options *opt, const twincache_loader_state *resume,
                                  twincache_loader **out) {
  twincache_loader *l = NULL;
  int rc;

  if (out) *out = NULL;
  if (!paths || !weights || !out) return tc_error_set(TWINCACHE_EINVAL, "paths, weights and out must not be NULL");
  if (n == 0 || n > TC_MIX_MAX)
    return tc_error_set(TWINCACHE_EINVAL, "a mixture has 1..%d sources (got %u)", TC_MIX_MAX, n);
  if (opt && opt->buckets)
    return tc_error_set(TWINCACHE_EINVAL, "option buckets %d: size buckets group one source's graphs; a "
                        "mixture fixes each source's slots in every batch, so it has none (use 0)", opt->buckets);
  if (opt && opt->local_nodes)
    return tc_error_set(TWINCACHE_EINVAL, "option local_nodes %u: local mode binds ranks to one set's shards; a "
                        "mixture reads several sources (use 0)", opt->local_nodes);
  twincache_loader_options eff;
  uint8_t fresh[TC_MIX_MAX];
  if ((rc = mixture_samples(opt, n, &eff, fresh)) != TWINCACHE_OK) return rc;
  if ((rc = loader_new(&eff, &l)) != TWINCACHE_OK) return rc;
  for (uint32_t i = 0; i < n; i++) {
    l->src_fresh[i] = fresh[i];
    l->src_fill[i] = tc_loader_fills[eff.layout][fresh[i]]; /* (SCM: refused by open_sources) */
  }
  if ((rc = open_sources(l, paths, weights, n)) != TWINCACHE_OK) goto cleanup;
  l->fill = tc_loader_fills[l->opt.layout][l->opt.samples];
  uint64_t seq0 = 0;
  if (resume && (rc = tc_mix_resume(&l->mix, resume, &seq0)) != TWINCACHE_OK) goto cleanup;
  if ((rc = tc_loader_start(l, seq0, l->mix.total)) != TWINCACHE_OK) goto cleanup;
  *out = l;
  l = NULL;
  tc_error_clear();
  rc = TWINCACHE_OK;

cleanup:
  twincache_loader_close(l);
  return rc;
}

