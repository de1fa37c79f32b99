/* test_scm_soft.c — a soft intervention changes its world (FORMAT.md 3.6):
 * no soft world equals its base world, stored or fresh, on every mechanism
 * (a root of a linear one included: its noise scale and mean change, where
 * it has no weight to redraw), with --standardize and --iscm too; and the
 * rule's own numbers: on a linear root, the twin column is exactly
 * value + factor * (the base world's noise term), factor = the block's
 * entry t, from the stored parameters (not through scm/).
 *
 * usage: test_scm_soft TWINCACHE_GEN SCRATCH_DIR */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_test.h"
#include "twincache_cache.h"
#include "twincache_format.h"
#include "twincache_loader.h"

enum { GRAPHS = 64, S = 32 };

static twincache_loader *open_cache(const char *path, int fresh) {
  twincache_loader_options o;
  twincache_loader_options_init(&o);
  o.batch_size = 16;
  o.epochs = 1;
  o.threads = 1;
  if (fresh) {
    o.samples = TWINCACHE_SAMPLES_FRESH;
    o.rows = S;
  }
  twincache_loader *l = NULL;
  TC_REQUIRE(twincache_loader_open(path, &o, NULL, &l) == TWINCACHE_OK, "%s: %s", path, twincache_last_error());
  return l;
}

/* Every real world of every graph differs from its base world in some value.
 * Returns the number of soft worlds seen; counts roots of linear targets. */
static uint64_t check_worlds(const char *name, const char *path, int fresh, uint64_t *equal) {
  twincache_loader *l = open_cache(path, fresh);
  uint64_t worlds = 0;
  twincache_batch *b;
  while (twincache_loader_next(l, &b) == TWINCACHE_OK) {
    const twincache_batch_layout *L = &b->layout;
    const uint32_t N = L->nodes, K = L->inter, Sb = L->samples;
    for (uint32_t g = 0; g < b->n_graphs; g++)
      for (uint32_t k = 0; k < K; k++) {
        if (!b->int_mask[(size_t)g * K + k]) continue;
        const float *base = b->base + (size_t)g * Sb * N, *tw = b->inter + ((size_t)g * K + k) * Sb * N;
        worlds++;
        if (memcmp(base, tw, (size_t)Sb * N * sizeof(float)) == 0) {
          if (*equal < 3)
            fprintf(stderr, "%s (%s): graph %llu world %u equals its base world\n", name,
                    fresh ? "fresh" : "stored", (unsigned long long)b->graph_id[g], k);
          (*equal)++;
        }
      }
    twincache_loader_release(l, b);
  }
  twincache_loader_close(l);
  return worlds;
}

static float f32_at(const uint8_t *p, size_t i) {
  float f;
  memcpy(&f, p + 4 * i, sizeof f);
  return f;
}

/* The linear-root rule from the stored numbers: one unstandardised linear
 * cache; every soft world whose target is a root, its parameters read from
 * the frame (section 7a's entry t, section 6's value). */
