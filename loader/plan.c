/* plan.c — the stream plan (tc_plan.h): pure arithmetic from a batch
 * number to epoch, positions and graphs, and the resume state's checks. */
#include <stdlib.h>
#include <string.h>

#include "tc_common.h"
#include "tc_error.h"
#include "tc_plan.h"

/* The permutation key of epoch e. */
static uint64_t epoch_key(uint64_t seed, uint64_t epoch) {
  tc_rng r;
  tc_rng_init(&r, seed, epoch);
  return tc_rng_u64(&r);
}

/* An epoch's length in origins (origin = epoch * unit + position): n, or in
 * local mode the whole set's graphs, so that one origin means the same
 * point (a step count) on every node. */
static uint64_t epoch_unit(const tc_plan *p) { return p->local ? p->local->graphs : p->n; }

/* This rank's batches of an epoch segment starting at position start, and
 * the end of the segment's positions (padding included, drop_last applied). */
static uint64_t segment(const tc_plan *p, uint64_t start, uint64_t *end) {
  uint64_t G = p->batch, W = p->world, batches;
  if (p->local) { /* from the same start on every node (it may pass this node's n): the largest node's
                   * steps, all full, or with drop_last the smallest node's whole steps */
    uint64_t step = G * W, lo = p->local->min_graphs, hi = p->local->max_graphs;
    if (p->drop_last) batches = lo > start ? (lo - start) / step : 0;
    else batches = hi > start ? (hi - start + step - 1) / step : 0;
    *end = start + batches * step;
    return batches;
  }
  uint64_t left = p->n - start;
  if (p->equal) { /* G*W <= 2^16 * 2^32: no overflow */
    batches = p->drop_last ? left / (G * W) : (left + G * W - 1) / (G * W);
    *end = start + batches * G * W;
  } else {
    uint64_t global = p->drop_last ? left / G : (left + G - 1) / G;
    batches = global > p->rank ? (global - p->rank + W - 1) / W : 0;
    *end = p->drop_last ? start + global * G : p->n;
  }
  return batches;
}

int tc_plan_init(tc_plan *p, const twincache_loader_options *o, uint64_t cache_tag, uint64_t begin, uint64_t n) {
  memset(p, 0, sizeof *p);
  if (n == 0 || o->batch_size == 0 || o->world_size == 0 || o->rank >= o->world_size)
    return tc_error_set(TWINCACHE_EINVAL, "stream plan: empty range, batch or world, or rank >= world_size");
  if (o->buckets != 0 && o->buckets != 1)
    return tc_error_set(TWINCACHE_EINVAL, "option buckets must be 0 or 1 (got %d)", o->buckets);
  p->bucket = (uint8_t)o->buckets;
  p->chunk = (uint64_t)o->batch_size * o->world_size;
  p->seed = o->seed;
  p->cache_tag = cache_tag;
  p->begin = begin;
  p->n = n;
  p->batch = o->batch_size;
  p->world = o->world_size;
  p->rank = o->rank;
  p->epochs = o->epochs;
  p->shuffle = o->shuffle != 0;
  p->drop_last = o->drop_last != 0;
  p->equal = o->equal_ranks && o->world_size > 1;
  uint64_t end;
  p->bpe = segment(p, 0, &end);
  return tc_plan_set_origin(p, 0);
}

