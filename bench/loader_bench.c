/* loader_bench.c — twincache-loader-bench: how close the loader comes to the
 * limits it chases on this machine.
 *
 *   loader   graphs/s and GB/s of batch slabs delivered, for 1 and 2 decode
 *            threads (or --threads T)
 *   zstd     the same graphs' zstd frames decompressed by plain
 *            ZSTD_decompressDCtx in a tight loop on one thread: the per-thread
 *            limit of a loader that must at least decompress
 *   memcpy   bandwidth of copying one slab-sized buffer, and the graphs/s
 *            of one thread that did nothing but write the bytes a batch
 *            occupies per graph at that bandwidth (the bound of the layout:
 *            at N=50, K=50, S=64 the dense slab is 668 KB per graph, so
 *            100k graphs/s would need 67 GB/s of writes)
 *
 * The cache's LMDB map: every loader open maps the cache afresh, and the
 * first read of each page of a fresh map costs a page fault (on a VM
 * ~1 us per 4 KiB page; at N=50, ~90 KB of frames per graph, that is as
 * much as the decode). A trainer pays it once, in its first epoch; --warm
 * keeps the cache open across the runs (the loader then shares its map,
 * whose pages the zstd baseline already read), so each run measures the
 * steady state of later epochs instead of a first epoch.
 *
 * Each loader run is repeated (--repeat, best wall time kept) and its CPU
 * time is measured too: on a shared machine the wall rate depends on what
 * else runs, graphs per CPU-second much less. The load average is printed.
 *
 * usage: twincache-loader-bench --cache DIR [--threads T] [--batch G]
 *                               [--epochs E] [--repeat R] [--layout dense|compact|scm] [--warm]
 *                               [--fresh-rows S] [--json] [--no-baselines]
 *
 * Bytes moved per graph: the slab bytes a consumer copies per graph (dense:
 * the whole slab; compact: the used prefix of each compact slab; scm: the
 * whole SCM slab, which a GPU sampler turns into the dense worlds). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <zstd.h>

#include "tc_args.h"
#include "tc_common.h"
#include "twincache_loader.h"

#define ZSTD_MAGIC 0xFD2FB528u
#define ZSTD_SAMPLE_GRAPHS (1u << 18) /* frames held in memory for the zstd loop: every graph of a cache up to this many, else an even sample */
#define MIN_TIMED_NS 500000000ull
#define N_BENCH_OPTS 11 /* >= the rows of bench_opts (a static assert checks) */

typedef struct bench_args {
  const char *cache;
  uint32_t threads; /* 0 = run 1 and 2 */
  uint32_t batch;
  uint32_t epochs;
  uint32_t repeat;
  int layout; /* TWINCACHE_LAYOUT_*: the position in k_layouts */
  int warm;
  int json;
  int no_baselines; /* skip the timed zstd and memcpy loops (instruction counts) */
  uint32_t fresh_rows; /* 0: stored worlds; else fresh worlds of this many rows */
} bench_args;

static const char *const k_layouts[] = {"dense", "compact", "scm", NULL};

typedef struct loader_run {
  uint32_t threads;
  twincache_batch_layout layout; /* the loader's, taken after open */
  uint64_t graphs, batches, bytes, corrupt;
  double seconds, cpu_seconds, graphs_per_s, batch_gb_per_s, graphs_per_cpu_s;
  double consumer_cpu_us_per_batch; /* the consuming thread's own CPU: next + release (+ waits' syscalls) */
} loader_run;

/* CPU seconds (user + system) of the whole process so far. */
static double process_cpu_seconds(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
         1e-6 * ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec);
}

