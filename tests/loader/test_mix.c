/* test_mix.c — the mixture plan (loader/tc_mix.h) without a cache:
 * - the largest-remainder counts: known cases, sum G, every c_i >= 1, and
 *   the refusals (a weight <= 0 or NaN, G below the sources, no sources);
 * - every batch holds exactly c_i graphs of source i, in source order, and
 *   every source's positions appear once each, in order, over the global
 *   batches; each n_i positions of a source's own epoch are its graphs once;
 * - ranks: rank r's batch j is global batch j*W + r, every rank has the
 *   same batch count, and the ranks together read global batches 0..T once;
 * - epochs: E = ceil(n_L / c_L), the finite stream's end;
 * - resume: a state taken at world W after any number of steps, resumed at
 *   W' (crossing epoch boundaries), continues the same global stream. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_mix.h"
#include "tc_test.h"
#include "twincache_loader.h"

static void check_counts(const double *w, uint32_t nsrc, uint32_t G, const uint32_t *want) {
  uint32_t c[TC_MIX_MAX];
  TC_REQUIRE(tc_mix_counts(w, nsrc, G, c) == 0, "counts of G=%u", G);
  for (uint32_t i = 0; i < nsrc; i++) TC_CHECK(c[i] == want[i], "G=%u source %u: %u, want %u", G, i, c[i], want[i]);
}

static void test_counts(void) {
  double w73[] = {0.7, 0.3}, w111[] = {1, 1, 1}, w_small[] = {0.98, 0.01, 0.01};
  check_counts(w73, 2, 10, (uint32_t[]){7, 3});
  check_counts(w73, 2, 3, (uint32_t[]){2, 1});  /* 2.1, 0.9: the .9 gets the rest */
  check_counts(w73, 2, 2, (uint32_t[]){1, 1});
  check_counts(w111, 3, 4, (uint32_t[]){2, 1, 1}); /* tie: the lower index */
  check_counts(w111, 3, 3, (uint32_t[]){1, 1, 1});
  check_counts(w_small, 3, 10, (uint32_t[]){8, 1, 1}); /* 9.8, .1, .1 -> 10,0,0 -> every c_i >= 1 */
  /* exhaustive: sums and minimums */
  for (uint32_t G = 1; G <= 40; G++)
    for (uint32_t nsrc = 1; nsrc <= 5 && nsrc <= G; nsrc++) {
      double w[5];
      for (uint32_t i = 0; i < nsrc; i++) w[i] = 1.0 + (double)((i * 7 + G) % 5) * 0.37;
      uint32_t c[TC_MIX_MAX], sum = 0;
      TC_REQUIRE(tc_mix_counts(w, nsrc, G, c) == 0);
      for (uint32_t i = 0; i < nsrc; i++) {
        TC_CHECK(c[i] >= 1);
        sum += c[i];
      }
      TC_CHECK(sum == G, "G=%u nsrc=%u sum %u", G, nsrc, sum);
    }
  uint32_t c[TC_MIX_MAX];
  double bad[] = {0.5, 0.0}, nan_w[] = {0.5, 0.5};
  nan_w[1] = strtod("nan", NULL);
  TC_CHECK(tc_mix_counts(bad, 2, 4, c) == TWINCACHE_EINVAL);
  TC_CHECK(tc_mix_counts(nan_w, 2, 4, c) == TWINCACHE_EINVAL);
  TC_CHECK(tc_mix_counts(w73, 2, 1, c) == TWINCACHE_EINVAL);
  TC_CHECK(tc_mix_counts(w73, 0, 4, c) == TWINCACHE_EINVAL);
  tc_mix m;
  /* the lead source on a tie of counts is the lower index (tc_mix.h; issue 35 item 12): 1/1 at G = 4 is 2 + 2
   * over 6 and 10 graphs: the lead is source 0, E = ceil(6 / 2) = 3 (source 1 would make it 5); 1/2/2 at G = 5
   * is 1 + 2 + 2 over 1, 4, 8 graphs: the lead is source 1, E = 2 (source 2: 4) */
  TC_REQUIRE(tc_mix_init(&m, w111, (uint64_t[]){0, 0}, (uint64_t[]){6, 10}, 2, 4, 1, 0, 0, 1, 1) == 0);
  TC_CHECK(m.lead == 0 && m.epoch_batches == 3, "tie of 2 and 2: lead %u, E %llu", m.lead,
           (unsigned long long)m.epoch_batches);
  TC_REQUIRE(tc_mix_init(&m, (double[]){1, 2, 2}, (uint64_t[]){0, 0, 0}, (uint64_t[]){1, 4, 8}, 3, 5, 1, 0, 0, 1,
                         1) == 0);
  TC_CHECK(m.lead == 1 && m.epoch_batches == 2, "tie of 2 and 2 after 1: lead %u, E %llu", m.lead,
           (unsigned long long)m.epoch_batches);
  TC_CHECK(tc_mix_init(&m, w73, (uint64_t[]){0, 0}, (uint64_t[]){5, 0}, 2, 4, 1, 0, 0, 1, 1) == TWINCACHE_EINVAL);
  TC_CHECK(tc_mix_init(&m, w73, (uint64_t[]){0, 0}, (uint64_t[]){5, 5}, 2, 4, 2, 2, 0, 1, 1) == TWINCACHE_EINVAL);
}

