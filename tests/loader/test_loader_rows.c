/* test_loader_rows — rows per world in batches (FORMAT.md 3.10): a cache
 * made with --inter-samples gives, batch by batch, the batch of the same
 * cache made without it but for rows past a world's count, which are zero,
 * and the `rows` array (G, K+1), which holds the counts (S for the full
 * cache, 0 for padded worlds and graphs); 1 and 2 decode threads give the
 * same bytes, stored and fresh; fresh worlds hold the stored counts, zeros
 * past them; the compact layout carries the same counts.
 * usage: test_loader_rows ROWS_CACHE FULL_CACHE (same options and seed, the
 * first with --inter-samples) */
#include "tl_common.h"

static twincache_loader_options options(uint32_t threads, int fresh) {
  twincache_loader_options o;
  twincache_loader_options_init(&o);
  o.batch_size = 6; /* 40 graphs: a partial last batch, padded positions */
  o.shuffle = 0;
  o.threads = threads;
  if (fresh) {
    o.samples = TWINCACHE_SAMPLES_FRESH;
    o.rows = 24;
  }
  return o;
}

/* The layout the streams' slabs have (the loader's, read off one batch). */
static twincache_batch_layout layout_of(const char *cache, const twincache_loader_options *o) {
  twincache_loader *l = NULL;
  twincache_batch *b = NULL;
  TC_REQUIRE(twincache_loader_open(cache, o, NULL, &l) == 0, "%s", twincache_last_error());
  TC_REQUIRE(twincache_loader_next(l, &b) == 0);
  twincache_batch_layout L = b->layout;
  twincache_loader_release(l, b);
  twincache_loader_close(l);
  return L;
}

/* Batch i of r (counts) against batch i of f (every world S rows): equal but
 * for rows past a count (zero in r) and the rows array; returns worlds seen
 * holding fewer than S rows. fresh: f is not comparable (another cache's
 * key), only r's own zeros and counts are checked. */
static uint64_t compare(const twincache_batch_layout *L, const uint8_t *r, const uint8_t *f, uint32_t n_graphs,
                        int fresh) {
  const size_t G = L->graphs, K = L->inter, S = L->samples, N = L->nodes;
  const uint32_t *rows = (const uint32_t *)(r + L->rows), *frows = (const uint32_t *)(f + L->rows);
  uint64_t fewer = 0;
  for (size_t g = 0; g < G; g++) {
    const uint8_t *imask = r + L->int_mask + g * K;
    for (size_t w = 0; w <= K; w++) {
      uint32_t want_full = g < n_graphs && (w == 0 || imask[w - 1]) ? (uint32_t)S : 0u;
      TC_REQUIRE(fresh || frows[g * (K + 1) + w] == want_full, "full cache: graph %zu world %zu holds %u rows", g, w,
                 frows[g * (K + 1) + w]);
      uint32_t c = rows[g * (K + 1) + w];
      TC_REQUIRE(want_full ? c >= 1 && c <= S : c == 0, "graph %zu world %zu: %u rows", g, w, c);
      fewer += c < S && want_full;
      const float *a = (const float *)(r + (w == 0 ? L->base + g * S * N * 4 : L->inter_off + (g * K + w - 1) * S * N * 4));
      const float *b = (const float *)(f + (w == 0 ? L->base + g * S * N * 4 : L->inter_off + (g * K + w - 1) * S * N * 4));
      for (size_t s = 0; s < S; s++)
        for (size_t j = 0; j < N; j++) {
          float x = a[s * N + j], y = b[s * N + j];
          if (s >= c)
            TC_REQUIRE(memcmp(&x, &(float){0.0f}, 4) == 0, "graph %zu world %zu row %zu past its %u rows: %g", g, w, s,
                       c, (double)x);
          else if (!fresh)
            TC_REQUIRE(memcmp(&x, &y, 4) == 0, "graph %zu world %zu row %zu: not the full cache's", g, w, s);
        }
    }
  }
  /* every other byte: the same as the full cache's (stored mode) */
  if (!fresh) {
    TC_REQUIRE(memcmp(r + L->target, f + L->target, L->rows - L->target) == 0, "targets to valid differ");
    TC_REQUIRE(memcmp(r + L->rows + G * (K + 1) * 4, f + L->rows + G * (K + 1) * 4,
                      L->bytes - L->rows - G * (K + 1) * 4) == 0, "the slab's tail differs");
  }
  return fewer;
}

