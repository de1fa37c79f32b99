/* test_cache_damage — damaged copies of a cache, each refused with a clean
 * status by the library and exit 1 by the programs (issue 8):
 *  - data.mdb truncated to 35%, 60% and 97% (and to a few bytes):
 *    TWINCACHE_ETRUNCATED, never a SIGBUS;
 *  - one byte of the stored config changed ("seed":1 -> "seed":3):
 *    TWINCACHE_ECORRUPT (meta checksum), and the generator refuses to extend;
 *  - the chunk record of a cache of another seed spliced in under the same
 *    key: graphs of that chunk are TWINCACHE_ECORRUPT (cache tag), verify
 *    names the chunk;
 *  - garbage lock files: LMDB re-initialises a lock file no process holds and
 *    the generator's lock is an flock, so such a cache reads and extends
 *    normally;
 *  - --map-size 2^64-1 is refused and leaves nothing behind;
 *  - a version 1 cache (meta without tag or checksum, version-1 chunk
 *    records and frames) still opens and reads, and the generator refuses
 *    to extend it with a clear message;
 *  - a version-1 chunk record spliced into a version-3 cache (it has no
 *    tag to refuse it by) is refused for its version, verify names it;
 *  - a short chunk in the middle of a cache (only the last may hold fewer
 *    than C graphs) is refused, verify names it;
 *  - LMDB's newest meta page with its transaction id zeroed: LMDB falls
 *    back to the older meta page, an earlier state with fewer graphs;
 *    verify says how many of how many and exits 1 (never "good");
 *  - the same page's last-page number (8 bytes before it) made huge:
 *    TWINCACHE_ETRUNCATED ("damaged copy"), never out of memory, for every
 *    program and the generator;
 *  - chunk 0 rebuilt from a cache of S = 8 under the S = 16 cache's tag:
 *    read_graph (Python's Cache[i]) and show refuse its frames (ECORRUPT).
 * Called as: test_cache_damage GEN INSPECT LOADER_BENCH SCRATCH */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "inspect_test.h"
#include "tc_cache_raw.h"
#include "tc_cache_writer.h"
#include "tc_common.h"

static const char *gen_path, *inspect_path, *bench_path, *scratch;

/* Runs a program and returns its exit status (128 + signal; -1 not run). */
static int run_status(const char *const argv[], char **err_out) {
  tt_result r;
  if (tt_run((char *const *)argv, scratch, &r) != 0) return -1;
  int st = r.status;
  if (err_out) *err_out = strdup(r.err ? r.err : "");
  tt_result_clear(&r);
  return st;
}

/* Every reading program on dir exits 1; inspect's message names dir. */
static void check_programs_fail(const char *dir, const char *what, int with_info) {
  const char *verify[] = {inspect_path, "verify", dir, NULL};
  const char *info[] = {inspect_path, "info", dir, NULL};
  const char *show[] = {inspect_path, "show", dir, "0", NULL};
  const char *bench[] = {bench_path, "--cache", dir, NULL};
  char *err = NULL;
  int st = run_status(verify, &err);
  TC_CHECK(st == 1, "%s: inspect verify exited %d: %s", what, st, err ? err : "");
  TC_CHECK(err && strstr(err, dir), "%s: verify's message does not name %s: %s", what, dir, err ? err : "");
  free(err);
  if (with_info) {
    st = run_status(info, NULL);
    TC_CHECK(st == 1, "%s: inspect info exited %d", what, st);
    st = run_status(show, NULL);
    TC_CHECK(st == 1, "%s: inspect show exited %d", what, st);
  }
  st = run_status(bench, NULL);
  TC_CHECK(st == 1, "%s: loader bench exited %d", what, st);
}

/* The generator extending dir (tt_make_cache's flags, seed `seed`). */
static int gen_extend(const char *dir, const char *seed, char **err) {
  const char *argv[] = {gen_path, "--out", dir, "--graphs", "160", "--seed", seed, "--nodes", "3:6",
                        "--samples", "16", "--chunk-graphs", "16", "--quiet", NULL};
  return run_status(argv, err);
}

