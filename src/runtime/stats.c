/* The statistics region. Counters are updated with relaxed atomic adds on
 * a per-site record: exact under contention, no process-wide lock. When
 * CALLGUARD_STATS_DIR is set (callguard run sets it), the region becomes a
 * shared mapping of a file in that directory at the process's first guarded
 * call: from then on what a process counted is in the file the moment it is
 * counted, so abort(), _exit() and exec() lose nothing, and the CLI merges
 * the files of the whole process tree afterwards. A process that never makes
 * a guarded call (a shell, /bin/true) would report nothing: it makes no file. */
#define _GNU_SOURCE
#include "stats.h"

#include "clock.h"
#include "domain.h"
#include "../common/errors.h"
#include "../common/file_names.h"
#include "../common/launcher.h"
#include "../common/message.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

_Static_assert(sizeof(cgi_stats_header) == 4096, "stats header is one page");
_Static_assert(sizeof(cgi_stats_record) == 1088 && offsetof(cgi_stats_record, shard) == 576,
               "stats record layout is fixed, its shards on their own cache lines");
_Static_assert(sizeof(cgi_code) == 64, "a result code's slot is fixed");
_Static_assert(sizeof(cgi_stall) == 1024, "stall layout is fixed");
_Static_assert(sizeof(cgi_slot) == 192 && offsetof(cgi_slot, mark) < 64 && offsetof(cgi_slot, held_seq) == 64 &&
                   offsetof(cgi_slot, wait) == 128,
               "a slot is three cache lines: what every counted call touches (the stall mark included), the rest, "
               "and what a blocking call waits on");
_Static_assert(sizeof(cgi_shard) == 64, "a shard is a cache line");
_Static_assert(sizeof(cgi_hang_call) == 816, "a hung call's layout is fixed");
_Static_assert(sizeof(cgi_late_call) == 840, "a late call's layout is fixed");
_Static_assert(sizeof(cgi_violation) == 512, "violation layout is fixed");

cgi_stats_region *cgi_stats;
static void cgi_slot_fill(cgi_slot *slot);
static pthread_key_t cgi_slot_key;
/* Two slots that are no thread's, never written: a thread's before it
 * claims one, and the one shared by threads that found none free. Both look
 * inside a call (counters == &cgi_no_counters), so those threads take
 * cg_call's guarded path, which claims, or keeps its clock in its frame
 * (call.c). Not NULL: the counted path then tests one pointer, not two. */
cg_counters cgi_no_counters;
cgi_slot cgi_unclaimed_slot = {.counters = &cgi_no_counters};
cgi_slot cgi_spare_slot = {.counters = &cgi_no_counters};
__thread cgi_slot *cgi_my_slot __attribute__((tls_model("initial-exec"))) = &cgi_unclaimed_slot;
__thread cg_slot *cg_my_slot __attribute__((tls_model("initial-exec"))) = (cg_slot *)&cgi_unclaimed_slot;
static pthread_mutex_t cgi_stall_lock = PTHREAD_MUTEX_INITIALIZER;
_Atomic unsigned cgi_slots_used;
static char cgi_stats_dir[512];
static char cgi_stats_path[600];
static char cgi_lost_path[64]; /* CALLGUARD_STATS_LOST: where a lost file is counted (stats.h) */
/* The file the region is mapped from (cgi_stats_open_own): its device and
 * inode, and the process that mapped it; pid 0 while it has none. */
static _Atomic pid_t cgi_stats_file_pid;
static dev_t cgi_stats_file_dev;
static ino_t cgi_stats_file_ino;
/* 1 while the region is private memory waiting for its file (cgi_stats_keep). */
static _Atomic int cgi_stats_pending;
/* The launcher's rank, read from the environment once at start-up: a
 * forked child is a process of the same rank, and the environment may
 * have changed (or be changing on another thread) by the time it forks. */
static cgi_rank cgi_my_rank = {.rank = -1, .local_rank = -1};

