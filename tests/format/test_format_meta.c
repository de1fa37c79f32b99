/* Meta entries (dims, stats), the meta record's rules that depend on the
 * version (SCM-only dims only from version 4), status strings, the DAG
 * helpers on known graphs, graph allocation limits, and tc_permute as a
 * bijection. */
#include "tf_common.h"

static void meta_roundtrip(void) {
  twincache_dims d = {.graphs = 0x0123456789abcdefull, .chunk_graphs = 227, .max_nodes = 10,
                      .max_inter = 10, .samples = 64, .hidden = 0}, e;
  uint8_t buf[TWINCACHE_DIMS_BYTES + 1];
  twincache_dims_encode(&d, buf);
  memset(&e, 0xff, sizeof e);
  TC_CHECK_RC(twincache_dims_decode(buf, TWINCACHE_DIMS_BYTES, &e), 0);
  TC_CHECK(e.graphs == d.graphs && e.chunk_graphs == d.chunk_graphs && e.max_nodes == d.max_nodes &&
           e.max_inter == d.max_inter && e.samples == d.samples && e.hidden == d.hidden);
  TC_CHECK_RC(twincache_dims_decode(buf, TWINCACHE_DIMS_BYTES - 1, &e), TWINCACHE_ECORRUPT);
  TC_CHECK_RC(twincache_dims_decode(buf, TWINCACHE_DIMS_BYTES + 1, &e), TWINCACHE_ECORRUPT);
  TC_CHECK_RC(twincache_dims_decode("short", 5, &e), TWINCACHE_ECORRUPT);
  TC_CHECK_RC(twincache_dims_decode(buf, 0, &e), TWINCACHE_ECORRUPT);
  TC_CHECK_RC(twincache_dims_decode(NULL, 32, &e), TWINCACHE_EINVAL);
  tc_store_u32(buf, 2);
  TC_CHECK_RC(twincache_dims_decode(buf, TWINCACHE_DIMS_BYTES, &e), TWINCACHE_EVERSION);
  tc_store_u32(buf, 0);
  TC_CHECK_RC(twincache_dims_decode(buf, TWINCACHE_DIMS_BYTES, &e), TWINCACHE_ECORRUPT);

  twincache_stats s = {.raw_bytes = 1ull << 40, .frame_bytes = 12345, .edges = 77, .nodes = 0xffffffffffull}, t;
  uint8_t sb[TWINCACHE_STATS_BYTES];
  twincache_stats_encode(&s, sb);
  TC_CHECK_RC(twincache_stats_decode(sb, sizeof sb, &t), 0);
  TC_CHECK(t.raw_bytes == s.raw_bytes && t.frame_bytes == s.frame_bytes && t.edges == s.edges &&
           t.nodes == s.nodes);
  TC_CHECK_RC(twincache_stats_decode(sb, sizeof sb - 1, &t), TWINCACHE_ECORRUPT);
  tc_store_u32(sb, 9);
  TC_CHECK_RC(twincache_stats_decode(sb, sizeof sb, &t), TWINCACHE_EVERSION);
  twincache_stats_encode(&s, sb);
  sb[4] = 1; /* reserved */
  TC_CHECK_RC(twincache_stats_decode(sb, sizeof sb, &t), TWINCACHE_ECORRUPT);
}

static void strerror_all(void) {
  const char *unknown = twincache_strerror(12345);
  TC_CHECK(unknown && strcmp(unknown, "unknown twincache error") == 0);
  for (int c = TWINCACHE_EDEVICE; c <= TWINCACHE_END; c++) {
    const char *m = twincache_strerror(c);
    TC_CHECK(m && *m && strcmp(m, unknown) != 0);
    for (int o = TWINCACHE_EDEVICE; o < c; o++) TC_CHECK(strcmp(m, twincache_strerror(o)) != 0);
  }
  TC_CHECK(strcmp(twincache_strerror(-22), unknown) == 0);
  TC_CHECK(strcmp(twincache_strerror(2), unknown) == 0);
}

