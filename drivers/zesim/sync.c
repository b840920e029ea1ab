/* Time and waiting helpers shared by events, fences and queues. All waits use CLOCK_MONOTONIC so that a
 * change of the wall clock cannot shorten or stretch a Level Zero timeout. */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void cgsim_cond_init_monotonic(pthread_cond_t *cond)
{
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(cond, &attr);
    pthread_condattr_destroy(&attr);
}

uint64_t cgsim_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void cgsim_sleep_us(uint64_t us)
{
    struct timespec ts = {.tv_sec = (time_t)(us / 1000000u), .tv_nsec = (long)(us % 1000000u) * 1000L};
    /* nanosleep is restarted after a signal so the simulated duration is not cut short. */
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

struct cgsim_deadline cgsim_deadline_after(uint64_t timeout_ns)
{
    struct cgsim_deadline d = {.forever = timeout_ns == UINT64_MAX};
    if (!d.forever) {
        clock_gettime(CLOCK_MONOTONIC, &d.at);
        uint64_t nsec = (uint64_t)d.at.tv_nsec + timeout_ns % 1000000000ull;
        d.at.tv_sec += (time_t)(timeout_ns / 1000000000ull + nsec / 1000000000ull);
        d.at.tv_nsec = (long)(nsec % 1000000000ull);
    }
    return d;
}

bool cgsim_cond_wait_until(pthread_cond_t *cond, pthread_mutex_t *lock, const struct cgsim_deadline *deadline)
{
    if (deadline->forever) {
        pthread_cond_wait(cond, lock);
        return true;
    }
    return pthread_cond_timedwait(cond, lock, &deadline->at) != ETIMEDOUT;
}

char *cgsim_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *copy = malloc(n);
    if (copy) memcpy(copy, s, n);
    return copy;
}
