/* test_plan.c — the stream plan (loader/tc_plan.h) without a cache,
 * exhaustively over range sizes, batch sizes, world sizes, drop_last and
 * equal ranks:
 * - every batch equals the arithmetic the loader has always used (an
 *   independent statement of it below: epoch = seq / bpe, global batch
 *   j*W + r, positions padded or cut per epoch);
 * - per epoch, the ranks' valid positions are each position of [0, n)
 *   exactly once (those before the drop_last cut), in global order;
 * - equal ranks: every rank has the same batch count and full batches;
 * - tc_plan_locate finds every position where the rank that reads it has it,
 *   and answers "not in this stream" without a message;
 * - a resume at any batch continues the stream it was taken from;
 * - elastic: a state taken at world size W after any number of batches,
 *   resumed at W' (and another batch size), then again at W'': the ranks'
 *   valid positions in global order are each epoch's positions once, in
 *   order, as one rank reads them. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_error.h"
#include "tc_plan.h"
#include "tl_common.h"

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
  tl_plan_options(o, G, W, r, drop, epochs, shuffle, 77);
  o->equal_ranks = equal;
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
    tc_plan p, p0;
    TC_REQUIRE(tc_plan_init(&p, &o, 9, 100, n) == 0);
    o.rank = 0;
    TC_REQUIRE(tc_plan_init(&p0, &o, 9, 100, n) == 0);
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
        uint64_t pos = b.first + g, idx = tc_plan_index(&p, &b, pos);
        TC_CHECK(idx >= 100 && idx < 100 + n);
        uint32_t lr = UINT32_MAX, lg = UINT32_MAX;
        uint64_t ls = UINT64_MAX;
        if (pos < n) /* asked of rank 0's plan: any rank's plan locates for all */
          TC_CHECK(tc_plan_locate(&p0, e, pos, &lr, &ls, &lg) == 0 && lr == r && ls == seq && lg == g,
                   "locate n %llu G %u W %u epoch %llu pos %llu: rank %u seq %llu slot %u, want %u %llu %u",
                   (unsigned long long)n, G, W, (unsigned long long)e, (unsigned long long)pos, lr,
                   (unsigned long long)ls, lg, r, (unsigned long long)seq, g);
        if (pos < n) seen[e * n + pos]++;
        else TC_CHECK(idx == tc_plan_index(&p, &b, (pos - n) % n), "padding repeats the order's start");
      }
      TC_CHECK(tc_plan_consumed(&p, seq) == (seq == 0 ? 0 : e * n + (seq % x.bpe) * W * G));
    }
  }
  if (equal && W > 1) TC_CHECK(!uneven, "equal ranks: same batches on every rank");
  /* every position once per epoch (drop_last: those before the cut); the
   * rest, and the epoch after the last, are located nowhere */
  uint64_t cut = n;
  if (drop) cut = equal && W > 1 ? n / ((uint64_t)G * W) * G * W : n / G * G;
  {
    twincache_loader_options o;
    options(&o, G, W, 0, drop, equal, epochs, 1);
    tc_plan p;
    TC_REQUIRE(tc_plan_init(&p, &o, 9, 100, n) == 0);
    uint32_t lr, lg;
    uint64_t ls;
    /* "not here" is an ordinary answer: it leaves no message */
    tc_error_clear();
    for (uint64_t q = cut; q < n; q++) TC_CHECK(tc_plan_locate(&p, 0, q, &lr, &ls, &lg) == TWINCACHE_ENOTFOUND);
    TC_CHECK(tc_plan_locate(&p, E, 0, &lr, &ls, &lg) == TWINCACHE_ENOTFOUND);
    TC_CHECK(tc_plan_locate(&p, 0, n, &lr, &ls, &lg) == TWINCACHE_ENOTFOUND);
    TC_CHECK(twincache_last_error()[0] == '\0', "locate's not-found set \"%s\"", twincache_last_error());
  }
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
  for (uint64_t q = 0; q < n; q++) seen[tc_plan_index(&p, &b, q) - 5]++;
  for (uint64_t q = 0; q < n; q++) TC_CHECK(seen[q] == 1);
  o.shuffle = 0;
  TC_REQUIRE(tc_plan_init(&p, &o, 9, 5, n) == 0);
  tc_plan_batch_at(&p, 0, &b);
  for (uint64_t q = 0; q < n; q++) TC_CHECK(tc_plan_index(&p, &b, q) == 5 + q);
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
        TC_CHECK(a.epoch == b.epoch && a.first == b.first && a.count == b.count && a.key == b.key &&
                 a.borrow == b.borrow && a.epoch_first_seq == b.epoch_first_seq &&
                 a.epoch_batches == b.epoch_batches);
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

