/* test_plan_bucket.c — size buckets of the stream plan (loader/tc_plan.h,
 * "Buckets") without a cache, over range sizes, batch sizes, window sizes B,
 * world sizes, drop_last and shuffle, on node-count tables made here:
 * - per epoch the ranks read every graph of the range exactly once (those
 *   before the drop_last cut: the same number as without buckets), and every
 *   rank reads the same number of batches as without buckets;
 * - the order is a regrouping of the plain order inside each window of B*G
 *   positions, and a window's chunks of G never interleave in N: for two
 *   chunks, one's largest N is at most the other's smallest; without shuffle
 *   N never decreases within a window;
 * - padding: the sum over batches of count * (the batch's largest N) is
 *   never above the plain order's, and below it on a wide N range;
 * - elastic resume: 4 -> 2 -> 3 ranks across epoch boundaries read, in
 *   global order, the graphs one rank reads uninterrupted;
 * - a state records B: another B, or another batch size with buckets, is
 *   refused naming the field; B not a power of two, too large, or B*G over
 *   the window limit is refused at init; the state codec keeps B. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_plan.h"
#include "tc_test.h"

enum { BEGIN = 100 };

static void options(twincache_loader_options *o, uint32_t G, uint32_t W, uint32_t r, int drop, uint32_t epochs,
                    int shuffle, uint32_t B) {
  twincache_loader_options_init(o);
  o->batch_size = G;
  o->world_size = W;
  o->rank = r;
  o->drop_last = drop;
  o->epochs = epochs;
  o->shuffle = shuffle;
  o->seed = 5;
  o->bucket_batches = B;
}

/* A node-count table: N of graph BEGIN + i in lo..hi, pseudo-random. */
static uint16_t *nodes_table(uint64_t n, uint32_t lo, uint32_t hi) {
  uint16_t *t = malloc(n * sizeof *t);
  TC_REQUIRE(t != NULL);
  for (uint64_t i = 0; i < n; i++) t[i] = (uint16_t)(lo + tc_mix64(i * 7 + 3) % (hi - lo + 1));
  return t;
}

static uint16_t N_of(const uint16_t *t, uint64_t index) { return t[index - BEGIN]; }

/* One case: coverage, equal ranks, chunk grouping, and the padding sums. */
static void check_case(uint64_t n, uint32_t G, uint32_t B, uint32_t W, int drop, int shuffle, const uint16_t *t,
                       uint64_t *pad_plain, uint64_t *pad_bucket) {
  enum { E = 2 };
  uint8_t *seen = calloc(n * E, 1);
  TC_REQUIRE(seen != NULL);
  uint64_t read_bucket = 0, read_plain = 0;
  for (uint32_t r = 0; r < W; r++) {
    twincache_loader_options o;
    tc_plan p, q;
    options(&o, G, W, r, drop, E, shuffle, B);
    TC_REQUIRE(tc_plan_init(&p, &o, 9, BEGIN, n) == 0, "%s", twincache_last_error());
    p.nodes = t;
    options(&o, G, W, r, drop, E, shuffle, 0);
    TC_REQUIRE(tc_plan_init(&q, &o, 9, BEGIN, n) == 0);
    TC_CHECK(p.bpe == q.bpe && p.total == q.total, "bucketed ranks read as many batches");
    tc_plan_window win;
    TC_REQUIRE(tc_plan_window_init(&p, &win) == 0);
    for (uint64_t seq = 0; seq < p.total; seq++) {
      tc_plan_batch b, c;
      tc_plan_batch_at(&p, seq, &b);
      tc_plan_batch_at(&q, seq, &c);
      uint32_t maxb = 0, maxc = 0;
      for (uint32_t g = 0; g < b.count; g++) {
        uint64_t pos = b.first + g, ib = tc_plan_graph(&p, &b, &win, pos), ic = tc_plan_index(&q, &c, pos);
        TC_CHECK(ib >= BEGIN && ib < BEGIN + n);
        if (N_of(t, ib) > maxb) maxb = N_of(t, ib);
        if (N_of(t, ic) > maxc) maxc = N_of(t, ic);
        if (pos < n) {
          seen[b.epoch * n + (ib - BEGIN)]++;
          read_bucket++;
        } else { /* padding repeats the bucketed order's start */
          TC_CHECK(ib == tc_plan_graph(&p, &b, &win, (pos - n) % n));
        }
        if (pos < n) read_plain++;
      }
      *pad_bucket += (uint64_t)b.count * maxb;
      *pad_plain += (uint64_t)c.count * maxc;
    }
    tc_plan_window_free(&win);
  }
  TC_CHECK(read_bucket == read_plain);
  uint64_t cut = !drop ? n : W > 1 ? n / ((uint64_t)G * W) * G * W : n / G * G;
  uint64_t total = 0;
  for (uint64_t i = 0; i < n * E; i++) {
    TC_CHECK(seen[i] <= 1, "n %llu G %u B %u W %u: graph %llu of epoch %llu read %u times", (unsigned long long)n,
             G, B, W, (unsigned long long)(i % n), (unsigned long long)(i / n), seen[i]);
    total += seen[i];
  }
  TC_CHECK(total == cut * E, "n %llu G %u B %u W %u drop %d: %llu graphs read, want %llu", (unsigned long long)n, G,
           B, W, drop, (unsigned long long)total, (unsigned long long)(cut * E));
  free(seen);
}

