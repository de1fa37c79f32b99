/* inspect_export.c — `twincache-inspect export CACHE INDEX --format F
 * --out PREFIX|DIR [--dataset I] [--force]`: one graph's worlds as files
 * other tools read.
 *   csv: PREFIX_base.csv (header x0..x{N-1}, then S rows), PREFIX_inter.csv
 *        (header world,sample,x0.., then K*S rows), PREFIX_adj.csv and
 *        PREFIX_weights.csv (header, N rows), PREFIX_interventions.csv
 *        (world,target,kind,value). Floats as "%.9g" (exact float32).
 *   npy: PREFIX_base.npy f4 (S,N), PREFIX_inter.npy f4 (K,S,N), PREFIX_adj.npy
 *        u1 (N,N), PREFIX_weights.npy f4 (N,N), PREFIX_targets.npy u2 (K),
 *        PREFIX_kinds.npy u1 (K), PREFIX_values.npy f4 (K); NPY format 1.0,
 *        little-endian, C order.
 *   dcdi: the file layout of DCDI's data loader (Brouillard et al. 2020,
 *        dcdi/data.py, DataManagerFile) in directory DIR, I = --dataset:
 *        DIR/DAG{I}.npy u1 (N,N), 1 at [i][j] for an edge i -> j;
 *        DIR/data{I}.npy f4 (S,N), the observational rows (base world);
 *        DIR/data_interv{I}.npy f4 ((1+K)*S, N): the S base rows first,
 *        then world k's S rows for k = 0..K-1;
 *        DIR/intervention{I}.csv: one line per row of data_interv, the
 *        0-based target of the row's world, empty for observational rows;
 *        DIR/regime{I}.csv: one line per row, 0 for observational rows and
 *        k+1 for world k (DCDI: regime 0 is the observational one).
 *   causica: causica's dataset directory (causica/datasets/
 *        causica_dataset_format.py): DIR/variables.json (one continuous
 *        variable x{j} per node, group_name = name), DIR/train.csv (the S
 *        base rows, no header), DIR/adj_matrix.csv (N rows of 0/1, i -> j
 *        at row i column j), DIR/counterfactuals.json: per do() world one
 *        environment with the base rows as conditioning_values and the twin
 *        rows as test_data (the twin worlds are counterfactuals of the base
 *        rows: the same exogenous noise). Shift, noise and soft worlds are left
 *        out: their target column has no single intervention value, which
 *        causica's loader requires.
 * Rows per world (FORMAT.md 3.10): a graph whose worlds hold fewer rows
 * than S exports exactly the rows each holds (csv: r_0 base rows, r_k rows
 * of world k; dcdi: r_0 observational rows, then each world's r_k; causica:
 * r_0 train rows, each world against the base rows both hold), except npy,
 * whose arrays keep (S, N) and (K, S, N) with zero rows past a count and
 * gain PREFIX_rows.npy u4 (K+1): the counts, base first. A graph without
 * counts exports as before, byte for byte.
 * An existing file is an error unless --force. A graph of an SCM-only cache
 * has no stored worlds: export refuses it (exit 1) and points to
 * `show --fresh-rows`. */
#include "inspect.h"
#include "tc_args.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tc_common.h"

