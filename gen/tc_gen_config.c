/* tc_gen_config.c — generator defaults, checks, canonical config JSON. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tc_checked.h"
#include "tc_gen.h"
#include "tc_error.h"
#include "tc_gen_family.h"
#include "tc_gen_inter.h"
#include "tc_gen_mech.h"

void tc_gen_config_default(tc_gen_config *c) {
  memset(c, 0, sizeof *c);
  c->n_families = 1;
  c->families[0] = TWINCACHE_FAMILY_ER;
  c->family_weights[0] = 1.0;
  for (int f = 0; f < TWINCACHE_FAMILY_COUNT; f++) { /* each family's own options, in its file */
    const tc_gen_family *fam = tc_gen_family_get(f);
    if (fam && fam->defaults) fam->defaults(c);
  }
  c->nodes_min = 5;
  c->nodes_max = 10;
  c->samples = 64;
  c->mechanism = TWINCACHE_MECH_LINEAR;
  for (int m = 0; m < TWINCACHE_MECH_COUNT; m++) { /* each mechanism's own options, in its file */
    const tc_gen_mech *mech = tc_gen_mech_get(m);
    if (mech && mech->defaults) mech->defaults(c);
  }
  c->noise = TWINCACHE_NOISE_GAUSS;
  c->noise_scale_min = 0.5;
  c->noise_scale_max = 1.5;
  c->hetero = 0.0;
  c->iscm = 0;
  c->worlds = TC_GEN_WORLDS_TWIN;
  c->standardize = 0;
  c->intervention = TWINCACHE_DO;
  c->targets = 0;
  c->targets_per_world_min = 1;
  c->targets_per_world_max = 1;
  for (int k = 0; k < TWINCACHE_INTER_KIND_COUNT; k++) { /* each kind's own options (--values), in its file */
    const tc_gen_inter *inter = tc_gen_inter_get(k);
    if (inter && inter->defaults) inter->defaults(c);
  }
  c->seed = 0;
  c->zstd_level = 1;
  c->encoding = TWINCACHE_ENCODING_FAST;
  c->chunk_graphs = 0;
  c->out_dir = NULL;
  c->graphs = 1000;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  c->threads = cores > 0 ? (uint32_t)cores : 1;
  c->map_size_bytes = (uint64_t)1 << 30;
  c->quiet = 0;
  c->on_progress = NULL;
  c->progress_user = NULL;
}