int main(int argc, char **argv) {
  TC_REQUIRE(argc == 3, "usage: %s ROWS_CACHE FULL_CACHE", argv[0]);
  const char *rc_dir = argv[1], *full_dir = argv[2];
  for (int fresh = 0; fresh < 2; fresh++) {
    twincache_loader_options o1 = options(1, fresh), o2 = options(2, fresh);
    tl_stream r1 = {0}, r2 = {0}, f = {0};
    TC_REQUIRE(tl_stream_load(rc_dir, &o1, NULL, &r1) == 0, "%s", twincache_last_error());
    TC_REQUIRE(tl_stream_load(rc_dir, &o2, NULL, &r2) == 0, "%s", twincache_last_error());
    TC_REQUIRE(tl_stream_load(full_dir, &o1, NULL, &f) == 0, "%s", twincache_last_error());
    TC_CHECK(tl_stream_equal(&r1, &r2), "fresh %d: 1 and 2 threads give the same batches", fresh);
    TC_REQUIRE(r1.count == f.count && r1.count == 7);
    twincache_batch_layout L = layout_of(rc_dir, &o1);
    TC_REQUIRE(L.bytes == r1.slab_bytes && L.rows > L.valid);
    uint64_t fewer = 0;
    for (size_t i = 0; i < r1.count; i++) fewer += compare(&L, r1.slabs[i], f.slabs[i], r1.n_graphs[i], fresh);
    TC_CHECK(fewer > 40, "fresh %d: %llu worlds hold fewer than S rows", fresh, (unsigned long long)fewer);
    if (!fresh) { /* stored vs fresh: the same counts */
      tl_stream fr = {0};
      twincache_loader_options of = options(2, 1);
      TC_REQUIRE(tl_stream_load(rc_dir, &of, NULL, &fr) == 0, "%s", twincache_last_error());
      for (size_t i = 0; i < r1.count; i++)
        TC_CHECK(memcmp(r1.slabs[i] + L.rows, fr.slabs[i] + L.rows, (size_t)L.graphs * (L.inter + 1) * 4) == 0,
                 "batch %zu: fresh worlds hold the stored counts", i);
      tl_stream_free(&fr);
    }
    tl_stream_free(&r1);
    tl_stream_free(&r2);
    tl_stream_free(&f);
  }
  /* the compact layout carries the counts: the same rows as the dense
   * batches (its expansion, byte for byte: test_loader_compact) */
  twincache_loader_options oc = options(1, 0);
  oc.layout = TWINCACHE_LAYOUT_COMPACT;
  twincache_loader_options od = options(1, 0);
  twincache_loader *lc = NULL, *ld = NULL;
  TC_REQUIRE(twincache_loader_open(rc_dir, &oc, NULL, &lc) == TWINCACHE_OK, "%s", twincache_last_error());
  TC_REQUIRE(twincache_loader_open(rc_dir, &od, NULL, &ld) == TWINCACHE_OK, "%s", twincache_last_error());
  twincache_batch *bc, *bd;
  uint64_t fewer = 0;
  while (twincache_loader_next(lc, &bc) == TWINCACHE_OK) {
    TC_REQUIRE(twincache_loader_next(ld, &bd) == TWINCACHE_OK);
    size_t n = (size_t)bd->layout.graphs * (bd->layout.inter + 1);
    TC_CHECK(!memcmp(bc->compact->rows, bd->rows, n * sizeof(uint32_t)), "batch %llu: compact rows differ",
             (unsigned long long)bd->seq);
    for (size_t i = 0; i < n; i++) fewer += bd->rows[i] && bd->rows[i] < bd->layout.samples;
    twincache_loader_release(lc, bc);
    twincache_loader_release(ld, bd);
  }
  TC_CHECK(fewer > 0, "no world of fewer rows than S in %s", rc_dir);
  twincache_loader_close(lc);
  twincache_loader_close(ld);
  return tc_test_finish("test_loader_rows");
}
