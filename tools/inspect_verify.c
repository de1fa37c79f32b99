/* inspect_verify.c — `twincache-inspect verify CACHE [--quiet]`: decodes
 * every committed graph, chunk by chunk, and checks what the cache promises:
 * every chunk is present and parses, every frame's checksums (the decoder
 * checks them), the graph index equals its position, the dims fit the
 * cache's, the adjacency is a DAG, the twin property (every column outside
 * target ∪ descendants(target) is bit-identical to base; not for independent
 * worlds, FORMAT.md 3.9, which share nothing with it), a DO target column
 * equals its value bit for bit, and no value is NaN or infinite. Finally the
 * meta running totals must equal the sums over the graphs, and the cache
 * must hold every graph its dims ask for (fewer: an interrupted generation,
 * or an LMDB meta page damaged so that LMDB fell back to an older state).
 * Prints one line per bad graph (or missing/unreadable chunk), then a summary;
 * exits 1 if anything is bad or missing, else 0. */
#include "inspect.h"
#include "tc_error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char k_help[] =
    "usage: " TC_PROG " verify CACHE [--quiet]\n"
    "Decodes every graph and checks chunk structure, checksums, indices, DAG,\n"
    "twin property (unchanged columns bit-identical to base), DO columns equal\n"
    "to their value, finite values, the meta totals, and that every graph the\n"
    "cache was generated for is committed. Prints each bad graph index with the\n"
    "reason and a summary line; exit 1 if any is bad or missing, else 0.\n"
    "  --quiet   no per-graph lines; the summary only when something is bad\n"
    "  --help    this text\n";

static int all_finite(const float *v, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!isfinite(v[i])) return 0;
  return 1;
}

static int rows_finite(const float *m, uint32_t rows, uint32_t cols, uint32_t ld) {
  for (uint32_t r = 0; r < rows; r++)
    if (!all_finite(m + (size_t)r * ld, cols)) return 0;
  return 1;
}

/* Checks the invariants of a decoded graph against its position and the
 * cache's dims. Returns NULL when good, else the reason (written to buf). */
