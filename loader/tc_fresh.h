/* tc_fresh.h — fresh worlds inside the loader (internal): a graph's SCM from
 * its frame, new exogenous noise from scm/'s counters, its base and twin
 * worlds written into a dense or compact batch position. loader.c calls
 * these; all fresh-mode logic lives in fresh.c. */
#ifndef TC_FRESH_H
#define TC_FRESH_H

#include "tc_scm.h"
#include "twincache_loader.h"

/* One decode thread's fresh-mode scratch. */
typedef struct tc_fresh tc_fresh;

/* For graphs of up to the cache's dims (max_nodes, max_inter, hidden) and
 * `rows` samples per world. Returns NULL when out of memory. */
tc_fresh *tc_fresh_create(const twincache_dims *d, uint32_t rows);
void tc_fresh_free(tc_fresh *f);

/* The counter key of graph `index` in epoch group `group` of the cache
 * with tag `tag` (tc_scm_fresh_key). */
uint64_t tc_fresh_key(uint64_t tag, uint64_t index, uint64_t group);

/* Both fill functions decode graph `index`'s frame (frame, size) without its
 * stored worlds, check it (caps: the capacities a frame may not exceed,
 * TWINCACHE_ETOOBIG; stored_samples: the S every frame of the cache
 * carries), draw its noise from `key` and sample S = rows rows per world.
 * They return 0, a decode error, or TWINCACHE_ECORRUPT. */

/* Dense: base (S, N) and inter (K, S, N) of one graph position, every column
 * of each row written (padding 0), interventions beyond the graph's k not
 * touched; adj (N, N) written whole; the graph's nodes, interventions and
 * their target/kind/value (K) out for the caller's masks, and the rows each
 * world holds (k+1): the frame's count (FORMAT.md 3.10) capped at S, rows
 * past it +0.0. */
int tc_fresh_dense(tc_fresh *f, twincache_dctx *d, const void *frame, size_t size, uint64_t index,
                   uint64_t key, const twincache_graph *caps, uint32_t stored_samples,
                   const twincache_batch_layout *L, float *base, float *inter, uint8_t *adj,
                   uint32_t *n_nodes, uint32_t *n_inter, uint16_t *target, uint8_t *kind,
                   float *value, uint8_t *n_targets, uint16_t *more_target, float *more_value,
                   uint32_t *world_rows);

/* Compact: position pos of cb, as tc_compact_decode_graph writes a stored
 * graph (position 0 starts a new batch). */
int tc_fresh_compact(tc_fresh *f, twincache_dctx *d, const void *frame, size_t size, uint64_t index,
                     uint64_t key, const twincache_graph *caps, uint32_t stored_samples,
                     twincache_compact_batch *cb, uint32_t pos);

#endif /* TC_FRESH_H */