int tc_gen_config_check(const tc_gen_config *c, tc_gen_refusal *bad) {
#define BAD(f, why) return tc_gen_refuse(bad, f, why)
  if (c->nodes_min < 1 || c->nodes_max < c->nodes_min || c->nodes_max > TWINCACHE_MAX_NODES)
    BAD("--nodes", NULL);
  if (c->samples > TWINCACHE_MAX_SAMPLES) BAD("--samples", NULL);
  if (c->n_families < 1 || c->n_families > TWINCACHE_FAMILY_COUNT) BAD("--graph", NULL);
  for (uint32_t k = 0; k < c->n_families; k++) {
    const tc_gen_family *fam = tc_gen_family_get(c->families[k]);
    if (!fam) BAD("--graph", NULL);
    if (!(c->family_weights[k] > 0.0 && c->family_weights[k] < TC_GEN_MAX_WEIGHT))
      BAD("--graph", "a mixture weight must be > 0 and below 1e300");
    for (uint32_t q = 0; q < k; q++)
      if (c->families[q] == c->families[k]) BAD("--graph", "a family twice in the mixture");
    if (fam->check && fam->check(c, bad)) return TWINCACHE_EINVAL;
  }
  const tc_gen_mech *mech = tc_gen_mech_get(c->mechanism);
  if (!mech) BAD("--mechanism", NULL);
  if (mech->check && mech->check(c, bad)) return TWINCACHE_EINVAL;
  if (!twincache_choice_name(TWINCACHE_CHOICE_NOISE, c->noise)) BAD("--noise", NULL);
  const tc_gen_inter *inter = tc_gen_inter_get(c->intervention);
  if (!inter) BAD("--intervention", NULL);
  if (!(c->noise_scale_min >= 0.0 && c->noise_scale_max >= c->noise_scale_min &&
        c->noise_scale_max < 1e6))
    BAD("--noise-scale", NULL);
  if (!(c->hetero >= 0.0 && c->hetero <= 100.0)) BAD("--hetero", NULL);
  if (c->targets > TWINCACHE_MAX_INTER && c->targets != TC_GEN_TARGETS_NONE) BAD("--targets", NULL);
  if (c->targets > c->nodes_max && c->targets != TC_GEN_TARGETS_NONE) /* no graph could have K targets */
    BAD("--targets", "K must be at most the largest --nodes");
  if (c->targets_per_world_min < 1 || c->targets_per_world_max < c->targets_per_world_min ||
      c->targets_per_world_max > TWINCACHE_MAX_TARGETS)
    BAD("--targets-per-world", NULL);
  if (c->targets_per_world_max > c->nodes_max) /* no graph could reach HI: the config would say what never happens */
    BAD("--targets-per-world", "HI must be at most the largest --nodes");
  /* one graph's worlds live in memory per worker and in one frame: <= 1 GiB */
  uint64_t worlds_bytes;
  if (tc_mul3_u64_overflow(c->samples, c->nodes_max, 1 + (uint64_t)tc_gen_max_inter(c), &worlds_bytes) ||
      tc_mul_u64_overflow(worlds_bytes, sizeof(float), &worlds_bytes) || worlds_bytes > (UINT64_C(1) << 30))
    BAD("--samples", "one graph's worlds, S x N x (1+K) x 4 bytes, must stay <= 1 GiB");
  if (c->inter_samples) { /* FORMAT.md 3.10: every world holds a row at least */
    if (c->samples == 0) BAD("--inter-samples", "needs worlds with rows: not with --samples 0 (SCM-only)");
    if (c->targets == TC_GEN_TARGETS_NONE) BAD("--inter-samples", "needs interventional worlds: not with --targets none");
    if (c->inter_samples < tc_gen_max_inter(c))
      BAD("--inter-samples", "M must be at least the most worlds a graph has (--targets, else the largest --nodes): "
                             "each world holds one row at least");
    /* and at most S x the fewest worlds a graph has: more would be cut to S
     * a world under a config recording M */
    uint32_t k_min = c->targets == 0 || c->targets > c->nodes_min ? c->nodes_min : c->targets;
    if ((uint64_t)c->inter_samples > (uint64_t)k_min * c->samples) {
      snprintf(bad->text, sizeof bad->text,
               "M must be at most S x the fewest worlds a graph has (--targets, else the smallest --nodes), "
               "%u x %u = %llu: each world holds at most S rows", c->samples, k_min,
               (unsigned long long)k_min * c->samples);
      BAD("--inter-samples", bad->text);
    }
  }
  if (!(c->value_max >= c->value_min && c->value_min > -1e6 && c->value_max < 1e6)) BAD("--values", NULL);
  if (c->value_dist == TC_VALUES_SIGNED && c->value_min < 0.0)
    BAD("--values", "LO >= 0 with --value-dist signed: the sign is drawn");
  if (inter->check && inter->check(c, bad)) return TWINCACHE_EINVAL;
  if (c->zstd_level < 1 || c->zstd_level > 19) BAD("--zstd-level", NULL);
  if (c->encoding != TWINCACHE_ENCODING_FAST && c->encoding != TWINCACHE_ENCODING_SMALL)
    BAD("--encoding", NULL);
  if (c->chunk_graphs > TWINCACHE_MAX_CHUNK_GRAPHS) BAD("--chunk-graphs", NULL);
  if (c->threads < 1 || c->threads > 1024) BAD("--threads", NULL);
  /* the graph count: its RNG streams and chunk keys must not wrap */
  uint64_t streams, last_graph_end;
  if (c->graphs > TC_GEN_MAX_GRAPHS || tc_mul_u64_overflow(c->graphs, TC_STREAMS_PER_GRAPH, &streams) ||
      tc_add_u64_overflow(c->graphs, tc_gen_chunk_graphs(c), &last_graph_end))
    BAD("--graphs", "an integer in [0, 1152921504606846976], 2^60");
  /* the map: a size_t the kernel can map, and room to double it */
  uint64_t doubled;
  size_t map_bytes;
  if (c->map_size_bytes < TC_GEN_MIN_MAP_BYTES || c->map_size_bytes > TC_GEN_MAX_MAP_BYTES ||
      tc_mul_u64_overflow(c->map_size_bytes, 2, &doubled) || tc_u64_to_size_overflow(doubled, &map_bytes))
    BAD("--map-size", "an integer in [65536, 70368744177664], 64 KiB to 2^46");
  return TWINCACHE_OK;
#undef BAD
}

