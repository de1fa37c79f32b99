/* read.c — twincache-import's readers: .npy arrays, CSV tables, DCDI's
 * per-row target and regime files, edge lists, and the grouping of rows
 * into regimes. Input is untrusted: every size is checked before use and
 * every refusal names the file, the row (line) and the column. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_common.h"
#include "tc_error.h"
#include "tc_import.h"

#define BAD(...) tc_error_set(TWINCACHE_EINVAL, __VA_ARGS__)

void tc_table_free(tc_table *t) {
  if (!t) return;
  for (uint32_t j = 0; t->names && j < t->n; j++) free(t->names[j]);
  free(t->names);
  free(t->v);
  memset(t, 0, sizeof *t);
}

void tc_row_regimes_free(tc_row_regimes *r) {
  if (!r) return;
  free(r->n_t);
  free(r->t);
  free(r->label);
  memset(r, 0, sizeof *r);
}

/* The whole file at path, NUL-terminated, into *buf (*len bytes). */
static int file_slurp(const char *path, char **buf, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return tc_error_set(TWINCACHE_EIO, "%s: cannot open: %s", path, strerror(errno));
  char *b = NULL;
  size_t n = 0, cap = 0;
  int rc = TWINCACHE_OK;
  for (;;) {
    if (n + 65536 + 1 > cap) {
      size_t want = cap ? 2 * cap : 131072;
      char *p = realloc(b, want);
      if (!p) {
        rc = tc_error_set(TWINCACHE_ENOMEM, "%s: out of memory reading it", path);
        break;
      }
      b = p, cap = want;
    }
    size_t got = fread(b + n, 1, 65536, f);
    n += got;
    if (got < 65536) {
      if (ferror(f)) rc = tc_error_set(TWINCACHE_EIO, "%s: read error", path);
      break;
    }
  }
  fclose(f);
  if (rc != TWINCACHE_OK) {
    free(b);
    return rc;
  }
  char *fit = realloc(b, n + 1); /* exactly the file (and its NUL): a read past it is out of bounds */
  if (fit) b = fit;
  b[n] = '\0';
  *buf = b;
  *len = n;
  return TWINCACHE_OK;
}

/* ---- .npy ---------------------------------------------------------------- */
/* The value of key in a .npy header dict ("'descr': '<f8'"): points past
 * the colon and spaces, or NULL. */
static const char *npy_key(const char *hdr, const char *key) {
  const char *p = strstr(hdr, key);
  if (!p) return NULL;
  p += strlen(key);
  while (*p == ' ' || *p == ':') p++;
  return p;
}

typedef struct npy_array {
  char kind;      /* 'f', 'i', 'u', 'b' */
  int size;       /* bytes per item */
  int fortran;
  uint64_t rows, cols;
  const uint8_t *data;
} npy_array;

