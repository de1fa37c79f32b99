/* The encoder refuses what it cannot write losslessly: twin violations,
 * cycles, self-loops, bad targets/kinds/dimensions and missing arrays. */
#include "tf_common.h"

static twincache_cctx *cc;
static uint8_t *buf;
static size_t cap;

static int encode(const twincache_graph *g) {
  size_t written;
  return twincache_frame_encode(cc, g, buf, cap, &written);
}

/* g is refused with EINVAL and a message that names the graph and says why */
static void refused(const twincache_graph *g, const char *why) {
  TC_CHECK_RC(encode(g), TWINCACHE_EINVAL);
  const char *m = twincache_last_error();
  TC_CHECK(strstr(m, "frame encode: graph 3: ") == m && strstr(m, why) != NULL, "want '%s' in: %s", why, m);
}

int main(void) {
  cc = twincache_cctx_create(3);
  TC_REQUIRE(cc);
  tf_spec sp = {.seed = 11, .index = 3, .n = 6, .s = 8, .k = 6, .kinds = 2, .edge_p = 0.5};
  twincache_graph *g = twincache_graph_alloc(6, 8, 6, 0);
  TC_REQUIRE(g);
  cap = twincache_frame_bound(6, 8, 6, 0);
  buf = malloc(cap);
  TC_REQUIRE(buf);
  tf_sample(g, &sp);
  TC_CHECK_RC(encode(g), 0);

  /* a column outside target ∪ descendants differs from base by one bit */
  uint8_t desc[6];
  for (uint32_t k = 0; k < 6; k++) {
    twincache_graph_descendants(g->adj, 6, g->ld_adj, g->target[k], desc);
    for (uint32_t j = 0; j < 6; j++) {
      if (desc[j]) continue;
      float *x = &g->inter[((size_t)k * 8 + 5) * g->ld + j], old = *x;
      uint32_t bits;
      memcpy(&bits, x, 4);
      bits ^= 1;
      memcpy(x, &bits, 4);
      TC_CHECK_RC(encode(g), TWINCACHE_EINVAL);
      *x = old;
    }
  }
  TC_CHECK_RC(encode(g), 0);
  /* a do target column that is not its value; -0.0 vs 0.0 counts too */
  for (uint32_t k = 0; k < 6; k++) {
    if (g->kind[k] != TWINCACHE_DO) continue;
    float *x = &g->inter[((size_t)k * 8 + 2) * g->ld + g->target[k]], old = *x;
    *x = old + 1.0f;
    TC_CHECK_RC(encode(g), TWINCACHE_EINVAL);
    *x = old;
  }
  float v0 = g->value[0], x0[8];
  TC_REQUIRE(g->kind[0] == TWINCACHE_DO);
  for (int s = 0; s < 8; s++) {
    x0[s] = g->inter[(size_t)s * g->ld + g->target[0]];
    g->inter[(size_t)s * g->ld + g->target[0]] = 0.0f;
  }
  g->value[0] = -0.0f;
  TC_CHECK_RC(encode(g), TWINCACHE_EINVAL);
  g->value[0] = 0.0f;
  TC_CHECK_RC(encode(g), 0);
  g->value[0] = v0;
  for (int s = 0; s < 8; s++) g->inter[(size_t)s * g->ld + g->target[0]] = x0[s];
  TC_CHECK_RC(encode(g), 0);

  /* a cycle, then a self-loop */
  uint8_t saved[36];
  memcpy(saved, g->adj, 36);
  for (uint32_t i = 0; i < 6; i++)
    for (uint32_t j = 0; j < 6; j++)
      if (g->adj[i * 6 + j]) {
        g->adj[j * 6 + i] = 1;
        i = j = 6;
      }
  TC_CHECK(!twincache_graph_is_dag(g->adj, 6, 6));
  TC_CHECK_RC(encode(g), TWINCACHE_EINVAL);
  memcpy(g->adj, saved, 36);
  g->adj[2 * 6 + 2] = 1;
  TC_CHECK_RC(encode(g), TWINCACHE_EINVAL);
  memcpy(g->adj, saved, 36);
  TC_CHECK_RC(encode(g), 0);

  /* targets, kinds, dimensions, mechanism, flags, ld, missing arrays */
  uint16_t t0 = g->target[0];
  g->target[0] = 6;
  TC_CHECK_RC(encode(g), TWINCACHE_EINVAL);
  g->target[0] = t0;
  g->kind[1] = TWINCACHE_INTER_KIND_COUNT;
  TC_CHECK_RC(encode(g), TWINCACHE_EINVAL);
  g->kind[1] = 1;
  TC_CHECK_RC(encode(g), 0);
  g->n_nodes = 0;
  refused(g, "0 nodes, 1..");
  g->n_nodes = 6;
  g->n_samples = 0; /* an SCM-only frame: valid, no worlds */
  TC_CHECK_RC(encode(g), 0);
  g->n_samples = TWINCACHE_MAX_SAMPLES + 1;
  refused(g, "samples, at most");
  g->n_samples = 8;
  g->n_inter = TWINCACHE_MAX_INTER + 1;
  refused(g, "interventions, at most");
  g->n_inter = 6;
  g->ld = 5;
  refused(g, "ld 5 / ld_adj 6 below 6 nodes");
  g->ld = 6;
  g->n_hidden = 3; /* linear with hidden units */
  refused(g, "a linear graph with 3 hidden units");
  g->n_hidden = 0;
  g->mechanism = TWINCACHE_MECH_MLP; /* MLP without hidden units or params */
  refused(g, "with 0 hidden units");
  g->mechanism = 7;
  refused(g, "mechanism 7 unknown");
  g->mechanism = TWINCACHE_MECH_MIXED; /* mixed without hidden units */
  TC_CHECK_RC(encode(g), TWINCACHE_EINVAL);
  g->mechanism = TWINCACHE_MECH_LINEAR;
  g->noise = TWINCACHE_NOISE_COUNT;
  refused(g, "unknown");
  g->noise = TWINCACHE_NOISE_LAPLACE;
  g->flags = 0x80; /* NO_TARGETS without OBSERVED (every bit of the byte has a meaning from version 5) */
  refused(g, "flags 0x80: an observed graph is");
  g->flags = TWINCACHE_GRAPH_STANDARDIZED;
  float *mean = g->norm_mean;
  g->norm_mean = NULL;
  refused(g, "STANDARDIZED without norm_mean or norm_std");
  g->norm_mean = mean;
  g->flags = 0;
  float *inter = g->inter;
  g->inter = NULL;
  refused(g, "6 interventions without inter");
  g->n_inter = 0; /* no interventions: inter not needed */
  TC_CHECK_RC(encode(g), 0);
  g->inter = inter;
  g->n_inter = 6;
  TC_CHECK_RC(encode(g), 0);
  size_t written;
  TC_CHECK_RC(twincache_frame_encode(NULL, g, buf, cap, &written), TWINCACHE_EINVAL);
  TC_CHECK_RC(twincache_frame_encode(cc, NULL, buf, cap, &written), TWINCACHE_EINVAL);
  TC_CHECK_RC(twincache_frame_encode(cc, g, NULL, cap, &written), TWINCACHE_EINVAL);

  free(buf);
  twincache_graph_free(g);
  twincache_cctx_free(cc);
  return tc_test_finish("test_format_refuse");
}
