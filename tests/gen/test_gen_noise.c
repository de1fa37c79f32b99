/* test_gen_noise — the noise families, read back from real caches: on
 * graphs without edges every sample is noise_scale * e with scale 1, so the
 * base world's moments are the family's: Gaussian (mean 0, var 1), Laplace
 * (var 2, E|e| = 1), uniform on [-1, 1) (var 1/3), Gumbel (mean 0.5772 =
 * Euler's gamma, var pi^2/6, median -ln ln 2), Cauchy (no moments: median 0,
 * P(|e| < 1) = 1/2, P(|e| > 10) = 1 - 2 atan(10)/pi). Then, with edges and
 * shift interventions, every twin world keeps the base world's bits outside
 * the target and its descendants and changes the target; the caches are
 * byte-identical across thread counts.
 * usage: test_gen_noise TWINCACHE_GEN TMPDIR */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_test_util.h"

static const char *gen;
static char tmp[4096];

static void build(const char *name, const char *threads, const char *const *opts) {
  char dir[4600], err[8192];
  snprintf(dir, sizeof dir, "%s/%s", tmp, name);
  tg_rmrf(dir);
  const char *args[64] = {"--out", dir, "--threads", threads, "--quiet"};
  int n = 5;
  for (int i = 0; opts[i]; i++) args[n++] = opts[i];
  args[n] = NULL;
  int rc = tg_run(gen, args, err, sizeof err);
  TC_REQUIRE(rc == 0, "%s: exit %d: %s", name, rc, err);
}

typedef struct draws {
  double n, sum, sq, abs_sum, below0, in1, out10, below_med, min, max;
  double median; /* the family's median, for below_med */
} draws;

static void collect(const twincache_graph *g, const twincache_dims *dims, void *user) {
  (void)dims;
  draws *d = user;
  for (uint32_t s = 0; s < g->n_samples; s++)
    for (uint32_t j = 0; j < g->n_nodes; j++) {
      double e = g->base[(size_t)s * g->ld + j];
      d->n++, d->sum += e, d->sq += e * e, d->abs_sum += fabs(e);
      d->below0 += e < 0, d->in1 += fabs(e) < 1, d->out10 += fabs(e) > 10, d->below_med += e < d->median;
      if (e < d->min) d->min = e;
      if (e > d->max) d->max = e;
    }
}

static draws sample(const char *noise, double median) {
  char dir[4600];
  const char *opts[] = {"--noise", noise, "--noise-scale", "1:1", "--edge-prob", "0", "--nodes", "5:5",
                        "--samples", "256", "--graphs", "200", "--targets", "1", NULL};
  build(noise, "2", opts);
  snprintf(dir, sizeof dir, "%s/%s", tmp, noise);
  draws d;
  memset(&d, 0, sizeof d);
  d.median = median, d.min = INFINITY, d.max = -INFINITY;
  tg_for_each_graph(dir, collect, &d);
  TC_REQUIRE(d.n == 200.0 * 5 * 256);
  double mean = d.sum / d.n, var = d.sq / d.n - mean * mean;
  printf("%-8s mean %+.4f var %.4f E|e| %.4f P(e<median) %.4f P(|e|<1) %.4f P(|e|>10) %.4f\n", noise, mean,
         var, d.abs_sum / d.n, d.below_med / d.n, d.in1 / d.n, d.out10 / d.n);
  return d;
}

/* |got - want| within k standard errors of a proportion p over n draws */
static int near_p(double got, double p, double n) { return fabs(got - p) < 5 * sqrt(p * (1 - p) / n); }

