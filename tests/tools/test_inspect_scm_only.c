/* test_inspect_scm_only.c — SCM-only caches (twincache-gen --samples 0)
 * round-trip through gen, inspect and the loader.
 *
 *  - the frames hold the same graphs, SCMs and interventions as a cache of
 *    the same options with samples (the parameter draws do not depend on S);
 *  - inspect info / verify / stats / show exit 0 and say there are no
 *    samples; show --fresh-rows S prints fresh worlds of S rows (text and
 *    JSON), --fresh-rows 0 and --epoch without --fresh-rows are usage errors;
 *  - export refuses an SCM-only graph in every format (exit 1, pointing to
 *    show --fresh-rows) and writes nothing;
 *  - the loader refuses stored mode with a message naming the SCM-only
 *    cache, and rows 0 or beyond the format in fresh mode, nothing opened;
 *    fresh mode streams every graph.
 * usage: test_inspect_scm_only GEN INSPECT SCRATCH */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inspect_test.h"

static int gen(const char *bin, const char *dir, const char *scratch, const char *samples,
               const char *mech) {
  char *argv[] = {(char *)bin, "--out", (char *)dir, "--graphs", "40", "--seed", "1", "--nodes", "3:6",
                  "--samples", (char *)samples, "--chunk-graphs", "16", "--mechanism", (char *)mech,
                  "--standardize", "--quiet", NULL};
  tt_result r;
  if (tt_run(argv, scratch, &r) != 0) return -1;
  int st = r.status;
  if (st) fprintf(stderr, "gen failed (%d): %s", st, r.err);
  tt_result_clear(&r);
  return st;
}

/* Runs INSPECT with the arguments; checks the exit status and that stdout
 * (or stderr for a failure) holds `want` (NULL: anything). */
static void inspect(const char *bin, const char *scratch, int status, const char *want,
                    const char *const *args) {
  char *argv[16] = {(char *)bin};
  int n = 1;
  for (; args[n - 1] && n < 15; n++) argv[n] = (char *)args[n - 1];
  argv[n] = NULL;
  tt_result r;
  TC_REQUIRE(tt_run(argv, scratch, &r) == 0);
  TC_CHECK(r.status == status, "inspect %s %s: exit %d, want %d (%s)", args[0], args[2] ? args[2] : "",
           r.status, status, r.err);
  const char *text = status ? r.err : r.out;
  if (want) TC_CHECK(strstr(text, want) != NULL, "inspect %s: '%s' not in its output:\n%s", args[0], want, text);
  tt_result_clear(&r);
}

/* The SCM of every graph of the two caches is the same. */
static void same_scms(const char *a_path, const char *b_path) {
  tt_reader a, b;
  TC_REQUIRE(tt_reader_open(a_path, &a) == TWINCACHE_OK);
  TC_REQUIRE(tt_reader_open(b_path, &b) == TWINCACHE_OK);
  uint64_t count = twincache_cache_count(a.cache), bad = 0;
  TC_CHECK(count == 40 && twincache_cache_count(b.cache) == count);
  for (uint64_t i = 0; i < count; i++) {
    TC_REQUIRE(twincache_cache_read_graph(a.cache, a.dctx, i, a.graph) == TWINCACHE_OK);
    TC_REQUIRE(twincache_cache_read_graph(b.cache, b.dctx, i, b.graph) == TWINCACHE_OK);
    const twincache_graph *x = a.graph, *y = b.graph;
    uint32_t n = x->n_nodes, k = x->n_inter, h = x->n_hidden;
    if (n != y->n_nodes || k != y->n_inter || h != y->n_hidden || x->flags != y->flags) {
      bad++;
      continue;
    }
    for (uint32_t r = 0; r < n; r++) {
      bad += memcmp(x->adj + (size_t)r * x->ld_adj, y->adj + (size_t)r * y->ld_adj, n) != 0;
      bad += memcmp(x->weight + (size_t)r * x->ld_adj, y->weight + (size_t)r * y->ld_adj, n * sizeof(float)) != 0;
    }
    bad += memcmp(x->noise_scale, y->noise_scale, n * sizeof(float)) != 0;
    if (h) bad += memcmp(x->mlp, y->mlp, (size_t)n * (h * n + 2 * h) * sizeof(float)) != 0;
    bad += memcmp(x->target, y->target, k * sizeof(uint16_t)) != 0;
    bad += memcmp(x->kind, y->kind, k) != 0;
    bad += memcmp(x->value, y->value, k * sizeof(float)) != 0;
  }
  TC_CHECK(bad == 0, "%llu differences between the SCMs of %s and %s", (unsigned long long)bad, a_path, b_path);
  tt_reader_close(&a);
  tt_reader_close(&b);
}

