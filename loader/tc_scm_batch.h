/* tc_scm_batch.h — the SCM batch inside the loader (internal): a graph's
 * SCM from its frame, packed into one position of an SCM slab
 * (twincache_scm_layout) for a sampler outside the loader. loader.c calls
 * these; the packing lives in scm_batch.c. */
#ifndef TC_SCM_BATCH_H
#define TC_SCM_BATCH_H

#include "tc_scm.h"
#include "twincache_loader.h"

/* One decode thread's scratch: the SCM of the graph being packed. */
typedef struct tc_scm_packer tc_scm_packer;

/* For graphs of up to the cache's dims. Returns NULL when out of memory. */
tc_scm_packer *tc_scm_packer_create(const twincache_dims *d);
void tc_scm_packer_free(tc_scm_packer *p);

/* Decodes graph `index`'s frame (frame, size) without its stored worlds,
 * checks it (caps: the capacities a frame may not exceed, TWINCACHE_ETOOBIG;
 * stored_samples: the S every frame of the cache carries) and writes its
 * SCM and `key` into position g of slab (layout L), every array of the
 * position written. Returns 0, a decode error, TWINCACHE_ECORRUPT, or
 * TWINCACHE_EINVAL (message naming the graph) for an SCM the layout cannot
 * hold. */
int tc_scm_pack_graph(tc_scm_packer *p, twincache_dctx *d, const void *frame, size_t size, uint64_t index,
                      uint64_t key, const twincache_graph *caps, uint32_t stored_samples,
                      const twincache_scm_layout *L, uint8_t *slab, uint32_t g);

/* Decodes graph `index`'s frame as above (N, K: the batch's pads) into the
 * view *v and the SCM *m (pointing into st). Fresh worlds start here too. */
int tc_scm_load_frame(tc_scm_store *st, twincache_dctx *d, const void *frame, size_t size, uint64_t index,
                      const twincache_graph *caps, uint32_t stored_samples, uint32_t N, uint32_t K,
                      twincache_frame_view *v, tc_scm *m);

/* Zeroes position g of slab (a position no graph fills). */
void tc_scm_pack_zero(const twincache_scm_layout *L, uint8_t *slab, uint32_t g);

#endif /* TC_SCM_BATCH_H */
