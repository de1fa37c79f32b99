/* twincache_loader.h — read a twincache cache: one graph at a time (the cache
 * reader, twincache_cache.h, included here) or as a stream of pre-batched,
 * padded slabs filled by a pool of decode threads (the loader).
 *
 * Status codes, twincache_strerror() and twincache_last_error() (the one
 * message a failing call leaves) are those of twincache_format.h.
 * The loader never links CUDA: pinned memory comes in through the allocator
 * callbacks of twincache_loader_options.
 */
#ifndef TWINCACHE_LOADER_H
#define TWINCACHE_LOADER_H

#include <stddef.h>
#include <stdint.h>

#include "twincache_cache.h" /* the cache reader */
#include "twincache_format.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ===== the batch ============================================================
 * One batch is ONE contiguous, 64-byte aligned slab; arrays sit at fixed
 * offsets (twincache_batch_layout), so a single async copy moves it whole and
 * a device copy of the slab has the same offsets. Padding (nodes beyond a
 * graph's N, interventions beyond its K, graphs beyond n_graphs) is zero;
 * note that zero in `kind` is TWINCACHE_DO, so padded interventions look
 * like do() entries there: tell them apart with int_mask, never with kind.
 * G = batch_size, N = dims.max_nodes, K = dims.max_inter, S = dims.samples. */
typedef struct twincache_batch_layout {
  uint32_t graphs, nodes, inter, samples; /* G, N, K, S */
  size_t base;      /* float   (G,S,N) */
  size_t inter_off; /* float   (G,K,S,N): row s of intervention k twins base row s */
  size_t target;    /* uint8   (G,K,N): 1 where the node is intervened */
  size_t value;     /* float   (G,K,N): the record's value at the target (do value, shift,
                     * noise factor; 0 for soft, but a root's new mean), else 0 */
  size_t kind;      /* uint8   (G,K): enum twincache_inter_kind; 0 (DO) when padding */
  size_t adj;       /* uint8   (G,N,N): adj[i][j] = 1 <=> edge i -> j */
  size_t node_mask; /* uint8   (G,N) */
  size_t int_mask;  /* uint8   (G,K): 1 for the graph's real interventions */
  size_t graph_id;  /* uint64  (G) */
  size_t valid;     /* uint8   (G): 1 = a graph of this position of the epoch,
                     * 0 = repeated to pad ranks to equal counts, or empty */
  size_t bytes;     /* whole slab, a multiple of 64 */
  /* uint32 (G,K+1): rows world w of graph g holds (w = 0 the base world, k+1
   * world k): S unless the cache stores fewer (FORMAT.md 3.10), 0 for a
   * padded world or graph; rows past it are zero. Placed last in the slab
   * (added in format 5; the offsets before it are unchanged). */
  size_t rows;
} twincache_batch_layout;

/* Fills *l for the given sizes (every array offset 64-byte aligned).
 * Returns 0, or TWINCACHE_EINVAL (and *l zeroed) when a size product such as
 * G*K*S*N*4 or the slab's total does not fit in size_t. Thread-safe. */
int twincache_batch_layout_init(twincache_batch_layout *l, uint32_t graphs, uint32_t nodes,
                                uint32_t inter, uint32_t samples);

/* A batch handed out by next(). The struct belongs to the loader: read it,
 * never write it. Each slot has two such structs, used alternately, so the
 * pointer of a released batch stays readable (with its old generation) while
 * its slot serves the next batch; see twincache_loader_release. */
typedef struct twincache_batch {
  twincache_batch_layout layout;
  void *slab;          /* layout.bytes, from the options' allocator */
  uint32_t n_graphs;   /* graphs filled (< G only for a kept last partial batch) */
  uint64_t epoch;      /* epoch this batch belongs to */
  uint64_t seq;        /* batch number in this rank's stream, from 0 */
  uint64_t generation; /* which hand-out this is: 1, 2, ... per loader, never reused */
  /* typed views into slab */
  float *base;
  float *inter;
  uint8_t *target;
  float *value;
  uint8_t *kind;
  uint8_t *adj;
  uint8_t *node_mask;
  uint8_t *int_mask;
  uint64_t *graph_id;  /* (G) the graph's index; a mixture's: TWINCACHE_MIX_ID(source, index) */
  uint8_t *valid;      /* (G) see layout.valid */
  /* TWINCACHE_LAYOUT_COMPACT: the batch as a compact slab (see "the compact
   * batch" below); then slab, inter, target, value, node_mask and int_mask
   * are NULL and base, adj, kind, graph_id, valid point into the compact slab.
   * NULL for the dense layout. */
  struct twincache_compact_batch *compact;
  void *internal_; /* the loader's slot; do not touch */
  uint32_t nodes;  /* the largest N of the batch's graphs (0: none); arrays keep
                    * the layout's N, columns from `nodes` on are zero */
  uint32_t *rows;  /* (G, K+1) see layout.rows; NULL for the compact and SCM layouts */
} twincache_batch;

/* ===== the loader ========================================================== */
typedef struct twincache_loader twincache_loader;

enum twincache_corrupt_policy {
  TWINCACHE_CORRUPT_FAIL = 0, /* next() returns the decode error */
  TWINCACHE_CORRUPT_SKIP = 1  /* count it, report it, fill from the next graph */
};

typedef struct twincache_loader_options {
  uint32_t batch_size;  /* G, default 32 */
  uint32_t epochs;      /* 0 = endless, default 1 */
  int shuffle;          /* default 1 */
  uint64_t seed;        /* epoch permutations are keyed by (seed, epoch), default 0 */
  uint32_t rank;        /* default 0 */
  uint32_t world_size;  /* default 1: rank r takes every world_size-th batch */
  uint32_t threads;     /* decode threads, default 2 */
  uint32_t slots;       /* ring depth (batches in memory), default 0 = auto:
                         * 2*threads+2 of the threads given at open */
  int drop_last;        /* drop the last partial batch of an epoch, default 0 */
  uint64_t index_begin; /* graph range [begin, end) read; end 0 = all committed */
  uint64_t index_end;
  int corrupt_policy;   /* enum twincache_corrupt_policy, default FAIL.
                         * SKIP fills the place of a corrupt graph with the
                         * graph at the next position after the batch's own
                         * positions in the epoch order (wrapping within the
                         * epoch), then the one after, ...: the stream stays a
                         * pure function of (options, seq); that graph then
                         * appears twice in the epoch. A record is counted
                         * each time it is met. If no graph of the range
                         * decodes, next() returns the error. */
  /* slot memory: alloc(bytes, user) must return 64-byte aligned memory or
   * NULL (open refuses misaligned memory with TWINCACHE_EINVAL); default
   * aligned malloc/free. The trainer passes cudaHostAlloc. */
  void *(*alloc)(size_t bytes, void *user);
  void (*free)(void *ptr, void *user);
  void *alloc_user;
  /* optional: called from a decode thread for each corrupt graph (index,
   * status code); must be thread-safe. NULL = no report (the loader never
   * prints): SKIP only counts it in stats.corrupt, FAIL makes next() return
   * the error with twincache_last_error naming the graph. */
  void (*on_corrupt)(uint64_t index, int status, void *user);
  void *corrupt_user;
  /* 1 (default): batches may be released from any thread, so next() waits
   * for a held slot it needs (bound the wait with next_timeout).
   * 0: the caller promises that only the thread calling next() releases;
   * a held slot next() needs is then a certain deadlock and next() returns
   * TWINCACHE_EDEADLK at once. */
  int release_on_any_thread;
  /* 1 (default): with world_size > 1 every rank gets the same number of
   * batches per epoch, and every batch is full (n_graphs = G), see
   * twincache_loader_open. No effect when world_size is 1. 0: the plain
   * round-robin, where the first ranks may get one batch more. */
  int equal_ranks;
  int layout; /* TWINCACHE_LAYOUT_DENSE (default) | _COMPACT | _SCM (with samples = FRESH) */
  /* Where the worlds come from (enum twincache_samples):
   * STORED (default): the samples the cache stores (refused on an SCM-only
   *   cache, whose frames store none);
   * FRESH: new worlds of each graph's stored SCM, `rows` rows per world
   *   (the batch's S; it may differ from the stored S). The exogenous noise
   *   of graph i in epoch e is drawn from counters keyed by (cache tag, i,
   *   e / resample_every), so a batch is the same bytes for any thread
   *   count, rank, world size, reading order or resume; twin worlds share
   *   the base world's noise (non-descendant columns are the base's bits, a
   *   do() target column is its value) and STANDARDIZED graphs are
   *   standardised by the fresh base world. Both layouts.
   * A resume state does not record samples, rows or resample_every (its 64
   * bytes have no room): resume with the options the state was taken with. */
  int samples;
  uint32_t rows;           /* FRESH: S, 1..TWINCACHE_MAX_SAMPLES (0 is refused); STORED: must be 0 */
  uint32_t resample_every; /* FRESH: R >= 1 consecutive epochs share one draw (default 1);
                            * STORED: must be 1 */
  /* 1: unknown-target training. The batch's `target` and `value` are all
   * zero (the cache still records them; `kind` and `int_mask` stay, and a
   * do() target's column in `inter` is still its value: the data show what
   * an experiment shows). Stored and fresh worlds alike; DENSE layout only
   * (the compact batch's target and value rebuild the do() columns, so
   * open refuses COMPACT with it). Default 0. */
  int withhold_targets;
  /* Size buckets (tc_plan.h "Buckets"): 1 = batches of graphs of similar
   * N. Each epoch sorts the range by N (a new shuffle within each N every
   * epoch), cuts it into global batches of G*world_size graphs and shuffles
   * their order; a batch reports its own largest N (twincache_batch.nodes):
   * read arrays up to it. Every graph still appears once per epoch, ranks
   * stay equal, and one step's batches on all ranks have about the same N.
   * The state records it; a resume needs the same G*world_size (any W).
   * Open reads every frame's header once to learn its N (no decompression);
   * 4 bytes per graph. One source only (a mixture refuses it). Default 0. */
  int buckets;
  /* A mixture's (twincache_loader_open_mixture) worlds per source: NULL
   * (default) = `samples` for every source, else n entries, each
   * TWINCACHE_SAMPLES_STORED or _FRESH (read at open, not kept). With a
   * fresh source `rows` is the batch's S and every stored source must store
   * S <= rows (its worlds are padded, the batch's rows per world saying so;
   * a larger S is refused naming the source); rows and resample_every apply
   * to the fresh sources. One source's open refuses it. */
  const int *source_samples;
  /* Local mode (tc_plan.h "Local mode"): M >= 1 nodes of world_size / M
   * consecutive ranks each (M must divide world_size); node k = rank /
   * (world_size / M) opens `path` as its part of a set
   * (twincache_cache_open_part: exactly the shards k, k + M, ...) and its
   * ranks read only those. Across all ranks every graph of the set is read
   * once per epoch (drop_last: the largest nodes' last graphs are dropped
   * down to the smallest node's whole steps); every rank takes the same
   * number of full batches per epoch (padding valid = 0). The order differs
   * from the non-local stream's. Needs the whole range (index_begin and
   * index_end 0); no buckets; one cache only (a mixture refuses it). The
   * state records M; it resumes with the same M at any world_size that M
   * divides and any batch_size (elastic per node, tc_plan.h).
   * 0 (default): off. */
  uint32_t local_nodes;
} twincache_loader_options;

/* Values of twincache_loader_options.samples. */
enum twincache_samples { TWINCACHE_SAMPLES_STORED = 0, TWINCACHE_SAMPLES_FRESH = 1 };

/* Fills *o with the defaults above. */
void twincache_loader_options_init(twincache_loader_options *o);

/* Position in the stream and what defines the stream: restoring it
 * continues with exactly the batches an uninterrupted run would have
 * produced next, at the same world size or another (see "Resume" at
 * twincache_loader_open). The state of any rank taken after the same number
 * of batches describes the same point of the global order (equal ranks, or
 * world size 1): keep one, e.g. rank 0's.
 *
 * twincache_loader_state_encode writes TWINCACHE_LOADER_STATE_BYTES (64)
 * bytes, little-endian; version 2 at these offsets:
 *    0 seed u64, 8 next_seq u64, 16 magic u32, 20 version u8 (2),
 *   21 flags u8 (bit 0 shuffle, bit 1 drop_last, bit 2 equal_ranks, bit 3
 *      buckets, bit 4 local mode, others 0),
 *   22 batch_size - 1 u16, 24 cache_tag u64, 32 index_begin u64 (local
 *      mode: local_nodes, index_begin being 0),
 *   40 index_end u64, 48 origin u64, 56 world_size u32, 60 rank u32.
 * Version 1 (written before elastic resume; still read, origin 0): the
 * struct's first 64 bytes in order, version u32 1 at 20, batch_size u32 at
 * 48, world_size 52, rank 56, shuffle 60, drop_last 61, equal_ranks 62,
 * reserved 63 (the bucket field, 0). */
#define TWINCACHE_LOADER_STATE_MAGIC 0x54435354u /* "TCST" */
#define TWINCACHE_LOADER_STATE_VERSION 2u
#define TWINCACHE_LOADER_STATE_BYTES 64
typedef struct twincache_loader_state {
  uint64_t seed;        /* must match the options' seed */
  uint64_t next_seq;    /* next batch number of this rank's stream, counted from origin */
  uint32_t magic;       /* TWINCACHE_LOADER_STATE_MAGIC, or 0: see "Resume" */
  uint32_t version;     /* TWINCACHE_LOADER_STATE_VERSION (1: an old state, origin 0) */
  uint64_t cache_tag;   /* identity of the cache (FNV-1a-64 of its config text) */
  uint64_t index_begin; /* graph range [begin, end), end resolved (never 0) */
  uint64_t index_end;
  uint32_t batch_size;  /* G of the stream it was taken in, 1..65536 */
  uint32_t world_size;  /* W of the stream it was taken in */
  uint32_t rank;        /* the rank it was taken on */
  uint8_t shuffle;      /* 0 or 1 */
  uint8_t drop_last;    /* 0 or 1 */
  uint8_t equal_ranks;  /* 0 or 1, as in effect (0 when world_size is 1) */
  uint8_t bucket;       /* size buckets: 0 or 1 (the options' buckets) */
  uint64_t origin;      /* where seq 0 of the stream is: graphs of the global order
                         * consumed before it (epoch * n + position; 0 = the start) */
  uint32_t local_nodes; /* local mode's M (0 = off); then index_begin is 0 and origin 0 */
} twincache_loader_state;
/* A mixture's state (twincache_loader_open_mixture) has these fields with
 * other meanings: cache_tag the mixture's identity (FNV-1a-64 over each
 * source's cache tag, graph range and per-batch count), index_begin 0,
 * index_end the global batches of an epoch, origin the global batches
 * consumed before seq 0 (not graphs), equal_ranks 1, drop_last 0. It is
 * encoded and decoded the same way and opens only a mixture of the same
 * sources, weights and batch_size (at any world size). */

/* Writes *s as TWINCACHE_LOADER_STATE_BYTES bytes (version 2's layout above;
 * batch_size must be 1..65536, flags 0 or 1) to buf. Thread-safe. */
void twincache_loader_state_encode(const twincache_loader_state *s,
                                   uint8_t buf[TWINCACHE_LOADER_STATE_BYTES]);
/* Reads a state written by _encode, version 2 or 1. Returns 0, or
 * TWINCACHE_EINVAL when the magic, version, flags or reserved bytes are
 * wrong (*s is then zeroed); the other fields are checked by
 * twincache_loader_open. Thread-safe. */
int twincache_loader_state_decode(const uint8_t buf[TWINCACHE_LOADER_STATE_BYTES],
                                  twincache_loader_state *s);

/* Opens the cache at `path` and starts the decode threads. `resume` may be
 * NULL (start at batch 0) or a state from twincache_loader_get_state.
 * `opt` may be NULL (the defaults). Threads are limited to 1..100,
 * batch_size to 1..65536. Validates every option and allocates all slots up
 * front: memory is fixed from here on.
 *
 * Returns 0 and sets *out (and clears twincache_last_error), or one of
 * these, with *out set to NULL (when out is not NULL), nothing leaked, and
 * a one-line message naming the option, field, file or hook left for
 * twincache_last_error (twincache_format.h; the library never prints):
 *   TWINCACHE_EINVAL    NULL path/out, an option out of range, an empty
 *                       range or index_end beyond the committed count, a
 *                       slab too large for size_t, an alloc hook returning
 *                       memory that is not 64-byte aligned, or a resume
 *                       state that does not match (the field is named) or
 *                       lies past the end of a finite stream;
 *   TWINCACHE_ENOMEM    the alloc hook or malloc failed;
 *   TWINCACHE_ETHREAD   a mutex, condition variable or thread failed;
 *   any error of twincache_cache_open (ENOTFOUND, ENOTCACHE, EVERSION,
 *   ECORRUPT, ELMDB, ENOMEM) and TWINCACHE_ELMDB for a read transaction.
 *
 * The stream (loader/tc_plan.h is the arithmetic, tested without a cache):
 * epoch e orders the range's n graphs: position p < n holds graph
 * index_begin + perm_e(p), a stateless permutation keyed by (seed, e) when
 * shuffling, index order otherwise. A stream starts at an origin (0, or
 * where a resume put it: origin = e0*n + p0 graphs of the global order
 * consumed); epoch e0 is read from position p0 on, later epochs whole. In
 * an epoch's part [s0, ...) global batch k holds positions
 * [s0 + k*G, s0 + k*G + G) and rank r of W takes global batches r, r+W,
 * r+2W, ...; a rank's batch seq counts its batches from the origin.
 * - world_size 1, or equal_ranks 0: the part has ceil((n - s0)/G) global
 *   batches (floor with drop_last); only its last can be partial, and the
 *   first (global batches mod W) ranks get one batch more.
 * - world_size W > 1 with equal_ranks (default): every rank gets
 *   ceil((n - s0)/(G*W)) batches of the part, floor with drop_last, and
 *   every batch is full. drop_last drops the part's last (n - s0) mod (G*W)
 *   positions. Without it the part is padded to a multiple of G*W
 *   positions: position p >= n holds the graph of position (p - n) mod n
 *   (the epoch's first graphs again, as PyTorch's DistributedSampler pads)
 *   and has valid = 0.
 * All of it is a pure function of (options, n, origin, seq). Once every
 * rank has taken j batches of an epoch's part, the global order is consumed
 * up to position s0 + j*G*W: the union of the ranks' valid graphs is each
 * graph of the epoch exactly once (drop_last: each of those kept), in the
 * global order.
 *
 * Resume: a state with magic TWINCACHE_LOADER_STATE_MAGIC (version 2, or 1)
 * must match the options and the cache in seed, shuffle, drop_last, index
 * range and cache tag (the field is named otherwise); `epochs`, threads,
 * slots and the hooks may differ. Then:
 * - same batch_size, world_size and equal_ranks as the state (and, with
 *   equal_ranks 0 and world_size > 1, the same rank): the stream continues
 *   at the state's next_seq, with its origin: batch for batch what the
 *   uninterrupted run would have read (any rank's state serves every rank).
 * - otherwise (elastic): the state's point of the global order,
 *   c = origin + what every rank of its world had consumed after next_seq
 *   batches, becomes the new stream's origin and next_seq starts at 0. The
 *   rest of c's epoch is read from its position on with the new world
 *   size and batch size, later epochs whole: across the change every graph
 *   is still read exactly once per epoch, in the same global order, never
 *   re-read or skipped (drop_last cuts the resumed part by its own G*W).
 *   The per-rank batch_size may change too: keep G*W constant for the same
 *   global batch, or keep G and let the global batch follow W (the
 *   learning-rate rule is the trainer's). A state of a world with
 *   equal_ranks 0 and world_size > 1 cannot change world (its ranks do not
 *   read in step) and is refused.
 * - local mode (local_nodes M): the state must have the same M (a state of
 *   another M, or with and without local mode, is refused naming
 *   local_nodes); the rules above then hold per node (each node's ranks
 *   continue its own order; origin counts whole-set graphs: tc_plan.h).
 * A state with magic 0 (written by hand as {seed, next_seq}) is a position
 * in this loader's own stream from origin 0: every field but seed and
 * next_seq must be 0 (a full state with its magic cleared is refused naming
 * the first other field, not read as a bare position).
 * Any state is refused when its position lies past the end of a finite
 * stream (next_seq equal to the stream's length is its end: next() returns
 * TWINCACHE_END). */
int twincache_loader_open(const char *path, const twincache_loader_options *opt,
                          const twincache_loader_state *resume, twincache_loader **out);

/* A mixture of n (1..16) sources: paths[i] a cache or set, read whole, with
 * weight weights[i] (> 0, relative). Every batch holds exactly c_i graphs of
 * source i, in source order (slots [0, c_0) from source 0, ...), the c_i
 * from the weights and batch_size by the largest-remainder rule, each >= 1
 * (batch_size >= n). Source i has its own endless order (a permutation per
 * own epoch, keyed by seed, i and that epoch; the identity without shuffle);
 * global batch k takes positions [k*c_i, (k+1)*c_i) of it and rank r of W
 * reads global batches r, r+W, ...: every batch is full, every graph valid,
 * the ranks balanced, and the stream does not depend on W.
 * Epoch: ceil(n_L / c_L) global batches, L the source with the largest c_i
 * (ties: lower index), so an epoch passes over L once; a source that runs
 * out (a smaller or more heavily weighted one) starts its next own
 * permutation mid-epoch; `epochs` counts these mixture epochs (0: endless),
 * the last step completed so every rank reads as many batches. Padding: the
 * slab's N, K are the sources' largest (node_mask and int_mask say what is
 * real); with stored worlds S is the sources' largest, a source of a
 * smaller S padded with zero rows past its own (the batch's `rows` per
 * world are its S: consumers read rows, as for FORMAT.md 3.10's worlds of
 * fewer rows); with samples = FRESH every
 * source's worlds have `rows` rows (sources of any S, SCM-only ones too),
 * graph i of source s in the source's own epoch e getting the worlds a
 * one-source fresh loader of that cache gives it in epoch e (key: the
 * source's cache tag, i, e / resample_every). options.source_samples
 * chooses per source (stored ones must then store S <= rows; the state's
 * cache_tag also hashes which sources are fresh when they are mixed). Size
 * buckets are refused. Layouts DENSE and COMPACT (SCM: EINVAL, said so;
 * COMPACT pads no source's worlds to another S, so its stored sources must
 * store one S, else EINVAL names the source); index_begin/index_end must be 0;
 * drop_last and equal_ranks have no effect (nothing is ever padded).
 * graph_id: TWINCACHE_MIX_ID(source, index) (source in the top 8 bits).
 * State: cache_tag hashes the sources' tags, ranges and counts; origin is
 * the global batches consumed; a state resumes at any world size and
 * batch_size must match (it sets the counts; another is refused naming
 * batch_size). The stream's batch numbers
 * (seq, epoch_end, batches_per_epoch: this rank's share of an epoch) are
 * this rank's, as for one source. Errors: as twincache_loader_open, and
 * EINVAL for the above. */
int twincache_loader_open_mixture(const char *const *paths, const double *weights, uint32_t n,
                                  const twincache_loader_options *opt, const twincache_loader_state *resume,
                                  twincache_loader **out);
#define TWINCACHE_MIX_ID(source, index) ((uint64_t)(source) << 56 | (uint64_t)(index))

/* A mixture's graphs of each source per batch (the c_i above; they sum to
 * batch_size): the shares the weights are realised as, c_i / batch_size
 * (weights 0.5, 0.3, 0.2 at batch_size 7: 4, 2, 1, i.e. 0.571, 0.286,
 * 0.143). Writes min(cap, sources) counts to counts (NULL: none) and
 * returns the number of sources; 0 for a loader of one source (or l NULL).
 * Thread-safe. */
uint32_t twincache_loader_mix_counts(const twincache_loader *l, uint32_t *counts, uint32_t cap);
#define TWINCACHE_MIX_SOURCE(graph_id) ((uint32_t)((graph_id) >> 56))
#define TWINCACHE_MIX_INDEX(graph_id) ((graph_id) & ((1ull << 56) - 1))

/* Waits until the next batch of the stream is ready and returns it in
 * *batch (NULL on any other return). Same as next_timeout with a negative
 * timeout: blocks until the batch is ready, the stream ends, close() is
 * called from another thread, or a certain deadlock is seen. */
int twincache_loader_next(twincache_loader *l, twincache_batch **batch);

/* Returns the next batch if it is ready within timeout_ns (< 0 = wait
 * forever, 0 = poll). Returns
 *   0                  *batch is the batch seq = the state's next_seq;
 *   TWINCACHE_END      the epochs are done;
 *   TWINCACHE_EAGAIN   not ready within the timeout (nothing consumed: call
 *                      again);
 *   TWINCACHE_EDEADLK  the slot the batch needs is held and the options say
 *                      release_on_any_thread = 0 (release one, then retry).
 *                      With release_on_any_thread = 1 a held slot is waited
 *                      for: if every batch held is held by the waiting
 *                      thread itself, only a timeout ends the wait;
 *   TWINCACHE_ECLOSED  twincache_loader_close was called meanwhile;
 *   TWINCACHE_EINVAL   l or batch is NULL;
 *   the error of a graph under the FAIL policy, or an LMDB error (the loader
 *   is then unusable: close it; next() keeps returning that error, and
 *   twincache_last_error names the batch and the graph).
 * The batch stays valid until it is passed to twincache_loader_release (or
 * the loader is closed); several batches may be held at once (at most the
 * slot count). Treat the slab as read-only: the loader keeps its padding
 * zero by clearing only what a decode made stale.
 * Call from one consumer thread (one next() at a time). */
int twincache_loader_next_timeout(twincache_loader *l, twincache_batch **batch, int64_t timeout_ns);

/* Gives a batch's slot back to the decode threads. May be called from any
 * thread (e.g. a copy-completion callback). Returns 0; TWINCACHE_EINVAL when
 * l is NULL; 0 for a NULL batch (nothing to do); TWINCACHE_ESTALE, changing
 * nothing, when the batch is not the one currently held in its slot: a
 * double release, or a release of a batch whose slot has since been handed
 * out again (generation differs). Detection rule: the two structs of a slot
 * alternate, so a stale handle is always caught unless its slot has been
 * handed out twice more since and that newer batch is still held (then the
 * stale handle and the newer batch are the same struct: release-after-release
 * of a handle kept for 2*slots batches is the caller's bug we cannot see).
 * Not allowed after close (the handle is gone). */
int twincache_loader_release(twincache_loader *l, twincache_batch *batch);

/* Frees a held batch's slot WITHOUT its memory: the slot gets a new slab
 * from the alloc hook (zeroed) and goes back to the decode threads, while
 * the batch's slab (and, in the compact layout, its compact struct) stays
 * as it is, readable, and becomes the caller's: the loader never writes or
 * frees it again; free the slab with your own free hook when done (the
 * compact struct is freed by close). So a batch kept for long costs one
 * slab of memory, not a stalled ring (next() returns EDEADLK when it needs
 * that slot: detach the batch, then retry). The twincache_batch struct
 * itself is reused by the slot's next-but-one hand-out: copy *batch first
 * if you read its fields later. Call from the consumer thread. Returns 0;
 * TWINCACHE_EINVAL when l or batch is NULL; TWINCACHE_ESTALE, changing
 * nothing, when the batch is not the one held in its slot (as release);
 * TWINCACHE_ENOMEM (the batch stays held, nothing changes) when the new slab
 * cannot be allocated. */
int twincache_loader_detach(twincache_loader *l, twincache_batch *batch);

/* The position after the last batch returned by next(), with every field of
 * twincache_loader_state filled. Thread-safe, as are get_stats,
 * batches_per_epoch, dims and layout. */
void twincache_loader_get_state(const twincache_loader *l, twincache_loader_state *s);

/* Batches of one whole epoch for this rank (after drop_last and
 * equal_ranks); the epoch a stream resumed mid-epoch at another world size
 * starts in may have fewer (twincache_loader_epoch_end). */
uint64_t twincache_loader_batches_per_epoch(const twincache_loader *l);
/* Batches of this rank's stream from its origin: next_seq runs from 0 (or
 * the resumed next_seq) to this; UINT64_MAX when endless. */
uint64_t twincache_loader_batches_total(const twincache_loader *l);
/* The seq just after the last batch of the epoch that batch `seq` belongs
 * to (for seq >= batches_total: batches_total), so batch seq ends its epoch
 * when seq + 1 equals it. */
uint64_t twincache_loader_epoch_end(const twincache_loader *l, uint64_t seq);
/* Fills *s with a state positioned at the first batch of `epoch` of this
 * loader's stream (for set_epoch-style loops): in this stream when the
 * epoch starts after its origin, else a stream whose origin is the epoch's
 * start. Returns 0, or TWINCACHE_EINVAL (message set) when l or s is NULL
 * or epoch is not below a finite stream's epochs. Thread-safe. */
int twincache_loader_epoch_state(const twincache_loader *l, uint64_t epoch, twincache_loader_state *s);
/* The cache's dims and the batch layout of this loader. */
const twincache_dims *twincache_loader_dims(const twincache_loader *l);
const twincache_batch_layout *twincache_loader_layout(const twincache_loader *l);

typedef struct twincache_loader_stats {
  uint64_t batches;            /* delivered by next() */
  uint64_t graphs;             /* graphs in those batches */
  uint64_t corrupt;            /* corrupt graphs skipped */
  uint64_t bytes_decoded;      /* slab bytes written by decode threads */
  uint64_t producer_wait_ns;   /* decode threads waiting for a free slot (sum) */
  uint64_t consumer_wait_ns;   /* next() waiting for a ready batch */
  uint32_t threads;
  uint64_t thread_graphs[64];  /* per decode thread (first min(threads,64)) */
  uint64_t thread_busy_ns[64]; /* time each thread spent decoding */
} twincache_loader_stats;

void twincache_loader_get_stats(const twincache_loader *l, twincache_loader_stats *s);

/* Stops the threads (also when they are blocked on a full ring), frees every
 * slot and closes the cache. Accepts NULL. Batches not yet released become
 * invalid. May be called while another thread is blocked in next() /
 * next_timeout(): that call wakes, returns TWINCACHE_ECLOSED, and close
 * returns only after it has left the loader. The caller must make sure no
 * new next(), release() or other call on l starts once close has begun (e.g.
 * the consumer stops at ECLOSED and the releasing thread is joined). */
void twincache_loader_close(twincache_loader *l);

/* ===== the compact batch ====================================================
 * A second batch layout, chosen with twincache_loader_options.layout, for
 * consumers that expand batches themselves (on the GPU: kernels/expand.cu).
 * Under an intervention only the target and its descendants differ from the
 * base world (the sparse twin encoding of the frames), so a compact slab
 * holds the base worlds and, per twin world, only those columns:
 *   twin row s of intervention k = base row s, with column t set to value[k]
 *   when k is a do() on t, then every stored column j of (g,k) written over.
 * A do() target's column is never stored: it is the constant value (the
 * frame encoder refuses a graph where it is not, and the frames hold
 * exactly the stored columns, so the loader copies them in one piece).
 * Expanding gives the dense slab of the same batch bit for bit, padding
 * included.
 *
 * ONE contiguous, 64-byte aligned slab of fixed capacity (every column of
 * every twin world stored: G*K*N columns), arrays at fixed offsets; the
 * stored columns come last and are packed, so a batch occupies only the
 * first used_bytes of its slab: that prefix is what a copy must move.
 * G, N, K, S as in twincache_batch_layout; W = (N + 63) / 64. */
enum twincache_layout {
  TWINCACHE_LAYOUT_DENSE = 0,   /* twincache_batch arrays, as described above */
  TWINCACHE_LAYOUT_COMPACT = 1, /* twincache_batch.compact */
  TWINCACHE_LAYOUT_SCM = 2      /* the SCMs for a sampler: see "the SCM batch" below */
};

typedef struct twincache_compact_layout {
  uint32_t graphs, nodes, inter, samples; /* G, N, K, S */
  uint32_t mask_words;  /* W: uint64 words of one (g,k) column mask */
  uint64_t max_cols;    /* column capacity G*K*N */
  size_t base;          /* float   (G,S,N): as the dense base */
  size_t adj;           /* uint8   (G,N,N): as the dense adj */
  size_t kind;          /* uint8   (G,K):   as the dense kind */
  size_t graph_id;      /* uint64  (G):     as the dense graph_id */
  size_t valid;         /* uint8   (G):     as the dense valid */
  size_t n_nodes;       /* uint32  (G):     nodes of graph g (0 = padding graph) */
  size_t n_inter;       /* uint32  (G):     interventions of graph g */
  size_t target;        /* uint16  (G,K):   intervened node (0 beyond n_inter) */
  size_t value;         /* float   (G,K):   the record's value (0 beyond n_inter) */
  size_t col_first;     /* uint32  (G,K):   first column of (g,k) in cols */
  size_t col_mask;      /* uint64  (G,K,W): bit j of word j/64 set <=> column j of
                         *   (g,k) is stored; (g,k)'s columns are in increasing j */
  size_t rows;          /* uint32  (G,K+1): as the dense rows: rows world w of graph
                         *   g holds (FORMAT.md 3.10; S unless the frame counts
                         *   fewer), 0 for padding; base rows and a stored
                         *   column's floats past a world's count are 0 */
  size_t cols;          /* float   (max_cols,S): stored columns, S floats each,
                         *   in (g,k,j) order; only the first n_cols are valid */
  size_t bytes;         /* whole slab at capacity, a multiple of 64 */
  twincache_batch_layout dense; /* the dense layout it expands to */
} twincache_compact_layout;

/* Fills *c for the dense layout d (every offset 64-byte aligned). Returns 0,
 * or TWINCACHE_EINVAL when the column capacity G*K*N exceeds UINT32_MAX. */
int twincache_compact_layout_init(twincache_compact_layout *c, const twincache_batch_layout *d);
/* Bytes of the slab prefix that holds a batch of n_cols stored columns (a
 * multiple of 64). */
size_t twincache_compact_used_bytes(const twincache_compact_layout *c, uint64_t n_cols);

typedef struct twincache_compact_batch {
  twincache_compact_layout layout;
  void *slab;          /* layout.bytes, from the options' allocator */
  size_t used_bytes;   /* prefix of slab holding this batch, a multiple of 64 */
  uint64_t n_cols;     /* stored columns of this batch */
  /* typed views into slab */
  float *base;
  uint8_t *adj;
  uint8_t *kind;
  uint64_t *graph_id;
  uint8_t *valid;
  uint32_t *n_nodes;
  uint32_t *n_inter;
  uint16_t *target;
  float *value;
  uint32_t *col_first;
  uint64_t *col_mask;
  uint32_t *rows;
  float *cols;
} twincache_compact_batch;

/* ===== the SCM batch ========================================================
 * A third layout (options.layout = TWINCACHE_LAYOUT_SCM, with samples =
 * FRESH) for consumers that sample the worlds themselves, on the GPU: the
 * batch carries each graph's SCM as padded arrays and the counter key of
 * its fresh noise, not its worlds (about 1.2 KB per graph of the default
 * workload where the dense worlds of S = 64 take ~29 KB). Its arrays are
 * those of kernels/'s twincache_scm_batch, in that order, so a device copy
 * of the slab plus these offsets is the sampler's input (twincache_sample_cuda
 * and its host emulation twincache_sample_cpu); the worlds it computes are
 * the loader's fresh dense batch of the same stream position, bit for bit
 * (tests/loader/test_sample_scm.c). Graph g's entries:
 * - key: tc_scm_fresh_key(cache tag, graph index, epoch / resample_every);
 * - a graph whose SCM these arrays cannot hold is refused with
 *   TWINCACHE_EINVAL naming it (a soft world's redrawn mechanism, a world
 *   with several targets); an internally standardised graph (iSCM) is
 *   packed with flags bit 1, which today's GPU sampler refuses.
 * The batch: twincache_batch.slab holds the arrays, graph_id and valid
 * point into it, the other typed views are NULL; twincache_loader_layout's
 * bytes is this layout's. Padding graphs are all zero (n_nodes 0). */
typedef struct twincache_scm_layout {
  uint32_t graphs, nodes, inter, hidden, rows; /* G, N, K, H (the cache's; 0 = linear), S = options.rows */
  size_t n_nodes;     /* uint32 (G) n, 1..N; 0 = padding graph */
  size_t n_inter;     /* uint32 (G) k, 0..K */
  size_t flags;       /* uint8  (G) bit 0 standardised, bit 1 iSCM, bit 2 independent worlds */
  size_t noise;       /* uint8  (G) enum twincache_noise */
  size_t key;         /* uint64 (G) the fresh noise's counter key */
  size_t order;       /* uint32 (G,N) a topological order of nodes 0..n-1 */
  size_t adj;         /* uint8  (G,N,N) adj[i][j] = 1 <=> edge i -> j */
  size_t weight;      /* float  (G,N,N) linear weight of edge i -> j */
  size_t mlp;         /* float  (G, N*(H*N+2H)) node j's block at j*(H*n+2H): W1 (H,n), b1 (H),
                       * w2 (H), as in the frame (H = 0: no bytes) */
  size_t noise_scale; /* float  (G,N) */
  size_t target;      /* uint16 (G,K) the world's one target */
  size_t kind;        /* uint8  (G,K) enum twincache_inter_kind (do, shift or noise) */
  size_t value;       /* float  (G,K) */
  size_t desc;        /* uint8  (G,K,N) 1: node j is target k or its descendant */
  size_t mech;        /* uint8  (G,N) enum twincache_mechanism of node j */
  size_t het_w;       /* float  (G,N,N) heteroscedastic v of edge i -> j (0: none) */
  size_t het_c;       /* float  (G,N) c_j (0: none; e (1 + tanh 0) = e) */
  size_t graph_id;    /* uint64 (G) as the dense graph_id */
  size_t valid;       /* uint8  (G) as the dense valid */
  size_t bytes;       /* whole slab, a multiple of 64 */
} twincache_scm_layout;

/* Fills *l for the given sizes (every offset 64-byte aligned). Returns 0, or
 * TWINCACHE_EINVAL (and *l zeroed) when a size is out of the format's
 * limits or the slab's size does not fit in size_t. Thread-safe. */
int twincache_scm_layout_init(twincache_scm_layout *l, uint32_t graphs, uint32_t nodes, uint32_t inter,
                              uint32_t hidden, uint32_t rows);
/* The SCM layout of a loader opened with TWINCACHE_LAYOUT_SCM, else NULL. */
const twincache_scm_layout *twincache_loader_scm_layout(const twincache_loader *l);

#ifdef __cplusplus
}
#endif
#endif /* TWINCACHE_LOADER_H */
