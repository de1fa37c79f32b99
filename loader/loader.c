/* loader.c — the threaded batch loader: the ring of slots, the decode
 * threads and the fill.
 *
 * Which graphs batch `seq` holds is the stream plan's (tc_plan.h): a pure
 * function of (options, range size, origin, seq), positions >= n marked
 * valid = 0 in the slab. Decode threads claim batch numbers in order from
 * one counter and fill slot seq % slots; next() waits for exactly the slot
 * of the seq it must return, so the stream never depends on thread count or
 * timing. A slot is filled through one table over layout x samples
 * (fills[][]).
 *
 * A mixture (twincache_loader_open_mixture) is the same ring over several
 * sources: the stream is the mixture plan's (tc_mix.h), each source has its
 * own cache handle and, in every decode thread, its own read txn and chunk
 * views (one dctx serves them all); the slab has the sources' largest N
 * and K; graph_id carries the source in its top 8 bits (TWINCACHE_MIX_ID);
 * fresh worlds are keyed by the source's tag and the source's own epoch.
 *
 * Handles: each slot hands out its two batch structs alternately, each
 * delivery stamped with a new generation; release() compares the held
 * struct's generation with the slot's, so stale and double releases are
 * refused (TWINCACHE_ESTALE) instead of freeing a batch still in use.
 *
 * Padding stays zero without clearing whole slabs: slabs are zeroed once at
 * open, the decoder writes every column of each row it writes, and each slot
 * remembers per graph position which intervention blocks may still hold an
 * older graph's rows (hi_inter), so only those are cleared. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tc_cache_internal.h"
#include "tc_common.h"
#include "tc_compact.h"
#include "tc_error.h"
#include "tc_fresh.h"
#include "tc_scm_batch.h"
#include "tc_loader_internal.h"
#include "tc_mix.h"
#include "tc_plan.h"
#include "twincache_loader.h"

#define TC_MAX_THREADS 100 /* below LMDB's default 126 reader slots */
#define TC_MAX_SLOTS 4096
#define TC_MAX_BATCH 65536
#define TC_STATS_THREADS 64
/* A decode thread keeps its read txn (and so its parsed chunk views) across
 * batches, but resets it after this long and before it blocks on a full
 * ring, so a generator writing the same cache can still reuse pages. */
#define TC_TXN_NS 1000000000ull
#define TC_WAIT_TXN_NS 100000000ull /* a wait this long ends the txn */
#define TC_PREFETCH_BYTES 8192        /* of the next graph's frame: all of a default one */
/* With a CPU to spare, next() sleeps this many times without asking to be
 * woken (see twincache_loader_next) before it asks a decode thread to. */
#define TC_TIMED_WAITS 4

enum { SLOT_FREE = 0, SLOT_FILLING, SLOT_READY, SLOT_HELD };

typedef struct tc_slot {
  twincache_batch views;      /* layout, slab views and the fill's facts */
  twincache_batch handed[2];  /* what next() hands out, alternately */
  uint32_t handouts;          /* hand-outs of this slot, under mu */
  uint64_t generation;        /* of the batch held now (valid when HELD) */
  int state;            /* SLOT_*, under the loader's mutex */
  int status;           /* result of the fill, valid when READY */
  uint64_t seq;         /* the batch it holds when FILLING/READY/HELD */
  uint64_t start_ns;    /* when its fill began, valid when FILLING */
  uint32_t *hi_inter;   /* (G) intervention blocks [0, hi) that may be non-zero */
  uint8_t *base_dirty;  /* (G) 1 when the base rows may be non-zero */
  char error[512];      /* what went wrong, when status is an error */
} tc_slot;

typedef struct tc_worker {
  struct twincache_loader *l;
  uint32_t id;
  pthread_t thread;
  int started;
  twincache_dctx *dctx;
  tc_cache_txn *txn[TC_MIX_MAX]; /* one per source, live across batches, see TC_TXN_NS */
  int txn_live;
  uint64_t txn_start_ns;
  tc_chunk_cache cc[TC_MIX_MAX]; /* chunk views of each source's live txn */
  twincache_graph g;    /* views into the slot being filled */
  tc_fresh *fresh;      /* fresh mode's SCM and sampler, else NULL */
  tc_scm_packer *packer; /* the SCM layout's scratch, else NULL */
  uint16_t *target;     /* (K) scratch: decoded targets */
  uint8_t *n_targets;   /* (K) scratch: targets per world (multi-target) */
  uint16_t *more_target; /* (K, TWINCACHE_MAX_TARGETS-1) scratch */
  float *more_value;     /* (K, TWINCACHE_MAX_TARGETS-1) scratch */
  uint8_t *kind;        /* (K) */
  float *value;         /* (K) */
  uint32_t src_samples; /* stored S of the source of the graph being decoded */
} tc_worker;

struct twincache_loader {
  twincache_loader_options opt;
  twincache_cache *cache;     /* the source; a mixture's source 0 (= src[0]) */
  /* A mixture (twincache_loader_open_mixture): nsrc >= 1 sources, each with
   * its own cache handle; the stream is mix's, not plan's. nsrc 0: one
   * source, the stream is plan's. */
  uint32_t nsrc;
  twincache_cache *src[TC_MIX_MAX];
  tc_mix mix;
  twincache_dims dims;        /* a mixture's: the sources' largest N, K, H, S (stored: one S) */
  uint64_t src_tag[TC_MIX_MAX]; /* a mixture's: each source's cache tag (fresh worlds' keys) */
  uint8_t src_fresh[TC_MIX_MAX]; /* a mixture's: 1 where the source's worlds are fresh */
  int (*src_fill[TC_MIX_MAX])(tc_worker *, tc_slot *, uint32_t, uint64_t, const void *, size_t, uint64_t); /* a mixture's: fills[DENSE][each source's samples] */
  twincache_batch_layout layout; /* SCM layout: only G, N, K, S and bytes (scm_layout's) */
  twincache_scm_layout scm_layout; /* TWINCACHE_LAYOUT_SCM, else zero */
  tc_plan plan;               /* which graphs each batch holds (range, ranks, epochs, origin) */
  tc_plan_groups groups;      /* size buckets: the range sorted by N (plan.groups) */
  tc_plan_local local;        /* local mode: this node's shards (plan.local) */
  int (*fill)(tc_worker *, tc_slot *, uint32_t, uint64_t, const void *, size_t, uint64_t); /* fills[layout][samples] */
  uint32_t n_slots, n_workers;
  tc_slot *slots;
  tc_worker *workers;
  twincache_compact_batch **orphans; /* compact structs of detached batches (slabs: the caller's) */
  uint32_t n_orphans;

  pthread_mutex_t mu;
  pthread_cond_t cv_free;     /* producers: a slot was released, or stop */
  pthread_cond_t cv_ready;    /* consumer: a slot became READY */
  int sync_ready;             /* mu and the condition variables exist */
  /* --- under mu ----------------------------------------------------------- */
  uint64_t claim_seq;         /* next batch a decode thread claims */
  uint64_t claim_end;         /* claims stop here (total, or after a failure) */
  uint64_t next_seq;          /* next batch next() returns */
  uint64_t consumer_waits_for; /* seq next() sleeps on, UINT64_MAX = none */
  uint64_t fill_ns;           /* recent time to fill one batch, 0 = unknown */
  uint32_t timed_waits;       /* TC_TIMED_WAITS, or 0 when the decode threads fill every CPU */
  uint64_t generation;        /* hand-outs so far */
  uint32_t in_next;           /* next() calls inside (close waits for 0) */
  int stop;
  int failed;                 /* status that made the loader unusable, or 0 */
  char error[512];            /* message of `failed`, for next()'s caller */
  twincache_loader_stats stats;
};

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

