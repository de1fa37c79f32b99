/* inspect_stats.c — `twincache-inspect stats CACHE [--limit N] [--json]`:
 * summary statistics over the cache (or its first N graphs): per node
 * position j, the mean and std of the base and twin-world samples; per world
 * kind, the same over all columns; the mean |intervention effect| on strict
 * descendants; edge density; the fraction of columns an intervention changes
 * (what the sparse twin encoding saves); bytes per graph. */
#include "inspect.h"
#include "tc_args.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char k_help[] =
    "usage: " TC_PROG " stats CACHE [--limit N] [--json]\n"
    "Summary statistics over the first N graphs (default: all): per node mean\n"
    "and std of base and twin-world samples, mean |intervention effect| on\n"
    "descendants, edge density, fraction of columns changed per intervention,\n"
    "frame bytes per graph.\n"
    "  --limit N   only graphs 0..N-1 (default 0 = all committed)\n"
    "  --json      one JSON object instead of text (default: text)\n"
    "  --help      this text\n";

typedef struct moments {
  double n, sum, sumsq;
} moments;

static void moments_add(moments *m, double v) {
  m->n += 1;
  m->sum += v;
  m->sumsq += v * v;
}
static double moments_mean(const moments *m) { return m->n > 0 ? m->sum / m->n : 0.0; }
static double moments_std(const moments *m) {
  if (m->n < 2) return 0.0;
  double mean = m->sum / m->n, var = (m->sumsq - m->n * mean * mean) / (m->n - 1);
  return var > 0 ? sqrt(var) : 0.0;
}

typedef struct node_stats {
  uint64_t graphs; /* graphs that have node j */
  moments base, twin;
} node_stats;

typedef struct totals {
  uint64_t graphs, interventions, frame_bytes, frame_min, frame_max, raw_bytes;
  moments base, twin;       /* over every sample of every column */
  moments effect_desc;      /* |twin - base| on strict descendants of the target */
  moments effect_target;    /* |twin - base| on the target column */
  moments changed_fraction; /* (1 + descendants) / N per intervention */
  moments density;          /* edges / (N(N-1)/2) per graph with N >= 2 */
  moments edges, nodes;     /* per graph */
  double stored_values, raw_values; /* sample values kept by the sparse twin encoding vs raw */
} totals;

static void graph_accumulate(const twincache_graph *g, node_stats *per_node, totals *t) {
  uint32_t n = g->n_nodes, s_n = g->n_samples;
  uint8_t changed[TWINCACHE_MAX_NODES];
  uint64_t e = tc_graph_edges(g);
  moments_add(&t->edges, (double)e);
  moments_add(&t->nodes, n);
  if (n >= 2) moments_add(&t->density, (double)e / ((double)n * (n - 1) / 2.0));
  for (uint32_t j = 0; j < n; j++) per_node[j].graphs++;
  for (uint32_t s = 0; s < s_n; s++)
    for (uint32_t j = 0; j < n; j++) {
      double v = g->base[(size_t)s * g->ld + j];
      moments_add(&per_node[j].base, v);
      moments_add(&t->base, v);
    }
  t->raw_values += (double)s_n * n * (1.0 + g->n_inter);
  t->stored_values += (double)s_n * n;
  for (uint32_t k = 0; k < g->n_inter; k++) {
    uint32_t target = g->target[k];
    if (target >= n) continue; /* verify reports it */
    uint32_t n_changed = twincache_graph_descendants(g->adj, n, g->ld_adj, target, changed);
    moments_add(&t->changed_fraction, (double)n_changed / n);
    /* a DO column is stored once as its value */
    t->stored_values += (double)s_n * (n_changed - 1) + (g->kind[k] == TWINCACHE_DO ? 1.0 : (double)s_n);
    const float *w = g->inter + (size_t)k * s_n * g->ld; /* (S, ld) */
    for (uint32_t s = 0; s < s_n; s++)
      for (uint32_t j = 0; j < n; j++) {
        double v = w[(size_t)s * g->ld + j];
        double diff = fabs(v - (double)g->base[(size_t)s * g->ld + j]);
        moments_add(&per_node[j].twin, v);
        moments_add(&t->twin, v);
        if (j == target)
          moments_add(&t->effect_target, diff);
        else if (changed[j])
          moments_add(&t->effect_desc, diff);
      }
    t->interventions++;
  }
}

