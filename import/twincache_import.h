/* twincache_import.h — writing a cache of observed data (FORMAT.md 3.11):
 * datasets that have rows and regimes but no SCM (a DCDI folder, a CSV
 * with a regime or targets column, numpy arrays from Python), one graph
 * frame each, through cache/'s writer and the format's encoder.
 *
 * Conventions as in twincache_format.h: 0 on success, a negative
 * TWINCACHE_E* code on error with twincache_last_error() naming the
 * dataset, regime, row and column concerned. Thread-safe for distinct
 * directories (no shared state). */
#ifndef TWINCACHE_IMPORT_H
#define TWINCACHE_IMPORT_H

#include <stddef.h>
#include <stdint.h>

#include "twincache_format.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One dataset: R = K + 1 regimes over N variables, regime r holding
 * regime_rows[r] rows (1..S; NULL: S each). Regime 0 is the observational
 * one (no target); regime r >= 1 is world r - 1 of the frame. Every value
 * a regime holds must be finite; rows past its count are not read. */
typedef struct twincache_dataset {
  uint32_t n_nodes;   /* N, 1..TWINCACHE_MAX_NODES */
  uint32_t n_rows;    /* S, the most rows a regime holds, 1..TWINCACHE_MAX_SAMPLES */
  uint32_t n_regimes; /* R = K + 1, 1..TWINCACHE_MAX_INTER + 1 */
  const float *rows;  /* (R, S, N) row-major: rows[(r*S + s)*N + j], s < regime_rows[r] */
  /* (N, N): adj[i*N + j] != 0 <=> edge i -> j; must be acyclic.
   * NULL: the graph is not known (the frame's NO_DAG flag). */
  const uint8_t *adj;
  /* (R) targets of regime r: 0 for regime 0, 1..TWINCACHE_MAX_TARGETS for
   * every other; NULL: the targets are withheld (NO_TARGETS). */
  const uint8_t *n_targets;
  /* (R, TWINCACHE_MAX_TARGETS): regime r's distinct targets (< N) in its
   * first n_targets[r] entries; read only when n_targets is not NULL. */
  const uint16_t *targets;
  /* (R) rows regime r holds, 1..S, or NULL: S each (FORMAT.md 3.10: a
   * frame stores each count only when they differ). */
  const uint32_t *regime_rows;
} twincache_dataset;

/* Writes datasets[0..count) as a new cache at dir: graph i is dataset i,
 * frames flagged OBSERVED (FORMAT.md 3.11), each regime with its own rows
 * (section 7b when counts differ); the cache's S (dims) is the most rows
 * any regime holds, and each frame has that S. Config
 * {"format_version":5,"observed":true,"source":SOURCE,...} where SOURCE is
 * source_json (a JSON value the caller vouches for; NULL: null). The cache
 * is built in a sibling directory and renamed to dir only once complete, so
 * dir is either absent or a whole cache: nothing half-written is left.
 * dir must not exist. Returns 0, or TWINCACHE_EINVAL (a dataset out of the
 * format's limits, a non-finite value, a target out of range or repeated,
 * a cyclic graph, a regime count outside 1..S, dir exists, count 0),
 * TWINCACHE_ENOMEM, TWINCACHE_EIO, TWINCACHE_EFULL, TWINCACHE_ELMDB or
 * TWINCACHE_EBUSY, with one message naming what is wrong. */
int twincache_import_write(const char *dir, const twincache_dataset *datasets, uint32_t count,
                           const char *source_json);

#ifdef __cplusplus
}
#endif
#endif /* TWINCACHE_IMPORT_H */
