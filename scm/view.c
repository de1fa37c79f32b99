/* view.c — a tc_scm from a decoded frame (twincache_frame_view): aligned
 * copies of its parameters, parent lists and a topological order, so the
 * loader samples exactly the SCM the generator stored. */
#include <stdlib.h>
#include <string.h>

#include "tc_error.h"
#include "tc_scm.h"

struct tc_scm_store {
  uint32_t cap_nodes, cap_inter, cap_hidden;
  uint8_t *adj;        /* (n, n), and 8 bytes of slack */
  uint32_t *fill;      /* (n) scratch: the next free place of each node's parent list */
  uint32_t *order;     /* (n) */
  uint32_t *indeg;     /* (n) scratch of the topological sort */
  uint32_t *pa_start;  /* (n+1) */
  uint32_t *pa_idx;    /* (n*n) */
  float *pa_w;         /* (n*n) */
  float *mlp;          /* (n, H*n + 2H) */
  float *noise_scale;  /* (n) */
  uint8_t *node_mech;  /* (n) */
  float *het_w;        /* (n*n) aligned with pa_idx */
  float *het_c;        /* (n) */
  uint16_t *target;    /* (K) */
  uint8_t *kind;       /* (K) */
  float *value;        /* (K) */
  uint8_t *desc;       /* (K, n), and 8 bytes of slack */
  float *soft;         /* (K, P) soft worlds' parameter blocks, P = twincache_soft_stride */
  uint8_t *n_targets;  /* (K) */
  uint16_t *more_target; /* (K, TWINCACHE_MAX_TARGETS-1) */
  float *more_value;     /* (K, TWINCACHE_MAX_TARGETS-1) */
};

void tc_scm_store_free(tc_scm_store *st) {
  if (!st) return;
  free(st->adj);
  free(st->fill);
  free(st->order);
  free(st->indeg);
  free(st->pa_start);
  free(st->pa_idx);
  free(st->pa_w);
  free(st->mlp);
  free(st->noise_scale);
  free(st->node_mech);
  free(st->het_w);
  free(st->het_c);
  free(st->target);
  free(st->kind);
  free(st->value);
  free(st->desc);
  free(st->soft);
  free(st->n_targets);
  free(st->more_target);
  free(st->more_value);
  free(st);
}

tc_scm_store *tc_scm_store_create(uint32_t max_nodes, uint32_t max_inter, uint32_t max_hidden) {
  if (max_nodes < 1 || max_nodes > TWINCACHE_MAX_NODES || max_inter > TWINCACHE_MAX_INTER ||
      max_hidden > TWINCACHE_MAX_HIDDEN)
    return NULL;
  tc_scm_store *st = calloc(1, sizeof *st);
  if (!st) return NULL;
  size_t n = max_nodes, nn = n * n, k = max_inter ? max_inter : 1;
  size_t mlp = max_hidden ? n * ((size_t)max_hidden * n + 2u * max_hidden) : 1;
  st->cap_nodes = max_nodes;
  st->cap_inter = max_inter;
  st->cap_hidden = max_hidden;
  st->adj = malloc(nn + 8); /* + bits_to_bytes' spill */
  st->fill = malloc(n * sizeof(uint32_t));
  st->order = malloc(n * sizeof(uint32_t));
  st->indeg = malloc(n * sizeof(uint32_t));
  st->pa_start = malloc((n + 1) * sizeof(uint32_t));
  st->pa_idx = malloc(nn * sizeof(uint32_t));
  st->pa_w = malloc(nn * sizeof(float));
  st->mlp = malloc(mlp * sizeof(float));
  st->noise_scale = malloc(n * sizeof(float));
  st->node_mech = malloc(n);
  st->het_w = malloc(nn * sizeof(float));
  st->het_c = malloc(n * sizeof(float));
  st->target = malloc(k * sizeof(uint16_t));
  st->kind = malloc(k);
  st->value = malloc(k * sizeof(float));
  st->desc = malloc(k * n + 8); /* + bits_to_bytes' spill */
  size_t soft_p = (size_t)max_hidden * n + 2u * max_hidden > n ? (size_t)max_hidden * n + 2u * max_hidden : n;
  st->soft = malloc(k * soft_p * sizeof(float));
  st->n_targets = malloc(k);
  st->more_target = malloc(k * (TWINCACHE_MAX_TARGETS - 1) * sizeof(uint16_t));
  st->more_value = malloc(k * (TWINCACHE_MAX_TARGETS - 1) * sizeof(float));
  if (!st->n_targets || !st->more_target || !st->more_value || !st->soft || !st->adj || !st->fill || !st->order || !st->indeg || !st->pa_start || !st->pa_idx ||
      !st->pa_w || !st->mlp || !st->noise_scale || !st->node_mech || !st->het_w || !st->het_c || !st->target || !st->kind || !st->value || !st->desc) {
    tc_scm_store_free(st);
    return NULL;
  }
  return st;
}

