/* twincache-gen — build (or resume, or extend) a twincache cache.
 * Exit codes: 0 done, 1 runtime error, 2 usage error, 130 interrupted. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tc_args.h"
#include "tc_cache_shard.h"
#include "tc_gen.h"
#include "tc_gen_family.h"
#include "tc_gen_inter.h"
#include "tc_gen_mech.h"
#include "tc_launch.h"

static volatile sig_atomic_t g_stop;
static void on_signal(int sig) {
  (void)sig;
  g_stop = 1;
}

enum { N_FAMILY_OPTS = TWINCACHE_FAMILY_COUNT * TC_GEN_FAMILY_MAX_OPTS };

/* Argv positions of --nodes, --graph and the families' own options (0 = not
 * given), and which families each of those options applies to. */
typedef struct model_seen {
  int nodes, graph;
  uint32_t n_family_opts;
  int family_opt[N_FAMILY_OPTS];
  unsigned family_opt_families[N_FAMILY_OPTS];
  const char *family_opt_name[N_FAMILY_OPTS];
  int shard_auto; /* --shard auto: rank and size from the launcher, resolved in main */
} model_seen;

/* --shard I/N (0 <= I < N) or auto: o->dst is the config, o->dst2 the
 * model_seen whose shard_auto "auto" sets. */
static int parse_shard(const char *v, const tc_opt *o) {
  tc_gen_config *c = o->dst;
  if (!strcmp(v, "auto")) {
    ((model_seen *)o->dst2)->shard_auto = 1;
    return 0;
  }
  const char *slash = strchr(v, '/');
  char index_text[16];
  uint32_t index, count;
  if (!slash || (size_t)(slash - v) >= sizeof index_text) return -1;
  memcpy(index_text, v, (size_t)(slash - v));
  index_text[slash - v] = '\0';
  if (tc_parse_u32_in(slash + 1, 1, UINT32_MAX, &count) || tc_parse_u32_in(index_text, 0, count - 1, &index))
    return -1;
  c->shard_index = index;
  c->shard_count = count;
  ((model_seen *)o->dst2)->shard_auto = 0;
  return 0;
}

/* --shard auto: the launcher's rank and size; 0, or 2 with the line printed. */
static int resolve_shard_auto(tc_gen_config *c, const model_seen *s) {
  if (!s->shard_auto) return 0;
  char msg[256];
  const char *source;
  if (tc_launch_rank(&c->shard_index, &c->shard_count, &source, msg, sizeof msg) != TC_LAUNCH_OK) {
    fprintf(stderr, "twincache-gen: --shard auto: %s (or give --shard I/N)\n", msg);
    return 2;
  }
  return 0;
}

static const char *const k_encodings[] = {"fast", "small", NULL}; /* twincache_encoding */

/* Why the last --graph/--mechanism value was refused (the parser's message,
 * "--graph: bad weight after 'er:' ..."), for report(); "" = no reason. */
static char g_mixture_why[256];

static int keep_why(int rc) {
  if (rc) snprintf(g_mixture_why, sizeof g_mixture_why, "%s", twincache_last_error());
  return rc ? -1 : 0;
}

/* --graph FAMILY or FAMILY:W,FAMILY:W,...: o->dst is the whole config. */
static int parse_graph(const char *v, const tc_opt *o) {
  return keep_why(tc_gen_parse_graph((tc_gen_config *)o->dst, v));
}

static int parse_mechanism(const char *v, const tc_opt *o) {
  return keep_why(tc_gen_parse_mechanism((tc_gen_config *)o->dst, v));
}

/* --targets all|none|K: 0 = every node, TC_GEN_TARGETS_NONE = no twin world. */
static int parse_targets(const char *v, const tc_opt *o) {
  if (!strcmp(v, "all") || !strcmp(v, "none")) {
    *(uint32_t *)o->dst = v[0] == 'a' ? 0 : TC_GEN_TARGETS_NONE;
    return 0;
  }
  return tc_parse_u32_in(v, 1, TWINCACHE_MAX_INTER, (uint32_t *)o->dst);
}

enum {
  N_MECH_OPTS = TWINCACHE_MECH_COUNT * TC_GEN_MECH_MAX_OPTS,
  N_INTER_OPTS = TWINCACHE_INTER_KIND_COUNT * TC_GEN_INTER_MAX_OPTS,
  N_OWN_OPTS = 48, /* twincache-gen's own rows (gen_opts' tables), at most */
  N_GEN_OPTS = N_OWN_OPTS + N_FAMILY_OPTS + N_MECH_OPTS + N_INTER_OPTS
};