static const char *graph_check(const twincache_graph *g, uint64_t index,
                               const twincache_dims *dims, char *buf, size_t cap) {
  uint32_t n = g->n_nodes, s_n = g->n_samples, k_n = g->n_inter;
  uint8_t changed[TWINCACHE_MAX_NODES];
  if (g->index != index) {
    snprintf(buf, cap, "frame says it is graph %llu", (unsigned long long)g->index);
    return buf;
  }
  if (n == 0 || n > dims->max_nodes || s_n != dims->samples || k_n > dims->max_inter) {
    snprintf(buf, cap, "dims N=%u S=%u K=%u outside the cache's (N<=%u, S=%u, K<=%u)", n, s_n, k_n,
             dims->max_nodes, dims->samples, dims->max_inter);
    return buf;
  }
  if (g->mechanism >= TWINCACHE_MECH_COUNT || g->noise >= TWINCACHE_NOISE_COUNT)
    return snprintf(buf, cap, "unknown mechanism %u or noise %u", g->mechanism, g->noise), buf;
  if (!twincache_graph_is_dag(g->adj, n, g->ld_adj)) return "adjacency has a cycle or self-loop";
  /* parameters finite */
  for (uint32_t i = 0; i < n; i++)
    if (!all_finite(g->weight + (size_t)i * g->ld_adj, n)) return "non-finite edge weight";
  if (g->mechanism != TWINCACHE_MECH_LINEAR &&
      !all_finite(g->mlp, (size_t)n * (g->n_hidden * n + 2 * g->n_hidden)))
    return "non-finite MLP parameter";
  if (!all_finite(g->noise_scale, n)) return "non-finite noise scale";
  if ((g->flags & TWINCACHE_GRAPH_STANDARDIZED) &&
      (!all_finite(g->norm_mean, n) || !all_finite(g->norm_std, n)))
    return "non-finite standardisation";
  if (!all_finite(g->value, k_n)) return "non-finite intervention value";
  if (!rows_finite(g->base, s_n, n, g->ld)) return "NaN or Inf in the base world";
  for (uint32_t k = 0; k < k_n; k++) {
    const float *w = g->inter + (size_t)k * s_n * g->ld; /* (S, ld) */
    uint32_t t = g->target[k];
    if (t >= n) return snprintf(buf, cap, "intervention %u targets node %u of %u", k, t, n), buf;
    if (!twincache_inter_kind_valid(g->flags, g->kind[k]))
      return snprintf(buf, cap, "intervention %u has unknown kind %u", k, g->kind[k]), buf;
    if (!rows_finite(w, s_n, n, g->ld))
      return snprintf(buf, cap, "NaN or Inf in twin world %u", k), buf;
    uint32_t nt = g->n_targets ? g->n_targets[k] : 1;
    for (uint32_t i = 1; i < nt; i++)
      if (g->more_target[(size_t)k * (TWINCACHE_MAX_TARGETS - 1) + i - 1] >= n)
        return snprintf(buf, cap, "intervention %u targets a node beyond %u", k, n), buf;
    tc_world_changed(g, k, changed); /* the union of its targets' sets */
    if (g->flags & TWINCACHE_GRAPH_INDEPENDENT) memset(changed, 1, n); /* its own noise: no twin property */
    uint32_t held = g->world_rows ? g->world_rows[k + 1] : s_n; /* rows past it are not stored (FORMAT.md 3.10) */
    for (uint32_t s = 0; s < held; s++) {
      const float *row = w + (size_t)s * g->ld, *base = g->base + (size_t)s * g->ld;
      for (uint32_t j = 0; j < n; j++)
        if (!changed[j] && memcmp(&row[j], &base[j], sizeof(float)) != 0)
          return snprintf(buf, cap,
                          "twin property broken: world %u (target x%u) row %u column x%u "
                          "is not a descendant but differs from base (%.9g vs %.9g)",
                          k, t, s, j, (double)row[j], (double)base[j]),
                 buf;
      for (uint32_t i = 0; i < nt && g->kind[k] == TWINCACHE_DO; i++) { /* every do() target */
        uint32_t u = i ? g->more_target[(size_t)k * (TWINCACHE_MAX_TARGETS - 1) + i - 1] : t;
        float v = i ? g->more_value[(size_t)k * (TWINCACHE_MAX_TARGETS - 1) + i - 1] : g->value[k];
        if (memcmp(&row[u], &v, sizeof(float)) != 0)
          return snprintf(buf, cap, "world %u: do(x%u = %.9g) but row %u has %.9g", k, u, (double)v, s,
                          (double)row[u]),
                 buf;
      }
    }
  }
  return NULL;
}

