/* test_inspect_verify.c — `verify` exits 0 on good caches (linear/do and
 * MLP/standardised/shift) and 1 naming the bad graph or chunk on damaged
 * copies, each damaged through LMDB directly:
 *   1. one byte of graph X's frame flipped inside its chunk  -> "graph X: ..."
 *   2. chunk 0's record also filed under key 1 (every checksum fine, wrong
 *      place)                                                  -> "chunk 1 (...) ..."
 *   3. the last chunk deleted while meta still counts it       -> "chunk K (...) missing ..."
 *   4. the meta's edge or node total off by one, the meta checksum
 *      recomputed (every record valid, the totals wrong)       -> "meta stats disagree"
 * usage: test_inspect_verify GEN INSPECT SCRATCH */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "inspect_test.h"
#include "tc_cache_raw.h"
#include "tc_common.h"
#include "twincache_loader.h"

enum { DAMAGE_FLIP, DAMAGE_MISFILE, DAMAGE_DELETE };

/* Applies one damage to chunk `chunk` of the cache at dir. FLIP flips a byte
 * in the middle of slot a's frame; MISFILE overwrites the record of chunk
 * `chunk` with the (valid) record of chunk a; DELETE removes the record. */
static int damage_chunk(const char *dir, uint64_t chunk, int how, uint32_t a) {
  tc_cache_raw *raw = NULL;
  uint8_t *copy = NULL;
  void *got = NULL;
  size_t got_size = 0;
  int ok = 0, rc;
  uint8_t key_bytes[8];
  tc_cache_raw_chunk_key(key_bytes, chunk);
  if ((rc = tc_cache_raw_open(dir, 1, &raw)) != 0) {
    fprintf(stderr, "lmdb: %s\n", twincache_strerror(rc));
    goto cleanup;
  }
  if (how == DAMAGE_DELETE) {
    rc = tc_cache_raw_del(raw, "graphs", key_bytes, 8);
  } else if (how == DAMAGE_MISFILE) {
    uint8_t from_bytes[8];
    tc_cache_raw_chunk_key(from_bytes, a);
    if ((rc = tc_cache_raw_get(raw, "graphs", from_bytes, 8, &got, &got_size)) == 0) {
      copy = got;
      rc = tc_cache_raw_put(raw, "graphs", key_bytes, 8, copy, got_size);
    }
  } else if ((rc = tc_cache_raw_get(raw, "graphs", key_bytes, 8, &got, &got_size)) == 0) {
    copy = got;
    twincache_chunk_view v;
    if (twincache_chunk_parse(copy, got_size, &v) != 0 || a >= v.count) {
      fprintf(stderr, "chunk %llu does not parse or is too short\n", (unsigned long long)chunk);
      goto cleanup;
    }
    const void *fa;
    size_t na;
    twincache_chunk_frame(&v, a, &fa, &na);
    ((uint8_t *)fa)[na / 2] ^= 0x5a; /* fa points into copy */
    rc = tc_cache_raw_put(raw, "graphs", key_bytes, 8, copy, got_size);
  }
  if (rc) {
    fprintf(stderr, "lmdb: %s\n", twincache_strerror(rc));
    goto cleanup;
  }
  rc = tc_cache_raw_close(raw);
  raw = NULL;
  ok = rc == 0;
cleanup:
  free(copy);
  tc_cache_raw_abort(raw); /* a failed damage is not committed */
  return ok ? 0 : -1;
}

/* Adds `edges` and `nodes` to the meta stats of the cache at dir and
 * rewrites meta_check to match, so the meta record is valid and only its
 * totals disagree with the graphs. 0, or -1. */
static int damage_totals(const char *dir, uint64_t edges, uint64_t nodes) {
  tc_cache_raw *raw = NULL;
  void *val[TWINCACHE_MK_COUNT] = {0};
  twincache_meta_entry e[TWINCACHE_MK_COUNT];
  int ok = 0;
  if (tc_cache_raw_open(dir, 1, &raw) != 0) goto cleanup;
  for (int k = 0; k < TWINCACHE_MK_COUNT; k++) {
    const char *key = twincache_meta_key_name(k);
    size_t size = 0;
    e[k].data = NULL;
    e[k].size = 0;
    if (tc_cache_raw_get(raw, "meta", key, strlen(key), &val[k], &size) == 0) {
      e[k].data = val[k];
      e[k].size = size;
    }
  }
  twincache_meta m;
  if (twincache_meta_parse(e, &m) != 0 || m.version < 2) goto cleanup;
  m.stats.edges += edges;
  m.stats.nodes += nodes;
  uint8_t stats[TWINCACHE_STATS_BYTES], check[TWINCACHE_META_CHECK_BYTES];
  twincache_stats_encode(&m.stats, stats);
  twincache_meta_check_encode(&m, check);
  const char *ks = twincache_meta_key_name(TWINCACHE_MK_STATS), *kc = twincache_meta_key_name(TWINCACHE_MK_CHECK);
  if (tc_cache_raw_put(raw, "meta", ks, strlen(ks), stats, sizeof stats) != 0 ||
      tc_cache_raw_put(raw, "meta", kc, strlen(kc), check, sizeof check) != 0)
    goto cleanup;
  ok = tc_cache_raw_close(raw) == 0;
  raw = NULL;
cleanup:
  tc_cache_raw_abort(raw);
  for (int k = 0; k < TWINCACHE_MK_COUNT; k++) free(val[k]);
  return ok ? 0 : -1;
}

