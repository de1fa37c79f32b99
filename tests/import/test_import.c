/* test_import.c — the importer's readers and writer in C (so ASan/UBSan and
 * TSan builds cover them; the Python tests skip there): a DCDI folder
 * written here in DCDI's layout round-trips through tc_npy_read /
 * tc_row_files_read / tc_dataset_group / twincache_import_write and the
 * cache reader; every truncation and random byte flips of its .npy and CSV
 * files are read without a crash (refused or accepted, never out of
 * bounds); bad values are refused naming file, row and column, and a
 * refused write leaves no directory; the program's usage errors exit 2 with
 * one line. usage: test_import TMPDIR TWINCACHE-IMPORT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tc_cache_writer.h"
#include "tc_common.h"
#include "tc_import.h"
#include "twincache_cache.h"
#include "twincache_loader.h"
#define TC_TEST_STRERROR twincache_strerror
#include "tc_test.h"

enum { N = 4, S = 5, R = 3 };
static const uint8_t k_adj[N * N] = {0, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0};
static const char *k_targets[R] = {"", "1", "0,3"};
static char dir[4096];

static void put_file(const char *name, const void *p, size_t n) {
  char path[8192];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  TC_REQUIRE(f && fwrite(p, 1, n, f) == n);
  fclose(f);
}

/* A .npy of the header dict hdr and the data bytes v (size bytes) into buf. */
static size_t npy_raw(uint8_t *buf, const char *hdr, const void *v, size_t size) {
  size_t h = strlen(hdr), total = 10 + h + 1, pad = (64 - total % 64) % 64;
  memcpy(buf, "\x93NUMPY\x01\x00", 8);
  tc_store_u16(buf + 8, (uint16_t)(h + pad + 1));
  memcpy(buf + 10, hdr, h);
  memset(buf + 10 + h, ' ', pad);
  buf[10 + h + pad] = '\n';
  memcpy(buf + total + pad, v, size);
  return total + pad + size;
}

/* A .npy of (rows, cols) little-endian f8 values, C order, into buf. */
static size_t npy_make(uint8_t *buf, const double *v, uint32_t rows, uint32_t cols) {
  char hdr[128];
  snprintf(hdr, sizeof hdr, "{'descr': '<f8', 'fortran_order': False, 'shape': (%u, %u), }", rows, cols);
  return npy_raw(buf, hdr, v, sizeof(double) * rows * cols);
}

static double value_of(uint32_t r, uint32_t s, uint32_t j) { return (double)r * 100 + s * 10 + j + 0.25; }

/* The DCDI folder: rows of the regimes interleaved, as DCDI leaves them. */
static void dcdi_write(uint8_t *npy, size_t *npy_size) {
  double data[R * S * N], dag[N * N];
  char inter[512] = "", regime[512] = "";
  for (uint32_t s = 0, m = 0; s < S; s++)
    for (uint32_t r = 0; r < R; r++, m++) {
      for (uint32_t j = 0; j < N; j++) data[m * N + j] = value_of(r, s, j);
      snprintf(inter + strlen(inter), sizeof inter - strlen(inter), "%s\n", k_targets[r]);
      snprintf(regime + strlen(regime), sizeof regime - strlen(regime), "%u\n", r);
    }
  for (int i = 0; i < N * N; i++) dag[i] = k_adj[i];
  uint8_t buf[4096];
  size_t n = npy_make(buf, dag, N, N);
  put_file("DAG1.npy", buf, n);
  *npy_size = npy_make(npy, data, R * S, N);
  put_file("data_interv1.npy", npy, *npy_size);
  put_file("intervention1.csv", inter, strlen(inter));
  put_file("regime1.csv", regime, strlen(regime));
}

static void path_of(char *out, size_t cap, const char *name) { snprintf(out, cap, "%s/%s", dir, name); }

static char import_bin[4096];

static void slurp_into(const char *name, char *buf, size_t cap) {
  char path[8192];
  path_of(path, sizeof path, name);
  FILE *f = fopen(path, "rb");
  size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
  buf[n] = '\0';
  if (f) fclose(f);
}

