/* test_loader_fresh.c — fresh worlds (twincache_loader_options.samples =
 * FRESH) on caches of every mechanism, noise and intervention kind.
 *
 * usage: test_loader_fresh CACHE... (the first is the loader fixture cache:
 * determinism is checked on it; every cache gets the twin-property check)
 *
 * Checked:
 *  - the twin property, bit for bit: in twin world k every column outside
 *    the target's descendants is the base world's bits, a do() target column
 *    is exactly value[k]; padding is zero; STANDARDIZED base worlds have
 *    per-node mean 0 and std 1;
 *  - the worlds of graph i in epoch e depend only on (cache, i, e / R, rows):
 *    the same for 1, 2 and 4 threads, for ranks of world size 2, for another
 *    shuffle seed (another reading order), after a resume mid-epoch; they
 *    differ across epochs with R = 1 and are equal within a group of R = 2;
 *  - the compact layout holds the same worlds as the dense one;
 *  - rows different from the stored S;
 *  - bad options: rows 0 or beyond the format, rows or resample_every in
 *    stored mode, resample_every 0, an unknown samples value. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tl_common.h"

/* The worlds of one graph, copied out of a dense slab: base (S,N) then inter (K,S,N). */
static size_t world_floats(const twincache_batch_layout *L) {
  return (size_t)L->samples * L->nodes * (1 + (size_t)L->inter);
}
static void copy_worlds(const twincache_batch *b, uint32_t g, float *out) {
  const twincache_batch_layout *L = &b->layout;
  size_t sn = (size_t)L->samples * L->nodes;
  memcpy(out, b->base + g * sn, sn * sizeof(float));
  memcpy(out + sn, b->inter + g * L->inter * sn, L->inter * sn * sizeof(float));
}

static void fresh_options(twincache_loader_options *o, uint32_t rows, uint32_t R) {
  twincache_loader_options_init(o);
  o->samples = TWINCACHE_SAMPLES_FRESH;
  o->rows = rows;
  o->resample_every = R;
  o->batch_size = 16;
  o->epochs = 3;
}

/* Reference worlds of every graph in every epoch: ref[(e * n + i) * wf]. */
typedef struct ref_worlds {
  uint64_t n, epochs;
  size_t wf;
  float *w;
  uint8_t *seen;
} ref_worlds;

/* Reads a whole stream; for each (epoch, graph) met, stores its worlds the
 * first time and compares them with what is stored after. */
static void check_stream(const char *cache, const twincache_loader_options *o,
                         const twincache_loader_state *resume, ref_worlds *ref, const char *what) {
  twincache_loader *l = NULL;
  TC_REQUIRE(twincache_loader_open(cache, o, resume, &l) == TWINCACHE_OK, "%s: %s", what,
             twincache_last_error());
  const twincache_batch_layout *L = twincache_loader_layout(l);
  float *tmp = malloc(world_floats(L) * sizeof(float));
  TC_REQUIRE(tmp);
  twincache_batch *b;
  uint64_t mismatches = 0, graphs = 0;
  while (twincache_loader_next(l, &b) == TWINCACHE_OK) {
    for (uint32_t g = 0; g < b->n_graphs; g++) {
      uint64_t id = b->graph_id[g], e = b->epoch;
      TC_REQUIRE(id < ref->n && e < ref->epochs);
      float *slot = ref->w + (e * ref->n + id) * ref->wf;
      copy_worlds(b, g, tmp);
      if (!ref->seen[e * ref->n + id]) {
        memcpy(slot, tmp, ref->wf * sizeof(float));
        ref->seen[e * ref->n + id] = 1;
      } else if (memcmp(slot, tmp, ref->wf * sizeof(float)) != 0) {
        mismatches++;
      }
      graphs++;
    }
    twincache_loader_release(l, b);
  }
  TC_CHECK(graphs > 0, "%s: no graphs read", what);
  TC_CHECK(mismatches == 0, "%s: %llu graphs differ from the reference worlds", what,
           (unsigned long long)mismatches);
  free(tmp);
  twincache_loader_close(l);
}

