/* test_loader_local — local mode (issue 29) on real shards, without a
 * cluster: a set of 4 shards (24, 24, 24 and 28 graphs) split into two
 * "node" directories as local mode lays them (node 0: shards 0 and 2, node
 * 1: shards 1 and 3); 2 nodes x 2 ranks, each rank opening only its node's
 * directory:
 *  - every rank reads only its node's shards, all ranks take the same
 *    number of full batches, and per epoch the valid graphs of all ranks
 *    are the set's 100 graphs exactly once (2 shuffled epochs);
 *  - with drop_last, each graph at most once, equal counts still;
 *  - the same with fresh worlds (samples = FRESH);
 *  - a resume from rank 0's state after 3 steps gives every rank the same
 *    bytes as the uninterrupted run; resumed at 2 ranks (one per node) and
 *    batch 8 instead, every graph is still read once per epoch;
 *  - refusals, each with a message naming what is wrong and nothing read:
 *    a node directory opened by a rank of the other node, a shard missing
 *    from a node directory, a shard of another node in it, local_nodes not
 *    dividing world_size, index_range, one shard alone, a local state
 *    resumed without local mode.
 * usage: test_loader_local GEN SCRATCH */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tl_common.h"

#define NODES 2
#define PER_NODE 2
#define W (NODES * PER_NODE)
#define GRAPHS 100
static const uint64_t ends[4] = {24, 48, 72, 100}; /* the split of 13 chunks of 8 into 4 shards */
static const char *scratch;
static char node_dir[NODES][4096];


static int fresh; /* 1: fresh worlds (samples = FRESH) instead of the stored ones */

static void options(twincache_loader_options *o, uint32_t rank, int drop) {
  tl_plan_options(o, 4, W, rank, drop, 2, 1, 7);
  o->local_nodes = NODES;
  o->threads = 2;
  if (fresh) o->samples = TWINCACHE_SAMPLES_FRESH, o->rows = 6;
}

/* All W ranks read in step from state `resume` (NULL: the start) for at
 * most max_steps steps (0: to the end); the graph ids (valid only, else
 * UINT64_MAX) go to ids[step][rank][slot], slabs appended to streams[rank]. */
static uint64_t run(int drop, const twincache_loader_state *resume, uint64_t max_steps, uint64_t (*ids)[W][4],
                    tl_stream *streams, twincache_loader_state *state_after) {
  twincache_loader *l[W];
  for (uint32_t r = 0; r < W; r++) {
    twincache_loader_options o;
    options(&o, r, drop);
    TC_REQUIRE(twincache_loader_open(node_dir[r / PER_NODE], &o, resume, &l[r]) == TWINCACHE_OK, "rank %u: %s", r,
               twincache_last_error());
  }
  uint64_t bpe = twincache_loader_batches_per_epoch(l[0]), steps = 0;
  for (uint32_t r = 1; r < W; r++)
    TC_CHECK(twincache_loader_batches_per_epoch(l[r]) == bpe, "rank %u: %llu batches per epoch, rank 0 %llu", r,
             (unsigned long long)twincache_loader_batches_per_epoch(l[r]), (unsigned long long)bpe);
  twincache_batch *b[W];
  while ((max_steps == 0 || steps < max_steps) && !tl_step(l, W, b)) {
    for (uint32_t r = 0; r < W; r++) {
      TC_CHECK(b[r]->n_graphs == 4, "a local batch is full");
      for (uint32_t g = 0; g < 4; g++) {
        uint64_t id = b[r]->graph_id[g];
        uint32_t shard = 0;
        while (shard < 3 && id >= ends[shard]) shard++;
        TC_CHECK(id < GRAPHS && shard % NODES == r / PER_NODE, "rank %u reads graph %llu of shard %u", r,
                 (unsigned long long)id, shard);
        if (ids) ids[steps][r][g] = b[r]->valid[g] ? id : UINT64_MAX;
      }
      if (streams) tl_stream_push(&streams[r], b[r]);
      twincache_loader_release(l[r], b[r]);
    }
    steps++;
  }
  if (state_after) twincache_loader_get_state(l[0], state_after);
  for (uint32_t r = 0; r < W; r++) twincache_loader_close(l[r]);
  return steps;
}