/* CPU nanoseconds of the calling thread so far (a blocked wait costs none). */
static uint64_t thread_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Every flag, once: parsing and --help. */
static size_t bench_opts(bench_args *a, tc_opt *o) {
  const tc_opt t[] = {
      {.name = "--cache", .meta = "DIR", .kind = TC_OPT_STRING, .dst = &a->cache,
       .help = "cache directory (required)"},
      {.name = "--threads", .meta = "T", .kind = TC_OPT_U32, .dst = &a->threads, .lo = 1, .hi = 100,
       .help = "decode threads (default: run 1 and 2 and print a table)"},
      {.name = "--batch", .meta = "G", .kind = TC_OPT_U32, .dst = &a->batch, .lo = 1, .hi = 65536,
       .help = "graphs per batch (default {})"},
      {.name = "--epochs", .meta = "E", .kind = TC_OPT_U32, .dst = &a->epochs, .lo = 1, .hi = 1000,
       .help = "epochs read per run (default {})"},
      {.name = "--repeat", .meta = "R", .kind = TC_OPT_U32, .dst = &a->repeat, .lo = 1, .hi = 100,
       .help = "runs per thread count, the fastest is kept (default {})"},
      {.name = "--layout", .meta = "dense|compact|scm", .kind = TC_OPT_CHOICE, .dst = &a->layout,
       .choices = k_layouts, .help = "batch layout the loader fills (default {}; scm: the SCMs, with --fresh-rows)"},
      {.name = "--fresh-rows", .meta = "S", .kind = TC_OPT_U32, .dst = &a->fresh_rows, .lo = 0,
       .hi = TWINCACHE_MAX_SAMPLES,
       .help = "fresh worlds of S rows sampled from the stored SCMs (0 = the stored worlds) (default {})"},
      {.name = "--warm", .kind = TC_OPT_SWITCH, .dst = &a->warm,
       .help = "keep the cache mapped across runs: measure later epochs, not the first"},
      {.name = "--json", .kind = TC_OPT_SWITCH, .dst = &a->json,
       .help = "print one JSON object instead of the table"},
      {.name = "--no-baselines", .kind = TC_OPT_SWITCH, .dst = &a->no_baselines,
       .help = "skip the zstd and memcpy baselines (their loops run for a time, so an "
               "instruction count under valgrind would depend on it; they print as 0)"},
      {.name = "--help", .kind = TC_OPT_SWITCH, .help = "this text"},
  };
  _Static_assert(sizeof t / sizeof t[0] <= N_BENCH_OPTS, "N_BENCH_OPTS is too small");
  memcpy(o, t, sizeof t);
  return sizeof t / sizeof t[0];
}

static void bench_defaults(bench_args *a) {
  memset(a, 0, sizeof *a);
  a->batch = 32;
  a->epochs = 1;
  a->repeat = 3;
}

static void usage(FILE *f) {
  bench_args d;
  tc_opt o[N_BENCH_OPTS];
  bench_defaults(&d);
  size_t n = bench_opts(&d, o);
  fprintf(f,
          "usage: twincache-loader-bench --cache DIR [options]\n"
          "Measures the batch loader against plain zstd decompression and memcpy.\n");
  tc_args_help(f, o, n, 17);
  fprintf(f, "Exit status: 0 ok, 1 runtime error (cache missing or damaged), 2 usage error (a flag,\n"
             "or flags the loader refuses together, such as --layout scm without --fresh-rows).\n");
}

/* Parses argv into *a; a bad flag or value exits 2 with one line naming it. */
static void parse_args(int argc, char **argv, bench_args *a) {
  tc_opt opts[N_BENCH_OPTS];
  tc_args_error e;
  bench_defaults(a);
  size_t n = bench_opts(a, opts);
  if (tc_args_parse(argc, argv, opts, n, &e) != TC_ARGS_OK) {
    if (e.status == TC_ARGS_HELP) usage(stdout);
    exit(tc_args_report(stderr, "twincache-loader-bench", &e));
  }
  if (!a->cache) {
    fprintf(stderr, "twincache-loader-bench: --cache DIR is required (see --help)\n");
    exit(2);
  }
}

