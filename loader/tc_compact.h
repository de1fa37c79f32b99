/* tc_compact.h — the compact batch layout inside the loader (internal).
 * loader.c calls these at a few points (open, close, decode, padding); all
 * compact logic lives in compact.c. */
#ifndef TC_COMPACT_H
#define TC_COMPACT_H

#include "twincache_loader.h"

/* Allocates the compact slab of one slot (alloc must give 64-byte aligned
 * memory), zeroes it and points b->compact and b's views at it; b->slab,
 * inter, target, value, node_mask and int_mask become NULL. Returns 0,
 * TWINCACHE_EINVAL (capacity beyond uint32 columns, or alloc returned
 * memory not 64-byte aligned: b->compact is then set for
 * tc_compact_slot_close to free) or TWINCACHE_ENOMEM. */
int tc_compact_slot_open(twincache_batch *b, const twincache_batch_layout *dense,
                         void *(*alloc)(size_t, void *), void *user);
/* Frees what tc_compact_slot_open made (accepts a batch without any). */
void tc_compact_slot_close(twincache_batch *b, void (*free_fn)(void *, void *), void *user);

/* Points g's base, inter and adj at new per-thread dense scratch sized by
 * g's capacities (ld = ld_adj = cap_nodes). Returns 0 or TWINCACHE_ENOMEM. */
int tc_compact_scratch_init(twincache_graph *g);
void tc_compact_scratch_free(twincache_graph *g);

/* Decodes the frame of graph `index` into the scratch graph g (its target,
 * kind and value arrays hold K entries) and writes it to position pos of the
 * compact batch. Position 0 starts a new batch (no columns); a failed decode
 * leaves the batch's column count as before it. Returns 0, a decode error,
 * or TWINCACHE_ECORRUPT for a frame that does not fit the batch. */
int tc_compact_decode_graph(twincache_dctx *d, const void *frame, size_t size, uint64_t index,
                            twincache_graph *g, twincache_compact_batch *cb, uint32_t pos);
/* Writes position pos of the batch as a padding graph (all zero, no columns). */
void tc_compact_zero_graph(twincache_compact_batch *cb, uint32_t pos);

#endif /* TC_COMPACT_H */