int tc_plan_local_init(tc_plan_local *L, const uint64_t *ends, uint32_t shards, uint32_t node, uint32_t nodes) {
  memset(L, 0, sizeof *L);
  if (nodes == 0 || node >= nodes || nodes > shards)
    return tc_error_set(TWINCACHE_EINVAL, "local mode: node %u of %u over %u shards (need node < nodes <= shards)",
                        node, nodes, shards);
  L->nodes = nodes;
  L->node = node;
  L->parts = (shards - node + nodes - 1) / nodes;
  L->graphs = ends[shards - 1];
  if (!(L->first = malloc(L->parts * sizeof *L->first)) || !(L->start = malloc((L->parts + 1) * sizeof *L->start))) {
    tc_plan_local_free(L);
    return tc_error_set(TWINCACHE_ENOMEM, "local mode: no memory for %u shard ranges", shards);
  }
  L->min_graphs = UINT64_MAX;
  for (uint32_t k = 0; k < nodes; k++) { /* node k's graphs: its shards' sizes */
    uint64_t n = 0;
    for (uint32_t i = k; i < shards; i += nodes) {
      uint64_t first = i ? ends[i - 1] : 0;
      if (k == node) {
        L->first[i / nodes] = first;
        L->start[i / nodes] = n;
      }
      n += ends[i] - first;
    }
    if (k == node) L->start[L->parts] = n;
    if (n < L->min_graphs) L->min_graphs = n;
    if (n > L->max_graphs) L->max_graphs = n;
  }
  return TWINCACHE_OK;
}

void tc_plan_local_free(tc_plan_local *L) {
  free(L->first);
  free(L->start);
  memset(L, 0, sizeof *L);
}

int tc_plan_init_local(tc_plan *p, const twincache_loader_options *o, uint64_t cache_tag, const tc_plan_local *L) {
  if (o->world_size == 0 || o->world_size % L->nodes)
    return tc_error_set(TWINCACHE_EINVAL, "option local_nodes %u must divide world_size %u (each node runs "
                        "world_size / local_nodes ranks)", L->nodes, o->world_size);
  if (o->buckets)
    return tc_error_set(TWINCACHE_EINVAL, "options local_nodes and buckets cannot be combined (a bucketed step "
                        "is one chunk of the whole range, a local one reads each node's own shards)");
  uint32_t R = o->world_size / L->nodes;
  if (o->rank >= o->world_size || o->rank / R != L->node)
    return tc_error_set(TWINCACHE_EINVAL, "local mode: rank %u of %u is on node %u of %u, not node %u", o->rank,
                        o->world_size, o->rank < o->world_size ? o->rank / R : L->nodes, L->nodes, L->node);
  twincache_loader_options q = *o; /* the node's world */
  q.world_size = R;
  q.rank = o->rank % R;
  int rc = tc_plan_init(p, &q, cache_tag, 0, L->start[L->parts]);
  if (rc != TWINCACHE_OK) return rc;
  uint64_t end;
  p->local = L;
  p->equal = 1;
  p->bpe = segment(p, 0, &end);
  return tc_plan_set_origin(p, 0);
}

int tc_plan_set_origin(tc_plan *p, uint64_t origin) {
  uint64_t U = epoch_unit(p), e0 = origin / U, p0 = origin % U, end;
  if (p->epochs && (e0 > p->epochs || (e0 == p->epochs && p0 != 0)))
    return tc_error_set(TWINCACHE_EINVAL, "resume state: position %llu graphs is past the end of the %u epochs "
                        "of %llu graphs", (unsigned long long)origin, p->epochs, (unsigned long long)U);
  p->origin_epoch = e0;
  p->origin_pos = p0;
  p->first_bpe = segment(p, p0, &end);
  if (p->epochs == 0)
    p->total = p->bpe ? UINT64_MAX : 0;
  else
    p->total = e0 >= p->epochs ? 0 : p->first_bpe + (p->epochs - 1 - e0) * p->bpe;
  return TWINCACHE_OK;
}

void tc_plan_batch_at(const tc_plan *p, uint64_t seq, tc_plan_batch *b) {
  uint64_t start, j, end;
  if (seq < p->first_bpe) {
    b->epoch = p->origin_epoch;
    b->epoch_first_seq = 0;
    b->epoch_batches = p->first_bpe;
    start = p->origin_pos;
    j = seq;
  } else { /* seq < total: bpe > 0 */
    uint64_t s = seq - p->first_bpe;
    b->epoch = p->origin_epoch + 1 + s / p->bpe;
    j = s % p->bpe;
    b->epoch_first_seq = seq - j;
    b->epoch_batches = p->bpe;
    start = 0;
  }
  segment(p, start, &end);
  b->first = start + (j * p->world + p->rank) * p->batch;
  b->count = end - b->first < p->batch ? (uint32_t)(end - b->first) : p->batch;
  b->key = p->shuffle ? epoch_key(p->seed, b->epoch) : 0;
  if (p->shuffle) tc_perm_init(&b->perm, p->n, b->key);
  b->borrow = b->first + b->count;
  b->memo_chunk = UINT64_MAX;
  b->memo_group = 0;
}