static void test_determinism(const char *cache) {
  twincache_loader_options o;
  fresh_options(&o, 12, 1);
  o.threads = 1;
  twincache_loader *l = NULL;
  TC_REQUIRE(twincache_loader_open(cache, &o, NULL, &l) == TWINCACHE_OK, "%s", twincache_last_error());
  const twincache_batch_layout *L = twincache_loader_layout(l);
  TC_CHECK(L->samples == 12, "the batch has rows = 12 rows, not the stored S");
  twincache_loader_state st0;
  twincache_loader_get_state(l, &st0);
  ref_worlds ref = {st0.index_end, 3, world_floats(L), NULL, NULL};
  twincache_loader_close(l);
  ref.w = calloc(ref.n * ref.epochs * ref.wf, sizeof(float));
  ref.seen = calloc(ref.n * ref.epochs, 1);
  TC_REQUIRE(ref.w && ref.seen);

  check_stream(cache, &o, NULL, &ref, "1 thread");
  for (uint64_t i = 0; i < ref.n * ref.epochs; i++) TC_REQUIRE(ref.seen[i], "graph %llu never read", (unsigned long long)i);
  o.threads = 2;
  check_stream(cache, &o, NULL, &ref, "2 threads");
  o.threads = 4;
  o.seed = 99; /* another reading order */
  check_stream(cache, &o, NULL, &ref, "4 threads, another order");
  o.shuffle = 0;
  check_stream(cache, &o, NULL, &ref, "no shuffle");
  o.shuffle = 1;
  o.seed = 0;
  o.world_size = 2;
  for (o.rank = 0; o.rank < 2; o.rank++) check_stream(cache, &o, NULL, &ref, "rank of 2");
  o.world_size = 1;
  o.rank = 0;
  /* resume mid-epoch: the state after 7 batches */
  {
    twincache_loader_state st;
    TC_REQUIRE(twincache_loader_open(cache, &o, NULL, &l) == TWINCACHE_OK);
    for (int i = 0; i < 7; i++) {
      twincache_batch *b;
      TC_REQUIRE(twincache_loader_next(l, &b) == TWINCACHE_OK);
      twincache_loader_release(l, b);
    }
    twincache_loader_get_state(l, &st);
    twincache_loader_close(l);
    tl_stream whole = {0}, tail = {0};
    TC_REQUIRE(tl_stream_load(cache, &o, NULL, &whole) == TWINCACHE_OK);
    TC_REQUIRE(twincache_loader_open(cache, &o, &st, &l) == TWINCACHE_OK);
    for (twincache_batch *b; twincache_loader_next(l, &b) == TWINCACHE_OK; twincache_loader_release(l, b))
      tl_stream_push(&tail, b);
    twincache_loader_close(l);
    TC_CHECK(tail.count + 7 == whole.count);
    int same = 1;
    for (size_t i = 0; i < tail.count && i + 7 < whole.count; i++)
      same &= memcmp(tail.slabs[i], whole.slabs[i + 7], whole.slab_bytes) == 0;
    TC_CHECK(same, "a resumed fresh stream differs from the uninterrupted one");
    tl_stream_free(&whole);
    tl_stream_free(&tail);
  }
  /* epochs differ (R = 1); a group of R = 2 epochs shares one draw */
  uint64_t same01 = 0;
  for (uint64_t i = 0; i < ref.n; i++)
    same01 += memcmp(ref.w + i * ref.wf, ref.w + (ref.n + i) * ref.wf, ref.wf * sizeof(float)) == 0;
  TC_CHECK(same01 == 0, "%llu graphs have the same worlds in epochs 0 and 1 with resample_every 1",
           (unsigned long long)same01);
  fresh_options(&o, 12, 2);
  ref_worlds r2 = ref;
  r2.w = calloc(ref.n * ref.epochs * ref.wf, sizeof(float));
  r2.seen = calloc(ref.n * ref.epochs, 1);
  TC_REQUIRE(r2.w && r2.seen);
  check_stream(cache, &o, NULL, &r2, "resample_every 2");
  uint64_t diff01 = 0, same12 = 0, diff0 = 0;
  for (uint64_t i = 0; i < ref.n; i++) {
    diff01 += memcmp(r2.w + i * ref.wf, r2.w + (ref.n + i) * ref.wf, ref.wf * sizeof(float)) != 0;
    same12 += memcmp(r2.w + (ref.n + i) * ref.wf, r2.w + (2 * ref.n + i) * ref.wf, ref.wf * sizeof(float)) == 0;
    diff0 += memcmp(r2.w + i * ref.wf, ref.w + i * ref.wf, ref.wf * sizeof(float)) != 0;
  }
  TC_CHECK(diff01 == 0, "R = 2: %llu graphs differ between epochs 0 and 1", (unsigned long long)diff01);
  TC_CHECK(same12 == 0, "R = 2: %llu graphs equal in epochs 1 and 2", (unsigned long long)same12);
  TC_CHECK(diff0 == 0, "epoch 0 (group 0) differs between R = 1 and R = 2 for %llu graphs",
           (unsigned long long)diff0);
  free(r2.w);
  free(r2.seen);
  free(ref.w);
  free(ref.seen);
}

