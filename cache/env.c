/* env.c — one cache directory, the bottom of cache/: its LMDB environment
 * opened read-only (one per directory per process, shared by its handles),
 * the size checks that keep a damaged file from faulting, the meta record
 * and shard entry read and checked. set.c opens a set's members here;
 * cache.c's public open comes here for a directory. The LMDB status mapping
 * and meta helpers the writer shares live here too. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int tc_cache_stat(const char *path, struct stat *st) {
  if (stat(path, st) == 0) return TWINCACHE_OK;
  if (errno == ENOENT) return tc_error_set(TWINCACHE_ENOTFOUND, "%s: no such cache directory", path);
  return tc_error_os(errno, TWINCACHE_ENOTFOUND, "%s", path); /* "DIR: Permission denied" */
}

int tc_cache_open_env(const char *path, const struct stat *dir, twincache_cache **out) {
  twincache_cache *c = NULL;
  tc_shared_env *e = NULL;
  MDB_txn *txn = NULL;
  char *data_path = NULL;
  struct stat st, dir_st = *dir;
  int rc, locked = 0, graphs_opened = 0;

  *out = NULL;
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
  tc_cache_free(c);
  free(data_path);
  return rc;
}

void tc_cache_free(twincache_cache *c) {
  if (!c) return;
  if (c->shared) {
    pthread_mutex_lock(&tc_envs_mu);
    shared_env_unref(c->shared);
    pthread_mutex_unlock(&tc_envs_mu);
  }
  free(c->path);
  free(c->config);
  free(c->library);
  free((void *)c->prefaulted);
  free(c);
}
