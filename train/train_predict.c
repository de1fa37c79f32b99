/* train_predict.c — --predict FILE: the trained model's edge probabilities
 * over every graph of --val-cache, written as the suite's predictions file
 * (suite/SUITE.md): an .npz (a stored, uncompressed zip of .npy arrays) with
 * key "suite" = "twincache-suite v1" and one float32 (n, n) array per graph,
 * key "<cell>/<graph id>", cell = the last path component of --val-cache
 * (a suite cell's directory is named after the cell), [i, j] = P(i -> j).
 * Scored by `twincache-suite score DIR FILE`. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tc_train.h"


typedef struct buf {
  unsigned char *p;
  size_t n, cap;
} buf;

static int buf_put(buf *b, const void *src, size_t n) {
  if (b->n + n > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->n + n) cap *= 2;
    unsigned char *q = realloc(b->p, cap);
    if (!q) return 1;
    b->p = q, b->cap = cap;
  }
  memcpy(b->p + b->n, src, n);
  b->n += n;
  return 0;
}
static int put16(buf *b, uint32_t v) {
  unsigned char c[2] = {(unsigned char)v, (unsigned char)(v >> 8)};
  return buf_put(b, c, 2);
}
static int put32(buf *b, uint32_t v) {
  unsigned char c[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                        (unsigned char)(v >> 24)};
  return buf_put(b, c, 4);
}

/* CRC-32 (IEEE, reflected, as zip uses it), bit by bit: the file is small. */
static uint32_t crc32_of(const unsigned char *p, size_t n) {
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; i++) {
    c ^= p[i];
    for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return ~c;
}

/* The zip being written: local entries in `data`, central directory in `dir`. */
typedef struct npz {
  buf data, dir;
  uint32_t entries;
  buf arr; /* scratch: one .npy */
} npz;

/* One .npy (format 1.0): magic, header dict padded to 64 bytes, then data. */
static int npy_make(buf *a, const char *descr, const char *shape, const void *data, size_t bytes) {
  char h[256];
  int hn = snprintf(h, sizeof h, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape);
  if (hn < 0 || hn > 200) return 1;
  size_t total = 10 + (size_t)hn + 1;
  size_t pad = (64 - total % 64) % 64;
  a->n = 0;
  if (buf_put(a, "\x93NUMPY\x01\x00", 8) || put16(a, (uint32_t)(hn + pad + 1)) || buf_put(a, h, (size_t)hn))
    return 1;
  for (size_t i = 0; i < pad; i++)
    if (buf_put(a, " ", 1)) return 1;
  return buf_put(a, "\n", 1) || buf_put(a, data, bytes);
}

/* Adds the .npy in z->arr as member "<key>.npy", stored (method 0). */
static int npz_add(npz *z, const char *key) {
  char name[512];
  int nn = snprintf(name, sizeof name, "%s.npy", key);
  if (nn < 0 || (size_t)nn >= sizeof name || z->data.n + z->arr.n > 0xFFFFFFF0u) return 1;
  uint32_t crc = crc32_of(z->arr.p, z->arr.n), size = (uint32_t)z->arr.n, off = (uint32_t)z->data.n;
  buf *d = &z->data, *c = &z->dir;
  if (put32(d, 0x04034b50u) || put16(d, 20) || put16(d, 0) || put16(d, 0) || put16(d, 0) ||
      put16(d, 0x21) || put32(d, crc) || put32(d, size) || put32(d, size) || put16(d, (uint32_t)nn) ||
      put16(d, 0) || buf_put(d, name, (size_t)nn) || buf_put(d, z->arr.p, z->arr.n))
    return 1;
  if (put32(c, 0x02014b50u) || put16(c, 20) || put16(c, 20) || put16(c, 0) || put16(c, 0) ||
      put16(c, 0) || put16(c, 0x21) || put32(c, crc) || put32(c, size) || put32(c, size) ||
      put16(c, (uint32_t)nn) || put16(c, 0) || put16(c, 0) || put16(c, 0) || put16(c, 0) ||
      put32(c, 0) || put32(c, off) || buf_put(c, name, (size_t)nn))
    return 1;
  z->entries++;
  return 0;
}

/* Writes the zip to path.tmp, then renames it over path. */
static int npz_write(npz *z, const char *path) {
  buf end = {0};
  int rc = 1;
  if (z->entries > 0xFFFFu || put32(&end, 0x06054b50u) || put16(&end, 0) || put16(&end, 0) ||
      put16(&end, z->entries) || put16(&end, z->entries) || put32(&end, (uint32_t)z->dir.n) ||
      put32(&end, (uint32_t)z->data.n) || put16(&end, 0)) {
    fprintf(stderr, PROG ": --predict: too many graphs for one predictions file\n");
    goto out;
  }
  size_t n = strlen(path);
  char *tmp = malloc(n + 5);
  if (!tmp) goto out;
  memcpy(tmp, path, n);
  memcpy(tmp + n, ".tmp", 5);
  FILE *f = fopen(tmp, "wb");
  if (!f) {
    fprintf(stderr, PROG ": --predict: cannot create %s: %s\n", tmp, strerror(errno));
    free(tmp);
    goto out;
  }
  int bad = fwrite(z->data.p, 1, z->data.n, f) != z->data.n || fwrite(z->dir.p, 1, z->dir.n, f) != z->dir.n ||
            fwrite(end.p, 1, end.n, f) != end.n;
  bad |= fclose(f) != 0;
  if (bad || rename(tmp, path) != 0) {
    fprintf(stderr, PROG ": --predict: cannot write %s: %s\n", path, strerror(errno));
    remove(tmp);
    free(tmp);
    goto out;
  }
  free(tmp);
  rc = 0;
out:
  free(end.p);
  return rc;
}