/* The twin property and the padding of one dense batch; returns graphs checked. */
static uint64_t check_twins(const twincache_batch *b) {
  const twincache_batch_layout *L = &b->layout;
  const uint32_t N = L->nodes, K = L->inter, S = L->samples;
  uint64_t bad = 0;
  for (uint32_t g = 0; g < b->n_graphs; g++) {
    const float *base = b->base + (size_t)g * S * N;
    const uint8_t *adj = b->adj + (size_t)g * N * N;
    uint32_t n = 0;
    while (n < N && b->node_mask[g * N + n]) n++;
    for (uint32_t s = 0; s < S; s++)
      for (uint32_t j = n; j < N; j++) bad += base[(size_t)s * N + j] != 0.0f;
    for (uint32_t k = 0; k < K; k++) {
      const float *w = b->inter + ((size_t)g * K + k) * S * N;
      if (!b->int_mask[g * K + k]) {
        for (size_t q = 0; q < (size_t)S * N; q++) bad += w[q] != 0.0f;
        continue;
      }
      /* the world's targets: every one in its target row (several for a
       * multi-target world); the changed set is the union of their sets */
      const uint8_t *trow = b->target + ((size_t)g * K + k) * N;
      const float *vrow = b->value + ((size_t)g * K + k) * N;
      uint8_t desc[TWINCACHE_MAX_NODES] = {0}, one[TWINCACHE_MAX_NODES];
      uint32_t targets = 0;
      for (uint32_t t = 0; t < N; t++)
        if (trow[t]) {
          TC_REQUIRE(t < n);
          targets++;
          twincache_graph_descendants(adj, n, N, t, one);
          for (uint32_t j = 0; j < n; j++) desc[j] |= one[j];
        }
      TC_REQUIRE(targets > 0);
      for (uint32_t s = 0; s < S; s++)
        for (uint32_t j = 0; j < N; j++) {
          float x = w[(size_t)s * N + j], y = base[(size_t)s * N + j];
          if (j >= n) bad += x != 0.0f;
          else if (!desc[j]) bad += memcmp(&x, &y, sizeof x) != 0;
          else if (trow[j] && b->kind[g * K + k] == TWINCACHE_DO) bad += memcmp(&x, &vrow[j], sizeof x) != 0;
          else if (trow[j]) bad += !isfinite(x);
        }
    }
  }
  TC_CHECK(bad == 0, "%llu values break the twin property or the padding", (unsigned long long)bad);
  return b->n_graphs;
}

/* Per-node mean 0 and std 1 of a standardised base world. */
static void check_standardized(const twincache_batch *b) {
  const twincache_batch_layout *L = &b->layout;
  const uint32_t N = L->nodes, S = L->samples;
  for (uint32_t g = 0; g < b->n_graphs; g++)
    for (uint32_t j = 0; j < N && b->node_mask[g * N + j]; j++) {
      double sum = 0, sq = 0;
      for (uint32_t s = 0; s < S; s++) sum += b->base[((size_t)g * S + s) * N + j];
      for (uint32_t s = 0; s < S; s++) {
        double d = b->base[((size_t)g * S + s) * N + j] - sum / S;
        sq += d * d;
      }
      TC_CHECK(fabs(sum / S) < 1e-4 && fabs(sqrt(sq / S) - 1.0) < 1e-3,
               "graph %llu node %u: standardised mean %g std %g", (unsigned long long)b->graph_id[g], j,
               sum / S, sqrt(sq / S));
    }
}

/* Rebuilds twin (g, k) row s of a compact batch, as the header describes. */
static float compact_twin(const twincache_compact_batch *c, uint32_t g, uint32_t k, uint32_t s,
                          uint32_t j) {
  const twincache_compact_layout *L = &c->layout;
  const uint32_t N = L->nodes, K = L->inter, S = L->samples, W = L->mask_words;
  size_t gk = (size_t)g * K + k;
  const uint64_t *mask = c->col_mask + gk * W;
  if ((mask[j >> 6] >> (j & 63)) & 1) {
    uint32_t before = 0;
    for (uint32_t q = 0; q < j; q++) before += (uint32_t)((mask[q >> 6] >> (q & 63)) & 1);
    return c->cols[((size_t)c->col_first[gk] + before) * S + s];
  }
  if (j == c->target[gk] && c->kind[gk] == TWINCACHE_DO) return c->value[gk];
  return c->base[((size_t)g * S + s) * N + j];
}

