/* tc_gen_engine.c — the generator's thread pool and LMDB writer.
 *
 * Unit of work = one chunk (C consecutive graphs). Workers claim chunk
 * indices in order and encode into the builder of slot (chunk % nslots);
 * a worker may only claim chunk c < next_take + nslots, so at most nslots
 * (2 x threads + 40, ~1 MiB each) chunks are in memory whatever the graph
 * count. The 40 spare slots keep workers busy while the writer sits in a
 * commit's fdatasync (with 2 x threads slots, workers waited ~25% of a run). ONE writer
 * thread takes chunks in index order, copies them into its pending batch and
 * frees the slot; every ~0.15 s (or 64 MiB) it writes the batch in one LMDB
 * transaction (MDB_APPEND) together with meta committed/stats/dims, so the
 * committed count and the chunks can never disagree. On MDB_MAP_FULL the
 * batch is replayed after doubling the map, which is why the writer keeps its
 * own copy of the uncommitted chunks. The storage itself (directory, lock,
 * LMDB, meta, growth) is cache/'s tc_cache_writer. */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tc_cache_writer.h"
#include "twincache_cache.h"
#include "tc_common.h"
#include "tc_error.h"
#include "tc_gen.h"
#include "tc_gen_mech.h"

#define TC_COMMIT_INTERVAL_NS 150000000ull
#define TC_COMMIT_MAX_BYTES ((size_t)64 << 20)

enum { SLOT_FREE = 0, SLOT_BUSY = 1, SLOT_READY = 2 };

typedef struct tc_slot {
  int state;
  uint64_t chunk;
  twincache_chunk_builder *b;
  const void *data; /* finished chunk record, owned by b */
  size_t size;
  uint32_t count;
  twincache_stats st; /* graphs of this run only (index >= resumed_from) */
} tc_slot;

typedef struct tc_counters {
  uint64_t sample_ns, encode_ns, igraph_ns, wait_ns;
} tc_counters;

typedef struct tc_pending { /* one chunk copied by the writer, not yet committed */
  uint64_t chunk;
  size_t offset, size;
  uint64_t end_index; /* index after its last graph */
} tc_pending;

typedef struct tc_engine {
  const tc_gen_config *cfg;
  const volatile sig_atomic_t *stop_flag;
  uint32_t C;
  uint64_t target, resumed_from, first_chunk, end_chunk; /* target: end index */
  tc_cache_shard shard; /* the range built: the whole cache, or --shard's */
  /* shared state, guarded by mu */
  pthread_mutex_t mu;
  pthread_cond_t cv_work, cv_writer, cv_main;
  tc_slot *slots;
  uint32_t nslots, busy;
  uint64_t next_claim, next_take;
  int stop, error, writer_done;
  char msg[512];
  uint64_t done_graphs, done_frame_bytes, done_raw_bytes; /* encoded by this run */
  /* writer-owned */
  tc_cache_writer *w;    /* the cache, locked for the whole run */
  twincache_stats stats; /* committed totals */
  twincache_dims dims;
  uint64_t committed;
  uint8_t *pend_buf;
  size_t pend_bytes, pend_cap;
  tc_pending *pend;
  tc_cache_chunk *pend_chunks; /* (pend_capn) what one put writes */
  size_t pend_n, pend_capn;
  twincache_stats pend_stats;
  uint64_t lmdb_ns, commits, writer_cpu_ns;
  tc_counters *counters; /* (threads) */
} tc_engine;

typedef struct tc_worker_arg {
  tc_engine *e;
  uint32_t id;
} tc_worker_arg;

static void fail_locked(tc_engine *e, int code, const char *fmt, const char *a, const char *b) {
  if (!e->error) {
    e->error = code;
    snprintf(e->msg, sizeof e->msg, fmt, a, b);
  }
  pthread_cond_broadcast(&e->cv_work);
  pthread_cond_broadcast(&e->cv_writer);
  pthread_cond_broadcast(&e->cv_main);
}