/* Parses a .npy file's bytes (the whole file, len bytes) as a 2-D array. */
static int npy_parse(const char *path, const uint8_t *b, size_t len, npy_array *a) {
  if (len >= 4 && (memcmp(b, "PK\x03\x04", 4) == 0 || memcmp(b, "PK\x05\x06", 4) == 0)) /* np.savez's zip (empty: its end record alone) */
    return BAD("%s: an .npz (a zip of arrays), not one .npy array: save the rows with np.save (and the "
               "targets, regimes or DAG as their own .npy files)", path);
  if (len < 10 || memcmp(b, "\x93NUMPY", 6) != 0) return BAD("%s: not a .npy file (no \\x93NUMPY magic)", path);
  unsigned major = b[6];
  size_t hlen, off;
  if (major == 1) {
    hlen = (size_t)b[8] | (size_t)b[9] << 8;
    off = 10;
  } else if (major == 2 || major == 3) {
    if (len < 12) return BAD("%s: a truncated .npy header", path);
    hlen = tc_load_u32(b + 8);
    off = 12;
  } else {
    return BAD("%s: .npy format version %u, this reader knows 1 to 3", path, major);
  }
  if (hlen > len - off || hlen > 65536) return BAD("%s: a .npy header of %zu bytes, the file has %zu", path, hlen, len);
  char hdr[65537];
  memcpy(hdr, b + off, hlen);
  hdr[hlen] = '\0';
  const char *d = npy_key(hdr, "'descr'"), *fo = npy_key(hdr, "'fortran_order'"), *sh = npy_key(hdr, "'shape'");
  if (!d || !fo || !sh) return BAD("%s: a .npy header without descr, fortran_order or shape", path);
  if (d[0] != '\'' || !d[1] || !d[2] || !d[3])
    return BAD("%s: .npy descr %.20s: a simple dtype ('<f8', '<f4', '<i8', '|u1', '|b1') expected", path, d);
  char order = d[1];
  a->kind = d[2];
  a->size = atoi(d + 3);
  if (!strchr("fiub", a->kind) || (a->kind == 'f' ? a->size != 4 && a->size != 8
                                                   : a->size != 1 && a->size != 2 && a->size != 4 && a->size != 8) ||
      (order == '>' && a->size > 1) || !strchr("<>|=", order))
    return BAD("%s: .npy dtype %.8s: little-endian float32/64, integers or booleans expected", path, d);
  a->fortran = strncmp(fo, "True", 4) == 0;
  if (!a->fortran && strncmp(fo, "False", 5) != 0) return BAD("%s: .npy fortran_order %.8s unknown", path, fo);
  if (*sh != '(') return BAD("%s: .npy shape %.20s: a tuple expected", path, sh);
  char *end;
  errno = 0;
  const char *dim = sh + 1;
  unsigned long long r = strtoull(dim, &end, 10);
  int got_r = end != dim && isdigit((unsigned char)dim[strspn(dim, " ")]);
  while (*end == ' ') end++;
  if (errno || !got_r || *end != ',') return BAD("%s: .npy shape %.30s: expected a 2-D array (rows, columns)", path, sh);
  dim = end + 1;
  unsigned long long c = strtoull(dim, &end, 10); /* (5,) is 1-D: no second number */
  int got_c = end != dim && isdigit((unsigned char)dim[strspn(dim, " ")]);
  while (*end == ' ' || *end == ',') end++;
  if (errno || !got_c || *end != ')')
    return BAD("%s: .npy shape %.30s: expected a 2-D array (rows, columns)", path, sh);
  a->rows = r, a->cols = c;
  off += hlen;
  if (r > UINT32_MAX || c > UINT32_MAX || (c && r > (len - off) / c / (unsigned)a->size) ||
      r * c * (unsigned)a->size != len - off)
    return BAD("%s: shape (%llu, %llu) of %d-byte items needs %llu bytes, the file has %zu after its header", path, r,
               c, a->size, r * c * (unsigned long long)a->size, len - off);
  a->data = b + off;
  return TWINCACHE_OK;
}

/* Item (i, j) of a as a double. */
static double npy_get(const npy_array *a, uint64_t i, uint64_t j) {
  const uint8_t *p = a->data + (a->fortran ? j * a->rows + i : i * a->cols + j) * (uint64_t)a->size;
  switch (a->kind) {
  case 'f':
    if (a->size == 4) {
      float f;
      memcpy(&f, p, 4);
      return f;
    } else {
      double x;
      memcpy(&x, p, 8);
      return x;
    }
  case 'b':
    return p[0] != 0;
  case 'u':
    return a->size == 1 ? p[0] : a->size == 2 ? tc_load_u16(p) : a->size == 4 ? tc_load_u32(p) : (double)tc_load_u64(p);
  default: /* 'i' */
    return a->size == 1 ? (int8_t)p[0] : a->size == 2 ? (int16_t)tc_load_u16(p)
                                       : a->size == 4 ? (int32_t)tc_load_u32(p) : (double)(int64_t)tc_load_u64(p);
  }
}

