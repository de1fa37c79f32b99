/* twincache-gen — build (or resume, or extend) a twincache cache.
 * Exit codes: 0 done, 1 runtime error, 2 usage error, 130 interrupted. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tc_args.h"
#include "tc_gen.h"

static volatile sig_atomic_t g_stop;
static void on_signal(int sig) {
  (void)sig;
  g_stop = 1;
}

/* Argv positions of the flags that pick a graph model (0 = not given). */
typedef struct model_seen {
  int graph, edge_prob, expected_degree, ba_m, ws_k, ws_p;
} model_seen;

static const char *const k_models[] = {"er", "ba", "ws", NULL};          /* enum tc_gen_model */
static const char *const k_mechanisms[] = {"linear", "mlp", NULL};      /* twincache_mechanism */
static const char *const k_encodings[] = {"fast", "small", NULL}; /* twincache_encoding */
static const char *const k_noises[] = {"gauss", "laplace", "uniform", NULL};
static const char *const k_interventions[] = {"do", "shift", NULL};     /* twincache_inter_kind */
static const char *const k_value_dists[] = {"uniform", "signed", NULL}; /* tc_gen_value_dist */

/* --targets all|K: 0 = every node. */
static int parse_targets(const char *v, const tc_opt *o) {
  if (!strcmp(v, "all")) {
    *(uint32_t *)o->dst = 0;
    return 0;
  }
  return tc_parse_u32_in(v, 1, TWINCACHE_MAX_INTER, (uint32_t *)o->dst);
}

enum { N_GEN_OPTS = 40 };

/* Every flag of twincache-gen, once: what it sets in *c, its range, its
 * --help line. The help's "{}" shows *c's value, so usage() passes the
 * defaults. Returns the number of entries written to o[N_GEN_OPTS]. */
