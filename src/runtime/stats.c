/* The statistics region. Counters are updated with relaxed atomic adds on
 * a per-site record: exact under contention, no process-wide lock. When
 * CALLGUARD_STATS_DIR is set (callguard run sets it), the region is a shared
 * mapping of a file in that directory: what a process counted is in the file
 * the moment it is counted, so abort(), _exit() and exec() lose nothing, and
 * the CLI merges the files of the whole process tree afterwards. */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

_Static_assert(sizeof(cg_stats_header) == 4096, "stats header is one page");
_Static_assert(sizeof(cg_stats_record) == 192, "stats record layout is fixed");

cg_stats_region *cg_stats;
static char cg_stats_dir[512];
static char cg_stats_path[600];

static void cg_stats_fill_header(cg_stats_header *h)
{
    memcpy(h->magic, CG_STATS_MAGIC, sizeof CG_STATS_MAGIC);
    h->version = CG_STATS_VERSION;
    h->max_records = CG_STATS_MAX_RECORDS;
    h->pid = (int32_t)getpid();
    h->ppid = (int32_t)getppid();
    atomic_store(&h->state, CG_PROC_RUNNING);
    h->status = 0;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    h->start_unix_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;

    /* /proc/self/cmdline: NUL-separated argv; join with spaces. */
    h->command[0] = '\0';
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, h->command, sizeof h->command - 1);
        close(fd);
        if (n > 0) {
            for (ssize_t i = 0; i < n; i++)
                if (h->command[i] == '\0') h->command[i] = ' ';
            while (n > 0 && h->command[n - 1] == ' ') n--;
            h->command[n] = '\0';
        }
    }
}

/* Opens a fresh file for this process in the stats directory. The name
 * carries the pid and a clock reading: an exec'd image keeps the pid. */
