/* test_loader_mix.c — a mixture of two caches (3..5 and 6..9 nodes) at
 * 0.7/0.3 through twincache_loader_open_mixture: every batch holds the
 * planned count of each source in source order, the graphs the mixture plan
 * (tc_mix.h) names, each decoded equal to reading it from its own cache
 * (padded to the larger N and K); a run at world size 2 checkpoints before
 * an epoch boundary and resumes at 3 past it, and the global stream is the
 * uninterrupted one's; stored sources of another S padded to the larger
 * (each graph's rows its cache's, the rest 0, rows per world its S); then
 * the compact layout expanding to the dense stream (stored sources of one
 * S, fresh ones of another S), stored sources of another S refused there;
 * the refusals (the SCM layout, a range, a state of other weights); epoch_end and epoch_state at world size 3;
 * then fresh worlds (rows 6) from sources of another S: the same stream,
 * worlds included, across the resume, and each graph's worlds those its own
 * cache's fresh loader gives in that epoch.
 * usage: test_loader_mix CACHE_A CACHE_B CACHE_OTHER_S */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_mix.h"
#include "tl_common.h"
#include "tl_expand.h"

#define G 10
#define EPOCHS 3
#define MAXK 256 /* global batches checked */

static const char *paths[3];
static const char *mixp[2]; /* the mixture run_world reads */
static uint32_t fresh_rows;  /* 0: stored worlds; else fresh ones of this many rows */
static uint64_t worlds[MAXK]; /* FNV-1a of each global batch's base and inter, 0 = not seen */
static twincache_cache *caches[2];
static twincache_dctx *dctx;
static twincache_graph *gr;

static void options(twincache_loader_options *o, uint32_t W, uint32_t r) {
  twincache_loader_options_init(o);
  o->batch_size = G;
  o->world_size = W;
  o->rank = r;
  o->epochs = EPOCHS;
  o->seed = 19;
  o->threads = 2;
  if (fresh_rows) {
    o->samples = TWINCACHE_SAMPLES_FRESH;
    o->rows = fresh_rows;
  }
}

/* FNV-1a of n bytes, continuing from h */
static uint64_t fnv_more(uint64_t h, const void *p, size_t n) {
  for (size_t i = 0; i < n; i++) h = (h ^ ((const uint8_t *)p)[i]) * 1099511628211ull;
  return h;
}

/* Stored sources of another S (A: S = 4, OTHER_S: S = 5) pad to the larger
 * S: over one epoch with 1 and 3 decode threads, every graph's rows are its
 * own cache's, each real world's rows entry is its cache's S, the rows past
 * it (base and worlds) are 0 in every column, and the slabs are the same. */
