/* Every Python thread's stack, on a reader's request (pystacks.h).
 *
 * Runs on the watchdog's thread only, when `callguard status` asked: it
 * never calls into the interpreter and takes no lock the program can hold
 * (pyread.h, pynames.h read the interpreter's memory through selfread.h),
 * and writes with pwrite into the threads area, which the reader allocated
 * before asking (posix_fallocate: a full disk fails there, in the reader,
 * never as SIGBUS here). Its buffers are static, untouched until the first
 * request: nothing is allocated, and a process nobody asks keeps no page
 * of them.
 *
 * A thread's name is threading's (pynames.h), else its OS thread's
 * (/proc/self/task/TID/comm), else none. Its OS thread id is the thread
 * state's (3.11+), else threading's Thread._native_id, else the thread
 * slot's of a thread that made a guarded call (3.9 and 3.10 keep only the
 * pthread id). Its stack is read at most three times while it keeps
 * changing (a thread running Python code), then given as unknown. */
#define _GNU_SOURCE
#include "pystacks.h"

#include "pynames.h"
#include "pyread.h"
#include "selfread.h"
#include "stats.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { MAX_THREADS = 256, READS = 3 };

/* A record as written: its head, then up to CGI_THREADS_MAX_DEPTH frames
 * and the user's frame past them, each at most 8 + file + function + 8. */
#define REC_BYTES                                                                                                      \
    (sizeof(cgi_thread_rec) +                                                                                          \
     (CGI_THREADS_MAX_DEPTH + 1) * (sizeof(cgi_thread_frame) + CGI_PYREAD_FILE + CGI_PYREAD_NAME + 8))

static cgi_pythread ps_threads[MAX_THREADS];
static cgi_pyname ps_names[MAX_THREADS];
static cgi_pyframe ps_frames[CGI_THREADS_MAX_DEPTH];
static _Alignas(8) unsigned char ps_rec[REC_BYTES];

/* Is `file` the user's own code: not the import machinery's, not in the
 * standard library (its folder: stdlib, else a ".../lib/python3.N/"), not
 * under a site-packages or dist-packages folder? */
static int user_file(const char *file, const char *stdlib)
{
    if (file[0] == '<') return strncmp(file, "<frozen ", 8) != 0; /* "<string>", "<stdin>": the user's */
    if (strstr(file, "/site-packages/") || strstr(file, "/dist-packages/")) return 0;
    size_t n = strlen(stdlib);
    if (n) return strncmp(file, stdlib, n) != 0 || file[n] != '/';
    const char *p = strstr(file, "/lib/python3.");
    if (!p) return 1;
    for (p += 13; *p >= '0' && *p <= '9'; p++) {}
    return *p != '/';
}

static int first_user(const cgi_pyframe *f, int n, const char *stdlib)
{
    for (int i = 0; i < n; i++)
        if (user_file(f[i].file, stdlib)) return i;
    return -1;
}

/* Appends frame f to the record at *off; 0, or -1 with no room. */
static int put_frame(size_t *off, const cgi_pyframe *f)
{
    size_t lf = strnlen(f->file, sizeof f->file - 1), ln = strnlen(f->function, sizeof f->function - 1);
    size_t size = (sizeof(cgi_thread_frame) + lf + 1 + ln + 1 + 7) / 8 * 8;
    if (*off + size > sizeof ps_rec) return -1;
    cgi_thread_frame h = {.line = f->line, .file_len = (uint16_t)lf, .func_len = (uint16_t)ln};
    unsigned char *p = ps_rec + *off;
    memset(p, 0, size);
    memcpy(p, &h, sizeof h);
    memcpy(p + sizeof h, f->file, lf);
    memcpy(p + sizeof h + lf + 1, f->function, ln);
    *off += size;
    return 0;
}

/* The stack of t into the record after its head: `depth` frames, and the
 * user's frame past them when the first `depth` have none (read again
 * whole, at most CGI_THREADS_MAX_DEPTH). Returns the record's size. */
static size_t put_stack(cgi_thread_rec *r, const cgi_pythread *t, int depth, const char *stdlib)
{
    int n = 0, more = 0, res = CGI_PYREAD_CHANGED;
    for (int i = 0; i < READS && res == CGI_PYREAD_CHANGED; i++)
        res = cgi_pyread_stack(t, ps_frames, depth, &n, &more);
    int user = res == CGI_PYREAD_OK ? first_user(ps_frames, n, stdlib) : -1, deep = n;
    if (res == CGI_PYREAD_OK && user < 0 && more && depth < CGI_THREADS_MAX_DEPTH) {
        int m = 0, more2 = 0;
        if (cgi_pyread_stack(t, ps_frames, CGI_THREADS_MAX_DEPTH, &m, &more2) == CGI_PYREAD_OK) {
            /* The whole stack, read at one moment: its first frames replace the first read's. */
            deep = m, n = m < depth ? m : depth, more = m > depth || more2;
            user = first_user(ps_frames, m, stdlib);
        }
    }
    r->result = res;
    r->more = (uint32_t)more;
    r->user = -1;
    size_t off = sizeof *r;
    int written = 0;
    for (; res == CGI_PYREAD_OK && written < n && put_frame(&off, &ps_frames[written]) == 0; written++) {}
    if (user >= 0 && user < written) r->user = user, r->user_depth = (uint32_t)user;
    if (user >= written && user < deep && put_frame(&off, &ps_frames[user]) == 0)
        r->user = written++, r->user_depth = (uint32_t)user;
    r->nframes = (uint32_t)written;
    return off;
}

