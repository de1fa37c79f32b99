/* inspect.h — shared pieces of twincache-inspect: one file per subcommand
 * (inspect_<cmd>.c), each thin over libtwincache_loader and
 * libtwincache_format; this header holds what they share (argument parsing,
 * opening a cache, JSON output). Program-internal, not installed.
 *
 * Exit codes of every subcommand: 0 ok, 1 runtime error (bad cache, I/O,
 * verify found bad graphs, a graph inside the range that cannot be read),
 * 2 usage error (bad command, flag, value, or an INDEX outside 0..count-1:
 * show, export and dot give the same line and status for it). */
#ifndef TC_INSPECT_H
#define TC_INSPECT_H

#include <stdint.h>
#include <stdio.h>

#include "twincache_format.h"
#include "twincache_loader.h"

#define TC_PROG "twincache-inspect"
enum { TC_EXIT_OK = 0, TC_EXIT_FAIL = 1, TC_EXIT_USAGE = 2 };

/* ---- command-line parsing --------------------------------------------------
 * A subcommand declares its flags in a table; tc_args_begin parses them with
 * common/tc_args.h, fills the positional list and sets each flag's value. Accepts "--flag VALUE",
 * "--flag=VALUE" and "--" (end of flags). */
typedef struct tc_flag {
  const char *name;  /* without the leading "--" */
  int takes_value;   /* 1: needs a value; 0: a switch */
  const char **value; /* set to the value, or to "1" for a switch */
} tc_flag;

#define TC_MAX_POSITIONAL 4
typedef struct tc_args {
  const char *positional[TC_MAX_POSITIONAL];
  int n_positional;
  int help; /* --help or -h was given */
} tc_args;

/* The start of every subcommand: parses argv[1..argc) (argv[0] is the
 * command's name; a bad flag, a missing value or too many arguments print
 * one line and give TC_EXIT_USAGE), then --help prints `help`
 * to stdout, then checks there are n_positional arguments (1: CACHE;
 * 2: CACHE and INDEX). Returns TC_ARGS_GO to go on, else the status the
 * command returns now (TC_EXIT_OK after --help, TC_EXIT_USAGE after one line). */
enum { TC_ARGS_GO = -1 };
int tc_args_begin(int argc, char **argv, const tc_flag *flags, int n_flags, const char *help,
                  int n_positional, tc_args *a);
/* Prints "twincache-inspect CMD: MESSAGE" to stderr; returns TC_EXIT_USAGE. */
int tc_usage_error(const char *cmd, const char *fmt, ...);
/* Parses a non-negative decimal integer (the whole string, digits only, at
 * most 2^64 - 1: tc_parse_u64_in of common/tc_args.h). 0 ok, -1 bad. */
int tc_parse_u64(const char *s, uint64_t *out);

/* ---- cache access ---------------------------------------------------------- */
/* Opens `path`; on error prints "twincache-inspect: PATH: REASON" and returns
 * TC_EXIT_FAIL, else 0. */
int tc_cache_open_or_report(const char *path, twincache_cache **out);
/* Parses an INDEX argument and checks it against the graphs the cache holds
 * (a lone shard: its own [first, count)); prints one line saying the valid
 * range and returns TC_EXIT_USAGE when bad. */
int tc_index_parse(const char *cmd, const char *s, const twincache_cache *c, uint64_t *index);
/* A graph sized for the cache's dims (caller frees with twincache_graph_free),
 * or NULL (out of memory or dims beyond the format's limits). */
twincache_graph *tc_graph_alloc_for(const twincache_cache *c);
/* Reads graph `index`; on error prints one line naming the index and the
 * reason and returns TC_EXIT_FAIL. */
int tc_graph_read_or_report(twincache_cache *c, twincache_dctx *d, uint64_t index,
                            twincache_graph *g);
/* What a command that looks at graphs holds: the open cache, a dctx and a
 * graph sized for the cache's dims. Zero-initialise it before opening;
 * tc_one_graph_close frees whatever is set, so it suits one cleanup path. */
