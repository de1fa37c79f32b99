/* cache.c — the cache reader: open an LMDB cache read-only, read its meta,
 * look graphs up by index and decode them; the per-thread read handles of
 * the loader. */
#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tc_cache_lmdb.h"
#include "tc_error.h"

#define TC_READER_MAP_BYTES (256ull << 30) /* 256 GiB of address space */

int tc_status_from_mdb(int rc, int missing) {
  switch (rc) {
  case MDB_SUCCESS: return TWINCACHE_OK;
  case MDB_NOTFOUND: return TWINCACHE_ENOTFOUND;
  case MDB_INVALID:
  case MDB_VERSION_MISMATCH: return TWINCACHE_ENOTCACHE;
  case MDB_CORRUPTED:
  case MDB_PAGE_NOTFOUND: return TWINCACHE_ECORRUPT;
  case MDB_MAP_FULL: return TWINCACHE_EFULL;
  default: /* LMDB's own codes are negative; it passes errno values on */
    return rc > 0 ? tc_status_from_errno(rc, missing) : TWINCACHE_ELMDB;
  }
}

int tc_env_check_size(MDB_env *env) {
  MDB_envinfo info;
  MDB_stat ms;
  struct stat fs;
  int fd;
  const char *dir = "";
  mdb_env_get_path(env, &dir);
  if (mdb_env_info(env, &info) || mdb_env_stat(env, &ms) || mdb_env_get_fd(env, &fd))
    return tc_error_set(TWINCACHE_EIO, "%s/data.mdb: LMDB cannot report its size", dir);
  if (fstat(fd, &fs) != 0) return tc_error_os(errno, TWINCACHE_ENOTCACHE, "%s/data.mdb", dir);
  uint64_t need_bytes = ((uint64_t)info.me_last_pgno + 1) * ms.ms_psize;
  if ((uint64_t)fs.st_size >= need_bytes) return TWINCACHE_OK;
  return tc_error_set(TWINCACHE_ETRUNCATED,
                      "%s/data.mdb is %llu bytes, but LMDB's last page in use ends at byte %llu: "
                      "truncated or damaged copy",
                      dir, (unsigned long long)fs.st_size, (unsigned long long)need_bytes);
}

/* A data file too short to hold LMDB's two meta pages: LMDB itself calls it
 * "invalid" (or, empty, tries to create it). Empty, or starting with LMDB's
 * meta page magic, it is a truncated cache.
 * A longer file: the meta page LMDB will choose (valid magic and version,
 * the larger transaction id) must not name a last page beyond the file.
 * mdb_env_open grows its map to that page, so a damaged mm_last_pg would
 * otherwise fail there as "out of memory" (or map pages the file lacks). */
#define TC_LMDB_MAGIC 0xBEEFC0DEu  /* mm_magic, after the 16-byte page header */
#define TC_LMDB_DATA_VERSION 1u    /* mm_version */
#define TC_MIN_DATA_BYTES 8192u     /* two meta pages of the smallest page size */
/* Offsets in a meta page (MDB_meta after the 16-byte page header, lmdb's
 * mdb.c): mm_magic, mm_version, mm_dbs[FREE_DBI].md_pad = the page size,
 * mm_last_pg, mm_txnid. */
enum { TC_MM_MAGIC = 16, TC_MM_VERSION = 20, TC_MM_PSIZE = 40, TC_MM_LAST_PG = 136, TC_MM_TXNID = 144,
       TC_MM_END = 152 };
