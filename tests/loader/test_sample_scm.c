/* test_sample_scm.c — the GPU sampler's host emulation (kernels/,
 * twincache_sample_cpu: the kernel's per-thread code compiled as C) against
 * scm/'s fresh sampler, bit for bit: for every batch of a fresh loader (dense,
 * two epochs), the same graphs are packed from their frames into an SCM
 * batch (plain arrays, as the kernel takes them) and sampled by the
 * emulation; base and twin worlds, padding included, must be the loader's
 * bytes. Runs in CI (no GPU); test_sample_cuda holds the device to the
 * emulation.
 *
 * Caches after --refused hold soft interventions, whose parameters an SCM
 * batch has no room for: there the emulation must refuse every batch with
 * a soft world (TWINCACHE_KERNELS_EINVAL, nothing written), and the
 * kernel's per-thread code, run anyway, must fill such a world with NaN.
 *
 * usage: test_sample_scm CACHE... [--refused CACHE...]  (every mechanism,
 * noise and intervention kind: the fresh-test caches) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_scm.h"
#include "tl_common.h"
#include "tc_sample_body.h"
#include "twincache_kernels.h"

static int g_refused; /* the caches now named hold soft interventions */

typedef struct packed { /* an SCM batch's arrays, G x (N, K, H) */
  uint32_t *n_nodes, *n_inter, *order;
  uint8_t *flags, *noise, *adj, *kind, *desc, *mech;
  uint64_t *key;
  float *weight, *mlp, *noise_scale, *value, *het_w, *het_c;
  uint16_t *target;
} packed;

static void pack_graph(twincache_scm_batch *b, packed *p, uint32_t g, const tc_scm *m, uint64_t key) {
  const uint32_t N = b->nodes, K = b->inter, H = b->hidden, n = m->n;
  p->n_nodes[g] = n;
  p->n_inter[g] = m->n_inter;
  p->flags[g] = (uint8_t)((m->standardize ? 1 : 0) | (m->iscm ? 2 : 0));
  p->noise[g] = (uint8_t)m->noise;
  p->key[g] = key;
  memset(p->adj + (size_t)g * N * N, 0, (size_t)N * N);
  memset(p->weight + (size_t)g * N * N, 0, (size_t)N * N * sizeof(float));
  for (uint32_t r = 0; r < n; r++) p->order[(size_t)g * N + r] = m->order[r];
  memset(p->mech + (size_t)g * N, 0, N);
  memset(p->het_w + (size_t)g * N * N, 0, (size_t)N * N * sizeof(float));
  memset(p->het_c + (size_t)g * N, 0, (size_t)N * sizeof(float));
  for (uint32_t j = 0; m->het_c && j < n; j++) {
    p->het_c[(size_t)g * N + j] = m->het_c[j];
    for (uint32_t q = m->pa_start[j]; q < m->pa_start[j + 1]; q++)
      p->het_w[(size_t)g * N * N + (size_t)m->pa_idx[q] * N + j] = m->het_w[q];
  }
  for (uint32_t j = 0; j < n; j++)
    p->mech[(size_t)g * N + j] = m->node_mech ? m->node_mech[j] : (uint8_t)(H ? TWINCACHE_MECH_MLP : 0);
  for (uint32_t j = 0; j < n; j++) {
    p->noise_scale[(size_t)g * N + j] = m->noise_scale[j];
    for (uint32_t q = m->pa_start[j]; q < m->pa_start[j + 1]; q++) {
      uint32_t i = m->pa_idx[q];
      p->adj[(size_t)g * N * N + (size_t)i * N + j] = 1;
      p->weight[(size_t)g * N * N + (size_t)i * N + j] = m->pa_w[q];
    }
  }
  if (H) memcpy(p->mlp + (size_t)g * N * ((size_t)H * N + 2u * H), m->mlp, (size_t)n * (H * n + 2u * H) * sizeof(float));
  memset(p->desc + (size_t)g * K * N, 0, (size_t)K * N);
  for (uint32_t k = 0; k < m->n_inter; k++) {
    p->target[(size_t)g * K + k] = m->target[k];
    p->kind[(size_t)g * K + k] = m->kind[k];
    p->value[(size_t)g * K + k] = m->value[k];
    memcpy(p->desc + ((size_t)g * K + k) * N, m->desc + (size_t)k * n, n);
  }
}