static uint64_t padded_s(const char *const *srcs, uint32_t threads) {
  static const double w[2] = {0.7, 0.3};
  twincache_loader_options o;
  options(&o, 1, 0);
  o.epochs = 1, o.threads = threads;
  twincache_loader *l = NULL;
  TC_REQUIRE(twincache_loader_open_mixture(srcs, w, 2, &o, NULL, &l) == TWINCACHE_OK, "%s", twincache_last_error());
  twincache_cache *c[2];
  uint32_t maxn = 0, maxs = 0, maxk = 0, maxh = 0;
  for (int i = 0; i < 2; i++) {
    TC_REQUIRE(twincache_cache_open(srcs[i], &c[i]) == TWINCACHE_OK, "%s", twincache_last_error());
    const twincache_dims *d = twincache_cache_dims(c[i]);
    maxn = d->max_nodes > maxn ? d->max_nodes : maxn;
    maxs = d->samples > maxs ? d->samples : maxs;
    maxk = d->max_inter > maxk ? d->max_inter : maxk;
    maxh = d->hidden > maxh ? d->hidden : maxh;
  }
  TC_REQUIRE(twincache_cache_dims(c[0])->samples < maxs, "the first source must store the smaller S");
  twincache_graph *one = twincache_graph_alloc(maxn, maxs, maxk, maxh);
  TC_REQUIRE(one != NULL);
  twincache_batch *b;
  uint64_t h = 1469598103934665603ull;
  uint32_t seen[2] = {0, 0};
  int rc;
  while ((rc = twincache_loader_next(l, &b)) == TWINCACHE_OK) {
    const twincache_batch_layout *L = &b->layout;
    size_t N = L->nodes, K = L->inter, S = L->samples;
    TC_CHECK(S == maxs, "the slab's S is %zu, the sources' largest %u", S, maxs);
    for (uint32_t g = 0; g < b->n_graphs; g++) {
      uint32_t src = (uint32_t)TWINCACHE_MIX_SOURCE(b->graph_id[g]);
      TC_REQUIRE(src < 2 && twincache_cache_read_graph(c[src], dctx, TWINCACHE_MIX_INDEX(b->graph_id[g]), one) ==
                                TWINCACHE_OK);
      size_t s = one->n_samples, n = one->n_nodes, k = one->n_inter;
      const uint32_t *rows = b->rows + (size_t)g * (K + 1);
      int ok = 1;
      for (size_t q = 0; q <= K; q++) ok &= rows[q] == (q <= k ? s : 0);
      TC_CHECK(ok, "graph %u of source %u: rows per world are not its S = %zu", g, src, s);
      for (size_t q = 0; q <= k; q++) { /* q = k: the base world */
        const float *got = q < k ? b->inter + ((g * K + q) * S) * N : b->base + g * S * N;
        const float *want = q < k ? one->inter + q * s * one->ld : one->base;
        for (size_t r = 0; r < S; r++)
          for (size_t j = 0; j < (r < s ? n : N); j++)
            ok &= r < s ? !memcmp(&got[r * N + j], &want[r * one->ld + j], 4) : got[r * N + j] == 0.0f;
      }
      TC_CHECK(ok, "graph %u of source %u (S = %zu): not its cache's rows, or padding not 0", g, src, s);
      seen[src]++;
    }
    h = fnv_more(h, b->base, (size_t)b->n_graphs * S * N * 4);
    h = fnv_more(h, b->inter, (size_t)b->n_graphs * K * S * N * 4);
    h = fnv_more(h, b->rows, (size_t)b->n_graphs * (K + 1) * 4);
    TC_REQUIRE(twincache_loader_release(l, b) == TWINCACHE_OK);
  }
  TC_CHECK(rc == TWINCACHE_END && seen[0] > 0 && seen[1] > 0, "rc %d, %u and %u graphs", rc, seen[0], seen[1]);
  twincache_graph_free(one);
  for (int i = 0; i < 2; i++) twincache_cache_close(c[i]);
  twincache_loader_close(l);
  return h;
}

/* The compact layout of a mixture expands to its dense layout: the same
 * options (options(): stored worlds, or fresh ones of fresh_rows rows) in
 * both layouts give the same stream, and twincache_expand_cpu of every
 * compact batch equals the dense slab byte for byte, over every epoch
 * (slots reused: a graph of another source and N may follow in a place).
 * Returns the batches compared. */
static uint64_t compact_as_dense(const char *const *srcs) {
  static const double w[2] = {0.7, 0.3};
  twincache_loader_options od, oc;
  options(&od, 1, 0);
  options(&oc, 1, 0);
  oc.layout = TWINCACHE_LAYOUT_COMPACT;
  twincache_loader *ld = NULL, *lc = NULL;
  TC_REQUIRE(twincache_loader_open_mixture(srcs, w, 2, &od, NULL, &ld) == TWINCACHE_OK, "%s", twincache_last_error());
  TC_REQUIRE(twincache_loader_open_mixture(srcs, w, 2, &oc, NULL, &lc) == TWINCACHE_OK, "%s", twincache_last_error());
  const twincache_batch_layout *L = twincache_loader_layout(ld);
  tl_expander x;
  tl_expander_init(&x, L);
  uint64_t batches = 0;
  for (;;) {
    twincache_batch *bd, *bc;
    int rd = twincache_loader_next(ld, &bd), rc = twincache_loader_next(lc, &bc);
    TC_CHECK_RC(rc, rd);
    if (rd != TWINCACHE_OK || rc != TWINCACHE_OK) break;
    TC_REQUIRE(bc->compact && bc->seq == bd->seq && bc->n_graphs == bd->n_graphs);
    twincache_expand_cpu(x.out, bc->compact->slab, &x.offsets);
    TC_CHECK(!memcmp(x.out, bd->slab, L->bytes), "mixture batch %llu: the compact batch expands to another slab",
             (unsigned long long)bd->seq);
    batches++;
    twincache_loader_release(ld, bd);
    twincache_loader_release(lc, bc);
  }
  tl_expander_free(&x);
  twincache_loader_close(ld);
  twincache_loader_close(lc);
  return batches;
}

