/* set.c — a cache set: the shards of one cache (FORMAT.md section 7), each
 * its own LMDB environment (a member, opened by env.c), behind one
 * twincache_cache handle; cache.c opens a set here and sends a set's
 * lookups to the member that holds the graph. A set
 * is a directory whose subdirectories are the shards, or a manifest file
 * naming them. Every check happens at open, before any graph is read: one
 * message names the shard (or manifest line) at fault. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tc_cache_lmdb.h"
#include "tc_error.h"

#define TC_MANIFEST_MAGIC "twincache-set 1"

struct tc_cache_set {
  uint32_t n;          /* shards, in shard order */
  twincache_cache **m; /* (n) member handles; NULL: a shard a part does not hold */
  uint64_t *ends;      /* (n) shard i's end index (also of the shards a part does not hold) */
  uint32_t node, nodes; /* a part (twincache_cache_open_part): node k of M; nodes 0 = the whole set */
};

/* One member found by a manifest line or a directory entry. */
typedef struct member {
  char *path;
  int line;               /* manifest line, 0 for a directory's member */
  tc_cache_shard said;    /* the manifest's range (line > 0) */
  twincache_cache *c;
} member;

int tc_set_is_set(const char *path, const struct stat *st) {
  if (S_ISREG(st->st_mode)) return 1;
  if (!S_ISDIR(st->st_mode)) return 0;
  char data_path[PATH_MAX];
  struct stat ds;
  if ((size_t)snprintf(data_path, sizeof data_path, "%s/data.mdb", path) >= sizeof data_path) return 0;
  return stat(data_path, &ds) != 0 && errno == ENOENT;
}

void tc_set_free(struct tc_cache_set *s) {
  if (!s) return;
  for (uint32_t i = 0; i < s->n; i++) tc_cache_free(s->m[i]);
  free(s->m);
  free(s->ends);
  free(s);
}

uint32_t twincache_cache_members(const twincache_cache *c) { return c->set ? c->set->n : 0; }
const twincache_cache *twincache_cache_member(const twincache_cache *c, uint32_t i) {
  return c->set && i < c->set->n ? c->set->m[i] : NULL;
}

int tc_set_part(const twincache_cache *c, uint32_t *node, uint32_t *nodes) {
  if (!c->set || !c->set->nodes) return 0;
  *node = c->set->node;
  *nodes = c->set->nodes;
  return 1;
}

int tc_set_range(const twincache_cache *c, uint32_t i, uint64_t *first, uint64_t *end) {
  if (!c->set || i >= c->set->n) return TWINCACHE_EINVAL;
  *first = i ? c->set->ends[i - 1] : 0;
  *end = c->set->ends[i];
  return TWINCACHE_OK;
}

twincache_cache *tc_set_member(const twincache_cache *c, uint64_t index, uint32_t *pos) {
  const struct tc_cache_set *s = c->set;
  uint32_t lo = 0, hi = s->n - 1; /* the first member whose end is above index */
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (s->ends[mid] > index) hi = mid;
    else lo = mid + 1;
  }
  if (pos) *pos = lo;
  return s->m[lo];
}

int twincache_cache_write_manifest(const twincache_cache *c, const char *out_path) {
  if (!c || !out_path) return tc_error_set(TWINCACHE_EINVAL, "twincache_cache_write_manifest: NULL argument");
  if (!c->set) return tc_error_set(TWINCACHE_EINVAL, "%s is not a set of shards", c->path);
  if (c->set->nodes)
    return tc_error_set(TWINCACHE_EINVAL, "%s is node %u of %u's part of a set, not the whole set", c->path,
                        c->set->node, c->set->nodes);
  char tmp[PATH_MAX], real[PATH_MAX];
  if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp%ld", out_path, (long)getpid()) >= sizeof tmp)
    return tc_error_set(TWINCACHE_EINVAL, "%s: path too long", out_path);
  FILE *f = fopen(tmp, "w");
  if (!f) return tc_error_os(errno, TWINCACHE_EIO, "cannot write %s", tmp);
  fprintf(f, TC_MANIFEST_MAGIC "\n# %u shards of one cache: shard I N FIRST END PATH (graphs FIRST..END-1)\n"
          "tag %016llx\nconfig %s\n", c->set->n, (unsigned long long)c->tag, c->config);
  int rc = TWINCACHE_OK;
  for (uint32_t i = 0; i < c->set->n && rc == TWINCACHE_OK; i++) {
    const twincache_cache *m = c->set->m[i];
    if (!realpath(m->path, real)) rc = tc_error_os(errno, TWINCACHE_EIO, "%s", m->path);
    else fprintf(f, "shard %u %u %llu %llu %s\n", m->shard.index, m->shard.count,
                 (unsigned long long)m->shard.first, (unsigned long long)m->shard.end, real);
  }
  if (fclose(f) != 0 && rc == TWINCACHE_OK) rc = tc_error_os(errno, TWINCACHE_EIO, "cannot write %s", tmp);
  if (rc == TWINCACHE_OK && rename(tmp, out_path) != 0)
    rc = tc_error_os(errno, TWINCACHE_EIO, "cannot rename %s to %s", tmp, out_path);
  if (rc != TWINCACHE_OK) unlink(tmp);
  return rc;
}