static uint64_t file_size(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

static void test_truncated(const char *good) {
  char path[4096], data[4200];
  snprintf(data, sizeof data, "%s/data.mdb", good);
  uint64_t size = file_size(data);
  TC_CHECK(size > 0, "no data file in %s", good);
  static const unsigned pct[] = {35, 60, 97};
  for (size_t i = 0; i < 4; i++) {
    snprintf(path, sizeof path, "%s/trunc-%u", scratch, i < 3 ? pct[i] : 0);
    TC_CHECK(tt_copy_cache(good, path) == 0, "copy to %s", path);
    snprintf(data, sizeof data, "%s/data.mdb", path);
    uint64_t to = i < 3 ? size * pct[i] / 100 : 100;
    TC_CHECK(truncate(data, (off_t)to) == 0, "truncate %s", data);
    twincache_cache *c = NULL;
    int rc = twincache_cache_open(path, &c);
    TC_CHECK(rc == TWINCACHE_ETRUNCATED, "%s: open gave %d (%s)", path, rc, twincache_strerror(rc));
    TC_CHECK(strstr(twincache_last_error(), "data.mdb") != NULL, "last error: %s",
          twincache_last_error());
    twincache_cache_close(c);
    check_programs_fail(path, "truncated", 1);
    char *err = NULL;
    int st = gen_extend(path, "1", &err);
    TC_CHECK(st == 1 && err && strstr(err, "truncated"), "truncated: gen exited %d: %s", st, err ? err : "");
    free(err);
  }
}

/* Replaces every `from` in the file by `to` (same length); returns the count. */
static int replace_bytes(const char *file, const char *from, const char *to) {
  size_t n, len = strlen(from);
  char *b = tt_read_file(file, &n);
  int count = 0;
  if (!b) return -1;
  for (size_t i = 0; i + len <= n; i++)
    if (memcmp(b + i, from, len) == 0) {
      memcpy(b + i, to, len);
      count++;
    }
  FILE *f = fopen(file, "wb");
  if (!f || fwrite(b, 1, n, f) != n) count = -1;
  if (f) fclose(f);
  free(b);
  return count;
}

static void test_meta_flip(const char *good) {
  char path[4096], data[4200];
  snprintf(path, sizeof path, "%s/meta-flip", scratch);
  TC_CHECK(tt_copy_cache(good, path) == 0, "copy to %s", path);
  snprintf(data, sizeof data, "%s/data.mdb", path);
  int n = replace_bytes(data, "\"seed\":1,", "\"seed\":3,");
  TC_CHECK(n >= 1, "config text not found in %s (%d)", data, n);
  twincache_cache *c = NULL;
  int rc = twincache_cache_open(path, &c);
  TC_CHECK(rc == TWINCACHE_ECORRUPT, "meta flip: open gave %d (%s)", rc, twincache_strerror(rc));
  TC_CHECK(strstr(twincache_last_error(), "meta") != NULL, "last error: %s", twincache_last_error());
  twincache_cache_close(c);
  check_programs_fail(path, "meta flip", 1);
  for (int s = 0; s < 2; s++) {
    char *err = NULL;
    int st = gen_extend(path, s ? "1" : "3", &err);
    TC_CHECK(st == 1 && err && strstr(err, "meta"), "meta flip: gen --seed %s exited %d: %s", s ? "1" : "3", st,
          err ? err : "");
    free(err);
  }
}

/* Builds chunk `chunk` of cache `from` and writes it into cache `into` under
 * the same key, through the cache writer (as a buggy copy tool would); the
 * record carries the tag of `from`, or of `into` when retag (a record that
 * passes the tag check, so what the frames hold is what is tested). */
static void splice_chunk(const char *from, const char *into, uint64_t chunk, int retag) {
  twincache_cache *src = NULL, *dst = NULL;
  twincache_chunk_builder *b = twincache_chunk_builder_create();
  tc_cache_writer *w = NULL;
  TC_CHECK(b && twincache_cache_open(from, &src) == 0 && twincache_cache_open(into, &dst) == 0, "open %s/%s",
        from, into);
  if (!b || !src || !dst) goto done;
  const twincache_dims *d = twincache_cache_dims(dst);
  twincache_chunk_builder_set_tag(b, twincache_cache_tag(retag ? dst : src));
  twincache_chunk_builder_reset(b, chunk * d->chunk_graphs);
  for (uint64_t i = chunk * d->chunk_graphs; i < (chunk + 1) * d->chunk_graphs; i++) {
    void *f = NULL;
    size_t n = 0;
    TC_CHECK(twincache_cache_read_frame(src, i, &f, &n) == 0, "frame %llu", (unsigned long long)i);
    TC_CHECK(f && twincache_chunk_builder_add_frame(b, f, n) == 0, "add frame %llu", (unsigned long long)i);
    free(f);
  }
  tc_cache_chunk rec = {.chunk = chunk};
  TC_CHECK(twincache_chunk_builder_finish(b, &rec.data, &rec.size) == 0, "finish");
  twincache_dims dims = *d;
  twincache_stats stats = *twincache_cache_stats(dst);
  uint64_t count = twincache_cache_count(dst);
  int rc = tc_cache_writer_open(into, &dims, twincache_cache_config(dst), "test", 1u << 30, &w);
  TC_CHECK(rc == 0, "writer open: %s", twincache_last_error());
  if (rc == 0) TC_CHECK(tc_cache_writer_put(w, &rec, 1, count, &stats) == 0, "put");
done:
  tc_cache_writer_close(w);
  twincache_cache_close(src);
  twincache_cache_close(dst);
  twincache_chunk_builder_free(b);
}

static void test_splice(const char *good, const char *other) {
  char path[4096];
  snprintf(path, sizeof path, "%s/splice", scratch);
  TC_CHECK(tt_copy_cache(good, path) == 0, "copy to %s", path);
  splice_chunk(other, path, 2, 0);
  tt_reader r;
  int rc = tt_reader_open(path, &r);
  TC_CHECK(rc == 0, "splice: open gave %d", rc);
  if (rc == 0) {
    TC_CHECK(twincache_cache_tag(r.cache) != 0, "tag");
    rc = twincache_cache_read_graph(r.cache, r.dctx, 0, r.graph);
    TC_CHECK(rc == 0, "graph 0 of the spliced cache: %d", rc);
    rc = twincache_cache_read_graph(r.cache, r.dctx, 2 * 16 + 3, r.graph);
    TC_CHECK(rc == TWINCACHE_ECORRUPT, "graph 35 (spliced chunk 2) gave %d (%s)", rc, twincache_strerror(rc));
    tt_reader_close(&r);
  }
  const char *verify[] = {inspect_path, "verify", path, NULL};
  tt_result res;
  TC_CHECK(tt_run((char *const *)verify, scratch, &res) == 0 && res.status == 1, "verify of splice exited %d",
        res.status);
  TC_CHECK(strstr(res.out, "chunk 2 ") || strstr(res.err, "chunk 2 "), "verify does not name chunk 2: %s%s",
        res.out, res.err);
  tt_result_clear(&res);
  const char *bench[] = {bench_path, "--cache", path, NULL};
  int st = run_status(bench, NULL);
  TC_CHECK(st == 1, "splice: loader bench exited %d", st);
}

/* Rewrites a current (version 3) frame f of n bytes as the version-1
 * writer wrote it: a 40-byte header (FNV-1a of [0, 36) at 36) and a zstd
 * frame with zstd's own content checksum. Returns the new size (out has
 * room for n + 64 bytes), 0 on failure. */
static size_t frame_to_v1(const uint8_t *f, size_t n, uint8_t *out) {
  uint32_t d = tc_load_u32(f + 28), z = tc_load_u32(f + 32);
  uint8_t *pay = malloc(d);
  ZSTD_CCtx *zc = ZSTD_createCCtx();
  size_t w = 0;
  if (!pay || !zc || n < 48 + (size_t)z || ZSTD_decompress(pay, d, f + 48, z) != d) goto done;
  ZSTD_CCtx_setParameter(zc, ZSTD_c_checksumFlag, 1);
  ZSTD_CCtx_setParameter(zc, ZSTD_c_compressionLevel, 1);
  w = ZSTD_compress2(zc, out + 40, n + 64 - 40, pay, d);
  if (ZSTD_isError(w)) {
    w = 0;
    goto done;
  }
  memcpy(out, f, 36);
  tc_store_u16(out + 4, 1);
  tc_store_u16(out + 6, 40);
  tc_store_u32(out + 32, (uint32_t)w);
  tc_store_u32(out + 36, tc_fnv1a32(out, 36));
  w += 40;
done:
  ZSTD_freeCCtx(zc);
  free(pay);
  return w;
}

/* Rewrites chunk `chunk` of the cache in dir as a version-1 record of
 * version-1 frames (28-byte header, offset table, frames, no tag trailer),
 * as a version-1 cache holds it. Adds the change of the frame bytes to
 * *frame_delta when not NULL. Returns 0 or -1. */
static int chunk_to_v1(const char *dir, uint64_t chunk, int64_t *frame_delta) {
  tc_cache_raw *raw = NULL;
  uint8_t key[8];
  void *val = NULL;
  size_t len = 0;
  uint8_t *rec = NULL;
  twincache_chunk_view v;
  int ok = -1;
  tc_cache_raw_chunk_key(key, chunk);
  if (tc_cache_raw_open(dir, 1, &raw) != 0 || tc_cache_raw_get(raw, "graphs", key, 8, &val, &len) != 0 ||
      twincache_chunk_parse(val, len, &v) != 0)
    goto done;
  size_t table = 4 * ((size_t)v.count + 1), at = 0;
  rec = malloc(28 + table + v.frames_bytes + 64 * (size_t)v.count);
  if (!rec) goto done;
  uint8_t *t = rec + 28, *frames = t + table;
  for (uint32_t s = 0; s < v.count; s++) {
    const void *f;
    size_t fs, w;
    if (twincache_chunk_frame(&v, s, &f, &fs) != 0 || !(w = frame_to_v1(f, fs, frames + at))) goto done;
    tc_store_u32(t + 4 * (size_t)s, (uint32_t)at);
    at += w;
    if (frame_delta) *frame_delta += (int64_t)w - (int64_t)fs;
  }
  tc_store_u32(t + table - 4, (uint32_t)at);
  memcpy(rec, "TCC1", 4);
  tc_store_u16(rec + 4, 1);
  tc_store_u16(rec + 6, 28);
  tc_store_u64(rec + 8, v.first_index);
  tc_store_u32(rec + 16, v.count);
  tc_store_u32(rec + 20, tc_fnv1a32(t, table));
  tc_store_u32(rec + 24, tc_fnv1a32(rec, 24));
  if (tc_cache_raw_put(raw, "graphs", key, 8, rec, 28 + table + at) != 0) goto done;
  ok = 0;
done:
  free(rec);
  free(val);
  if (ok == 0) return tc_cache_raw_close(raw) == 0 ? 0 : -1;
  tc_cache_raw_abort(raw);
  return -1;
}

/* A cache is read only when every record is of its own version: a
 * version-1 record (no tag trailer) spliced into a current cache. */
static void test_v1_splice(const char *good) {
  char path[4096];
  snprintf(path, sizeof path, "%s/v1-splice", scratch);
  TC_CHECK(tt_copy_cache(good, path) == 0, "copy to %s", path);
  TC_CHECK(chunk_to_v1(path, 2, NULL) == 0, "rewrite chunk 2 of %s as version 1", path);
  tt_reader r;
  int rc = tt_reader_open(path, &r);
  TC_CHECK(rc == 0, "v1 splice: open gave %d", rc);
  if (rc == 0) {
    TC_CHECK(twincache_cache_read_graph(r.cache, r.dctx, 0, r.graph) == 0, "graph 0 of the v1 splice");
    rc = twincache_cache_read_graph(r.cache, r.dctx, 2 * 16 + 3, r.graph);
    TC_CHECK(rc == TWINCACHE_ECORRUPT, "graph 35 (v1 chunk 2) gave %d (%s)", rc, twincache_strerror(rc));
    TC_CHECK(strstr(twincache_last_error(), "chunk 2 ") && strstr(twincache_last_error(), "version 1"),
             "message: %s", twincache_last_error());
    tt_reader_close(&r);
  }
  const char *show[] = {inspect_path, "show", path, "35", NULL};
  int st = run_status(show, NULL);
  TC_CHECK(st == 1, "v1 splice: show 35 exited %d", st);
  const char *verify[] = {inspect_path, "verify", path, NULL};
  tt_result res;
  TC_CHECK(tt_run((char *const *)verify, scratch, &res) == 0 && res.status == 1, "verify of v1 splice exited %d",
           res.status);
  TC_CHECK(strstr(res.out, "chunk 2 ") && strstr(res.out, "version 1"), "verify does not name chunk 2's version: %s%s",
           res.out, res.err);
  tt_result_clear(&res);
}

/* Only the last chunk may hold fewer than C graphs: chunk 2 of 7 rebuilt
 * with 10 of its 16 graphs. */
static void test_short_chunk(const char *good) {
  char path[4096];
  snprintf(path, sizeof path, "%s/short-chunk", scratch);
  TC_CHECK(tt_copy_cache(good, path) == 0, "copy to %s", path);
  tc_cache_raw *raw = NULL;
  twincache_chunk_builder *b = twincache_chunk_builder_create();
  uint8_t key[8];
  void *val = NULL;
  size_t len = 0;
  twincache_chunk_view v;
  tc_cache_raw_chunk_key(key, 2);
  TC_CHECK(b && tc_cache_raw_open(path, 1, &raw) == 0 && tc_cache_raw_get(raw, "graphs", key, 8, &val, &len) == 0 &&
               twincache_chunk_parse(val, len, &v) == 0 && v.count == 16,
           "read chunk 2 of %s", path);
  if (raw && val) {
    twincache_chunk_builder_set_tag(b, v.tag);
    twincache_chunk_builder_reset(b, v.first_index);
    for (uint32_t s = 0; s < 10; s++) {
      const void *f;
      size_t fs;
      TC_CHECK(twincache_chunk_frame(&v, s, &f, &fs) == 0 && twincache_chunk_builder_add_frame(b, f, fs) == 0,
               "frame %u", s);
    }
    const void *rec;
    size_t rec_len;
    TC_CHECK(twincache_chunk_builder_finish(b, &rec, &rec_len) == 0, "finish");
    TC_CHECK(tc_cache_raw_put(raw, "graphs", key, 8, rec, rec_len) == 0, "put");
  }
  free(val);
  TC_CHECK(tc_cache_raw_close(raw) == 0, "commit");
  twincache_chunk_builder_free(b);
  tt_reader r;
  int rc = tt_reader_open(path, &r);
  TC_CHECK(rc == 0, "short chunk: open gave %d", rc);
  if (rc == 0) {
    rc = twincache_cache_read_graph(r.cache, r.dctx, 2 * 16 + 3, r.graph);
    TC_CHECK(rc == TWINCACHE_ECORRUPT, "graph 35 (slot 3 of the short chunk 2) gave %d (%s)", rc,
             twincache_strerror(rc));
    TC_CHECK(strstr(twincache_last_error(), "chunk 2 "), "message: %s", twincache_last_error());
    TC_CHECK(twincache_cache_read_graph(r.cache, r.dctx, 99, r.graph) == 0, "graph 99 (short last chunk)");
    tt_reader_close(&r);
  }
  const char *verify[] = {inspect_path, "verify", path, NULL};
  tt_result res;
  TC_CHECK(tt_run((char *const *)verify, scratch, &res) == 0 && res.status == 1, "verify of short chunk exited %d",
           res.status);
  TC_CHECK(strstr(res.out, "chunk 2 ") && strstr(res.out, "only the last"), "verify does not name chunk 2: %s%s",
           res.out, res.err);
  tt_result_clear(&res);
}

static void write_garbage(const char *file, size_t n) {
  FILE *f = fopen(file, "wb");
  for (size_t i = 0; f && i < n; i++) fputc((int)(0xa5 ^ (i * 7)), f);
  if (f) fclose(f);
}

static void test_garbage_locks(const char *good) {
  char path[4096], file[4200];
  snprintf(path, sizeof path, "%s/garbage-lock", scratch);
  TC_CHECK(tt_copy_cache(good, path) == 0, "copy to %s", path);
  snprintf(file, sizeof file, "%s/lock.mdb", path);
  write_garbage(file, 8192);
  snprintf(file, sizeof file, "%s/twincache-gen.lock", path);
  write_garbage(file, 100);
  twincache_cache *c = NULL;
  int rc = twincache_cache_open(path, &c);
  TC_CHECK(rc == 0, "garbage locks: open gave %d (%s)", rc, twincache_strerror(rc));
  twincache_cache_close(c);
  const char *verify[] = {inspect_path, "verify", path, NULL};
  int st = run_status(verify, NULL);
  TC_CHECK(st == 0, "garbage locks: verify exited %d", st);
  char *err = NULL;
  st = gen_extend(path, "1", &err);
  TC_CHECK(st == 0, "garbage locks: gen exited %d: %s", st, err ? err : "");
  free(err);
  st = run_status(verify, NULL);
  TC_CHECK(st == 0, "garbage locks: verify after extending exited %d", st);
}

static void test_map_size(void) {
  char path[4096];
  snprintf(path, sizeof path, "%s/huge-map", scratch);
  const char *argv[] = {gen_path, "--out", path, "--graphs", "10", "--map-size", "18446744073709551615",
                        "--quiet", NULL};
  int st = run_status(argv, NULL);
  struct stat sb;
  TC_CHECK(st != 0 && st < 128, "--map-size 2^64-1 exited %d", st);
  TC_CHECK(stat(path, &sb) != 0, "--map-size 2^64-1 left %s behind", path);
}

static void test_v1_meta(const char *good) {
  char path[4096];
  snprintf(path, sizeof path, "%s/v1", scratch);
  TC_CHECK(tt_copy_cache(good, path) == 0, "copy to %s", path);
  tc_cache_raw *raw = NULL;
  uint8_t ver[4];
  tc_store_u32(ver, 1);
  TC_CHECK(tc_cache_raw_open(path, 1, &raw) == 0, "raw open %s", path);
  if (raw) {
    TC_CHECK(tc_cache_raw_put(raw, "meta", TWINCACHE_META_VERSION, strlen(TWINCACHE_META_VERSION), ver, 4) == 0,
          "put version");
    TC_CHECK(tc_cache_raw_del(raw, "meta", TWINCACHE_META_TAG, strlen(TWINCACHE_META_TAG)) == 0, "del tag");
    TC_CHECK(tc_cache_raw_del(raw, "meta", TWINCACHE_META_CHECK, strlen(TWINCACHE_META_CHECK)) == 0, "del check");
    TC_CHECK(tc_cache_raw_close(raw) == 0, "commit");
  }
  /* every record as version 1 wrote it, and the frame bytes they now sum to */
  int64_t delta = 0;
  for (uint64_t c = 0; c < (100 + 15) / 16; c++)
    TC_CHECK(chunk_to_v1(path, c, &delta) == 0, "chunk %llu as version 1", (unsigned long long)c);
  twincache_cache *gc = NULL;
  TC_CHECK(twincache_cache_open(good, &gc) == 0, "open %s", good);
  if (gc) {
    twincache_stats st = *twincache_cache_stats(gc);
    uint8_t sb[TWINCACHE_STATS_BYTES];
    st.frame_bytes = (uint64_t)((int64_t)st.frame_bytes + delta);
    twincache_stats_encode(&st, sb);
    twincache_cache_close(gc);
    raw = NULL;
    TC_CHECK(tc_cache_raw_open(path, 1, &raw) == 0 &&
                 tc_cache_raw_put(raw, "meta", TWINCACHE_META_STATS, strlen(TWINCACHE_META_STATS), sb, sizeof sb) == 0,
             "put stats");
    TC_CHECK(tc_cache_raw_close(raw) == 0, "commit stats");
  }
  tt_reader r, g;
  TC_CHECK(tt_reader_open(path, &r) == 0 && tt_reader_open(good, &g) == 0, "open v1 and v2");
  TC_CHECK(twincache_cache_tag(r.cache) == twincache_cache_tag(g.cache), "v1 tag %llx, v2 tag %llx",
        (unsigned long long)twincache_cache_tag(r.cache), (unsigned long long)twincache_cache_tag(g.cache));
  TC_CHECK(twincache_cache_format_version(r.cache) == 1 &&
               twincache_cache_format_version(g.cache) == TWINCACHE_FORMAT_VERSION_TWIN,
           "format versions %u and %u", twincache_cache_format_version(r.cache),
           twincache_cache_format_version(g.cache));
  const char *cfg = twincache_cache_config(g.cache);
  TC_CHECK(twincache_cache_tag(g.cache) == tc_fnv1a64(cfg, strlen(cfg)), "tag is not FNV-1a 64 of the config");
  TC_CHECK(twincache_cache_read_graph(r.cache, r.dctx, 99, r.graph) == 0, "read graph 99 of the v1 copy");
  tt_reader_close(&r);
  tt_reader_close(&g);
  const char *verify[] = {inspect_path, "verify", path, NULL};
  int st = run_status(verify, NULL);
  TC_CHECK(st == 0, "v1: verify exited %d", st);
  char *err = NULL;
  st = gen_extend(path, "1", &err);
  TC_CHECK(st == 1 && err && strstr(err, "format version 1"), "v1: gen exited %d: %s", st, err ? err : "");
  free(err);
}

static void test_lmdb_meta_page(const char *good) {
  char path[4096];
  /* the transaction id: LMDB reads the older meta page, an earlier state */
  snprintf(path, sizeof path, "%s/lmdb-txnid", scratch);
  TC_CHECK(tt_copy_cache(good, path) == 0 && tt_lmdb_meta_poke(path, 144, 0) == 0, "damage %s", path);
  twincache_cache *c = NULL;
  int rc = twincache_cache_open(path, &c);
  TC_CHECK(rc == TWINCACHE_OK && twincache_cache_count(c) < 100, "txnid: open gave %d, %llu graphs", rc,
           c ? (unsigned long long)twincache_cache_count(c) : 0ull);
  twincache_cache_close(c);
  const char *verify[] = {inspect_path, "verify", path, NULL};
  tt_result r;
  if (tt_run((char *const *)verify, scratch, &r) == 0) {
    TC_CHECK(r.status == 1 && strstr(r.out, " of 100 graphs committed") && strstr(r.out, "rerun twincache-gen") &&
                 !strstr(r.out, "good"),
             "txnid: verify exited %d:\n%s", r.status, r.out);
    tt_result_clear(&r);
  }
  /* the last page in use, 8 bytes earlier: damage, never out of memory */
  snprintf(path, sizeof path, "%s/lmdb-last-page", scratch);
  TC_CHECK(tt_copy_cache(good, path) == 0 && tt_lmdb_meta_poke(path, 136, 0xffffffff00ull) == 0, "damage %s",
           path);
  c = NULL;
  rc = twincache_cache_open(path, &c);
  TC_CHECK(rc == TWINCACHE_ETRUNCATED && strstr(twincache_last_error(), "data.mdb"),
           "last page: open gave %d (%s): %s", rc, twincache_strerror(rc), twincache_last_error());
  twincache_cache_close(c);
  check_programs_fail(path, "last page", 1);
  char *err = NULL;
  int st = gen_extend(path, "1", &err);
  TC_CHECK(st == 1 && err && strstr(err, "damaged"), "last page: gen exited %d: %s", st, err ? err : "");
  free(err);
}

/* Frames of S = 8 samples in a cache whose dims say S = 16, under the
 * cache's own tag: every reader refuses them (show and Python's Cache[i]
 * served them), naming both sizes. */
static void test_other_samples(const char *good) {
  char s8[4096], path[4096];
  snprintf(s8, sizeof s8, "%s/samples-8", scratch);
  snprintf(path, sizeof path, "%s/samples-spliced", scratch);
  static const char *const eight[] = {"--samples", "8", NULL};
  TC_CHECK(tt_make_cache(gen_path, s8, scratch, 100, eight) == 0 && tt_copy_cache(good, path) == 0, "caches");
  splice_chunk(s8, path, 0, 1);
  tt_reader r;
  TC_REQUIRE(tt_reader_open(path, &r) == TWINCACHE_OK);
  int rc = twincache_cache_read_graph(r.cache, r.dctx, 3, r.graph);
  TC_CHECK(rc == TWINCACHE_ECORRUPT && strstr(twincache_last_error(), "S=8") &&
               strstr(twincache_last_error(), "S = 16"),
           "S=8 frame: read gave %d: %s", rc, twincache_last_error());
  TC_CHECK(twincache_cache_read_graph(r.cache, r.dctx, 16, r.graph) == TWINCACHE_OK, "chunk 1 reads");
  tt_reader_close(&r);
  const char *show[] = {inspect_path, "show", path, "3", NULL};
  char *err = NULL;
  int st = run_status(show, &err);
  TC_CHECK(st == 1 && err && strstr(err, "S=8"), "S=8 frame: show exited %d: %s", st, err ? err : "");
  free(err);
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: test_cache_damage GEN INSPECT LOADER_BENCH SCRATCH\n");
    return 2;
  }
  gen_path = argv[1];
  inspect_path = argv[2];
  bench_path = argv[3];
  scratch = argv[4];
  char good[4096], other[4096];
  snprintf(good, sizeof good, "%s/good", scratch);
  snprintf(other, sizeof other, "%s/other", scratch);
  static const char *const seed2[] = {"--seed", "2", NULL};
  if (tt_scratch_init(scratch) != 0 || tt_make_cache(gen_path, good, scratch, 100, NULL) != 0 ||
      tt_make_cache(gen_path, other, scratch, 100, seed2) != 0) {
    fprintf(stderr, "test_cache_damage: cannot build the test caches in %s\n", scratch);
    return 1;
  }
  test_truncated(good);
  test_meta_flip(good);
  test_splice(good, other);
  test_garbage_locks(good);
  test_map_size();
  test_v1_meta(good);
  test_v1_splice(good);
  test_short_chunk(good);
  test_lmdb_meta_page(good);
  test_other_samples(good);
  if (tc_test_failures() == 0) tt_remove_tree(scratch);
  printf("test_cache_damage: %s\n", tc_test_failures() ? "FAILED" : "ok");
  return tc_test_failures() ? 1 : 0;
}