/* Runs twincache-import with args (shell words, paths relative to dir);
 * its stdout into out and stderr into err. Returns its exit status. */
static int cli_run(const char *args, char *out, size_t out_cap, char *err, size_t err_cap) {
  int rc = tc_test_sh("cd '%s' && '%s' %s >cli.out 2>cli.err", dir, import_bin, args);
  slurp_into("cli.out", out, out_cap);
  slurp_into("cli.err", err, err_cap);
  return rc;
}

static void round_trip(void) {
  uint8_t npy[8192];
  size_t npy_size;
  dcdi_write(npy, &npy_size);
  char p_data[8192], p_dag[8192], p_int[8192], p_reg[8192], p_out[8192];
  path_of(p_data, sizeof p_data, "data_interv1.npy");
  path_of(p_dag, sizeof p_dag, "DAG1.npy");
  path_of(p_int, sizeof p_int, "intervention1.csv");
  path_of(p_reg, sizeof p_reg, "regime1.csv");
  path_of(p_out, sizeof p_out, "cache");
  tc_table tab;
  tc_row_regimes reg;
  twincache_dataset d;
  uint8_t adj[N * N];
  TC_REQUIRE(tc_npy_read(p_data, &tab) == 0, "%s", twincache_last_error());
  TC_CHECK(tab.m == R * S && tab.n == N);
  TC_CHECK_RC(tc_npy_read_dag(p_dag, N, adj), 0);
  TC_CHECK(!memcmp(adj, k_adj, sizeof adj));
  TC_REQUIRE(tc_row_files_read(p_int, p_reg, tab.m, tab.n, &reg) == 0, "%s", twincache_last_error());
  TC_REQUIRE(tc_dataset_group(&tab, &reg, adj, dir, &d) == 0, "%s", twincache_last_error());
  TC_CHECK(d.n_nodes == N && d.n_rows == S && d.n_regimes == R);
  TC_CHECK_RC(twincache_import_write(p_out, &d, 1, "{\"from\":\"test\"}"), 0);
  TC_CHECK_RC(twincache_import_write(p_out, &d, 1, NULL), TWINCACHE_EINVAL); /* exists: never replaced */
  twincache_cache *c;
  TC_REQUIRE(twincache_cache_open(p_out, &c) == 0, "%s", twincache_last_error());
  TC_CHECK(strstr(twincache_cache_config(c), "\"observed\":true") != NULL);
  TC_CHECK(twincache_cache_worlds(c) == TWINCACHE_WORLDS_OBSERVED);
  twincache_graph *g = twincache_graph_alloc(N, S, R - 1, 0);
  twincache_dctx *dc = twincache_dctx_create();
  TC_REQUIRE(g && dc && twincache_cache_read_graph(c, dc, 0, g) == 0);
  TC_CHECK(g->flags == (TWINCACHE_GRAPH_INDEPENDENT | TWINCACHE_GRAPH_OBSERVED));
  for (uint32_t r = 0; r < R; r++)
    for (uint32_t s = 0; s < S; s++)
      for (uint32_t j = 0; j < N; j++) {
        float got = r ? g->inter[((size_t)(r - 1) * S + s) * g->ld + j] : g->base[(size_t)s * g->ld + j];
        TC_CHECK(got == (float)value_of(r, s, j), "regime %u row %u col %u: %g", r, s, j, (double)got);
      }
  TC_CHECK(g->target[0] == 1 && g->n_targets[0] == 1 && g->target[1] == 0 && g->n_targets[1] == 2 &&
           g->more_target[TWINCACHE_MAX_TARGETS - 1] == 3 && g->kind[0] == TWINCACHE_INTER_OBSERVED);
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) TC_CHECK(g->adj[(size_t)i * g->ld_adj + j] == k_adj[i * N + j]);
  twincache_dctx_free(dc);
  twincache_graph_free(g);
  twincache_cache_close(c);

  /* hostile bytes: every truncation and 300 random flips of the .npy */
  tc_rng r;
  tc_rng_init(&r, 5, 0);
  uint8_t m[8192];
  char p_bad[8192];
  path_of(p_bad, sizeof p_bad, "bad.npy");
  for (size_t n = 0; n <= npy_size + 300; n++) {
    size_t len = n <= npy_size ? n : npy_size;
    memcpy(m, npy, npy_size);
    if (n > npy_size)
      for (int f = 0; f < 3; f++) m[tc_rng_below(&r, (uint32_t)npy_size)] ^= (uint8_t)(1 + tc_rng_below(&r, 255));
    put_file("bad.npy", m, len);
    tc_table t2;
    int rc = tc_npy_read(p_bad, &t2);
    if (rc == 0) tc_table_free(&t2);
    else TC_CHECK(rc == TWINCACHE_EINVAL && twincache_last_error()[0], "truncation %zu: rc %d", n, rc);
  }
  tc_dataset_free(&d);
  tc_row_regimes_free(&reg);
  tc_table_free(&tab);
}

