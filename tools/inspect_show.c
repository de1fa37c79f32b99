/* inspect_show.c — `twincache-inspect show CACHE INDEX [--rows R] [--json]
 * [--fresh-rows S [--epoch E]]`: one graph in full: its DAG and SCM
 * parameters, its interventions and the samples of the base world and of
 * every twin world — stored, or fresh ones the loader samples from the SCM
 * (what a loader with samples = FRESH, rows = S gives in epoch E; the only
 * worlds an SCM-only cache has). The text form shows the first R rows of each
 * world; --json prints every array in full, floats as "%.9g" so each parses
 * back (strtof) to the identical float32. */
#include "inspect.h"
#include "tc_args.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char k_help[] =
    "usage: " TC_PROG " show CACHE INDEX [--rows R] [--json] [--fresh-rows S [--epoch E]]\n"
    "Prints graph INDEX: adjacency and weights (or the MLP's parameter summary),\n"
    "noise scales, standardisation, interventions (target, kind, value) and the\n"
    "first R rows of the base world and of each twin world.\n"
    "  --rows R   rows per world in the text form (default 5; 0 = none)\n"
    "  --json     everything in full as one JSON object (ignores --rows):\n"
    "             adjacency (N,N), weights (N,N), mlp (N, H*N+2H), noise_scale,\n"
    "             norm_mean/norm_std, targets, kinds, values, base (S,N),\n"
    "             inter (K,S,N); floats round-trip exactly as float32\n"
    "  --fresh-rows S  fresh worlds of S rows sampled from the graph's SCM, as the\n"
    "             loader's fresh mode gives them (an SCM-only cache stores none)\n"
    "  --epoch E  with --fresh-rows: the epoch whose worlds to show (default 0;\n"
    "             resample_every 1)\n"
    "  --help     this text\n";

/* ---- JSON ---------------------------------------------------------------------- */
static void json_floats(const float *v, uint32_t n) {
  putchar('[');
  for (uint32_t i = 0; i < n; i++) {
    if (i) putchar(',');
    tc_json_float(stdout, v[i]);
  }
  putchar(']');
}

/* rows x cols floats with leading dimension ld, as a list of lists */
static void json_matrix(const float *m, uint32_t rows, uint32_t cols, uint32_t ld,
                        const char *indent) {
  putchar('[');
  for (uint32_t r = 0; r < rows; r++) {
    printf("%s\n%s  ", r ? "," : "", indent);
    json_floats(m + (size_t)r * ld, cols);
  }
  printf("\n%s]", indent);
}