static void dag_helpers(void) {
  /* 0 -> 1 -> 3, 0 -> 2, 4 alone; ld_adj 6 with garbage in column 5 */
  uint8_t adj[5 * 6] = {0};
  adj[0 * 6 + 1] = adj[1 * 6 + 3] = adj[0 * 6 + 2] = 1;
  for (int i = 0; i < 5; i++) adj[i * 6 + 5] = 7;
  uint8_t desc[5];
  TC_CHECK(twincache_graph_descendants(adj, 5, 6, 0, desc) == 4);
  TC_CHECK(desc[0] && desc[1] && desc[2] && desc[3] && !desc[4]);
  TC_CHECK(twincache_graph_descendants(adj, 5, 6, 1, desc) == 2);
  TC_CHECK(!desc[0] && desc[1] && !desc[2] && desc[3] && !desc[4]);
  TC_CHECK(twincache_graph_descendants(adj, 5, 6, 3, desc) == 1 && desc[3]);
  TC_CHECK(twincache_graph_descendants(adj, 5, 6, 4, desc) == 1 && desc[4]);
  TC_CHECK(twincache_graph_descendants(adj, 5, 6, 5, desc) == 0); /* out of range */
  TC_CHECK(twincache_graph_is_dag(adj, 5, 6) == 1);
  adj[3 * 6 + 0] = 1; /* 3 -> 0 closes 0 -> 1 -> 3 -> 0 */
  TC_CHECK(twincache_graph_is_dag(adj, 5, 6) == 0);
  TC_CHECK(twincache_graph_descendants(adj, 5, 6, 1, desc) == 4); /* terminates on cycles */
  adj[3 * 6 + 0] = 0;
  adj[4 * 6 + 4] = 1; /* self-loop */
  TC_CHECK(twincache_graph_is_dag(adj, 5, 6) == 0);
  adj[4 * 6 + 4] = 0;
  TC_CHECK(twincache_graph_is_dag(adj, 1, 6) == 1);
  /* a chain of 256 nodes: the last is reached from the first */
  uint8_t *chain = calloc(256 * 256, 1), *d2 = malloc(256);
  TC_REQUIRE(chain && d2);
  for (int i = 0; i + 1 < 256; i++) chain[i * 256 + i + 1] = 1;
  TC_CHECK(twincache_graph_descendants(chain, 256, 256, 0, d2) == 256);
  TC_CHECK(twincache_graph_descendants(chain, 256, 256, 200, d2) == 56 && !d2[199] && d2[255]);
  TC_CHECK(twincache_graph_is_dag(chain, 256, 256) == 1);
  chain[255 * 256 + 0] = 1;
  TC_CHECK(twincache_graph_is_dag(chain, 256, 256) == 0);
  free(chain);
  free(d2);
}

static void alloc_limits(void) {
  TC_CHECK(twincache_graph_alloc(0, 1, 1, 0) == NULL);
  twincache_graph *scm_only = twincache_graph_alloc(1, 0, 1, 0); /* S = 0: the SCM only */
  TC_CHECK(scm_only != NULL && scm_only->cap_samples == 0);
  twincache_graph_free(scm_only);
  TC_CHECK(twincache_graph_alloc(1, TWINCACHE_MAX_SAMPLES + 1, 1, 0) == NULL);
  TC_CHECK(twincache_graph_alloc(TWINCACHE_MAX_NODES + 1, 1, 1, 0) == NULL);
  TC_CHECK(twincache_graph_alloc(1, 1, TWINCACHE_MAX_INTER + 1, 0) == NULL);
  TC_CHECK(twincache_graph_alloc(1, 1, 1, TWINCACHE_MAX_HIDDEN + 1) == NULL);
  twincache_graph *g = twincache_graph_alloc(10, 64, 10, 8);
  TC_REQUIRE(g);
  TC_CHECK(g->ld == 10 && g->ld_adj == 10 && g->cap_nodes == 10 && g->cap_samples == 64 &&
           g->cap_inter == 10 && g->cap_hidden == 8 && g->mlp);
  g->n_nodes = 10;
  g->n_samples = 64;
  g->n_inter = 10;
  TC_CHECK(twincache_graph_raw_bytes(g) == 64ull * 10 * 11 * 4);
  twincache_graph_free(g);
  TC_CHECK(twincache_graph_raw_bytes(NULL) == 0);
}