/* A CSV's refusals name file, line and column; its truncations never crash. */
static void csv_cases(void) {
  static const char good[] = "targets,a,b,c\n,1,2,3\nb,4,5,6\n,7,8,9\nb,1.5,2.5,3.5\n";
  char p_csv[8192], p_out[8192];
  path_of(p_csv, sizeof p_csv, "t.csv");
  path_of(p_out, sizeof p_out, "csv-cache");
  struct {
    const char *text, *want;
  } bad[] = {
      {"targets,a,b\n,1,nan\n", "t.csv: line 2, column 3 (b): 'nan' is not a finite number"},
      {"targets,a,b\n,1,2,3\n", "t.csv: line 2: 4 fields, the header has 3"},
      {"targets,a,b\n,1,2\nz,1,2\n", "t.csv: line 3, column targets: target 'z' is no variable"},
      {"targets,a,a\n,1,2\n", "t.csv: line 1, column 3: name 'a' repeated"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    put_file("t.csv", bad[i].text, strlen(bad[i].text));
    tc_table tab;
    tc_row_regimes reg;
    twincache_dataset d;
    int rc = tc_csv_read(p_csv, NULL, NULL, &tab, &reg);
    if (rc == 0) {
      rc = tc_dataset_group(&tab, &reg, NULL, p_csv, &d);
      if (rc == 0) tc_dataset_free(&d);
      tc_row_regimes_free(&reg);
      tc_table_free(&tab);
    }
    TC_CHECK(rc == TWINCACHE_EINVAL && strstr(twincache_last_error(), bad[i].want), "case %zu: %s", i,
             twincache_last_error());
  }
  for (size_t n = 0; n <= sizeof good - 1; n++) { /* every truncation */
    put_file("t.csv", good, n);
    tc_table tab;
    tc_row_regimes reg;
    if (tc_csv_read(p_csv, NULL, NULL, &tab, &reg) == 0) {
      tc_row_regimes_free(&reg);
      tc_table_free(&tab);
    }
  }
  /* a write refused inside (a cycle) leaves nothing */
  put_file("t.csv", good, sizeof good - 1);
  tc_table tab;
  tc_row_regimes reg;
  twincache_dataset d;
  TC_REQUIRE(tc_csv_read(p_csv, NULL, NULL, &tab, &reg) == 0, "%s", twincache_last_error());
  uint8_t cyc[9] = {0, 1, 0, 0, 0, 1, 1, 0, 0};
  TC_REQUIRE(tc_dataset_group(&tab, &reg, cyc, p_csv, &d) == 0);
  TC_CHECK_RC(twincache_import_write(p_out, &d, 1, NULL), TWINCACHE_EINVAL);
  TC_CHECK(strstr(twincache_last_error(), "cycle") != NULL, "%s", twincache_last_error());
  struct stat st;
  TC_CHECK(stat(p_out, &st) != 0, "a refused import left %s", p_out);
  tc_dataset_free(&d);
  TC_REQUIRE(tc_dataset_group(&tab, &reg, NULL, p_csv, &d) == 0);
  TC_CHECK(d.n_regimes == 2 && d.n_rows == 2 && d.n_targets[1] == 1 && d.targets[TWINCACHE_MAX_TARGETS] == 1);
  TC_CHECK_RC(twincache_import_write(p_out, &d, 1, NULL), 0);
  tc_dataset_free(&d);
  tc_row_regimes_free(&reg);
  tc_table_free(&tab);
  /* regimes of their own row counts (FORMAT.md 3.10): 1 observational, 3 of b */
  static const char uneven[] = "targets,a,b,c\n,1,2,3\nb,4,5,6\nb,7,8,9\nb,1.5,2.5,3.5\n";
  put_file("t.csv", uneven, sizeof uneven - 1);
  path_of(p_out, sizeof p_out, "csv-uneven");
  TC_REQUIRE(tc_csv_read(p_csv, NULL, NULL, &tab, &reg) == 0 && tc_dataset_group(&tab, &reg, NULL, p_csv, &d) == 0);
  TC_CHECK(d.n_rows == 3 && d.regime_rows[0] == 1 && d.regime_rows[1] == 3);
  TC_CHECK_RC(twincache_import_write(p_out, &d, 1, NULL), 0);
  twincache_cache *c;
  TC_REQUIRE(twincache_cache_open(p_out, &c) == 0, "%s", twincache_last_error());
  twincache_graph *g = twincache_graph_alloc(3, 3, 1, 0);
  twincache_dctx *dc = twincache_dctx_create();
  TC_REQUIRE(g && dc && twincache_cache_read_graph(c, dc, 0, g) == 0, "%s", twincache_last_error());
  TC_CHECK(g->world_rows[0] == 1 && g->world_rows[1] == 3 && g->base[0] == 1.0f && g->base[g->ld] == 0.0f &&
           g->inter[2 * g->ld + 2] == 3.5f);
  twincache_dctx_free(dc);
  twincache_graph_free(g);
  twincache_cache_close(c);
  tc_dataset_free(&d);
  tc_row_regimes_free(&reg);
  tc_table_free(&tab);
}

/* .npy layouts: a Fortran-order array is read by (row, column), not as C
 * order; bytes after the data, a 1-D or 3-D shape are refused by name. */
static void npy_cases(void) {
  char p[8192];
  path_of(p, sizeof p, "layout.npy");
  uint8_t buf[4096];
  /* (3, 2): row i, column j is 10 i + j; Fortran order stores column 0 first */
  const double col_major[6] = {0, 10, 20, 1, 11, 21}, row_major[6] = {0, 1, 10, 11, 20, 21};
  tc_table t;
  put_file("layout.npy", buf,
           npy_raw(buf, "{'descr': '<f8', 'fortran_order': True, 'shape': (3, 2), }", col_major, sizeof col_major));
  TC_REQUIRE(tc_npy_read(p, &t) == 0, "%s", twincache_last_error());
  TC_CHECK(t.m == 3 && t.n == 2);
  for (uint32_t i = 0; i < 3; i++)
    for (uint32_t j = 0; j < 2; j++)
      TC_CHECK(t.v[i * 2 + j] == (float)(10 * i + j), "Fortran order: row %u column %u read %g", i, j,
               (double)t.v[i * 2 + j]);
  tc_table_free(&t);
  size_t n = npy_make(buf, row_major, 3, 2); /* the same table in C order reads the same */
  put_file("layout.npy", buf, n);
  TC_REQUIRE(tc_npy_read(p, &t) == 0, "%s", twincache_last_error());
  TC_CHECK(t.m == 3 && t.n == 2 && t.v[1] == 1.0f && t.v[2] == 10.0f && t.v[5] == 21.0f);
  tc_table_free(&t);
  for (size_t extra = 1; extra <= 8; extra += 7) { /* one byte or one item more than the shape */
    memset(buf + n, 0, extra);
    put_file("layout.npy", buf, n + extra);
    TC_CHECK_RC(tc_npy_read(p, &t), TWINCACHE_EINVAL);
    char want[96];
    snprintf(want, sizeof want, "needs 48 bytes, the file has %zu after its header", 48 + extra);
    TC_CHECK(strstr(twincache_last_error(), want) != NULL, "%zu bytes more: %s", extra, twincache_last_error());
  }
  const char *shapes[] = {"(6,)", "(6, )", "(1, 2, 3)", "()", "(-3, 2)"};
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    char hdr[128];
    snprintf(hdr, sizeof hdr, "{'descr': '<f8', 'fortran_order': False, 'shape': %s, }", shapes[i]);
    put_file("layout.npy", buf, npy_raw(buf, hdr, row_major, sizeof row_major));
    TC_CHECK_RC(tc_npy_read(p, &t), TWINCACHE_EINVAL);
    TC_CHECK(strstr(twincache_last_error(), "expected a 2-D array (rows, columns)") != NULL, "shape %s: %s", shapes[i],
             twincache_last_error());
  }
}