int tc_plan_locate(const tc_plan *p, uint64_t epoch, uint64_t pos, uint32_t *rank, uint64_t *seq, uint32_t *slot) {
  /* "not read in this stream" is an ordinary answer: no message */
  if (pos >= p->n || epoch < p->origin_epoch || (epoch == p->origin_epoch && pos < p->origin_pos) ||
      (p->epochs && epoch >= p->epochs))
    return TWINCACHE_ENOTFOUND;
  uint64_t start = epoch == p->origin_epoch ? p->origin_pos : 0, end;
  segment(p, start, &end);
  if (pos >= end) return TWINCACHE_ENOTFOUND; /* cut by drop_last */
  uint64_t k = (pos - start) / p->batch, j = k / p->world; /* global batch, and the rank's batch in the part */
  uint32_t r = (uint32_t)(k % p->world);
  tc_plan q = *p; /* rank r's counts (they differ between ranks without equal ranks) */
  if (q.rank != r) {
    q.rank = r;
    q.bpe = segment(&q, 0, &end);
    q.first_bpe = segment(&q, q.origin_pos, &end);
  }
  *rank = r;
  *slot = (uint32_t)((pos - start) % p->batch);
  *seq = epoch == q.origin_epoch ? j : q.first_bpe + (epoch - q.origin_epoch - 1) * q.bpe + j;
  return TWINCACHE_OK;
}

int tc_plan_groups_init(tc_plan_groups *g, const uint16_t *nodes, uint64_t n) {
  memset(g, 0, sizeof *g);
  if (n > UINT32_MAX)
    return tc_error_set(TWINCACHE_EINVAL, "size buckets: %llu graphs in the range (at most %u)",
                        (unsigned long long)n, UINT32_MAX);
  if (!(g->members = malloc(n * sizeof *g->members)))
    return tc_error_set(TWINCACHE_ENOMEM, "size buckets: no memory for %llu graphs", (unsigned long long)n);
  for (uint64_t i = 0; i < n; i++) g->start[nodes[i] + 1]++; /* counting sort by N, stable */
  for (uint32_t k = 1; k < TWINCACHE_MAX_NODES + 2; k++) g->start[k] += g->start[k - 1];
  uint64_t next[TWINCACHE_MAX_NODES + 1];
  memcpy(next, g->start, sizeof next);
  for (uint64_t i = 0; i < n; i++) g->members[next[nodes[i]]++] = (uint32_t)i;
  return TWINCACHE_OK;
}

void tc_plan_groups_free(tc_plan_groups *g) {
  free(g->members);
  memset(g, 0, sizeof *g);
}

/* The graph at place s of batch b's epoch's sorted list: group N = the
 * last whose start is <= s, then the group's own permutation (memoised in
 * b). */
static uint64_t sorted_graph(const tc_plan *p, tc_plan_batch *b, uint64_t s) {
  const tc_plan_groups *g = p->groups;
  uint32_t lo = 1, hi = TWINCACHE_MAX_NODES; /* N in 1..256 with start[N] <= s < start[N+1] */
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo + 1) / 2;
    if (g->start[mid] <= s) lo = mid;
    else hi = mid - 1;
  }
  uint64_t o = s - g->start[lo];
  if (p->shuffle) {
    if (b->memo_group != lo) {
      tc_perm_init(&b->group_perm, g->start[lo + 1] - g->start[lo], tc_mix64(b->key ^ (0xB5C0FBCFEC4D3B2FULL * lo)));
      b->memo_group = lo;
    }
    o = tc_perm_at(&b->group_perm, o);
  }
  return p->begin + g->members[g->start[lo] + o];
}