static const char k_help[] =
    "usage: " TC_PROG " export CACHE INDEX --format csv|npy|dcdi|causica --out PREFIX|DIR\n"
    "       [--dataset I] [--force]\n"
    "Writes graph INDEX's base and intervened samples, adjacency, weights and\n"
    "interventions as files other tools read. An SCM-only cache stores no\n"
    "samples: export refuses it (exit 1); show --fresh-rows S samples worlds.\n"
    "Worlds that hold fewer rows than S (twincache-gen --inter-samples) export\n"
    "the rows each holds; npy keeps zero-padded arrays and adds PREFIX_rows.npy.\n"
    "  --format F  one of (required, no default):\n"
    "                csv: PREFIX_{base,inter,adj,weights,interventions}.csv\n"
    "                npy: PREFIX_{base,inter,adj,weights,targets,kinds,values}.npy\n"
    "                dcdi: DCDI's layout in directory DIR: DAG{I}.npy, data{I}.npy\n"
    "                  (observational), data_interv{I}.npy (observational rows\n"
    "                  first, then each world's), intervention{I}.csv (0-based\n"
    "                  target per row, empty when observational), regime{I}.csv\n"
    "                  (0 observational, k+1 for world k)\n"
    "                causica: causica's layout in directory DIR: variables.json,\n"
    "                  train.csv (base rows), adj_matrix.csv, counterfactuals.json\n"
    "                  (each do() world against the base rows; other kinds left out)\n"
    "  --out P     file name prefix (csv, npy) or directory, created when\n"
    "              missing (dcdi, causica) (required, no default)\n"
    "  --dataset I dcdi only: the number in the file names, DCDI's i_dataset,\n"
    "              1..999999 (default 1)\n"
    "  --force     overwrite existing files (default: refuse)\n"
    "  --help      this text\n";

enum { FMT_CSV, FMT_NPY, FMT_DCDI, FMT_CAUSICA, FMT_COUNT };
static const char *const k_formats[FMT_COUNT] = {"csv", "npy", "dcdi", "causica"};
enum { PART_MAX = 8 };
static const char *const k_csv_parts[] = {"base", "inter", "adj", "weights", "interventions", NULL};
static const char *const k_npy_parts[] = {"base", "inter", "adj", "weights", "targets", "kinds", "values", NULL};
static const char *const k_npy_rows_parts[] = {"base",  "inter",  "adj",  "weights", "targets",
                                               "kinds", "values", "rows", NULL};

/* file names in DIR; %u is --dataset */
static const char *const k_dcdi_parts[] = {"DAG%u.npy", "data%u.npy", "data_interv%u.npy",
                                           "intervention%u.csv", "regime%u.csv", NULL};
static const char *const k_causica_parts[] = {"variables.json", "train.csv", "adj_matrix.csv",
                                              "counterfactuals.json", NULL};

typedef struct out_file {
  char *path;
  FILE *f;
} out_file;

/* ---- NPY ------------------------------------------------------------------------
 * Format 1.0: "\x93NUMPY", 1, 0, uint16 LE header length, then a Python dict
 * literal padded with spaces and ended by '\n' so the data starts at a
 * multiple of 64 bytes. */
static void npy_header(FILE *f, const char *descr, const uint64_t *shape, int ndim) {
  char dict[256];
  int len = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
  /* Python tuple syntax as numpy writes it: (S, N) but (K,) */
  for (int i = 0; i < ndim; i++)
    len += snprintf(dict + len, sizeof dict - (size_t)len, "%s%llu", i ? ", " : "",
                    (unsigned long long)shape[i]);
  if (ndim == 1) dict[len++] = ',';
  len += snprintf(dict + len, sizeof dict - (size_t)len, "), }");
  size_t total = 10 + (size_t)len + 1;
  size_t padded = (total + 63) / 64 * 64;
  uint8_t pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0};
  tc_store_u16(pre + 8, (uint16_t)(padded - 10));
  fwrite(pre, 1, sizeof pre, f);
  fwrite(dict, 1, (size_t)len, f);
  for (size_t i = total; i < padded; i++) fputc(' ', f);
  fputc('\n', f);
}

/* rows x cols floats with leading dimension ld, little-endian */
static void npy_floats(FILE *f, const float *m, uint32_t rows, uint32_t cols, uint32_t ld) {
  for (uint32_t r = 0; r < rows; r++)
    for (uint32_t j = 0; j < cols; j++) {
      uint32_t bits;
      uint8_t le[4];
      memcpy(&bits, &m[(size_t)r * ld + j], sizeof bits);
      tc_store_u32(le, bits);
      fwrite(le, 1, 4, f);
    }
}