/* Through the C API: a regime of 0 rows (or more than n_rows) is refused
 * naming dataset and regime, and leaves no directory. */
static void api_cases(void) {
  const float rows[2 * 3 * 2] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  uint32_t held[2] = {3, 0};
  twincache_dataset d = {.n_nodes = 2, .n_rows = 3, .n_regimes = 2, .rows = rows, .regime_rows = held};
  char p_out[8192];
  path_of(p_out, sizeof p_out, "api-zero");
  TC_CHECK_RC(twincache_import_write(p_out, &d, 1, NULL), TWINCACHE_EINVAL);
  TC_CHECK(strstr(twincache_last_error(), "dataset 0, regime 1: 0 rows, 1..3 (n_rows) allowed") != NULL, "%s",
           twincache_last_error());
  held[1] = 4;
  TC_CHECK_RC(twincache_import_write(p_out, &d, 1, NULL), TWINCACHE_EINVAL);
  TC_CHECK(strstr(twincache_last_error(), "dataset 0, regime 1: 4 rows, 1..3 (n_rows) allowed") != NULL, "%s",
           twincache_last_error());
  struct stat st;
  TC_CHECK(stat(p_out, &st) != 0, "a refused import left %s", p_out);
  held[1] = 1; /* the bounds themselves are written */
  TC_CHECK_RC(twincache_import_write(p_out, &d, 1, NULL), 0);
}