int tc_data_check_short(const char *data_path, uint64_t size_bytes) {
  uint8_t head[TC_MM_END];
  FILE *f = size_bytes > 0 ? fopen(data_path, "rb") : NULL;
  if (size_bytes > 0 && !f) return TWINCACHE_OK; /* mdb_env_open reports it */
  size_t got = f ? fread(head, 1, sizeof head, f) : 0;
  if (size_bytes < TC_MIN_DATA_BYTES) {
    if (f) fclose(f);
    if (size_bytes > 0 && (got < 20 || tc_load_u32(head + TC_MM_MAGIC) != TC_LMDB_MAGIC)) return TWINCACHE_OK;
    return tc_error_set(TWINCACHE_ETRUNCATED,
                        "%s is %llu bytes, too short for LMDB's two meta pages: truncated or damaged copy",
                        data_path, (unsigned long long)size_bytes);
  }
  /* meta page 0 names the page size, and so where meta page 1 lies */
  uint32_t psize = got == sizeof head ? tc_load_u32(head + TC_MM_PSIZE) : 0;
  int have = 0;
  uint64_t last = 0, txnid = 0;
  for (int i = 0; i < 2 && got == sizeof head; i++) {
    if (i == 1 && (psize < 512 || psize > 65536 || (psize & (psize - 1)) || (uint64_t)psize + sizeof head > size_bytes ||
                   fseek(f, (long)psize, SEEK_SET) != 0 || fread(head, 1, sizeof head, f) != sizeof head))
      break;
    if (tc_load_u32(head + TC_MM_MAGIC) != TC_LMDB_MAGIC || tc_load_u32(head + TC_MM_VERSION) != TC_LMDB_DATA_VERSION)
      continue;
    uint64_t t = tc_load_u64(head + TC_MM_TXNID);
    if (!have || t > txnid) {
      have = 1;
      txnid = t;
      last = tc_load_u64(head + TC_MM_LAST_PG);
    }
  }
  if (f) fclose(f);
  if (!have || psize < 512 || psize > 65536) return TWINCACHE_OK; /* LMDB judges it */
  if (last < size_bytes / psize) return TWINCACHE_OK; /* pages 0..last lie in the file */
  return tc_error_set(TWINCACHE_ETRUNCATED,
                      "%s is %llu bytes, but its LMDB meta page says %llu pages are in use: "
                      "truncated or damaged copy",
                      data_path, (unsigned long long)size_bytes,
                      last == UINT64_MAX ? (unsigned long long)last : (unsigned long long)(last + 1));
}

/* Reads the meta entries of txn into e[] (views into the map, valid until
 * the txn ends; absent entries have data NULL). */
int tc_meta_read_entries(MDB_txn *txn, MDB_dbi meta, twincache_meta_entry e[TWINCACHE_MK_COUNT]) {
  for (int k = 0; k < TWINCACHE_MK_COUNT; k++) {
    MDB_val v;
    int rc = tc_meta_get(txn, meta, twincache_meta_key_name(k), &v);
    e[k].data = NULL;
    e[k].size = 0;
    if (rc == MDB_NOTFOUND) continue;
    if (rc != MDB_SUCCESS) return tc_status_from_mdb(rc, TWINCACHE_ENOTFOUND);
    e[k].data = v.mv_size ? v.mv_data : "";
    e[k].size = v.mv_size;
  }
  return TWINCACHE_OK;
}

/* A NUL-terminated malloc'd copy of n bytes. */
static char *text_dup(const char *s, size_t n) {
  char *t = malloc(n + 1);
  if (!t) return NULL;
  if (n) memcpy(t, s, n);
  t[n] = '\0';
  return t;
}

/* Reads a shard's entry, when there is one, into c (after the meta). */
static int shard_read(twincache_cache *c, MDB_txn *txn, MDB_dbi meta) {
  MDB_val v;
  int rc = tc_meta_get(txn, meta, TC_META_SHARD, &v);
  if (rc == MDB_NOTFOUND) return TWINCACHE_OK;
  if (rc != MDB_SUCCESS) return tc_error_set(tc_status_from_mdb(rc, TWINCACHE_ENOTFOUND), "the shard entry: %s",
                                             mdb_strerror(rc));
  rc = tc_cache_shard_decode(v.mv_data, v.mv_size, c->tag, c->dims.graphs, c->dims.chunk_graphs, &c->shard);
  if (rc != TWINCACHE_OK) return rc;
  if (c->count < c->shard.first || c->count > c->shard.end)
    return tc_error_set(TWINCACHE_ECORRUPT, "shard %u of %u (graphs %llu..%llu) counts graphs up to %llu",
                        c->shard.index, c->shard.count, (unsigned long long)c->shard.first,
                        (unsigned long long)c->shard.end - 1, (unsigned long long)c->count);
  c->first = c->shard.first;
  return TWINCACHE_OK;
}

/* Reads and checks the meta record into c. */
static int meta_read(twincache_cache *c, MDB_txn *txn, MDB_dbi meta) {
  twincache_meta_entry e[TWINCACHE_MK_COUNT];
  twincache_meta m;
  int rc = tc_meta_read_entries(txn, meta, e);
  if (rc == TWINCACHE_OK) rc = twincache_meta_parse(e, &m);
  if (rc != TWINCACHE_OK) return rc;
  c->version = m.version;
  c->dims = m.dims;
  c->count = m.committed;
  c->stats = m.stats;
  c->tag = m.tag;
  c->config = text_dup(m.config, m.config_len);
  c->library = text_dup(m.library, m.library_len);
  TC_RETURN_IF(!c->config || !c->library, TWINCACHE_ENOMEM, "%s: out of memory for the config text", c->path);
  return shard_read(c, txn, meta);
}

/* One MDB_env per cache directory per process: LMDB forbids opening an
 * environment twice in one process (closing one copy drops the other's file
 * locks), and a trainer opens a training and a validation loader on the
 * same cache. Handles share the env; the last close closes it. */
