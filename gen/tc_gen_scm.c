/* tc_gen_scm.c — one graph: igraph structure -> DAG -> SCM parameters and
 * interventions, then its base and twin worlds from scm/'s sampler, written
 * into a twincache_graph ready for the encoder.
 *
 * igraph (Debian 0.10, IGRAPH_THREAD_SAFE 0) keeps its RNG, error handler and
 * finally-stack in globals, so every igraph call runs under g_igraph_lock and
 * igraph's RNG is re-seeded from (seed, i) inside it. The lock covers only the
 * random-graph call and the edge-list copy (~2 us for 5-10 nodes); the DAG,
 * the SCM and the samples use tc_rng streams outside it. */
#include <igraph/igraph.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "tc_common.h"
#include "tc_gen.h"
#include "tc_gen_family.h"
#include "tc_gen_inter.h"
#include "tc_gen_mech.h"
#include "tc_scm.h"

static pthread_mutex_t g_igraph_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t g_igraph_locked_ns; /* guarded by g_igraph_lock */
static int g_igraph_ready;          /* guarded by g_igraph_lock */

uint64_t tc_gen_igraph_locked_ns(void) {
  pthread_mutex_lock(&g_igraph_lock);
  uint64_t v = g_igraph_locked_ns;
  pthread_mutex_unlock(&g_igraph_lock);
  return v;
}

struct tc_gen_worker {
  tc_gen_config cfg;
  twincache_graph *g;
  igraph_vector_int_t edges; /* (2E) edge list from igraph, reused */
  /* Structures of graphs [batch_first, batch_first + batch_n), made under ONE
   * lock acquisition: fewer lock hand-offs between threads (the hand-off,
   * not the ~2 us igraph call, was the cost with 2 threads). */
  uint32_t batch_cap, batch_n;
  uint64_t batch_first, plan_end;
  uint32_t *batch_off;   /* (batch_cap+1) offsets into batch_edges, in uint16 pairs */
  uint8_t *batch_family; /* (batch_cap) family of each graph of the batch */
  uint16_t *batch_edges; /* (batch_cap * nmax*(nmax-1)/2, 2) undirected edges */
  uint32_t nmax, smax, hidden;
  tc_scm_sampler *sampler; /* the worlds: noise, base, twins, standardisation */
  uint32_t *perm;    /* (n) topological order: perm[r] = node of rank r */
  uint32_t *rank;    /* (n) rank of each node */
  uint32_t *pa_start;/* (n+1) CSR of parents, ascending node index */
  uint32_t *pa_idx;  /* (n*n) */
  float *pa_w;       /* (n*n) linear weights, aligned with pa_idx */
  uint8_t *node_mech; /* (n) enum twincache_mechanism of each node */
  float *het_w;       /* (n*n) heteroscedastic v, aligned with pa_idx */
  uint32_t *changed; /* (n) scratch of the target draw */
};

void tc_gen_worker_free(tc_gen_worker *w) {
  if (!w) return;
  pthread_mutex_lock(&g_igraph_lock);
  igraph_vector_int_destroy(&w->edges);
  pthread_mutex_unlock(&g_igraph_lock);
  twincache_graph_free(w->g);
  tc_scm_sampler_free(w->sampler);
  free(w->perm);
  free(w->rank);
  free(w->pa_start);
  free(w->pa_idx);
  free(w->pa_w);
  free(w->node_mech);
  free(w->het_w);
  free(w->changed);
  free(w->batch_off);
  free(w->batch_family);
  free(w->batch_edges);
  free(w);
}