uint32_t tc_gen_max_inter(const tc_gen_config *c) {
  if (c->targets == TC_GEN_TARGETS_NONE) return 1; /* a graph's capacity is >= 1; none is used */
  if (c->targets == 0 || c->targets > c->nodes_max) return c->nodes_max;
  return c->targets;
}

uint32_t tc_gen_chunk_graphs(const tc_gen_config *c) {
  if (c->chunk_graphs) return c->chunk_graphs;
  /* Estimate the average frame as 0.3x the raw float32 bytes (the sparse twin
   * encoding measures 0.26-0.27 on the default workload) and fill ~1 MiB. */
  double n = 0.5 * (c->nodes_min + c->nodes_max);
  double k = c->targets == TC_GEN_TARGETS_NONE ? 0.0 : c->targets == 0 ? n : (c->targets < n ? c->targets : n);
  double raw = (double)c->samples * n * (1.0 + k) * 4.0;
  double frame = 0.3 * raw + 64.0 + n * n * 5.0;
  double per = (1024.0 * 1024.0) / frame;
  if (per < 1) per = 1;
  if (per > 4096) per = 4096;
  return (uint32_t)per;
}

/* Names from the format's one table (formats/names.c); the config was
 * checked, so every code has one. */
static const char *choice(int which, int code) {
  const char *s = twincache_choice_name(which, code);
  return s ? s : "?";
}

int tc_gen_has_family(const tc_gen_config *c, int f) {
  for (uint32_t k = 0; k < c->n_families; k++)
    if (c->families[k] == f) return 1;
  return 0;
}

/* A weighted list "NAME" or "NAME:W,NAME:W,..." of codes of one choice
 * (--graph, --mechanism): at most cap distinct names that ok() accepts, each
 * weight a finite number > 0. Fills code[], wt[] (1.0 for a lone name) and
 * *n; the messages name the flag and `what` a component is. */
typedef struct {
  const char *flag, *unknown, *twice, *placeholder; /* "--graph", "family", "family '", "FAMILY" */
  int choice;
  int (*ok)(int code);
} mixture_spec;

static int parse_mixture(const mixture_spec *m, const char *spec, uint8_t *code, double *wt,
                         uint32_t cap, uint32_t *n_out) {
  uint32_t n = 0;
  const char *p = spec;
  if (!spec || !*spec) return tc_error_set(TWINCACHE_EINVAL, "%s: empty value", m->flag);
  for (;;) {
    size_t len = strcspn(p, ":,");
    int k = twincache_choice_code(m->choice, p, len);
    if (k < 0 || !m->ok(k))
      return tc_error_set(TWINCACHE_EINVAL, "%s: unknown %s '%.*s'", m->flag, m->unknown,
                          (int)(len > 32 ? 32 : len), p);
    if (n == cap) return tc_error_set(TWINCACHE_EINVAL, "%s: too many components", m->flag);
    for (uint32_t q = 0; q < n; q++)
      if (code[q] == k) return tc_error_set(TWINCACHE_EINVAL, "%s: %s%.*s' twice", m->flag, m->twice, (int)len, p);
    code[n] = (uint8_t)k;
    wt[n] = 1.0;
    p += len;
    if (*p == ':') {
      char *end;
      wt[n] = strtod(p + 1, &end);
      if (end == p + 1 || (*end && *end != ',') || !(wt[n] > 0.0 && wt[n] < TC_GEN_MAX_WEIGHT))
        return tc_error_set(TWINCACHE_EINVAL,
                            "%s: bad weight after '%.*s:' (a number > 0 and below 1e300, so that the "
                            "weights' sum stays finite)", m->flag, (int)len, p - len);
      p = end;
    } else if (*p == ',' || n > 0) {
      return tc_error_set(TWINCACHE_EINVAL, "%s: a mixture needs %s:WEIGHT for every component", m->flag,
                          m->placeholder);
    }
    n++;
    if (*p == 0) break;
    p++; /* ',' */
    if (!*p) return tc_error_set(TWINCACHE_EINVAL, "%s: trailing ','", m->flag);
  }
  *n_out = n;
  return TWINCACHE_OK;
}

static int family_ok(int code) { return tc_gen_family_get(code) != NULL; }
static int mechanism_ok(int code) { return code != TWINCACHE_MECH_MIXED; }

