/* inspect_stats.c — `twincache-inspect stats CACHE [--limit N] [--json]`:
 * summary statistics over the cache (or its first N graphs): per node
 * position j, the mean and std of the base and twin-world samples; per world
 * kind, the same over all columns; the mean |intervention effect| on strict
 * descendants; edge density; the fraction of columns an intervention changes
 * (what the sparse twin encoding saves); bytes per graph; the graph
 * families; varsortability and R^2-sortability of the base worlds. */
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
    "frame bytes per graph, graph families, var- and R2-sortability (the\n"
    "fraction of causal paths along which the score grows; 0.5 = chance), and\n"
    "the share of the mechanisms' R2 a linear fit on the parents recovers.\n"
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
  uint64_t family[256];     /* graphs per family code (255: not recorded) */
  uint64_t independent;     /* graphs of independent worlds (FORMAT.md 3.9): no pairwise effect */
  uint64_t observed;        /* of them, observed data (imports, FORMAT.md 3.11): no SCM */
  tc_sortability_sum sort;  /* per graph, on the base world */
  moments r2_mech, r2_lin;  /* per node with parents: R^2 of its mechanism, of a linear fit */
} totals;

static void graph_accumulate(const twincache_graph *g, node_stats *per_node, totals *t) {
  uint32_t n = g->n_nodes, s_n = g->n_samples;
  uint8_t changed[TWINCACHE_MAX_NODES];
  uint64_t e = tc_graph_edges(g);
  moments_add(&t->edges, (double)e);
  moments_add(&t->nodes, n);
  t->family[g->family]++;
  const int indep = (g->flags & TWINCACHE_GRAPH_INDEPENDENT) != 0;
  t->independent += indep;
  t->observed += (g->flags & TWINCACHE_GRAPH_OBSERVED) != 0;
  if (n >= 2) moments_add(&t->density, (double)e / ((double)n * (n - 1) / 2.0));
  for (uint32_t j = 0; j < n; j++) per_node[j].graphs++;
  const uint32_t r0 = tc_world_rows(g, 0); /* the rows each world holds (FORMAT.md 3.10) */
  for (uint32_t s = 0; s < r0; s++)
    for (uint32_t j = 0; j < n; j++) {
      double v = g->base[(size_t)s * g->ld + j];
      moments_add(&per_node[j].base, v);
      moments_add(&t->base, v);
    }
  t->raw_values += (double)s_n * n * (1.0 + g->n_inter);
  t->stored_values += (double)r0 * n;
  for (uint32_t k = 0; k < g->n_inter; k++) {
    const uint32_t rk = tc_world_rows(g, k + 1), pairs = rk < r0 ? rk : r0;
    uint32_t target = g->target[k];
    if (target >= n) continue; /* verify reports it */
    uint32_t n_changed = twincache_graph_descendants(g->adj, n, g->ld_adj, target, changed);
    moments_add(&t->changed_fraction, (double)n_changed / n);
    /* a DO column is stored once as its value; an independent world stores every column */
    if (indep) n_changed = n;
    t->stored_values += (double)rk * (n_changed - 1) + (g->kind[k] == TWINCACHE_DO ? 1.0 : (double)rk);
    const float *w = g->inter + (size_t)k * s_n * g->ld; /* (S, ld) */
    for (uint32_t s = 0; s < rk; s++)
      for (uint32_t j = 0; j < n; j++) {
        double v = w[(size_t)s * g->ld + j];
        double diff = fabs(v - (double)g->base[(size_t)s * g->ld + j]);
        moments_add(&per_node[j].twin, v);
        moments_add(&t->twin, v);
        if (indep || s >= pairs) continue; /* rows of its own noise, or no base row: no pairwise effect */
        if (j == target)
          moments_add(&t->effect_target, diff);
        else if (changed[j])
          moments_add(&t->effect_desc, diff);
      }
    t->interventions++;
  }
}