static float load_f32(const uint8_t *p) {
  float f;
  memcpy(&f, p, sizeof f);
  return f;
}

/* A node set's n bits (bit j of byte j/8) as n bytes of 0 or 1 in dst:
 * each source byte is spread to 8 bytes at once, so up to 7 bytes past
 * dst + n are written too (the arrays keep 8 bytes of slack; rows are
 * written in order, each over the previous one's spill). */
static void bits_to_bytes(uint8_t *dst, const uint8_t *src, uint32_t n) {
  for (uint32_t b = 0; b < (n + 7) / 8; b++) {
    uint64_t x = ((src[b] * 0x0101010101010101ull) & 0x8040201008040201ull) + 0x7f7f7f7f7f7f7f7full;
    x = (x >> 7) & 0x0101010101010101ull; /* byte k: bit k of src[b] */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(dst + 8 * b, &x, 8);
#else
    for (unsigned k = 0; k < 8; k++) dst[8 * b + k] = (uint8_t)(x >> (8 * k));
#endif
  }
}

int tc_scm_from_view(tc_scm_store *st, const twincache_frame_view *v, tc_scm *m) {
  const uint32_t n = v->n_nodes, R = v->set_bytes, H = v->n_hidden;
  TC_RETURN_IF(n < 1 || n > st->cap_nodes || v->n_inter > st->cap_inter || H > st->cap_hidden, TWINCACHE_ETOOBIG,
               "graph %llu: N=%u K=%u H=%u beyond the store's %u, %u, %u", (unsigned long long)v->index, n,
               v->n_inter, H, st->cap_nodes, st->cap_inter, st->cap_hidden);
  /* adjacency (n, n), a byte per node pair */
  for (uint32_t i = 0; i < n; i++) bits_to_bytes(st->adj + (size_t)i * n, v->adj + (size_t)i * R, n);
  /* parents of j, ascending (the generator's order: its float sums follow
   * it), with their weights: count each node's parents, then walk the
   * edges row-major (the frame's edge order) appending i to its child's
   * list; a node's set bits are its children */
  for (uint32_t j = 0; j < n; j++) st->indeg[j] = 0;
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t b = 0; b < R; b++)
      for (unsigned bits = v->adj[(size_t)i * R + b]; bits; bits &= bits - 1) {
        uint32_t j = b * 8 + (uint32_t)__builtin_ctz(bits);
        if (j < n) st->indeg[j]++;
      }
  uint32_t q = 0;
  for (uint32_t j = 0; j < n; j++) {
    st->pa_start[j] = q;
    st->fill[j] = q;
    q += st->indeg[j];
  }
  st->pa_start[n] = q;
  uint32_t e = 0;
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t b = 0; b < R; b++)
      for (unsigned bits = v->adj[(size_t)i * R + b]; bits; bits &= bits - 1) {
        uint32_t j = b * 8 + (uint32_t)__builtin_ctz(bits);
        if (j >= n) continue;
        uint32_t at = st->fill[j]++;
        st->pa_idx[at] = i;
        st->pa_w[at] = load_f32(v->weight + 4u * e);
        st->het_w[at] = v->hetero_w ? load_f32(v->hetero_w + 4u * e) : 0.0f;
        e++;
      }
  /* a topological order (Kahn: order[] doubles as the queue; a placed
   * node's children are the set bits of its row); the frame decoder has
   * checked that adj is a DAG, so every node is placed */
  uint32_t placed = 0, head = 0;
  for (uint32_t j = 0; j < n; j++)
    if (st->indeg[j] == 0) st->order[placed++] = j;
  while (head < placed) {
    const uint8_t *row = v->adj + (size_t)st->order[head++] * R;
    for (uint32_t b = 0; b < R; b++)
      for (unsigned bits = row[b]; bits; bits &= bits - 1) {
        uint32_t j = b * 8 + (uint32_t)__builtin_ctz(bits);
        if (j < n && --st->indeg[j] == 0) st->order[placed++] = j;
      }
  }
  /* a cycle: not a frame that decoded */
  TC_RETURN_IF(placed != n, TWINCACHE_ECORRUPT, "graph %llu: the adjacency has a cycle", (unsigned long long)v->index);
  /* the changed sets (target and descendants) as the frame stores them */
  for (uint32_t k = 0; k < v->n_inter; k++) bits_to_bytes(st->desc + (size_t)k * n, v->desc + (size_t)k * R, n);
  if (H) memcpy(st->mlp, v->mlp, (size_t)n * ((size_t)H * n + 2u * H) * sizeof(float));
  memcpy(st->noise_scale, v->noise_scale, n * sizeof(float));
  const uint32_t soft_p = twincache_soft_stride(n, H, v->mechanism);
  const uint8_t *soft = v->soft;
  for (uint32_t k = 0; k < v->n_inter; k++) {
    st->target[k] = v->target[k];
    st->kind[k] = v->kind[k];
    st->value[k] = v->value[k];
    st->n_targets[k] = v->n_targets[k];
    for (uint32_t i = 0; i + 1u < v->n_targets[k]; i++) {
      size_t at = (size_t)k * (TWINCACHE_MAX_TARGETS - 1) + i;
      st->more_target[at] = v->more_target[at];
      st->more_value[at] = v->more_value[at];
    }
    if (v->kind[k] == TWINCACHE_INTER_SOFT) { /* the frame's blocks, in world order */
      memcpy(st->soft + (size_t)k * soft_p, soft, soft_p * sizeof(float));
      soft += 4u * soft_p;
    }
  }
  for (uint32_t j = 0; j < n; j++)
    st->node_mech[j] = v->mechanism == TWINCACHE_MECH_MIXED ? v->node_mech[j] : v->mechanism;
  memset(m, 0, sizeof *m);
  m->n = n;
  m->hidden = H;
  m->noise = v->noise;
  m->standardize = (v->flags & TWINCACHE_GRAPH_STANDARDIZED) != 0;
  m->iscm = (v->flags & TWINCACHE_GRAPH_ISCM) != 0;
  m->independent = (v->flags & TWINCACHE_GRAPH_INDEPENDENT) != 0;
  m->adj = st->adj;
  m->ld_adj = n;
  m->order = st->order;
  m->pa_start = st->pa_start;
  m->pa_idx = st->pa_idx;
  m->pa_w = st->pa_w;
  m->mlp = H ? st->mlp : NULL;
  m->node_mech = st->node_mech;
  if (v->hetero_c) {
    for (uint32_t j = 0; j < n; j++) st->het_c[j] = load_f32(v->hetero_c + 4u * j);
    m->het_w = st->het_w;
    m->het_c = st->het_c;
  }
  m->noise_scale = st->noise_scale;
  m->n_inter = v->n_inter;
  m->target = st->target;
  m->kind = st->kind;
  m->value = st->value;
  m->desc = st->desc;
  m->soft = st->soft;
  m->n_targets = st->n_targets;
  m->more_target = st->more_target;
  m->more_value = st->more_value;
  m->soft_ld = soft_p;
  return TWINCACHE_OK;
}
