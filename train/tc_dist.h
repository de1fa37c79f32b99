/* tc_dist.h — data parallelism of twincache-train behind one plain-C header:
 * which rank of how many this process is, the gradient all-reduce, and
 * ending the whole job. Built from tc_dist_mpi.c when an MPI was found at
 * configure time, else from tc_dist_dlopen.c (the MPI loaded at run time
 * under a launcher), so call sites carry no #ifdef (llm.c's pattern).
 * MPI stays in train/: the loader only ever sees rank and world size.
 *
 * A process joins MPI only when an MPI launcher started it (mpirun, srun
 * with PMI/PMIx: its environment says so); run directly it is rank 0 of 1
 * without touching MPI (or loading it).
 *
 * Every int function returns 0 or TWINCACHE_EIO with one message for
 * twincache_last_error() naming the MPI call and its error string.
 * Not thread-safe: the training thread alone calls these. */
#ifndef TC_DIST_H
#define TC_DIST_H

#include <stddef.h>

typedef struct tc_dist {
  int rank, world; /* this process is rank `rank` of `world` (>= 1) */
  int local_rank;  /* its rank among the processes of its node (a GPU's index) */
  int joined;      /* 1 when MPI was initialised (finalize must run) */
} tc_dist;

/* Rank 0 of 1 unless an MPI launcher started this process; then MPI_Init and
 * the ranks of MPI_COMM_WORLD (errors returned, not fatal). */
int tc_dist_init(tc_dist *d, int *argc, char ***argv);
/* Leaves MPI after a run that every rank finished (MPI_Finalize). */
void tc_dist_finalize(tc_dist *d);
/* Ends every rank of the job with exit status `status` (MPI_Abort): what a
 * rank that failed calls, so no other rank waits for it forever. Returns
 * only when the job is one process (world 1). */
void tc_dist_abort(const tc_dist *d, int status);
/* In-place sums over the ranks: buf[i] = sum over ranks of buf[i], the same
 * bits on every rank. n counts elements. */
int tc_dist_sum_f32(const tc_dist *d, float *buf, size_t n);
int tc_dist_sum_f64(const tc_dist *d, double *buf, size_t n);
/* buf[bytes] of rank `root` into buf on every rank (MPI_Bcast): how rank 0
 * hands NCCL's unique id to the others. Does nothing on one process. */
int tc_dist_bcast(const tc_dist *d, void *buf, size_t bytes, int root);
/* "MPI (Open MPI v4.1.4, ...)", with the library when loaded at run time,
 * into name[cap]. */
void tc_dist_describe(char *name, size_t cap);

#endif /* TC_DIST_H */