/* One configuration: global batches 0..K through ranks of W. */
static void test_stream(const double *w, uint32_t nsrc, const uint64_t *n, uint32_t G, int shuffle, uint32_t epochs) {
  uint64_t begin[TC_MIX_MAX], tags[TC_MIX_MAX];
  for (uint32_t i = 0; i < nsrc; i++) begin[i] = 1000 * (i + 1), tags[i] = 0x1234 + i;
  tc_mix m0;
  TC_REQUIRE(tc_mix_init(&m0, w, begin, n, nsrc, G, 1, 0, epochs, shuffle, 42) == 0);
  TC_CHECK(m0.epoch_batches == (n[m0.lead] + m0.count[m0.lead] - 1) / m0.count[m0.lead]);
  for (uint32_t i = 0; i < nsrc; i++) TC_CHECK(m0.count[i] <= m0.count[m0.lead]);
  uint64_t K = epochs ? epochs * m0.epoch_batches : 3 * m0.epoch_batches + 2;
  if (epochs) TC_CHECK(m0.total == K);
  /* the reference stream: global batch k's (source, pos, index) per slot */
  uint32_t *rs = malloc(sizeof *rs * (K + 8) * G);
  uint64_t *ri = malloc(sizeof *ri * (K + 8) * G);
  uint64_t next[TC_MIX_MAX] = {0};
  for (uint64_t k = 0; k < K + 8; k++) {
    uint32_t per[TC_MIX_MAX] = {0};
    for (uint32_t s = 0; s < G; s++) {
      uint32_t src;
      uint64_t pos, idx;
      tc_mix_slot(&m0, k, s, &src, &pos, &idx);
      TC_CHECK(src < nsrc && (s == 0 || src >= rs[k * G + s - 1]), "slots in source order");
      TC_CHECK(pos == next[src], "k=%llu source %u position %llu, want %llu", (unsigned long long)k, src,
               (unsigned long long)pos, (unsigned long long)next[src]);
      next[src] = pos + 1;
      TC_CHECK(idx >= begin[src] && idx < begin[src] + n[src]);
      per[src]++;
      rs[k * G + s] = src, ri[k * G + s] = idx;
    }
    for (uint32_t i = 0; i < nsrc; i++) TC_CHECK(per[i] == m0.count[i], "batch %llu: %u of source %u", (unsigned long long)k, per[i], i);
  }
  /* each source epoch: its n graphs once */
  for (uint32_t i = 0; i < nsrc; i++) {
    uint8_t *seen = calloc(n[i], 1);
    uint64_t full = next[i] / n[i];
    for (uint64_t e = 0; e < full; e++) {
      memset(seen, 0, n[i]);
      for (uint64_t p = e * n[i]; p < (e + 1) * n[i]; p++) {
        uint64_t x = tc_mix_index(&m0, i, p) - begin[i];
        TC_CHECK(!seen[x], "source %u epoch %llu: graph %llu twice", i, (unsigned long long)e, (unsigned long long)x);
        seen[x] = 1;
      }
    }
    free(seen);
  }
  /* ranks and elastic resume: walk at W1 for `cut` steps, then at W2 */
  for (uint32_t W1 = 1; W1 <= 4; W1++)
    for (uint32_t W2 = 1; W2 <= 4; W2++)
      for (uint64_t cut = 0; cut * W1 <= K; cut++) {
        uint64_t k_expect = 0;
        /* phase 1: ranks of W1 read `cut` steps (one step = every rank's seq) */
        tc_mix m[4];
        for (uint32_t r = 0; r < W1; r++) TC_REQUIRE(tc_mix_init(&m[r], w, begin, n, nsrc, G, W1, r, epochs, shuffle, 42) == 0);
        if (epochs)
          for (uint32_t r = 1; r < W1; r++) TC_CHECK(m[r].total == m[0].total, "ranks equal");
        uint64_t steps1 = epochs && cut > m[0].total ? m[0].total : cut;
        for (uint64_t j = 0; j < steps1; j++)
          for (uint32_t r = 0; r < W1; r++) {
            uint64_t k = tc_mix_global(&m[r], j);
            TC_CHECK(k == k_expect, "W=%u rank %u batch %llu is global %llu", W1, r, (unsigned long long)j, (unsigned long long)k);
            k_expect++;
          }
        uint64_t state = tc_mix_consumed(&m[0], steps1);
        TC_CHECK(state == k_expect);
        /* the state of the last rank of W1, through its 64 bytes */
        twincache_loader_state st, back;
        uint8_t bytes[TWINCACHE_LOADER_STATE_BYTES];
        tc_mix_set_tag(&m[W1 - 1], tags, NULL);
        tc_mix_state(&m[W1 - 1], steps1, &st);
        twincache_loader_state_encode(&st, bytes);
        TC_REQUIRE(twincache_loader_state_decode(bytes, &back) == 0);
        /* phase 2: resume at W2 */
        for (uint32_t r = 0; r < W2; r++) {
          TC_REQUIRE(tc_mix_init(&m[r], w, begin, n, nsrc, G, W2, r, epochs, shuffle, 42) == 0);
          tc_mix_set_tag(&m[r], tags, NULL);
          uint64_t seq0 = 99;
          int rc = tc_mix_resume(&m[r], &back, &seq0);
          TC_CHECK(rc == 0, "resume at %llu", (unsigned long long)state);
          if (rc) return;
          TC_CHECK(tc_mix_global(&m[r], seq0) == state + r, "resumed rank %u starts at global %llu", r,
                   (unsigned long long)tc_mix_global(&m[r], seq0));
          /* walk from seq0: shift the origin so seq 0 is the resumed batch */
          if (seq0) TC_REQUIRE(tc_mix_set_origin(&m[r], m[r].origin + seq0 * W2) == 0);
        }
        uint64_t steps2 = epochs ? m[0].total : 3;
        for (uint64_t j = 0; j < steps2; j++)
          for (uint32_t r = 0; r < W2; r++) {
            TC_CHECK(m[r].total == m[0].total);
            uint64_t k = tc_mix_global(&m[r], j);
            TC_CHECK(k == k_expect, "resumed W=%u rank %u", W2, r);
            if (k < K + 8)
              for (uint32_t s = 0; s < G; s++) {
                uint32_t src;
                uint64_t pos, idx;
                tc_mix_slot(&m[r], k, s, &src, &pos, &idx);
                TC_CHECK(src == rs[k * G + s] && idx == ri[k * G + s], "resumed stream differs at global %llu slot %u",
                         (unsigned long long)k, s);
              }
            k_expect++;
          }
        if (epochs) { /* the finite stream covers epochs*E, completed to a whole step */
          TC_CHECK(k_expect >= K && k_expect < K + W2, "end %llu of %llu at W=%u", (unsigned long long)k_expect,
                   (unsigned long long)K, W2);
          if (state == K) TC_CHECK(m[0].total == 0);
        }
      }
  if (epochs) {
    tc_mix m;
    TC_REQUIRE(tc_mix_init(&m, w, begin, n, nsrc, G, 1, 0, epochs, shuffle, 42) == 0);
    TC_CHECK(tc_mix_set_origin(&m, K + 1) == TWINCACHE_EINVAL, "a state past the end is refused");
  }
  free(rs);
  free(ri);
}

