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

/* Argv positions of the flags that pick a graph family (0 = not given). */
typedef struct model_seen {
  int nodes, graph, edge_prob, expected_degree, ba_m, ws_k, ws_p, sbm_blocks, sbm_p_in, sbm_p_out, rgg_radius,
      graph_file;
} model_seen;

static const char *const k_encodings[] = {"fast", "small", NULL}; /* twincache_encoding */
static const char *const k_value_dists[] = {"uniform", "signed", NULL}; /* tc_gen_value_dist */

/* --graph FAMILY or FAMILY:W,FAMILY:W,...: o->dst is the whole config. */
static int parse_graph(const char *v, const tc_opt *o) {
  return tc_gen_parse_graph((tc_gen_config *)o->dst, v) ? -1 : 0;
}

static int parse_mechanism(const char *v, const tc_opt *o) {
  return tc_gen_parse_mechanism((tc_gen_config *)o->dst, v) ? -1 : 0;
}

/* --targets all|none|K: 0 = every node, TC_GEN_TARGETS_NONE = no twin world. */
static int parse_targets(const char *v, const tc_opt *o) {
  if (!strcmp(v, "all") || !strcmp(v, "none")) {
    *(uint32_t *)o->dst = v[0] == 'a' ? 0 : TC_GEN_TARGETS_NONE;
    return 0;
  }
  return tc_parse_u32_in(v, 1, TWINCACHE_MAX_INTER, (uint32_t *)o->dst);
}

enum { N_GEN_OPTS = 52 };

/* "a|b|c": the names of a choice from the format's one table (formats/names.c),
 * for --help. Joined once per process into buf. */