int tc_npy_read(const char *path, tc_table *out) {
  memset(out, 0, sizeof *out);
  char *b;
  size_t len;
  int rc = file_slurp(path, &b, &len);
  if (rc != TWINCACHE_OK) return rc;
  npy_array a;
  if ((rc = npy_parse(path, (const uint8_t *)b, len, &a)) != TWINCACHE_OK) goto done;
  if (a.rows == 0 || a.cols == 0 || a.cols > TWINCACHE_MAX_NODES) {
    rc = BAD("%s: shape (%llu, %llu): rows >= 1 and 1..%d columns (variables) expected", path,
             (unsigned long long)a.rows, (unsigned long long)a.cols, TWINCACHE_MAX_NODES);
    goto done;
  }
  out->m = (uint32_t)a.rows, out->n = (uint32_t)a.cols;
  out->v = malloc(sizeof(float) * a.rows * a.cols);
  out->names = calloc(a.cols, sizeof *out->names);
  if (!out->v || !out->names) {
    rc = tc_error_set(TWINCACHE_ENOMEM, "%s: out of memory", path);
    goto done;
  }
  for (uint32_t j = 0; j < out->n; j++) {
    char nm[16];
    snprintf(nm, sizeof nm, "%u", j);
    if (!(out->names[j] = strdup(nm))) {
      rc = tc_error_set(TWINCACHE_ENOMEM, "%s: out of memory", path);
      goto done;
    }
  }
  for (uint64_t i = 0; i < a.rows; i++)
    for (uint64_t j = 0; j < a.cols; j++) {
      double x = npy_get(&a, i, j);
      float f = (float)x;
      if (!isfinite(f)) {
        rc = BAD("%s: row %llu, column %llu: %g is %s", path, (unsigned long long)i, (unsigned long long)j, x,
                 isfinite(x) ? "outside float32's range" : "not a finite number");
        goto done;
      }
      out->v[i * a.cols + j] = f;
    }
done:
  if (rc != TWINCACHE_OK) tc_table_free(out);
  free(b);
  return rc;
}

int tc_npy_read_dag(const char *path, uint32_t n, uint8_t *adj) {
  char *b;
  size_t len;
  int rc = file_slurp(path, &b, &len);
  if (rc != TWINCACHE_OK) return rc;
  npy_array a;
  if ((rc = npy_parse(path, (const uint8_t *)b, len, &a)) != TWINCACHE_OK) goto done;
  if (a.rows != n || a.cols != n) {
    rc = BAD("%s: shape (%llu, %llu), the data has %u variables: (%u, %u) expected", path,
             (unsigned long long)a.rows, (unsigned long long)a.cols, n, n, n);
    goto done;
  }
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t j = 0; j < n; j++) {
      double x = npy_get(&a, i, j);
      if (x != 0.0 && x != 1.0) {
        rc = BAD("%s: row %u, column %u: %g: entries are 0 or 1 (edge row -> column)", path, i, j, x);
        goto done;
      }
      adj[(size_t)i * n + j] = x == 1.0;
    }
  for (uint32_t i = 0; i < n; i++)
    if (adj[(size_t)i * n + i]) {
      rc = BAD("%s: row %u, column %u: a self-loop: not a DAG", path, i, i);
      goto done;
    }
  if (!twincache_graph_is_dag(adj, n, n)) rc = BAD("%s: the graph has a directed cycle: not a DAG", path);
done:
  free(b);
  return rc;
}

/* ---- text helpers ---------------------------------------------------------- */
/* Splits buf in place into lines (\n or \r\n); a last empty line (the
 * final newline) is dropped. *lines (malloc'ed) points into buf. */
static int lines_split(const char *path, char *buf, size_t len, char ***lines, uint32_t *count) {
  size_t cap = 1;
  for (size_t i = 0; i < len; i++) cap += buf[i] == '\n';
  if (cap > UINT32_MAX) return BAD("%s: more than 2^32 lines", path);
  char **l = malloc(cap * sizeof *l);
  if (!l) return tc_error_set(TWINCACHE_ENOMEM, "%s: out of memory", path);
  uint32_t c = 0;
  char *p = buf;
  for (;;) {
    char *nl = strchr(p, '\n');
    if (nl) *nl = '\0';
    size_t k = strlen(p);
    if (k && p[k - 1] == '\r') p[k - 1] = '\0';
    if (nl || *p) l[c++] = p;
    if (!nl) break;
    p = nl + 1;
  }
  *lines = l;
  *count = c;
  return TWINCACHE_OK;
}

static char *trim(char *s) {
  while (*s == ' ' || *s == '\t') s++;
  size_t k = strlen(s);
  while (k && (s[k - 1] == ' ' || s[k - 1] == '\t')) s[--k] = '\0';
  return s;
}