int tc_gen_parse_graph(tc_gen_config *c, const char *spec) {
  static const mixture_spec m = {"--graph", "family", "family '", "FAMILY", TWINCACHE_CHOICE_FAMILY, family_ok};
  uint8_t fam[TWINCACHE_FAMILY_COUNT];
  double wt[TWINCACHE_FAMILY_COUNT];
  uint32_t n = 0;
  int rc = parse_mixture(&m, spec, fam, wt, TWINCACHE_FAMILY_COUNT, &n);
  if (rc) return rc;
  for (uint32_t q = 0; n > 1 && q < n; q++)
    if (fam[q] == TWINCACHE_FAMILY_FILE)
      return tc_error_set(TWINCACHE_EINVAL, "--graph: 'file' fixes the graph and cannot be mixed");
  c->n_families = n;
  memcpy(c->families, fam, n);
  memcpy(c->family_weights, wt, n * sizeof(double));
  return TWINCACHE_OK;
}

int tc_gen_parse_mechanism(tc_gen_config *c, const char *spec) {
  static const mixture_spec m = {"--mechanism", "mechanism", "'", "NAME", TWINCACHE_CHOICE_MECHANISM,
                                 mechanism_ok};
  uint8_t code[TWINCACHE_MECH_MIXED];
  double wt[TWINCACHE_MECH_MIXED];
  uint32_t n = 0;
  int rc = parse_mixture(&m, spec, code, wt, TWINCACHE_MECH_MIXED, &n);
  if (rc) return rc;
  if (n == 1) {
    c->mechanism = code[0];
    c->n_mechs = 0;
    return TWINCACHE_OK;
  }
  c->mechanism = TWINCACHE_MECH_MIXED;
  c->n_mechs = n;
  memcpy(c->mechs, code, n);
  memcpy(c->mech_weights, wt, n * sizeof(double));
  return TWINCACHE_OK;
}

int tc_gen_uses_mechanism(const tc_gen_config *c, int m) {
  if (c->mechanism == m) return 1;
  if (c->mechanism != TWINCACHE_MECH_MIXED) return 0;
  for (uint32_t k = 0; k < c->n_mechs; k++)
    if (c->mechs[k] == m) return 1;
  return 0;
}

/* The --graph value as the config stores it: "er", or "er:0.5 sf:0.29999999999999999"
 * (weights %.17g, space-separated: no comma inside a config value).
 * Returns 0, or -1 when it does not fit in cap. */
static int graph_spec(const tc_gen_config *c, char *buf, size_t cap) {
  size_t used = 0;
  buf[0] = 0;
  for (uint32_t k = 0; k < c->n_families; k++) {
    int w = c->n_families == 1
                ? snprintf(buf + used, cap - used, "%s", choice(TWINCACHE_CHOICE_FAMILY, c->families[k]))
                : snprintf(buf + used, cap - used, "%s%s:%.17g", k ? " " : "",
                           choice(TWINCACHE_CHOICE_FAMILY, c->families[k]), c->family_weights[k]);
    if (w < 0 || (size_t)w >= cap - used) return -1;
    used += (size_t)w;
  }
  return 0;
}

/* The identity keys of the families c uses whose identity_late is `late`,
 * in code order, appended at buf + *used. Returns 0, or -1 when they do
 * not fit in cap. */
static int family_keys(const tc_gen_config *c, int late, char *buf, size_t cap, size_t *used) {
  for (int f = 0; f < TWINCACHE_FAMILY_COUNT; f++) {
    const tc_gen_family *fam = tc_gen_family_get(f);
    if (!fam || !fam->identity || fam->identity_late != late || !tc_gen_has_family(c, f)) continue;
    int w = fam->identity(c, buf + *used, cap - *used);
    if (w < 0) return -1;
    *used += (size_t)w;
  }
  return 0;
}

/* The identity keys of the mechanisms c uses (alone or in its mixture), in
 * code order, appended at buf + *used. Returns 0, or -1 when they do not
 * fit in cap. */
static int mech_keys(const tc_gen_config *c, char *buf, size_t cap, size_t *used) {
  for (int m = 0; m < TWINCACHE_MECH_COUNT; m++) {
    const tc_gen_mech *mech = tc_gen_mech_get(m);
    if (!mech || !mech->identity || !tc_gen_uses_mechanism(c, m)) continue;
    int w = mech->identity(c, buf + *used, cap - *used);
    if (w < 0) return -1;
    *used += (size_t)w;
  }
  return 0;
}

