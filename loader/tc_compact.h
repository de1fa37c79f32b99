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

/* Decodes the frame of graph `index` (twincache_frame_decode_view) and
 * writes it to position pos of the compact batch; caps gives the
 * capacities a frame may not exceed (cap_nodes, cap_samples, cap_inter,
 * cap_hidden: TWINCACHE_ETOOBIG, as twincache_frame_decode). Position 0
 * starts a new batch (no columns); a failed decode leaves the batch's column
 * count as before it. Returns 0, a decode error, or TWINCACHE_ECORRUPT for a
 * frame that does not fit the batch. */
int tc_compact_decode_graph(twincache_dctx *d, const void *frame, size_t size, uint64_t index,
                            const twincache_graph *caps, twincache_compact_batch *cb,
                            uint32_t pos);
/* Writes position pos of the batch as a padding graph (all zero, no columns). */
void tc_compact_zero_graph(twincache_compact_batch *cb, uint32_t pos);

#endif /* TC_COMPACT_H */