static void permute_bijection(void) {
  uint64_t ns[] = {1, 2, 3, 4, 5, 17, 64, 1000, 1024, 1025, 4097};
  for (size_t t = 0; t < sizeof ns / sizeof ns[0]; t++) {
    uint64_t n = ns[t];
    uint8_t *seen = calloc(n, 1);
    TC_REQUIRE(seen);
    for (uint64_t key = 0; key < 3; key++) {
      memset(seen, 0, n);
      uint64_t fixed = 0;
      for (uint64_t x = 0; x < n; x++) {
        uint64_t y = tc_permute(x, n, key * 0x9e3779b97f4a7c15ull);
        TC_CHECK(y < n);
        if (y < n) {
          TC_CHECK(!seen[y]);
          seen[y] = 1;
        }
        fixed += y == x;
      }
      if (n >= 1000) TC_CHECK(fixed < n / 10); /* it actually shuffles */
    }
    free(seen);
  }
  /* different keys give different orders */
  int differ = 0;
  for (uint64_t x = 0; x < 1000; x++) differ += tc_permute(x, 1000, 1) != tc_permute(x, 1000, 2);
  TC_CHECK(differ > 900);
}

/* A meta record of `version` whose dims have `samples`, with a valid tag and
 * checksum from version 2: what twincache_meta_parse returns for it. */
static int meta_parse_samples(uint32_t version, uint32_t samples) {
  static const char config[] = "{\"seed\":1}";
  twincache_meta m = {.version = version,
                      .dims = {.graphs = 10, .chunk_graphs = 4, .max_nodes = 6, .max_inter = 6, .samples = samples},
                      .config = config, .config_len = sizeof config - 1, .library = "", .library_len = 0};
  m.tag = twincache_meta_tag(m.config, m.config_len);
  uint8_t ver[4], dims[TWINCACHE_DIMS_BYTES], tag[8], check[TWINCACHE_META_CHECK_BYTES];
  tc_store_u32(ver, version);
  twincache_dims_encode(&m.dims, dims);
  tc_store_u64(tag, m.tag);
  twincache_meta_check_encode(&m, check);
  twincache_meta_entry e[TWINCACHE_MK_COUNT] = {{0}};
  e[TWINCACHE_MK_VERSION] = (twincache_meta_entry){ver, 4};
  e[TWINCACHE_MK_CONFIG] = (twincache_meta_entry){config, m.config_len};
  e[TWINCACHE_MK_DIMS] = (twincache_meta_entry){dims, sizeof dims};
  if (version >= 2) {
    e[TWINCACHE_MK_TAG] = (twincache_meta_entry){tag, 8};
    e[TWINCACHE_MK_CHECK] = (twincache_meta_entry){check, sizeof check};
  }
  twincache_meta out;
  return twincache_meta_parse(e, &out);
}

/* SCM-only caches (dims samples = 0) exist from version 4 only: an older
 * record that says so is damaged, not SCM-only (FORMAT.md 4). */
static void meta_scm_only_versions(void) {
  for (uint32_t v = 1; v <= TWINCACHE_FORMAT_VERSION; v++) {
    TC_CHECK_RC(meta_parse_samples(v, 64), TWINCACHE_OK);
    int rc = meta_parse_samples(v, 0);
    if (v >= 4) {
      TC_CHECK_RC(rc, TWINCACHE_OK);
    } else {
      TC_CHECK_RC(rc, TWINCACHE_ECORRUPT);
      TC_CHECK(strstr(twincache_last_error(), "SCM-only") != NULL, "version %u: %s", v, twincache_last_error());
    }
  }
}

int main(void) {
  meta_roundtrip();
  meta_scm_only_versions();
  strerror_all();
  dag_helpers();
  alloc_limits();
  permute_bijection();
  return tc_test_finish("test_format_meta");
}
