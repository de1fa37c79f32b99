/* tc_plan.h — the stream plan: which graph goes to which rank, in which
 * batch, in which epoch. A small value built from the loader's options and
 * the size of the graph range; every function is pure arithmetic on it (no
 * threads, no I/O, no cache, no loader), so it is tested exhaustively
 * without a cache (tests/loader/test_plan.c).
 *
 * Positions. Epoch e has an order of the range's n graphs: position p
 * (0 <= p < n) holds graph begin + perm_e(p), perm_e a stateless permutation
 * keyed by (seed, e) when shuffling, the identity otherwise. Positions >= n
 * pad ranks to equal counts: position p >= n holds the graph of position
 * (p - n) mod n, marked not valid.
 *
 * Segments. A rank's stream (batch numbers seq = 0, 1, ...) starts at an
 * origin: a point of the global order, origin = e0 * n + p0 graphs consumed
 * (0 for a stream that starts at the beginning; see twincache_loader.h's
 * resume). Epoch e0 is read from p0 on, every later epoch whole. Within an
 * epoch's segment starting at position s0 (p0 in epoch e0, else 0), global
 * batch k holds positions [s0 + k*G, s0 + k*G + G) and rank r of W takes
 * global batches r, r + W, r + 2W, ...: its j-th batch of the segment is
 * global batch j*W + r. Equal ranks: the segment's positions are padded (or
 * cut, with drop_last) to a multiple of G*W. Otherwise (W = 1 or equal_ranks
 * 0): the segment ends at n (cut to a multiple of G with drop_last) and only
 * its last global batch may be partial.
 *
 * Buckets (option buckets = 1). The epoch's positions are regrouped by the
 * graphs' node counts. Once per plan, the range is sorted by (N, index):
 * group N holds the graphs of N nodes. Epoch e's bucketed order: group N's
 * graphs in the order of a permutation keyed by (epoch key, N) (index order
 * without shuffle), the groups by increasing N, one after the other; this
 * sorted list is cut into chunks of C = G*W (one step: the global batch),
 * and the full chunks are put in the order of a permutation keyed by the
 * epoch (kept sorted without shuffle; the last partial chunk, the largest N,
 * stays last). Position p holds the graph at place (sigma_e(p / C), p % C) of
 * the sorted list. The plan's positions, ranks, padding and drop_last are
 * unchanged, so every graph is read once per epoch and ranks stay equal;
 * one step's W batches come from one chunk, so every rank of a step has
 * graphs of about the same N (a synchronous step waits for its largest).
 * Each epoch mixes the graphs of one N differently; the order of the steps
 * is random. C is the global batch, so a state resumes only at the same
 * G*W (any W). Cost: two keyed permutations and a binary search over the
 * 257 group starts per position; memory 4 bytes per graph, built once.
 *
 * Local mode (option local_nodes = M >= 1, tc_plan_init_local). The range is
 * a set of shards, node k of M holding shards k, k + M, k + 2M, ... W ranks
 * are M nodes of R = W/M consecutive ranks: global rank r is rank r mod R of
 * node r / R. Node k's plan is the plan above over its own graphs, in
 * "local offsets" 0..n_k-1 (its shards one after the other, in shard order),
 * at world R: epoch e's order is a permutation of the local offsets keyed by
 * (seed, e) as before, and an offset maps back to its graph through the
 * node's shard ranges. Every node takes the same number of steps per epoch:
 * B = ceil(max_j n_j / (G*R)) (the largest node's), or floor(min_j n_j /
 * (G*R)) with drop_last (the smallest node's, dropping the rest of the
 * larger nodes' epochs), and every batch is full; positions >= n_k are
 * padding (valid 0) as above. So across all W ranks every graph of the set
 * is read exactly once per epoch (without drop_last), and a step is one
 * batch on every rank. The global order is not the non-local stream's.
 * Origins count in units of the whole set's graphs (origin = e * graphs +
 * c): c, the positions every node has consumed of epoch e (the same on
 * every node: steps x G x R), may pass a small node's n_k (it is then in
 * its padding). A segment starting at c has ceil((max_j n_j - c) / (G*R))
 * steps (drop_last: floor((min_j n_j - c) / (G*R))), the same on every
 * node; so the plan's elastic resume works per node: a state of world W,
 * batch G resumes at W' (a multiple of M) and G', every node continuing
 * its own order from c, each graph still once per epoch. The state must
 * have the same M. Buckets and mixtures are refused. */
#ifndef TC_PLAN_H
#define TC_PLAN_H

#include <stdint.h>

#include "tc_common.h"
#include "twincache_loader.h"