/* Errors a record can have by itself (as opposed to LMDB or memory). */
static int is_record_error(int rc) {
  return rc == TWINCACHE_ECORRUPT || rc == TWINCACHE_ECHECKSUM || rc == TWINCACHE_ETOOBIG ||
         rc == TWINCACHE_EZSTD || rc == TWINCACHE_EVERSION;
}

/* Tells the on_corrupt hook, if any (the library never prints). */
static void report_corrupt(const twincache_loader *l, uint64_t index, int status) {
  if (l->opt.on_corrupt) l->opt.on_corrupt(index, status, l->opt.corrupt_user);
}

/* ---- filling one batch ---------------------------------------------------- */
/* Zeroes graph position g of a slot entirely (a position no graph fills). */
static void zero_graph(const twincache_loader *l, tc_slot *s, uint32_t g) {
  const twincache_batch_layout *L = &l->layout;
  size_t N = L->nodes, K = L->inter, S = L->samples;
  twincache_batch *b = &s->views;
  if (l->opt.layout == TWINCACHE_LAYOUT_SCM) {
    tc_scm_pack_zero(&l->scm_layout, b->slab, g);
    return;
  }
  if (b->compact) {
    tc_compact_zero_graph(b->compact, g);
    return;
  }
  if (s->base_dirty[g]) memset(b->base + g * S * N, 0, S * N * sizeof(float));
  if (s->hi_inter[g]) memset(b->inter + g * K * S * N, 0, s->hi_inter[g] * S * N * sizeof(float));
  s->base_dirty[g] = 0;
  s->hi_inter[g] = 0;
  memset(b->target + g * K * N, 0, K * N);
  memset(b->value + g * K * N, 0, K * N * sizeof(float));
  memset(b->kind + g * K, 0, K);
  memset(b->adj + g * N * N, 0, N * N);
  memset(b->node_mask + g * N, 0, N);
  memset(b->int_mask + g * K, 0, K);
  b->graph_id[g] = 0;
  b->valid[g] = 0;
}

/* ---- the fill table: one function per layout x samples --------------------
 * Each writes graph `index` (its frame: size bytes) into position g of slot
 * s; `key` is the counter key of its fresh worlds (0 for stored ones). */
typedef int (*tc_fill_fn)(tc_worker *w, tc_slot *s, uint32_t g, uint64_t index, const void *frame, size_t size,
                          uint64_t key);

/* The S every stored frame of the graph's source carries (decode_graph sets it). */
static uint32_t stored_samples(const tc_worker *w) { return w->src_samples; }

static int fill_scm_fresh(tc_worker *w, tc_slot *s, uint32_t g, uint64_t index, const void *frame, size_t size,
                          uint64_t key) {
  const twincache_loader *l = w->l;
  return tc_scm_pack_graph(w->packer, w->dctx, frame, size, index, key, &w->g, stored_samples(w), &l->scm_layout,
                           s->views.slab, g);
}

static int fill_compact_stored(tc_worker *w, tc_slot *s, uint32_t g, uint64_t index, const void *frame,
                               size_t size, uint64_t key) {
  (void)key;
  return tc_compact_decode_graph(w->dctx, frame, size, index, &w->g, s->views.compact, g);
}

static int fill_compact_fresh(tc_worker *w, tc_slot *s, uint32_t g, uint64_t index, const void *frame,
                              size_t size, uint64_t key) {
  return tc_fresh_compact(w->fresh, w->dctx, frame, size, index, key, &w->g, stored_samples(w),
                          s->views.compact, g);
}

/* Dense: points the decoder's views at position g and marks its rows
 * dirty; returns the intervention blocks that may have held older rows. */
static uint32_t dense_begin(tc_worker *w, tc_slot *s, uint32_t g) {
  const twincache_batch_layout *L = &w->l->layout;
  size_t N = L->nodes, K = L->inter, S = L->samples;
  twincache_batch *b = &s->views;
  twincache_graph *gr = &w->g;
  gr->base = b->base + g * S * N;
  gr->inter = b->inter + g * K * S * N;
  gr->adj = b->adj + g * N * N;
  uint32_t prev_hi = s->hi_inter[g];
  s->base_dirty[g] = 1; /* the decoder may write anywhere in them, even on error */
  s->hi_inter[g] = (uint32_t)K;
  return prev_hi;
}

/* Dense: after the worlds of a graph of n nodes and k interventions are in
 * place, clears what an older graph left and writes targets, values, kinds
 * and masks. */
static int dense_finish(tc_worker *w, tc_slot *s, uint32_t g, uint64_t index, uint32_t n, uint32_t k,
                        uint32_t prev_hi) {
  const twincache_loader *l = w->l;
  const twincache_batch_layout *L = &l->layout;
  size_t N = L->nodes, K = L->inter, S = L->samples;
  twincache_batch *b = &s->views;
  twincache_graph *gr = &w->g;
  if (prev_hi > k) memset(gr->inter + (size_t)k * S * N, 0, (prev_hi - k) * S * N * sizeof(float));
  s->hi_inter[g] = k;
  if (n < N) memset(gr->adj + (size_t)n * N, 0, (N - n) * N);

  uint8_t *target = b->target + g * K * N, *kind = b->kind + g * K;
  float *value = b->value + g * K * N;
  memset(target, 0, K * N);
  memset(value, 0, K * N * sizeof(float));
  memset(kind, 0, K);
  for (uint32_t i = 0; i < k; i++) {
    if (!l->opt.withhold_targets) { /* withheld: both stay 0 (unknown targets) */
      target[i * N + w->target[i]] = 1;
      value[i * N + w->target[i]] = w->value[i];
      for (uint32_t q = 0; q + 1u < w->n_targets[i]; q++) { /* a multi-target world: every target */
        size_t at = (size_t)i * (TWINCACHE_MAX_TARGETS - 1) + q;
        TC_RETURN_IF(w->more_target[at] >= n, TWINCACHE_ECORRUPT, "frame: world %u's target %u is node %u of %u",
                     i, q + 2, (unsigned)w->more_target[at], n);
        target[i * N + w->more_target[at]] = 1;
        value[i * N + w->more_target[at]] = w->more_value[at];
      }
    }
    kind[i] = w->kind[i];
  }
  uint8_t *node_mask = b->node_mask + g * N, *int_mask = b->int_mask + g * K;
  memset(node_mask, 1, n);
  memset(node_mask + n, 0, N - n);
  memset(int_mask, 1, k);
  memset(int_mask + k, 0, K - k);
  b->graph_id[g] = index;
  return TWINCACHE_OK;
}

