/* tc_gen.h — internal API of the twincache generator engine
 * (libtwincache_gen_core, used by twincache-gen and twincache-gen-bench).
 *
 * Graph i of a cache is a pure function of (seed, i, config): its structure
 * comes from igraph (seeded from (seed, i) under one global lock, because
 * Debian's igraph is not thread-safe), everything else from tc_rng streams
 * keyed by (seed, i * TC_STREAMS_PER_GRAPH + purpose). */
#ifndef TC_GEN_H
#define TC_GEN_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "twincache_format.h"

#ifndef TC_STREAMS_PER_GRAPH
#define TC_STREAMS_PER_GRAPH 8
#endif
/* Purposes of the per-graph RNG streams. */
enum tc_gen_worlds { TC_GEN_WORLDS_TWIN = 0, TC_GEN_WORLDS_INDEPENDENT = 1 };
enum { TC_STREAM_STRUCTURE = 0, TC_STREAM_WEIGHTS = 1, TC_STREAM_NOISE = 2, TC_STREAM_INTER = 3 };

/* Limits of the run options, checked by tc_gen_config_check before anything
 * is created. Graph i draws RNG streams i*TC_STREAMS_PER_GRAPH + purpose and
 * lives in chunk i / C: 2^60 graphs keep both far from 2^64. The map starts
 * at >= 64 KiB and doubles when full; 2^46 bytes (64 TiB) is half the
 * x86-64 user address space, so a start there can still double once. */
#define TC_GEN_MAX_GRAPHS (UINT64_C(1) << 60)
/* tc_gen_config.targets of --targets none: observational only, no twin world */
#define TC_GEN_TARGETS_NONE UINT32_MAX
#define TC_GEN_MIN_MAP_BYTES UINT64_C(65536)
#define TC_GEN_MAX_MAP_BYTES (UINT64_C(1) << 46)
/* a mixture weight (--graph, --mechanism) lies in (0, 1e300): the sum of at
 * most 7 such weights stays finite */
#define TC_GEN_MAX_WEIGHT 1e300

enum tc_gen_value_dist { TC_VALUES_UNIFORM = 0, TC_VALUES_SIGNED = 1 };

struct tc_gen_progress;

/* Every generator option. The fields from `model` to `chunk_graphs` make the
 * cache's identity (the "config" meta entry); the others are how to run. */