tc_gen_worker *tc_gen_worker_create(const tc_gen_config *c) {
  tc_gen_worker *w = calloc(1, sizeof *w);
  if (!w) return NULL;
  w->cfg = *c;
  w->nmax = c->nodes_max;
  w->smax = c->samples;
  w->hidden = tc_gen_mech_get(c->mechanism)->hidden(c);
  pthread_mutex_lock(&g_igraph_lock);
  if (!g_igraph_ready) {
    /* igraph's default handler aborts the process; report codes instead. */
    igraph_set_error_handler(igraph_error_handler_ignore);
    igraph_set_warning_handler(igraph_warning_handler_ignore);
    g_igraph_ready = 1;
  }
  int ig = igraph_vector_int_init(&w->edges, 0);
  pthread_mutex_unlock(&g_igraph_lock);
  if (ig != IGRAPH_SUCCESS) {
    free(w);
    return NULL;
  }
  size_t nn = (size_t)w->nmax * w->nmax;
  w->g = twincache_graph_alloc(w->nmax, w->smax, tc_gen_max_inter(c), w->hidden);
  w->sampler = tc_scm_sampler_create(w->nmax, w->smax ? w->smax : 1); /* S = 0: SCM only */
  w->perm = malloc(w->nmax * sizeof(uint32_t));
  w->rank = malloc(w->nmax * sizeof(uint32_t));
  w->pa_start = malloc((w->nmax + 1) * sizeof(uint32_t));
  w->pa_idx = malloc(nn * sizeof(uint32_t));
  w->pa_w = malloc(nn * sizeof(float));
  w->node_mech = malloc(w->nmax);
  w->het_w = malloc(nn * sizeof(float));
  w->changed = malloc(w->nmax * sizeof(uint32_t));
  size_t max_edges = (size_t)w->nmax * (w->nmax - 1) / 2;
  w->batch_cap = (uint32_t)(8192 / (max_edges + 1));
  if (w->batch_cap < 1) w->batch_cap = 1;
  if (w->batch_cap > 32) w->batch_cap = 32;
  w->batch_off = malloc((w->batch_cap + 1) * sizeof(uint32_t));
  w->batch_family = malloc(w->batch_cap);
  w->batch_edges = malloc((w->batch_cap * max_edges + 1) * 2 * sizeof(uint16_t));
  if (!w->batch_off || !w->batch_edges || !w->batch_family ||
      !w->g || !w->sampler || !w->perm || !w->rank ||
      !w->pa_start || !w->pa_idx || !w->pa_w || !w->node_mech || !w->het_w || !w->changed) {
    tc_gen_worker_free(w);
    return NULL;
  }
  return w;
}

/* Random undirected graph from igraph into w->edges; n nodes. Under the lock. */
static int structure_locked(tc_gen_worker *w, int family, uint32_t n, uint64_t igraph_seed) {
  const tc_gen_family *f = tc_gen_family_get(family); /* checked by tc_gen_config_check */
  igraph_rng_seed(igraph_rng_default(), (igraph_uint_t)igraph_seed);
  return f ? f->make_locked(&w->cfg, n, &w->edges) : TWINCACHE_EINVAL;
}

/* Node count, igraph seed and family of graph `index`: the first draws of
 * its structure stream (tc_gen_graph draws them again, then the node order).
 * The family is drawn only from a mixture, so a one-family cache's streams
 * are what they were before mixtures existed. */
static void structure_head(const tc_gen_config *c, uint64_t index, tc_rng *rs, uint32_t *n,
                           uint64_t *igraph_seed, int *family) {
  tc_rng_init(rs, c->seed, index * TC_STREAMS_PER_GRAPH + TC_STREAM_STRUCTURE);
  *n = c->nodes_min + tc_rng_below(rs, c->nodes_max - c->nodes_min + 1);
  *igraph_seed = tc_rng_u64(rs);
  *family = c->families[0];
  if (c->n_families > 1) {
    double total = 0.0, acc = 0.0;
    for (uint32_t k = 0; k < c->n_families; k++) total += c->family_weights[k];
    double u = tc_rng_uniform(rs) * total;
    *family = c->families[c->n_families - 1]; /* u may round up to total */
    for (uint32_t k = 0; k + 1 < c->n_families; k++) {
      acc += c->family_weights[k];
      if (u < acc) {
        *family = c->families[k];
        break;
      }
    }
  }
}