static void members_free(member *v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(v[i].path);
    tc_cache_free(v[i].c);
  }
  free(v);
}

/* Appends a member; returns 0 or ENOMEM. */
static int members_add(member **v, size_t *n, size_t *cap, char *path, int line, const tc_cache_shard *said) {
  TC_RETURN_IF(!path, TWINCACHE_ENOMEM, "cache set: out of memory for a member's path");
  if (*n == *cap) {
    size_t nc = *cap ? 2 * *cap : 8;
    member *nv = realloc(*v, nc * sizeof *nv);
    if (!nv) {
      free(path);
      return tc_error_set(TWINCACHE_ENOMEM, "cache set: out of memory for %zu members", nc);
    }
    *v = nv;
    *cap = nc;
  }
  member m = {path, line, {0, 0, 0, 0}, NULL};
  if (said) m.said = *said;
  (*v)[(*n)++] = m;
  return TWINCACHE_OK;
}

/* "base/name" (or name alone when it is absolute or base is empty). */
static char *path_join(const char *base, const char *name) {
  if (name[0] == '/' || !base[0]) return strdup(name);
  size_t a = strlen(base), b = strlen(name);
  char *p = malloc(a + b + 2);
  if (!p) return NULL;
  memcpy(p, base, a);
  p[a] = '/';
  memcpy(p + a + 1, name, b + 1);
  return p;
}

static int cmp_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The members of a directory set: its subdirectories holding a data.mdb
 * (in name order; other entries are ignored). */
static int dir_members(const char *path, member **v, size_t *n) {
  size_t cap = 0, nn = 0, ncap = 0;
  char **names = NULL;
  int rc = TWINCACHE_OK;
  DIR *d = opendir(path);
  if (!d) return tc_error_os(errno, TWINCACHE_ENOTFOUND, "%s", path);
  struct dirent *de;
  while (rc == TWINCACHE_OK && (de = readdir(d))) {
    if (de->d_name[0] == '.') continue;
    char *sub = path_join(path, de->d_name), data[PATH_MAX];
    struct stat st;
    if (!sub) {
      rc = TWINCACHE_ENOMEM;
      break;
    }
    if ((size_t)snprintf(data, sizeof data, "%s/data.mdb", sub) < sizeof data && stat(data, &st) == 0) {
      if (nn == ncap) {
        char **nv = realloc(names, (ncap = ncap ? 2 * ncap : 8) * sizeof *nv);
        if (!nv) {
          free(sub);
          rc = TWINCACHE_ENOMEM;
          break;
        }
        names = nv;
      }
      names[nn++] = sub;
    } else {
      free(sub);
    }
  }
  closedir(d);
  if (rc == TWINCACHE_OK && nn > 1) qsort(names, nn, sizeof *names, cmp_names);
  for (size_t i = 0; i < nn; i++) {
    if (rc == TWINCACHE_OK) rc = members_add(v, n, &cap, names[i], 0, NULL);
    else free(names[i]);
  }
  free(names);
  if (rc == TWINCACHE_ENOMEM) return tc_error_set(rc, "%s: out of memory", path);
  if (rc == TWINCACHE_OK && *n == 0)
    rc = tc_error_set(TWINCACHE_ENOTCACHE, "%s: not a twincache cache (no data.mdb, and no shard directories "
                      "in it)", path);
  return rc;
}

/* Reads the decimal number at *p (digits only, at most max) and the one
 * space after it; advances *p past both. 0 or -1. */
static int take_u64(const char **p, uint64_t max, uint64_t *out) {
  const char *q = *p;
  uint64_t v = 0;
  if (*q < '0' || *q > '9') return -1;
  for (; *q >= '0' && *q <= '9'; q++) {
    if (v > (max - (uint64_t)(*q - '0')) / 10) return -1;
    v = 10 * v + (uint64_t)(*q - '0');
  }
  if (*q != ' ') return -1;
  *p = q + 1;
  *out = v;
  return 0;
}

