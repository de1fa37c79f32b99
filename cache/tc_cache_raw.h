/* tc_cache_raw.h — raw access to the LMDB records of a cache directory, for
 * tests that compare caches byte for byte or damage records on purpose
 * (and tools that must see records the reader refuses). Bypasses every
 * check of the reader and writer: never use it to write a real cache.
 * Internal to the project; one handle per thread. */
#ifndef TC_CACHE_RAW_H
#define TC_CACHE_RAW_H

#include <stddef.h>
#include <stdint.h>

typedef struct tc_cache_raw tc_cache_raw;

/* Opens the LMDB environment in dir (an existing directory) in one
 * transaction: read-only, or writable (the environment is created when
 * absent). Returns 0 or a twincache status. */
int tc_cache_raw_open(const char *dir, int writable, tc_cache_raw **out);
/* Commits a writable handle's changes (returns the commit's status) and
 * closes. Accepts NULL (returns 0). */
int tc_cache_raw_close(tc_cache_raw *r);
/* Closes without committing anything. Accepts NULL. */
void tc_cache_raw_abort(tc_cache_raw *r);

/* db: a sub-database name ("meta", "graphs") or NULL for the main one; a
 * writable handle creates a missing sub-database on put. Keys of the graphs
 * sub-DB are tc_cache_raw_chunk_key's 8 bytes. */
void tc_cache_raw_chunk_key(uint8_t key[8], uint64_t chunk);
/* Copies the value of key into a malloc'd buffer (*val, freed by the
 * caller). Returns 0, TWINCACHE_ENOTFOUND or a status. */
int tc_cache_raw_get(tc_cache_raw *r, const char *db, const void *key, size_t key_len, void **val,
                     size_t *val_len);
int tc_cache_raw_put(tc_cache_raw *r, const char *db, const void *key, size_t key_len, const void *val,
                     size_t val_len);
int tc_cache_raw_del(tc_cache_raw *r, const char *db, const void *key, size_t key_len);
/* Calls fn for every entry of db in key order (pointers valid during the
 * call); stops when fn returns non-zero and returns that value. */
typedef int (*tc_cache_raw_fn)(const void *key, size_t key_len, const void *val, size_t val_len,
                               void *user);
int tc_cache_raw_foreach(tc_cache_raw *r, const char *db, tc_cache_raw_fn fn, void *user);
/* Entries of db (0 when it does not exist). */
uint64_t tc_cache_raw_count(tc_cache_raw *r, const char *db);

/* Copies the environment in src into the existing empty directory dst
 * (LMDB's consistent copy). Returns 0 or a status. */
int tc_cache_raw_copy(const char *src, const char *dst);

#endif /* TC_CACHE_RAW_H */