static void json_moments(const char *key, const moments *m, int last) {
  printf("    \"%s\": {\"count\": %.0f, \"mean\": %.9g, \"std\": %.9g}%s\n", key, m->n,
         moments_mean(m), moments_std(m), last ? "" : ",");
}

static void print_json(const char *path, const totals *t, const node_stats *per_node,
                       uint32_t max_nodes, uint64_t disk_bytes, uint64_t committed) {
  printf("{\n  \"cache\": ");
  tc_json_string(stdout, path);
  printf(",\n  \"graphs\": %llu,\n  \"interventions\": %llu,\n", (unsigned long long)t->graphs,
         (unsigned long long)t->interventions);
  printf("  \"worlds\": {\n");
  json_moments("base", &t->base, 0);
  json_moments("twin", &t->twin, 1);
  printf("  },\n  \"effects\": {\n");
  json_moments("abs_effect_descendants", &t->effect_desc, 0);
  json_moments("abs_effect_target", &t->effect_target, 1);
  printf("  },\n");
  printf("  \"mean_nodes\": %.9g,\n  \"mean_edges\": %.9g,\n  \"edge_density\": %.9g,\n",
         moments_mean(&t->nodes), moments_mean(&t->edges), moments_mean(&t->density));
  printf("  \"changed_column_fraction\": %.9g,\n  \"sparse_twin_value_fraction\": %.9g,\n",
         moments_mean(&t->changed_fraction),
         t->raw_values > 0 ? t->stored_values / t->raw_values : 0.0);
  printf("  \"frame_bytes_per_graph\": {\"mean\": %.9g, \"min\": %llu, \"max\": %llu},\n",
         t->graphs ? (double)t->frame_bytes / (double)t->graphs : 0.0,
         (unsigned long long)(t->graphs ? t->frame_min : 0), (unsigned long long)t->frame_max);
  printf("  \"raw_bytes_per_graph\": %.9g,\n  \"disk_bytes_per_graph\": %.9g,\n",
         t->graphs ? (double)t->raw_bytes / (double)t->graphs : 0.0,
         committed ? (double)disk_bytes / (double)committed : 0.0);
  printf("  \"nodes\": [");
  for (uint32_t j = 0; j < max_nodes; j++) {
    const node_stats *p = &per_node[j];
    printf("%s\n    {\"node\": %u, \"graphs\": %llu, \"base_mean\": %.9g, \"base_std\": %.9g, "
           "\"twin_mean\": %.9g, \"twin_std\": %.9g}",
           j ? "," : "", j, (unsigned long long)p->graphs, moments_mean(&p->base),
           moments_std(&p->base), moments_mean(&p->twin), moments_std(&p->twin));
  }
  printf("\n  ]\n}\n");
}

