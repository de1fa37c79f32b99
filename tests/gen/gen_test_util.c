/* gen_test_util.c — see gen_test_util.h. */
#include "gen_test_util.h"

#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <lmdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int status_code(int st) {
  if (WIFEXITED(st)) return WEXITSTATUS(st);
  if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
  return -1;
}

static void build_argv(const char *bin, const char *const *args, char **argv, int cap) {
  int n = 0;
  argv[n++] = (char *)bin;
  for (int i = 0; args[i] && n < cap - 1; i++) argv[n++] = (char *)args[i];
  argv[n] = NULL;
}

int tg_run(const char *bin, const char *const *args, char *err, size_t err_cap) {
  int fds[2];
  if (pipe(fds)) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    char *argv[128];
    build_argv(bin, args, argv, 128);
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    dup2(fds[1], 2);
    close(fds[0]);
    execv(bin, argv);
    _exit(127);
  }
  close(fds[1]);
  size_t used = 0;
  char buf[4096];
  ssize_t got;
  while ((got = read(fds[0], buf, sizeof buf)) > 0) {
    if (err && used + 1 < err_cap) {
      size_t take = (size_t)got < err_cap - 1 - used ? (size_t)got : err_cap - 1 - used;
      memcpy(err + used, buf, take);
      used += take;
    }
  }
  if (err && err_cap) err[used] = 0;
  close(fds[0]);
  int st;
  waitpid(pid, &st, 0);
  return status_code(st);
}

pid_t tg_spawn(const char *bin, const char *const *args) {
  pid_t pid = fork();
  if (pid == 0) {
    char *argv[128];
    build_argv(bin, args, argv, 128);
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    dup2(devnull, 2);
    execv(bin, argv);
    _exit(127);
  }
  return pid;
}

int tg_wait(pid_t pid) {
  int st;
  if (waitpid(pid, &st, 0) != pid) return -1;
  return status_code(st);
}

int tg_mkdir(const char *dir) { return mkdir(dir, 0755) == 0 || errno == EEXIST; }

void tg_rmrf(const char *dir) {
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *de;
    char path[8192];
    while ((de = readdir(d))) {
      if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
      snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
      unlink(path);
    }
    closedir(d);
  }
  rmdir(dir);
}

/* Read-only environment and transaction on a cache; 0 on success. */
static int open_ro(const char *dir, MDB_env **env, MDB_txn **txn, MDB_dbi *graphs, MDB_dbi *meta) {
  *env = NULL;
  *txn = NULL;
  if (mdb_env_create(env)) return -1;
  mdb_env_set_maxdbs(*env, 4);
  if (mdb_env_open(*env, dir, MDB_RDONLY, 0644)) goto fail;
  int rc = mdb_txn_begin(*env, NULL, MDB_RDONLY, txn);
  if (rc == MDB_MAP_RESIZED) {
    mdb_env_set_mapsize(*env, 0);
    rc = mdb_txn_begin(*env, NULL, MDB_RDONLY, txn);
  }
  if (rc) goto fail;
  if (mdb_dbi_open(*txn, "graphs", 0, graphs) || mdb_dbi_open(*txn, "meta", 0, meta)) goto fail;
  return 0;
fail:
  if (*txn) mdb_txn_abort(*txn);
  mdb_env_close(*env);
  *env = NULL;
  *txn = NULL;
  return -1;
}

static void close_ro(MDB_env *env, MDB_txn *txn) {
  mdb_txn_abort(txn);
  mdb_env_close(env);
}

uint64_t tg_committed(const char *dir) {
  MDB_env *env;
  MDB_txn *txn;
  MDB_dbi g, m;
  char path[8192];
  snprintf(path, sizeof path, "%s/data.mdb", dir);
  if (access(path, F_OK)) return 0;
  if (open_ro(dir, &env, &txn, &g, &m)) return 0;
  MDB_val k = {strlen(TWINCACHE_META_COMMITTED), (void *)TWINCACHE_META_COMMITTED}, v;
  uint64_t n = 0;
  if (!mdb_get(txn, m, &k, &v) && v.mv_size == 8) {
    const uint8_t *b = v.mv_data;
    for (int i = 7; i >= 0; i--) n = (n << 8) | b[i];
  }
  close_ro(env, txn);
  return n;
}

char *tg_meta(const char *dir, const char *key, size_t *size) {
  MDB_env *env;
  MDB_txn *txn;
  MDB_dbi g, m;
  if (open_ro(dir, &env, &txn, &g, &m)) return NULL;
  MDB_val k = {strlen(key), (void *)key}, v;
  char *out = NULL;
  if (!mdb_get(txn, m, &k, &v)) {
    out = malloc(v.mv_size + 1);
    memcpy(out, v.mv_data, v.mv_size);
    out[v.mv_size] = 0;
    if (size) *size = v.mv_size;
  }
  close_ro(env, txn);
  return out;
}