/* States a mixture refuses, each naming the field. */
static void test_refusals(void) {
  double w[] = {0.7, 0.3};
  uint64_t begin[] = {0, 0}, n[] = {11, 5}, tags[] = {1, 2}, seq;
  tc_mix m, other;
  TC_REQUIRE(tc_mix_init(&m, w, begin, n, 2, 10, 2, 0, 2, 1, 7) == 0);
  tc_mix_set_tag(&m, tags, NULL);
  twincache_loader_state s, bad;
  tc_mix_state(&m, 1, &s);
  TC_CHECK(tc_mix_resume(&m, &s, &seq) == 0 && seq == 1);
  bad = s, bad.seed++;
  TC_CHECK(tc_mix_resume(&m, &bad, &seq) == TWINCACHE_EINVAL);
  bad = s, bad.batch_size = 9; /* other counts */
  TC_CHECK(tc_mix_resume(&m, &bad, &seq) == TWINCACHE_EINVAL && strstr(twincache_last_error(), "batch_size"));
  bad = s, bad.equal_ranks = 0;
  TC_CHECK(tc_mix_resume(&m, &bad, &seq) == TWINCACHE_EINVAL && strstr(twincache_last_error(), "equal_ranks"));
  bad = s, bad.shuffle = 0;
  TC_CHECK(tc_mix_resume(&m, &bad, &seq) == TWINCACHE_EINVAL && strstr(twincache_last_error(), "shuffle"));
  bad = s, bad.version = 1;
  TC_CHECK(tc_mix_resume(&m, &bad, &seq) == TWINCACHE_EINVAL && strstr(twincache_last_error(), "version"));
  bad = s, bad.rank = 2;
  TC_CHECK(tc_mix_resume(&m, &bad, &seq) == TWINCACHE_EINVAL && strstr(twincache_last_error(), "rank"));
  bad = s, bad.next_seq = m.total + 1; /* past the 2 epochs */
  TC_CHECK(tc_mix_resume(&m, &bad, &seq) == TWINCACHE_EINVAL && strstr(twincache_last_error(), "past the end"));
  bad = s, bad.world_size = 1, bad.rank = 0, bad.next_seq = 2 * m.epoch_batches + 1;
  TC_CHECK(tc_mix_resume(&m, &bad, &seq) == TWINCACHE_EINVAL && strstr(twincache_last_error(), "past the end"));
  /* other sources: another tag, another range, other weights */
  uint64_t tags2[] = {1, 3}, n2[] = {11, 6};
  TC_REQUIRE(tc_mix_init(&other, w, begin, n, 2, 10, 2, 0, 2, 1, 7) == 0);
  tc_mix_set_tag(&other, tags2, NULL);
  TC_CHECK(tc_mix_resume(&other, &s, &seq) == TWINCACHE_EINVAL && strstr(twincache_last_error(), "cache_tag"));
  TC_REQUIRE(tc_mix_init(&other, w, begin, n2, 2, 10, 2, 0, 2, 1, 7) == 0);
  tc_mix_set_tag(&other, tags, NULL);
  TC_CHECK(tc_mix_resume(&other, &s, &seq) == TWINCACHE_EINVAL && strstr(twincache_last_error(), "cache_tag"));
  double w2[] = {0.5, 0.5};
  TC_REQUIRE(tc_mix_init(&other, w2, begin, n, 2, 10, 2, 0, 2, 1, 7) == 0);
  tc_mix_set_tag(&other, tags, NULL);
  TC_CHECK(tc_mix_resume(&other, &s, &seq) == TWINCACHE_EINVAL, "other counts are another mixture");
  /* the same sources at another batch size: cache_tag (it hashes the counts) differs too, and the message
   * names batch_size, what the caller changed (issue 35 item 10) */
  TC_REQUIRE(tc_mix_init(&other, w, begin, n, 2, 9, 2, 0, 2, 1, 7) == 0);
  tc_mix_set_tag(&other, tags, NULL);
  tc_mix_state(&other, 1, &bad);
  TC_CHECK(bad.cache_tag != s.cache_tag);
  TC_CHECK(tc_mix_resume(&m, &bad, &seq) == TWINCACHE_EINVAL &&
               strstr(twincache_last_error(), "field batch_size 9 differs from this mixture's 10") &&
               !strstr(twincache_last_error(), "cache_tag"),
           "%s", twincache_last_error());
  /* by hand: {seed, next_seq} */
  memset(&bad, 0, sizeof bad);
  bad.seed = 7, bad.next_seq = m.total; /* 2 epochs of E = 2 at W = 2: 2 batches */
  TC_CHECK(m.total == 2 && tc_mix_resume(&m, &bad, &seq) == 0 && seq == 2);
  bad.next_seq = 3;
  TC_CHECK(tc_mix_resume(&m, &bad, &seq) == TWINCACHE_EINVAL);
}

int main(void) {
  test_refusals();
  test_counts();
  double w73[] = {0.7, 0.3}, w3[] = {1, 2, 3};
  for (int shuffle = 0; shuffle <= 1; shuffle++)
    for (uint32_t epochs = 0; epochs <= 2; epochs++) {
      test_stream(w73, 2, (uint64_t[]){11, 5}, 10, shuffle, epochs);
      test_stream(w73, 2, (uint64_t[]){3, 40}, 4, shuffle, epochs);
      test_stream(w3, 3, (uint64_t[]){7, 9, 13}, 6, shuffle, epochs);
      test_stream(w3, 3, (uint64_t[]){1, 2, 1}, 3, shuffle, epochs);
    }
  return tc_test_finish("test_mix");
}
