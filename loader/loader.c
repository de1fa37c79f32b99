/* loader.c — the ring: the slots, the decode threads that fill them and the
 * consumer API (next, release, detach). Read twincache_loader.h first, then
 * this file; opening a source is loader_open.c, what a decode thread writes
 * into a slot is loader_fill.c, the resume state is loader_state.c.
 *
 * Which graphs batch `seq` holds is the stream plan's (tc_plan.h): a pure
 * function of (options, range size, origin, seq), positions >= n marked
 * valid = 0 in the slab. Decode threads claim batch numbers in order from
 * one counter and fill slot seq % slots; next() waits for exactly the slot
 * of the seq it must return, so the stream never depends on thread count or
 * timing. A slot is filled through one table over layout x samples
 * (tc_loader_fills[][]). A mixture is the same ring over several sources
 * (loader_fill.c).
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tc_common.h"
#include "tc_error.h"
#include "tc_loader.h"
#include "tc_loader_internal.h"
#include "twincache_loader.h"

#define TC_STATS_THREADS 64
/* With a CPU to spare, next() sleeps this many times without asking to be
 * woken (see twincache_loader_next) before it asks a decode thread to. */
#define TC_TIMED_WAITS 4

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
        if (pthread_cond_timedwait(&l->cv_free, &l->mu, &ts) == ETIMEDOUT) tc_loader_txn_end(w);
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
    int rc = l->nsrc ? tc_loader_fill_mix_batch(w, s, seq, &corrupt, &bad_index, &bad_src)
                     : tc_loader_fill_batch(w, s, seq, &corrupt, &bad_index);
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
      char graph[40] = ""; /* "graph I: ", unless the fill's message starts with it already */
      if (bad_index != UINT64_MAX) snprintf(graph, sizeof graph, "graph %llu: ", (unsigned long long)bad_index);
      if (*graph && strncmp(why, graph, strlen(graph)) != 0)
        snprintf(s->error, sizeof s->error, "%s: batch %llu: %s%s", dir, (unsigned long long)seq, graph, why);
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
  b->rows = (uint32_t *)(base + L->rows);
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
    w->world_rows = calloc((size_t)d->max_inter + 1, sizeof *w->world_rows);
    if (l->opt.layout == TWINCACHE_LAYOUT_SCM) {
      if (!(w->packer = tc_scm_packer_create(d))) return tc_error_set(TWINCACHE_ENOMEM, "out of memory");
    } else if (l->opt.samples == TWINCACHE_SAMPLES_FRESH && !(w->fresh = tc_fresh_create(d, l->opt.rows))) {
      return tc_error_set(TWINCACHE_ENOMEM, "out of memory");
    }
    if (!w->dctx || !w->target || !w->kind || !w->value || !w->n_targets ||
        !w->more_target || !w->more_value || !w->world_rows)
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
    g->world_rows = w->world_rows;
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

/* The last steps of every open: the ring, the decode threads, from batch
 * seq0 of a stream of `total` batches. */
int tc_loader_start(twincache_loader *l, uint64_t seq0, uint64_t total) {
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
    free(w->world_rows);
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

const twincache_dims *twincache_loader_dims(const twincache_loader *l) {
  return l->nsrc ? &l->dims : twincache_cache_dims(l->cache);
}
uint32_t twincache_loader_mix_counts(const twincache_loader *l, uint32_t *counts, uint32_t cap) {
  if (!l || !l->nsrc) return 0;
  for (uint32_t i = 0; counts && i < cap && i < l->mix.nsrc; i++) counts[i] = l->mix.count[i];
  return l->mix.nsrc;
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