static void loader_checks(const char *cache) {
  twincache_loader_options o;
  twincache_loader *l = (twincache_loader *)1;
  twincache_loader_options_init(&o);
  TC_CHECK_RC(twincache_loader_open(cache, &o, NULL, &l), TWINCACHE_EINVAL);
  TC_CHECK(l == NULL);
  TC_CHECK(strstr(twincache_last_error(), "SCMs only") != NULL, "stored mode: '%s'",
           twincache_last_error());
  o.samples = TWINCACHE_SAMPLES_FRESH;
  o.rows = 0;
  TC_CHECK_RC(twincache_loader_open(cache, &o, NULL, &l), TWINCACHE_EINVAL);
  o.rows = TWINCACHE_MAX_SAMPLES + 1;
  TC_CHECK_RC(twincache_loader_open(cache, &o, NULL, &l), TWINCACHE_EINVAL);
  TC_CHECK(strstr(twincache_last_error(), "rows") != NULL);
  o.rows = 9;
  o.batch_size = 7;
  o.threads = 2;
  TC_REQUIRE(twincache_loader_open(cache, &o, NULL, &l) == TWINCACHE_OK, "%s", twincache_last_error());
  TC_CHECK(twincache_loader_layout(l)->samples == 9);
  twincache_batch *b;
  uint64_t graphs = 0;
  while (twincache_loader_next(l, &b) == TWINCACHE_OK) {
    graphs += b->n_graphs;
    twincache_loader_release(l, b);
  }
  TC_CHECK(graphs == 40, "fresh mode read %llu graphs of 40", (unsigned long long)graphs);
  twincache_loader_close(l);
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s GEN INSPECT SCRATCH\n", argv[0]);
    return 2;
  }
  const char *gen_bin = argv[1], *insp = argv[2], *scratch = argv[3];
  TC_REQUIRE(tt_scratch_init(scratch) == 0);
  char stored[4096], only[4096], only_mlp[4096], stored_mlp[4096];
  snprintf(stored, sizeof stored, "%s/stored", scratch);
  snprintf(only, sizeof only, "%s/scm-only", scratch);
  snprintf(stored_mlp, sizeof stored_mlp, "%s/stored-mlp", scratch);
  snprintf(only_mlp, sizeof only_mlp, "%s/scm-only-mlp", scratch);
  TC_REQUIRE(gen(gen_bin, stored, scratch, "16", "linear") == 0);
  TC_REQUIRE(gen(gen_bin, only, scratch, "0", "linear") == 0);
  TC_REQUIRE(gen(gen_bin, stored_mlp, scratch, "16", "mlp") == 0);
  TC_REQUIRE(gen(gen_bin, only_mlp, scratch, "0", "mlp") == 0);
  same_scms(only, stored);
  same_scms(only_mlp, stored_mlp);

  inspect(insp, scratch, 0, "SCM only", (const char *const[]){"info", only, NULL});
  inspect(insp, scratch, 0, "all 40 graphs", (const char *const[]){"verify", only, NULL});
  inspect(insp, scratch, 0, "none stored", (const char *const[]){"stats", only, NULL});
  inspect(insp, scratch, 0, "no samples stored", (const char *const[]){"show", only, "3", NULL});
  inspect(insp, scratch, 0, "... 4 more rows",
          (const char *const[]){"show", only_mlp, "3", "--fresh-rows", "7", "--rows", "3", NULL});
  inspect(insp, scratch, 0, "\"n_samples\": 7",
          (const char *const[]){"show", only, "5", "--fresh-rows", "7", "--json", NULL});
  inspect(insp, scratch, 0, "\"n_samples\": 7",
          (const char *const[]){"show", only, "5", "--fresh-rows", "7", "--epoch", "3", "--json", NULL});
  inspect(insp, scratch, 2, "--fresh-rows", (const char *const[]){"show", only, "5", "--fresh-rows", "0", NULL});
  inspect(insp, scratch, 2, "--epoch", (const char *const[]){"show", only, "5", "--epoch", "1", NULL});
  /* export has no stored worlds to write: it refuses, every format, and
   * writes nothing (it wrote empty datasets and exited 0) */
  static const char *const formats[] = {"csv", "npy", "dcdi", "causica"};
  char out[4200], probe[4300];
  for (int f = 0; f < 4; f++) {
    snprintf(out, sizeof out, "%s/export-%s", scratch, formats[f]);
    inspect(insp, scratch, 1, "--fresh-rows",
            (const char *const[]){"export", only, "2", "--format", formats[f], "--out", out, NULL});
    snprintf(probe, sizeof probe, f < 2 ? "%s_base.%s" : "%s", out, formats[f]);
    FILE *pf = fopen(probe, "r");
    TC_CHECK(pf == NULL, "export --format %s of an SCM-only cache left %s behind", formats[f], probe);
    if (pf) fclose(pf);
  }
  loader_checks(only);
  loader_checks(only_mlp);
  return tc_test_finish("test_inspect_scm_only");
}