static int fill_dense_stored(tc_worker *w, tc_slot *s, uint32_t g, uint64_t index, const void *frame,
                             size_t size, uint64_t key) {
  const twincache_batch_layout *L = &w->l->layout;
  twincache_graph *gr = &w->g;
  (void)key;
  uint32_t prev_hi = dense_begin(w, s, g);
  int rc = twincache_frame_decode(w->dctx, frame, size, gr);
  if (rc != TWINCACHE_OK) return rc;
  uint32_t n = gr->n_nodes, k = gr->n_inter;
  rc = tc_loader_frame_fits(gr->index, gr->n_samples, n, k, index, L->samples, L->nodes, L->inter);
  if (rc != TWINCACHE_OK) return rc;
  for (uint32_t i = 0; i < k; i++)
    TC_RETURN_IF(w->target[i] >= n || w->kind[i] >= TWINCACHE_INTER_KIND_COUNT, TWINCACHE_ECORRUPT,
                 "frame: world %u targets node %u of %u with kind %u (of %d kinds)", i, (unsigned)w->target[i], n,
                 (unsigned)w->kind[i], TWINCACHE_INTER_KIND_COUNT);
  return dense_finish(w, s, g, index, n, k, prev_hi);
}

static int fill_dense_fresh(tc_worker *w, tc_slot *s, uint32_t g, uint64_t index, const void *frame,
                            size_t size, uint64_t key) {
  const twincache_loader *l = w->l;
  twincache_graph *gr = &w->g;
  uint32_t prev_hi = dense_begin(w, s, g), n, k;
  int rc = tc_fresh_dense(w->fresh, w->dctx, frame, size, index, key, &w->g, stored_samples(w), &l->layout,
                          gr->base, gr->inter, gr->adj, &n, &k, w->target, w->kind, w->value, w->n_targets,
                          w->more_target, w->more_value);
  if (rc != TWINCACHE_OK) return rc;
  return dense_finish(w, s, g, index, n, k, prev_hi);
}

/* [layout][samples]; the SCM layout of stored worlds is refused at open. */
static const tc_fill_fn fills[3][2] = {
    [TWINCACHE_LAYOUT_DENSE] = {[TWINCACHE_SAMPLES_STORED] = fill_dense_stored,
                                [TWINCACHE_SAMPLES_FRESH] = fill_dense_fresh},
    [TWINCACHE_LAYOUT_COMPACT] = {[TWINCACHE_SAMPLES_STORED] = fill_compact_stored,
                                  [TWINCACHE_SAMPLES_FRESH] = fill_compact_fresh},
    [TWINCACHE_LAYOUT_SCM] = {[TWINCACHE_SAMPLES_STORED] = NULL, [TWINCACHE_SAMPLES_FRESH] = fill_scm_fresh},
};

/* Fills position g of slot s with graph `index` of source src (its stored
 * worlds, or fresh ones of epoch `epoch`: a mixture's, the source's own
 * epoch) through the fill table; raises *nodes to the graph's N. */
static int decode_graph(tc_worker *w, tc_slot *s, uint32_t g, uint32_t src, uint64_t index, uint64_t epoch,
                        uint32_t *nodes) {
  const twincache_loader *l = w->l;
  const void *frame;
  size_t size;
  twincache_cache *c = l->nsrc ? l->src[src] : l->cache;
  int rc = tc_cache_find_frame(c, w->txn[src], &w->cc[src], index, &frame, &size);
  if (rc != TWINCACHE_OK) return rc == TWINCACHE_ENOTFOUND ? TWINCACHE_ECORRUPT : rc;
  uint32_t n = 0; /* the batch's N: the largest of its graphs' (header only; the fill checks the frame) */
  if (twincache_frame_peek(frame, size, NULL, &n, NULL, NULL, NULL) == TWINCACHE_OK && n > *nodes) *nodes = n;
  w->src_samples = twincache_cache_dims(c)->samples;
  uint64_t tag = l->nsrc ? l->src_tag[src] : l->plan.cache_tag;
  int fresh = l->nsrc ? l->src_fresh[src] : l->opt.samples == TWINCACHE_SAMPLES_FRESH;
  uint64_t key = fresh ? tc_fresh_key(tag, index, epoch / l->opt.resample_every) : 0;
  return (l->nsrc ? l->src_fill[src] : l->fill)(w, s, g, index, frame, size, key);
}

/* Ends the decode thread's read txn (its chunk views go stale with it). */
static void txn_end(tc_worker *w) {
  if (!w->txn_live) return;
  for (uint32_t i = 0; i < TC_MIX_MAX && w->txn[i]; i++) tc_cache_txn_reset(w->txn[i]);
  w->txn_live = 0;
}

/* Starts the decode thread's read txns (one per source) unless live. */
static int txn_begin(tc_worker *w) {
  if (w->txn_live) return TWINCACHE_OK;
  for (uint32_t i = 0; i < TC_MIX_MAX && w->txn[i]; i++) {
    int rc = tc_cache_txn_renew(w->txn[i]);
    if (rc != TWINCACHE_OK) {
      while (i-- > 0) tc_cache_txn_reset(w->txn[i]);
      return rc;
    }
    w->cc[i].gen++; /* views of the previous txn are stale */
  }
  w->txn_live = 1;
  w->txn_start_ns = tc_now_ns();
  return TWINCACHE_OK;
}

/* Prefetches the first bytes of graph `index`'s frame; errors surface when
 * the graph itself is decoded. */
static void prefetch_graph(tc_worker *w, uint32_t src, uint64_t index) {
  tc_cache_prefetch_frame(w->l->nsrc ? w->l->src[src] : w->l->cache, w->txn[src], &w->cc[src], index,
                          TC_PREFETCH_BYTES);
}

/* Fills slot s with batch `seq`; *corrupt counts the records skipped,
 * *bad_index is the graph of a failure. */
static int fill_batch(tc_worker *w, tc_slot *s, uint64_t seq, uint64_t *corrupt, uint64_t *bad_index) {
  const twincache_loader *l = w->l;
  const twincache_loader_options *o = &l->opt;
  const tc_plan *plan = &l->plan;
  uint32_t G = l->layout.graphs;
  tc_plan_batch pb;
  tc_plan_batch_at(plan, seq, &pb);
  uint64_t epoch = pb.epoch, first = pb.first, n = plan->n;
  uint32_t cnt = pb.count;
  uint64_t borrow = pb.borrow, tries = 0;
  int rc;

  if ((rc = txn_begin(w)) != TWINCACHE_OK) return rc;
  uint32_t nodes = 0;
  uint64_t next_index = cnt ? tc_plan_graph(plan, &pb, first) : 0;
  for (uint32_t g = 0; g < cnt; g++) {
    uint64_t pos = first + g, index = next_index;
    if (g + 1 < cnt) { /* start fetching the next graph's frame (random access) */
      next_index = tc_plan_graph(plan, &pb, pos + 1);
      prefetch_graph(w, 0, next_index);
    }
    s->views.valid[g] = pos < n; /* 0: repeated to pad the ranks */
    for (;;) {
      rc = decode_graph(w, s, g, 0, index, epoch, &nodes);
      if (rc == TWINCACHE_OK) break;
      if (!is_record_error(rc)) {
        *bad_index = index;
        goto cleanup;
      }
      report_corrupt(l, index, rc);
      *bad_index = index;
      if (o->corrupt_policy != TWINCACHE_CORRUPT_SKIP || ++tries >= n) goto cleanup;
      ++*corrupt;
      tc_error_clear(); /* skipped: its message is not the batch's */
      /* SKIP: borrow the positions after the batch's own, wrapping in the epoch */
      pos = tc_plan_borrowed(plan, borrow++);
      index = tc_plan_graph(plan, &pb, pos);
    }
  }
  for (uint32_t g = cnt; g < G; g++) zero_graph(l, s, g);
  s->views.n_graphs = cnt;
  s->views.nodes = nodes;
  s->views.epoch = epoch;
  s->views.seq = seq;
  rc = TWINCACHE_OK;

cleanup:
  if (rc != TWINCACHE_OK || tc_now_ns() - w->txn_start_ns >= TC_TXN_NS) txn_end(w);
  return rc;
}

