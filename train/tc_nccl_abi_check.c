/* tc_nccl_abi_check.c — compiled only when CMake found a real nccl.h: every
 * declaration of tc_nccl_abi.h against it, at compile time. A mismatch stops
 * the build with the name of the value that differs. Defines nothing. */
#include <nccl.h>

#include "tc_nccl_abi.h"

_Static_assert(sizeof(ncclUniqueId) == sizeof(tc_nccl_unique_id), "ncclUniqueId size");
_Static_assert(NCCL_UNIQUE_ID_BYTES == TC_NCCL_UNIQUE_ID_BYTES, "NCCL_UNIQUE_ID_BYTES");
_Static_assert(sizeof(ncclComm_t) == sizeof(tc_nccl_comm), "ncclComm_t size");
_Static_assert(sizeof(cudaStream_t) == sizeof(void *), "cudaStream_t size");
_Static_assert(sizeof(ncclResult_t) == sizeof(int), "ncclResult_t size");
_Static_assert(sizeof(ncclDataType_t) == sizeof(int), "ncclDataType_t size");
_Static_assert(sizeof(ncclRedOp_t) == sizeof(int), "ncclRedOp_t size");
_Static_assert((int)ncclSuccess == (int)TC_NCCL_SUCCESS, "ncclSuccess");
_Static_assert((int)ncclInvalidArgument == (int)TC_NCCL_INVALID_ARG, "ncclInvalidArgument");
_Static_assert((int)ncclFloat32 == (int)TC_NCCL_FLOAT32, "ncclFloat32");
_Static_assert((int)ncclFloat64 == (int)TC_NCCL_FLOAT64, "ncclFloat64");
_Static_assert((int)ncclSum == (int)TC_NCCL_SUM, "ncclSum");
/* Each real prototype forwarded through our pointer type: the argument
 * count must agree and every argument convert without a pointer or integer
 * mismatch (errors below); enum-vs-int is covered by the sizes above. The
 * unique id goes by value, so its struct is rebuilt bytewise. */
#pragma GCC diagnostic error "-Wincompatible-pointer-types"
#pragma GCC diagnostic error "-Wint-conversion"
#pragma GCC diagnostic ignored "-Wunused-function"
static ncclResult_t via_get_version(tc_nccl_get_version_fn f, int *version) {
  return (ncclResult_t)f(version);
}
static ncclResult_t via_get_unique_id(tc_nccl_get_unique_id_fn f, ncclUniqueId *id) {
  return (ncclResult_t)f((tc_nccl_unique_id *)(void *)id);
}
static ncclResult_t via_comm_init_rank(tc_nccl_comm_init_rank_fn f, ncclComm_t *comm, int nranks,
                                       ncclUniqueId id, int rank) {
  tc_nccl_unique_id ours;
  __builtin_memcpy(&ours, &id, sizeof ours);
  return (ncclResult_t)f((tc_nccl_comm *)(void *)comm, nranks, ours, rank);
}
static ncclResult_t via_all_reduce(tc_nccl_all_reduce_fn f, const void *send, void *recv,
                                   size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                                   ncclComm_t comm, cudaStream_t stream) {
  return (ncclResult_t)f(send, recv, count, datatype, op, comm, stream);
}
static ncclResult_t via_group(tc_nccl_group_fn f) { return (ncclResult_t)f(); }
static ncclResult_t via_comm_destroy(tc_nccl_comm_destroy_fn f, ncclComm_t comm) {
  return (ncclResult_t)f(comm);
}
static const char *via_get_error_string(tc_nccl_get_error_string_fn f, ncclResult_t r) {
  return f(r);
}
/* and the real prototypes are the ones these wrappers take */
#define TC_REAL_IS(fn, ...) \
  _Static_assert(__builtin_types_compatible_p(__typeof__(&fn), __VA_ARGS__), #fn " prototype")
TC_REAL_IS(ncclGetVersion, ncclResult_t (*)(int *));
TC_REAL_IS(ncclGetUniqueId, ncclResult_t (*)(ncclUniqueId *));
TC_REAL_IS(ncclCommInitRank, ncclResult_t (*)(ncclComm_t *, int, ncclUniqueId, int));
TC_REAL_IS(ncclAllReduce, ncclResult_t (*)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t,
                                           ncclComm_t, cudaStream_t));
TC_REAL_IS(ncclGroupStart, ncclResult_t (*)(void));
TC_REAL_IS(ncclGroupEnd, ncclResult_t (*)(void));
TC_REAL_IS(ncclCommDestroy, ncclResult_t (*)(ncclComm_t));
TC_REAL_IS(ncclGetErrorString, const char *(*)(ncclResult_t));
