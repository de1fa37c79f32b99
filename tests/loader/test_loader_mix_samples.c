/* test_loader_mix_samples — a mixture of a stored and a fresh source
 * (options.source_samples, issue 29): source 0 (S = 4 stored) read stored,
 * source 1 (S = 5 stored) read fresh with rows = 4:
 * - a stored graph's worlds are the cache's bytes; a fresh graph's are those
 *   a one-source fresh loader of its cache gives in the same epoch;
 * - the same slabs for 1 and 3 decode threads, and for 2 ranks stopped
 *   mid-epoch then resumed on 3 ranks across the epoch boundary;
 * - rows = 5: the stored source's S = 4 rows padded (its rows per world 4,
 *   row 4 of every world 0), the fresh source's 5 rows;
 * - refused, naming why: a stored source of a larger S than rows, an entry
 *   that is neither STORED nor FRESH, source_samples on one cache, the state
 *   of this mixture in the all-stored-on-S mixture of the same caches.
 * usage: test_loader_mix_samples CACHE_S4 CACHE_S5 */
#include "tl_common.h"

#define G 10
#define EPOCHS 3
#define MAXK 256

static const char *paths[2];
static const double weights[2] = {0.7, 0.3};
static const int stored_fresh[2] = {TWINCACHE_SAMPLES_STORED, TWINCACHE_SAMPLES_FRESH};
static uint64_t slab_hash[MAXK]; /* per global batch, 0 = not seen */

static void options(twincache_loader_options *o, uint32_t W, uint32_t r, uint32_t threads) {
  twincache_loader_options_init(o);
  o->batch_size = G;
  o->epochs = EPOCHS;
  o->seed = 19;
  o->world_size = W;
  o->rank = r;
  o->threads = threads;
  o->samples = TWINCACHE_SAMPLES_FRESH; /* overridden per source */
  o->rows = 4;
  o->source_samples = stored_fresh;
}

static uint64_t fnv(const void *p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ ((const uint8_t *)p)[i]) * 1099511628211ull;
  return h;
}

/* Reads W ranks in step from `resume` for `steps` steps (0 = to the end);
 * every slab's hash must equal the one seen for its global batch. Returns
 * the batches read; *out: rank 0's state after. */
static uint64_t run_world(uint32_t W, uint32_t threads, const twincache_loader_state *resume, uint64_t steps,
                          twincache_loader_state *out) {
  twincache_loader *l[3];
  uint64_t origin = resume ? resume->origin + resume->next_seq * resume->world_size : 0, read = 0;
  for (uint32_t r = 0; r < W; r++) {
    twincache_loader_options o;
    options(&o, W, r, threads);
    TC_REQUIRE(twincache_loader_open_mixture(paths, weights, 2, &o, resume, &l[r]) == TWINCACHE_OK, "%s",
               twincache_last_error());
  }
  twincache_batch *b[3];
  for (uint64_t step = 0; (!steps || step < steps) && !tl_step(l, W, b); step++)
    for (uint32_t r = 0; r < W; r++) {
      uint64_t k = origin + step * W + r, h = fnv(b[r]->slab, b[r]->layout.bytes);
      TC_REQUIRE(k < MAXK);
      if (!slab_hash[k]) slab_hash[k] = h;
      TC_CHECK(slab_hash[k] == h, "global batch %llu: other bytes at W %u, %u threads", (unsigned long long)k, W,
               threads);
      read++;
      twincache_loader_release(l[r], b[r]);
    }
  if (out) twincache_loader_get_state(l[0], out);
  for (uint32_t r = 0; r < W; r++) twincache_loader_close(l[r]);
  return read;
}