/* Fills slot s with a mixture's batch `seq` (tc_mix.h): global batch k's
 * slots [first_i, first_i + c_i) hold positions [k*c_i, (k+1)*c_i) of source
 * i's order; each source's permutation key is derived once per own epoch the
 * batch touches. graph_id = TWINCACHE_MIX_ID(source, index). Under SKIP a
 * corrupt graph is replaced by the graphs after the batch's own positions in
 * the same source's order (positions (k+1)*c_i, ...: like the one-source
 * plan's borrowing, a repeat of a later graph), at most n_i tries. */
static int fill_mix_batch(tc_worker *w, tc_slot *s, uint64_t seq, uint64_t *corrupt, uint64_t *bad_index,
                          uint32_t *bad_src) {
  const twincache_loader *l = w->l;
  const tc_mix *m = &l->mix;
  uint64_t k = tc_mix_global(m, seq);
  uint32_t nodes = 0;
  int rc;
  if ((rc = txn_begin(w)) != TWINCACHE_OK) return rc;
  for (uint32_t i = 0; i < m->nsrc; i++) {
    uint64_t n = m->n[i], p0 = k * m->count[i], key_epoch = p0 / n, key = tc_mix_key(m, i, key_epoch);
    uint64_t borrow = p0 + m->count[i], tries = 0;
    for (uint32_t j = 0; j < m->count[i]; j++) {
      uint32_t g = m->first[i] + j;
      uint64_t pos = p0 + j;
      if (pos / n != key_epoch) key = tc_mix_key(m, i, key_epoch = pos / n);
      uint64_t index = tc_mix_index_key(m, i, pos, key);
      if (j + 1 < m->count[i] && (pos + 1) / n == key_epoch) /* random access: start the next frame's fetch */
        prefetch_graph(w, i, tc_mix_index_key(m, i, pos + 1, key));
      s->views.valid[g] = 1;
      for (;;) {
        rc = decode_graph(w, s, g, i, index, pos / n, &nodes); /* the source's own epoch */
        if (rc == TWINCACHE_OK) break;
        *bad_index = index;
        *bad_src = i;
        if (!is_record_error(rc)) goto cleanup;
        report_corrupt(l, index, rc);
        if (l->opt.corrupt_policy != TWINCACHE_CORRUPT_SKIP || ++tries >= n) goto cleanup;
        ++*corrupt;
        tc_error_clear(); /* skipped: its message is not the batch's */
        pos = borrow++;
        index = tc_mix_index(m, i, pos);
      }
      s->views.graph_id[g] = TWINCACHE_MIX_ID(i, index);
    }
  }
  s->views.n_graphs = m->batch;
  s->views.nodes = nodes;
  s->views.epoch = tc_mix_epoch(m, k);
  s->views.seq = seq;
  rc = TWINCACHE_OK;

cleanup:
  if (rc != TWINCACHE_OK || tc_now_ns() - w->txn_start_ns >= TC_TXN_NS) txn_end(w);
  return rc;
}

