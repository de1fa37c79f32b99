/* fake_mpich.c — a stand-in MPI of MPICH's ABI (int handles, tc_mpi_abi.h)
 * for test_dist_dlopen, which no machine of CI has: the twelve entry points
 * tc_dist_dlopen.c loads. Every call checks that the handles it is given
 * are MPICH's values (a wrong one returns error 7 and counts in
 * fake_mpi_log.bad); the world's size is $FAKE_MPI_WORLD (default 1) and
 * this process its rank $FAKE_MPI_RANK, and a sum multiplies by the world
 * size (every rank holding the same values). $FAKE_MPI_VERSION replaces the
 * library's version text. */
#include <stdlib.h>
#include <string.h>

#include "tc_mpi_abi.h"

struct fake_mpi_log {
  int inits, finalizes, aborts, abort_status, errhandler, splits, frees, reduces, bcasts, bad;
} fake_mpi_log;

static int env_int(const char *name, int dflt) {
  const char *v = getenv(name);
  return v ? atoi(v) : dflt;
}
static int check(int ok) {
  if (!ok) fake_mpi_log.bad++;
  return ok ? TC_MPI_SUCCESS : 7;
}

int MPI_Init(int *argc, char ***argv) {
  (void)argc, (void)argv;
  fake_mpi_log.inits++;
  return TC_MPI_SUCCESS;
}
int MPI_Finalize(void) {
  fake_mpi_log.finalizes++;
  return TC_MPI_SUCCESS;
}
int MPI_Abort(int comm, int status) {
  fake_mpi_log.aborts++, fake_mpi_log.abort_status = status;
  return check(comm == TC_MPICH_COMM_WORLD);
}
int MPI_Comm_set_errhandler(int comm, int eh) {
  fake_mpi_log.errhandler++;
  return check(comm == TC_MPICH_COMM_WORLD && eh == TC_MPICH_ERRORS_RETURN);
}
#define NODE_COMM 0x44000007 /* what the split returns */
int MPI_Comm_rank(int comm, int *rank) {
  *rank = comm == NODE_COMM ? env_int("FAKE_MPI_RANK", 0) % 2 : env_int("FAKE_MPI_RANK", 0);
  return check(comm == TC_MPICH_COMM_WORLD || comm == NODE_COMM);
}
int MPI_Comm_size(int comm, int *size) {
  *size = env_int("FAKE_MPI_WORLD", 1);
  return check(comm == TC_MPICH_COMM_WORLD);
}
int MPI_Comm_split_type(int comm, int type, int key, int info, int *out) {
  fake_mpi_log.splits++;
  *out = NODE_COMM;
  return check(comm == TC_MPICH_COMM_WORLD && type == TC_MPICH_COMM_TYPE_SHARED &&
               key == env_int("FAKE_MPI_RANK", 0) && info == TC_MPICH_INFO_NULL);
}
int MPI_Comm_free(int *comm) {
  fake_mpi_log.frees++;
  int ok = *comm == NODE_COMM;
  *comm = 0x04000000; /* MPI_COMM_NULL */
  return check(ok);
}
int MPI_Allreduce(const void *send, void *recv, int count, int type, int op, int comm) {
  fake_mpi_log.reduces++;
  if (check(send == TC_MPICH_IN_PLACE && op == TC_MPICH_OP_SUM && comm == TC_MPICH_COMM_WORLD &&
            (type == TC_MPICH_FLOAT || type == TC_MPICH_DOUBLE)) != TC_MPI_SUCCESS)
    return 7;
  int w = env_int("FAKE_MPI_WORLD", 1);
  for (int i = 0; i < count; i++)
    if (type == TC_MPICH_FLOAT) ((float *)recv)[i] *= (float)w;
    else ((double *)recv)[i] *= (double)w;
  return TC_MPI_SUCCESS;
}
int MPI_Bcast(void *buf, int count, int type, int root, int comm) {
  fake_mpi_log.bcasts++;
  if (env_int("FAKE_MPI_RANK", 0) != root) memset(buf, 0xab, (size_t)count); /* "root's bytes" */
  return check(type == TC_MPICH_BYTE && comm == TC_MPICH_COMM_WORLD);
}
int MPI_Error_string(int err, char *text, int *len) {
  strcpy(text, err == 7 ? "fake: a handle of another ABI" : "fake: other error");
  *len = (int)strlen(text);
  return TC_MPI_SUCCESS;
}
int MPI_Get_library_version(char *text, int *len) {
  const char *v = getenv("FAKE_MPI_VERSION");
  strcpy(text, v ? v : "MPICH Version:\t  4.0.2 (fake)\nMPICH Release date: never");
  *len = (int)strlen(text);
  return TC_MPI_SUCCESS;
}
