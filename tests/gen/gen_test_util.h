/* gen_test_util.h — helpers of the generator tests: run the real
 * twincache-gen binary, read a cache with LMDB, compare two caches. */
#ifndef GEN_TEST_UTIL_H
#define GEN_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "twincache_format.h"

#include "tc_test.h" /* TC_REQUIRE: the generator tests stop at the first failed check */

/* Runs bin with the NULL-terminated args (argv[0] excluded); captures stderr
 * into err (NUL-terminated, may be NULL). Returns the exit status, or 128+sig
 * when killed by a signal. */
int tg_run(const char *bin, const char *const *args, char *err, size_t err_cap);
/* Starts bin with args in the background (stdout/stderr to /dev/null). */
pid_t tg_spawn(const char *bin, const char *const *args);
/* Exit status of a spawned process (waits), 128+sig when killed. */
int tg_wait(pid_t pid);
/* Creates dir (one level); 1 when it exists afterwards. */
int tg_mkdir(const char *dir);
/* Removes a cache directory (its files, then the directory); ignores errors. */
void tg_rmrf(const char *dir);
/* Graphs committed in the cache at dir (meta "committed"), 0 when the cache
 * does not exist yet or cannot be read; reads through a read-only LMDB env. */
uint64_t tg_committed(const char *dir);
/* 0 when the two caches hold byte-identical "graphs" and "meta" sub-DBs;
 * otherwise 1 with the first difference in why. */
int tg_cache_compare(const char *a, const char *b, char *why, size_t why_cap);
/* Calls fn for every graph of the cache in index order, decoded into a graph
 * sized by the cache's dims. Returns the number of graphs visited; exits on
 * any decode error. */
typedef void (*tg_graph_fn)(const twincache_graph *g, const twincache_dims *dims, void *user);
uint64_t tg_for_each_graph(const char *dir, tg_graph_fn fn, void *user);
/* Meta value of key as a NUL-terminated malloc'd string (caller frees), or NULL. */
char *tg_meta(const char *dir, const char *key, size_t *size);

#endif
