/* worlds_bench.c — what independent worlds (twincache-gen --worlds
 * independent, FORMAT.md 3.9) cost against twin worlds, on the default
 * workload (linear Gaussian SCMs, 5..10 nodes, one do() per node, S = 64):
 *  - stored: frame bytes of a cache of G graphs, each kind; the bound is
 *    (K+1)x the twin cache (every column of every world stored, where a twin
 *    stores only the changed ones), and raw float32 is the ceiling of both;
 *  - fresh: graphs per CPU-second of the loader's fresh worlds (one decode
 *    thread, S rows, `epochs` epochs) from an SCM-only cache of each kind:
 *    an independent world draws its own noise (n*S more draws) and
 *    recomputes every node, a twin world only the target's descendants.
 * Prints one table; a program, not a test (bench/README: run on an idle
 * machine). usage: bench_worlds [GRAPHS [EPOCHS]] (default 2000, 5) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tc_bench_dir.h"
#include "tc_common.h"
#include "tc_gen.h"
#include "twincache_cache.h"
#include "twincache_loader.h"

static double process_cpu_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Generates the default workload's cache of `graphs` graphs into dir. */
static int make_cache(const char *dir, uint64_t graphs, uint32_t samples, int worlds) {
  tc_gen_config c;
  tc_gen_config_default(&c);
  c.out_dir = dir;
  c.graphs = graphs;
  c.samples = samples;
  c.worlds = worlds;
  c.threads = 2;
  c.quiet = 1;
  tc_gen_result res;
  int rc = tc_gen_run(&c, NULL, &res);
  if (rc != TWINCACHE_OK) fprintf(stderr, "bench_worlds: generate %s: %s\n", dir, twincache_last_error());
  return rc;
}

static int frame_bytes(const char *dir, uint64_t *frames, uint64_t *raw) {
  twincache_cache *c = NULL;
  int rc = twincache_cache_open(dir, &c);
  if (rc != TWINCACHE_OK) return rc;
  *frames = twincache_cache_stats(c)->frame_bytes;
  *raw = twincache_cache_stats(c)->raw_bytes;
  twincache_cache_close(c);
  return TWINCACHE_OK;
}

/* Graph by graph: the largest independent/twin frame ratio over (K+1), and
 * the mean K+1. */
static int per_graph_bound(const char *twin, const char *indep, uint64_t graphs, double *worst, double *mean_k1) {
  twincache_cache *ct = NULL, *ci = NULL;
  int rc = twincache_cache_open(twin, &ct);
  if (!rc) rc = twincache_cache_open(indep, &ci);
  *worst = 0;
  *mean_k1 = 0;
  for (uint64_t i = 0; i < graphs && !rc; i++) {
    void *ft = NULL, *fi = NULL;
    size_t zt = 0, zi = 0;
    uint32_t k = 0;
    rc = twincache_cache_read_frame(ct, i, &ft, &zt);
    if (!rc) rc = twincache_cache_read_frame(ci, i, &fi, &zi);
    if (!rc) rc = twincache_frame_peek(ft, zt, NULL, NULL, NULL, &k, NULL);
    if (!rc) {
      double r = (double)zi / (double)zt / (k + 1.0);
      if (r > *worst) *worst = r;
      *mean_k1 += (k + 1.0) / (double)graphs;
    }
    free(ft);
    free(fi);
  }
  twincache_cache_close(ct);
  twincache_cache_close(ci);
  return rc;
}

/* graphs per CPU-second of fresh worlds of `rows` rows, one decode thread */
static double fresh_rate(const char *dir, uint32_t rows, uint32_t epochs) {
  twincache_loader_options o;
  twincache_loader_options_init(&o);
  o.samples = TWINCACHE_SAMPLES_FRESH;
  o.rows = rows;
  o.threads = 1;
  o.epochs = epochs;
  o.batch_size = 64;
  twincache_loader *l = NULL;
  if (twincache_loader_open(dir, &o, NULL, &l) != TWINCACHE_OK) {
    fprintf(stderr, "bench_worlds: %s: %s\n", dir, twincache_last_error());
    return 0;
  }
  twincache_batch *b;
  uint64_t graphs = 0;
  double t0 = process_cpu_seconds();
  while (twincache_loader_next(l, &b) == TWINCACHE_OK) {
    graphs += b->n_graphs;
    twincache_loader_release(l, b);
  }
  double t = process_cpu_seconds() - t0;
  twincache_loader_close(l);
  return t > 0 ? (double)graphs / t : 0;
}

int main(int argc, char **argv) {
  uint64_t graphs = argc > 1 ? strtoull(argv[1], NULL, 10) : 2000;
  uint32_t epochs = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 5;
  if (graphs == 0 || epochs == 0) {
    fprintf(stderr, "usage: bench_worlds [GRAPHS [EPOCHS]]  (both >= 1)\n");
    return 2;
  }
  char root[] = "/tmp/twincache-bench-worlds-XXXXXX";
  if (!mkdtemp(root)) {
    perror("bench_worlds: mkdtemp");
    return 1;
  }
  static const char *const names[2] = {"twin", "independent"};
  char dir[2][2][512]; /* [kind][stored, scm-only] */
  uint64_t fb[2] = {0}, raw[2] = {0};
  double rate[2] = {0}, worst = 0, mean_k1 = 0;
  int rc = 0;
  for (int w = 0; w < 2 && !rc; w++) {
    snprintf(dir[w][0], sizeof dir[w][0], "%s/%s", root, names[w]);
    snprintf(dir[w][1], sizeof dir[w][1], "%s/%s-scm", root, names[w]);
    rc = make_cache(dir[w][0], graphs, 64, w) || make_cache(dir[w][1], graphs, 0, w) ||
         frame_bytes(dir[w][0], &fb[w], &raw[w]);
  }
  if (!rc) rc = per_graph_bound(dir[0][0], dir[1][0], graphs, &worst, &mean_k1);
  for (int rep = 0; rep < 2 && !rc; rep++) /* interleaved, best of two: a shared VM's noise */
    for (int w = 0; w < 2; w++) {
      double r = fresh_rate(dir[w][1], 64, epochs);
      if (r > rate[w]) rate[w] = r;
    }
  for (int w = 0; w < 2; w++)
    for (int s = 0; s < 2; s++) bench_remove_cache_dir(dir[w][s]);
  rmdir(root);
  if (rc) return 1;
  printf("worlds bench: %llu graphs, default workload (linear gauss, 5..10 nodes, one do() per node), S = 64\n",
         (unsigned long long)graphs);
  printf("%-12s %14s %10s %12s %22s\n", "worlds", "frame bytes", "per graph", "of raw", "fresh graphs/CPU-s");
  for (int w = 0; w < 2; w++)
    printf("%-12s %14llu %10.0f %12.3f %22.0f\n", names[w], (unsigned long long)fb[w], (double)fb[w] / graphs,
           raw[w] ? (double)fb[w] / raw[w] : 0.0, rate[w]);
  printf("independent / twin: frame bytes %.2fx (mean K+1 = %.2f; per graph at most %.3f of its (K+1)x bound); "
         "fresh graphs/CPU-s %.3f (goal >= 0.85)\n",
         fb[0] ? (double)fb[1] / fb[0] : 0.0, mean_k1, worst, rate[0] > 0 ? rate[1] / rate[0] : 0.0);
  return 0;
}
