/* checkpoint.c — save and validate twincache-train checkpoints (layout in
 * tc_checkpoint.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tc_checkpoint.h"
#include "tc_common.h"
#include "tc_error.h"

#define TC_CK_MAGIC "TCTRAIN"
#define TC_CK_STATE 48                                       /* loader state offset */
#define TC_CK_FRESH (TC_CK_STATE + TWINCACHE_LOADER_STATE_BYTES) /* 112: version 3's worlds */

/* Bytes before the parameters: 112 in version 2, 120 in version 3. */
static size_t tc_ck_header(uint32_t version) { return version >= 3 ? TC_CK_FRESH + 8 : TC_CK_FRESH; }
static size_t tc_ck_bytes(size_t n_params, uint32_t version) {
  return tc_ck_header(version) + 3 * 4 * n_params + 4;
}

/* Flushes the directory holding path, so the rename itself survives a
 * crash. Best effort: some file systems refuse fsync on a directory, and
 * the checkpoint is whole either way (old or new). */
static void sync_parent_dir(const char *path) {
  const char *slash = strrchr(path, '/');
  char *dir = slash ? malloc((size_t)(slash - path) + 2) : NULL;
  if (slash && !dir) return;
  if (dir) {
    size_t n = slash == path ? 1 : (size_t)(slash - path); /* "/x" -> "/" */
    memcpy(dir, path, n);
    dir[n] = '\0';
  }
  int fd = open(dir ? dir : ".", O_RDONLY);
  if (fd >= 0) {
    (void)fsync(fd);
    close(fd);
  }
  free(dir);
}

int tc_checkpoint_save(const char *path, const tc_model *m, const tc_checkpoint_info *info) {
  int rc = TWINCACHE_ENOMEM, tmp_made = 0;
  size_t n = tc_ck_bytes(m->n_params, TC_CHECKPOINT_VERSION);
  uint8_t *buf = malloc(n);
  char *tmp = malloc(strlen(path) + 5);
  FILE *f = NULL;
  if (!buf || !tmp) {
    rc = tc_error_set(TWINCACHE_ENOMEM, "out of memory writing checkpoint %s", path);
    goto cleanup;
  }
  memset(buf, 0, n);
  memcpy(buf, TC_CK_MAGIC, 8);
  tc_store_u32(buf + 8, TC_CHECKPOINT_VERSION);
  tc_store_u32(buf + 12, TC_MODEL_F);
  tc_store_u32(buf + 16, TC_MODEL_H);
  tc_store_u32(buf + 20, info->fresh_rows);
  tc_store_u64(buf + 24, m->n_params);
  tc_store_u64(buf + 32, info->step);
  tc_store_u64(buf + 40, info->seed);
  twincache_loader_state_encode(&info->stream, buf + TC_CK_STATE);
  tc_store_u32(buf + TC_CK_FRESH, info->resample_every); /* + 4: reserved, 0 */
  uint8_t *p = buf + tc_ck_header(TC_CHECKPOINT_VERSION);
  const float *arr[3] = {m->params, m->m, m->v};
  for (int a = 0; a < 3; a++)
    for (size_t i = 0; i < m->n_params; i++, p += 4) {
      uint32_t u;
      memcpy(&u, &arr[a][i], 4);
      tc_store_u32(p, u);
    }
  tc_store_u32(p, tc_fnv1a32(buf, n - 4));
  sprintf(tmp, "%s.tmp", path);
  f = fopen(tmp, "wb");
  if (!f) {
    rc = tc_error_os(errno, TWINCACHE_ENOTFOUND, "cannot create checkpoint %s", tmp);
    goto cleanup;
  }
  tmp_made = 1;
  /* on disk before the rename makes it the checkpoint */
  if (fwrite(buf, 1, n, f) != n || fflush(f) != 0 || fsync(fileno(f)) != 0) {
    rc = tc_error_os(errno, TWINCACHE_EIO, "cannot write checkpoint %s", tmp);
    goto cleanup;
  }
  int closed = fclose(f);
  f = NULL;
  if (closed != 0) {
    rc = tc_error_os(errno, TWINCACHE_EIO, "cannot write checkpoint %s", tmp);
    goto cleanup;
  }
  if (rename(tmp, path) != 0) {
    rc = tc_error_os(errno, TWINCACHE_ENOTFOUND, "cannot rename %s to %s", tmp, path);
    goto cleanup;
  }
  tmp_made = 0;
  sync_parent_dir(path);
  rc = 0;
cleanup:
  if (f) fclose(f);
  if (tmp_made) remove(tmp); /* never leave a partial file behind */
  free(buf);
  free(tmp);
  return rc;
}

