/* raw.c — raw record access for tests (tc_cache_raw.h). */
#include <stdlib.h>
#include <string.h>

#include "tc_cache_lmdb.h"
#include "tc_cache_raw.h"
#include "tc_error.h"

/* 0, or the status of LMDB code rc with the message "what: LMDB's text". */
static int raw_status(int rc, const char *what) {
  if (rc == MDB_SUCCESS) return TWINCACHE_OK;
  return tc_error_set(tc_status_from_mdb(rc, TWINCACHE_ENOTFOUND), "%s: %s", what, mdb_strerror(rc));
}

struct tc_cache_raw {
  MDB_env *env;
  MDB_txn *txn;
  int writable;
};

int tc_cache_raw_open(const char *dir, int writable, tc_cache_raw **out) {
  TC_RETURN_IF(!dir || !out, TWINCACHE_EINVAL, "tc_cache_raw_open: NULL argument");
  *out = NULL;
  tc_cache_raw *r = calloc(1, sizeof *r);
  TC_RETURN_IF(!r, TWINCACHE_ENOMEM, "%s: out of memory", dir);
  r->writable = writable;
  int rc = mdb_env_create(&r->env);
  if (!rc) rc = mdb_env_set_maxdbs(r->env, 8);
  if (!rc) rc = mdb_env_open(r->env, dir, writable ? 0 : MDB_RDONLY, 0644);
  if (!rc) {
    rc = tc_env_check_size(r->env);
    if (rc) goto fail_status;
  }
  if (!rc) rc = mdb_txn_begin(r->env, NULL, writable ? 0 : MDB_RDONLY, &r->txn);
  if (rc == MDB_MAP_RESIZED) { /* a writer grew the map since it was created */
    mdb_env_set_mapsize(r->env, 0);
    rc = mdb_txn_begin(r->env, NULL, writable ? 0 : MDB_RDONLY, &r->txn);
  }
  if (rc) {
    rc = raw_status(rc, dir);
    goto fail_status;
  }
  *out = r;
  return TWINCACHE_OK;
fail_status:
  if (r->env) mdb_env_close(r->env);
  free(r);
  return rc;
}

int tc_cache_raw_close(tc_cache_raw *r) {
  if (!r) return TWINCACHE_OK;
  int rc = MDB_SUCCESS;
  if (r->writable) rc = mdb_txn_commit(r->txn);
  else mdb_txn_abort(r->txn);
  mdb_env_close(r->env);
  free(r);
  return raw_status(rc, "raw commit");
}

void tc_cache_raw_abort(tc_cache_raw *r) {
  if (!r) return;
  mdb_txn_abort(r->txn);
  mdb_env_close(r->env);
  free(r);
}

void tc_cache_raw_chunk_key(uint8_t key[8], uint64_t chunk) { (void)tc_chunk_key(key, chunk); }

/* Opens db; 0, or an LMDB code. */
static int db_open(tc_cache_raw *r, const char *db, int create, MDB_dbi *dbi) {
  return mdb_dbi_open(r->txn, db, create && r->writable ? MDB_CREATE : 0, dbi);
}

int tc_cache_raw_get(tc_cache_raw *r, const char *db, const void *key, size_t key_len, void **val,
                     size_t *val_len) {
  MDB_dbi dbi;
  MDB_val k = {key_len, (void *)key}, v;
  int rc = db_open(r, db, 0, &dbi);
  if (!rc) rc = mdb_get(r->txn, dbi, &k, &v);
  if (rc) return raw_status(rc, db);
  *val = malloc(v.mv_size ? v.mv_size : 1);
  TC_RETURN_IF(!*val, TWINCACHE_ENOMEM, "%s: out of memory for a %zu-byte value", db, v.mv_size);
  memcpy(*val, v.mv_data, v.mv_size);
  *val_len = v.mv_size;
  return TWINCACHE_OK;
}

int tc_cache_raw_put(tc_cache_raw *r, const char *db, const void *key, size_t key_len, const void *val,
                     size_t val_len) {
  MDB_dbi dbi;
  MDB_val k = {key_len, (void *)key}, v = {val_len, (void *)val};
  int rc = db_open(r, db, 1, &dbi);
  if (!rc) rc = mdb_put(r->txn, dbi, &k, &v, 0);
  return raw_status(rc, db);
}

int tc_cache_raw_del(tc_cache_raw *r, const char *db, const void *key, size_t key_len) {
  MDB_dbi dbi;
  MDB_val k = {key_len, (void *)key};
  int rc = db_open(r, db, 0, &dbi);
  if (!rc) rc = mdb_del(r->txn, dbi, &k, NULL);
  return raw_status(rc, db);
}

int tc_cache_raw_foreach(tc_cache_raw *r, const char *db, tc_cache_raw_fn fn, void *user) {
  MDB_dbi dbi;
  MDB_cursor *cur = NULL;
  MDB_val k, v;
  int rc = db_open(r, db, 0, &dbi);
  if (!rc) rc = mdb_cursor_open(r->txn, dbi, &cur);
  if (rc) return raw_status(rc, db);
  int out = 0;
  for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0 && out == 0;
       rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT))
    out = fn(k.mv_data, k.mv_size, v.mv_data, v.mv_size, user);
  mdb_cursor_close(cur);
  if (out) return out;
  return rc == MDB_NOTFOUND ? TWINCACHE_OK : raw_status(rc, db);
}

uint64_t tc_cache_raw_count(tc_cache_raw *r, const char *db) {
  MDB_dbi dbi;
  MDB_stat st;
  if (db_open(r, db, 0, &dbi) || mdb_stat(r->txn, dbi, &st)) return 0;
  return st.ms_entries;
}

int tc_cache_raw_copy(const char *src, const char *dst) {
  MDB_env *env = NULL;
  int rc = mdb_env_create(&env);
  if (!rc) rc = mdb_env_set_maxdbs(env, 8);
  if (!rc) rc = mdb_env_open(env, src, MDB_RDONLY, 0644);
  if (!rc) rc = mdb_env_copy(env, dst);
  if (env) mdb_env_close(env);
  return raw_status(rc, src);
}
