/* test_loader_async.c — the loader with asynchronous consumers: batches
 * released by another thread (few slots: the full stream, no error),
 * next_timeout (poll and bounded wait), EDEADLK when only the consumer
 * releases, and close waking a next() blocked in another thread. */
#include <pthread.h>
#include <sched.h>

#include "tc_loader_internal.h"
#include "tl_common.h"

/* A one-lock queue of batches handed from the consumer to the releaser. */
typedef struct handoff {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  twincache_batch *items[64];
  size_t head, tail;
  int done;
  twincache_loader *l;
  int release_errors;
} handoff;

static void *releaser_main(void *arg) {
  handoff *h = arg;
  pthread_mutex_lock(&h->mu);
  for (;;) {
    while (h->head == h->tail && !h->done) pthread_cond_wait(&h->cv, &h->mu);
    if (h->head == h->tail) break;
    twincache_batch *b = h->items[h->head++ % 64];
    pthread_mutex_unlock(&h->mu);
    if (twincache_loader_release(h->l, b) != TWINCACHE_OK) h->release_errors++; /* only this thread writes it */
    pthread_mutex_lock(&h->mu);
  }
  pthread_mutex_unlock(&h->mu);
  return NULL;
}

/* Reads the whole stream with every batch released by another thread;
 * returns the status that ended it and checks it against the reference. */
static void releaser_stream(const char *cache, uint32_t slots, uint32_t threads, const tl_stream *ref) {
  twincache_loader_options o;
  twincache_loader_options_init(&o);
  o.batch_size = 7;
  o.epochs = 2;
  o.seed = 9;
  o.slots = slots;
  o.threads = threads;
  twincache_loader *l = NULL;
  TC_CHECK_RC(twincache_loader_open(cache, &o, NULL, &l), TWINCACHE_OK);
  if (!l) return;
  handoff h = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER, .l = l};
  pthread_t t;
  TC_REQUIRE(pthread_create(&t, NULL, releaser_main, &h) == 0);
  size_t got = 0;
  int rc;
  twincache_batch *b;
  while ((rc = twincache_loader_next(l, &b)) == TWINCACHE_OK) {
    TC_CHECK(b->seq == got);
    TC_CHECK(got < ref->count && !memcmp(b->slab, ref->slabs[got], ref->slab_bytes));
    got++;
    pthread_mutex_lock(&h.mu);
    h.items[h.tail++ % 64] = b;
    pthread_cond_signal(&h.cv);
    pthread_mutex_unlock(&h.mu);
  }
  TC_CHECK_RC(rc, TWINCACHE_END);
  TC_CHECK(got == ref->count);
  pthread_mutex_lock(&h.mu);
  h.done = 1;
  pthread_cond_signal(&h.cv);
  pthread_mutex_unlock(&h.mu);
  pthread_join(t, NULL);
  TC_CHECK(h.release_errors == 0);
  twincache_loader_close(l);
}

typedef struct blocked_next {
  twincache_loader *l;
  int rc;
  twincache_batch *b;
} blocked_next;

static void *next_main(void *arg) {
  blocked_next *n = arg;
  n->rc = twincache_loader_next(n->l, &n->b);
  return NULL;
}

int main(int argc, char **argv) {
  TC_REQUIRE(argc == 2);
  const char *cache = argv[1];
  twincache_loader_options o;
  twincache_loader *l = NULL;
  twincache_batch *b, *held[4];

  /* the reference: the same stream read inline */
  tl_stream ref = {0};
  twincache_loader_options_init(&o);
  o.batch_size = 7;
  o.epochs = 2;
  o.seed = 9;
  TC_REQUIRE(tl_stream_load(cache, &o, NULL, &ref) == TWINCACHE_OK);

  /* 1. a releasing thread, few slots: the whole stream, no error */
  releaser_stream(cache, 4, 2, &ref);
  releaser_stream(cache, 1, 1, &ref);
  releaser_stream(cache, 2, 3, &ref);

  /* 2. next_timeout: poll and bounded wait with every slot held */
  twincache_loader_options_init(&o);
  o.batch_size = 7;
  o.epochs = 0;
  o.slots = 4;
  TC_CHECK_RC(twincache_loader_open(cache, &o, NULL, &l), TWINCACHE_OK);
  if (l) {
    for (int i = 0; i < 4; i++) TC_CHECK_RC(twincache_loader_next(l, &held[i]), TWINCACHE_OK);
    b = (twincache_batch *)1;
    TC_CHECK_RC(twincache_loader_next_timeout(l, &b, 0), TWINCACHE_EAGAIN);
    TC_CHECK(b == NULL);
    TC_CHECK_RC(twincache_loader_next_timeout(l, &b, 1000000), TWINCACHE_EAGAIN); /* 1 ms */
    twincache_loader_state st;
    twincache_loader_get_state(l, &st);
    TC_CHECK(st.next_seq == 4); /* nothing consumed by the timeouts */
    TC_CHECK_RC(twincache_loader_release(l, held[0]), TWINCACHE_OK);
    TC_CHECK_RC(twincache_loader_next_timeout(l, &b, -1), TWINCACHE_OK);
    TC_CHECK(b && b->seq == 4);

    /* 3. close while another thread is blocked in next(): it gets ECLOSED */
    blocked_next n = {.l = l, .rc = 12345};
    pthread_t t;
    TC_REQUIRE(pthread_create(&t, NULL, next_main, &n) == 0);
    while (tc_loader_calls_in_next(l) == 0) sched_yield(); /* until it is inside */
    twincache_loader_close(l);
    pthread_join(t, NULL);
    TC_CHECK_RC(n.rc, TWINCACHE_ECLOSED);
    TC_CHECK(n.b == NULL);
  }

  /* 4. release_on_any_thread = 0: a held needed slot is a certain deadlock */
  o.release_on_any_thread = 0;
  TC_CHECK_RC(twincache_loader_open(cache, &o, NULL, &l), TWINCACHE_OK);
  if (l) {
    for (int i = 0; i < 4; i++) TC_CHECK_RC(twincache_loader_next(l, &held[i]), TWINCACHE_OK);
    TC_CHECK_RC(twincache_loader_next(l, &b), TWINCACHE_EDEADLK);
    TC_CHECK(strstr(twincache_last_error(), "release_on_any_thread") != NULL);
    TC_CHECK_RC(twincache_loader_release(l, held[0]), TWINCACHE_OK);
    TC_CHECK_RC(twincache_loader_next(l, &b), TWINCACHE_OK);
    TC_CHECK(b && b->seq == 4);
    twincache_loader_close(l);
  }

  tl_stream_free(&ref);
  return tc_test_finish("test_loader_async");
}