int tc_checkpoint_load(const char *path, tc_model *m, tc_checkpoint_info *info) {
  int rc = TWINCACHE_ECORRUPT;
  uint8_t *buf = NULL;
  FILE *f = fopen(path, "rb");
  if (!f) {
    rc = tc_error_os(errno, TWINCACHE_ENOTFOUND, "cannot open checkpoint %s", path);
    goto cleanup;
  }
  size_t want = tc_ck_bytes(m->n_params, TC_CHECKPOINT_VERSION); /* the larger */
  buf = malloc(want + 1);
  if (!buf) {
    rc = tc_error_set(TWINCACHE_ENOMEM, "out of memory reading checkpoint %s", path);
    goto cleanup;
  }
  size_t got = fread(buf, 1, want + 1, f); /* one more: a too-long file shows */
  if (ferror(f)) {
    rc = tc_error_os(errno, TWINCACHE_EIO, "cannot read checkpoint %s", path);
    goto cleanup;
  }
  if (got < 12 || memcmp(buf, TC_CK_MAGIC, 8) != 0) {
    rc = tc_error_set(TWINCACHE_ECORRUPT, "%s is not a twincache-train checkpoint (bad magic)", path);
    goto cleanup;
  }
  uint32_t version = tc_load_u32(buf + 8);
  if (version != TC_CHECKPOINT_VERSION && version != 2) {
    rc = tc_error_set(TWINCACHE_EVERSION, "checkpoint %s has version %" PRIu32 ", this build reads versions 2 "
                      "and %d%s", path, version, TC_CHECKPOINT_VERSION,
                      version == 1 ? " (version 1 lacks the loader's full state: restart the run, or "
                                     "finish it with the build that wrote it)"
                                   : "");
    goto cleanup;
  }
  const size_t header = tc_ck_header(version);
  want = tc_ck_bytes(m->n_params, version);
  if (got < header) {
    rc = tc_error_set(TWINCACHE_ETRUNCATED, "checkpoint %s is truncated (%zu bytes, expected %zu)", path, got,
                      want);
    goto cleanup;
  }
  if (tc_load_u32(buf + 12) != TC_MODEL_F || tc_load_u32(buf + 16) != TC_MODEL_H ||
      tc_load_u64(buf + 24) != m->n_params) {
    rc = tc_error_set(TWINCACHE_EMISMATCH,
                      "checkpoint %s holds a model of another shape (F %" PRIu32 " H %" PRIu32
                      ", %" PRIu64 " parameters; this build has F %d H %d, %zu)", path,
                      tc_load_u32(buf + 12), tc_load_u32(buf + 16), tc_load_u64(buf + 24), TC_MODEL_F,
                      TC_MODEL_H, m->n_params);
    goto cleanup;
  }
  if (got != want) {
    if (got < want)
      rc = tc_error_set(TWINCACHE_ETRUNCATED, "checkpoint %s is truncated (%zu bytes, expected %zu)", path,
                        got, want);
    else
      rc = tc_error_set(TWINCACHE_ECORRUPT, "checkpoint %s is too long (expected %zu bytes)", path, want);
    goto cleanup;
  }
  if (tc_load_u32(buf + want - 4) != tc_fnv1a32(buf, want - 4)) {
    rc = tc_error_set(TWINCACHE_ECHECKSUM, "checkpoint %s is corrupt (checksum mismatch)", path);
    goto cleanup;
  }
  if (twincache_loader_state_decode(buf + TC_CK_STATE, &info->stream) != TWINCACHE_OK) {
    rc = tc_error_set(TWINCACHE_ECORRUPT, "checkpoint %s holds no valid loader state (magic, version or "
                      "reserved byte of its bytes %d..%d wrong)", path, TC_CK_STATE, TC_CK_FRESH - 1);
    goto cleanup;
  }
  info->step = tc_load_u64(buf + 32);
  info->seed = tc_load_u64(buf + 40);
  /* version 2: stored worlds (its reserved u32 at 20 is 0) */
  info->fresh_rows = tc_load_u32(buf + 20);
  info->resample_every = version >= 3 ? tc_load_u32(buf + TC_CK_FRESH) : 1;
  if (info->fresh_rows > TWINCACHE_MAX_SAMPLES || info->resample_every == 0 ||
      (version >= 3 && tc_load_u32(buf + TC_CK_FRESH + 4) != 0) || (!info->fresh_rows && info->resample_every != 1)) {
    rc = tc_error_set(TWINCACHE_ECORRUPT, "checkpoint %s: fresh rows %" PRIu32 ", resample every %" PRIu32
                      " (or its reserved bytes) are not valid", path, info->fresh_rows, info->resample_every);
    goto cleanup;
  }
  const uint8_t *p = buf + header;
  float *arr[3] = {m->params, m->m, m->v};
  for (int a = 0; a < 3; a++)
    for (size_t i = 0; i < m->n_params; i++, p += 4) {
      uint32_t u = tc_load_u32(p);
      memcpy(&arr[a][i], &u, 4);
    }
  rc = 0;
cleanup:
  if (f) fclose(f);
  free(buf);
  return rc;
}