typedef struct tc_gen_config {
  /* --- identity ------------------------------------------------------- */
  /* --graph: one family, or a weighted mixture drawn per graph (the table
   * of families is gen/tc_gen_family.c) */
  uint32_t n_families;                          /* components, 1..TWINCACHE_FAMILY_COUNT */
  uint8_t families[TWINCACHE_FAMILY_COUNT];     /* distinct enum twincache_family codes */
  double family_weights[TWINCACHE_FAMILY_COUNT]; /* > 0; graph i draws family f with w_f / sum w */
  double edge_prob;         /* ER: edge probability */
  double expected_degree;   /* ER: > 0 overrides edge_prob with D/(n-1) */
  uint32_t ba_m;            /* BA: edges per new node */
  uint32_t ws_k;            /* WS: ring neighbours on each side */
  double ws_p;              /* WS: rewiring probability */
  uint32_t sbm_blocks;      /* SBM: blocks (sizes as equal as possible; min(B, n) blocks) */
  double sbm_p_in, sbm_p_out; /* SBM: edge probability within / between blocks */
  double rgg_radius;        /* RGG: connection radius in the unit square */
  const char *graph_file;   /* file: path of the edge list (not part of the identity) */
  const struct tc_gen_dag_file *dag_file; /* file: the loaded DAG (tc_gen_dag_file_load) */
  uint32_t nodes_min, nodes_max;
  uint32_t samples;         /* S, shared by every world */
  /* M > 0: M interventional rows per graph spread over its K worlds, world
   * k keeping min(S, M/K + [k < M%K]) of its S rows (FORMAT.md 3.10; the
   * base world keeps S); 0: every world S rows (the default, the bytes of
   * before) */
  uint32_t inter_samples;
  int mechanism;            /* enum twincache_mechanism; MIXED: per node, from mechs */
  uint32_t n_mechs;         /* MIXED: components, 2..TWINCACHE_MECH_MIXED */
  uint8_t mechs[TWINCACHE_MECH_MIXED];       /* MIXED: distinct codes < MIXED */
  double mech_weights[TWINCACHE_MECH_MIXED]; /* MIXED: > 0; node j draws mechs[k] with w_k / sum w */
  double weight_min, weight_max; /* linear: |w| uniform in [min, max), random sign */
  uint32_t mlp_hidden;      /* H */
  double mlp_scale;         /* A: W1 ~ N(0, A^2/|pa|); nonlinearity strength */
  double mlp_bias;          /* B: b1 ~ N(0, (B*A)^2), the kinks' spread in parent units (0.5 before) */
  double mlp_bump;          /* W > 0: units in pairs, bumps W parent units wide (0: independent units, 0 before) */
  double mlp_gain;          /* G: w2 ~ N(0, G^2/H), the mechanism's scale against the noise (1 before) */
  uint32_t rff_features;    /* RFF: M features per node (the frames' H) */
  double rff_lengthscale;   /* RFF: l, the RBF kernel's length scale: W1 ~ N(0, 1/l^2) */
  int noise;                /* enum twincache_noise */
  double hetero;            /* V > 0: heteroscedastic noise, v_ij ~ N(0, V^2/|pa|), c_j ~ U[-1/2, 1/2) */
  double noise_scale_min, noise_scale_max;
  int standardize;          /* 0/1 */
  int iscm;                 /* 0/1: internally standardised SCM (stored standardised, flags STANDARDIZED|ISCM) */
  int worlds;               /* enum tc_gen_worlds: twin (the base world's noise, the default) or
                             * independent (each world its own noise; frames INDEPENDENT, format 5) */
  int intervention;         /* enum twincache_inter_kind */
  uint32_t targets;         /* 0 = every node, TC_GEN_TARGETS_NONE = no twin world
                             * (observational only), else K random distinct nodes */
  uint32_t targets_per_world_min, targets_per_world_max; /* nodes hit at once by one world, 1:1 default */
  int value_dist;           /* enum tc_gen_value_dist */
  double value_min, value_max;
  uint64_t seed;
  int zstd_level;            /* used by the SMALL encoding only */
  int encoding;             /* enum twincache_encoding: FAST (default) or SMALL */
  uint32_t chunk_graphs;    /* C; 0 = choose from the config (~1 MiB chunks) */
  /* --- how to run ------------------------------------------------------ */
  const char *out_dir;
  uint64_t graphs;          /* target graph count (of the whole cache, also with --shard) */
  /* --shard I/N: build shard I of N of the cache (graphs split into runs
   * of whole chunks, tc_cache_shard_split); shard_count 0: the whole cache */
  uint32_t shard_index, shard_count;
  uint32_t threads;         /* worker threads */
  uint64_t map_size_bytes;  /* initial LMDB map size (grows by doubling) */
  int quiet;                /* twincache-gen: no progress line, no summary */
  /* Progress, reported from the thread that called tc_gen_run about every
   * 200 ms while graphs are made and once more at the end (final = 1);
   * NULL = none. The engine never prints: twincache-gen draws its progress
   * line from these. */
  void (*on_progress)(const struct tc_gen_progress *p, void *user);
  void *progress_user;
} tc_gen_config;

/* A fixed DAG read from an edge-list file (gen/graph_file.c). */
typedef struct tc_gen_dag_file {
  uint32_t n;          /* nodes */
  uint32_t n_edges;
  uint16_t *edges;     /* (n_edges, 2) from, to; in file order */
  uint32_t *order;     /* (n) a topological order: order[r] = node of rank r */
  uint64_t fnv;        /* FNV-1a 64 of the file's bytes: its identity in the config */
} tc_gen_dag_file;