static void show_json(const twincache_graph *g) {
  uint32_t n = g->n_nodes, s_n = g->n_samples, k_n = g->n_inter, h = g->n_hidden;
  int standardized = (g->flags & TWINCACHE_GRAPH_STANDARDIZED) != 0;
  printf("{\n  \"index\": %llu,\n  \"n_nodes\": %u,\n  \"n_samples\": %u,\n  \"n_inter\": %u,\n"
         "  \"n_hidden\": %u,\n",
         (unsigned long long)g->index, n, s_n, k_n, h);
  printf("  \"family\": \"%s\",\n  \"mechanism\": \"%s\",\n  \"noise\": \"%s\",\n  \"flags\": %u,\n"
         "  \"standardized\": %s,\n  \"worlds\": \"%s\",\n",
         tc_family_name(g->family), tc_mechanism_name(g->mechanism), tc_noise_name(g->noise), g->flags,
         standardized ? "true" : "false", g->flags & TWINCACHE_GRAPH_INDEPENDENT ? "independent" : "twin");
  printf("  \"observed\": %s,\n  \"graph_known\": %s,\n  \"targets_known\": %s,\n",
         g->flags & TWINCACHE_GRAPH_OBSERVED ? "true" : "false", g->flags & TWINCACHE_GRAPH_NO_DAG ? "false" : "true",
         g->flags & TWINCACHE_GRAPH_NO_TARGETS ? "false" : "true");
  printf("  \"adjacency\": [");
  for (uint32_t i = 0; i < n; i++) {
    printf("%s\n    [", i ? "," : "");
    for (uint32_t j = 0; j < n; j++) printf("%s%u", j ? "," : "", g->adj[(size_t)i * g->ld_adj + j] ? 1u : 0u);
    putchar(']');
  }
  printf("\n  ],\n  \"weights\": ");
  json_matrix(g->weight, n, n, g->ld_adj, "  ");
  printf(",\n  \"mlp\": ");
  if (g->mechanism != TWINCACHE_MECH_LINEAR && h > 0) {
    uint32_t stride = h * n + 2 * h;
    json_matrix(g->mlp, n, stride, stride, "  ");
  } else {
    printf("null");
  }
  printf(",\n  \"noise_scale\": ");
  json_floats(g->noise_scale, n);
  printf(",\n  \"norm_mean\": ");
  if (standardized)
    json_floats(g->norm_mean, n);
  else
    printf("null");
  printf(",\n  \"norm_std\": ");
  if (standardized)
    json_floats(g->norm_std, n);
  else
    printf("null");
  printf(",\n  \"targets\": [");
  for (uint32_t k = 0; k < k_n; k++) printf("%s%u", k ? "," : "", (unsigned)g->target[k]);
  /* every node each world intervenes on (several for multi-target worlds), and their values */
  printf("],\n  \"target_sets\": [");
  for (uint32_t k = 0; k < k_n; k++) {
    uint32_t nt = g->n_targets ? g->n_targets[k] : 1;
    printf("%s[%u", k ? "," : "", (unsigned)g->target[k]);
    for (uint32_t i = 1; i < nt; i++) printf(",%u", (unsigned)g->more_target[(size_t)k * (TWINCACHE_MAX_TARGETS - 1) + i - 1]);
    putchar(']');
  }
  printf("],\n  \"value_sets\": [");
  for (uint32_t k = 0; k < k_n; k++) {
    uint32_t nt = g->n_targets ? g->n_targets[k] : 1;
    printf("%s[", k ? "," : "");
    tc_json_float(stdout, g->value[k]);
    for (uint32_t i = 1; i < nt; i++) {
      putchar(',');
      tc_json_float(stdout, g->more_value[(size_t)k * (TWINCACHE_MAX_TARGETS - 1) + i - 1]);
    }
    putchar(']');
  }
  printf("],\n  \"kinds\": [");
  for (uint32_t k = 0; k < k_n; k++) printf("%s\"%s\"", k ? "," : "", tc_kind_name(g->kind[k]));
  printf("],\n  \"values\": ");
  json_floats(g->value, k_n);
  /* soft worlds: the new parameter block (twincache_soft_stride floats), else null */
  printf(",\n  \"soft\": [");
  uint32_t soft_p = twincache_soft_stride(n, h, g->mechanism);
  for (uint32_t k = 0; k < k_n; k++) {
    printf("%s", k ? "," : "");
    if (g->kind[k] == TWINCACHE_INTER_SOFT && g->soft)
      json_floats(g->soft + (size_t)k * soft_p, soft_p);
    else
      printf("null");
  }
  printf("]");
  if (g->flags & TWINCACHE_GRAPH_ROWS) { /* rows per world (FORMAT.md 3.10): each world's own rows below */
    printf(",\n  \"rows\": [");
    for (uint32_t w = 0; w <= k_n; w++) printf("%s%u", w ? "," : "", tc_world_rows(g, w));
    printf("]");
  }
  printf(",\n  \"base\": ");
  json_matrix(g->base, tc_world_rows(g, 0), n, g->ld, "  ");
  printf(",\n  \"inter\": [");
  for (uint32_t k = 0; k < k_n; k++) {
    printf("%s\n    ", k ? "," : "");
    json_matrix(g->inter + (size_t)k * s_n * g->ld, tc_world_rows(g, k + 1), n, g->ld, "    ");
  }
  printf("%s]\n}\n", k_n ? "\n  " : "");
}

/* ---- text ------------------------------------------------------------------------ */

