/* twincache-import — a cache of observed data (FORMAT.md 3.11) from a DCDI
 * folder, a CSV with a targets or regime column, or a .npy with per-row
 * files; thin over read.c and twincache_import_write. Exit 0 on success,
 * 1 when the input or the write is refused (one line naming the file, row
 * and column), 2 on a usage error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_args.h"
#include "tc_import.h"

#define PROG "twincache-import"

static const char usage[] =
    "usage: twincache-import dcdi DIR --out CACHE [--dataset I]\n"
    "       twincache-import csv FILE --out CACHE [--targets-column C] [--regime-column C] [--graph EDGES]\n"
    "       twincache-import npy DATA.npy --out CACHE [--targets FILE] [--regimes FILE] [--graph EDGES | --dag DAG.npy]\n"
    "\n"
    "Writes one dataset (rows, regimes, the graph if known) as a new twincache cache of\n"
    "observed data (FORMAT.md 3.11: no SCM; the loader reads it stored, fresh mode refuses it).\n"
    "The cache is written beside CACHE and renamed to it once complete; CACHE must not exist.\n"
    "\n"
    "  dcdi: DCDI's layout (dcdi/data.py, twincache-inspect export --format dcdi):\n"
    "        DAG<I>.npy (N, N) 0/1, data_interv<I>.npy (rows, N), intervention<I>.csv (per row\n"
    "        its targets, comma-separated node indices; empty: observational), regime<I>.csv\n"
    "        (per row its regime number; 0 observational), I the one dataset there or --dataset.\n"
    "  csv:  a header line of column names; the column 'targets' (or --targets-column) holds each\n"
    "        row's targets (names or indices separated by ';' or spaces, empty: observational),\n"
    "        'regime' (or --regime-column) its regime number; every other column is a variable.\n"
    "  npy:  a 2-D .npy of rows; --targets/--regimes files as DCDI's intervention/regime files.\n"
    "\n"
    "Regimes: one per regime number, or per distinct target set when rows carry targets only;\n"
    "with regime numbers only the targets are withheld (regime 0 observational). Without a\n"
    "graph the cache says the graph is unknown. Each regime keeps its own row count (FORMAT.md\n"
    "3.10; batches carry the counts as `rows`).\n"
    "Edge lists (--graph): one edge a line, 'A B', 'A,B' or 'A -> B' (names or indices), '#' comments.\n"
    "\n";

/* s as a JSON string (quotes, backslashes and control bytes escaped) into out. */
static void json_str(char *out, size_t cap, const char *s) {
  size_t o = 0;
  if (cap < 3) return;
  out[o++] = '"';
  for (; *s && o + 8 < cap; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') o += (size_t)snprintf(out + o, cap - o, "\\%c", c);
    else if (c < 0x20) o += (size_t)snprintf(out + o, cap - o, "\\u%04x", c);
    else out[o++] = (char)c;
  }
  out[o++] = '"';
  out[o] = '\0';
}

static const char *base_name(const char *p) {
  const char *s = strrchr(p, '/');
  return s ? s + 1 : p;
}

static int fail(void) {
  fprintf(stderr, PROG ": %s\n", twincache_last_error());
  return 1;
}