/* Makes the structures of graphs [first, first+count) under one lock. */
static int structure_batch(tc_gen_worker *w, uint64_t first, uint32_t count, uint64_t *igraph_ns) {
  int rc = TWINCACHE_OK;
  uint64_t t0 = tc_now_ns();
  pthread_mutex_lock(&g_igraph_lock);
  uint64_t t_in = tc_now_ns();
  uint32_t q = 0;
  for (uint32_t b = 0; b < count && !rc; b++) {
    tc_rng rs;
    uint32_t n;
    uint64_t seed;
    int family;
    structure_head(&w->cfg, first + b, &rs, &n, &seed, &family);
    rc = structure_locked(w, family, n, seed);
    w->batch_family[b] = (uint8_t)family;
    w->batch_off[b] = q;
    igraph_integer_t ne = igraph_vector_int_size(&w->edges) / 2;
    size_t max_edges = (size_t)n * (n - 1) / 2;
    for (igraph_integer_t e = 0; !rc && e < ne; e++) {
      igraph_integer_t a = VECTOR(w->edges)[2 * e], bb = VECTOR(w->edges)[2 * e + 1];
      if (a == bb || a < 0 || bb < 0 || a >= n || bb >= n) continue;
      if (q - w->batch_off[b] >= max_edges) break; /* cannot happen without multi-edges */
      w->batch_edges[2 * q] = (uint16_t)a;
      w->batch_edges[2 * q + 1] = (uint16_t)bb;
      q++;
    }
  }
  w->batch_off[count] = q;
  uint64_t t_out = tc_now_ns();
  g_igraph_locked_ns += t_out - t_in;
  pthread_mutex_unlock(&g_igraph_lock);
  if (igraph_ns) *igraph_ns += t_out - t0;
  w->batch_first = first;
  w->batch_n = rc ? 0 : count;
  return rc;
}

void tc_gen_worker_plan(tc_gen_worker *w, uint64_t first, uint64_t end) {
  w->plan_end = end;
  w->batch_n = 0;
  (void)first;
}

/* ---- graph i as named steps ---------------------------------------------------
 * Each step draws from its own RNG stream in a fixed order, so graph i
 * stays a pure function of (seed, i, config). */

/* The undirected structure of graph `index` from the worker's igraph batch
 * (made under the lock, a batch of graphs at a time); returns its slot. */
static int fetch_structure(tc_gen_worker *w, uint64_t index, uint64_t *igraph_ns, uint32_t *slot) {
  if (index < w->batch_first || index >= w->batch_first + w->batch_n) {
    uint64_t end = w->plan_end > index ? w->plan_end : index + 1;
    uint32_t count = end - index < w->batch_cap ? (uint32_t)(end - index) : w->batch_cap;
    int rc = structure_batch(w, index, count, igraph_ns);
    if (rc) return rc;
  }
  *slot = (uint32_t)(index - w->batch_first);
  return TWINCACHE_OK;
}

/* DAG from the slot's structure (tc_gen_family.h, enum tc_gen_orient): a
 * random node order (structure stream) orients undirected edges (RANDOM) or
 * relabels an ordered family's nodes (GIVEN: edge a -> b, a < b, becomes
 * perm[a] -> perm[b]); a FIXED graph keeps the file's labels and order.
 * Fills the graph's header fields and adj (n,n). */
