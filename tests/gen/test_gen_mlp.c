/* test_gen_mlp — how the generator draws the MLP (FORMAT.md 3.6):
 *  - the default pairs units h, h+1 (h even) into bumps: the same input row,
 *    b1[h+1] = b1[h] - W*A in float, w2[h+1] = -w2[h]; an odd H's last unit
 *    stands alone; the unpaired draws have the documented spreads
 *    (W1 ~ N(0, A^2/|pa|), b1 ~ N(0, (B*A)^2), w2 ~ N(0, G^2/H));
 *  - --mlp-bias 0.5 --mlp-bump 0 --mlp-gain 1 is the draw from before those
 *    options, bit for bit: a hash of the decoded parameters and samples of a
 *    small cache equals the one of the same cache built by the generator
 *    before them (K_FIRST_DRAW), and its config names none of them;
 *  - the default's config names all three, so a cache of the first draw is
 *    not extended with the default's, nor with another gain;
 *  - out-of-range values are refused as usage errors.
 * usage: test_gen_mlp TWINCACHE_GEN TMPDIR
 *        test_gen_mlp --hash CACHE  (prints the hash of CACHE: how
 *        K_FIRST_DRAW was taken, from a cache built on main at 231147b with
 *        FIRST_FLAGS minus the three options) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_test_util.h"
#include "tc_common.h"

#define FIRST_FLAGS "--graphs", "60", "--nodes", "3:9", "--samples", "16", "--seed", "11", \
                    "--mechanism", "mlp", "--mlp-hidden", "5", "--targets", "2", "--quiet"
static const uint64_t K_FIRST_DRAW = UINT64_C(0x092489bae30bb2c1); /* main at 231147b, --hash */

/* FNV-1a over every graph's MLP block (n, H*n+2H) and base samples (S, n). */
static void hash_graph(const twincache_graph *g, const twincache_dims *dims, void *user) {
  (void)dims;
  uint64_t *h = user;
  uint32_t n = g->n_nodes, H = g->n_hidden;
  *h = tc_fnv1a64_update(*h, g->mlp, (size_t)n * (H * n + 2 * H) * sizeof(float));
  for (uint32_t s = 0; s < g->n_samples; s++)
    *h = tc_fnv1a64_update(*h, g->base + (size_t)s * g->ld, n * sizeof(float));
}

static uint64_t cache_hash(const char *dir) {
  uint64_t h = TC_FNV1A64_BASIS;
  TC_REQUIRE(tg_for_each_graph(dir, hash_graph, &h) > 0, "%s: no graphs", dir);
  return h;
}

typedef struct {
  double A, B, G, W;   /* the cache's options */
  uint64_t pairs, alone, nodes_pa;
  double w1_sq, b1_sq, w2_sq; /* sums over the drawn (unpaired-first) units */
  uint64_t n_w1, n_b1, n_w2;
} draw_ctx;

static void check_draw(const twincache_graph *g, const twincache_dims *dims, void *user) {
  (void)dims;
  draw_ctx *cx = user;
  uint32_t n = g->n_nodes, H = g->n_hidden, stride = H * n + 2 * H;
  unsigned long long id = (unsigned long long)g->index;
  TC_REQUIRE(g->mechanism == TWINCACHE_MECH_MLP && H >= 1, "graph %llu: not an MLP frame", id);
  for (uint32_t j = 0; j < n; j++) {
    const float *blk = g->mlp + (size_t)j * stride, *b1 = blk + (size_t)H * n, *w2 = b1 + H;
    uint32_t npa = 0;
    for (uint32_t i = 0; i < n; i++) npa += g->adj[(size_t)i * g->ld_adj + j] != 0;
    for (uint32_t h = 0; h < H; h++) {
      int second = cx->W > 0 && (h & 1u) && h < (H & ~1u);
      if (second) {
        for (uint32_t i = 0; i < n; i++)
          TC_REQUIRE(blk[(size_t)h * n + i] == blk[(size_t)(h - 1) * n + i],
                     "graph %llu node %u: unit %u's input row is not unit %u's", id, j, h, h - 1);
        TC_REQUIRE(b1[h] == (float)((double)b1[h - 1] - cx->W * cx->A), "graph %llu node %u: b1[%u] %g, b1[%u] %g",
                   id, j, h, (double)b1[h], h - 1, (double)b1[h - 1]);
        TC_REQUIRE(w2[h] == -w2[h - 1], "graph %llu node %u: w2[%u] is not -w2[%u]", id, j, h, h - 1);
        cx->pairs++;
        continue;
      }
      if (h + 1 == H && (H & 1u)) cx->alone++;
      if (npa)
        for (uint32_t i = 0; i < n; i++)
          if (g->adj[(size_t)i * g->ld_adj + j]) cx->w1_sq += (double)blk[(size_t)h * n + i] * blk[(size_t)h * n + i] * npa, cx->n_w1++;
      cx->b1_sq += (double)b1[h] * b1[h], cx->n_b1++;
      cx->w2_sq += (double)w2[h] * w2[h] * H, cx->n_w2++;
    }
    cx->nodes_pa += npa != 0;
  }
}