typedef struct tc_shared_env {
  dev_t dev;
  ino_t ino;
  MDB_env *env;
  MDB_dbi meta, graphs;
  int have_meta, have_graphs;
  unsigned refs;
  struct tc_shared_env *next;
} tc_shared_env;

static pthread_mutex_t tc_envs_mu = PTHREAD_MUTEX_INITIALIZER;
static tc_shared_env *tc_envs; /* under tc_envs_mu */

/* Opens path read-only; without locks only on a read-only file system.
 * The map is made much larger than the file: a generator writing the cache
 * grows it, and a reader whose map is smaller than the data committed later
 * gets MDB_MAP_RESIZED, which a multi-threaded reader cannot fix in place.
 * A read-only mapping beyond the end of the file costs address space only. */
static int env_open(const char *path, uint64_t file_bytes, MDB_env **out) {
  /* The large reservation first; where it is refused (ulimit -v: ENOMEM;
   * valgrind: EINVAL), the file's size with headroom. A writer growing the
   * file past that then makes later read handles fail with TWINCACHE_ELMDB
   * (reopen). An EINVAL of another cause comes back from the second try. */
  const uint64_t maps[2] = {
      file_bytes < (TC_READER_MAP_BYTES >> 2) ? TC_READER_MAP_BYTES : 4 * file_bytes,
      2 * file_bytes + ((uint64_t)64 << 20)};
  static const unsigned flags[2] = {MDB_RDONLY | MDB_NOTLS, MDB_RDONLY | MDB_NOTLS | MDB_NOLOCK};
  int rc = 0;
  for (int m = 0; m < 2; m++) {
    for (int attempt = 0; attempt < 2; attempt++) {
      MDB_env *env;
      if ((rc = mdb_env_create(&env)) != MDB_SUCCESS)
        return tc_error_set(tc_status_from_mdb(rc, TWINCACHE_ENOTCACHE), "%s: %s", path, mdb_strerror(rc));
      mdb_env_set_maxdbs(env, TC_MAX_DBS);
      mdb_env_set_mapsize(env, (size_t)maps[m]);
      /* Keep the lock file: a generator may be writing. NOTLS lets each
       * decode thread own a read txn. */
      rc = mdb_env_open(env, path, flags[attempt], 0644);
      if (rc == MDB_SUCCESS) {
        int st = tc_env_check_size(env);
        if (st != TWINCACHE_OK) {
          mdb_env_close(env);
          return st;
        }
        *out = env;
        return TWINCACHE_OK;
      }
      mdb_env_close(env);
      if (rc != EACCES && rc != EROFS) break; /* without locks only on a read-only fs */
    }
    if ((rc != ENOMEM && rc != EINVAL) || maps[1] >= maps[0]) break;
  }
  /* ENOENT here: data.mdb vanished, or lock.mdb cannot be made: not a cache */
  int st = tc_status_from_mdb(rc, TWINCACHE_ENOTCACHE);
  return tc_error_set(st, "%s: %s (LMDB: %s)", path, twincache_strerror(st), mdb_strerror(rc));
}

/* Drops one reference (under tc_envs_mu); closes the env at zero. */
static void shared_env_unref(tc_shared_env *e) {
  if (e->refs > 0 && --e->refs > 0) return;
  for (tc_shared_env **p = &tc_envs; *p; p = &(*p)->next)
    if (*p == e) {
      *p = e->next;
      break;
    }
  mdb_env_close(e->env);
  free(e);
}

