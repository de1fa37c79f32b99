/* loader.c — the threaded batch loader.
 *
 * Batch `seq` of a rank's stream is a pure function of (options, seq):
 *   epoch e = seq / bpe, j = seq % bpe, global batch gb = j * world_size + rank,
 *   positions [gb*G, gb*G + cnt) of epoch e's permutation of [0, n),
 *   graph index = index_begin + permute(position).
 * Decode threads claim batch numbers in order from one counter and fill slot
 * seq % slots; next() waits for exactly the slot of the seq it must return,
 * so the stream never depends on thread count or timing.
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
#include "tc_compact.h"
#include "tc_common.h"

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
  twincache_batch batch;
  int state;            /* SLOT_*, under the loader's mutex */
  int status;           /* result of the fill, valid when READY */
  uint64_t seq;         /* the batch it holds when FILLING/READY/HELD */
  uint64_t start_ns;    /* when its fill began, valid when FILLING */
  uint32_t *hi_inter;   /* (G) intervention blocks [0, hi) that may be non-zero */
  uint8_t *base_dirty;  /* (G) 1 when the base rows may be non-zero */
} tc_slot;

typedef struct tc_worker {
  struct twincache_loader *l;
  uint32_t id;
  pthread_t thread;
  int started;
  twincache_dctx *dctx;
  MDB_txn *txn;         /* live across batches, see TC_TXN_NS */
  int txn_live;
  uint64_t txn_start_ns;
  tc_chunk_cache cc;    /* chunk views of the live txn */
  twincache_graph g;    /* views into the slot being filled */
  uint16_t *target;     /* (K) scratch: decoded targets */
  uint8_t *kind;        /* (K) */
  float *value;         /* (K) */
} tc_worker;

struct twincache_loader {
  twincache_loader_options opt;
  twincache_cache *cache;
  twincache_batch_layout layout;
  uint64_t begin, n;          /* graph range [begin, begin + n) */
  uint64_t global_batches;    /* per epoch, all ranks, after drop_last */
  uint64_t bpe;               /* per epoch, this rank */
  uint64_t total;             /* batches in this rank's stream; UINT64_MAX = endless */
  uint32_t n_slots, n_workers;
  tc_slot *slots;
  tc_worker *workers;

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
  int stop;
  int failed;                 /* status that made the loader unusable, or 0 */
  twincache_loader_stats stats;
};

/* ---- errors ---------------------------------------------------------------- */
static _Thread_local char tc_last_error[256];

const char *twincache_loader_last_error(void) { return tc_last_error; }