/* Reads every batch of `epochs` epochs with `threads` decode threads. */
static int run_loader(const bench_args *a, uint32_t threads, loader_run *r) {
  twincache_loader_options o;
  twincache_loader *l = NULL;
  twincache_batch *b;
  twincache_loader_stats st;
  twincache_loader_options_init(&o);
  o.batch_size = a->batch;
  o.epochs = a->epochs;
  o.threads = threads;
  o.layout = a->layout;
  if (a->fresh_rows) {
    o.samples = TWINCACHE_SAMPLES_FRESH;
    o.rows = a->fresh_rows;
  }
  memset(r, 0, sizeof *r);
  r->threads = threads;
  int rc = twincache_loader_open(a->cache, &o, NULL, &l);
  if (rc != TWINCACHE_OK) return rc;
  r->layout = *twincache_loader_layout(l);
  double cpu0 = process_cpu_seconds();
  uint64_t t0 = tc_now_ns(), h0 = thread_cpu_ns();
  /* The consumer reads what a Python loop over the binding reads (the
   * batch's size and its base array) and touches no data, as
   * bench/python_loader_bench.py's loop: both measure the loader plus the
   * consumer's per-batch cost, not a model. */
  volatile uintptr_t sink = 0;
  while ((rc = twincache_loader_next(l, &b)) == TWINCACHE_OK) {
    sink += (uintptr_t)b->base + b->n_graphs;
    twincache_loader_release(l, b);
  }
  uint64_t t1 = tc_now_ns(), h1 = thread_cpu_ns();
  r->cpu_seconds = process_cpu_seconds() - cpu0;
  twincache_loader_get_stats(l, &st);
  twincache_loader_close(l);
  if (rc != TWINCACHE_END) return rc;
  r->graphs = st.graphs;
  r->batches = st.batches;
  r->bytes = st.bytes_decoded;
  r->corrupt = st.corrupt;
  r->seconds = (double)(t1 - t0) * 1e-9;
  r->graphs_per_s = (double)r->graphs / r->seconds;
  r->batch_gb_per_s = (double)r->bytes / r->seconds * 1e-9;
  r->graphs_per_cpu_s = r->cpu_seconds > 0 ? (double)r->graphs / r->cpu_seconds : 0;
  r->consumer_cpu_us_per_batch = r->batches ? (double)(h1 - h0) * 1e-3 / (double)r->batches : 0;
  return TWINCACHE_OK;
}

/* Finds the zstd frame inside a graph frame. FORMAT.md: a fixed header whose
 * length is the u16 at byte 6 and whose u32 at byte 32 is the compressed
 * size, then one zstd frame. Falls back to looking for the zstd magic. */
static int zstd_part(const uint8_t *frame, size_t size, const uint8_t **z, size_t *zsize) {
  if (size >= 40) {
    size_t off = tc_load_u16(frame + 6), n = tc_load_u32(frame + 32);
    if (off + 4 <= size && n <= size - off && tc_load_u32(frame + off) == ZSTD_MAGIC) {
      *z = frame + off;
      *zsize = n;
      return 0;
    }
  }
  for (size_t off = 0; off + 4 <= size; off++)
    if (tc_load_u32(frame + off) == ZSTD_MAGIC) {
      size_t n = ZSTD_findFrameCompressedSize(frame + off, size - off);
      if (ZSTD_isError(n)) continue;
      *z = frame + off;
      *zsize = n;
      return 0;
    }
  return -1;
}

typedef struct zstd_result {
  int opened;          /* the cache opened (else the error is the open's) */
  uint64_t count;      /* graphs committed in the cache */
  twincache_dims dims; /* the cache's */
  uint64_t graphs;
  double graphs_per_s, gb_per_s; /* decompressed bytes */
  double graphs_per_cpu_s;
  double compressed_bytes_per_graph, decompressed_bytes_per_graph;
  double shuffled_graphs_per_s; /* the same loop in a shuffled order, as the loader reads */
} zstd_result;

/* Decompresses the zstd frames of (up to ZSTD_SAMPLE_GRAPHS) graphs in a
 * tight loop on one thread, for at least MIN_TIMED_NS; timed = 0: only opens
 * the cache for its count and dims (the rates stay 0). */
