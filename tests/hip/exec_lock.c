/* ROCm/rocm-systems #11678's deadlock: thread A synchronizes a stream whose kernel waits for the host
 * (hipStreamSynchronize: the runtime holds the device's execution lock while it waits on the CPU);
 * thread B, 200 ms later, copies (hipMemcpy, which takes that lock) and only then would make the host
 * progress the kernel waits for (gloo's worker: hipStreamWaitEvent, then completing the future). Linked
 * to the stand-in libamdhip64.so.7 with CGHIP_EXEC_LOCK=on. Prints "done" when both return; the
 * deadlock is ended by alarm() after 4 s (SIGALRM).
 *
 *     exec_lock [waitevent]   waitevent: B's first call is hipStreamWaitEvent, as gloo's is */
#define __HIP_PLATFORM_AMD__ 1
#include <hip/hip_runtime_api.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void cghip_standin_host_progress(void);

static int wait_event_first;

static void *syncing(void *arg)
{
    (void)arg;
    hipStreamSynchronize(NULL);
    return NULL;
}

static void *copying(void *arg)
{
    (void)arg;
    struct timespec t = {0, 200000000};
    nanosleep(&t, NULL);
    int a = 1, b = 0;
    if (wait_event_first) hipStreamWaitEvent(NULL, NULL, 0);
    hipMemcpy(&b, &a, sizeof a, hipMemcpyHostToHost);
    hipStreamWaitEvent(NULL, NULL, 0);
    cghip_standin_host_progress();
    return NULL;
}

int main(int argc, char **argv)
{
    wait_event_first = argc > 1 && strcmp(argv[1], "waitevent") == 0;
    alarm(4);
    if (hipInit(0) != hipSuccess || hipSetDevice(0) != hipSuccess) {
        fprintf(stderr, "set-up failed\n");
        return 1;
    }
    pthread_t a, b;
    pthread_create(&a, NULL, syncing, NULL);
    pthread_create(&b, NULL, copying, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("done\n");
    return 0;
}
