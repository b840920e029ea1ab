/* cg_mpi_std_abi.c: checks cg_mpi_abi.h's CGM_STD_ values against MPI 5.0's standard ABI header mpi_abi.h
 * (PyPI's mpich: build-venv-mpich/include) when the build finds it; it compiles to nothing, and a value
 * that differs stops the build. */
#include <mpi_abi.h>

#include <stddef.h>

#include "cg_mpi_abi.h"

_Static_assert(sizeof(MPI_Request) == CGM_STD_REQUEST_SIZE, "the standard ABI's MPI_Request");
_Static_assert(sizeof(MPI_Status) == CGM_STD_STATUS_SIZE, "the standard ABI's MPI_Status");
_Static_assert(offsetof(MPI_Status, MPI_ERROR) == CGM_STD_ERROR_OFFSET, "the standard ABI's MPI_Status.MPI_ERROR");
_Static_assert(__builtin_constant_p(MPI_STATUS_IGNORE) && MPI_STATUS_IGNORE == (MPI_Status *)CGM_STD_STATUS_IGNORE,
               "the standard ABI's MPI_STATUS_IGNORE");
_Static_assert(MPI_PROC_NULL == CGM_STD_PROC_NULL, "the standard ABI's MPI_PROC_NULL");
_Static_assert(MPI_ERR_INTERN == CGM_STD_ERR_INTERN && MPI_ERR_IN_STATUS == CGM_STD_ERR_IN_STATUS,
               "the standard ABI's error classes");
_Static_assert(MPI_SUCCESS == CGM_SUCCESS, "the standard ABI's MPI_SUCCESS");
_Static_assert(MPI_THREAD_SINGLE == CGM_STD_THREAD_SINGLE && MPI_THREAD_FUNNELED == CGM_STD_THREAD_FUNNELED &&
                   MPI_THREAD_SERIALIZED == CGM_STD_THREAD_SERIALIZED && MPI_THREAD_MULTIPLE == CGM_STD_THREAD_MULTIPLE,
               "the standard ABI's thread levels");