/* A node named by s: a column name of tab, else a decimal index < n.
 * Returns the node or -1. */
static int node_of(const char *s, const tc_table *tab, uint32_t n) {
  for (uint32_t j = 0; tab && j < tab->n; j++)
    if (!strcmp(tab->names[j], s)) return (int)j;
  uint32_t v;
  if (*s && strspn(s, "0123456789") == strlen(s) && strlen(s) < 6 && (v = (uint32_t)atoi(s)) < n) return (int)v;
  return -1;
}

/* Parses a target cell (separators in seps) into t (sorted, distinct), *c.
 * A message naming file/line/column on failure. */
static int targets_parse(char *cell, const char *seps, const tc_table *tab, uint32_t n, const char *file,
                         uint32_t line, const char *col, uint16_t *t, uint8_t *c) {
  uint32_t k = 0;
  for (char *save = NULL, *tok = strtok_r(cell, seps, &save); tok; tok = strtok_r(NULL, seps, &save)) {
    tok = trim(tok);
    if (!*tok) continue;
    int j = node_of(tok, tab, n);
    if (j < 0) return BAD("%s: line %u, column %s: target '%.40s' is no variable (a name, or an index < %u)", file,
                          line, col, tok, n);
    for (uint32_t a = 0; a < k; a++)
      if (t[a] == j) return BAD("%s: line %u, column %s: target '%.40s' repeated", file, line, col, tok);
    if (k == TWINCACHE_MAX_TARGETS)
      return BAD("%s: line %u, column %s: more than %d targets", file, line, col, TWINCACHE_MAX_TARGETS);
    t[k++] = (uint16_t)j;
  }
  for (uint32_t a = 1; a < k; a++) /* sorted: a regime is a set */
    for (uint32_t b = a; b > 0 && t[b - 1] > t[b]; b--) {
      uint16_t x = t[b];
      t[b] = t[b - 1];
      t[b - 1] = x;
    }
  *c = (uint8_t)k;
  return TWINCACHE_OK;
}

static int label_parse(const char *cell, const char *file, uint32_t line, const char *col, int64_t *out) {
  char *end;
  errno = 0;
  long long v = strtoll(cell, &end, 10);
  if (!*cell || errno || *trim(end) || v < 0)
    return BAD("%s: line %u, column %s: '%.40s': a regime number >= 0 expected", file, line, col, cell);
  *out = v;
  return TWINCACHE_OK;
}

static int regimes_alloc(tc_row_regimes *r, uint32_t m, int targets, int labels, const char *file) {
  if (targets) {
    r->n_t = calloc(m ? m : 1, 1);
    r->t = calloc((size_t)(m ? m : 1) * TWINCACHE_MAX_TARGETS, sizeof *r->t);
  }
  if (labels) r->label = calloc(m ? m : 1, sizeof *r->label);
  if ((targets && (!r->n_t || !r->t)) || (labels && !r->label))
    return tc_error_set(TWINCACHE_ENOMEM, "%s: out of memory", file);
  return TWINCACHE_OK;
}