/* Reads and validates the edge list at path (FORMAT.md, "file"): lines
 * "FROM TO" of node ids 0..255, optional "nodes N", '#' comments, blank
 * lines; no self-loop, no duplicate, no directed cycle. Returns 0 and
 * *out (free with tc_gen_dag_file_free), or TWINCACHE_EIO / EINVAL /
 * ENOMEM with twincache_last_error() naming the file and line. */
int tc_gen_dag_file_load(const char *path, tc_gen_dag_file **out);
void tc_gen_dag_file_free(tc_gen_dag_file *f);

/* Parses a --graph value into c: a family name ("sf") or a weighted
 * mixture "er:0.5,sf:0.3,sbm:0.2" (distinct families, weights > 0, finite).
 * Returns 0, or TWINCACHE_EINVAL (c unchanged) with twincache_last_error()
 * saying what is wrong. */
int tc_gen_parse_graph(tc_gen_config *c, const char *spec);
/* Parses a --mechanism value into c: a name ("rff") or a per-node mixture
 * "linear:0.5,mlp:0.3,rff:0.2" (distinct mechanisms other than "mixed",
 * weights > 0, finite; one component is that mechanism alone). Returns 0,
 * or TWINCACHE_EINVAL (c unchanged) with twincache_last_error() set. */
int tc_gen_parse_mechanism(tc_gen_config *c, const char *spec);
/* 1 when mechanism m is c's or a component of its mixture. */
int tc_gen_uses_mechanism(const tc_gen_config *c, int m);
/* 1 when family f is a component of c's --graph. */
int tc_gen_has_family(const tc_gen_config *c, int f);

/* What tc_gen_config.on_progress is told. */
typedef struct tc_gen_progress {
  uint64_t done;          /* graphs committed or encoded, resumed ones included */
  uint64_t target;        /* graphs asked for */
  uint64_t graphs_new;    /* graphs encoded by this run so far */
  uint64_t frame_bytes;   /* their encoded bytes */
  uint64_t raw_bytes;     /* their raw float32 bytes */
  double seconds;         /* since tc_gen_run began */
  int final;              /* 1 on the last report of the run */
} tc_gen_progress;

/* Why tc_gen_config_check refused a config: the option (a static string,
 * "--targets") and, where the option's own range does not say it, the rule it
 * broke (a static string, "K must be at most the largest --nodes", or text,
 * where a rule's limit is worked out from other flags; NULL when none).
 * twincache-gen prints "invalid value for FLAG[: WHY]". */
typedef struct tc_gen_refusal {
  const char *flag;
  const char *why;
  char text[192]; /* why, when it names a number (why points here) */
} tc_gen_refusal;

/* Sets *bad to (flag, why) and returns TWINCACHE_EINVAL: a check's refusal
 * reads `return tc_gen_refuse(bad, "--ws-k", "2 x K must ...")`. */
static inline int tc_gen_refuse(tc_gen_refusal *bad, const char *flag, const char *why) {
  bad->flag = flag;
  bad->why = why;
  return TWINCACHE_EINVAL;
}

/* Fills the defaults (the common workload). threads = online cores. */
void tc_gen_config_default(tc_gen_config *c);
/* Checks ranges and every count x size product the run will form (graphs x
 * RNG streams, chunk count, one graph's worlds in bytes, map size and its
 * doubling) with overflow-checked arithmetic, before anything is created.
 * On error returns TWINCACHE_EINVAL and fills *bad: the offending flag and,
 * where one helps, the rule it broke. */
int tc_gen_config_check(const tc_gen_config *c, tc_gen_refusal *bad);
/* C chosen from the config so one chunk is ~1 MiB (when chunk_graphs == 0). */
uint32_t tc_gen_chunk_graphs(const tc_gen_config *c);
/* K of the batch: largest intervention count of any graph. */
uint32_t tc_gen_max_inter(const tc_gen_config *c);
/* Canonical JSON of the identity fields (chunk_graphs resolved) into
 * buf[0..cap); returns the length (excluding NUL) or 0 when it did not fit. */
