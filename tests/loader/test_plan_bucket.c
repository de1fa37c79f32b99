/* test_plan_bucket.c — size buckets of the stream plan (loader/tc_plan.h,
 * "Buckets") without a cache, over range sizes, batch sizes, world sizes,
 * drop_last and shuffle, on node-count tables made here:
 * - per epoch the ranks read every graph of the range exactly once (those
 *   before the drop_last cut: as many as without buckets), and every rank
 *   reads as many batches as without buckets;
 * - one step (the W ranks' batches of one seq) never interleaves in N with
 *   another step of the epoch: one's largest N is at most the other's
 *   smallest; without shuffle N never decreases along the epoch; with
 *   shuffle two epochs differ and the steps' order is not sorted by N;
 * - padding: the sum over batches of count * (the batch's largest N) is
 *   below the plain order's on a wide N range;
 * - elastic resume at the same global batch, 4 x 3 -> 2 x 6 -> 3 x 4 (ranks
 *   x batch) across epoch boundaries, reads in global order the graphs one
 *   rank of batch 12 reads uninterrupted;
 * - a state records buckets: a loader without them, or another global batch,
 *   is refused naming the field; buckets other than 0/1 are refused at
 *   init; the state codec keeps the bit. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_plan.h"
#include "tl_common.h"

enum { BEGIN = 100 };

static void options(twincache_loader_options *o, uint32_t G, uint32_t W, uint32_t r, int drop, uint32_t epochs,
                    int shuffle, int buckets) {
  tl_plan_options(o, G, W, r, drop, epochs, shuffle, 5);
  o->buckets = buckets;
}

/* A node-count table: N of graph BEGIN + i in lo..hi, pseudo-random. */
static uint16_t *nodes_table(uint64_t n, uint32_t lo, uint32_t hi) {
  uint16_t *t = malloc(n * sizeof *t);
  TC_REQUIRE(t != NULL);
  for (uint64_t i = 0; i < n; i++) t[i] = (uint16_t)(lo + tc_mix64(i * 7 + 3) % (hi - lo + 1));
  return t;
}

/* One case over E epochs: coverage, equal ranks, steps ranges of N, and the
 * padding sums. */