static void cgi_stats_fill_header(cgi_stats_header *h)
{
    memcpy(h->magic, CGI_STATS_MAGIC, sizeof CGI_STATS_MAGIC);
    h->version = CGI_STATS_VERSION;
    h->max_records = CGI_STATS_MAX_RECORDS;
    h->pid = (int32_t)getpid();
    h->ppid = (int32_t)getppid();
    atomic_store(&h->state, CGI_PROC_RUNNING);
    h->status = 0;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    h->start_unix_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    h->base = (uint64_t)(uintptr_t)cgi_stats;
    h->tick0 = cgi_clk.tick0;
    h->start_mono_ns = cgi_clk.mono0;
    atomic_store(&h->tick_mult, cgi_clk.mult);
    atomic_store(&h->stalls_dropped, 0);
    atomic_store(&h->threads_unslotted, 0);
    atomic_store(&h->violations_dropped, 0);
    atomic_store(&h->handles_untracked, 0);
    /* Room for the longest (HOST_NAME_MAX) and its NUL: gethostname fails for a name its buffer
     * cannot hold with the NUL, and a 63-byte name in 63 bytes was lost. */
    _Static_assert(sizeof h->host > HOST_NAME_MAX, "the header holds every host name");
    if (gethostname(h->host, sizeof h->host) != 0) h->host[0] = '\0';
    h->rank = cgi_my_rank.rank >= 0 ? (uint32_t)cgi_my_rank.rank : 0;
    h->local_rank = cgi_my_rank.local_rank >= 0 ? (uint32_t)cgi_my_rank.local_rank : 0;
    h->rank_set = (cgi_my_rank.rank >= 0 ? CGI_RANK_SET : 0) | (cgi_my_rank.local_rank >= 0 ? CGI_LOCAL_RANK_SET : 0);
    memcpy(h->rank_from, cgi_my_rank.from, sizeof h->rank_from);
    h->world_size = cgi_my_rank.world_size > 0 ? (uint32_t)cgi_my_rank.world_size : 0;
    /* No request answered yet (a forked child's file starts as a copy of its parent's header). */
    memset(&h->threads, 0, sizeof h->threads);

    /* /proc/self/cmdline: NUL-separated argv; join with spaces. */
    h->command[0] = '\0';
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, h->command, sizeof h->command - 1);
        close(fd);
        if (n > 0) {
            for (ssize_t i = 0; i < n; i++)
                if (h->command[i] == '\0') h->command[i] = ' ';
            while (n > 0 && h->command[n - 1] == ' ')
                n--;
            h->command[n] = '\0';
        }
    }
}

/* A fresh file's pages are read as zeros when first touched, and a fault
 * on a shared file mapping reads ahead around it: the first touch of the
 * header zeroed and mapped the whole 2.3 MB region (about 0.4 ms a
 * process here, most of a short program's start-up under callguard run),
 * where a process touches a few dozen pages. Only a hint: without it, the
 * same pages, more slowly. */
static void cgi_stats_no_readahead(void *p)
{
    int e = errno;
    madvise(p, sizeof(cgi_stats_region), MADV_RANDOM);
    errno = e;
}

/* Opens a fresh file for this process in the stats directory. The name
 * carries the pid and a clock reading: an exec'd image keeps the pid. */