static void text_rows(const float *m, uint32_t rows_total, uint32_t rows, uint32_t n,
                      uint32_t ld, const uint8_t *changed) {
  if (rows > rows_total) rows = rows_total;
  printf("      ");
  for (uint32_t j = 0; j < n; j++) {
    char name[16];
    snprintf(name, sizeof name, "x%u%s", j, changed && changed[j] ? "*" : "");
    printf(" %10s", name);
  }
  putchar('\n');
  for (uint32_t r = 0; r < rows; r++) {
    printf("  %4u", r);
    for (uint32_t j = 0; j < n; j++) printf(" %10.4g", (double)m[(size_t)r * ld + j]);
    putchar('\n');
  }
  if (rows < rows_total) printf("  ... %u more rows\n", rows_total - rows);
}

static void show_text(const twincache_graph *g, uint32_t rows) {
  uint32_t n = g->n_nodes, s_n = g->n_samples, k_n = g->n_inter, h = g->n_hidden;
  int standardized = (g->flags & TWINCACHE_GRAPH_STANDARDIZED) != 0;
  printf("graph %llu: %u nodes, %llu edges, %u samples per world, %u interventions\n",
         (unsigned long long)g->index, n, (unsigned long long)tc_graph_edges(g), s_n, k_n);
  printf("family %s, mechanism %s", tc_family_name(g->family), tc_mechanism_name(g->mechanism));
  if (g->mechanism != TWINCACHE_MECH_LINEAR) printf(" (%u hidden units)", h);
  printf(", noise %s, %s%s\n", tc_noise_name(g->noise),
         standardized ? "standardised per node" : "not standardised",
         g->flags & TWINCACHE_GRAPH_INDEPENDENT ? ", independent worlds (each its own noise)" : "");
  if (g->flags & TWINCACHE_GRAPH_OBSERVED) /* FORMAT.md 3.11 */
    printf("observed data (imported): no SCM (weights and noise scales 0), graph %s, regime targets %s\n",
           g->flags & TWINCACHE_GRAPH_NO_DAG ? "unknown (no edge shown means unknown)" : "known",
           g->flags & TWINCACHE_GRAPH_NO_TARGETS ? "withheld" : "known");

  if (g->mechanism == TWINCACHE_MECH_LINEAR) {
    printf("\nedge weights (row i -> column j; '.' = no edge)\n      ");
    for (uint32_t j = 0; j < n; j++) {
      char name[16];
      snprintf(name, sizeof name, "x%u", j);
      printf(" %10s", name);
    }
    putchar('\n');
    for (uint32_t i = 0; i < n; i++) {
      printf("  x%-3u", i);
      for (uint32_t j = 0; j < n; j++) {
        size_t at = (size_t)i * g->ld_adj + j;
        if (g->adj[at])
          printf(" %10.4g", (double)g->weight[at]);
        else
          printf(" %10s", ".");
      }
      putchar('\n');
    }
  } else {
    printf("\nadjacency (row i -> column j)\n");
    for (uint32_t i = 0; i < n; i++) {
      printf("  x%-3u", i);
      for (uint32_t j = 0; j < n; j++) printf(" %c", g->adj[(size_t)i * g->ld_adj + j] ? '1' : '.');
      putchar('\n');
    }
    uint32_t stride = h * n + 2 * h;
    printf("MLP parameters per node (W1 (%u,%u), b1 (%u), w2 (%u)): max |W1|, max |b1|, max |w2|\n",
           h, n, h, h);
    for (uint32_t j = 0; j < n; j++) {
      const float *p = g->mlp + (size_t)j * stride;
      float m1 = 0, mb = 0, m2 = 0;
      for (uint32_t q = 0; q < h * n; q++) m1 = fmaxf(m1, fabsf(p[q]));
      for (uint32_t q = 0; q < h; q++) mb = fmaxf(mb, fabsf(p[h * n + q]));
      for (uint32_t q = 0; q < h; q++) m2 = fmaxf(m2, fabsf(p[h * n + h + q]));
      printf("  x%-3u %10.4g %10.4g %10.4g\n", j, (double)m1, (double)mb, (double)m2);
    }
  }

  printf("\nnode   noise_scale");
  if (standardized) printf("  norm_mean   norm_std");
  putchar('\n');
  for (uint32_t j = 0; j < n; j++) {
    printf("  x%-3u %11.4g", j, (double)g->noise_scale[j]);
    if (standardized) printf(" %10.4g %10.4g", (double)g->norm_mean[j], (double)g->norm_std[j]);
    putchar('\n');
  }

  printf("\ninterventions (target, kind, value, changed nodes = target and descendants)\n");
  uint8_t changed[TWINCACHE_MAX_NODES];
  for (uint32_t k = 0; k < k_n; k++) {
    uint32_t t = g->target[k];
    uint32_t n_changed = tc_world_changed(g, k, changed), nt = g->n_targets ? g->n_targets[k] : 1;
    printf("  %3u  x%-3u %-5s %10.4g  %u of %u\n", k, t, tc_kind_name(g->kind[k]),
           (double)g->value[k], n_changed, n);
    for (uint32_t i = 1; i < nt; i++)
      printf("            and x%u (value %.4g)\n",
             (unsigned)g->more_target[(size_t)k * (TWINCACHE_MAX_TARGETS - 1) + i - 1],
             (double)g->more_value[(size_t)k * (TWINCACHE_MAX_TARGETS - 1) + i - 1]);
    if (g->kind[k] == TWINCACHE_INTER_SOFT && g->soft && t < n) { /* the new mechanism */
      const float *blk = g->soft + (size_t)k * twincache_soft_stride(n, g->n_hidden, g->mechanism);
      int mech_t = g->mechanism == TWINCACHE_MECH_MIXED && g->node_mech ? g->node_mech[t] : g->mechanism;
      if (mech_t != TWINCACHE_MECH_LINEAR) {
        printf("            new %s block of x%u (%u units: show --json)\n",
               twincache_choice_names(TWINCACHE_CHOICE_MECHANISM)[mech_t], t, g->n_hidden);
      } else {
        printf("            new weights:");
        uint32_t parents = 0;
        for (uint32_t i = 0; i < n; i++)
          if (g->adj[(size_t)i * g->ld_adj + t]) printf(" x%u->x%u %.4g", i, t, (double)blk[i]), parents++;
        printf("%s\n", parents ? "" : " none (a root: a linear mechanism has no parameters there)");
      }
    }
  }

  if (rows == 0) return;
  if (s_n == 0) {
    printf("\nno samples stored (an SCM-only cache): --fresh-rows S samples fresh worlds\n");
    return;
  }
  const uint32_t r0 = tc_world_rows(g, 0); /* the rows it holds (FORMAT.md 3.10) */
  printf("\nbase world (first %u of %u rows)\n", rows < r0 ? rows : r0, r0);
  text_rows(g->base, r0, rows, n, g->ld, NULL);
  for (uint32_t k = 0; k < k_n; k++) {
    uint32_t t = g->target[k], rk = tc_world_rows(g, k + 1);
    char of[32]; /* " of r_k": with rows per world only (the text of before otherwise) */
    snprintf(of, sizeof of, " of %u", rk);
    tc_world_changed(g, k, changed);
    if (g->flags & TWINCACHE_GRAPH_OBSERVED) { /* a regime: its targets, no value */
      printf("\nregime %u (world %u): ", k + 1, k);
      if (g->flags & TWINCACHE_GRAPH_NO_TARGETS) printf("targets withheld");
      else printf("targets x%u", t);
      for (uint32_t i = 1; !(g->flags & TWINCACHE_GRAPH_NO_TARGETS) && g->n_targets && i < g->n_targets[k]; i++)
        printf(",x%u", (unsigned)g->more_target[(size_t)k * (TWINCACHE_MAX_TARGETS - 1) + i - 1]);
      printf(" (first %u of %u rows)\n", rows < rk ? rows : rk, rk);
      text_rows(g->inter + (size_t)k * s_n * g->ld, rk, rows, n, g->ld, NULL);
      continue;
    }
    printf("\ntwin world %u: %s(x%u %s %.4g) (first %u%s rows; * = changed column)\n", k,
           tc_kind_name(g->kind[k]), t,
           g->kind[k] == TWINCACHE_DO ? "=" : g->kind[k] == TWINCACHE_INTER_NOISE ? "noise *="
                                     : g->kind[k] == TWINCACHE_INTER_SOFT ? "new mechanism," : "+=",
           (double)g->value[k], rows < rk ? rows : rk, g->flags & TWINCACHE_GRAPH_ROWS ? of : "");
    text_rows(g->inter + (size_t)k * s_n * g->ld, rk, rows, n, g->ld, changed);
  }
}