static void test_cache(const char *path, const double *zx, const double *zr) {
  const uint32_t G = 16, S = 24;
  twincache_loader_options o;
  twincache_loader_options_init(&o);
  o.samples = TWINCACHE_SAMPLES_FRESH;
  o.rows = S;
  o.batch_size = G;
  o.epochs = 2;
  o.threads = 2;
  twincache_loader *l = NULL;
  TC_REQUIRE(twincache_loader_open(path, &o, NULL, &l) == TWINCACHE_OK, "%s: %s", path,
             twincache_last_error());
  twincache_cache *c = NULL;
  TC_REQUIRE(twincache_cache_open(path, &c) == TWINCACHE_OK);
  const twincache_dims *d = twincache_cache_dims(c);
  const uint32_t N = d->max_nodes, K = d->max_inter, H = d->hidden;
  uint64_t tag = twincache_cache_tag(c);
  twincache_dctx *dx = twincache_dctx_create();
  tc_scm_store *st = tc_scm_store_create(N, K, H);
  TC_REQUIRE(dx && st);
  packed p;
  p.n_nodes = calloc(G, 4);
  p.n_inter = calloc(G, 4);
  p.order = calloc((size_t)G * N, 4);
  p.flags = calloc(G, 1);
  p.noise = calloc(G, 1);
  p.mech = calloc((size_t)G * N, 1);
  p.het_w = calloc((size_t)G * N * N, 4);
  p.het_c = calloc((size_t)G * N, 4);
  p.adj = calloc((size_t)G * N * N, 1);
  p.kind = calloc((size_t)G * K + 1, 1);
  p.desc = calloc((size_t)G * K * N + 1, 1);
  p.key = calloc(G, 8);
  p.weight = calloc((size_t)G * N * N, 4);
  p.mlp = calloc((size_t)G * N * ((size_t)H * N + 2u * H) + 1, 4);
  p.noise_scale = calloc((size_t)G * N, 4);
  p.value = calloc((size_t)G * K + 1, 4);
  p.target = calloc((size_t)G * K + 1, 2);
  float *noise = calloc((size_t)G * S * N, 4), *mean = calloc((size_t)G * N, 4), *sd = calloc((size_t)G * N, 4);
  float *base = calloc((size_t)G * S * N, 4), *inter = calloc((size_t)G * K * S * N + 1, 4);
  TC_REQUIRE(p.n_nodes && p.n_inter && p.order && p.flags && p.noise && p.mech && p.het_w && p.het_c && p.adj && p.kind && p.desc &&
             p.key && p.weight && p.mlp && p.noise_scale && p.value && p.target && noise && mean && sd &&
             base && inter);
  twincache_scm_batch sb = {.graphs = 0, .nodes = N, .inter = K, .hidden = H, .rows = S,
                            .n_nodes = p.n_nodes, .n_inter = p.n_inter, .flags = p.flags,
                            .noise = p.noise, .key = p.key, .order = p.order, .adj = p.adj,
                            .weight = p.weight, .mlp = H ? p.mlp : NULL, .noise_scale = p.noise_scale,
                            .target = p.target, .kind = p.kind, .value = p.value, .desc = p.desc,
                            .zig_x = zx, .zig_ratio = zr, .mech = p.mech,
                            .het_w = p.het_w, .het_c = p.het_c};
  uint64_t graphs = 0, bad = 0, refused = 0;
  twincache_batch *b;
  while (twincache_loader_next(l, &b) == TWINCACHE_OK) {
    sb.graphs = b->n_graphs;
    for (uint32_t g = 0; g < b->n_graphs; g++) {
      void *frame = NULL;
      size_t size = 0;
      twincache_frame_view v;
      tc_scm m;
      TC_REQUIRE(twincache_cache_read_frame(c, b->graph_id[g], &frame, &size) == TWINCACHE_OK);
      TC_REQUIRE(twincache_frame_decode_view(dx, frame, size, &v) == TWINCACHE_OK);
      TC_REQUIRE(tc_scm_from_view(st, &v, &m) == TWINCACHE_OK);
      pack_graph(&sb, &p, g, &m, tc_scm_fresh_key(tag, b->graph_id[g], b->epoch));
      free(frame);
    }
    int iscm = 0;
    for (uint32_t g = 0; g < b->n_graphs; g++) iscm |= (p.flags[g] & 2u) != 0;
    if (iscm) { /* the kernel refuses an internally standardised SCM, it does not guess */
      TC_CHECK(twincache_sample_cpu(&sb, noise, mean, sd, base, inter) == TWINCACHE_KERNELS_EINVAL,
               "%s: an iSCM batch was not refused", path);
      refused++;
      twincache_loader_release(l, b);
      continue;
    }
    if (g_refused) {
      int soft = 0;
      for (uint32_t g = 0; g < b->n_graphs; g++)
        for (uint32_t k = 0; k < p.n_inter[g]; k++) soft += p.kind[(size_t)g * K + k] == TWINCACHE_INTER_SOFT;
      inter[0] = 1.0f;
      TC_CHECK_RC(twincache_sample_cpu(&sb, noise, mean, sd, base, inter), soft ? TWINCACHE_KERNELS_EINVAL : 0);
      if (soft) {
        TC_CHECK(inter[0] == 1.0f, "%s: a refused batch was written", path);
        /* the per-thread code run anyway: every soft world all NaN */
        for (uint32_t g = 0; g < b->n_graphs; g++)
          for (uint32_t s = 0; s < S; s++) tc_sb_base_row(&sb, g, s, noise, base);
        for (uint32_t g = 0; g < b->n_graphs; g++)
          for (uint32_t j = 0; j < N; j++) tc_sb_stats(&sb, g, j, base, mean, sd);
        for (uint32_t g = 0; g < b->n_graphs; g++)
          for (uint32_t s = 0; s < S; s++) tc_sb_twin_row(&sb, g, s, noise, base, mean, sd, inter);
        for (uint32_t g = 0; g < b->n_graphs; g++)
          for (uint32_t k = 0; k < p.n_inter[g]; k++)
            if (p.kind[(size_t)g * K + k] == TWINCACHE_INTER_SOFT)
              for (size_t q = 0; q < (size_t)S * N; q++)
                bad += !isnan(inter[((size_t)g * K + k) * S * N + q]);
        graphs += b->n_graphs;
        twincache_loader_release(l, b);
        continue;
      }
    } else {
      TC_CHECK_RC(twincache_sample_cpu(&sb, noise, mean, sd, base, inter), 0);
    }
    for (uint32_t g = 0; g < b->n_graphs; g++) {
      bad += memcmp(base + (size_t)g * S * N, b->base + (size_t)g * S * N, (size_t)S * N * 4) != 0;
      bad += memcmp(inter + (size_t)g * K * S * N, b->inter + (size_t)g * K * S * N, (size_t)K * S * N * 4) != 0;
      graphs++;
    }
    twincache_loader_release(l, b);
  }
  TC_CHECK(graphs > 0 || refused > 0);
  TC_CHECK(bad == 0, "%s: %llu worlds of %llu graphs differ between the kernel's emulation and scm/", path,
           (unsigned long long)bad, (unsigned long long)graphs);
  printf("%s: %llu graphs (2 epochs) %s, %llu iSCM batches refused\n", path, (unsigned long long)graphs,
         g_refused ? "refused (soft), NaN from the per-thread code" : "bit-identical", (unsigned long long)refused);
  free(p.n_nodes), free(p.n_inter), free(p.order), free(p.flags), free(p.noise), free(p.mech), free(p.het_w), free(p.het_c), free(p.adj);
  free(p.kind), free(p.desc), free(p.key), free(p.weight), free(p.mlp), free(p.noise_scale);
  free(p.value), free(p.target), free(noise), free(mean), free(sd), free(base), free(inter);
  tc_scm_store_free(st);
  twincache_dctx_free(dx);
  twincache_cache_close(c);
  twincache_loader_close(l);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s CACHE...\n", argv[0]);
    return 2;
  }
  double zx[257], zr[256];
  twincache_sample_tables(zx, zr);
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--refused")) {
      g_refused = 1;
      continue;
    }
    test_cache(argv[i], zx, zr);
  }
  return tc_test_finish("test_sample_scm");
}
