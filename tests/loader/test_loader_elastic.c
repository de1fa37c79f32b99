/* test_loader_elastic.c — elastic resume on a real cache: a run at world
 * size 4 checkpoints mid-epoch 1, resumes at 2 (another batch size, the same
 * global batch), checkpoints mid-epoch 2, resumes at 3 to the end. Each
 * world is made of fresh loaders, one per rank, read in step, and the state
 * crosses as bytes. The ranks' valid graphs, taken in global order (step,
 * then rank), must be each epoch's order exactly as one rank reads it
 * uninterrupted: every graph once per epoch, nothing re-read or skipped. With
 * fresh worlds, every graph's worlds are also the uninterrupted run's bytes.
 * Then the states that cannot be honoured are refused by name.
 * usage: test_loader_elastic CACHE */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tl_common.h"

#define RANGE 200 /* graphs [0, 200) of the loader cache */
#define EPOCHS 3

/* What the uninterrupted run reads: per epoch, the graph ids in order, and
 * each graph's worlds (base and inter rows of one graph) at that place. */
typedef struct order {
  uint64_t ids[EPOCHS][RANGE];
  uint8_t *worlds[EPOCHS][RANGE];
  size_t got[EPOCHS];
  size_t world_bytes;
} order;

static void options(twincache_loader_options *o, uint32_t G, uint32_t W, uint32_t r, int fresh) {
  twincache_loader_options_init(o);
  o->batch_size = G;
  o->world_size = W;
  o->rank = r;
  o->epochs = EPOCHS;
  o->seed = 41;
  o->threads = 2;
  o->index_end = RANGE;
  if (fresh) {
    o->samples = TWINCACHE_SAMPLES_FRESH;
    o->rows = 4;
  }
}

/* Appends the valid graphs of batch b to *o, copying their worlds. */
static void take(order *o, const twincache_batch *b) {
  const twincache_batch_layout *L = &b->layout;
  size_t base_bytes = (size_t)L->samples * L->nodes * sizeof(float);
  size_t inter_bytes = (size_t)L->inter * L->samples * L->nodes * sizeof(float);
  o->world_bytes = base_bytes + inter_bytes;
  for (uint32_t g = 0; g < b->n_graphs; g++) {
    if (!b->valid[g]) continue;
    uint64_t e = b->epoch;
    TC_REQUIRE(e < EPOCHS && o->got[e] < RANGE, "epoch %llu holds more than %d graphs", (unsigned long long)e,
               RANGE);
    uint8_t *w = malloc(o->world_bytes);
    TC_REQUIRE(w != NULL);
    memcpy(w, (const uint8_t *)b->base + g * base_bytes, base_bytes);
    memcpy(w + base_bytes, (const uint8_t *)b->inter + g * inter_bytes, inter_bytes);
    o->ids[e][o->got[e]] = b->graph_id[g];
    o->worlds[e][o->got[e]++] = w;
  }
}

static void order_free(order *o) {
  for (int e = 0; e < EPOCHS; e++)
    for (size_t i = 0; i < o->got[e]; i++) free(o->worlds[e][i]);
}

/* Opens W fresh loaders at `resume` and reads `steps` batches from each in
 * step (0 = to the end), appending to *o; the state of rank W-1 after them
 * goes to *out (as bytes and back). */
static void run_world(const char *cache, uint32_t G, uint32_t W, int fresh, const twincache_loader_state *resume,
                      uint64_t steps, order *o, twincache_loader_state *out) {
  twincache_loader **l = calloc(W, sizeof *l);
  TC_REQUIRE(l != NULL);
  for (uint32_t r = 0; r < W; r++) {
    twincache_loader_options opt;
    options(&opt, G, W, r, fresh);
    TC_REQUIRE(twincache_loader_open(cache, &opt, resume, &l[r]) == TWINCACHE_OK, "G %u W %u rank %u: %s", G, W,
               r, twincache_last_error());
  }
  uint64_t total = twincache_loader_batches_total(l[0]);
  for (uint32_t r = 1; r < W; r++) TC_CHECK(twincache_loader_batches_total(l[r]) == total, "equal ranks");
  twincache_batch **b = calloc(W, sizeof *b);
  TC_REQUIRE(b != NULL);
  for (uint64_t j = 0; (steps == 0 || j < steps) && !tl_step(l, W, b); j++)
    for (uint32_t r = 0; r < W; r++) {
      TC_CHECK(b[r]->n_graphs == G, "equal ranks: full batches");
      take(o, b[r]);
      twincache_loader_release(l[r], b[r]);
    }
  free(b);
  if (out) {
    twincache_loader_state st;
    uint8_t bytes[TWINCACHE_LOADER_STATE_BYTES];
    twincache_loader_get_state(l[W - 1], &st);
    twincache_loader_state_encode(&st, bytes);
    TC_CHECK_RC(twincache_loader_state_decode(bytes, out), TWINCACHE_OK);
    TC_CHECK(!memcmp(out, &st, sizeof st), "the state survives its bytes");
  }
  for (uint32_t r = 0; r < W; r++) twincache_loader_close(l[r]);
  free(l);
}