/* Records the message and prints it as one stderr line (as the header says). */
static int fail_with(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail_with(int status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(tc_last_error, sizeof tc_last_error, fmt, ap);
  va_end(ap);
  fprintf(stderr, "twincache_loader: %s\n", tc_last_error);
  return status;
}

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

static void report_corrupt(const twincache_loader *l, uint64_t index, int status) {
  if (l->opt.on_corrupt) {
    l->opt.on_corrupt(index, status, l->opt.corrupt_user);
    return;
  }
  fprintf(stderr, "twincache_loader: graph %llu is corrupt (%s); %s\n", (unsigned long long)index,
          twincache_strerror(status),
          l->opt.corrupt_policy == TWINCACHE_CORRUPT_SKIP ? "skipped" : "failing");
}

/* The permutation key of epoch e. */
static uint64_t epoch_key(uint64_t seed, uint64_t epoch) {
  tc_rng r;
  tc_rng_init(&r, seed, epoch);
  return tc_rng_u64(&r);
}

/* ---- filling one batch ---------------------------------------------------- */
/* Zeroes graph position g of a slot entirely (a position no graph fills). */
static void zero_graph(const twincache_batch_layout *L, tc_slot *s, uint32_t g) {
  size_t N = L->nodes, K = L->inter, S = L->samples;
  twincache_batch *b = &s->batch;
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
}

/* Decodes graph `index` into position g of slot s and fills its masks. */
static int decode_graph(tc_worker *w, tc_slot *s, uint32_t g, uint64_t index) {
  const twincache_loader *l = w->l;
  const twincache_batch_layout *L = &l->layout;
  size_t N = L->nodes, K = L->inter, S = L->samples;
  twincache_batch *b = &s->batch;
  const void *frame;
  size_t size;

  int rc = tc_cache_find_frame(l->cache, w->txn, &w->cc, index, &frame, &size);
  if (rc != TWINCACHE_OK) return rc == TWINCACHE_ENOTFOUND ? TWINCACHE_ECORRUPT : rc;
  if (b->compact) return tc_compact_decode_graph(w->dctx, frame, size, index, &w->g, b->compact, g);

  twincache_graph *gr = &w->g;
  gr->base = b->base + g * S * N;
  gr->inter = b->inter + g * K * S * N;
  gr->adj = b->adj + g * N * N;
  uint32_t prev_hi = s->hi_inter[g];
  s->base_dirty[g] = 1; /* the decoder may write anywhere in them, even on error */
  s->hi_inter[g] = (uint32_t)K;
  if ((rc = twincache_frame_decode(w->dctx, frame, size, gr)) != TWINCACHE_OK) return rc;
  uint32_t n = gr->n_nodes, k = gr->n_inter;
  if (gr->index != index || gr->n_samples != S || n == 0 || n > N || k > K) return TWINCACHE_ECORRUPT;
  for (uint32_t i = 0; i < k; i++)
    if (w->target[i] >= n || w->kind[i] > TWINCACHE_SHIFT) return TWINCACHE_ECORRUPT;

  /* clear what an older graph may have left and the decoder did not write */
  if (prev_hi > k) memset(gr->inter + (size_t)k * S * N, 0, (prev_hi - k) * S * N * sizeof(float));
  s->hi_inter[g] = k;
  if (n < N) memset(gr->adj + (size_t)n * N, 0, (N - n) * N);

  uint8_t *target = b->target + g * K * N, *kind = b->kind + g * K;
  float *value = b->value + g * K * N;
  memset(target, 0, K * N);
  memset(value, 0, K * N * sizeof(float));
  memset(kind, 0, K);
  for (uint32_t i = 0; i < k; i++) {
    target[i * N + w->target[i]] = 1;
    value[i * N + w->target[i]] = w->value[i];
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

/* Ends the decode thread's read txn (its chunk views go stale with it). */
static void txn_end(tc_worker *w) {
  if (!w->txn_live) return;
  mdb_txn_reset(w->txn);
  w->txn_live = 0;
}

/* Prefetches the first bytes of graph `index`'s frame; errors surface when
 * the graph itself is decoded. */
static void prefetch_graph(tc_worker *w, uint64_t index) {
  const void *frame;
  size_t size;
  if (tc_cache_find_frame(w->l->cache, w->txn, &w->cc, index, &frame, &size) != TWINCACHE_OK) return;
  const char *p = frame;
  if (size > TC_PREFETCH_BYTES) size = TC_PREFETCH_BYTES;
  for (size_t off = 0; off < size; off += 64) __builtin_prefetch(p + off);
}

/* Fills slot s with batch `seq`; *corrupt counts the records skipped. */
static int fill_batch(tc_worker *w, tc_slot *s, uint64_t seq, uint64_t *corrupt) {
  const twincache_loader *l = w->l;
  const twincache_loader_options *o = &l->opt;
  uint32_t G = l->layout.graphs;
  uint64_t epoch = seq / l->bpe;
  uint64_t gb = (seq % l->bpe) * o->world_size + o->rank;
  uint64_t first = gb * G, n = l->n;
  uint32_t cnt = n - first < G ? (uint32_t)(n - first) : G;
  uint64_t key = o->shuffle ? epoch_key(o->seed, epoch) : 0;
  uint64_t borrow = first + cnt, tries = 0;
  int rc;

  if (!w->txn_live) {
    if ((rc = mdb_txn_renew(w->txn)) != MDB_SUCCESS) return tc_status_from_mdb(rc);
    w->txn_live = 1;
    w->txn_start_ns = tc_now_ns();
    w->cc.gen++; /* views of the previous txn are stale */
  }
  for (uint32_t g = 0; g < cnt; g++) {
    uint64_t pos = first + g;
    if (g + 1 < cnt) /* start fetching the next graph's frame (random access) */
      prefetch_graph(w, l->begin + (o->shuffle ? tc_permute(pos + 1, n, key) : pos + 1));
    for (;;) {
      uint64_t index = l->begin + (o->shuffle ? tc_permute(pos, n, key) : pos);
      rc = decode_graph(w, s, g, index);
      if (rc == TWINCACHE_OK) break;
      if (!is_record_error(rc)) goto cleanup;
      report_corrupt(l, index, rc);
      if (o->corrupt_policy != TWINCACHE_CORRUPT_SKIP || ++tries >= n) goto cleanup;
      ++*corrupt;
      /* SKIP: borrow the positions after the batch's own, wrapping in the epoch */
      pos = borrow++ % n;
    }
  }
  for (uint32_t g = cnt; g < G; g++) zero_graph(&l->layout, s, g);
  s->batch.n_graphs = cnt;
  s->batch.epoch = epoch;
  s->batch.seq = seq;
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

    int rc = fill_batch(w, s, seq, &corrupt);
    uint64_t busy_ns = tc_now_ns() - start_ns;

    pthread_mutex_lock(&l->mu);
    s->status = rc;
    s->state = SLOT_READY;
    l->stats.corrupt += corrupt;
    if (rc == TWINCACHE_OK) {
      l->stats.bytes_decoded += s->batch.compact ? s->batch.compact->used_bytes : l->layout.bytes;
      if (w->id < TC_STATS_THREADS) l->stats.thread_graphs[w->id] += s->batch.n_graphs;
    } else if (seq + 1 < l->claim_end) {
      l->claim_end = seq + 1; /* the stream ends in this error: stop claiming */
      pthread_cond_broadcast(&l->cv_free);
    }
    if (w->id < TC_STATS_THREADS) l->stats.thread_busy_ns[w->id] += busy_ns;
    l->fill_ns = l->fill_ns ? l->fill_ns - l->fill_ns / 8 + busy_ns / 8 : busy_ns;
    if (l->consumer_waits_for == seq) pthread_cond_signal(&l->cv_ready);
  }
  pthread_mutex_unlock(&l->mu);
  return NULL;
}

/* ---- open / close --------------------------------------------------------- */
static int validate(const twincache_loader_options *o, const twincache_loader_state *resume) {
  if (o->batch_size == 0 || o->batch_size > TC_MAX_BATCH)
    return fail_with(TWINCACHE_EINVAL, "option batch_size must be 1..%d (got %u)", TC_MAX_BATCH, o->batch_size);
  if (o->world_size == 0)
    return fail_with(TWINCACHE_EINVAL, "option world_size must be >= 1 (got 0)");
  if (o->rank >= o->world_size)
    return fail_with(TWINCACHE_EINVAL, "option rank must be < world_size %u (got %u)", o->world_size, o->rank);
  if (o->threads == 0 || o->threads > TC_MAX_THREADS)
    return fail_with(TWINCACHE_EINVAL, "option threads must be 1..%d (got %u)", TC_MAX_THREADS, o->threads);
  if (o->slots > TC_MAX_SLOTS)
    return fail_with(TWINCACHE_EINVAL, "option slots must be 0 (auto) or 1..%d (got %u)", TC_MAX_SLOTS, o->slots);
  if (o->corrupt_policy != TWINCACHE_CORRUPT_FAIL && o->corrupt_policy != TWINCACHE_CORRUPT_SKIP)
    return fail_with(TWINCACHE_EINVAL, "option corrupt_policy must be FAIL (0) or SKIP (1) (got %d)", o->corrupt_policy);
  if (!o->alloc != !o->free)
    return fail_with(TWINCACHE_EINVAL, "options alloc and free must be set together");
  if (o->layout != TWINCACHE_LAYOUT_DENSE && o->layout != TWINCACHE_LAYOUT_COMPACT)
    return fail_with(TWINCACHE_EINVAL, "option layout must be DENSE (0) or COMPACT (1) (got %d)", o->layout);
  if (resume && resume->seed != o->seed)
    return fail_with(TWINCACHE_EINVAL, "resume state seed %llu differs from option seed %llu",
                     (unsigned long long)resume->seed, (unsigned long long)o->seed);
  return TWINCACHE_OK;
}

/* Checks that a (G,K,S,N) slab fits in size_t with room to spare. */
static int layout_fits(uint32_t G, uint32_t N, uint32_t K, uint32_t S) {
  double per_graph = (double)S * N * (1.0 + K) * 4 + (double)K * N * 5 + (double)N * N + 2.0 * (N + K) + 8;
  return per_graph * G < (double)(SIZE_MAX / 4);
}

int twincache_loader_open(const char *path, const twincache_loader_options *opt,
                          const twincache_loader_state *resume, twincache_loader **out) {
  twincache_loader *l = NULL;
  twincache_loader_options defaults;
  int rc;

  if (!path || !out) return fail_with(TWINCACHE_EINVAL, "path and out must not be NULL");
  *out = NULL;
  if (!opt) {
    twincache_loader_options_init(&defaults);
    opt = &defaults;
  }
  if ((rc = validate(opt, resume)) != TWINCACHE_OK) return rc;

  l = calloc(1, sizeof *l);
  if (!l) return fail_with(TWINCACHE_ENOMEM, "out of memory");
  l->opt = *opt;
  if (!l->opt.alloc) {
    l->opt.alloc = default_alloc;
    l->opt.free = default_free;
  }
  if (l->opt.slots == 0) l->opt.slots = 2 * l->opt.threads + 2;
  const twincache_loader_options *o = &l->opt;

  if ((rc = twincache_cache_open(path, &l->cache)) != TWINCACHE_OK) {
    fail_with(rc, "cannot open cache %s: %s", path, twincache_strerror(rc));
    goto cleanup;
  }
  const twincache_dims *d = twincache_cache_dims(l->cache);
  uint64_t count = twincache_cache_count(l->cache);
  uint64_t end = o->index_end ? o->index_end : count;
  if (end > count) {
    rc = fail_with(TWINCACHE_EINVAL, "option index_end %llu is beyond the %llu graphs committed",
                   (unsigned long long)o->index_end, (unsigned long long)count);
    goto cleanup;
  }
  if (o->index_begin >= end) {
    rc = fail_with(TWINCACHE_EINVAL, "graph range [index_begin %llu, %llu) is empty",
                   (unsigned long long)o->index_begin, (unsigned long long)end);
    goto cleanup;
  }
  l->begin = o->index_begin;
  l->n = end - o->index_begin;
  uint32_t G = o->batch_size;
  if (!layout_fits(G, d->max_nodes, d->max_inter, d->samples)) {
    rc = fail_with(TWINCACHE_EINVAL, "option batch_size %u makes a slab too large", G);
    goto cleanup;
  }
  twincache_batch_layout_init(&l->layout, G, d->max_nodes, d->max_inter, d->samples);
  l->global_batches = o->drop_last ? l->n / G : (l->n + G - 1) / G;
  l->bpe = l->global_batches > o->rank ? (l->global_batches - o->rank + o->world_size - 1) / o->world_size : 0;
  l->total = o->epochs == 0 ? (l->bpe ? UINT64_MAX : 0) : l->bpe * o->epochs;
  l->next_seq = l->claim_seq = resume ? resume->next_seq : 0;
  l->claim_end = l->total;
  l->consumer_waits_for = UINT64_MAX;
  l->stats.threads = o->threads;
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  l->timed_waits = cpus > 0 && o->threads < (unsigned long)cpus ? TC_TIMED_WAITS : 0;

  /* slots: every slab zeroed once here; later only stale parts are cleared */
  l->n_slots = o->slots;
  l->slots = calloc(l->n_slots, sizeof *l->slots);
  if (!l->slots) {
    rc = fail_with(TWINCACHE_ENOMEM, "out of memory");
    goto cleanup;
  }
  const twincache_batch_layout *L = &l->layout;
  for (uint32_t i = 0; i < l->n_slots; i++) {
    tc_slot *s = &l->slots[i];
    twincache_batch *b = &s->batch;
    s->hi_inter = calloc(G, sizeof *s->hi_inter);
    s->base_dirty = calloc(G, 1);
    if (o->layout == TWINCACHE_LAYOUT_COMPACT) { /* compact.c owns the slab and views */
      b->internal_ = s;
      if ((rc = tc_compact_slot_open(b, L, o->alloc, o->alloc_user)) != TWINCACHE_OK) {
        fail_with(rc, "cannot allocate %u compact slots: %s", l->n_slots, twincache_strerror(rc));
        goto cleanup;
      }
      continue;
    }
    b->slab = o->alloc(L->bytes, o->alloc_user);
    if (!s->hi_inter || !s->base_dirty || !b->slab) {
      rc = fail_with(TWINCACHE_ENOMEM, "cannot allocate %u slots of %zu bytes", l->n_slots, L->bytes);
      goto cleanup;
    }
    memset(b->slab, 0, L->bytes);
    uint8_t *base = b->slab;
    b->layout = *L;
    b->base = (float *)(base + L->base);
    b->inter = (float *)(base + L->inter_off);
    b->target = base + L->target;
    b->value = (float *)(base + L->value);
    b->kind = base + L->kind;
    b->adj = base + L->adj;
    b->node_mask = base + L->node_mask;
    b->int_mask = base + L->int_mask;
    b->graph_id = (uint64_t *)(base + L->graph_id);
    b->internal_ = s;
  }

  /* decode threads: everything they need is created before any starts */
  l->n_workers = o->threads;
  l->workers = calloc(l->n_workers, sizeof *l->workers);
  if (!l->workers) {
    rc = fail_with(TWINCACHE_ENOMEM, "out of memory");
    goto cleanup;
  }
  for (uint32_t i = 0; i < l->n_workers; i++) {
    tc_worker *w = &l->workers[i];
    w->l = l;
    w->id = i;
    w->cc.gen = 1;
    w->cc.entries = calloc(TC_CHUNK_CACHE_ENTRIES, sizeof *w->cc.entries);
    w->dctx = twincache_dctx_create();
    w->target = calloc(d->max_inter + 1, sizeof *w->target);
    w->kind = calloc(d->max_inter + 1, 1);
    w->value = calloc(d->max_inter + 1, sizeof *w->value);
    if (!w->dctx || !w->target || !w->kind || !w->value || !w->cc.entries) {
      rc = fail_with(TWINCACHE_ENOMEM, "out of memory");
      goto cleanup;
    }
    int mrc = mdb_txn_begin(l->cache->env, NULL, MDB_RDONLY, &w->txn);
    if (mrc != MDB_SUCCESS) {
      w->txn = NULL;
      rc = fail_with(tc_status_from_mdb(mrc), "cannot begin a read transaction: %s", mdb_strerror(mrc));
      goto cleanup;
    }
    mdb_txn_reset(w->txn);
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
    if (o->layout == TWINCACHE_LAYOUT_COMPACT && tc_compact_scratch_init(g) != TWINCACHE_OK) {
      rc = fail_with(TWINCACHE_ENOMEM, "out of memory");
      goto cleanup;
    }
  }

  if (pthread_mutex_init(&l->mu, NULL) != 0) {
    rc = fail_with(TWINCACHE_ETHREAD, "cannot create a mutex");
    goto cleanup;
  }
  pthread_condattr_t attr;
  int cv_rc = pthread_condattr_init(&attr);
  if (cv_rc == 0) {
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC); /* for the timed wait */
    cv_rc = pthread_cond_init(&l->cv_free, &attr);
    pthread_condattr_destroy(&attr);
  }
  if (cv_rc != 0) {
    pthread_mutex_destroy(&l->mu);
    rc = fail_with(TWINCACHE_ETHREAD, "cannot create a condition variable");
    goto cleanup;
  }
  if ((cv_rc = pthread_condattr_init(&attr)) == 0) {
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC); /* tc_now_ns's clock, for next()'s timed wait */
    cv_rc = pthread_cond_init(&l->cv_ready, &attr);
    pthread_condattr_destroy(&attr);
  }
  if (cv_rc != 0) {
    pthread_cond_destroy(&l->cv_free);
    pthread_mutex_destroy(&l->mu);
    rc = fail_with(TWINCACHE_ETHREAD, "cannot create a condition variable");
    goto cleanup;
  }
  l->sync_ready = 1;
  for (uint32_t i = 0; i < l->n_workers; i++) {
    if (pthread_create(&l->workers[i].thread, NULL, worker_main, &l->workers[i]) != 0) {
      rc = fail_with(TWINCACHE_ETHREAD, "cannot create decode thread %u of %u", i + 1, l->n_workers);
      goto cleanup;
    }
    l->workers[i].started = 1;
  }
  *out = l;
  l = NULL;
  rc = TWINCACHE_OK;

cleanup:
  twincache_loader_close(l);
  return rc;
}