static void check_once_per_epoch(int drop) {
  static uint64_t ids[64][W][4];
  uint64_t steps = run(drop, NULL, 0, ids, NULL, NULL);
  TC_REQUIRE(steps % 2 == 0 && steps <= 64);
  uint64_t per_epoch = steps / 2; /* node 1 holds 52 graphs: ceil(52 / 8) = 7 steps, floor(48 / 8) = 6 */
  TC_CHECK(per_epoch == (drop ? 6u : 7u), "drop_last %d: %llu steps per epoch", drop, (unsigned long long)per_epoch);
  for (uint64_t e = 0; e < 2; e++) {
    uint32_t seen[GRAPHS] = {0}, total = 0;
    for (uint64_t s = e * per_epoch; s < (e + 1) * per_epoch; s++)
      for (uint32_t r = 0; r < W; r++)
        for (uint32_t g = 0; g < 4; g++)
          if (ids[s][r][g] != UINT64_MAX) {
            seen[ids[s][r][g]]++;
            total++;
          }
    for (uint32_t i = 0; i < GRAPHS; i++)
      TC_CHECK(drop ? seen[i] <= 1 : seen[i] == 1, "drop_last %d epoch %llu: graph %u read %u times", drop,
               (unsigned long long)e, i, seen[i]);
    TC_CHECK(total == (drop ? 6u * 16 : (uint32_t)GRAPHS), "drop_last %d: %u graphs in epoch %llu", drop, total,
             (unsigned long long)e);
  }
}

static void check_elastic(const twincache_loader_state *st);

static void check_resume(void) {
  tl_stream whole[W], head[W], tail[W];
  memset(whole, 0, sizeof whole), memset(head, 0, sizeof head), memset(tail, 0, sizeof tail);
  run(0, NULL, 0, NULL, whole, NULL);
  twincache_loader_state st;
  TC_CHECK(run(0, NULL, 3, NULL, head, &st) == 3);
  TC_CHECK(st.local_nodes == NODES && st.next_seq == 3 && st.world_size == W, "rank 0's state: M %u seq %llu W %u",
           st.local_nodes, (unsigned long long)st.next_seq, st.world_size);
  uint8_t buf[TWINCACHE_LOADER_STATE_BYTES];
  twincache_loader_state_encode(&st, buf);
  TC_REQUIRE(twincache_loader_state_decode(buf, &st) == 0);
  run(0, &st, 0, NULL, tail, NULL);
  for (uint32_t r = 0; r < W; r++) {
    TC_CHECK(head[r].count + tail[r].count == whole[r].count, "rank %u: %zu + %zu batches, whole %zu", r,
             head[r].count, tail[r].count, whole[r].count);
    for (size_t i = 0; i < tail[r].count && 3 + i < whole[r].count; i++)
      TC_CHECK(memcmp(tail[r].slabs[i], whole[r].slabs[3 + i], whole[r].slab_bytes) == 0,
               "rank %u: resumed batch %zu differs from the uninterrupted run", r, 3 + i);
    tl_stream_free(&whole[r]), tl_stream_free(&head[r]), tl_stream_free(&tail[r]);
  }
  /* refused: a local state without local mode, and at another world size */
  char all[4200];
  snprintf(all, sizeof all, "%s/all", scratch);
  twincache_loader_options o;
  options(&o, 0, 0);
  o.local_nodes = 0;
  twincache_loader *l = NULL;
  TC_CHECK(twincache_loader_open(all, &o, &st, &l) == TWINCACHE_EINVAL &&
               strstr(twincache_last_error(), "local_nodes 2 differs from this loader's 0"),
           "a local state without local mode: %s", twincache_last_error());
  twincache_loader_close(l);
  check_elastic(&st);
}

/* The state of 4 ranks at batch 4 after 3 steps, resumed at 2 ranks (one
 * per node) at batch 8: across the change each graph once per epoch. */
static void check_elastic(const twincache_loader_state *st) {
  static uint64_t ids[3][W][4];
  uint32_t seen[2][GRAPHS] = {{0}};
  TC_REQUIRE(run(0, NULL, 3, ids, NULL, NULL) == 3);
  for (uint32_t s = 0; s < 3; s++) /* epoch 0: 7 steps */
    for (uint32_t r = 0; r < W; r++)
      for (uint32_t g = 0; g < 4; g++)
        if (ids[s][r][g] != UINT64_MAX) seen[0][ids[s][r][g]]++;
  twincache_loader *l[NODES];
  for (uint32_t r = 0; r < NODES; r++) {
    twincache_loader_options o;
    options(&o, r, 0);
    o.world_size = NODES, o.batch_size = 8;
    TC_REQUIRE(twincache_loader_open(node_dir[r], &o, st, &l[r]) == TWINCACHE_OK, "elastic, rank %u of %u: %s", r,
               NODES, twincache_last_error());
  }
  twincache_batch *b[NODES];
  while (!tl_step(l, NODES, b))
    for (uint32_t r = 0; r < NODES; r++) {
      TC_CHECK(b[r]->epoch < 2 && b[r]->n_graphs == 8, "elastic: full batches of epochs 0 and 1");
      for (uint32_t g = 0; g < 8 && b[r]->epoch < 2; g++)
        if (b[r]->valid[g]) seen[b[r]->epoch][b[r]->graph_id[g]]++;
      twincache_loader_release(l[r], b[r]);
    }
  for (uint32_t r = 0; r < NODES; r++) twincache_loader_close(l[r]);
  for (uint32_t e = 0; e < 2; e++)
    for (uint32_t i = 0; i < GRAPHS; i++)
      TC_CHECK(seen[e][i] == 1, "elastic 4 -> 2 ranks: epoch %u reads graph %u %u times", e, i, seen[e][i]);
}