int twincache_cache_open(const char *path, twincache_cache **out) {
  twincache_cache *c = NULL;
  tc_shared_env *e = NULL;
  MDB_txn *txn = NULL;
  char *data_path = NULL;
  struct stat st, dir_st;
  int rc, locked = 0, graphs_opened = 0;

  tc_error_clear();
  if (!path || !out) return tc_error_set(TWINCACHE_EINVAL, "twincache_cache_open: path and out must not be NULL");
  *out = NULL;
  if (stat(path, &dir_st) != 0) {
    if (errno == ENOENT) return tc_error_set(TWINCACHE_ENOTFOUND, "%s: no such cache directory", path);
    return tc_error_os(errno, TWINCACHE_ENOTFOUND, "%s", path); /* "DIR: Permission denied" */
  }
  if (tc_set_is_set(path, &dir_st)) return tc_set_open(path, &dir_st, 0, 0, out);
  if (!S_ISDIR(dir_st.st_mode))
    return tc_error_set(TWINCACHE_ENOTCACHE, "%s: not a twincache cache (not a directory)", path);

  /* Check for data.mdb first: mdb_env_open would otherwise leave a lock
   * file behind in a directory that is not a cache. */
  size_t plen = strlen(path);
  data_path = malloc(plen + sizeof "/data.mdb");
  if (!data_path) return tc_error_set(TWINCACHE_ENOMEM, "%s: out of memory", path);
  memcpy(data_path, path, plen);
  memcpy(data_path + plen, "/data.mdb", sizeof "/data.mdb");
  if (stat(data_path, &st) != 0) {
    if (errno == ENOENT)
      rc = tc_error_set(TWINCACHE_ENOTCACHE, "%s: not a twincache cache (no data.mdb)", path);
    else
      rc = tc_error_os(errno, TWINCACHE_ENOTCACHE, "%s", data_path);
    goto cleanup;
  }
  if (!S_ISREG(st.st_mode)) {
    rc = tc_error_set(TWINCACHE_ENOTCACHE, "%s: not a twincache cache (data.mdb is not a file)", path);
    goto cleanup;
  }
  if ((rc = tc_data_check_short(data_path, (uint64_t)st.st_size)) != TWINCACHE_OK) goto cleanup;

  c = calloc(1, sizeof *c);
  if (!c || !(c->path = strdup(path))) {
    rc = tc_error_set(TWINCACHE_ENOMEM, "%s: out of memory", path);
    goto cleanup;
  }
  c->disk_bytes = (uint64_t)st.st_size;

  pthread_mutex_lock(&tc_envs_mu);
  locked = 1;
  for (e = tc_envs; e; e = e->next)
    if (e->dev == dir_st.st_dev && e->ino == dir_st.st_ino) break;
  if (!e) {
    e = calloc(1, sizeof *e);
    if (!e) {
      rc = tc_error_set(TWINCACHE_ENOMEM, "%s: out of memory", path);
      goto cleanup;
    }
    if ((rc = env_open(path, c->disk_bytes, &e->env)) != TWINCACHE_OK) {
      free(e);
      e = NULL;
      goto cleanup;
    }
    e->dev = dir_st.st_dev;
    e->ino = dir_st.st_ino;
    e->next = tc_envs;
    tc_envs = e;
  }
  e->refs++;

  if ((rc = mdb_txn_begin(e->env, NULL, MDB_RDONLY, &txn)) != MDB_SUCCESS) {
    txn = NULL;
    rc = tc_error_set(tc_status_from_mdb(rc, TWINCACHE_ENOTCACHE), "%s: cannot begin a read transaction: %s",
                      path, mdb_strerror(rc));
    goto cleanup;
  }
  /* dbi handles are opened once per env, under tc_envs_mu as LMDB asks */
  if (!e->have_meta) {
    rc = mdb_dbi_open(txn, TC_DB_META, 0, &e->meta);
    if (rc != MDB_SUCCESS) {
      /* MDB_NOTFOUND: no such sub-DB; MDB_INCOMPATIBLE: the key is plain data */
      if (rc == MDB_NOTFOUND || rc == MDB_INCOMPATIBLE)
        rc = tc_error_set(TWINCACHE_ENOTCACHE, "%s: not a twincache cache (an LMDB environment without "
                          "the \"" TC_DB_META "\" database)", path);
      else
        rc = tc_error_set(tc_status_from_mdb(rc, TWINCACHE_ENOTCACHE), "%s: cannot open the \"" TC_DB_META
                          "\" database: %s", path, mdb_strerror(rc));
      goto cleanup;
    }
  }
  if ((rc = meta_read(c, txn, e->meta)) != TWINCACHE_OK) {
    if (rc == TWINCACHE_ECORRUPT)
      tc_error_wrap(rc, "%s: the meta record (config, dims, counts) is damaged or altered", path);
    else
      tc_error_wrap(rc, "%s: the meta record", path);
    goto cleanup;
  }
  if (c->count) {
    c->n_chunks = (c->count - 1) / c->dims.chunk_graphs + 1;
    c->prefaulted = calloc((size_t)c->n_chunks, sizeof *c->prefaulted);
    if (!c->prefaulted) {
      rc = tc_error_set(TWINCACHE_ENOMEM, "%s: out of memory", path);
      goto cleanup;
    }
  }
  if (!e->have_graphs) {
    rc = mdb_dbi_open(txn, TC_DB_GRAPHS, 0, &e->graphs);
    if (rc == MDB_NOTFOUND || rc == MDB_INCOMPATIBLE) {
      /* no chunk yet: fine only for an empty cache (no lookups happen) */
      if (c->count != 0) {
        rc = tc_error_set(TWINCACHE_ECORRUPT, "%s: the meta record counts %llu graphs, but there is no "
                          "\"" TC_DB_GRAPHS "\" database", path, (unsigned long long)c->count);
        goto cleanup;
      }
    } else if (rc != MDB_SUCCESS) {
      rc = tc_error_set(tc_status_from_mdb(rc, TWINCACHE_ENOTCACHE), "%s: cannot open the \"" TC_DB_GRAPHS
                        "\" database: %s", path, mdb_strerror(rc));
      goto cleanup;
    } else {
      graphs_opened = 1;
    }
  }
  /* handles opened in a read txn stay valid after it commits */
  rc = mdb_txn_commit(txn);
  txn = NULL;
  if (rc != MDB_SUCCESS) {
    rc = tc_error_set(tc_status_from_mdb(rc, TWINCACHE_ENOTCACHE), "%s: %s", path, mdb_strerror(rc));
    goto cleanup;
  }
  if (!e->have_meta) e->have_meta = 1;
  if (graphs_opened) e->have_graphs = 1;
  c->shared = e;
  c->env = e->env;
  c->dbi_graphs = e->graphs;
  *out = c;
  c = NULL;
  e = NULL;
  rc = TWINCACHE_OK;

cleanup:
  if (rc != TWINCACHE_OK && !*twincache_last_error()) tc_error_set(rc, "%s: %s", path, twincache_strerror(rc));
  if (txn) mdb_txn_abort(txn);
  if (e) shared_env_unref(e);
  if (locked) pthread_mutex_unlock(&tc_envs_mu);
  twincache_cache_close(c);
  free(data_path);
  return rc;
}