static void write_npy(out_file *o, const twincache_graph *g) {
  uint64_t n = g->n_nodes, s_n = g->n_samples, k_n = g->n_inter;
  uint64_t shape[3];
  shape[0] = s_n, shape[1] = n;
  npy_header(o[0].f, "<f4", shape, 2);
  npy_floats(o[0].f, g->base, g->n_samples, g->n_nodes, g->ld);
  shape[0] = k_n, shape[1] = s_n, shape[2] = n;
  npy_header(o[1].f, "<f4", shape, 3);
  npy_floats(o[1].f, g->inter, g->n_inter * g->n_samples, g->n_nodes, g->ld);
  shape[0] = n, shape[1] = n;
  npy_header(o[2].f, "|u1", shape, 2);
  for (uint32_t i = 0; i < g->n_nodes; i++)
    for (uint32_t j = 0; j < g->n_nodes; j++) fputc(g->adj[(size_t)i * g->ld_adj + j] ? 1 : 0, o[2].f);
  npy_header(o[3].f, "<f4", shape, 2);
  npy_floats(o[3].f, g->weight, g->n_nodes, g->n_nodes, g->ld_adj);
  shape[0] = k_n;
  npy_header(o[4].f, "<u2", shape, 1);
  for (uint32_t k = 0; k < g->n_inter; k++) {
    uint8_t le[2];
    tc_store_u16(le, g->target[k]);
    fwrite(le, 1, 2, o[4].f);
  }
  npy_header(o[5].f, "|u1", shape, 1);
  fwrite(g->kind, 1, g->n_inter, o[5].f);
  npy_header(o[6].f, "<f4", shape, 1);
  npy_floats(o[6].f, g->value, 1, g->n_inter, g->n_inter);
  if (!(g->flags & TWINCACHE_GRAPH_ROWS)) return;
  shape[0] = k_n + 1; /* PREFIX_rows.npy: the counts, base first */
  npy_header(o[7].f, "<u4", shape, 1);
  for (uint32_t w = 0; w <= g->n_inter; w++) {
    uint8_t le[4];
    tc_store_u32(le, tc_world_rows(g, w));
    fwrite(le, 1, 4, o[7].f);
  }
}

/* ---- CSV --------------------------------------------------------------------------- */
static void csv_header(FILE *f, const char *lead, uint32_t n) {
  fputs(lead, f);
  for (uint32_t j = 0; j < n; j++) fprintf(f, "%sx%u", j || lead[0] ? "," : "", j);
  fputc('\n', f);
}

static void csv_row(FILE *f, const float *row, uint32_t n) {
  for (uint32_t j = 0; j < n; j++) fprintf(f, "%s%.9g", j ? "," : "", (double)row[j]);
  fputc('\n', f);
}

static void write_csv(out_file *o, const twincache_graph *g) {
  uint32_t n = g->n_nodes;
  csv_header(o[0].f, "", n);
  for (uint32_t s = 0; s < tc_world_rows(g, 0); s++) csv_row(o[0].f, g->base + (size_t)s * g->ld, n);
  csv_header(o[1].f, "world,sample", n);
  for (uint32_t k = 0; k < g->n_inter; k++)
    for (uint32_t s = 0; s < tc_world_rows(g, k + 1); s++) {
      fprintf(o[1].f, "%u,%u,", k, s);
      csv_row(o[1].f, g->inter + ((size_t)k * g->n_samples + s) * g->ld, n);
    }
  csv_header(o[2].f, "", n);
  for (uint32_t i = 0; i < n; i++) {
    for (uint32_t j = 0; j < n; j++) fprintf(o[2].f, "%s%u", j ? "," : "", g->adj[(size_t)i * g->ld_adj + j] ? 1u : 0u);
    fputc('\n', o[2].f);
  }
  csv_header(o[3].f, "", n);
  for (uint32_t i = 0; i < n; i++) csv_row(o[3].f, g->weight + (size_t)i * g->ld_adj, n);
  fputs("world,target,kind,value\n", o[4].f);
  for (uint32_t k = 0; k < g->n_inter; k++)
    fprintf(o[4].f, "%u,%u,%s,%.9g\n", k, (unsigned)g->target[k], tc_kind_name(g->kind[k]),
            (double)g->value[k]);
}