static int run_zstd(const char *path, int timed, zstd_result *res, twincache_cache **keep) {
  twincache_cache *c = NULL;
  uint8_t **frames = NULL, *dst = NULL;
  size_t *sizes = NULL, max_out = 0, total_out = 0, total_in = 0;
  ZSTD_DCtx *dctx = NULL;
  uint64_t n = 0;
  int rc = twincache_cache_open(path, &c);
  if (rc != TWINCACHE_OK) return rc;
  uint64_t count = twincache_cache_count(c);
  res->opened = 1;
  res->count = count;
  res->dims = *twincache_cache_dims(c);
  uint64_t want = !timed ? 0 : count < ZSTD_SAMPLE_GRAPHS ? count : ZSTD_SAMPLE_GRAPHS;
  uint64_t step = count / (want ? want : 1);
  frames = calloc(want ? want : 1, sizeof *frames);
  sizes = calloc(want ? want : 1, sizeof *sizes);
  dctx = ZSTD_createDCtx();
  if (!frames || !sizes || !dctx) {
    rc = TWINCACHE_ENOMEM;
    goto cleanup;
  }
  for (uint64_t i = 0; i < want; i++) {
    void *frame;
    size_t size;
    const uint8_t *z;
    size_t zsize;
    if ((rc = twincache_cache_read_frame(c, i * step, &frame, &size)) != TWINCACHE_OK) goto cleanup;
    if (zstd_part(frame, size, &z, &zsize) != 0) {
      free(frame);
      rc = TWINCACHE_ECORRUPT;
      goto cleanup;
    }
    unsigned long long out = ZSTD_getFrameContentSize(z, zsize);
    if (out == ZSTD_CONTENTSIZE_ERROR || out == ZSTD_CONTENTSIZE_UNKNOWN) {
      free(frame);
      rc = TWINCACHE_ECORRUPT;
      goto cleanup;
    }
    memmove(frame, z, zsize); /* keep only the zstd frame */
    frames[n] = frame;
    sizes[n] = zsize;
    n++;
    if (out > max_out) max_out = out;
    total_out += out;
    total_in += zsize;
  }
  dst = malloc(max_out ? max_out : 1);
  if (!dst) {
    rc = TWINCACHE_ENOMEM;
    goto cleanup;
  }
  double cpu0 = process_cpu_seconds();
  uint64_t rounds = 0, t0 = tc_now_ns(), t1;
  do {
    for (uint64_t i = 0; i < n; i++) {
      size_t r = ZSTD_decompressDCtx(dctx, dst, max_out, frames[i], sizes[i]);
      if (ZSTD_isError(r)) {
        rc = TWINCACHE_EZSTD;
        goto cleanup;
      }
    }
    rounds++;
    t1 = tc_now_ns();
  } while (t1 - t0 < MIN_TIMED_NS && n > 0);
  double seconds = (double)(t1 - t0) * 1e-9, cpu = process_cpu_seconds() - cpu0;
  uint64_t shuffled_rounds = 0, s0 = tc_now_ns(), s1;
  do {
    for (uint64_t i = 0; i < n; i++) {
      uint64_t j = tc_permute(i, n, shuffled_rounds + 1);
      size_t r = ZSTD_decompressDCtx(dctx, dst, max_out, frames[j], sizes[j]);
      if (ZSTD_isError(r)) {
        rc = TWINCACHE_EZSTD;
        goto cleanup;
      }
    }
    shuffled_rounds++;
    s1 = tc_now_ns();
  } while (s1 - s0 < MIN_TIMED_NS && n > 0);
  res->shuffled_graphs_per_s = n ? (double)(shuffled_rounds * n) / ((double)(s1 - s0) * 1e-9) : 0;
  res->graphs = n;
  res->graphs_per_cpu_s = cpu > 0 ? (double)(rounds * n) / cpu : 0;
  res->graphs_per_s = n ? (double)(rounds * n) / seconds : 0;
  res->gb_per_s = (double)rounds * (double)total_out / seconds * 1e-9;
  res->compressed_bytes_per_graph = n ? (double)total_in / (double)n : 0;
  res->decompressed_bytes_per_graph = n ? (double)total_out / (double)n : 0;
  rc = TWINCACHE_OK;

cleanup:
  for (uint64_t i = 0; frames && i < n; i++) free(frames[i]);
  free(frames);
  free(sizes);
  free(dst);
  ZSTD_freeDCtx(dctx);
  if (keep && rc == TWINCACHE_OK)
    *keep = c;
  else
    twincache_cache_close(c);
  return rc;
}

