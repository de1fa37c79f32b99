/* tc_loader_internal.h — the loader's internal hooks for its own tests; not
 * part of the public API. */
#ifndef TC_LOADER_INTERNAL_H
#define TC_LOADER_INTERNAL_H

#include <stdint.h>

#include "twincache_loader.h"

#include "tc_error.h"

/* The one check that a decoded frame fits the batch slot it fills: graph
 * `index` with the cache's S samples, 1..N nodes and at most K worlds.
 * TWINCACHE_OK, or TWINCACHE_ECORRUPT with the sentence naming both. */
static inline int tc_loader_frame_fits(uint64_t got_index, uint32_t got_s, uint32_t got_n, uint32_t got_k,
                                       uint64_t index, uint32_t S, uint32_t N, uint32_t K) {
  TC_RETURN_IF(got_index != index || got_s != S || got_n == 0 || got_n > N || got_k > K, TWINCACHE_ECORRUPT,
               "frame: graph %llu of %u samples, %u nodes, %u interventions; the batch expects graph %llu of "
               "%u samples, 1..%u nodes, at most %u interventions", (unsigned long long)got_index, got_s, got_n,
               got_k, (unsigned long long)index, S, N, K);
  return TWINCACHE_OK;
}

/* next() calls currently inside l (0 or 1): lets a test see that a consumer
 * thread is blocked before it calls close. Thread-safe. */
uint32_t tc_loader_calls_in_next(twincache_loader *l);

#endif /* TC_LOADER_INTERNAL_H */
