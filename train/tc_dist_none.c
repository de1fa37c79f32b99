/* tc_dist_none.c — tc_dist.h when twincache was built without MPI (the
 * portable wheel, a machine without an MPI): every process is rank 0 of 1,
 * the sums leave their buffers as they are. */
#include <stdio.h>
#include <stdlib.h>

#include "tc_dist.h"
#include "tc_error.h"
#include "twincache_format.h"

/* Started by mpirun/mpiexec/srun --mpi as one of several ranks, a build
 * without MPI would train W independent copies on the whole cache, each
 * believing it is alone: refused (the world size every MPI launcher sets,
 * Open MPI's and PMI's). */
int tc_dist_init(tc_dist *d, int *argc, char ***argv) {
  static const char *const sizes[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", NULL};
  (void)argc, (void)argv;
  *d = (tc_dist){.rank = 0, .world = 1, .local_rank = 0, .joined = 0};
  for (int i = 0; sizes[i]; i++) {
    const char *v = getenv(sizes[i]);
    char *end = NULL;
    long n = v ? strtol(v, &end, 10) : 0;
    if (v && end != v && n > 1)
      return tc_error_set(TWINCACHE_EINVAL, "an MPI launcher started this process as one of %ld (%s=%s), but "
                          "this twincache-train was built without MPI, so each would train alone on the whole "
                          "cache: build twincache with an MPI (README \"Data-parallel training\") or start one "
                          "process", n, sizes[i], v);
  }
  return 0;
}
void tc_dist_finalize(tc_dist *d) { (void)d; }
void tc_dist_abort(const tc_dist *d, int status) { (void)d, (void)status; }
int tc_dist_sum_f32(const tc_dist *d, float *buf, size_t n) {
  (void)d, (void)buf, (void)n;
  return 0;
}
int tc_dist_sum_f64(const tc_dist *d, double *buf, size_t n) {
  (void)d, (void)buf, (void)n;
  return 0;
}
int tc_dist_bcast(const tc_dist *d, void *buf, size_t bytes, int root) {
  (void)d, (void)buf, (void)bytes, (void)root;
  return 0;
}
void tc_dist_describe(char *name, size_t cap) {
  snprintf(name, cap, "none (built without MPI)");
}