/* memcpy of a slab-sized buffer, GB/s of bytes copied. */
static double run_memcpy(size_t bytes) {
  uint8_t *a = malloc(bytes), *b = malloc(bytes);
  double gb_per_s = 0;
  if (a && b) {
    memset(a, 1, bytes);
    memset(b, 2, bytes);
    uint64_t rounds = 0, t0 = tc_now_ns(), t1;
    do {
      memcpy((rounds & 1) ? a : b, (rounds & 1) ? b : a, bytes);
      rounds++;
      t1 = tc_now_ns();
    } while (t1 - t0 < MIN_TIMED_NS / 2);
    gb_per_s = (double)rounds * (double)bytes / ((double)(t1 - t0) * 1e-9) * 1e-9;
  }
  free(a);
  free(b);
  return gb_per_s;
}

int main(int argc, char **argv) {
  bench_args a;
  parse_args(argc, argv, &a);

  /* the zstd baseline opens the cache (count, dims); the loader runs give
   * the batch layout, which the memcpy baseline then copies */
  zstd_result z = {0};
  twincache_cache *warm = NULL; /* --warm: held open until the end */
  int rc = run_zstd(a.cache, !a.no_baselines, &z, a.warm ? &warm : NULL);
  if (rc != TWINCACHE_OK) {
    if (!z.opened)
      fprintf(stderr, "twincache-loader-bench: cannot open cache: %s\n", twincache_last_error());
    else
      fprintf(stderr, "twincache-loader-bench: zstd baseline failed: %s\n", twincache_strerror(rc));
    return 1;
  }
  uint64_t count = z.count;
  const twincache_dims dims = z.dims;

  uint32_t thread_list[2] = {1, 2}, runs = 2;
  if (a.threads) {
    thread_list[0] = a.threads;
    runs = 1;
  }
  loader_run r[2];
  for (uint32_t i = 0; i < runs; i++)
    for (uint32_t k = 0; k < a.repeat; k++) {
      loader_run one;
      if ((rc = run_loader(&a, thread_list[i], &one)) != TWINCACHE_OK) {
        fprintf(stderr, "twincache-loader-bench: loader with %u threads failed: %s\n", thread_list[i],
                twincache_last_error());
        /* the loader's options are the flags: one it refuses (--layout scm
         * without --fresh-rows, ...) is a usage error */
        return rc == TWINCACHE_EINVAL ? 2 : 1;
      }
      if (k == 0 || one.seconds < r[i].seconds) r[i] = one;
    }
  twincache_cache_close(warm);
  const twincache_batch_layout layout = r[0].layout;
  double memcpy_gb_per_s = a.no_baselines ? 0 : run_memcpy(layout.bytes);
  double load[1] = {-1};
  if (getloadavg(load, 1) != 1) load[0] = -1;

  const loader_run *last = &r[runs - 1];
  /* bytes a consumer moves per graph: dense slabs whole, compact used prefixes */
  double bytes_per_graph = (double)last->bytes / (double)last->graphs;
  twincache_batch_layout dense = layout; /* the dense slab of the same batch (scm's bytes are its own) */
  if (a.layout == TWINCACHE_LAYOUT_SCM)
    twincache_batch_layout_init(&dense, layout.graphs, layout.nodes, layout.inter, layout.samples);
  double dense_per_graph = (double)last->batches * (double)dense.bytes / (double)last->graphs;
  /* one thread writing only the batch bytes of each graph at memcpy speed */
  double memcpy_bound_graphs_per_s = memcpy_gb_per_s * 1e9 / bytes_per_graph; /* 0: --no-baselines */
  if (a.json) {
    printf("{\"threads\": %u, \"graphs_per_s\": %.0f, \"batch_gb_per_s\": %.3f, "
           "\"zstd_limit_gb_per_s\": %.3f, \"zstd_limit_graphs_per_s\": %.0f, "
           "\"memcpy_gb_per_s\": %.3f, \"memcpy_bound_graphs_per_s\": %.0f, \"warm\": %s, "
           "\"per_thread_vs_zstd\": %.3f, \"graphs_per_cpu_s\": %.0f, "
           "\"zstd_limit_graphs_per_cpu_s\": %.0f, \"zstd_shuffled_graphs_per_s\": %.0f, "
           "\"graphs\": %llu, \"batch\": %u, "
           "\"slab_bytes\": %zu, \"layout\": \"%s\", \"bytes_per_graph\": %.0f, "
           "\"dense_bytes_per_graph\": %.0f, \"repeat\": %u, \"load_avg\": %.2f, "
           "\"consumer_cpu_us_per_batch\": %.2f, \"runs\": [",
           last->threads, last->graphs_per_s, last->batch_gb_per_s, z.gb_per_s, z.graphs_per_s,
           memcpy_gb_per_s, memcpy_bound_graphs_per_s, a.warm ? "true" : "false",
           z.graphs_per_s > 0 ? last->graphs_per_s / last->threads / z.graphs_per_s : 0, last->graphs_per_cpu_s,
           z.graphs_per_cpu_s, z.shuffled_graphs_per_s, (unsigned long long)count, a.batch, layout.bytes,
           k_layouts[a.layout], bytes_per_graph, dense_per_graph, a.repeat, load[0],
           last->consumer_cpu_us_per_batch);
    for (uint32_t i = 0; i < runs; i++)
      printf("%s{\"threads\": %u, \"graphs_per_s\": %.0f, \"batch_gb_per_s\": %.3f, \"seconds\": %.3f, "
             "\"cpu_seconds\": %.3f, \"graphs_per_cpu_s\": %.0f, \"batches\": %llu, "
             "\"consumer_cpu_us_per_batch\": %.2f}",
             i ? ", " : "", r[i].threads, r[i].graphs_per_s, r[i].batch_gb_per_s, r[i].seconds,
             r[i].cpu_seconds, r[i].graphs_per_cpu_s, (unsigned long long)r[i].batches,
             r[i].consumer_cpu_us_per_batch);
    printf("]}\n");
    return 0;
  }
  printf("cache %s: %llu graphs, N=%u K=%u S=%u, batch %u (slab %.2f MB), %u epoch(s), best of %u, "
         "map %s, load average %.2f\n",
         a.cache, (unsigned long long)count, dims.max_nodes, dims.max_inter, dims.samples, a.batch,
         (double)layout.bytes * 1e-6, a.epochs, a.repeat, a.warm ? "warm" : "fresh per run", load[0]);
  if (a.fresh_rows)
    printf("worlds: FRESH, %u rows per world sampled from the stored SCMs (the zstd line is the "
           "stored frames' decode)\n", a.fresh_rows);
  if (a.no_baselines)
    printf("zstd and memcpy baselines: skipped (--no-baselines); their columns print 0\n");
  else {
    printf("zstd limit, 1 thread: %.0f graphs/s (%.0f per CPU-s), %.2f GB/s decompressed "
           "(%.0f -> %.0f bytes per graph, %llu graphs looped)\n",
           z.graphs_per_s, z.graphs_per_cpu_s, z.gb_per_s, z.compressed_bytes_per_graph,
           z.decompressed_bytes_per_graph, (unsigned long long)z.graphs);
    printf("zstd, 1 thread, the same frames in a shuffled order (as the loader reads them): %.0f graphs/s\n",
           z.shuffled_graphs_per_s);
    printf("memcpy of one slab: %.2f GB/s; writing %.0f bytes per graph at that speed: %.0f graphs/s "
           "per thread\n", memcpy_gb_per_s, bytes_per_graph, memcpy_bound_graphs_per_s);
  }
  printf("layout %s: %.0f bytes moved per graph (dense slabs: %.0f, %.2fx)\n\n", k_layouts[a.layout],
         bytes_per_graph, dense_per_graph, dense_per_graph / bytes_per_graph);
  printf("%8s %10s %11s %16s %9s %12s %15s %16s\n", "threads", "graphs/s", "batch GB/s", "per-thread/zstd",
         "speedup", "graphs/CPU-s", "per-CPU-s/zstd", "consumer us/batch");
  for (uint32_t i = 0; i < runs; i++)
    printf("%8u %10.0f %11.2f %15.0f%% %8.2fx %12.0f %14.0f%% %16.2f\n", r[i].threads, r[i].graphs_per_s,
           r[i].batch_gb_per_s, z.graphs_per_s > 0 ? 100.0 * r[i].graphs_per_s / r[i].threads / z.graphs_per_s : 0,
           r[i].graphs_per_s / r[0].graphs_per_s, r[i].graphs_per_cpu_s,
           z.graphs_per_cpu_s > 0 ? 100.0 * r[i].graphs_per_cpu_s / z.graphs_per_cpu_s : 0,
           r[i].consumer_cpu_us_per_batch);
  return 0;
}
