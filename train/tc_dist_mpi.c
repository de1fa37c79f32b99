/* tc_dist_mpi.c — tc_dist.h over MPI: MPI_COMM_WORLD's ranks, MPI_Allreduce
 * for the sums, MPI_Abort to end the job. Errors are returned
 * (MPI_ERRORS_RETURN), each with the MPI error string. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "tc_dist.h"
#include "tc_error.h"
#include "tc_launch.h"
#include "twincache_format.h"

static int mpi_failed(const char *call, int err) {
  char msg[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  if (MPI_Error_string(err, msg, &len) != MPI_SUCCESS) snprintf(msg, sizeof msg, "error %d", err);
  return tc_error_set(TWINCACHE_EIO, "%s: %s", call, msg);
}

int tc_dist_init(tc_dist *d, int *argc, char ***argv) {
  *d = (tc_dist){.rank = 0, .world = 1, .local_rank = 0, .joined = 0};
  if (!tc_launch_by_mpi()) return 0;
  int err = MPI_Init(argc, argv);
  if (err != MPI_SUCCESS) return mpi_failed("MPI_Init", err);
  d->joined = 1;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if ((err = MPI_Comm_rank(MPI_COMM_WORLD, &d->rank)) != MPI_SUCCESS ||
      (err = MPI_Comm_size(MPI_COMM_WORLD, &d->world)) != MPI_SUCCESS)
    return mpi_failed("MPI_Comm_rank/size", err);
  /* the node's ranks: those that can share memory with this one */
  MPI_Comm node;
  if ((err = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, d->rank, MPI_INFO_NULL,
                                 &node)) != MPI_SUCCESS)
    return mpi_failed("MPI_Comm_split_type", err);
  err = MPI_Comm_rank(node, &d->local_rank);
  MPI_Comm_free(&node);
  return err != MPI_SUCCESS ? mpi_failed("MPI_Comm_rank (node)", err) : 0;
}

void tc_dist_finalize(tc_dist *d) {
  if (d->joined) MPI_Finalize();
  d->joined = 0;
}

void tc_dist_abort(const tc_dist *d, int status) {
  if (d->joined && d->world > 1) {
    fflush(stdout), fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, status);
  }
}

/* MPI counts are int: sums of more elements go in pieces. */
static int sum(const tc_dist *d, void *buf, size_t n, size_t size, MPI_Datatype type) {
  if (d->world == 1) return 0;
  char *p = buf;
  while (n > 0) {
    int count = n > INT_MAX ? INT_MAX : (int)n;
    int err = MPI_Allreduce(MPI_IN_PLACE, p, count, type, MPI_SUM, MPI_COMM_WORLD);
    if (err != MPI_SUCCESS) return mpi_failed("MPI_Allreduce", err);
    p += (size_t)count * size, n -= (size_t)count;
  }
  return 0;
}

int tc_dist_sum_f32(const tc_dist *d, float *buf, size_t n) {
  return sum(d, buf, n, sizeof(float), MPI_FLOAT);
}
int tc_dist_sum_f64(const tc_dist *d, double *buf, size_t n) {
  return sum(d, buf, n, sizeof(double), MPI_DOUBLE);
}

int tc_dist_bcast(const tc_dist *d, void *buf, size_t bytes, int root) {
  if (d->world == 1) return 0;
  if (bytes > INT_MAX) return tc_error_set(TWINCACHE_EINVAL, "MPI_Bcast of %zu bytes: too large", bytes);
  int err = MPI_Bcast(buf, (int)bytes, MPI_BYTE, root, MPI_COMM_WORLD);
  return err != MPI_SUCCESS ? mpi_failed("MPI_Bcast", err) : 0;
}

void tc_dist_describe(char *name, size_t cap) {
  char lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
  int len = 0;
  MPI_Get_library_version(lib, &len);
  for (int i = 0; lib[i]; i++) /* its first line */
    if (lib[i] == '\n' || lib[i] == ',') {
      lib[i] = '\0';
      break;
    }
  snprintf(name, cap, "MPI (%s)", lib);
}
