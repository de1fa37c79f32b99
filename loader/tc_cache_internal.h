/* tc_cache_internal.h — what the loader needs of the cache reader beyond the
 * public API: the LMDB handles and the one chunk lookup shared by
 * twincache_cache_read_graph and the decode threads. Internal to loader/. */
#ifndef TC_CACHE_INTERNAL_H
#define TC_CACHE_INTERNAL_H

#include <lmdb.h>

#include "twincache_loader.h"

struct tc_shared_env;

struct twincache_cache {
  struct tc_shared_env *shared; /* the process's one env of this directory */
  MDB_env *env;
  MDB_dbi dbi_graphs;
  twincache_dims dims;
  uint64_t count; /* graphs committed when the cache was opened */
  twincache_stats stats;
  char *config;  /* NUL-terminated JSON */
  char *library; /* NUL-terminated version text */
  uint64_t disk_bytes;
};

/* Parsed chunk views of one reader, direct-mapped by chunk number, so a
 * graph lookup skips mdb_get and the chunk parse (whose offset table walk
 * costs a dozen cache misses on random access). Views point into the map:
 * valid only inside the read txn that filled them, so a reader bumps `gen`
 * whenever it resets its txn. */
#define TC_CHUNK_CACHE_ENTRIES 2048 /* power of two */
typedef struct tc_chunk_entry {
  uint64_t chunk, gen;
  twincache_chunk_view view;
} tc_chunk_entry;
typedef struct tc_chunk_cache {
  uint64_t gen; /* entries of another generation are stale; starts at 1 */
  tc_chunk_entry *entries; /* (TC_CHUNK_CACHE_ENTRIES), zeroed */
} tc_chunk_cache;

/* Finds the frame of graph `index` inside txn. *frame points into the map
 * (valid until the txn ends). Returns 0, TWINCACHE_ENOTFOUND (index >= count),
 * TWINCACHE_ECORRUPT (chunk missing or not matching its key), TWINCACHE_ELMDB
 * or a chunk parse error. cc may be NULL (no reuse). */
int tc_cache_find_frame(const twincache_cache *c, MDB_txn *txn, tc_chunk_cache *cc, uint64_t index,
                        const void **frame, size_t *size);

/* Maps an LMDB return code to a twincache status. */
int tc_status_from_mdb(int rc);

#endif /* TC_CACHE_INTERNAL_H */
