/* test_inspect_export.c — `export`: csv files have a header and S (or K*S)
 * rows whose values parse back to the exact float32 bits; npy files carry a
 * valid NPY 1.0 header (magic, 64-byte aligned data, right dtype and shape)
 * followed by the exact little-endian data; an existing file is refused
 * (exit 1) unless --force; a bad --format exits 2.
 * usage: test_inspect_export GEN INSPECT SCRATCH */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "inspect_test.h"
#include "tc_common.h"
#include "twincache_loader.h"

static int run_status(char **argv, const char *scratch, char **err_out) {
  tt_result r;
  if (tt_run(argv, scratch, &r) != 0) return -1;
  int s = r.status;
  if (err_out) *err_out = strdup(r.err);
  tt_result_clear(&r);
  return s;
}

static void check_csv(const char *path, const float *m, uint32_t rows, uint32_t n, uint32_t ld,
                      int lead_cols) {
  size_t size = 0;
  char *text = tt_read_file(path, &size);
  TC_CHECK(text != NULL, "%s missing", path);
  if (!text) return;
  TC_CHECK(tt_count_lines(text) == rows + 1, "%s: %zu lines, want %u", path, tt_count_lines(text),
        rows + 1);
  char *save = NULL, *line = strtok_r(text, "\n", &save);
  TC_CHECK(line && strncmp(line, lead_cols ? "world,sample,x0" : "x0", lead_cols ? 15 : 2) == 0,
        "%s header '%s'", path, line ? line : "");
  for (uint32_t r = 0; r < rows; r++) {
    line = strtok_r(NULL, "\n", &save);
    if (!line) break;
    char *p = line;
    for (int l = 0; l < lead_cols && p; l++) p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL;
    if (!p) {
      TC_CHECK(0, "%s row %u: too few columns", path, r);
      break;
    }
    for (uint32_t j = 0; j < n; j++) {
      char *end = NULL;
      float v = strtof(p, &end);
      if (memcmp(&v, &m[(size_t)r * ld + j], sizeof v) != 0) {
        TC_CHECK(0, "%s row %u col %u: %.9g, want %.9g", path, r, j, (double)v,
              (double)m[(size_t)r * ld + j]);
        free(text);
        return;
      }
      p = end + (*end == ',');
    }
  }
  free(text);
}

/* NPY header with descr and shape text, then `rows` rows of n floats */
static void check_npy(const char *path, const char *descr, const char *shape, const float *m,
                      uint32_t rows, uint32_t n, uint32_t ld) {
  size_t size = 0;
  char *bytes = tt_read_file(path, &size);
  TC_CHECK(bytes != NULL && size >= 10, "%s missing or short", path);
  if (!bytes || size < 10) {
    free(bytes);
    return;
  }
  TC_CHECK(memcmp(bytes, "\x93NUMPY\x01\x00", 8) == 0, "%s: magic/version", path);
  size_t header = 10 + tc_load_u16(bytes + 8);
  TC_CHECK(header % 64 == 0 && header <= size && bytes[header - 1] == '\n',
        "%s: header length %zu", path, header);
  char want[128];
  snprintf(want, sizeof want, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape);
  TC_CHECK(header <= size && strncmp(bytes + 10, want, strlen(want)) == 0, "%s: header '%.*s'", path,
        (int)(header - 10), bytes + 10);
  if (m) {
    TC_CHECK(size == header + (size_t)rows * n * 4, "%s: %zu bytes", path, size);
    for (uint32_t r = 0; size == header + (size_t)rows * n * 4 && r < rows; r++)
      for (uint32_t j = 0; j < n; j++) {
        uint32_t bits = tc_load_u32(bytes + header + ((size_t)r * n + j) * 4), want_bits;
        memcpy(&want_bits, &m[(size_t)r * ld + j], 4);
        if (bits != want_bits) {
          TC_CHECK(0, "%s: value (%u,%u) differs", path, r, j);
          r = rows;
          break;
        }
      }
  }
  free(bytes);
}

