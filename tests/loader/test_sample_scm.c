/* test_sample_scm.c — the loader's SCM batches (layout SCM) through the GPU
 * sampler's host emulation (kernels/, twincache_sample_cpu: the kernel's
 * per-thread code compiled as C) against the loader's fresh dense batches
 * (scm/'s sampler), bit for bit: two loaders over the same stream (same
 * options, two epochs), one handing out SCMs, one worlds; every SCM batch,
 * viewed through twincache_loader_scm_layout as the kernel takes it and
 * sampled by the emulation, must give the dense batch's base and twin
 * worlds, padding included, and the same graph ids. Runs in CI (no GPU);
 * test_sample_cuda holds the device to the emulation. Also:
 *  - an internally standardised SCM (iSCM) is packed, and the emulation
 *    refuses its batch (TWINCACHE_KERNELS_EINVAL, nothing written);
 *  - a world marked soft in a packed batch (the kernel has no room for its
 *    parameters) is refused by the emulation, and the kernel's per-thread
 *    code, run anyway, fills it with NaN;
 *  - caches after --refused hold what the SCM batch cannot carry (soft
 *    worlds, worlds of several targets): the SCM loader's first next()
 *    fails with TWINCACHE_EINVAL and one message naming the graph.
 *
 * usage: test_sample_scm CACHE... [--refused CACHE...] */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tl_common.h"
#include "tc_sample_body.h"
#include "twincache_kernels.h"

enum { G = 16, S = 24 };

static twincache_loader *open_fresh(const char *path, int layout) {
  twincache_loader_options o;
  twincache_loader_options_init(&o);
  o.samples = TWINCACHE_SAMPLES_FRESH;
  o.rows = S;
  o.batch_size = G;
  o.epochs = 2;
  o.threads = 2;
  o.layout = layout;
  twincache_loader *l = NULL;
  TC_REQUIRE(twincache_loader_open(path, &o, NULL, &l) == TWINCACHE_OK, "%s: %s", path, twincache_last_error());
  return l;
}

/* The kernel's input: the SCM slab's arrays through the loader's layout. */
static twincache_scm_batch kernel_view(const twincache_scm_layout *L, const twincache_batch *b,
                                       const double *zx, const double *zr) {
  const uint8_t *s = b->slab;
  twincache_scm_batch k = {
      .graphs = b->n_graphs, .nodes = L->nodes, .inter = L->inter, .hidden = L->hidden, .rows = L->rows,
      .n_nodes = (const uint32_t *)(s + L->n_nodes), .n_inter = (const uint32_t *)(s + L->n_inter),
      .flags = s + L->flags, .noise = s + L->noise, .key = (const uint64_t *)(s + L->key),
      .order = (const uint32_t *)(s + L->order), .adj = s + L->adj, .weight = (const float *)(s + L->weight),
      .mlp = L->hidden ? (const float *)(s + L->mlp) : NULL, .noise_scale = (const float *)(s + L->noise_scale),
      .target = (const uint16_t *)(s + L->target), .kind = s + L->kind, .value = (const float *)(s + L->value),
      .desc = s + L->desc, .zig_x = zx, .zig_ratio = zr, .mech = s + L->mech,
      .het_w = (const float *)(s + L->het_w), .het_c = (const float *)(s + L->het_c)};
  return k;
}

/* A packed world marked soft: refused, and NaN from the per-thread code. */
static void check_soft_refused(const char *path, twincache_scm_batch kb, const twincache_batch *b,
                               const twincache_scm_layout *L, float *noise, float *mean, float *sd, float *base,
                               float *inter) {
  const uint32_t N = L->nodes, K = L->inter;
  uint8_t *kind = malloc((size_t)G * K + 1);
  TC_REQUIRE(kind);
  memcpy(kind, kb.kind, (size_t)G * K);
  uint32_t g = 0;
  while (g < kb.graphs && kb.n_inter[g] == 0) g++;
  if (g == kb.graphs) {
    free(kind);
    return;
  }
  kind[(size_t)g * K] = TWINCACHE_INTER_SOFT;
  kb.kind = kind;
  inter[0] = 1.0f;
  TC_CHECK_RC(twincache_sample_cpu(&kb, noise, mean, sd, base, inter), TWINCACHE_KERNELS_EINVAL);
  TC_CHECK(inter[0] == 1.0f, "%s: a refused batch was written", path);
  for (uint32_t q = 0; q < kb.graphs; q++)
    for (uint32_t s = 0; s < S; s++) tc_sb_base_row(&kb, q, s, noise, base);
  for (uint32_t q = 0; q < kb.graphs; q++)
    for (uint32_t j = 0; j < N; j++) tc_sb_stats(&kb, q, j, base, mean, sd);
  for (uint32_t q = 0; q < kb.graphs; q++)
    for (uint32_t s = 0; s < S; s++) tc_sb_twin_row(&kb, q, s, noise, base, mean, sd, inter);
  uint64_t not_nan = 0;
  for (size_t q = 0; q < (size_t)S * N; q++) not_nan += !isnan(inter[(size_t)g * K * S * N + q]);
  TC_CHECK(not_nan == 0, "%s: %llu values of a soft world are not NaN", path, (unsigned long long)not_nan);
  (void)b;
  free(kind);
}