/* Reads `steps` batches (0 = to the end) from every rank of a world in step
 * and appends the valid (epoch, position) pairs to log; returns rank 0's
 * state after them. */
static twincache_loader_state read_world(uint64_t n, uint32_t G, uint32_t W, int drop, uint32_t epochs,
                                         const twincache_loader_state *resume, uint64_t steps, uint64_t *log,
                                         size_t *len, size_t cap) {
  tc_plan p[8];
  uint64_t next[8];
  for (uint32_t r = 0; r < W; r++) {
    twincache_loader_options o;
    options(&o, G, W, r, drop, 1, epochs, 1);
    TC_REQUIRE(tc_plan_init(&p[r], &o, 9, 0, n) == 0);
    next[r] = 0;
    if (resume) TC_REQUIRE(tc_plan_resume(&p[r], resume, &next[r]) == 0, "%s", twincache_last_error());
    TC_CHECK(p[r].total == p[0].total && next[r] == next[0], "ranks in step");
  }
  uint64_t end = steps ? next[0] + steps : p[0].total;
  if (end > p[0].total) end = p[0].total;
  for (uint64_t seq = next[0]; seq < end; seq++)
    for (uint32_t r = 0; r < W; r++) {
      tc_plan_batch b;
      tc_plan_batch_at(&p[r], seq, &b);
      for (uint32_t g = 0; g < b.count; g++)
        if (b.first + g < n) {
          TC_REQUIRE(*len < cap);
          log[(*len)++] = b.epoch * n + b.first + g;
          uint32_t lr = UINT32_MAX, lg = UINT32_MAX;
          uint64_t ls = UINT64_MAX;
          TC_CHECK(tc_plan_locate(&p[0], b.epoch, b.first + g, &lr, &ls, &lg) == 0 && lr == r && ls == seq &&
                   lg == g, "locate after a resume");
        }
    }
  twincache_loader_state s;
  tc_plan_state(&p[0], end, &s);
  return s;
}

static void check_elastic(uint64_t n, int drop) {
  enum { E = 3 };
  static const uint32_t worlds[][2] = {{4, 2}, {2, 5}, {3, 3}, {1, 7}}; /* (W, G) */
  size_t cap = (size_t)E * n;
  uint64_t *log = malloc(cap * sizeof *log);
  TC_REQUIRE(log != NULL);
  for (size_t a = 0; a < 4; a++)
    for (size_t b = 0; b < 4; b++)
      for (size_t c = 0; c < 4; c++) {
        if (a == b || b == c) continue;
        /* steps of the first two worlds: every cut up to past an epoch */
        for (uint64_t s1 = 0; s1 <= 2 * n / (worlds[a][0] * worlds[a][1]) + 2; s1 += 1)
          for (uint64_t s2 = 1; s2 <= 3; s2++) {
            size_t len = 0;
            twincache_loader_state st1 =
                read_world(n, worlds[a][1], worlds[a][0], drop, E, NULL, s1 ? s1 : 1, log, &len, cap);
            twincache_loader_state st2 =
                read_world(n, worlds[b][1], worlds[b][0], drop, E, &st1, s2, log, &len, cap);
            read_world(n, worlds[c][1], worlds[c][0], drop, E, &st2, 0, log, &len, cap);
            /* in global order, strictly increasing, and (without drop_last) every position */
            int bad = 0;
            for (size_t i = 1; i < len; i++) bad |= log[i] <= log[i - 1];
            if (!drop) bad |= len != cap;
            if (bad) {
              TC_FAIL("n %llu drop %d worlds %zu->%zu->%zu steps %llu,%llu: %zu positions, not the global order",
                      (unsigned long long)n, drop, a, b, c, (unsigned long long)s1, (unsigned long long)s2, len);
              free(log);
              return;
            }
          }
      }
  free(log);
}

/* A bare position (magic 0) is {seed, next_seq} alone (issue 35 item 7):
 * it resumes at its next_seq; with any other field set it is refused naming
 * that field, so a full state of another cache or world whose magic was
 * cleared (a W = 4 state at W = 1) is not read as this stream's seq 10. */
