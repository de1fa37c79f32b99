/* tc_mix.h — the mixture plan: the stream of a loader over several sources
 * (caches, sets, fresh worlds) with proportions. Pure arithmetic like
 * tc_plan.h (no threads, no I/O, no cache); tested exhaustively without a
 * cache (tests/loader/test_mix.c).
 *
 * Counts. Every batch (G graphs, the per-rank batch_size) holds exactly c_i
 * graphs of source i, sum c_i = G, in source order: slots [0, c_0) from
 * source 0, the next c_1 from source 1, ... The c_i come from the weights w_i
 * by the largest-remainder rule: quota q_i = G * w_i / sum w; c_i = floor(q_i);
 * the G - sum floor(q_i) graphs left go one each to the largest fractional
 * parts (ties: lower source index); then every source with c_i = 0 takes one
 * graph from the source with the largest c_i (ties: lower index), so every
 * c_i >= 1 (G >= number of sources is required).
 *
 * Orders. Source i has its own endless order: position p (0, 1, 2, ...) holds
 * graph begin_i + perm_{i,e}(p mod n_i), e = p / n_i being the source's own
 * epoch, perm_{i,e} a stateless permutation keyed by (seed, i, e) when
 * shuffling, the identity otherwise. A source that runs out simply starts its
 * next permutation; nothing is padded and no graph is marked not valid.
 *
 * Batches. Global batch k (k = 0, 1, ...) takes positions [k*c_i, (k+1)*c_i)
 * of source i. Rank r of W reads global batches r, r + W, ...: its j-th
 * batch since the origin k0 is global batch k0 + j*W + r. Every batch is
 * full and has the same composition, so the ranks are balanced with no
 * padding, and the stream does not depend on W: the state is k0 (global
 * batches consumed), and a resume at another world size continues the same
 * global stream.
 *
 * Epochs. The mixture's epoch is E = ceil(n_L / c_L) global batches, L the
 * lead source: the one with the largest c_i (ties: lower index), so one
 * epoch passes over the lead source once (its last batch may start the lead's
 * next permutation). With `epochs` > 0 the stream ends after epochs*E global
 * batches, completed up to a whole step: each rank reads
 * ceil((epochs*E - k0) / W) batches, the last step's extra global batches
 * taking the next positions of every source's order. */
#ifndef TC_MIX_H
#define TC_MIX_H

#include <stdint.h>

#include "tc_common.h"
#include "twincache_format.h"
#include "twincache_loader.h"

#define TC_MIX_MAX 16 /* sources of one mixture */

typedef struct tc_mix {
  uint32_t nsrc;                  /* 2..TC_MIX_MAX (1 works too) */
  uint64_t begin[TC_MIX_MAX];     /* source i's graph range [begin, begin + n) */
  uint64_t n[TC_MIX_MAX];         /* >= 1 */
  uint32_t count[TC_MIX_MAX];     /* c_i >= 1, graphs of source i per batch */
  uint32_t first[TC_MIX_MAX];     /* slot of source i's first graph in a batch */
  uint32_t batch;                 /* G = sum c_i */
  uint32_t world, rank;           /* W, r < W */
  uint32_t epochs;                /* 0 = endless */
  uint8_t shuffle;
  uint64_t seed;
  uint32_t lead;                  /* L */
  uint64_t epoch_batches;         /* E, global batches of an epoch */
  uint64_t origin;                /* k0: global batches consumed at seq 0 */
  uint64_t total;                 /* this rank's batches; UINT64_MAX = endless */
  uint64_t tag;                   /* identity of the mixture (tc_mix_tag), 0 until set */
} tc_mix;

/* The largest-remainder counts c[0..nsrc) of weights w for batch G (see
 * above). Returns 0, or TWINCACHE_EINVAL with a message: nsrc 0 or above
 * TC_MIX_MAX, a weight not finite or <= 0, G < nsrc. */
