/* writer.c — the writing side of a cache: directory, lock, LMDB environment,
 * meta and batched, appending chunk transactions with map growth. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "tc_cache_lmdb.h"
#include "tc_cache_writer.h"
#include "tc_error.h"

/* The largest map the writer asks for (64 TiB, half of x86-64's user
 * address space): doubling stops there with TWINCACHE_EFULL. */
#define TC_MAX_MAP_BYTES ((uint64_t)1 << 46)

struct tc_cache_writer {
  char *dir;
  int created_dir; /* this open made the directory: removed again on failure */
  int lock_fd; /* DIR/twincache-gen.lock, flock'ed for the writer's life; -1 = none */
  MDB_env *env;
  MDB_dbi dbi_graphs, dbi_meta;
  uint64_t map_size;
  twincache_dims dims;
  uint64_t committed;
  twincache_stats stats;
  uint64_t append_from; /* chunks >= this were not in the DB at open: MDB_APPEND */
  uint64_t map_grows;
  char *config; /* NUL-terminated; config_len bytes */
  size_t config_len;
  char *library;
  uint64_t tag; /* the cache tag: FNV-1a 64 of config */
  uint32_t version; /* the format version written: config_version */
  tc_cache_shard shard; /* count 0: a whole cache */
};

/* Writes dims, committed, stats and the meta checksum over all of meta. */
static int put_progress_meta(tc_cache_writer *w, MDB_txn *txn, uint64_t committed,
                             const twincache_stats *st) {
  uint8_t dims[TWINCACHE_DIMS_BYTES], stats[TWINCACHE_STATS_BYTES], cnt[8];
  uint8_t check[TWINCACHE_META_CHECK_BYTES];
  twincache_meta m = {.version = w->version, .dims = w->dims, .committed = committed,
                      .stats = *st, .tag = w->tag, .config = w->config, .config_len = w->config_len,
                      .library = w->library, .library_len = strlen(w->library)};
  twincache_dims_encode(&w->dims, dims);
  twincache_stats_encode(st, stats);
  tc_store_u64(cnt, committed);
  twincache_meta_check_encode(&m, check);
  int rc = tc_meta_put(txn, w->dbi_meta, TWINCACHE_META_DIMS, dims, sizeof dims);
  if (!rc) rc = tc_meta_put(txn, w->dbi_meta, TWINCACHE_META_COMMITTED, cnt, sizeof cnt);
  if (!rc) rc = tc_meta_put(txn, w->dbi_meta, TWINCACHE_META_STATS, stats, sizeof stats);
  if (!rc) rc = tc_meta_put(txn, w->dbi_meta, TWINCACHE_META_CHECK, check, sizeof check);
  return rc;
}

/* The message for a directory this user may not write in (err: the errno of
 * the lock file's open): whether the cache in it can still be read decides
 * what the user is told. Returns status. */
static int denied_error(int status, const char *dir, int err) {
  char data_path[4096];
  snprintf(data_path, sizeof data_path, "%s/data.mdb", dir);
  if (access(data_path, R_OK) == 0)
    return tc_error_set(status,
                        "cannot write in %.400s (%s): the directory is read-only for this user; the "
                        "cache can be read but not extended",
                        dir, strerror(err));
  if (errno == ENOENT)
    return tc_error_set(status, "cannot write in %.400s (%s): the directory is read-only for this user",
                        dir, strerror(err));
  return tc_error_set(status,
                      "cannot read %.400s (%s): this user may neither read nor extend the cache (ask "
                      "its owner for read access, or generate into another directory)",
                      data_path, strerror(errno));
}

/* The format version a cache of this config is written as: its
 * "format_version" key when it names one this build writes (twincache-gen:
 * 4 for twin worlds, 5 for independent ones, FORMAT.md 5), else 4, so
 * twin caches keep their bytes. */
