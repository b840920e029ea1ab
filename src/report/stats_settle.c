/* Making the statistics file of an ended process small (`callguard run`).
 *
 * A process's file is allocated whole (2.3 MB) at its first guarded call,
 * and the report reads only part of it: the header, the records of the
 * sites it called, and the stalls, calls in flight, violations, quirks,
 * hang page and late calls it kept. Once no process can write the file any
 * more (the process exited, died or exec'd: its shared mapping is gone),
 * the CLI punches out every other page: the file keeps its size, the
 * holes read as zeros, and the report skips records without calls. A file
 * whose process counted no call (a forked child that exec'd) is deleted.
 * So a run's statistics take 2.3 MB per process alive, and a few pages per
 * process that ended.
 *
 * Compiled into the CLI alone, like outfile.c; it reads only the file. */
#define _GNU_SOURCE
#include "stats_settle.h"

#include "../common/file_names.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CGI_PAGE 4096
#define CGI_PAGES ((sizeof(cgi_stats_region) + CGI_PAGE - 1) / CGI_PAGE)

/* Can anyone still write the file? The kernel refuses a read lease while
 * any process has it open for writing, and a shared writable mapping holds
 * it open: a lease granted means the process that mapped it is gone. */
static int cgi_settle_final(int fd)
{
    if (fcntl(fd, F_SETLEASE, F_RDLCK) != 0) return 0;
    fcntl(fd, F_SETLEASE, F_UNLCK);
    return 1;
}

/* Did process pid, which started at `start` (/proc/PID/stat's field 22),
 * go on in another image? A dying process is still listed (until reaped)
 * with its start, but has no memory left, so its command line reads empty;
 * an image that exec'd was replaced before its mapping was let go (the
 * kernel releases the old image's files on the way back to the new one). */
static int cgi_settle_execed(int32_t pid, uint64_t start)
{
    char path[64], buf[1];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    uint64_t now = cgi_proc_starttime(path);
    if (!now || now != start) return 0;
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, 1) : -1;
    if (fd >= 0) close(fd);
    return n > 0;
}

static size_t cgi_settle_read(int fd, void *buf, size_t len, size_t off)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = pread(fd, (char *)buf + off + got, len - got, (off_t)(off + got));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += (size_t)n;
    }
    return got;
}

static void cgi_keep(unsigned char *keep, size_t off, size_t len)
{
    for (size_t p = off / CGI_PAGE; p <= (off + len - 1) / CGI_PAGE && p < CGI_PAGES; p++)
        keep[p] = 1;
}

/* The pages the report reads of r (keep[page] = 1; r, a copy, gets its runs folded); 0 when it made no call
 * and has no record its policy left uncounted (its first call made the file). */
static uint64_t cgi_settle_pages(cgi_stats_region *r, unsigned char *keep)
{
    uint64_t calls = 0, uncounted = 0;
    memset(keep, 0, CGI_PAGES);
    cgi_keep(keep, 0, sizeof r->h);
    /* A slot's run of calls not yet in its shard is kept for the report, which folds it in; here
     * (a copy) it is folded now, so that its record is kept too. */
    for (unsigned i = 0; i < CGI_STATS_MAX_SLOTS; i++)
        if (cgi_slot_run_calls(&r->slot[i]))
            cgi_keep(keep, offsetof(cgi_stats_region, slot) + i * sizeof r->slot[i], sizeof r->slot[i]);
    cgi_stats_fold(r);
    uint32_t n = atomic_load(&r->h.nrecords);
    for (uint32_t k = 0; k < n && k < CGI_STATS_MAX_RECORDS; k++) {
        uint64_t c = cgi_ctr_calls(&r->r[k].c);
        /* A record its policy leaves uncounted is kept too: the report names it (`count = no`). */
        int called = (r->r[k].uncounted & CGI_UNCOUNTED_CALLED) != 0;
        if (c || called) cgi_keep(keep, offsetof(cgi_stats_region, r) + k * sizeof r->r[k], sizeof r->r[k]);
        calls += c, uncounted |= called;
    }
    for (unsigned i = 0; i < CGI_STATS_MAX_STALLS; i++)
        if (atomic_load(&r->stall[i].valid))
            cgi_keep(keep, offsetof(cgi_stats_region, stall) + i * sizeof r->stall[i], sizeof r->stall[i]);
    int in_flight = 0;
    for (unsigned i = 0; i < CGI_STATS_MAX_SLOTS; i++)
        if (atomic_load(&r->slot[i].tid) != 0 && atomic_load(&r->slot[i].counters)) {
            cgi_keep(keep, offsetof(cgi_stats_region, slot) + i * sizeof r->slot[i], sizeof r->slot[i]);
            in_flight = 1;
        }
    /* The watchdog's last look: when a call in flight ended, for the timeline (trace_flight.h). */
    if (in_flight) cgi_keep(keep, offsetof(cgi_stats_region, hang) + offsetof(cgi_hang_page, seen_ns), 8);
    for (unsigned i = 0; i < CGI_STATS_MAX_VIOLATIONS; i++)
        if (atomic_load(&r->violation[i].valid))
            cgi_keep(keep, offsetof(cgi_stats_region, violation) + i * sizeof r->violation[i], sizeof r->violation[i]);
    for (unsigned i = 0; i < CGI_STATS_MAX_QUIRKS; i++)
        if (atomic_load(&r->quirk[i].valid))
            cgi_keep(keep, offsetof(cgi_stats_region, quirk) + i * sizeof r->quirk[i], sizeof r->quirk[i]);
    if (atomic_load(&r->hang.reports)) cgi_keep(keep, offsetof(cgi_stats_region, hang), sizeof r->hang);
    if (atomic_load(&r->late.count)) cgi_keep(keep, offsetof(cgi_stats_region, late), sizeof r->late);
    return calls ? calls : uncounted;
}

