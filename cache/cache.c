/* cache.c — the cache handle, the top of cache/: open (a directory through
 * env.c, a set of shards through set.c), look graphs up by index and decode
 * them, and the per-thread read handles of the loader; a set's lookups go to
 * the member holding the graph. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tc_cache_lmdb.h"
#include "tc_error.h"

int twincache_cache_open(const char *path, twincache_cache **out) {
  struct stat dir_st;
  tc_error_clear();
  if (!path || !out) return tc_error_set(TWINCACHE_EINVAL, "twincache_cache_open: path and out must not be NULL");
  *out = NULL;
  int rc = tc_cache_stat(path, &dir_st);
  if (rc != TWINCACHE_OK) return rc;
  if (tc_set_is_set(path, &dir_st)) return tc_set_open(path, &dir_st, 0, 0, out);
  return tc_cache_open_env(path, &dir_st, out);
}

void twincache_cache_close(twincache_cache *c) {
  if (!c) return;
  tc_set_free(c->set);
  c->set = NULL;
  tc_cache_free(c);
}

const twincache_dims *twincache_cache_dims(const twincache_cache *c) { return &c->dims; }
uint64_t twincache_cache_count(const twincache_cache *c) { return c->count; }
const twincache_stats *twincache_cache_stats(const twincache_cache *c) { return &c->stats; }
const char *twincache_cache_config(const twincache_cache *c) { return c->config; }
const char *twincache_cache_library(const twincache_cache *c) { return c->library; }
uint64_t twincache_cache_disk_bytes(const twincache_cache *c) { return c->disk_bytes; }
uint64_t twincache_cache_tag(const twincache_cache *c) { return c->tag; }
uint32_t twincache_cache_format_version(const twincache_cache *c) { return c->version; }

/* The value of a top-level key of a JSON object (the text after its ':'),
 * or NULL: strings (escapes included) and nested objects/arrays are
 * stepped over, so a key or text inside them never matches. */
static const char *json_top_value(const char *json, const char *key) {
  size_t klen = strlen(key);
  int depth = 0, want_key = 0;
  for (const char *p = json; *p; p++) {
    if (*p == '"') {
      const char *s = ++p;
      while (*p && *p != '"') p += (*p == '\\' && p[1]) ? 2 : 1;
      if (!*p) return NULL;
      if (depth == 1 && want_key) {
        want_key = 0;
        const char *q = p + 1;
        while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r') q++;
        if (*q == ':' && (size_t)(p - s) == klen && memcmp(s, key, klen) == 0) {
          q++;
          while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r') q++;
          return q;
        }
      }
    } else if (*p == '{' || *p == '[') {
      depth++;
      want_key = depth == 1 && *p == '{';
    } else if (*p == '}' || *p == ']') {
      depth--;
    } else if (*p == ',' && depth == 1) {
      want_key = 1;
    }
  }
  return NULL;
}

int twincache_cache_worlds(const twincache_cache *c) {
  const char *v = json_top_value(c->config ? c->config : "", "observed");
  if (v && strncmp(v, "true", 4) == 0) return TWINCACHE_WORLDS_OBSERVED;
  v = json_top_value(c->config ? c->config : "", "worlds");
  if (v && strncmp(v, "\"independent\"", 13) == 0) return TWINCACHE_WORLDS_INDEPENDENT;
  return TWINCACHE_WORLDS_TWIN;
}
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