/* ---- workers ------------------------------------------------------------- */
static int build_chunk(tc_engine *e, tc_gen_worker *gw, twincache_cctx *cc, tc_slot *sl,
                       tc_counters *ct) {
  uint64_t first = sl->chunk * e->C;
  uint64_t last = first + e->C < e->target ? first + e->C : e->target;
  memset(&sl->st, 0, sizeof sl->st);
  twincache_chunk_builder_reset(sl->b, first);
  tc_gen_worker_plan(gw, first, last);
  for (uint64_t i = first; i < last; i++) {
    const twincache_graph *g;
    int rc = tc_gen_graph(gw, i, &g, &ct->igraph_ns, &ct->sample_ns);
    if (rc) return rc;
    uint64_t t0 = tc_now_ns();
    rc = twincache_chunk_builder_add(sl->b, cc, g); /* encodes in place, no extra copy */
    ct->encode_ns += tc_now_ns() - t0;
    if (rc) return rc;
    if (i >= e->resumed_from) {
      uint32_t n = g->n_nodes, edges = 0;
      for (size_t k = 0; k < (size_t)n * n; k++) edges += g->adj[k];
      sl->st.raw_bytes += twincache_graph_raw_bytes(g);
      sl->st.edges += edges;
      sl->st.nodes += n;
    }
  }
  sl->count = (uint32_t)(last - first);
  uint64_t t0 = tc_now_ns();
  int rc = twincache_chunk_builder_finish(sl->b, &sl->data, &sl->size);
  /* frame sizes of this run's graphs, from the offset table */
  twincache_chunk_view v;
  if (!rc) rc = twincache_chunk_parse(sl->data, sl->size, &v);
  for (uint32_t s = 0; !rc && s < v.count; s++) {
    const void *f;
    size_t fs;
    rc = twincache_chunk_frame(&v, s, &f, &fs);
    if (!rc && first + s >= e->resumed_from) sl->st.frame_bytes += fs;
  }
  ct->encode_ns += tc_now_ns() - t0;
  return rc;
}

static void *worker_main(void *arg) {
  tc_worker_arg *wa = arg;
  tc_engine *e = wa->e;
  tc_counters *ct = &e->counters[wa->id];
  const tc_gen_config *c = e->cfg;
  tc_gen_worker *gw = tc_gen_worker_create(c);
  twincache_cctx *cc = twincache_cctx_create(c->zstd_level);
  int enc_rc = cc ? twincache_cctx_set_encoding(cc, c->encoding) : TWINCACHE_OK;
  pthread_mutex_lock(&e->mu);
  if (!gw || !cc) {
    fail_locked(e, TWINCACHE_ENOMEM, "out of memory creating a worker%s%s", "", "");
    goto done;
  }
  if (enc_rc != TWINCACHE_OK) {
    fail_locked(e, enc_rc, "cannot set the frame encoding: %s%s", twincache_strerror(enc_rc), "");
    goto done;
  }
  for (;;) {
    uint64_t t0 = tc_now_ns();
    while (!e->stop && !e->error && e->next_claim < e->end_chunk &&
           e->next_claim >= e->next_take + e->nslots)
      pthread_cond_wait(&e->cv_work, &e->mu);
    ct->wait_ns += tc_now_ns() - t0;
    if (e->stop || e->error || e->next_claim >= e->end_chunk) break;
    uint64_t chunk = e->next_claim++;
    tc_slot *sl = &e->slots[chunk % e->nslots];
    sl->state = SLOT_BUSY;
    sl->chunk = chunk;
    e->busy++;
    pthread_mutex_unlock(&e->mu);
    tc_error_clear(); /* a message after build_chunk is its own */
    int rc = build_chunk(e, gw, cc, sl, ct);
    pthread_mutex_lock(&e->mu);
    e->busy--;
    if (rc) {
      sl->state = SLOT_FREE;
      char num[32];
      snprintf(num, sizeof num, "%llu", (unsigned long long)(chunk * e->C));
      fail_locked(e, rc, "encoding the chunk starting at graph %s failed: %s", num,
                  *twincache_last_error() ? twincache_last_error() : twincache_strerror(rc));
      break;
    }
    sl->state = SLOT_READY;
    e->done_graphs += sl->count - (sl->chunk * e->C < e->resumed_from ? e->resumed_from - sl->chunk * e->C : 0);
    e->done_frame_bytes += sl->st.frame_bytes;
    e->done_raw_bytes += sl->st.raw_bytes;
    pthread_cond_broadcast(&e->cv_writer);
  }
done:
  pthread_cond_broadcast(&e->cv_writer);
  pthread_mutex_unlock(&e->mu);
  twincache_cctx_free(cc);
  tc_gen_worker_free(gw);
  return NULL;
}

