/* tc_nccl.h — the CUDA backend's gradient all-reduce over NCCL, loaded at
 * run time: libnccl.so.2 is opened with dlopen (tc_nccl_abi.h declares the
 * eight entry points used), so twincache-train builds and runs without NCCL
 * and needs it only when the CUDA backend runs several ranks (or --nccl).
 *
 * Which library: $TWINCACHE_NCCL_LIBRARY when set (a path, e.g. the pip
 * wheel's site-packages/nvidia/nccl/lib/libnccl.so.2), else libnccl.so.2 by
 * the dynamic loader's search (LD_LIBRARY_PATH, ld.so.cache), else the one
 * under the TWINCACHE_NCCL_ROOT given at configure time (if any).
 *
 * The communicator spans the job's ranks (tc_dist.h): rank 0 makes the
 * ncclUniqueId, tc_dist_bcast hands it to the others, every rank calls
 * ncclCommInitRank on the CUDA device it selected before. Every int function
 * returns 0 or TWINCACHE_EDEVICE with one message for twincache_last_error()
 * naming the NCCL call (or the library) and ncclGetErrorString's text.
 * Not thread-safe: the training thread alone calls these. */
#ifndef TC_NCCL_H
#define TC_NCCL_H

#include <stddef.h>

#include "tc_dist.h"

typedef struct tc_nccl tc_nccl;

/* Loads NCCL (library: NULL for the search above, else that path) and
 * joins the communicator of d's ranks; collective over them (each calls it
 * once, in the same order as their other collectives). On failure *out is
 * NULL and nothing stays loaded. */
int tc_nccl_open(tc_nccl **out, const tc_dist *d, const char *library);
/* Accepts NULL. Destroys the communicator (after the caller synchronised
 * the streams it used); the library stays loaded (NCCL keeps process-wide
 * state), once per process. */
void tc_nccl_close(tc_nccl *n);
/* Enqueues the in-place sums over the ranks of n32 floats at f32 and n64
 * doubles at f64 (device addresses; a count of 0 skips its buffer) on CUDA
 * stream `stream`: two ncclAllReduce (ncclSum) in one group, one launch.
 * The stream's later work sees the sums. */
int tc_nccl_sum(tc_nccl *n, float *f32, size_t n32, double *f64, size_t n64, void *stream);
/* "NCCL 2.21.5 (libnccl.so.2)" into name[cap]. */
void tc_nccl_describe(const tc_nccl *n, char *name, size_t cap);

#endif /* TC_NCCL_H */
