/* inspect.c — twincache-inspect: look inside a twincache cache.
 * main() dispatches to one subcommand per file (inspect_<cmd>.c); this file
 * also holds the helpers they share (see inspect.h). */
#include "inspect.h"

#include "tc_args.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const char k_usage[] =
    "usage: " TC_PROG " COMMAND CACHE [ARGS] [FLAGS]\n"
    "Look inside a twincache cache (an LMDB directory written by twincache-gen, or a\n"
    "set of shards: their directory, or a manifest).\n"
    "\n"
    "commands:\n"
    "  info   CACHE [--json]                  config, counts, sizes, compression, histograms\n"
    "  show   CACHE INDEX [--rows R] [--json] [--fresh-rows S] one graph, its interventions and samples\n"
    "  verify CACHE [--quiet]                 decode every graph, check checksums and invariants\n"
    "  stats  CACHE [--limit N] [--json]      per-node and per-world summary statistics\n"
    "  export CACHE INDEX --format csv|npy|dcdi|causica --out PREFIX|DIR [--dataset I] [--force]\n"
    "                                         one graph's samples and adjacency as files\n"
    "  dot    CACHE INDEX                     Graphviz DOT of one graph\n"
    "  manifest SET --out FILE                a manifest naming a set's shards\n"
    "\n"
    "'" TC_PROG " COMMAND --help' lists a command's flags and their defaults.\n"
    "Exit status (every command): 0 ok; 1 runtime error: the cache is missing, not a\n"
    "cache or damaged, a graph inside the range cannot be read, verify found bad\n"
    "graphs, an output file exists or cannot be written; 2 usage error: a bad command,\n"
    "flag or value, or an INDEX outside 0..count-1 (the line names the range).\n";

typedef struct tc_command {
  const char *name;
  int (*run)(int argc, char **argv);
} tc_command;

static const tc_command k_commands[] = {
    {"info", tc_cmd_info},     {"show", tc_cmd_show},     {"verify", tc_cmd_verify},
    {"stats", tc_cmd_stats},   {"export", tc_cmd_export}, {"dot", tc_cmd_dot},
    {"manifest", tc_cmd_manifest},
};

int main(int argc, char **argv) {
  if (argc < 2) {
    fputs(k_usage, stderr);
    return TC_EXIT_USAGE;
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    fputs(k_usage, stdout);
    return TC_EXIT_OK;
  }
  if (!strcmp(argv[1], "--version")) {
    printf("%s %s (format version %d)\n", TC_PROG, TWINCACHE_VERSION_STRING,
           TWINCACHE_FORMAT_VERSION);
    return TC_EXIT_OK;
  }
  for (size_t i = 0; i < sizeof k_commands / sizeof k_commands[0]; i++)
    if (!strcmp(argv[1], k_commands[i].name)) return k_commands[i].run(argc - 1, argv + 1);
  if (argv[1][0] == '-')
    fprintf(stderr, "%s: unknown flag '%s' (expected a command; see --help)\n", TC_PROG, argv[1]);
  else
    fprintf(stderr, "%s: unknown command '%s' (info, show, verify, stats, export, dot, manifest)\n",
            TC_PROG, argv[1]);
  return TC_EXIT_USAGE;
}

/* ---- command-line parsing ---------------------------------------------------- */
int tc_usage_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "%s %s: ", TC_PROG, cmd);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  return TC_EXIT_USAGE;
}

/* A flag's value is kept as text: the command checks it. */
static int keep_text(const char *v, const tc_opt *o) {
  *(const char **)o->dst = v;
  return 0;
}

/* The subcommand's tc_flag table as common/tc_args.h options, then one
 * parse; each problem becomes the command's one usage line. */
static int args_parse(int argc, char **argv, const tc_flag *flags, int n_flags, tc_args *a) {
  const char *cmd = argv[0];
  enum { MAX_FLAGS = 8 };
  tc_opt opts[MAX_FLAGS];
  char names[MAX_FLAGS][32];
  int on[MAX_FLAGS] = {0};
  tc_args_error e;
  memset(a, 0, sizeof *a);
  memset(opts, 0, sizeof opts);
  if (n_flags > MAX_FLAGS) n_flags = MAX_FLAGS;
  for (int k = 0; k < n_flags; k++) {
    snprintf(names[k], sizeof names[k], "--%s", flags[k].name);
    opts[k].name = names[k];
    opts[k].kind = flags[k].takes_value ? TC_OPT_CUSTOM : TC_OPT_SWITCH;
    opts[k].dst = flags[k].takes_value ? (void *)flags[k].value : (void *)&on[k];
    opts[k].parse = keep_text;
  }
  if (tc_args_parse_pos(argc, argv, opts, (size_t)n_flags, a->positional, TC_MAX_POSITIONAL, &a->n_positional,
                        &e) != TC_ARGS_OK) {
    if (e.status == TC_ARGS_HELP) {
      a->help = 1;
      return 0;
    }
    char prog[128];
    snprintf(prog, sizeof prog, "%s %s", TC_PROG, cmd);
    return tc_args_report(stderr, prog, &e);
  }
  for (int k = 0; k < n_flags; k++)
    if (on[k]) *flags[k].value = "1";
  return 0;
}

