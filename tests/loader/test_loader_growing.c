/* test_loader_growing — a cache read while twincache-gen extends it (and
 * grows its LMDB map) in another process: open handles keep the graph count
 * they opened with and read every graph of it; a handle opened afterwards in
 * the same process sees the new graphs.
 * usage: test_loader_growing GEN SCRATCH_DIR */
#include <spawn.h>
#include <sys/wait.h>

#include "tl_common.h"

extern char **environ;

/* Runs GEN --out dir --graphs n with the test's options; returns its status. */
static int run_gen(const char *gen, const char *dir, const char *graphs) {
  char *argv[] = {(char *)gen, "--out", (char *)dir, "--graphs", (char *)graphs, "--nodes", "3:7",
                  "--samples", "8", "--chunk-graphs", "16", "--map-size", "131072", "--threads", "1",
                  "--seed", "4", "--quiet", NULL};
  pid_t pid;
  int status;
  if (posix_spawn(&pid, gen, NULL, NULL, argv, environ) != 0) return -1;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Reads every graph below count through c. */
static uint64_t read_all(twincache_cache *c, uint64_t count) {
  const twincache_dims *d = twincache_cache_dims(c);
  twincache_graph *g = twincache_graph_alloc(d->max_nodes, d->samples, d->max_inter, d->hidden);
  twincache_dctx *dctx = twincache_dctx_create();
  uint64_t ok = 0;
  if (g && dctx)
    for (uint64_t i = 0; i < count; i++) ok += twincache_cache_read_graph(c, dctx, i, g) == TWINCACHE_OK;
  twincache_graph_free(g);
  twincache_dctx_free(dctx);
  return ok;
}

int main(int argc, char **argv) {
  TC_REQUIRE(argc == 3);
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/cache", argv[2]);
  tl_mkdir(argv[2]);
  TC_REQUIRE(run_gen(argv[1], dir, "100") == 0);

  twincache_cache *before = NULL, *after = NULL;
  twincache_loader *l = NULL;
  twincache_loader_options o;
  TC_REQUIRE(twincache_cache_open(dir, &before) == TWINCACHE_OK);
  TC_CHECK(twincache_cache_count(before) == 100);
  twincache_loader_options_init(&o);
  o.batch_size = 8;
  o.epochs = 0;
  o.threads = 2;
  o.slots = 3;
  TC_CHECK_RC(twincache_loader_open(dir, &o, NULL, &l), TWINCACHE_OK);
  twincache_batch *b;
  TC_CHECK_RC(twincache_loader_next(l, &b), TWINCACHE_OK); /* threads hold read txns now */
  if (l && b) twincache_loader_release(l, b);

  /* twenty times the data: the writer's map (128 KiB at first) must grow */
  TC_CHECK(run_gen(argv[1], dir, "2000") == 0);

  TC_CHECK(twincache_cache_count(before) == 100);
  TC_CHECK(read_all(before, 100) == 100);
  if (l) {
    for (int i = 0; i < 40; i++) { /* three epochs of the 100 graphs */
      TC_CHECK_RC(twincache_loader_next(l, &b), TWINCACHE_OK);
      if (!b) break;
      for (uint32_t g = 0; g < b->n_graphs; g++) TC_CHECK(b->graph_id[g] < 100);
      twincache_loader_release(l, b);
    }
    TC_CHECK(twincache_loader_batches_per_epoch(l) == 13);
  }
  TC_REQUIRE(twincache_cache_open(dir, &after) == TWINCACHE_OK);
  TC_CHECK(twincache_cache_count(after) == 2000);
  TC_CHECK(read_all(after, 2000) == 2000);
  twincache_cache_close(before);
  twincache_loader_close(l);
  TC_CHECK(read_all(after, 2000) == 2000);
  twincache_cache_close(after);
  return tc_test_finish("test_loader_growing");
}
