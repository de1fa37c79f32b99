/* graph_file.c — one fixed DAG read from an edge-list file (--graph-file),
 * the same structure for every graph of the cache, with random SCMs,
 * samples and interventions on it: train or test on a real network's
 * structure. Node labels and edge directions are the file's; the file is
 * read and validated once (tc_gen_dag_file_load), before any graph.
 *
 * The file: UTF-8/ASCII text, one item per line; '#' starts a comment;
 * blank lines are skipped; "nodes N" (optional, 1 <= N <= 256) declares the
 * node count, else it is the largest id + 1; every other line is an edge
 * "FROM TO" of two decimal node ids in [0, 256), separated by blanks. No
 * self-loop, no edge twice, no directed cycle. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_common.h"
#include "tc_error.h"
#include "tc_gen_family.h"

static int file_check(const tc_gen_config *c, tc_gen_refusal *bad) {
  if (!c->dag_file) return tc_gen_refuse(bad, "--graph-file", "needed by --graph file");
  if (c->n_families != 1) return tc_gen_refuse(bad, "--graph", "file cannot be mixed");
  if (c->nodes_min != c->dag_file->n || c->nodes_max != c->dag_file->n)
    return tc_gen_refuse(bad, "--nodes", "a --graph-file fixes it to the file's node count");
  return TWINCACHE_OK;
}

static int file_make_locked(const tc_gen_config *c, uint32_t n, igraph_vector_int_t *edges) {
  const tc_gen_dag_file *f = c->dag_file;
  /* the config check fixed --nodes to the file's node count */
  TC_RETURN_IF(!f || n != f->n, TWINCACHE_EINVAL, "--graph-file: a %u-node graph asked of a file of %u nodes", n,
               f ? f->n : 0);
  TC_RETURN_IF(igraph_vector_int_resize(edges, 2 * (igraph_integer_t)f->n_edges) != IGRAPH_SUCCESS, TWINCACHE_ENOMEM,
               "--graph-file: out of memory for %u edges", f->n_edges);
  for (uint32_t e = 0; e < 2 * f->n_edges; e++) VECTOR(*edges)[e] = f->edges[e];
  return TWINCACHE_OK;
}

static void file_defaults(tc_gen_config *c) {
  c->graph_file = NULL;
  c->dag_file = NULL;
}

/* The file's content hash and edge count: another file is another cache. */
static int file_identity(const tc_gen_config *c, char *buf, size_t cap) {
  if (!c->dag_file) return 0;
  int w = snprintf(buf, cap, ",\"graph_file_fnv64\":\"%016llx\",\"graph_file_edges\":%u",
                   (unsigned long long)c->dag_file->fnv, c->dag_file->n_edges);
  return w >= 0 && (size_t)w < cap ? w : -1;
}

static size_t file_options(tc_gen_config *c, tc_gen_option *o) {
  o[0] = (tc_gen_option){{.name = "--graph-file", .meta = "PATH", .kind = TC_OPT_STRING, .dst = &c->graph_file,
                          .def = "none",
                          .help = "edge list 'FROM TO' per line of a fixed DAG, node ids 0-based\n"
                                  "(0..n-1; a 1-based file gains an isolated node 0), '#' comments,\n"
                                  "optional 'nodes N' line (--graph file; sets --nodes) (default {})"},
                         1u << TWINCACHE_FAMILY_FILE};
  return 1;
}

const tc_gen_family tc_gen_family_file = {TWINCACHE_FAMILY_FILE, TC_ORIENT_FIXED, file_check, file_make_locked,
                                          file_defaults, file_identity, 1, file_options};

void tc_gen_dag_file_free(tc_gen_dag_file *f) {
  if (!f) return;
  free(f->edges);
  free(f->order);
  free(f);
}

/* Reads one decimal id in [0, 256) at *p; advances *p. Returns -1 if none. */
static int read_id(const char **p) {
  const char *s = *p;
  if (*s < '0' || *s > '9') return -1;
  long v = 0;
  while (*s >= '0' && *s <= '9' && v < 100000) v = v * 10 + (*s++ - '0');
  *p = s;
  return v < TWINCACHE_MAX_NODES ? (int)v : -2;
}

static const char *skip_blanks(const char *s) {
  while (*s == ' ' || *s == '\t' || *s == '\r') s++;
  return s;
}