int tc_cmd_verify(int argc, char **argv) {
  const char *quiet = NULL;
  const tc_flag flags[] = {{"quiet", 0, &quiet}};
  tc_args a;
  int rc = tc_args_begin(argc, argv, flags, 1, k_help, 1, &a);
  if (rc != TC_ARGS_GO) return rc;
  const char *path = a.positional[0];

  tc_one_graph og;
  int status = tc_cache_graph_open(path, &og);
  if (status) goto cleanup;
  twincache_cache *c = og.cache;
  twincache_dctx *d = og.dctx;
  twincache_graph *g = og.graph;
  const twincache_dims *dims = twincache_cache_dims(c);
  const twincache_stats *st = twincache_cache_stats(c);
  uint64_t count = twincache_cache_count(c);
  uint64_t per_chunk = dims->chunk_graphs;
  if (per_chunk == 0 || per_chunk > TWINCACHE_MAX_CHUNK_GRAPHS) {
    fprintf(stderr, "%s: %s: meta says %llu graphs per chunk\n", TC_PROG, path,
            (unsigned long long)per_chunk);
    status = TC_EXIT_FAIL;
    goto cleanup;
  }

  /* a shard opened alone holds graphs [first, count): whole chunks from first */
  uint64_t first = twincache_cache_first(c), held = count - first;
  uint64_t bad = 0, bad_chunks = 0, chunks = (held + per_chunk - 1) / per_chunk;
  twincache_stats sum = {0, 0, 0, 0};
  char reason[256];
  for (uint64_t i = first; i < count;) {
    uint64_t chunk = i / per_chunk;
    void *frame = NULL;
    size_t size = 0;
    tc_error_clear();
    int r = twincache_cache_read_frame(c, i, &frame, &size);
    if (r != TWINCACHE_OK && i % per_chunk == 0) {
      /* The chunk record itself is missing or does not parse: every graph
       * in it is lost; report the chunk once, with the library's reason. */
      uint64_t end = (chunk + 1) * per_chunk < count ? (chunk + 1) * per_chunk : count;
      const char *why = twincache_last_error();
      if (!quiet)
        printf("chunk %llu (graphs %llu..%llu) missing or unreadable: %s%s%s\n",
               (unsigned long long)chunk, (unsigned long long)i, (unsigned long long)(end - 1),
               twincache_strerror(r), why[0] ? ": " : "", why);
      bad += end - i;
      bad_chunks++;
      i = end;
      continue;
    }
    const char *why = NULL;
    if (r != TWINCACHE_OK) {
      snprintf(reason, sizeof reason, "frame unreadable: %s", twincache_strerror(r));
      why = reason;
    } else if ((r = twincache_frame_decode(d, frame, size, g)) != TWINCACHE_OK) {
      snprintf(reason, sizeof reason, "%s", twincache_strerror(r));
      why = reason;
    } else {
      why = graph_check(g, i, dims, reason, sizeof reason);
      sum.raw_bytes += twincache_graph_raw_bytes(g);
      sum.frame_bytes += size;
      sum.edges += tc_graph_edges(g);
      sum.nodes += g->n_nodes;
    }
    free(frame);
    if (why) {
      bad++;
      if (!quiet) printf("graph %llu: %s\n", (unsigned long long)i, why);
    }
    i++;
  }

  /* The meta totals are committed with the graphs, so they must agree. */
  int totals_bad = 0;
  if (bad == 0 && (sum.raw_bytes != st->raw_bytes || sum.frame_bytes != st->frame_bytes ||
                   sum.edges != st->edges || sum.nodes != st->nodes)) {
    totals_bad = 1;
    if (!quiet)
      printf("meta stats disagree with the graphs: raw %llu/%llu, frame %llu/%llu, "
             "edges %llu/%llu, nodes %llu/%llu (meta/graphs)\n",
             (unsigned long long)st->raw_bytes, (unsigned long long)sum.raw_bytes,
             (unsigned long long)st->frame_bytes, (unsigned long long)sum.frame_bytes,
             (unsigned long long)st->edges, (unsigned long long)sum.edges,
             (unsigned long long)st->nodes, (unsigned long long)sum.nodes);
  }
  /* Fewer graphs than requested is never a good cache: a generator that
   * was stopped (resumable), or damage that made LMDB fall back to an
   * older meta page (such as a damaged transaction id). */
  uint64_t want = dims->graphs; /* a shard opened alone: the end of its own range */
  if (!twincache_cache_shard(c, NULL, NULL, &want)) want = dims->graphs;
  int short_bad = count < want;
  if (short_bad)
    printf("verify %s: only %llu of %llu graphs committed: the generation was interrupted (rerun "
           "twincache-gen to finish) or the cache is damaged\n",
           path, (unsigned long long)(count - first), (unsigned long long)(want - first));
  if (bad || totals_bad) {
    printf("verify %s: %llu of %llu graphs bad (%llu of %llu chunks missing or unreadable)%s\n",
           path, (unsigned long long)bad, (unsigned long long)held, (unsigned long long)bad_chunks,
           (unsigned long long)chunks, totals_bad ? ", meta totals wrong" : "");
    status = TC_EXIT_FAIL;
  } else if (short_bad) {
    status = TC_EXIT_FAIL;
  } else if (!quiet) {
    printf("verify %s: all %llu graphs in %llu chunk%s good\n", path, (unsigned long long)held,
           (unsigned long long)chunks, chunks == 1 ? "" : "s");
  }

cleanup:
  tc_one_graph_close(&og);
  return status;
}