int tc_args_begin(int argc, char **argv, const tc_flag *flags, int n_flags, const char *help,
                  int n_positional, tc_args *a) {
  int rc = args_parse(argc, argv, flags, n_flags, a);
  if (rc) return rc;
  if (a->help) {
    fputs(help, stdout);
    return TC_EXIT_OK;
  }
  if (a->n_positional != n_positional)
    return tc_usage_error(argv[0], n_positional == 1 ? "expected one CACHE argument (see --help)"
                                                     : "expected CACHE and INDEX (see --help)");
  return TC_ARGS_GO;
}

int tc_parse_u64(const char *s, uint64_t *out) { return tc_parse_u64_in(s, 0, UINT64_MAX, out); }

/* ---- cache access ------------------------------------------------------------ */
int tc_cache_open_or_report(const char *path, twincache_cache **out) {
  int rc = twincache_cache_open(path, out);
  if (rc != TWINCACHE_OK) {
    *out = NULL;
    fprintf(stderr, "%s: %s\n", TC_PROG, twincache_last_error());
    return TC_EXIT_FAIL;
  }
  return 0;
}

int tc_index_parse(const char *cmd, const char *s, const twincache_cache *c, uint64_t *index) {
  uint64_t count = twincache_cache_count(c), first = twincache_cache_first(c); /* first: a shard's, else 0 */
  if (tc_parse_u64(s, index) != 0) {
    if (count <= first) return tc_usage_error(cmd, "bad graph index '%s': the cache has no graphs", s);
    return tc_usage_error(cmd, "bad graph index '%s': expected an integer in %llu..%llu", s,
                          (unsigned long long)first, (unsigned long long)(count - 1));
  }
  uint32_t shard, shards;
  if (twincache_cache_shard(c, &shard, &shards, NULL)) { /* a lone shard holds [first, count) only */
    if (*index >= first && *index < count) return 0;
    if (count <= first)
      return tc_usage_error(cmd, "graph index %s out of range: shard %u of %u holds no graphs yet", s, shard, shards);
    return tc_usage_error(cmd, "graph index %s out of range: shard %u of %u holds %llu graphs (%llu..%llu); open "
                          "the set for the others", s, shard, shards, (unsigned long long)(count - first),
                          (unsigned long long)first, (unsigned long long)(count - 1));
  }
  if (*index >= count) {
    if (count == 0) return tc_usage_error(cmd, "graph index %s out of range: the cache has no graphs", s);
    return tc_usage_error(cmd, "graph index %s out of range: the cache has %llu graphs (0..%llu)", s,
                          (unsigned long long)count, (unsigned long long)(count - 1));
  }
  return 0;
}

twincache_graph *tc_graph_alloc_for(const twincache_cache *c) {
  const twincache_dims *d = twincache_cache_dims(c);
  uint32_t inter = d->max_inter ? d->max_inter : 1; /* alloc refuses 0 */
  return twincache_graph_alloc(d->max_nodes, d->samples, inter, d->hidden);
}

int tc_graph_read_or_report(twincache_cache *c, twincache_dctx *d, uint64_t index,
                            twincache_graph *g) {
  int rc = twincache_cache_read_graph(c, d, index, g);
  if (rc != TWINCACHE_OK) {
    fprintf(stderr, "%s: %s\n", TC_PROG, twincache_last_error()); /* names the cache and graph */
    return TC_EXIT_FAIL;
  }
  return 0;
}

/* The dctx and graph of an opened og; prints one line when out of memory. */
static int one_graph_alloc(const char *path, tc_one_graph *og) {
  og->dctx = twincache_dctx_create();
  og->graph = tc_graph_alloc_for(og->cache);
  if (!og->dctx || !og->graph) {
    fprintf(stderr, "%s: %s: out of memory\n", TC_PROG, path);
    return TC_EXIT_FAIL;
  }
  return 0;
}

int tc_cache_graph_open(const char *path, tc_one_graph *og) {
  memset(og, 0, sizeof *og);
  int status = tc_cache_open_or_report(path, &og->cache);
  if (status == 0) status = one_graph_alloc(path, og);
  return status;
}