/* Inside every window: the bucketed order is the plain order regrouped, and
 * chunks of G are ranges of N (sorted without shuffle). */
static void check_windows(uint64_t n, uint32_t G, uint32_t B, int shuffle, const uint16_t *t) {
  twincache_loader_options o;
  tc_plan p, q;
  options(&o, G, 1, 0, 0, 1, shuffle, B);
  TC_REQUIRE(tc_plan_init(&p, &o, 9, BEGIN, n) == 0);
  p.nodes = t;
  options(&o, G, 1, 0, 0, 1, shuffle, 0);
  TC_REQUIRE(tc_plan_init(&q, &o, 9, BEGIN, n) == 0);
  tc_plan_window win;
  TC_REQUIRE(tc_plan_window_init(&p, &win) == 0);
  tc_plan_batch b;
  tc_plan_batch_at(&p, 0, &b);
  uint64_t L = (uint64_t)B * G;
  uint64_t *mine = malloc(L * sizeof *mine), *plain = malloc(L * sizeof *plain);
  TC_REQUIRE(mine && plain);
  for (uint64_t w0 = 0; w0 < n; w0 += L) {
    uint64_t len = n - w0 < L ? n - w0 : L, chunks = (len + G - 1) / G;
    for (uint64_t o2 = 0; o2 < len; o2++) {
      mine[o2] = tc_plan_graph(&p, &b, &win, w0 + o2);
      plain[o2] = tc_plan_index(&q, &b, w0 + o2);
    }
    /* the same graphs (a permutation inside the window): sum and xor of mix64 */
    uint64_t s1 = 0, s2 = 0, x1 = 0, x2 = 0;
    for (uint64_t o2 = 0; o2 < len; o2++)
      s1 += tc_mix64(mine[o2]), s2 += tc_mix64(plain[o2]), x1 ^= tc_mix64(mine[o2] + 1), x2 ^= tc_mix64(plain[o2] + 1);
    TC_CHECK(s1 == s2 && x1 == x2, "window at %llu holds the plain order's graphs", (unsigned long long)w0);
    for (uint64_t a = 0; a < chunks; a++)
      for (uint64_t c = a + 1; c < chunks; c++) {
        uint32_t amin = 999, amax = 0, cmin = 999, cmax = 0;
        for (uint64_t i = a * G; i < len && i < a * G + G; i++) {
          uint32_t v = N_of(t, mine[i]);
          amin = v < amin ? v : amin, amax = v > amax ? v : amax;
        }
        for (uint64_t i = c * G; i < len && i < c * G + G; i++) {
          uint32_t v = N_of(t, mine[i]);
          cmin = v < cmin ? v : cmin, cmax = v > cmax ? v : cmax;
        }
        TC_CHECK(amax <= cmin || cmax <= amin, "n %llu G %u B %u: chunks %llu and %llu of window %llu interleave "
                 "in N ([%u,%u] and [%u,%u])", (unsigned long long)n, G, B, (unsigned long long)a,
                 (unsigned long long)c, (unsigned long long)w0, amin, amax, cmin, cmax);
        if (c == chunks - 1 && len % G) TC_CHECK(amax <= cmin, "the partial chunk holds the window's largest N");
      }
    if (!shuffle)
      for (uint64_t i = 1; i < len; i++) TC_CHECK(N_of(t, mine[i - 1]) <= N_of(t, mine[i]));
  }
  free(mine);
  free(plain);
  tc_plan_window_free(&win);
}