static void orient_dag(tc_gen_worker *w, tc_rng *rs, uint64_t index, uint32_t n, uint32_t slot) {
  const tc_gen_config *c = &w->cfg;
  twincache_graph *g = w->g;
  int family = w->batch_family[slot];
  int orient = tc_gen_family_get(family)->orient;
  if (orient == TC_ORIENT_FIXED) {
    memcpy(w->perm, c->dag_file->order, n * sizeof *w->perm);
  } else {
    for (uint32_t v = 0; v < n; v++) w->perm[v] = v;
    for (uint32_t v = n; v > 1; v--) { /* Fisher-Yates */
      uint32_t u = tc_rng_below(rs, v);
      uint32_t t = w->perm[v - 1];
      w->perm[v - 1] = w->perm[u];
      w->perm[u] = t;
    }
  }
  for (uint32_t r = 0; r < n; r++) w->rank[w->perm[r]] = r;
  g->index = index;
  g->n_nodes = n;
  g->n_samples = c->samples;
  g->n_hidden = w->hidden;
  g->mechanism = (uint8_t)c->mechanism;
  g->noise = (uint8_t)c->noise;
  g->flags = (uint8_t)((c->standardize || c->iscm ? TWINCACHE_GRAPH_STANDARDIZED : 0u) |
                       (c->hetero > 0.0 ? TWINCACHE_GRAPH_HETERO : 0u) | (c->iscm ? TWINCACHE_GRAPH_ISCM : 0u) |
                       (c->worlds == TC_GEN_WORLDS_INDEPENDENT ? TWINCACHE_GRAPH_INDEPENDENT : 0u) |
                       (c->inter_samples ? TWINCACHE_GRAPH_ROWS : 0u)); /* ROWS: version 5 frames */
  g->family = (uint8_t)family;
  g->ld = n;
  g->ld_adj = n;
  memset(g->adj, 0, (size_t)n * n);
  for (uint32_t e = w->batch_off[slot]; e < w->batch_off[slot + 1]; e++) {
    uint32_t a = w->batch_edges[2 * e], b = w->batch_edges[2 * e + 1];
    if (orient == TC_ORIENT_GIVEN) g->adj[w->perm[a] * n + w->perm[b]] = 1;
    else if (orient == TC_ORIENT_FIXED) g->adj[a * n + b] = 1;
    else if (w->rank[a] < w->rank[b]) g->adj[a * n + b] = 1;
    else g->adj[b * n + a] = 1;
  }
}

/* SCM parameters (weights stream): noise scales (n), the parent lists
 * (pa_start (n+1), pa_idx), then the mechanism's own parameters, drawn by
 * its row of the table (tc_gen_mech.h): linear weights or MLP blocks. */
static void draw_parameters(tc_gen_worker *w, tc_rng *rw, uint32_t n) {
  const tc_gen_config *c = &w->cfg;
  twincache_graph *g = w->g;
  for (uint32_t j = 0; j < n; j++)
    g->noise_scale[j] = (float)tc_rng_range(rw, c->noise_scale_min, c->noise_scale_max);
  uint32_t q = 0;
  for (uint32_t j = 0; j < n; j++) { /* parents of j, ascending */
    w->pa_start[j] = q;
    for (uint32_t i = 0; i < n; i++)
      if (g->adj[i * n + j]) w->pa_idx[q++] = i;
  }
  w->pa_start[n] = q;
  tc_gen_params p = {.g = g, .n = n, .hidden = w->hidden, .pa_start = w->pa_start, .pa_idx = w->pa_idx,
                     .pa_w = w->pa_w, .node_mech = w->node_mech};
  memset(g->weight, 0, (size_t)n * n * sizeof(float));
  for (uint32_t e = 0; e < q; e++) w->pa_w[e] = 0.0f;
  if (w->hidden) memset(g->mlp, 0, (size_t)n * (w->hidden * n + 2 * w->hidden) * sizeof(float));
  double total = 0.0;
  for (uint32_t k = 0; c->mechanism == TWINCACHE_MECH_MIXED && k < c->n_mechs; k++) total += c->mech_weights[k];
  for (uint32_t j = 0; j < n; j++) {
    int m = c->mechanism;
    if (m == TWINCACHE_MECH_MIXED) { /* node j's component: one uniform of the weights stream */
      double u = tc_rng_uniform(rw) * total, acc = 0.0;
      m = c->mechs[c->n_mechs - 1];
      for (uint32_t k = 0; k < c->n_mechs; k++) {
        acc += c->mech_weights[k];
        if (u < acc) {
          m = c->mechs[k];
          break;
        }
      }
    }
    w->node_mech[j] = (uint8_t)m;
    tc_gen_mech_get(m)->draw_node(c, &p, j, rw); /* checked by tc_gen_config_check */
  }
  if (g->node_mech) memcpy(g->node_mech, w->node_mech, n);
  if (c->hetero > 0.0) { /* heteroscedastic noise, after every mechanism draw (FORMAT.md 3.6) */
    memset(g->hetero_w, 0, (size_t)n * n * sizeof(float));
    for (uint32_t j = 0; j < n; j++) {
      uint32_t npa = w->pa_start[j + 1] - w->pa_start[j];
      double sv = c->hetero / sqrt(npa ? (double)npa : 1.0);
      for (uint32_t e = w->pa_start[j]; e < w->pa_start[j + 1]; e++) {
        w->het_w[e] = (float)(sv * tc_rng_normal(rw));
        g->hetero_w[(size_t)w->pa_idx[e] * n + j] = w->het_w[e];
      }
      g->hetero_c[j] = (float)tc_rng_range(rw, -0.5, 0.5);
    }
  }
}

