/* graph.c — the decoded graph's allocation and the DAG helpers shared by the
 * codec, the generator, the loader and the tools. */
#include <stdlib.h>
#include <string.h>

#include "tc_format_internal.h"
#include "tc_node_body.h"
#include "twincache_format.h"

twincache_graph *twincache_graph_alloc(uint32_t max_nodes, uint32_t max_samples,
                                       uint32_t max_inter, uint32_t max_hidden) {
  if (max_nodes == 0 || max_inter == 0 || max_nodes > TWINCACHE_MAX_NODES ||
      max_samples > TWINCACHE_MAX_SAMPLES || max_inter > TWINCACHE_MAX_INTER ||
      max_hidden > TWINCACHE_MAX_HIDDEN)
    return NULL;
  twincache_graph *g = calloc(1, sizeof *g);
  if (!g) return NULL;
  size_t n = max_nodes, s = max_samples ? max_samples : 1, k = max_inter, h = max_hidden;
  g->cap_nodes = max_nodes;
  g->cap_samples = max_samples;
  g->cap_inter = max_inter;
  g->cap_hidden = max_hidden;
  g->family = TWINCACHE_FAMILY_UNKNOWN;
  g->ld = max_nodes;
  g->ld_adj = max_nodes;
  g->adj = calloc(n * n, 1);
  g->weight = calloc(n * n, sizeof(float));
  if (h > 0) g->mlp = calloc(n * (h * n + 2 * h), sizeof(float));
  g->noise_scale = calloc(n, sizeof(float));
  g->norm_mean = calloc(n, sizeof(float));
  g->norm_std = calloc(n, sizeof(float));
  g->target = calloc(k, sizeof(uint16_t));
  g->kind = calloc(k, 1);
  g->value = calloc(k, sizeof(float));
  g->base = calloc(s * n, sizeof(float));
  g->inter = calloc(k * s * n, sizeof(float));
  g->n_targets = calloc(k, 1);
  g->more_target = calloc(k * (TWINCACHE_MAX_TARGETS - 1), sizeof(uint16_t));
  g->more_value = calloc(k * (TWINCACHE_MAX_TARGETS - 1), sizeof(float));
  if (g->n_targets) memset(g->n_targets, 1, k);
  g->soft = calloc(k * (h * n + 2 * h > n ? h * n + 2 * h : n), sizeof(float));
  g->node_mech = calloc(n, 1);
  g->hetero_w = calloc(n * n, sizeof(float));
  g->hetero_c = calloc(n, sizeof(float));
  g->world_rows = calloc(k + 1, sizeof(uint32_t));
  if (!g->world_rows || !g->soft || !g->n_targets || !g->more_target || !g->more_value || !g->node_mech || !g->hetero_w || !g->hetero_c || !g->adj || !g->weight || (h > 0 && !g->mlp) || !g->noise_scale || !g->norm_mean ||
      !g->norm_std || !g->target || !g->kind || !g->value || !g->base || !g->inter) {
    twincache_graph_free(g);
    return NULL;
  }
  return g;
}

void twincache_graph_free(twincache_graph *g) {
  if (!g) return;
  free(g->adj);
  free(g->weight);
  free(g->mlp);
  free(g->noise_scale);
  free(g->norm_mean);
  free(g->norm_std);
  free(g->target);
  free(g->kind);
  free(g->value);
  free(g->base);
  free(g->inter);
  free(g->node_mech);
  free(g->hetero_w);
  free(g->hetero_c);
  free(g->world_rows);
  free(g->soft);
  free(g->n_targets);
  free(g->more_target);
  free(g->more_value);
  free(g);
}

uint64_t twincache_graph_raw_bytes(const twincache_graph *g) {
  if (!g) return 0;
  return (uint64_t)g->n_samples * g->n_nodes * (1u + (uint64_t)g->n_inter) * sizeof(float);
}

uint32_t twincache_graph_descendants(const uint8_t *adj, uint32_t n, uint32_t ld_adj,
                                     uint32_t node, uint8_t *desc) {
  if (!adj || !desc || n == 0 || n > TWINCACHE_MAX_NODES || ld_adj < n) return 0;
  memset(desc, 0, n);
  if (node >= n) return 0;
  uint16_t stack[TWINCACHE_MAX_NODES]; /* each node is pushed at most once */
  uint32_t top = 0, marked = 1;
  desc[node] = 1;
  stack[top++] = (uint16_t)node;
  while (top > 0) {
    uint32_t i = stack[--top];
    const uint8_t *row = adj + (size_t)i * ld_adj;
    for (uint32_t j = 0; j < n; j++) {
      if (row[j] && !desc[j]) {
        desc[j] = 1;
        marked++;
        stack[top++] = (uint16_t)j;
      }
    }
  }
  return marked;
}

