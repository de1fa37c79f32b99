/* tc_bench_batch.h — one dense batch of twincache-gen's default workload
 * (linear Gaussian SCMs, ER p = 0.3, a do() on every node) for the GPU
 * kernel benchmark: the generator writes G graphs of N/2..N nodes and S
 * samples into a temporary cache, the loader reads them back as one batch
 * (K = N worlds, padded to N nodes), and the cache is removed. */
#ifndef TC_BENCH_BATCH_H
#define TC_BENCH_BATCH_H

#include <stdint.h>

#include "twincache_loader.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fills *layout and returns its slab (64-byte aligned, free with free()),
 * or NULL with twincache_last_error() naming what failed. N >= 2. */
void *tc_bench_default_batch(uint32_t G, uint32_t N, uint32_t S, uint64_t seed,
                             twincache_batch_layout *layout);

#ifdef __cplusplus
}
#endif

#endif /* TC_BENCH_BATCH_H */
