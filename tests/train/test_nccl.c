/* test_nccl.c — the NCCL path of twincache-train that runs without a GPU or
 * NCCL: the per-rank GPU choice (tc_device_index), and tc_nccl.h's loader
 * against a missing library, an incomplete one and the stand-in
 * fake_nccl.c (symbols resolved, the unique id passed whole by value, the
 * sums' arguments, a failing call's message naming it and NCCL's string,
 * the version decoded). Under an MPI launcher (W ranks) only the join: every
 * rank's ncclCommInitRank gets rank 0's unique id, whole, through
 * tc_dist_bcast. The device side runs in nccl_equal.sh (GPU).
 * Usage: [mpiexec -np W] test_nccl FAKE_LIBNCCL INCOMPLETE_FAKE_LIBNCCL */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "tc_device.h"
#include "tc_nccl.h"
#include "tc_test.h"
#include "twincache_format.h"

struct fake_nccl_log { /* fake_nccl.c's, field for field */
  int inits, nranks, rank, id_intact, reduces, datatype, op, destroys;
  int group_depth, grouped, ungrouped;
  size_t count;
  const void *send;
  void *recv, *stream;
  void *comm;
};

static int has(const char *text, const char *part) { return strstr(text, part) != NULL; }

static void test_device_index(void) {
  TC_CHECK(tc_device_index(0, 4, -1) == 0);
  TC_CHECK(tc_device_index(5, 4, -1) == 1); /* ranks of a node round-robin */
  TC_CHECK(tc_device_index(3, 1, -1) == 0); /* one GPU: every rank shares it */
  TC_CHECK(tc_device_index(2, 4, 3) == 3);  /* --gpu wins */
  TC_CHECK(tc_device_index(0, 4, 4) == -1); /* --gpu out of range */
  TC_CHECK(tc_device_index(0, 0, -1) == -1); /* no device */
  TC_CHECK(tc_device_index(-1, 2, -1) == -1);
}

static void test_missing(const tc_dist *d) {
  tc_nccl *n = (tc_nccl *)1;
  TC_CHECK_RC(tc_nccl_open(&n, d, "/nonexistent/libnccl.so.2"), TWINCACHE_EDEVICE);
  const char *e = twincache_last_error();
  TC_CHECK(n == NULL);
  TC_CHECK(has(e, "cannot load NCCL (/nonexistent/libnccl.so.2)"), "%s", e);
  TC_CHECK(has(e, "TWINCACHE_NCCL_LIBRARY") && has(e, "--device cpu"), "%s", e);
  setenv("TWINCACHE_NCCL_LIBRARY", "/nonexistent/from-env.so", 1);
  TC_CHECK_RC(tc_nccl_open(&n, d, NULL), TWINCACHE_EDEVICE);
  e = twincache_last_error();
  TC_CHECK(has(e, "(/nonexistent/from-env.so, from TWINCACHE_NCCL_LIBRARY)"), "%s", e);
  unsetenv("TWINCACHE_NCCL_LIBRARY");
}

static void test_incomplete(const tc_dist *d, const char *lib) {
  tc_nccl *n = NULL;
  TC_CHECK_RC(tc_nccl_open(&n, d, lib), TWINCACHE_EDEVICE);
  TC_CHECK(has(twincache_last_error(), "has no symbol ncclAllReduce"), "%s", twincache_last_error());
  TC_CHECK(n == NULL);
}