/* Keys of the families and mechanisms a config uses, after the common
 * ones: new families and mechanisms add their keys here only when used, so
 * the identity of a cache that does not use them stays what it was.
 * Returns 0, or -1 when they do not fit in cap (a key dropped would change
 * the cache's identity unseen). */
static int family_json(const tc_gen_config *c, char *buf, size_t cap) {
  size_t used = 0;
  int overflow = 0;
  buf[0] = 0;
#define ADD(...)                                                        \
  do {                                                                  \
    int w_ = snprintf(buf + used, cap - used, __VA_ARGS__);             \
    if (w_ >= 0 && (size_t)w_ < cap - used)                             \
      used += (size_t)w_;                                               \
    else                                                                \
      overflow = 1;                                                     \
  } while (0)
  if (family_keys(c, 0, buf, cap, &used)) overflow = 1; /* the families' own, in code order */
  if (c->mechanism == TWINCACHE_MECH_MIXED) /* "linear:0.5 mlp:0.5": no comma in a value */
    for (uint32_t k = 0; k < c->n_mechs; k++)
      ADD("%s%s:%.17g%s", k ? " " : ",\"mechanisms\":\"", choice(TWINCACHE_CHOICE_MECHANISM, c->mechs[k]),
          c->mech_weights[k], k + 1 == c->n_mechs ? "\"" : "");
  if (c->iscm) ADD(",\"iscm\":true"); /* only then: older caches keep their identity */
  if (c->worlds == TC_GEN_WORLDS_INDEPENDENT) ADD(",\"worlds\":\"independent\""); /* only then: twin caches keep theirs */
  if (c->inter_samples) ADD(",\"inter_samples\":%u", c->inter_samples); /* only then, FORMAT.md 3.10 */
  if (c->hetero > 0.0) ADD(",\"hetero\":%.17g", c->hetero); /* only then: older caches keep their identity */
  if (mech_keys(c, buf, cap, &used)) overflow = 1; /* the used mechanisms' own, in code order */
  if (family_keys(c, 1, buf, cap, &used)) overflow = 1; /* the late ones (graph_file) */
#undef ADD
  return overflow ? -1 : 0;
}

size_t tc_gen_config_json(const tc_gen_config *c, char *buf, size_t cap) {
  /* Flat object, fixed key order, numbers with %.17g: the same options give
   * the same bytes. No value contains a comma (tc_gen_config_diff relies on it). */
  char graph[256], extra[1024], tpw[64] = "", targets[16] = "\"none\""; /* extra: <= ~560 bytes with every optional key at %.17g */
  if (c->targets_per_world_max > 1) /* absent at 1:1, so older caches keep their config text */
    snprintf(tpw, sizeof tpw, ",\"targets_per_world\":\"%u:%u\"", c->targets_per_world_min,
             c->targets_per_world_max);
  if (c->targets != TC_GEN_TARGETS_NONE) snprintf(targets, sizeof targets, "%u", c->targets);
  if (graph_spec(c, graph, sizeof graph) != 0 || family_json(c, extra, sizeof extra) != 0) return 0;
  int n = snprintf(
      buf, cap,
      "{\"format_version\":%d,\"generator\":\"twincache-gen\",\"graph\":\"%s\","
      "\"edge_prob\":%.17g,\"expected_degree\":%.17g,\"ba_m\":%u,\"ws_k\":%u,\"ws_p\":%.17g,"
      "\"nodes_min\":%u,\"nodes_max\":%u,\"samples\":%u,\"mechanism\":\"%s\","
      "\"weight_min\":%.17g,\"weight_max\":%.17g,\"mlp_hidden\":%u,\"mlp_scale\":%.17g,%s\"noise\":\"%s\","
      "\"noise_scale_min\":%.17g,\"noise_scale_max\":%.17g,\"standardize\":%s,"
      "\"intervention\":\"%s\",\"targets\":%s,\"value_dist\":\"%s\",\"value_min\":%.17g,"
      "\"value_max\":%.17g,\"seed\":%llu,\"zstd_level\":%d,\"encoding\":\"%s\",\"chunk_graphs\":%u%s%s}",
      c->worlds == TC_GEN_WORLDS_INDEPENDENT || c->inter_samples ? TWINCACHE_FORMAT_VERSION
                                                                 : TWINCACHE_FORMAT_VERSION_TWIN,
      graph,
      c->edge_prob, c->expected_degree, c->ba_m,
      c->ws_k, c->ws_p, c->nodes_min, c->nodes_max, c->samples,
      choice(TWINCACHE_CHOICE_MECHANISM, c->mechanism), c->weight_min, c->weight_max,
      c->mlp_hidden, c->mlp_scale,
      /* MLP worlds use scm/'s own tanh since issue 17 (libm's before): an
       * older MLP cache has no such key, so it is never extended with them */
      c->mechanism == TWINCACHE_MECH_MLP ? "\"mlp_tanh\":\"scm1\"," : "", choice(TWINCACHE_CHOICE_NOISE, c->noise), c->noise_scale_min, c->noise_scale_max,
      c->standardize ? "true" : "false", choice(TWINCACHE_CHOICE_INTER_KIND, c->intervention),
      targets, c->value_dist == TC_VALUES_SIGNED ? "signed" : "uniform", c->value_min,
      c->value_max, (unsigned long long)c->seed, c->zstd_level,
      c->encoding == TWINCACHE_ENCODING_SMALL ? "small" : "fast", tc_gen_chunk_graphs(c), tpw, extra);
  if (n < 0 || (size_t)n >= cap) return 0;
  return (size_t)n;
}