static void moments(void) {
  draws d = sample("gauss", 0.0);
  double n = d.n, m = d.sum / n, v = d.sq / n - m * m;
  TC_CHECK(fabs(m) < 0.01 && fabs(v - 1.0) < 0.015 && near_p(d.below_med / n, 0.5, n));
  d = sample("laplace", 0.0);
  m = d.sum / n, v = d.sq / n - m * m;
  TC_CHECK(fabs(m) < 0.015 && fabs(v - 2.0) < 0.05 && fabs(d.abs_sum / n - 1.0) < 0.01);
  d = sample("uniform", 0.0);
  m = d.sum / n, v = d.sq / n - m * m;
  TC_CHECK(fabs(m) < 0.005 && fabs(v - 1.0 / 3.0) < 0.005 && d.min >= -1.0 && d.max < 1.0);
  d = sample("gumbel", -log(log(2.0)));
  m = d.sum / n, v = d.sq / n - m * m;
  TC_CHECK(fabs(m - 0.5772156649) < 0.012 && fabs(v - M_PI * M_PI / 6.0) < 0.04);
  TC_CHECK(near_p(d.below_med / n, 0.5, n));
  d = sample("cauchy", 0.0);
  TC_CHECK(near_p(d.below_med / n, 0.5, n) && near_p(d.in1 / n, 0.5, n));
  TC_CHECK(near_p(d.out10 / n, 1.0 - 2.0 * atan(10.0) / M_PI, n));
  TC_CHECK(isfinite(d.min) && isfinite(d.max));
}

typedef struct twin_check {
  uint64_t worlds, changed_target, bad;
} twin_check;

static void check_twins(const twincache_graph *g, const twincache_dims *dims, void *user) {
  (void)dims;
  twin_check *t = user;
  uint8_t desc[TWINCACHE_MAX_NODES];
  for (uint32_t k = 0; k < g->n_inter; k++) {
    uint32_t tg = g->target[k];
    twincache_graph_descendants(g->adj, g->n_nodes, g->ld_adj, tg, desc);
    const float *w = g->inter + (size_t)k * g->n_samples * g->ld;
    int target_moved = 0;
    for (uint32_t s = 0; s < g->n_samples; s++)
      for (uint32_t j = 0; j < g->n_nodes; j++) {
        const float *a = &g->base[(size_t)s * g->ld + j], *b = &w[(size_t)s * g->ld + j];
        if (!desc[j]) t->bad += memcmp(a, b, sizeof *a) != 0; /* bit for bit */
        else if (j == tg) target_moved |= memcmp(a, b, sizeof *a) != 0;
      }
    t->worlds++;
    t->changed_target += target_moved;
  }
}

static void twins(void) {
  const char *names[2] = {"cauchy", "gumbel"};
  for (int f = 0; f < 2; f++) {
    const char *opts[] = {"--noise", names[f], "--intervention", "shift", "--graphs", "300", "--chunk-graphs",
                          "8", "--samples", "16", NULL};
    char a[64], b[64], da[4600], db[4600], why[512];
    snprintf(a, sizeof a, "twin_%s_t1", names[f]);
    snprintf(b, sizeof b, "twin_%s_t2", names[f]);
    build(a, "1", opts);
    build(b, "2", opts);
    snprintf(da, sizeof da, "%s/%s", tmp, a);
    snprintf(db, sizeof db, "%s/%s", tmp, b);
    TC_CHECK(tg_cache_compare(da, db, why, sizeof why) == 0, "%s: %s", names[f], why);
    twin_check t = {0};
    tg_for_each_graph(da, check_twins, &t);
    printf("%s: %llu twin worlds, target changed in %llu, non-descendant bits differ in %llu\n", names[f],
           (unsigned long long)t.worlds, (unsigned long long)t.changed_target, (unsigned long long)t.bad);
    TC_CHECK(t.worlds > 1000 && t.bad == 0 && t.changed_target == t.worlds);
    tg_rmrf(da);
    tg_rmrf(db);
  }
}

int main(int argc, char **argv) {
  TC_REQUIRE(argc == 3, "usage: %s TWINCACHE_GEN TMPDIR", argv[0]);
  gen = argv[1];
  snprintf(tmp, sizeof tmp, "%s/gen_noise", argv[2]);
  tg_mkdir(argv[2]);
  tg_mkdir(tmp);
  moments();
  twins();
  const char *names[] = {"gauss", "laplace", "uniform", "gumbel", "cauchy", NULL};
  char dir[4600];
  for (int i = 0; names[i]; i++) {
    snprintf(dir, sizeof dir, "%s/%s", tmp, names[i]);
    tg_rmrf(dir);
  }
  return tc_test_finish("test_gen_noise");
}
