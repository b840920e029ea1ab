/* race_threads.h: the tests' race programs start their threads at once on a barrier (a race shows on
 * 2 cores only so: docs/development.md, "Flaky tests"). Each worker(i) waits on cg_race_start first
 * and sets ok[i] when its calls succeeded; cg_race_run starts n of them, joins them and returns how
 * many did. */
#ifndef CG_RACE_THREADS_H
#define CG_RACE_THREADS_H

#include <pthread.h>

static pthread_barrier_t cg_race_start;

static inline int cg_race_run(int n, void *(*worker)(void *), const int *ok)
{
    pthread_t t[n];
    pthread_barrier_init(&cg_race_start, NULL, (unsigned)n);
    for (long i = 0; i < n; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    int done = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(t[i], NULL);
        done += ok[i];
    }
    pthread_barrier_destroy(&cg_race_start);
    return done;
}

#endif