/* Reads `steps` batches (0 = to the end) on every rank of a world in step
 * from state `resume`; appends each valid (epoch * n + position) and its
 * graph; returns rank 0's state after them. */
static twincache_loader_state read_world(uint64_t n, uint32_t G, uint32_t B, uint32_t W, const uint16_t *t,
                                         const twincache_loader_state *resume, uint64_t steps, uint64_t *pos_log,
                                         uint64_t *graph_log, size_t *len, size_t cap) {
  tc_plan p[4];
  tc_plan_window win;
  uint64_t next[4];
  for (uint32_t r = 0; r < W; r++) {
    twincache_loader_options o;
    options(&o, G, W, r, 0, 3, 1, B);
    TC_REQUIRE(tc_plan_init(&p[r], &o, 9, BEGIN, n) == 0);
    p[r].nodes = t;
    next[r] = 0;
    if (resume) TC_REQUIRE(tc_plan_resume(&p[r], resume, &next[r]) == 0, "%s", twincache_last_error());
  }
  TC_REQUIRE(tc_plan_window_init(&p[0], &win) == 0);
  uint64_t end = steps && next[0] + steps < p[0].total ? next[0] + steps : p[0].total;
  for (uint64_t seq = next[0]; seq < end; seq++)
    for (uint32_t r = 0; r < W; r++) {
      tc_plan_batch b;
      tc_plan_batch_at(&p[r], seq, &b);
      for (uint32_t g = 0; g < b.count; g++)
        if (b.first + g < n) {
          TC_REQUIRE(*len < cap);
          pos_log[*len] = b.epoch * n + b.first + g;
          graph_log[(*len)++] = tc_plan_graph(&p[r], &b, &win, b.first + g);
        }
    }
  tc_plan_window_free(&win);
  twincache_loader_state s;
  tc_plan_state(&p[0], end, &s);
  return s;
}

static void check_elastic(uint64_t n, uint32_t G, uint32_t B, const uint16_t *t) {
  size_t cap = 3 * n;
  uint64_t *pos1 = malloc(cap * 8), *g1 = malloc(cap * 8), *pos2 = malloc(cap * 8), *g2 = malloc(cap * 8);
  TC_REQUIRE(pos1 && g1 && pos2 && g2);
  size_t len1 = 0;
  read_world(n, G, B, 1, t, NULL, 0, pos1, g1, &len1, cap); /* one rank, uninterrupted */
  TC_CHECK(len1 == cap);
  for (uint64_t s1 = 1; s1 <= n / (4 * G) + 2; s1++)
    for (uint64_t s2 = 1; s2 <= n / (2 * G) + 2; s2 += 2) {
      size_t len = 0;
      twincache_loader_state a = read_world(n, G, B, 4, t, NULL, s1, pos2, g2, &len, cap);
      TC_CHECK(a.bucket == tc_plan_bucket_code(B));
      twincache_loader_state c = read_world(n, G, B, 2, t, &a, s2, pos2, g2, &len, cap);
      read_world(n, G, B, 3, t, &c, 0, pos2, g2, &len, cap);
      int bad = len != cap;
      for (size_t i = 0; i < len && !bad; i++) bad = pos2[i] != pos1[i] || g2[i] != g1[i];
      if (bad) {
        TC_FAIL("n %llu G %u B %u: 4 -> 2 -> 3 ranks after %llu, %llu steps differ from one rank's stream",
                (unsigned long long)n, G, B, (unsigned long long)s1, (unsigned long long)s2);
        break;
      }
    }
  free(pos1), free(g1), free(pos2), free(g2);
}