int tc_mix_counts(const double *w, uint32_t nsrc, uint32_t G, uint32_t *c);

/* Builds the mixture plan at origin 0. begin/n: each source's graph range.
 * Returns 0, or TWINCACHE_EINVAL with a message (the counts' errors, an
 * empty source, world 0, rank >= world). */
int tc_mix_init(tc_mix *m, const double *weights, const uint64_t *begin, const uint64_t *n, uint32_t nsrc,
                uint32_t batch, uint32_t world, uint32_t rank, uint32_t epochs, int shuffle, uint64_t seed);

/* Moves seq 0 to origin k0 (global batches consumed) and re-derives total.
 * TWINCACHE_EINVAL when k0 lies past a finite stream's epochs*E. */
int tc_mix_set_origin(tc_mix *m, uint64_t k0);

/* The global batch of this rank's batch seq. */
static inline uint64_t tc_mix_global(const tc_mix *m, uint64_t seq) {
  return m->origin + seq * m->world + m->rank;
}

/* Global batches consumed once every rank has taken `seq` batches: the
 * value a state carries. */
static inline uint64_t tc_mix_consumed(const tc_mix *m, uint64_t seq) { return m->origin + seq * m->world; }

/* The mixture epoch global batch k belongs to. */
static inline uint64_t tc_mix_epoch(const tc_mix *m, uint64_t k) { return k / m->epoch_batches; }

/* Slot `slot` (< G) of global batch k: its source, the position in that
 * source's endless order, and the graph index. */
void tc_mix_slot(const tc_mix *m, uint64_t k, uint32_t slot, uint32_t *src, uint64_t *pos, uint64_t *index);

/* The graph at position pos of source src's endless order. */
uint64_t tc_mix_index(const tc_mix *m, uint32_t src, uint64_t pos);

/* The permutation key of source src's own epoch e, and the graph at pos
 * with that key (key = tc_mix_key(m, src, pos / n[src])): the loader derives
 * each source's key once per epoch a batch touches, not once per graph. */
uint64_t tc_mix_key(const tc_mix *m, uint32_t src, uint64_t e);
uint64_t tc_mix_index_key(const tc_mix *m, uint32_t src, uint64_t pos, uint64_t key);

/* Sets m->tag, the mixture's identity in a state's cache_tag field: FNV-1a
 * 64 over the source count and, per source, its cache tag tags[i], graph
 * range and count c_i; then, when some sources are fresh and some stored
 * (fresh[i] 1 or 0; NULL = none fresh), the nsrc bytes of fresh, so such a
 * state opens only the same choice (all-stored and all-fresh mixtures keep
 * the tag they always had). */
void tc_mix_set_tag(tc_mix *m, const uint64_t *tags, const uint8_t *fresh);

/* The state at this rank's next batch next_seq. A mixture's state: cache_tag
 * = m->tag, index_begin 0, index_end = E (global batches of an epoch),
 * equal_ranks 1, drop_last 0, origin = global batches consumed at seq 0
 * (not graphs, as for one source); version TWINCACHE_LOADER_STATE_VERSION. */
void tc_mix_state(const tc_mix *m, uint64_t next_seq, twincache_loader_state *s);

/* Turns a resume state into m's origin and *next_seq: a state of the same
 * world size continues its numbering (any rank's state serves every rank);
 * another world size continues the global stream where every rank stood
 * (origin + next_seq * its world_size global batches), from seq 0. A state
 * with magic 0 ({seed, next_seq} by hand) is a position in m's own stream.
 * Refused (TWINCACHE_EINVAL, the field named): another seed, magic, a version
 * other than this library's, another cache_tag (other sources, ranges or
 * counts), index_begin/index_end, shuffle, drop_last, equal_ranks,
 * batch_size (it sets the counts), a world/rank describing no stream, or a
 * position past a finite stream's end. */
int tc_mix_resume(tc_mix *m, const twincache_loader_state *s, uint64_t *next_seq);

#endif /* TC_MIX_H */