/* A manifest's tag: exactly 16 hex digits. 0 or -1. */
static int take_tag(const char *q, uint64_t *out) {
  uint64_t v = 0;
  for (int i = 0; i < 16; i++, q++) {
    int d = *q >= '0' && *q <= '9' ? *q - '0' : *q >= 'a' && *q <= 'f' ? *q - 'a' + 10
            : *q >= 'A' && *q <= 'F' ? *q - 'A' + 10 : -1;
    if (d < 0) return -1;
    v = v << 4 | (uint64_t)d;
  }
  if (*q) return -1;
  *out = v;
  return 0;
}

/* Parses the manifest at path (FORMAT.md 7.2) into members, tag and config
 * (*config malloc'd, NULL when the manifest has no config line). */
static int manifest_members(const char *path, member **v, size_t *n, uint64_t *tag, char **config) {
  FILE *f = fopen(path, "r");
  if (!f) return tc_error_os(errno, TWINCACHE_ENOTFOUND, "%s", path);
  char *dir = strdup(path), *line = NULL;
  size_t cap = 0, line_cap = 0;
  int rc = TWINCACHE_OK, have_tag = 0;
  if (!dir) rc = tc_error_set(TWINCACHE_ENOMEM, "%s: out of memory", path);
  else {
    char *slash = strrchr(dir, '/');
    if (slash) slash[slash == dir] = '\0';
    else dir[0] = '\0';
  }
  for (int no = 1; rc == TWINCACHE_OK; no++) {
    ssize_t len = getline(&line, &line_cap, f);
    if (len < 0) break;
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r' || line[len - 1] == ' ')) line[--len] = '\0';
    if (no == 1) {
      if (strcmp(line, TC_MANIFEST_MAGIC) != 0)
        rc = tc_error_set(TWINCACHE_ENOTCACHE, "%s: not a twincache cache (not a directory, nor a cache-set "
                          "manifest: its first line is not \"" TC_MANIFEST_MAGIC "\")", path);
      continue;
    }
    if (len == 0 || line[0] == '#') continue;
    const char *q = line + 6;
    uint64_t i, k, a, b;
    if (strncmp(line, "tag ", 4) == 0) {
      if (have_tag || take_tag(line + 4, tag) != 0)
        rc = tc_error_set(TWINCACHE_ECORRUPT, "%s:%d: expected \"tag\" and 16 hex digits, once", path, no);
      have_tag = 1;
    } else if (strncmp(line, "config ", 7) == 0) {
      if (*config || !(*config = strdup(line + 7)))
        rc = tc_error_set(*config ? TWINCACHE_ECORRUPT : TWINCACHE_ENOMEM, "%s:%d: a second config line", path,
                          no);
    } else if (strncmp(line, "shard ", 6) == 0 && take_u64(&q, UINT32_MAX, &i) == 0 &&
               take_u64(&q, UINT32_MAX, &k) == 0 && take_u64(&q, UINT64_MAX, &a) == 0 &&
               take_u64(&q, UINT64_MAX, &b) == 0 && *q) {
      tc_cache_shard said = {(uint32_t)i, (uint32_t)k, a, b};
      if (members_add(v, n, &cap, path_join(dir, q), no, &said) != TWINCACHE_OK)
        rc = tc_error_set(TWINCACHE_ENOMEM, "%s: out of memory", path);
    } else {
      rc = tc_error_set(TWINCACHE_ECORRUPT, "%s:%d: not a manifest line (\"tag HEX\", \"config JSON\" or "
                        "\"shard I N FIRST END PATH\")", path, no);
    }
  }
  if (rc == TWINCACHE_OK && ferror(f)) rc = tc_error_os(errno, TWINCACHE_EIO, "%s", path);
  if (rc == TWINCACHE_OK && !have_tag)
    rc = tc_error_set(TWINCACHE_ENOTCACHE, "%s: not a twincache cache-set manifest (no \"tag\" line)", path);
  if (rc == TWINCACHE_OK && *n == 0)
    rc = tc_error_set(TWINCACHE_ENOTCACHE, "%s: the manifest names no shard", path);
  fclose(f);
  free(line);
  free(dir);
  return rc;
}

/* Opens every member and checks that together they are exactly the shards
 * of one cache; fills s->m in shard order (taking the handles). */