/* One cache: the twin property (dense), standardisation, compact == dense. */
static void test_cache(const char *cache) {
  twincache_cache *cc = NULL;
  TC_REQUIRE(twincache_cache_open(cache, &cc) == TWINCACHE_OK, "%s", cache);
  int standardized = strstr(twincache_cache_config(cc), "\"standardize\":true") != NULL;
  int multi = strstr(twincache_cache_config(cc), "\"targets_per_world\"") != NULL;
  twincache_cache_close(cc);
  twincache_loader_options o;
  fresh_options(&o, 24, 1);
  o.epochs = 1;
  tl_stream dense = {0};
  twincache_loader *l = NULL;
  TC_REQUIRE(twincache_loader_open(cache, &o, NULL, &l) == TWINCACHE_OK, "%s: %s", cache,
             twincache_last_error());
  twincache_batch *b;
  uint64_t graphs = 0;
  while (twincache_loader_next(l, &b) == TWINCACHE_OK) {
    graphs += check_twins(b);
    if (standardized) check_standardized(b);
    tl_stream_push(&dense, b);
    twincache_loader_release(l, b);
  }
  twincache_loader_close(l);
  TC_CHECK(graphs > 0, "%s: no graphs", cache);

  o.layout = TWINCACHE_LAYOUT_COMPACT;
  o.threads = 3;
  TC_REQUIRE(twincache_loader_open(cache, &o, NULL, &l) == TWINCACHE_OK, "%s", twincache_last_error());
  if (multi) { /* multi-target worlds: the compact layout refuses them, fresh as stored */
    TC_CHECK_RC(twincache_loader_next(l, &b), TWINCACHE_EINVAL);
    TC_CHECK(strstr(twincache_last_error(), "dense layout") != NULL, "%s", twincache_last_error());
    twincache_loader_close(l);
    tl_stream_free(&dense);
    printf("%s: %llu graphs, twin property ok; compact refused (multi-target)\n", cache, (unsigned long long)graphs);
    return;
  }
  uint64_t bad = 0;
  for (size_t i = 0; twincache_loader_next(l, &b) == TWINCACHE_OK; i++) {
    const twincache_compact_batch *c = b->compact;
    const twincache_compact_layout *L = &c->layout;
    const twincache_batch_layout *D = &L->dense;
    TC_REQUIRE(i < dense.count);
    const uint8_t *slab = dense.slabs[i];
    const float *dbase = (const float *)(slab + D->base), *dinter = (const float *)(slab + D->inter_off);
    bad += memcmp(c->base, dbase, (size_t)D->graphs * D->samples * D->nodes * sizeof(float)) != 0;
    for (uint32_t g = 0; g < b->n_graphs; g++)
      for (uint32_t k = 0; k < c->n_inter[g]; k++)
        for (uint32_t s = 0; s < D->samples; s++)
          for (uint32_t j = 0; j < c->n_nodes[g]; j++) {
            float x = compact_twin(c, g, k, s, j);
            float y = dinter[(((size_t)g * D->inter + k) * D->samples + s) * D->nodes + j];
            bad += memcmp(&x, &y, sizeof x) != 0;
          }
    twincache_loader_release(l, b);
  }
  twincache_loader_close(l);
  TC_CHECK(bad == 0, "%s: %llu compact values differ from the dense batch", cache, (unsigned long long)bad);
  tl_stream_free(&dense);
}

static void expect_refused(const char *cache, const twincache_loader_options *o, const char *word) {
  twincache_loader *l = (twincache_loader *)1;
  TC_CHECK_RC(twincache_loader_open(cache, o, NULL, &l), TWINCACHE_EINVAL);
  TC_CHECK(l == NULL);
  TC_CHECK(strstr(twincache_last_error(), word) != NULL, "message '%s' does not name %s",
           twincache_last_error(), word);
}

static void test_options(const char *cache) {
  twincache_loader_options o;
  fresh_options(&o, 0, 1);
  expect_refused(cache, &o, "rows");
  o.rows = TWINCACHE_MAX_SAMPLES + 1;
  expect_refused(cache, &o, "rows");
  o.rows = 8;
  o.resample_every = 0;
  expect_refused(cache, &o, "resample_every");
  twincache_loader_options_init(&o);
  o.rows = 8;
  expect_refused(cache, &o, "rows");
  o.rows = 0;
  o.resample_every = 3;
  expect_refused(cache, &o, "resample_every");
  o.resample_every = 1;
  o.samples = 7;
  expect_refused(cache, &o, "samples");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s CACHE...\n", argv[0]);
    return 2;
  }
  test_options(argv[1]);
  test_determinism(argv[1]);
  for (int i = 1; i < argc; i++) test_cache(argv[i]);
  return tc_test_finish("test_loader_fresh");
}