/* Interventions (inter stream): K targets (every node, K distinct random
 * nodes, or none: --targets none), their kind and value. */
static void draw_interventions(tc_gen_worker *w, tc_rng *ri, uint32_t n) {
  const tc_gen_config *c = &w->cfg;
  twincache_graph *g = w->g;
  uint32_t K = c->targets == TC_GEN_TARGETS_NONE ? 0 : (c->targets == 0 || c->targets > n) ? n : c->targets;
  g->n_inter = K;
  if (c->targets == 0) {
    for (uint32_t k = 0; k < K; k++) g->target[k] = (uint16_t)k;
  } else { /* K distinct nodes: partial Fisher-Yates over w->changed as scratch */
    for (uint32_t v = 0; v < n; v++) w->changed[v] = v;
    for (uint32_t k = 0; k < K; k++) {
      uint32_t u = k + tc_rng_below(ri, n - k);
      uint32_t t = w->changed[k];
      w->changed[k] = w->changed[u];
      w->changed[u] = t;
      g->target[k] = (uint16_t)w->changed[k];
    }
  }
  const tc_gen_inter *kind = tc_gen_inter_get(c->intervention); /* checked by tc_gen_config_check */
  const tc_gen_params p = {.g = g, .n = n, .hidden = w->hidden, .pa_start = w->pa_start,
                           .pa_idx = w->pa_idx, .pa_w = w->pa_w, .node_mech = w->node_mech};
  const uint32_t soft_p = twincache_soft_stride(n, w->hidden, c->mechanism);
  const uint32_t M = TWINCACHE_MAX_TARGETS - 1;
  for (uint32_t k = 0; k < K; k++) {
    g->kind[k] = (uint8_t)kind->code;
    g->value[k] = kind->draw(c, &p, g->target[k], g->soft + (size_t)k * soft_p, ri);
    g->n_targets[k] = 1;
    if (c->targets_per_world_max < 2) continue; /* 1:1 draws nothing more: caches as before */
    /* multi-target: LO..HI nodes in all (at most n), the others distinct and
     * uniform among the nodes but target[k] (partial Fisher-Yates) */
    uint32_t lo = c->targets_per_world_min, hi = c->targets_per_world_max;
    uint32_t cnt = lo + (uint32_t)tc_rng_below(ri, hi - lo + 1);
    if (cnt > n) cnt = n;
    uint32_t m = 0;
    for (uint32_t v = 0; v < n; v++)
      if (v != g->target[k]) w->changed[m++] = v;
    for (uint32_t i = 0; i + 1 < cnt; i++) {
      uint32_t u = i + (uint32_t)tc_rng_below(ri, m - i);
      uint32_t tmp = w->changed[i];
      w->changed[i] = w->changed[u];
      w->changed[u] = tmp;
      g->more_target[(size_t)k * M + i] = (uint16_t)w->changed[i];
      g->more_value[(size_t)k * M + i] = kind->draw(c, &p, w->changed[i], NULL, ri);
    }
    g->n_targets[k] = (uint8_t)cnt;
  }
}

