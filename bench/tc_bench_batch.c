/* tc_bench_batch.c — see tc_bench_batch.h. */
#include "tc_bench_batch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tc_error.h"
#include "tc_bench_dir.h"
#include "tc_gen.h"

/* Reads the cache's graphs back as one batch of all G; copies its slab. */
static void *read_one_batch(const char *dir, uint32_t G, twincache_batch_layout *layout) {
  twincache_loader_options o;
  twincache_loader_options_init(&o);
  o.batch_size = G;
  o.shuffle = 0;
  o.threads = 1;
  twincache_loader *l = NULL;
  if (twincache_loader_open(dir, &o, NULL, &l) != 0) return NULL;
  twincache_batch *b = NULL;
  void *slab = NULL;
  if (twincache_loader_next(l, &b) == 0) {
    *layout = *twincache_loader_layout(l);
    slab = aligned_alloc(64, layout->bytes); /* bytes: a multiple of 64 */
    if (slab)
      memcpy(slab, b->slab, layout->bytes);
    else
      tc_error_set(TWINCACHE_ENOMEM, "bench batch: %zu bytes: out of memory", layout->bytes);
    twincache_loader_release(l, b);
  }
  twincache_loader_close(l);
  return slab;
}

void *tc_bench_default_batch(uint32_t G, uint32_t N, uint32_t S, uint64_t seed,
                             twincache_batch_layout *layout) {
  const char *tmp = getenv("TMPDIR");
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/twincache-bench-batch-%d", tmp && *tmp ? tmp : "/tmp", (int)getpid());
  tc_gen_config c;
  tc_gen_config_default(&c);
  c.out_dir = dir;
  c.graphs = G;
  c.threads = 1;
  c.quiet = 1;
  c.seed = seed;
  c.nodes_min = N / 2 > 2 ? N / 2 : 2;
  c.nodes_max = N;
  c.samples = S;
  tc_gen_result r;
  void *slab = tc_gen_run(&c, NULL, &r) == 0 ? read_one_batch(dir, G, layout) : NULL;
  bench_remove_cache_dir(dir);
  return slab;
}
