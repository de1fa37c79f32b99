/* tc_import.h — the readers of twincache-import (read.c): a table of rows
 * from a .npy or CSV file, per-row targets or regime labels, an edge list,
 * grouped into one twincache_dataset. Every refusal is TWINCACHE_EINVAL (or
 * EIO for a file that cannot be read) with one line naming the file, the
 * row (line) and the column. Internal to import/. */
#ifndef TC_IMPORT_H
#define TC_IMPORT_H

#include <stdint.h>

#include "twincache_import.h"

/* A table read from a file: m rows of n float32 values, row-major. */
typedef struct tc_table {
  uint32_t m, n;
  float *v;      /* (m, n) */
  char **names;  /* (n) column names (CSV header; "0".."n-1" for .npy) */
} tc_table;

/* What each row says about its regime: targets (a node set), a regime
 * label, or both. */
typedef struct tc_row_regimes {
  const char *targets_file; /* for messages; NULL when rows carry no targets */
  const char *regime_file;  /* NULL when rows carry no regime label */
  uint32_t first_line;      /* line number of row 0 in those files (1-based) */
  uint8_t *n_t;             /* (m) targets of the row, when targets_file */
  uint16_t *t;              /* (m, TWINCACHE_MAX_TARGETS), sorted ascending */
  int64_t *label;           /* (m) when regime_file */
} tc_row_regimes;

void tc_table_free(tc_table *t);
void tc_row_regimes_free(tc_row_regimes *r);

/* A 2-D .npy file (little-endian f4/f8/i1-i8/u1-u8/b1, C or Fortran order)
 * as a float32 table; values must be finite in float32 (NaN, inf or out of
 * float32's range: refused naming row and column). */
int tc_npy_read(const char *path, tc_table *out);
/* A 2-D .npy adjacency (N, N), entries 0 or 1, acyclic, into adj (N*N). */
int tc_npy_read_dag(const char *path, uint32_t n, uint8_t *adj);

/* A CSV file with a header line: the column named target_col (or, when
 * target_col is NULL, "targets" if present) holds each row's targets
 * (node names or indices separated by ';' or spaces; empty: observational);
 * regime_col (or "regime") its regime label; every other column is a
 * variable, its cells finite numbers. Fills *tab and *reg. */
int tc_csv_read(const char *path, const char *target_col, const char *regime_col, tc_table *tab,
                tc_row_regimes *reg);

/* DCDI's per-row files: intervention<i>.csv (comma-separated node indices
 * per line, empty: observational) and regime<i>.csv (one integer >= 0 per
 * line), either may be NULL; each must have m lines. */
int tc_row_files_read(const char *targets_path, const char *regime_path, uint32_t m, uint32_t n,
                      tc_row_regimes *reg);

/* An edge list (one edge a line: "A B", "A,B" or "A -> B"; A and B column
 * names or indices; '#' starts a comment) over the table's columns, into
 * adj (N*N); refuses a self-loop, an unknown node and the first edge that
 * closes a directed cycle, naming its line. */
int tc_edges_read(const char *path, const tc_table *tab, uint8_t *adj);

/* Groups the table's rows into regimes and fills *d (its arrays allocated,
 * freed by tc_dataset_free): targets known -> one regime per distinct
 * target set (and label, when both are given: they must agree), ordered by
 * label, else by first appearance; labels only -> targets withheld, regime
 * label 0 the observational one. The observational regime must exist; each
 * regime keeps its own row count (d->regime_rows, S the most). src names
 * the files for messages. */
int tc_dataset_group(const tc_table *tab, const tc_row_regimes *reg, const uint8_t *adj, const char *src,
                     twincache_dataset *d);
void tc_dataset_free(twincache_dataset *d);

#endif /* TC_IMPORT_H */
