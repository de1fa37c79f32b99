/* tc_cache_writer.h — the writing side of a cache (used by twincache-gen):
 * create or reopen the cache directory, hold the one-writer lock, write meta
 * and append chunk records in batched transactions, grow the map.
 * Plain inputs only (dims, config JSON text, directory, map size): the
 * generator keeps its config, its diffing and its thread pool.
 * One writer object is used by one thread at a time. Internal to the project. */
#ifndef TC_CACHE_WRITER_H
#define TC_CACHE_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "tc_cache_shard.h"
#include "twincache_format.h"

typedef struct tc_cache_writer tc_cache_writer;

/* One chunk record to store: key `chunk` (graphs chunk*C ...). */
typedef struct tc_cache_chunk {
  uint64_t chunk;
  const void *data;
  size_t size;
} tc_cache_chunk;

/* Opens the cache directory `dir` for writing, creating the directory and the
 * cache when they do not exist. Takes DIR/twincache-gen.lock (flock) for the
 * writer's lifetime: a second writer gets TWINCACHE_EBUSY. A new cache gets
 * the meta entries format_version, config (config_json), library (library
 * text), dims, committed 0 and zero stats. An existing cache must be of this
 * format version (TWINCACHE_EVERSION otherwise: readers accept 1..current,
 * the writer extends only its own) whose meta record passes its checksum
 * (TWINCACHE_ECORRUPT otherwise: an altered cache is never extended); its
 * config is NOT compared (tc_cache_writer_config gives it to the caller).
 * map_size_bytes: the initial LMDB map (doubled when full).
 * Returns 0 and sets *out, or a status with one message naming the
 * directory (twincache_last_error): TWINCACHE_EIO, EBUSY, ENOTCACHE,
 * EVERSION, ECORRUPT, ETRUNCATED, EFULL, ELMDB, ENOMEM, EINVAL. Nothing
 * stays open on error. */
int tc_cache_writer_open(const char *dir, const twincache_dims *dims, const char *config_json,
                         const char *library, uint64_t map_size_bytes, tc_cache_writer **out);
/* The same for shard `shard` of the cache (NULL: the whole cache, exactly
 * tc_cache_writer_open). A new shard gets the `shard` meta entry and
 * committed = shard->first (a shard's committed count is the end of its
 * committed part of the index, FORMAT.md section 7); an existing directory
 * must hold this very shard (or, with NULL, a whole cache), else
 * TWINCACHE_EMISMATCH naming what it holds. */
int tc_cache_writer_open_shard(const char *dir, const twincache_dims *dims, const char *config_json,
                               const char *library, uint64_t map_size_bytes, const tc_cache_shard *shard,
                               tc_cache_writer **out);

/* The config JSON stored in the cache (not NUL-terminated; *len bytes),
 * valid until close. */
const char *tc_cache_writer_config(const tc_cache_writer *w, size_t *len);
/* Graphs committed and the committed stats (as of the last commit). */
uint64_t tc_cache_writer_committed(const tc_cache_writer *w);
const twincache_stats *tc_cache_writer_stats(const tc_cache_writer *w);
/* The cache tag every chunk record must carry
 * (twincache_chunk_builder_set_tag). */
uint64_t tc_cache_writer_tag(const tc_cache_writer *w);
/* Times the map was doubled. */
uint64_t tc_cache_writer_map_grows(const tc_cache_writer *w);

/* Writes chunks[0..n) (in increasing key order; chunks beyond those present
 * at open are appended) and the meta dims, committed = `committed`, stats =
 * *stats in ONE transaction, so the count and the chunks never disagree.
 * When the map is full it is doubled and the transaction replayed.
 * Returns 0, or TWINCACHE_EFULL (disk full; the cache keeps its last
 * commit), TWINCACHE_EIO, TWINCACHE_ENOMEM or TWINCACHE_ELMDB with a message
 * naming the directory and LMDB's error (twincache_last_error). */
int tc_cache_writer_put(tc_cache_writer *w, const tc_cache_chunk *chunks, size_t n,
                        uint64_t committed, const twincache_stats *stats);

/* Closes the environment and releases the lock. Accepts NULL. */
void tc_cache_writer_close(tc_cache_writer *w);

#endif /* TC_CACHE_WRITER_H */