static void test_fake(const tc_dist *d, const char *lib) {
  tc_nccl *n = NULL;
  char name[700];
  TC_REQUIRE(tc_nccl_open(&n, d, lib) == 0, "%s", twincache_last_error());
  void *h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD); /* the same copy the loader opened */
  TC_REQUIRE(h != NULL, "%s", dlerror());
  struct fake_nccl_log *log = dlsym(h, "fake_nccl_log");
  TC_REQUIRE(log != NULL);
  TC_CHECK(log->inits == 1 && log->nranks == 1 && log->rank == 0);
  TC_CHECK(log->id_intact == 1, "the unique id did not arrive whole");
  tc_nccl_describe(n, name, sizeof name);
  TC_CHECK(has(name, "NCCL 2.99.3 (") && has(name, lib), "%s", name);

  float g[5] = {1, 2, 3, 4, 5};
  double tot[2] = {1, 2};
  void *stream = (void *)0x1234;
  TC_CHECK_RC(tc_nccl_sum(n, g, 5, NULL, 0, stream), 0);
  TC_CHECK(log->send == g && log->recv == g && log->count == 5, "in place, every element");
  TC_CHECK(log->datatype == 7 && log->op == 0, "ncclFloat32, ncclSum: %d %d", log->datatype, log->op);
  TC_CHECK(log->stream == stream, "the caller's stream");
  TC_CHECK(log->reduces == 1, "a count of 0 skips its buffer: %d sums", log->reduces);
  TC_CHECK_RC(tc_nccl_sum(n, g, 5, tot, 2, stream), 0);
  TC_CHECK(log->reduces == 3 && log->datatype == 8 && log->count == 2 && log->recv == tot, "ncclFloat64 last");
  TC_CHECK(log->grouped == 3 && log->ungrouped == 0 && log->group_depth == 0, "one group a call: %d %d %d",
           log->grouped, log->ungrouped, log->group_depth);

  setenv("FAKE_NCCL_FAIL", "1", 1);
  TC_CHECK_RC(tc_nccl_sum(n, g, 5, tot, 2, stream), TWINCACHE_EDEVICE);
  const char *e = twincache_last_error();
  TC_CHECK(has(e, "ncclAllReduce: fake: invalid argument (NCCL error 4"), "%s", e);
  TC_CHECK(log->group_depth == 0, "the group is closed after a failure");
  unsetenv("FAKE_NCCL_FAIL");
  tc_nccl_close(n);
  TC_CHECK(log->destroys == 1);

  setenv("FAKE_NCCL_VERSION", "2804", 1); /* the encoding up to 2.8 */
  TC_REQUIRE(tc_nccl_open(&n, d, lib) == 0, "%s", twincache_last_error());
  tc_nccl_describe(n, name, sizeof name);
  TC_CHECK(has(name, "NCCL 2.8.4 ("), "%s", name);
  tc_nccl_close(n);
  unsetenv("FAKE_NCCL_VERSION");
  dlclose(h);
}

/* W ranks: only rank 0 makes the id (the stand-in's pattern); the others
 * must receive it over MPI before their init. */
static void test_ranks(const tc_dist *d, const char *lib) {
  tc_nccl *n = NULL;
  TC_REQUIRE(tc_nccl_open(&n, d, lib) == 0, "rank %d: %s", d->rank, twincache_last_error());
  void *h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
  TC_REQUIRE(h != NULL, "%s", dlerror());
  struct fake_nccl_log *log = dlsym(h, "fake_nccl_log");
  TC_REQUIRE(log != NULL);
  TC_CHECK(log->nranks == d->world && log->rank == d->rank, "rank %d of %d: init as %d of %d", d->rank,
           d->world, log->rank, log->nranks);
  TC_CHECK(log->id_intact == 1, "rank %d: rank 0's unique id did not arrive", d->rank);
  tc_nccl_close(n);
  dlclose(h);
}

int main(int argc, char **argv) {
  tc_dist d;
  TC_REQUIRE(tc_dist_init(&d, &argc, &argv) == 0, "%s", twincache_last_error());
  TC_REQUIRE(argc == 3, "usage: [mpiexec -np W] test_nccl FAKE_LIBNCCL INCOMPLETE_FAKE_LIBNCCL");
  if (d.world > 1) {
    test_ranks(&d, argv[1]);
  } else {
    test_device_index();
    test_missing(&d);
    test_incomplete(&d, argv[2]);
    test_fake(&d, argv[1]);
  }
  int rc = tc_test_finish(d.world > 1 ? "test_nccl (ranks)" : "test_nccl");
  if (rc != 0) tc_dist_abort(&d, rc);
  tc_dist_finalize(&d);
  return rc;
}
