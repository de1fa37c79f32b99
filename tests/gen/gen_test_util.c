/* gen_test_util.c — see gen_test_util.h. */
#include "gen_test_util.h"
#include "tc_cache_raw.h"

#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>
#include <fcntl.h>
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

uint64_t tg_committed(const char *dir) {
  tc_cache_raw *r = NULL;
  char path[8192];
  snprintf(path, sizeof path, "%s/data.mdb", dir);
  if (access(path, F_OK)) return 0;
  if (tc_cache_raw_open(dir, 0, &r)) return 0;
  void *v = NULL;
  size_t size = 0;
  uint64_t n = 0;
  if (!tc_cache_raw_get(r, "meta", TWINCACHE_META_COMMITTED, strlen(TWINCACHE_META_COMMITTED), &v, &size) &&
      size == 8) {
    const uint8_t *b = v;
    for (int i = 7; i >= 0; i--) n = (n << 8) | b[i];
  }
  free(v);
  tc_cache_raw_abort(r);
  return n;
}

char *tg_meta(const char *dir, const char *key, size_t *size) {
  tc_cache_raw *r = NULL;
  if (tc_cache_raw_open(dir, 0, &r)) return NULL;
  void *v = NULL;
  size_t n = 0;
  char *out = NULL;
  if (!tc_cache_raw_get(r, "meta", key, strlen(key), &v, &n)) {
    out = malloc(n + 1);
    memcpy(out, v, n);
    out[n] = 0;
    if (size) *size = n;
  }
  free(v);
  tc_cache_raw_abort(r);
  return out;
}

/* Walks db of cache a, looking every entry up in b (same keys, same values,
 * same count: the two sub-databases are equal). */
typedef struct tg_cmp {
  tc_cache_raw *b;
  const char *name;
  char *why;
  size_t cap;
  uint64_t n;
} tg_cmp;

static int compare_entry(const void *key, size_t key_len, const void *val, size_t val_len, void *user) {
  tg_cmp *c = user;
  void *vb = NULL;
  size_t nb = 0;
  int diff = 0;
  if (tc_cache_raw_get(c->b, c->name, key, key_len, &vb, &nb) != 0) {
    snprintf(c->why, c->cap, "%s: entry %llu has different keys", c->name, (unsigned long long)c->n);
    diff = 1;
  } else if (val_len != nb || memcmp(val, vb, val_len)) {
    snprintf(c->why, c->cap, "%s: values of entry %llu (key '%.*s' / %zu bytes) differ (%zu vs %zu bytes)",
             c->name, (unsigned long long)c->n, (int)(key_len < 20 ? key_len : 0), (const char *)key,
             key_len, val_len, nb);
    diff = 1;
  }
  free(vb);
  c->n++;
  return diff;
}

static int compare_db(tc_cache_raw *a, tc_cache_raw *b, const char *name, char *why, size_t cap) {
  tg_cmp c = {b, name, why, cap, 0};
  int diff = tc_cache_raw_foreach(a, name, compare_entry, &c) != 0;
  if (!diff && tc_cache_raw_count(a, name) != tc_cache_raw_count(b, name)) {
    snprintf(why, cap, "%s: entry counts differ after %llu entries", name, (unsigned long long)c.n);
    diff = 1;
  }
  return diff;
}

int tg_cache_compare(const char *a, const char *b, char *why, size_t why_cap) {
  tc_cache_raw *ra = NULL, *rb = NULL;
  if (tc_cache_raw_open(a, 0, &ra)) {
    snprintf(why, why_cap, "cannot open %s", a);
    return 1;
  }
  if (tc_cache_raw_open(b, 0, &rb)) {
    tc_cache_raw_abort(ra);
    snprintf(why, why_cap, "cannot open %s", b);
    return 1;
  }
  int diff = compare_db(ra, rb, "graphs", why, why_cap);
  if (!diff) diff = compare_db(ra, rb, "meta", why, why_cap);
  tc_cache_raw_abort(ra);
  tc_cache_raw_abort(rb);
  return diff;
}

typedef struct tg_walk {
  twincache_dims dims;
  twincache_graph *g;
  twincache_dctx *d;
  tg_graph_fn fn;
  void *user;
  uint64_t n;
} tg_walk;

static int walk_chunk(const void *key, size_t key_len, const void *val, size_t val_len, void *user) {
  tg_walk *w = user;
  twincache_chunk_view view;
  TC_REQUIRE(twincache_chunk_parse(val, val_len, &view) == 0, "chunk parse");
  TC_REQUIRE(view.first_index == w->n, "chunk first_index %llu, expected %llu",
        (unsigned long long)view.first_index, (unsigned long long)w->n);
  for (uint32_t s = 0; s < view.count; s++) {
    const void *f;
    size_t fs;
    TC_REQUIRE(twincache_chunk_frame(&view, s, &f, &fs) == 0, "chunk frame");
    int drc = twincache_frame_decode(w->d, f, fs, w->g);
    TC_REQUIRE(drc == 0, "decode graph %llu: %s", (unsigned long long)w->n, twincache_strerror(drc));
    TC_REQUIRE(w->g->index == w->n, "graph index %llu, expected %llu", (unsigned long long)w->g->index,
          (unsigned long long)w->n);
    w->fn(w->g, &w->dims, w->user);
    w->n++;
  }
  return 0;
}

uint64_t tg_for_each_graph(const char *dir, tg_graph_fn fn, void *user) {
  tc_cache_raw *r = NULL;
  tg_walk w = {.fn = fn, .user = user};
  void *v = NULL;
  size_t n = 0;
  TC_REQUIRE(tc_cache_raw_open(dir, 0, &r) == 0, "open %s", dir);
  TC_REQUIRE(tc_cache_raw_get(r, "meta", TWINCACHE_META_DIMS, strlen(TWINCACHE_META_DIMS), &v, &n) == 0,
        "no dims in %s", dir);
  TC_REQUIRE(twincache_dims_decode(v, n, &w.dims) == 0, "dims decode");
  free(v);
  w.g = twincache_graph_alloc(w.dims.max_nodes, w.dims.samples, w.dims.max_inter, w.dims.hidden);
  w.d = twincache_dctx_create();
  TC_REQUIRE(w.g && w.d, "alloc");
  tc_cache_raw_foreach(r, "graphs", walk_chunk, &w);
  tc_cache_raw_abort(r);
  twincache_dctx_free(w.d);
  twincache_graph_free(w.g);
  return w.n;
}
