/* test_cache_shard — cache/shard.c, the split and the shard meta entry
 * (FORMAT.md section 7), as pure functions:
 *  - the split, exhaustively over graphs 1..200, C 1..17 and every N up to
 *    the chunk count: shards tile [0, graphs) in order, start on chunk
 *    boundaries, differ by at most one chunk; N above the chunk count, N 0
 *    and I >= N are refused; 2^60 graphs in 2^32-1 shards do not overflow;
 *  - the entry: encode/decode round trip; every truncation and extension,
 *    every single-bit flip, another tag, and a range not the split's are
 *    refused (ECORRUPT, a newer layout EVERSION). */
#include <stdint.h>
#include <string.h>

#include "tc_cache_shard.h"
#include "twincache_format.h"

#define TC_TEST_STRERROR twincache_strerror
#include "tc_test.h"

static void split(void) {
  uint64_t cases = 0, bad = 0;
  for (uint64_t graphs = 1; graphs <= 200; graphs++)
    for (uint32_t c = 1; c <= 17; c++) {
      uint64_t chunks = (graphs + c - 1) / c;
      for (uint32_t n = 1; n <= chunks; n++) {
        uint64_t next = 0, lo = UINT64_MAX, hi = 0;
        for (uint32_t i = 0; i < n; i++) {
          tc_cache_shard s;
          cases++;
          if (tc_cache_shard_split(graphs, c, i, n, &s) != 0 || s.index != i || s.count != n ||
              s.first != next || s.first % c != 0 || s.end <= s.first || s.end > graphs) {
            bad++;
            break;
          }
          uint64_t k = (s.end - s.first + c - 1) / c; /* chunks held */
          lo = k < lo ? k : lo;
          hi = k > hi ? k : hi;
          next = s.end;
        }
        if (next != graphs || hi - lo > 1) bad++;
      }
      tc_cache_shard s;
      if (tc_cache_shard_split(graphs, c, 0, (uint32_t)(chunks + 1), &s) != TWINCACHE_EINVAL) bad++;
    }
  TC_CHECK(bad == 0, "%llu of %llu splits wrong", (unsigned long long)bad, (unsigned long long)cases);
  tc_cache_shard s;
  TC_CHECK(tc_cache_shard_split(100, 8, 0, 0, &s) == TWINCACHE_EINVAL, "N = 0");
  TC_CHECK(tc_cache_shard_split(100, 8, 3, 3, &s) == TWINCACHE_EINVAL, "I = N");
  TC_CHECK(tc_cache_shard_split(100, 0, 0, 1, &s) == TWINCACHE_EINVAL, "C = 0");
  uint64_t big = 1ull << 60;
  TC_CHECK(tc_cache_shard_split(big, 1, UINT32_MAX - 1, UINT32_MAX, &s) == 0 && s.end == big &&
               s.first == big - (big / UINT32_MAX + 1),
           "2^60 graphs, last of 2^32-1 shards: %llu..%llu", (unsigned long long)s.first, (unsigned long long)s.end);
}

static void entry(void) {
  const uint64_t tag = 0x1234567890abcdefull, graphs = 1000;
  const uint32_t c = 16;
  tc_cache_shard s, got;
  TC_REQUIRE(tc_cache_shard_split(graphs, c, 2, 5, &s) == 0);
  uint8_t e[TC_SHARD_ENTRY_BYTES + 1];
  tc_cache_shard_encode(&s, tag, e);
  TC_CHECK(tc_cache_shard_decode(e, TC_SHARD_ENTRY_BYTES, tag, graphs, c, &got) == 0 &&
               memcmp(&got, &s, sizeof s) == 0, "round trip: %s", twincache_last_error());
  int accepted = 0;
  for (size_t n = 0; n <= TC_SHARD_ENTRY_BYTES + 1; n++)
    if (n != TC_SHARD_ENTRY_BYTES && tc_cache_shard_decode(e, n, tag, graphs, c, &got) != TWINCACHE_ECORRUPT)
      accepted++;
  for (size_t bit = 0; bit < 8 * TC_SHARD_ENTRY_BYTES; bit++) {
    e[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    int rc = tc_cache_shard_decode(e, TC_SHARD_ENTRY_BYTES, tag, graphs, c, &got);
    if (rc != TWINCACHE_ECORRUPT && rc != TWINCACHE_EVERSION) accepted++;
    /* every field but the layout and the reserved word is under the checksum, the end (24..31) too: the
     * checksum's message, not a later check's (issue 35 item 12) */
    size_t byte = bit / 8;
    if (byte >= 4 && (byte < 12 || byte >= 16))
      TC_CHECK(rc == TWINCACHE_ECORRUPT && strstr(twincache_last_error(), "fails its checksum"), "bit %zu: %s",
               bit, twincache_last_error());
    e[bit / 8] ^= (uint8_t)(1u << (bit % 8));
  }
  TC_CHECK(accepted == 0, "%d damaged entries accepted", accepted);
  TC_CHECK(tc_cache_shard_decode(e, TC_SHARD_ENTRY_BYTES, tag + 1, graphs, c, &got) == TWINCACHE_ECORRUPT,
           "another cache's tag");
  TC_CHECK(tc_cache_shard_decode(e, TC_SHARD_ENTRY_BYTES, tag, graphs + 200, c, &got) == TWINCACHE_ECORRUPT,
           "another --graphs");
  TC_CHECK(strstr(twincache_last_error(), "not that shard's range"), "%s", twincache_last_error());
  tc_cache_shard wrong = s;
  wrong.end += c; /* a range that is no shard of this split, with a valid checksum */
  tc_cache_shard_encode(&wrong, tag, e);
  TC_CHECK(tc_cache_shard_decode(e, TC_SHARD_ENTRY_BYTES, tag, graphs, c, &got) == TWINCACHE_ECORRUPT, "range");
  e[0] = 2; /* a newer layout is refused as such, before its checksum */
  TC_CHECK(tc_cache_shard_decode(e, TC_SHARD_ENTRY_BYTES, tag, graphs, c, &got) == TWINCACHE_EVERSION, "layout 2");
}

int main(void) {
  split();
  entry();
  return tc_test_finish("cache_shard");
}
