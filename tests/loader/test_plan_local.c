/* test_plan_local.c — local mode of the stream plan (loader/tc_plan.h,
 * "Local mode"), without a cache, exhaustively over shard layouts (1..5
 * shards of 1..4 graphs in several patterns), node counts M <= shards, ranks
 * per node R, batch sizes, drop_last and shuffle, over 3 epochs:
 * - node k's plan reads only the graphs of shards k, k + M, ...;
 * - every rank of every node has the same batch count, every batch full;
 * - per epoch, the valid graphs of all W = M*R ranks are the set's graphs
 *   exactly once (drop_last: at most once, and exactly M*B*G*R of them);
 * - the state of any batch, encoded and decoded, resumed on a fresh plan of
 *   any rank, continues at that batch with the same batches;
 * - elastic: a state taken after any number of steps at R ranks per node
 *   and batch G, resumed at R' and G' (same M): across the change every
 *   graph is read once per epoch (drop_last: at most once), every rank of
 *   the new world the same number of full batches;
 * - refusals with a message: M not dividing W, buckets, a state of another
 *   M or of the non-local stream, a state's W not a multiple of M, nodes
 *   above the shard count. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_error.h"
#include "tc_plan.h"
#include "tl_common.h"

#define MAX_SHARDS 5

/* Shard sizes of pattern `pat` for s shards: ends[i] the end of shard i. */
static uint64_t layout(int pat, uint32_t s, uint64_t *ends) {
  uint64_t e = 0;
  for (uint32_t i = 0; i < s; i++) {
    uint64_t size = pat == 0 ? 1 : pat == 1 ? 3 : pat == 2 ? (i % 2 ? 2 : 4) : (i == s - 1 ? 1 : 4);
    ends[i] = e += size;
  }
  return e;
}

/* The plan of global rank r; L is filled for r's node. */
static int plan_of(tc_plan *p, tc_plan_local *L, const uint64_t *ends, uint32_t s, uint32_t M, uint32_t R,
                   uint32_t G, uint32_t r, int drop, int shuffle, uint32_t epochs) {
  twincache_loader_options o;
  tl_plan_options(&o, G, M * R, r, drop, epochs, shuffle, 41);
  o.local_nodes = M;
  int rc = tc_plan_local_init(L, ends, s, r / R, M);
  return rc ? rc : tc_plan_init_local(p, &o, 5, L);
}

/* The graph of slot g of batch seq, and whether it is valid. */
static uint64_t graph_at(const tc_plan *p, uint64_t seq, uint32_t g, int *valid) {
  tc_plan_batch b;
  tc_plan_batch_at(p, seq, &b);
  *valid = b.first + g < p->n;
  return tc_plan_graph(p, &b, b.first + g);
}

static void check_case(int pat, uint32_t s, uint32_t M, uint32_t R, uint32_t G, int drop, int shuffle) {
  enum { EPOCHS = 3 };
  uint64_t ends[MAX_SHARDS], n = layout(pat, s, ends);
  uint32_t W = M * R;
  uint32_t *seen = calloc(n * EPOCHS, sizeof *seen);
  TC_REQUIRE(seen != NULL);
  uint64_t bpe = UINT64_MAX, valid_total = 0;
  for (uint32_t r = 0; r < W; r++) {
    tc_plan p;
    tc_plan_local L;
    TC_REQUIRE(plan_of(&p, &L, ends, s, M, R, G, r, drop, shuffle, EPOCHS) == 0, "pat %d s %u M %u R %u: %s", pat,
               s, M, R, twincache_last_error());
    if (bpe == UINT64_MAX) bpe = p.bpe;
    TC_CHECK(p.bpe == bpe && p.total == EPOCHS * bpe, "pat %d s %u M %u R %u G %u drop %d rank %u: bpe %llu, "
             "rank 0 %llu", pat, s, M, R, G, drop, r, (unsigned long long)p.bpe, (unsigned long long)bpe);
    for (uint64_t seq = 0; seq < p.total; seq++) {
      tc_plan_batch b;
      tc_plan_batch_at(&p, seq, &b);
      TC_CHECK(b.count == G, "a local batch is full (seq %llu: %u of %u)", (unsigned long long)seq, b.count, G);
      for (uint32_t g = 0; g < b.count; g++) {
        int valid;
        uint64_t i = graph_at(&p, seq, g, &valid);
        uint32_t shard = 0;
        while (i >= ends[shard]) shard++;
        TC_CHECK(i < n && shard % M == r / R, "rank %u (node %u of %u) reads graph %llu of shard %u", r, r / R, M,
                 (unsigned long long)i, shard);
        if (valid && i < n) {
          seen[b.epoch * n + i]++;
          valid_total++;
        }
      }
    }
    tc_plan_local_free(&L);
  }
  for (uint64_t e = 0; e < EPOCHS; e++)
    for (uint64_t i = 0; i < n; i++)
      if (drop ? seen[e * n + i] > 1 : seen[e * n + i] != 1)
        TC_FAIL("pat %d s %u M %u R %u G %u drop %d shuffle %d: epoch %llu reads graph %llu %u times", pat, s, M,
                R, G, drop, shuffle, (unsigned long long)e, (unsigned long long)i, seen[e * n + i]);
  if (drop)
    TC_CHECK(valid_total == EPOCHS * bpe * G * W, "drop_last: %llu graphs read, want %llu whole steps' worth",
             (unsigned long long)valid_total, (unsigned long long)(EPOCHS * bpe * G * W));
  free(seen);
}

