/* test_inspect_show.c — `show --json` is a contract: it must be strict JSON
 * and every array must equal what twincache_cache_read_graph decodes, float
 * bits included (the text "%.9g" must strtof() back to the same float32).
 * Checked on a linear cache and on an MLP, standardised, shift-intervention
 * one. Also: the text form runs, an out-of-range index exits 2 naming the range.
 * usage: test_inspect_show GEN INSPECT SCRATCH */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "inspect_test.h"
#include "mini_json.h"
#include "twincache_loader.h"

static int float_equal_text(const tj_value *v, float expect) {
  if (!isfinite(expect)) return v && v->type == TJ_NULL;
  if (!v || v->type != TJ_NUMBER) return 0;
  float got = strtof(v->text, NULL);
  return memcmp(&got, &expect, sizeof got) == 0;
}

/* arr is a JSON array of `rows` arrays of `cols` numbers equal to m (ld). */
static void check_matrix(const char *what, const tj_value *arr, const float *m, uint32_t rows,
                         uint32_t cols, uint32_t ld, uint64_t index) {
  TC_CHECK(tj_len(arr) == rows, "graph %llu: %s has %zu rows, want %u", (unsigned long long)index,
        what, tj_len(arr), rows);
  if (tj_len(arr) != rows) return;
  for (uint32_t r = 0; r < rows; r++) {
    const tj_value *row = tj_at(arr, r);
    TC_CHECK(tj_len(row) == cols, "graph %llu: %s row %u has %zu values, want %u",
          (unsigned long long)index, what, r, tj_len(row), cols);
    if (tj_len(row) != cols) return;
    for (uint32_t j = 0; j < cols; j++)
      if (!float_equal_text(tj_at(row, j), m[(size_t)r * ld + j])) {
        TC_CHECK(0, "graph %llu: %s[%u][%u] = %s, want %.9g", (unsigned long long)index, what, r, j,
              tj_at(row, j) && tj_at(row, j)->text ? tj_at(row, j)->text : "?",
              (double)m[(size_t)r * ld + j]);
        return;
      }
  }
}

static void check_vector(const char *what, const tj_value *arr, const float *v, uint32_t n,
                         uint64_t index) {
  TC_CHECK(tj_len(arr) == n, "graph %llu: %s has %zu values, want %u", (unsigned long long)index,
        what, tj_len(arr), n);
  if (tj_len(arr) != n) return;
  for (uint32_t i = 0; i < n; i++)
    TC_CHECK(float_equal_text(tj_at(arr, i), v[i]), "graph %llu: %s[%u] differs (want %.9g)",
          (unsigned long long)index, what, i, (double)v[i]);
}

