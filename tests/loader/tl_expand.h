/* tl_expand.h — what a loader test needs to expand compact batches on the
 * CPU and set them beside the dense ones: the compact layout of a dense
 * layout, its expansion offsets and a dense buffer (for tests that link
 * twincache_kernels and see train/'s tc_expand.h). Header-only. */
#ifndef TL_EXPAND_H
#define TL_EXPAND_H

#include <stdlib.h>

#include "tc_expand.h"
#include "tc_test.h"

typedef struct tl_expander {
  twincache_compact_layout layout;
  twincache_expand_offsets offsets;
  uint8_t *out; /* (dense layout bytes): where twincache_expand_cpu writes */
} tl_expander;

static inline void tl_expander_init(tl_expander *x, const twincache_batch_layout *dense) {
  TC_REQUIRE(twincache_compact_layout_init(&x->layout, dense) == TWINCACHE_OK, "%s", twincache_last_error());
  tc_expand_offsets_init(&x->offsets, &x->layout);
  x->out = calloc(1, dense->bytes);
  TC_REQUIRE(x->out != NULL);
}

static inline void tl_expander_free(tl_expander *x) {
  free(x->out);
  x->out = NULL;
}

#endif /* TL_EXPAND_H */