/* A state at every batch of every rank, through the 64-byte codec, resumed
 * on another rank's fresh plan: the same next batch numbers and graphs. */
static void check_resume(int pat, uint32_t s, uint32_t M, uint32_t R, uint32_t G, int shuffle) {
  uint64_t ends[MAX_SHARDS];
  layout(pat, s, ends);
  uint32_t W = M * R;
  for (uint32_t r = 0; r < W; r++) {
    tc_plan p, q;
    tc_plan_local L, Lq;
    TC_REQUIRE(plan_of(&p, &L, ends, s, M, R, G, r, 0, shuffle, 2) == 0);
    for (uint64_t seq = 0; seq <= p.total; seq++) {
      twincache_loader_state st, back;
      uint8_t buf[TWINCACHE_LOADER_STATE_BYTES];
      tc_plan_state(&p, seq, &st);
      TC_CHECK(st.local_nodes == M && st.world_size == W && st.rank == r, "state of rank %u: M %u W %u r %u", r,
               st.local_nodes, st.world_size, st.rank);
      twincache_loader_state_encode(&st, buf);
      TC_REQUIRE(twincache_loader_state_decode(buf, &back) == 0);
      TC_CHECK(back.local_nodes == st.local_nodes && back.index_begin == 0 && back.index_end == st.index_end &&
               back.next_seq == st.next_seq && back.world_size == st.world_size && back.rank == st.rank &&
               back.equal_ranks == 1, "a local state survives its codec");
      uint32_t r2 = (r + 1) % W; /* any rank resumes from any rank's state of the same step */
      TC_REQUIRE(plan_of(&q, &Lq, ends, s, M, R, G, r2, 0, shuffle, 2) == 0);
      uint64_t next = 99;
      TC_CHECK(tc_plan_resume(&q, &back, &next) == 0 && next == seq, "resume at %llu: %s",
               (unsigned long long)seq, twincache_last_error());
      for (uint64_t k = next; k < q.total && k < next + 2; k++) {
        int v1, v2;
        tc_plan fresh;
        tc_plan_local Lf;
        TC_REQUIRE(plan_of(&fresh, &Lf, ends, s, M, R, G, r2, 0, shuffle, 2) == 0);
        for (uint32_t g = 0; g < G; g++)
          TC_CHECK(graph_at(&q, k, g, &v1) == graph_at(&fresh, k, g, &v2) && v1 == v2,
                   "resumed batch %llu slot %u", (unsigned long long)k, g);
        tc_plan_local_free(&Lf);
      }
      tc_plan_local_free(&Lq);
    }
    tc_plan_local_free(&L);
  }
}

/* Adds the valid graphs of global rank r's batches [from, to) of plan p to
 * seen[epoch * n + graph]; each batch must be full. any (NULL: not asked)
 * [seq - from] is set to 1 where the batch holds a valid graph. */
