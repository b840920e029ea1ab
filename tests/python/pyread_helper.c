/* The frame reader (src/runtime/pyread.c, compiled into this library) as
 * tests/python/pyread.py calls it through ctypes: a thread parks in a
 * native call here while a plain C thread reads its Python frames, as the
 * watchdog will. Nothing here calls CPython. */
#define _GNU_SOURCE
#include "../../src/runtime/pynames.h"
#include "../../src/runtime/pyread.h"
#include "../../src/runtime/selfread.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CGT_EXPORT __attribute__((visibility("default")))

enum { MOST = 12000 };
static cgi_pyframe frames[MOST];
static int count, result;
static char text[MOST * 64 + CGI_PYREAD_FILE];

CGT_EXPORT int cgt_prepare(void) { return cgi_pyread_prepare(); }
CGT_EXPORT const char *cgt_result_name(int r) { return cgi_pyread_result_name(r); }
/* How the reader reads now: 0 process_vm_readv, 1 /proc/self/mem (selfread.h). */
CGT_EXPORT int cgt_way(void) { return cgi_selfread_way(); }

typedef struct target {
    pid_t tid;
    unsigned long pthread_id;
    int max;
} target;

static void *read_target(void *arg)
{
    const target *t = arg;
    result = cgi_pyread_frames(t->tid, t->pthread_id, frames, t->max, &count);
    return NULL;
}

/* Reads the calling thread's frames from a C thread while this one waits
 * for it (in pthread_join: a native call, GIL held or not as ctypes
 * called). Returns the result; cgt_text() gives the frames. */
CGT_EXPORT int cgt_read_self(int max)
{
    target t = {gettid(), (unsigned long)pthread_self(), max < MOST ? max : MOST};
    pthread_t reader;
    if (pthread_create(&reader, NULL, read_target, &t) != 0) return -1;
    pthread_join(reader, NULL);
    return result;
}

static int gil;
static void *read_gil(void *arg)
{
    const target *t = arg;
    gil = cgi_pyread_gil_held(t->tid, t->pthread_id);
    return NULL;
}

/* Whether the calling thread holds the GIL, as a C thread reads it while
 * this one waits in pthread_join (ctypes.PyDLL: it does; CDLL: it does
 * not). 1, 0 or -1 (cannot be told). */
CGT_EXPORT int cgt_gil_self(void)
{
    target t = {gettid(), (unsigned long)pthread_self(), 0};
    pthread_t reader;
    if (pthread_create(&reader, NULL, read_gil, &t) != 0) return -2;
    pthread_join(reader, NULL);
    return gil;
}

/* One line a frame, innermost first: "LINE FUNCTION FILE". */
CGT_EXPORT const char *cgt_text(void)
{
    size_t o = 0;
    text[0] = 0;
    for (int i = 0; i < count && o < sizeof text - 400; i++)
        o += (size_t)snprintf(text + o, sizeof text - o, "%d %s %s\n", frames[i].line, frames[i].function,
                              frames[i].file);
    return text;
}

/* Every thread state and threading's names of them, as a C thread lists
 * them while the calling thread waits in pthread_join. */
static cgi_pythread listed[256];
static cgi_pyname named[256];
static int nlisted, nnamed, listed_result;
static char stdlib_dir[200];

static void *list_threads(void *arg)
{
    (void)arg;
    listed_result = cgi_pyread_threads(listed, 256, &nlisted);
    nnamed = -1;
    if (listed_result == CGI_PYREAD_OK && nlisted > 0 &&
        cgi_pynames_read(listed[0].interp, named, 256, &nnamed, stdlib_dir, sizeof stdlib_dir) != 0)
        nnamed = -1;
    return NULL;
}

/* Lines "T IDENT TID" for each thread state, "N IDENT NATIVE_ID NAME" for
 * each name, "S STDLIB" last; NULL where the list could not be read. */