/* Fresh worlds of graph og->index in `epoch`, `rows` rows each, from a
 * loader in fresh mode over that one graph; shown like stored ones. */
static int show_fresh(const char *path, const tc_one_graph *og, uint32_t rows, uint64_t epoch,
                      int json, uint32_t text_rows_n) {
  twincache_loader_options o;
  twincache_loader_options_init(&o);
  o.samples = TWINCACHE_SAMPLES_FRESH;
  o.rows = rows;
  o.batch_size = 1;
  o.threads = 1;
  o.shuffle = 0;
  o.epochs = 0;
  o.index_begin = og->index;
  o.index_end = og->index + 1;
  twincache_loader_state at = {.seed = 0, .next_seq = epoch}; /* one batch per epoch */
  twincache_loader *l = NULL;
  twincache_batch *b = NULL;
  int rc = twincache_loader_open(path, &o, &at, &l);
  if (rc == TWINCACHE_OK) rc = twincache_loader_next(l, &b);
  if (rc != TWINCACHE_OK) {
    fprintf(stderr, TC_PROG ": %s: graph %llu: fresh worlds: %s (%s)\n", path,
            (unsigned long long)og->index, twincache_strerror(rc), twincache_last_error());
    twincache_loader_close(l);
    return TC_EXIT_FAIL;
  }
  twincache_graph g = *og->graph; /* the SCM as stored, the worlds fresh */
  g.n_samples = rows;
  g.ld = b->layout.nodes;
  g.base = b->base;    /* (S, N) */
  g.inter = b->inter;  /* (K, S, N) */
  if (json) show_json(&g);
  else show_text(&g, text_rows_n);
  twincache_loader_release(l, b);
  twincache_loader_close(l);
  return TC_EXIT_OK;
}