void twincache_loader_close(twincache_loader *l) {
  if (!l) return;
  if (l->sync_ready) {
    pthread_mutex_lock(&l->mu);
    l->stop = 1;
    pthread_cond_broadcast(&l->cv_free);
    pthread_cond_broadcast(&l->cv_ready);
    pthread_mutex_unlock(&l->mu);
  }
  for (uint32_t i = 0; l->workers && i < l->n_workers; i++)
    if (l->workers[i].started) pthread_join(l->workers[i].thread, NULL);
  for (uint32_t i = 0; l->workers && i < l->n_workers; i++) {
    tc_worker *w = &l->workers[i];
    if (w->txn) mdb_txn_abort(w->txn);
    twincache_dctx_free(w->dctx);
    free(w->cc.entries);
    free(w->target);
    free(w->kind);
    free(w->value);
    if (l->opt.layout == TWINCACHE_LAYOUT_COMPACT) tc_compact_scratch_free(&w->g);
  }
  free(l->workers);
  for (uint32_t i = 0; l->slots && i < l->n_slots; i++) {
    tc_slot *s = &l->slots[i];
    if (s->batch.slab) l->opt.free(s->batch.slab, l->opt.alloc_user);
    tc_compact_slot_close(&s->batch, l->opt.free, l->opt.alloc_user);
    free(s->hi_inter);
    free(s->base_dirty);
  }
  free(l->slots);
  if (l->sync_ready) {
    pthread_cond_destroy(&l->cv_ready);
    pthread_cond_destroy(&l->cv_free);
    pthread_mutex_destroy(&l->mu);
  }
  twincache_cache_close(l->cache);
  free(l);
}