/* Graph g of batch b equals graph `index` of source `src` read alone. */
static int same_graph(const twincache_batch *b, uint32_t g, uint32_t src, uint64_t index) {
  const twincache_batch_layout *L = &b->layout;
  size_t N = L->nodes, K = L->inter, S = L->samples;
  TC_CHECK_RC(twincache_cache_read_graph(caches[src], dctx, index, gr), TWINCACHE_OK);
  size_t n = gr->n_nodes, k = gr->n_inter, ld = gr->ld;
  const float *base = b->base + g * S * N, *inter = b->inter + g * K * S * N;
  const uint8_t *adj = b->adj + g * N * N, *nm = b->node_mask + g * N, *im = b->int_mask + g * K;
  int ok = n <= N && k <= K && (fresh_rows ? S == fresh_rows : gr->n_samples == S);
  for (size_t s = 0; ok && !fresh_rows && s < S; s++)
    for (size_t j = 0; j < N; j++)
      ok &= j < n ? !memcmp(&base[s * N + j], &gr->base[s * ld + j], 4) : base[s * N + j] == 0.0f;
  for (size_t q = 0; ok && q < K; q++) {
    ok &= im[q] == (q < k) && b->kind[g * K + q] == (q < k ? gr->kind[q] : 0);
    for (size_t s = 0; s < S; s++)
      for (size_t j = 0; j < N; j++) {
        float got = inter[(q * S + s) * N + j];
        if (fresh_rows) /* fresh: only the padding is known here */
          ok &= q < k && j < n ? 1 : got == 0.0f;
        else
          ok &= q < k && j < n ? !memcmp(&got, &gr->inter[(q * S + s) * ld + j], 4) : got == 0.0f;
      }
  }
  for (size_t i = 0; ok && i < N; i++) {
    ok &= nm[i] == (i < n);
    for (size_t j = 0; j < N; j++) ok &= adj[i * N + j] == (i < n && j < n ? gr->adj[i * gr->ld_adj + j] : 0);
  }
  return ok;
}

/* Checks batch b as global batch k of plan m; records its graph ids. */
static void check_batch(const tc_mix *m, uint64_t k, const twincache_batch *b, uint64_t ids[MAXK][G]) {
  TC_REQUIRE(k < MAXK && b->n_graphs == G, "global batch %llu: %u graphs", (unsigned long long)k, b->n_graphs);
  TC_CHECK(b->epoch == tc_mix_epoch(m, k), "global batch %llu: epoch %llu", (unsigned long long)k,
           (unsigned long long)b->epoch);
  uint32_t per_src[2] = {0, 0};
  for (uint32_t g = 0; g < G; g++) {
    uint32_t src;
    uint64_t pos, index;
    tc_mix_slot(m, k, g, &src, &pos, &index);
    uint64_t id = b->graph_id[g];
    per_src[TWINCACHE_MIX_SOURCE(id) & 1]++;
    TC_CHECK(b->valid[g] == 1 && TWINCACHE_MIX_SOURCE(id) == src && TWINCACHE_MIX_INDEX(id) == index,
             "global batch %llu slot %u: id %#llx, plan says source %u graph %llu", (unsigned long long)k, g,
             (unsigned long long)id, src, (unsigned long long)index);
    TC_CHECK(same_graph(b, g, src, index), "global batch %llu slot %u: not graph %llu of source %u",
             (unsigned long long)k, g, (unsigned long long)index, src);
    if (ids[k][g] == UINT64_MAX) ids[k][g] = id;
    TC_CHECK(ids[k][g] == id, "global batch %llu slot %u read differently by two runs", (unsigned long long)k, g);
  }
  const twincache_batch_layout *L = &b->layout;
  uint64_t h = 1469598103934665603ull;
  const uint8_t *w = (const uint8_t *)b->base;
  size_t bytes = (size_t)G * L->samples * L->nodes * 4, ibytes = bytes * L->inter;
  for (size_t i = 0; i < bytes; i++) h = (h ^ w[i]) * 1099511628211ull;
  for (size_t i = 0, n = ibytes; i < n; i++) h = (h ^ ((const uint8_t *)b->inter)[i]) * 1099511628211ull;
  if (!worlds[k]) worlds[k] = h;
  TC_CHECK(worlds[k] == h, "global batch %llu: other worlds than another run's", (unsigned long long)k);
  TC_CHECK(per_src[0] == 7 && per_src[1] == 3, "global batch %llu: %u + %u graphs", (unsigned long long)k,
           per_src[0], per_src[1]);
}

