/* test_loader_resume.c — the resume state records what defines the stream:
 * open refuses a state with any mismatching field (naming it) or one past
 * the end of a finite stream, accepts its own state (also after an encode /
 * decode round trip through bytes) and then continues the stream exactly. */
#include <stddef.h>

#include "tl_common.h"

static void base_options(twincache_loader_options *o) {
  twincache_loader_options_init(o);
  o->batch_size = 6;
  o->epochs = 2;
  o->seed = 21;
  o->world_size = 3;
  o->rank = 1;
  o->index_begin = 5;
  o->index_end = 200;
  o->threads = 2;
  o->slots = 3;
}

/* Opens with `s` and expects TWINCACHE_EINVAL with a message naming `word`. */
static void expect_refused(const char *cache, const twincache_loader_options *o,
                           const twincache_loader_state *s, const char *word) {
  twincache_loader *l = (twincache_loader *)1;
  TC_CHECK_RC(twincache_loader_open(cache, o, s, &l), TWINCACHE_EINVAL);
  TC_CHECK(l == NULL);
  if (!strstr(twincache_last_error(), word)) {
    fprintf(stderr, "error message '%s' does not name '%s'\n", twincache_last_error(), word);
    tc_test_count_failure();
  }
}

int main(int argc, char **argv) {
  TC_REQUIRE(argc == 2);
  const char *cache = argv[1];
  twincache_loader_options o;
  twincache_loader *l = NULL;
  twincache_loader_state st;

  /* the uninterrupted stream, and a state after 5 of its batches */
  tl_stream ref = {0}, s = {0};
  base_options(&o);
  TC_REQUIRE(tl_stream_load(cache, &o, NULL, &ref) == TWINCACHE_OK);
  TC_REQUIRE(twincache_loader_open(cache, &o, NULL, &l) == TWINCACHE_OK);
  TC_CHECK_RC(tl_stream_read(l, 5, &s), TWINCACHE_OK);
  twincache_loader_get_state(l, &st);
  uint64_t total = 2 * twincache_loader_batches_per_epoch(l);
  twincache_loader_close(l);
  TC_CHECK(st.magic == TWINCACHE_LOADER_STATE_MAGIC && st.version == TWINCACHE_LOADER_STATE_VERSION);
  TC_CHECK(st.seed == 21 && st.next_seq == 5 && st.batch_size == 6 && st.world_size == 3 && st.rank == 1);
  TC_CHECK(st.index_begin == 5 && st.index_end == 200 && st.shuffle == 1 && st.drop_last == 0);
  TC_CHECK(st.equal_ranks == 1 && st.bucket == 0 && st.cache_tag != 0);
  TC_CHECK(st.origin == 0 && offsetof(twincache_loader_state, bucket) == 63 &&
           offsetof(twincache_loader_state, origin) == 64);

  /* through bytes and back, then resumed: the rest of the same stream */
  uint8_t bytes[TWINCACHE_LOADER_STATE_BYTES];
  twincache_loader_state back;
  twincache_loader_state_encode(&st, bytes);
  /* little-endian at the documented offsets (version 2) */
  TC_CHECK(bytes[8] == 5 && bytes[16] == 0x54 && bytes[20] == 2 && bytes[21] == 5 && bytes[22] == 5 &&
           bytes[56] == 3 && bytes[60] == 1);
  TC_CHECK_RC(twincache_loader_state_decode(bytes, &back), TWINCACHE_OK);
  TC_CHECK(!memcmp(&back, &st, sizeof st));
  o.threads = 3; /* threads, slots and epochs may change */
  o.slots = 5;
  TC_CHECK_RC(twincache_loader_open(cache, &o, &back, &l), TWINCACHE_OK);
  if (l) {
    TC_CHECK_RC(tl_stream_read(l, 0, &s), TWINCACHE_END);
    twincache_loader_close(l);
  }
  TC_CHECK(tl_stream_equal(&s, &ref));
  bytes[17] ^= 1;
  TC_CHECK_RC(twincache_loader_state_decode(bytes, &back), TWINCACHE_EINVAL);

  /* each field that defines the stream, changed in the options (batch_size,
   * world_size, rank and equal_ranks may change: test_loader_elastic) */
  base_options(&o);
  o.seed = 22;
  expect_refused(cache, &o, &st, "seed");
  base_options(&o);
  o.shuffle = 0;
  expect_refused(cache, &o, &st, "shuffle");
  base_options(&o);
  o.drop_last = 1;
  expect_refused(cache, &o, &st, "drop_last");
  base_options(&o);
  o.index_begin = 6;
  expect_refused(cache, &o, &st, "index_begin");
  base_options(&o);
  o.index_end = 0; /* all committed: another range */
  expect_refused(cache, &o, &st, "index_end");

  /* ... and in the state: another cache, another version */
  base_options(&o);
  twincache_loader_state bad = st;
  bad.cache_tag ^= 1;
  expect_refused(cache, &o, &bad, "cache_tag");
  bad = st;
  bad.version = 3;
  expect_refused(cache, &o, &bad, "version");
  bad = st;
  bad.magic = 0x12345678;
  expect_refused(cache, &o, &bad, "magic");

  /* the end of the stream is a valid position; past it is not */
  bad = st;
  bad.next_seq = total;
  TC_CHECK_RC(twincache_loader_open(cache, &o, &bad, &l), TWINCACHE_OK);
  if (l) {
    twincache_batch *b;
    TC_CHECK_RC(twincache_loader_next(l, &b), TWINCACHE_END);
    twincache_loader_close(l);
  }
  bad.next_seq = total + 1;
  expect_refused(cache, &o, &bad, "past the end");
  /* (endless: any position is in the stream) */
  o.epochs = 0;
  bad.next_seq = 1000 * total;
  TC_CHECK_RC(twincache_loader_open(cache, &o, &bad, &l), TWINCACHE_OK);
  twincache_loader_close(l);

  tl_stream_free(&s);
  tl_stream_free(&ref);
  return tc_test_finish("test_loader_resume");
}
