/* fuzz_frame.c — libFuzzer target for the decoders of untrusted bytes: the
 * input is decoded as one graph frame and parsed as a chunk record whose
 * frames are then decoded, each both densely and as a view. Any return code
 * is fine; a crash, an ASan report, a decoded graph or view violating its
 * own invariants, or the two decoders disagreeing is a bug. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "twincache_format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static twincache_dctx *fz_dctx;
static twincache_graph *fz_graph;

/* A decoded graph must respect its declared dimensions and the twin rule for
 * do targets; abort() makes the fuzzer report it. */
static void check_graph(const twincache_graph *g) {
  if (g->n_nodes == 0 || g->n_nodes > g->cap_nodes || g->n_samples > g->cap_samples ||
      g->n_inter > g->cap_inter || !twincache_graph_is_dag(g->adj, g->n_nodes, g->ld_adj))
    abort();
  for (uint32_t k = 0; k < g->n_inter; k++) {
    if (g->target[k] >= g->n_nodes || !twincache_inter_kind_valid(g->flags, g->kind[k])) abort();
    for (uint32_t s = 0; s < g->n_samples; s++) {
      const float *row = g->inter + ((size_t)k * g->n_samples + s) * g->ld;
      for (uint32_t j = g->n_nodes; j < g->ld; j++)
        if (row[j] != 0.0f) abort();
    }
  }
}

/* A decoded view must be consistent with its own counts; every byte of its
 * sample sections is read (so ASan sees any section out of bounds). */
static void check_view(const twincache_frame_view *v) {
  uint64_t cols = 0;
  unsigned sum = 0;
  if (v->n_nodes == 0 || v->set_bytes != (v->n_nodes + 7) / 8) abort();
  for (uint32_t k = 0; k < v->n_inter; k++) {
    if (v->target[k] >= v->n_nodes || !twincache_inter_kind_valid(v->flags, v->kind[k])) abort();
    cols += v->n_cols_of[k];
  }
  if (cols != v->n_cols) abort();
  for (size_t b = 0; b < 4 * (size_t)v->n_nodes * v->n_samples; b++) sum += v->base[b];
  for (size_t b = 0; b < 4 * (size_t)v->n_cols * v->n_samples; b++) sum += v->cols[b];
  for (size_t b = 0; b < (size_t)v->n_inter * v->set_bytes; b++) sum += v->desc[b];
  if (sum == 0xffffffffu) abort(); /* keeps the reads */
}

static void decode_one(const uint8_t *p, size_t n) {
  twincache_frame_view v;
  int rd = twincache_frame_decode(fz_dctx, p, n, fz_graph);
  if (rd == TWINCACHE_OK) check_graph(fz_graph);
  int rv = twincache_frame_decode_view(fz_dctx, p, n, &v);
  if (rv == TWINCACHE_OK) check_view(&v);
  /* one validation: the dense decode refuses only what the view refuses,
   * or sizes beyond the graph's capacities */
  if ((rd == TWINCACHE_OK) != (rv == TWINCACHE_OK) && rd != TWINCACHE_ETOOBIG) abort();
  uint32_t nodes;
  (void)twincache_frame_peek(p, n, NULL, &nodes, NULL, NULL, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!fz_dctx) {
    fz_dctx = twincache_dctx_create();
    fz_graph = twincache_graph_alloc(24, 64, 24, 8);
    if (!fz_dctx || !fz_graph) abort();
    fz_graph->ld = fz_graph->ld_adj = 24; /* room for padding checks */
  }
  decode_one(data, size);
  twincache_chunk_view v;
  if (twincache_chunk_parse(data, size, &v) == TWINCACHE_OK) {
    for (uint32_t s = 0; s < v.count; s++) {
      const void *f;
      size_t fs;
      int rc = twincache_chunk_frame(&v, s, &f, &fs);
      if (rc == TWINCACHE_ECORRUPT) continue; /* a frame of another version than the record's */
      if (rc != TWINCACHE_OK) abort();        /* parse vouched for the offsets */
      decode_one(f, fs);
    }
  }
  twincache_dims d;
  twincache_stats st;
  (void)twincache_dims_decode(data, size, &d);
  (void)twincache_stats_decode(data, size, &st);
  return 0;
}