static size_t gen_opts(tc_gen_config *c, model_seen *s, tc_opt *o) {
  const tc_opt t[] = {
      {.name = "--out", .meta = "DIR", .kind = TC_OPT_STRING, .dst = &c->out_dir,
       .help = "cache directory, created if missing (required)"},
      {.name = "--graphs", .meta = "N", .kind = TC_OPT_U64, .dst = &c->graphs, .hi = TC_GEN_MAX_GRAPHS,
       .help = "graphs in the cache (default {})"},
      {.name = "--seed", .meta = "S", .kind = TC_OPT_U64, .dst = &c->seed, .hi = UINT64_MAX,
       .help = "RNG seed; graph i depends only on (seed, i, options) (default {})"},
      {.name = "--threads", .meta = "T", .kind = TC_OPT_U32, .dst = &c->threads, .lo = 1, .hi = 1024,
       .help = "worker threads (default: online cores = {})"},
      {.name = "--nodes", .meta = "LO:HI", .kind = TC_OPT_U32_PAIR, .dst = &c->nodes_min,
       .dst2 = &c->nodes_max, .lo = 1, .hi = TWINCACHE_MAX_NODES,
       .help = "node count, uniform per graph (default {})"},
      {.name = "--samples", .meta = "S", .kind = TC_OPT_U32, .dst = &c->samples, .lo = 0,
       .hi = TWINCACHE_MAX_SAMPLES,
       .help = "samples per world, base and every twin; 0 = an SCM-only cache: the\n"
               "graphs, SCMs and interventions, no samples (load it with fresh worlds) (default {})"},
      {.help = "graph model (igraph, oriented acyclic along a random node order):"},
      {.name = "--graph", .meta = "er|ba|ws", .kind = TC_OPT_CHOICE, .dst = &c->model,
       .choices = k_models, .seen = &s->graph,
       .help = "Erdos-Renyi, Barabasi-Albert, Watts-Strogatz (default {})"},
      {.name = "--edge-prob", .meta = "P", .kind = TC_OPT_F64, .dst = &c->edge_prob, .fhi = 1,
       .seen = &s->edge_prob, .help = "ER edge probability (default {})"},
      {.name = "--expected-degree", .meta = "D", .kind = TC_OPT_F64, .dst = &c->expected_degree,
       .fhi = TWINCACHE_MAX_NODES, .open = TC_OPEN_LO, .seen = &s->expected_degree, .def = "off",
       .help = "ER: edge probability D/(n-1) instead of --edge-prob (default {})"},
      {.name = "--ba-m", .meta = "M", .kind = TC_OPT_U32, .dst = &c->ba_m, .lo = 1,
       .hi = TWINCACHE_MAX_NODES, .seen = &s->ba_m, .help = "BA edges per new node (default {})"},
      {.name = "--ws-k", .meta = "K", .kind = TC_OPT_U32, .dst = &c->ws_k, .lo = 1,
       .hi = TWINCACHE_MAX_NODES, .seen = &s->ws_k,
       .help = "WS ring neighbours on each side, 2K < nodes (default {})"},
      {.name = "--ws-p", .meta = "P", .kind = TC_OPT_F64, .dst = &c->ws_p, .fhi = 1, .seen = &s->ws_p,
       .help = "WS rewiring probability (default {})"},
      {.help = "mechanism and noise:"},
      {.name = "--mechanism", .meta = "linear|mlp", .kind = TC_OPT_CHOICE, .dst = &c->mechanism,
       .choices = k_mechanisms, .help = "linear SCM or random tanh MLP, additive noise (default {})"},
      {.name = "--weights", .meta = "LO:HI", .kind = TC_OPT_F64_PAIR, .dst = &c->weight_min,
       .dst2 = &c->weight_max, .fhi = 1e6, .open = TC_OPEN_HI,
       .help = "linear weights +-[LO,HI), random sign (default {})"},
      {.name = "--mlp-hidden", .meta = "H", .kind = TC_OPT_U32, .dst = &c->mlp_hidden, .lo = 1,
       .hi = TWINCACHE_MAX_HIDDEN, .help = "MLP hidden units (default {})"},
      {.name = "--noise", .meta = "gauss|laplace|uniform", .kind = TC_OPT_CHOICE, .dst = &c->noise,
       .choices = k_noises, .help = "standard N(0,1), Laplace(0,1), U[-1,1) (default {})"},
      {.name = "--noise-scale", .meta = "LO:HI", .kind = TC_OPT_F64_PAIR, .dst = &c->noise_scale_min,
       .dst2 = &c->noise_scale_max, .fhi = 1e6, .open = TC_OPEN_HI,
       .help = "per-node noise scale, uniform (default {})"},
      {.name = "--standardize", .kind = TC_OPT_SWITCH, .dst = &c->standardize,
       .help = "standardise every world by the base world's per-node\n"
               "mean/std; DO values are then in standard units (default {})"},
      {.help = "interventions (one twin world each, sharing the base world's noise):"},
      {.name = "--intervention", .meta = "do|shift", .kind = TC_OPT_CHOICE, .dst = &c->intervention,
       .choices = k_interventions, .help = "perfect do(X=v) or additive shift X += v (default {})"},
      {.name = "--targets", .meta = "all|K", .kind = TC_OPT_CUSTOM, .dst = &c->targets,
       .parse = parse_targets, .expect = "all or an integer in [1, 256]", .def = "all",
       .help = "every node, or K distinct random nodes (default {})"},
      {.name = "--values", .meta = "LO:HI", .kind = TC_OPT_F64_PAIR, .dst = &c->value_min,
       .dst2 = &c->value_max, .flo = -1e6, .fhi = 1e6, .open = TC_OPEN_LO | TC_OPEN_HI,
       .help = "intervention values (default {})"},
      {.name = "--value-dist", .meta = "uniform|signed", .kind = TC_OPT_CHOICE, .dst = &c->value_dist,
       .choices = k_value_dists,
       .help = "v in [LO,HI), or +-[LO,HI) with random sign (default {})"},
      {.help = "storage:"},
      {.name = "--zstd-level", .meta = "L", .kind = TC_OPT_INT, .dst = &c->zstd_level, .lo = 1, .hi = 19,
       .help = "zstd level 1..19 of the small encoding (default {})"},
      {.name = "--encoding", .meta = "fast|small", .kind = TC_OPT_CHOICE, .dst = &c->encoding,
       .choices = k_encodings,
       .help = "frames that decode ~6x faster (raw literals), or ~7% smaller\n"
               "(entropy-coded at --zstd-level) (default {})"},
      {.name = "--chunk-graphs", .meta = "C", .kind = TC_OPT_U32, .dst = &c->chunk_graphs, .lo = 1,
       .hi = TWINCACHE_MAX_CHUNK_GRAPHS,
       .help = "graphs per LMDB record (default: ~1 MiB records, {} here)"},
      {.name = "--map-size", .meta = "BYTES", .kind = TC_OPT_U64, .dst = &c->map_size_bytes,
       .lo = TC_GEN_MIN_MAP_BYTES, .hi = TC_GEN_MAX_MAP_BYTES,
       .help = "initial LMDB map size; doubles when full (default {})"},
      {.help = "output:"},
      {.name = "--quiet", .kind = TC_OPT_SWITCH, .dst = &c->quiet, .help = "no progress line, no summary"},
      {.name = "--help", .kind = TC_OPT_SWITCH, .help = "this text"},
  };
  size_t n = sizeof t / sizeof t[0];
  _Static_assert(sizeof t / sizeof t[0] <= N_GEN_OPTS, "N_GEN_OPTS too small");
  memcpy(o, t, sizeof t);
  return n;
}

static void usage(FILE *f) {
  tc_gen_config d;
  model_seen s;
  tc_opt o[N_GEN_OPTS];
  tc_gen_config_default(&d);
  d.chunk_graphs = tc_gen_chunk_graphs(&d); /* shown as "~1 MiB records, C here" */
  size_t n = gen_opts(&d, &s, o);
  fprintf(f,
          "usage: twincache-gen --out DIR [options]\n"
          "Builds a zstd-compressed LMDB cache of random causal graphs with twin-world\n"
          "interventional samples. Rerunning the same command resumes an interrupted run;\n"
          "a larger --graphs extends a cache built with the same options.\n"
          "\n");
  tc_args_help(f, o, n, 26);
  fprintf(f,
          "exit status: 0 done (or nothing to do), 1 runtime error (cache of another\n"
          "config, damaged, disk full, I/O), 2 usage error (one line naming the flag; nothing\n"
          "is created), 130 interrupted (rerun the same command to resume).\n");
}