/* ---- CSV ------------------------------------------------------------------ */
int tc_csv_read(const char *path, const char *target_col, const char *regime_col, tc_table *tab,
                tc_row_regimes *reg) {
  memset(tab, 0, sizeof *tab);
  memset(reg, 0, sizeof *reg);
  char *buf = NULL, **lines = NULL, **cells = NULL;
  size_t len;
  uint32_t nl = 0;
  int rc = file_slurp(path, &buf, &len);
  if (rc != TWINCACHE_OK) return rc;
  if (strlen(buf) != len) {
    rc = BAD("%s: a NUL byte at offset %zu: not a text file", path, strlen(buf));
    goto done;
  }
  if ((rc = lines_split(path, buf, len, &lines, &nl)) != TWINCACHE_OK) goto done;
  if (nl < 2) {
    rc = BAD("%s: %u lines: a header line and at least one row expected", path, nl);
    goto done;
  }
  if (strchr(lines[0], '"')) {
    rc = BAD("%s: line 1: quoted fields are not read; name columns without quotes or commas", path);
    goto done;
  }
  uint32_t w = 1;
  for (const char *p = lines[0]; *p; p++) w += *p == ',';
  cells = malloc(w * sizeof *cells);
  if (!cells) {
    rc = tc_error_set(TWINCACHE_ENOMEM, "%s: out of memory", path);
    goto done;
  }
  /* the header: the targets and regime columns, the variables */
  int tcol = -1, rcol = -1;
  {
    char *save = NULL, *p = lines[0];
    for (uint32_t j = 0; j < w; j++) {
      char *c = strsep(&p, ",");
      cells[j] = trim(c);
      (void)save;
      if (!*cells[j]) {
        rc = BAD("%s: line 1, column %u: an empty column name", path, j + 1);
        goto done;
      }
      for (uint32_t a = 0; a < j; a++)
        if (!strcmp(cells[a], cells[j])) {
          rc = BAD("%s: line 1, column %u: name '%.40s' repeated", path, j + 1, cells[j]);
          goto done;
        }
      if (target_col ? !strcmp(cells[j], target_col) : !strcmp(cells[j], "targets")) tcol = (int)j;
      if (regime_col ? !strcmp(cells[j], regime_col) : !strcmp(cells[j], "regime")) rcol = (int)j;
    }
  }
  if (tcol >= 0 && tcol == rcol) { /* counted once as a variable: the table would be a column short */
    rc = BAD("%s: line 1: column '%.40s' is both the targets and the regime column: name two different columns", path,
             cells[tcol]);
    goto done;
  }
  if (target_col && tcol < 0) {
    rc = BAD("%s: line 1: no column '%.40s' (--targets-column)", path, target_col);
    goto done;
  }
  if (regime_col && rcol < 0) {
    rc = BAD("%s: line 1: no column '%.40s' (--regime-column)", path, regime_col);
    goto done;
  }
  uint32_t n = w - (tcol >= 0) - (rcol >= 0), m = nl - 1;
  if (n == 0 || n > TWINCACHE_MAX_NODES) {
    rc = BAD("%s: line 1: %u variable columns, 1..%d allowed", path, n, TWINCACHE_MAX_NODES);
    goto done;
  }
  tab->m = m, tab->n = n;
  tab->v = malloc(sizeof(float) * (size_t)m * n);
  tab->names = calloc(n, sizeof *tab->names);
  if (!tab->v || !tab->names) {
    rc = tc_error_set(TWINCACHE_ENOMEM, "%s: out of memory for %u rows", path, m);
    goto done;
  }
  for (uint32_t j = 0, v = 0; j < w; j++)
    if ((int)j != tcol && (int)j != rcol && !(tab->names[v++] = strdup(cells[j]))) {
      rc = tc_error_set(TWINCACHE_ENOMEM, "%s: out of memory", path);
      goto done;
    }
  const char *tname = tcol >= 0 ? cells[tcol] : NULL, *rname = rcol >= 0 ? cells[rcol] : NULL;
  char tbuf[256], rbuf[256];
  if (tname) snprintf(tbuf, sizeof tbuf, "%s", tname);
  if (rname) snprintf(rbuf, sizeof rbuf, "%s", rname);
  reg->targets_file = tcol >= 0 ? path : NULL;
  reg->regime_file = rcol >= 0 ? path : NULL;
  reg->first_line = 2;
  if ((rc = regimes_alloc(reg, m, tcol >= 0, rcol >= 0, path)) != TWINCACHE_OK) goto done;
  for (uint32_t i = 0; i < m; i++) {
    uint32_t line = i + 2, got = 0;
    char *p = lines[i + 1];
    if (strchr(p, '"')) {
      rc = BAD("%s: line %u: quoted fields are not read", path, line);
      goto done;
    }
    while (p && got < w) cells[got++] = strsep(&p, ",");
    if (got != w || p) {
      uint32_t more = got;
      while (p) {
        strsep(&p, ",");
        more++;
      }
      rc = BAD("%s: line %u: %u fields, the header has %u", path, line, more, w);
      goto done;
    }
    for (uint32_t j = 0, v = 0; j < w; j++) {
      char *c = trim(cells[j]);
      if ((int)j == tcol) {
        if ((rc = targets_parse(c, "; |", tab, n, path, line, tbuf, reg->t + (size_t)i * TWINCACHE_MAX_TARGETS,
                                &reg->n_t[i])) != TWINCACHE_OK)
          goto done;
      } else if ((int)j == rcol) {
        if ((rc = label_parse(c, path, line, rbuf, &reg->label[i])) != TWINCACHE_OK) goto done;
      } else {
        char *end;
        errno = 0;
        double x = strtod(c, &end);
        float f = (float)x;
        if (!*c || *end || !isfinite(f)) {
          rc = BAD("%s: line %u, column %u (%.40s): '%.40s' is not a finite number%s", path, line, j + 1,
                   tab->names[v], c, *c && !*end && isfinite(x) ? " in float32" : "");
          goto done;
        }
        tab->v[(size_t)i * n + v++] = f;
      }
    }
  }
done:
  if (rc != TWINCACHE_OK) {
    tc_table_free(tab);
    tc_row_regimes_free(reg);
  }
  free(cells);
  free(lines);
  free(buf);
  return rc;
}

