/* tc_checkpoint.h — twincache-train checkpoints: model parameters, AdamW
 * moments, the step count and the loader position, in one versioned file.
 *
 * Layout (little-endian): magic "TCTRAIN\0" (8), u32 version (1), u32 F,
 * u32 H, u32 batch size, u64 n_params, u64 step (steps done), u64 loader
 * seed, u64 loader next_seq, u64 train index_end, then params, m, v
 * (n_params f32 each), then u32 FNV-1a of every byte before it. */
#ifndef TC_CHECKPOINT_H
#define TC_CHECKPOINT_H

#include <stdint.h>

#include "tc_model.h"

#define TC_CHECKPOINT_VERSION 1

typedef struct tc_checkpoint_info {
  uint32_t batch;     /* G the run used */
  uint64_t step;      /* optimiser steps done */
  uint64_t seed;      /* loader seed */
  uint64_t next_seq;  /* next batch of the train stream */
  uint64_t index_end; /* end of the train range */
} tc_checkpoint_info;

/* Writes m and info to path (through path.tmp and a rename, so a crash never
 * leaves a half-written checkpoint). Returns 0, or -1 with errmsg set. */
int tc_checkpoint_save(const char *path, const tc_model *m, const tc_checkpoint_info *info,
                       char *errmsg, size_t cap);
/* Reads path into m (whose shape must match) and *info after checking magic,
 * version, shape, size and checksum. Returns 0, or -1 with errmsg set
 * (m is then unspecified). */
int tc_checkpoint_load(const char *path, tc_model *m, tc_checkpoint_info *info, char *errmsg,
                       size_t cap);

#endif /* TC_CHECKPOINT_H */
