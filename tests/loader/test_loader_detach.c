/* test_loader_detach — twincache_loader_detach: a batch kept while the
 * stream moves on costs one slab, not the ring. With 2 slots and the first
 * batch kept, next() reports EDEADLK when it needs that slot; after detach it
 * goes on with the same stream (byte for byte a plain run's), the kept batch's
 * bytes never change, release/detach of it are ESTALE, and the detached slab
 * is the caller's (close frees every other one). Dense and compact layouts.
 * usage: test_loader_detach CACHE_DIR */
#include <pthread.h>

#include "tl_common.h"

typedef struct counting_alloc {
  pthread_mutex_t mu;
  long live;
} counting_alloc;

static void *count_alloc(size_t bytes, void *user) {
  counting_alloc *a = user;
  void *p = NULL;
  if (posix_memalign(&p, 64, bytes) != 0) return NULL;
  pthread_mutex_lock(&a->mu);
  a->live++;
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

static size_t slab_bytes(const twincache_batch *b) {
  return b->compact ? b->compact->used_bytes : b->layout.bytes;
}
static const void *slab_of(const twincache_batch *b) {
  return b->compact ? (const void *)b->compact->slab : b->slab;
}

static void run(const char *cache, int layout) {
  counting_alloc a = {PTHREAD_MUTEX_INITIALIZER, 0};
  twincache_loader_options o;
  twincache_loader_options_init(&o);
  o.batch_size = 32;
  o.threads = 1;
  o.slots = 2;
  o.seed = 11;
  o.layout = layout;
  o.release_on_any_thread = 0;
  o.alloc = count_alloc;
  o.free = count_free;
  o.alloc_user = &a;

  /* the reference (dense): the plain run's slabs */
  tl_stream ref = {0};
  if (layout == TWINCACHE_LAYOUT_DENSE) {
    twincache_loader_options p = o;
    p.alloc = NULL;
    p.free = NULL;
    p.slots = 0;
    TC_CHECK_RC(tl_stream_load(cache, &p, NULL, &ref), TWINCACHE_OK);
  }

  twincache_loader *l = NULL;
  TC_REQUIRE(twincache_loader_open(cache, &o, NULL, &l) == TWINCACHE_OK);
  twincache_batch *kept, *b;
  TC_REQUIRE(twincache_loader_next(l, &kept) == TWINCACHE_OK);
  size_t n = slab_bytes(kept);
  void *kept_slab = (void *)slab_of(kept); /* the compact struct goes with close */
  uint8_t *saved = malloc(n);
  TC_REQUIRE(saved);
  memcpy(saved, slab_of(kept), n);

  TC_REQUIRE(twincache_loader_next(l, &b) == TWINCACHE_OK);
  TC_CHECK(b->seq == 1);
  TC_CHECK_RC(twincache_loader_release(l, b), TWINCACHE_OK);
  TC_CHECK_RC(twincache_loader_next(l, &b), TWINCACHE_EDEADLK); /* batch 2 needs the kept slot */
  TC_CHECK_RC(twincache_loader_detach(l, kept), TWINCACHE_OK);
  TC_CHECK_RC(twincache_loader_detach(l, kept), TWINCACHE_ESTALE);
  TC_CHECK_RC(twincache_loader_detach(NULL, kept), TWINCACHE_EINVAL);

  size_t seq = 2;
  int rc;
  while ((rc = twincache_loader_next(l, &b)) == TWINCACHE_OK) {
    TC_CHECK(b->seq == seq);
    TC_CHECK(slab_of(b) != kept_slab);
    if (seq < ref.count)
      TC_CHECK(memcmp(b->slab, ref.slabs[seq], b->layout.bytes) == 0);
    TC_CHECK(memcmp(kept_slab, saved, n) == 0); /* never written again */
    TC_CHECK_RC(twincache_loader_release(l, b), TWINCACHE_OK);
    seq++;
  }
  TC_CHECK_RC(rc, TWINCACHE_END);
  TC_CHECK(seq == twincache_loader_batches_per_epoch(l));
  if (layout == TWINCACHE_LAYOUT_DENSE) TC_CHECK(seq == ref.count);
  TC_CHECK_RC(twincache_loader_release(l, kept), TWINCACHE_ESTALE);
  twincache_loader_close(l);
  TC_CHECK(a.live == 1); /* the detached slab: ours to free */
  count_free(kept_slab, &a);
  TC_CHECK(a.live == 0);
  free(saved);
  tl_stream_free(&ref);
}

int main(int argc, char **argv) {
  TC_REQUIRE(argc == 2);
  run(argv[1], TWINCACHE_LAYOUT_DENSE);
  run(argv[1], TWINCACHE_LAYOUT_COMPACT);
  return tc_test_result();
}
