/* inspect_test.h — shared helpers of the twincache-inspect tests: run a
 * program and capture its exit status, stdout and stderr; build a small cache
 * with the real twincache-gen; remove a scratch directory; read the truth
 * through the library; TC_CHECK (tests/tc_test.h).
 *
 * Every test program is called as: test GEN INSPECT SCRATCH_DIR
 * (ctest passes $<TARGET_FILE:...> and a directory unique to the test). */
#ifndef TC_INSPECT_TEST_H
#define TC_INSPECT_TEST_H

#include <stddef.h>
#include <stdio.h>

#include "twincache_format.h"
#include "twincache_loader.h"

#include "tc_test.h" /* TC_CHECK & co. */

typedef struct tt_result {
  int status; /* exit code, or 128 + signal */
  char *out;  /* stdout, NUL-terminated (malloc'd) */
  char *err;  /* stderr, NUL-terminated (malloc'd) */
  size_t out_len;
} tt_result;

/* Runs argv (NULL-terminated; argv[0] a path) with stdout/stderr captured
 * through files in scratch. Returns 0, or -1 if it could not run at all. */
int tt_run(char *const argv[], const char *scratch, tt_result *r);
void tt_result_clear(tt_result *r);
/* Number of '\n'-terminated lines in s. */
size_t tt_count_lines(const char *s);
/* Reads a whole file (NUL-terminated, malloc'd) or NULL. */
char *tt_read_file(const char *path, size_t *size);
/* rm -rf path (files and directories below it). */
void tt_remove_tree(const char *path);
/* mkdir -p scratch, empty. Returns 0 or -1. */
int tt_scratch_init(const char *scratch);
/* Generates the tests' small cache into dir (removed first):
 * --graphs graphs --seed 1 --nodes 3:6 --samples 16 --chunk-graphs 16
 * --quiet (several chunks, so chunk boundaries are exercised), then the
 * NULL-terminated extra flags (may be NULL). Returns 0 or -1. */
int tt_make_cache(const char *gen, const char *dir, const char *scratch, unsigned graphs,
                  const char *const *extra);
/* Copies the data file(s) of cache src (not lock.mdb) into a new directory dst. 0 or -1. */
int tt_copy_cache(const char *src, const char *dst);

/* Writes the u64 value at byte `at` of the LMDB meta page of cache dir's
 * data.mdb that LMDB reads (the one with the larger transaction id):
 * mm_last_pg is at 136, mm_txnid at 144 (MDB_meta after the 16-byte page
 * header). Damages a cache as a bad disk would. Returns 0 or -1. */
int tt_lmdb_meta_poke(const char *dir, unsigned at, uint64_t value);

/* The start of every test's main: checks that argv is GEN INSPECT SCRATCH,
 * empties SCRATCH and generates the test cache (tt_make_cache, no extra
 * flags) into SCRATCH/cache, whose path goes to cache. Returns 0, or, after
 * printing one line, the status main should exit with (2 usage, 1 no cache). */
int tt_begin(int argc, char **argv, unsigned graphs, char *cache, size_t cache_cap);

/* The library's view of a cache: the truth the tests compare output with. */
typedef struct tt_reader {
  twincache_cache *cache;
  twincache_dctx *dctx;
  twincache_graph *graph; /* sized for the cache's dims */
} tt_reader;
/* Opens cache with a dctx and a graph. Returns a twincache status
 * (TWINCACHE_ENOMEM when the dctx or graph cannot be made); on error r holds
 * nothing. */
int tt_reader_open(const char *cache, tt_reader *r);
/* Frees what r holds (any of it may be NULL). */
void tt_reader_close(tt_reader *r);

#endif /* TC_INSPECT_TEST_H */