/* "a|b|c": the names of a choice from the format's one table (formats/names.c)
 * but code `skip` (-1: none), for --help. Joined once per process into buf. */
static const char *choice_meta(int choice, int skip, char *buf, size_t cap) {
  if (buf[0]) return buf;
  size_t used = 0;
  const char *const *names = twincache_choice_names(choice);
  for (const char *const *s = names; s && *s; s++) {
    if (s - names == skip) continue;
    int w = snprintf(buf + used, cap - used, "%s%s", used ? "|" : "", *s);
    if (w < 0 || (size_t)w >= cap - used) break;
    used += (size_t)w;
  }
  return buf;
}
static char g_meta_family[64], g_meta_mech[64], g_meta_noise[64], g_meta_kind[64];
static const char *const g_worlds[] = {"twin", "independent", NULL}; /* enum tc_gen_worlds */

/* Every flag of twincache-gen, once: what it sets in *c, its range, its
 * --help line. The help's "{}" shows *c's value, so usage() passes the
 * defaults. The rows up to --graph, then each family's own options (from
 * its file, family by family in code order), the mechanism rows, each
 * mechanism's own options (likewise), the noise and intervention rows,
 * each intervention kind's own options (likewise), then the rest. Returns
 * the number of entries written to o[N_GEN_OPTS]. */
