/* test_loader_lifecycle — bad options and bad paths give the right codes
 * and name the problem; open/close many times, also while decode threads
 * are blocked on a full ring and while batches are held; the allocator
 * callbacks get every slot back.
 * usage: test_loader_lifecycle CACHE_DIR SCRATCH_DIR */
#include <pthread.h>

#include "tl_common.h"

typedef struct counting_alloc {
  pthread_mutex_t mu;
  long live, total;
  int misaligned;
} counting_alloc;

static void *count_alloc(size_t bytes, void *user) {
  counting_alloc *a = user;
  void *p = NULL;
  if (posix_memalign(&p, 64, bytes) != 0) return NULL;
  pthread_mutex_lock(&a->mu);
  a->live++;
  a->total++;
  pthread_mutex_unlock(&a->mu);
  return p;
}
static void count_free(void *p, void *user) {
  counting_alloc *a = user;
  pthread_mutex_lock(&a->mu);
  a->live--;
  pthread_mutex_unlock(&a->mu);
  free(p);
}
static void *fail_alloc(size_t bytes, void *user) {
  (void)bytes;
  (void)user;
  return NULL;
}

/* Opens with o and expects TWINCACHE_EINVAL naming `word`. */
static void expect_einval(const char *cache, const twincache_loader_options *o,
                          const twincache_loader_state *resume, const char *word) {
  twincache_loader *l = (twincache_loader *)1;
  TC_CHECK_RC(twincache_loader_open(cache, o, resume, &l), TWINCACHE_EINVAL);
  TC_CHECK(l == NULL);
  if (!strstr(twincache_last_error(), word)) {
    fprintf(stderr, "error message '%s' does not name '%s'\n", twincache_last_error(), word);
    tc_test_count_failure();
  }
}