static void check_elastic(const char *cache, int fresh) {
  static order ref, got;
  memset(&ref, 0, sizeof ref);
  memset(&got, 0, sizeof got);
  run_world(cache, 20, 1, fresh, NULL, 0, &ref, NULL);
  for (int e = 0; e < EPOCHS; e++) TC_REQUIRE(ref.got[e] == RANGE);

  /* W 4, G 5: 10 batches per epoch; 13 steps end at epoch 1, position 60 */
  twincache_loader_state s1, s2;
  run_world(cache, 5, 4, fresh, NULL, 13, &got, &s1);
  TC_CHECK(s1.next_seq == 13 && s1.origin == 0 && s1.world_size == 4 && s1.rank == 3);
  /* W 2, G 10 (the same global batch of 20): epoch 1's last 140 graphs are
   * 7 steps; 9 steps end at epoch 2, position 40 */
  run_world(cache, 10, 2, fresh, &s1, 9, &got, &s2);
  TC_CHECK(s2.origin == 1 * RANGE + 60 && s2.next_seq == 9, "origin %llu next_seq %llu",
           (unsigned long long)s2.origin, (unsigned long long)s2.next_seq);
  /* W 3, G 7 (global batch 21, padded): to the end */
  run_world(cache, 7, 3, fresh, &s2, 0, &got, NULL);

  for (int e = 0; e < EPOCHS; e++) {
    TC_CHECK(got.got[e] == RANGE, "fresh %d epoch %d: %zu graphs read, %d in the range", fresh, e, got.got[e],
             RANGE);
    for (size_t i = 0; i < got.got[e] && i < RANGE; i++) {
      if (got.ids[e][i] != ref.ids[e][i]) {
        TC_FAIL("fresh %d epoch %d place %zu: graph %llu, the uninterrupted order has %llu", fresh, e, i,
                (unsigned long long)got.ids[e][i], (unsigned long long)ref.ids[e][i]);
        break;
      }
      if (memcmp(got.worlds[e][i], ref.worlds[e][i], ref.world_bytes)) {
        TC_FAIL("fresh %d epoch %d graph %llu: its worlds differ from the uninterrupted run's", fresh, e,
                (unsigned long long)got.ids[e][i]);
        break;
      }
    }
  }
  order_free(&ref);
  order_free(&got);
}

/* Opens with `s` and expects TWINCACHE_EINVAL with a message naming `word`. */
static void expect_refused(const char *cache, const twincache_loader_options *o, const twincache_loader_state *s,
                           const char *word) {
  twincache_loader *l = NULL;
  TC_CHECK_RC(twincache_loader_open(cache, o, s, &l), TWINCACHE_EINVAL);
  TC_CHECK(l == NULL);
  TC_CHECK(strstr(twincache_last_error(), word) != NULL, "message '%s' does not name '%s'", twincache_last_error(),
           word);
  twincache_loader_close(l);
}