/* W loaders at `resume`, read in step for `steps` steps (0: to the end);
 * every batch checked as its global batch; *out: rank W-1's state after. */
static uint64_t run_world(uint32_t W, const twincache_loader_state *resume, uint64_t steps, const tc_mix *m,
                          uint64_t ids[MAXK][G], twincache_loader_state *out) {
  static const double weights[2] = {0.7, 0.3};
  twincache_loader *l[4];
  uint64_t origin = 0, read = 0;
  for (uint32_t r = 0; r < W; r++) {
    twincache_loader_options o;
    options(&o, W, r);
    TC_REQUIRE(twincache_loader_open_mixture(mixp, weights, 2, &o, resume, &l[r]) == TWINCACHE_OK, "W %u: %s",
               W, twincache_last_error());
  }
  if (resume) { /* where this world's stream starts */
    origin = resume->world_size == W ? resume->origin + resume->next_seq * W : resume->origin + resume->next_seq *
                                                                                             resume->world_size;
  }
  for (uint64_t step = 0; !steps || step < steps; step++) {
    int ended = 0;
    for (uint32_t r = 0; r < W; r++) {
      twincache_batch *b;
      int rc = twincache_loader_next(l[r], &b);
      if (rc == TWINCACHE_END) {
        ended++;
        continue;
      }
      TC_REQUIRE(rc == TWINCACHE_OK, "W %u rank %u: %s", W, r, twincache_last_error());
      check_batch(m, origin + step * W + r, b, ids);
      read++;
      TC_REQUIRE(twincache_loader_release(l[r], b) == TWINCACHE_OK);
    }
    TC_REQUIRE(ended == 0 || ended == (int)W, "W %u: ranks ended at different steps", W);
    if (ended) break;
  }
  if (out) {
    uint8_t bytes[TWINCACHE_LOADER_STATE_BYTES];
    twincache_loader_state s;
    twincache_loader_get_state(l[W - 1], &s);
    twincache_loader_state_encode(&s, bytes);
    TC_REQUIRE(twincache_loader_state_decode(bytes, out) == TWINCACHE_OK);
  }
  for (uint32_t r = 0; r < W; r++) twincache_loader_close(l[r]);
  return read;
}