static size_t gen_opts(tc_gen_config *c, model_seen *s, tc_opt *o) {
  const tc_opt head[] = {
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
      {.name = "--inter-samples", .meta = "M", .kind = TC_OPT_U32, .dst = &c->inter_samples, .lo = 0,
       .hi = TWINCACHE_MAX_SAMPLES * TWINCACHE_MAX_INTER,
       .help = "interventional rows per graph, spread over its K worlds (AVICI's\n"
               "600 observational + 200 interventional: --samples 600\n"
               "--inter-samples 200): world k holds M/K rows (the first M%K one\n"
               "more), at most S; the base world holds S; rows past a world's count\n"
               "are zero in batches (batch.rows). K <= M <= K x S for every graph's\n"
               "K (refused otherwise); format 5; 0 = every world S rows (default {})"},
      {.help = "graph model (igraph, oriented acyclic along a random node order):"},
      {.name = "--graph", .meta = choice_meta(TWINCACHE_CHOICE_FAMILY, -1, g_meta_family, sizeof g_meta_family),
       .kind = TC_OPT_CUSTOM, .dst = c, .parse = parse_graph, .seen = &s->graph, .def = "er",
       .expect = "a family or a mixture FAMILY:WEIGHT,... (e.g. er:0.5,sf:0.3,sbm:0.2)",
       .help = "Erdos-Renyi, Barabasi-Albert, Watts-Strogatz, scale-free\n"
               "(power-law in-degree), stochastic block model, random\n"
               "geometric, a fixed DAG (--graph-file); or a mixture\n"
               "FAMILY:WEIGHT,... drawn per graph (default {})"},
  };
  const tc_opt mech[] = {
      {.help = "mechanism and noise:"},
      {.name = "--mechanism", .meta = choice_meta(TWINCACHE_CHOICE_MECHANISM, TWINCACHE_MECH_MIXED, g_meta_mech, sizeof g_meta_mech),
       .kind = TC_OPT_CUSTOM, .dst = c, .parse = parse_mechanism, .def = "linear",
       .expect = "a mechanism or a per-node mixture NAME:WEIGHT,... (e.g. linear:0.5,mlp:0.3,rff:0.2)",
       .help = "linear SCM, random tanh MLP, random Fourier features (a GP\n"
               "draw), additive sigmoids or additive clamped quadratics of\n"
               "the parents, or a per-node mixture NAME:W,...; additive\n"
               "noise (default {})"},
  };
  const tc_opt mid[] = {
      {.name = "--noise", .meta = choice_meta(TWINCACHE_CHOICE_NOISE, -1, g_meta_noise, sizeof g_meta_noise),
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
      {.name = "--worlds", .meta = "twin|independent", .kind = TC_OPT_CHOICE, .dst = &c->worlds,
       .choices = g_worlds,
       .help = "twin: every world reuses the base world's noise row by row;\n"
               "independent: each world draws its own noise (the same SCM and\n"
               "intervention), every column stored, format version 5 (default {})"},
      {.help = "interventions (one world each; twin worlds share the base world's noise):"},
      {.name = "--intervention", .meta = choice_meta(TWINCACHE_CHOICE_INTER_KIND, -1, g_meta_kind, sizeof g_meta_kind),
       .kind = TC_OPT_CHOICE, .dst = &c->intervention, .choices = twincache_choice_names(TWINCACHE_CHOICE_INTER_KIND), .help = "perfect do(X=v), additive shift X += v, noise: X's noise\n"
               "term times v, or soft: X's mechanism redrawn (a root, with no\n"
               "weight to redraw: its noise scale times 2^U[-1,1) and its\n"
               "mean + a --values draw) (default {})"},
      {.name = "--targets", .meta = "all|none|K", .kind = TC_OPT_CUSTOM, .dst = &c->targets,
       .parse = parse_targets, .expect = "all, none or an integer in [1, 256]", .def = "all",
       .help = "every node, none (observational only: no twin world), or K\n"
               "distinct random nodes; K at most the largest --nodes, and a\n"
               "graph of fewer nodes intervenes on each of them (default {})"},
      {.name = "--targets-per-world", .meta = "LO:HI", .kind = TC_OPT_U32_PAIR, .dst = &c->targets_per_world_min,
       .dst2 = &c->targets_per_world_max, .lo = 1, .hi = TWINCACHE_MAX_TARGETS,
       .help = "nodes one world intervenes on at once, uniform per world\n"
               "(its target and more random distinct nodes; the changed set is\n"
               "the union of their descendants); HI at most the largest --nodes,\n"
               "and a graph of fewer nodes than drawn intervenes on all of them\n"
               "(default {})"},
  };
  const tc_opt tail[] = {
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
      {.name = "--shard", .meta = "I/N|auto", .kind = TC_OPT_CUSTOM, .dst = c, .dst2 = s,
       .parse = parse_shard, .def = "the whole cache",
       .expect = "I/N with 0 <= I < N, or auto",
       .help = "build shard I of N of the cache into --out/shard-IIIII-of-NNNNN\n"
               "(--out is then the set's directory; auto: rank and size from\n"
               "Slurm, Open MPI, MPICH/PMI or torchrun; shards are equal when N\n"
               "divides the chunk count ceil(graphs / C), which local mode's\n"
               "nodes need to hold equal shares) (default: {})"},
      {.name = "--map-size", .meta = "BYTES", .kind = TC_OPT_U64, .dst = &c->map_size_bytes,
       .lo = TC_GEN_MIN_MAP_BYTES, .hi = TC_GEN_MAX_MAP_BYTES,
       .help = "initial LMDB map size; doubles when full (default {})"},
      {.help = "output:"},
      {.name = "--quiet", .kind = TC_OPT_SWITCH, .dst = &c->quiet, .help = "no progress line, no summary"},
      {.name = "--help", .kind = TC_OPT_SWITCH, .help = "this text"},
  };
  _Static_assert((sizeof head + sizeof mech + sizeof mid + sizeof tail) / sizeof head[0] <= N_OWN_OPTS,
                 "N_OWN_OPTS too small");
  size_t n = 0;
#define ROWS(rows_) (memcpy(o + n, rows_, sizeof rows_), n += sizeof rows_ / sizeof rows_[0])
  ROWS(head);
  s->n_family_opts = 0;
  for (int f = 0; f < TWINCACHE_FAMILY_COUNT; f++) {
    const tc_gen_family *fam = tc_gen_family_get(f);
    tc_gen_option fo[TC_GEN_FAMILY_MAX_OPTS];
    size_t m = fam && fam->options ? fam->options(c, fo) : 0;
    for (size_t k = 0; k < m; k++) {
      uint32_t q = s->n_family_opts++;
      o[n] = fo[k].opt;
      o[n].seen = &s->family_opt[q];
      s->family_opt[q] = 0;
      s->family_opt_families[q] = fo[k].families;
      s->family_opt_name[q] = fo[k].opt.name;
      n++;
    }
  }
  ROWS(mech);
  for (int m = 0; m < TWINCACHE_MECH_COUNT; m++) {
    const tc_gen_mech *mk = tc_gen_mech_get(m);
    if (mk && mk->options) n += mk->options(c, o + n);
  }
  ROWS(mid);
  for (int k = 0; k < TWINCACHE_INTER_KIND_COUNT; k++) {
    const tc_gen_inter *in = tc_gen_inter_get(k);
    if (in && in->options) n += in->options(c, o + n);
  }
  ROWS(tail);
#undef ROWS
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
  if (e->status == TC_ARGS_BAD_VALUE && g_mixture_why[0]) { /* the mixture parser said why */
    fprintf(stderr, "twincache-gen: %s, got '%s' (see --help)\n", g_mixture_why, e->value ? e->value : "");
    return 2;
  }
  return tc_args_report(stderr, "twincache-gen", e);
}

/* A family-specific flag (--ba-m ...) alone picks its family (the first
 * it applies to); with a --graph that has none of its families it is an
 * error. The last such flag given wins. */
static int resolve_model(tc_gen_config *c, const model_seen *s) {
  unsigned mix = 0;
  for (uint32_t k = 0; k < c->n_families; k++) mix |= 1u << c->families[k];
  int last = -1;
  for (int k = 0; k < (int)s->n_family_opts; k++) {
    if (!s->family_opt[k]) continue;
    if (s->graph && !(s->family_opt_families[k] & mix)) {
      fprintf(stderr, "twincache-gen: %s does not apply to the --graph given (see --help)\n",
              s->family_opt_name[k]);
      return 2;
    }
    if (last < 0 || s->family_opt[k] > s->family_opt[last]) last = k;
  }
  if (last < 0 || s->graph) return 0;
  int first = 0;
  while (!(s->family_opt_families[last] & (1u << first))) first++;
  c->n_families = 1;
  c->families[0] = (uint8_t)first;
  c->family_weights[0] = 1.0;
  return 0;
}

/* --graph file: reads the edge list once and fixes --nodes to its node count
 * (an explicit different --nodes is refused by the config check). Returns
 * the exit status: 0, 2 (no or a malformed file), 1 (unreadable). */
static int load_graph_file(tc_gen_config *c, int nodes_given) {
  if (!tc_gen_has_family(c, TWINCACHE_FAMILY_FILE)) return 0;
  if (!c->graph_file) {
    fprintf(stderr, "twincache-gen: --graph file needs --graph-file PATH (see --help)\n");
    return 2;
  }
  tc_gen_dag_file *f;
  int rc = tc_gen_dag_file_load(c->graph_file, &f);
  if (rc) { /* the message starts with the path: name the flag before it */
    fprintf(stderr, "twincache-gen: --graph-file %s\n", twincache_last_error());
    return rc == TWINCACHE_EINVAL ? 2 : 1; /* a bad file is a usage error; unreadable is I/O */
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
  int file_rc = load_graph_file(&c, seen.nodes);
  if (file_rc) return file_rc;
  if (resolve_shard_auto(&c, &seen)) return 2;
  int status = run(&c);
  tc_gen_dag_file_free((tc_gen_dag_file *)c.dag_file);
  return status;
}

/* Checks the options and runs the generator; returns the exit status. */
static int run(tc_gen_config *cfg) {
  tc_gen_config c = *cfg;
  tc_gen_refusal bad;
  if (tc_gen_config_check(&c, &bad)) {
    fprintf(stderr, "twincache-gen: invalid value for %s%s%s (see --help)\n", bad.flag, bad.why ? ": " : "",
            bad.why ? bad.why : "");
    return 2;
  }
  tc_cache_shard shard;
  if (c.shard_count &&
      tc_cache_shard_split(c.graphs, tc_gen_chunk_graphs(&c), c.shard_index, c.shard_count, &shard) != 0) {
    fprintf(stderr, "twincache-gen: invalid value for --shard: %s (see --help)\n", twincache_last_error());
    return 2;
  }
  char shard_dir[4200];
  if (c.shard_count) { /* --out names the set: the shard is one directory in it */
    if ((size_t)snprintf(shard_dir, sizeof shard_dir, "%s/shard-%05u-of-%05u", c.out_dir, c.shard_index,
                         c.shard_count) >= sizeof shard_dir) {
      fprintf(stderr, "twincache-gen: --out is too long\n");
      return 2;
    }
    int set_rc = tc_gen_set_check(&c, c.out_dir); /* a shard no reader would accept */
    if (set_rc) {
      fprintf(stderr, "twincache-gen: %s\n", twincache_last_error());
      return set_rc == TWINCACHE_EMISMATCH ? 3 : set_rc == TWINCACHE_EINVAL ? 2 : 1;
    }
    if (mkdir(c.out_dir, 0755) != 0 && errno != EEXIST) { /* every shard's process may make it */
      fprintf(stderr, "twincache-gen: cannot create %s: %s\n", c.out_dir, strerror(errno));
      return 1;
    }
    c.out_dir = shard_dir;
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
            (unsigned long long)r.graphs_total, (unsigned long long)r.graphs_target, c.out_dir);
    return 130;
  }
  if (!c.quiet) {
    if (r.graphs_total > r.graphs_target) {
      fprintf(stderr, "twincache-gen: %s already holds %llu graphs (asked for %llu); nothing to do\n",
              c.out_dir, (unsigned long long)r.graphs_total, (unsigned long long)r.graphs_target);
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
