/* tl_common.h — helpers shared by the loader's test programs: checks that
 * count failures, loading whole streams, scratch directories. */
#ifndef TL_COMMON_H
#define TL_COMMON_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "twincache_loader.h"

/* checks: TC_CHECK & co. (tests/tc_test.h), status names through strerror */
#define TC_TEST_STRERROR twincache_strerror
#include "tc_test.h"

/* A whole stream, copied out: every batch's slab and facts. */
typedef struct tl_stream {
  size_t count, cap, slab_bytes;
  uint8_t **slabs;
  uint32_t *n_graphs;
  uint64_t *epoch;
} tl_stream;

static inline void tl_stream_free(tl_stream *s) {
  for (size_t i = 0; i < s->count; i++) free(s->slabs[i]);
  free(s->slabs);
  free(s->n_graphs);
  free(s->epoch);
  memset(s, 0, sizeof *s);
}

static inline void tl_stream_push(tl_stream *s, const twincache_batch *b) {
  if (s->count == s->cap) {
    s->cap = s->cap ? 2 * s->cap : 16;
    s->slabs = realloc(s->slabs, s->cap * sizeof *s->slabs);
    s->n_graphs = realloc(s->n_graphs, s->cap * sizeof *s->n_graphs);
    s->epoch = realloc(s->epoch, s->cap * sizeof *s->epoch);
    TC_REQUIRE(s->slabs && s->n_graphs && s->epoch);
  }
  s->slab_bytes = b->layout.bytes;
  s->slabs[s->count] = malloc(b->layout.bytes);
  TC_REQUIRE(s->slabs[s->count]);
  memcpy(s->slabs[s->count], b->slab, b->layout.bytes);
  s->n_graphs[s->count] = b->n_graphs;
  s->epoch[s->count] = b->epoch;
  s->count++;
}

/* Reads up to max_batches (0 = all) batches of a loader into *s; returns the
 * status that ended it (TWINCACHE_END when the stream ran out). */
static inline int tl_stream_read(twincache_loader *l, size_t max_batches, tl_stream *s) {
  for (size_t i = 0; max_batches == 0 || i < max_batches; i++) {
    twincache_batch *b;
    int rc = twincache_loader_next(l, &b);
    if (rc != TWINCACHE_OK) return rc;
    if (b->seq != s->count && max_batches == 0) {
      fprintf(stderr, "batch seq %llu out of order\n", (unsigned long long)b->seq);
      tc_test_count_failure();
    }
    tl_stream_push(s, b);
    twincache_loader_release(l, b);
  }
  return TWINCACHE_OK;
}

/* Opens a loader and reads its whole stream. */
static inline int tl_stream_load(const char *cache, const twincache_loader_options *o,
                          const twincache_loader_state *resume, tl_stream *s) {
  twincache_loader *l = NULL;
  int rc = twincache_loader_open(cache, o, resume, &l);
  if (rc != TWINCACHE_OK) return rc;
  rc = tl_stream_read(l, 0, s);
  twincache_loader_close(l);
  return rc == TWINCACHE_END ? TWINCACHE_OK : rc;
}

/* 1 when two streams have the same batches byte for byte. */
static inline int tl_stream_equal(const tl_stream *a, const tl_stream *b) {
  if (a->count != b->count || a->slab_bytes != b->slab_bytes) return 0;
  for (size_t i = 0; i < a->count; i++)
    if (a->n_graphs[i] != b->n_graphs[i] || memcmp(a->slabs[i], b->slabs[i], a->slab_bytes))
      return 0;
  return 1;
}

/* graph_id of position g of batch i of a stream. */
static inline uint64_t tl_graph_id(const tl_stream *s, const twincache_batch_layout *L, size_t i, uint32_t g) {
  uint64_t id;
  memcpy(&id, s->slabs[i] + L->graph_id + g * sizeof(uint64_t), sizeof id);
  return id;
}

/* Options of a stream plan test (tests of loader/tc_plan.h): batch G, rank r
 * of W, drop_last, epochs, shuffle, seed; the rest the defaults. */
static inline void tl_plan_options(twincache_loader_options *o, uint32_t G, uint32_t W, uint32_t r, int drop,
                                   uint32_t epochs, int shuffle, uint64_t seed) {
  twincache_loader_options_init(o);
  o->batch_size = G;
  o->world_size = W;
  o->rank = r;
  o->drop_last = drop;
  o->epochs = epochs;
  o->shuffle = shuffle;
  o->seed = seed;
}

/* One step of W loaders read in step: rank r's next batch in b[r]. Returns
 * 1 when every rank's stream has ended, 0 when every rank has a batch; a
 * failure, or ranks that do not end together, fails the test. */
static inline int tl_step(twincache_loader **l, uint32_t W, twincache_batch **b) {
  uint32_t ended = 0;
  for (uint32_t r = 0; r < W; r++) {
    int rc = twincache_loader_next(l[r], &b[r]);
    if (rc == TWINCACHE_END) {
      ended++;
      continue;
    }
    TC_REQUIRE(rc == TWINCACHE_OK, "rank %u of %u: %s", r, W, twincache_last_error());
  }
  TC_REQUIRE(ended == 0 || ended == W, "the ranks end together (%u of %u ended)", ended, W);
  return ended == W;
}

/* Checks that a mixture of 2 sources with these options and resume state
 * is refused with TWINCACHE_EINVAL and a message naming `needle`. */
static inline void tl_mixture_refused(const char *what, const char *const *p, const double *w,
                                      const twincache_loader_options *o, const twincache_loader_state *resume,
                                      const char *needle) {
  twincache_loader *l = NULL;
  int rc = twincache_loader_open_mixture(p, w, 2, o, resume, &l);
  TC_CHECK(rc == TWINCACHE_EINVAL && l == NULL && strstr(twincache_last_error(), needle),
           "%s: rc %d, message \"%s\" (wanted one naming \"%s\")", what, rc, twincache_last_error(), needle);
  twincache_loader_close(l);
}

/* Makes `dir` (and its parent) as an empty directory. */
static inline void tl_mkdir(const char *dir) {
  char cmd[8300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", dir, dir);
  TC_REQUIRE(system(cmd) == 0);
}

#endif /* TL_COMMON_H */
