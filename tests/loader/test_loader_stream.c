/* test_loader_stream — the order of the batch stream: every graph exactly
 * once per epoch, the same bytes for any thread count and ring depth, ranks
 * disjoint and complete, resume equal to an uninterrupted run, index ranges,
 * drop_last, endless epochs, holding several batches.
 * usage: test_loader_stream CACHE_DIR */
#include "tl_common.h"

#define G 32

static void base_options(twincache_loader_options *o) {
  twincache_loader_options_init(o);
  o->batch_size = G;
  o->epochs = 2;
  o->seed = 5;
  o->threads = 1;
  o->slots = 1;
}

/* Every index of [begin, end) appears exactly once in each epoch of s. */
static void check_exactly_once(const tl_stream *s, const twincache_batch_layout *L, uint64_t begin,
                               uint64_t end, uint64_t epochs, int allow_missing_tail) {
  uint64_t n = end - begin;
  uint32_t *seen = calloc(n * epochs, sizeof *seen);
  TC_REQUIRE(seen);
  for (size_t i = 0; i < s->count; i++) {
    TC_CHECK(s->epoch[i] < epochs);
    for (uint32_t g = 0; g < s->n_graphs[i]; g++) {
      uint64_t id = tl_graph_id(s, L, i, g);
      TC_CHECK(id >= begin && id < end);
      if (id >= begin && id < end && s->epoch[i] < epochs) seen[s->epoch[i] * n + (id - begin)]++;
    }
  }
  uint64_t missing = 0, doubled = 0;
  for (uint64_t i = 0; i < n * epochs; i++) {
    missing += seen[i] == 0;
    doubled += seen[i] > 1;
  }
  TC_CHECK(doubled == 0);
  if (allow_missing_tail) TC_CHECK(missing == epochs * (n % G));
  else TC_CHECK(missing == 0);
  free(seen);
}