typedef struct tc_one_graph {
  twincache_cache *cache;
  twincache_dctx *dctx;
  twincache_graph *graph;
  uint64_t index; /* the graph tc_one_graph_open read */
} tc_one_graph;
/* Opens `path` and makes the dctx and the graph (whole-cache commands).
 * Returns 0, or TC_EXIT_FAIL after printing one line ("PATH: REASON" or
 * "PATH: out of memory"). */
int tc_cache_graph_open(const char *path, tc_one_graph *og);
/* tc_cache_graph_open, then parses index_text as cmd's INDEX argument
 * (TC_EXIT_USAGE when bad, before anything is allocated) and reads that
 * graph into og->graph (TC_EXIT_FAIL when unreadable). Each error prints one
 * line. */
int tc_one_graph_open(const char *cmd, const char *path, const char *index_text,
                      tc_one_graph *og);
/* Frees what og holds (any of it may be NULL) and zeroes it. */
void tc_one_graph_close(tc_one_graph *og);
/* Edge count of a decoded graph. */
uint64_t tc_graph_edges(const twincache_graph *g);

const char *tc_mechanism_name(unsigned m);
const char *tc_noise_name(unsigned n);
const char *tc_kind_name(unsigned k);
/* The nodes world k of g changes: its targets (several in a multi-target
 * world) and their descendants, as 0/1 into changed (n); returns the count. */
uint32_t tc_world_changed(const twincache_graph *g, uint32_t k, uint8_t *changed);

/* The rows world w of a decoded graph holds (0 the base world, k+1 world
 * k; FORMAT.md 3.10): world_rows[w] when the frame stored counts (flag
 * ROWS), else S (fresh worlds of show --fresh-rows too). */
static inline uint32_t tc_world_rows(const twincache_graph *g, uint32_t w) {
  int counted = (g->flags & TWINCACHE_GRAPH_ROWS) && g->world_rows;
  return counted && g->world_rows[w] < g->n_samples ? g->world_rows[w] : g->n_samples;
}
const char *tc_family_name(unsigned f); /* "unknown" for frames before version 4 */

/* Sortability over many graphs (twincache_graph_sortability per graph):
 * means and standard deviations over the graphs where it is defined. */
typedef struct tc_sortability_sum {
  double var_sum, var_sq, r2_sum, r2_sq;
  uint64_t var_n, r2_n, graphs;
} tc_sortability_sum;
/* Adds one decoded graph (adj and base needed). Returns a status. */
int tc_sortability_add(tc_sortability_sum *s, const twincache_graph *g);
/* "varsortability 0.950 (std 0.08), R2-sortability 0.645 (std ..) over N graphs with a path" */
void tc_sortability_print_text(FILE *f, const tc_sortability_sum *s);
/* "\"sortability\": {...}" (no trailing comma or newline) */
void tc_sortability_print_json(FILE *f, const tc_sortability_sum *s);

/* ---- JSON output -------------------------------------------------------------
 * Floats as "%.9g" (round-trips a float32 exactly), non-finite ones as null. */
void tc_json_float(FILE *f, float v);
void tc_json_string(FILE *f, const char *s);
/* Writes text that should be a JSON value: as-is when it looks like an
 * object, else as a JSON string (so the output stays valid JSON). */
void tc_json_raw_object(FILE *f, const char *text);
/* Writes JSON text re-indented with two spaces per level, each line prefixed
 * by `indent` spaces (for the text report of `info`). */
void tc_json_pretty(FILE *f, const char *text, int indent);

/* ---- the subcommands: each gets argv starting at its own name ---------------- */
int tc_cmd_info(int argc, char **argv);
int tc_cmd_show(int argc, char **argv);
int tc_cmd_verify(int argc, char **argv);
int tc_cmd_stats(int argc, char **argv);
int tc_cmd_export(int argc, char **argv);
int tc_cmd_dot(int argc, char **argv);
int tc_cmd_manifest(int argc, char **argv);

#endif /* TC_INSPECT_H */
