/* The test's own interposer, placed below the layer (after it in LD_PRELOAD): a stand-in for the
 * UCX owner check that open-mpi/ompi#13347 meets. Open MPI 5.0.0 to 5.0.9's osc/ucx makes its
 * workers UCS_THREAD_MODE_SINGLE, usable only by the thread that made them; UCX 1.18 and later
 * abort any other thread's use (ucs_async_check_owner_thread). Here the worker's thread is the one
 * that called MPI_Win_create, and MPI_Put, MPI_Get or MPI_Win_fence from any other thread aborts,
 * however the calls are ordered: what a lock of entry points cannot change. Forwards to the real
 * functions (dlsym RTLD_NEXT). It defines the PMPI_ names too: callguard's layer is a PMPI tool
 * (it calls PMPI_Put), so this spy is below it there; a plain program reaches its MPI_ names. */
#define _GNU_SOURCE
#include <mpi.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define EXPORT __attribute__((visibility("default")))

static pthread_t owner;
static atomic_int owned;

static void *real(const char *name)
{
    void *fn = dlsym(RTLD_NEXT, name);
    if (!fn) {
        fprintf(stderr, "osc_spy: no %s below\n", name);
        abort();
    }
    return fn;
}

static void owner_check(const char *name)
{
    if (atomic_load(&owned) && !pthread_equal(owner, pthread_self())) {
        fprintf(stderr,
                "osc_spy: %s from a thread that did not make the worker: "
                "Assertion `ucs_async_check_owner_thread(&(worker)->async)' failed (stand-in)\n",
                name);
        abort();
    }
}

#define SPY_WIN_CREATE(NAME)                                                                                           \
    EXPORT int NAME(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win)              \
    {                                                                                                                  \
        if (!atomic_exchange(&owned, 1)) owner = pthread_self();                                                       \
        return ((__typeof__(MPI_Win_create) *)real(#NAME))(base, size, disp_unit, info, comm, win);                    \
    }
#define SPY_FENCE(NAME)                                                                                                \
    EXPORT int NAME(int assert, MPI_Win win)                                                                           \
    {                                                                                                                  \
        owner_check(#NAME);                                                                                            \
        return ((__typeof__(MPI_Win_fence) *)real(#NAME))(assert, win);                                                \
    }
#define SPY_RMA(NAME, CONST)                                                                                           \
    EXPORT int NAME(CONST void *origin, int count, MPI_Datatype type, int rank, MPI_Aint disp, int tcount,             \
                    MPI_Datatype ttype, MPI_Win win)                                                                   \
    {                                                                                                                  \
        owner_check(#NAME);                                                                                            \
        return ((int (*)(CONST void *, int, MPI_Datatype, int, MPI_Aint, int, MPI_Datatype, MPI_Win))real(#NAME))(     \
            origin, count, type, rank, disp, tcount, ttype, win);                                                      \
    }

SPY_WIN_CREATE(MPI_Win_create)
SPY_WIN_CREATE(PMPI_Win_create)
SPY_FENCE(MPI_Win_fence)
SPY_FENCE(PMPI_Win_fence)
SPY_RMA(MPI_Put, const)
SPY_RMA(PMPI_Put, const)
SPY_RMA(MPI_Get, )
SPY_RMA(PMPI_Get, )