/* ---- DCDI ------------------------------------------------------------------------- */
static void write_dcdi(out_file *o, const twincache_graph *g) {
  uint64_t n = g->n_nodes, s_n = tc_world_rows(g, 0), all = s_n;
  for (uint32_t k = 0; k < g->n_inter; k++) all += tc_world_rows(g, k + 1);
  uint64_t shape[2] = {n, n};
  npy_header(o[0].f, "|u1", shape, 2);
  for (uint32_t i = 0; i < g->n_nodes; i++)
    for (uint32_t j = 0; j < g->n_nodes; j++) fputc(g->adj[(size_t)i * g->ld_adj + j] ? 1 : 0, o[0].f);
  shape[0] = s_n;
  npy_header(o[1].f, "<f4", shape, 2);
  npy_floats(o[1].f, g->base, (uint32_t)s_n, g->n_nodes, g->ld);
  shape[0] = all; /* base rows, then world 0's, world 1's, ... (each the rows it holds) */
  npy_header(o[2].f, "<f4", shape, 2);
  npy_floats(o[2].f, g->base, (uint32_t)s_n, g->n_nodes, g->ld);
  for (uint32_t k = 0; k < g->n_inter; k++)
    npy_floats(o[2].f, g->inter + (size_t)k * g->n_samples * g->ld, tc_world_rows(g, k + 1), g->n_nodes, g->ld);
  for (uint32_t s = 0; s < s_n; s++) {
    fputc('\n', o[3].f); /* observational: no target */
    fputs("0\n", o[4].f);
  }
  for (uint32_t k = 0; k < g->n_inter; k++) /* DCDI's csv row: every target of the world */
    for (uint32_t s = 0; s < tc_world_rows(g, k + 1); s++) {
      fprintf(o[3].f, "%u", (unsigned)g->target[k]);
      for (uint32_t i = 1; g->n_targets && i < g->n_targets[k]; i++)
        fprintf(o[3].f, ",%u", (unsigned)g->more_target[(size_t)k * (TWINCACHE_MAX_TARGETS - 1) + i - 1]);
      fputc('\n', o[3].f);
      fprintf(o[4].f, "%u\n", k + 1);
    }
}

/* ---- causica ---------------------------------------------------------------------- */
/* rows x n floats (leading dimension ld) as a JSON array of arrays */
static void json_rows(FILE *f, const float *m, uint32_t rows, uint32_t n, uint32_t ld) {
  fputc('[', f);
  for (uint32_t r = 0; r < rows; r++) {
    fputs(r ? ", [" : "[", f);
    for (uint32_t j = 0; j < n; j++) fprintf(f, "%s%.9g", j ? ", " : "", (double)m[(size_t)r * ld + j]);
    fputc(']', f);
  }
  fputc(']', f);
}