static void *worker_main(void *arg) {
  tc_worker *w = arg;
  twincache_loader *l = w->l;
  pthread_mutex_lock(&l->mu);
  for (;;) {
    tc_slot *s = NULL;
    uint64_t t0 = 0;
    while (!l->stop && l->claim_seq < l->claim_end &&
           (s = &l->slots[l->claim_seq % l->n_slots])->state != SLOT_FREE) {
      if (!t0) t0 = tc_now_ns();
      if (w->txn_live) {
        /* a long wait ends the txn, so the snapshot is not pinned while the
         * consumer is away; a short one keeps the parsed chunk views */
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t until_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + TC_WAIT_TXN_NS;
        ts.tv_sec = (time_t)(until_ns / 1000000000ull);
        ts.tv_nsec = (long)(until_ns % 1000000000ull);
        if (pthread_cond_timedwait(&l->cv_free, &l->mu, &ts) == ETIMEDOUT) txn_end(w);
      } else {
        pthread_cond_wait(&l->cv_free, &l->mu);
      }
    }
    if (t0) l->stats.producer_wait_ns += tc_now_ns() - t0;
    if (l->stop || l->claim_seq >= l->claim_end) break;
    uint64_t seq = l->claim_seq++;
    s = &l->slots[seq % l->n_slots];
    s->state = SLOT_FILLING;
    s->seq = seq;
    uint64_t corrupt = 0, start_ns = tc_now_ns();
    s->start_ns = start_ns;
    pthread_mutex_unlock(&l->mu);

    uint64_t bad_index = UINT64_MAX;
    tc_error_clear(); /* so a message after the fill is this fill's */
    uint32_t bad_src = 0;
    int rc = l->nsrc ? fill_mix_batch(w, s, seq, &corrupt, &bad_index, &bad_src)
                     : fill_batch(w, s, seq, &corrupt, &bad_index);
    uint64_t busy_ns = tc_now_ns() - start_ns;

    pthread_mutex_lock(&l->mu);
    s->status = rc;
    s->state = SLOT_READY;
    l->stats.corrupt += corrupt;
    if (rc == TWINCACHE_OK) {
      l->stats.bytes_decoded += s->views.compact ? s->views.compact->used_bytes : l->layout.bytes;
      if (w->id < TC_STATS_THREADS) l->stats.thread_graphs[w->id] += s->views.n_graphs;
    } else if (seq + 1 < l->claim_end) {
      l->claim_end = seq + 1; /* the stream ends in this error: stop claiming */
      pthread_cond_broadcast(&l->cv_free);
    }
    if (rc != TWINCACHE_OK) { /* this thread's message when the fill left one, else the status */
      const char *why = *twincache_last_error() ? twincache_last_error() : twincache_strerror(rc);
      const char *dir = tc_cache_path(l->nsrc ? l->src[bad_src] : l->cache);
      if (bad_index != UINT64_MAX)
        snprintf(s->error, sizeof s->error, "%s: batch %llu: graph %llu: %s", dir, (unsigned long long)seq,
                 (unsigned long long)bad_index, why);
      else
        snprintf(s->error, sizeof s->error, "%s: batch %llu: %s", dir, (unsigned long long)seq, why);
    }
    if (w->id < TC_STATS_THREADS) l->stats.thread_busy_ns[w->id] += busy_ns;
    l->fill_ns = l->fill_ns ? l->fill_ns - l->fill_ns / 8 + busy_ns / 8 : busy_ns;
    if (l->consumer_waits_for == seq) pthread_cond_signal(&l->cv_ready);
  }
  pthread_mutex_unlock(&l->mu);
  return NULL;
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

/* Zeroes a dense slot's new slab b->slab (later fills clear only what they
 * made stale) and points b's arrays into it. */
static void point_views(const twincache_loader *l, twincache_batch *b) {
  const twincache_batch_layout *L = &l->layout;
  memset(b->slab, 0, L->bytes);
  uint8_t *base = b->slab;
  b->layout = *L;
  if (l->opt.layout == TWINCACHE_LAYOUT_SCM) { /* the arrays: twincache_loader_scm_layout */
    b->graph_id = (uint64_t *)(base + l->scm_layout.graph_id);
    b->valid = base + l->scm_layout.valid;
    return;
  }
  b->base = (float *)(base + L->base);
  b->inter = (float *)(base + L->inter_off);
  b->target = base + L->target;
  b->value = (float *)(base + L->value);
  b->kind = base + L->kind;
  b->adj = base + L->adj;
  b->node_mask = base + L->node_mask;
  b->int_mask = base + L->int_mask;
  b->graph_id = (uint64_t *)(base + L->graph_id);
  b->valid = base + L->valid;
}

/* Step 3: allocates every slot's slab (zeroed once here; later only stale
 * parts are cleared) and points both hand-out structs of each slot at it. */
static int alloc_slots(twincache_loader *l) {
  const twincache_loader_options *o = &l->opt;
  const twincache_batch_layout *L = &l->layout;
  l->n_slots = o->slots;
  l->slots = calloc(l->n_slots, sizeof *l->slots);
  if (!l->slots) return tc_error_set(TWINCACHE_ENOMEM, "out of memory");
  tc_error_clear(); /* an alloc hook may leave why it failed (e.g. the CUDA error) */
  for (uint32_t i = 0; i < l->n_slots; i++) {
    tc_slot *s = &l->slots[i];
    twincache_batch *b = &s->views;
    s->hi_inter = calloc(L->graphs, sizeof *s->hi_inter);
    s->base_dirty = calloc(L->graphs, 1);
    if (o->layout == TWINCACHE_LAYOUT_COMPACT) { /* compact.c owns the slab and views */
      int rc = tc_compact_slot_open(b, L, o->alloc, o->alloc_user);
      if (rc != TWINCACHE_OK) return tc_error_wrap(rc, "cannot allocate %u compact slots", l->n_slots);
      b->internal_ = s;
      s->handed[0] = s->handed[1] = *b;
      continue;
    }
    b->slab = o->alloc(L->bytes, o->alloc_user);
    if (!s->hi_inter || !s->base_dirty || !b->slab)
      return tc_error_wrap(TWINCACHE_ENOMEM, "cannot allocate %u slots of %zu bytes", l->n_slots, L->bytes);
    if ((uintptr_t)b->slab % 64 != 0)
      return tc_error_set(TWINCACHE_EINVAL, "option alloc (hook) returned memory that is not 64-byte aligned (%p)",
                          b->slab);
    point_views(l, b);
    b->internal_ = s;
    s->handed[0] = s->handed[1] = *b;
  }
  return TWINCACHE_OK;
}

/* Step 4: each decode thread's dctx, scratch and (reset) read txn. */
static int create_workers(twincache_loader *l) {
  const twincache_dims *d = twincache_loader_dims(l);
  l->n_workers = l->opt.threads;
  l->workers = calloc(l->n_workers, sizeof *l->workers);
  if (!l->workers) return tc_error_set(TWINCACHE_ENOMEM, "out of memory");
  for (uint32_t i = 0; i < l->n_workers; i++) {
    tc_worker *w = &l->workers[i];
    w->l = l;
    w->id = i;
    uint32_t nsrc = l->nsrc ? l->nsrc : 1;
    for (uint32_t j = 0; j < nsrc; j++) {
      w->cc[j].gen = 1;
      if (!(w->cc[j].entries = calloc(TC_CHUNK_CACHE_ENTRIES, sizeof *w->cc[j].entries)))
        return tc_error_set(TWINCACHE_ENOMEM, "out of memory");
    }
    w->dctx = twincache_dctx_create();
    w->target = calloc(d->max_inter + 1, sizeof *w->target);
    w->kind = calloc(d->max_inter + 1, 1);
    w->value = calloc(d->max_inter + 1, sizeof *w->value);
    w->n_targets = calloc(d->max_inter + 1, 1);
    w->more_target = calloc((size_t)(d->max_inter + 1) * (TWINCACHE_MAX_TARGETS - 1), sizeof *w->more_target);
    w->more_value = calloc((size_t)(d->max_inter + 1) * (TWINCACHE_MAX_TARGETS - 1), sizeof *w->more_value);
    if (l->opt.layout == TWINCACHE_LAYOUT_SCM) {
      if (!(w->packer = tc_scm_packer_create(d))) return tc_error_set(TWINCACHE_ENOMEM, "out of memory");
    } else if (l->opt.samples == TWINCACHE_SAMPLES_FRESH && !(w->fresh = tc_fresh_create(d, l->opt.rows))) {
      return tc_error_set(TWINCACHE_ENOMEM, "out of memory");
    }
    if (!w->dctx || !w->target || !w->kind || !w->value || !w->n_targets ||
        !w->more_target || !w->more_value)
      return tc_error_set(TWINCACHE_ENOMEM, "out of memory");
    for (uint32_t j = 0; j < nsrc; j++) {
      int trc = tc_cache_txn_create(l->nsrc ? l->src[j] : l->cache, &w->txn[j]);
      if (trc != TWINCACHE_OK) return trc; /* the cache's message */
    }
    twincache_graph *g = &w->g;
    g->cap_nodes = d->max_nodes;
    g->cap_samples = d->samples;
    g->cap_inter = d->max_inter;
    g->cap_hidden = d->hidden;
    g->ld = d->max_nodes;
    g->ld_adj = d->max_nodes;
    g->target = w->target;
    g->kind = w->kind;
    g->value = w->value;
    g->n_targets = w->n_targets;
    g->more_target = w->more_target;
    g->more_value = w->more_value;
  }
  return TWINCACHE_OK;
}

/* A condition variable on CLOCK_MONOTONIC (tc_now_ns's clock, for the
 * timed waits). */
static int cond_init_monotonic(pthread_cond_t *cv) {
  pthread_condattr_t attr;
  int rc = pthread_condattr_init(&attr);
  if (rc != 0) return rc;
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  rc = pthread_cond_init(cv, &attr);
  pthread_condattr_destroy(&attr);
  return rc;
}

/* Step 5: the mutex, the condition variables, then the decode threads. */
static int start_threads(twincache_loader *l) {
  if (pthread_mutex_init(&l->mu, NULL) != 0) return tc_error_set(TWINCACHE_ETHREAD, "cannot create a mutex");
  if (cond_init_monotonic(&l->cv_free) != 0) {
    pthread_mutex_destroy(&l->mu);
    return tc_error_set(TWINCACHE_ETHREAD, "cannot create a condition variable");
  }
  if (cond_init_monotonic(&l->cv_ready) != 0) {
    pthread_cond_destroy(&l->cv_free);
    pthread_mutex_destroy(&l->mu);
    return tc_error_set(TWINCACHE_ETHREAD, "cannot create a condition variable");
  }
  l->sync_ready = 1;
  for (uint32_t i = 0; i < l->n_workers; i++) {
    if (pthread_create(&l->workers[i].thread, NULL, worker_main, &l->workers[i]) != 0)
      return tc_error_set(TWINCACHE_ETHREAD, "cannot create decode thread %u of %u", i + 1, l->n_workers);
    l->workers[i].started = 1;
  }
  return TWINCACHE_OK;
}

static int start_loader(twincache_loader *l, uint64_t seq0, uint64_t total);

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
  l->fill = fills[l->opt.layout][l->opt.samples]; /* validate() refused the NULL entry */
  uint64_t seq0 = 0;
  if (resume && (rc = tc_plan_resume(&l->plan, resume, &seq0)) != TWINCACHE_OK) goto cleanup;
  if ((rc = start_loader(l, seq0, l->plan.total)) != TWINCACHE_OK) goto cleanup;
  *out = l;
  l = NULL;
  tc_error_clear();
  rc = TWINCACHE_OK;

cleanup:
  twincache_loader_close(l);
  return rc;
}

