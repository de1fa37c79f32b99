/* test_cache_small_map — a reader whose address space cannot hold the large
 * map reservation (`ulimit -v`; valgrind refuses it as well) maps the
 * file's size with headroom instead (FORMAT.md 1.1): under an RLIMIT_AS of
 * the process's size plus 1 GiB, far below the 256 GiB reservation, the
 * library reads every graph and `twincache-inspect verify` passes.
 * Skipped (77) under ASan/TSan, whose shadow memory needs the address space.
 * Called as: test_cache_small_map GEN INSPECT SCRATCH */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "inspect_test.h"
#include "tc_test.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif

/* Virtual size of this process in bytes (/proc/self/statm, first field). */
static unsigned long long vm_bytes(void) {
  unsigned long long pages = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f) {
    if (fscanf(f, "%llu", &pages) != 1) pages = 0;
    fclose(f);
  }
  return pages * 4096ull;
}

int main(int argc, char **argv) {
#ifdef SANITIZED
  (void)argc, (void)argv;
  printf("test_cache_small_map: sanitizer build, skipped\n");
  return 77;
#else
  char cache[4096];
  int rc = tt_begin(argc, argv, 200, cache, sizeof cache);
  if (rc) return rc;
  struct rlimit old, small;
  TC_REQUIRE(getrlimit(RLIMIT_AS, &old) == 0, "getrlimit");
  unsigned long long vm = vm_bytes();
  TC_REQUIRE(vm > 0, "cannot read /proc/self/statm");
  small = old;
  small.rlim_cur = (rlim_t)(vm + (1ull << 30));
  if (old.rlim_cur != RLIM_INFINITY && old.rlim_cur < small.rlim_cur) small.rlim_cur = old.rlim_cur;
  TC_REQUIRE(setrlimit(RLIMIT_AS, &small) == 0, "setrlimit");

  tt_reader r;
  rc = tt_reader_open(cache, &r);
  TC_CHECK(rc == 0, "open under a %llu MiB address space: %s", (unsigned long long)small.rlim_cur >> 20,
           twincache_last_error());
  if (rc == 0) {
    uint64_t n = twincache_cache_count(r.cache), good = 0;
    for (uint64_t i = 0; i < n; i++) good += twincache_cache_read_graph(r.cache, r.dctx, i, r.graph) == 0;
    TC_CHECK(n == 200 && good == n, "read %llu of %llu graphs", (unsigned long long)good, (unsigned long long)n);
    tt_reader_close(&r);
  }
  /* the programs inherit the limit */
  char *const verify[] = {argv[2], "verify", cache, NULL};
  tt_result res;
  TC_REQUIRE(tt_run(verify, argv[3], &res) == 0, "cannot run %s", argv[2]);
  TC_CHECK(res.status == 0, "verify under the small address space exited %d: %s", res.status,
           res.err ? res.err : "");
  tt_result_clear(&res);
  TC_REQUIRE(setrlimit(RLIMIT_AS, &old) == 0, "restoring the limit");
  return tc_test_finish("test_cache_small_map");
#endif
}
