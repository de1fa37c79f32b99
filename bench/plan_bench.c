/* bench_plan — positions per second of the stream plan (loader/tc_plan.h):
 * for every batch of a stream, tc_plan_batch_at, then tc_plan_graph of each
 * of its positions (what a decode thread asks the plan per graph), shuffled
 * and in order, one rank and 8 equal ranks, an elastic stream (origin
 * mid-epoch), and size buckets (the range sorted by N, N drawn uniform in
 * 10..50). The limit it is compared with: the time one decode thread
 * spends on a graph (DECODE_GPS graphs/s, the loader bench's one-thread
 * figure on the default workload), so "share" is the plan's part of a
 * decode thread's time; it must stay far below 1%. The local-mode case
 * reads node 1 of 2 over 64 equal shards (its 32 shards; rank 7 = its rank 3).
 * Usage: bench_plan [GRAPHS (default 1000000)] [DECODE_GPS (default 300000)] */
#include <stdio.h>
#include <stdlib.h>

#include "tc_args.h"
#include "tc_common.h"
#include "tc_plan.h"

typedef struct bench_case {
  const char *name;
  uint32_t batch, world;
  int shuffle, drop_last;
  uint64_t origin_frac; /* origin = n * origin_frac / 4 (0: the start) */
  int buckets;          /* size buckets, 0 = off */
  uint32_t local_nodes; /* local mode: M nodes over 64 equal shards, 0 = off */
} bench_case;

static const bench_case cases[] = {
    {"shuffled, 1 rank, G 32", 32, 1, 1, 0, 0, 0, 0},
    {"in order, 1 rank, G 32", 32, 1, 0, 0, 0, 0, 0},
    {"shuffled, rank 3 of 8, G 32", 32, 8, 1, 0, 0, 0, 0},
    {"shuffled, 1 rank, G 256, drop_last", 256, 1, 1, 1, 0, 0, 0},
    {"shuffled, rank 3 of 8, resumed at 3/4 epoch", 32, 8, 1, 0, 3, 0, 0},
    {"shuffled, 1 rank, G 32, buckets", 32, 1, 1, 0, 0, 1, 0},
    {"shuffled, rank 3 of 8, G 32, buckets", 32, 8, 1, 0, 0, 1, 0},
    {"shuffled, rank 7 of 8, G 32, local (2 nodes)", 32, 8, 1, 0, 0, 0, 2},
};

int main(int argc, char **argv) {
  uint32_t graphs = 1000000, decode_gps = 300000;
  if (argc > 1 && tc_parse_u32_in(argv[1], 1, 1000000000, &graphs) != 0)
    return tc_args_report_value(stderr, "bench_plan", "GRAPHS", argv[1], "an integer in [1, 1000000000]");
  if (argc > 2 && tc_parse_u32_in(argv[2], 1, 1000000000, &decode_gps) != 0)
    return tc_args_report_value(stderr, "bench_plan", "DECODE_GPS", argv[2], "an integer in [1, 1000000000]");
  printf("stream plan: %u graphs, 2 epochs per case; share = plan time per graph / decode time per graph "
         "at %u graphs/s\n", graphs, decode_gps);
  printf("%-46s %14s %10s %10s\n", "case", "positions/s", "ns/pos", "share");
  uint64_t sink = 0;
  uint16_t *nodes = malloc((size_t)graphs * sizeof *nodes);
  if (!nodes) return 1;
  for (uint32_t i = 0; i < graphs; i++) nodes[i] = (uint16_t)(10 + tc_mix64(i) % 41);
  tc_plan_groups groups;
  if (tc_plan_groups_init(&groups, nodes, graphs) != 0) return 1;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const bench_case *bc = &cases[c];
    twincache_loader_options o;
    twincache_loader_options_init(&o);
    o.batch_size = bc->batch;
    o.world_size = bc->world;
    o.rank = bc->world > 1 ? 3 : 0;
    o.rank += bc->local_nodes ? bc->world / bc->local_nodes : 0; /* on node 1 */
    o.shuffle = bc->shuffle;
    o.drop_last = bc->drop_last;
    o.epochs = 2;
    o.seed = 1;
    o.buckets = bc->buckets;
    tc_plan p;
    tc_plan_local L = {0};
    uint64_t ends[64];
    for (uint32_t i = 0; i < 64; i++) ends[i] = (uint64_t)graphs * (i + 1) / 64;
    int rc = bc->local_nodes ? tc_plan_local_init(&L, ends, 64, 1, bc->local_nodes) ||
                                   tc_plan_init_local(&p, &o, 1, &L)
                             : tc_plan_init(&p, &o, 1, 0, graphs) || tc_plan_set_origin(&p, graphs / 4 * bc->origin_frac);
    if (rc != 0) {
      fprintf(stderr, "bench_plan: %s\n", twincache_last_error());
      return 1;
    }
    p.groups = &groups;
    uint64_t positions = 0, best_ns = UINT64_MAX;
    for (int rep = 0; rep < 3; rep++) { /* the fastest of 3 */
      uint64_t t0 = tc_now_ns();
      positions = 0;
      for (uint64_t seq = 0; seq < p.total; seq++) {
        tc_plan_batch b;
        tc_plan_batch_at(&p, seq, &b);
        for (uint32_t g = 0; g < b.count; g++) sink += tc_plan_graph(&p, &b, b.first + g);
        positions += b.count;
      }
      uint64_t ns = tc_now_ns() - t0;
      if (ns < best_ns) best_ns = ns;
    }
    double ns_per = positions ? (double)best_ns / (double)positions : 0;
    printf("%-46s %14.0f %10.2f %9.4f%%\n", bc->name, ns_per > 0 ? 1e9 / ns_per : 0, ns_per,
           100.0 * ns_per * decode_gps / 1e9);
    tc_plan_local_free(&L);
  }
  tc_plan_groups_free(&groups);
  free(nodes);
  printf("(checksum %llu)\n", (unsigned long long)(sink & 0xffff));
  return 0;
}