/* ---- the consumer ----------------------------------------------------------- */
int twincache_loader_next(twincache_loader *l, twincache_batch **batch) {
  int rc;
  if (!l || !batch) return TWINCACHE_EINVAL;
  *batch = NULL;
  pthread_mutex_lock(&l->mu);
  if (l->failed) {
    rc = l->failed;
    goto cleanup;
  }
  if (l->next_seq >= l->total) {
    rc = TWINCACHE_END;
    goto cleanup;
  }
  tc_slot *s = &l->slots[l->next_seq % l->n_slots];
  if (s->state == SLOT_HELD) {
    /* the consumer holds every slot: waiting would never end */
    rc = TWINCACHE_EINVAL;
    goto cleanup;
  }
  uint64_t t0 = 0;
  uint32_t timed = 0;
  while (!(s->state == SLOT_READY && s->seq == l->next_seq) && !l->stop) {
    if (!t0) t0 = tc_now_ns();
    /* Waking a sleeping thread costs the waker a syscall: on a VM tens of
     * microseconds of decode time per batch. When a CPU is left for the
     * consumer, a batch is being filled and a fill's duration is known,
     * sleep until it should be done instead, and only then ask its decode
     * thread for a wake-up. (With every CPU decoding, the timer wake-ups
     * measured slower than the signal.) */
    if (timed < l->timed_waits && l->fill_ns && s->state == SLOT_FILLING && s->seq == l->next_seq) {
      /* aim a little late: one wake-up per batch, and the ring absorbs the delay */
      uint64_t now_ns = tc_now_ns(), due_ns = s->start_ns + l->fill_ns + l->fill_ns / 8;
      uint64_t until_ns = due_ns > now_ns ? due_ns : now_ns + l->fill_ns / 8 + 1;
      struct timespec ts = {(time_t)(until_ns / 1000000000ull), (long)(until_ns % 1000000000ull)};
      timed++;
      pthread_cond_timedwait(&l->cv_ready, &l->mu, &ts);
      continue;
    }
    /* the only completion worth a wake-up; when the batch after it is being
     * filled too, wait for that one: one wake-up (and the context switch it
     * forces on a busy CPU) then serves two batches. If it completes first,
     * the next round waits for next_seq itself. */
    const tc_slot *after = &l->slots[(l->next_seq + 1) % l->n_slots];
    l->consumer_waits_for =
        after->state == SLOT_FILLING && after->seq == l->next_seq + 1 ? l->next_seq + 1 : l->next_seq;
    pthread_cond_wait(&l->cv_ready, &l->mu);
  }
  l->consumer_waits_for = UINT64_MAX;
  if (t0) l->stats.consumer_wait_ns += tc_now_ns() - t0;
  if (l->stop) {
    rc = TWINCACHE_ECLOSED;
    goto cleanup;
  }
  if (s->status != TWINCACHE_OK) {
    rc = l->failed = s->status;
    goto cleanup;
  }
  s->state = SLOT_HELD;
  l->next_seq++;
  l->stats.batches++;
  l->stats.graphs += s->batch.n_graphs;
  *batch = &s->batch;
  rc = TWINCACHE_OK;

cleanup:
  pthread_mutex_unlock(&l->mu);
  return rc;
}

