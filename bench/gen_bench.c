/* twincache-gen-bench — the generator engine on the default workload with 1
 * and 2 threads, in a temporary cache that is removed afterwards.
 * Prints a table (or JSON with --json): graphs/s, MB/s, bytes per graph, the
 * ratio to raw float32 bytes, and where the time goes (per-thread counters). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tc_args.h"
#include "tc_bench_dir.h"
#include "tc_gen.h"

/* Every flag, once: parsing and --help. */
static const char *const k_encodings[] = {"fast", "small", NULL}; /* twincache_encoding */

/* --graph SPEC: checked by the generator's own parser; kept as text. */
static int parse_graph(const char *v, const tc_opt *o) {
  tc_gen_config c;
  tc_gen_config_default(&c);
  if (tc_gen_parse_graph(&c, v) || tc_gen_has_family(&c, TWINCACHE_FAMILY_FILE)) return -1;
  *(const char **)o->dst = v;
  return 0;
}

/* --mechanism SPEC: checked by the generator's own parser; kept as text. */
static int parse_mechanism(const char *v, const tc_opt *o) {
  tc_gen_config c;
  tc_gen_config_default(&c);
  if (tc_gen_parse_mechanism(&c, v)) return -1;
  *(const char **)o->dst = v;
  return 0;
}

static size_t bench_opts(uint64_t *graphs, int *level, int *encoding, int *json, const char **graph,
                         const char **mechanism, tc_opt *o) {
  const tc_opt t[] = {
      {.name = "--graphs", .meta = "N", .kind = TC_OPT_U64, .dst = graphs, .lo = 1, .hi = TC_GEN_MAX_GRAPHS,
       .help = "graphs per run (default {})"},
      {.name = "--zstd-level", .meta = "L", .kind = TC_OPT_INT, .dst = level, .lo = 1, .hi = 19,
       .def = "twincache-gen's default, 1", .help = "zstd level of the small encoding (default: {})"},
      {.name = "--encoding", .meta = "fast|small", .kind = TC_OPT_CHOICE, .dst = encoding,
       .choices = k_encodings, .def = "fast", .help = "frame encoding (default {})"},
      {.name = "--graph", .meta = "SPEC", .kind = TC_OPT_CUSTOM, .dst = graph, .parse = parse_graph,
       .def = "er", .expect = "a family or FAMILY:WEIGHT,... as twincache-gen takes (not file)",
       .help = "graph family or mixture (default {})"},
      {.name = "--mechanism", .meta = "SPEC", .kind = TC_OPT_CUSTOM, .dst = mechanism, .parse = parse_mechanism,
       .def = "linear", .expect = "a mechanism or NAME:WEIGHT,... as twincache-gen takes",
       .help = "mechanism or per-node mixture, at its defaults (default {})"},
      {.name = "--json", .kind = TC_OPT_SWITCH, .dst = json, .help = "one JSON object instead of the table"},
      {.name = "--help", .kind = TC_OPT_SWITCH, .help = "this text"},
  };
  memcpy(o, t, sizeof t);
  return sizeof t / sizeof t[0];
}

static void usage(FILE *f, const tc_opt *o, size_t n) {
  fprintf(f, "usage: twincache-gen-bench [--graphs N] [--zstd-level L] [--encoding fast|small] [--graph SPEC] [--mechanism SPEC] [--json]\n");
  tc_args_help(f, o, n, 19);
  fprintf(f,
          "Runs the default workload (5-10 nodes, ER p=0.3, 64 samples, do() on every node;\n"
          "--graph picks another family, --mechanism another mechanism, with their default options)\n"
          "with 1 and 2 threads in a temporary directory (under $TMPDIR or /tmp).\n"
          "Exit status: 0 ok, 1 the generator failed, 2 usage error.\n");
}