void twincache_cache_close(twincache_cache *c) {
  if (!c) return;
  if (c->shared) {
    pthread_mutex_lock(&tc_envs_mu);
    shared_env_unref(c->shared);
    pthread_mutex_unlock(&tc_envs_mu);
  }
  tc_set_free(c->set);
  free(c->path);
  free(c->config);
  free(c->library);
  free((void *)c->prefaulted);
  free(c);
}

const twincache_dims *twincache_cache_dims(const twincache_cache *c) { return &c->dims; }
uint64_t twincache_cache_count(const twincache_cache *c) { return c->count; }
const twincache_stats *twincache_cache_stats(const twincache_cache *c) { return &c->stats; }
const char *twincache_cache_config(const twincache_cache *c) { return c->config; }
const char *twincache_cache_library(const twincache_cache *c) { return c->library; }
uint64_t twincache_cache_disk_bytes(const twincache_cache *c) { return c->disk_bytes; }
uint64_t twincache_cache_tag(const twincache_cache *c) { return c->tag; }
uint32_t twincache_cache_format_version(const twincache_cache *c) { return c->version; }
const char *tc_cache_path(const twincache_cache *c) { return c->path; }
uint64_t twincache_cache_first(const twincache_cache *c) { return c->first; }
int twincache_cache_shard(const twincache_cache *c, uint32_t *index, uint32_t *count, uint64_t *end) {
  if (!c->shard.count) return 0;
  if (index) *index = c->shard.index;
  if (count) *count = c->shard.count;
  if (end) *end = c->shard.end;
  return 1;
}

/* Maps every page of a chunk record the first time a loader thread reads
 * it (chunk < c->n_chunks), in one madvise(MADV_POPULATE_READ) instead of
 * one page fault per 4 KiB page: the loader reads every frame of a chunk in
 * an epoch, and on the CI-class VM those faults cost as much as decoding
 * (N=50: ~4x the graphs/s of a first epoch). Only pages of the record, so a
 * cache larger than memory is never read ahead as a whole. Best effort:
 * a kernel without MADV_POPULATE_READ (< 5.14) says EINVAL and the pages
 * fault in as before. */
static void chunk_prefault(const twincache_cache *c, uint64_t chunk, const MDB_val *val) {
#ifdef MADV_POPULATE_READ
  if (chunk >= c->n_chunks || atomic_exchange_explicit(&c->prefaulted[chunk], 1, memory_order_relaxed))
    return;
  long page_bytes = sysconf(_SC_PAGESIZE); /* once per chunk and process */
  if (page_bytes <= 0) page_bytes = 4096;
  uintptr_t lo = (uintptr_t)val->mv_data & ~(uintptr_t)(page_bytes - 1);
  uintptr_t hi = (uintptr_t)val->mv_data + val->mv_size;
  (void)madvise((void *)lo, hi - lo, MADV_POPULATE_READ);
#else
  (void)c;
  (void)chunk;
  (void)val;
#endif
}