CGT_EXPORT const char *cgt_threads(void)
{
    pthread_t reader;
    if (pthread_create(&reader, NULL, list_threads, NULL) != 0) return NULL;
    pthread_join(reader, NULL);
    if (listed_result != CGI_PYREAD_OK) return NULL;
    size_t o = 0;
    for (int i = 0; i < nlisted; i++)
        o += (size_t)snprintf(text + o, sizeof text - o, "T %lu %d\n", listed[i].ident, (int)listed[i].tid);
    for (int i = 0; i < nnamed; i++)
        o += (size_t)snprintf(text + o, sizeof text - o, "N %lu %d %s\n", named[i].ident, (int)named[i].native_id,
                              named[i].name);
    snprintf(text + o, sizeof text - o, "S %s\n", nnamed >= 0 ? stdlib_dir : "(no names)");
    return text;
}

/* A thread made by C that never ran Python, read while it waits. */
static atomic_int c_thread_go;
static void *c_thread(void *arg)
{
    *(pid_t *)arg = gettid();
    while (!atomic_load(&c_thread_go))
        usleep(1000);
    return NULL;
}

CGT_EXPORT int cgt_read_c_thread(void)
{
    pthread_t th;
    _Atomic pid_t tid = 0;
    atomic_store(&c_thread_go, 0);
    if (pthread_create(&th, NULL, c_thread, (void *)&tid) != 0) return -1;
    while (!atomic_load(&tid))
        usleep(1000);
    target t = {atomic_load(&tid), (unsigned long)th, 16};
    read_target(&t);
    atomic_store(&c_thread_go, 1);
    pthread_join(th, NULL);
    return result;
}

/* The hammer: a C thread reads one thread over and over until stopped,
 * while that thread runs and ends. Each answer that says OK must be right:
 * every frame in the test's file or in threading.py, and a frame of the
 * function `busy` on one of its lines [lo, hi]. */
static struct {
    target t;
    char file[CGI_PYREAD_FILE];
    int lo, hi;
    atomic_int stop;
    atomic_int counts[8];
    int wrong;
    char first_wrong[512];
    pthread_t th;
    cgi_pyframe frames[64];
} hammer;

static int right(const cgi_pyframe *f)
{
    const char *slash = strrchr(f->file, '/');
    int ours = strcmp(f->file, hammer.file) == 0, threading = slash && strcmp(slash, "/threading.py") == 0;
    if (!ours && !threading) return 0;
    if (ours && strcmp(f->function, "busy") == 0) return f->line >= hammer.lo && f->line <= hammer.hi;
    return f->function[0] != 0;
}

static void *hammer_run(void *arg)
{
    (void)arg;
    while (!atomic_load(&hammer.stop)) {
        int n, r = cgi_pyread_frames(hammer.t.tid, hammer.t.pthread_id, hammer.frames, 64, &n);
        atomic_fetch_add(&hammer.counts[r >= 0 && r < 8 ? r : 7], 1);
        for (int i = 0; r == CGI_PYREAD_OK && i < n; i++)
            if (!right(&hammer.frames[i]) && hammer.wrong++ == 0)
                snprintf(hammer.first_wrong, sizeof hammer.first_wrong, "%d %s %s", hammer.frames[i].line,
                         hammer.frames[i].function, hammer.frames[i].file);
    }
    return NULL;
}

CGT_EXPORT int cgt_hammer_start(int tid, unsigned long pthread_id, const char *file, int lo, int hi)
{
    for (int i = 0; i < 8; i++)
        atomic_store(&hammer.counts[i], 0);
    hammer.t = (target){tid, pthread_id, 64};
    snprintf(hammer.file, sizeof hammer.file, "%s", file);
    hammer.lo = lo, hammer.hi = hi, hammer.wrong = 0;
    atomic_store(&hammer.stop, 0);
    return pthread_create(&hammer.th, NULL, hammer_run, NULL);
}

/* Stops the hammer; `counts` gets the number of answers by result. Returns
 * the number of frames that were wrong (cgt_first_wrong says the first). */
CGT_EXPORT int cgt_hammer_stop(int *counts)
{
    atomic_store(&hammer.stop, 1);
    pthread_join(hammer.th, NULL);
    for (int i = 0; i < 8; i++)
        counts[i] = atomic_load(&hammer.counts[i]);
    return hammer.wrong;
}

/* How many answers have been `result` so far, while the hammer runs. */
CGT_EXPORT int cgt_hammer_count(int result) { return atomic_load(&hammer.counts[result & 7]); }

CGT_EXPORT const char *cgt_first_wrong(void) { return hammer.first_wrong; }
