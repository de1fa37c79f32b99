/* abi.c — sizes and offsets of the public structs the Python binding mirrors
 * in ctypes (python/twincache/_capi.py). The binding compares them at import,
 * so a struct that changes in a header without its mirror fails loudly
 * instead of reading the wrong bytes. Only the shared library uses this. */
#include <stddef.h>
#include <stdint.h>

#include "twincache_import.h"
#include "twincache_loader.h"

/* The facts, in this order; the binding checks each one by position. */
static const uint64_t abi_facts[] = {
    sizeof(twincache_dims),
    sizeof(twincache_stats),
    sizeof(twincache_graph),
    sizeof(twincache_batch_layout),
    sizeof(twincache_batch),
    offsetof(twincache_batch, slab),
    offsetof(twincache_batch, n_graphs),
    offsetof(twincache_batch, internal_),
    sizeof(twincache_loader_options),
    offsetof(twincache_loader_options, alloc),
    offsetof(twincache_loader_options, corrupt_user),
    sizeof(twincache_loader_state),
    sizeof(twincache_loader_stats),
    offsetof(twincache_batch, generation),
    offsetof(twincache_batch, valid),
    offsetof(twincache_loader_options, layout),
    offsetof(twincache_loader_state, cache_tag),
    offsetof(twincache_loader_options, withhold_targets),
    offsetof(twincache_loader_state, origin),
    offsetof(twincache_batch, nodes),
    offsetof(twincache_loader_options, buckets),
    offsetof(twincache_loader_options, local_nodes),
    offsetof(twincache_loader_state, local_nodes),
    sizeof(twincache_dataset),
    offsetof(twincache_dataset, regime_rows),
};

/* Copies up to cap facts into out (out may be NULL when cap is 0) and
 * returns how many facts there are. Thread-safe, no allocation. */
uint32_t twincache_abi_sizes(uint64_t *out, uint32_t cap);

uint32_t twincache_abi_sizes(uint64_t *out, uint32_t cap) {
  uint32_t n = (uint32_t)(sizeof abi_facts / sizeof abi_facts[0]);
  for (uint32_t i = 0; i < n && i < cap; i++) out[i] = abi_facts[i];
  return n;
}

/* TWINCACHE_VERSION_STRING of this build (the Python package's __version__:
 * the wheel, the library and the package carry one version). Static string. */
const char *twincache_version(void);

const char *twincache_version(void) { return TWINCACHE_VERSION_STRING; }