size_t tc_gen_config_json(const tc_gen_config *c, char *buf, size_t cap);
/* --shard I/N into set_dir, before anything is written (tc_gen_set.c):
 * refuses what every reader of the set would refuse later. 0 when set_dir
 * does not exist or is a set this shard fits; TWINCACHE_EMISMATCH when it
 * is a whole cache, holds shards of another count, or a sibling shard of
 * another split (--graphs, --chunk-graphs) or config; TWINCACHE_EINVAL when
 * it is not a directory; TWINCACHE_EIO when it cannot be read. The message
 * (twincache_last_error) names the directory and the reason. */
int tc_gen_set_check(const tc_gen_config *c, const char *set_dir);
/* Compares two canonical config JSON texts key by key; writes a readable list
 * of differences ("seed: cache 1, now 2; ...") into out. Returns the number of
 * differing keys. */
int tc_gen_config_diff(const char *cache_json, size_t cache_len, const char *now_json,
                       char *out, size_t out_cap);

/* ---- one graph -------------------------------------------------------------- */
typedef struct tc_gen_worker tc_gen_worker; /* per-thread scratch */

tc_gen_worker *tc_gen_worker_create(const tc_gen_config *c);
void tc_gen_worker_free(tc_gen_worker *w);
/* Generates graph `index` into the worker's graph (returned through *out,
 * valid until the next call). Takes the global igraph lock for the structure
 * only. igraph_ns/sample_ns accumulate the time spent (lock wait included in
 * igraph_ns). Returns 0 or a negative status. */
int tc_gen_graph(tc_gen_worker *w, uint64_t index, const twincache_graph **out,
                 uint64_t *igraph_ns, uint64_t *sample_ns);
/* Tells the worker it will next be asked for graphs [first, end) in order, so
 * it can make their igraph structures in batches under one lock. Optional. */
void tc_gen_worker_plan(tc_gen_worker *w, uint64_t first, uint64_t end);
/* Time spent under the igraph lock, summed over all threads (ns). */
uint64_t tc_gen_igraph_locked_ns(void);

/* ---- the engine ------------------------------------------------------------- */
typedef struct tc_gen_result {
  uint64_t graphs_total;     /* committed graphs in the cache (or shard) at the end */
  uint64_t graphs_target;    /* graphs the cache (or shard) holds when complete */
  uint64_t graphs_new;       /* graphs generated by this run */
  uint64_t resumed_from;     /* committed graphs found at start */
  uint64_t frame_bytes_new;  /* encoded bytes produced by this run */
  uint64_t raw_bytes_new;    /* raw float32 bytes of the graphs of this run */
  twincache_stats stats;     /* the cache's totals at the end */
  uint32_t chunk_graphs;
  double seconds;
  int interrupted;           /* a stop request ended the run early */
  /* time (ns) summed over worker threads */
  uint64_t sample_ns, encode_ns, igraph_ns, igraph_locked_ns, wait_ns;
  uint64_t lmdb_ns;          /* writer: puts + commits (wall) */
  uint64_t writer_cpu_ns;    /* writer thread CPU time (copies, puts, commits) */
  uint64_t commits;          /* write transactions */
  uint64_t map_grows;        /* times the map was doubled */
} tc_gen_result;

/* Runs the generator: creates or resumes the cache at c->out_dir and fills it
 * up to c->graphs graphs. stop_flag (may be NULL) is polled: when it becomes
 * non-zero the run commits what is done and returns with r->interrupted = 1.
 * Returns 0, or TWINCACHE_EMISMATCH (different config: the message names
 * the fields), TWINCACHE_EFULL (disk full) or another negative status, with
 * one message naming the directory, flag or graph for twincache_last_error
 * in the calling thread (also for failures of the worker and writer
 * threads). */
int tc_gen_run(const tc_gen_config *c, const volatile sig_atomic_t *stop_flag,
               tc_gen_result *r);

#endif /* TC_GEN_H */