int tc_gen_dag_file_load(const char *path, tc_gen_dag_file **out) {
  enum { NMAX = TWINCACHE_MAX_NODES };
  int rc = TWINCACHE_OK;
  FILE *fp = NULL;
  tc_gen_dag_file *f = NULL;
  uint32_t *line_of = NULL; /* (NMAX, NMAX) line of edge a -> b, 0 = none */
  uint32_t indeg[NMAX], declared = 0, max_id = 0, have_ids = 0;
  char buf[512], *text = NULL; /* buf: the current line, at most 510 bytes and '\n' */
  size_t text_cap = 0;
  *out = NULL;
  fp = fopen(path, "rb");
  if (!fp) return tc_error_set(TWINCACHE_EIO, "%s: %s", path, strerror(errno));
  f = calloc(1, sizeof *f);
  line_of = calloc((size_t)NMAX * NMAX, sizeof *line_of);
  size_t max_edges = (size_t)NMAX * (NMAX - 1) / 2;
  if (f) f->edges = malloc(max_edges * 2 * sizeof *f->edges);
  if (!f || !line_of || !f->edges) {
    rc = tc_error_set(TWINCACHE_ENOMEM, "%s: out of memory", path);
    goto done;
  }
  f->fnv = 0xcbf29ce484222325ull;
  uint32_t line = 0;
  ssize_t got;
  while ((got = getline(&text, &text_cap, fp)) > 0) {
    line++;
    size_t len = (size_t)got; /* getline counts every byte read, NULs too */
    if (len > sizeof buf - 1 || (len == sizeof buf - 1 && text[len - 1] != '\n')) {
      rc = tc_error_set(TWINCACHE_EINVAL, "%s:%u: line longer than %zu bytes", path, line, sizeof buf - 2);
      goto done;
    }
    /* a NUL would hide the bytes after it from the parser and the hash */
    if (memchr(text, 0, len)) {
      rc = tc_error_set(TWINCACHE_EINVAL, "%s:%u: a NUL byte (the file must be text)", path, line);
      goto done;
    }
    memcpy(buf, text, len + 1);
    for (size_t q = 0; q < len; q++) f->fnv = (f->fnv ^ (uint8_t)buf[q]) * 0x100000001b3ull;
    char *hash = strchr(buf, '#');
    if (hash) *hash = 0;
    const char *s = skip_blanks(buf);
    if (*s == '\n' || *s == 0) continue;
    if (!strncmp(s, "nodes", 5)) {
      s = skip_blanks(s + 5);
      char *end;
      long v = strtol(s, &end, 10);
      if (end == s || (*skip_blanks(end) != '\n' && *skip_blanks(end) != 0) || v < 1 || v > NMAX) {
        rc = tc_error_set(TWINCACHE_EINVAL, "%s:%u: expected 'nodes N' with N in [1, %d]", path, line, NMAX);
        goto done;
      }
      declared = (uint32_t)v;
      continue;
    }
    int a = read_id(&s);
    const char *mid = s;
    s = skip_blanks(s);
    int b = s != mid ? read_id(&s) : -1;
    s = skip_blanks(s);
    if (a == -2 || b == -2) {
      rc = tc_error_set(TWINCACHE_EINVAL, "%s:%u: node id out of range [0, %d)", path, line, NMAX);
      goto done;
    }
    if (a < 0 || b < 0 || (*s != '\n' && *s != 0)) {
      rc = tc_error_set(TWINCACHE_EINVAL, "%s:%u: expected an edge 'FROM TO' (two node ids) or 'nodes N'",
                        path, line);
      goto done;
    }
    if (a == b) {
      rc = tc_error_set(TWINCACHE_EINVAL, "%s:%u: self-loop %d -> %d", path, line, a, b);
      goto done;
    }
    if (line_of[(size_t)a * NMAX + b]) {
      rc = tc_error_set(TWINCACHE_EINVAL, "%s:%u: edge %d -> %d again (first on line %u)", path, line, a, b,
                        line_of[(size_t)a * NMAX + b]);
      goto done;
    }
    if (line_of[(size_t)b * NMAX + a]) {
      rc = tc_error_set(TWINCACHE_EINVAL, "%s:%u: edge %d -> %d and %d -> %d (line %u) make a cycle", path,
                        line, a, b, b, a, line_of[(size_t)b * NMAX + a]);
      goto done;
    }
    line_of[(size_t)a * NMAX + b] = line;
    f->edges[2 * f->n_edges] = (uint16_t)a;
    f->edges[2 * f->n_edges + 1] = (uint16_t)b;
    f->n_edges++;
    if ((uint32_t)a > max_id) max_id = (uint32_t)a;
    if ((uint32_t)b > max_id) max_id = (uint32_t)b;
    have_ids = 1;
  }
  if (ferror(fp)) {
    rc = tc_error_set(TWINCACHE_EIO, "%s: read error", path);
    goto done;
  }
  if (!have_ids && !declared) {
    rc = tc_error_set(TWINCACHE_EINVAL, "%s: no edges and no 'nodes N' line", path);
    goto done;
  }
  f->n = have_ids ? max_id + 1 : 0;
  if (declared) {
    if (declared < f->n) {
      rc = tc_error_set(TWINCACHE_EINVAL, "%s: 'nodes %u' but node id %u appears", path, declared, max_id);
      goto done;
    }
    f->n = declared;
  }
  /* Kahn's algorithm, smallest id first: a topological order, or a cycle. */
  f->order = malloc(f->n * sizeof *f->order);
  if (!f->order) {
    rc = tc_error_set(TWINCACHE_ENOMEM, "%s: out of memory", path);
    goto done;
  }
  memset(indeg, 0, sizeof indeg);
  for (uint32_t e = 0; e < f->n_edges; e++) indeg[f->edges[2 * e + 1]]++;
  uint8_t done_[NMAX] = {0};
  uint32_t placed = 0;
  while (placed < f->n) {
    uint32_t v = 0;
    while (v < f->n && (done_[v] || indeg[v])) v++;
    if (v == f->n) break; /* every remaining node has a remaining parent: a cycle */
    done_[v] = 1;
    f->order[placed++] = v;
    for (uint32_t u = 0; u < f->n; u++)
      if (line_of[(size_t)v * NMAX + u]) indeg[u]--;
  }
  if (placed < f->n) {
    /* walk back through remaining parents until a node repeats: a cycle */
    uint32_t v = 0, seen[NMAX];
    while (done_[v]) v++;
    memset(seen, 0, sizeof seen);
    for (uint32_t step = 1;; step++) {
      seen[v] = step;
      uint32_t p = 0;
      while (p < f->n && (done_[p] || !line_of[(size_t)p * NMAX + v])) p++;
      if (seen[p]) {
        rc = tc_error_set(TWINCACHE_EINVAL, "%s:%u: edge %u -> %u lies on a directed cycle", path,
                          line_of[(size_t)p * NMAX + v], p, v);
        goto done;
      }
      v = p;
    }
  }
  *out = f;
  f = NULL;
done:
  if (fp) fclose(fp);
  free(text);
  free(line_of);
  tc_gen_dag_file_free(f);
  return rc;
}