int tc_cmd_show(int argc, char **argv) {
  const char *json = NULL, *rows_arg = NULL, *fresh_arg = NULL, *epoch_arg = NULL;
  const tc_flag flags[] = {{"json", 0, &json}, {"rows", 1, &rows_arg}, {"fresh-rows", 1, &fresh_arg},
                           {"epoch", 1, &epoch_arg}};
  tc_args a;
  int rc = tc_args_begin(argc, argv, flags, 4, k_help, 2, &a);
  if (rc != TC_ARGS_GO) return rc;
  uint64_t rows = 5, fresh_rows = 0, epoch = 0;
  char expect[64];
  if (rows_arg && (tc_parse_u64(rows_arg, &rows) != 0 || rows > TWINCACHE_MAX_SAMPLES)) {
    tc_expect_u64(expect, sizeof expect, 0, TWINCACHE_MAX_SAMPLES);
    return tc_args_report_value(stderr, TC_PROG " show", "--rows", rows_arg, expect);
  }
  if (fresh_arg && (tc_parse_u64(fresh_arg, &fresh_rows) != 0 || fresh_rows < 1 ||
                    fresh_rows > TWINCACHE_MAX_SAMPLES)) {
    tc_expect_u64(expect, sizeof expect, 1, TWINCACHE_MAX_SAMPLES);
    return tc_args_report_value(stderr, TC_PROG " show", "--fresh-rows", fresh_arg, expect);
  }
  if (epoch_arg && !fresh_arg) return tc_usage_error("show", "--epoch needs --fresh-rows");
  if (epoch_arg && (tc_parse_u64(epoch_arg, &epoch) != 0 || epoch == UINT64_MAX)) {
    tc_expect_u64(expect, sizeof expect, 0, UINT64_MAX - 1);
    return tc_args_report_value(stderr, TC_PROG " show", "--epoch", epoch_arg, expect);
  }

  tc_one_graph og;
  int status = tc_one_graph_open("show", a.positional[0], a.positional[1], &og);
  if (status) goto cleanup;
  const twincache_graph *g = og.graph;
  if (fresh_arg)
    status = show_fresh(a.positional[0], &og, (uint32_t)fresh_rows, epoch, json != NULL, (uint32_t)rows);
  else if (json)
    show_json(g);
  else
    show_text(g, (uint32_t)rows);

cleanup:
  tc_one_graph_close(&og);
  return status;
}
