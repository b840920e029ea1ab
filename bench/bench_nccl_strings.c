/* bench_nccl_strings.c: the cost of NCCL's string calls, ncclGetErrorString and ncclGetLastError, as an
 * error path that names every result would call them; linked to libnccl.so.2 (bench/bench_nccl.sh runs it
 * plainly and under callguard run). Prints ns per call of each, the best of 7 rounds of N calls. */
#include <nccl.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 10000000;
    volatile size_t sink = 0;
    double best_s = 1e300, best_l = 1e300;
    for (int round = 0; round < 7; round++) {
        double t0 = now_ns();
        for (long i = 0; i < n; i++)
            sink += (size_t)ncclGetErrorString((ncclResult_t)(i & 7));
        double t1 = now_ns();
        for (long i = 0; i < n; i++)
            sink += (size_t)ncclGetLastError(NULL);
        double t2 = now_ns();
        if ((t1 - t0) / n < best_s) best_s = (t1 - t0) / n;
        if ((t2 - t1) / n < best_l) best_l = (t2 - t1) / n;
    }
    printf("ncclGetErrorString %.2f ns/call\nncclGetLastError %.2f ns/call\n", best_s, best_l);
    return sink == 42;
}
