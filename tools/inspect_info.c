/* inspect_info.c — `twincache-inspect info CACHE [--json]`: what a cache is
 * (config, dims, counts), what it costs (bytes on disk, compression against
 * raw float32) and what its graphs look like (node and edge histograms, from
 * decoding every graph: decoding is fast enough to do them all). */
#include "inspect.h"

#include <stdlib.h>
#include <string.h>

static const char k_help[] =
    "usage: " TC_PROG " info CACHE [--json]\n"
    "Prints the writer's library version, generator config, graphs\n"
    "committed/requested, chunk size, bytes on disk, compression ratios against\n"
    "raw float32 samples, mean nodes/edges, node/edge-count and graph-family\n"
    "histograms, var- and R2-sortability of the base worlds.\n"
    "  --json   one JSON object instead of text (default: text)\n"
    "  --help   this text\n";

#define HIST_MAX_BINS 32

typedef struct hist_bin {
  uint64_t lo, hi, count; /* values lo..hi inclusive */
} hist_bin;

/* Bins counts[0..n) (counts[v] = graphs with value v) over the occupied range:
 * one bin per value when the range is small, else equal-width bins. */
static int hist_bin_counts(const uint64_t *counts, uint64_t n, hist_bin *bins) {
  uint64_t lo = n, hi = 0;
  for (uint64_t v = 0; v < n; v++)
    if (counts[v]) {
      if (lo == n) lo = v;
      hi = v;
    }
  if (lo == n) return 0;
  uint64_t range = hi - lo + 1;
  uint64_t width = (range + HIST_MAX_BINS - 1) / HIST_MAX_BINS;
  int n_bins = 0;
  for (uint64_t b = lo; b <= hi; b += width, n_bins++) {
    bins[n_bins].lo = b;
    bins[n_bins].hi = b + width - 1 < hi ? b + width - 1 : hi;
    bins[n_bins].count = 0;
    for (uint64_t v = b; v <= bins[n_bins].hi; v++) bins[n_bins].count += counts[v];
  }
  return n_bins;
}

static void hist_print_text(const char *title, const hist_bin *bins, int n_bins) {
  uint64_t max = 1;
  for (int i = 0; i < n_bins; i++)
    if (bins[i].count > max) max = bins[i].count;
  printf("%s\n", title);
  if (n_bins == 0) printf("  (no graphs)\n");
  for (int i = 0; i < n_bins; i++) {
    char label[48];
    if (bins[i].lo == bins[i].hi)
      snprintf(label, sizeof label, "%llu", (unsigned long long)bins[i].lo);
    else
      snprintf(label, sizeof label, "%llu-%llu", (unsigned long long)bins[i].lo,
               (unsigned long long)bins[i].hi);
    int bar = (int)((bins[i].count * 40 + max - 1) / max);
    printf("  %11s %8llu ", label, (unsigned long long)bins[i].count);
    for (int k = 0; k < bar; k++) putchar('#');
    putchar('\n');
  }
}

static void hist_print_json(const char *key, const hist_bin *bins, int n_bins) {
  printf("  \"%s\": [", key);
  for (int i = 0; i < n_bins; i++)
    printf("%s{\"lo\": %llu, \"hi\": %llu, \"count\": %llu}", i ? ", " : "",
           (unsigned long long)bins[i].lo, (unsigned long long)bins[i].hi,
           (unsigned long long)bins[i].count);
  printf("]");
}

/* The graph-family histogram: counts[f] graphs of family code f (255: not
 * recorded, caches before format version 4); names from the format's table. */
static void family_print_text(const uint64_t counts[256]) {
  uint64_t max = 1;
  for (int f = 0; f < 256; f++)
    if (counts[f] > max) max = counts[f];
  printf("graph families (family, graphs)\n");
  for (int f = 0; f < 256; f++) {
    if (!counts[f]) continue;
    int bar = (int)((counts[f] * 40 + max - 1) / max);
    printf("  %11s %8llu ", tc_family_name((unsigned)f), (unsigned long long)counts[f]);
    for (int k = 0; k < bar; k++) putchar('#');
    putchar('\n');
  }
}

static void family_print_json(const uint64_t counts[256]) {
  printf("  \"family_histogram\": {");
  int first = 1;
  for (int f = 0; f < 256; f++) {
    if (!counts[f]) continue;
    printf("%s\"%s\": %llu", first ? "" : ", ", tc_family_name((unsigned)f), (unsigned long long)counts[f]);
    first = 0;
  }
  printf("}");
}

/* The cache's worlds as info prints them (twincache_cache_worlds). */
static const char *world_kind(const twincache_cache *c) {
  switch (twincache_cache_worlds(c)) {
  case TWINCACHE_WORLDS_OBSERVED: return "observed"; /* an import, FORMAT.md 3.11 */
  case TWINCACHE_WORLDS_INDEPENDENT: return "independent";
  default: return "twin";
  }
}

static double ratio(uint64_t num, uint64_t den) { return den ? (double)num / (double)den : 0.0; }