static void expect_verify(const char *inspect, const char *cache, const char *scratch,
                          int want_status, const char *want_text) {
  char *argv[] = {(char *)inspect, "verify", (char *)cache, NULL};
  tt_result r;
  if (tt_run(argv, scratch, &r) != 0) {
    TC_CHECK(0, "could not run %s", inspect);
    return;
  }
  TC_CHECK(r.status == want_status, "verify %s exited %d, want %d\nstdout: %s\nstderr: %s", cache,
        r.status, want_status, r.out, r.err);
  TC_CHECK(strstr(r.out, want_text) != NULL, "verify %s output lacks '%s':\n%s", cache, want_text,
        r.out);
  tt_result_clear(&r);
}

int main(int argc, char **argv) {
  char cache[4096], bad[4096];
  int rc = tt_begin(argc, argv, 50, cache, sizeof cache);
  if (rc) return rc;
  const char *gen = argv[1], *inspect = argv[2], *scratch = argv[3];
  snprintf(bad, sizeof bad, "%s/bad", scratch);
  twincache_cache *c = NULL;
  rc = twincache_cache_open(cache, &c);
  if (rc != 0) {
    fprintf(stderr, "open %s: %s\n", cache, twincache_strerror(rc));
    return 1;
  }
  uint64_t count = twincache_cache_count(c), per_chunk = twincache_cache_dims(c)->chunk_graphs;
  twincache_cache_close(c);
  TC_CHECK(count == 50 && per_chunk > 0, "count %llu, chunk %llu", (unsigned long long)count,
        (unsigned long long)per_chunk);
  if (count != 50 || per_chunk == 0) return 1;

  expect_verify(inspect, cache, scratch, 0, "all 50 graphs");
  /* the other generator paths keep the invariants too */
  const char *other[] = {"--mechanism", "mlp", "--standardize", "--intervention", "shift",
                         "--noise", "uniform", "--graph", "ba", NULL};
  if (tt_make_cache(gen, bad, scratch, 40, other) == 0)
    expect_verify(inspect, bad, scratch, 0, "all 40 graphs");
  else
    TC_CHECK(0, "could not create the MLP/standardised/shift cache");

  /* 1: one flipped byte in graph 37's frame */
  uint64_t x = 37;
  char want[128];
  snprintf(want, sizeof want, "graph %llu: ", (unsigned long long)x);
  if (tt_copy_cache(cache, bad) == 0 &&
      damage_chunk(bad, x / per_chunk, DAMAGE_FLIP, (uint32_t)(x % per_chunk)) == 0) {
    expect_verify(inspect, bad, scratch, 1, want);
    expect_verify(inspect, bad, scratch, 1, "1 of 50 graphs bad");
  } else {
    TC_CHECK(0, "could not damage a copy of the cache (flip)");
  }

  /* 2: a valid chunk record filed under another chunk's key */
  if (count > per_chunk && tt_copy_cache(cache, bad) == 0 &&
      damage_chunk(bad, 1, DAMAGE_MISFILE, 0) == 0) {
    snprintf(want, sizeof want, "chunk 1 (graphs %llu..%llu) missing or unreadable",
             (unsigned long long)per_chunk,
             (unsigned long long)((2 * per_chunk < count ? 2 * per_chunk : count) - 1));
    expect_verify(inspect, bad, scratch, 1, want);
  } else if (count > per_chunk) {
    TC_CHECK(0, "could not damage a copy of the cache (misfile)");
  }

  /* 3: the last chunk deleted */
  uint64_t last = (count - 1) / per_chunk;
  snprintf(want, sizeof want, "chunk %llu (graphs %llu..49) missing or unreadable", (unsigned long long)last,
           (unsigned long long)(last * per_chunk));
  if (tt_copy_cache(cache, bad) == 0 && damage_chunk(bad, last, DAMAGE_DELETE, 0) == 0)
    expect_verify(inspect, bad, scratch, 1, want);
  else
    TC_CHECK(0, "could not damage a copy of the cache (delete)");

  /* 4: the totals alone wrong, under a valid meta checksum */
  for (int which = 0; which < 2; which++) {
    if (tt_copy_cache(cache, bad) == 0 && damage_totals(bad, which == 0, which == 1) == 0) {
      twincache_cache *dc = NULL;
      TC_CHECK(twincache_cache_open(bad, &dc) == 0, "the meta record of %s must stay valid: %s", bad,
               twincache_last_error());
      twincache_cache_close(dc);
      expect_verify(inspect, bad, scratch, 1, "meta stats disagree");
      expect_verify(inspect, bad, scratch, 1, which == 0 ? "edges " : "nodes ");
    } else {
      TC_CHECK(0, "could not damage a copy of the cache (totals)");
    }
  }

  /* --quiet: nothing on success */
  {
    char *a[] = {(char *)inspect, "verify", cache, "--quiet", NULL};
    tt_result r;
    if (tt_run(a, scratch, &r) == 0) {
      TC_CHECK(r.status == 0 && r.out_len == 0, "verify --quiet: status %d, out '%s'", r.status, r.out);
      tt_result_clear(&r);
    }
  }
  if (tc_test_failures() == 0) tt_remove_tree(scratch);
  printf("%s: %d failures\n", argv[0], tc_test_failures());
  return tc_test_failures() ? 1 : 0;
}