/* The program: one column named for both roles (by both flags, or by one
 * flag naming the other role's default column) is a usage error naming the
 * overlap; the reader refuses it too (it once counted the column twice). */
static void cli_cases(void) {
  static const char csv[] = "targets,regime,t,a,b\n,0,,1,2\nb,1,b,3,4\n";
  put_file("both.csv", csv, sizeof csv - 1);
  struct {
    const char *args, *want;
  } usage[] = {
      {"--targets-column t --regime-column t",
       "twincache-import: --targets-column and --regime-column both name column 't': name two different columns\n"},
      {"--regime-column targets",
       "twincache-import: --regime-column names column 'targets', the targets column's default: name the targets "
       "column with --targets-column\n"},
      {"--targets-column regime",
       "twincache-import: --targets-column names column 'regime', the regime column's default: name the regime "
       "column with --regime-column\n"},
  };
  char out[4096], err[4096], args[512];
  for (size_t i = 0; i < sizeof usage / sizeof usage[0]; i++) {
    snprintf(args, sizeof args, "csv both.csv --out both-%zu %s", i, usage[i].args);
    int rc = cli_run(args, out, sizeof out, err, sizeof err);
    TC_CHECK(rc == 2 && !strcmp(err, usage[i].want), "%s: exit %d, stderr: %s", usage[i].args, rc, err);
  }
  char p_csv[8192];
  path_of(p_csv, sizeof p_csv, "both.csv");
  tc_table tab;
  tc_row_regimes reg;
  TC_CHECK_RC(tc_csv_read(p_csv, "t", "t", &tab, &reg), TWINCACHE_EINVAL);
  TC_CHECK(strstr(twincache_last_error(), "column 't' is both the targets and the regime column") != NULL, "%s",
           twincache_last_error());
  TC_CHECK_RC(tc_csv_read(p_csv, NULL, "targets", &tab, &reg), TWINCACHE_EINVAL);
  TC_CHECK_RC(tc_csv_read(p_csv, "regime", NULL, &tab, &reg), TWINCACHE_EINVAL);
}