/* t's OS thread id: its own, threading's, or its slot's; 0 when unknown. */
static pid_t tid_of(const cgi_pythread *t, const cgi_pyname *name)
{
    if (t->tid > 0) return t->tid;
    if (name && name->native_id > 0) return name->native_id;
    unsigned used = atomic_load(&cgi_slots_used);
    for (unsigned i = 0; i < used && i < CGI_STATS_MAX_SLOTS; i++)
        if (t->ident && cgi_slot_pthread_id(i) == t->ident) {
            int32_t tid = atomic_load_explicit(&cgi_stats->slot[i].tid, memory_order_relaxed);
            return tid > 0 ? tid : 0;
        }
    return 0;
}

/* The OS thread's name (/proc/self/task/TID/comm); 0, or -1. */
static int os_name(pid_t tid, char *out, size_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/comm", (int)tid);
    int fd = tid > 0 ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    if (fd < 0) return -1;
    ssize_t n = read(fd, out, cap - 1);
    close(fd);
    if (n <= 0) return -1;
    out[n] = '\0';
    out[strcspn(out, "\n")] = '\0';
    return 0;
}

static const cgi_pyname *name_of(const cgi_pythread *t, int nnames)
{
    for (int i = 0; i < nnames; i++)
        if (ps_names[i].ident == t->ident) return &ps_names[i];
    return NULL;
}

/* One thread's record, built in ps_rec; its size. */
static size_t one_thread(const cgi_pythread *t, int nnames, int depth, const char *stdlib)
{
    cgi_thread_rec *r = (cgi_thread_rec *)ps_rec;
    memset(r, 0, sizeof *r);
    const cgi_pyname *name = name_of(t, nnames);
    r->tid = tid_of(t, name);
    r->ident = t->ident;
    if (name) {
        snprintf(r->name, sizeof r->name, "%s", name->name);
        r->name_from = CGI_THREAD_NAME_THREADING;
    } else if (os_name(r->tid, r->name, sizeof r->name) == 0) {
        r->name_from = CGI_THREAD_NAME_OS;
    }
    r->gil = cgi_pyread_gil_of(t);
    size_t size = put_stack(r, t, depth, stdlib);
    r->size = (uint32_t)size;
    return size;
}

/* The names of every interpreter's threads (most programs have one). */
static int read_names(int nthreads, char *stdlib, size_t cap)
{
    int n = 0;
    for (int i = 0; i < nthreads && n < MAX_THREADS; i++) {
        int seen = 0, got = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = ps_threads[j].interp == ps_threads[i].interp;
        if (seen) continue;
        char dir[sizeof cgi_stats->h.threads.stdlib];
        if (cgi_pynames_read(ps_threads[i].interp, ps_names + n, MAX_THREADS - n, &got, dir, sizeof dir) != 0) continue;
        if (!stdlib[0]) snprintf(stdlib, cap, "%s", dir);
        n += got;
    }
    return n;
}

/* Every thread into the area of fd; the head's counts into a. */
static int write_threads(int fd, int depth, cgi_threads_answer *a)
{
    int n = 0, res = CGI_PYREAD_CHANGED;
    for (int i = 0; i < READS && res == CGI_PYREAD_CHANGED; i++)
        res = cgi_pyread_threads(ps_threads, MAX_THREADS, &n);
    if (res == CGI_PYREAD_CHANGED) return CGI_THREADS_CHANGED;
    if (res == CGI_PYREAD_NO_ACCESS) return CGI_THREADS_NO_ACCESS;
    if (res == CGI_PYREAD_UNSUPPORTED) return CGI_THREADS_UNSUPPORTED;
    if (res != CGI_PYREAD_OK) return CGI_THREADS_NO_PYTHON;
    int nnames = read_names(n, a->stdlib, sizeof a->stdlib);
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        size_t size = one_thread(&ps_threads[i], nnames, depth, a->stdlib);
        if (off + size > CGI_THREADS_BYTES) {
            a->left_out++;
            continue;
        }
        if (pwrite(fd, ps_rec, size, (off_t)(CGI_THREADS_OFF + off)) != (ssize_t)size) return CGI_THREADS_NO_ROOM;
        off += size, a->nthreads++;
    }
    a->bytes = (uint32_t)off;
    return CGI_THREADS_OK;
}

void cgi_pystacks_answer(uint32_t ask)
{
    cgi_threads_answer *a = &cgi_stats->h.threads;
    uint64_t t0 = cgi_now_ns();
    uint32_t depth = atomic_load(&a->depth);
    if (depth < 1) depth = 1;
    if (depth > CGI_THREADS_MAX_DEPTH) depth = CGI_THREADS_MAX_DEPTH;
    int fd = cgi_stats_open_own(), result = CGI_THREADS_NO_ROOM;
    struct stat st;
    atomic_fetch_add(&a->gen, 1); /* odd: being written */
    a->nthreads = a->left_out = a->bytes = 0;
    a->stdlib[0] = '\0';
    if (fd >= 0 && fstat(fd, &st) == 0 && (uint64_t)st.st_size >= CGI_THREADS_OFF + CGI_THREADS_BYTES)
        result = write_threads(fd, (int)depth, a);
    if (result != CGI_THREADS_OK) a->nthreads = a->bytes = 0;
    if (fd >= 0) close(fd);
    a->result = result;
    uint64_t t1 = cgi_now_ns();
    a->took_ns = t1 - t0;
    a->at_ns = t1 > cgi_stats->h.start_mono_ns ? t1 - cgi_stats->h.start_mono_ns : 0;
    atomic_fetch_add(&a->gen, 1); /* even: whole */
    atomic_store_explicit(&a->done, ask, memory_order_release);
}