/* The \r progress line on stderr (a terminal), redrawn at every report. */
static void print_progress(const tc_gen_progress *p, void *user) {
  (void)user;
  double rate = p->seconds > 0 ? p->graphs_new / p->seconds : 0.0;
  double eta = rate > 0 ? (double)(p->target - (p->done < p->target ? p->done : p->target)) / rate : 0.0;
  double ratio = p->raw_bytes ? (double)p->frame_bytes / p->raw_bytes : 0.0;
  fprintf(stderr, "\r%llu/%llu graphs  %.0f graphs/s  %.1f MB  %.3fx raw  ETA %.0fs   %s",
          (unsigned long long)p->done, (unsigned long long)p->target, rate, p->frame_bytes / 1e6, ratio, eta,
          p->final ? "\n" : "");
  fflush(stderr);
}

/* The one stderr line of a parse error; returns the exit status. */
static int report(const tc_args_error *e) {
  if (e->status == TC_ARGS_HELP) usage(stdout);
  return tc_args_report(stderr, "twincache-gen", e);
}

/* A model-specific flag (--ba-m ...) alone picks its model; with a --graph
 * of another model it is an error. The last such flag given wins. */
static int resolve_model(tc_gen_config *c, const model_seen *s) {
  struct { int pos, model; const char *name; } f[] = {
      {s->edge_prob, TC_MODEL_ER, "--edge-prob"}, {s->expected_degree, TC_MODEL_ER, "--expected-degree"},
      {s->ba_m, TC_MODEL_BA, "--ba-m"},           {s->ws_k, TC_MODEL_WS, "--ws-k"},
      {s->ws_p, TC_MODEL_WS, "--ws-p"}};
  int last = -1;
  for (int k = 0; k < 5; k++)
    if (f[k].pos && (last < 0 || f[k].pos > f[last].pos)) last = k;
  if (last < 0) return 0;
  if (s->graph && f[last].model != c->model) {
    fprintf(stderr, "twincache-gen: %s does not apply to --graph %s (see --help)\n", f[last].name,
            k_models[c->model]);
    return 2;
  }
  c->model = f[last].model;
  return 0;
}

int main(int argc, char **argv) {
  tc_gen_config c;
  model_seen seen;
  tc_opt opts[N_GEN_OPTS];
  tc_args_error err;
  tc_gen_config_default(&c);
  memset(&seen, 0, sizeof seen);
  size_t n_opts = gen_opts(&c, &seen, opts);
  if (tc_args_parse(argc, argv, opts, n_opts, &err) != TC_ARGS_OK) return report(&err);
  if (!c.out_dir) {
    fprintf(stderr, "twincache-gen: --out DIR is required (see --help)\n");
    return 2;
  }
  if (resolve_model(&c, &seen)) return 2;
  const char *flag;
  if (tc_gen_config_check(&c, &flag)) {
    fprintf(stderr, "twincache-gen: invalid value for %s (see --help)\n", flag);
    return 2;
  }
  if (!c.quiet && isatty(STDERR_FILENO)) c.on_progress = print_progress;

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);

  tc_gen_result r;
  int rc = tc_gen_run(&c, &g_stop, &r);
  if (rc) {
    fprintf(stderr, "twincache-gen: %s\n", twincache_last_error());
    return 1;
  }
  if (r.interrupted) {
    fprintf(stderr,
            "twincache-gen: interrupted; %llu of %llu graphs committed to %s. Rerun the same "
            "command to resume.\n",
            (unsigned long long)r.graphs_total, (unsigned long long)c.graphs, c.out_dir);
    return 130;
  }
  if (!c.quiet) {
    if (r.graphs_total > c.graphs) {
      fprintf(stderr, "twincache-gen: %s already holds %llu graphs (asked for %llu); nothing to do\n",
              c.out_dir, (unsigned long long)r.graphs_total, (unsigned long long)c.graphs);
    } else {
      double ratio = r.stats.raw_bytes ? (double)r.stats.frame_bytes / r.stats.raw_bytes : 0.0;
      fprintf(stderr,
              "twincache-gen: %llu graphs (%llu new%s) in %.2f s, %.0f graphs/s, %.1f MB, "
              "%.3fx raw float32 -> %s\n",
              (unsigned long long)r.graphs_total, (unsigned long long)r.graphs_new,
              r.resumed_from ? ", resumed" : "", r.seconds,
              r.seconds > 0 ? r.graphs_new / r.seconds : 0.0, r.stats.frame_bytes / 1e6, ratio,
              c.out_dir);
    }
  }
  return 0;
}
