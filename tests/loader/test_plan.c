/* test_plan.c — the stream plan (loader/tc_plan.h) without a cache,
 * exhaustively over range sizes, batch sizes, world sizes, drop_last and
 * equal ranks:
 * - every batch equals the arithmetic the loader has always used (an
 *   independent statement of it below: epoch = seq / bpe, global batch
 *   j*W + r, positions padded or cut per epoch);
 * - per epoch, the ranks' valid positions are each position of [0, n)
 *   exactly once (those before the drop_last cut), in global order;
 * - equal ranks: every rank has the same batch count and full batches;
 * - a resume at any batch continues the stream it was taken from. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_plan.h"
#include "tc_test.h"

/* The reference: today's loader arithmetic, restated. */
typedef struct ref {
  uint64_t bpe, positions, total;
} ref;

static ref ref_of(uint64_t n, uint64_t G, uint64_t W, uint64_t r, int drop, int equal_opt, uint64_t epochs) {
  ref x;
  int equal = equal_opt && W > 1;
  if (equal) {
    x.bpe = drop ? n / (G * W) : (n + G * W - 1) / (G * W);
    x.positions = x.bpe * W * G;
  } else {
    uint64_t gb = drop ? n / G : (n + G - 1) / G;
    x.bpe = gb > r ? (gb - r + W - 1) / W : 0;
    x.positions = drop ? gb * G : n;
  }
  x.total = epochs == 0 ? (x.bpe ? UINT64_MAX : 0) : x.bpe * epochs;
  return x;
}

static void options(twincache_loader_options *o, uint32_t G, uint32_t W, uint32_t r, int drop, int equal,
                    uint32_t epochs, int shuffle) {
  twincache_loader_options_init(o);
  o->batch_size = G;
  o->world_size = W;
  o->rank = r;
  o->drop_last = drop;
  o->equal_ranks = equal;
  o->epochs = epochs;
  o->shuffle = shuffle;
  o->seed = 77;
}

/* One (n, G, W, drop, equal) case over `epochs` epochs: the reference and
 * the coverage of every epoch. */
static void check_case(uint64_t n, uint32_t G, uint32_t W, int drop, int equal, uint32_t epochs) {
  uint64_t E = epochs;
  uint8_t *seen = calloc(n * E, 1);
  TC_REQUIRE(seen != NULL);
  uint64_t rank_bpe = UINT64_MAX;
  int uneven = 0;
  for (uint32_t r = 0; r < W; r++) {
    twincache_loader_options o;
    options(&o, G, W, r, drop, equal, epochs, 1);
    tc_plan p;
    TC_REQUIRE(tc_plan_init(&p, &o, 9, 100, n) == 0);
    ref x = ref_of(n, G, W, r, drop, equal, epochs);
    TC_CHECK(p.bpe == x.bpe && p.total == x.total, "n %llu G %u W %u r %u drop %d equal %d: bpe %llu/%llu",
             (unsigned long long)n, G, W, r, drop, equal, (unsigned long long)p.bpe, (unsigned long long)x.bpe);
    if (rank_bpe != UINT64_MAX && rank_bpe != p.bpe) uneven = 1;
    rank_bpe = p.bpe;
    for (uint64_t seq = 0; seq < p.total; seq++) {
      tc_plan_batch b;
      tc_plan_batch_at(&p, seq, &b);
      uint64_t e = seq / x.bpe, first = ((seq % x.bpe) * W + r) * G;
      uint64_t cnt = x.positions - first < G ? x.positions - first : G;
      if (b.epoch != e || b.first != first || b.count != cnt || b.borrow != first + cnt ||
          b.epoch_first_seq != e * x.bpe || b.epoch_batches != x.bpe) {
        TC_FAIL("n %llu G %u W %u r %u drop %d equal %d seq %llu: plan (%llu, %llu, %u) want (%llu, %llu, %llu)",
                (unsigned long long)n, G, W, r, drop, equal, (unsigned long long)seq,
                (unsigned long long)b.epoch, (unsigned long long)b.first, b.count, (unsigned long long)e,
                (unsigned long long)first, (unsigned long long)cnt);
        break;
      }
      if (equal && W > 1) TC_CHECK(b.count == G);
      for (uint32_t g = 0; g < b.count; g++) {
        uint64_t pos = b.first + g, idx = tc_plan_index(&p, b.key, pos);
        TC_CHECK(idx >= 100 && idx < 100 + n);
        if (pos < n) seen[e * n + pos]++;
        else TC_CHECK(idx == tc_plan_index(&p, b.key, (pos - n) % n), "padding repeats the order's start");
      }
      TC_CHECK(tc_plan_consumed(&p, seq) == (seq == 0 ? 0 : e * n + (seq % x.bpe) * W * G));
    }
  }
  if (equal && W > 1) TC_CHECK(!uneven, "equal ranks: same batches on every rank");
  /* every position once per epoch (drop_last: those before the cut) */
  uint64_t cut = n;
  if (drop) cut = equal && W > 1 ? n / ((uint64_t)G * W) * G * W : n / G * G;
  for (uint64_t e = 0; e < E; e++)
    for (uint64_t q = 0; q < n; q++)
      if (seen[e * n + q] != (q < cut)) {
        TC_FAIL("n %llu G %u W %u drop %d equal %d: epoch %llu position %llu read %u times",
                (unsigned long long)n, G, W, drop, equal, (unsigned long long)e, (unsigned long long)q,
                seen[e * n + q]);
        e = E;
        break;
      }
  free(seen);
}