/* ---- the writer -------------------------------------------------------------- */
/* Writes the pending chunks and the meta in one transaction (cache/ replays it
 * after growing the map). Returns a status. */
static int flush_pending(tc_engine *e) {
  if (e->pend_n == 0) return 0;
  uint64_t t0 = tc_now_ns();
  twincache_stats st = e->stats;
  st.raw_bytes += e->pend_stats.raw_bytes;
  st.frame_bytes += e->pend_stats.frame_bytes;
  st.edges += e->pend_stats.edges;
  st.nodes += e->pend_stats.nodes;
  uint64_t committed = e->pend[e->pend_n - 1].end_index;
  for (size_t p = 0; p < e->pend_n; p++) {
    e->pend_chunks[p].chunk = e->pend[p].chunk;
    e->pend_chunks[p].data = e->pend_buf + e->pend[p].offset;
    e->pend_chunks[p].size = e->pend[p].size;
  }
  int rc = tc_cache_writer_put(e->w, e->pend_chunks, e->pend_n, committed, &st);
  e->lmdb_ns += tc_now_ns() - t0;
  if (rc == 0) {
    e->stats = st;
    e->committed = committed;
    e->commits++;
    e->pend_n = 0;
    e->pend_bytes = 0;
    memset(&e->pend_stats, 0, sizeof e->pend_stats);
  }
  return rc;
}

static int pending_add(tc_engine *e, const tc_slot *sl) {
  if (e->pend_bytes + sl->size > e->pend_cap) {
    size_t cap = e->pend_cap ? e->pend_cap : ((size_t)4 << 20);
    while (cap < e->pend_bytes + sl->size) cap *= 2;
    uint8_t *nb = realloc(e->pend_buf, cap);
    TC_RETURN_IF(!nb, TWINCACHE_ENOMEM, "writer: out of memory for %zu pending frame bytes", cap);
    e->pend_buf = nb;
    e->pend_cap = cap;
  }
  if (e->pend_n == e->pend_capn) {
    size_t capn = e->pend_capn ? 2 * e->pend_capn : 64;
    tc_pending *np = realloc(e->pend, capn * sizeof *np);
    TC_RETURN_IF(!np, TWINCACHE_ENOMEM, "writer: out of memory for %zu pending frames", capn);
    e->pend = np;
    tc_cache_chunk *nc = realloc(e->pend_chunks, capn * sizeof *nc);
    TC_RETURN_IF(!nc, TWINCACHE_ENOMEM, "writer: out of memory for %zu pending chunks", capn);
    e->pend_chunks = nc;
    e->pend_capn = capn;
  }
  memcpy(e->pend_buf + e->pend_bytes, sl->data, sl->size);
  tc_pending *p = &e->pend[e->pend_n++];
  p->chunk = sl->chunk;
  p->offset = e->pend_bytes;
  p->size = sl->size;
  p->end_index = sl->chunk * e->C + sl->count;
  e->pend_bytes += sl->size;
  e->pend_stats.raw_bytes += sl->st.raw_bytes;
  e->pend_stats.frame_bytes += sl->st.frame_bytes;
  e->pend_stats.edges += sl->st.edges;
  e->pend_stats.nodes += sl->st.nodes;
  return 0;
}

