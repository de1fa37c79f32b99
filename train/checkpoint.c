/* checkpoint.c — save and validate twincache-train checkpoints. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_checkpoint.h"
#include "tc_common.h"

#define TC_CK_MAGIC "TCTRAIN"
#define TC_CK_HEADER 64 /* 8 magic + 4 u32 + 5 u64: see tc_checkpoint.h */

static size_t tc_ck_bytes(size_t n_params) { return TC_CK_HEADER + 3 * 4 * n_params + 4; }

int tc_checkpoint_save(const char *path, const tc_model *m, const tc_checkpoint_info *info,
                       char *errmsg, size_t cap) {
  int rc = -1;
  size_t n = tc_ck_bytes(m->n_params);
  uint8_t *buf = malloc(n);
  char *tmp = malloc(strlen(path) + 5);
  FILE *f = NULL;
  if (!buf || !tmp) {
    snprintf(errmsg, cap, "out of memory");
    goto cleanup;
  }
  memset(buf, 0, n);
  memcpy(buf, TC_CK_MAGIC, 8);
  tc_store_u32(buf + 8, TC_CHECKPOINT_VERSION);
  tc_store_u32(buf + 12, TC_MODEL_F);
  tc_store_u32(buf + 16, TC_MODEL_H);
  tc_store_u32(buf + 20, info->batch);
  tc_store_u64(buf + 24, m->n_params);
  tc_store_u64(buf + 32, info->step);
  tc_store_u64(buf + 40, info->seed);
  tc_store_u64(buf + 48, info->next_seq);
  tc_store_u64(buf + 56, info->index_end);
  uint8_t *p = buf + TC_CK_HEADER;
  const float *arr[3] = {m->params, m->m, m->v};
  for (int a = 0; a < 3; a++)
    for (size_t i = 0; i < m->n_params; i++, p += 4) {
      uint32_t u;
      memcpy(&u, &arr[a][i], 4);
      tc_store_u32(p, u);
    }
  tc_store_u32(p, tc_fnv1a32(buf, (size_t)(p - buf)));
  sprintf(tmp, "%s.tmp", path);
  f = fopen(tmp, "wb");
  if (!f || fwrite(buf, 1, (size_t)(p + 4 - buf), f) != (size_t)(p + 4 - buf)) {
    snprintf(errmsg, cap, "cannot write checkpoint %s: %s", tmp, strerror(errno));
    goto cleanup;
  }
  if (fclose(f) != 0) {
    f = NULL;
    snprintf(errmsg, cap, "cannot write checkpoint %s: %s", tmp, strerror(errno));
    goto cleanup;
  }
  f = NULL;
  if (rename(tmp, path) != 0) {
    snprintf(errmsg, cap, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
    goto cleanup;
  }
  rc = 0;
cleanup:
  if (f) fclose(f);
  free(buf);
  free(tmp);
  return rc;
}

int tc_checkpoint_load(const char *path, tc_model *m, tc_checkpoint_info *info, char *errmsg,
                       size_t cap) {
  int rc = -1;
  uint8_t *buf = NULL;
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(errmsg, cap, "cannot open checkpoint %s: %s", path, strerror(errno));
    goto cleanup;
  }
  size_t want = tc_ck_bytes(m->n_params);
  buf = malloc(want + 1);
  if (!buf) {
    snprintf(errmsg, cap, "out of memory");
    goto cleanup;
  }
  size_t got = fread(buf, 1, want + 1, f);
  if (got < TC_CK_HEADER || memcmp(buf, TC_CK_MAGIC, 8) != 0) {
    snprintf(errmsg, cap, "%s is not a twincache-train checkpoint (bad magic)", path);
    goto cleanup;
  }
  uint32_t version = tc_load_u32(buf + 8);
  if (version != TC_CHECKPOINT_VERSION) {
    snprintf(errmsg, cap, "checkpoint %s has version %u, this build reads version %u", path,
             version, TC_CHECKPOINT_VERSION);
    goto cleanup;
  }
  if (tc_load_u32(buf + 12) != TC_MODEL_F || tc_load_u32(buf + 16) != TC_MODEL_H ||
      tc_load_u64(buf + 24) != m->n_params) {
    snprintf(errmsg, cap, "checkpoint %s holds a model of another shape", path);
    goto cleanup;
  }
  if (got != want) {
    snprintf(errmsg, cap, "checkpoint %s is truncated or too long (%zu bytes, expected %zu)",
             path, got, want);
    goto cleanup;
  }
  if (tc_load_u32(buf + want - 4) != tc_fnv1a32(buf, want - 4)) {
    snprintf(errmsg, cap, "checkpoint %s is corrupt (checksum mismatch)", path);
    goto cleanup;
  }
  info->batch = tc_load_u32(buf + 20);
  info->step = tc_load_u64(buf + 32);
  info->seed = tc_load_u64(buf + 40);
  info->next_seq = tc_load_u64(buf + 48);
  info->index_end = tc_load_u64(buf + 56);
  const uint8_t *p = buf + TC_CK_HEADER;
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
