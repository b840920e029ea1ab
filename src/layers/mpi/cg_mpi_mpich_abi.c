/* cg_mpi_mpich_abi.c: checks cg_mpi_abi.h against MPICH's mpi.h when the build finds one; it compiles to
 * nothing, and a value MPICH changed stops the build. MPI_STATUS_IGNORE, a pointer, cannot be checked by
 * the compiler: the MPICH tests of tests/mpi/test_mpi.py do (MPICH aborts the program given another). */
#include <mpi.h>

#include <stddef.h>

#include "cg_mpi_abi.h"

_Static_assert(sizeof(MPI_Request) == CGM_MPICH_REQUEST_SIZE, "MPICH's MPI_Request");
_Static_assert(sizeof(MPI_Status) == CGM_MPICH_STATUS_SIZE, "MPICH's MPI_Status");
_Static_assert(offsetof(MPI_Status, MPI_ERROR) == CGM_MPICH_ERROR_OFFSET, "MPICH's MPI_Status.MPI_ERROR");
_Static_assert(MPI_PROC_NULL == CGM_MPICH_PROC_NULL, "MPICH's MPI_PROC_NULL");
_Static_assert(MPI_ERR_INTERN == CGM_MPICH_ERR_INTERN && MPI_ERR_IN_STATUS == CGM_MPICH_ERR_IN_STATUS,
               "MPICH's error classes");
_Static_assert(MPI_SUCCESS == CGM_SUCCESS, "MPICH's MPI_SUCCESS");
_Static_assert(MPI_THREAD_SINGLE == CGM_THREAD_SINGLE && MPI_THREAD_SERIALIZED == CGM_THREAD_SERIALIZED &&
                   MPI_THREAD_MULTIPLE == CGM_THREAD_MULTIPLE,
               "MPICH's thread levels");
