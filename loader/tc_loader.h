/* tc_loader.h — what the loader's files share (internal to loader/): the
 * ring's slot, a decode thread, the loader itself, and the calls between
 * the ring (loader.c), opening a source (loader_open.c), the fill
 * (loader_fill.c) and the state (loader_state.c). */
#ifndef TC_LOADER_H
#define TC_LOADER_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "tc_cache_internal.h"
#include "tc_compact.h"
#include "tc_fresh.h"
#include "tc_mix.h"
#include "tc_plan.h"
#include "tc_scm_batch.h"
#include "twincache_loader.h"

/* A decode thread keeps its read txn (and so its parsed chunk views) across
 * batches, but resets it after this long and before it blocks on a full
 * ring, so a generator writing the same cache can still reuse pages. */
#define TC_TXN_NS 1000000000ull
#define TC_WAIT_TXN_NS 100000000ull /* a wait this long ends the txn */

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
  uint32_t *world_rows;  /* (K+1) scratch: rows per world (FORMAT.md 3.10) */
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
  twincache_dims dims;        /* a mixture's: the sources' largest N, K, H, S */
  uint64_t src_tag[TC_MIX_MAX]; /* a mixture's: each source's cache tag (fresh worlds' keys) */
  uint8_t src_fresh[TC_MIX_MAX]; /* a mixture's: 1 where the source's worlds are fresh */
  int (*src_fill[TC_MIX_MAX])(tc_worker *, tc_slot *, uint32_t, uint64_t, const void *, size_t, uint64_t); /* a mixture's: tc_loader_fills[DENSE][each source's samples] */
  twincache_batch_layout layout; /* SCM layout: only G, N, K, S and bytes (scm_layout's) */
  twincache_scm_layout scm_layout; /* TWINCACHE_LAYOUT_SCM, else zero */
  tc_plan plan;               /* which graphs each batch holds (range, ranks, epochs, origin) */
  tc_plan_groups groups;      /* size buckets: the range sorted by N (plan.groups) */
  tc_plan_local local;        /* local mode: this node's shards (plan.local) */
  int (*fill)(tc_worker *, tc_slot *, uint32_t, uint64_t, const void *, size_t, uint64_t); /* tc_loader_fills[layout][samples] */
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

/* ---- the fill table (loader_fill.c) ---------------------------------------
 * One function per layout x samples; each writes graph `index` (its frame:
 * size bytes) into position g of slot s; `key` is the counter key of its
 * fresh worlds (0 for stored ones). */
typedef int (*tc_fill_fn)(tc_worker *w, tc_slot *s, uint32_t g, uint64_t index, const void *frame, size_t size,
                          uint64_t key);
/* [layout][samples]; the SCM layout of stored worlds is NULL (refused at open). */
extern const tc_fill_fn tc_loader_fills[3][2];

/* Fills slot s with batch `seq` of the one-source plan; *corrupt counts the
 * records skipped, *bad_index is the graph of a failure. Returns 0 or the
 * status of the failure (its message left for the caller to wrap). */
int tc_loader_fill_batch(tc_worker *w, tc_slot *s, uint64_t seq, uint64_t *corrupt, uint64_t *bad_index);
/* The same for a mixture's batch `seq`; *bad_src is the failing source. */
int tc_loader_fill_mix_batch(tc_worker *w, tc_slot *s, uint64_t seq, uint64_t *corrupt, uint64_t *bad_index,
                             uint32_t *bad_src);
/* Ends the decode thread's read txns (its chunk views go stale with them). */
void tc_loader_txn_end(tc_worker *w);

/* ---- the ring (loader.c) -------------------------------------------------- */
/* The last steps of every open: the ring, the decode threads, from batch
 * seq0 of a stream of `total` batches. Returns 0 or a status with its
 * message; the caller closes l either way on failure. */
int tc_loader_start(twincache_loader *l, uint64_t seq0, uint64_t total);

#endif /* TC_LOADER_H */
