/* twincache_cache.h — the storage of a twincache cache: open a cache
 * directory (an LMDB environment with the sub-databases "meta" and
 * "graphs") read-only, read its meta and look graphs up by index.
 *
 * Status codes and twincache_strerror() are those of twincache_format.h;
 * every function that fails leaves one message for twincache_last_error()
 * naming the directory, file, chunk or graph concerned (e.g. "cache DIR: No
 * such file or directory", "DIR: graph 7: chunk 0, slot 7: ...").
 * The writer side (used by twincache-gen) is internal: cache/tc_cache_writer.h.
 */
#ifndef TWINCACHE_CACHE_H
#define TWINCACHE_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "twincache_format.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct twincache_cache twincache_cache;

/* Opens the cache directory `path` read-only, or a cache set (FORMAT.md
 * section 7): a directory whose subdirectories are the shards of one cache
 * (twincache-gen --shard I/N; a directory without data.mdb is read as a
 * set), or a manifest file naming them. A set behaves as the whole cache
 * (same count, dims, config, tag, graphs and frames); it is checked
 * completely at open, before any graph is read: a shard missing, twice, of
 * another split, config or seed, incomplete, or not matching its manifest
 * line is TWINCACHE_EMISMATCH with a message naming the shard or line, and
 * each shard's own open error comes back prefixed by "set PATH: ". Returns 0 and sets *out, or
 * TWINCACHE_ENOTFOUND (no such directory), TWINCACHE_ENOTCACHE (not an LMDB
 * environment with twincache meta), TWINCACHE_EVERSION (newer format),
 * TWINCACHE_ECORRUPT (meta unreadable, or a v2 meta record failing its
 * checksum), TWINCACHE_ETRUNCATED (data file shorter than the database says;
 * checked before any page is read), TWINCACHE_ELMDB, TWINCACHE_ENOMEM.
 * Reads format versions 1..TWINCACHE_FORMAT_VERSION.
 * A cache may be opened while a generator is still writing it: the reader
 * sees the graphs committed when it opened (also after the writer grows the
 * map). Handles of the same directory in one process share one LMDB
 * environment, so a cache may be opened any number of times (several
 * loaders, a reader beside a loader). Close with twincache_cache_close
 * (accepts NULL). A cache handle may be used from several threads at once
 * for read_graph/chunk calls, each with its own dctx. */
int twincache_cache_open(const char *path, twincache_cache **out);
void twincache_cache_close(twincache_cache *c);

/* Opens node `node` of `nodes`'s part of a cache set: the directory (or
 * manifest) holding exactly the shards node k of M holds under the fixed
 * rule "node k holds shards k, k + M, k + 2M, ..." (so every node knows every
 * node's graphs from the shard count and the cache's size alone). The part
 * has the whole set's count, dims, config and tag; its stats and disk bytes
 * are its own shards'; reading a graph of a shard it does not hold is
 * TWINCACHE_ENOTFOUND naming the shard; twincache_cache_member is NULL for
 * such a shard. Checked at open like a set: a shard of the node's share
 * missing, a shard that is not the node's (another node's, or of another
 * split), nodes above the shard count are TWINCACHE_EMISMATCH with a message
 * naming the shard and the node's share; nodes 0, node >= nodes, or path not
 * a set are TWINCACHE_EINVAL. Otherwise as twincache_cache_open. */
int twincache_cache_open_part(const char *path, uint32_t node, uint32_t nodes, twincache_cache **out);

/* Facts of the cache; the returned pointers live as long as the handle. */
const twincache_dims *twincache_cache_dims(const twincache_cache *c);
uint64_t twincache_cache_count(const twincache_cache *c); /* graphs committed */
const twincache_stats *twincache_cache_stats(const twincache_cache *c);
const char *twincache_cache_config(const twincache_cache *c); /* JSON text, NUL-terminated */
const char *twincache_cache_library(const twincache_cache *c); /* writer's version text */
/* The format version the cache was written with (1..TWINCACHE_FORMAT_VERSION;
 * the generator extends only a cache of its own version). */
uint32_t twincache_cache_format_version(const twincache_cache *c);
/* Bytes the cache occupies on disk (data file size). */
uint64_t twincache_cache_disk_bytes(const twincache_cache *c);
/* The cache tag: FNV-1a 64 of the config JSON bytes as stored in meta (the
 * stored tag for v2 caches, whose meta checksum and every chunk record carry
 * it; computed from the config for v1 caches). Two caches of the same config
 * have the same tag. Thread-safe. */
uint64_t twincache_cache_tag(const twincache_cache *c);

/* The kind of worlds the cache holds, read from its config's top-level keys
 * (never from text nested in it, such as an import's "source"):
 * TWINCACHE_WORLDS_OBSERVED for imported data ("observed": true, FORMAT.md
 * 3.11), TWINCACHE_WORLDS_INDEPENDENT for twincache-gen --worlds independent
 * ("worlds": "independent", FORMAT.md 3.9), else TWINCACHE_WORLDS_TWIN.
 * Thread-safe. */
enum twincache_worlds { TWINCACHE_WORLDS_TWIN = 0, TWINCACHE_WORLDS_INDEPENDENT = 1, TWINCACHE_WORLDS_OBSERVED = 2 };
int twincache_cache_worlds(const twincache_cache *c);

/* Shards. A shard opened alone holds graphs [first, count) of its cache
 * (count is the end of its committed part of the index; other indices are
 * TWINCACHE_ENOTFOUND, "open the set"). twincache_cache_first returns that
 * first index (0 for a whole cache or a set); twincache_cache_shard returns
 * 1 and the shard's index, the shard count and the end of its range (one
 * past its last graph once complete) for a shard (any pointer may be NULL),
 * 0 for a whole cache or a set. */
uint64_t twincache_cache_first(const twincache_cache *c);
int twincache_cache_shard(const twincache_cache *c, uint32_t *index, uint32_t *count, uint64_t *end);
/* A set's shards: their number (0 when c is one directory), and shard i's
 * handle (valid as long as c; NULL when i is out of range, or a shard a part
 * of the set does not hold). */
uint32_t twincache_cache_members(const twincache_cache *c);
const twincache_cache *twincache_cache_member(const twincache_cache *c, uint32_t i);
/* Writes a manifest (FORMAT.md 7.2) naming the shards of the set c by
 * their absolute paths to out_path, through a temporary file renamed into
 * place (an existing out_path is replaced only by a complete manifest).
 * Edit its paths to move shards (e.g. a node's shards onto local disk).
 * Returns 0, TWINCACHE_EINVAL (c is not a set) or TWINCACHE_EIO with the
 * message naming the file. */
int twincache_cache_write_manifest(const twincache_cache *c, const char *out_path);

/* Decodes graph `index` into g (capacities as in twincache_graph; use
 * twincache_graph_alloc with the cache's dims). Returns 0,
 * TWINCACHE_ENOTFOUND (index >= count) or any decode error;
 * TWINCACHE_ECORRUPT also for a v2 chunk record whose tag is not this
 * cache's (a record of another config or seed), and for a frame whose
 * index is not `index` or whose sizes do not fit the cache's dims (N <=
 * max_nodes, S = samples, K <= max_inter). */
int twincache_cache_read_graph(twincache_cache *c, twincache_dctx *d, uint64_t index,
                               twincache_graph *g);
/* Copies the raw frame bytes of graph `index` (for tools and benchmarks) into
 * a malloc'd buffer the caller frees. */
int twincache_cache_read_frame(twincache_cache *c, uint64_t index, void **frame, size_t *size);

#ifdef __cplusplus
}
#endif
#endif /* TWINCACHE_CACHE_H */