/* ---- DCDI's per-row files ---------------------------------------------------- */
static int row_file(const char *path, uint32_t m, char **buf, char ***lines) {
  size_t len;
  uint32_t nl;
  int rc = file_slurp(path, buf, &len);
  if (rc != TWINCACHE_OK) return rc;
  if (strlen(*buf) != len) return BAD("%s: a NUL byte at offset %zu: not a text file", path, strlen(*buf));
  if ((rc = lines_split(path, *buf, len, lines, &nl)) != TWINCACHE_OK) return rc;
  if (nl != m)
    return BAD("%s: %u lines, the data has %u rows: one line per row expected", path, nl, m);
  return TWINCACHE_OK;
}

int tc_row_files_read(const char *targets_path, const char *regime_path, uint32_t m, uint32_t n,
                      tc_row_regimes *reg) {
  memset(reg, 0, sizeof *reg);
  char *tb = NULL, *rb = NULL, **tl = NULL, **rl = NULL;
  int rc = regimes_alloc(reg, m, targets_path != NULL, regime_path != NULL, targets_path ? targets_path : "");
  reg->targets_file = targets_path;
  reg->regime_file = regime_path;
  reg->first_line = 1;
  if (rc == TWINCACHE_OK && targets_path && (rc = row_file(targets_path, m, &tb, &tl)) == TWINCACHE_OK)
    for (uint32_t i = 0; i < m && rc == TWINCACHE_OK; i++) {
      rc = targets_parse(tl[i], ",", NULL, n, targets_path, i + 1, "1", reg->t + (size_t)i * TWINCACHE_MAX_TARGETS,
                         &reg->n_t[i]);
    }
  if (rc == TWINCACHE_OK && regime_path && (rc = row_file(regime_path, m, &rb, &rl)) == TWINCACHE_OK)
    for (uint32_t i = 0; i < m && rc == TWINCACHE_OK; i++) rc = label_parse(trim(rl[i]), regime_path, i + 1, "1", &reg->label[i]);
  if (rc != TWINCACHE_OK) tc_row_regimes_free(reg);
  free(tl);
  free(rl);
  free(tb);
  free(rb);
  return rc;
}