int main(int argc, char **argv) {
  const char *out = NULL, *tcol = NULL, *rcol = NULL, *graph = NULL, *dag = NULL, *targets = NULL, *regimes = NULL;
  uint32_t dataset = UINT32_MAX;
  tc_opt opts[] = {
      {.name = "--out", .meta = "CACHE", .kind = TC_OPT_STRING, .dst = &out, .help = "the new cache"},
      {.name = "--dataset", .meta = "I", .kind = TC_OPT_U32, .dst = &dataset, .lo = 0, .hi = 1000000000,
       .help = "dcdi: the dataset number I of DAG<I>.npy", .def = "the one there"},
      {.name = "--targets-column", .meta = "C", .kind = TC_OPT_STRING, .dst = &tcol, .help = "csv: targets column"},
      {.name = "--regime-column", .meta = "C", .kind = TC_OPT_STRING, .dst = &rcol, .help = "csv: regime column"},
      {.name = "--graph", .meta = "EDGES", .kind = TC_OPT_STRING, .dst = &graph, .help = "csv, npy: an edge list"},
      {.name = "--dag", .meta = "DAG.npy", .kind = TC_OPT_STRING, .dst = &dag, .help = "npy: an (N, N) 0/1 .npy"},
      {.name = "--targets", .meta = "FILE", .kind = TC_OPT_STRING, .dst = &targets, .help = "npy: per-row targets"},
      {.name = "--regimes", .meta = "FILE", .kind = TC_OPT_STRING, .dst = &regimes, .help = "npy: per-row regimes"},
  };
  const size_t n_opts = sizeof opts / sizeof opts[0];
  const char *pos[2];
  int n_pos = 0;
  tc_args_error e;
  tc_args_status st = tc_args_parse_pos(argc, argv, opts, n_opts, pos, 2, &n_pos, &e);
  if (st == TC_ARGS_HELP) {
    fputs(usage, stdout);
    tc_args_help(stdout, opts, n_opts, 28);
    return 0;
  }
  if (st != TC_ARGS_OK) return tc_args_report(stderr, PROG, &e);
  if (n_pos != 2 || (strcmp(pos[0], "dcdi") && strcmp(pos[0], "csv") && strcmp(pos[0], "npy"))) {
    fprintf(stderr, PROG ": expected a source kind (dcdi, csv or npy) and its path (see --help)\n");
    return 2;
  }
  if (!out) {
    fprintf(stderr, PROG ": --out CACHE is required (see --help)\n");
    return 2;
  }
  const char *kind = pos[0], *src = pos[1];
  int is_dcdi = !strcmp(kind, "dcdi"), is_csv = !strcmp(kind, "csv");
  if ((!is_csv && (tcol || rcol)) || (is_dcdi && (graph || dag || targets || regimes)) ||
      (!is_dcdi && dataset != UINT32_MAX) || (is_csv && (dag || targets || regimes)) || (graph && dag)) {
    fprintf(stderr, PROG ": %s: a flag of another source kind, or both --graph and --dag (see --help)\n", kind);
    return 2;
  }
  if (is_csv) { /* one column cannot be both (the reader would count it twice) */
    const char *tname = tcol ? tcol : "targets", *rname = rcol ? rcol : "regime";
    if (!strcmp(tname, rname)) {
      if (tcol && rcol)
        fprintf(stderr, PROG ": --targets-column and --regime-column both name column '%s': name two different columns\n",
                tcol);
      else
        fprintf(stderr, PROG ": %s names column '%s', the %s column's default: name the %s column with %s\n",
                tcol ? "--targets-column" : "--regime-column", tname, tcol ? "regime" : "targets",
                tcol ? "regime" : "targets", tcol ? "--regime-column" : "--targets-column");
      return 2;
    }
  }
  tc_table tab = {0};
  tc_row_regimes reg = {0};
  twincache_dataset d = {0};
  uint8_t *adj = NULL;
  char source[4096], paths[4][4096], q[4][600];
  int rc = TWINCACHE_OK;
  if (is_dcdi) {
    if (dataset == UINT32_MAX) { /* the one DAG<I>.npy of the folder */
      char probe[4096];
      uint32_t found = 0, hits = 0;
      for (uint32_t i = 0; i < 1000 && hits < 2; i++) {
        snprintf(probe, sizeof probe, "%s/DAG%u.npy", src, i);
        FILE *f = fopen(probe, "rb");
        if (f) fclose(f), found = i, hits++;
      }
      if (hits != 1) {
        fprintf(stderr, PROG ": %s: %s DAG<I>.npy (I < 1000): %s\n", src, hits ? "several" : "no",
                hits ? "name one with --dataset" : "not a DCDI folder");
        return 1;
      }
      dataset = found;
    }
    snprintf(paths[0], sizeof paths[0], "%s/data_interv%u.npy", src, dataset);
    snprintf(paths[1], sizeof paths[1], "%s/DAG%u.npy", src, dataset);
    snprintf(paths[2], sizeof paths[2], "%s/intervention%u.csv", src, dataset);
    snprintf(paths[3], sizeof paths[3], "%s/regime%u.csv", src, dataset);
    if ((rc = tc_npy_read(paths[0], &tab)) != TWINCACHE_OK) return fail();
    if (!(adj = malloc((size_t)tab.n * tab.n))) return fail();
    FILE *f = fopen(paths[3], "rb");
    if (f) fclose(f);
    if ((rc = tc_npy_read_dag(paths[1], tab.n, adj)) != TWINCACHE_OK ||
        (rc = tc_row_files_read(paths[2], f ? paths[3] : NULL, tab.m, tab.n, &reg)) != TWINCACHE_OK)
      goto done;
    for (int i = 0; i < 4; i++) json_str(q[i], sizeof q[i], base_name(paths[i]));
    snprintf(source, sizeof source, "{\"from\":\"dcdi\",\"dataset\":%u,\"files\":[%s,%s,%s%s%s]}", dataset, q[0], q[1],
             q[2], f ? "," : "", f ? q[3] : "");
  } else {
    rc = is_csv ? tc_csv_read(src, tcol, rcol, &tab, &reg) : tc_npy_read(src, &tab);
    if (rc != TWINCACHE_OK) goto done;
    if (!is_csv && (targets || regimes) &&
        (rc = tc_row_files_read(targets, regimes, tab.m, tab.n, &reg)) != TWINCACHE_OK)
      goto done;
    if (graph || dag) {
      if (!(adj = malloc((size_t)tab.n * tab.n))) {
        rc = TWINCACHE_ENOMEM;
        goto done;
      }
      rc = graph ? tc_edges_read(graph, &tab, adj) : tc_npy_read_dag(dag, tab.n, adj);
      if (rc != TWINCACHE_OK) goto done;
    }
    json_str(q[0], sizeof q[0], base_name(src));
    json_str(q[1], sizeof q[1], graph ? base_name(graph) : dag ? base_name(dag) : "");
    snprintf(source, sizeof source, "{\"from\":\"%s\",\"file\":%s%s%s}", kind, q[0], graph || dag ? ",\"graph\":" : "",
             graph || dag ? q[1] : "");
  }
  if ((rc = tc_dataset_group(&tab, &reg, adj, src, &d)) != TWINCACHE_OK) goto done;
  if ((rc = twincache_import_write(out, &d, 1, source)) != TWINCACHE_OK) goto done;
  printf("%s: %u variables, %u regimes of %u rows, graph %s, targets %s\n", out, d.n_nodes, d.n_regimes, d.n_rows,
         d.adj ? "known" : "unknown", d.n_targets ? "known" : "withheld");
done:
  tc_dataset_free(&d);
  tc_row_regimes_free(&reg);
  tc_table_free(&tab);
  free(adj);
  return rc == TWINCACHE_OK ? 0 : fail();
}