/* Returns the number of do() worlds written as counterfactuals. */
static uint32_t write_causica(out_file *o, const twincache_graph *g) {
  uint32_t n = g->n_nodes, written = 0;
  fputs("{\"variables\": [", o[0].f);
  for (uint32_t j = 0; j < n; j++)
    fprintf(o[0].f, "%s\n  {\"group_name\": \"x%u\", \"name\": \"x%u\", \"type\": \"continuous\", "
            "\"always_observed\": true}", j ? "," : "", j, j);
  fputs("\n]}\n", o[0].f);
  for (uint32_t s = 0; s < tc_world_rows(g, 0); s++) {
    const float *row = g->base + (size_t)s * g->ld;
    for (uint32_t j = 0; j < n; j++) fprintf(o[1].f, "%s%.9g", j ? "," : "", (double)row[j]);
    fputc('\n', o[1].f);
  }
  for (uint32_t i = 0; i < n; i++) {
    for (uint32_t j = 0; j < n; j++) fprintf(o[2].f, "%s%u", j ? "," : "", g->adj[(size_t)i * g->ld_adj + j] ? 1u : 0u);
    fputc('\n', o[2].f);
  }
  fputs("{\"metadata\": {\"columns_to_nodes\": [", o[3].f);
  for (uint32_t j = 0; j < n; j++) fprintf(o[3].f, "%s%u", j ? ", " : "", j);
  fputs("]},\n \"environments\": [", o[3].f);
  for (uint32_t k = 0; k < g->n_inter; k++) {
    if (g->kind[k] != TWINCACHE_DO) continue;
    fprintf(o[3].f, "%s\n  {\"intervention_idxs\": [%u", written ? "," : "", (unsigned)g->target[k]);
    for (uint32_t i = 1; g->n_targets && i < g->n_targets[k]; i++)
      fprintf(o[3].f, ", %u", (unsigned)g->more_target[(size_t)k * (TWINCACHE_MAX_TARGETS - 1) + i - 1]);
    fputs("], \"conditioning_idxs\": null, \"effect_idxs\": [],\n   \"conditioning_values\": ", o[3].f);
    uint32_t pairs = tc_world_rows(g, 0) < tc_world_rows(g, k + 1) ? tc_world_rows(g, 0) : tc_world_rows(g, k + 1); /* rows both hold */
    json_rows(o[3].f, g->base, pairs, n, g->ld);
    fputs(",\n   \"test_data\": ", o[3].f);
    json_rows(o[3].f, g->inter + (size_t)k * g->n_samples * g->ld, pairs, n, g->ld);
    fputs(",\n   \"reference_data\": null}", o[3].f);
    written++;
  }
  fputs("\n]}\n", o[3].f);
  return written;
}