static void check_show_json(const tj_value *o, const twincache_graph *g) {
  uint64_t idx = g->index;
  uint32_t n = g->n_nodes, s_n = g->n_samples, k_n = g->n_inter;
  TC_CHECK(tj_num(tj_get(o, "index")) == (double)idx, "index");
  TC_CHECK(tj_num(tj_get(o, "n_nodes")) == n, "n_nodes");
  TC_CHECK(tj_num(tj_get(o, "n_samples")) == s_n, "n_samples");
  TC_CHECK(tj_num(tj_get(o, "n_inter")) == k_n, "n_inter");
  TC_CHECK(tj_num(tj_get(o, "flags")) == g->flags, "flags");
  const tj_value *mech = tj_get(o, "mechanism");
  TC_CHECK(mech && mech->type == TJ_STRING &&
            !strcmp(mech->text, g->mechanism == TWINCACHE_MECH_LINEAR ? "linear" : "mlp"),
        "mechanism");

  const tj_value *adj = tj_get(o, "adjacency");
  TC_CHECK(tj_len(adj) == n, "adjacency rows");
  for (uint32_t i = 0; i < n && tj_len(adj) == n; i++) {
    const tj_value *row = tj_at(adj, i);
    TC_CHECK(tj_len(row) == n, "adjacency row %u length", i);
    for (uint32_t j = 0; j < n && tj_len(row) == n; j++)
      TC_CHECK(tj_num(tj_at(row, j)) == (g->adj[(size_t)i * g->ld_adj + j] ? 1.0 : 0.0),
            "graph %llu: adjacency[%u][%u]", (unsigned long long)idx, i, j);
  }
  check_matrix("weights", tj_get(o, "weights"), g->weight, n, n, g->ld_adj, idx);
  if (g->mechanism == TWINCACHE_MECH_MLP) {
    uint32_t stride = g->n_hidden * n + 2 * g->n_hidden;
    check_matrix("mlp", tj_get(o, "mlp"), g->mlp, n, stride, stride, idx);
  } else {
    TC_CHECK(tj_get(o, "mlp") && tj_get(o, "mlp")->type == TJ_NULL, "mlp is null for linear");
  }
  check_vector("noise_scale", tj_get(o, "noise_scale"), g->noise_scale, n, idx);
  if (g->flags & TWINCACHE_GRAPH_STANDARDIZED) {
    check_vector("norm_mean", tj_get(o, "norm_mean"), g->norm_mean, n, idx);
    check_vector("norm_std", tj_get(o, "norm_std"), g->norm_std, n, idx);
  } else {
    TC_CHECK(tj_get(o, "norm_mean") && tj_get(o, "norm_mean")->type == TJ_NULL, "norm_mean null");
  }
  const tj_value *targets = tj_get(o, "targets"), *kinds = tj_get(o, "kinds");
  TC_CHECK(tj_len(targets) == k_n && tj_len(kinds) == k_n, "targets/kinds length");
  for (uint32_t k = 0; k < k_n && tj_len(targets) == k_n && tj_len(kinds) == k_n; k++) {
    TC_CHECK(tj_num(tj_at(targets, k)) == g->target[k], "graph %llu: target %u",
          (unsigned long long)idx, k);
    const char *want = twincache_choice_name(TWINCACHE_CHOICE_INTER_KIND, g->kind[k]);
    TC_CHECK(tj_at(kinds, k)->type == TJ_STRING && !strcmp(tj_at(kinds, k)->text, want),
          "graph %llu: kind %u", (unsigned long long)idx, k);
  }
  check_vector("values", tj_get(o, "values"), g->value, k_n, idx);
  /* soft worlds: their parameter block; other worlds null */
  const tj_value *soft = tj_get(o, "soft");
  TC_CHECK(tj_len(soft) == k_n, "graph %llu: soft has %zu entries", (unsigned long long)idx, tj_len(soft));
  for (uint32_t k = 0; k < k_n && tj_len(soft) == k_n; k++) {
    if (g->kind[k] == TWINCACHE_INTER_SOFT) {
      uint32_t P = twincache_soft_stride(n, g->n_hidden, g->mechanism);
      check_vector("soft", tj_at(soft, k), g->soft + (size_t)k * P, P, idx);
    } else {
      TC_CHECK(tj_at(soft, k)->type == TJ_NULL, "graph %llu: soft[%u] not null", (unsigned long long)idx, k);
    }
  }
  check_matrix("base", tj_get(o, "base"), g->base, s_n, n, g->ld, idx);
  const tj_value *inter = tj_get(o, "inter");
  TC_CHECK(tj_len(inter) == k_n, "graph %llu: inter has %zu worlds, want %u", (unsigned long long)idx,
        tj_len(inter), k_n);
  for (uint32_t k = 0; k < k_n && tj_len(inter) == k_n; k++)
    check_matrix("inter", tj_at(inter, k), g->inter + (size_t)k * s_n * g->ld, s_n, n, g->ld, idx);
}

static void check_cache(const char *inspect, const char *cache, const char *scratch) {
  tt_reader lib;
  int rc = tt_reader_open(cache, &lib);
  TC_CHECK(rc == 0, "open %s: %s", cache, twincache_strerror(rc));
  if (rc != 0) return;
  twincache_graph *g = lib.graph;
  uint64_t count = twincache_cache_count(lib.cache);
  uint64_t picks[] = {0, 1, count / 3, count - 1};
  for (size_t p = 0; p < sizeof picks / sizeof picks[0]; p++) {
    char idx[32];
    snprintf(idx, sizeof idx, "%llu", (unsigned long long)picks[p]);
    rc = twincache_cache_read_graph(lib.cache, lib.dctx, picks[p], g);
    TC_CHECK(rc == 0, "read graph %s: %s", idx, twincache_strerror(rc));
    char *argv[] = {(char *)inspect, "show", (char *)cache, idx, "--json", NULL};
    tt_result r;
    if (rc != 0 || tt_run(argv, scratch, &r) != 0) continue;
    TC_CHECK(r.status == 0, "show --json %s exited %d: %s", idx, r.status, r.err);
    char err[256] = "";
    tj_value *o = tj_parse(r.out, err, sizeof err);
    TC_CHECK(o != NULL, "show --json %s is not valid JSON: %s", idx, err);
    if (o) check_show_json(o, g);
    tj_free(o);
    tt_result_clear(&r);
  }
  tt_reader_close(&lib);
}