/* Sample variance of N(0, want) from n draws is within 6 standard errors
 * (sqrt(2/n) relative) of want. */
static void check_spread(const char *what, double sum_sq, uint64_t n, double want) {
  double got = sum_sq / (double)n, tol = 6.0 * want * sqrt(2.0 / (double)n);
  printf("%s: mean square %.4f over %llu draws, want %.4f +- %.4f\n", what, got, (unsigned long long)n, want, tol);
  TC_REQUIRE(n > 500 && fabs(got - want) < tol, "%s: %g, want %g", what, got, want);
}

static void build(const char *gen, const char *dir, const char *const *extra) {
  const char *args[40];
  int k = 0;
  args[k++] = "--out", args[k++] = dir, args[k++] = "--threads", args[k++] = "2";
  for (int i = 0; extra[i]; i++) args[k++] = extra[i];
  args[k] = NULL;
  char err[512] = "";
  tg_rmrf(dir);
  int rc = tg_run(gen, args, err, sizeof err);
  TC_REQUIRE(rc == 0, "twincache-gen exited %d: %s", rc, err);
}

static int config_has(const char *dir, const char *key) {
  char *cfg = tg_meta(dir, TWINCACHE_META_CONFIG, NULL);
  TC_REQUIRE(cfg, "%s: no config", dir);
  int has = strstr(cfg, key) != NULL;
  free(cfg);
  return has;
}