int twincache_graph_is_dag(const uint8_t *adj, uint32_t n, uint32_t ld_adj) {
  if (!adj || n > TWINCACHE_MAX_NODES || ld_adj < n) return 0;
  uint16_t indeg[TWINCACHE_MAX_NODES], queue[TWINCACHE_MAX_NODES];
  uint32_t head = 0, tail = 0;
  for (uint32_t j = 0; j < n; j++) indeg[j] = 0;
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t j = 0; j < n; j++)
      if (adj[(size_t)i * ld_adj + j]) indeg[j]++;
  for (uint32_t j = 0; j < n; j++)
    if (indeg[j] == 0) queue[tail++] = (uint16_t)j;
  while (head < tail) {
    uint32_t i = queue[head++];
    for (uint32_t j = 0; j < n; j++)
      if (adj[(size_t)i * ld_adj + j] && --indeg[j] == 0) queue[tail++] = (uint16_t)j;
  }
  return tail == n; /* a self-loop keeps its node's in-degree above 0 */
}

/* tc_dag_close for n <= 64: one word per set (the common, per-frame case).
 * Warshall's closure on bitsets: after step k, r[i] holds every node
 * reachable from i through intermediate nodes <= k, so at the end r[i] is
 * i's strict descendants, and a cycle (a self-loop included) shows as i in
 * r[i]. Step k ORs r[k] into every r[i] holding k: no branch on the data,
 * four words per vector (GCC/Clang vector extension, SSE2 pairs on baseline
 * x86-64). n*n/4 vector steps, skipping sinks; Kahn's order plus a reverse
 * pass (the n > 64 path below) walks set bits in loops that mispredict:
 * 2.3 -> 1.2 us per graph at N=50 (ER p=0.1), 0.32 -> 0.10 us at N=10
 * (p=0.3), one core of the CI-class VM. */
typedef uint64_t tc_v4u64 __attribute__((vector_size(32), aligned(8)));
static int dag_close_small(tc_dag *w, uint32_t n) {
  tc_v4u64 r[16]; /* (64) reach sets, 4 per vector */
  uint64_t reach[64], bad = 0;
  uint32_t nv = (n + 3) / 4;
  for (uint32_t i = 0; i < 4 * nv; i++) reach[i] = i < n ? w->child[i][0] : 0;
  memcpy(r, reach, sizeof(uint64_t) * 4 * nv);
  for (uint32_t k = 0; k < n; k++) {
    uint64_t rk;
    memcpy(&rk, (const uint64_t *)(const void *)r + k, sizeof rk);
    if (!rk) continue; /* a sink adds nothing */
    const tc_v4u64 zero = {0, 0, 0, 0};
    for (uint32_t v = 0; v < nv; v++) r[v] |= (zero - ((r[v] >> k) & 1)) & rk;
  }
  memcpy(reach, r, sizeof(uint64_t) * 4 * nv);
  for (uint32_t i = 0; i < n; i++) {
    bad |= (reach[i] >> i) & 1;
    w->desc[i][0] = reach[i] | (uint64_t)1 << i;
  }
  return bad ? -1 : 0;
}

/* Kahn's order on bitsets, then descendants in reverse topological order.
 * Walks set bits only: this runs once per decoded frame. */
int tc_dag_close(tc_dag *w, uint32_t n) {
  if (n <= 64) return dag_close_small(w, n);
  uint32_t words = (n + 63) / 64, head = 0, tail = 0;
  for (uint32_t j = 0; j < n; j++) w->indeg[j] = 0;
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t q = 0; q < words; q++)
      for (uint64_t m = w->child[i][q]; m; m &= m - 1) w->indeg[q * 64 + (uint32_t)__builtin_ctzll(m)]++;
  for (uint32_t j = 0; j < n; j++)
    if (w->indeg[j] == 0) w->order[tail++] = (uint16_t)j;
  while (head < tail) {
    uint32_t i = w->order[head++];
    for (uint32_t q = 0; q < words; q++)
      for (uint64_t m = w->child[i][q]; m; m &= m - 1) {
        uint32_t j = q * 64 + (uint32_t)__builtin_ctzll(m);
        if (--w->indeg[j] == 0) w->order[tail++] = (uint16_t)j;
      }
  }
  if (tail != n) return -1; /* a cycle (a self-loop included) */
  for (uint32_t t = n; t-- > 0;) {
    uint32_t i = w->order[t];
    for (uint32_t q = 0; q < words; q++) w->desc[i][q] = 0;
    w->desc[i][i >> 6] |= (uint64_t)1 << (i & 63);
    for (uint32_t q = 0; q < words; q++)
      for (uint64_t m = w->child[i][q]; m; m &= m - 1) {
        uint32_t j = q * 64 + (uint32_t)__builtin_ctzll(m);
        for (uint32_t r = 0; r < words; r++) w->desc[i][r] |= w->desc[j][r];
      }
  }
  return 0;
}

int twincache_inter_kind_fixes_target(int kind) {
  return kind >= 0 && kind < TWINCACHE_INTER_KIND_COUNT && tc_node_kind_fixes(kind);
}

uint32_t twincache_graph_soft_stride(const twincache_graph *g) {
  return g ? twincache_soft_stride(g->n_nodes, g->n_hidden, g->mechanism) : 0;
}