typedef struct tc_plan {
  /* what defines the stream */
  uint64_t seed;
  uint64_t cache_tag;
  uint64_t begin, n;       /* graph range [begin, begin + n), n >= 1 */
  uint32_t batch;          /* G */
  uint32_t world, rank;    /* W, r < W */
  uint32_t epochs;         /* 0 = endless */
  uint8_t shuffle, drop_last;
  uint8_t equal;           /* equal ranks in effect (W > 1 and the option) */
  /* where seq 0 is: origin = e0 * n + p0 graphs of the global order consumed */
  uint64_t origin_epoch, origin_pos; /* e0, p0 < n */
  /* buckets (see above): 0 = off */
  uint8_t bucket;
  uint64_t chunk;          /* C = G*W positions, one step */
  const struct tc_plan_groups *groups; /* the range sorted by N; the caller's, set before use */
  /* local mode (see above): NULL = off; world and rank are then the node's
   * R and rank, n the node's graphs and begin 0 */
  const struct tc_plan_local *local;
  /* derived by tc_plan_init */
  uint64_t bpe;            /* this rank's batches of a whole epoch */
  uint64_t first_bpe;      /* this rank's batches of epoch e0 (from p0) */
  uint64_t total;          /* batches of this rank's stream; UINT64_MAX = endless */
} tc_plan;

/* One batch of a rank's stream. */
typedef struct tc_plan_batch {
  uint64_t epoch;          /* the epoch it belongs to */
  uint64_t first;          /* its first position in the epoch's order */
  uint32_t count;          /* positions it holds, 1..G (< G: a partial batch) */
  uint64_t key;            /* the epoch's permutation key (0 without shuffle) */
  tc_perm perm;            /* the epoch's permutation, ready (shuffle only) */
  uint64_t borrow;         /* first position a corrupt graph's place borrows */
  uint64_t epoch_first_seq; /* seq of the epoch's first batch in this stream */
  uint64_t epoch_batches;  /* this rank's batches of the epoch in this stream */
  /* buckets: what tc_plan_graph last derived for this batch (its positions
   * share a chunk and mostly a group) */
  uint64_t memo_chunk, memo_sorted; /* chunk c and sigma_e(c); memo_chunk UINT64_MAX = none */
  uint32_t memo_group;              /* N of group_perm, 0 = none */
  tc_perm group_perm;
} tc_plan_batch;

/* Builds the plan of options o (batch_size, epochs, shuffle, seed, rank,
 * world_size, drop_last, equal_ranks, buckets) over the range
 * [begin, begin + n) of cache `cache_tag`, starting at origin 0. Returns 0,
 * or TWINCACHE_EINVAL with a message for n == 0, batch 0, world 0, rank >=
 * world, or buckets not 0 or 1. With buckets, set p->groups before asking
 * for graphs. */
int tc_plan_init(tc_plan *p, const twincache_loader_options *o, uint64_t cache_tag, uint64_t begin, uint64_t n);

/* A node's shards (see "Local mode"): built once from the shard ranges,
 * read-only after. */
typedef struct tc_plan_local {
  uint32_t nodes, node;   /* M, k */
  uint32_t parts;         /* the node's shards k, k + M, ... */
  uint64_t *first;        /* (parts) each one's first graph index */
  uint64_t *start;        /* (parts + 1) each one's first local offset; start[parts] = n_k */
  uint64_t graphs;        /* the whole set's */
  uint64_t min_graphs, max_graphs; /* min_j n_j, max_j n_j over the M nodes */
} tc_plan_local;

/* Builds L for node `node` of `nodes` over a set of `shards` shards, shard i
 * holding graphs [ends[i-1], ends[i]) (ends[-1] = 0, ends increasing).
 * Returns 0, or TWINCACHE_EINVAL (nodes 0, node >= nodes, nodes > shards)
 * / TWINCACHE_ENOMEM with a message. tc_plan_local_free accepts a zeroed L. */
int tc_plan_local_init(tc_plan_local *L, const uint64_t *ends, uint32_t shards, uint32_t node, uint32_t nodes);
void tc_plan_local_free(tc_plan_local *L);

/* The graph index of local offset o (< n_k) of node L. */
static inline uint64_t tc_plan_local_index(const tc_plan_local *L, uint64_t o) {
  uint32_t lo = 0, len = L->parts; /* the last part whose start is <= o; branch-free (conditional moves) */
  while (len > 1) {
    uint32_t half = len / 2;
    lo = L->start[lo + half] <= o ? lo + half : lo;
    len -= half;
  }
  return L->first[lo] + (o - L->start[lo]);
}

/* Builds the local-mode plan of options o (as tc_plan_init; rank and
 * world_size global) for node L (L->node must be o->rank / (world_size /
 * L->nodes)); p keeps L, which must outlive it. Returns 0, or
 * TWINCACHE_EINVAL with a message: L->nodes not dividing world_size,
 * buckets, or tc_plan_init's errors. */
int tc_plan_init_local(tc_plan *p, const twincache_loader_options *o, uint64_t cache_tag, const tc_plan_local *L);

/* Moves seq 0 of plan p to origin `origin` (graphs of the global order
 * consumed) and re-derives first_bpe and total. Returns 0, or TWINCACHE_EINVAL
 * when origin lies past the end of a finite stream. */
int tc_plan_set_origin(tc_plan *p, uint64_t origin);

/* The batch `seq` of the stream (seq < p->total). */
void tc_plan_batch_at(const tc_plan *p, uint64_t seq, tc_plan_batch *b);