static void check_refused(const char *cache) {
  twincache_loader_options o;
  twincache_loader *l = NULL;
  twincache_loader_state st;
  /* ranks not in step (equal_ranks 0, W 3): only the same world resumes it */
  options(&o, 7, 3, 1, 0);
  o.equal_ranks = 0;
  TC_REQUIRE(twincache_loader_open(cache, &o, NULL, &l) == TWINCACHE_OK);
  twincache_batch *b;
  TC_CHECK_RC(twincache_loader_next(l, &b), TWINCACHE_OK);
  twincache_loader_release(l, b);
  twincache_loader_get_state(l, &st);
  twincache_loader_close(l);
  options(&o, 7, 2, 1, 0);
  expect_refused(cache, &o, &st, "equal_ranks 0");
  options(&o, 7, 3, 2, 0);
  o.equal_ranks = 0;
  expect_refused(cache, &o, &st, "rank");
  o.rank = 1;
  TC_CHECK_RC(twincache_loader_open(cache, &o, &st, &l), TWINCACHE_OK);
  twincache_loader_close(l);

  /* a point of epoch 1 cannot resume a one-epoch stream at another world */
  options(&o, 5, 4, 0, 0);
  TC_REQUIRE(twincache_loader_open(cache, &o, NULL, &l) == TWINCACHE_OK);
  for (int i = 0; i < 11; i++) {
    TC_REQUIRE(twincache_loader_next(l, &b) == TWINCACHE_OK);
    twincache_loader_release(l, b);
  }
  twincache_loader_get_state(l, &st);
  twincache_loader_close(l);
  options(&o, 5, 2, 0, 0);
  o.epochs = 1;
  expect_refused(cache, &o, &st, "past the end");
  /* nor one of another drop_last, shuffle or range */
  options(&o, 5, 2, 0, 0);
  o.drop_last = 1;
  expect_refused(cache, &o, &st, "drop_last");
  options(&o, 5, 2, 0, 0);
  o.index_end = RANGE - 1;
  expect_refused(cache, &o, &st, "index_end");
  /* a state whose origin lies past the stream's end */
  options(&o, 5, 4, 0, 0);
  st.origin = (uint64_t)EPOCHS * RANGE + 1;
  expect_refused(cache, &o, &st, "past the end");

  /* a version 1 state (before origin existed) still resumes exactly */
  options(&o, 5, 4, 3, 0);
  tl_stream ref = {0}, s = {0};
  TC_REQUIRE(tl_stream_load(cache, &o, NULL, &ref) == TWINCACHE_OK);
  TC_REQUIRE(twincache_loader_open(cache, &o, NULL, &l) == TWINCACHE_OK);
  TC_CHECK_RC(tl_stream_read(l, 12, &s), TWINCACHE_OK);
  twincache_loader_get_state(l, &st);
  twincache_loader_close(l);
  uint8_t v1[TWINCACHE_LOADER_STATE_BYTES] = {0};
  for (int i = 0; i < 8; i++) {
    v1[0 + i] = (uint8_t)(st.seed >> 8 * i);
    v1[8 + i] = (uint8_t)(st.next_seq >> 8 * i);
    v1[24 + i] = (uint8_t)(st.cache_tag >> 8 * i);
    v1[32 + i] = (uint8_t)(st.index_begin >> 8 * i);
    v1[40 + i] = (uint8_t)(st.index_end >> 8 * i);
  }
  for (int i = 0; i < 4; i++) {
    v1[16 + i] = (uint8_t)(TWINCACHE_LOADER_STATE_MAGIC >> 8 * i);
    v1[48 + i] = (uint8_t)(st.batch_size >> 8 * i);
    v1[52 + i] = (uint8_t)(st.world_size >> 8 * i);
    v1[56 + i] = (uint8_t)(st.rank >> 8 * i);
  }
  v1[20] = 1;
  v1[60] = st.shuffle, v1[61] = st.drop_last, v1[62] = st.equal_ranks;
  twincache_loader_state old;
  TC_CHECK_RC(twincache_loader_state_decode(v1, &old), TWINCACHE_OK);
  TC_CHECK(old.version == 1 && old.origin == 0 && old.next_seq == 12 && old.batch_size == 5 &&
           old.world_size == 4 && old.rank == 3 && old.shuffle == 1 && old.equal_ranks == 1);
  TC_CHECK_RC(twincache_loader_open(cache, &o, &old, &l), TWINCACHE_OK);
  if (l) {
    TC_CHECK_RC(tl_stream_read(l, 0, &s), TWINCACHE_END);
    twincache_loader_close(l);
  }
  TC_CHECK(tl_stream_equal(&s, &ref), "a version 1 state continues the same stream");
  v1[63] = 1;
  TC_CHECK_RC(twincache_loader_state_decode(v1, &old), TWINCACHE_EINVAL);
  tl_stream_free(&s);
  tl_stream_free(&ref);
}

int main(int argc, char **argv) {
  TC_REQUIRE(argc == 2, "usage: test_loader_elastic CACHE");
  check_elastic(argv[1], 0);
  check_elastic(argv[1], 1);
  check_refused(argv[1]);
  return tc_test_finish("test_loader_elastic");
}