static void count_reads(const tc_plan *p, uint64_t from, uint64_t to, uint64_t n, uint32_t *seen, uint8_t *any) {
  for (uint64_t seq = from; seq < to; seq++) {
    tc_plan_batch b;
    tc_plan_batch_at(p, seq, &b);
    TC_CHECK(b.count == p->batch, "full batches after an elastic resume");
    for (uint32_t g = 0; g < b.count; g++) {
      int valid;
      uint64_t i = graph_at(p, seq, g, &valid);
      if (valid) seen[b.epoch * n + i]++;
      if (valid && any) any[seq - from] = 1;
    }
  }
}

/* Elastic: M nodes of R ranks at batch G read `cut` steps, then M nodes of
 * R2 ranks at batch G2 resume from rank 0's state. */
static void check_elastic(int pat, uint32_t s, uint32_t M, uint32_t R, uint32_t G, uint32_t R2, uint32_t G2,
                          int drop) {
  enum { EPOCHS = 2 };
  uint64_t ends[MAX_SHARDS], n = layout(pat, s, ends);
  tc_plan p0;
  tc_plan_local L0;
  TC_REQUIRE(plan_of(&p0, &L0, ends, s, M, R, G, 0, drop, 1, EPOCHS) == 0);
  for (uint64_t cut = 0; cut <= p0.total; cut++) {
    uint32_t *seen = calloc(n * EPOCHS, sizeof *seen);
    TC_REQUIRE(seen != NULL);
    for (uint32_t r = 0; r < M * R; r++) {
      tc_plan p;
      tc_plan_local L;
      TC_REQUIRE(plan_of(&p, &L, ends, s, M, R, G, r, drop, 1, EPOCHS) == 0);
      count_reads(&p, 0, cut, n, seen, NULL);
      tc_plan_local_free(&L);
    }
    twincache_loader_state st;
    tc_plan_state(&p0, cut, &st);
    uint64_t total = UINT64_MAX, span = 0;
    uint8_t any[256] = {0}; /* per step of the new world: some rank read a valid graph */
    for (uint32_t r = 0; r < M * R2; r++) {
      tc_plan q;
      tc_plan_local L;
      uint64_t next;
      TC_REQUIRE(plan_of(&q, &L, ends, s, M, R2, G2, r, drop, 1, EPOCHS) == 0);
      TC_REQUIRE(tc_plan_resume(&q, &st, &next) == 0, "elastic resume: %s", twincache_last_error());
      if (total == UINT64_MAX) total = q.total;
      TC_CHECK(q.total == total, "rank %u of the new world: %llu batches, rank 0 %llu", r,
               (unsigned long long)q.total, (unsigned long long)total);
      TC_REQUIRE(q.total - next <= sizeof any);
      span = q.total - next;
      count_reads(&q, next, q.total, n, seen, any);
      tc_plan_local_free(&L);
    }
    for (uint64_t k = 0; !drop && k < span; k++)
      TC_CHECK(any[k], "elastic pat %d s %u M %u: R %u G %u -> R %u G %u after %llu steps: step %llu of the "
               "resumed stream is padding on every rank", pat, s, M, R, G, R2, G2, (unsigned long long)cut,
               (unsigned long long)k);
    for (uint64_t e = 0; e < EPOCHS; e++)
      for (uint64_t i = 0; i < n; i++)
        if (drop ? seen[e * n + i] > 1 : seen[e * n + i] != 1)
          TC_FAIL("elastic pat %d s %u M %u: R %u G %u -> R %u G %u after %llu steps, drop %d: epoch %llu reads "
                  "graph %llu %u times", pat, s, M, R, G, R2, G2, (unsigned long long)cut, drop,
                  (unsigned long long)e, (unsigned long long)i, seen[e * n + i]);
    free(seen);
  }
  tc_plan_local_free(&L0);
}

/* rc is EINVAL and the message holds `words`. */
static void refused(int rc, const char *words, const char *what) {
  TC_CHECK(rc == TWINCACHE_EINVAL && strstr(twincache_last_error(), words),
           "%s: rc %d, message \"%s\" (want \"%s\")", what, rc, twincache_last_error(), words);
  tc_error_clear();
}