/* Graph index at position pos of batch b's epoch order (pos may be a
 * padding position >= n). Inline: a decode thread asks it per graph. */
static inline uint64_t tc_plan_index(const tc_plan *p, const tc_plan_batch *b, uint64_t pos) {
  uint64_t q = pos < p->n ? pos : (pos - p->n) % p->n, o = p->shuffle ? tc_perm_at(&b->perm, q) : q;
  return p->local ? tc_plan_local_index(p->local, o) : p->begin + o;
}

/* The range sorted by N (see "Buckets"): built once, read-only after, so
 * any number of plans and threads share it. */
typedef struct tc_plan_groups {
  uint32_t *members;                      /* (n) range offsets, by (N, offset) */
  uint64_t start[TWINCACHE_MAX_NODES + 2]; /* group N is members[start[N], start[N+1]) */
} tc_plan_groups;

/* Builds g from the node counts nodes[i] (1..TWINCACHE_MAX_NODES) of the n
 * graphs of a range. Returns 0, TWINCACHE_EINVAL (n above UINT32_MAX) or
 * TWINCACHE_ENOMEM, with a message. tc_plan_groups_free accepts a zeroed g. */
int tc_plan_groups_init(tc_plan_groups *g, const uint16_t *nodes, uint64_t n);
void tc_plan_groups_free(tc_plan_groups *g);

/* Graph index at position pos (>= n: a padding position) of batch b's
 * epoch order, buckets applied. Inline-cheap without buckets. */
uint64_t tc_plan_graph(const tc_plan *p, tc_plan_batch *b, uint64_t pos);

/* The position whose graph fills the place of a corrupt graph: the
 * batch's borrow counter modulo n (positions after the batch's own, wrapping
 * within the epoch). */
static inline uint64_t tc_plan_borrowed(const tc_plan *p, uint64_t borrow) { return borrow % p->n; }

/* Where position pos of epoch `epoch` is read in p's world: the rank, that
 * rank's batch seq and the slot in it (the inverse of tc_plan_batch_at).
 * Whatever p->rank is. Returns 0, or TWINCACHE_ENOTFOUND (no message) when
 * no rank reads it in this stream: before the origin, cut by drop_last,
 * past a finite stream's end, or not a position of the range (pos >= n). */
int tc_plan_locate(const tc_plan *p, uint64_t epoch, uint64_t pos, uint32_t *rank, uint64_t *seq, uint32_t *slot);

/* Graphs of the global order consumed once every rank has taken `seq`
 * batches (seq <= total): the value a state carries. */
uint64_t tc_plan_consumed(const tc_plan *p, uint64_t seq);

/* The seq of epoch e's first batch in this stream; TWINCACHE_EINVAL (message
 * set) when the epoch begins before the origin (its start is not in this
 * stream) or lies past a finite stream's end. */
int tc_plan_epoch_seq(const tc_plan *p, uint64_t epoch, uint64_t *seq);

/* The state of position next_seq (rank-independent except the rank field). */
void tc_plan_state(const tc_plan *p, uint64_t next_seq, twincache_loader_state *s);

/* A state positioned at the first batch of `epoch`: in this stream when the
 * epoch starts after its origin, else a stream whose origin is the epoch's
 * start. TWINCACHE_EINVAL past a finite stream's epochs. */
int tc_plan_epoch_state(const tc_plan *p, uint64_t epoch, twincache_loader_state *s);

/* Turns a resume state into plan p's origin and next batch: *next_seq, with
 * p's origin moved where the state says. See twincache_loader_open for the
 * rules. Returns 0, or TWINCACHE_EINVAL with a message naming the field. */
int tc_plan_resume(tc_plan *p, const twincache_loader_state *s, uint64_t *next_seq);

/* The checks every resume state passes first (the plan's and a mixture's,
 * tc_mix.h): the seed; magic 0 ({seed, next_seq} by hand, every other
 * field 0: tc_state_bare_check) is a position in the stream of `total`
 * batches: *next_seq set, returns 1; else magic and a
 * version in min_version..TWINCACHE_LOADER_STATE_VERSION, returns 0 (go on
 * checking). A negative status with a message naming the field otherwise. */
int tc_state_head(const twincache_loader_state *r, uint64_t seed, uint64_t total, uint32_t min_version,
                  uint64_t *next_seq);

/* A bare position (magic 0) is {seed, next_seq} and nothing else: 0, or
 * TWINCACHE_EINVAL naming the first other field that is not 0 (a full
 * state's fields would otherwise be ignored: its cache, world, origin).
 * Pure; in loader_state.c. */
int tc_state_bare_check(const twincache_loader_state *r);

/* State r's identity fields (bucket, cache_tag, shuffle, drop_last,
 * index_begin, index_end) equal want's; else TWINCACHE_EINVAL naming the
 * first that differs and `whose` it should be ("this loader's"). */
int tc_state_match(const twincache_loader_state *r, const twincache_loader_state *want, const char *whose);

#endif /* TC_PLAN_H */
