/* tc_checkpoint.h — twincache-train checkpoints: model parameters, AdamW
 * moments, the step count and the training loader's whole state, in one
 * versioned, checksummed file written atomically.
 *
 * Layout, version 3 (little-endian; offsets in bytes):
 *     0  magic "TCTRAIN\0" (8)
 *     8  u32 version (3)
 *    12  u32 F, 16 u32 H (the model's shape, MODEL.md)
 *    20  u32 fresh rows: --fresh-rows of the run (0: the stored worlds)
 *    24  u64 n_params
 *    32  u64 step: optimiser steps done
 *    40  u64 seed: --seed of the run (model initialisation)
 *    48  the train loader's state, TWINCACHE_LOADER_STATE_BYTES (64) as
 *        twincache_loader_state_encode writes them: stream position
 *        (next_seq), shuffle seed, batch size, index range, rank/world,
 *        shuffle/drop_last/equal_ranks and the cache's tag
 *   112  u32 resample every: --resample-every (1 with stored worlds)
 *   116  u32 reserved (0)
 *   120  params, m, v (n_params f32 each)
 *   end  u32 FNV-1a of every byte before it
 * The loader's state has no room for how the worlds are drawn (fresh rows,
 * resample every), so the checkpoint keeps them: they fix the stream too.
 * Version 2 (read: stored worlds) had 20 reserved (0) and the parameters at
 * 112. Version 1 held only the loader's seed and next_seq in a 64-byte
 * header; it is refused with a message naming the file and the versions. */
#ifndef TC_CHECKPOINT_H
#define TC_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "tc_model.h"
#include "twincache_loader.h"

#define TC_CHECKPOINT_VERSION 3

typedef struct tc_checkpoint_info {
  uint64_t step;                 /* optimiser steps done */
  uint64_t seed;                 /* --seed of the run */
  twincache_loader_state stream; /* the train loader after `step` batches */
  uint32_t fresh_rows;           /* 0: stored worlds; else rows of the fresh worlds */
  uint32_t resample_every;       /* >= 1; 1 with stored worlds */
} tc_checkpoint_info;

/* Writes m and info to path through path.tmp (flushed to disk, then renamed
 * over path, then the directory flushed), so a crash leaves either the old
 * checkpoint or the new one, never a torn file. Returns 0, or a negative
 * status (ENOMEM, EIO, EFULL, ENOTFOUND: no such directory) with one message
 * naming the file (twincache_last_error; path.tmp is then removed). */
int tc_checkpoint_save(const char *path, const tc_model *m, const tc_checkpoint_info *info);
/* Reads path into m (whose shape must match) and *info after checking, in
 * this order: magic, version, shape, size, checksum, and that the loader
 * state decodes (twincache_loader_state_decode). Whether the state fits a
 * cache and options is twincache_loader_open's check. Returns 0, or a
 * negative status — ENOTFOUND, EIO, ENOMEM, ECORRUPT (not a checkpoint, too
 * long, bad loader state), EVERSION, EMISMATCH (another model shape),
 * ETRUNCATED, ECHECKSUM — with one message naming the file and what is
 * wrong (twincache_last_error; m and *info are then unspecified). */
int tc_checkpoint_load(const char *path, tc_model *m, tc_checkpoint_info *info);

#endif /* TC_CHECKPOINT_H */
