/* test_loader_contract.c — the smaller points of the loader's contract: a
 * misaligned alloc hook is refused naming the hook; a successful open clears
 * the last error; *out is NULL on failure; a stale or double release is
 * refused with ESTALE and leaves the held batch intact; generations grow;
 * layout sizes whose products overflow size_t are refused. */
#include <stdint.h>

#include "tl_common.h"

/* Hands out 64-byte aligned blocks shifted by 16 bytes. */
static void *misaligned_alloc(size_t bytes, void *user) {
  (void)user;
  uint8_t *p = NULL;
  if (posix_memalign((void **)&p, 64, bytes + 64) != 0) return NULL;
  return p + 16;
}
static void misaligned_free(void *ptr, void *user) {
  (void)user;
  if (ptr) free((uint8_t *)ptr - 16);
}

int main(int argc, char **argv) {
  TC_REQUIRE(argc == 2);
  const char *cache = argv[1];
  twincache_loader_options o;
  twincache_loader *l = (twincache_loader *)1;

  /* misaligned allocator: refused, naming the hook, nothing leaked */
  twincache_loader_options_init(&o);
  o.alloc = misaligned_alloc;
  o.free = misaligned_free;
  TC_CHECK_RC(twincache_loader_open(cache, &o, NULL, &l), TWINCACHE_EINVAL);
  TC_CHECK(l == NULL);
  TC_CHECK(strstr(twincache_last_error(), "alloc") != NULL);

  /* a successful open clears the last error */
  TC_CHECK(twincache_last_error()[0] != '\0');
  twincache_loader_options_init(&o);
  o.batch_size = 5;
  o.slots = 2;
  o.threads = 1;
  TC_CHECK_RC(twincache_loader_open(cache, &o, NULL, &l), TWINCACHE_OK);
  TC_CHECK(strcmp(twincache_last_error(), "") == 0);

  /* stale and double release (the sequence, slots = 2) */
  if (l) {
    twincache_batch *b0, *b1, *b2;
    TC_CHECK_RC(twincache_loader_next(l, &b0), TWINCACHE_OK);
    uint64_t g0 = b0->generation;
    TC_CHECK_RC(twincache_loader_release(l, b0), TWINCACHE_OK);
    TC_CHECK_RC(twincache_loader_release(l, b0), TWINCACHE_ESTALE); /* double */
    TC_CHECK_RC(twincache_loader_next(l, &b1), TWINCACHE_OK);
    TC_CHECK_RC(twincache_loader_next(l, &b2), TWINCACHE_OK); /* slot 0 again */
    TC_CHECK(b1->generation == g0 + 1 && b2->generation == g0 + 2);
    TC_CHECK(b2 != b0);
    uint64_t seq2 = b2->seq, id2 = b2->graph_id[0];
    TC_CHECK_RC(twincache_loader_release(l, b0), TWINCACHE_ESTALE); /* stale: b2 holds the slot */
    /* b2 is still held: its slot was not refilled behind it */
    TC_CHECK_RC(twincache_loader_release(l, b1), TWINCACHE_OK);
    twincache_batch *b3, *b4;
    TC_CHECK_RC(twincache_loader_next(l, &b3), TWINCACHE_OK); /* slot 1 */
    TC_CHECK_RC(twincache_loader_next_timeout(l, &b4, 0), TWINCACHE_EAGAIN); /* slot 0 still held */
    TC_CHECK(b2->seq == seq2 && seq2 == 2 && b2->graph_id[0] == id2);
    TC_CHECK_RC(twincache_loader_release(l, b2), TWINCACHE_OK);
    TC_CHECK_RC(twincache_loader_release(l, b2), TWINCACHE_ESTALE);
    TC_CHECK_RC(twincache_loader_release(l, b3), TWINCACHE_OK);
    TC_CHECK_RC(twincache_loader_release(l, NULL), TWINCACHE_OK);
    TC_CHECK_RC(twincache_loader_release(NULL, b3), TWINCACHE_EINVAL);
    twincache_loader_close(l);
  }

  /* *out is NULL after any failure */
  l = (twincache_loader *)1;
  twincache_loader_options_init(&o);
  o.threads = 0;
  TC_CHECK_RC(twincache_loader_open(cache, &o, NULL, &l), TWINCACHE_EINVAL);
  TC_CHECK(l == NULL);

  /* layout: products beyond size_t are refused (batch x nodes x samples) */
  twincache_batch_layout L;
  TC_CHECK_RC(twincache_batch_layout_init(&L, 65536, 65535, 65535, 4000000000u), TWINCACHE_EINVAL);
  TC_CHECK(L.bytes == 0);
  TC_CHECK_RC(twincache_batch_layout_init(&L, UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX), TWINCACHE_EINVAL);
  TC_CHECK_RC(twincache_batch_layout_init(&L, 4, 7, 7, 8), TWINCACHE_OK);
  TC_CHECK(L.bytes % 64 == 0 && L.valid % 64 == 0 && L.valid >= L.graph_id + 4 * sizeof(uint64_t) &&
           L.bytes >= L.valid + 4);
  return tc_test_finish("test_loader_contract");
}