void twincache_loader_release(twincache_loader *l, twincache_batch *batch) {
  if (!l || !batch) return;
  tc_slot *s = batch->internal_;
  pthread_mutex_lock(&l->mu);
  if (s >= l->slots && s < l->slots + l->n_slots && s->state == SLOT_HELD) {
    s->state = SLOT_FREE;
    pthread_cond_broadcast(&l->cv_free);
  }
  pthread_mutex_unlock(&l->mu);
}

void twincache_loader_get_state(const twincache_loader *l, twincache_loader_state *s) {
  twincache_loader *m = (twincache_loader *)l; /* the mutex is not part of the value */
  pthread_mutex_lock(&m->mu);
  s->seed = l->opt.seed;
  s->next_seq = l->next_seq;
  pthread_mutex_unlock(&m->mu);
}

uint64_t twincache_loader_batches_per_epoch(const twincache_loader *l) { return l->bpe; }
const twincache_dims *twincache_loader_dims(const twincache_loader *l) {
  return twincache_cache_dims(l->cache);
}
const twincache_batch_layout *twincache_loader_layout(const twincache_loader *l) {
  return &l->layout;
}

void twincache_loader_get_stats(const twincache_loader *l, twincache_loader_stats *s) {
  twincache_loader *m = (twincache_loader *)l;
  pthread_mutex_lock(&m->mu);
  *s = l->stats;
  pthread_mutex_unlock(&m->mu);
}
