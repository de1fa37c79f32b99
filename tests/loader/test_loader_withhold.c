/* test_loader_withhold — withhold_targets (unknown-target training): with
 * it, every batch is the batch without it byte for byte except `target` and
 * `value`, which are all zero (while the batch without it has targets);
 * stored and fresh worlds alike. The compact layout and a value other than
 * 0/1 are refused at open with EINVAL and a message naming the option.
 * usage: test_loader_withhold CACHE_DIR... */
#include "tl_common.h"

static int all_zero(const uint8_t *p, size_t bytes) {
  for (size_t i = 0; i < bytes; i++)
    if (p[i]) return 0;
  return 1;
}

static void check_cache(const char *cache, int fresh) {
  twincache_loader_options o;
  twincache_loader_options_init(&o);
  o.batch_size = 16;
  o.epochs = 2;
  o.seed = 9;
  if (fresh) {
    o.samples = TWINCACHE_SAMPLES_FRESH;
    o.rows = 7;
  }
  twincache_loader *plain = NULL, *held = NULL;
  TC_CHECK_RC(twincache_loader_open(cache, &o, NULL, &plain), TWINCACHE_OK);
  o.withhold_targets = 1;
  TC_CHECK_RC(twincache_loader_open(cache, &o, NULL, &held), TWINCACHE_OK);
  if (!plain || !held) {
    twincache_loader_close(plain);
    twincache_loader_close(held);
    return;
  }
  uint64_t batches = 0, targets_seen = 0;
  for (;;) {
    twincache_batch *a, *b;
    int ra = twincache_loader_next(plain, &a), rb = twincache_loader_next(held, &b);
    TC_CHECK(ra == rb, "%s: next %d vs %d", cache, ra, rb);
    if (ra != TWINCACHE_OK || rb != TWINCACHE_OK) break;
    const twincache_batch_layout *L = &a->layout;
    size_t tb = (size_t)L->graphs * L->inter * L->nodes, vb = tb * sizeof(float);
    const uint8_t *sa = a->slab, *sb = b->slab;
    TC_CHECK(a->n_graphs == b->n_graphs && L->bytes == b->layout.bytes);
    TC_CHECK(all_zero(sb + L->target, tb) && all_zero(sb + L->value, vb),
             "%s batch %llu: target/value not withheld", cache, (unsigned long long)batches);
    for (size_t i = 0; i < tb; i++) targets_seen += sa[L->target + i];
    /* everything else is the same bytes: the regions before, between and after */
    size_t lo = L->target < L->value ? L->target : L->value, hi = L->target < L->value ? L->value : L->target;
    size_t lo_end = lo + (lo == L->target ? tb : vb), hi_end = hi + (hi == L->target ? tb : vb);
    TC_CHECK(!memcmp(sa, sb, lo) && !memcmp(sa + lo_end, sb + lo_end, hi - lo_end) &&
                 !memcmp(sa + hi_end, sb + hi_end, L->bytes - hi_end),
             "%s batch %llu: withholding changed more than target/value", cache, (unsigned long long)batches);
    twincache_loader_release(plain, a);
    twincache_loader_release(held, b);
    batches++;
  }
  TC_CHECK(batches > 0 && targets_seen > 0, "%s: %llu batches, %llu targets without withholding", cache,
           (unsigned long long)batches, (unsigned long long)targets_seen);
  printf("%s (%s): %llu batches, target/value withheld, the rest identical\n", cache, fresh ? "fresh" : "stored",
         (unsigned long long)batches);
  twincache_loader_close(plain);
  twincache_loader_close(held);
}

int main(int argc, char **argv) {
  TC_REQUIRE(argc >= 2, "usage: %s CACHE_DIR...", argv[0]);
  for (int i = 1; i < argc; i++) {
    check_cache(argv[i], 0);
    check_cache(argv[i], 1);
  }
  twincache_loader_options o;
  twincache_loader_options_init(&o);
  twincache_loader *l = NULL;
  o.withhold_targets = 1;
  o.layout = TWINCACHE_LAYOUT_COMPACT;
  TC_CHECK_RC(twincache_loader_open(argv[1], &o, NULL, &l), TWINCACHE_EINVAL);
  TC_CHECK(strstr(twincache_last_error(), "withhold_targets") != NULL, "message: %s", twincache_last_error());
  o.layout = TWINCACHE_LAYOUT_DENSE;
  o.withhold_targets = 2;
  TC_CHECK_RC(twincache_loader_open(argv[1], &o, NULL, &l), TWINCACHE_EINVAL);
  TC_CHECK(strstr(twincache_last_error(), "withhold_targets") != NULL, "message: %s", twincache_last_error());
  TC_CHECK(l == NULL);
  return tc_test_finish("test_loader_withhold");
}