static int cgi_stats_open_file(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int len = cgi_proc_file_name(cgi_stats_path, sizeof cgi_stats_path, cgi_stats_dir, CGI_FILE_STATS, getpid(),
                                 (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
    if (len < 0 || (size_t)len >= sizeof cgi_stats_path) return errno = ENAMETOOLONG, -1;
    int fd = open(cgi_stats_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return -1;
    /* Allocated, not only extended: a page of a file extended with
     * ftruncate on a full file system faults (SIGBUS) when first touched
     * through the mapping, in the middle of the program. posix_fallocate
     * fails now instead, and the process counts in memory. */
    int e = posix_fallocate(fd, 0, sizeof(cgi_stats_region));
    if (e != 0) {
        close(fd);
        unlink(cgi_stats_path);
        errno = e;
        return -1;
    }
    return fd;
}

/* Makes this process's file and maps it over the region at the same
 * address, holding what the region holds now: the header, the records in
 * use (their names and policies) and the quirks (slots, stalls and
 * violations are still empty, or zeroed by the caller). 0, or -1 with errno
 * and the region as it was (or zero private pages, should the mapping fail
 * half-way). */
static int cgi_stats_move_to_file(void)
{
    int fd = cgi_stats_open_file();
    if (fd < 0) return -1;
    size_t used = sizeof(cgi_stats_header) + (size_t)atomic_load(&cgi_stats->h.nrecords) * sizeof(cgi_stats_record);
    size_t qoff = offsetof(cgi_stats_region, quirk);
    /* Written, not only allocated: the pages every process touches are in
     * the page cache already, not read in by a fault each (6-10 us a page). */
    void *p = MAP_FAILED;
    struct stat st;
    int known = fstat(fd, &st) == 0;
    int written =
        pwrite(fd, cgi_stats, used, 0) == (ssize_t)used &&
        pwrite(fd, cgi_stats->quirk, sizeof cgi_stats->quirk, (off_t)qoff) == (ssize_t)sizeof cgi_stats->quirk;
    if (written) p = mmap(cgi_stats, sizeof(cgi_stats_region), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
    int e = errno;
    close(fd);
    if (p == MAP_FAILED) {
        unlink(cgi_stats_path);
        if (written)
            mmap(cgi_stats, sizeof(cgi_stats_region), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                 -1, 0);
        errno = e;
        return -1;
    }
    cgi_stats_no_readahead(p);
    if (known) cgi_stats_file_dev = st.st_dev, cgi_stats_file_ino = st.st_ino;
    atomic_store(&cgi_stats_file_pid, known ? getpid() : 0);
    /* Into the new mapping: a forked child's region was its parent's file until now. */
    cgi_stats->h.proc_start = cgi_proc_starttime("/proc/self/stat");
    return 0;
}

int cgi_stats_open_own(void)
{
    if (atomic_load(&cgi_stats_file_pid) != getpid()) return -1;
    int fd = open(cgi_stats_path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    if (fd >= 0 && fd <= 2) {
        /* Never on a standard descriptor's number, which a program that
         * closed one may be about to fill (selfread.c does the same). */
        int high = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        close(fd);
        fd = high;
    }
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || st.st_dev != cgi_stats_file_dev || st.st_ino != cgi_stats_file_ino)) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Says once, in one line, what is lost when the statistics file cannot be
 * had: the process runs on, counting in private memory. */
static void cgi_stats_say_lost(const char *dir, int e)
{
    /* snprintf and write, not stdio's locks: this also runs in a child
     * just forked from a threaded parent. */
    char shown[600], line[900];
    cgi_one_line(shown, sizeof shown, dir);
    int n = snprintf(line, sizeof line,
                     "callguard: pid %d: cannot keep statistics in %s: %s; counting in memory: this process is "
                     "missing from the run's report\n",
                     (int)getpid(), shown, strerror(e));
    if (n > 0 && write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1) < 0) return;
}

/* Says the loss and counts it in the CLI's page (stats.h); statistics are
 * kept in memory from now on. Only system calls: this also runs in a child
 * just forked. */
static void cgi_stats_lost(int e)
{
    cgi_stats_say_lost(cgi_stats_dir, e);
    cgi_stats_dir[0] = '\0';
    int fd = cgi_lost_path[0] ? open(cgi_lost_path, O_RDWR | O_CLOEXEC | O_NONBLOCK | O_NOCTTY) : -1;
    struct stat st;
    if (fd < 0) return;
    cgi_lost_page *page = MAP_FAILED;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= (off_t)sizeof *page)
        page = mmap(NULL, sizeof *page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (page == MAP_FAILED) return;
    if (memcmp(page->magic, CGI_LOST_MAGIC, sizeof CGI_LOST_MAGIC) == 0) atomic_fetch_add(&page->count, 1);
    munmap(page, sizeof *page);
}

int cgi_stats_init(const char *dir)
{
    if (dir && *dir) {
        if (strlen(dir) >= sizeof cgi_stats_dir)
            return cgi_fail(CG_EINVAL, "CALLGUARD_STATS_DIR=%s: path too long", dir);
        strcpy(cgi_stats_dir, dir);
        atomic_store(&cgi_stats_pending, 1);
        const char *lost = secure_getenv("CALLGUARD_STATS_LOST");
        if (lost && strlen(lost) < sizeof cgi_lost_path) strcpy(cgi_lost_path, lost);
    }
    /* Private until the first guarded call (cgi_stats_keep): a forked child
     * must not count into its parent's pages either. */
    void *p = mmap(NULL, sizeof(cgi_stats_region), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return cgi_fail(CG_ENOMEM, "cannot map the statistics region: %s", strerror(errno));
    cgi_stats = p;
    cgi_launcher_rank(&cgi_my_rank);
    cgi_clock_init();
    cgi_stats_fill_header(&cgi_stats->h);
    return CG_OK;
}

/* The process's first guarded call, before any slot is claimed: the region
 * moves into its file. Every other writer of the region before a call holds
 * one of two locks (records and policies: the configuration lock, which the
 * caller holds; quirks: the stall lock), so nothing written is lost between
 * the copy and the mapping. Full, removed or read-only storage never harms
 * the program: it counts in memory. */
void cgi_stats_keep(void)
{
    if (!atomic_load(&cgi_stats_pending)) return;
    pthread_mutex_lock(&cgi_stall_lock);
    if (cgi_stats_move_to_file() != 0) cgi_stats_lost(errno);
    atomic_store(&cgi_stats_pending, 0);
    pthread_mutex_unlock(&cgi_stall_lock);
}

/* Runs in the child after fork (only the forking thread exists). Sites keep
 * pointing at the same addresses: the child gets a new file mapped over the
 * old range, holding the same records with zeroed counters. Only system
 * calls here: malloc is not safe after fork in a threaded parent. */
void cgi_stats_after_fork_child(void)
{
    if (!cgi_stats) return;
    uint32_t n = atomic_load(&cgi_stats->h.nrecords);
    int fresh = 0; /* the region was mapped anew (zero past what was written into it) */
    if (cgi_stats_dir[0] && !atomic_load(&cgi_stats_pending)) {
        /* The parent's file is mapped: the child gets its own at once, its
         * threads' slots being claimed already. (A parent still waiting for
         * its first call leaves the child waiting for its own.) */
        if (cgi_stats_move_to_file() != 0) {
            /* Count in private memory rather than into the parent's file
             * (the records' names are lost with it; counts still work). */
            cgi_stats_lost(errno);
            mmap(cgi_stats, sizeof(cgi_stats_region), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                 -1, 0);
        }
        /* Either way the stalls and slots are new, zero pages now. */
        fresh = 1;
    }
    for (uint32_t i = 0; i < n; i++) {
        cgi_ctr_zero(&cgi_stats->r[i]);
        /* A once-gate is numbered in the child's calls; one the parent opened stays open. */
        if (atomic_load(&cgi_stats->r[i].once_at)) atomic_store(&cgi_stats->r[i].once_at, CGI_ONCE_BEFORE);
        atomic_store(&cgi_stats->r[i].once_base, 0);
        atomic_store(&cgi_stats->r[i].once_ran, 0);
        /* The parent's other threads, inside or waiting, are not the child's. */
        atomic_store(&cgi_stats->r[i].c.inside.now, 0);
        atomic_store(&cgi_stats->r[i].c.waiting.now, 0);
        /* A code slot another thread of the parent was naming: that thread is gone. */
        for (unsigned k = 0; k < CGI_STATS_MAX_CODES; k++) {
            cgi_code *code = &cgi_stats->r[i].code[k];
            if (atomic_load(&code->set) == CGI_CODE_WRITING) atomic_store(&code->set, CGI_CODE_FREE);
        }
    }
    for (uint32_t i = 0; i < n; i++)
        cgi_stats->r[i].used = 1;
    cgi_stats_fill_header(&cgi_stats->h);
    atomic_store(&cgi_stats->h.nrecords, n);
    /* The parent's stalls and threads are not the child's; the forking
     * thread gives its slot up (below). */
    pthread_mutex_t unlocked = PTHREAD_MUTEX_INITIALIZER;
    cgi_stall_lock = unlocked;
    if (!fresh) {
        /* The parent's pages, copied (a private region): cleared where the
         * parent wrote, and no further (untouched pages stay unfaulted). */
        for (unsigned i = 0; i < CGI_STATS_MAX_STALLS; i++)
            if (atomic_load(&cgi_stats->stall[i].valid)) memset(&cgi_stats->stall[i], 0, sizeof cgi_stats->stall[i]);
        memset(cgi_stats->slot, 0, atomic_load(&cgi_slots_used) * sizeof cgi_stats->slot[0]);
        /* The parent's hang is not the child's either, nor a page its
         * watchdog was half-way through writing (gen odd). */
        if (atomic_load(&cgi_stats->hang.gen) || atomic_load(&cgi_stats->hang.reports))
            memset(&cgi_stats->hang, 0, sizeof cgi_stats->hang);
        /* Nor are its late calls. */
        if (atomic_load(&cgi_stats->late.count)) memset(&cgi_stats->late, 0, sizeof cgi_stats->late);
    }
    /* The forking thread claims a slot again at its next counted call,
     * which goes the general path's way and starts the child's watchdog
     * (call.c); until then it is in no call (a child that execs at once
     * leaves no call in flight). */
    if (cgi_my_slot != &cgi_unclaimed_slot && cgi_my_slot != &cgi_spare_slot) pthread_setspecific(cgi_slot_key, NULL);
    cgi_slot_set(&cgi_unclaimed_slot);
}

/* Where each (api, name) has its record: record index + 1 (0: empty), open
 * addressing, in process memory (a fork copies it with the records it
 * points at; records are never removed). Registering a layer looked every
 * site up among all records before: quadratic, 15 M instructions for the
 * four installed layers' 900 sites, in the CLI and in every process of a
 * `callguard run` without --api. Caller holds cgi_cfg_lock. */
#define CGI_REC_HASH (2 * CGI_STATS_MAX_RECORDS)
_Static_assert((CGI_REC_HASH & (CGI_REC_HASH - 1)) == 0 && CGI_STATS_MAX_RECORDS < 65535,
               "a power of two, 16-bit indices");
static uint16_t cgi_rec_hash[CGI_REC_HASH];

static uint32_t cgi_rec_key(const char *api, const char *name)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (const unsigned char *c = (const unsigned char *)api; *c; c++)
        h = (h ^ *c) * 16777619u;
    h = (h ^ 0xff) * 16777619u; /* no byte of a name: api "ab" + "c" is not "a" + "bc" */
    for (const unsigned char *c = (const unsigned char *)name; *c; c++)
        h = (h ^ *c) * 16777619u;
    return h;
}

/* A bounded copy that always terminates (snprintf's "%s" without stdio). */
static void cgi_copy_name(char *dst, size_t cap, const char *src)
{
    size_t n = strnlen(src, cap - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* Caller holds cgi_cfg_lock. */
cg_counters *cgi_stats_record_site(const char *api, const char *name)
{
    static cgi_stats_record overflow; /* counts of sites past the last record: kept, not reported */
    uint32_t n = atomic_load(&cgi_stats->h.nrecords);
    /* A layer and a soname shim of one API in one process count into one row. */
    uint32_t h = cgi_rec_key(api, name) & (CGI_REC_HASH - 1);
    for (uint16_t v; (v = cgi_rec_hash[h]) != 0; h = (h + 1) & (CGI_REC_HASH - 1)) {
        cgi_stats_record *r = &cgi_stats->r[v - 1];
        if (v - 1u < n && strcmp(r->api, api) == 0 && strcmp(r->name, name) == 0) return &r->c;
    }
    if (n == CGI_STATS_MAX_RECORDS) return &overflow.c;
    cgi_stats_record *r = &cgi_stats->r[n];
    cgi_copy_name(r->api, sizeof r->api, api);
    cgi_copy_name(r->name, sizeof r->name, name);
    r->used = 1;
    cgi_rec_hash[h] = (uint16_t)(n + 1);
    atomic_store(&cgi_stats->h.nrecords, n + 1);
    return &r->c;
}

/* A row of its own for one instance of a site's calls (layer.h, cg_site_row): "NAME@TAG" of the site's API, with
 * the policy of the site's record (ctr). Caller holds cgi_cfg_lock. */
cg_counters *cgi_stats_record_row(const char *api, cg_counters *ctr, const char *tag)
{
    cgi_stats_record *base = (cgi_stats_record *)((char *)ctr - offsetof(cgi_stats_record, c));
    if ((char *)base < (char *)cgi_stats->r || (char *)base >= (char *)(cgi_stats->r + CGI_STATS_MAX_RECORDS))
        return NULL;
    char name[CGI_NAME_MAX];
    int n = snprintf(name, sizeof name, "%s@%s", base->name, tag);
    if (n < 0 || (size_t)n >= sizeof name || atomic_load(&cgi_stats->h.nrecords) == CGI_STATS_MAX_RECORDS) return NULL;
    cg_counters *c = cgi_stats_record_site(api, name);
    cgi_stats_record *r = (cgi_stats_record *)((char *)c - offsetof(cgi_stats_record, c));
    memcpy(r->domain, base->domain, sizeof r->domain);
    r->transition = base->transition, r->scope = base->scope, r->blocking = base->blocking;
    r->collective = base->collective, r->uncounted = base->uncounted;
    return c;
}

/* Mirrors a site's policy into its record so reports show it. Caller holds cgi_cfg_lock. */
/* The record of counters c in the region, or NULL (a site's own counters before the region). */
static cgi_stats_record *cgi_record_in_region(cg_counters *c)
{
    cgi_stats_record *r = (cgi_stats_record *)((char *)c - offsetof(cgi_stats_record, c));
    if ((char *)r < (char *)cgi_stats->r || (char *)r >= (char *)(cgi_stats->r + CGI_STATS_MAX_RECORDS)) return NULL;
    return r;
}

void cgi_stats_note_policy(cg_site *s)
{
    cgi_stats_record *r = cgi_record_in_region(s->ctr);
    if (!r) return;
    uint32_t d = atomic_load(&s->domain), scope = atomic_load(&s->scope);
    const char *domain = cgi_domain_name(d);
    /* Closed anew (not noted again while closed): its calls are numbered
     * from here. An open once-site keeps the domain it was serialized in. */
    if ((d & CGI_DOM_ID) && scope == CG_SCOPE_ONCE &&
        !(r->scope == CG_SCOPE_ONCE && !atomic_load(&r->once_at) && strcmp(r->domain, domain) == 0)) {
        atomic_store(&r->once_base, cgi_stats_calls(&r->c));
        atomic_store(&r->once_ran, 0);
    }
    if ((d & CGI_DOM_ID) || scope != CG_SCOPE_ONCE) {
        cgi_copy_name(r->domain, sizeof r->domain, domain);
        atomic_store_explicit(&r->once_at, 0, memory_order_relaxed);
    }
    r->transition = (uint8_t)atomic_load(&s->transition);
    r->scope = (uint8_t)scope;
    r->blocking = (uint8_t)atomic_load(&s->blocking);
    const cg_layer *l = s->layer;
    r->collective = l && l->defaults && s->index < l->nsites && l->defaults[s->index].collective;
    r->uncounted = (uint8_t)((r->uncounted & CGI_UNCOUNTED_CALLED) | (atomic_load(&s->uncounted) ? CGI_UNCOUNTED : 0));
}

void cgi_stats_note_uncounted_call(cg_site *s)
{
    cgi_stats_record *r = cgi_record_in_region(s->ctr);
    if (r) r->uncounted |= CGI_UNCOUNTED_CALLED;
}

uint64_t cgi_stats_once_ran(cg_counters *c)
{
    cgi_stats_record *r = cgi_record_in_region(c);
    return r ? atomic_fetch_add_explicit(&r->once_ran, 1, memory_order_relaxed) + 1 : 0;
}

void cgi_stats_note_open(cg_site *s, const char *domain, uint64_t ran)
{
    cgi_stats_record *r = cgi_record_in_region(s->ctr);
    if (!r || !ran || strcmp(r->domain, domain) != 0) return;
    uint64_t at = atomic_load(&r->once_base) + ran, was = atomic_load(&r->once_at);
    if (!was || at < was) atomic_store(&r->once_at, at);
}

static cgi_stats_record *cgi_record_of(cg_counters *c)
{
    return (cgi_stats_record *)((char *)c - offsetof(cgi_stats_record, c));
}

/* The layer that names each record's result codes (an address in this
 * process: kept out of the region, which other processes read). */
static const cg_layer *_Atomic cgi_rec_layer[CGI_STATS_MAX_RECORDS];

static int cgi_is_state(const cgi_stats_record *r, long code)
{
    uint32_t n = atomic_load_explicit(&r->nstates, memory_order_relaxed);
    for (uint32_t i = 0; i < n && i < CG_MAX_STATES; i++)
        if (atomic_load_explicit(&r->state[i], memory_order_relaxed) == code) return 1;
    return 0;
}

/* The slot of `code` at the record, claimed if it has none yet; NULL when
 * the slots are taken by other codes (the call is counted, not named). */
static cgi_code *cgi_code_slot(cgi_stats_record *r, const cg_layer *layer, int32_t code, int state)
{
    for (unsigned i = 0; i < CGI_STATS_MAX_CODES; i++) {
        cgi_code *k = &r->code[i];
        uint32_t set = atomic_load_explicit(&k->set, memory_order_acquire);
        if (set == CGI_CODE_FREE) {
            if (atomic_compare_exchange_strong_explicit(&k->set, &set, CGI_CODE_WRITING, memory_order_acquire,
                                                        memory_order_acquire)) {
                int saved = errno;
                k->code = code;
                const char *name = layer && layer->result_name ? layer->result_name(code) : NULL;
                if (name)
                    snprintf(k->name, sizeof k->name, "%s", name);
                else
                    snprintf(k->name, sizeof k->name, "%d", (int)code);
                atomic_store_explicit(&k->set, state ? CGI_CODE_STATE : CGI_CODE_ERROR, memory_order_release);
                errno = saved;
                return k;
            }
        }
        /* Another thread is naming this slot: a few instructions. A bound
         * all the same: a signal handler on that very thread may be here. */
        for (int spin = 0; set == CGI_CODE_WRITING && spin < 100000; spin++)
            set = atomic_load_explicit(&k->set, memory_order_acquire);
        if (set == CGI_CODE_WRITING) return NULL;
        if (k->code == code) return k;
    }
    return NULL;
}

void cgi_stats_set_states(cg_site *s, const int32_t *codes, unsigned n)
{
    if (!s->ctr) return;
    cgi_stats_record *r = cgi_record_of(s->ctr);
    cgi_rec_layer[r - cgi_stats->r] = s->layer;
    if (n > CG_MAX_STATES) n = CG_MAX_STATES;
    atomic_store(&r->nstates, 0);
    for (unsigned i = 0; i < n; i++)
        atomic_store(&r->state[i], codes[i]);
    atomic_store(&r->nstates, n);
    /* The first state is named in code[0] before any call returns it, so
     * that the wrapper can count it there itself (inline_state, below). */
    if (n && atomic_load(&r->code[0].set) == CGI_CODE_FREE) (void)cgi_code_slot(r, s->layer, codes[0], 1);
    /* Codes already counted are shown as what they are now; the calls
     * counted before stay in errors or states as they were. */
    for (unsigned i = 0; i < CGI_STATS_MAX_CODES; i++) {
        cgi_code *k = &r->code[i];
        uint32_t set = atomic_load(&k->set);
        if (set == CGI_CODE_ERROR || set == CGI_CODE_STATE)
            atomic_store(&k->set, cgi_is_state(r, k->code) ? CGI_CODE_STATE : CGI_CODE_ERROR);
    }
    int32_t inl = 0;
    if (atomic_load(&r->code[0].set) == CGI_CODE_STATE) inl = r->code[0].code ? r->code[0].code : CG_RESULT_ZERO;
    atomic_store(&r->inline_state, inl);
}

int32_t cgi_stats_inline_state(cg_counters *c) { return c ? atomic_load(&cgi_record_of(c)->inline_state) : 0; }

int cgi_stats_result(cg_counters *c, int err)
{
    if (!c) return 1;
    cgi_stats_record *r = cgi_record_of(c);
    int32_t code = err == CG_RESULT_ZERO ? 0 : err;
    int state = cgi_is_state(r, code);
    atomic_fetch_add_explicit(state ? &c->states : &c->errors, 1, memory_order_relaxed);
    cgi_code *k = cgi_code_slot(r, cgi_rec_layer[r - cgi_stats->r], code, state);
    if (k) atomic_fetch_add_explicit(&k->count, 1, memory_order_relaxed);
    return !state;
}

/* ---- thread slots ---------------------------------------------------------------
 * A slot is claimed with one compare-and-swap of its tid, once per thread,
 * and given back by a thread-specific destructor when the thread exits. */

static pthread_once_t cgi_slot_once = PTHREAD_ONCE_INIT;
static _Atomic unsigned long cgi_slot_pthread[CGI_STATS_MAX_SLOTS];

unsigned long cgi_slot_pthread_id(unsigned i)
{
    return i < CGI_STATS_MAX_SLOTS ? atomic_load_explicit(&cgi_slot_pthread[i], memory_order_relaxed) : 0;
}

void cgi_slot_end_run(cgi_slot *slot)
{
    cg_counters *last = atomic_load_explicit(&slot->last, memory_order_relaxed);
    if (!last) return;
    uint64_t n = cgi_slot_run_calls(slot);
    atomic_store_explicit(&slot->last, NULL, memory_order_relaxed);
    if (n && slot->owned) cgi_bump(&cgi_shard_at(last, slot->shard_off)->calls, n);
}

uint64_t cgi_stats_calls(const cg_counters *c)
{
    uint64_t n = cgi_ctr_calls(c);
    unsigned used = atomic_load(&cgi_slots_used);
    for (unsigned i = 0; i < used && i < CGI_STATS_MAX_SLOTS; i++)
        if (atomic_load_explicit(&cgi_stats->slot[i].last, memory_order_relaxed) == c)
            n += cgi_slot_run_calls(&cgi_stats->slot[i]);
    return n;
}

void cgi_stats_end_runs(void)
{
    unsigned used = atomic_load(&cgi_slots_used);
    for (unsigned i = 0; i < used && i < CGI_STATS_MAX_SLOTS; i++)
        atomic_store_explicit(&cgi_stats->slot[i].last, NULL, memory_order_relaxed);
}

static void cgi_slot_give_back(void *p)
{
    cgi_slot *slot = p;
    if (cgi_my_slot == slot) cgi_slot_set(&cgi_unclaimed_slot);
    cgi_slot_end_run(slot);
    atomic_store(&cgi_slot_pthread[slot - cgi_stats->slot], 0);
    atomic_store(&slot->counters, NULL);
    atomic_store(&slot->tid, 0);
}

static void cgi_slot_key_create(void) { pthread_key_create(&cgi_slot_key, cgi_slot_give_back); }

static void cgi_slot_fill(cgi_slot *slot)
{
    atomic_store(&slot->counters, NULL);
    atomic_store(&slot->waiting, 0);
    atomic_store(&slot->timed, 0);
    atomic_store(&slot->mark, 0);
    atomic_store(&slot->last, NULL);
    atomic_store(&slot->tid, (int32_t)syscall(SYS_gettid));
    memset(slot->thread, 0, sizeof slot->thread);
    prctl(PR_GET_NAME, slot->thread);
}

cgi_slot *cgi_slot_claim(void)
{
    cgi_clock_calibrate();
    atomic_store(&cgi_stats->h.tick_mult, cgi_clk.mult);
    pthread_once(&cgi_slot_once, cgi_slot_key_create);
    cgi_slot_set(&cgi_spare_slot);
    for (unsigned i = 0; i < CGI_STATS_MAX_SLOTS; i++) {
        int32_t free_tid = 0;
        cgi_slot *slot = &cgi_stats->slot[i];
        if (atomic_load_explicit(&slot->tid, memory_order_relaxed) == 0 &&
            atomic_compare_exchange_strong(&slot->tid, &free_tid, -1)) {
            cgi_slot_fill(slot);
            atomic_store(&cgi_slot_pthread[i], (unsigned long)pthread_self());
            slot->shard_off = (uint32_t)((i % CGI_SHARDS) * sizeof(cgi_shard));
            slot->owned = i < CGI_SHARDS;
            slot->calls_off = (uint32_t)(CGI_SHARD_BASE + slot->shard_off + offsetof(cgi_shard, calls));
            unsigned used = atomic_load(&cgi_slots_used);
            while (used < i + 1 && !atomic_compare_exchange_weak(&cgi_slots_used, &used, i + 1)) {}
            cgi_slot_set(slot);
            pthread_setspecific(cgi_slot_key, slot);
            return slot;
        }
    }
    atomic_fetch_add(&cgi_stats->h.threads_unslotted, 1);
    return cgi_my_slot;
}

/* ---- stalls -------------------------------------------------------------------- */

void cgi_stats_keep_stall(const cgi_stall *s)
{
    pthread_mutex_lock(&cgi_stall_lock);
    cgi_stall *v = cgi_stats->stall, *least = NULL;
    for (unsigned i = 0; i < CGI_STATS_MAX_STALLS; i++) {
        if (!atomic_load(&v[i].valid)) {
            least = &v[i];
            break;
        }
        if (!least || v[i].ns < least->ns) least = &v[i];
    }
    if (atomic_load(&least->valid)) {
        /* Full: the least of the kept and the new one, one is dropped. */
        atomic_fetch_add(&cgi_stats->h.stalls_dropped, 1);
        if (least->ns >= s->ns) least = NULL;
    }
    if (least) {
        atomic_store(&least->valid, 0);
        memcpy((char *)least + sizeof least->valid, (const char *)s + sizeof s->valid, sizeof *s - sizeof s->valid);
        atomic_store(&least->valid, 1);
    }
    pthread_mutex_unlock(&cgi_stall_lock);
}

void cgi_stats_note_quirk(const cgi_quirk_rec *q)
{
    pthread_mutex_lock(&cgi_stall_lock);
    for (unsigned i = 0; i < CGI_STATS_MAX_QUIRKS; i++) {
        cgi_quirk_rec *r = &cgi_stats->quirk[i];
        if (atomic_load(&r->valid)) continue;
        memcpy((char *)r + sizeof r->valid, (const char *)q + sizeof q->valid, sizeof *q - sizeof q->valid);
        atomic_store(&r->valid, 1);
        break;
    }
    pthread_mutex_unlock(&cgi_stall_lock);
}

void cgi_stats_note_probed(const char *api)
{
    pthread_mutex_lock(&cgi_stall_lock);
    char *list = cgi_stats->h.quirks_probed;
    size_t len = strnlen(list, sizeof cgi_stats->h.quirks_probed), n = strlen(api);
    if (len + (len != 0) + n < sizeof cgi_stats->h.quirks_probed) {
        if (len) list[len++] = ',';
        memcpy(list + len, api, n + 1);
    }
    pthread_mutex_unlock(&cgi_stall_lock);
}

/* cg_reset_stats: the stalls go with the counters (the slots stay: they say
 * what is happening now). */
void cgi_stats_reset_stalls(void)
{
    pthread_mutex_lock(&cgi_stall_lock);
    for (unsigned i = 0; i < CGI_STATS_MAX_STALLS; i++)
        atomic_store(&cgi_stats->stall[i].valid, 0);
    atomic_store(&cgi_stats->h.stalls_dropped, 0);
    pthread_mutex_unlock(&cgi_stall_lock);
}