static int cg_stats_open_file(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    snprintf(cg_stats_path, sizeof cg_stats_path, "%s/cg-%d-%ld%09ld.stats", cg_stats_dir, (int)getpid(),
             (long)ts.tv_sec, ts.tv_nsec);
    int fd = open(cg_stats_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return -1;
    if (ftruncate(fd, sizeof(cg_stats_region)) != 0) {
        close(fd);
        unlink(cg_stats_path);
        return -1;
    }
    return fd;
}

int cg_stats_init(const char *dir)
{
    void *p = MAP_FAILED;
    if (dir && *dir) {
        if (strlen(dir) >= sizeof cg_stats_dir)
            return cg_fail(CG_EINVAL, "CALLGUARD_STATS_DIR=%s: path too long", dir);
        strcpy(cg_stats_dir, dir);
        int fd = cg_stats_open_file();
        if (fd < 0)
            return cg_fail(CG_EIO, "CALLGUARD_STATS_DIR=%s: cannot create a file there: %s", dir, strerror(errno));
        p = mmap(NULL, sizeof(cg_stats_region), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
    } else {
        /* Private: a forked child must not count into its parent's pages. */
        p = mmap(NULL, sizeof(cg_stats_region), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    }
    if (p == MAP_FAILED) return cg_fail(CG_ENOMEM, "cannot map the statistics region: %s", strerror(errno));
    cg_stats = p;
    cg_stats_fill_header(&cg_stats->h);
    return CG_OK;
}

/* Runs in the child after fork (only the forking thread exists). Sites keep
 * pointing at the same addresses: the child gets a new file mapped over the
 * old range, holding the same records with zeroed counters. Only system
 * calls here: malloc is not safe after fork in a threaded parent. */
void cg_stats_after_fork_child(void)
{
    if (!cg_stats) return;
    uint32_t n = atomic_load(&cg_stats->h.nrecords);
    if (cg_stats_dir[0]) {
        void *p = MAP_FAILED;
        int fd = cg_stats_open_file();
        if (fd >= 0) {
            size_t used = sizeof(cg_stats_header) + (size_t)n * sizeof(cg_stats_record);
            if (pwrite(fd, cg_stats, used, 0) == (ssize_t)used)
                p = mmap(cg_stats, sizeof(cg_stats_region), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
            close(fd);
            if (p == MAP_FAILED) unlink(cg_stats_path);
        }
        if (p == MAP_FAILED) {
            /* Count in private memory rather than into the parent's file
             * (the records' names are lost with it; counts still work). */
            mmap(cg_stats, sizeof(cg_stats_region), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                 -1, 0);
            cg_stats_dir[0] = '\0';
        }
    }
    for (uint32_t i = 0; i < n; i++) memset(&cg_stats->r[i].c, 0, sizeof(cg_counters));
    for (uint32_t i = 0; i < n; i++) cg_stats->r[i].used = 1;
    cg_stats_fill_header(&cg_stats->h);
    atomic_store(&cg_stats->h.nrecords, n);
}

/* Caller holds cg_cfg_lock. */
cg_counters *cg_stats_record_site(const char *api, const char *name)
{
    static cg_counters overflow; /* counts of sites past the last record: kept, not reported */
    uint32_t n = atomic_load(&cg_stats->h.nrecords);
    /* A layer and a soname shim of one API in one process count into one row. */
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(cg_stats->r[i].api, api) == 0 && strcmp(cg_stats->r[i].name, name) == 0) return &cg_stats->r[i].c;
    if (n == CG_STATS_MAX_RECORDS) return &overflow;
    cg_stats_record *r = &cg_stats->r[n];
    snprintf(r->api, sizeof r->api, "%s", api);
    snprintf(r->name, sizeof r->name, "%s", name);
    r->used = 1;
    atomic_store(&cg_stats->h.nrecords, n + 1);
    return &r->c;
}

/* Mirrors a site's policy into its record so reports show it. Caller holds cg_cfg_lock. */
void cg_stats_note_policy(cg_site *s)
{
    cg_stats_record *r = (cg_stats_record *)((char *)s->ctr - offsetof(cg_stats_record, c));
    if ((char *)r < (char *)cg_stats->r || (char *)r >= (char *)(cg_stats->r + CG_STATS_MAX_RECORDS)) return;
    uint32_t d = atomic_load(&s->domain);
    snprintf(r->domain, sizeof r->domain, "%s", cg_domain_name(d));
    r->transition = (uint8_t)atomic_load(&s->transition);
    r->scope = (uint8_t)atomic_load(&s->scope);
    r->blocking = (uint8_t)atomic_load(&s->blocking);
}

int cg_get_stats(const char *name, cg_site_stats *out)
{
    if (!name || !out) return cg_fail(CG_EINVAL, "cg_get_stats: site and out must not be NULL");
    pthread_mutex_lock(&cg_cfg_lock);
    cg_site *s = cg_site_find(name);
    if (s) {
        cg_counters *c = s->ctr;
        out->calls = atomic_load(&c->calls);
        out->nested = atomic_load(&c->nested);
        out->errors = atomic_load(&c->errors);
        out->total_ns = atomic_load(&c->total_ns);
        out->max_ns = atomic_load(&c->max_ns);
        out->lock_wait_ns = atomic_load(&c->lock_wait_ns);
        out->stalls = atomic_load(&c->stalls);
        out->stall_ns = atomic_load(&c->stall_ns);
    }
    pthread_mutex_unlock(&cg_cfg_lock);
    if (!s) return cg_fail(CG_ENOENT, "unknown entry point '%s'", name);
    return CG_OK;
}

int cg_reset_stats(void)
{
    pthread_mutex_lock(&cg_cfg_lock);
    uint32_t n = atomic_load(&cg_stats->h.nrecords);
    for (uint32_t i = 0; i < n; i++) memset(&cg_stats->r[i].c, 0, sizeof(cg_counters));
    pthread_mutex_unlock(&cg_cfg_lock);
    return CG_OK;
}

int cg_report_write(const char *path, cg_report_format format)
{
    cg_proc_view v = {.region = cg_stats};
    return cg_report_to(path, &v, 1, format);
}