static void check_refusals(void) {
  uint64_t ends[4] = {4, 8, 12, 15};
  tc_plan p, q;
  tc_plan_local L, L3;
  twincache_loader_options o;
  tl_plan_options(&o, 2, 3, 0, 0, 1, 1, 41);
  o.local_nodes = 2;
  TC_REQUIRE(tc_plan_local_init(&L, ends, 4, 0, 2) == 0);
  refused(tc_plan_init_local(&p, &o, 5, &L), "must divide world_size 3", "M = 2, W = 3");
  o.world_size = 4;
  o.buckets = 1;
  refused(tc_plan_init_local(&p, &o, 5, &L), "cannot be combined", "local with buckets");
  o.buckets = 0;
  o.rank = 2; /* node 1, not L's node 0 */
  refused(tc_plan_init_local(&p, &o, 5, &L), "is on node 1 of 2, not node 0", "a rank of another node");
  refused(tc_plan_local_init(&L3, ends, 4, 0, 5), "node 0 of 5 over 4 shards", "more nodes than shards");
  o.rank = 1;
  TC_REQUIRE(tc_plan_init_local(&p, &o, 5, &L) == 0);
  twincache_loader_state st;
  uint64_t next;
  tc_plan_state(&p, 1, &st);
  /* another M: M = 4 at the same W */
  TC_REQUIRE(tc_plan_local_init(&L3, ends, 4, 1, 4) == 0);
  o.local_nodes = 4;
  TC_REQUIRE(tc_plan_init_local(&q, &o, 5, &L3) == 0);
  refused(tc_plan_resume(&q, &st, &next), "field local_nodes 2 differs from this loader's 4", "another M");
  tc_plan_local_free(&L3);
  /* a world that no local stream of M = 2 has */
  twincache_loader_state w = st;
  w.world_size = 3;
  w.rank = 0;
  refused(tc_plan_resume(&p, &w, &next), "world_size 3 is not a multiple of its local_nodes 2", "W = 3, M = 2");
  /* the non-local stream's state into a local plan, and back */
  tc_plan plain;
  o.local_nodes = 0;
  TC_REQUIRE(tc_plan_init(&plain, &o, 5, 0, 15) == 0);
  twincache_loader_state ps;
  tc_plan_state(&plain, 1, &ps);
  refused(tc_plan_resume(&p, &ps, &next), "local_nodes 0 differs from this loader's 2", "a non-local state");
  refused(tc_plan_resume(&plain, &st, &next), "local_nodes 2 differs from this loader's 0", "a local state");
  /* the codec refuses a local flag with M = 0 */
  uint8_t buf[TWINCACHE_LOADER_STATE_BYTES];
  twincache_loader_state_encode(&st, buf);
  memset(buf + 32, 0, 8);
  twincache_loader_state back;
  TC_CHECK(twincache_loader_state_decode(buf, &back) == TWINCACHE_EINVAL, "local flag with 0 nodes is refused");
  tc_error_clear();
  tc_plan_local_free(&L);
}

int main(void) {
  for (int pat = 0; pat < 4; pat++)
    for (uint32_t s = 1; s <= MAX_SHARDS; s++)
      for (uint32_t M = 1; M <= s; M++)
        for (uint32_t R = 1; R <= 3; R++)
          for (uint32_t G = 1; G <= 3; G++)
            for (int drop = 0; drop <= 1; drop++)
              for (int shuffle = 0; shuffle <= 1; shuffle++) check_case(pat, s, M, R, G, drop, shuffle);
  for (int pat = 1; pat < 4; pat += 2)
    for (uint32_t M = 1; M <= 3; M++) check_resume(pat, 4, M, 2, 2, 1);
  for (int pat = 0; pat < 4; pat++)
    for (uint32_t M = 1; M <= 3; M++)
      for (uint32_t R = 1; R <= 3; R++)
        for (uint32_t R2 = 1; R2 <= 3; R2++)
          for (int drop = 0; drop <= 1; drop++) {
            check_elastic(pat, 4, M, R, 2, R2, 2, drop);
            check_elastic(pat, 5, M, R, 1, R2, 3, drop);
          }
  check_refusals();
  return tc_test_finish("test_plan_local");
}