static void lmdb_fail(tc_engine *e, int rc) {
  char num[32];
  snprintf(num, sizeof num, "%llu", (unsigned long long)e->committed);
  pthread_mutex_lock(&e->mu);
  if (rc == TWINCACHE_EFULL) {
    fail_locked(e, TWINCACHE_EFULL,
                "disk full writing the cache (it stays valid with %s graphs; free space and "
                "rerun to resume)%s",
                num, "");
  } else if (rc == TWINCACHE_ENOMEM) {
    fail_locked(e, TWINCACHE_ENOMEM, "out of memory in the writer (cache valid with %s graphs)%s", num, "");
  } else {
    char what[300]; /* the writer's message, left in this (the writer) thread */
    snprintf(what, sizeof what, "%s", twincache_last_error());
    fail_locked(e, TWINCACHE_ELMDB, "LMDB write failed: %s (cache valid with %s graphs)", what, num);
  }
  pthread_mutex_unlock(&e->mu);
}

static struct timespec deadline_in(uint64_t ns) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  uint64_t t = (uint64_t)ts.tv_nsec + ns;
  ts.tv_sec += (time_t)(t / 1000000000ull);
  ts.tv_nsec = (long)(t % 1000000000ull);
  return ts;
}

static void *writer_main(void *arg) {
  tc_engine *e = arg;
  uint64_t batch_deadline = 0;
  enum { TAKE, FLUSH, FINAL, QUIT } action;
  for (;;) {
    pthread_mutex_lock(&e->mu);
    tc_slot *sl = NULL;
    for (;;) {
      sl = &e->slots[e->next_take % e->nslots];
      if (e->next_take < e->end_chunk && sl->state == SLOT_READY && sl->chunk == e->next_take) {
        action = TAKE;
        break;
      }
      if (e->error) { action = QUIT; break; }
      if (e->next_take >= e->end_chunk || (e->stop && e->busy == 0)) { action = FINAL; break; }
      if (e->pend_n && tc_now_ns() >= batch_deadline) { action = FLUSH; break; }
      if (e->pend_n) {
        struct timespec ts = deadline_in(batch_deadline - tc_now_ns());
        pthread_cond_timedwait(&e->cv_writer, &e->mu, &ts);
      } else {
        pthread_cond_wait(&e->cv_writer, &e->mu);
      }
    }
    pthread_mutex_unlock(&e->mu);
    if (action == TAKE) {
      /* The slot stays READY (no worker may claim it) until next_take moves. */
      int rc = pending_add(e, sl);
      if (rc) {
        lmdb_fail(e, rc);
        break;
      }
      if (e->pend_n == 1) batch_deadline = tc_now_ns() + TC_COMMIT_INTERVAL_NS;
      pthread_mutex_lock(&e->mu);
      sl->state = SLOT_FREE;
      e->next_take++;
      pthread_cond_broadcast(&e->cv_work);
      pthread_mutex_unlock(&e->mu);
      if (e->pend_bytes >= TC_COMMIT_MAX_BYTES) action = FLUSH;
      else continue;
    }
    /* FLUSH, FINAL and QUIT all commit what is pending: those chunks are valid. */
    int rc = flush_pending(e);
    if (rc) {
      lmdb_fail(e, rc);
      break;
    }
    if (action == FINAL || action == QUIT) break;
  }
  {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    e->writer_cpu_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
  }
  pthread_mutex_lock(&e->mu);
  e->writer_done = 1;
  e->stop = 1; /* release workers waiting for a slot after a writer error */
  pthread_cond_broadcast(&e->cv_work);
  pthread_cond_broadcast(&e->cv_main);
  pthread_mutex_unlock(&e->mu);
  return NULL;
}