/* Finds "key":value in a flat JSON object; returns the value's start and length. */
typedef struct { const char *key, *val; size_t key_len, val_len; } kv;

static int split_json(const char *s, size_t len, kv *out, int cap) {
  int n = 0;
  size_t i = 0;
  while (i < len && s[i] != '{') i++;
  i++;
  while (i < len && n < cap) {
    while (i < len && (s[i] == ' ' || s[i] == ',')) i++;
    if (i >= len || s[i] != '"') break;
    size_t k0 = ++i;
    while (i < len && s[i] != '"') i++;
    if (i >= len) break;
    out[n].key = s + k0;
    out[n].key_len = i - k0;
    i++;
    if (i >= len || s[i] != ':') break;
    size_t v0 = ++i;
    while (i < len && s[i] != ',' && s[i] != '}') i++;
    out[n].val = s + v0;
    out[n].val_len = i - v0;
    n++;
  }
  return n;
}

int tc_gen_config_diff(const char *cache_json, size_t cache_len, const char *now_json,
                       char *out, size_t out_cap) {
  kv a[64], b[64];
  int na = split_json(cache_json, cache_len, a, 64);
  int nb = split_json(now_json, strlen(now_json), b, 64);
  int diffs = 0;
  size_t used = 0;
  if (out_cap) out[0] = 0;
#define APPEND(...)                                                             \
  do {                                                                          \
    if (used < out_cap) {                                                       \
      int w_ = snprintf(out + used, out_cap - used, __VA_ARGS__);               \
      if (w_ > 0) used += (size_t)w_ < out_cap - used ? (size_t)w_ : out_cap - used - 1; \
    }                                                                           \
  } while (0)
  for (int j = 0; j < nb; j++) {
    int found = -1;
    for (int i = 0; i < na; i++)
      if (a[i].key_len == b[j].key_len && !memcmp(a[i].key, b[j].key, a[i].key_len)) found = i;
    if (found < 0) {
      APPEND("%s%.*s: not in cache", diffs ? "; " : "", (int)b[j].key_len, b[j].key);
      diffs++;
    } else if (a[found].val_len != b[j].val_len || memcmp(a[found].val, b[j].val, b[j].val_len)) {
      APPEND("%s%.*s: cache %.*s, now %.*s", diffs ? "; " : "", (int)b[j].key_len, b[j].key,
             (int)a[found].val_len, a[found].val, (int)b[j].val_len, b[j].val);
      diffs++;
    }
  }
  for (int i = 0; i < na; i++) {
    int found = 0;
    for (int j = 0; j < nb; j++)
      if (a[i].key_len == b[j].key_len && !memcmp(a[i].key, b[j].key, a[i].key_len)) found = 1;
    if (!found) {
      APPEND("%s%.*s: only in cache", diffs ? "; " : "", (int)a[i].key_len, a[i].key);
      diffs++;
    }
  }
  if (diffs == 0 && (na == 0 || nb == 0)) {
    APPEND("config unreadable");
    diffs = 1;
  }
#undef APPEND
  return diffs;
}