int cgi_stats_settle(int dfd, const char *name, cgi_stats_region *r)
{
    cgi_file_name is;
    if (!cgi_file_name_parse(name, CGI_FILE_STATS, &is)) return 0;
    int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW);
    struct stat st;
    if (fd < 0) return 0;
    /* The region, and the threads area after it where `callguard status` asked for the threads. */
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        ((size_t)st.st_size != sizeof *r && (uint64_t)st.st_size != CGI_THREADS_OFF + CGI_THREADS_BYTES) ||
        !cgi_settle_final(fd)) {
        close(fd);
        return 0;
    }
    /* What the report reads: the header, the records in use, the rest. */
    const size_t rec = offsetof(cgi_stats_region, r), tail = offsetof(cgi_stats_region, stall);
    int ok = cgi_settle_read(fd, r, sizeof r->h, 0) == sizeof r->h;
    uint32_t n = atomic_load(&r->h.nrecords);
    if (n > CGI_STATS_MAX_RECORDS) n = CGI_STATS_MAX_RECORDS, atomic_store(&r->h.nrecords, n);
    ok = ok && cgi_settle_read(fd, r, n * sizeof r->r[0], rec) == n * sizeof r->r[0] &&
         cgi_settle_read(fd, r, sizeof *r - tail, tail) == sizeof *r - tail;
    close(fd);
    if (!ok) return 0;
    if (memcmp(r->h.magic, CGI_STATS_MAGIC, sizeof CGI_STATS_MAGIC) == 0 && r->h.version == CGI_STATS_VERSION &&
        r->h.settled)
        return 0;
    unsigned char keep[CGI_PAGES];
    /* No header (its process died while making the file) or no call: the
     * report has nothing to read in it. */
    if (memcmp(r->h.magic, CGI_STATS_MAGIC, sizeof CGI_STATS_MAGIC) != 0 || r->h.version != CGI_STATS_VERSION ||
        cgi_settle_pages(r, keep) == 0)
        return unlinkat(dfd, name, 0) == 0 ? 2 : 0;
    fd = openat(dfd, name, O_RDWR | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW);
    if (fd < 0) return 0;
    for (size_t p = 0; p < CGI_PAGES;) {
        size_t q = p;
        while (q < CGI_PAGES && !keep[q])
            q++;
        /* Where holes cannot be punched the file stays as it was. */
        if (q > p && fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)(p * CGI_PAGE),
                               (off_t)((q - p) * CGI_PAGE)) != 0)
            break;
        p = q + 1;
    }
    /* Nobody reads the threads area once the process is gone. */
    int cut = (size_t)st.st_size > sizeof *r ? ftruncate(fd, (off_t)sizeof *r) : 0;
    (void)cut; /* where it cannot be cut the file stays as it was */
    /* The image is gone but its process lives on: it exec'd (an image that
     * makes no guarded call leaves no file of its own to say so). */
    ok = 1;
    int32_t state = CGI_PROC_EXECED;
    if (atomic_load(&r->h.state) == CGI_PROC_RUNNING && r->h.proc_start && cgi_settle_execed(r->h.pid, r->h.proc_start))
        ok = pwrite(fd, &state, sizeof state, offsetof(cgi_stats_header, state)) == sizeof state;
    uint32_t settled = 1;
    ok = pwrite(fd, &settled, sizeof settled, offsetof(cgi_stats_header, settled)) == sizeof settled && ok;
    close(fd);
    return ok;
}
