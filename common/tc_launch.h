/* tc_launch.h — this process's rank and world size as its launcher set them
 * in the environment, with no MPI library: Slurm (srun), Open MPI (mpirun),
 * MPICH/Intel MPI and srun --mpi=pmi2 (PMI), torchrun. libc only.
 *
 * Order (the innermost launcher first: an mpirun inside a Slurm allocation
 * leaves the allocation's SLURM_PROCID in the ranks' environment, while the
 * MPI launcher's own variables name the rank):
 *   1. OMPI_COMM_WORLD_RANK / OMPI_COMM_WORLD_SIZE   (Open MPI)
 *   2. PMI_RANK / PMI_SIZE                           (MPICH, Intel MPI, PMI)
 *   3. SLURM_PROCID / SLURM_NTASKS                   (srun, sbatch arrays)
 *   4. RANK / WORLD_SIZE                             (torchrun)
 * The first pair of which either variable is set decides; both of the pair
 * must then be set, decimal, size >= 1 and rank < size.
 * Reentrant; reads the environment with getenv. */
#ifndef TC_LAUNCH_H
#define TC_LAUNCH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Return values of tc_launch_rank. */
enum { TC_LAUNCH_OK = 0, TC_LAUNCH_NONE = 1, TC_LAUNCH_BAD = 2 };

/* Reads rank and size. Returns TC_LAUNCH_OK with *rank, *size and *source
 * (the pair's names, e.g. "SLURM_PROCID/SLURM_NTASKS") set;
 * TC_LAUNCH_NONE when no pair is set; TC_LAUNCH_BAD when the first pair set
 * is incomplete or invalid. On any failure msg[0..cap) holds one line
 * saying what is wrong (not ending in a newline) and the outputs are
 * unchanged. msg may be NULL when cap is 0. */
int tc_launch_rank(uint32_t *rank, uint32_t *size, const char **source, char *msg, size_t cap);

/* 1 when an MPI launcher started this process (Open MPI's mpirun, PMIx:
 * Open MPI 5 and srun --mpi=pmix, PMI-1/2: MPICH's hydra and srun
 * --mpi=pmi2), whatever the values; else 0. Where the trainer decides
 * whether to join MPI at all. */
int tc_launch_by_mpi(void);

#ifdef __cplusplus
}
#endif
#endif /* TC_LAUNCH_H */