/* A mixture's sources: opens each cache (its whole range), checks that the
 * layouts pad together (dense stored worlds of one S; N, K and H pad to the
 * largest) and builds the mixture plan. */
static int open_sources(twincache_loader *l, const char *const *paths, const double *weights, uint32_t n) {
  const twincache_loader_options *o = &l->opt;
  uint64_t begin[TC_MIX_MAX], count[TC_MIX_MAX], tags[TC_MIX_MAX];
  int rc;
  uint32_t S = 0; /* the batch's S: rows with a fresh source, else the first stored source's */
  for (uint32_t i = 0; i < n; i++)
    if (l->src_fresh[i]) S = o->rows;
  if (o->layout != TWINCACHE_LAYOUT_DENSE)
    return tc_error_set(TWINCACHE_EINVAL, "a mixture reads the DENSE layout only (layout %d): the compact and SCM "
                        "slabs are not padded across sources yet", o->layout);
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
    if (!l->src_fresh[i] && d->samples == 0)
      return tc_error_set(TWINCACHE_EINVAL, "mixture source %u: cache %s stores SCMs only (no samples): read it "
                          "fresh (samples = FRESH and rows = S)", i, paths[i]);
    if (!l->src_fresh[i] && S == 0) S = d->samples;
    if (!l->src_fresh[i] && d->samples != S)
      return tc_error_set(TWINCACHE_EINVAL, "mixture source %u: cache %s stores S = %u samples per world, the "
                          "batch has S = %u (%s): one slab has one S and no row mask, so rows are not padded; "
                          "generate the stored sources with --samples %u, or read this one fresh", i, paths[i],
                          d->samples, S, o->rows == S ? "the fresh sources' rows" : "the first stored source's", S);
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
    l->src_fill[i] = fills[TWINCACHE_LAYOUT_DENSE][fresh[i]];
  }
  if ((rc = open_sources(l, paths, weights, n)) != TWINCACHE_OK) goto cleanup;
  l->fill = fills[TWINCACHE_LAYOUT_DENSE][l->opt.samples];
  uint64_t seq0 = 0;
  if (resume && (rc = tc_mix_resume(&l->mix, resume, &seq0)) != TWINCACHE_OK) goto cleanup;
  if ((rc = start_loader(l, seq0, l->mix.total)) != TWINCACHE_OK) goto cleanup;
  *out = l;
  l = NULL;
  tc_error_clear();
  rc = TWINCACHE_OK;

cleanup:
  twincache_loader_close(l);
  return rc;
}

/* The last steps of every open: the ring, the decode threads, from batch
 * seq0 of a stream of `total` batches. */
static int start_loader(twincache_loader *l, uint64_t seq0, uint64_t total) {
  int rc;
  l->next_seq = l->claim_seq = seq0;
  l->claim_end = total;
  l->consumer_waits_for = UINT64_MAX;
  l->stats.threads = l->opt.threads;
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  l->timed_waits = cpus > 0 && l->opt.threads < (unsigned long)cpus ? TC_TIMED_WAITS : 0;
  if ((rc = alloc_slots(l)) != TWINCACHE_OK) return rc;
  if ((rc = create_workers(l)) != TWINCACHE_OK) return rc;
  return start_threads(l);
}

void twincache_loader_close(twincache_loader *l) {
  if (!l) return;
  if (l->sync_ready) {
    pthread_mutex_lock(&l->mu);
    l->stop = 1;
    pthread_cond_broadcast(&l->cv_free);
    pthread_cond_broadcast(&l->cv_ready);
    /* a next() blocked in another thread wakes, sees stop and leaves; it
     * signals cv_free on its way out (the decode threads see stop too) */
    while (l->in_next > 0) pthread_cond_wait(&l->cv_free, &l->mu);
    pthread_mutex_unlock(&l->mu);
  }
  for (uint32_t i = 0; l->workers && i < l->n_workers; i++)
    if (l->workers[i].started) pthread_join(l->workers[i].thread, NULL);
  for (uint32_t i = 0; l->workers && i < l->n_workers; i++) {
    tc_worker *w = &l->workers[i];
    for (uint32_t j = 0; j < TC_MIX_MAX; j++) {
      tc_cache_txn_free(w->txn[j]);
      free(w->cc[j].entries);
    }
    twincache_dctx_free(w->dctx);
    tc_fresh_free(w->fresh);
    tc_scm_packer_free(w->packer);
    free(w->target);
    free(w->n_targets);
    free(w->more_target);
    free(w->more_value);
    free(w->kind);
    free(w->value);
  }
  free(l->workers);
  for (uint32_t i = 0; l->slots && i < l->n_slots; i++) {
    tc_slot *s = &l->slots[i];
    if (s->views.slab) l->opt.free(s->views.slab, l->opt.alloc_user);
    tc_compact_slot_close(&s->views, l->opt.free, l->opt.alloc_user);
    free(s->hi_inter);
    free(s->base_dirty);
  }
  free(l->slots);
  for (uint32_t i = 0; i < l->n_orphans; i++) free(l->orphans[i]);
  free(l->orphans);
  if (l->sync_ready) {
    pthread_cond_destroy(&l->cv_ready);
    pthread_cond_destroy(&l->cv_free);
    pthread_mutex_destroy(&l->mu);
  }
  twincache_cache_close(l->cache);
  for (uint32_t i = 1; i < l->nsrc; i++) twincache_cache_close(l->src[i]); /* src[0] is cache */
  tc_plan_groups_free(&l->groups);
  tc_plan_local_free(&l->local);
  free(l);
}

/* ---- the consumer ----------------------------------------------------------- */
/* Hands out the READY slot s as a new generation, in the struct of s that
 * was not handed out last time. Under mu. */
static twincache_batch *hand_out(twincache_loader *l, tc_slot *s) {
  twincache_batch *b = &s->handed[s->handouts++ & 1];
  *b = s->views;
  b->generation = s->generation = ++l->generation;
  s->state = SLOT_HELD;
  l->next_seq++;
  l->stats.batches++;
  l->stats.graphs += b->n_graphs;
  return b;
}

/* Waits on cv_ready until until_ns (monotonic), or without limit when
 * until_ns is UINT64_MAX. Returns ETIMEDOUT or 0. */
static int wait_ready(twincache_loader *l, uint64_t until_ns) {
  if (until_ns == UINT64_MAX) return pthread_cond_wait(&l->cv_ready, &l->mu);
  struct timespec ts = {(time_t)(until_ns / 1000000000ull), (long)(until_ns % 1000000000ull)};
  return pthread_cond_timedwait(&l->cv_ready, &l->mu, &ts);
}