int main(int argc, char **argv) {
  char cache[4096], prefix[4096], path[4200];
  int rc = tt_begin(argc, argv, 20, cache, sizeof cache);
  if (rc) return rc;
  const char *scratch = argv[3];
  char *inspect = argv[2];
  snprintf(prefix, sizeof prefix, "%s/g9", scratch);
  tt_reader lib;
  rc = tt_reader_open(cache, &lib);
  TC_CHECK(rc == 0, "open: %s", twincache_strerror(rc));
  if (rc != 0) return 1;
  twincache_graph *g = lib.graph;
  rc = twincache_cache_read_graph(lib.cache, lib.dctx, 9, g);
  TC_CHECK(rc == 0, "read graph 9");
  if (rc != 0) return 1;
  uint32_t n = g->n_nodes, s_n = g->n_samples, k_n = g->n_inter;

  /* csv */
  char *csv[] = {inspect, "export", cache, "9", "--format", "csv", "--out", prefix, NULL};
  TC_CHECK(run_status(csv, scratch, NULL) == 0, "export csv");
  snprintf(path, sizeof path, "%s_base.csv", prefix);
  check_csv(path, g->base, s_n, n, g->ld, 0);
  snprintf(path, sizeof path, "%s_inter.csv", prefix);
  check_csv(path, g->inter, k_n * s_n, n, g->ld, 2);
  snprintf(path, sizeof path, "%s_weights.csv", prefix);
  check_csv(path, g->weight, n, n, g->ld_adj, 0);
  snprintf(path, sizeof path, "%s_interventions.csv", prefix);
  char *iv = tt_read_file(path, NULL);
  TC_CHECK(iv && tt_count_lines(iv) == k_n + 1, "%s has K+1 lines", path);
  free(iv);

  /* existing files: refused without --force (exit 1, one line naming a file), then forced */
  char *err = NULL;
  TC_CHECK(run_status(csv, scratch, &err) == 1, "export over existing files must fail");
  TC_CHECK(err && strstr(err, "exists") && tt_count_lines(err) == 1, "message: %s", err ? err : "");
  free(err);
  char *csv_force[] = {inspect, "export", cache, "9", "--format=csv", "--out", prefix, "--force", NULL};
  TC_CHECK(run_status(csv_force, scratch, NULL) == 0, "export --force");

  /* npy */
  char *npy[] = {inspect, "export", cache, "9", "--format", "npy", "--out", prefix, NULL};
  TC_CHECK(run_status(npy, scratch, NULL) == 0, "export npy");
  char shape[64];
  snprintf(path, sizeof path, "%s_base.npy", prefix);
  snprintf(shape, sizeof shape, "(%u, %u)", s_n, n);
  check_npy(path, "<f4", shape, g->base, s_n, n, g->ld);
  snprintf(path, sizeof path, "%s_inter.npy", prefix);
  snprintf(shape, sizeof shape, "(%u, %u, %u)", k_n, s_n, n);
  check_npy(path, "<f4", shape, g->inter, k_n * s_n, n, g->ld);
  snprintf(path, sizeof path, "%s_values.npy", prefix);
  snprintf(shape, sizeof shape, "(%u,)", k_n);
  check_npy(path, "<f4", shape, g->value, 1, k_n, k_n);
  snprintf(path, sizeof path, "%s_adj.npy", prefix);
  snprintf(shape, sizeof shape, "(%u, %u)", n, n);
  check_npy(path, "|u1", shape, NULL, 0, 0, 0);

  /* usage errors exit 2 */
  char *bad_fmt[] = {inspect, "export", cache, "9", "--format", "parquet", "--out", prefix, NULL};
  TC_CHECK(run_status(bad_fmt, scratch, NULL) == 2, "bad --format exits 2");
  char *no_out[] = {inspect, "export", cache, "9", "--format", "csv", NULL};
  TC_CHECK(run_status(no_out, scratch, NULL) == 2, "missing --out exits 2");

  tt_reader_close(&lib);
  if (tc_test_failures() == 0) tt_remove_tree(scratch);
  printf("%s: %d failures\n", argv[0], tc_test_failures());
  return tc_test_failures() ? 1 : 0;
}
