/* cg_mpi_abi.h: what the thread fix (cg_mpi_hand.c) must know of MPICH's ABI and of MPI 5.0's standard
 * ABI, which the Open MPI mpi.h the layer is built with cannot tell it: the sizes of the requests and
 * statuses it makes itself, where a status keeps MPI_ERROR, and the constants it passes. MPICH's read from
 * MPICH 4.0.2's mpi.h (Debian's libmpich-dev); MPICH keeps them across versions (its ABI compatibility
 * initiative, libmpi.so.12). cg_mpi_mpich_abi.c checks every value against MPICH's mpi.h where the build
 * finds one, cg_mpi_std_abi.c the standard ABI's against mpi_abi.h, and cg_mpi_hand.c the shared ones
 * against Open MPI's. */
#ifndef CG_MPI_ABI_H
#define CG_MPI_ABI_H

#define CGM_MPICH_REQUEST_SIZE 4   /* sizeof(MPI_Request): an int */
#define CGM_MPICH_STATUS_SIZE 20   /* count_lo, count_hi_and_cancelled, MPI_SOURCE, MPI_TAG, MPI_ERROR */
#define CGM_MPICH_ERROR_OFFSET 16  /* offsetof(MPI_Status, MPI_ERROR) */
#define CGM_MPICH_STATUS_IGNORE 1  /* MPI_STATUS_IGNORE is (MPI_Status *)1 */
#define CGM_MPICH_PROC_NULL (-1)   /* MPI_PROC_NULL */
#define CGM_MPICH_ERR_INTERN 16    /* MPI_ERR_INTERN (Open MPI: 17) */
#define CGM_MPICH_ERR_IN_STATUS 17 /* MPI_ERR_IN_STATUS (Open MPI: 18) */

/* MPI 5.0's standard ABI (libmpi_abi.so.1: MPICH's mpicc_abi, Open MPI 6), from its mpi_abi.h (PyPI's
 * mpich 5.0.2); cg_mpi_std_abi.c checks each against it where the build finds it. */
#define CGM_STD_REQUEST_SIZE 8   /* sizeof(MPI_Request): a pointer */
#define CGM_STD_STATUS_SIZE 32   /* MPI_SOURCE, MPI_TAG, MPI_ERROR, MPI_internal[5] */
#define CGM_STD_ERROR_OFFSET 8   /* offsetof(MPI_Status, MPI_ERROR) */
#define CGM_STD_STATUS_IGNORE 0  /* MPI_STATUS_IGNORE is (MPI_Status *)0 */
#define CGM_STD_PROC_NULL (-3)   /* MPI_PROC_NULL */
#define CGM_STD_ERR_INTERN 17    /* MPI_ERR_INTERN */
#define CGM_STD_ERR_IN_STATUS 19 /* MPI_ERR_IN_STATUS */
#define CGM_STD_THREAD_SINGLE 0  /* the thread levels: 0, 1, 2, 3 in Open MPI's and MPICH's ABIs */
#define CGM_STD_THREAD_FUNNELED 1024
#define CGM_STD_THREAD_SERIALIZED 2048
#define CGM_STD_THREAD_MULTIPLE 4096

/* The same in every ABI. */
#define CGM_SUCCESS 0

/* The same in Open MPI's and MPICH's: the thread fix uses Open MPI's names for them. */
#define CGM_THREAD_SINGLE 0
#define CGM_THREAD_FUNNELED 1
#define CGM_THREAD_SERIALIZED 2
#define CGM_THREAD_MULTIPLE 3

#endif