static void print_bytes(uint64_t b) {
  if (b >= (1ull << 30))
    printf("%.2f GiB", (double)b / (double)(1ull << 30));
  else if (b >= (1ull << 20))
    printf("%.2f MiB", (double)b / (double)(1ull << 20));
  else if (b >= 1024)
    printf("%.1f KiB", (double)b / 1024.0);
  else
    printf("%llu B", (unsigned long long)b);
}

int tc_cmd_info(int argc, char **argv) {
  const char *json = NULL;
  const tc_flag flags[] = {{"json", 0, &json}};
  tc_args a;
  int rc = tc_args_begin(argc, argv, flags, 1, k_help, 1, &a);
  if (rc != TC_ARGS_GO) return rc;
  const char *path = a.positional[0];

  uint64_t *node_counts = NULL, *edge_counts = NULL, family_counts[256] = {0};
  tc_one_graph og;
  int status = tc_cache_graph_open(path, &og);
  if (status) goto cleanup;
  twincache_cache *c = og.cache;
  twincache_dctx *d = og.dctx;

  const twincache_dims *dims = twincache_cache_dims(c);
  const twincache_stats *st = twincache_cache_stats(c);
  /* a shard opened alone holds graphs [first, first + count) */
  uint64_t first = twincache_cache_first(c), count = twincache_cache_count(c) - first;
  uint32_t shard_index = 0, shard_count = 0;
  uint64_t shard_end = 0;
  int shard = twincache_cache_shard(c, &shard_index, &shard_count, &shard_end);
  uint64_t disk_bytes = twincache_cache_disk_bytes(c);
  uint64_t max_edges = (uint64_t)dims->max_nodes * (dims->max_nodes ? dims->max_nodes - 1 : 0) / 2;
  node_counts = calloc((size_t)dims->max_nodes + 1, sizeof *node_counts);
  edge_counts = calloc((size_t)max_edges + 1, sizeof *edge_counts);
  if (!node_counts || !edge_counts) {
    fprintf(stderr, "%s: %s: out of memory (dims: %u nodes, %u samples, %u interventions)\n",
            TC_PROG, path, dims->max_nodes, dims->samples, dims->max_inter);
    status = TC_EXIT_FAIL;
    goto cleanup;
  }

  /* Decode every graph, skipping the sample copies: only adj is needed. */
  twincache_graph view = *og.graph;
  view.weight = view.mlp = view.noise_scale = view.norm_mean = view.norm_std = NULL;
  view.value = view.inter = NULL; /* base kept: sortability */
  view.target = NULL;
  view.kind = NULL;
  uint64_t errors = 0, first_bad = 0, sum_edges = 0, sum_nodes = 0;
  tc_sortability_sum sort;
  memset(&sort, 0, sizeof sort);
  int first_err = 0;
  for (uint64_t i = first; i < first + count; i++) {
    int r = twincache_cache_read_graph(c, d, i, &view);
    if (r != TWINCACHE_OK || view.n_nodes > dims->max_nodes) {
      if (errors++ == 0) {
        first_bad = i;
        first_err = r != TWINCACHE_OK ? r : TWINCACHE_ECORRUPT;
      }
      continue;
    }
    uint64_t e = tc_graph_edges(&view);
    if (e > max_edges) e = max_edges; /* cannot happen for a DAG */
    node_counts[view.n_nodes]++;
    family_counts[view.family]++;
    tc_sortability_add(&sort, &view); /* a decoded frame is a DAG with a base world */
    edge_counts[e]++;
    sum_nodes += view.n_nodes;
    sum_edges += e;
  }
  uint64_t good = count - errors;
  hist_bin node_bins[HIST_MAX_BINS + 1], edge_bins[HIST_MAX_BINS + 1];
  int n_node_bins = hist_bin_counts(node_counts, (uint64_t)dims->max_nodes + 1, node_bins);
  int n_edge_bins = hist_bin_counts(edge_counts, max_edges + 1, edge_bins);
  uint64_t chunks = dims->chunk_graphs ? (count + dims->chunk_graphs - 1) / dims->chunk_graphs : 0;

  if (json) {
    printf("{\n  \"cache\": ");
    tc_json_string(stdout, path);
    printf(",\n  \"format_version\": %u,\n  \"reader_format_version\": %d,\n  \"library_version\": ",
           twincache_cache_format_version(c), TWINCACHE_FORMAT_VERSION);
    tc_json_string(stdout, twincache_cache_library(c));
    printf(",\n  \"reader_version\": \"%s\",\n", TWINCACHE_VERSION_STRING);
    printf("  \"graphs\": %llu,\n  \"graphs_requested\": %llu,\n  \"chunk_graphs\": %u,\n"
           "  \"chunks\": %llu,\n",
           (unsigned long long)count, (unsigned long long)dims->graphs, dims->chunk_graphs,
           (unsigned long long)chunks);
    printf("  \"set_shards\": %u,\n", twincache_cache_members(c));
    if (shard)
      printf("  \"shard\": {\"index\": %u, \"count\": %u, \"first\": %llu},\n", shard_index, shard_count,
             (unsigned long long)first);
    printf("  \"world_kind\": \"%s\",\n", world_kind(c));
    printf("  \"max_nodes\": %u,\n  \"max_inter\": %u,\n  \"samples\": %u,\n  \"hidden\": %u,\n",
           dims->max_nodes, dims->max_inter, dims->samples, dims->hidden);
    printf("  \"disk_bytes\": %llu,\n  \"raw_bytes\": %llu,\n  \"frame_bytes\": %llu,\n",
           (unsigned long long)disk_bytes, (unsigned long long)st->raw_bytes,
           (unsigned long long)st->frame_bytes);
    printf("  \"frame_raw_ratio\": %.6g,\n  \"disk_raw_ratio\": %.6g,\n",
           ratio(st->frame_bytes, st->raw_bytes), ratio(disk_bytes, st->raw_bytes));
    printf("  \"mean_nodes\": %.6g,\n  \"mean_edges\": %.6g,\n  \"decode_errors\": %llu,\n",
           good ? (double)sum_nodes / (double)good : 0.0,
           good ? (double)sum_edges / (double)good : 0.0, (unsigned long long)errors);
    printf("  \"config\": ");
    tc_json_raw_object(stdout, twincache_cache_config(c));
    printf(",\n");
    hist_print_json("node_histogram", node_bins, n_node_bins);
    printf(",\n");
    hist_print_json("edge_histogram", edge_bins, n_edge_bins);
    printf(",\n");
    family_print_json(family_counts);
    printf(",\n  ");
    tc_sortability_print_json(stdout, &sort);
    printf("\n}\n");
  } else {
    printf("cache            %s\n", path);
    printf("written by       %s, format version %u (read by twincache %s, format version <= %d)\n",
           twincache_cache_library(c), twincache_cache_format_version(c), TWINCACHE_VERSION_STRING,
           TWINCACHE_FORMAT_VERSION);
    printf("worlds           %s\n", !strcmp(world_kind(c), "observed") ? "observed data (imported): regimes of rows, no SCM; fresh mode refuses it"
                                     : strcmp(world_kind(c), "twin") ? "independent: each world draws its own noise"
                                                                   : "twin: every world reuses the base world's noise");
    if (twincache_cache_members(c))
      printf("set              %u shards\n", twincache_cache_members(c));
    if (shard) {
      printf("shard            %u of %u: graphs %llu..%llu of the whole cache\n", shard_index, shard_count,
             (unsigned long long)first, (unsigned long long)shard_end - 1);
      printf("graphs           %llu committed of the shard's %llu%s\n", (unsigned long long)count,
             (unsigned long long)(shard_end - first),
             first + count < shard_end ? " (incomplete: rerun the generator to resume)" : "");
    } else {
      printf("graphs           %llu committed of %llu requested%s\n", (unsigned long long)count,
             (unsigned long long)dims->graphs,
             count < dims->graphs ? " (incomplete: rerun the generator to resume)" : "");
    }
    printf("chunks           %llu of %u graphs each\n", (unsigned long long)chunks,
           dims->chunk_graphs);
    if (dims->samples)
      printf("dims             nodes <= %u, interventions <= %u, %u samples per world",
             dims->max_nodes, dims->max_inter, dims->samples);
    else
      printf("dims             nodes <= %u, interventions <= %u, SCM only: no samples stored "
             "(load with fresh worlds)", dims->max_nodes, dims->max_inter);
    if (dims->hidden) printf(", %u hidden units", dims->hidden);
    printf("\nbytes on disk    ");
    print_bytes(disk_bytes);
    printf(" (%llu B)\n", (unsigned long long)disk_bytes);
    if (dims->samples) {
      printf("raw float32      ");
      print_bytes(st->raw_bytes);
      printf(" (base + intervened samples)\n");
      printf("compression      frames %.3fx raw (", ratio(st->frame_bytes, st->raw_bytes));
      print_bytes(st->frame_bytes);
      printf("), disk %.3fx raw\n", ratio(disk_bytes, st->raw_bytes));
    } else {
      printf("frames           ");
      print_bytes(st->frame_bytes);
      printf(" (SCMs only)\n");
    }
    printf("mean per graph   %.2f nodes, %.2f edges, %.0f frame bytes, %.0f disk bytes\n",
           good ? (double)sum_nodes / (double)good : 0.0,
           good ? (double)sum_edges / (double)good : 0.0,
           count ? (double)st->frame_bytes / (double)count : 0.0,
           count ? (double)disk_bytes / (double)count : 0.0);
    printf("config\n");
    tc_json_pretty(stdout, twincache_cache_config(c), 2);
    hist_print_text("node-count histogram (nodes, graphs)", node_bins, n_node_bins);
    hist_print_text("edge-count histogram (edges, graphs)", edge_bins, n_edge_bins);
    family_print_text(family_counts);
    tc_sortability_print_text(stdout, &sort);
  }
  if (errors) {
    fprintf(stderr, "%s: %s: %llu graphs could not be decoded (first: graph %llu: %s); run verify\n",
            TC_PROG, path, (unsigned long long)errors, (unsigned long long)first_bad,
            twincache_strerror(first_err));
    status = TC_EXIT_FAIL;
  }

cleanup:
  free(edge_counts);
  free(node_counts);
  tc_one_graph_close(&og);
  return status;
}