static int compare_db(MDB_txn *ta, MDB_dbi da, MDB_txn *tb, MDB_dbi db, const char *name, char *why,
                      size_t cap) {
  MDB_cursor *ca, *cb;
  mdb_cursor_open(ta, da, &ca);
  mdb_cursor_open(tb, db, &cb);
  MDB_val ka, va, kb, vb;
  int ra = mdb_cursor_get(ca, &ka, &va, MDB_FIRST), rb = mdb_cursor_get(cb, &kb, &vb, MDB_FIRST);
  int diff = 0;
  uint64_t n = 0;
  while (ra == 0 && rb == 0) {
    if (ka.mv_size != kb.mv_size || memcmp(ka.mv_data, kb.mv_data, ka.mv_size)) {
      snprintf(why, cap, "%s: entry %llu has different keys", name, (unsigned long long)n);
      diff = 1;
      break;
    }
    if (va.mv_size != vb.mv_size || memcmp(va.mv_data, vb.mv_data, va.mv_size)) {
      snprintf(why, cap, "%s: values of entry %llu (key '%.*s' / %zu bytes) differ (%zu vs %zu bytes)",
               name, (unsigned long long)n, (int)(ka.mv_size < 20 ? ka.mv_size : 0),
               (const char *)ka.mv_data, ka.mv_size, va.mv_size, vb.mv_size);
      diff = 1;
      break;
    }
    n++;
    ra = mdb_cursor_get(ca, &ka, &va, MDB_NEXT);
    rb = mdb_cursor_get(cb, &kb, &vb, MDB_NEXT);
  }
  if (!diff && (ra == 0) != (rb == 0)) {
    snprintf(why, cap, "%s: entry counts differ after %llu entries", name, (unsigned long long)n);
    diff = 1;
  }
  mdb_cursor_close(ca);
  mdb_cursor_close(cb);
  return diff;
}

int tg_cache_compare(const char *a, const char *b, char *why, size_t why_cap) {
  MDB_env *ea, *eb;
  MDB_txn *ta, *tb;
  MDB_dbi ga, ma, gb, mb;
  if (open_ro(a, &ea, &ta, &ga, &ma)) {
    snprintf(why, why_cap, "cannot open %s", a);
    return 1;
  }
  if (open_ro(b, &eb, &tb, &gb, &mb)) {
    close_ro(ea, ta);
    snprintf(why, why_cap, "cannot open %s", b);
    return 1;
  }
  int diff = compare_db(ta, ga, tb, gb, "graphs", why, why_cap);
  if (!diff) diff = compare_db(ta, ma, tb, mb, "meta", why, why_cap);
  close_ro(ea, ta);
  close_ro(eb, tb);
  return diff;
}

uint64_t tg_for_each_graph(const char *dir, tg_graph_fn fn, void *user) {
  MDB_env *env;
  MDB_txn *txn;
  MDB_dbi gdb, mdb;
  CHECK(open_ro(dir, &env, &txn, &gdb, &mdb) == 0, "open %s", dir);
  MDB_val k = {strlen(TWINCACHE_META_DIMS), (void *)TWINCACHE_META_DIMS}, v;
  twincache_dims dims;
  CHECK(mdb_get(txn, mdb, &k, &v) == 0, "no dims in %s", dir);
  CHECK(twincache_dims_decode(v.mv_data, v.mv_size, &dims) == 0, "dims decode");
  twincache_graph *g = twincache_graph_alloc(dims.max_nodes, dims.samples, dims.max_inter, dims.hidden);
  twincache_dctx *d = twincache_dctx_create();
  CHECK(g && d, "alloc");
  MDB_cursor *cur;
  mdb_cursor_open(txn, gdb, &cur);
  uint64_t n = 0;
  int rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST);
  while (rc == 0) {
    twincache_chunk_view view;
    CHECK(twincache_chunk_parse(v.mv_data, v.mv_size, &view) == 0, "chunk parse");
    CHECK(view.first_index == n, "chunk first_index %llu, expected %llu",
          (unsigned long long)view.first_index, (unsigned long long)n);
    for (uint32_t s = 0; s < view.count; s++) {
      const void *f;
      size_t fs;
      CHECK(twincache_chunk_frame(&view, s, &f, &fs) == 0, "chunk frame");
      int drc = twincache_frame_decode(d, f, fs, g);
      CHECK(drc == 0, "decode graph %llu: %s", (unsigned long long)n, twincache_strerror(drc));
      CHECK(g->index == n, "graph index %llu, expected %llu", (unsigned long long)g->index,
            (unsigned long long)n);
      fn(g, &dims, user);
      n++;
    }
    rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
  }
  mdb_cursor_close(cur);
  close_ro(env, txn);
  twincache_dctx_free(d);
  twincache_graph_free(g);
  return n;
}
