/* write.c — twincache_import_write: datasets checked, each encoded as one
 * observed frame (FORMAT.md 3.11), chunks written by cache/'s writer into a
 * sibling directory that is renamed to the cache's path once complete. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tc_cache_writer.h"
#include "tc_error.h"
#include "twincache_import.h"

#define TC_IMPORT_CHUNK_GRAPHS 64u
#define TC_IMPORT_MAP_BYTES ((uint64_t)64 << 20) /* doubled by the writer when full */

/* Checks dataset i: sizes, finite values, targets, the graph. */
static int dataset_check(const twincache_dataset *d, uint32_t i) {
  uint32_t n = d->n_nodes, s_n = d->n_rows, r_n = d->n_regimes;
  TC_RETURN_IF(n == 0 || n > TWINCACHE_MAX_NODES, TWINCACHE_EINVAL, "dataset %u: %u variables, 1..%d allowed", i, n,
               TWINCACHE_MAX_NODES);
  TC_RETURN_IF(s_n == 0 || s_n > TWINCACHE_MAX_SAMPLES, TWINCACHE_EINVAL, "dataset %u: %u rows per regime, 1..%d "
               "allowed", i, s_n, TWINCACHE_MAX_SAMPLES);
  TC_RETURN_IF(r_n == 0 || r_n > TWINCACHE_MAX_INTER + 1, TWINCACHE_EINVAL, "dataset %u: %u regimes, 1..%d allowed",
               i, r_n, TWINCACHE_MAX_INTER + 1);
  TC_RETURN_IF(!d->rows, TWINCACHE_EINVAL, "dataset %u: rows is NULL", i);
  TC_RETURN_IF(d->n_targets && !d->targets, TWINCACHE_EINVAL, "dataset %u: n_targets without targets", i);
  for (uint32_t r = 0; d->regime_rows && r < r_n; r++)
    TC_RETURN_IF(d->regime_rows[r] == 0 || d->regime_rows[r] > s_n, TWINCACHE_EINVAL, "dataset %u, regime %u: %u "
                 "rows, 1..%u (n_rows) allowed", i, r, d->regime_rows[r], s_n);
  for (uint32_t r = 0; r < r_n; r++)
    for (uint32_t s = 0; s < (d->regime_rows ? d->regime_rows[r] : s_n); s++)
      for (uint32_t j = 0; j < n; j++)
        TC_RETURN_IF(!isfinite(d->rows[((size_t)r * s_n + s) * n + j]), TWINCACHE_EINVAL,
                     "dataset %u, regime %u, row %u, column %u: %g is not a finite number", i, r, s, j,
                     (double)d->rows[((size_t)r * s_n + s) * n + j]);
  for (uint32_t r = 0; d->n_targets && r < r_n; r++) {
    uint32_t c = d->n_targets[r];
    TC_RETURN_IF(r == 0 && c != 0, TWINCACHE_EINVAL, "dataset %u: regime 0 is the observational one, it has no "
                 "target (it has %u)", i, c);
    TC_RETURN_IF(r > 0 && (c == 0 || c > TWINCACHE_MAX_TARGETS), TWINCACHE_EINVAL, "dataset %u, regime %u: %u "
                 "targets, 1..%d allowed (only regime 0 is observational)", i, r, c, TWINCACHE_MAX_TARGETS);
    const uint16_t *t = d->targets + (size_t)r * TWINCACHE_MAX_TARGETS;
    for (uint32_t a = 0; a < c; a++) {
      TC_RETURN_IF(t[a] >= n, TWINCACHE_EINVAL, "dataset %u, regime %u: target %u out of range (%u variables)", i,
                   r, t[a], n);
      for (uint32_t b = 0; b < a; b++)
        TC_RETURN_IF(t[a] == t[b], TWINCACHE_EINVAL, "dataset %u, regime %u: target %u repeated", i, r, t[a]);
    }
  }
  if (d->adj && !twincache_graph_is_dag(d->adj, n, n))
    return tc_error_set(TWINCACHE_EINVAL, "dataset %u: the graph has a directed cycle or a self-loop", i);
  return TWINCACHE_OK;
}

/* Dataset d as graph index i of g (allocated at the cache's largest sizes),
 * with S = s_n rows a world (the cache's; regimes past their count +0.0). */
