/* test_gen_determinism — the same command with --threads 1, 2 and 8 writes
 * byte-identical caches (graphs and meta), for several option sets; extending
 * a cache with a larger --graphs (partial last chunk rewritten) gives the same
 * bytes as building it in one go; a different seed gives different graphs.
 * usage: test_gen_determinism TWINCACHE_GEN TMPDIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_test_util.h"

static const char *gen;
static char tmp[4096];

static void build(const char *name, const char *threads, const char *graphs, const char *const *opts) {
  char dir[4600], err[8192];
  snprintf(dir, sizeof dir, "%s/%s", tmp, name);
  const char *args[64] = {"--out", dir, "--threads", threads, "--graphs", graphs, "--quiet"};
  int n = 7;
  for (int i = 0; opts[i]; i++) args[n++] = opts[i];
  args[n] = NULL;
  int rc = tg_run(gen, args, err, sizeof err);
  TC_REQUIRE(rc == 0, "%s: exit %d: %s", name, rc, err);
}

static void same(const char *a, const char *b) {
  char da[4600], db[4600], why[512];
  snprintf(da, sizeof da, "%s/%s", tmp, a);
  snprintf(db, sizeof db, "%s/%s", tmp, b);
  TC_REQUIRE(tg_cache_compare(da, db, why, sizeof why) == 0, "%s vs %s: %s", a, b, why);
}

int main(int argc, char **argv) {
  TC_REQUIRE(argc == 3, "usage: %s TWINCACHE_GEN TMPDIR", argv[0]);
  gen = argv[1];
  snprintf(tmp, sizeof tmp, "%s/gen_determinism", argv[2]);
  const char *names[] = {"d_t1", "d_t2", "d_t8", "d_ext", "d_seed", "m_t1", "m_t2", "m_t8",
                         "w_t1", "w_t2", "auto_t1", "auto_t2", NULL};
  char dir[4600];
  for (int i = 0; names[i]; i++) {
    snprintf(dir, sizeof dir, "%s/%s", tmp, names[i]);
    tg_rmrf(dir);
  }
  tg_rmrf(tmp);
  TC_REQUIRE(tg_mkdir(tmp), "mkdir %s", tmp);

  /* default workload, small chunks so several workers share the work */
  const char *def[] = {"--chunk-graphs", "16", NULL};
  build("d_t1", "1", "300", def);
  build("d_t2", "2", "300", def);
  build("d_t8", "8", "300", def);
  same("d_t1", "d_t2");
  same("d_t1", "d_t8");
  TC_REQUIRE(tg_committed(strcat(strcpy(dir, tmp), "/d_t1")) == 300, "committed != 300");

  /* extend: 100 graphs (last chunk partial: 100 = 6*16 + 4), then 300 */
  build("d_ext", "2", "100", def);
  build("d_ext", "2", "300", def);
  same("d_t1", "d_ext");

  /* another seed: same config otherwise, different bytes */
  const char *seed[] = {"--chunk-graphs", "16", "--seed", "7", NULL};
  build("d_seed", "2", "300", seed);
  char why[512], da[4600], db[4600];
  snprintf(da, sizeof da, "%s/d_t1", tmp);
  snprintf(db, sizeof db, "%s/d_seed", tmp);
  TC_REQUIRE(tg_cache_compare(da, db, why, sizeof why) != 0, "seed 7 gave the same cache as seed 0");

  /* every other code path: MLP, standardisation, shift, a subset of targets, BA */
  const char *mlp[] = {"--chunk-graphs", "8", "--mechanism", "mlp", "--mlp-hidden", "4",
                       "--standardize", "--intervention", "shift", "--targets", "3",
                       "--graph", "ba", "--ba-m", "2", "--samples", "32", "--noise", "laplace", NULL};
  build("m_t1", "1", "120", mlp);
  build("m_t2", "2", "120", mlp);
  build("m_t8", "8", "120", mlp);
  same("m_t1", "m_t2");
  same("m_t1", "m_t8");

  const char *rff[] = {"--chunk-graphs", "8", "--mechanism", "rff", "--rff-features", "6",
                       "--standardize", "--targets", "2", "--samples", "24", "--noise", "cauchy", NULL};
  build("r_t1", "1", "120", rff);
  build("r_t2", "2", "120", rff);
  same("r_t1", "r_t2");
  const char *mix[] = {"--chunk-graphs", "8", "--mechanism", "linear:0.4,mlp:0.2,rff:0.2,sigmoid:0.1,poly:0.1",
                       "--intervention", "shift", "--samples", "16", "--noise", "laplace", NULL};
  build("x_t1", "1", "120", mix);
  build("x_t2", "2", "120", mix);
  same("x_t1", "x_t2");
  const char *het[] = {"--chunk-graphs", "8", "--hetero", "1.5", "--mechanism", "mlp", "--standardize",
                       "--samples", "16", NULL};
  build("h_t1", "1", "120", het);
  build("h_t2", "2", "120", het);
  same("h_t1", "h_t2");
  const char *iscm[] = {"--chunk-graphs", "8", "--iscm", "--mechanism", "rff", "--samples", "16", NULL};
  build("i_t1", "1", "120", iscm);
  build("i_t2", "2", "120", iscm);
  same("i_t1", "i_t2");

  const char *ws[] = {"--chunk-graphs", "8", "--graph", "ws", "--ws-k", "2", "--ws-p", "0.3",
                      "--noise", "uniform", "--standardize", "--value-dist", "uniform", NULL};
  build("w_t1", "1", "120", ws);
  build("w_t2", "2", "120", ws);
  same("w_t1", "w_t2");

  /* the noise intervention (its own value draw: a factor, no sign) */
  const char *noise[] = {"--chunk-graphs", "8", "--intervention", "noise", "--values", "0:2",
                         "--targets", "2", "--mechanism", "mlp", "--mlp-hidden", "3", NULL};
  build("n_t1", "1", "120", noise);
  build("n_t2", "2", "120", noise);
  same("n_t1", "n_t2");

  /* the soft intervention (its parameters drawn from the inter stream) */
  const char *soft[] = {"--chunk-graphs", "8", "--intervention", "soft", "--targets", "3", "--mechanism",
                        "mlp", "--mlp-hidden", "3", NULL};
  build("s_t1", "1", "120", soft);
  build("s_t2", "2", "120", soft);
  same("s_t1", "s_t2");

  /* multi-target worlds (their extra targets and values from the inter stream) */
  const char *multi[] = {"--chunk-graphs", "8", "--targets", "3", "--targets-per-world", "1:4",
                         "--intervention", "shift", NULL};
  build("mt_t1", "1", "120", multi);
  build("mt_t2", "2", "120", multi);
  same("mt_t1", "mt_t2");

  /* the automatic chunk size (~1 MiB records) */
  const char *none[] = {NULL};
  build("auto_t1", "1", "500", none);
  build("auto_t2", "2", "500", none);
  same("auto_t1", "auto_t2");

  for (int i = 0; names[i]; i++) {
    snprintf(dir, sizeof dir, "%s/%s", tmp, names[i]);
    tg_rmrf(dir);
  }
  tg_rmrf(tmp);
  printf("test_gen_determinism: ok\n");
  return 0;
}
