/* tc_mpi_abi_check.c — tc_mpi_abi.h's constants against the mpi.h found at
 * configure time (Open MPI's or MPICH's): a mismatch fails the build. The
 * handles that are addresses (Open MPI) are compared at run time by
 * test_train_dist_dlopen under mpirun; nothing here is linked. */
#include <mpi.h>

#include "tc_mpi_abi.h"

_Static_assert(MPI_SUCCESS == TC_MPI_SUCCESS, "MPI_SUCCESS");
#if defined(OPEN_MPI)
_Static_assert(MPI_COMM_TYPE_SHARED == TC_OMPI_COMM_TYPE_SHARED, "MPI_COMM_TYPE_SHARED");
_Static_assert(MPI_MAX_ERROR_STRING == TC_OMPI_MAX_ERROR_STRING, "MPI_MAX_ERROR_STRING");
_Static_assert(MPI_MAX_LIBRARY_VERSION_STRING == TC_OMPI_MAX_LIBRARY_VERSION_STRING,
               "MPI_MAX_LIBRARY_VERSION_STRING");
_Static_assert(sizeof(MPI_Comm) == sizeof(void *) && sizeof(MPI_Datatype) == sizeof(void *) &&
               sizeof(MPI_Op) == sizeof(void *) && sizeof(MPI_Info) == sizeof(void *) &&
               sizeof(MPI_Errhandler) == sizeof(void *), "Open MPI handles are pointers");
#elif defined(MPICH_VERSION)
_Static_assert(MPI_COMM_WORLD == TC_MPICH_COMM_WORLD, "MPI_COMM_WORLD");
_Static_assert(MPI_FLOAT == TC_MPICH_FLOAT, "MPI_FLOAT");
_Static_assert(MPI_DOUBLE == TC_MPICH_DOUBLE, "MPI_DOUBLE");
_Static_assert(MPI_BYTE == TC_MPICH_BYTE, "MPI_BYTE");
_Static_assert(MPI_SUM == TC_MPICH_OP_SUM, "MPI_SUM");
_Static_assert(MPI_INFO_NULL == TC_MPICH_INFO_NULL, "MPI_INFO_NULL");
_Static_assert(MPI_ERRORS_RETURN == TC_MPICH_ERRORS_RETURN, "MPI_ERRORS_RETURN");
_Static_assert(MPI_COMM_TYPE_SHARED == TC_MPICH_COMM_TYPE_SHARED, "MPI_COMM_TYPE_SHARED");
_Static_assert(MPI_MAX_ERROR_STRING == TC_MPICH_MAX_ERROR_STRING, "MPI_MAX_ERROR_STRING");
_Static_assert(MPI_MAX_LIBRARY_VERSION_STRING == TC_MPICH_MAX_LIBRARY_VERSION_STRING,
               "MPI_MAX_LIBRARY_VERSION_STRING");
_Static_assert(sizeof(MPI_Comm) == sizeof(int), "MPICH handles are ints");
#endif