static uint32_t config_version(const char *config) {
  const char *p = strstr(config, "\"format_version\":");
  unsigned long v = p ? strtoul(p + strlen("\"format_version\":"), NULL, 10) : 0;
  return v == TWINCACHE_FORMAT_VERSION ? TWINCACHE_FORMAT_VERSION : TWINCACHE_FORMAT_VERSION_TWIN;
}

/* Creates the directory if needed and takes the writer's lock. */
static int dir_lock(tc_cache_writer *w, const char *dir) {
  struct stat st;
  if (stat(dir, &st) != 0) {
    if (mkdir(dir, 0755) != 0) return tc_error_os(errno, TWINCACHE_EIO, "cannot create %s", dir);
    w->created_dir = 1;
  } else if (!S_ISDIR(st.st_mode)) {
    return tc_error_set(TWINCACHE_EIO, "%s exists and is not a directory", dir);
  }
  /* One generator per cache: a second one would race the first for the same
   * chunk keys. The kernel drops the lock when its holder dies (kill -9), so
   * resuming needs no clean-up. */
  char lock_path[4096];
  snprintf(lock_path, sizeof lock_path, "%s/twincache-gen.lock", dir);
  w->lock_fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (w->lock_fd < 0 || flock(w->lock_fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno, status = tc_status_from_errno(err, TWINCACHE_EIO);
    if (w->lock_fd >= 0 && status == TWINCACHE_EBUSY)
      return tc_error_set(status, "another twincache-gen is writing %.400s; wait for it to finish or stop it", dir);
    if (err == EACCES || err == EROFS || err == EPERM)
      return denied_error(status, dir, err);
    return tc_error_set(status, "cannot lock %.400s/twincache-gen.lock: %s", dir, strerror(err));
  }
  return TWINCACHE_OK;
}

/* Writes the meta of a new cache inside txn (w->config/library/tag set). */
static int create_meta(tc_cache_writer *w, MDB_txn *txn) {
  uint8_t ver[4], tag[8];
  tc_store_u32(ver, w->version);
  tc_store_u64(tag, w->tag);
  int rc;
  if ((rc = mdb_dbi_open(txn, TC_DB_GRAPHS, MDB_CREATE, &w->dbi_graphs)) ||
      (rc = mdb_dbi_open(txn, TC_DB_META, MDB_CREATE, &w->dbi_meta)))
    return rc;
  memset(&w->stats, 0, sizeof w->stats);
  w->committed = w->shard.first; /* 0 for a whole cache */
  if ((rc = tc_meta_put(txn, w->dbi_meta, TWINCACHE_META_VERSION, ver, 4)) ||
      (rc = tc_meta_put(txn, w->dbi_meta, TWINCACHE_META_CONFIG, w->config, w->config_len)) ||
      (rc = tc_meta_put(txn, w->dbi_meta, TWINCACHE_META_LIBRARY, w->library, strlen(w->library))) ||
      (rc = tc_meta_put(txn, w->dbi_meta, TWINCACHE_META_TAG, tag, sizeof tag)) ||
      (rc = put_progress_meta(w, txn, w->committed, &w->stats)))
    return rc;
  if (w->shard.count) {
    uint8_t entry[TC_SHARD_ENTRY_BYTES];
    tc_cache_shard_encode(&w->shard, w->tag, entry);
    if ((rc = tc_meta_put(txn, w->dbi_meta, TC_META_SHARD, entry, sizeof entry))) return rc;
  }
  return MDB_SUCCESS;
}

/* Checks that an existing cache holds the shard w is asked to write (or,
 * for a whole cache, is no shard). */
static int shard_match(tc_cache_writer *w, MDB_txn *txn, const char *dir, const twincache_meta *m) {
  MDB_val v;
  tc_cache_shard have = {0, 0, 0, 0};
  int rc = tc_meta_get(txn, w->dbi_meta, TC_META_SHARD, &v);
  if (rc == MDB_SUCCESS) {
    rc = tc_cache_shard_decode(v.mv_data, v.mv_size, m->tag, m->dims.graphs, m->dims.chunk_graphs, &have);
    if (rc != TWINCACHE_OK) return tc_error_wrap(rc, "%s: refusing to extend it", dir);
  } else if (rc != MDB_NOTFOUND) {
    return tc_error_set(tc_status_from_mdb(rc, TWINCACHE_EIO), "%s: the shard entry: %s", dir, mdb_strerror(rc));
  }
  if (have.count == w->shard.count && have.index == w->shard.index && have.first == w->shard.first &&
      have.end == w->shard.end)
    return TWINCACHE_OK;
  if (have.count && have.count == w->shard.count && have.index == w->shard.index)
    /* the same shard of another split: the range moved, so the shard cannot grow into it */
    return tc_error_set(TWINCACHE_EMISMATCH, "%s holds shard %u/%u as graphs %llu..%llu (a split of %llu graphs in "
                        "chunks of %u); this run's shard %u/%u is graphs %llu..%llu: another --graphs or "
                        "--chunk-graphs splits the cache otherwise, and a shard cannot be extended: give the "
                        "set's --graphs and --chunk-graphs, or another --out", dir, have.index, have.count,
                        (unsigned long long)have.first, (unsigned long long)have.end - 1,
                        (unsigned long long)m->dims.graphs, m->dims.chunk_graphs, w->shard.index,
                        w->shard.count, (unsigned long long)w->shard.first, (unsigned long long)w->shard.end - 1);
  char held[96], asked[96];
  if (have.count) snprintf(held, sizeof held, "shard %u/%u", have.index, have.count);
  else snprintf(held, sizeof held, "a whole cache");
  if (w->shard.count) snprintf(asked, sizeof asked, "shard %u/%u", w->shard.index, w->shard.count);
  else snprintf(asked, sizeof asked, "a whole cache");
  return tc_error_set(TWINCACHE_EMISMATCH, "%s holds %s, not %s: use another --out or its --shard", dir, held,
                      asked);
}

/* Reads and checks the meta of an existing cache inside txn; a status and
 * its message. */
static int read_meta(tc_cache_writer *w, MDB_txn *txn, const char *dir) {
  if (mdb_dbi_open(txn, TC_DB_META, 0, &w->dbi_meta) ||
      mdb_dbi_open(txn, TC_DB_GRAPHS, 0, &w->dbi_graphs))
    return tc_error_set(TWINCACHE_ENOTCACHE, "%s is an LMDB environment but not a twincache cache", dir);
  twincache_meta_entry e[TWINCACHE_MK_COUNT];
  twincache_meta m;
  int rc = tc_meta_read_entries(txn, w->dbi_meta, e);
  if (rc != TWINCACHE_OK) return tc_error_set(rc, "%s: cannot read the meta: %s", dir, twincache_strerror(rc));
  if (!e[TWINCACHE_MK_VERSION].data || e[TWINCACHE_MK_VERSION].size != 4 ||
      !e[TWINCACHE_MK_COMMITTED].data || e[TWINCACHE_MK_COMMITTED].size != 8)
    return tc_error_set(TWINCACHE_ENOTCACHE, "%s is not a twincache cache (meta incomplete)", dir);
  /* readers accept 1..current; the writer extends only its own version, so a
   * cache never mixes record layouts */
  uint32_t version = tc_load_u32(e[TWINCACHE_MK_VERSION].data);
  if (version != w->version && (version == TWINCACHE_FORMAT_VERSION || version == TWINCACHE_FORMAT_VERSION_TWIN))
    return tc_error_set(TWINCACHE_EMISMATCH, /* both written today: another kind of worlds asked for */
                        "%s was written with format version %u and this config writes %u (another kind of "
                        "worlds: twin caches are version %u, independent ones %u); use another --out or the "
                        "cache's options",
                        dir, version, w->version, TWINCACHE_FORMAT_VERSION_TWIN, TWINCACHE_FORMAT_VERSION);
  if (version != w->version)
    return tc_error_set(TWINCACHE_EVERSION,
                        "%s was written with format version %u, this is %u; it can be read but not "
                        "extended: generate into another --out",
                        dir, version, w->version);
  if (!e[TWINCACHE_MK_CONFIG].data)
    return tc_error_set(TWINCACHE_ENOTCACHE, "%s is not a twincache cache (no config)", dir);
  if ((rc = twincache_meta_parse(e, &m)) != TWINCACHE_OK)
    return tc_error_set(rc,
                        "%s: the meta record (config, dims, counts) %s: the cache was altered or "
                        "damaged; refusing to extend it",
                        dir, rc == TWINCACHE_ECORRUPT ? "fails its checksum" : twincache_strerror(rc));
  if (!(w->config = malloc(m.config_len + 1)) || !(w->library = malloc(m.library_len + 1)))
    return tc_error_set(TWINCACHE_ENOMEM, "%s: out of memory reading the meta", dir);
  memcpy(w->config, m.config, m.config_len);
  w->config[m.config_len] = '\0';
  w->config_len = m.config_len;
  memcpy(w->library, m.library, m.library_len);
  w->library[m.library_len] = '\0';
  w->committed = m.committed;
  w->stats = m.stats;
  w->tag = m.tag;
  return shard_match(w, txn, dir, &m);
}

/* Validates what the writer is given before anything is created: dims within
 * the format's limits (so every count x size product below is far from
 * overflowing 64 bits: a chunk is at most 65536 graphs of at most
 * 65535 x 256 x 257 floats), and a map size LMDB can round up to a page and
 * this process can reserve. */
static int check_inputs(const twincache_dims *d, uint64_t map_bytes) {
  if (d->chunk_graphs == 0 || d->chunk_graphs > TWINCACHE_MAX_CHUNK_GRAPHS || d->max_nodes == 0 ||
      d->max_nodes > TWINCACHE_MAX_NODES || d->samples > TWINCACHE_MAX_SAMPLES ||
      d->max_inter > TWINCACHE_MAX_INTER || d->hidden > TWINCACHE_MAX_HIDDEN)
    return tc_error_set(TWINCACHE_EINVAL, "cache dimensions out of the format's limits");
  if (map_bytes < 65536 || map_bytes > TC_MAX_MAP_BYTES || map_bytes > SIZE_MAX)
    return tc_error_set(TWINCACHE_EINVAL, "map size %llu bytes out of range (64 KiB .. %llu bytes)",
                        (unsigned long long)map_bytes, (unsigned long long)TC_MAX_MAP_BYTES);
  /* LMDB maps the whole map at open: try the reservation first (no memory) */
  void *p = mmap(NULL, (size_t)map_bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    return tc_error_set(TWINCACHE_EINVAL,
                        "map size %llu bytes cannot be mapped in this process (%s); use a smaller --map-size",
                        (unsigned long long)map_bytes, strerror(errno));
  munmap(p, (size_t)map_bytes);
  return TWINCACHE_OK;
}

/* Removes what a failed open created in a directory it made itself. */
static void remove_created(tc_cache_writer *w) {
  static const char *const names[] = {"data.mdb", "lock.mdb", "twincache-gen.lock"};
  char path[4096];
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    snprintf(path, sizeof path, "%s/%s", w->dir, names[i]);
    unlink(path);
  }
  rmdir(w->dir);
}

int tc_cache_writer_open(const char *dir, const twincache_dims *dims, const char *config_json,
                         const char *library, uint64_t map_size_bytes, tc_cache_writer **out) {
  return tc_cache_writer_open_shard(dir, dims, config_json, library, map_size_bytes, NULL, out);
}

int tc_cache_writer_open_shard(const char *dir, const twincache_dims *dims, const char *config_json,
                               const char *library, uint64_t map_size_bytes, const tc_cache_shard *shard,
                               tc_cache_writer **out) {
  tc_cache_writer *w = NULL;
  MDB_txn *txn = NULL;
  int rc, mrc = MDB_SUCCESS;
  if (!dir || !dims || !config_json || !library || !out)
    return tc_error_set(TWINCACHE_EINVAL, "tc_cache_writer_open: NULL argument");
  *out = NULL;
  if ((rc = check_inputs(dims, map_size_bytes)) != TWINCACHE_OK) return rc;
  w = calloc(1, sizeof *w);
  if (!w || !(w->dir = strdup(dir))) {
    free(w);
    return tc_error_set(TWINCACHE_ENOMEM, "%s: out of memory", dir);
  }
  w->lock_fd = -1;
  w->dims = *dims;
  w->version = config_version(config_json);
  if (shard) w->shard = *shard;
  if ((rc = dir_lock(w, dir)) != TWINCACHE_OK) goto cleanup;
  {
    char data_path[4096];
    struct stat st;
    snprintf(data_path, sizeof data_path, "%s/data.mdb", dir);
    /* empty: killed before LMDB wrote its first pages; nothing to lose, so
     * the cache is (re)created and regenerates the same bytes */
    if (stat(data_path, &st) == 0 && st.st_size > 0 &&
        (rc = tc_data_check_short(data_path, (uint64_t)st.st_size)) != TWINCACHE_OK)
      goto cleanup;
  }
  if ((mrc = mdb_env_create(&w->env)) || (mrc = mdb_env_set_maxdbs(w->env, TC_MAX_DBS)) ||
      (mrc = mdb_env_set_mapsize(w->env, (size_t)map_size_bytes)) ||
      (mrc = mdb_env_open(w->env, dir, MDB_NOMETASYNC, 0644))) {
    rc = tc_error_set(tc_status_from_mdb(mrc, TWINCACHE_EIO), "cannot open the LMDB environment %s: %s", dir,
                      mdb_strerror(mrc));
    goto cleanup;
  }
  if ((rc = tc_env_check_size(w->env)) != TWINCACHE_OK) goto cleanup;
  MDB_envinfo info;
  mdb_env_info(w->env, &info);
  w->map_size = info.me_mapsize;

  MDB_dbi main_dbi;
  MDB_stat ms;
  if ((mrc = mdb_txn_begin(w->env, NULL, 0, &txn)) || (mrc = mdb_dbi_open(txn, NULL, 0, &main_dbi)) ||
      (mrc = mdb_stat(txn, main_dbi, &ms)))
    goto lmdb_error;
  if (ms.ms_entries == 0) { /* a new cache (or one killed before its first commit) */
    if (!(w->config = strdup(config_json)) || !(w->library = strdup(library))) {
      rc = tc_error_set(TWINCACHE_ENOMEM, "%s: out of memory", dir);
      goto cleanup;
    }
    w->config_len = strlen(config_json);
    w->tag = twincache_meta_tag(w->config, w->config_len);
    if ((mrc = create_meta(w, txn))) goto lmdb_error;
  } else if ((rc = read_meta(w, txn, dir)) != TWINCACHE_OK) {
    goto cleanup;
  }
  /* commit (not abort): DBI handles opened in an aborted txn are closed */
  mrc = mdb_txn_commit(txn);
  txn = NULL;
  if (mrc) goto lmdb_error;
  w->append_from = (w->committed + dims->chunk_graphs - 1) / dims->chunk_graphs;
  *out = w;
  w = NULL;
  rc = TWINCACHE_OK;
  goto cleanup;

lmdb_error:
  rc = tc_error_set(tc_status_from_mdb(mrc, TWINCACHE_EIO), "LMDB error on %s: %s", dir, mdb_strerror(mrc));
cleanup:
  if (txn) mdb_txn_abort(txn);
  if (w && w->created_dir) {
    if (w->env) mdb_env_close(w->env);
    w->env = NULL;
    remove_created(w);
  }
  tc_cache_writer_close(w);
  return rc;
}

const char *tc_cache_writer_config(const tc_cache_writer *w, size_t *len) {
  *len = w->config_len;
  return w->config;
}
uint64_t tc_cache_writer_committed(const tc_cache_writer *w) { return w->committed; }
const twincache_stats *tc_cache_writer_stats(const tc_cache_writer *w) { return &w->stats; }
uint64_t tc_cache_writer_tag(const tc_cache_writer *w) { return w->tag; }
uint64_t tc_cache_writer_map_grows(const tc_cache_writer *w) { return w->map_grows; }

/* Doubles the map; only the writer holds transactions, and none is open. */
static int grow_map(tc_cache_writer *w) {
  if (w->map_size > TC_MAX_MAP_BYTES / 2) return MDB_MAP_FULL;
  w->map_size *= 2;
  w->map_grows++;
  return mdb_env_set_mapsize(w->env, (size_t)w->map_size);
}

/* The status and message of a failed put: LMDB turns a short write into
 * EIO, so a full disk shows as EIO or ENOSPC. */
static int put_status(tc_cache_writer *w, int mrc, size_t bytes) {
  int st = tc_status_from_mdb(mrc, TWINCACHE_EIO);
  struct statvfs fs;
  if (mrc == EIO && statvfs(w->dir, &fs) == 0 &&
      (uint64_t)fs.f_bavail * fs.f_frsize < (uint64_t)bytes + ((uint64_t)8 << 20))
    st = TWINCACHE_EFULL;
  return tc_error_set(st, "%s: writing %zu bytes of chunks: %s", w->dir, bytes, mdb_strerror(mrc));
}

int tc_cache_writer_put(tc_cache_writer *w, const tc_cache_chunk *chunks, size_t n,
                        uint64_t committed, const twincache_stats *stats) {
  if (!w || (n && !chunks) || !stats) return tc_error_set(TWINCACHE_EINVAL, "tc_cache_writer_put: NULL argument");
  size_t bytes = 0;
  for (size_t p = 0; p < n; p++) bytes += chunks[p].size;
  int rc;
  for (;;) {
    MDB_txn *txn = NULL;
    rc = mdb_txn_begin(w->env, NULL, 0, &txn);
    if (rc == MDB_MAP_RESIZED) rc = mdb_env_set_mapsize(w->env, 0), rc = rc ? rc : MDB_MAP_RESIZED;
    if (rc == MDB_MAP_RESIZED) continue;
    if (rc) break;
    for (size_t p = 0; p < n && !rc; p++) {
      uint8_t key[8];
      MDB_val k = tc_chunk_key(key, chunks[p].chunk), v = {chunks[p].size, (void *)chunks[p].data};
      rc = mdb_put(txn, w->dbi_graphs, &k, &v, chunks[p].chunk >= w->append_from ? MDB_APPEND : 0);
    }
    if (!rc) rc = put_progress_meta(w, txn, committed, stats);
    if (rc) {
      mdb_txn_abort(txn);
    } else {
      rc = mdb_txn_commit(txn);
    }
    if (rc == MDB_MAP_FULL) {
      rc = grow_map(w);
      if (rc) break;
      continue;
    }
    if (rc) break;
    w->stats = *stats;
    w->committed = committed;
    break;
  }
  return rc ? put_status(w, rc, bytes) : TWINCACHE_OK;
}

void tc_cache_writer_close(tc_cache_writer *w) {
  if (!w) return;
  if (w->env) mdb_env_close(w->env);
  if (w->lock_fd >= 0) close(w->lock_fd); /* releases the flock */
  free(w->config);
  free(w->library);
  free(w->dir);
  free(w);
}