/* Finds graph `index` in txn (see tc_cache_find_frame). */
static int find_view(const twincache_cache *c, MDB_txn *txn, tc_chunk_cache *cc, uint64_t index,
                     twincache_chunk_view *local, const twincache_chunk_view **out, uint32_t *out_slot) {
  TC_RETURN_IF(index >= c->count || index < c->first, TWINCACHE_ENOTFOUND, "graph %llu: not in %llu..%llu",
               (unsigned long long)index, (unsigned long long)c->first, (unsigned long long)c->count);
  uint64_t chunk = index / c->dims.chunk_graphs;
  uint32_t slot = (uint32_t)(index % c->dims.chunk_graphs);
  twincache_chunk_view *v = local;
  tc_chunk_entry *e = cc ? &cc->entries[chunk & (TC_CHUNK_CACHE_ENTRIES - 1)] : NULL;
  if (e && e->gen == cc->gen && e->chunk == chunk) {
    v = &e->view;
  } else {
    uint8_t key_bytes[8];
    MDB_val k = tc_chunk_key(key_bytes, chunk), val;
    int rc = mdb_get(txn, c->dbi_graphs, &k, &val);
    if (rc == MDB_NOTFOUND) /* committed, so it must exist */
      return tc_error_set(TWINCACHE_ECORRUPT, "chunk %llu: the record is missing", (unsigned long long)chunk);
    if (rc != MDB_SUCCESS)
      return tc_error_set(tc_status_from_mdb(rc, TWINCACHE_ENOTFOUND), "chunk %llu: %s",
                          (unsigned long long)chunk, mdb_strerror(rc));
    if (cc) chunk_prefault(c, chunk, &val);
    if ((rc = twincache_chunk_parse(val.mv_data, val.mv_size, v)) != TWINCACHE_OK)
      return tc_error_wrap(rc, "chunk %llu", (unsigned long long)chunk);
    if (v->first_index != chunk * c->dims.chunk_graphs || v->count > c->dims.chunk_graphs)
      return tc_error_set(TWINCACHE_ECORRUPT, "chunk %llu: the record holds graphs %llu.. (%u), not those of its key",
                          (unsigned long long)chunk, (unsigned long long)v->first_index, (unsigned)v->count);
    /* a cache never mixes record layouts: a record of another version (a
     * version-1 record carries no tag, so it could not be refused below) */
    if (v->version != c->version)
      return tc_error_set(TWINCACHE_ECORRUPT, "chunk %llu is a format version %u record in a version %u cache",
                          (unsigned long long)chunk, v->version, c->version);
    /* a v2 record names the cache it was written for: one of another config
     * or seed spliced in is refused */
    if (v->version >= 2 && v->tag != c->tag)
      return tc_error_set(TWINCACHE_ECORRUPT, "chunk %llu: the record belongs to another cache (its tag "
                          "differs: another config or seed)", (unsigned long long)chunk);
    /* only the last chunk may hold fewer than C graphs */
    if (chunk + 1 < c->n_chunks && v->count != c->dims.chunk_graphs)
      return tc_error_set(TWINCACHE_ECORRUPT, "chunk %llu holds %u graphs, not %u: only the last chunk may be short",
                          (unsigned long long)chunk, v->count, c->dims.chunk_graphs);
    if (e) {
      e->chunk = chunk;
      e->gen = cc->gen;
      e->view = *local;
      v = &e->view;
    }
  }
  if (slot >= v->count)
    return tc_error_set(TWINCACHE_ECORRUPT, "chunk %llu: holds %u graphs, not slot %u",
                        (unsigned long long)chunk, (unsigned)v->count, (unsigned)slot);
  *out = v;
  *out_slot = slot;
  return TWINCACHE_OK;
}

static int find_frame(const twincache_cache *c, MDB_txn *txn, tc_chunk_cache *cc, uint64_t index,
                      const void **frame, size_t *size) {
  twincache_chunk_view local;
  const twincache_chunk_view *v;
  uint32_t slot;
  int rc = find_view(c, txn, cc, index, &local, &v, &slot);
  if (rc != TWINCACHE_OK) return rc;
  rc = twincache_chunk_frame(v, slot, frame, size);
  if (rc != TWINCACHE_OK)
    return tc_error_wrap(rc, "chunk %llu, slot %u", (unsigned long long)(index / c->dims.chunk_graphs),
                         (unsigned)slot);
  return TWINCACHE_OK;
}

/* Begins a read txn on the cache's environment. */
static int txn_begin(const twincache_cache *c, MDB_txn **txn) {
  int rc = mdb_txn_begin(c->env, NULL, MDB_RDONLY, txn);
  if (rc != MDB_SUCCESS) {
    *txn = NULL;
    return tc_error_set(tc_status_from_mdb(rc, TWINCACHE_ENOTFOUND), "%s: cannot begin a read transaction: %s",
                        c->path, mdb_strerror(rc));
  }
  return TWINCACHE_OK;
}

/* The message of a failed lookup of graph `index`: "PATH: graph I: inner",
 * the inner message being find_frame's (or the status text). Returns rc. */