/* Refusals, and the state's B through the codec. */
static void check_refusals(void) {
  twincache_loader_options o;
  tc_plan p, q;
  static const uint32_t bad[] = {3, 6, 2048, 1000};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    options(&o, 4, 1, 0, 0, 1, 1, bad[i]);
    TC_CHECK(tc_plan_init(&p, &o, 9, BEGIN, 100) == TWINCACHE_EINVAL &&
             strstr(twincache_last_error(), "bucket_batches") != NULL, "B %u refused", bad[i]);
  }
  options(&o, 2048, 1, 0, 0, 1, 1, 1024); /* L = 2^21 */
  TC_CHECK(tc_plan_init(&p, &o, 9, BEGIN, 100) == TWINCACHE_EINVAL);
  options(&o, 1024, 1, 0, 0, 1, 1, 1024); /* L = 2^20: the limit */
  TC_CHECK(tc_plan_init(&p, &o, 9, BEGIN, 100) == 0);

  options(&o, 4, 2, 0, 0, 2, 1, 8);
  TC_REQUIRE(tc_plan_init(&p, &o, 9, BEGIN, 100) == 0);
  twincache_loader_state s, d;
  tc_plan_state(&p, 3, &s);
  TC_CHECK(s.bucket == 4); /* 8 = 2^3 */
  uint8_t buf[TWINCACHE_LOADER_STATE_BYTES];
  twincache_loader_state_encode(&s, buf);
  TC_CHECK(twincache_loader_state_decode(buf, &d) == 0 && memcmp(&d, &s, sizeof s) == 0, "codec keeps bucket");
  buf[21] = (uint8_t)(buf[21] | 12 << 3); /* code 12+: B 2048, refused */
  TC_CHECK(twincache_loader_state_decode(buf, &d) == TWINCACHE_EINVAL);
  uint64_t next;
  options(&o, 4, 2, 0, 0, 2, 1, 16); /* another B */
  TC_REQUIRE(tc_plan_init(&q, &o, 9, BEGIN, 100) == 0);
  TC_CHECK(tc_plan_resume(&q, &s, &next) == TWINCACHE_EINVAL && strstr(twincache_last_error(), "bucket") != NULL,
           "%s", twincache_last_error());
  options(&o, 4, 2, 0, 0, 2, 1, 0); /* no buckets */
  TC_REQUIRE(tc_plan_init(&q, &o, 9, BEGIN, 100) == 0);
  TC_CHECK(tc_plan_resume(&q, &s, &next) == TWINCACHE_EINVAL && strstr(twincache_last_error(), "bucket") != NULL);
  options(&o, 8, 1, 0, 0, 2, 1, 8); /* same B, another batch size */
  TC_REQUIRE(tc_plan_init(&q, &o, 9, BEGIN, 100) == 0);
  TC_CHECK(tc_plan_resume(&q, &s, &next) == TWINCACHE_EINVAL && strstr(twincache_last_error(), "batch_size") != NULL);
  options(&o, 4, 3, 1, 0, 2, 1, 8); /* same B and G, another world: elastic */
  TC_REQUIRE(tc_plan_init(&q, &o, 9, BEGIN, 100) == 0);
  TC_CHECK(tc_plan_resume(&q, &s, &next) == 0 && next == 0 && q.origin_pos == 3 * 2 * 4);
}

int main(void) {
  static const uint32_t batches[] = {1, 3, 4};
  static const uint32_t windows[] = {1, 2, 4, 16};
  uint64_t pad_plain = 0, pad_bucket = 0;
  for (uint64_t n = 1; n <= 90; n += (n < 10 ? 1 : 17)) {
    uint16_t *t = nodes_table(n, 2, 40), *narrow = nodes_table(n, 7, 7);
    for (size_t bi = 0; bi < 3; bi++)
      for (size_t wi = 0; wi < 4; wi++) {
        for (uint32_t W = 1; W <= 3; W++)
          for (int drop = 0; drop <= 1; drop++)
            for (int shuffle = 0; shuffle <= 1; shuffle++)
              check_case(n, batches[bi], windows[wi], W, drop, shuffle, t, &pad_plain, &pad_bucket);
        for (int shuffle = 0; shuffle <= 1; shuffle++) {
          check_windows(n, batches[bi], windows[wi], shuffle, t);
          check_windows(n, batches[bi], windows[wi], shuffle, narrow); /* ties: still a permutation */
        }
      }
    free(t);
    free(narrow);
  }
  TC_CHECK(pad_bucket < pad_plain, "buckets pad less: %llu node slots against %llu", (unsigned long long)pad_bucket,
           (unsigned long long)pad_plain);
  uint16_t *t = nodes_table(200, 3, 50);
  for (uint64_t n = 7; n <= 200; n += 64)
    for (uint32_t G = 2; G <= 5; G += 3) check_elastic(n, G, 4, t);
  free(t);
  check_refusals();
  return tc_test_finish("test_plan_bucket");
}