/* ---- opening or creating the cache ------------------------------------------ */
/* Opens c->out_dir, creating the cache or checking that it was built with the
 * same config. Fills committed/stats. */
static int open_cache(tc_engine *e, const char *config_json) {
  const char *dir = e->cfg->out_dir;
  int rc = tc_cache_writer_open_shard(dir, &e->dims, config_json, "twincache-gen " TWINCACHE_VERSION_STRING,
                                      e->cfg->map_size_bytes, e->shard.count ? &e->shard : NULL, &e->w);
  if (rc) return rc; /* the writer's message names the directory */
  size_t len;
  const char *stored = tc_cache_writer_config(e->w, &len);
  if (len != strlen(config_json) || memcmp(stored, config_json, len)) {
    char diff[400];
    tc_gen_config_diff(stored, len, config_json, diff, sizeof diff);
    /* an MLP cache drawn before --mlp-bias/--mlp-gain/--mlp-bump had none of their keys */
    int old_mlp_draw = strstr(diff, "mlp_bias: not in cache") != NULL;
    return tc_error_set(TWINCACHE_EMISMATCH,
                        "%s was built with another config (%s); use another --out or the cache's options%s", dir,
                        diff, old_mlp_draw ? " (an MLP cache of the first draw: --mlp-bias 0.5 --mlp-gain 1 "
                                             "--mlp-bump 0)" : "");
  }
  e->committed = tc_cache_writer_committed(e->w);
  e->stats = *tc_cache_writer_stats(e->w);
  return 0;
}

/* A cache of this config already holding the target count needs no writer:
 * opened read-only (no lock file, no write), so a complete cache in a
 * read-only directory is reported complete. Returns 1 and fills
 * committed/stats when so, else 0 (the writer then says what is wrong). */
static int cache_complete(tc_engine *e, const char *config_json) {
  twincache_cache *c = NULL;
  int done = 0;
  uint32_t index = 0, count = 0;
  if (twincache_cache_open(e->cfg->out_dir, &c) == TWINCACHE_OK && twincache_cache_members(c) == 0 &&
      twincache_cache_shard(c, &index, &count, NULL) == (e->shard.count > 0) && index == e->shard.index &&
      count == e->shard.count && twincache_cache_first(c) == e->shard.first &&
      strcmp(twincache_cache_config(c), config_json) == 0 && twincache_cache_count(c) >= e->target) {
    e->committed = twincache_cache_count(c);
    e->stats = *twincache_cache_stats(c);
    done = 1;
  }
  twincache_cache_close(c);
  return done;
}

/* ---- the run -------------------------------------------------------------------- */
/* Where the run stands, for the caller's on_progress (read under e->mu, or
 * after the threads are joined). */
static tc_gen_progress progress_of(const tc_engine *e, uint64_t start_ns, int final) {
  tc_gen_progress p = {.done = e->resumed_from + e->done_graphs - e->shard.first,
                       .target = e->target - e->shard.first,
                       .graphs_new = e->done_graphs, .frame_bytes = e->done_frame_bytes,
                       .raw_bytes = e->done_raw_bytes, .seconds = (tc_now_ns() - start_ns) * 1e-9,
                       .final = final};
  return p;
}

/* LMDB mallocs every dirty overflow run (one ~1 MiB chunk record each) and
 * frees it after the commit; with glibc's defaults those blocks go back to the
 * kernel and every put page-faults fresh zeroed memory (~10% of a 1-thread
 * run). Keeping them in the heap removes that. Called once per process. */
static void tune_malloc(void) {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
}
static pthread_once_t g_malloc_once = PTHREAD_ONCE_INIT;