int twincache_loader_next_timeout(twincache_loader *l, twincache_batch **batch, int64_t timeout_ns) {
  int rc;
  if (!l || !batch) return tc_error_set(TWINCACHE_EINVAL, "twincache_loader_next: NULL argument");
  *batch = NULL;
  uint64_t t0 = 0, deadline_ns = UINT64_MAX;
  uint32_t timed = 0;
  if (timeout_ns > 0) deadline_ns = tc_now_ns() + (uint64_t)timeout_ns;
  pthread_mutex_lock(&l->mu);
  l->in_next++;
  for (;;) {
    if (l->stop) {
      rc = tc_error_set(TWINCACHE_ECLOSED, "the loader is closing");
      break;
    }
    if (l->failed) {
      rc = tc_error_set(l->failed, "%s", l->error);
      break;
    }
    if (l->next_seq >= twincache_loader_batches_total(l)) {
      rc = TWINCACHE_END;
      break;
    }
    tc_slot *s = &l->slots[l->next_seq % l->n_slots];
    if (s->state == SLOT_READY && s->seq == l->next_seq) {
      if (s->status != TWINCACHE_OK) {
        l->failed = s->status;
        snprintf(l->error, sizeof l->error, "%s", s->error);
        continue; /* reported by the l->failed branch */
      }
      *batch = hand_out(l, s);
      rc = TWINCACHE_OK;
      break;
    }
    if (s->state == SLOT_HELD && !l->opt.release_on_any_thread) {
      rc = tc_error_set(TWINCACHE_EDEADLK, "batch %llu needs slot %llu, which is held, and release_on_any_thread is 0",
                        (unsigned long long)l->next_seq, (unsigned long long)(l->next_seq % l->n_slots));
      break;
    }
    uint64_t now_ns = tc_now_ns();
    if (timeout_ns == 0 || now_ns >= deadline_ns) {
      rc = tc_error_set(TWINCACHE_EAGAIN, "batch %llu not ready within the timeout",
                        (unsigned long long)l->next_seq);
      break;
    }
    if (!t0) t0 = now_ns;
    /* Waking a sleeping thread costs the waker a syscall: on a VM tens of
     * microseconds of decode time per batch. When a CPU is left for the
     * consumer, a batch is being filled and a fill's duration is known,
     * sleep until it should be done instead, and only then ask its decode
     * thread for a wake-up. (With every CPU decoding, the timer wake-ups
     * measured slower than the signal.) */
    if (timed < l->timed_waits && l->fill_ns && s->state == SLOT_FILLING && s->seq == l->next_seq) {
      /* aim a little late: one wake-up per batch, and the ring absorbs the delay */
      uint64_t due_ns = s->start_ns + l->fill_ns + l->fill_ns / 8;
      uint64_t until_ns = due_ns > now_ns ? due_ns : now_ns + l->fill_ns / 8 + 1;
      timed++;
      wait_ready(l, until_ns < deadline_ns ? until_ns : deadline_ns);
      continue;
    }
    /* the only completion worth a wake-up; when the batch after it is being
     * filled too, wait for that one: one wake-up (and the context switch it
     * forces on a busy CPU) then serves two batches. If it completes first,
     * the next round waits for next_seq itself. A held slot is waited for
     * the same way: the release frees it, a decode thread fills it and
     * signals. */
    const tc_slot *after = &l->slots[(l->next_seq + 1) % l->n_slots];
    l->consumer_waits_for =
        after->state == SLOT_FILLING && after->seq == l->next_seq + 1 ? l->next_seq + 1 : l->next_seq;
    wait_ready(l, deadline_ns);
    l->consumer_waits_for = UINT64_MAX;
  }
  if (t0) l->stats.consumer_wait_ns += tc_now_ns() - t0;
  l->in_next--;
  if (l->stop) pthread_cond_broadcast(&l->cv_free); /* close() waits for in_next == 0 */
  pthread_mutex_unlock(&l->mu);
  return rc;
}

uint32_t tc_loader_calls_in_next(twincache_loader *l) {
  pthread_mutex_lock(&l->mu);
  uint32_t n = l->in_next;
  pthread_mutex_unlock(&l->mu);
  return n;
}

int twincache_loader_next(twincache_loader *l, twincache_batch **batch) {
  return twincache_loader_next_timeout(l, batch, -1);
}

int twincache_loader_release(twincache_loader *l, twincache_batch *batch) {
  if (!l) return tc_error_set(TWINCACHE_EINVAL, "twincache_loader_release: NULL loader");
  if (!batch) return TWINCACHE_OK;
  int rc = TWINCACHE_ESTALE;
  pthread_mutex_lock(&l->mu);
  tc_slot *s = batch->internal_;
  if (s >= l->slots && s < l->slots + l->n_slots && (batch == &s->handed[0] || batch == &s->handed[1]) &&
      s->state == SLOT_HELD && batch->generation == s->generation) {
    s->state = SLOT_FREE;
    pthread_cond_broadcast(&l->cv_free);
    rc = TWINCACHE_OK;
  }
  pthread_mutex_unlock(&l->mu);
  if (rc != TWINCACHE_OK)
    tc_error_set(rc, "batch %llu (generation %llu): the handle is stale: released already, or no longer "
                 "the batch handed out",
                 (unsigned long long)batch->seq, (unsigned long long)batch->generation);
  return rc;
}

int twincache_loader_detach(twincache_loader *l, twincache_batch *batch) {
  TC_RETURN_IF(!l || !batch, TWINCACHE_EINVAL, "twincache_loader_detach: NULL argument");
  const twincache_loader_options *o = &l->opt;
  int rc = TWINCACHE_ESTALE;
  pthread_mutex_lock(&l->mu);
  tc_slot *s = batch->internal_;
  if (!(s >= l->slots && s < l->slots + l->n_slots && (batch == &s->handed[0] || batch == &s->handed[1]) &&
        s->state == SLOT_HELD && batch->generation == s->generation))
    goto unlock;
  twincache_batch fresh = s->views;
  if (o->layout == TWINCACHE_LAYOUT_COMPACT) {
    twincache_compact_batch **grown = realloc(l->orphans, (l->n_orphans + 1) * sizeof *grown);
    if (!grown) {
      rc = tc_error_set(TWINCACHE_ENOMEM, "detach: out of memory");
      goto unlock;
    }
    l->orphans = grown;
    fresh.compact = NULL;
    if ((rc = tc_compact_slot_open(&fresh, &l->layout, o->alloc, o->alloc_user)) != TWINCACHE_OK) {
      tc_compact_slot_close(&fresh, o->free, o->alloc_user);
      rc = tc_error_set(rc, "detach: cannot allocate a new compact slab: %s", twincache_strerror(rc));
      goto unlock;
    }
    l->orphans[l->n_orphans++] = s->views.compact; /* the detached batch still points at it */
  } else {
    fresh.slab = o->alloc(l->layout.bytes, o->alloc_user);
    if (!fresh.slab) {
      rc = tc_error_set(TWINCACHE_ENOMEM, "detach: cannot allocate a new slab of %zu bytes", l->layout.bytes);
      goto unlock;
    }
    if ((uintptr_t)fresh.slab % 64 != 0) {
      o->free(fresh.slab, o->alloc_user);
      rc = tc_error_set(TWINCACHE_EINVAL, "option alloc (hook) returned memory that is not 64-byte aligned");
      goto unlock;
    }
    point_views(l, &fresh);
  }
  s->views = fresh;
  memset(s->hi_inter, 0, l->layout.graphs * sizeof *s->hi_inter); /* the new slab is all zero */
  memset(s->base_dirty, 0, l->layout.graphs);
  s->state = SLOT_FREE;
  pthread_cond_broadcast(&l->cv_free);
  rc = TWINCACHE_OK;
unlock:
  pthread_mutex_unlock(&l->mu);
  return rc;
}

