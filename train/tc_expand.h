/* tc_expand.h — the offsets the expansion kernels need, copied from the
 * loader's compact and dense layouts (kernels/ includes nothing of ours, so
 * the numbers travel in twincache_expand_offsets). */
#ifndef TC_EXPAND_H
#define TC_EXPAND_H

#include "twincache_kernels.h"
#include "twincache_loader.h"

static inline void tc_expand_offsets_init(twincache_expand_offsets *o,
                                          const twincache_compact_layout *c) {
  const twincache_batch_layout *d = &c->dense;
  o->G = (int)c->graphs, o->K = (int)c->inter, o->S = (int)c->samples, o->N = (int)c->nodes;
  o->W = (int)c->mask_words;
  o->c_base = c->base, o->c_adj = c->adj, o->c_kind = c->kind, o->c_graph_id = c->graph_id;
  o->c_valid = c->valid;
  o->c_n_nodes = c->n_nodes, o->c_n_inter = c->n_inter, o->c_target = c->target;
  o->c_value = c->value, o->c_col_first = c->col_first, o->c_col_mask = c->col_mask;
  o->c_cols = c->cols, o->c_rows = c->rows;
  o->base = d->base, o->inter = d->inter_off, o->target = d->target, o->value = d->value;
  o->kind = d->kind, o->adj = d->adj, o->node_mask = d->node_mask, o->int_mask = d->int_mask;
  o->graph_id = d->graph_id, o->valid = d->valid, o->rows = d->rows;
}

#endif /* TC_EXPAND_H */
