/* 16 threads make their first HIP call at once (hipInit(0), started on a barrier), then ask for the
 * device count, the way a thread pool's workers each initialize HIP lazily (cmssw #49332). Linked to
 * the stand-in libamdhip64.so.7 (standin.c), whose first-call set-up dies of SIGSEGV when two threads
 * are in it at once under CGHIP_INIT_RACE=segv. Prints "initialized in N threads". */
#define __HIP_PLATFORM_AMD__ 1
#include <hip/hip_runtime_api.h>

#include "../race_threads.h"
#include <stdio.h>

#define NTHREADS 16

static int ok[NTHREADS];

static void *worker(void *arg)
{
    int i = (int)(long)arg, n = 0;
    pthread_barrier_wait(&cg_race_start);
    ok[i] = hipInit(0) == hipSuccess && hipGetDeviceCount(&n) == hipSuccess && n == 1;
    return NULL;
}

int main(void)
{
    int n = cg_race_run(NTHREADS, worker, ok);
    printf("initialized in %d threads\n", n);
    return n == NTHREADS ? 0 : 1;
}