static void dataset_graph(const twincache_dataset *d, uint64_t i, uint32_t s_n, twincache_graph *g) {
  uint32_t n = d->n_nodes, k_n = d->n_regimes - 1, s_d = d->n_rows;
  g->index = i;
  g->n_nodes = n, g->n_samples = s_n, g->n_inter = k_n, g->n_hidden = 0;
  g->mechanism = TWINCACHE_MECH_LINEAR;
  g->noise = TWINCACHE_NOISE_GAUSS;
  g->family = TWINCACHE_FAMILY_UNKNOWN;
  g->flags = (uint8_t)(TWINCACHE_GRAPH_INDEPENDENT | TWINCACHE_GRAPH_OBSERVED |
                       (d->adj ? 0u : TWINCACHE_GRAPH_NO_DAG) | (d->n_targets ? 0u : TWINCACHE_GRAPH_NO_TARGETS));
  for (uint32_t a = 0; a < n; a++)
    for (uint32_t b = 0; b < n; b++) {
      g->adj[(size_t)a * g->ld_adj + b] = d->adj ? d->adj[(size_t)a * n + b] != 0 : 0;
      g->weight[(size_t)a * g->ld_adj + b] = 0.0f;
    }
  memset(g->noise_scale, 0, sizeof(float) * n);
  for (uint32_t k = 0; k < k_n; k++) {
    const uint16_t *t = d->n_targets ? d->targets + (size_t)(k + 1) * TWINCACHE_MAX_TARGETS : NULL;
    uint32_t c = d->n_targets ? d->n_targets[k + 1] : 1;
    g->target[k] = t ? t[0] : 0;
    g->kind[k] = TWINCACHE_INTER_OBSERVED;
    g->value[k] = 0.0f;
    g->n_targets[k] = (uint8_t)c;
    for (uint32_t a = 1; a < c; a++) {
      g->more_target[(size_t)k * (TWINCACHE_MAX_TARGETS - 1) + a - 1] = t[a];
      g->more_value[(size_t)k * (TWINCACHE_MAX_TARGETS - 1) + a - 1] = 0.0f;
    }
  }
  for (uint32_t r = 0; r <= k_n; r++) { /* regime r: its own rows, then +0.0 to S (not stored) */
    uint32_t held = d->regime_rows ? d->regime_rows[r] : s_d;
    float *w = r ? g->inter + (size_t)(r - 1) * s_n * g->ld : g->base;
    for (uint32_t s = 0; s < s_n; s++) {
      if (s < held) memcpy(w + (size_t)s * g->ld, d->rows + ((size_t)r * s_d + s) * n, sizeof(float) * n);
      else memset(w + (size_t)s * g->ld, 0, sizeof(float) * n);
    }
    g->world_rows[r] = held;
  }
}

/* Removes the files of directory dir, then dir (a failed import's). */
static void dir_remove(const char *dir) {
  DIR *dp = opendir(dir);
  if (dp) {
    struct dirent *e;
    char path[4096];
    while ((e = readdir(dp)) != NULL) {
      if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      unlink(path);
    }
    closedir(dp);
  }
  rmdir(dir);
}

