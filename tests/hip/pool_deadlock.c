/* ROCm/rocm-systems #10529's deadlock: one thread allocates and frees from the stream's pool
 * (hipMallocAsync, hipFreeAsync) while another waits for events (hipEventSynchronize), 50 times each,
 * started on a barrier. Linked to the stand-in libamdhip64.so.7 (standin.c: CGHIP_POOL_DEADLOCK=on takes
 * the pool's and the device's locks in opposite orders, as ROCm 7.14 does). Prints "done N calls"; a
 * deadlock is ended by alarm() after 10 s (SIGALRM). */
#define __HIP_PLATFORM_AMD__ 1
#include <hip/hip_runtime_api.h>

#include "../race_threads.h"
#include <stdio.h>
#include <unistd.h>

#define LOOPS 50

static int ok[2];

static void *worker(void *arg)
{
    int i = (int)(long)arg, n = 0;
    pthread_barrier_wait(&cg_race_start);
    for (int k = 0; k < LOOPS; k++) {
        void *p = NULL;
        if (i == 0)
            n += hipMallocAsync(&p, 256, NULL) == hipSuccess && hipFreeAsync(p, NULL) == hipSuccess;
        else
            n += hipEventSynchronize(NULL) == hipSuccess;
    }
    ok[i] = n == LOOPS;
    return NULL;
}

int main(void)
{
    alarm(10);
    if (hipInit(0) != hipSuccess || hipSetDevice(0) != hipSuccess) {
        fprintf(stderr, "set-up failed\n");
        return 1;
    }
    int n = cg_race_run(2, worker, ok);
    printf("done %d calls\n", n == 2 ? 3 * LOOPS : 0);
    return n == 2 ? 0 : 1;
}