/* The permutation is one of [0, n) and the identity without shuffle. */
static void check_order(uint64_t n) {
  twincache_loader_options o;
  options(&o, 4, 1, 0, 0, 1, 2, 1);
  tc_plan p;
  TC_REQUIRE(tc_plan_init(&p, &o, 9, 5, n) == 0);
  uint8_t *seen = calloc(n, 1);
  TC_REQUIRE(seen != NULL);
  tc_plan_batch b;
  tc_plan_batch_at(&p, 0, &b);
  for (uint64_t q = 0; q < n; q++) seen[tc_plan_index(&p, b.key, q) - 5]++;
  for (uint64_t q = 0; q < n; q++) TC_CHECK(seen[q] == 1);
  o.shuffle = 0;
  TC_REQUIRE(tc_plan_init(&p, &o, 9, 5, n) == 0);
  tc_plan_batch_at(&p, 0, &b);
  for (uint64_t q = 0; q < n; q++) TC_CHECK(tc_plan_index(&p, b.key, q) == 5 + q);
  free(seen);
}

/* A same-world resume at every batch continues the stream; one past the
 * end, another field or another seed is refused. */
static void check_same_world_resume(uint64_t n, uint32_t G, uint32_t W, int drop) {
  for (uint32_t r = 0; r < W; r++) {
    twincache_loader_options o;
    options(&o, G, W, r, drop, 1, 3, 1);
    tc_plan p, q;
    TC_REQUIRE(tc_plan_init(&p, &o, 9, 0, n) == 0);
    for (uint64_t seq = 0; seq <= p.total; seq++) {
      twincache_loader_state s;
      tc_plan_state(&p, seq, &s);
      TC_REQUIRE(tc_plan_init(&q, &o, 9, 0, n) == 0);
      uint64_t next = UINT64_MAX;
      TC_CHECK(tc_plan_resume(&q, &s, &next) == 0, "%s", twincache_last_error());
      TC_CHECK(next == seq && q.total == p.total);
      for (uint64_t k = seq; k < p.total && next == seq; k++) {
        tc_plan_batch a, b;
        tc_plan_batch_at(&p, k, &a);
        tc_plan_batch_at(&q, k - seq + next, &b);
        TC_CHECK(!memcmp(&a, &b, sizeof a));
      }
    }
    twincache_loader_state s;
    tc_plan_state(&p, p.total + 1, &s);
    uint64_t next;
    TC_CHECK(tc_plan_resume(&q, &s, &next) == TWINCACHE_EINVAL);
    tc_plan_state(&p, 0, &s);
    s.seed++;
    TC_CHECK(tc_plan_resume(&q, &s, &next) == TWINCACHE_EINVAL);
    tc_plan_state(&p, 0, &s);
    s.cache_tag++;
    TC_CHECK(tc_plan_resume(&q, &s, &next) == TWINCACHE_EINVAL &&
             strstr(twincache_last_error(), "cache_tag") != NULL);
  }
}

int main(void) {
  static const uint32_t batches[] = {1, 2, 3, 5, 8};
  for (uint64_t n = 1; n <= 41; n += (n < 12 ? 1 : 7))
    for (size_t bi = 0; bi < sizeof batches / sizeof batches[0]; bi++)
      for (uint32_t W = 1; W <= 5; W++)
        for (int drop = 0; drop <= 1; drop++)
          for (int equal = 0; equal <= 1; equal++) check_case(n, batches[bi], W, drop, equal, 3);
  for (uint64_t n = 1; n <= 300; n += 37) check_order(n);
  for (uint64_t n = 1; n <= 23; n += 5)
    for (uint32_t W = 1; W <= 4; W++)
      for (int drop = 0; drop <= 1; drop++) check_same_world_resume(n, 3, W, drop);
  return tc_test_finish("test_plan");
}