static void test_cache(const char *path, const double *zx, const double *zr) {
  twincache_loader *ld = open_fresh(path, TWINCACHE_LAYOUT_DENSE), *ls = open_fresh(path, TWINCACHE_LAYOUT_SCM);
  const twincache_scm_layout *L = twincache_loader_scm_layout(ls);
  TC_REQUIRE(L && !twincache_loader_scm_layout(ld));
  const uint32_t N = L->nodes, K = L->inter;
  TC_CHECK(L->graphs == G && L->rows == S && twincache_loader_layout(ls)->bytes == L->bytes);
  float *noise = calloc((size_t)G * S * N, 4), *mean = calloc((size_t)G * N, 4), *sd = calloc((size_t)G * N, 4);
  float *base = calloc((size_t)G * S * N, 4), *inter = calloc((size_t)G * K * S * N + 1, 4);
  TC_REQUIRE(noise && mean && sd && base && inter);
  uint64_t graphs = 0, bad = 0, refused = 0, soft_checked = 0;
  twincache_batch *bd, *bs;
  for (;;) {
    int rd = twincache_loader_next(ld, &bd), rs = twincache_loader_next(ls, &bs);
    TC_REQUIRE(rd == rs, "%s: the dense loader says %d, the SCM loader %d (%s)", path, rd, rs, twincache_last_error());
    if (rd != TWINCACHE_OK) break;
    TC_CHECK(bs->n_graphs == bd->n_graphs && bs->seq == bd->seq && bs->epoch == bd->epoch);
    TC_CHECK(bs->base == NULL && bs->inter == NULL && bs->compact == NULL, "%s: SCM batch has dense views", path);
    TC_CHECK(memcmp(bs->graph_id, bd->graph_id, G * sizeof *bd->graph_id) == 0 &&
             memcmp(bs->valid, bd->valid, G) == 0, "%s: batch %llu: graph ids or valid differ", path,
             (unsigned long long)bd->seq);
    twincache_scm_batch kb = kernel_view(L, bs, zx, zr);
    int iscm = 0;
    for (uint32_t g = 0; g < kb.graphs; g++) iscm |= (kb.flags[g] & 2u) != 0;
    if (iscm) { /* the kernel refuses an internally standardised SCM, it does not guess */
      inter[0] = 1.0f;
      TC_CHECK(twincache_sample_cpu(&kb, noise, mean, sd, base, inter) == TWINCACHE_KERNELS_EINVAL,
               "%s: an iSCM batch was not refused", path);
      TC_CHECK(inter[0] == 1.0f, "%s: a refused batch was written", path);
      refused++;
    } else {
      TC_CHECK_RC(twincache_sample_cpu(&kb, noise, mean, sd, base, inter), 0);
      for (uint32_t g = 0; g < bd->n_graphs; g++) {
        bad += memcmp(base + (size_t)g * S * N, bd->base + (size_t)g * S * N, (size_t)S * N * 4) != 0;
        bad += memcmp(inter + (size_t)g * K * S * N, bd->inter + (size_t)g * K * S * N, (size_t)K * S * N * 4) != 0;
        graphs++;
      }
      if (!soft_checked++) check_soft_refused(path, kb, bs, L, noise, mean, sd, base, inter);
    }
    twincache_loader_release(ld, bd);
    twincache_loader_release(ls, bs);
  }
  TC_CHECK(graphs > 0 || refused > 0);
  TC_CHECK(bad == 0, "%s: %llu worlds of %llu graphs differ between the kernel's emulation and scm/", path,
           (unsigned long long)bad, (unsigned long long)graphs);
  printf("%s: %llu graphs (2 epochs) bit-identical, %llu iSCM batches refused, %zu SCM bytes per batch of %d "
         "(dense %zu)\n", path, (unsigned long long)graphs, (unsigned long long)refused, L->bytes, G,
         twincache_loader_layout(ld)->bytes);
  free(noise), free(mean), free(sd), free(base), free(inter);
  twincache_loader_close(ld);
  twincache_loader_close(ls);
}

/* A cache the SCM batch cannot carry: the first next() refuses, naming the graph. */
static void test_refused(const char *path) {
  twincache_loader *ls = open_fresh(path, TWINCACHE_LAYOUT_SCM);
  twincache_batch *b;
  int rc = twincache_loader_next(ls, &b);
  const char *msg = twincache_last_error();
  TC_CHECK_RC(rc, TWINCACHE_EINVAL);
  TC_CHECK(strstr(msg, "graph ") && strstr(msg, "SCM batch") && strstr(msg, "layout"),
           "%s: the refusal does not name the graph and the way out: %s", path, msg);
  printf("%s: refused: %s\n", path, msg);
  twincache_loader_close(ls);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s CACHE... [--refused CACHE...]\n", argv[0]);
    return 2;
  }
  double zx[257], zr[256];
  twincache_sample_tables(zx, zr);
  int refused = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--refused")) {
      refused = 1;
      continue;
    }
    if (refused)
      test_refused(argv[i]);
    else
      test_cache(argv[i], zx, zr);
  }
  return tc_test_finish("test_sample_scm");
}
