/* order_dump.c — prints the C loader's stream, one line per batch:
 *   <seq> <epoch> <n_graphs> <graph_id> <graph_id> ...
 * so the Python binding's tests can compare order and coverage with the C
 * library for the same options. Linked against libtwincache.so.
 * usage: twincache_order_dump CACHE [--batch G] [--epochs E] [--shuffle 0|1]
 *        [--seed S] [--rank R] [--world W] [--threads T] [--drop-last 0|1]
 *        [--begin B] [--end E] */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "twincache_loader.h"

static int parse(const char *flag, const char *s, unsigned long long *v) {
  char *end;
  errno = 0;
  *v = strtoull(s, &end, 10);
  if (errno || end == s || *end || s[0] == '-') {
    fprintf(stderr, "twincache_order_dump: %s needs a non-negative integer, got '%s'\n", flag, s);
    return -1;
  }
  return 0;
}

int main(int argc, char **argv) {
  twincache_loader_options o;
  twincache_loader_options_init(&o);
  twincache_loader *l = NULL;
  int rc = 1, e;
  if (argc < 2 || argc % 2) {
    fprintf(stderr, "usage: twincache_order_dump CACHE [--flag value]...\n");
    return 2;
  }
  for (int i = 2; i < argc; i += 2) {
    unsigned long long v;
    if (parse(argv[i], argv[i + 1], &v)) return 2;
    const char *f = argv[i];
    if (!strcmp(f, "--batch")) o.batch_size = (uint32_t)v;
    else if (!strcmp(f, "--epochs")) o.epochs = (uint32_t)v;
    else if (!strcmp(f, "--shuffle")) o.shuffle = (int)v;
    else if (!strcmp(f, "--seed")) o.seed = v;
    else if (!strcmp(f, "--rank")) o.rank = (uint32_t)v;
    else if (!strcmp(f, "--world")) o.world_size = (uint32_t)v;
    else if (!strcmp(f, "--threads")) o.threads = (uint32_t)v;
    else if (!strcmp(f, "--drop-last")) o.drop_last = (int)v;
    else if (!strcmp(f, "--begin")) o.index_begin = v;
    else if (!strcmp(f, "--end")) o.index_end = v;
    else {
      fprintf(stderr, "twincache_order_dump: unknown flag %s\n", f);
      return 2;
    }
  }
  if ((e = twincache_loader_open(argv[1], &o, NULL, &l)) != 0) {
    fprintf(stderr, "twincache_order_dump: %s: %s\n", argv[1], twincache_strerror(e));
    goto cleanup;
  }
  twincache_batch *b;
  while ((e = twincache_loader_next(l, &b)) == 0) {
    printf("%llu %llu %u", (unsigned long long)b->seq, (unsigned long long)b->epoch, b->n_graphs);
    for (uint32_t g = 0; g < b->n_graphs; g++) printf(" %llu", (unsigned long long)b->graph_id[g]);
    printf("\n");
    twincache_loader_release(l, b);
  }
  if (e != TWINCACHE_END) {
    fprintf(stderr, "twincache_order_dump: next: %s\n", twincache_strerror(e));
    goto cleanup;
  }
  rc = 0;
cleanup:
  twincache_loader_close(l);
  return rc;
}