uint64_t tc_plan_graph(const tc_plan *p, tc_plan_batch *b, uint64_t pos) {
  uint64_t q = pos < p->n ? pos : (pos - p->n) % p->n;
  if (!p->bucket) return tc_plan_index(p, b, q);
  uint64_t C = p->chunk, full = p->n / C, c = q / C;
  if (b->memo_chunk != c) {
    b->memo_chunk = c;
    b->memo_sorted = p->shuffle && c < full ? tc_permute(c, full, tc_mix64(b->key + 0x632BE59BD9B4E019ULL)) : c;
  }
  return sorted_graph(p, b, b->memo_sorted * C + q % C);
}

uint64_t tc_plan_consumed(const tc_plan *p, uint64_t seq) {
  uint64_t step = (uint64_t)p->batch * p->world, U = epoch_unit(p);
  if (seq == 0) return p->origin_epoch * U + p->origin_pos;
  if (seq < p->first_bpe) return p->origin_epoch * U + p->origin_pos + seq * step;
  uint64_t s = seq - p->first_bpe;
  if (p->bpe == 0) return (p->origin_epoch + 1) * U;
  return (p->origin_epoch + 1 + s / p->bpe) * U + (s % p->bpe) * step;
}

int tc_plan_epoch_seq(const tc_plan *p, uint64_t epoch, uint64_t *seq) {
  if (epoch < p->origin_epoch || (epoch == p->origin_epoch && p->origin_pos != 0))
    return tc_error_set(TWINCACHE_EINVAL, "epoch %llu begins before this stream's start (epoch %llu, position "
                        "%llu)", (unsigned long long)epoch, (unsigned long long)p->origin_epoch,
                        (unsigned long long)p->origin_pos);
  if (p->epochs && epoch >= p->epochs)
    return tc_error_set(TWINCACHE_EINVAL, "epoch %llu is past the stream's %u epochs", (unsigned long long)epoch,
                        p->epochs);
  *seq = epoch == p->origin_epoch ? 0 : p->first_bpe + (epoch - p->origin_epoch - 1) * p->bpe;
  return TWINCACHE_OK;
}

void tc_plan_state(const tc_plan *p, uint64_t next_seq, twincache_loader_state *s) {
  memset(s, 0, sizeof *s);
  s->magic = TWINCACHE_LOADER_STATE_MAGIC;
  s->version = TWINCACHE_LOADER_STATE_VERSION;
  s->seed = p->seed;
  s->cache_tag = p->cache_tag;
  s->index_begin = p->begin;
  s->index_end = p->begin + p->n;
  s->batch_size = p->batch;
  s->world_size = p->world;
  s->rank = p->rank;
  s->shuffle = p->shuffle;
  s->drop_last = p->drop_last;
  s->equal_ranks = p->equal;
  s->next_seq = next_seq;
  s->origin = p->origin_epoch * epoch_unit(p) + p->origin_pos;
  s->bucket = p->bucket;
  if (p->local) { /* the global world and rank, the whole set */
    s->index_begin = 0;
    s->index_end = p->local->graphs;
    s->world_size = p->world * p->local->nodes;
    s->rank = p->local->node * p->world + p->rank;
    s->local_nodes = p->local->nodes;
  }
}

int tc_plan_epoch_state(const tc_plan *p, uint64_t epoch, twincache_loader_state *s) {
  uint64_t seq;
  if (p->epochs && epoch >= p->epochs)
    return tc_error_set(TWINCACHE_EINVAL, "epoch %llu is past the stream's %u epochs", (unsigned long long)epoch,
                        p->epochs);
  if (tc_plan_epoch_seq(p, epoch, &seq) == TWINCACHE_OK) {
    tc_plan_state(p, seq, s);
  } else { /* before this stream's start: a stream that starts there */
    tc_error_clear();
    tc_plan_state(p, 0, s);
    s->origin = epoch * epoch_unit(p);
  }
  return TWINCACHE_OK;
}

/* The plan reads every resume state's head, so the bare-position rule sits
 * here beside tc_state_head, below the state codec (loader_state.c). */
