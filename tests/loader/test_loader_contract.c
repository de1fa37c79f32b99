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
  TL_REQUIRE(argc == 2);
  const char *cache = argv[1];
  twincache_loader_options o;
  twincache_loader *l = (twincache_loader *)1;

  /* misaligned allocator: refused, naming the hook, nothing leaked */
  twincache_loader_options_init(&o);
  o.alloc = misaligned_alloc;
  o.free = misaligned_free;
  TL_CHECK_RC(twincache_loader_open(cache, &o, NULL, &l), TWINCACHE_EINVAL);
  TL_CHECK(l == NULL);
  TL_CHECK(strstr(twincache_loader_last_error(), "alloc") != NULL);

  /* a successful open clears the last error */
  TL_CHECK(twincache_loader_last_error()[0] != '\0');
  twincache_loader_options_init(&o);
  o.batch_size = 5;
  o.slots = 2;
  o.threads = 1;
  TL_CHECK_RC(twincache_loader_open(cache, &o, NULL, &l), TWINCACHE_OK);
  TL_CHECK(strcmp(twincache_loader_last_error(), "") == 0);

  /* stale and double release (the sequence, slots = 2) */
  if (l) {
    twincache_batch *b0, *b1, *b2;
    TL_CHECK_RC(twincache_loader_next(l, &b0), TWINCACHE_OK);
    uint64_t g0 = b0->generation;
    TL_CHECK_RC(twincache_loader_release(l, b0), TWINCACHE_OK);
    TL_CHECK_RC(twincache_loader_release(l, b0), TWINCACHE_ESTALE); /* double */
    TL_CHECK_RC(twincache_loader_next(l, &b1), TWINCACHE_OK);
    TL_CHECK_RC(twincache_loader_next(l, &b2), TWINCACHE_OK); /* slot 0 again */
    TL_CHECK(b1->generation == g0 + 1 && b2->generation == g0 + 2);
    TL_CHECK(b2 != b0);
    uint64_t seq2 = b2->seq, id2 = b2->graph_id[0];
    TL_CHECK_RC(twincache_loader_release(l, b0), TWINCACHE_ESTALE); /* stale: b2 holds the slot */
    /* b2 is still held: its slot was not refilled behind it */
    TL_CHECK_RC(twincache_loader_release(l, b1), TWINCACHE_OK);
    twincache_batch *b3, *b4;
    TL_CHECK_RC(twincache_loader_next(l, &b3), TWINCACHE_OK); /* slot 1 */
    TL_CHECK_RC(twincache_loader_next_timeout(l, &b4, 0), TWINCACHE_EAGAIN); /* slot 0 still held */
    TL_CHECK(b2->seq == seq2 && seq2 == 2 && b2->graph_id[0] == id2);
    TL_CHECK_RC(twincache_loader_release(l, b2), TWINCACHE_OK);
    TL_CHECK_RC(twincache_loader_release(l, b2), TWINCACHE_ESTALE);
    TL_CHECK_RC(twincache_loader_release(l, b3), TWINCACHE_OK);
    TL_CHECK_RC(twincache_loader_release(l, NULL), TWINCACHE_OK);
    TL_CHECK_RC(twincache_loader_release(NULL, b3), TWINCACHE_EINVAL);
    twincache_loader_close(l);
  }

  /* *out is NULL after any failure */
  l = (twincache_loader *)1;
  twincache_loader_options_init(&o);
  o.threads = 0;
  TL_CHECK_RC(twincache_loader_open(cache, &o, NULL, &l), TWINCACHE_EINVAL);
  TL_CHECK(l == NULL);

  /* layout: products beyond size_t are refused (batch x nodes x samples) */
  twincache_batch_layout L;
  TL_CHECK_RC(twincache_batch_layout_init(&L, 65536, 65535, 65535, 4000000000u), TWINCACHE_EINVAL);
  TL_CHECK(L.bytes == 0);
  TL_CHECK_RC(twincache_batch_layout_init(&L, UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX), TWINCACHE_EINVAL);
  TL_CHECK_RC(twincache_batch_layout_init(&L, 4, 7, 7, 8), TWINCACHE_OK);
  TL_CHECK(L.bytes % 64 == 0 && L.valid % 64 == 0 && L.valid >= L.graph_id + 4 * sizeof(uint64_t) &&
           L.bytes >= L.valid + 4);
  return tl_finish("test_loader_contract");
}