int main(int argc, char **argv) {
  TC_REQUIRE(argc == 2);
  const char *cache = argv[1];
  twincache_loader_options o;
  twincache_loader *l = NULL;
  tl_stream ref = {0};

  /* reference: one thread, one slot */
  base_options(&o);
  TC_CHECK_RC(twincache_loader_open(cache, &o, NULL, &l), TWINCACHE_OK);
  TC_REQUIRE(l);
  twincache_batch_layout L = *twincache_loader_layout(l);
  const twincache_dims *d = twincache_loader_dims(l);
  twincache_cache *c = NULL;
  TC_REQUIRE(twincache_cache_open(cache, &c) == TWINCACHE_OK);
  uint64_t count = twincache_cache_count(c);
  twincache_cache_close(c);
  TC_REQUIRE(count >= 3 * G);
  uint64_t bpe = (count + G - 1) / G;
  TC_CHECK(twincache_loader_batches_per_epoch(l) == bpe);
  TC_CHECK(L.graphs == G && L.nodes == d->max_nodes && L.inter == d->max_inter && L.samples == d->samples);
  TC_CHECK(L.bytes % 64 == 0 && L.base % 64 == 0 && L.inter_off % 64 == 0 && L.graph_id % 64 == 0);
  TC_CHECK_RC(tl_stream_read(l, 0, &ref), TWINCACHE_END);
  twincache_batch *b = NULL;
  TC_CHECK_RC(twincache_loader_next(l, &b), TWINCACHE_END); /* stays at END */
  twincache_loader_stats st;
  twincache_loader_get_stats(l, &st);
  TC_CHECK(st.batches == 2 * bpe && st.graphs == 2 * count && st.corrupt == 0 && st.threads == 1);
  TC_CHECK(st.bytes_decoded == 2 * bpe * L.bytes && st.thread_graphs[0] == 2 * count);
  twincache_loader_close(l);
  TC_CHECK(ref.count == 2 * bpe);
  check_exactly_once(&ref, &L, 0, count, 2, 0);
  for (size_t i = 0; i < ref.count; i++) {
    TC_CHECK(ref.epoch[i] == i / bpe);
    TC_CHECK(ref.n_graphs[i] == ((i % bpe) == bpe - 1 && count % G ? count % G : G));
  }
  /* the two epochs are ordered differently */
  int same_order = 1;
  for (uint32_t g = 0; g < G; g++) same_order &= tl_graph_id(&ref, &L, 0, g) == tl_graph_id(&ref, &L, bpe, g);
  TC_CHECK(!same_order);

  /* same bytes for other thread counts and ring depths */
  static const uint32_t configs[][2] = {{1, 3}, {2, 1}, {2, 2}, {2, 6}, {4, 3}, {4, 0}, {3, 9}};
  for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++) {
    tl_stream s = {0};
    base_options(&o);
    o.threads = configs[i][0];
    o.slots = configs[i][1];
    TC_CHECK_RC(tl_stream_load(cache, &o, NULL, &s), TWINCACHE_OK);
    if (!tl_stream_equal(&s, &ref)) {
      fprintf(stderr, "threads %u slots %u: stream differs from the 1-thread stream\n", o.threads, o.slots);
      tc_test_count_failure();
    }
    tl_stream_free(&s);
  }

  /* another seed gives another order; no shuffle gives index order */
  {
    tl_stream s = {0};
    base_options(&o);
    o.seed = 6;
    o.epochs = 1;
    TC_CHECK_RC(tl_stream_load(cache, &o, NULL, &s), TWINCACHE_OK);
    int same = 1;
    for (uint32_t g = 0; g < G; g++) same &= tl_graph_id(&s, &L, 0, g) == tl_graph_id(&ref, &L, 0, g);
    TC_CHECK(!same);
    check_exactly_once(&s, &L, 0, count, 1, 0);
    tl_stream_free(&s);

    base_options(&o);
    o.shuffle = 0;
    o.threads = 2;
    o.slots = 3;
    TC_CHECK_RC(tl_stream_load(cache, &o, NULL, &s), TWINCACHE_OK);
    TC_CHECK(s.count == 2 * bpe);
    for (size_t i = 0; i < s.count; i++)
      for (uint32_t g = 0; g < s.n_graphs[i]; g++)
        TC_CHECK(tl_graph_id(&s, &L, i, g) == (i % bpe) * G + g);
    tl_stream_free(&s);
  }

  /* drop_last: only full batches, no graph twice */
  {
    tl_stream s = {0};
    base_options(&o);
    o.drop_last = 1;
    o.threads = 2;
    TC_CHECK_RC(tl_stream_load(cache, &o, NULL, &s), TWINCACHE_OK);
    TC_CHECK(s.count == 2 * (count / G));
    for (size_t i = 0; i < s.count; i++) TC_CHECK(s.n_graphs[i] == G);
    check_exactly_once(&s, &L, 0, count, 2, 1);
    tl_stream_free(&s);
  }

  /* an index range: exactly its graphs */
  {
    tl_stream s = {0};
    base_options(&o);
    o.index_begin = 37;
    o.index_end = count - 50;
    o.threads = 2;
    o.slots = 4;
    TC_CHECK_RC(tl_stream_load(cache, &o, NULL, &s), TWINCACHE_OK);
    TC_CHECK(s.count == 2 * ((count - 87 + G - 1) / G));
    check_exactly_once(&s, &L, 37, count - 50, 2, 0);
    tl_stream_free(&s);
  }

  /* ranks: rank r's batch j is global batch j*W + r; disjoint and complete */
  {
    const uint32_t W = 3;
    uint64_t total_bpe = 0;
    uint32_t *hits = calloc(ref.count, sizeof *hits);
    TC_REQUIRE(hits);
    for (uint32_t r = 0; r < W; r++) {
      tl_stream s = {0};
      base_options(&o);
      o.world_size = W;
      o.rank = r;
      o.equal_ranks = 0; /* the plain round-robin (equal counts: test_loader_ranks) */
      o.threads = 1 + r % 2;
      o.slots = 2;
      TC_CHECK_RC(twincache_loader_open(cache, &o, NULL, &l), TWINCACHE_OK);
      if (!l) continue;
      uint64_t rbpe = twincache_loader_batches_per_epoch(l);
      TC_CHECK(rbpe == (bpe - r + W - 1) / W);
      total_bpe += rbpe;
      TC_CHECK_RC(tl_stream_read(l, 0, &s), TWINCACHE_END);
      twincache_loader_close(l);
      TC_CHECK(s.count == 2 * rbpe);
      for (size_t i = 0; i < s.count; i++) {
        uint64_t e = i / rbpe, j = i % rbpe, global = e * bpe + j * W + r;
        TC_CHECK(global < ref.count);
        if (global >= ref.count) continue;
        hits[global]++;
        TC_CHECK(s.n_graphs[i] == ref.n_graphs[global] && !memcmp(s.slabs[i], ref.slabs[global], L.bytes));
      }
      tl_stream_free(&s);
    }
    TC_CHECK(total_bpe == bpe);
    for (size_t i = 0; i < ref.count; i++) TC_CHECK(hits[i] == 1);
    free(hits);
  }

  /* resume mid-epoch (and at 0, and at the end) equals the uninterrupted run */
  {
    const size_t cuts[] = {0, 5, bpe + 3};
    for (size_t ci = 0; ci < sizeof cuts / sizeof cuts[0]; ci++) {
      tl_stream s = {0};
      twincache_loader_state state;
      base_options(&o);
      o.threads = 2;
      o.slots = 3;
      TC_CHECK_RC(twincache_loader_open(cache, &o, NULL, &l), TWINCACHE_OK);
      if (!l) continue;
      if (cuts[ci]) TC_CHECK_RC(tl_stream_read(l, cuts[ci], &s), TWINCACHE_OK);
      twincache_loader_get_state(l, &state);
      TC_CHECK(state.seed == 5 && state.next_seq == cuts[ci]);
      twincache_loader_close(l); /* decode threads are busy ahead: close anyway */
      o.threads = 1 + ci % 3;    /* a different thread count after resuming */
      TC_CHECK_RC(twincache_loader_open(cache, &o, &state, &l), TWINCACHE_OK);
      if (!l) continue;
      TC_CHECK_RC(tl_stream_read(l, 0, &s), TWINCACHE_END);
      twincache_loader_close(l);
      TC_CHECK(tl_stream_equal(&s, &ref));
      tl_stream_free(&s);
    }
    twincache_loader_state end_state = {.seed = 5, .next_seq = 2 * bpe};
    base_options(&o);
    TC_CHECK_RC(twincache_loader_open(cache, &o, &end_state, &l), TWINCACHE_OK);
    TC_CHECK_RC(twincache_loader_next(l, &b), TWINCACHE_END);
    twincache_loader_close(l);
    twincache_loader_state bad_seed = {.seed = 6, .next_seq = 3};
    TC_CHECK_RC(twincache_loader_open(cache, &o, &bad_seed, &l), TWINCACHE_EINVAL);
  }

  /* endless: epochs go on; close while the threads run ahead */
  {
    tl_stream s = {0};
    base_options(&o);
    o.epochs = 0;
    o.threads = 2;
    o.slots = 3;
    TC_CHECK_RC(twincache_loader_open(cache, &o, NULL, &l), TWINCACHE_OK);
    if (l) {
      TC_CHECK_RC(tl_stream_read(l, 3 * bpe + 2, &s), TWINCACHE_OK);
      for (size_t i = 0; i < s.count; i++) TC_CHECK(s.epoch[i] == i / bpe);
      for (size_t i = 0; i < ref.count; i++) TC_CHECK(!memcmp(s.slabs[i], ref.slabs[i], L.bytes));
      size_t read = s.count;
      s.count = 3 * bpe; /* epochs 0..2 */
      check_exactly_once(&s, &L, 0, count, 3, 0);
      s.count = read;
      twincache_loader_close(l);
    }
    tl_stream_free(&s);
  }

  /* holding batches: up to `slots` at once, released in any order; this
   * thread alone releases, so a held slot needed next is a certain deadlock */
  {
    base_options(&o);
    o.threads = 2;
    o.slots = 3;
    o.release_on_any_thread = 0;
    TC_CHECK_RC(twincache_loader_open(cache, &o, NULL, &l), TWINCACHE_OK);
    if (l) {
      twincache_batch *held[3];
      for (int i = 0; i < 3; i++) {
        TC_CHECK_RC(twincache_loader_next(l, &held[i]), TWINCACHE_OK);
        TC_CHECK(held[i] && held[i]->seq == (uint64_t)i);
      }
      for (int i = 0; i < 3; i++) TC_CHECK(held[i] && !memcmp(held[i]->slab, ref.slabs[i], L.bytes));
      TC_CHECK_RC(twincache_loader_next(l, &b), TWINCACHE_EDEADLK); /* every slot held */
      TC_CHECK_RC(twincache_loader_release(l, held[1]), TWINCACHE_OK);
      TC_CHECK_RC(twincache_loader_next(l, &b), TWINCACHE_EDEADLK); /* seq 3 needs slot 0 */
      twincache_loader_release(l, held[0]);
      TC_CHECK_RC(twincache_loader_next(l, &b), TWINCACHE_OK);
      TC_CHECK(b && b->seq == 3 && !memcmp(b->slab, ref.slabs[3], L.bytes));
      TC_CHECK_RC(twincache_loader_next(l, &held[1]), TWINCACHE_OK);
      TC_CHECK(held[1] && held[1]->seq == 4 && !memcmp(held[1]->slab, ref.slabs[4], L.bytes));
      twincache_loader_close(l); /* with batches still held */
    }
  }

  tl_stream_free(&ref);
  return tc_test_finish("test_loader_stream");
}