int tc_state_bare_check(const twincache_loader_state *r) {
  const struct {
    const char *name;
    uint64_t v;
  } f[] = {
      {"version", r->version},         {"cache_tag", r->cache_tag},     {"index_begin", r->index_begin},
      {"index_end", r->index_end},     {"batch_size", r->batch_size},   {"world_size", r->world_size},
      {"rank", r->rank},               {"shuffle", r->shuffle},         {"drop_last", r->drop_last},
      {"equal_ranks", r->equal_ranks}, {"bucket", r->bucket},           {"origin", r->origin},
      {"local_nodes", r->local_nodes},
  };
  for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
    if (f[i].v != 0)
      return tc_error_set(TWINCACHE_EINVAL, "resume state field %s is %llu with magic 0: a bare position carries "
                          "seed and next_seq only (a full state needs magic %#x)", f[i].name,
                          (unsigned long long)f[i].v, (unsigned)TWINCACHE_LOADER_STATE_MAGIC);
  return TWINCACHE_OK;
}

/* A state's flag field must be 0 or 1. */
static int check_flag(const char *name, unsigned v) {
  if (v <= 1) return TWINCACHE_OK;
  return tc_error_set(TWINCACHE_EINVAL, "resume state field %s is %u, not 0 or 1", name, v);
}

int tc_state_head(const twincache_loader_state *r, uint64_t seed, uint64_t total, uint32_t min_version,
                  uint64_t *next_seq) {
  if (r->seed != seed)
    return tc_error_set(TWINCACHE_EINVAL, "resume state seed %llu differs from option seed %llu",
                        (unsigned long long)r->seed, (unsigned long long)seed);
  if (r->magic == 0) { /* {seed, next_seq} by hand: a position in this loader's own stream */
    int rc = tc_state_bare_check(r);
    if (rc != TWINCACHE_OK) return rc;
    if (total != UINT64_MAX && r->next_seq > total)
      return tc_error_set(TWINCACHE_EINVAL,
                          "resume state next_seq %llu is past the end of the stream (%llu batches)",
                          (unsigned long long)r->next_seq, (unsigned long long)total);
    *next_seq = r->next_seq;
    return 1;
  }
  if (r->magic != TWINCACHE_LOADER_STATE_MAGIC)
    return tc_error_set(TWINCACHE_EINVAL, "resume state field magic %#x is not a loader state's (%#x)",
                        (unsigned)r->magic, (unsigned)TWINCACHE_LOADER_STATE_MAGIC);
  if (r->version < min_version || r->version > TWINCACHE_LOADER_STATE_VERSION)
    return tc_error_set(TWINCACHE_EINVAL, "resume state field version %u is not %u..%u (this stream's)",
                        (unsigned)r->version, (unsigned)min_version, (unsigned)TWINCACHE_LOADER_STATE_VERSION);
  return 0;
}

int tc_state_match(const twincache_loader_state *r, const twincache_loader_state *want, const char *whose) {
  const struct {
    const char *name;
    uint64_t got, want;
  } f[] = {
      {"bucket", r->bucket, want->bucket},          {"cache_tag", r->cache_tag, want->cache_tag},
      {"shuffle", r->shuffle, want->shuffle},             {"drop_last", r->drop_last, want->drop_last},
      {"index_begin", r->index_begin, want->index_begin}, {"index_end", r->index_end, want->index_end},
  };
  for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
    if (f[i].got != f[i].want)
      return tc_error_set(TWINCACHE_EINVAL, "resume state field %s %llu differs from %s %llu", f[i].name,
                          (unsigned long long)f[i].got, whose, (unsigned long long)f[i].want);
  return TWINCACHE_OK;
}