int twincache_import_write(const char *dir, const twincache_dataset *sets, uint32_t count,
                           const char *source_json) {
  if (!dir || !sets || count == 0)
    return tc_error_set(TWINCACHE_EINVAL, "twincache_import_write: no directory or no dataset");
  tc_error_clear();
  struct stat st;
  if (stat(dir, &st) == 0 || errno != ENOENT)
    return tc_error_set(TWINCACHE_EINVAL, "%.400s exists: an import writes a new cache, it never replaces one", dir);
  twincache_dims dims = {.graphs = count, .chunk_graphs = TC_IMPORT_CHUNK_GRAPHS};
  for (uint32_t i = 0; i < count; i++) {
    int rc = dataset_check(&sets[i], i);
    if (rc != TWINCACHE_OK) return rc;
    if (sets[i].n_rows > dims.samples) dims.samples = sets[i].n_rows;
    if (sets[i].n_nodes > dims.max_nodes) dims.max_nodes = sets[i].n_nodes;
    if (sets[i].n_regimes - 1 > dims.max_inter) dims.max_inter = sets[i].n_regimes - 1;
  }
  size_t cfg_cap = 256 + (source_json ? strlen(source_json) : 4);
  char *config = malloc(cfg_cap), *tmp = malloc(strlen(dir) + 64);
  twincache_graph *g = twincache_graph_alloc(dims.max_nodes, dims.samples, dims.max_inter ? dims.max_inter : 1, 0);
  twincache_cctx *cc = twincache_cctx_create(3);
  twincache_chunk_builder *b = twincache_chunk_builder_create();
  tc_cache_writer *w = NULL;
  uint8_t *frame = NULL;
  int rc = TWINCACHE_ENOMEM, made = 0;
  if (!config || !tmp || !g || !cc || !b) {
    tc_error_set(rc, "import: out of memory for %u datasets", count);
    goto cleanup;
  }
  snprintf(config, cfg_cap,
           "{\"format_version\":%d,\"observed\":true,\"importer\":\"twincache-import\",\"datasets\":%u,"
           "\"samples\":%u,\"chunk_graphs\":%u,\"source\":%s}",
           TWINCACHE_FORMAT_VERSION, count, dims.samples, TC_IMPORT_CHUNK_GRAPHS, source_json ? source_json : "null");
  snprintf(tmp, strlen(dir) + 64, "%s.import-%ld", dir, (long)getpid());
  if ((rc = tc_cache_writer_open(tmp, &dims, config, "twincache-import " TWINCACHE_VERSION_STRING,
                                 TC_IMPORT_MAP_BYTES, &w)) != TWINCACHE_OK)
    goto cleanup;
  made = 1;
  twincache_chunk_builder_set_tag(b, tc_cache_writer_tag(w));
  twincache_stats stats = {0};
  size_t cap = twincache_frame_bound(dims.max_nodes, dims.samples, dims.max_inter, 0), fsize = 0;
  if (!(frame = malloc(cap))) {
    rc = tc_error_set(TWINCACHE_ENOMEM, "import: out of memory for a %zu-byte frame", cap);
    goto cleanup;
  }
  for (uint32_t i = 0; i < count; i++) {
    if (i % TC_IMPORT_CHUNK_GRAPHS == 0) twincache_chunk_builder_reset(b, i);
    dataset_graph(&sets[i], i, dims.samples, g);
    if ((rc = twincache_frame_encode(cc, g, frame, cap, &fsize)) != TWINCACHE_OK ||
        (rc = twincache_chunk_builder_add_frame(b, frame, fsize)) != TWINCACHE_OK) {
      tc_error_wrap(rc, "import: dataset %u", i);
      goto cleanup;
    }
    stats.raw_bytes += twincache_graph_raw_bytes(g);
    stats.frame_bytes += fsize;
    stats.nodes += g->n_nodes;
    for (uint32_t a = 0; a < g->n_nodes; a++)
      for (uint32_t c = 0; c < g->n_nodes; c++) stats.edges += g->adj[(size_t)a * g->ld_adj + c];
    if (i + 1 == count || (i + 1) % TC_IMPORT_CHUNK_GRAPHS == 0) {
      const void *data;
      size_t size;
      if ((rc = twincache_chunk_builder_finish(b, &data, &size)) != TWINCACHE_OK) goto cleanup;
      tc_cache_chunk c = {.chunk = i / TC_IMPORT_CHUNK_GRAPHS, .data = data, .size = size};
      if ((rc = tc_cache_writer_put(w, &c, 1, (uint64_t)i + 1, &stats)) != TWINCACHE_OK) goto cleanup;
    }
  }
  tc_cache_writer_close(w);
  w = NULL;
  if (rename(tmp, dir) != 0) {
    rc = tc_error_set(TWINCACHE_EIO, "import: cannot rename %.400s to %.400s: %s", tmp, dir, strerror(errno));
    goto cleanup;
  }
  made = 0;
  rc = TWINCACHE_OK;

cleanup:
  tc_cache_writer_close(w);
  if (made) dir_remove(tmp);
  free(frame);
  twincache_chunk_builder_free(b);
  twincache_cctx_free(cc);
  twincache_graph_free(g);
  free(tmp);
  free(config);
  return rc;
}