int tc_one_graph_open(const char *cmd, const char *path, const char *index_text,
                      tc_one_graph *og) {
  memset(og, 0, sizeof *og);
  int status = tc_cache_open_or_report(path, &og->cache);
  if (status == 0) status = tc_index_parse(cmd, index_text, og->cache, &og->index);
  if (status == 0) status = one_graph_alloc(path, og);
  if (status == 0) status = tc_graph_read_or_report(og->cache, og->dctx, og->index, og->graph);
  return status;
}

void tc_one_graph_close(tc_one_graph *og) {
  twincache_graph_free(og->graph);
  twincache_dctx_free(og->dctx);
  twincache_cache_close(og->cache);
  memset(og, 0, sizeof *og);
}

uint64_t tc_graph_edges(const twincache_graph *g) {
  uint64_t e = 0;
  for (uint32_t i = 0; i < g->n_nodes; i++)
    for (uint32_t j = 0; j < g->n_nodes; j++) e += g->adj[(size_t)i * g->ld_adj + j] != 0;
  return e;
}

/* Names come from the format's one table (formats/names.c). */
static const char *choice_name(int choice, unsigned code) {
  const char *s = code <= 255 ? twincache_choice_name(choice, (int)code) : NULL;
  return s ? s : "unknown";
}
const char *tc_mechanism_name(unsigned m) { return choice_name(TWINCACHE_CHOICE_MECHANISM, m); }
const char *tc_noise_name(unsigned n) { return choice_name(TWINCACHE_CHOICE_NOISE, n); }
const char *tc_kind_name(unsigned k) {
  return k == TWINCACHE_INTER_OBSERVED ? "observed" : choice_name(TWINCACHE_CHOICE_INTER_KIND, k);
}

/* The nodes world k changes: its targets (several in a multi-target world)
 * and their descendants, as 0/1 into changed (n); returns their count. */
uint32_t tc_world_changed(const twincache_graph *g, uint32_t k, uint8_t *changed) {
  uint32_t n = g->n_nodes, nt = g->n_targets ? g->n_targets[k] : 1, count = 0;
  uint8_t one[TWINCACHE_MAX_NODES];
  memset(changed, 0, n);
  for (uint32_t i = 0; i < nt; i++) {
    uint32_t t = i ? g->more_target[(size_t)k * (TWINCACHE_MAX_TARGETS - 1) + i - 1] : g->target[k];
    if (t >= n) continue;
    twincache_graph_descendants(g->adj, n, g->ld_adj, t, one);
    for (uint32_t j = 0; j < n; j++) changed[j] |= one[j];
  }
  for (uint32_t j = 0; j < n; j++) count += changed[j];
  return count;
}

const char *tc_family_name(unsigned f) { return choice_name(TWINCACHE_CHOICE_FAMILY, f); }

/* ---- sortability over a cache ------------------------------------------------------ */
int tc_sortability_add(tc_sortability_sum *s, const twincache_graph *g) {
  if (g->n_samples == 0) return TWINCACHE_OK; /* an SCM-only graph: no stored world to score */
  twincache_sortability o;
  int rc = twincache_graph_sortability(g, &o);
  if (rc) return rc;
  s->graphs++;
  if (!isnan(o.var)) s->var_sum += o.var, s->var_sq += o.var * o.var, s->var_n++;
  if (!isnan(o.r2)) s->r2_sum += o.r2, s->r2_sq += o.r2 * o.r2, s->r2_n++;
  return TWINCACHE_OK;
}

static double sum_mean(double sum, uint64_t n) { return n ? sum / (double)n : NAN; }
static double sum_std(double sum, double sq, uint64_t n) {
  if (n < 2) return 0.0;
  double m = sum / (double)n, v = (sq - (double)n * m * m) / (double)(n - 1);
  return v > 0 ? sqrt(v) : 0.0;
}

void tc_sortability_print_text(FILE *f, const tc_sortability_sum *s) {
  if (s->graphs == 0) {
    fprintf(f, "sortability      none: no stored worlds to score\n");
    return;
  }
  fprintf(f, "sortability      var %.3f (std %.3f, %llu graphs), R2 %.3f (std %.3f, %llu graphs); "
             "0.5 = chance, 1 = sorting by it gives the causal order\n",
          sum_mean(s->var_sum, s->var_n), sum_std(s->var_sum, s->var_sq, s->var_n),
          (unsigned long long)s->var_n, sum_mean(s->r2_sum, s->r2_n), sum_std(s->r2_sum, s->r2_sq, s->r2_n),
          (unsigned long long)s->r2_n);
}