int tc_plan_resume(tc_plan *p, const twincache_loader_state *r, uint64_t *next_seq) {
  int rc = tc_state_head(r, p->seed, p->total, 1, next_seq);
  if (rc) return rc < 0 ? rc : TWINCACHE_OK;
  if (r->version == 1 && r->origin != 0)
    return tc_error_set(TWINCACHE_EINVAL, "resume state field origin %llu: a version 1 state has none",
                        (unsigned long long)r->origin);
  twincache_loader_state want;
  tc_plan_state(p, 0, &want);
  if (r->local_nodes != want.local_nodes)
    return tc_error_set(TWINCACHE_EINVAL, "resume state field local_nodes %u differs from this loader's %u: local "
                        "mode binds each rank to its node's shards, so another node count (0 = not local) reads "
                        "other graphs on every rank; resume with local_nodes %u", (unsigned)r->local_nodes,
                        (unsigned)want.local_nodes, (unsigned)r->local_nodes);
  if ((rc = tc_state_match(r, &want, "this loader's")) != TWINCACHE_OK) return rc;
  if ((rc = check_flag("equal_ranks", r->equal_ranks)) != TWINCACHE_OK) return rc;
  if (r->batch_size == 0 || r->batch_size > 65536 || r->world_size == 0 || r->rank >= r->world_size)
    return tc_error_set(TWINCACHE_EINVAL, "resume state fields batch_size %u, world_size %u, rank %u describe no "
                        "stream", (unsigned)r->batch_size, (unsigned)r->world_size, (unsigned)r->rank);
  if (p->local && r->world_size % p->local->nodes)
    return tc_error_set(TWINCACHE_EINVAL, "resume state field world_size %u is not a multiple of its local_nodes "
                        "%u: no local-mode stream has it", (unsigned)r->world_size, (unsigned)p->local->nodes);
  /* the stream the state was taken in: its world, this loader's epochs */
  tc_plan q = *p;
  q.batch = r->batch_size;
  q.world = p->local ? r->world_size / p->local->nodes : r->world_size; /* local: the node's ranks */
  q.rank = p->local ? r->rank % q.world : r->rank;
  q.equal = p->local || (r->equal_ranks && r->world_size > 1);
  uint64_t end;
  q.bpe = segment(&q, 0, &end);
  if ((rc = tc_plan_set_origin(&q, r->origin)) != TWINCACHE_OK) return rc;
  if (q.total != UINT64_MAX && r->next_seq > q.total)
    return tc_error_set(TWINCACHE_EINVAL,
                        "resume state next_seq %llu is past the end of the stream (%llu batches)",
                        (unsigned long long)r->next_seq, (unsigned long long)q.total);
  if (p->bucket && (uint64_t)q.batch * q.world != p->chunk) /* a bucketed step is one chunk of G*W */
    return tc_error_set(TWINCACHE_EINVAL, "resume state fields batch_size %u x world_size %u: a bucketed order "
                        "(buckets 1) is cut into global batches, so it resumes only with the same global batch "
                        "(this loader: %u x %u)", (unsigned)r->batch_size, (unsigned)r->world_size,
                        (unsigned)p->batch, (unsigned)p->world);
  int in_step = q.world == 1 || q.equal; /* every rank at the same next_seq has read the same prefix */
  if (q.batch == p->batch && q.world == p->world && q.equal == p->equal && (in_step || q.rank == p->rank)) {
    if ((rc = tc_plan_set_origin(p, r->origin)) != TWINCACHE_OK) return rc;
    *next_seq = r->next_seq; /* the same stream: continue its numbering */
    return TWINCACHE_OK;
  }
  if (!in_step)
    return tc_error_set(TWINCACHE_EINVAL, "resume state of rank %u of world_size %u with equal_ranks 0 resumes "
                        "only with the same batch_size, world_size, rank and equal_ranks (its ranks do not "
                        "read in step; this loader: batch_size %u, rank %u of %u, equal_ranks %u)",
                        (unsigned)r->rank, (unsigned)r->world_size, (unsigned)p->batch, (unsigned)p->rank,
                        (unsigned)p->world, (unsigned)p->equal);
  /* elastic: continue the global order where every rank of the old world stood */
  if ((rc = tc_plan_set_origin(p, tc_plan_consumed(&q, r->next_seq))) != TWINCACHE_OK) return rc;
  *next_seq = 0;
  return TWINCACHE_OK;
}