static int graph_error(const twincache_cache *c, uint64_t index, int rc) {
  return tc_error_wrap(rc, "%s: graph %llu", c->path, (unsigned long long)index);
}

/* ENOTFOUND with its message for an index c does not hold. */
static int index_check(const twincache_cache *c, uint64_t index) {
  uint32_t m, node, nodes;
  if (index >= c->count)
    return tc_error_set(TWINCACHE_ENOTFOUND, "%s: graph %llu: the cache has %llu graphs", c->path,
                        (unsigned long long)index, (unsigned long long)c->count);
  if (c->set && !tc_set_member(c, index, &m) && tc_set_part(c, &node, &nodes))
    return tc_error_set(TWINCACHE_ENOTFOUND, "%s: graph %llu is in shard %u, which node %u of %u's part of the "
                        "set does not hold", c->path, (unsigned long long)index, m, node, nodes);
  if (index < c->first)
    return tc_error_set(TWINCACHE_ENOTFOUND, "%s: graph %llu is not in this shard (%u of %u: graphs %llu..%llu); "
                        "open the set of shards", c->path, (unsigned long long)index, c->shard.index,
                        c->shard.count, (unsigned long long)c->first, (unsigned long long)c->count - 1);
  return TWINCACHE_OK;
}

int twincache_cache_read_graph(twincache_cache *c, twincache_dctx *d, uint64_t index,
                               twincache_graph *g) {
  MDB_txn *txn = NULL;
  const void *frame;
  size_t size;
  int rc;
  if (!c || !d || !g) return tc_error_set(TWINCACHE_EINVAL, "twincache_cache_read_graph: NULL argument");
  if ((rc = index_check(c, index)) != TWINCACHE_OK) return rc;
  if (c->set) return twincache_cache_read_graph(tc_set_member(c, index, NULL), d, index, g);
  tc_error_clear();
  if ((rc = txn_begin(c, &txn)) != TWINCACHE_OK) return rc;
  if ((rc = find_frame(c, txn, NULL, index, &frame, &size)) != TWINCACHE_OK) goto cleanup;
  if ((rc = twincache_frame_decode(d, frame, size, g)) != TWINCACHE_OK) goto cleanup;
  if (g->index != index) /* a frame filed under the wrong key */
    rc = tc_error_set(TWINCACHE_ECORRUPT, "the frame is that of graph %llu", (unsigned long long)g->index);
  else if (g->n_samples != c->dims.samples || g->n_nodes > c->dims.max_nodes || g->n_inter > c->dims.max_inter)
    rc = tc_error_set(TWINCACHE_ECORRUPT, "the frame's N=%u S=%u K=%u do not fit the cache's dims "
                      "(N <= %u, S = %u, K <= %u)", g->n_nodes, g->n_samples, g->n_inter, c->dims.max_nodes,
                      c->dims.samples, c->dims.max_inter);

cleanup:
  mdb_txn_abort(txn);
  return rc == TWINCACHE_OK ? rc : graph_error(c, index, rc);
}

int twincache_cache_read_frame(twincache_cache *c, uint64_t index, void **frame, size_t *size) {
  MDB_txn *txn = NULL;
  const void *src;
  size_t n;
  if (!c || !frame || !size) return tc_error_set(TWINCACHE_EINVAL, "twincache_cache_read_frame: NULL argument");
  *frame = NULL;
  *size = 0;
  int rc = index_check(c, index);
  if (rc != TWINCACHE_OK) return rc;
  if (c->set) return twincache_cache_read_frame(tc_set_member(c, index, NULL), index, frame, size);
  tc_error_clear();
  rc = txn_begin(c, &txn);
  if (rc != TWINCACHE_OK) return rc;
  if ((rc = find_frame(c, txn, NULL, index, &src, &n)) != TWINCACHE_OK) goto cleanup;
  void *copy = malloc(n ? n : 1);
  if (!copy) {
    rc = tc_error_set(TWINCACHE_ENOMEM, "out of memory (%zu bytes)", n);
    goto cleanup;
  }
  memcpy(copy, src, n);
  *frame = copy;
  *size = n;

cleanup:
  mdb_txn_abort(txn);
  return rc == TWINCACHE_OK ? rc : graph_error(c, index, rc);
}

int tc_cache_find_frame(const twincache_cache *c, tc_cache_txn *t, tc_chunk_cache *cc,
                        uint64_t index, const void **frame, size_t *size) {
  if (!c || !t || !t->live) return tc_error_set(TWINCACHE_EINVAL, "tc_cache_find_frame: no live read handle");
  if (c->set) {
    uint32_t m;
    const twincache_cache *mc = index < c->count ? tc_set_member(c, index, &m) : NULL;
    TC_RETURN_IF(!mc, TWINCACHE_ENOTFOUND, "graph %llu: not in the set's %llu graphs, or in a shard this part "
                 "of the set does not hold", (unsigned long long)index, (unsigned long long)c->count);
    return find_frame(mc, t->members[m]->txn, cc, index, frame, size);
  }
  return find_frame(c, t->txn, cc, index, frame, size);
}

