/* tc_cache_internal.h — what the loader needs of the cache reader beyond the
 * public API: a per-thread read handle (an LMDB read transaction kept idle
 * between uses) and the one chunk lookup shared by
 * twincache_cache_read_graph and the decode threads. LMDB stays behind it.
 * Internal to the project (loader/). */
#ifndef TC_CACHE_INTERNAL_H
#define TC_CACHE_INTERNAL_H

#include "twincache_cache.h"

/* Parsed chunk views of one reader, direct-mapped by chunk number, so a
 * graph lookup skips the LMDB lookup and the chunk parse (whose offset table
 * walk costs a dozen cache misses on random access). Views point into the
 * map: valid only inside the read txn that filled them, so a reader bumps
 * `gen` whenever it resets its txn. */
#define TC_CHUNK_CACHE_ENTRIES 2048 /* power of two */
typedef struct tc_chunk_entry {
  uint64_t chunk, gen;
  twincache_chunk_view view;
} tc_chunk_entry;
typedef struct tc_chunk_cache {
  uint64_t gen; /* entries of another generation are stale; starts at 1 */
  tc_chunk_entry *entries; /* (TC_CHUNK_CACHE_ENTRIES), zeroed */
} tc_chunk_cache;

/* A read handle of one thread: created idle, made live by renew (a snapshot
 * of what is committed then), made idle again by reset. Pointers found
 * through it are valid until the next reset/free. One thread at a time. */
typedef struct tc_cache_txn tc_cache_txn;

/* Creates an idle read handle on c. Returns 0, TWINCACHE_ENOMEM or a storage
 * status (the message of twincache_strerror says what failed). */
int tc_cache_txn_create(const twincache_cache *c, tc_cache_txn **out);
/* Makes an idle handle live. Returns 0 or a storage status. */
int tc_cache_txn_renew(tc_cache_txn *t);
/* Makes a live handle idle (accepts an idle one). */
void tc_cache_txn_reset(tc_cache_txn *t);
/* Frees the handle (live or idle; accepts NULL). */
void tc_cache_txn_free(tc_cache_txn *t);

/* A part of a set (twincache_cache_open_part): returns 1 and its node k of
 * M, or 0 for anything else (a cache, a shard, a whole set). */
int tc_set_part(const twincache_cache *c, uint32_t *node, uint32_t *nodes);
/* Shard i's graphs [first, end) of the set c, whether c holds it or not (a
 * part). Returns 0, or TWINCACHE_EINVAL (no message) when c is not a set or
 * i is not one of its twincache_cache_members. */
int tc_set_range(const twincache_cache *c, uint32_t i, uint64_t *first, uint64_t *end);

/* The directory c was opened as (for messages); valid until close. */
const char *tc_cache_path(const twincache_cache *c);

/* Finds the frame of graph `index` through the live handle t. *frame points
 * into the map (valid until t is reset). Returns 0, TWINCACHE_ENOTFOUND
 * (index >= count), TWINCACHE_ECORRUPT (chunk missing, not matching its key
 * or of another cache), TWINCACHE_ELMDB or a chunk parse error. cc may be
 * NULL (no reuse). */
int tc_cache_find_frame(const twincache_cache *c, tc_cache_txn *t, tc_chunk_cache *cc,
                        uint64_t index, const void **frame, size_t *size);

/* Starts fetching the first max_bytes of graph index's frame into the
 * cache, reading only its chunk's offset table (not the frame: a decode
 * thread calls this for the next graph before decoding the current one, and
 * a demand read of the frame would stall it). Errors are left to
 * tc_cache_find_frame. */
void tc_cache_prefetch_frame(const twincache_cache *c, tc_cache_txn *t, tc_chunk_cache *cc, uint64_t index,
                             size_t max_bytes);

#endif /* TC_CACHE_INTERNAL_H */
