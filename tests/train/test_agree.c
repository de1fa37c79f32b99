/* test_agree: the data-parallel agreement check's pure part (train_agree.c),
 * without MPI: two runs that differ in one option disagree on that option,
 * named with both values; equal runs agree; the list keeps its shape
 * whatever the options (local mode included), so ranks compare item by item. */
#include <stdio.h>
#include <string.h>

#include "tc_test.h"
#include "tc_train.h"

enum { CAP = 64 };

/* the backends as the list sees them: their names only */
static const train_backend cpu = {.name = "cpu"}, cuda = {.name = "cuda"};

/* A run as train.c holds it after the split, before the first step. */
static void base_run(run *r) {
  memset(r, 0, sizeof *r);
  r->o.batch = 32, r->o.seed = 1, r->o.val_split = 0.1, r->o.steps = 1000, r->o.lr = 3e-3;
  r->o.warmup = 50, r->o.weight_decay = 1e-2, r->o.pos_weight = 1, r->o.resample_every = 1;
  r->dims.max_nodes = 10, r->dims.max_inter = 10, r->dims.samples = 64;
  r->cache_tag = 0x0123456789abcdefULL, r->cache_seed = 7;
  r->first = 1400, r->count = 2000, r->train_end = 1940;
  r->be = &cpu;
}

/* mine vs rank 0 (root): the message, "" when they agree */
static long compare(const run *mine, const run *root, char *msg, size_t cap) {
  train_agree_item a[CAP], b[CAP];
  uint64_t rv[CAP];
  size_t na = train_agree_items(mine, a, CAP), nb = train_agree_items(root, b, CAP);
  TC_REQUIRE(na == nb && na <= CAP, "lists of %zu and %zu items", na, nb);
  for (size_t i = 0; i < nb; i++) {
    TC_CHECK(!strcmp(a[i].flag, b[i].flag), "item %zu: %s vs %s", i, a[i].flag, b[i].flag);
    rv[i] = b[i].bits;
  }
  return train_agree_compare(a, rv, na, 1, msg, cap);
}

/* rank 1 differs from rank 0 by `change`; the message must contain `want` */
#define DIFFERS(change, want)                                                      \
  do {                                                                             \
    run r0, r1;                                                                    \
    char msg[512];                                                                 \
    base_run(&r0), base_run(&r1);                                                  \
    change;                                                                        \
    long i = compare(&r1, &r0, msg, sizeof msg);                                   \
    TC_CHECK(i >= 0 && strstr(msg, want) != NULL, "%s: got '%s', want '%s'", #change, msg, want); \
  } while (0)

int main(void) {
  run e0, e1;
  char buf[512] = "x";
  base_run(&e0), base_run(&e1);
  TC_CHECK(compare(&e1, &e0, buf, sizeof buf) == -1 && buf[0] == '\0', "equal runs: '%s'", buf);

  DIFFERS(r1.o.batch = 24, "rank 1 disagrees with rank 0 on --batch: 24 here, 32 on rank 0");
  DIFFERS(r1.o.steps = 1200, "on --steps: 1200 here, 1000 on rank 0");
  DIFFERS(r1.o.seed = 9, "on --seed: 9 here, 1 on rank 0");
  DIFFERS(r1.o.lr = 1e-3, "on --lr: 0.001 here, 0.003 on rank 0");
  DIFFERS(r1.o.val_split = 0.4, "on --val-split: 0.4 here, 0.1 on rank 0");
  DIFFERS(r1.o.fresh_rows = 16, "on --fresh-rows: 16 here, 0 on rank 0");
  DIFFERS(r1.o.resample_every = 2, "on --resample-every: 2 here, 1 on rank 0");
  DIFFERS(r1.o.local_nodes = 2, "on --local-nodes: 2 here, 0 on rank 0");
  DIFFERS(r1.o.stop_after = 5, "on --stop-after: 5 here, 0 on rank 0");
  DIFFERS(r1.step0 = 500, "on --resume (its step): 500 here, 0 on rank 0");
  DIFFERS(r1.o.warmup = 10, "on --warmup: 10 here, 50 on rank 0");
  DIFFERS(r1.o.weight_decay = 0, "on --weight-decay: 0 here, 0.01 on rank 0");
  DIFFERS(r1.o.pos_weight = 2, "on --pos-weight: 2 here, 1 on rank 0");
  DIFFERS(r1.predict_only = 1, "on --predict-only: 1 here, 0 on rank 0");
  DIFFERS(r1.be = &cuda, "on --device (the backend): 1 here, 0 on rank 0");
  DIFFERS(r1.cache_seed = 8, "on --cache (its generator seed): 8 here, 7 on rank 0");
  DIFFERS(r1.dims.max_nodes = 20, "on --cache (N, nodes per graph): 20 here, 10 on rank 0");
  DIFFERS(r1.dims.max_inter = 3, "on --cache (K, interventions per graph): 3 here, 10 on rank 0");
  DIFFERS(r1.dims.samples = 32, "on --cache (S, samples per world): 32 here, 64 on rank 0");
  DIFFERS(r1.cache_tag ^= 1, "on --cache (its config digest): 0123456789abcdee here, 0123456789abcdef on rank 0");
  DIFFERS(r1.count = 1999, "on --cache (graphs): 599 here, 600 on rank 0");
  DIFFERS((r1.first = 0, r1.count = 600, r1.train_end = 540), "on --cache (first graph): 0 here, 1400 on rank 0");
  DIFFERS(r1.train_end = 1941, "on --val-split (training graphs): 541 here, 540 on rank 0");
  /* the first difference in the list's order is named: a flag before the
   * cache facts it changes */
  DIFFERS((r1.o.val_split = 0.2, r1.train_end = 1880), "on --val-split: 0.2 here");
  DIFFERS((r1.cache_seed = 8, r1.cache_tag = 1), "on --cache (its generator seed)");

  /* local mode: each node's part has its own count; those items stay in the
   * list (its shape does not change) but compare equal */
  base_run(&e0), base_run(&e1);
  e0.o.local_nodes = e1.o.local_nodes = 2;
  e1.count = 1500, e1.first = 0, e1.train_end = 1350;
  TC_CHECK(compare(&e1, &e0, buf, sizeof buf) == -1, "local mode, other part counts: '%s'", buf);

  /* the message is one line */
  base_run(&e0), base_run(&e1);
  e1.o.batch = 8;
  compare(&e1, &e0, buf, sizeof buf);
  TC_CHECK(strchr(buf, '\n') == NULL, "two lines: %s", buf);
  TC_CHECK(train_agree_config_seed("{\"graph\": \"er\", \"seed\": 42, \"x\": 1}") == 42);
  TC_CHECK(train_agree_config_seed("{\"graph\": \"er\"}") == UINT64_MAX);
  TC_CHECK(train_agree_config_seed(NULL) == UINT64_MAX);
  return tc_test_finish("train_agree");
}