/* Per node j with parents, on the base world in raw units: the share of
 * Var(x_j) its mechanism explains, R2_mech = 1 - Var(x_j - f_j(pa))/Var(x_j)
 * with f_j evaluated from the stored parameters, and the share a least-
 * squares fit x_j ~ 1 + pa(j) explains, R2_lin. Their ratio over a cache says
 * how much of the mechanisms a linear model recovers. scratch: (S*(N+2))
 * doubles. */
static double unit_f(int mechanism, double a) { /* FORMAT.md 3.6, in double with libm */
  switch (mechanism) {
  case TWINCACHE_MECH_RFF: return cos(a);
  case TWINCACHE_MECH_SIGMOID: return 1.0 / (1.0 + exp(-a));
  case TWINCACHE_MECH_POLY: a = a < -4.0 ? -4.0 : a > 4.0 ? 4.0 : a; return a * a;
  default: return tanh(a);
  }
}

static void fit_accumulate(const twincache_graph *g, totals *t, double *scratch) {
  uint32_t n = g->n_nodes, S = tc_world_rows(g, 0), H = g->n_hidden, stride = H * n + 2 * H; /* base rows held */
  int std = (g->flags & TWINCACHE_GRAPH_STANDARDIZED) != 0;
  /* an iSCM's mechanisms read the stored (standardised) parents; node j's own
   * value before its map is stored * std + mean */
  int iscm = (g->flags & TWINCACHE_GRAPH_ISCM) != 0;
#define RAW(s_, j_) (iscm ? x[(size_t)(s_) * n + (j_)] * (double)g->norm_std[j_] + g->norm_mean[j_] \
                          : x[(size_t)(s_) * n + (j_)])
  double *x = scratch, *q = scratch + (size_t)S * n, *y = q + S; /* x (S,n) raw; q (S) basis; y (S) */
  double *basis = y + S; /* (S, n) orthonormal basis of the parents' span */
  if (S < 3) return;
  for (uint32_t s = 0; s < S; s++)
    for (uint32_t j = 0; j < n; j++) {
      double v = g->base[(size_t)s * g->ld + j];
      x[(size_t)s * n + j] = std && !iscm ? v * g->norm_std[j] + g->norm_mean[j] : v;
    }
  for (uint32_t j = 0; j < n; j++) {
    uint32_t npa = 0;
    for (uint32_t i = 0; i < n; i++) npa += g->adj[(size_t)i * g->ld_adj + j] != 0;
    if (!npa || npa + 1 >= S) continue;
    double mean = 0, tss = 0, rss_mech = 0, rmean = 0;
    for (uint32_t s = 0; s < S; s++) mean += RAW(s, j);
    mean /= S;
    for (uint32_t s = 0; s < S; s++) {
      const double *row = x + (size_t)s * n;
      double f = 0;
      int mech = g->mechanism == TWINCACHE_MECH_MIXED ? g->node_mech[j] : g->mechanism;
      if (mech == TWINCACHE_MECH_LINEAR) {
        for (uint32_t i = 0; i < n; i++)
          if (g->adj[(size_t)i * g->ld_adj + j]) f += (double)g->weight[(size_t)i * g->ld_adj + j] * row[i];
      } else {
        const float *blk = g->mlp + (size_t)j * stride;
        for (uint32_t h = 0; h < H; h++) {
          double a = blk[(size_t)H * n + h];
          for (uint32_t i = 0; i < n; i++)
            if (g->adj[(size_t)i * g->ld_adj + j]) a += (double)blk[(size_t)h * n + i] * row[i];
          f += (double)blk[(size_t)H * n + H + h] * unit_f(mech, a);
        }
      }
      q[s] = RAW(s, j) - f; /* the noise term, scale * e */
      rmean += q[s];
      tss += (RAW(s, j) - mean) * (RAW(s, j) - mean);
    }
    rmean /= S;
    for (uint32_t s = 0; s < S; s++) rss_mech += (q[s] - rmean) * (q[s] - rmean);
    if (!(tss > 0)) continue;
    /* least squares on 1 + parents: centre, modified Gram-Schmidt */
    for (uint32_t s = 0; s < S; s++) y[s] = RAW(s, j) - mean;
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++) {
      if (!g->adj[(size_t)i * g->ld_adj + j]) continue;
      double *b = basis + (size_t)m * S, pm = 0, nrm = 0;
      for (uint32_t s = 0; s < S; s++) pm += x[(size_t)s * n + i];
      pm /= S;
      for (uint32_t s = 0; s < S; s++) b[s] = x[(size_t)s * n + i] - pm;
      for (uint32_t c = 0; c < m; c++) {
        double dot = 0;
        for (uint32_t s = 0; s < S; s++) dot += b[s] * basis[(size_t)c * S + s];
        for (uint32_t s = 0; s < S; s++) b[s] -= dot * basis[(size_t)c * S + s];
      }
      for (uint32_t s = 0; s < S; s++) nrm += b[s] * b[s];
      if (!(nrm > 1e-12 * tss)) continue; /* a parent collinear with the others */
      nrm = sqrt(nrm);
      for (uint32_t s = 0; s < S; s++) b[s] /= nrm;
      m++;
    }
    for (uint32_t c = 0; c < m; c++) {
      double dot = 0;
      for (uint32_t s = 0; s < S; s++) dot += y[s] * basis[(size_t)c * S + s];
      for (uint32_t s = 0; s < S; s++) y[s] -= dot * basis[(size_t)c * S + s];
    }
    double rss_lin = 0;
    for (uint32_t s = 0; s < S; s++) rss_lin += y[s] * y[s];
    moments_add(&t->r2_mech, 1.0 - rss_mech / tss);
    moments_add(&t->r2_lin, 1.0 - rss_lin / tss);
  }