void tc_cache_prefetch_frame(const twincache_cache *c, tc_cache_txn *t, tc_chunk_cache *cc, uint64_t index,
                             size_t max_bytes) {
  twincache_chunk_view local;
  const twincache_chunk_view *v;
  uint32_t slot, m;
  if (c && t && c->set && index < c->count) {
    c = tc_set_member(c, index, &m);
    t = c ? t->members[m] : NULL; /* NULL: a shard a part does not hold */
  }
  if (!c || !t || !t->live || find_view(c, t->txn, cc, index, &local, &v, &slot) != TWINCACHE_OK)
    return; /* the demand read reports it */
  /* the frame's place from the offset table alone: its bytes are not read
   * (twincache_chunk_frame checks them when the graph is decoded) */
  const uint8_t *o = (const uint8_t *)(const void *)v->offsets;
  uint32_t a = tc_load_u32(o + 4 * (size_t)slot), z = tc_load_u32(o + 4 * (size_t)slot + 4);
  if (z < a || z > v->frames_bytes) return;
  size_t n = z - a < max_bytes ? z - a : max_bytes;
  for (size_t off = 0; off < n; off += 64) __builtin_prefetch(v->frames + a + off);
}

/* ---- per-thread read handles ------------------------------------------- */
int tc_cache_txn_create(const twincache_cache *c, tc_cache_txn **out) {
  if (!c || !out) return tc_error_set(TWINCACHE_EINVAL, "tc_cache_txn_create: NULL argument");
  *out = NULL;
  tc_cache_txn *t = calloc(1, sizeof *t);
  if (!t) return tc_error_set(TWINCACHE_ENOMEM, "%s: out of memory", c->path);
  t->c = c;
  if (c->set) { /* one idle handle per member */
    uint32_t n = twincache_cache_members(c);
    int rc = (t->members = calloc(n, sizeof *t->members)) ? TWINCACHE_OK
                                                           : tc_error_set(TWINCACHE_ENOMEM, "%s: out of memory", c->path);
    for (uint32_t m = 0; m < n && rc == TWINCACHE_OK; m++)
      if (twincache_cache_member(c, m)) /* a part holds some members only */
        rc = tc_cache_txn_create(twincache_cache_member(c, m), &t->members[m]);
    if (rc != TWINCACHE_OK) {
      tc_cache_txn_free(t);
      return rc;
    }
    *out = t;
    return TWINCACHE_OK;
  }
  int rc = txn_begin(c, &t->txn);
  if (rc != TWINCACHE_OK) {
    free(t);
    return rc;
  }
  mdb_txn_reset(t->txn); /* idle until renewed: holds no snapshot */
  *out = t;
  return TWINCACHE_OK;
}

int tc_cache_txn_renew(tc_cache_txn *t) {
  if (!t) return tc_error_set(TWINCACHE_EINVAL, "tc_cache_txn_renew: NULL handle");
  if (t->live) return TWINCACHE_OK;
  if (t->members) {
    for (uint32_t m = 0; m < twincache_cache_members(t->c); m++) {
      int rc = t->members[m] ? tc_cache_txn_renew(t->members[m]) : TWINCACHE_OK;
      if (rc != TWINCACHE_OK) {
        tc_cache_txn_reset(t);
        return rc;
      }
    }
    t->live = 1;
    return TWINCACHE_OK;
  }
  int rc = mdb_txn_renew(t->txn);
  if (rc != MDB_SUCCESS)
    return tc_error_set(tc_status_from_mdb(rc, TWINCACHE_ENOTFOUND), "%s: cannot renew a read transaction: %s",
                        t->c->path, mdb_strerror(rc));
  t->live = 1;
  return TWINCACHE_OK;
}

void tc_cache_txn_reset(tc_cache_txn *t) {
  if (!t) return;
  if (t->members)
    for (uint32_t m = 0; m < twincache_cache_members(t->c); m++) tc_cache_txn_reset(t->members[m]);
  else if (t->live)
    mdb_txn_reset(t->txn);
  t->live = 0;
}

void tc_cache_txn_free(tc_cache_txn *t) {
  if (!t) return;
  if (t->members) {
    for (uint32_t m = 0; m < twincache_cache_members(t->c); m++) tc_cache_txn_free(t->members[m]);
    free(t->members);
  }
  if (t->txn) mdb_txn_abort(t->txn);
  free(t);
}