/* The cell name: the last non-empty path component of dir. */
static int cell_name(const char *dir, char *out, size_t cap) {
  size_t e = strlen(dir);
  while (e > 1 && dir[e - 1] == '/') e--;
  size_t s = e;
  while (s > 0 && dir[s - 1] != '/') s--;
  if (e == s || e - s >= cap) return 1;
  memcpy(out, dir + s, e - s);
  out[e - s] = '\0';
  return strcmp(out, ".") == 0 || strcmp(out, "..") == 0;
}

int train_predict_check(const opts *o) {
  if (!o->predict) return 0;
  char cell[256];
  if (cell_name(o->val_cache, cell, sizeof cell) != 0) {
    fprintf(stderr, PROG ": --predict: cannot name a suite cell after --val-cache %s (its last path "
            "component is the cell's name)\n", o->val_cache);
    return 1;
  }
  struct stat st;
  if (stat(o->predict, &st) == 0 && !S_ISREG(st.st_mode)) {
    fprintf(stderr, PROG ": --predict: %s exists and is not a file; give a file name (e.g. "
            "pred.npz)\n", o->predict);
    return 1;
  }
  size_t n = strlen(o->predict);
  char *tmp = malloc(n + 5);
  if (!tmp) return 1;
  memcpy(tmp, o->predict, n);
  memcpy(tmp + n, ".tmp", 5);
  FILE *f = fopen(tmp, "wb");
  if (!f) {
    fprintf(stderr, PROG ": --predict: cannot create %s (the file is written there, then renamed "
            "over %s): %s\n", tmp, o->predict, strerror(errno));
    free(tmp);
    return 1;
  }
  fclose(f);
  remove(tmp);
  free(tmp);
  return 0;
}

int train_predict(run *r) {
  const opts *o = &r->o;
  if (!o->predict || r->dist.rank != 0) return 0;
  char cell[256];
  if (cell_name(o->val_cache, cell, sizeof cell) != 0) {
    fprintf(stderr, PROG ": --predict: cannot name a suite cell after --val-cache %s (its last path "
            "component is the cell's name)\n", o->val_cache);
    return 1;
  }
  npz z = {0};
  int rc = 1, N = (int)twincache_loader_layout(r->val)->nodes; /* the cell's batches */
  float *q = malloc((size_t)N * N * sizeof *q);
  char suite_id[32]; /* the suite version the cells' caches come from */
  int sid_len = snprintf(suite_id, sizeof suite_id, "twincache-suite v%" PRIu32, o->suite_version);
  uint32_t sid[sizeof suite_id]; /* numpy '<U' = UCS-4 little-endian */
  for (int i = 0; i < sid_len; i++) sid[i] = (uint32_t)(unsigned char)suite_id[i];
  char descr[16];
  snprintf(descr, sizeof descr, "<U%d", sid_len);
  if (!q || npy_make(&z.arr, descr, "()", sid, (size_t)sid_len * sizeof sid[0]) || npz_add(&z, "suite")) goto oom;
  uint64_t batches = twincache_loader_batches_per_epoch(r->val), graphs = 0;
  r->infer_found = r->infer_seen = 0; /* this pass's worlds, not the evaluations' */
  for (uint64_t i = 0; i < batches; i++) { /* one epoch of the validation loader: every graph once */
    twincache_batch *b = NULL;
    if (twincache_loader_next(r->val, &b) != 0) {
      fprintf(stderr, PROG ": --predict: batch of %s: %s\n", o->val_cache, twincache_last_error());
      goto out;
    }
    float loss;
    const float *logit, *T, *w;
    train_withheld_targets(r, b);
    if (r->be->eval_batch(r, b, &loss, &logit, &T, &w) != 0) {
      twincache_loader_release(r->val, b);
      goto out;
    }
    for (uint32_t g = 0; g < b->n_graphs; g++) {
      if (!b->valid[g]) continue;
      const uint8_t *mask = b->node_mask + (size_t)g * N;
      int n = 0;
      while (n < N && mask[n]) n++; /* the graph's nodes are the first n */
      const float *lg = logit + (size_t)g * N * N;
      for (int a = 0; a < n; a++)
        for (int c = 0; c < n; c++) /* (n, n) row-major; the diagonal is no pair: 0 */
          q[a * n + c] = a == c ? 0.0f : 1.0f / (1.0f + expf(-lg[a * N + c]));
      char key[320], shape[64];
      snprintf(key, sizeof key, "%s/%" PRIu64, cell, b->graph_id[g]);
      snprintf(shape, sizeof shape, "(%d, %d)", n, n);
      if (npy_make(&z.arr, "<f4", shape, q, (size_t)n * n * sizeof *q) || npz_add(&z, key)) {
        twincache_loader_release(r->val, b);
        goto oom;
      }
      graphs++;
    }
    twincache_loader_release(r->val, b);
  }
  if (npz_write(&z, o->predict) != 0) goto out;
  fprintf(r->text, "predictions: %" PRIu64 " graphs of cell %s written to %s (%s)\n", graphs, cell,
          o->predict, suite_id);
  if (o->val_withhold)
    fprintf(r->text, "targets withheld: inferred for %" PRIu64 " of %" PRIu64 " worlds read (a node constant "
            "over a world's rows is a do() target; other worlds keep none: train/MODEL.md)\n",
            r->infer_found, r->infer_seen);
  rc = 0;
  goto out;
oom:
  fprintf(stderr, PROG ": --predict: out of memory\n");
out:
  free(q);
  free(z.data.p), free(z.dir.p), free(z.arr.p);
  return rc;
}