int main(int argc, char **argv) {
  TC_REQUIRE(argc == 3, "usage: test_loader_mix_samples CACHE_S4 CACHE_S5");
  paths[0] = argv[1], paths[1] = argv[2];

  /* the worlds: stored graphs are the cache's, fresh ones a fresh loader's */
  twincache_loader_options o;
  twincache_loader *mx, *fresh1;
  options(&o, 1, 0, 2);
  TC_REQUIRE(twincache_loader_open_mixture(paths, weights, 2, &o, NULL, &mx) == TWINCACHE_OK, "%s",
             twincache_last_error());
  twincache_loader_options of;
  twincache_loader_options_init(&of);
  of.batch_size = 64;
  of.shuffle = 0;
  of.samples = TWINCACHE_SAMPLES_FRESH;
  of.rows = 4;
  TC_REQUIRE(twincache_loader_open(paths[1], &of, NULL, &fresh1) == TWINCACHE_OK, "%s", twincache_last_error());
  twincache_cache *c0 = NULL;
  TC_REQUIRE(twincache_cache_open(paths[0], &c0) == TWINCACHE_OK);
  const twincache_dims *d0 = twincache_cache_dims(c0);
  twincache_graph *gr = twincache_graph_alloc(d0->max_nodes, d0->samples, d0->max_inter, d0->hidden);
  twincache_dctx *dctx = twincache_dctx_create();
  TC_REQUIRE(gr && dctx);
  twincache_batch *bm, *b1;
  TC_REQUIRE(twincache_loader_next(mx, &bm) == TWINCACHE_OK && twincache_loader_next(fresh1, &b1) == TWINCACHE_OK);
  const twincache_batch_layout *L = &bm->layout;
  TC_CHECK(L->samples == 4 && b1->layout.samples == 4, "one S (rows) for both");
  size_t S = L->samples, N = L->nodes, K = L->inter, wb = S * N, ib = wb * K;
  size_t N1 = b1->layout.nodes, K1 = b1->layout.inter; /* the fresh source's own N, K <= the mixture's */
  TC_REQUIRE(N1 <= N && K1 <= K);
  uint32_t n_stored = 0, n_fresh = 0;
  for (uint32_t g = 0; g < G; g++) {
    uint64_t id = bm->graph_id[g], i = TWINCACHE_MIX_INDEX(id);
    if (TWINCACHE_MIX_SOURCE(id) == 1) { /* fresh: the one-source fresh loader's graph i (epoch 0) */
      TC_REQUIRE(i < b1->n_graphs && b1->graph_id[i] == i);
      int ok = 1;
      for (size_t k = 0; k <= K1; k++) /* k = K1: the base world */
        for (size_t r = 0; r < S; r++)
          for (size_t j = 0; j < N1; j++) {
            const float *a = k < K1 ? &bm->inter[g * ib + (k * S + r) * N + j] : &bm->base[g * wb + r * N + j];
            const float *e = k < K1 ? &b1->inter[((i * K1 + k) * S + r) * N1 + j] : &b1->base[(i * S + r) * N1 + j];
            ok &= !memcmp(a, e, 4);
          }
      TC_CHECK(ok, "fresh graph %llu: other worlds than its cache's fresh loader", (unsigned long long)i);
      n_fresh++;
    } else { /* stored: the cache's bytes */
      TC_REQUIRE(twincache_cache_read_graph(c0, dctx, i, gr) == TWINCACHE_OK);
      int ok = gr->n_samples == S;
      for (size_t s = 0; ok && s < S; s++)
        for (size_t j = 0; j < gr->n_nodes; j++) ok &= !memcmp(&bm->base[g * wb + s * N + j], &gr->base[s * gr->ld + j], 4);
      for (size_t k = 0; ok && k < gr->n_inter; k++)
        for (size_t s = 0; s < S; s++)
          for (size_t j = 0; j < gr->n_nodes; j++)
            ok &= !memcmp(&bm->inter[g * ib + (k * S + s) * N + j], &gr->inter[(k * S + s) * gr->ld + j], 4);
      TC_CHECK(ok, "stored graph %llu: not the cache's worlds", (unsigned long long)i);
      n_stored++;
    }
  }
  TC_CHECK(n_stored == 7 && n_fresh == 3);
  twincache_loader_release(mx, bm);
  twincache_loader_release(fresh1, b1);
  twincache_loader_close(mx);
  twincache_loader_close(fresh1);
  twincache_dctx_free(dctx);
  twincache_graph_free(gr);
  twincache_cache_close(c0);

  /* determinism and resume: 1 thread, 3 threads, 2 ranks -> 3 ranks */
  uint64_t total = run_world(1, 1, NULL, 0, NULL);
  TC_CHECK(total > 0 && run_world(1, 3, NULL, 0, NULL) == total);
  twincache_loader_state mid;
  TC_CHECK(run_world(2, 2, NULL, 3, &mid) == 6);
  TC_CHECK(run_world(3, 2, &mid, 0, NULL) == total - 6);

  /* rows = 5: the stored source (S = 4) padded, the fresh one 5 rows */
  options(&o, 1, 0, 1);
  o.rows = 5;
  TC_REQUIRE(twincache_loader_open_mixture(paths, weights, 2, &o, NULL, &mx) == TWINCACHE_OK, "%s",
             twincache_last_error());
  TC_REQUIRE(twincache_loader_next(mx, &bm) == TWINCACHE_OK);
  {
    const twincache_batch_layout *P = &bm->layout;
    size_t S5 = P->samples, N5 = P->nodes, K5 = P->inter;
    TC_CHECK(S5 == 5, "the batch's S is %zu, not rows = 5", S5);
    int ok = 1, stored = 0;
    for (uint32_t g = 0; g < bm->n_graphs; g++) {
      uint32_t want = TWINCACHE_MIX_SOURCE(bm->graph_id[g]) == 0 ? 4 : 5;
      const uint32_t *rows = bm->rows + (size_t)g * (K5 + 1);
      ok &= rows[0] == want; /* the base world's */
      for (size_t j = 0; want == 4 && j < N5; j++) ok &= bm->base[(g * S5 + 4) * N5 + j] == 0.0f;
      for (size_t k = 0; k < K5; k++) {
        if (!bm->int_mask[g * K5 + k]) continue;
        ok &= rows[k + 1] == want;
        for (size_t j = 0; want == 4 && j < N5; j++) ok &= bm->inter[((g * K5 + k) * S5 + 4) * N5 + j] == 0.0f;
      }
      stored += want == 4;
    }
    TC_CHECK(ok && stored == 7, "rows per world or padding wrong (%d stored graphs)", stored);
  }
  twincache_loader_release(mx, bm);
  twincache_loader_close(mx);

  /* refusals */
  options(&o, 1, 0, 1);
  o.rows = 3; /* source 0 stores S = 4: more than the batch's S */
  tl_mixture_refused("a stored source of a larger S than rows", paths, weights, &o, NULL,
                     "more than the fresh sources' rows = 3");
  options(&o, 1, 0, 1);
  static const int bad[2] = {0, 2};
  o.source_samples = bad;
  tl_mixture_refused("an entry neither STORED nor FRESH", paths, weights, &o, NULL, "source_samples[1]");
  options(&o, 1, 0, 1);
  twincache_loader *l1 = NULL;
  TC_CHECK(twincache_loader_open(paths[0], &o, NULL, &l1) == TWINCACHE_EINVAL && !l1 &&
           strstr(twincache_last_error(), "source_samples"));
  options(&o, 1, 0, 1);
  static const int both_fresh[2] = {TWINCACHE_SAMPLES_FRESH, TWINCACHE_SAMPLES_FRESH};
  o.source_samples = both_fresh; /* the same caches and weights, another choice of worlds */
  tl_mixture_refused("the state in an all-fresh mixture", paths, weights, &o, &mid, "cache_tag");
  return tc_test_finish("test_loader_mix_samples");
}
