/* twincache-gen — build (or resume, or extend) a twincache cache.
 * Exit codes: 0 done, 1 runtime error, 2 usage error, 130 interrupted. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tc_gen.h"

static volatile sig_atomic_t g_stop;
static void on_signal(int sig) {
  (void)sig;
  g_stop = 1;
}

static void usage(FILE *f) {
  tc_gen_config d;
  tc_gen_config_default(&d);
  fprintf(f,
          "usage: twincache-gen --out DIR [options]\n"
          "Builds a zstd-compressed LMDB cache of random causal graphs with twin-world\n"
          "interventional samples. Rerunning the same command resumes an interrupted run;\n"
          "a larger --graphs extends a cache built with the same options.\n"
          "\n"
          "  --out DIR               cache directory, created if missing (required)\n"
          "  --graphs N              graphs in the cache (default %llu)\n"
          "  --seed S                RNG seed; graph i depends only on (seed, i, options) (default 0)\n"
          "  --threads T             worker threads (default: online cores = %u)\n"
          "  --nodes LO:HI           node count, uniform per graph (default 5:10)\n"
          "  --samples S             samples per world, base and every twin (default 64)\n"
          "graph model (igraph, oriented acyclic along a random node order):\n"
          "  --graph er|ba|ws        Erdos-Renyi, Barabasi-Albert, Watts-Strogatz (default er)\n"
          "  --edge-prob P           ER edge probability (default 0.3)\n"
          "  --expected-degree D     ER: edge probability D/(n-1) instead of --edge-prob (default off)\n"
          "  --ba-m M                BA edges per new node (default 2)\n"
          "  --ws-k K                WS ring neighbours on each side, 2K < nodes (default 2)\n"
          "  --ws-p P                WS rewiring probability (default 0.1)\n"
          "mechanism and noise:\n"
          "  --mechanism linear|mlp  linear SCM or random tanh MLP, additive noise (default linear)\n"
          "  --weights LO:HI         linear weights +-[LO,HI), random sign (default 0.5:2)\n"
          "  --mlp-hidden H          MLP hidden units (default 8)\n"
          "  --noise gauss|laplace|uniform  standard N(0,1), Laplace(0,1), U[-1,1) (default gauss)\n"
          "  --noise-scale LO:HI     per-node noise scale, uniform (default 0.5:1.5)\n"
          "  --standardize           standardise every world by the base world's per-node\n"
          "                          mean/std; DO values are then in standard units (default off)\n"
          "interventions (one twin world each, sharing the base world's noise):\n"
          "  --intervention do|shift perfect do(X=v) or additive shift X += v (default do)\n"
          "  --targets all|K         every node, or K distinct random nodes (default all)\n"
          "  --values LO:HI          intervention values (default 1:3)\n"
          "  --value-dist uniform|signed  v in [LO,HI), or +-[LO,HI) with random sign (default signed)\n"
          "storage:\n"
          "  --zstd-level L          zstd level 1..19 (default 1)\n"
          "  --chunk-graphs C        graphs per LMDB record (default: ~1 MiB records, %u here)\n"
          "  --map-size BYTES        initial LMDB map size; doubles when full (default %llu)\n"
          "output:\n"
          "  --quiet                 no progress line, no summary\n"
          "  --help                  this text\n",
          (unsigned long long)d.graphs, d.threads, tc_gen_chunk_graphs(&d),
          (unsigned long long)d.map_size_bytes);
}

static int bad(const char *flag, const char *val) {
  if (val) fprintf(stderr, "twincache-gen: invalid value '%s' for %s (see --help)\n", val, flag);
  else fprintf(stderr, "twincache-gen: %s (see --help)\n", flag);
  return 2;
}

static int parse_u64(const char *s, uint64_t *v) {
  char *end;
  if (!s || !*s || *s == '-') return -1;
  errno = 0;
  unsigned long long x = strtoull(s, &end, 10);
  if (errno || *end) return -1;
  *v = x;
  return 0;
}
static int parse_u32(const char *s, uint32_t *v) {
  uint64_t x;
  if (parse_u64(s, &x) || x > 0xffffffffull) return -1;
  *v = (uint32_t)x;
  return 0;
}
static int parse_f64(const char *s, double *v) {
  char *end;
  if (!s || !*s) return -1;
  errno = 0;
  double x = strtod(s, &end);
  if (errno || *end || x != x) return -1;
  *v = x;
  return 0;
}
static int parse_range_f64(const char *s, double *lo, double *hi) {
  const char *colon = s ? strchr(s, ':') : NULL;
  char a[64];
  if (!colon || (size_t)(colon - s) >= sizeof a) return -1;
  memcpy(a, s, (size_t)(colon - s));
  a[colon - s] = 0;
  if (parse_f64(a, lo) || parse_f64(colon + 1, hi) || *hi < *lo) return -1;
  return 0;
}
static int parse_range_u32(const char *s, uint32_t *lo, uint32_t *hi) {
  const char *colon = s ? strchr(s, ':') : NULL;
  char a[64];
  if (!colon || (size_t)(colon - s) >= sizeof a) return -1;
  memcpy(a, s, (size_t)(colon - s));
  a[colon - s] = 0;
  if (parse_u32(a, lo) || parse_u32(colon + 1, hi) || *hi < *lo) return -1;
  return 0;
}

int main(int argc, char **argv) {
  tc_gen_config c;
  tc_gen_config_default(&c);
  int graph_set = 0, model_flag = -1;
  const char *model_flag_name = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 0;
    }
    if (!strcmp(a, "--quiet")) {
      c.quiet = 1;
      continue;
    }
    if (!strcmp(a, "--standardize")) {
      c.standardize = 1;
      continue;
    }
    if (strncmp(a, "--", 2) != 0) {
      fprintf(stderr, "twincache-gen: unexpected argument '%s' (see --help)\n", a);
      return 2;
    }
    /* every other flag takes a value: --flag V or --flag=V */
    const char *v = NULL;
    char name[64];
    const char *eq = strchr(a, '=');
    if (eq && (size_t)(eq - a) < sizeof name) {
      memcpy(name, a, (size_t)(eq - a));
      name[eq - a] = 0;
      v = eq + 1;
    } else {
      snprintf(name, sizeof name, "%s", a);
    }
    static const char *known[] = {"--out", "--graphs", "--seed", "--threads", "--nodes", "--samples",
                                  "--graph", "--edge-prob", "--expected-degree", "--ba-m", "--ws-k",
                                  "--ws-p", "--mechanism", "--weights", "--mlp-hidden", "--noise",
                                  "--noise-scale", "--intervention", "--targets", "--values",
                                  "--value-dist", "--zstd-level", "--chunk-graphs", "--map-size", NULL};
    int ok = 0;
    for (int k = 0; known[k]; k++) ok |= !strcmp(name, known[k]);
    if (!ok) {
      fprintf(stderr, "twincache-gen: unknown flag %s (see --help)\n", name);
      return 2;
    }
    if (!v) {
      if (i + 1 >= argc) {
        fprintf(stderr, "twincache-gen: %s needs a value (see --help)\n", name);
        return 2;
      }
      v = argv[++i];
    }
    int e = 0;
    if (!strcmp(name, "--out")) {
      if (!*v) e = -1;
      c.out_dir = v;
    } else if (!strcmp(name, "--graphs")) e = parse_u64(v, &c.graphs);
    else if (!strcmp(name, "--seed")) e = parse_u64(v, &c.seed);
    else if (!strcmp(name, "--threads")) e = parse_u32(v, &c.threads) || c.threads < 1 || c.threads > 1024;
    else if (!strcmp(name, "--nodes")) {
      e = parse_range_u32(v, &c.nodes_min, &c.nodes_max);
      if (!e && (c.nodes_min < 1 || c.nodes_max > TWINCACHE_MAX_NODES)) e = -1;
    } else if (!strcmp(name, "--samples")) e = parse_u32(v, &c.samples) || c.samples < 1 || c.samples > TWINCACHE_MAX_SAMPLES;
    else if (!strcmp(name, "--graph")) {
      graph_set = 1;
      if (!strcmp(v, "er")) c.model = TC_MODEL_ER;
      else if (!strcmp(v, "ba")) c.model = TC_MODEL_BA;
      else if (!strcmp(v, "ws")) c.model = TC_MODEL_WS;
      else e = -1;
    } else if (!strcmp(name, "--edge-prob")) {
      e = parse_f64(v, &c.edge_prob) || c.edge_prob < 0 || c.edge_prob > 1;
      model_flag = TC_MODEL_ER, model_flag_name = "--edge-prob";
    } else if (!strcmp(name, "--expected-degree")) {
      e = parse_f64(v, &c.expected_degree) || c.expected_degree <= 0 || c.expected_degree > TWINCACHE_MAX_NODES;
      model_flag = TC_MODEL_ER, model_flag_name = "--expected-degree";
    } else if (!strcmp(name, "--ba-m")) {
      e = parse_u32(v, &c.ba_m) || c.ba_m < 1 || c.ba_m > TWINCACHE_MAX_NODES;
      model_flag = TC_MODEL_BA, model_flag_name = "--ba-m";
    } else if (!strcmp(name, "--ws-k")) {
      e = parse_u32(v, &c.ws_k) || c.ws_k < 1 || c.ws_k > TWINCACHE_MAX_NODES;
      model_flag = TC_MODEL_WS, model_flag_name = "--ws-k";
    } else if (!strcmp(name, "--ws-p")) {
      e = parse_f64(v, &c.ws_p) || c.ws_p < 0 || c.ws_p > 1;
      model_flag = TC_MODEL_WS, model_flag_name = "--ws-p";
    } else if (!strcmp(name, "--mechanism")) {
      if (!strcmp(v, "linear")) c.mechanism = TWINCACHE_MECH_LINEAR;
      else if (!strcmp(v, "mlp")) c.mechanism = TWINCACHE_MECH_MLP;
      else e = -1;
    } else if (!strcmp(name, "--weights")) e = parse_range_f64(v, &c.weight_min, &c.weight_max) || c.weight_min < 0;
    else if (!strcmp(name, "--mlp-hidden")) e = parse_u32(v, &c.mlp_hidden) || c.mlp_hidden < 1 || c.mlp_hidden > TWINCACHE_MAX_HIDDEN;
    else if (!strcmp(name, "--noise")) {
      if (!strcmp(v, "gauss")) c.noise = TWINCACHE_NOISE_GAUSS;
      else if (!strcmp(v, "laplace")) c.noise = TWINCACHE_NOISE_LAPLACE;
      else if (!strcmp(v, "uniform")) c.noise = TWINCACHE_NOISE_UNIFORM;
      else e = -1;
    } else if (!strcmp(name, "--noise-scale")) e = parse_range_f64(v, &c.noise_scale_min, &c.noise_scale_max) || c.noise_scale_min < 0;
    else if (!strcmp(name, "--intervention")) {
      if (!strcmp(v, "do")) c.intervention = TWINCACHE_DO;
      else if (!strcmp(v, "shift")) c.intervention = TWINCACHE_SHIFT;
      else e = -1;
    } else if (!strcmp(name, "--targets")) {
      if (!strcmp(v, "all")) c.targets = 0;
      else e = parse_u32(v, &c.targets) || c.targets < 1 || c.targets > TWINCACHE_MAX_INTER;
    } else if (!strcmp(name, "--values")) e = parse_range_f64(v, &c.value_min, &c.value_max);
    else if (!strcmp(name, "--value-dist")) {
      if (!strcmp(v, "uniform")) c.value_dist = TC_VALUES_UNIFORM;
      else if (!strcmp(v, "signed")) c.value_dist = TC_VALUES_SIGNED;
      else e = -1;
    } else if (!strcmp(name, "--zstd-level")) {
      uint32_t l;
      e = parse_u32(v, &l) || l < 1 || l > 19;
      c.zstd_level = (int)l;
    } else if (!strcmp(name, "--chunk-graphs")) e = parse_u32(v, &c.chunk_graphs) || c.chunk_graphs < 1 || c.chunk_graphs > TWINCACHE_MAX_CHUNK_GRAPHS;
    else if (!strcmp(name, "--map-size")) e = parse_u64(v, &c.map_size_bytes) || c.map_size_bytes < 65536;
    if (e) return bad(name, v);
  }
  if (!c.out_dir) return bad("--out DIR is required", NULL);
  if (model_flag >= 0 && graph_set && model_flag != c.model) {
    fprintf(stderr, "twincache-gen: %s does not apply to --graph %s (see --help)\n", model_flag_name,
            c.model == TC_MODEL_BA ? "ba" : c.model == TC_MODEL_WS ? "ws" : "er");
    return 2;
  }
  if (model_flag >= 0 && !graph_set) c.model = model_flag; /* --ba-m alone means --graph ba */
  const char *flag;
  if (tc_gen_config_check(&c, &flag)) {
    fprintf(stderr, "twincache-gen: invalid value for %s (see --help)\n", flag);
    return 2;
  }
  c.progress = !c.quiet && isatty(STDERR_FILENO);

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);

  tc_gen_result r;
  int rc = tc_gen_run(&c, &g_stop, &r);
  if (rc) {
    fprintf(stderr, "twincache-gen: %s\n", r.message[0] ? r.message : twincache_strerror(rc));
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