static void check_case(uint64_t n, uint32_t G, uint32_t W, int drop, int shuffle, const uint16_t *t,
                       uint64_t *pad_plain, uint64_t *pad_bucket) {
  enum { E = 2 };
  uint8_t *seen = calloc(n * E, 1);
  tc_plan_groups groups;
  TC_REQUIRE(seen != NULL && tc_plan_groups_init(&groups, t, n) == 0);
  tc_plan p[8], q[8];
  for (uint32_t r = 0; r < W; r++) {
    twincache_loader_options o;
    options(&o, G, W, r, drop, E, shuffle, 1);
    TC_REQUIRE(tc_plan_init(&p[r], &o, 9, BEGIN, n) == 0, "%s", twincache_last_error());
    p[r].groups = &groups;
    options(&o, G, W, r, drop, E, shuffle, 0);
    TC_REQUIRE(tc_plan_init(&q[r], &o, 9, BEGIN, n) == 0);
    TC_CHECK(p[r].bpe == q[r].bpe && p[r].total == q[r].total, "bucketed ranks read as many batches");
  }
  uint64_t read_bucket = 0, read_plain = 0, steps = p[0].total;
  uint32_t *lo = malloc((steps + 1) * sizeof *lo), *hi = malloc((steps + 1) * sizeof *hi);
  uint64_t *ep = malloc((steps + 1) * sizeof *ep);
  TC_REQUIRE(lo && hi && ep);
  for (uint64_t seq = 0; seq < steps; seq++) {
    lo[seq] = 999, hi[seq] = 0;
    for (uint32_t r = 0; r < W; r++) {
      if (seq >= p[r].total) continue; /* unequal ranks: the first ranks read one more */
      tc_plan_batch b, c;
      tc_plan_batch_at(&p[r], seq, &b);
      tc_plan_batch_at(&q[r], seq, &c);
      ep[seq] = b.epoch;
      uint32_t maxb = 0, maxc = 0;
      for (uint32_t g = 0; g < b.count; g++) {
        uint64_t pos = b.first + g, ib = tc_plan_graph(&p[r], &b, pos), ic = tc_plan_graph(&q[r], &c, pos);
        TC_REQUIRE(ib >= BEGIN && ib < BEGIN + n);
        uint32_t nb = t[ib - BEGIN], nc = t[ic - BEGIN];
        maxb = nb > maxb ? nb : maxb, maxc = nc > maxc ? nc : maxc;
        TC_CHECK(ic == tc_plan_index(&q[r], &c, pos < n ? pos : (pos - n) % n), "plain order unchanged");
        if (pos < n) {
          seen[b.epoch * n + (ib - BEGIN)]++;
          read_bucket++, read_plain++;
          lo[seq] = nb < lo[seq] ? nb : lo[seq];
          hi[seq] = nb > hi[seq] ? nb : hi[seq];
        }
      }
      *pad_bucket += (uint64_t)b.count * maxb;
      *pad_plain += (uint64_t)c.count * maxc;
    }
  }
  TC_CHECK(read_bucket == read_plain);
  /* steps of one epoch are ranges of N (p[0]'s seq = one step when ranks are in step) */
  if (W == 1 || p[0].equal)
    for (uint64_t a = 0; a < steps; a++)
      for (uint64_t c = a + 1; c < steps && ep[c] == ep[a]; c++)
        if (lo[a] != 999 && lo[c] != 999)
          TC_CHECK(hi[a] <= lo[c] || hi[c] <= lo[a],
                   "n %llu G %u W %u: steps %llu [%u,%u] and %llu [%u,%u] interleave in N", (unsigned long long)n,
                   G, W, (unsigned long long)a, lo[a], hi[a], (unsigned long long)c, lo[c], hi[c]);
  if (!shuffle && (W == 1 || p[0].equal))
    for (uint64_t a = 1; a < steps; a++)
      if (ep[a] == ep[a - 1] && lo[a] != 999 && hi[a - 1] != 0) TC_CHECK(hi[a - 1] <= lo[a], "sorted by N");
  uint64_t cut = !drop ? n : W > 1 ? n / ((uint64_t)G * W) * G * W : n / G * G, total = 0;
  for (uint64_t i = 0; i < n * E; i++) {
    TC_CHECK(seen[i] <= 1, "n %llu G %u W %u: graph %llu of epoch %llu read %u times", (unsigned long long)n, G, W,
             (unsigned long long)(i % n), (unsigned long long)(i / n), seen[i]);
    total += seen[i];
  }
  TC_CHECK(total == cut * E, "n %llu G %u W %u drop %d: %llu graphs read, want %llu", (unsigned long long)n, G, W,
           drop, (unsigned long long)total, (unsigned long long)(cut * E));
  free(lo), free(hi), free(ep), free(seen);
  tc_plan_groups_free(&groups);
}