/* Opening node directory `dir` as rank r with o is refused (EINVAL or
 * EMISMATCH) with a message holding `words`. */
static void refused(const char *dir, const twincache_loader_options *o, const char *words, const char *what) {
  twincache_loader *l = NULL;
  int rc = twincache_loader_open(dir, o, NULL, &l);
  TC_CHECK(rc != TWINCACHE_OK && l == NULL && strstr(twincache_last_error(), words),
           "%s: rc %d, message \"%s\" (want \"%s\")", what, rc, twincache_last_error(), words);
  twincache_loader_close(l);
}

static void check_refusals(void) {
  twincache_loader_options o;
  options(&o, 2, 0); /* a rank of node 1 */
  refused(node_dir[0], &o, "not one of node 1 of 2's", "node 0's directory on node 1");
  options(&o, 0, 0);
  o.world_size = 3;
  refused(node_dir[0], &o, "local_nodes 2 must divide world_size 3", "M not dividing W");
  options(&o, 0, 0);
  o.index_end = 10;
  refused(node_dir[0], &o, "index_begin and index_end must be 0", "local mode with a range");
  options(&o, 0, 0);
  char shard[4200];
  snprintf(shard, sizeof shard, "%s/shard-00000-of-00004", node_dir[0]);
  refused(shard, &o, "is one cache directory, not a set of shards", "one shard alone");
  TC_REQUIRE(tc_test_sh("mv '%s/shard-00002-of-00004' '%s/'", node_dir[0], scratch) == 0); /* node 0 lacks shard 2 */
  refused(node_dir[0], &o, "shard 2 of 4 (graphs 48..71) is missing: node 0 of 2 holds shards 0, 2", "a shard missing");
  TC_REQUIRE(tc_test_sh("mv '%s/shard-00002-of-00004' '%s/' && mv '%s/shard-00001-of-00004' '%s/'", scratch, node_dir[0],
                node_dir[1], node_dir[0]) == 0); /* node 0 holds node 1's shard 1 too */
  refused(node_dir[0], &o, "is shard 1 of 4, not one of node 0 of 2's", "another node's shard");
  TC_REQUIRE(tc_test_sh("mv '%s/shard-00001-of-00004' '%s/'", node_dir[0], node_dir[1]) == 0);
  twincache_loader *l = NULL;
  TC_CHECK(twincache_loader_open(node_dir[0], &o, NULL, &l) == TWINCACHE_OK, "restored: %s", twincache_last_error());
  twincache_loader_close(l);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: test_loader_local GEN SCRATCH\n");
    return 2;
  }
  const char *gen = argv[1];
  scratch = argv[2];
  tl_mkdir(scratch);
  for (int i = 0; i < 4; i++)
    TC_REQUIRE(tc_test_sh("'%s' --out '%s/set' --graphs %d --chunk-graphs 8 --nodes 3:8 --samples 4 --seed 9 --threads 1 "
                  "--quiet --shard %d/4", gen, scratch, GRAPHS, i) == 0);
  /* node k's local disk: shards k, k + 2; "all": the whole set, by links */
  TC_REQUIRE(tc_test_sh("cd '%s' && mkdir node0 node1 all && mv set/shard-00000-of-00004 set/shard-00002-of-00004 node0/ "
                "&& mv set/shard-00001-of-00004 set/shard-00003-of-00004 node1/ && for d in node0/* node1/*; do "
                "ln -s \"$PWD/$d\" all/; done", scratch) == 0);
  for (int k = 0; k < NODES; k++) snprintf(node_dir[k], sizeof node_dir[k], "%s/node%d", scratch, k);
  check_once_per_epoch(0);
  check_once_per_epoch(1);
  check_resume();
  fresh = 1; /* the same plan fills fresh worlds */
  check_once_per_epoch(0);
  check_resume();
  fresh = 0;
  check_refusals();
  return tc_test_finish("test_loader_local");
}