int main(int argc, char **argv) {
  TC_REQUIRE(argc == 3);
  const char *cache = argv[1];
  char path[4096];
  twincache_loader_options o;
  twincache_loader *l = NULL;
  twincache_batch *b;

  twincache_cache *c;
  TC_REQUIRE(twincache_cache_open(cache, &c) == TWINCACHE_OK);
  uint64_t count = twincache_cache_count(c);
  twincache_cache_close(c);

  /* --- bad options ---------------------------------------------------------- */
  twincache_loader_options_init(&o);
  TC_CHECK(o.batch_size == 32 && o.epochs == 1 && o.shuffle == 1 && o.world_size == 1);
  TC_CHECK(o.threads == 2 && o.slots == 0 && o.corrupt_policy == TWINCACHE_CORRUPT_FAIL);
#define BAD(field, val, word)                                                          \
  do {                                                                                 \
    twincache_loader_options_init(&o);                                                 \
    o.field = val;                                                                     \
    expect_einval(cache, &o, NULL, word);                                              \
  } while (0)
  BAD(batch_size, 0, "batch_size");
  BAD(batch_size, 1u << 20, "batch_size");
  BAD(world_size, 0, "world_size");
  BAD(rank, 1, "rank");
  BAD(threads, 0, "threads");
  BAD(threads, 1000, "threads");
  BAD(slots, 100000, "slots");
  BAD(corrupt_policy, 2, "corrupt_policy");
  BAD(alloc, count_alloc, "alloc");
  BAD(index_end, count + 1, "index_end");
  BAD(index_begin, count, "index_begin");
  twincache_loader_options_init(&o);
  o.index_begin = 10;
  o.index_end = 10;
  expect_einval(cache, &o, NULL, "index_begin");
  twincache_loader_options_init(&o);
  o.world_size = 4;
  o.rank = 4;
  expect_einval(cache, &o, NULL, "rank");
  twincache_loader_state wrong = {.seed = 1, .next_seq = 0};
  twincache_loader_options_init(&o);
  expect_einval(cache, &o, &wrong, "seed");
  TC_CHECK_RC(twincache_loader_open(NULL, &o, NULL, &l), TWINCACHE_EINVAL);
  TC_CHECK_RC(twincache_loader_open(cache, &o, NULL, NULL), TWINCACHE_EINVAL);

  /* --- bad paths ------------------------------------------------------------ */
  snprintf(path, sizeof path, "%s/missing", argv[2]);
  tl_mkdir(argv[2]);
  TC_CHECK_RC(twincache_loader_open(path, &o, NULL, &l), TWINCACHE_ENOTFOUND);
  TC_CHECK(strstr(twincache_last_error(), "missing") != NULL);
  snprintf(path, sizeof path, "%s/empty", argv[2]);
  tl_mkdir(path);
  TC_CHECK_RC(twincache_loader_open(path, &o, NULL, &l), TWINCACHE_ENOTCACHE);

  /* --- allocator: every slot freed, failure to allocate is clean ----------- */
  counting_alloc ca = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0};
  twincache_loader_options_init(&o);
  o.alloc = count_alloc;
  o.free = count_free;
  o.alloc_user = &ca;
  o.slots = 5;
  TC_CHECK_RC(twincache_loader_open(cache, &o, NULL, &l), TWINCACHE_OK);
  TC_CHECK(ca.live == 5 && ca.total == 5);
  twincache_loader_close(l);
  TC_CHECK(ca.live == 0);
  o.alloc = fail_alloc;
  TC_CHECK_RC(twincache_loader_open(cache, &o, NULL, &l), TWINCACHE_ENOMEM);
  TC_CHECK(l == NULL);

  /* auto ring depth follows the thread count set after init: 2*5+2 = 12
   * slots, counted by the allocator and by how many batches can be held */
  twincache_loader_options_init(&o);
  o.batch_size = 4;
  o.epochs = 0;
  o.threads = 5;
  o.release_on_any_thread = 0; /* only this thread releases: EDEADLK, not a wait */
  o.alloc = count_alloc;
  o.free = count_free;
  o.alloc_user = &ca;
  ca.total = 0;
  TC_CHECK_RC(twincache_loader_open(cache, &o, NULL, &l), TWINCACHE_OK);
  if (l) {
    TC_CHECK(ca.live == 12 && ca.total == 12);
    for (int i = 0; i < 12; i++) TC_CHECK_RC(twincache_loader_next(l, &b), TWINCACHE_OK);
    TC_CHECK_RC(twincache_loader_next(l, &b), TWINCACHE_EDEADLK); /* all 12 held */
    twincache_loader_close(l);
  }
  TC_CHECK(ca.live == 0);

  /* NULL options: the defaults */
  TC_CHECK_RC(twincache_loader_open(cache, NULL, NULL, &l), TWINCACHE_OK);
  if (l) {
    TC_CHECK(twincache_loader_layout(l)->graphs == 32);
    TC_CHECK_RC(twincache_loader_next(l, &b), TWINCACHE_OK);
    twincache_loader_close(l);
  }
  twincache_loader_close(NULL);

  /* --- a training and a validation loader on one cache, at once ---------- */
  {
    twincache_loader *train = NULL, *valid = NULL;
    twincache_loader_options ot, ov;
    twincache_loader_options_init(&ot);
    ot.batch_size = 16;
    ot.index_end = count / 2;
    ov = ot;
    ov.index_begin = count / 2;
    ov.index_end = 0;
    ov.shuffle = 0;
    TC_CHECK_RC(twincache_loader_open(cache, &ot, NULL, &train), TWINCACHE_OK);
    TC_CHECK_RC(twincache_loader_open(cache, &ov, NULL, &valid), TWINCACHE_OK);
    uint64_t seen_train = 0, seen_valid = 0;
    int rc_t = TWINCACHE_OK, rc_v = TWINCACHE_OK;
    while (train && valid && (rc_t == TWINCACHE_OK || rc_v == TWINCACHE_OK)) {
      if (rc_t == TWINCACHE_OK && (rc_t = twincache_loader_next(train, &b)) == TWINCACHE_OK) {
        for (uint32_t g = 0; g < b->n_graphs; g++) TC_CHECK(b->graph_id[g] < count / 2);
        seen_train += b->n_graphs;
        twincache_loader_release(train, b);
      }
      if (seen_train > count / 4 && valid) { /* closing one leaves the other working */
        twincache_loader_close(valid);
        valid = NULL;
        break;
      }
      if (rc_v == TWINCACHE_OK && (rc_v = twincache_loader_next(valid, &b)) == TWINCACHE_OK) {
        for (uint32_t g = 0; g < b->n_graphs; g++) TC_CHECK(b->graph_id[g] == count / 2 + seen_valid + g);
        seen_valid += b->n_graphs;
        twincache_loader_release(valid, b);
      }
    }
    while (train && (rc_t = twincache_loader_next(train, &b)) == TWINCACHE_OK) {
      seen_train += b->n_graphs;
      twincache_loader_release(train, b);
    }
    TC_CHECK_RC(rc_t, TWINCACHE_END);
    TC_CHECK(seen_train == count / 2 && seen_valid > 0);
    twincache_loader_close(train);
    twincache_loader_close(valid);
  }

  /* --- open/close many times in every state -------------------------------- */
  for (int round = 0; round < 24; round++) {
    twincache_loader_options_init(&o);
    o.batch_size = 8;
    o.threads = 1 + round % 4;
    o.slots = 1 + round % 3;
    o.epochs = round % 5 == 0 ? 0 : 2;
    o.alloc = count_alloc;
    o.free = count_free;
    o.alloc_user = &ca;
    TC_CHECK_RC(twincache_loader_open(cache, &o, NULL, &l), TWINCACHE_OK);
    if (!l) continue;
    switch (round % 4) {
    case 0: /* close at once: threads starting or blocked on the ring */
      break;
    case 1: /* hold every slot, so the threads block, then close */
      for (uint32_t i = 0; i < o.slots; i++) TC_CHECK_RC(twincache_loader_next(l, &b), TWINCACHE_OK);
      break;
    case 2: { /* read a few, release, close while they decode ahead */
      tl_stream s = {0};
      TC_CHECK_RC(tl_stream_read(l, 3, &s), TWINCACHE_OK);
      tl_stream_free(&s);
      break;
    }
    case 3: /* read to the end (or far, when endless) */
      if (o.epochs) {
        tl_stream s = {0};
        TC_CHECK_RC(tl_stream_read(l, 0, &s), TWINCACHE_END);
        TC_CHECK(s.count == 2 * ((count + 7) / 8));
        tl_stream_free(&s);
      }
      break;
    }
    twincache_loader_stats st;
    twincache_loader_get_stats(l, &st);
    TC_CHECK(st.threads == o.threads);
    twincache_loader_close(l);
    TC_CHECK(ca.live == 0);
  }
  return tc_test_finish("test_loader_lifecycle");
}