static void check_bare(void) {
  twincache_loader_options o;
  options(&o, 3, 1, 0, 0, 1, 3, 1);
  tc_plan p;
  TC_REQUIRE(tc_plan_init(&p, &o, 9, 0, 100) == 0);
  twincache_loader_state bare;
  memset(&bare, 0, sizeof bare);
  bare.seed = o.seed;
  bare.next_seq = 10;
  uint64_t next = 0;
  TC_CHECK(tc_plan_resume(&p, &bare, &next) == 0 && next == 10, "%s", twincache_last_error());
  /* a W = 4 rank's full state at its seq 10, magic cleared */
  twincache_loader_options o4;
  options(&o4, 3, 4, 0, 0, 1, 3, 1);
  tc_plan p4;
  TC_REQUIRE(tc_plan_init(&p4, &o4, 9, 0, 100) == 0);
  twincache_loader_state full;
  tc_plan_state(&p4, 10, &full);
  full.magic = 0;
  TC_REQUIRE(tc_plan_init(&p, &o, 9, 0, 100) == 0);
  TC_CHECK(tc_plan_resume(&p, &full, &next) == TWINCACHE_EINVAL &&
               strstr(twincache_last_error(), "field version is 2 with magic 0") != NULL,
           "%s", twincache_last_error());
  static const char *const names[] = {"version", "cache_tag", "index_begin", "index_end", "batch_size",
                                      "world_size", "rank", "shuffle", "drop_last", "equal_ranks", "bucket",
                                      "origin", "local_nodes"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    twincache_loader_state s = bare;
    switch (i) {
    case 0: s.version = 77; break;
    case 1: s.cache_tag = 5; break;
    case 2: s.index_begin = 1; break;
    case 3: s.index_end = 7; break;
    case 4: s.batch_size = 3; break;
    case 5: s.world_size = 4; break;
    case 6: s.rank = 1; break;
    case 7: s.shuffle = 1; break;
    case 8: s.drop_last = 1; break;
    case 9: s.equal_ranks = 1; break;
    case 10: s.bucket = 1; break;
    case 11: s.origin = 40; break;
    default: s.local_nodes = 9; break;
    }
    char want[64];
    snprintf(want, sizeof want, "field %s is ", names[i]);
    TC_REQUIRE(tc_plan_init(&p, &o, 9, 0, 100) == 0);
    TC_CHECK(tc_plan_resume(&p, &s, &next) == TWINCACHE_EINVAL && strstr(twincache_last_error(), want) != NULL,
             "%s: %s", names[i], twincache_last_error());
  }
}

/* tc_plan_set_origin at the edges of a finite stream (issue 35 item 12):
 * n = 10 graphs, 3 epochs: origin 30 (the end) leaves an empty stream, 29
 * one batch; 31 and 40 lie past the end and are refused; an endless stream
 * takes any origin. */
static void check_set_origin(void) {
  twincache_loader_options o;
  options(&o, 3, 1, 0, 0, 1, 3, 1);
  tc_plan p;
  TC_REQUIRE(tc_plan_init(&p, &o, 9, 0, 10) == 0);
  TC_CHECK(tc_plan_set_origin(&p, 29) == 0 && p.total == 1, "origin 29: total %llu", (unsigned long long)p.total);
  TC_CHECK(tc_plan_set_origin(&p, 30) == 0 && p.total == 0, "origin 30: total %llu", (unsigned long long)p.total);
  TC_CHECK(tc_plan_set_origin(&p, 31) == TWINCACHE_EINVAL &&
               strstr(twincache_last_error(), "position 31 graphs is past the end of the 3 epochs of 10 graphs"),
           "origin 31: %s", twincache_last_error());
  TC_CHECK(tc_plan_set_origin(&p, 40) == TWINCACHE_EINVAL, "origin 40 (epoch 4 of 3)");
  TC_CHECK(tc_plan_set_origin(&p, 1000) == TWINCACHE_EINVAL, "origin 1000");
  o.epochs = 0;
  TC_REQUIRE(tc_plan_init(&p, &o, 9, 0, 10) == 0);
  TC_CHECK(tc_plan_set_origin(&p, 1000) == 0 && p.total == UINT64_MAX);
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
  for (uint64_t n = 1; n <= 40; n += 3)
    for (int drop = 0; drop <= 1; drop++) check_elastic(n, drop);
  check_bare();
  check_set_origin();
  return tc_test_finish("test_plan");
}
