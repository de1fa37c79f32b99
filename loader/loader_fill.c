/* loader_fill.c — what a decode thread writes into a slot: the fill table
 * (one function per layout x stored/fresh worlds), one graph's decode into
 * its position, and a whole batch of the one-source plan (tc_plan.h) or of
 * a mixture (tc_mix.h), with the read txns they go through and the SKIP
 * policy's borrowing. The ring (loader.c) calls tc_loader_fill_batch or
 * tc_loader_fill_mix_batch with the slot it claimed.
 *
 * A mixture (twincache_loader_open_mixture) is the same ring over several
 * sources: the stream is the mixture plan's (tc_mix.h), each source has its
 * own cache handle and, in every decode thread, its own read txn and chunk
 * views (one dctx serves them all); the slab has the sources' largest N
 * and K; graph_id carries the source in its top 8 bits (TWINCACHE_MIX_ID);
 * fresh worlds are keyed by the source's tag and the source's own epoch. */
#include <stdio.h>
#include <string.h>

#include "tc_common.h"
#include "tc_error.h"
#include "tc_loader.h"
#include "tc_loader_internal.h"
#include "twincache_loader.h"

#define TC_PREFETCH_BYTES 8192        /* of the next graph's frame: all of a default one */

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
  memset(b->rows + g * (K + 1), 0, (K + 1) * sizeof(uint32_t));
  b->graph_id[g] = 0;
  b->valid[g] = 0;
}

/* ---- the fill table: one function per layout x samples --------------------
 * Each writes graph `index` (its frame: size bytes) into position g of slot
 * s; `key` is the counter key of its fresh worlds (0 for stored ones). */
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
 * place, clears what an older graph left and writes targets, values, kinds,
 * masks and the rows per world (w->world_rows, K+1; 0 for padded worlds). */
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
  uint32_t *rows = b->rows + g * (K + 1);
  memcpy(rows, w->world_rows, (k + 1) * sizeof(uint32_t));
  memset(rows + k + 1, 0, (K - k) * sizeof(uint32_t));
  b->graph_id[g] = index;
  return TWINCACHE_OK;
}

/* The decoder wrote worlds of s rows back to back, (k, s, N); the slab's
 * are (K, S, N) with S > s: each world moves to its own place, the last
 * first (a place never lies before its source), and rows s..S-1 of the base
 * and of each world become 0 (the base's were never written today: a
 * position always holds the same source and a slab starts zeroed; cleared
 * so the padding does not depend on that). The rows per world (at most s)
 * say where each world's rows end. */
static void pad_rows(twincache_graph *gr, uint32_t k, uint32_t s, uint32_t S, uint32_t N) {
  size_t have = (size_t)s * N, want = (size_t)S * N;
  for (uint32_t i = k; i-- > 0;) {
    float *to = gr->inter + i * want;
    memmove(to, gr->inter + i * have, have * sizeof(float));
    memset(to + have, 0, (want - have) * sizeof(float));
  }
  memset(gr->base + have, 0, (want - have) * sizeof(float));
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
  /* the frame's S is its source's; a mixture's batch may have a larger one
   * (open_sources: the largest stored S), whose rows past it are padding */
  rc = tc_loader_frame_fits(gr->index, gr->n_samples, n, k, index, w->src_samples, L->nodes, L->inter);
  if (rc != TWINCACHE_OK) return rc;
  TC_RETURN_IF(w->src_samples > L->samples, TWINCACHE_ECORRUPT, "frame: graph %llu of %u samples, the batch has %u",
               (unsigned long long)index, w->src_samples, (unsigned)L->samples);
  for (uint32_t i = 0; i < k; i++)
    TC_RETURN_IF(w->target[i] >= n || !twincache_inter_kind_valid(gr->flags, w->kind[i]), TWINCACHE_ECORRUPT,
                 "frame: world %u targets node %u of %u with kind %u (flags 0x%x)", i, (unsigned)w->target[i], n,
                 (unsigned)w->kind[i], (unsigned)gr->flags);
  if (w->src_samples < L->samples) pad_rows(gr, k, w->src_samples, L->samples, L->nodes);
  return dense_finish(w, s, g, index, n, k, prev_hi);
}

static int fill_dense_fresh(tc_worker *w, tc_slot *s, uint32_t g, uint64_t index, const void *frame,
                            size_t size, uint64_t key) {
  const twincache_loader *l = w->l;
  twincache_graph *gr = &w->g;
  uint32_t prev_hi = dense_begin(w, s, g), n, k;
  int rc = tc_fresh_dense(w->fresh, w->dctx, frame, size, index, key, &w->g, stored_samples(w), &l->layout,
                          gr->base, gr->inter, gr->adj, &n, &k, w->target, w->kind, w->value, w->n_targets,
                          w->more_target, w->more_value, w->world_rows);
  if (rc != TWINCACHE_OK) return rc;
  return dense_finish(w, s, g, index, n, k, prev_hi);
}

/* [layout][samples]; the SCM layout of stored worlds is refused at open. */
const tc_fill_fn tc_loader_fills[3][2] = {
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
void tc_loader_txn_end(tc_worker *w) {
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
int tc_loader_fill_batch(tc_worker *w, tc_slot *s, uint64_t seq, uint64_t *corrupt, uint64_t *bad_index) {
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
  if (rc != TWINCACHE_OK || tc_now_ns() - w->txn_start_ns >= TC_TXN_NS) tc_loader_txn_end(w);
  return rc;
}

/* Fills slot s with a mixture's batch `seq` (tc_mix.h): global batch k's
 * slots [first_i, first_i + c_i) hold positions [k*c_i, (k+1)*c_i) of source
 * i's order; each source's permutation key is derived once per own epoch the
 * batch touches. graph_id = TWINCACHE_MIX_ID(source, index). Under SKIP a
 * corrupt graph is replaced by the graphs after the batch's own positions in
 * the same source's order (positions (k+1)*c_i, ...: like the one-source
 * plan's borrowing, a repeat of a later graph), at most n_i tries. */
int tc_loader_fill_mix_batch(tc_worker *w, tc_slot *s, uint64_t seq, uint64_t *corrupt, uint64_t *bad_index,
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
  if (rc != TWINCACHE_OK || tc_now_ns() - w->txn_start_ns >= TC_TXN_NS) tc_loader_txn_end(w);
  return rc;
}