int main(int argc, char **argv) {
  if (argc == 3 && !strcmp(argv[1], "--hash")) {
    printf("UINT64_C(0x%016llx)\n", (unsigned long long)cache_hash(argv[2]));
    return 0;
  }
  if (argc != 3) {
    fprintf(stderr, "usage: test_gen_mlp TWINCACHE_GEN TMPDIR | --hash CACHE\n");
    return 2;
  }
  const char *gen = argv[1];
  char dir[4096], dir2[4200];
  snprintf(dir, sizeof dir, "%s/gen_mlp", argv[2]);
  snprintf(dir2, sizeof dir2, "%s/gen_mlp_2", argv[2]);
  TC_REQUIRE(tg_mkdir(argv[2]), "cannot create %s", argv[2]);

  /* the default draw, an odd H so one unit per node stands alone */
  const char *def[] = {"--graphs", "200", "--nodes", "4:12", "--samples", "4", "--mechanism", "mlp",
                       "--mlp-hidden", "7", "--quiet", NULL};
  build(gen, dir, def);
  draw_ctx d = {.A = 4, .B = 2, .G = 3, .W = 0.5};
  TC_REQUIRE(tg_for_each_graph(dir, check_draw, &d) == 200);
  printf("default: %llu pairs, %llu lone units\n", (unsigned long long)d.pairs, (unsigned long long)d.alone);
  TC_REQUIRE(d.pairs == 3 * (d.alone) && d.alone > 1000);
  check_spread("W1 * sqrt|pa|", d.w1_sq, d.n_w1, d.A * d.A);
  check_spread("b1", d.b1_sq, d.n_b1, d.B * d.A * d.B * d.A);
  check_spread("w2 * sqrt H", d.w2_sq, d.n_w2, d.G * d.G);
  TC_REQUIRE(config_has(dir, "\"mlp_bias\":2,") && config_has(dir, "\"mlp_gain\":3,") &&
             config_has(dir, "\"mlp_bump\":0.5"));

  /* other options reach the draw */
  const char *other[] = {"--graphs", "200", "--nodes", "4:12", "--samples", "4", "--mechanism", "mlp",
                         "--mlp-hidden", "6", "--mlp-scale", "2", "--mlp-bias", "1", "--mlp-gain", "0.5",
                         "--mlp-bump", "1.5", "--quiet", NULL};
  build(gen, dir2, other);
  draw_ctx o = {.A = 2, .B = 1, .G = 0.5, .W = 1.5};
  TC_REQUIRE(tg_for_each_graph(dir2, check_draw, &o) == 200);
  TC_REQUIRE(o.pairs > 1000 && o.alone == 0);
  check_spread("W1 * sqrt|pa| (A 2)", o.w1_sq, o.n_w1, o.A * o.A);
  check_spread("b1 (A 2, B 1)", o.b1_sq, o.n_b1, o.B * o.A * o.B * o.A);
  check_spread("w2 * sqrt H (G 0.5)", o.w2_sq, o.n_w2, o.G * o.G);

  /* the first draw: its bytes, and a config without the three keys */
  const char *first[] = {FIRST_FLAGS, "--mlp-bias", "0.5", "--mlp-bump", "0", "--mlp-gain", "1", NULL};
  build(gen, dir2, first);
  uint64_t h = cache_hash(dir2);
  printf("first draw: hash %016llx, want %016llx\n", (unsigned long long)h, (unsigned long long)K_FIRST_DRAW);
  TC_REQUIRE(h == K_FIRST_DRAW, "the first MLP draw changed");
  TC_REQUIRE(!config_has(dir2, "mlp_bias") && !config_has(dir2, "mlp_gain") && !config_has(dir2, "mlp_bump"));
  draw_ctx f = {.A = 4, .B = 0.5, .G = 1, .W = 0};
  TC_REQUIRE(tg_for_each_graph(dir2, check_draw, &f) == 60 && f.pairs == 0);

  /* a cache is extended only with its own draw */
  const char *first_more[] = {"--out", dir2, "--graphs", "80", "--nodes", "3:9", "--samples", "16", "--seed", "11",
                              "--mechanism", "mlp", "--mlp-hidden", "5", "--targets", "2", "--quiet", NULL};
  char err[512] = "";
  int rc = tg_run(gen, first_more, err, sizeof err);
  TC_REQUIRE(rc != 0 && strstr(err, "mlp_bias: not in cache"), "extending the first draw with the default: %d %s",
             rc, err);
  const char *gain[] = {"--out", dir, "--graphs", "220", "--nodes", "4:12", "--samples", "4", "--mechanism", "mlp",
                        "--mlp-hidden", "7", "--mlp-gain", "2", "--quiet", NULL};
  rc = tg_run(gen, gain, err, sizeof err);
  TC_REQUIRE(rc != 0 && strstr(err, "mlp_gain: cache 3, now 2"), "another gain: %d %s", rc, err);
  /* out of range: refused as usage errors, naming the flag */
  static const char *const bad[][2] = {{"--mlp-gain", "0"}, {"--mlp-bias", "-1"}, {"--mlp-bump", "nan"},
                                       {"--mlp-gain", "1001"}};
  for (int i = 0; i < 4; i++) {
    const char *a[] = {"--out", dir, "--mechanism", "mlp", bad[i][0], bad[i][1], "--quiet", NULL};
    rc = tg_run(gen, a, err, sizeof err);
    TC_REQUIRE(rc == 2 && strstr(err, bad[i][0]), "%s %s: exit %d: %s", bad[i][0], bad[i][1], rc, err);
  }
  tg_rmrf(dir);
  tg_rmrf(dir2);
  printf("test_gen_mlp: ok\n");
  return 0;
}
