/* tc_cache_lmdb.h — the LMDB layout of a cache, private to cache/ (the only
 * place that includes lmdb.h): sub-database names, the chunk key, meta
 * access and the one LMDB-error -> status mapping. */
#ifndef TC_CACHE_LMDB_H
#define TC_CACHE_LMDB_H

#include <lmdb.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>

#include "tc_cache_internal.h"
#include "tc_cache_shard.h"
#include "tc_common.h"
#include "tc_error.h"

#define TC_DB_META "meta"     /* meta entries, keys TWINCACHE_META_* */
#define TC_DB_GRAPHS "graphs" /* chunk records, key tc_chunk_key */
#define TC_MAX_DBS 4

/* The key of chunk `chunk`: 8-byte big-endian, so LMDB's order is index
 * order and the writer can append. */
static inline MDB_val tc_chunk_key(uint8_t bytes[8], uint64_t chunk) {
  tc_store_be64(bytes, chunk);
  MDB_val k = {8, bytes};
  return k;
}

static inline int tc_meta_get(MDB_txn *txn, MDB_dbi dbi, const char *key, MDB_val *v) {
  MDB_val k = {strlen(key), (void *)key};
  return mdb_get(txn, dbi, &k, v);
}
static inline int tc_meta_put(MDB_txn *txn, MDB_dbi dbi, const char *key, const void *val,
                              size_t size) {
  MDB_val k = {strlen(key), (void *)key}, v = {size, (void *)val};
  return mdb_put(txn, dbi, &k, &v, 0);
}

/* ---- LMDB helpers (env.c), the writer's too ---- */
/* Maps an LMDB return code to a twincache status: LMDB's own codes here,
 * an errno value LMDB passed on through tc_status_from_errno (tc_error.h),
 * with `missing` what ENOENT means where the caller is. Sets no message. */
int tc_status_from_mdb(int rc, int missing);

/* Checks, right after mdb_env_open and before any transaction touches the
 * map, that the data file holds every page LMDB says is in use (the last
 * used page of the newest meta page): reading a page beyond the end of the
 * file would be a SIGBUS. Returns 0, or TWINCACHE_ETRUNCATED or
 * TWINCACHE_EIO with the message naming DIR/data.mdb. */
int tc_env_check_size(MDB_env *env);
/* Before mdb_env_open: a data file of size_bytes too short for LMDB's two
 * meta pages that is empty or starts like an LMDB file is truncated; a
 * longer one whose newest valid meta page names a last page beyond the file
 * is truncated or damaged (mdb_env_open would fail to map it as "out of
 * memory"). Either is TWINCACHE_ETRUNCATED, the message naming data_path;
 * otherwise 0 (LMDB judges the rest). */
int tc_meta_read_entries(MDB_txn *txn, MDB_dbi meta, twincache_meta_entry e[TWINCACHE_MK_COUNT]);
int tc_data_check_short(const char *data_path, uint64_t size_bytes);

struct tc_shared_env;
struct tc_cache_set;

struct twincache_cache {
  struct tc_shared_env *shared; /* the process's one env of this directory */
  MDB_env *env;
  MDB_dbi dbi_graphs;
  uint32_t version; /* format version of the cache */
  uint64_t tag;     /* the cache tag (stored, or computed for v1) */
  twincache_dims dims;
  uint64_t count; /* graphs committed when the cache was opened */
  twincache_stats stats;
  char *path;    /* the directory as opened, for messages */
  char *config;  /* NUL-terminated JSON */
  char *library; /* NUL-terminated version text */
  uint64_t disk_bytes;
  /* (chunks at open) 1 once a loader thread has prefaulted that chunk's
   * pages into this process's map (tc_chunk_prefault) */
  atomic_uchar *prefaulted;
  uint64_t n_chunks;
  /* A shard (shard.count > 0) holds graphs [shard.first, count): its
   * committed count is the end of its committed part of the index. */
  tc_cache_shard shard;
  uint64_t first; /* the first index it holds: shard.first, else 0 */
  /* A set of shards (set.c): env is NULL, reads go to its members. */
  struct tc_cache_set *set;
};

struct tc_cache_txn {
  const twincache_cache *c;
  MDB_txn *txn;
  int live;
  tc_cache_txn **members; /* a set's: one handle per member (txn NULL) */
};

/* ---- one cache directory (env.c): below set.c and cache.c ---- */
/* stat(path) for an open: 0, or TWINCACHE_ENOTFOUND with "PATH: no such
 * cache directory" (or the system's reason). */
int tc_cache_stat(const char *path, struct stat *st);
/* Opens the cache directory at path (dir: its stat) read-only, as
 * twincache_cache_open does for one directory (*out NULL on error, the
 * message naming the file at fault); never a set. */
int tc_cache_open_env(const char *path, const struct stat *dir, twincache_cache **out);
/* Frees a handle's own parts and drops its env (accepts NULL); not c->set
 * (set.c frees that first). */
void tc_cache_free(twincache_cache *c);

/* ---- sets (set.c): above env.c, below cache.c ---- */
/* A path that names a set: a regular file (a manifest) or a directory
 * without data.mdb. */
int tc_set_is_set(const char *path, const struct stat *st);
/* Opens the set at path (tc_set_is_set); as twincache_cache_open. nodes 0:
 * the whole set; else node's part (twincache_cache_open_part). */
int tc_set_open(const char *path, const struct stat *st, uint32_t node, uint32_t nodes, twincache_cache **out);
/* Closes the members and frees the set (accepts NULL). */
void tc_set_free(struct tc_cache_set *s);
/* The member of set c holding graph index (index < count), and its
 * position in the set's member list; NULL when c is a part of the set that
 * does not hold that shard (*pos is set all the same). */
twincache_cache *tc_set_member(const twincache_cache *c, uint64_t index, uint32_t *pos);

#endif /* TC_CACHE_LMDB_H */