static int members_check(const char *path, member *v, size_t n, const uint64_t *tag, const char *config,
                         struct tc_cache_set *s) {
  for (size_t i = 0; i < n; i++) {
    struct stat st;
    tc_error_clear();
    int rc = tc_cache_stat(v[i].path, &st);
    /* a member is one cache directory: never a set (a manifest naming
     * itself, or a directory holding itself, would never end) */
    if (rc == TWINCACHE_OK && tc_set_is_set(v[i].path, &st))
      return tc_error_set(TWINCACHE_EMISMATCH, "set %s: %s is not a shard directory (%s)", path, v[i].path,
                          S_ISREG(st.st_mode) ? "a file" : "no data.mdb");
    if (rc == TWINCACHE_OK) rc = tc_cache_open_env(v[i].path, &st, &v[i].c);
    if (rc != TWINCACHE_OK) return tc_error_wrap(rc, "set %s", path);
    const twincache_cache *c = v[i].c;
    if (!c->shard.count)
      return tc_error_set(TWINCACHE_EMISMATCH, "set %s: %s is a whole cache, not a shard (twincache-gen --shard "
                          "I/N writes shards)", path, v[i].path);
  }
  const twincache_cache *c0 = v[0].c;
  uint32_t count = c0->shard.count;
  if (s->nodes > count)
    return tc_error_set(TWINCACHE_EMISMATCH, "set %s: node %u of %u: a set of %u shards has none for nodes %u.. "
                        "(node k holds shards k, k + %u, ...; use at most %u nodes)", path, s->node, s->nodes,
                        count, count, s->nodes, count);
  if (!(s->m = calloc(count, sizeof *s->m)) || !(s->ends = calloc(count, sizeof *s->ends)))
    return tc_error_set(TWINCACHE_ENOMEM, "%s: out of memory", path);
  s->n = count;
  for (uint32_t i = 0; i < count; i++) { /* every shard's range, held or not: it is the split's */
    tc_cache_shard want;
    tc_cache_shard_split(c0->dims.graphs, c0->dims.chunk_graphs, i, count, &want);
    s->ends[i] = want.end;
  }
  for (size_t i = 0; i < n; i++) {
    const twincache_cache *c = v[i].c;
    const tc_cache_shard *sh = &c->shard;
    if (tag && c->tag != *tag)
      return tc_error_set(TWINCACHE_EMISMATCH, "set %s: %s is a shard of another config or seed (cache tag "
                          "%016llx, the manifest says %016llx)", path, v[i].path, (unsigned long long)c->tag,
                          (unsigned long long)*tag);
    if (c->tag != c0->tag || c->version != c0->version)
      return tc_error_set(TWINCACHE_EMISMATCH, "set %s: %s is a shard of another config or seed than %s (cache "
                          "tags %016llx and %016llx)", path, v[i].path, v[0].path, (unsigned long long)c->tag,
                          (unsigned long long)c0->tag);
    if (c->dims.graphs != c0->dims.graphs || c->dims.chunk_graphs != c0->dims.chunk_graphs)
      return tc_error_set(TWINCACHE_EMISMATCH, "set %s: %s splits a cache of %llu graphs, %s one of %llu: shards "
                          "of different --graphs", path, v[i].path, (unsigned long long)c->dims.graphs, v[0].path,
                          (unsigned long long)c0->dims.graphs);
    if (config && strcmp(config, c->config) != 0)
      return tc_error_set(TWINCACHE_EMISMATCH, "set %s: %s was built with another config than the manifest's",
                          path, v[i].path);
    if (sh->count != count)
      return tc_error_set(TWINCACHE_EMISMATCH, "set %s: %s is shard %u of %u, but %s is shard %u of %u: shards "
                          "of different splits overlap", path, v[i].path, sh->index, sh->count, v[0].path,
                          c0->shard.index, count);
    if (v[i].line && (v[i].said.index != sh->index || v[i].said.count != sh->count ||
                      v[i].said.first != sh->first || v[i].said.end != sh->end))
      return tc_error_set(TWINCACHE_EMISMATCH, "set %s, line %d: %s is shard %u of %u (graphs %llu..%llu), "
                          "not the shard %u of %u (graphs %llu..%llu) the line says", path, v[i].line,
                          v[i].path, sh->index, sh->count, (unsigned long long)sh->first,
                          (unsigned long long)sh->end - 1, v[i].said.index, v[i].said.count,
                          (unsigned long long)v[i].said.first, (unsigned long long)v[i].said.end - 1);
    if (s->nodes && sh->index % s->nodes != s->node)
      return tc_error_set(TWINCACHE_EMISMATCH, "set %s: %s is shard %u of %u, not one of node %u of %u's (node k "
                          "of M holds shards k, k + M, ...: here %u, %u, ...); move it to node %u's directory",
                          path, v[i].path, sh->index, count, s->node, s->nodes, s->node, s->node + s->nodes,
                          sh->index % s->nodes);
    if (s->m[sh->index])
      return tc_error_set(TWINCACHE_EMISMATCH, "set %s: shard %u of %u twice: %s and %s", path, sh->index, count,
                          s->m[sh->index]->path, v[i].path);
    if (c->count < sh->end)
      return tc_error_set(TWINCACHE_EMISMATCH, "set %s: %s (shard %u of %u) is incomplete: %llu of its %llu "
                          "graphs committed; rerun its twincache-gen command to finish it", path, v[i].path,
                          sh->index, count, (unsigned long long)(c->count - sh->first),
                          (unsigned long long)(sh->end - sh->first));
    s->m[sh->index] = v[i].c;
    s->ends[sh->index] = sh->end;
    v[i].c = NULL; /* the set owns it now */
  }
  for (uint32_t i = 0; i < count; i++)
    if (!s->m[i] && (!s->nodes || i % s->nodes == s->node)) {
      uint64_t first = i ? s->ends[i - 1] : 0;
      if (s->nodes)
        return tc_error_set(TWINCACHE_EMISMATCH, "set %s: shard %u of %u (graphs %llu..%llu) is missing: node %u "
                            "of %u holds shards %u, %u, ... (every M-th from %u)", path, i, count,
                            (unsigned long long)first, (unsigned long long)s->ends[i] - 1, s->node, s->nodes,
                            s->node, s->node + s->nodes, s->node);
      return tc_error_set(TWINCACHE_EMISMATCH, "set %s: shard %u of %u (graphs %llu..%llu) is missing", path,
                          i, count, (unsigned long long)first, (unsigned long long)s->ends[i] - 1);
    }
  return TWINCACHE_OK;
}