/* With shuffle, epochs 0 and 1 order the graphs differently (a wide range). */
static void check_epochs_differ(void) {
  uint64_t n = 500;
  uint16_t *t = nodes_table(n, 5, 9);
  tc_plan_groups groups;
  TC_REQUIRE(tc_plan_groups_init(&groups, t, n) == 0);
  twincache_loader_options o;
  options(&o, 10, 1, 0, 0, 2, 1, 1);
  tc_plan p;
  TC_REQUIRE(tc_plan_init(&p, &o, 9, BEGIN, n) == 0);
  p.groups = &groups;
  tc_plan_batch b0, b1;
  tc_plan_batch_at(&p, 0, &b0);
  tc_plan_batch_at(&p, p.bpe, &b1);
  TC_REQUIRE(b1.epoch == 1);
  uint64_t same = 0;
  for (uint64_t pos = 0; pos < n; pos++) same += tc_plan_graph(&p, &b0, pos) == tc_plan_graph(&p, &b1, pos);
  TC_CHECK(same < n / 10, "epochs 0 and 1 agree at %llu of %llu positions", (unsigned long long)same,
           (unsigned long long)n);
  /* the steps' order is shuffled: N goes down from some step to the next */
  uint64_t descents = 0;
  for (uint64_t pos = 10; pos < n; pos += 10) descents += t[tc_plan_graph(&p, &b0, pos - 10) - BEGIN] >
                                                          t[tc_plan_graph(&p, &b0, pos) - BEGIN];
  TC_CHECK(descents >= 5, "%llu descents of N between steps: the steps are not shuffled",
           (unsigned long long)descents);
  tc_plan_groups_free(&groups);
  free(t);
}

/* Reads `steps` steps (0 = to the end) on every rank of a world in step
 * from state `resume`; appends each valid graph in global order; returns
 * rank 0's state after them. */
static twincache_loader_state read_world(uint64_t n, uint32_t G, uint32_t W, const tc_plan_groups *groups,
                                         const twincache_loader_state *resume, uint64_t steps, uint64_t *log,
                                         size_t *len, size_t cap) {
  tc_plan p[4];
  uint64_t next[4];
  for (uint32_t r = 0; r < W; r++) {
    twincache_loader_options o;
    options(&o, G, W, r, 0, 3, 1, 1);
    TC_REQUIRE(tc_plan_init(&p[r], &o, 9, BEGIN, n) == 0);
    p[r].groups = groups;
    next[r] = 0;
    if (resume) TC_REQUIRE(tc_plan_resume(&p[r], resume, &next[r]) == 0, "%s", twincache_last_error());
  }
  uint64_t end = steps && next[0] + steps < p[0].total ? next[0] + steps : p[0].total;
  for (uint64_t seq = next[0]; seq < end; seq++)
    for (uint32_t r = 0; r < W; r++) {
      tc_plan_batch b;
      tc_plan_batch_at(&p[r], seq, &b);
      for (uint32_t g = 0; g < b.count; g++)
        if (b.first + g < n) {
          TC_REQUIRE(*len < cap);
          log[(*len)++] = (b.epoch << 32) | tc_plan_graph(&p[r], &b, b.first + g);
        }
    }
  twincache_loader_state s;
  tc_plan_state(&p[0], end, &s);
  return s;
}

static void check_elastic(uint64_t n, const uint16_t *t) {
  tc_plan_groups groups;
  TC_REQUIRE(tc_plan_groups_init(&groups, t, n) == 0);
  size_t cap = 3 * n;
  uint64_t *one = malloc(cap * 8), *got = malloc(cap * 8);
  TC_REQUIRE(one && got);
  size_t len1 = 0;
  read_world(n, 12, 1, &groups, NULL, 0, one, &len1, cap); /* one rank, batch 12, uninterrupted */
  TC_CHECK(len1 == cap);
  for (uint64_t s1 = 1; s1 <= n / 12 + 2; s1++)
    for (uint64_t s2 = 1; s2 <= n / 12 + 2; s2 += 3) {
      size_t len = 0;
      twincache_loader_state a = read_world(n, 3, 4, &groups, NULL, s1, got, &len, cap);
      TC_CHECK(a.bucket == 1);
      twincache_loader_state c = read_world(n, 6, 2, &groups, &a, s2, got, &len, cap);
      read_world(n, 4, 3, &groups, &c, 0, got, &len, cap);
      if (len != cap || memcmp(got, one, cap * 8)) {
        TC_FAIL("n %llu: 4x3 -> 2x6 -> 3x4 after %llu, %llu steps differ from one rank of batch 12",
                (unsigned long long)n, (unsigned long long)s1, (unsigned long long)s2);
        break;
      }
    }
  free(one), free(got);
  tc_plan_groups_free(&groups);
}