int main(int argc, char **argv) {
  char cache[4096];
  int rc = tt_begin(argc, argv, 50, cache, sizeof cache);
  if (rc) return rc;
  const char *gen = argv[1], *inspect = argv[2], *scratch = argv[3];
  check_cache(inspect, cache, scratch);
  /* the other encoder paths: MLP parameters, standardisation, shifts */
  const char *other[] = {"--mechanism", "mlp", "--standardize", "--intervention", "shift",
                         "--noise", "laplace", NULL};
  char cache2[4200];
  snprintf(cache2, sizeof cache2, "%s/cache-mlp", scratch);
  if (tt_make_cache(gen, cache2, scratch, 20, other) == 0)
    check_cache(inspect, cache2, scratch);
  else
    TC_CHECK(0, "could not create the MLP/standardised/shift cache");
  /* the noise intervention: its name in the JSON and its rule in the text form */
  const char *noise[] = {"--intervention", "noise", "--values", "0.5:2", "--targets", "2", NULL};
  char cache3[4200];
  snprintf(cache3, sizeof cache3, "%s/cache-noise", scratch);
  if (tt_make_cache(gen, cache3, scratch, 20, noise) == 0) {
    check_cache(inspect, cache3, scratch);
    char *a[] = {argv[2], "show", cache3, "3", "--rows", "1", NULL};
    tt_result r;
    if (tt_run(a, scratch, &r) == 0) {
      TC_CHECK(r.status == 0, "show text exited %d: %s", r.status, r.err);
      TC_CHECK(strstr(r.out, "twin world 1: noise(x") != NULL && strstr(r.out, " noise *= ") != NULL,
               "the noise kind in the text form: %s", r.out);
      tt_result_clear(&r);
    }
  } else {
    TC_CHECK(0, "could not create the noise-intervention cache");
  }
  /* the soft intervention: its parameters in the JSON, its new weights in the text */
  const char *soft[] = {"--intervention", "soft", "--targets", "3", "--nodes", "5:8", "--edge-prob", "0.6", NULL};
  char cache4[4200];
  snprintf(cache4, sizeof cache4, "%s/cache-soft", scratch);
  if (tt_make_cache(gen, cache4, scratch, 20, soft) == 0) {
    check_cache(inspect, cache4, scratch);
    char *a[] = {argv[2], "show", cache4, "4", "--rows", "1", NULL};
    tt_result r;
    if (tt_run(a, scratch, &r) == 0) {
      TC_CHECK(r.status == 0, "show text exited %d: %s", r.status, r.err);
      TC_CHECK(strstr(r.out, "new weights:") != NULL && strstr(r.out, "new mechanism") != NULL,
               "the soft kind in the text form: %s", r.out);
      tt_result_clear(&r);
    }
  } else {
    TC_CHECK(0, "could not create the soft-intervention cache");
  }

  /* text form: runs, names the graph, prints R rows per world */
  {
    char *a[] = {argv[2], "show", cache, "7", "--rows", "2", NULL};
    tt_result r;
    if (tt_run(a, scratch, &r) == 0) {
      TC_CHECK(r.status == 0, "show text exited %d: %s", r.status, r.err);
      TC_CHECK(strstr(r.out, "graph 7:") != NULL, "text names the graph: %s", r.out);
      TC_CHECK(strstr(r.out, "base world (first 2 of 16 rows)") != NULL, "rows: %s", r.out);
      tt_result_clear(&r);
    }
  }
  /* bad index / bad value: exit 2, one line, saying the range */
  {
    const char *bad[][3] = {{"50", NULL, NULL}, {"abc", NULL, NULL}, {"3", "--rows", "x"},
                            {"-1", NULL, NULL}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
      char *a[] = {argv[2], "show", cache, (char *)bad[i][0], (char *)bad[i][1],
                   (char *)bad[i][2], NULL};
      tt_result r;
      if (tt_run(a, scratch, &r) != 0) continue;
      TC_CHECK(r.status == 2, "show %s exited %d, want 2", bad[i][0], r.status);
      TC_CHECK(tt_count_lines(r.err) == 1, "one line on stderr: '%s'", r.err);
      if (!bad[i][1]) TC_CHECK(strstr(r.err, "0..49") != NULL, "names the range: %s", r.err);
      tt_result_clear(&r);
    }
  }
  if (tc_test_failures() == 0) tt_remove_tree(scratch);
  printf("%s: %d failures\n", argv[0], tc_test_failures());
  return tc_test_failures() ? 1 : 0;
}