static const char *choice_meta(int choice, char *buf, size_t cap) {
  if (buf[0]) return buf;
  size_t used = 0;
  for (const char *const *s = twincache_choice_names(choice); s && *s; s++) {
    int w = snprintf(buf + used, cap - used, "%s%s", used ? "|" : "", *s);
    if (w < 0 || (size_t)w >= cap - used) break;
    used += (size_t)w;
  }
  return buf;
}
static char g_meta_family[64], g_meta_mech[64], g_meta_noise[64], g_meta_kind[64];

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
       .dst2 = &c->nodes_max, .lo = 1, .hi = TWINCACHE_MAX_NODES, .seen = &s->nodes,
       .help = "node count, uniform per graph (default {})"},
      {.name = "--samples", .meta = "S", .kind = TC_OPT_U32, .dst = &c->samples, .lo = 0,
       .hi = TWINCACHE_MAX_SAMPLES,
       .help = "samples per world, base and every twin; 0 = an SCM-only cache: the\n"
               "graphs, SCMs and interventions, no samples (load it with fresh worlds) (default {})"},
      {.help = "graph model (igraph, oriented acyclic along a random node order):"},
      {.name = "--graph", .meta = choice_meta(TWINCACHE_CHOICE_FAMILY, g_meta_family, sizeof g_meta_family),
       .kind = TC_OPT_CUSTOM, .dst = c, .parse = parse_graph, .seen = &s->graph, .def = "er",
       .expect = "a family or a mixture FAMILY:WEIGHT,... (e.g. er:0.5,sf:0.3,sbm:0.2)",
       .help = "Erdos-Renyi, Barabasi-Albert, Watts-Strogatz, scale-free\n"
               "(power-law in-degree), stochastic block model, random\n"
               "geometric, a fixed DAG (--graph-file); or a mixture\n"
               "FAMILY:WEIGHT,... drawn per graph (default {})"},
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
      {.name = "--sbm-blocks", .meta = "B", .kind = TC_OPT_U32, .dst = &c->sbm_blocks, .lo = 1,
       .hi = TWINCACHE_MAX_NODES, .seen = &s->sbm_blocks, .help = "SBM blocks, equal sizes (default {})"},
      {.name = "--sbm-p-in", .meta = "P", .kind = TC_OPT_F64, .dst = &c->sbm_p_in, .fhi = 1,
       .seen = &s->sbm_p_in, .help = "SBM edge probability inside a block (default {})"},
      {.name = "--sbm-p-out", .meta = "P", .kind = TC_OPT_F64, .dst = &c->sbm_p_out, .fhi = 1,
       .seen = &s->sbm_p_out, .help = "SBM edge probability between blocks (default {})"},
      {.name = "--rgg-radius", .meta = "R", .kind = TC_OPT_F64, .dst = &c->rgg_radius, .fhi = 1.5,
       .seen = &s->rgg_radius, .help = "RGG radius in the unit square (default {})"},
      {.name = "--graph-file", .meta = "PATH", .kind = TC_OPT_STRING, .dst = &c->graph_file,
       .seen = &s->graph_file, .def = "none",
       .help = "edge list 'FROM TO' per line of a fixed DAG (--graph file;\n"
               "sets --nodes) (default {})"},
      {.help = "mechanism and noise:"},
      {.name = "--mechanism", .meta = choice_meta(TWINCACHE_CHOICE_MECHANISM, g_meta_mech, sizeof g_meta_mech),
       .kind = TC_OPT_CUSTOM, .dst = c, .parse = parse_mechanism, .def = "linear",
       .expect = "a mechanism or a per-node mixture NAME:WEIGHT,... (e.g. linear:0.5,mlp:0.3,rff:0.2)",
       .help = "linear SCM, random tanh MLP, random Fourier features (a GP\n"
               "draw), additive sigmoids or additive clamped quadratics of\n"
               "the parents, or a per-node mixture NAME:W,...; additive\n"
               "noise (default {})"},
      {.name = "--weights", .meta = "LO:HI", .kind = TC_OPT_F64_PAIR, .dst = &c->weight_min,
       .dst2 = &c->weight_max, .fhi = 1e6, .open = TC_OPEN_HI,
       .help = "linear weights +-[LO,HI), random sign (default {})"},
      {.name = "--mlp-hidden", .meta = "H", .kind = TC_OPT_U32, .dst = &c->mlp_hidden, .lo = 1,
       .hi = TWINCACHE_MAX_HIDDEN, .help = "MLP hidden units (default {})"},
      {.name = "--mlp-scale", .meta = "A", .kind = TC_OPT_F64, .dst = &c->mlp_scale, .fhi = 1000,
       .open = TC_OPEN_LO, .help = "MLP nonlinearity: input weights ~N(0,A^2/|pa|); small A\n"
                                   "is nearly linear (default {})"},
      {.name = "--mlp-bias", .meta = "B", .kind = TC_OPT_F64, .dst = &c->mlp_bias, .fhi = 1000,
       .help = "MLP kink spread: biases ~N(0,(B*A)^2), so unit h's kink\n"
               "lies ~N(0,B^2) parent std devs from the centre (default {})"},
      {.name = "--mlp-bump", .meta = "W", .kind = TC_OPT_F64, .dst = &c->mlp_bump, .fhi = 1000,
       .help = "MLP bumps: W > 0 pairs the units into bumps W parent std\n"
               "devs wide (same input row, kink W*A further, opposite\n"
               "output weight); 0 = independent units (default {})"},
      {.name = "--mlp-gain", .meta = "G", .kind = TC_OPT_F64, .dst = &c->mlp_gain, .fhi = 1000,
       .open = TC_OPEN_LO, .help = "MLP output weights ~N(0,G^2/H): the mechanism's size\n"
                                   "against the noise (default {})"},
      {.name = "--rff-features", .meta = "M", .kind = TC_OPT_U32, .dst = &c->rff_features, .lo = 1,
       .hi = TWINCACHE_MAX_HIDDEN, .help = "RFF: random Fourier features per node (default {})"},
      {.name = "--rff-length", .meta = "L", .kind = TC_OPT_F64, .dst = &c->rff_lengthscale, .flo = 1e-3,
       .fhi = 1000, .help = "RFF: the GP's RBF length scale; frequencies ~N(0,1/L^2)\n"
                            "(default {})"},
      {.name = "--noise", .meta = choice_meta(TWINCACHE_CHOICE_NOISE, g_meta_noise, sizeof g_meta_noise),
       .kind = TC_OPT_CHOICE, .dst = &c->noise, .choices = twincache_choice_names(TWINCACHE_CHOICE_NOISE),
       .help = "standard N(0,1), Laplace(0,1), U[-1,1), Cauchy(0,1),\n"
               "Gumbel(0,1) (default {})"},
      {.name = "--hetero", .meta = "V", .kind = TC_OPT_F64, .dst = &c->hetero, .fhi = 100,
       .help = "heteroscedastic noise: node j's noise scale times\n"
               "1+tanh((c_j + v.x_pa)/2), v ~N(0,V^2/|pa|), c ~U[-1/2,1/2);\n"
               "0 = off (default {})"},
      {.name = "--noise-scale", .meta = "LO:HI", .kind = TC_OPT_F64_PAIR, .dst = &c->noise_scale_min,
       .dst2 = &c->noise_scale_max, .fhi = 1e6, .open = TC_OPEN_HI,
       .help = "per-node noise scale, uniform (default {})"},
      {.name = "--standardize", .kind = TC_OPT_SWITCH, .dst = &c->standardize,
       .help = "standardise every world by the base world's per-node\n"
               "mean/std; DO values are then in standard units (default {})"},
      {.name = "--iscm", .kind = TC_OPT_SWITCH, .dst = &c->iscm,
       .help = "internally standardised SCM (iSCM): each node standardised as it\n"
               "is generated (base world's mean/std), its children read that;\n"
               "twin worlds use the same maps (default {})"},
      {.help = "interventions (one twin world each, sharing the base world's noise):"},
      {.name = "--intervention", .meta = choice_meta(TWINCACHE_CHOICE_INTER_KIND, g_meta_kind, sizeof g_meta_kind),
       .kind = TC_OPT_CHOICE, .dst = &c->intervention, .choices = twincache_choice_names(TWINCACHE_CHOICE_INTER_KIND), .help = "perfect do(X=v), additive shift X += v, noise: X's noise term times v, or soft: X's mechanism redrawn (default {})"},
      {.name = "--targets", .meta = "all|none|K", .kind = TC_OPT_CUSTOM, .dst = &c->targets,
       .parse = parse_targets, .expect = "all, none or an integer in [1, 256]", .def = "all",
       .help = "every node, none (observational only: no twin world), or K distinct random "
               "nodes (default {})"},
      {.name = "--targets-per-world", .meta = "LO:HI", .kind = TC_OPT_U32_PAIR, .dst = &c->targets_per_world_min,
       .dst2 = &c->targets_per_world_max, .lo = 1, .hi = TWINCACHE_MAX_TARGETS,
       .help = "nodes one world intervenes on at once, uniform per world (its target and more "
               "random distinct nodes; the changed set is the union of their descendants) (default {})"},
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
          "exit status: 0 done (or nothing to do), 1 runtime error (damaged cache, disk\n"
          "full, I/O), 2 usage error (one line naming the flag; nothing is created), 3 the\n"
          "cache was built with other options (the line names them; nothing is changed),\n"
          "130 interrupted (rerun the same command to resume).\n");
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

