/* tc_mpi_abi.h — the parts of the two C ABIs that MPI libraries ship which
 * tc_dist_dlopen.c uses, declared here so the trainer can load an MPI at
 * run time without its mpi.h (the portable wheel is built without one).
 *
 * Open MPI (libmpi.so.40: Open MPI 3, 4 and 5): a handle is a pointer, the
 * address of a predefined object the library exports (MPI_COMM_WORLD is
 * &ompi_mpi_comm_world), so the handles are found with dlsym.
 * MPICH (libmpich.so.12, libmpi.so.12: MPICH 3.1 on, Intel MPI, Cray MPICH,
 * MVAPICH — the "MPICH ABI compatibility initiative"): a handle is an int of
 * a fixed value, taken from MPICH 4.0.2's mpi.h.
 *
 * The integer constants are checked against the real mpi.h at compile time
 * wherever one is found (tc_mpi_abi_check.c). */
#ifndef TC_MPI_ABI_H
#define TC_MPI_ABI_H

#define TC_MPI_SUCCESS 0

/* Open MPI: the exported objects whose addresses are the handles */
#define TC_OMPI_COMM_WORLD "ompi_mpi_comm_world"
#define TC_OMPI_FLOAT "ompi_mpi_float"
#define TC_OMPI_DOUBLE "ompi_mpi_double"
#define TC_OMPI_BYTE "ompi_mpi_byte"
#define TC_OMPI_OP_SUM "ompi_mpi_op_sum"
#define TC_OMPI_INFO_NULL "ompi_mpi_info_null"
#define TC_OMPI_ERRORS_RETURN "ompi_mpi_errors_return"
#define TC_OMPI_IN_PLACE ((void *)1)
#define TC_OMPI_COMM_TYPE_SHARED 0
#define TC_OMPI_MAX_ERROR_STRING 256
#define TC_OMPI_MAX_LIBRARY_VERSION_STRING 256

/* MPICH: the handles' values */
#define TC_MPICH_COMM_WORLD 0x44000000
#define TC_MPICH_FLOAT 0x4c00040a
#define TC_MPICH_DOUBLE 0x4c00080b
#define TC_MPICH_BYTE 0x4c00010d
#define TC_MPICH_OP_SUM 0x58000003
#define TC_MPICH_INFO_NULL 0x1c000000
#define TC_MPICH_ERRORS_RETURN 0x54000001
#define TC_MPICH_IN_PLACE ((void *)-1)
#define TC_MPICH_COMM_TYPE_SHARED 1
#define TC_MPICH_MAX_ERROR_STRING 512
#define TC_MPICH_MAX_LIBRARY_VERSION_STRING 8192

/* the larger of the two, for buffers that serve both */
#define TC_MPI_MAX_ERROR_STRING 512
#define TC_MPI_MAX_LIBRARY_VERSION_STRING 8192

#endif /* TC_MPI_ABI_H */
