/* Which clock a trace's times are on (trace_clock.h).
 *
 * An event's time is TSC ticks turned into CLOCK_MONOTONIC by its
 * process's calibration: two (ticks, ns) samples about a millisecond apart,
 * each read within tens of ns, so the slope is off by up to about 0.01 %,
 * which grows into 100 us after a second and a millisecond after ten. The
 * counter is one for the whole host: a second sample read when the trace is
 * written, seconds or hours later, makes the slope that of the whole run. */
#define _GNU_SOURCE
#include "trace_clock.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void cgi_trace_clock_id(char boot[40], uint64_t *time_ns)
{
    boot[0] = '\0';
    *time_ns = 0;
    int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, boot, 39);
        close(fd);
        boot[n > 0 ? n : 0] = '\0';
        char *nl = strchr(boot, '\n');
        if (nl) *nl = '\0';
    }
    struct stat st;
    if (stat("/proc/self/ns/time", &st) == 0)
        *time_ns = (uint64_t)st.st_ino;
    else if (errno == ENOENT && boot[0])
        *time_ns = CGI_TRACE_NO_TIMENS; /* /proc is there, time namespaces are not */
}

void cgi_trace_clock_refine(cgi_trace_clock *c)
{
#if defined(__x86_64__)
    if (!c->tsc || !c->mult) return;
    /* The tightest of a few (ticks, ns) readings: a preemption between the
     * reads makes one wide. */
    uint64_t best = UINT64_MAX, ticks = 0, mono = 0;
    for (int i = 0; i < 8; i++) {
        struct timespec ts;
        uint64_t a = __builtin_ia32_rdtsc();
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t b = __builtin_ia32_rdtsc();
        if (b - a >= best) continue;
        best = b - a;
        ticks = a + (b - a) / 2;
        mono = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    }
    if (ticks <= c->tick0 || mono <= c->mono0) return;
    uint64_t dt = ticks - c->tick0, dm = mono - c->mono0;
    uint64_t mult = (uint64_t)(((unsigned __int128)dm << 32) / dt);
    /* Within 1 % of the first: the same counter (a TSC reset or a migration
     * to another host's counter is not refined, it is kept as it was). */
    if (mult < c->mult - c->mult / 100 || mult > c->mult + c->mult / 100) return;
    c->mult = mult;
    c->span_ns = dm;
#else
    (void)c;
#endif
}