int tc_gen_run(const tc_gen_config *c, const volatile sig_atomic_t *stop_flag, tc_gen_result *r) {
  memset(r, 0, sizeof *r);
  pthread_once(&g_malloc_once, tune_malloc);
  tc_engine E, *e = &E;
  memset(e, 0, sizeof E);
  pthread_t writer, *workers = NULL;
  tc_worker_arg *args = NULL;
  uint32_t started = 0;
  int writer_started = 0, rc = 0;
  char config_json[4096];
  tc_gen_refusal bad;
  uint64_t t_start = tc_now_ns();
  uint64_t igraph_locked0 = tc_gen_igraph_locked_ns();

  if (tc_gen_config_check(c, &bad))
    return tc_error_set(TWINCACHE_EINVAL, "invalid value for %s%s%s", bad.flag, bad.why ? ": " : "",
                        bad.why ? bad.why : "");
  if (!c->out_dir) return tc_error_set(TWINCACHE_EINVAL, "no output directory (--out)");
  e->cfg = c;
  e->stop_flag = stop_flag;
  e->C = tc_gen_chunk_graphs(c);
  e->target = c->graphs;
  if (c->shard_count) {
    if ((rc = tc_cache_shard_split(c->graphs, e->C, c->shard_index, c->shard_count, &e->shard)))
      return tc_error_wrap(rc, "--shard %u/%u", c->shard_index, c->shard_count);
    e->target = e->shard.end;
  }
  r->graphs_target = e->target - e->shard.first;
  if (!tc_gen_config_json(c, config_json, sizeof config_json))
    return tc_error_set(TWINCACHE_EINVAL, "the config's JSON is longer than %zu bytes", sizeof config_json);
  e->dims.graphs = c->graphs;
  e->dims.chunk_graphs = e->C;
  e->dims.max_nodes = c->nodes_max;
  e->dims.max_inter = tc_gen_max_inter(c);
  e->dims.samples = c->samples;
  e->dims.hidden = tc_gen_mech_get(c->mechanism)->hidden(c);

  pthread_mutex_init(&e->mu, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&e->cv_work, NULL);
  pthread_cond_init(&e->cv_writer, &ca);
  pthread_cond_init(&e->cv_main, &ca);
  pthread_condattr_destroy(&ca);

  if (!cache_complete(e, config_json)) {
    rc = open_cache(e, config_json);
    if (rc) goto cleanup;
  }
  r->chunk_graphs = e->C;
  e->resumed_from = e->committed;
  r->resumed_from = e->committed - e->shard.first;
  if (e->committed >= e->target) { /* nothing to do */
    r->graphs_total = e->committed - e->shard.first;
    r->stats = e->stats;
    goto cleanup;
  }
  e->first_chunk = e->committed / e->C;
  e->end_chunk = (e->target + e->C - 1) / e->C;
  e->next_claim = e->next_take = e->first_chunk;
  e->nslots = 2 * c->threads + 40; /* + 40: covers production during a slow commit */
  e->slots = calloc(e->nslots, sizeof *e->slots);
  e->counters = calloc(c->threads, sizeof *e->counters);
  workers = calloc(c->threads, sizeof *workers);
  args = calloc(c->threads, sizeof *args);
  if (!e->slots || !e->counters || !workers || !args) {
    rc = tc_error_set(TWINCACHE_ENOMEM, "out of memory for %u threads' slots", c->threads);
    goto cleanup;
  }
  for (uint32_t s = 0; s < e->nslots; s++) {
    e->slots[s].b = twincache_chunk_builder_create();
    if (!e->slots[s].b) {
      rc = tc_error_set(TWINCACHE_ENOMEM, "out of memory for the chunk builders");
      goto cleanup;
    }
    twincache_chunk_builder_set_tag(e->slots[s].b, tc_cache_writer_tag(e->w));
  }
  if (pthread_create(&writer, NULL, writer_main, e)) {
    rc = tc_error_set(TWINCACHE_ETHREAD, "cannot start the writer thread");
    goto cleanup;
  }
  writer_started = 1;
  for (; started < c->threads; started++) {
    args[started].e = e;
    args[started].id = started;
    if (pthread_create(&workers[started], NULL, worker_main, &args[started])) {
      pthread_mutex_lock(&e->mu);
      fail_locked(e, TWINCACHE_ETHREAD, "cannot start worker threads%s%s", "", "");
      pthread_mutex_unlock(&e->mu);
      break;
    }
  }
  /* The calling thread watches the stop flag and draws the progress line. */
  uint64_t last_print = 0;
  pthread_mutex_lock(&e->mu);
  while (!e->writer_done) {
    struct timespec ts = deadline_in(50000000ull);
    pthread_cond_timedwait(&e->cv_main, &e->mu, &ts);
    if (stop_flag && *stop_flag && !e->stop) {
      e->stop = 1;
      r->interrupted = 1;
      pthread_cond_broadcast(&e->cv_work);
      pthread_cond_broadcast(&e->cv_writer);
    }
    if (c->on_progress && tc_now_ns() - last_print >= 200000000ull) {
      tc_gen_progress p = progress_of(e, t_start, 0);
      pthread_mutex_unlock(&e->mu); /* the callback runs without the engine's lock */
      c->on_progress(&p, c->progress_user);
      pthread_mutex_lock(&e->mu);
      last_print = tc_now_ns();
    }
  }
  pthread_mutex_unlock(&e->mu);
  if (c->on_progress) {
    tc_gen_progress p = progress_of(e, t_start, 1);
    c->on_progress(&p, c->progress_user);
  }

cleanup:
  for (uint32_t t = 0; t < started; t++) pthread_join(workers[t], NULL);
  if (writer_started) pthread_join(writer, NULL);
  if (!rc && e->error) rc = tc_error_set(e->error, "%s", e->msg); /* a worker's or the writer's */
  if (e->counters) {
    for (uint32_t t = 0; t < c->threads; t++) {
      r->sample_ns += e->counters[t].sample_ns;
      r->encode_ns += e->counters[t].encode_ns;
      r->igraph_ns += e->counters[t].igraph_ns;
      r->wait_ns += e->counters[t].wait_ns;
    }
  }
  if (e->slots)
    for (uint32_t s = 0; s < e->nslots; s++) twincache_chunk_builder_free(e->slots[s].b);
  if (writer_started || e->committed) {
    r->graphs_total = e->committed - e->shard.first;
    r->stats = e->stats;
    r->graphs_new = e->committed - e->resumed_from;
  }
  r->frame_bytes_new = e->stats.frame_bytes;
  r->raw_bytes_new = e->stats.raw_bytes;
  if (writer_started) { /* this run's share of the totals */
    r->frame_bytes_new = e->done_frame_bytes;
    r->raw_bytes_new = e->done_raw_bytes;
  }
  r->igraph_locked_ns = tc_gen_igraph_locked_ns() - igraph_locked0;
  r->lmdb_ns = e->lmdb_ns;
  r->writer_cpu_ns = e->writer_cpu_ns;
  r->commits = e->commits;
  r->map_grows = e->w ? tc_cache_writer_map_grows(e->w) : 0;
  tc_cache_writer_close(e->w); /* releases the lock */
  free(e->pend_buf);
  free(e->pend);
  free(e->pend_chunks);
  free(e->slots);
  free(e->counters);
  free(workers);
  free(args);
  pthread_cond_destroy(&e->cv_work);
  pthread_cond_destroy(&e->cv_writer);
  pthread_cond_destroy(&e->cv_main);
  pthread_mutex_destroy(&e->mu);
  r->seconds = (tc_now_ns() - t_start) * 1e-9;
  if (!r->interrupted && stop_flag && *stop_flag && r->graphs_total < r->graphs_target) r->interrupted = 1;
  return rc;
}
