/* inspect_export.c — `twincache-inspect export CACHE INDEX --format csv|npy
 * --out PREFIX [--force]`: one graph's worlds as files other tools read.
 *   csv: PREFIX_base.csv (header x0..x{N-1}, then S rows), PREFIX_inter.csv
 *        (header world,sample,x0.., then K*S rows), PREFIX_adj.csv and
 *        PREFIX_weights.csv (header, N rows), PREFIX_interventions.csv
 *        (world,target,kind,value). Floats as "%.9g" (exact float32).
 *   npy: PREFIX_base.npy f4 (S,N), PREFIX_inter.npy f4 (K,S,N), PREFIX_adj.npy
 *        u1 (N,N), PREFIX_weights.npy f4 (N,N), PREFIX_targets.npy u2 (K),
 *        PREFIX_kinds.npy u1 (K), PREFIX_values.npy f4 (K); NPY format 1.0,
 *        little-endian, C order.
 * An existing file is an error unless --force. */
#include "inspect.h"
#include "tc_args.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tc_common.h"

static const char k_help[] =
    "usage: " TC_PROG " export CACHE INDEX --format csv|npy --out PREFIX [--force]\n"
    "Writes graph INDEX's base and intervened samples, adjacency, weights and\n"
    "interventions as files named PREFIX_<part>.<ext>.\n"
    "  --format F  csv or npy (required, no default)\n"
    "                csv: PREFIX_{base,inter,adj,weights,interventions}.csv\n"
    "                npy: PREFIX_{base,inter,adj,weights,targets,kinds,values}.npy\n"
    "  --out P     file name prefix (required, no default)\n"
    "  --force     overwrite existing files (default: refuse)\n"
    "  --help      this text\n";

enum { PART_MAX = 8 };
static const char *const k_csv_parts[] = {"base", "inter", "adj", "weights", "interventions"};
static const char *const k_npy_parts[] = {"base", "inter", "adj", "weights", "targets", "kinds", "values"};

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
  for (uint32_t s = 0; s < g->n_samples; s++) csv_row(o[0].f, g->base + (size_t)s * g->ld, n);
  csv_header(o[1].f, "world,sample", n);
  for (uint32_t k = 0; k < g->n_inter; k++)
    for (uint32_t s = 0; s < g->n_samples; s++) {
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

int tc_cmd_export(int argc, char **argv) {
  const char *format = NULL, *prefix = NULL, *force = NULL;
  const tc_flag flags[] = {{"format", 1, &format}, {"out", 1, &prefix}, {"force", 0, &force}};
  tc_args a;
  int rc = tc_args_begin(argc, argv, flags, 3, k_help, 2, &a);
  if (rc != TC_ARGS_GO) return rc;
  if (!format) return tc_usage_error("export", "missing --format (csv or npy)");
  int npy = !strcmp(format, "npy");
  if (!npy && strcmp(format, "csv") != 0)
    return tc_args_report_value(stderr, TC_PROG " export", "--format", format, "csv or npy");
  if (!prefix || !prefix[0]) return tc_usage_error("export", "missing --out PREFIX");

  const char *const *parts = npy ? k_npy_parts : k_csv_parts;
  int n_parts = npy ? (int)(sizeof k_npy_parts / sizeof *parts) : (int)(sizeof k_csv_parts / sizeof *parts);
  out_file out[PART_MAX];
  memset(out, 0, sizeof out);
  tc_one_graph og;
  int status = tc_one_graph_open("export", a.positional[0], a.positional[1], &og);
  if (status) goto cleanup;
  const twincache_graph *g = og.graph;
  uint64_t index = og.index;
  for (int p = 0; p < n_parts; p++) {
    size_t len = strlen(prefix) + strlen(parts[p]) + 8;
    out[p].path = malloc(len);
    if (!out[p].path) {
      fprintf(stderr, "%s: out of memory\n", TC_PROG);
      status = TC_EXIT_FAIL;
      goto cleanup;
    }
    snprintf(out[p].path, len, "%s_%s.%s", prefix, parts[p], npy ? "npy" : "csv");
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
  if (npy)
    write_npy(out, g);
  else
    write_csv(out, g);
  for (int p = 0; p < n_parts; p++) {
    int bad = ferror(out[p].f);
    if (fclose(out[p].f) != 0) bad = 1;
    out[p].f = NULL;
    if (bad && status == 0) {
      fprintf(stderr, "%s: %s: write failed: %s\n", TC_PROG, out[p].path, strerror(errno));
      status = TC_EXIT_FAIL;
    }
  }
  if (status == 0)
    printf("wrote graph %llu to %s_*.%s (%d files)\n", (unsigned long long)index, prefix,
           npy ? "npy" : "csv", n_parts);

cleanup:
  for (int p = 0; p < PART_MAX; p++) {
    if (out[p].f) fclose(out[p].f);
    free(out[p].path);
  }
  tc_one_graph_close(&og);
  return status;
}
