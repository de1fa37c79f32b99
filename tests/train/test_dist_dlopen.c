/* test_dist_dlopen: tc_dist_dlopen.c, the trainer's data parallelism when
 * twincache was built without MPI (the portable wheel's). Run directly it
 * is rank 0 of 1 and loads nothing; started by an MPI launcher as one of
 * several ranks without a loadable MPI it refuses (each rank would train
 * alone); with a library of MPICH's ABI (fake_mpich.c) every call carries
 * MPICH's handles, the sums and the broadcast arrive, and the describe line
 * names the library. Open MPI's ABI runs under mpirun (test_dist_ranks.c).
 * Usage: test_train_dist_dlopen FAKE_MPICH.so NOT_AN_MPI.so */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "tc_dist.h"
#include "tc_test.h"
#include "twincache_format.h"

struct fake_mpi_log {
  int inits, finalizes, aborts, abort_status, errhandler, splits, frees, reduces, bcasts, bad;
};

static void launcher(const char *var, const char *val) {
  static const char *const all[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK",
                                    "SLURM_STEP_NUM_TASKS", NULL};
  for (int i = 0; all[i]; i++) unsetenv(all[i]);
  if (var) setenv(var, val, 1);
}

static int init(tc_dist *d) {
  int argc = 1;
  char *args[] = {"twincache-train", NULL}, **argv = args;
  return tc_dist_init(d, &argc, &argv);
}

int main(int argc, char **argv) {
  TC_CHECK(argc == 3, "usage: test_train_dist_dlopen FAKE_MPICH.so NOT_AN_MPI.so");
  if (argc != 3) return tc_test_result();
  tc_dist d;
  char name[256];

  /* no launcher: alone, nothing loaded (even with a library named) */
  setenv("TWINCACHE_MPI_LIBRARY", "/nonexistent/libmpi.so", 1);
  launcher(NULL, NULL);
  TC_CHECK(init(&d) == 0 && d.rank == 0 && d.world == 1 && !d.joined);
  tc_dist_describe(name, sizeof name);
  TC_CHECK(strstr(name, "no MPI launcher") != NULL, "%s", name);

  /* a launcher's world of one, or of no size it says: alone when no MPI loads */
  launcher("OMPI_COMM_WORLD_SIZE", "1");
  TC_CHECK(init(&d) == 0 && d.world == 1 && !d.joined);
  launcher("PMI_SIZE", "x");
  TC_CHECK(init(&d) == 0 && d.world == 1 && !d.joined);

  /* several ranks, no MPI: refused, naming the size, the variable and the loader's reason */
  launcher("OMPI_COMM_WORLD_SIZE", "2");
  TC_CHECK(init(&d) != 0);
  const char *e = twincache_last_error();
  TC_CHECK(strstr(e, "one of 2 (OMPI_COMM_WORLD_SIZE=2)") && strstr(e, "TWINCACHE_MPI_LIBRARY") &&
           strstr(e, "/nonexistent/libmpi.so"), "%s", e);
  launcher("PMI_SIZE", "8");
  TC_CHECK(init(&d) != 0 && strstr(twincache_last_error(), "one of 8 (PMI_SIZE=8)"), "%s",
           twincache_last_error());
  /* srun --mpi=pmix names no size but its task count */
  launcher("PMIX_RANK", "0");
  setenv("SLURM_STEP_NUM_TASKS", "4", 1);
  TC_CHECK(init(&d) != 0 && strstr(twincache_last_error(), "SLURM_STEP_NUM_TASKS=4"), "%s",
           twincache_last_error());

  /* a library that is no MPI: named with the first symbol it lacks */
  setenv("TWINCACHE_MPI_LIBRARY", argv[2], 1);
  launcher("PMI_SIZE", "2");
  TC_CHECK(init(&d) != 0 && strstr(twincache_last_error(), "no symbol MPI_Init"), "%s", twincache_last_error());

  /* an MPI of no ABI we know (its version text names neither) */
  setenv("TWINCACHE_MPI_LIBRARY", argv[1], 1);
  setenv("FAKE_MPI_VERSION", "Some MPI 1.0", 1);
  TC_CHECK(init(&d) != 0 && strstr(twincache_last_error(), "neither Open MPI's ABI") &&
           strstr(twincache_last_error(), "Some MPI 1.0"), "%s", twincache_last_error());
  unsetenv("FAKE_MPI_VERSION");

  /* the launcher said 4 ranks, the MPI sees 2: not the launcher's MPI */
  launcher("PMI_SIZE", "4");
  setenv("FAKE_MPI_WORLD", "2", 1), setenv("FAKE_MPI_RANK", "1", 1);
  TC_CHECK(init(&d) != 0 && strstr(twincache_last_error(), "sees a world of 2"), "%s", twincache_last_error());
  tc_dist_finalize(&d);

  /* MPICH's ABI: rank 1 of 2 */
  launcher("PMI_SIZE", "2");
  TC_CHECK(init(&d) == 0 && d.joined && d.rank == 1 && d.world == 2 && d.local_rank == 1, "%d %d %d %d",
           d.joined, d.rank, d.world, d.local_rank);
  float f[3] = {1.5f, -2.0f, 0.25f};
  double g[2] = {3.0, -0.5};
  TC_CHECK(tc_dist_sum_f32(&d, f, 3) == 0 && f[0] == 3.0f && f[1] == -4.0f && f[2] == 0.5f);
  TC_CHECK(tc_dist_sum_f64(&d, g, 2) == 0 && g[0] == 6.0 && g[1] == -1.0);
  unsigned char id[16] = {0};
  TC_CHECK(tc_dist_bcast(&d, id, sizeof id, 0) == 0 && id[0] == 0xab && id[15] == 0xab);
  tc_dist_describe(name, sizeof name);
  TC_CHECK(strstr(name, "MPICH Version: 4.0.2 (fake)") && strstr(name, argv[1]) &&
           !strstr(name, "Release"), "%s", name);
  tc_dist_finalize(&d);
  TC_CHECK(!d.joined);

  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD);
  struct fake_mpi_log *log = lib ? dlsym(lib, "fake_mpi_log") : NULL;
  TC_CHECK(log != NULL, "the fake MPI is loaded");
  if (log) {
    TC_CHECK(log->bad == 0, "%d calls carried a handle of another ABI", log->bad);
    TC_CHECK(log->inits == 2 && log->finalizes == 2 && log->errhandler == 2, "%d %d %d", log->inits,
             log->finalizes, log->errhandler);
    TC_CHECK(log->splits == 1 && log->frees == 1 && log->reduces == 2 && log->bcasts == 1);
    /* abort of a world of 2 goes to MPI_Abort with the status */
    tc_dist_abort(&(tc_dist){.rank = 1, .world = 2, .joined = 1}, 3);
    TC_CHECK(log->aborts == 1 && log->abort_status == 3 && log->bad == 0);
  }
  return tc_test_result();
}
