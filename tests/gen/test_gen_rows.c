/* test_gen_rows — rows per world (--inter-samples M, FORMAT.md 3.10): world
 * k of a graph with K worlds holds min(S, M/K + [k < M%K]) rows, the base
 * world S; the rows it holds are the first rows of the same cache made
 * without --inter-samples (the noise streams do not change), rows past a
 * count decode to +0.0; twin and independent worlds; 1 and 2 threads write
 * the same bytes; the config names the option and format 5.
 * usage: test_gen_rows TWINCACHE_GEN TMPDIR */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_test_util.h"

#define GRAPHS 40
#define ROWS_S 24
#define INTER_M 30

static const char *gen;
static char tmp[4096];

static void build(const char *name, const char *threads, const char *worlds, int rows) {
  char dir[4600], err[8192];
  snprintf(dir, sizeof dir, "%s/%s", tmp, name);
  tg_rmrf(dir);
  const char *args[32] = {"--out", dir, "--threads", threads, "--graphs", "40", "--samples", "24", "--nodes", "4:7",
                          "--chunk-graphs", "8", "--worlds", worlds, "--quiet"};
  int n = 15;
  if (rows) {
    args[n++] = "--inter-samples";
    args[n++] = "30";
  }
  args[n] = NULL;
  int rc = tg_run(gen, args, err, sizeof err);
  TC_REQUIRE(rc == 0, "%s: exit %d: %s", name, rc, err);
}

/* Every graph's worlds, (1+K, ROWS_S, ld) floats, and its counts. */
typedef struct held {
  uint32_t k, ld, rows[TWINCACHE_MAX_INTER + 1];
  uint8_t flags;
  float *worlds;
} held;

static void keep(const twincache_graph *g, const twincache_dims *d, void *user) {
  held *h = (held *)user + g->index;
  (void)d;
  size_t block = (size_t)g->n_samples * g->ld;
  h->k = g->n_inter;
  h->ld = g->ld;
  h->flags = g->flags;
  memcpy(h->rows, g->world_rows, sizeof(uint32_t) * (g->n_inter + 1));
  h->worlds = malloc(sizeof(float) * block * (1 + g->n_inter));
  TC_REQUIRE(h->worlds);
  memcpy(h->worlds, g->base, sizeof(float) * block);
  memcpy(h->worlds + block, g->inter, sizeof(float) * block * g->n_inter);
}

static void load(const char *name, held *h) {
  char dir[4600];
  snprintf(dir, sizeof dir, "%s/%s", tmp, name);
  memset(h, 0, sizeof(held) * GRAPHS);
  TC_REQUIRE(tg_for_each_graph(dir, keep, h) == GRAPHS, "%s: graphs", name);
}

static void release(held *h) {
  for (int i = 0; i < GRAPHS; i++) free(h[i].worlds);
}

/* The rows cache `r` against the full cache `f`: counts by the rule, the
 * rows held equal to the full draw's, zeros past them. */
static void check(const char *what, const held *r, const held *f) {
  uint32_t unequal = 0;
  for (int i = 0; i < GRAPHS; i++) {
    const held *a = &r[i], *b = &f[i];
    TC_REQUIRE(a->k == b->k && a->k > 0, "%s graph %d: K", what, i);
    TC_REQUIRE(a->rows[0] == ROWS_S, "%s graph %d: the base world holds %u rows, not ROWS_S", what, i, a->rows[0]);
    uint32_t sum = 0, fewer = 0;
    for (uint32_t k = 0; k < a->k; k++) {
      uint32_t want = INTER_M / a->k + (k < INTER_M % a->k);
      if (want > ROWS_S) want = ROWS_S;
      TC_REQUIRE(a->rows[k + 1] == want, "%s graph %d world %u: %u rows, the rule says %u", what, i, k,
                 a->rows[k + 1], want);
      sum += a->rows[k + 1];
      fewer |= want < ROWS_S;
    }
    TC_REQUIRE(sum == INTER_M, "%s graph %d: %u interventional rows, not %d", what, i, sum, INTER_M);
    TC_REQUIRE(!!(a->flags & TWINCACHE_GRAPH_ROWS) == !!fewer, "%s graph %d: the ROWS flag", what, i);
    unequal += fewer;
    size_t block = (size_t)ROWS_S * a->ld;
    for (uint32_t w = 0; w <= a->k; w++)
      for (uint32_t s = 0; s < ROWS_S; s++)
        for (uint32_t j = 0; j < a->ld; j++) {
          float x = a->worlds[w * block + (size_t)s * a->ld + j], y = b->worlds[w * block + (size_t)s * a->ld + j];
          if (s < a->rows[w])
            TC_REQUIRE(memcmp(&x, &y, 4) == 0, "%s graph %d world %u row %u: not the full draw's row", what, i, w, s);
          else
            TC_REQUIRE(x == 0.0f && !signbit(x), "%s graph %d world %u row %u: past its count but not +0.0", what, i,
                       w, s);
        }
  }
  TC_REQUIRE(unequal == GRAPHS, "%s: every graph has fewer rows in a world", what);
}

int main(int argc, char **argv) {
  TC_REQUIRE(argc == 3, "usage: %s TWINCACHE_GEN TMPDIR", argv[0]);
  gen = argv[1];
  snprintf(tmp, sizeof tmp, "%s/gen_rows", argv[2]);
  tg_rmrf(tmp);
  TC_REQUIRE(tg_mkdir(tmp), "mkdir %s", tmp);
  static held r[GRAPHS], f[GRAPHS];
  const char *kinds[] = {"twin", "independent"};
  for (int q = 0; q < 2; q++) {
    build("rows_t1", "1", kinds[q], 1);
    build("rows_t2", "2", kinds[q], 1);
    build("full", "2", kinds[q], 0);
    char da[4600], db[4600], why[512];
    snprintf(da, sizeof da, "%s/rows_t1", tmp);
    snprintf(db, sizeof db, "%s/rows_t2", tmp);
    TC_REQUIRE(tg_cache_compare(da, db, why, sizeof why) == 0, "%s: 1 vs 2 threads: %s", kinds[q], why);
    char *cfg = tg_meta(da, "config", NULL);
    TC_REQUIRE(cfg && strstr(cfg, "\"inter_samples\":30") && strstr(cfg, "\"format_version\":5"),
               "%s: the config names --inter-samples and format 5: %s", kinds[q], cfg ? cfg : "(none)");
    free(cfg);
    load("rows_t1", r);
    load("full", f);
    check(kinds[q], r, f);
    release(r);
    release(f);
  }
  tg_rmrf(tmp);
  puts("test_gen_rows: ok");
  return 0;
}