void twincache_loader_get_state(const twincache_loader *l, twincache_loader_state *s) {
  twincache_loader *m = (twincache_loader *)l; /* the mutex is not part of the value */
  uint64_t next_seq = 0;
  if (l->sync_ready) pthread_mutex_lock(&m->mu);
  next_seq = l->next_seq;
  if (l->sync_ready) pthread_mutex_unlock(&m->mu);
  if (l->nsrc)
    tc_mix_state(&l->mix, next_seq, s);
  else
    tc_plan_state(&l->plan, next_seq, s);
}

/* ---- the state's bytes ------------------------------------------------------ */
static void put_le(uint8_t *p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static uint64_t get_le(const uint8_t *p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

void twincache_loader_state_encode(const twincache_loader_state *s,
                                   uint8_t buf[TWINCACHE_LOADER_STATE_BYTES]) {
  put_le(buf + 0, s->seed, 8);
  put_le(buf + 8, s->next_seq, 8);
  put_le(buf + 16, s->magic, 4);
  buf[20] = (uint8_t)TWINCACHE_LOADER_STATE_VERSION;
  buf[21] = (uint8_t)((s->shuffle & 1) | (s->drop_last & 1) << 1 | (s->equal_ranks & 1) << 2 | (s->bucket & 1) << 3 |
                      (s->local_nodes != 0) << 4);
  put_le(buf + 22, (uint16_t)(s->batch_size - 1), 2);
  put_le(buf + 24, s->cache_tag, 8);
  put_le(buf + 32, s->local_nodes ? s->local_nodes : s->index_begin, 8); /* local: index_begin is 0 */
  put_le(buf + 40, s->index_end, 8);
  put_le(buf + 48, s->origin, 8);
  put_le(buf + 56, s->world_size, 4);
  put_le(buf + 60, s->rank, 4);
}

int twincache_loader_state_decode(const uint8_t buf[TWINCACHE_LOADER_STATE_BYTES],
                                  twincache_loader_state *s) {
  twincache_loader_state r;
  memset(&r, 0, sizeof r);
  r.seed = get_le(buf + 0, 8);
  r.next_seq = get_le(buf + 8, 8);
  r.magic = (uint32_t)get_le(buf + 16, 4);
  r.cache_tag = get_le(buf + 24, 8);
  r.index_begin = get_le(buf + 32, 8);
  r.index_end = get_le(buf + 40, 8);
  int ok = r.magic == TWINCACHE_LOADER_STATE_MAGIC;
  if (get_le(buf + 20, 4) == 1) { /* version 1: before elastic resume */
    r.version = 1;
    r.batch_size = (uint32_t)get_le(buf + 48, 4);
    r.world_size = (uint32_t)get_le(buf + 52, 4);
    r.rank = (uint32_t)get_le(buf + 56, 4);
    r.shuffle = buf[60];
    r.drop_last = buf[61];
    r.equal_ranks = buf[62];
    ok = ok && buf[63] == 0;
  } else {
    r.version = buf[20];
    r.shuffle = buf[21] & 1;
    r.drop_last = buf[21] >> 1 & 1;
    r.equal_ranks = buf[21] >> 2 & 1;
    r.bucket = buf[21] >> 3 & 1;
    r.batch_size = (uint32_t)get_le(buf + 22, 2) + 1;
    r.origin = get_le(buf + 48, 8);
    r.world_size = (uint32_t)get_le(buf + 56, 4);
    r.rank = (uint32_t)get_le(buf + 60, 4);
    if (buf[21] >> 4 & 1) { /* local mode: M where index_begin (0) was */
      ok = ok && r.index_begin >= 1 && r.index_begin <= UINT32_MAX;
      r.local_nodes = (uint32_t)r.index_begin;
      r.index_begin = 0;
    }
    ok = ok && r.version == TWINCACHE_LOADER_STATE_VERSION && (buf[21] & ~31u) == 0;
  }
  if (!ok) {
    memset(s, 0, sizeof *s);
    return tc_error_set(TWINCACHE_EINVAL, "loader state: not a twincache loader state (magic %#x, version %u at "
                        "byte 20, flags %#x at byte 21; expected %#x, version 1 or %u, flags within 0x1f)",
                        (unsigned)r.magic, (unsigned)buf[20], (unsigned)buf[21],
                        (unsigned)TWINCACHE_LOADER_STATE_MAGIC, (unsigned)TWINCACHE_LOADER_STATE_VERSION);
  }
  *s = r;
  return TWINCACHE_OK;
}

/* A mixture's epoch is E global batches; this rank's share is its seqs
 * whose global batch lies in one. */
uint64_t twincache_loader_batches_per_epoch(const twincache_loader *l) {
  if (l->nsrc) return (l->mix.epoch_batches + l->mix.world - 1) / l->mix.world;
  return l->plan.bpe;
}
uint64_t twincache_loader_batches_total(const twincache_loader *l) {
  return l->nsrc ? l->mix.total : l->plan.total;
}

uint64_t twincache_loader_epoch_end(const twincache_loader *l, uint64_t seq) {
  if (l->nsrc) { /* the first seq whose global batch is in a later epoch */
    const tc_mix *m = &l->mix;
    if (seq >= m->total) return m->total;
    uint64_t end_k = (tc_mix_epoch(m, tc_mix_global(m, seq)) + 1) * m->epoch_batches;
    uint64_t end = end_k <= m->origin + m->rank ? 0 : (end_k - m->origin - m->rank + m->world - 1) / m->world;
    return end < m->total ? end : m->total;
  }
  if (seq >= l->plan.total) return l->plan.total;
  tc_plan_batch b;
  tc_plan_batch_at(&l->plan, seq, &b);
  return b.epoch_first_seq + b.epoch_batches;
}

int twincache_loader_epoch_state(const twincache_loader *l, uint64_t epoch, twincache_loader_state *s) {
  if (!l || !s) return tc_error_set(TWINCACHE_EINVAL, "twincache_loader_epoch_state: NULL argument");
  if (l->nsrc) { /* the state after every rank consumed epochs [0, epoch) */
    tc_mix m = l->mix;
    if (epoch > UINT64_MAX / m.epoch_batches)
      return tc_error_set(TWINCACHE_EINVAL, "epoch %llu is past the stream", (unsigned long long)epoch);
    int rc = tc_mix_set_origin(&m, epoch * m.epoch_batches);
    if (rc != TWINCACHE_OK) return rc;
    tc_mix_state(&m, 0, s);
    return TWINCACHE_OK;
  }
  return tc_plan_epoch_state(&l->plan, epoch, s);
}
const twincache_dims *twincache_loader_dims(const twincache_loader *l) {
  return l->nsrc ? &l->dims : twincache_cache_dims(l->cache);
}
const twincache_batch_layout *twincache_loader_layout(const twincache_loader *l) {
  return &l->layout;
}

const twincache_scm_layout *twincache_loader_scm_layout(const twincache_loader *l) {
  return l && l->opt.layout == TWINCACHE_LAYOUT_SCM ? &l->scm_layout : NULL;
}

void twincache_loader_get_stats(const twincache_loader *l, twincache_loader_stats *s) {
  twincache_loader *m = (twincache_loader *)l;
  pthread_mutex_lock(&m->mu);
  *s = l->stats;
  pthread_mutex_unlock(&m->mu);
}