#undef RAW
}

static double linear_share(const totals *t) {
  double m = moments_mean(&t->r2_mech);
  return m > 0 ? moments_mean(&t->r2_lin) / m : NAN;
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
  printf("  \"world_kind\": \"%s\",\n  \"observed_graphs\": %llu,\n",
         !t->independent ? "twin" : t->independent == t->graphs ? "independent" : "mixed",
         (unsigned long long)t->observed);
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
  printf("  \"families\": {");
  for (int f = 0, first = 1; f < 256; f++)
    if (t->family[f]) {
      printf("%s\"%s\": %llu", first ? "" : ", ", tc_family_name((unsigned)f),
             (unsigned long long)t->family[f]);
      first = 0;
    }
  printf("},\n");
  printf("  ");
  tc_sortability_print_json(stdout, &t->sort);
  printf(",\n  \"mechanism_fit\": {\"nodes\": %.0f, \"r2_mechanism\": %.6g, \"r2_linear\": %.6g, "
         "\"linear_share\": ",
         t->r2_mech.n, moments_mean(&t->r2_mech), moments_mean(&t->r2_lin));
  tc_json_float(stdout, (float)linear_share(t));
  printf("},\n");
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
  printf("families        ");
  for (int f = 0, first = 1; f < 256; f++)
    if (t->family[f]) {
      printf("%s%s %llu", first ? "" : ", ", tc_family_name((unsigned)f), (unsigned long long)t->family[f]);
      first = 0;
    }
  printf("\n");
  if (t->observed)
    printf("observed         %llu of %llu graphs are observed data (imported: regimes of rows, no SCM; the "
           "mechanism fit below means nothing there)\n", (unsigned long long)t->observed, (unsigned long long)t->graphs);
  if (!t->independent)
    printf("world kind       twin (every world reuses the base world's noise, row by row)\n");
  else if (t->independent == t->graphs)
    printf("world kind       independent (each world its own noise: rows unpaired, no |effect|)\n");
  else
    printf("world kind       mixed: %llu of %llu graphs independent\n", (unsigned long long)t->independent,
           (unsigned long long)t->graphs);
  if (t->raw_values == 0) { /* S = 0: nothing below describes samples */
    printf("worlds           none stored (an SCM-only cache: the loader samples fresh worlds)\n");
    printf("bytes per graph  frame %.0f (min %llu, max %llu), disk %.0f\n",
           t->graphs ? (double)t->frame_bytes / (double)t->graphs : 0.0,
           (unsigned long long)(t->graphs ? t->frame_min : 0), (unsigned long long)t->frame_max,
           committed ? (double)disk_bytes / (double)committed : 0.0);
    return;
  }
  const int all_independent = t->independent == t->graphs;
  printf("worlds           base mean %.4g std %.4g; %s mean %.4g std %.4g\n",
         moments_mean(&t->base), moments_std(&t->base), all_independent ? "intervened" : "twin",
         moments_mean(&t->twin), moments_std(&t->twin));
  if (all_independent) { /* no row pairs a base row: no effect, and every column is stored */
    printf("stored values    %.3f of raw sample values (independent worlds store every column, a do()'s "
           "as one value); %.3f of the columns descend from a target\n",
           t->raw_values > 0 ? t->stored_values / t->raw_values : 0.0, moments_mean(&t->changed_fraction));
  } else {
    printf("|effect|         descendants %.4g (std %.4g), targets %.4g%s\n",
           moments_mean(&t->effect_desc), moments_std(&t->effect_desc), moments_mean(&t->effect_target),
           t->independent ? " (the twin-world graphs only)" : "");
    printf("sparse twin      %.3f of the columns change per intervention; %.3f of raw sample values stored\n",
           moments_mean(&t->changed_fraction),
           t->raw_values > 0 ? t->stored_values / t->raw_values : 0.0);
  }
  tc_sortability_print_text(stdout, &t->sort);
  printf("mechanism fit    R2 of the mechanisms %.3f, of a linear fit on the parents %.3f: "
         "linear share %.2f (%.0f nodes with parents)\n",
         moments_mean(&t->r2_mech), moments_mean(&t->r2_lin), linear_share(t), t->r2_mech.n);
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
  double *fit_scratch = NULL;
  tc_one_graph og;
  int status = tc_cache_graph_open(path, &og);
  if (status) goto cleanup;
  twincache_cache *c = og.cache;
  twincache_dctx *d = og.dctx;
  twincache_graph *g = og.graph;
  const twincache_dims *dims = twincache_cache_dims(c);
  uint64_t first = twincache_cache_first(c); /* a shard opened alone holds [first, first + committed) */
  uint64_t committed = twincache_cache_count(c) - first;
  uint64_t count = first + (limit && limit < committed ? limit : committed);
  per_node = calloc((size_t)dims->max_nodes + 1, sizeof *per_node);
  fit_scratch = malloc(sizeof(double) * ((size_t)dims->samples * (2 * (size_t)dims->max_nodes + 2) + 1));
  if (!per_node || !fit_scratch) {
    fprintf(stderr, "%s: %s: out of memory\n", TC_PROG, path);
    status = TC_EXIT_FAIL;
    goto cleanup;
  }
  totals t;
  memset(&t, 0, sizeof t);
  t.frame_min = UINT64_MAX;
  for (uint64_t i = first; i < count; i++) {
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
    fit_accumulate(g, &t, fit_scratch);
    r = tc_sortability_add(&t.sort, g);
    if (r != TWINCACHE_OK) {
      fprintf(stderr, "%s: %s: graph %llu: %s\n", TC_PROG, path, (unsigned long long)i, twincache_last_error());
      status = TC_EXIT_FAIL;
      goto cleanup;
    }
  }
  uint64_t disk_bytes = twincache_cache_disk_bytes(c);
  if (json)
    print_json(path, &t, per_node, dims->max_nodes, disk_bytes, committed);
  else
    print_text(path, &t, per_node, dims->max_nodes, disk_bytes, committed);

cleanup:
  free(fit_scratch);
  free(per_node);
  tc_one_graph_close(&og);
  return status;
}
