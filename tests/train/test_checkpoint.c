/* test_checkpoint: save/load round trip is bit-exact (model, moments, the
 * whole loader state, fresh rows and resample every) and leaves no
 * temporary file; a version-2 file (no fresh-world fields, parameters at
 * 112) still loads as stored worlds; a flipped byte, a truncated file, a
 * foreign file, a version-1 file, a checksummed file whose loader state
 * does not decode, one whose world fields contradict each other and a
 * missing file are each refused with a message naming the file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_checkpoint.h"
#include "tc_common.h"
#include "tc_test.h"


static long file_size(const char *p) {
  FILE *f = fopen(p, "rb");
  if (!f) return -1;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fclose(f);
  return n;
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : ".";
  char path[1024], bad[1100];
  const char *err = "";
  snprintf(path, sizeof path, "%s/test_checkpoint.ckpt", dir);
  snprintf(bad, sizeof bad, "%s.bad", path);
  tc_model *a = tc_model_create(3), *b = tc_model_create(4);
  if (!a || !b) return 1;
  for (size_t i = 0; i < a->n_params; i++) a->m[i] = (float)i * 1e-3f, a->v[i] = (float)i * 1e-6f;
  tc_checkpoint_info in = {
      .step = 123,
      .seed = 9,
      .stream = {.seed = 9, .next_seq = 456, .magic = TWINCACHE_LOADER_STATE_MAGIC,
                 .version = TWINCACHE_LOADER_STATE_VERSION, .cache_tag = 0x0123456789abcdefull,
                 .index_begin = 0, .index_end = 900, .batch_size = 32, .world_size = 1,
                 .shuffle = 1},
      .fresh_rows = 200,
      .resample_every = 3};
  tc_checkpoint_info out;
  TC_CHECK(tc_checkpoint_save(path, a, &in) == 0, "%s", twincache_last_error());
  TC_CHECK(tc_checkpoint_load(path, b, &out) == 0, "%s", twincache_last_error());
  TC_CHECK(!memcmp(a->params, b->params, 4 * a->n_params) && !memcmp(a->m, b->m, 4 * a->n_params) &&
            !memcmp(a->v, b->v, 4 * a->n_params),
        "round trip is bit-exact");
  TC_CHECK(out.step == 123 && out.seed == 9 && !memcmp(&out.stream, &in.stream, sizeof in.stream) &&
               out.fresh_rows == 200 && out.resample_every == 3,
           "info round trip (the whole loader state, the worlds)");
  /* corrupt copies */
  long n = file_size(path);
  unsigned char *bytes = malloc((size_t)n);
  FILE *f = fopen(path, "rb");
  TC_CHECK(f && fread(bytes, 1, (size_t)n, f) == (size_t)n, "read back");
  if (f) fclose(f);
  struct { long at; long len; const char *what; } cases[] = {
      {1000, n, "flipped payload byte"}, {0, n, "bad magic"}, {-1, n - 7, "truncated"}};
  for (int c = 0; c < 3; c++) {
    f = fopen(bad, "wb");
    if (!f) { tc_test_count_failure(); break; }
    if (cases[c].at >= 0) bytes[cases[c].at] ^= 0x5a;
    fwrite(bytes, 1, (size_t)cases[c].len, f);
    fclose(f);
    if (cases[c].at >= 0) bytes[cases[c].at] ^= 0x5a;
    TC_CHECK(tc_checkpoint_load(bad, b, &out) < 0 && (err = twincache_last_error()) && strstr(err, bad),
             "%s", cases[c].what);
    printf("%s -> %s\n", cases[c].what, err);
  }
  /* an older version (checked before the checksum), and a file whose
   * checksum holds but whose loader state (bytes 48..111) has a bad magic */
  struct { long at; unsigned char to; const char *want, *what; } fields[] = {
      {8, 1, "version 1", "version 1 refused"},
      {48 + 16, 0, "loader state", "undecodable loader state refused"}};
  for (int c = 0; c < 2; c++) {
    unsigned char keep = bytes[fields[c].at], sum[4];
    memcpy(sum, bytes + n - 4, 4);
    bytes[fields[c].at] = fields[c].to;
    tc_store_u32(bytes + n - 4, tc_fnv1a32(bytes, (size_t)n - 4));
    f = fopen(bad, "wb");
    if (!f) { tc_test_count_failure(); break; }
    fwrite(bytes, 1, (size_t)n, f);
    fclose(f);
    bytes[fields[c].at] = keep;
    memcpy(bytes + n - 4, sum, 4);
    TC_CHECK(tc_checkpoint_load(bad, b, &out) < 0 && (err = twincache_last_error()) && strstr(err, bad) &&
                 strstr(err, fields[c].want),
             "%s: %s", fields[c].what, err);
    printf("%s -> %s\n", fields[c].what, err);
  }
  /* version 2: the same file without bytes 112..119, version 2, byte 20 zero */
  {
    unsigned char *v2 = malloc((size_t)n);
    TC_REQUIRE(v2);
    memcpy(v2, bytes, 112);
    memcpy(v2 + 112, bytes + 120, (size_t)n - 120);
    tc_store_u32(v2 + 8, 2);
    tc_store_u32(v2 + 20, 0);
    tc_store_u32(v2 + n - 8 - 4, tc_fnv1a32(v2, (size_t)n - 8 - 4));
    f = fopen(bad, "wb");
    TC_REQUIRE(f && fwrite(v2, 1, (size_t)n - 8, f) == (size_t)n - 8);
    fclose(f);
    memset(&out, 0xff, sizeof out);
    TC_CHECK(tc_checkpoint_load(bad, b, &out) == 0, "version 2: %s", twincache_last_error());
    TC_CHECK(out.fresh_rows == 0 && out.resample_every == 1 && out.step == 123 &&
                 !memcmp(a->params, b->params, 4 * a->n_params) && !memcmp(a->v, b->v, 4 * a->n_params),
             "version 2 reads as stored worlds with the same parameters");
    /* stored worlds (0 rows) resampled every 5 epochs: contradictory */
    memcpy(v2, bytes, (size_t)n);
    tc_store_u32(v2 + 20, 0);
    tc_store_u32(v2 + 112, 5);
    tc_store_u32(v2 + n - 4, tc_fnv1a32(v2, (size_t)n - 4));
    f = fopen(bad, "wb");
    TC_REQUIRE(f && fwrite(v2, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    TC_CHECK(tc_checkpoint_load(bad, b, &out) == TWINCACHE_ECORRUPT && strstr(twincache_last_error(), bad) &&
                 strstr(twincache_last_error(), "resample every 5"),
             "contradictory world fields: %s", twincache_last_error());
    free(v2);
  }
  {
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    TC_CHECK(file_size(tmp) < 0, "no %s left after a save", tmp);
  }
  TC_CHECK(tc_checkpoint_load("/nonexistent/x.ckpt", b, &out) == TWINCACHE_ENOTFOUND &&
               strstr(twincache_last_error(), "/nonexistent/x.ckpt"),
           "missing file: %s", twincache_last_error());
  remove(bad);
  remove(path);
  free(bytes);
  tc_model_free(a);
  tc_model_free(b);
  if (tc_test_failures()) return 1;
  printf("checkpoint: round trip exact, damaged files refused\n");
  return 0;
}