static void print_text(const char *path, const totals *t, const node_stats *per_node,
                       uint32_t max_nodes, uint64_t disk_bytes, uint64_t committed) {
  printf("stats of %s: %llu graphs, %llu interventions\n", path, (unsigned long long)t->graphs,
         (unsigned long long)t->interventions);
  printf("graphs           %.2f nodes, %.2f edges, edge density %.3f\n", moments_mean(&t->nodes),
         moments_mean(&t->edges), moments_mean(&t->density));
  if (t->raw_values == 0) { /* S = 0: nothing below describes samples */
    printf("worlds           none stored (an SCM-only cache: the loader samples fresh worlds)\n");
    printf("bytes per graph  frame %.0f (min %llu, max %llu), disk %.0f\n",
           t->graphs ? (double)t->frame_bytes / (double)t->graphs : 0.0,
           (unsigned long long)(t->graphs ? t->frame_min : 0), (unsigned long long)t->frame_max,
           committed ? (double)disk_bytes / (double)committed : 0.0);
    return;
  }
  printf("worlds           base mean %.4g std %.4g; twin mean %.4g std %.4g\n",
         moments_mean(&t->base), moments_std(&t->base), moments_mean(&t->twin),
         moments_std(&t->twin));
  printf("|effect|         descendants %.4g (std %.4g), targets %.4g\n",
         moments_mean(&t->effect_desc), moments_std(&t->effect_desc),
         moments_mean(&t->effect_target));
  printf("sparse twin      %.3f of the columns change per intervention; %.3f of raw sample values stored\n",
         moments_mean(&t->changed_fraction),
         t->raw_values > 0 ? t->stored_values / t->raw_values : 0.0);
  printf("bytes per graph  frame %.0f (min %llu, max %llu), raw float32 %.0f, disk %.0f\n",
         t->graphs ? (double)t->frame_bytes / (double)t->graphs : 0.0,
         (unsigned long long)(t->graphs ? t->frame_min : 0), (unsigned long long)t->frame_max,
         t->graphs ? (double)t->raw_bytes / (double)t->graphs : 0.0,
         committed ? (double)disk_bytes / (double)committed : 0.0);
  printf("\nnode  graphs   base_mean   base_std   twin_mean   twin_std\n");
  for (uint32_t j = 0; j < max_nodes; j++) {
    const node_stats *p = &per_node[j];
    printf("  x%-3u %7llu %11.4g %10.4g %11.4g %10.4g\n", j, (unsigned long long)p->graphs,
           moments_mean(&p->base), moments_std(&p->base), moments_mean(&p->twin),
           moments_std(&p->twin));
  }
}

int tc_cmd_stats(int argc, char **argv) {
  const char *json = NULL, *limit_arg = NULL;
  const tc_flag flags[] = {{"json", 0, &json}, {"limit", 1, &limit_arg}};
  tc_args a;
  int rc = tc_args_begin(argc, argv, flags, 2, k_help, 1, &a);
  if (rc != TC_ARGS_GO) return rc;
  uint64_t limit = 0;
  if (limit_arg && tc_parse_u64(limit_arg, &limit) != 0)
    return tc_args_report_value(stderr, TC_PROG " stats", "--limit", limit_arg,
                                "an integer in [0, 18446744073709551615] (0 = every graph)");
  const char *path = a.positional[0];

  node_stats *per_node = NULL;
  tc_one_graph og;
  int status = tc_cache_graph_open(path, &og);
  if (status) goto cleanup;
  twincache_cache *c = og.cache;
  twincache_dctx *d = og.dctx;
  twincache_graph *g = og.graph;
  const twincache_dims *dims = twincache_cache_dims(c);
  uint64_t committed = twincache_cache_count(c);
  uint64_t count = limit && limit < committed ? limit : committed;
  per_node = calloc((size_t)dims->max_nodes + 1, sizeof *per_node);
  if (!per_node) {
    fprintf(stderr, "%s: %s: out of memory\n", TC_PROG, path);
    status = TC_EXIT_FAIL;
    goto cleanup;
  }
  totals t;
  memset(&t, 0, sizeof t);
  t.frame_min = UINT64_MAX;
  for (uint64_t i = 0; i < count; i++) {
    void *frame = NULL;
    size_t size = 0;
    int r = twincache_cache_read_frame(c, i, &frame, &size);
    if (r == TWINCACHE_OK) r = twincache_frame_decode(d, frame, size, g);
    free(frame);
    if (r != TWINCACHE_OK) {
      fprintf(stderr, "%s: %s: graph %llu: %s (run verify)\n", TC_PROG, path,
              (unsigned long long)i, twincache_strerror(r));
      status = TC_EXIT_FAIL;
      goto cleanup;
    }
    t.graphs++;
    t.frame_bytes += size;
    if (size < t.frame_min) t.frame_min = size;
    if (size > t.frame_max) t.frame_max = size;
    t.raw_bytes += twincache_graph_raw_bytes(g);
    graph_accumulate(g, per_node, &t);
  }
  uint64_t disk_bytes = twincache_cache_disk_bytes(c);
  if (json)
    print_json(path, &t, per_node, dims->max_nodes, disk_bytes, committed);
  else
    print_text(path, &t, per_node, dims->max_nodes, disk_bytes, committed);

cleanup:
  free(per_node);
  tc_one_graph_close(&og);
  return status;
}