int main(int argc, char **argv) {
  uint64_t graphs = 200000;
  int json = 0, level = 0, encoding = TWINCACHE_ENCODING_FAST;
  const char *graph = "er";
  const char *mechanism = "linear";
  tc_opt opts[9]; /* >= the rows of bench_opts */
  tc_args_error e;
  size_t n_opts = bench_opts(&graphs, &level, &encoding, &json, &graph, &mechanism, opts);
  if (tc_args_parse(argc, argv, opts, n_opts, &e) != TC_ARGS_OK) {
    if (e.status == TC_ARGS_HELP) usage(stdout, opts, n_opts);
    return tc_args_report(stderr, "twincache-gen-bench", &e);
  }
  const char *tmp = getenv("TMPDIR");
  char dir[4096];
  tc_gen_result res[2];
  uint32_t thread_counts[2] = {1, 2};
  for (int run = 0; run < 2; run++) {
    snprintf(dir, sizeof dir, "%s/twincache-gen-bench-%d-%d", tmp && *tmp ? tmp : "/tmp", (int)getpid(), run);
    tc_gen_config c;
    tc_gen_config_default(&c);
    c.out_dir = dir;
    c.graphs = graphs;
    c.threads = thread_counts[run];
    c.quiet = 1;
    if (level) c.zstd_level = level;
    c.encoding = encoding;
    tc_gen_parse_mechanism(&c, mechanism); /* checked while parsing */
    tc_gen_parse_graph(&c, graph); /* checked while parsing */
    int rc = tc_gen_run(&c, NULL, &res[run]);
    bench_remove_cache_dir(dir);
    if (rc) {
      fprintf(stderr, "twincache-gen-bench: %s\n", twincache_last_error());
      return 1;
    }
  }
  if (json) {
    const tc_gen_result *r2 = &res[1];
    printf("{\"graph\":\"%s\",\"mechanism\":\"%s\",\"graphs_per_s\":%.1f,\"bytes_per_graph\":%.1f,\"raw_ratio\":%.4f,\"threads\":2,\"runs\":[",
           graph, mechanism, r2->graphs_new / r2->seconds, (double)r2->stats.frame_bytes / r2->graphs_total,
           (double)r2->stats.frame_bytes / r2->stats.raw_bytes);
    for (int run = 0; run < 2; run++) {
      const tc_gen_result *r = &res[run];
      printf("%s{\"threads\":%u,\"graphs\":%llu,\"seconds\":%.4f,\"graphs_per_s\":%.1f,"
             "\"mb_per_s\":%.2f,\"bytes_per_graph\":%.1f,\"raw_ratio\":%.4f,\"sample_s\":%.4f,"
             "\"encode_zstd_s\":%.4f,\"igraph_s\":%.4f,\"igraph_locked_s\":%.4f,\"wait_s\":%.4f,"
             "\"lmdb_s\":%.4f,\"writer_cpu_s\":%.4f,\"commits\":%llu,\"chunk_graphs\":%u}",
             run ? "," : "", thread_counts[run], (unsigned long long)r->graphs_total, r->seconds,
             r->graphs_new / r->seconds, r->stats.frame_bytes / 1e6 / r->seconds,
             (double)r->stats.frame_bytes / r->graphs_total,
             (double)r->stats.frame_bytes / r->stats.raw_bytes, r->sample_ns * 1e-9, r->encode_ns * 1e-9,
             r->igraph_ns * 1e-9, r->igraph_locked_ns * 1e-9, r->wait_ns * 1e-9, r->lmdb_ns * 1e-9,
             r->writer_cpu_ns * 1e-9, (unsigned long long)r->commits, r->chunk_graphs);
    }
    printf("]}\n");
    return 0;
  }
  printf("twincache-gen-bench: default workload, --graph %s --mechanism %s, %llu graphs per run, chunk %u graphs\n",
         graph, mechanism, (unsigned long long)graphs,
         res[0].chunk_graphs);
  printf("%-8s %10s %12s %8s %10s %9s | %9s %9s %9s %9s %9s %9s %9s\n", "threads", "seconds", "graphs/s",
         "MB/s", "B/graph", "raw ratio", "sample s", "enc+zstd", "igraph s", "locked s", "wait s",
         "lmdb s", "wr cpu s");
  for (int run = 0; run < 2; run++) {
    const tc_gen_result *r = &res[run];
    printf("%-8u %10.3f %12.0f %8.1f %10.1f %9.4f | %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f\n",
           thread_counts[run], r->seconds, r->graphs_new / r->seconds,
           r->stats.frame_bytes / 1e6 / r->seconds, (double)r->stats.frame_bytes / r->graphs_total,
           (double)r->stats.frame_bytes / r->stats.raw_bytes, r->sample_ns * 1e-9, r->encode_ns * 1e-9,
           r->igraph_ns * 1e-9, r->igraph_locked_ns * 1e-9, r->wait_ns * 1e-9, r->lmdb_ns * 1e-9,
           r->writer_cpu_ns * 1e-9);
  }
  printf("speed-up 2 threads / 1 thread: %.2fx   (targets: >= 20000 graphs/s on 1 thread, >= 1.8x, "
         "<= 0.30x raw)\n",
         (res[1].graphs_new / res[1].seconds) / (res[0].graphs_new / res[0].seconds));
  printf("sample/enc+zstd/igraph/wait are summed over worker threads; lmdb is the writer thread's\n"
         "puts + commits; igraph includes waiting for the lock, locked is time holding it.\n");
  return 0;
}