void tc_sortability_print_json(FILE *f, const tc_sortability_sum *s) {
  fprintf(f, "\"sortability\": {\"var\": ");
  tc_json_float(f, (float)sum_mean(s->var_sum, s->var_n));
  fprintf(f, ", \"var_std\": %.6g, \"var_graphs\": %llu, \"r2\": ", sum_std(s->var_sum, s->var_sq, s->var_n),
          (unsigned long long)s->var_n);
  tc_json_float(f, (float)sum_mean(s->r2_sum, s->r2_n));
  fprintf(f, ", \"r2_std\": %.6g, \"r2_graphs\": %llu, \"graphs\": %llu}",
          sum_std(s->r2_sum, s->r2_sq, s->r2_n), (unsigned long long)s->r2_n, (unsigned long long)s->graphs);
}

/* ---- JSON output ----------------------------------------------------------------- */
void tc_json_float(FILE *f, float v) {
  if (isfinite(v))
    fprintf(f, "%.9g", (double)v);
  else
    fputs("null", f);
}

void tc_json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
    if (*p == '"' || *p == '\\')
      fprintf(f, "\\%c", *p);
    else if (*p == '\n')
      fputs("\\n", f);
    else if (*p == '\t')
      fputs("\\t", f);
    else if (*p < 0x20)
      fprintf(f, "\\u%04x", *p);
    else
      fputc(*p, f);
  }
  fputc('"', f);
}

void tc_json_raw_object(FILE *f, const char *text) {
  const char *p = text ? text : "";
  while (isspace((unsigned char)*p)) p++;
  size_t n = strlen(p);
  while (n > 0 && isspace((unsigned char)p[n - 1])) n--;
  if (n >= 2 && p[0] == '{' && p[n - 1] == '}')
    fwrite(p, 1, n, f);
  else
    tc_json_string(f, text);
}

static void pretty_newline(FILE *f, int indent, int depth) {
  fputc('\n', f);
  for (int i = 0; i < indent + 2 * depth; i++) fputc(' ', f);
}

/* For p at '[': the matching ']' when the array holds no object or array,
 * else NULL. */
static const char *flat_array_end(const char *p) {
  int in_string = 0, escaped = 0;
  for (const char *q = p + 1; *q; q++) {
    if (in_string) {
      if (escaped)
        escaped = 0;
      else if (*q == '\\')
        escaped = 1;
      else if (*q == '"')
        in_string = 0;
    } else if (*q == '"') {
      in_string = 1;
    } else if (*q == '[' || *q == '{') {
      return NULL;
    } else if (*q == ']') {
      return q;
    }
  }
  return NULL;
}

void tc_json_pretty(FILE *f, const char *text, int indent) {
  int depth = 0, in_string = 0, escaped = 0;
  const char *p = text ? text : "";
  for (int i = 0; i < indent; i++) fputc(' ', f);
  for (; *p; p++) {
    char ch = *p;
    if (in_string) {
      fputc(ch, f);
      if (escaped)
        escaped = 0;
      else if (ch == '\\')
        escaped = 1;
      else if (ch == '"')
        in_string = 0;
      continue;
    }
    if (isspace((unsigned char)ch)) continue;
    switch (ch) {
    case '"':
      in_string = 1;
      fputc(ch, f);
      break;
    case '[':
      if (flat_array_end(p)) {
        /* an array of scalars stays on one line: [5, 10] */
        const char *end = flat_array_end(p);
        int quoted = 0, esc = 0;
        for (const char *q = p; q <= end; q++) {
          if (quoted) {
            fputc(*q, f);
            if (esc)
              esc = 0;
            else if (*q == '\\')
              esc = 1;
            else if (*q == '"')
              quoted = 0;
            continue;
          }
          if (isspace((unsigned char)*q)) continue;
          fputc(*q, f);
          if (*q == '"') quoted = 1;
          if (*q == ',') fputc(' ', f);
        }
        p = end;
        break;
      }
      /* fall through */
    case '{': {
      /* keep empty containers on one line */
      const char *q = p + 1;
      while (isspace((unsigned char)*q)) q++;
      if (*q == (ch == '{' ? '}' : ']')) {
        fputc(ch, f);
        fputc(*q, f);
        p = q;
        break;
      }
      fputc(ch, f);
      pretty_newline(f, indent, ++depth);
      break;
    }
    case '}':
    case ']':
      pretty_newline(f, indent, depth > 0 ? --depth : 0);
      fputc(ch, f);
      break;
    case ',':
      fputc(ch, f);
      pretty_newline(f, indent, depth);
      break;
    case ':':
      fputs(": ", f);
      break;
    default:
      fputc(ch, f);
    }
  }
  fputc('\n', f);
}