/* Refusals, and the state's bit through the codec. */
static void check_refusals(void) {
  twincache_loader_options o;
  tc_plan p, q;
  options(&o, 4, 1, 0, 0, 1, 1, 2);
  TC_CHECK(tc_plan_init(&p, &o, 9, BEGIN, 100) == TWINCACHE_EINVAL &&
           strstr(twincache_last_error(), "buckets") != NULL);
  options(&o, 4, 2, 0, 0, 2, 1, 1);
  TC_REQUIRE(tc_plan_init(&p, &o, 9, BEGIN, 100) == 0);
  twincache_loader_state s, d;
  tc_plan_state(&p, 3, &s);
  TC_CHECK(s.bucket == 1);
  uint8_t buf[TWINCACHE_LOADER_STATE_BYTES];
  twincache_loader_state_encode(&s, buf);
  TC_CHECK(twincache_loader_state_decode(buf, &d) == 0 && memcmp(&d, &s, sizeof s) == 0, "codec keeps bucket");
  TC_CHECK((buf[21] & 8) == 8);
  buf[21] |= 32; /* an unknown flag (bit 4 is local mode's) */
  TC_CHECK(twincache_loader_state_decode(buf, &d) == TWINCACHE_EINVAL);
  uint64_t next;
  options(&o, 4, 2, 0, 0, 2, 1, 0); /* no buckets */
  TC_REQUIRE(tc_plan_init(&q, &o, 9, BEGIN, 100) == 0);
  TC_CHECK(tc_plan_resume(&q, &s, &next) == TWINCACHE_EINVAL && strstr(twincache_last_error(), "bucket") != NULL,
           "%s", twincache_last_error());
  options(&o, 4, 1, 0, 0, 2, 1, 1); /* another global batch: 4 x 1 */
  TC_REQUIRE(tc_plan_init(&q, &o, 9, BEGIN, 100) == 0);
  TC_CHECK(tc_plan_resume(&q, &s, &next) == TWINCACHE_EINVAL && strstr(twincache_last_error(), "global batch"));
  options(&o, 8, 1, 0, 0, 2, 1, 1); /* the same global batch 8 x 1: elastic */
  TC_REQUIRE(tc_plan_init(&q, &o, 9, BEGIN, 100) == 0);
  TC_CHECK(tc_plan_resume(&q, &s, &next) == 0 && next == 0 && q.origin_pos == 3 * 2 * 4);
}

int main(void) {
  static const uint32_t batches[] = {1, 3, 4};
  uint64_t pad_plain = 0, pad_bucket = 0;
  for (uint64_t n = 1; n <= 120; n += (n < 10 ? 1 : 17)) {
    uint16_t *t = nodes_table(n, 2, 40), *narrow = nodes_table(n, 7, 7);
    for (size_t bi = 0; bi < 3; bi++)
      for (uint32_t W = 1; W <= 3; W++)
        for (int drop = 0; drop <= 1; drop++)
          for (int shuffle = 0; shuffle <= 1; shuffle++) {
            check_case(n, batches[bi], W, drop, shuffle, t, &pad_plain, &pad_bucket);
            uint64_t a = 0, b = 0; /* one N: every order is a range */
            check_case(n, batches[bi], W, drop, shuffle, narrow, &a, &b);
          }
    free(t);
    free(narrow);
  }
  TC_CHECK(pad_bucket < pad_plain, "buckets pad less: %llu node slots against %llu", (unsigned long long)pad_bucket,
           (unsigned long long)pad_plain);
  check_epochs_differ();
  uint16_t *t = nodes_table(300, 3, 50);
  for (uint64_t n = 7; n <= 300; n += 73) check_elastic(n, t);
  free(t);
  check_refusals();
  return tc_test_finish("test_plan_bucket");
}