/* A family-specific flag (--ba-m ...) alone picks its family (the first
 * it applies to); with a --graph that has none of its families it is an
 * error. The last such flag given wins. */
static int resolve_model(tc_gen_config *c, const model_seen *s) {
#define FB(f) (1u << (f))
  struct { int pos; unsigned families; const char *name; } f[] = {
      {s->edge_prob, FB(TWINCACHE_FAMILY_ER), "--edge-prob"},
      {s->expected_degree, FB(TWINCACHE_FAMILY_ER), "--expected-degree"},
      {s->ba_m, FB(TWINCACHE_FAMILY_BA) | FB(TWINCACHE_FAMILY_SF), "--ba-m"},
      {s->ws_k, FB(TWINCACHE_FAMILY_WS), "--ws-k"},
      {s->ws_p, FB(TWINCACHE_FAMILY_WS), "--ws-p"},
      {s->sbm_blocks, FB(TWINCACHE_FAMILY_SBM), "--sbm-blocks"},
      {s->sbm_p_in, FB(TWINCACHE_FAMILY_SBM), "--sbm-p-in"},
      {s->sbm_p_out, FB(TWINCACHE_FAMILY_SBM), "--sbm-p-out"},
      {s->rgg_radius, FB(TWINCACHE_FAMILY_RGG), "--rgg-radius"},
      {s->graph_file, FB(TWINCACHE_FAMILY_FILE), "--graph-file"}};
  const int nf = (int)(sizeof f / sizeof f[0]);
  unsigned mix = 0;
  for (uint32_t k = 0; k < c->n_families; k++) mix |= FB(c->families[k]);
#undef FB
  int last = -1;
  for (int k = 0; k < nf; k++) {
    if (!f[k].pos) continue;
    if (s->graph && !(f[k].families & mix)) {
      fprintf(stderr, "twincache-gen: %s does not apply to the --graph given (see --help)\n", f[k].name);
      return 2;
    }
    if (last < 0 || f[k].pos > f[last].pos) last = k;
  }
  if (last < 0 || s->graph) return 0;
  int first = 0;
  while (!(f[last].families & (1u << first))) first++;
  c->n_families = 1;
  c->families[0] = (uint8_t)first;
  c->family_weights[0] = 1.0;
  return 0;
}

/* --graph file: reads the edge list once and fixes --nodes to its node count
 * (an explicit different --nodes is refused by the config check). */
static int load_graph_file(tc_gen_config *c, int nodes_given) {
  if (!tc_gen_has_family(c, TWINCACHE_FAMILY_FILE)) return 0;
  if (!c->graph_file) {
    fprintf(stderr, "twincache-gen: --graph file needs --graph-file PATH (see --help)\n");
    return 2;
  }
  tc_gen_dag_file *f;
  if (tc_gen_dag_file_load(c->graph_file, &f)) {
    fprintf(stderr, "twincache-gen: %s\n", twincache_last_error());
    return 2;
  }
  c->dag_file = f;
  if (!nodes_given) c->nodes_min = c->nodes_max = f->n;
  return 0;
}

static int run(tc_gen_config *cfg);

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
  if (load_graph_file(&c, seen.nodes)) return 2;
  int status = run(&c);
  tc_gen_dag_file_free((tc_gen_dag_file *)c.dag_file);
  return status;
}

/* Checks the options and runs the generator; returns the exit status. */
static int run(tc_gen_config *cfg) {
  tc_gen_config c = *cfg;
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
    return rc == TWINCACHE_EMISMATCH ? 3 : 1; /* 3: callers tell "other options" apart by it */
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