int tc_cmd_export(int argc, char **argv) {
  const char *format = NULL, *prefix = NULL, *force = NULL, *dataset = NULL;
  const tc_flag flags[] = {{"format", 1, &format}, {"out", 1, &prefix}, {"force", 0, &force},
                           {"dataset", 1, &dataset}};
  tc_args a;
  int rc = tc_args_begin(argc, argv, flags, 4, k_help, 2, &a);
  if (rc != TC_ARGS_GO) return rc;
  if (!format) return tc_usage_error("export", "missing --format (csv, npy, dcdi or causica)");
  int fmt = 0;
  while (fmt < FMT_COUNT && strcmp(format, k_formats[fmt]) != 0) fmt++;
  if (fmt == FMT_COUNT)
    return tc_args_report_value(stderr, TC_PROG " export", "--format", format, "csv, npy, dcdi or causica");
  if (!prefix || !prefix[0]) return tc_usage_error("export", "missing --out %s", fmt >= FMT_DCDI ? "DIR" : "PREFIX");
  uint64_t dataset_i = 1;
  if (dataset && fmt != FMT_DCDI) return tc_usage_error("export", "--dataset applies to --format dcdi only");
  if (dataset && (tc_parse_u64(dataset, &dataset_i) != 0 || dataset_i < 1 || dataset_i > 999999))
    return tc_args_report_value(stderr, TC_PROG " export", "--dataset", dataset, "an integer in [1, 999999]");

  static const char *const *const k_parts[FMT_COUNT] = {k_csv_parts, k_npy_parts, k_dcdi_parts, k_causica_parts};
  const char *const *parts = k_parts[fmt];
  int n_parts = 0;
  out_file out[PART_MAX];
  memset(out, 0, sizeof out);
  tc_one_graph og;
  int status = tc_one_graph_open("export", a.positional[0], a.positional[1], &og);
  if (status) goto cleanup;
  const twincache_graph *g = og.graph;
  if (fmt == FMT_NPY && (g->flags & TWINCACHE_GRAPH_ROWS)) parts = k_npy_rows_parts; /* + the counts */
  while (parts[n_parts]) n_parts++;
  uint64_t index = og.index;
  if (g->n_samples == 0) { /* nothing would be written but empty datasets */
    fprintf(stderr, "%s: %s: graph %llu has no stored samples (an SCM-only cache): nothing to export; "
            "`%s show %s %llu --fresh-rows S` samples fresh worlds from its SCM\n", TC_PROG, a.positional[0],
            (unsigned long long)index, TC_PROG, a.positional[0], (unsigned long long)index);
    status = TC_EXIT_FAIL;
    goto cleanup;
  }
  if (fmt == FMT_DCDI && (g->flags & (TWINCACHE_GRAPH_NO_DAG | TWINCACHE_GRAPH_NO_TARGETS))) {
    /* DCDI's layout has a DAG file and per-row targets: all zero would say "no edge" / "observational" */
    fprintf(stderr, "%s: %s: graph %llu holds observed data whose %s (FORMAT.md 3.11): DCDI's layout cannot "
            "say so; export --format csv or npy\n", TC_PROG, a.positional[0], (unsigned long long)index,
            g->flags & TWINCACHE_GRAPH_NO_DAG ? "graph is unknown" : "targets are withheld");
    status = TC_EXIT_FAIL;
    goto cleanup;
  }
  for (int p = 0; p < n_parts; p++) {
    size_t len = strlen(prefix) + strlen(parts[p]) + 16;
    out[p].path = malloc(len);
    if (!out[p].path) {
      fprintf(stderr, "%s: out of memory\n", TC_PROG);
      status = TC_EXIT_FAIL;
      goto cleanup;
    }
    if (fmt == FMT_DCDI) {
      int w = snprintf(out[p].path, len, "%s/", prefix);
      snprintf(out[p].path + w, len - (size_t)w, parts[p], (unsigned)dataset_i);
    } else if (fmt == FMT_CAUSICA) {
      snprintf(out[p].path, len, "%s/%s", prefix, parts[p]);
    } else {
      snprintf(out[p].path, len, "%s_%s.%s", prefix, parts[p], k_formats[fmt]);
    }
  }
  /* the directory formats: DIR is created when missing */
  if (fmt >= FMT_DCDI && mkdir(prefix, 0755) != 0 && errno != EEXIST) {
    fprintf(stderr, "%s: --out: cannot create directory %s: %s\n", TC_PROG, prefix, strerror(errno));
    status = TC_EXIT_FAIL;
    goto cleanup;
  }

  /* Refuse before writing anything, so a refusal leaves no partial export. */
  for (int p = 0; p < n_parts && !force; p++)
    if (access(out[p].path, F_OK) == 0) {
      fprintf(stderr, "%s: %s exists (use --force to overwrite)\n", TC_PROG, out[p].path);
      status = TC_EXIT_FAIL;
      goto cleanup;
    }
  for (int p = 0; p < n_parts; p++) {
    out[p].f = fopen(out[p].path, force ? "wb" : "wbx");
    if (!out[p].f) {
      fprintf(stderr, "%s: %s: %s\n", TC_PROG, out[p].path, strerror(errno));
      status = TC_EXIT_FAIL;
      goto cleanup;
    }
  }
  uint32_t do_worlds = 0;
  switch (fmt) {
  case FMT_CSV: write_csv(out, g); break;
  case FMT_NPY: write_npy(out, g); break;
  case FMT_DCDI: write_dcdi(out, g); break;
  default: do_worlds = write_causica(out, g); break;
  }
  for (int p = 0; p < n_parts; p++) {
    int bad = ferror(out[p].f);
    if (fclose(out[p].f) != 0) bad = 1;
    out[p].f = NULL;
    if (bad && status == 0) {
      fprintf(stderr, "%s: %s: write failed: %s\n", TC_PROG, out[p].path, strerror(errno));
      status = TC_EXIT_FAIL;
    }
  }
  if (status == 0) {
    if (fmt >= FMT_DCDI)
      printf("wrote graph %llu to %s/ in %s's layout (%d files)", (unsigned long long)index, prefix,
             k_formats[fmt], n_parts);
    else
      printf("wrote graph %llu to %s_*.%s (%d files)", (unsigned long long)index, prefix, k_formats[fmt], n_parts);
    if (fmt == FMT_CAUSICA)
      printf("; %u of %u worlds as counterfactuals (worlds of other kinds left out)", do_worlds, g->n_inter);
    printf("\n");
  }

cleanup:
  for (int p = 0; p < PART_MAX; p++) {
    if (out[p].f) fclose(out[p].f);
    free(out[p].path);
  }
  tc_one_graph_close(&og);
  return status;
}