/* Fresh mode refuses observed data twice: at open from the config (the
 * importers' "observed":true), and frame by frame, for a cache whose config
 * does not say it (written here straight through the cache writer). */
static void fresh_refused(void) {
  char p_cfg[8192], p_raw[8192];
  path_of(p_cfg, sizeof p_cfg, "cache"); /* round_trip's, config "observed":true */
  path_of(p_raw, sizeof p_raw, "raw-observed");
  twincache_loader_options o;
  twincache_loader_options_init(&o);
  o.samples = TWINCACHE_SAMPLES_FRESH;
  o.rows = 4;
  o.batch_size = 1;
  o.threads = 1;
  twincache_loader *l = NULL;
  TC_CHECK_RC(twincache_loader_open(p_cfg, &o, NULL, &l), TWINCACHE_EINVAL);
  TC_CHECK(strstr(twincache_last_error(), "holds observed data") != NULL, "%s", twincache_last_error());
  /* the same frame in a cache whose config is silent */
  twincache_dims dims = {.graphs = 1, .chunk_graphs = 1, .max_nodes = N, .max_inter = R - 1, .samples = S};
  tc_cache_writer *w = NULL;
  TC_REQUIRE(tc_cache_writer_open(p_raw, &dims, "{\"format_version\":5}", "test", 1 << 20, &w) == 0, "%s",
             twincache_last_error());
  twincache_cache *c;
  twincache_graph *g = twincache_graph_alloc(N, S, R - 1, 0);
  twincache_dctx *dc = twincache_dctx_create();
  TC_REQUIRE(g && dc && twincache_cache_open(p_cfg, &c) == 0 && twincache_cache_read_graph(c, dc, 0, g) == 0);
  twincache_cache_close(c);
  twincache_chunk_builder *b = twincache_chunk_builder_create();
  twincache_cctx *cc = twincache_cctx_create(1);
  TC_REQUIRE(b && cc);
  twincache_chunk_builder_reset(b, 0);
  twincache_chunk_builder_set_tag(b, tc_cache_writer_tag(w));
  TC_REQUIRE(twincache_chunk_builder_add(b, cc, g) == 0, "%s", twincache_last_error());
  const void *data;
  size_t size;
  TC_REQUIRE(twincache_chunk_builder_finish(b, &data, &size) == 0);
  tc_cache_chunk ch = {.chunk = 0, .data = data, .size = size};
  twincache_stats st = {0};
  TC_REQUIRE(tc_cache_writer_put(w, &ch, 1, 1, &st) == 0, "%s", twincache_last_error());
  tc_cache_writer_close(w);
  TC_REQUIRE(twincache_loader_open(p_raw, &o, NULL, &l) == 0, "%s", twincache_last_error());
  twincache_batch *bt = NULL;
  TC_CHECK_RC(twincache_loader_next(l, &bt), TWINCACHE_EINVAL);
  TC_CHECK(strstr(twincache_last_error(), "holds observed data") != NULL, "%s", twincache_last_error());
  twincache_loader_close(l);
  o.samples = TWINCACHE_SAMPLES_STORED; /* stored: read as any cache */
  o.rows = 0;
  TC_REQUIRE(twincache_loader_open(p_raw, &o, NULL, &l) == 0, "%s", twincache_last_error());
  TC_CHECK_RC(twincache_loader_next(l, &bt), 0);
  twincache_loader_close(l);
  twincache_cctx_free(cc);
  twincache_chunk_builder_free(b);
  twincache_dctx_free(dc);
  twincache_graph_free(g);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: test_import TMPDIR TWINCACHE-IMPORT\n");
    return 2;
  }
  snprintf(dir, sizeof dir, "%s", argv[1]);
  snprintf(import_bin, sizeof import_bin, "%s", argv[2]);
  TC_REQUIRE(tc_test_sh("rm -rf '%s' && mkdir -p '%s'", dir, dir) == 0);
  round_trip();
  csv_cases();
  fresh_refused();
  npy_cases();
  api_cases();
  cli_cases();
  return tc_test_finish("test_import");
}