/* ---- edge lists -------------------------------------------------------------- */
int tc_edges_read(const char *path, const tc_table *tab, uint8_t *adj) {
  char *buf = NULL, **lines = NULL;
  size_t len;
  uint32_t nl = 0, n = tab->n;
  uint8_t *seen = malloc(n);
  int rc = file_slurp(path, &buf, &len);
  if (rc == TWINCACHE_OK && !seen) rc = tc_error_set(TWINCACHE_ENOMEM, "%s: out of memory", path);
  if (rc == TWINCACHE_OK && strlen(buf) != len) rc = BAD("%s: a NUL byte at offset %zu: not a text file", path, strlen(buf));
  if (rc == TWINCACHE_OK) rc = lines_split(path, buf, len, &lines, &nl);
  memset(adj, 0, (size_t)n * n);
  for (uint32_t i = 0; rc == TWINCACHE_OK && i < nl; i++) {
    char *p = lines[i], *hash = strchr(p, '#');
    if (hash) *hash = '\0';
    char *arrow = strstr(p, "->");
    if (arrow) arrow[0] = arrow[1] = ' ';
    char *save = NULL, *a = strtok_r(p, " \t,", &save), *b = a ? strtok_r(NULL, " \t,", &save) : NULL;
    char *extra = b ? strtok_r(NULL, " \t,", &save) : NULL;
    if (!a) continue; /* blank or comment */
    if (!b || extra) {
      rc = BAD("%s: line %u: one edge 'A B' (or 'A,B', 'A -> B') a line expected", path, i + 1);
      break;
    }
    int u = node_of(a, tab, n), v = node_of(b, tab, n);
    if (u < 0 || v < 0) {
      rc = BAD("%s: line %u, column %u: '%.40s' is no variable (a column name, or an index < %u)", path, i + 1,
               u < 0 ? 1 : 2, u < 0 ? a : b, n);
      break;
    }
    if (u == v) {
      rc = BAD("%s: line %u: %s -> %s is a self-loop: not a DAG", path, i + 1, a, b);
      break;
    }
    /* a cycle closes when u is reachable from v */
    memset(seen, 0, n);
    uint32_t stack[TWINCACHE_MAX_NODES], top = 0;
    stack[top++] = (uint32_t)v;
    seen[v] = 1;
    while (top && !seen[u]) {
      uint32_t x = stack[--top];
      for (uint32_t y = 0; y < n; y++)
        if (adj[(size_t)x * n + y] && !seen[y]) seen[y] = 1, stack[top++] = y;
    }
    if (seen[u]) {
      rc = BAD("%s: line %u: %s -> %s closes a directed cycle: not a DAG", path, i + 1, a, b);
      break;
    }
    adj[(size_t)u * n + v] = 1;
  }
  free(seen);
  free(lines);
  free(buf);
  return rc;
}

/* ---- grouping ------------------------------------------------------------------ */
void tc_dataset_free(twincache_dataset *d) {
  if (!d) return;
  free((void *)d->rows);
  free((void *)d->adj);
  free((void *)d->n_targets);
  free((void *)d->targets);
  free((void *)d->regime_rows);
  memset(d, 0, sizeof *d);
}

/* Where row i says it belongs: its line in the files, for messages. */
static int same_targets(const tc_row_regimes *r, uint32_t a, uint32_t b) {
  return r->n_t[a] == r->n_t[b] &&
         !memcmp(r->t + (size_t)a * TWINCACHE_MAX_TARGETS, r->t + (size_t)b * TWINCACHE_MAX_TARGETS,
                 sizeof(uint16_t) * r->n_t[a]);
}