static void check_root_rule(const char *path) {
  twincache_loader *l = open_cache(path, 0);
  twincache_cache *c = NULL;
  TC_REQUIRE(twincache_cache_open(path, &c) == TWINCACHE_OK, "%s: %s", path, twincache_last_error());
  twincache_dctx *d = twincache_dctx_create();
  TC_REQUIRE(d);
  uint64_t roots = 0, bad = 0;
  twincache_batch *b;
  while (twincache_loader_next(l, &b) == TWINCACHE_OK) {
    const twincache_batch_layout *L = &b->layout;
    const uint32_t N = L->nodes, K = L->inter, Sb = L->samples;
    for (uint32_t g = 0; g < b->n_graphs; g++) {
      void *frame = NULL;
      size_t size = 0;
      twincache_frame_view v;
      TC_REQUIRE(twincache_cache_read_frame(c, b->graph_id[g], &frame, &size) == TWINCACHE_OK);
      TC_REQUIRE(twincache_frame_decode_view(d, frame, size, &v) == TWINCACHE_OK);
      const uint32_t n = v.n_nodes, P = twincache_soft_stride(n, v.n_hidden, v.mechanism);
      uint32_t soft_k = 0; /* section 7a holds the soft worlds' blocks in world order */
      for (uint32_t k = 0; k < v.n_inter; k++) {
        if (v.kind[k] != TWINCACHE_INTER_SOFT) continue;
        const uint8_t *blk = v.soft + 4 * (size_t)P * soft_k++;
        uint32_t t = v.target[k], parents = 0;
        for (uint32_t i = 0; i < n; i++) parents += (v.adj[(size_t)i * v.set_bytes + t / 8] >> (t % 8)) & 1u;
        if (parents) continue;
        const float a = f32_at(blk, t), mean = v.value[k];
        TC_CHECK(a >= 0.5f && a < 2.0f, "%s: graph %llu world %u: factor %g outside [0.5, 2)", path,
                 (unsigned long long)b->graph_id[g], k, a);
        TC_CHECK(mean != 0.0f, "%s: graph %llu world %u: mean 0", path, (unsigned long long)b->graph_id[g], k);
        for (uint32_t s = 0; s < Sb; s++) {
          /* base x_t = 0 + E (a root: E its noise term); the twin (0 + a E) + mean */
          const float e = b->base[((size_t)g * Sb + s) * N + t];
          const float want = (0.0f + a * e) + mean;
          bad += memcmp(&want, &b->inter[(((size_t)g * K + k) * Sb + s) * N + t], 4) != 0;
        }
        roots++;
      }
      free(frame);
    }
    twincache_loader_release(l, b);
  }
  twincache_dctx_free(d);
  twincache_cache_close(c);
  twincache_loader_close(l);
  TC_CHECK(roots > 0, "%s: no soft world on a root", path);
  TC_CHECK(bad == 0, "%s: %llu root values differ from value + factor * e", path, (unsigned long long)bad);
  printf("linear roots: %llu soft worlds follow value + factor * e bit for bit\n", (unsigned long long)roots);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s TWINCACHE_GEN SCRATCH_DIR\n", argv[0]);
    return 2;
  }
  const char *gen = argv[1], *dir = argv[2];
  static const struct {
    const char *name, *flags;
  } cases[] = {
      {"linear", "--mechanism linear"},
      {"linear-standardize", "--mechanism linear --standardize"},
      {"linear-iscm", "--mechanism linear --standardize --iscm"},
      {"linear-hetero", "--mechanism linear --hetero 0.5 --noise laplace"},
      {"mlp", "--mechanism mlp"},
      {"mlp-iscm", "--mechanism mlp --standardize --iscm"},
      {"rff", "--mechanism rff --standardize"},
      {"sigmoid", "--mechanism sigmoid"},
      {"poly", "--mechanism poly --noise uniform"},
      {"mixture", "--mechanism linear:0.5,mlp:0.3,rff:0.2"},
  };
  char cmd[1024], path[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", dir, dir);
  TC_REQUIRE(system(cmd) == 0);
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    snprintf(path, sizeof path, "%s/%s", dir, cases[c].name);
    snprintf(cmd, sizeof cmd, "'%s' --out '%s' --graphs %d --samples %d --seed %zu --threads 2 --quiet "
             "--intervention soft --nodes 1:8 %s", gen, path, GRAPHS, S, 40 + c, cases[c].flags);
    TC_REQUIRE(system(cmd) == 0, "%s failed", cmd);
    uint64_t equal = 0, worlds = check_worlds(cases[c].name, path, 0, &equal);
    worlds += check_worlds(cases[c].name, path, 1, &equal);
    TC_CHECK(worlds > 0);
    TC_CHECK(equal == 0, "%s: %llu of %llu soft worlds equal their base world", cases[c].name,
             (unsigned long long)equal, (unsigned long long)worlds);
    printf("%-20s %llu soft worlds (stored and fresh), %llu equal to their base\n", cases[c].name,
           (unsigned long long)worlds, (unsigned long long)equal);
  }
  snprintf(path, sizeof path, "%s/linear", dir);
  check_root_rule(path);
  return tc_test_finish("test_scm_soft");
}