int tc_set_open(const char *path, const struct stat *st, uint32_t node, uint32_t nodes, twincache_cache **out) {
  member *v = NULL;
  size_t n = 0;
  uint64_t tag = 0;
  char *config = NULL;
  twincache_cache *c = calloc(1, sizeof *c);
  int rc;
  if (!c || !(c->path = strdup(path)) || !(c->set = calloc(1, sizeof *c->set))) {
    rc = tc_error_set(TWINCACHE_ENOMEM, "%s: out of memory", path);
    goto cleanup;
  }
  c->set->node = node;
  c->set->nodes = nodes;
  int manifest = S_ISREG(st->st_mode);
  rc = manifest ? manifest_members(path, &v, &n, &tag, &config) : dir_members(path, &v, &n);
  if (rc == TWINCACHE_OK) rc = members_check(path, v, n, manifest ? &tag : NULL, config, c->set);
  if (rc != TWINCACHE_OK) goto cleanup;
  const twincache_cache *c0 = c->set->m[node]; /* node < nodes <= n: held in a part; 0 of a whole set */
  if (!(c->config = strdup(c0->config)) || !(c->library = strdup(c0->library))) {
    rc = tc_error_set(TWINCACHE_ENOMEM, "%s: out of memory", path);
    goto cleanup;
  }
  c->version = c0->version;
  c->tag = c0->tag;
  c->dims = c0->dims;
  for (uint32_t i = 0; i < c->set->n; i++) {
    const twincache_cache *m = c->set->m[i];
    if (!m) continue; /* a part counts what it holds */
    c->stats.raw_bytes += m->stats.raw_bytes;
    c->stats.frame_bytes += m->stats.frame_bytes;
    c->stats.edges += m->stats.edges;
    c->stats.nodes += m->stats.nodes;
    c->disk_bytes += m->disk_bytes;
  }
  c->count = c->set->ends[c->set->n - 1];
  *out = c;
  c = NULL;

cleanup:
  members_free(v, n);
  free(config);
  if (c) tc_set_free(c->set);
  if (c) c->set = NULL;
  tc_cache_free(c);
  return rc;
}

int twincache_cache_open_part(const char *path, uint32_t node, uint32_t nodes, twincache_cache **out) {
  struct stat st;
  if (!path || !out) return tc_error_set(TWINCACHE_EINVAL, "twincache_cache_open_part: path and out must not be NULL");
  *out = NULL;
  if (nodes == 0 || node >= nodes)
    return tc_error_set(TWINCACHE_EINVAL, "%s: node %u of %u: the node must be below the node count (>= 1)", path,
                        node, nodes);
  if (stat(path, &st) != 0) return tc_error_os(errno, TWINCACHE_ENOTFOUND, "%s", path);
  if (!tc_set_is_set(path, &st))
    return tc_error_set(TWINCACHE_EINVAL, "%s is one cache directory, not a set of shards: local mode reads a "
                        "set (twincache-gen --shard I/N)", path);
  tc_error_clear();
  return tc_set_open(path, &st, node, nodes, out);
}