int main(int argc, char **argv) {
  TC_REQUIRE(argc == 4, "usage: test_loader_mix CACHE_A CACHE_B CACHE_OTHER_S");
  paths[0] = argv[1], paths[1] = argv[2], paths[2] = argv[3];
  mixp[0] = paths[0], mixp[1] = paths[1];
  uint64_t begin[2], n[2], tags[2];
  uint32_t maxn = 0, maxk = 0, maxh = 0;
  for (int i = 0; i < 2; i++) {
    TC_REQUIRE(twincache_cache_open(paths[i], &caches[i]) == TWINCACHE_OK, "%s", twincache_last_error());
    const twincache_dims *d = twincache_cache_dims(caches[i]);
    begin[i] = twincache_cache_first(caches[i]);
    n[i] = twincache_cache_count(caches[i]) - begin[i];
    tags[i] = twincache_cache_tag(caches[i]);
    maxn = d->max_nodes > maxn ? d->max_nodes : maxn;
    maxk = d->max_inter > maxk ? d->max_inter : maxk;
    maxh = d->hidden > maxh ? d->hidden : maxh;
  }
  const twincache_dims *d0 = twincache_cache_dims(caches[0]);
  TC_REQUIRE(d0->max_nodes < twincache_cache_dims(caches[1])->max_nodes, "source B must have the larger N");
  dctx = twincache_dctx_create();
  gr = twincache_graph_alloc(maxn, d0->samples, maxk, maxh);
  TC_REQUIRE(dctx && gr);

  static const double weights[2] = {0.7, 0.3};
  tc_mix m;
  TC_REQUIRE(tc_mix_init(&m, weights, begin, n, 2, G, 1, 0, EPOCHS, 1, 19) == TWINCACHE_OK);
  tc_mix_set_tag(&m, tags, NULL);
  TC_CHECK(m.count[0] == 7 && m.count[1] == 3);
  uint64_t total = EPOCHS * m.epoch_batches;
  TC_REQUIRE(total <= MAXK && total > 2 * m.epoch_batches);
  /* source B (n = 20, 3 per batch) runs out within the first epoch */
  TC_REQUIRE(n[1] < 3 * m.epoch_batches, "source B must run out within an epoch");

  static uint64_t ids[MAXK][G];
  memset(ids, 0xff, sizeof ids);
  twincache_loader_options o;
  options(&o, 1, 0);
  twincache_loader *one;
  TC_REQUIRE(twincache_loader_open_mixture(paths, weights, 2, &o, NULL, &one) == TWINCACHE_OK, "%s",
             twincache_last_error());
  const twincache_batch_layout *L = twincache_loader_layout(one);
  TC_CHECK(L->nodes == maxn && L->inter == maxk && L->samples == d0->samples, "slab N %u K %u S %u", L->nodes,
           L->inter, L->samples);
  TC_CHECK(twincache_loader_batches_total(one) == total && twincache_loader_batches_per_epoch(one) ==
           m.epoch_batches);
  /* the realised shares (issue 35 item 10): 0.5/0.3/0.2 at batch 7 are 3.5, 2.1, 1.4 graphs; largest
   * remainder: 4, 2, 1 (by hand) */
  uint32_t counts[4] = {0, 0, 0, 99};
  TC_CHECK(twincache_loader_mix_counts(one, counts, 2) == 2 && counts[2] == 0, "two sources, cap 2");
  twincache_loader_close(one);
  {
    const char *three[] = {paths[0], paths[1], paths[0]};
    const double w3[] = {0.5, 0.3, 0.2};
    twincache_loader_options o7;
    options(&o7, 1, 0);
    o7.batch_size = 7;
    TC_REQUIRE(twincache_loader_open_mixture(three, w3, 3, &o7, NULL, &one) == TWINCACHE_OK, "%s",
               twincache_last_error());
    TC_CHECK(twincache_loader_mix_counts(one, counts, 4) == 3 && counts[0] == 4 && counts[1] == 2 &&
                 counts[2] == 1 && counts[3] == 99,
             "counts %u %u %u %u", counts[0], counts[1], counts[2], counts[3]);
    twincache_loader_close(one);
    TC_REQUIRE(twincache_loader_open(paths[0], &o7, NULL, &one) == TWINCACHE_OK, "%s", twincache_last_error());
    TC_CHECK(twincache_loader_mix_counts(one, counts, 4) == 0 && counts[0] == 4, "one source: no counts");
    twincache_loader_close(one);
    TC_CHECK(twincache_loader_mix_counts(NULL, counts, 4) == 0);
  }

  /* uninterrupted at W = 1: the reference ids, each batch checked */
  TC_CHECK(run_world(1, NULL, 0, &m, ids, NULL) == total);
  /* W = 2 stops one step before the first epoch boundary's step, W = 3
   * resumes from rank 1's state and reads across it to the end */
  uint64_t steps = m.epoch_batches / 2 - 1;
  twincache_loader_state mid;
  TC_CHECK(run_world(2, NULL, steps, &m, ids, &mid) == 2 * steps);
  TC_CHECK(mid.origin == 0 && mid.next_seq == steps && mid.world_size == 2);
  uint64_t rest = total - 2 * steps, per_rank = (rest + 2) / 3;
  TC_CHECK(run_world(3, &mid, 0, &m, ids, NULL) == rest, "W 3 read other than the %llu batches left",
           (unsigned long long)rest);
  (void)per_rank;

  /* epoch_end and epoch_state at W = 3, rank 1: each seq's epoch end is the
   * first seq of a later epoch; epoch 1's state opens at global batch E */
  {
    twincache_loader_options o3;
    options(&o3, 3, 1);
    twincache_loader *l3;
    TC_REQUIRE(twincache_loader_open_mixture(paths, weights, 2, &o3, NULL, &l3) == TWINCACHE_OK);
    uint64_t t3 = twincache_loader_batches_total(l3), epoch_of[MAXK];
    TC_REQUIRE(t3 <= MAXK);
    for (uint64_t q = 0; q < t3; q++) epoch_of[q] = tc_mix_epoch(&m, q * 3 + 1);
    for (uint64_t q = 0; q < t3; q++) {
      uint64_t want = q;
      while (want < t3 && epoch_of[want] == epoch_of[q]) want++;
      TC_CHECK(twincache_loader_epoch_end(l3, q) == want, "W 3 seq %llu: epoch_end %llu, want %llu",
               (unsigned long long)q, (unsigned long long)twincache_loader_epoch_end(l3, q),
               (unsigned long long)want);
    }
    twincache_loader_state e1;
    TC_REQUIRE(twincache_loader_epoch_state(l3, 1, &e1) == TWINCACHE_OK, "%s", twincache_last_error());
    twincache_loader_close(l3);
    TC_REQUIRE(twincache_loader_open_mixture(paths, weights, 2, &o3, &e1, &l3) == TWINCACHE_OK, "%s",
               twincache_last_error());
    twincache_batch *b;
    TC_REQUIRE(twincache_loader_next(l3, &b) == TWINCACHE_OK);
    check_batch(&m, m.epoch_batches + 1, b, ids); /* rank 1's first batch of epoch 1 */
    TC_REQUIRE(twincache_loader_release(l3, b) == TWINCACHE_OK);
    twincache_loader_close(l3);
  }

  /* stored sources of another S: padded, the same for any thread count */
  const char *other_s[2] = {paths[0], paths[2]};
  TC_CHECK(padded_s(other_s, 1) == padded_s(other_s, 3), "padded slabs differ between 1 and 3 threads");
  /* the compact layout: the dense stream, expanded; one S only */
  TC_CHECK(compact_as_dense(paths) > 0);
  twincache_loader_options os = o;
  os.layout = TWINCACHE_LAYOUT_COMPACT;
  tl_mixture_refused("compact, stored sources of another S", other_s, weights, &os, NULL,
                     "compact layout does not pad a source's worlds to another S");

  /* refusals */
  twincache_loader_options oc = o;
  oc.layout = TWINCACHE_LAYOUT_SCM;
  oc.samples = TWINCACHE_SAMPLES_FRESH, oc.rows = 4;
  tl_mixture_refused("the SCM layout", paths, weights, &oc, NULL, "DENSE or COMPACT layout");
  twincache_loader_options orange = o;
  orange.index_end = 5;
  tl_mixture_refused("a range", paths, weights, &orange, NULL, "index_begin/index_end");
  static const double other_w[2] = {0.5, 0.5};
  tl_mixture_refused("a state of other weights", paths, other_w, &o, &mid, "cache_tag");

  /* fresh worlds: sources of another S mix (rows = 6 for both); the same
   * global stream, worlds included, at W 1 and W 2 -> 3 across the epoch
   * boundary, every graph the plan's with the cache's adjacency and masks */
  twincache_cache_close(caches[1]);
  TC_REQUIRE(twincache_cache_open(paths[2], &caches[1]) == TWINCACHE_OK, "%s", twincache_last_error());
  mixp[1] = paths[2];
  fresh_rows = 6;
  uint32_t s1 = twincache_cache_dims(caches[1])->samples;
  twincache_graph_free(gr); /* the cache reader's S is source 1's now */
  gr = twincache_graph_alloc(maxn, s1 > d0->samples ? s1 : d0->samples, maxk, maxh);
  TC_REQUIRE(gr != NULL && s1 != d0->samples, "the third cache must store another S");
  begin[1] = twincache_cache_first(caches[1]);
  n[1] = twincache_cache_count(caches[1]) - begin[1];
  tags[1] = twincache_cache_tag(caches[1]);
  TC_REQUIRE(tc_mix_init(&m, weights, begin, n, 2, G, 1, 0, EPOCHS, 1, 19) == TWINCACHE_OK);
  memset(ids, 0xff, sizeof ids);
  memset(worlds, 0, sizeof worlds);
  total = EPOCHS * m.epoch_batches;
  TC_CHECK(run_world(1, NULL, 0, &m, ids, NULL) == total);
  steps = m.epoch_batches / 2 - 1;
  TC_CHECK(run_world(2, NULL, steps, &m, ids, &mid) == 2 * steps);
  TC_CHECK(run_world(3, &mid, 0, &m, ids, NULL) == total - 2 * steps);
  /* a graph's fresh worlds are those a one-source fresh loader of its cache
   * gives in the same epoch (its source's own epoch 0 here) */
  {
    twincache_loader *mx, *one1;
    twincache_loader_options om, o1;
    options(&om, 1, 0);
    options(&o1, 1, 0);
    o1.shuffle = 0;
    o1.epochs = 1;
    TC_REQUIRE(twincache_loader_open_mixture(mixp, weights, 2, &om, NULL, &mx) == TWINCACHE_OK);
    TC_REQUIRE(twincache_loader_open(paths[2], &o1, NULL, &one1) == TWINCACHE_OK, "%s", twincache_last_error());
    twincache_batch *bm, *b1;
    TC_REQUIRE(twincache_loader_next(mx, &bm) == TWINCACHE_OK && twincache_loader_next(one1, &b1) == TWINCACHE_OK);
    const twincache_batch_layout *Lm = &bm->layout, *L1 = &b1->layout;
    TC_REQUIRE(Lm->nodes == L1->nodes && Lm->inter == L1->inter && Lm->samples == L1->samples);
    size_t wb = (size_t)Lm->samples * Lm->nodes, ib = wb * Lm->inter;
    for (uint32_t g = m.first[1]; g < G; g++) {
      uint64_t id = bm->graph_id[g], i = TWINCACHE_MIX_INDEX(id);
      TC_REQUIRE(TWINCACHE_MIX_SOURCE(id) == 1 && i < b1->n_graphs && b1->graph_id[i] == i);
      TC_CHECK(!memcmp(bm->base + g * wb, b1->base + i * wb, wb * 4) &&
                   !memcmp(bm->inter + g * ib, b1->inter + i * ib, ib * 4),
               "fresh graph %llu of source 1: other worlds than its own cache's loader gives", (unsigned long long)i);
    }
    twincache_loader_release(mx, bm);
    twincache_loader_release(one1, b1);
    twincache_loader_close(mx);
    twincache_loader_close(one1);
  }

  /* fresh worlds of sources of another S in the compact layout: the dense stream */
  TC_CHECK(compact_as_dense(mixp) > 0);

  twincache_graph_free(gr);
  twincache_dctx_free(dctx);
  for (int i = 0; i < 2; i++) twincache_cache_close(caches[i]);
  return tc_test_finish("test_loader_mix");
}
