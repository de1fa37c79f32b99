/* tc_nccl_abi.h — the eight NCCL entry points twincache-train calls, declared
 * here from NCCL's documented C ABI (nccl.h, NCCL 2.x) so the trainer builds
 * without NCCL's headers and loads libnccl.so.2 at run time (tc_nccl.c).
 * Only types and pointer-to-function types: nothing here links to NCCL.
 *
 * Kept honest by tc_nccl_abi_check.c, compiled whenever CMake finds a real
 * nccl.h: it static-asserts every size and enum value below against it.
 * NCCL's enums are passed as int (4 bytes on every ABI NCCL ships for);
 * ncclComm_t is an opaque pointer, cudaStream_t a pointer (void * here). */
#ifndef TC_NCCL_ABI_H
#define TC_NCCL_ABI_H

#include <stddef.h>

#define TC_NCCL_UNIQUE_ID_BYTES 128 /* NCCL_UNIQUE_ID_BYTES */
typedef struct tc_nccl_unique_id {
  char internal[TC_NCCL_UNIQUE_ID_BYTES];
} tc_nccl_unique_id;        /* ncclUniqueId: passed by value to ncclCommInitRank */
typedef void *tc_nccl_comm; /* ncclComm_t */

enum {
  TC_NCCL_SUCCESS = 0,     /* ncclSuccess (ncclResult_t) */
  TC_NCCL_FLOAT32 = 7,     /* ncclFloat32 (ncclDataType_t) */
  TC_NCCL_FLOAT64 = 8,     /* ncclFloat64 */
  TC_NCCL_SUM = 0,         /* ncclSum (ncclRedOp_t) */
  TC_NCCL_INVALID_ARG = 4, /* ncclInvalidArgument: what a test's stand-in library returns */
};

/* ncclGetVersion(int *version) */
typedef int (*tc_nccl_get_version_fn)(int *version);
/* ncclGetUniqueId(ncclUniqueId *id) */
typedef int (*tc_nccl_get_unique_id_fn)(tc_nccl_unique_id *id);
/* ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank) */
typedef int (*tc_nccl_comm_init_rank_fn)(tc_nccl_comm *comm, int nranks, tc_nccl_unique_id id,
                                         int rank);
/* ncclAllReduce(sendbuff, recvbuff, count, datatype, op, comm, stream) */
typedef int (*tc_nccl_all_reduce_fn)(const void *send, void *recv, size_t count, int datatype,
                                     int op, tc_nccl_comm comm, void *stream);
/* ncclGroupStart(void), ncclGroupEnd(void): the calls between them are
 * fused into one launch */
typedef int (*tc_nccl_group_fn)(void);
/* ncclCommDestroy(ncclComm_t comm) */
typedef int (*tc_nccl_comm_destroy_fn)(tc_nccl_comm comm);
/* const char *ncclGetErrorString(ncclResult_t result) */
typedef const char *(*tc_nccl_get_error_string_fn)(int result);

#endif /* TC_NCCL_ABI_H */