int tc_dataset_group(const tc_table *tab, const tc_row_regimes *reg, const uint8_t *adj, const char *src,
                     twincache_dataset *d) {
  memset(d, 0, sizeof *d);
  uint32_t m = tab->m, n = tab->n, R = 0;
  int has_t = reg && reg->n_t, has_l = reg && reg->label;
  uint32_t *first = malloc(sizeof(uint32_t) * (TWINCACHE_MAX_INTER + 2)); /* a regime's first row */
  uint32_t *of = malloc(sizeof(uint32_t) * (m ? m : 1));                  /* row -> regime */
  uint32_t count[TWINCACHE_MAX_INTER + 2] = {0};
  int rc = TWINCACHE_OK;
  if (!first || !of) {
    rc = tc_error_set(TWINCACHE_ENOMEM, "%s: out of memory", src);
    goto done;
  }
  for (uint32_t i = 0; i < m; i++) { /* rows into regimes, in order of first appearance */
    uint32_t r = 0;
    for (; r < R; r++) {
      uint32_t f = first[r];
      if (has_l ? reg->label[i] == reg->label[f] : has_t ? same_targets(reg, i, f) : 1) break;
    }
    if (r < R && has_l && has_t && !same_targets(reg, i, first[r])) {
      rc = BAD("%s: line %u: regime %lld's rows name other targets than its first row (line %u): one target set "
               "per regime", reg->targets_file, reg->first_line + i, (long long)reg->label[i],
               reg->first_line + first[r]);
      goto done;
    }
    if (r == R) {
      if (R == TWINCACHE_MAX_INTER + 1) {
        rc = BAD("%s: line %u: a regime beyond the %d a cache's graph holds (1 observational + %d)",
                 has_l ? reg->regime_file : reg->targets_file, reg->first_line + i, TWINCACHE_MAX_INTER + 1,
                 TWINCACHE_MAX_INTER);
        goto done;
      }
      first[R++] = i;
    }
    of[i] = r;
    count[r]++;
  }
  /* order: by label when labelled (the observational one, label 0 or no
   * target, first), else by first appearance with the observational first */
  uint32_t order[TWINCACHE_MAX_INTER + 2], obs = R;
  for (uint32_t r = 0; r < R; r++) {
    order[r] = r;
    uint32_t f = first[r];
    int is_obs = has_l ? reg->label[f] == 0 : has_t ? reg->n_t[f] == 0 : 1;
    if (has_l && has_t && (reg->label[f] == 0) != (reg->n_t[f] == 0)) {
      rc = BAD("%s: line %u: regime %lld with %u targets: regime 0 is the observational one (no target), every "
               "other has targets", reg->targets_file, reg->first_line + f, (long long)reg->label[f], reg->n_t[f]);
      goto done;
    }
    if (is_obs) obs = r;
  }
  if (obs == R) {
    rc = BAD("%s: no observational rows (%s): the base world of a frame is the observational regime", src,
             has_l ? "regime 0" : "rows without a target");
    goto done;
  }
  for (uint32_t a = 1; a < R; a++) /* insertion sort: observational first, then labels ascending */
    for (uint32_t b = a; b > 0; b--) {
      uint32_t x = order[b - 1], y = order[b];
      int swap = y == obs || (x != obs && has_l && reg->label[first[y]] < reg->label[first[x]]);
      if (!swap) break;
      order[b - 1] = y, order[b] = x;
    }
  uint32_t S = 0; /* the most rows a regime holds; each keeps its own count (FORMAT.md 3.10) */
  for (uint32_t r = 0; r < R; r++) {
    if (count[r] > TWINCACHE_MAX_SAMPLES) {
      rc = BAD("%s: line %u: this row's regime holds %u rows, at most %d",
               has_l ? reg->regime_file : has_t ? reg->targets_file : src, (reg ? reg->first_line : 1) + first[r],
               count[r], TWINCACHE_MAX_SAMPLES);
      goto done;
    }
    if (count[r] > S) S = count[r];
  }
  float *rows = calloc((size_t)R * S * n, sizeof(float));
  uint32_t *held = malloc(sizeof(uint32_t) * R);
  d->regime_rows = held;
  uint8_t *nt = has_t ? calloc(R, 1) : NULL;
  uint16_t *t = has_t ? calloc((size_t)R * TWINCACHE_MAX_TARGETS, sizeof *t) : NULL;
  uint8_t *a2 = adj ? malloc((size_t)n * n) : NULL;
  d->rows = rows, d->n_targets = nt, d->targets = t, d->adj = a2;
  if (!rows || !held || (has_t && (!nt || !t)) || (adj && !a2)) {
    rc = tc_error_set(TWINCACHE_ENOMEM, "%s: out of memory", src);
    goto done;
  }
  if (adj) memcpy(a2, adj, (size_t)n * n);
  uint32_t pos[TWINCACHE_MAX_INTER + 2], rank[TWINCACHE_MAX_INTER + 2];
  for (uint32_t w = 0; w < R; w++) rank[order[w]] = w, pos[w] = 0, held[w] = count[order[w]];
  for (uint32_t i = 0; i < m; i++) { /* rows of each regime in file order */
    uint32_t w = rank[of[i]];
    memcpy(rows + ((size_t)w * S + pos[w]++) * n, tab->v + (size_t)i * n, sizeof(float) * n);
  }
  for (uint32_t w = 0; has_t && w < R; w++) {
    uint32_t f = first[order[w]];
    nt[w] = reg->n_t[f];
    memcpy(t + (size_t)w * TWINCACHE_MAX_TARGETS, reg->t + (size_t)f * TWINCACHE_MAX_TARGETS,
           sizeof(uint16_t) * TWINCACHE_MAX_TARGETS);
  }
  d->n_nodes = n, d->n_rows = S, d->n_regimes = R;
done:
  if (rc != TWINCACHE_OK) tc_dataset_free(d);
  free(first);
  free(of);
  return rc;
}
