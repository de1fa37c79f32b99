/* consumer.c — a user's first program against the INSTALLED twincache:
 * opens a cache, reads one graph, streams one epoch through the loader and
 * prints "ok <graphs> <batches>". Built once with pkg-config and once with
 * find_package(twincache) by install_test.cmake.
 * usage: consumer CACHE_DIR */
#include <stdio.h>

#include <twincache_loader.h>

int main(int argc, char **argv) {
  twincache_cache *c = NULL;
  twincache_dctx *d = NULL;
  twincache_graph *g = NULL;
  twincache_loader *l = NULL;
  int rc = 1, e;
  if (argc != 2) {
    fprintf(stderr, "usage: consumer CACHE_DIR\n");
    return 2;
  }
  if ((e = twincache_cache_open(argv[1], &c)) != 0) {
    fprintf(stderr, "consumer: %s: %s\n", argv[1], twincache_strerror(e));
    goto cleanup;
  }
  const twincache_dims *dm = twincache_cache_dims(c);
  g = twincache_graph_alloc(dm->max_nodes, dm->samples, dm->max_inter, dm->hidden);
  d = twincache_dctx_create();
  if (!g || !d || (e = twincache_cache_read_graph(c, d, 0, g)) != 0) {
    fprintf(stderr, "consumer: graph 0 unreadable\n");
    goto cleanup;
  }
  twincache_loader_options o;
  twincache_loader_options_init(&o);
  o.batch_size = 16;
  o.threads = 1;
  if ((e = twincache_loader_open(argv[1], &o, NULL, &l)) != 0) {
    fprintf(stderr, "consumer: loader: %s\n", twincache_strerror(e));
    goto cleanup;
  }
  uint64_t graphs = 0, batches = 0;
  twincache_batch *b;
  while ((e = twincache_loader_next(l, &b)) == 0) {
    graphs += b->n_graphs;
    batches++;
    twincache_loader_release(l, b);
  }
  if (e != TWINCACHE_END || graphs != twincache_cache_count(c)) {
    fprintf(stderr, "consumer: stream ended with %s after %llu graphs\n", twincache_strerror(e),
            (unsigned long long)graphs);
    goto cleanup;
  }
  printf("ok %llu %llu\n", (unsigned long long)graphs, (unsigned long long)batches);
  rc = 0;
cleanup:
  twincache_loader_close(l);
  twincache_dctx_free(d);
  twincache_graph_free(g);
  twincache_cache_close(c);
  return rc;
}
