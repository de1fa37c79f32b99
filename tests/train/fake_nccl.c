/* fake_nccl.c — a stand-in libnccl for test_nccl on machines without NCCL
 * or a GPU: the eight entry points of train/tc_nccl_abi.h, no device work and
 * no communication (its sums leave the buffers as they are). It logs the
 * arguments of every call in fake_nccl_log for the test to read, and fails
 * on request: FAKE_NCCL_FAIL=1 makes ncclAllReduce return
 * ncclInvalidArgument; FAKE_NCCL_VERSION sets the version code. Built with
 * -DFAKE_NCCL_NO_ALLREDUCE it lacks ncclAllReduce (an incomplete library). */
#include <stdlib.h>
#include <string.h>

#include "tc_nccl_abi.h"

struct fake_nccl_log {
  int inits, nranks, rank, id_intact, reduces, datatype, op, destroys;
  int group_depth, grouped, ungrouped; /* reduces inside / outside a group */
  size_t count;
  const void *send;
  void *recv, *stream;
  tc_nccl_comm comm;
} fake_nccl_log;

static int comm_object; /* what the communicator handle points at */

int ncclGetVersion(int *version) {
  const char *v = getenv("FAKE_NCCL_VERSION");
  *version = v ? atoi(v) : 29903; /* 2.99.3, NCCL_VERSION's encoding after 2.8 */
  return TC_NCCL_SUCCESS;
}

/* a recognisable id: the init checks it arrived whole, by value */
int ncclGetUniqueId(tc_nccl_unique_id *id) {
  for (int i = 0; i < TC_NCCL_UNIQUE_ID_BYTES; i++) id->internal[i] = (char)(i * 7 + 3);
  return TC_NCCL_SUCCESS;
}

int ncclCommInitRank(tc_nccl_comm *comm, int nranks, tc_nccl_unique_id id, int rank) {
  fake_nccl_log.inits++, fake_nccl_log.nranks = nranks, fake_nccl_log.rank = rank;
  fake_nccl_log.id_intact = 1;
  for (int i = 0; i < TC_NCCL_UNIQUE_ID_BYTES; i++)
    if (id.internal[i] != (char)(i * 7 + 3)) fake_nccl_log.id_intact = 0;
  if (nranks < 1 || rank < 0 || rank >= nranks) return TC_NCCL_INVALID_ARG;
  *comm = &comm_object;
  fake_nccl_log.comm = *comm;
  return TC_NCCL_SUCCESS;
}

#ifndef FAKE_NCCL_NO_ALLREDUCE
int ncclAllReduce(const void *send, void *recv, size_t count, int datatype, int op, tc_nccl_comm comm,
                  void *stream) {
  fake_nccl_log.reduces++, fake_nccl_log.send = send, fake_nccl_log.recv = recv;
  fake_nccl_log.count = count, fake_nccl_log.datatype = datatype, fake_nccl_log.op = op;
  fake_nccl_log.stream = stream;
  if (fake_nccl_log.group_depth > 0) fake_nccl_log.grouped++;
  else fake_nccl_log.ungrouped++;
  const char *f = getenv("FAKE_NCCL_FAIL");
  if ((f && strcmp(f, "1") == 0) || comm != &comm_object) return TC_NCCL_INVALID_ARG;
  return TC_NCCL_SUCCESS;
}
#endif

int ncclGroupStart(void) {
  fake_nccl_log.group_depth++;
  return TC_NCCL_SUCCESS;
}
int ncclGroupEnd(void) {
  return fake_nccl_log.group_depth-- > 0 ? TC_NCCL_SUCCESS : TC_NCCL_INVALID_ARG;
}

int ncclCommDestroy(tc_nccl_comm comm) {
  fake_nccl_log.destroys++;
  return comm == &comm_object ? TC_NCCL_SUCCESS : TC_NCCL_INVALID_ARG;
}

const char *ncclGetErrorString(int result) {
  return result == TC_NCCL_INVALID_ARG ? "fake: invalid argument" : "fake: other error";
}