int tc_gen_graph(tc_gen_worker *w, uint64_t index, const twincache_graph **out,
                 uint64_t *igraph_ns, uint64_t *sample_ns) {
  const tc_gen_config *c = &w->cfg;
  tc_rng rs, rw, rn, ri;
  uint64_t base_stream = index * TC_STREAMS_PER_GRAPH; /* < 2^64: graphs <= TC_GEN_MAX_GRAPHS */
  tc_rng_init(&rs, c->seed, base_stream + TC_STREAM_STRUCTURE);
  tc_rng_init(&rw, c->seed, base_stream + TC_STREAM_WEIGHTS);
  tc_rng_init(&rn, c->seed, base_stream + TC_STREAM_NOISE);
  tc_rng_init(&ri, c->seed, base_stream + TC_STREAM_INTER);

  uint32_t n, slot;
  uint64_t igraph_seed;
  int family;
  structure_head(c, index, &rs, &n, &igraph_seed, &family);
  (void)family; /* the batch made under the lock recorded it (orient_dag reads it there) */
  int rc = fetch_structure(w, index, igraph_ns, &slot);
  if (rc) return rc;
  orient_dag(w, &rs, index, n, slot);

  uint64_t t1 = tc_now_ns();
  draw_parameters(w, &rw, n);
  draw_interventions(w, &ri, n);
  twincache_graph *g = w->g;
  const tc_scm m = {.n = n, .hidden = w->hidden, .noise = c->noise, .standardize = c->standardize || c->iscm,
                    .iscm = c->iscm, .independent = c->worlds == TC_GEN_WORLDS_INDEPENDENT,
                    .adj = g->adj, .ld_adj = n, .order = w->perm, .pa_start = w->pa_start,
                    .pa_idx = w->pa_idx, .pa_w = w->pa_w, .mlp = g->mlp, .node_mech = w->node_mech,
                    .het_w = c->hetero > 0.0 ? w->het_w : NULL, .het_c = c->hetero > 0.0 ? g->hetero_c : NULL,
                    .noise_scale = g->noise_scale, .n_inter = g->n_inter, .target = g->target,
                    .kind = g->kind, .value = g->value, .soft = g->soft,
                    .soft_ld = twincache_soft_stride(n, w->hidden, c->mechanism),
                    .n_targets = g->n_targets, .more_target = g->more_target, .more_value = g->more_value};
  const uint32_t S = c->samples;
  const size_t sn = (size_t)S * n;
  if (S == 0) { /* an SCM-only frame: no worlds; the normalisation is the identity */
    for (uint32_t j = 0; (c->standardize || c->iscm) && j < n; j++) {
      g->norm_mean[j] = 0.0f;
      g->norm_std[j] = 1.0f;
    }
    if (sample_ns) *sample_ns += tc_now_ns() - t1;
    *out = g;
    return TWINCACHE_OK;
  }
  tc_scm_noise_stream(w->sampler, &m, S, &rn); /* (S, n): every twin world's; independent ones key their own from it */
  tc_scm_sample_base(w->sampler, &m, S, g->base, n, g->norm_mean, g->norm_std);
  for (uint32_t k = 0; k < g->n_inter; k++) { /* world k (S, n), twin or independent */
    tc_scm_twin(w->sampler, &m, k, S, NULL);
    tc_scm_twin_rows(w->sampler, &m, k, S, g->base, n, g->inter + k * sn, n);
  }
  /* rows per world (FORMAT.md 3.10): every world drawn with S rows, world k
   * keeps its first min(S, M/K + [k < M%K]); the encoder stores only those */
  for (uint32_t k = 0; k <= g->n_inter; k++) g->world_rows[k] = 0; /* 0: S */
  if (c->inter_samples && g->n_inter) {
    const uint32_t M = c->inter_samples, K = g->n_inter;
    for (uint32_t k = 0; k < K; k++) {
      uint32_t r = M / K + (k < M % K);
      g->world_rows[k + 1] = r < S ? r : S;
    }
  }
  if (sample_ns) *sample_ns += tc_now_ns() - t1;
  *out = w->g;
  return TWINCACHE_OK;
}
