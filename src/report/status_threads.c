/* Every Python thread of a running process, for `callguard status`
 * (internal.h, cgi_status_threads_*; src/common/stats_file.h, "the threads
 * area"). The process reads nothing until asked: this writes a request
 * into its statistics file (the caller's own file, opened read-write
 * without following a link), after allocating the threads area there, and
 * the process's watchdog answers at its next tick. The reader waits for
 * every process at once, at most `wait_ns`, then reads what each
 * answered: each thread's name, OS thread id, GIL and stack, the user's
 * own frame marked. A process that does not answer is said to, never
 * waited for longer. */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static uint64_t cgi_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#define CGI_ANSWER_OFF offsetof(cgi_stats_header, threads)

static int cgi_pread_answer(int fd, cgi_threads_answer *a)
{
    return cgi_pread_full(fd, a, sizeof *a, (off_t)CGI_ANSWER_OFF) == sizeof *a ? 0 : -1;
}

/* Opens path read-write (the caller's own regular file, a statistics
 * file of this version), allocates its threads area and asks; t->why
 * says why not. */
static void cgi_threads_ask(cgi_status_threads *t, const char *path, uint32_t depth)
{
    int fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW);
    struct stat st;
    cgi_stats_header h;
    int e;
    t->fd = -1;
    if (fd < 0)
        snprintf(t->why, sizeof t->why, "cannot open its file to ask: %s", strerror(errno));
    else if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid())
        snprintf(t->why, sizeof t->why, "its file is not yours: not asked");
    else if (cgi_pread_full(fd, &h, sizeof h, 0) != sizeof h || memcmp(h.magic, CGI_STATS_MAGIC, 8) != 0 ||
             h.version != CGI_STATS_VERSION)
        snprintf(t->why, sizeof t->why, "not a statistics file of this version: not asked");
    else if ((e = posix_fallocate(fd, (off_t)CGI_THREADS_OFF, CGI_THREADS_BYTES)) != 0)
        snprintf(t->why, sizeof t->why, "no room for its answer (%u KB): %s", CGI_THREADS_BYTES / 1024, strerror(e));
    else {
        /* The depth first: the watchdog reads it once it sees the new number. */
        uint32_t ask = atomic_load(&h.threads.ask) + 1;
        ask += !ask;
        if (pwrite(fd, &depth, sizeof depth, (off_t)(CGI_ANSWER_OFF + offsetof(cgi_threads_answer, depth))) ==
                sizeof depth &&
            pwrite(fd, &ask, sizeof ask, (off_t)(CGI_ANSWER_OFF + offsetof(cgi_threads_answer, ask))) == sizeof ask) {
            t->fd = fd, t->ask = ask, t->asked = 1, t->asked_at_ns = cgi_mono_ns();
            return;
        }
        snprintf(t->why, sizeof t->why, "cannot write the request: %s", strerror(errno));
    }
    if (fd >= 0) close(fd);
}

cgi_status_threads *cgi_status_threads_ask(const char *path, int depth)
{
    cgi_status_threads *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->depth = depth < 1 ? 1 : depth > CGI_THREADS_MAX_DEPTH ? CGI_THREADS_MAX_DEPTH : (uint32_t)depth;
    cgi_threads_ask(t, path, t->depth);
    return t;
}

void cgi_status_threads_free(cgi_status_threads *t)
{
    if (!t) return;
    if (t->fd >= 0) close(t->fd);
    for (size_t i = 0; i < t->n; i++)
        free(t->v[i].frames);
    free(t->v), free(t->area), free(t);
}

/* ---- the answer ------------------------------------------------------------- */

/* The frames of a record at area[off..end): checked, each string ended
 * within it. 0, or -1 where the record is malformed. */
static int cgi_threads_frames(cgi_status_thread *th, const unsigned char *area, size_t off, size_t end)
{
    uint32_t n = th->rec.nframes;
    if (n > CGI_THREADS_MAX_DEPTH + 1) return -1;
    th->frames = calloc(n ? n : 1, sizeof *th->frames);
    if (!th->frames) return -1;
    for (uint32_t k = 0; k < n; k++) {
        cgi_thread_frame f;
        if (off + sizeof f > end) return -1;
        memcpy(&f, area + off, sizeof f);
        size_t len = (sizeof f + f.file_len + 1u + f.func_len + 1u + 7) / 8 * 8;
        const char *file = (const char *)area + off + sizeof f, *func = file + f.file_len + 1;
        if (off + len > end || file[f.file_len] || func[f.func_len]) return -1;
        th->frames[k] = (cgi_status_frame){.line = f.line < -1 ? -1 : f.line, .file = file, .func = func};
        off += len;
    }
    int32_t u = th->rec.user;
    if (u < -1 || u >= (int32_t)n) th->rec.user = -1;
    /* The user's frame past the depth asked: the last one, deeper than its place here. */
    th->extra = th->rec.user >= 0 && th->rec.user == (int32_t)n - 1 && th->rec.user_depth > (uint32_t)th->rec.user;
    return 0;
}

/* The records of the area (t->area, t->head.bytes), each checked; those
 * after a malformed one are left out. */
static int cgi_threads_parse(cgi_status_threads *t)
{
    size_t bytes = t->head.bytes, off = 0, cap = bytes / sizeof(cgi_thread_rec);
    t->v = calloc(cap ? cap : 1, sizeof *t->v);
    if (!t->v) return -1;
    for (uint32_t i = 0; i < t->head.nthreads && t->n < cap; i++) {
        cgi_status_thread *th = &t->v[t->n];
        if (off + sizeof th->rec > bytes) break;
        memcpy(&th->rec, t->area + off, sizeof th->rec);
        uint32_t size = th->rec.size;
        if (size < sizeof th->rec || size % 8 || off + size > bytes) break;
        th->rec.name[sizeof th->rec.name - 1] = '\0';
        if (th->rec.name_from > CGI_THREAD_NAME_OS) th->rec.name_from = CGI_THREAD_NAME_NONE;
        if (th->rec.gil < -1 || th->rec.gil > 1) th->rec.gil = -1;
        if (th->rec.tid < 0) th->rec.tid = 0;
        t->n++;
        if (cgi_threads_frames(th, t->area, off + sizeof th->rec, off + size) != 0) {
            th->rec.nframes = 0, th->rec.user = -1, th->rec.result = -1; /* not a stack that can be shown */
            break;
        }
        off += size;
    }
    return 0;
}

/* Reads the answer, whole: its head and records between two looks at
 * `gen` that agree. 0, or -1 when it kept changing or is not ours. */
static int cgi_threads_read(cgi_status_threads *t)
{
    for (int tries = 0; tries < 50; tries++) {
        cgi_threads_answer a, b;
        if (cgi_pread_answer(t->fd, &a) != 0) return -1;
        if (a.gen & 1) {
            nanosleep(&(struct timespec){0, 1000000}, NULL);
            continue;
        }
        uint32_t bytes = a.bytes > CGI_THREADS_BYTES ? CGI_THREADS_BYTES : a.bytes;
        free(t->area);
        t->area = malloc(bytes ? bytes : 1);
        if (!t->area) return -1;
        if (cgi_pread_full(t->fd, t->area, bytes, (off_t)CGI_THREADS_OFF) != bytes) bytes = 0;
        if (cgi_pread_answer(t->fd, &b) != 0 || b.gen != a.gen) continue;
        t->head = a;
        t->head.bytes = bytes;
        t->head.stdlib[sizeof t->head.stdlib - 1] = '\0';
        if (t->head.result < 0 || t->head.result > CGI_THREADS_UNSUPPORTED) t->head.result = CGI_THREADS_CHANGED;
        if (t->head.result != CGI_THREADS_OK) t->head.nthreads = 0;
        return cgi_threads_parse(t);
    }
    return -1;
}

void cgi_status_threads_wait(cgi_status_threads *const *v, size_t n, uint64_t wait_ns)
{
    uint64_t start = cgi_mono_ns();
    for (size_t left = n;;) {
        left = 0;
        for (size_t i = 0; i < n; i++) {
            cgi_status_threads *t = v[i];
            if (!t || !t->asked || t->answered || t->waited_ns) continue;
            cgi_threads_answer a;
            if (cgi_pread_answer(t->fd, &a) == 0 && (int32_t)(atomic_load(&a.done) - t->ask) >= 0) {
                t->answered = 1;
                t->waited_ns = cgi_mono_ns() - t->asked_at_ns;
                if (cgi_threads_read(t) != 0)
                    t->answered = 0, snprintf(t->why, sizeof t->why, "its answer kept changing");
            } else {
                left++;
            }
        }
        uint64_t now = cgi_mono_ns();
        if (!left || now - start >= wait_ns) break;
        nanosleep(&(struct timespec){0, 2000000}, NULL);
    }
    uint64_t now = cgi_mono_ns();
    for (size_t i = 0; i < n; i++) {
        cgi_status_threads *t = v[i];
        if (t && t->asked && !t->answered && !t->waited_ns) {
            t->waited_ns = now - t->asked_at_ns;
            snprintf(t->why, sizeof t->why,
                     "no answer within %.1f s (its watchdog did not look: it runs none, or hangs)",
                     (double)wait_ns / 1e9);
        }
    }
}

/* ---- text and JSON ----------------------------------------------------------- */

static const char *const cgi_threads_results[] = {
    "ok",
    "no Python interpreter",
    "its memory could not be read",
    "its threads kept changing while read",
    "no room for the answer in its file",
    "a CPython whose layout this callguard does not know (it reads 3.9 to 3.14)"};

/* The guarded call thread `tid` is in, from the process's calls in flight. */
static const cgi_hang_call *cgi_threads_call_of(const cgi_status_proc *p, int32_t tid)
{
    for (unsigned i = 0; tid > 0 && i < p->ncalls; i++)
        if (p->call[i].tid == tid) return &p->call[i];
    return NULL;
}

static void cgi_frame_text(FILE *out, const cgi_status_frame *f)
{
    cgi_text_str(out, f->file, (size_t)-1);
    if (f->line >= 0) fprintf(out, ":%d", f->line);
    fputs(" in ", out);
    cgi_text_str(out, f->func, (size_t)-1);
}

static void cgi_thread_head_text(FILE *out, const cgi_status_thread *th, const cgi_status_proc *p)
{
    fputs("    thread ", out);
    if (th->rec.name_from == CGI_THREAD_NAME_NONE) {
        fputs("(name unknown)", out);
    } else {
        fputc('"', out);
        CGI_TEXT_FIELD(out, th->rec.name);
        fputs(th->rec.name_from == CGI_THREAD_NAME_OS ? "\" (the OS thread's name)" : "\"", out);
    }
    th->rec.tid ? fprintf(out, " tid %d", th->rec.tid) : fputs(" tid unknown", out);
    fputs(th->rec.gil == 1 ? ", holding the GIL" : th->rec.gil == 0 ? ", GIL not held" : ", GIL unknown", out);
    const cgi_hang_call *c = cgi_threads_call_of(p, th->rec.tid);
    if (c) {
        fprintf(out, ", %s ", c->waiting ? "waiting for the lock of" : "in");
        CGI_TEXT_FIELD(out, c->api);
        fputc(' ', out);
        CGI_TEXT_FIELD(out, c->name);
        fprintf(out, " for %.1f s", (double)c->age_ns / 1e9);
    }
    if (th->rec.result != 0) {
        /* pyread.h's results: 4 no such thread, 5 changed while read. */
        fputs(th->rec.result == 5   ? ": stack unknown (it changed while read: running Python code)\n"
              : th->rec.result == 4 ? ": stack unknown (the thread ended while read)\n"
                                    : ": stack unknown\n",
              out);
        return;
    }
    if (!th->rec.nframes) {
        fputs(": in no Python code\n", out);
        return;
    }
    fputs(": at ", out);
    cgi_frame_text(out, &th->frames[0]);
    if (th->rec.user > 0) {
        fputs(", from ", out);
        cgi_frame_text(out, &th->frames[th->rec.user]);
    }
    fputc('\n', out);
}

static void cgi_thread_text(FILE *out, const cgi_status_thread *th, const cgi_status_proc *p)
{
    cgi_thread_head_text(out, th, p);
    uint32_t shown = th->rec.nframes - (uint32_t)th->extra;
    for (uint32_t k = 0; k < shown; k++) {
        fputs("      ", out);
        cgi_frame_text(out, &th->frames[k]);
        fputs((int32_t)k == th->rec.user ? "  <- yours\n" : "\n", out);
    }
    if (th->rec.more) fputs("      ... more frames (callguard status --depth N or --all shows them)\n", out);
    if (th->extra) {
        fputs("      ", out);
        cgi_frame_text(out, &th->frames[shown]);
        fprintf(out, "  <- yours, frame %u\n", th->rec.user_depth);
    }
}

void cgi_status_threads_text(FILE *out, const cgi_status_proc *p)
{
    const cgi_status_threads *t = p->threads;
    if (!t) return;
    if (!t->answered) {
        fputs("    Python threads: ", out);
        cgi_text_str(out, t->why, sizeof t->why);
        fputc('\n', out);
        return;
    }
    if (t->head.result == CGI_THREADS_NO_PYTHON) return; /* a program of another language: nothing to say */
    if (t->head.result != CGI_THREADS_OK) {
        fprintf(out, "    Python threads: unknown: %s\n", cgi_threads_results[t->head.result]);
        return;
    }
    fprintf(out, "    Python threads: %zu, answered in %.1f ms (read in %.1f ms)", t->n, (double)t->waited_ns / 1e6,
            (double)t->head.took_ns / 1e6);
    if (t->head.left_out) fprintf(out, "; %u more left out: no room", t->head.left_out);
    fputc('\n', out);
    for (size_t i = 0; i < t->n; i++)
        cgi_thread_text(out, &t->v[i], p);
}

/* {"file", "line", "function"}, and the frame's "depth" in its stack where depth >= 0. */
static void cgi_frame_json(FILE *out, const cgi_status_frame *f, long depth)
{
    fputs("{\"file\": ", out);
    cgi_json_str(out, f->file);
    fputs(", \"line\": ", out);
    f->line >= 0 ? fprintf(out, "%d", f->line) : fputs("null", out);
    cgi_json_field_str(out, "function", f->func);
    if (depth >= 0) fprintf(out, ", \"depth\": %ld", depth);
    fputc('}', out);
}

static void cgi_thread_json(FILE *out, const cgi_status_thread *th, const cgi_status_proc *p)
{
    static const char *const from[] = {"none", "threading", "os"};
    fputs("{\"name\": ", out);
    cgi_json_str_or_null(out, th->rec.name_from == CGI_THREAD_NAME_NONE ? NULL : th->rec.name);
    cgi_json_field_str(out, "name_from", from[th->rec.name_from]);
    fputs(", \"tid\": ", out);
    th->rec.tid ? fprintf(out, "%d", th->rec.tid) : fputs("null", out);
    fprintf(out, ", \"ident\": %" PRIu64 ", \"gil\": %s", th->rec.ident,
            th->rec.gil == 1   ? "true"
            : th->rec.gil == 0 ? "false"
                               : "null");
    /* The stack: null when it could not be read (it kept changing). */
    fputs(", \"stack\": ", out);
    uint32_t shown = th->rec.nframes - (uint32_t)th->extra;
    fputs(th->rec.result != 0 ? "null" : "[", out);
    for (uint32_t k = 0; th->rec.result == 0 && k < shown; k++) {
        if (k) fputs(", ", out);
        cgi_frame_json(out, &th->frames[k], -1);
    }
    if (th->rec.result == 0) fputc(']', out);
    fprintf(out, ", \"more_frames\": %s, \"user_frame\": ", th->rec.more ? "true" : "false");
    if (th->rec.user >= 0)
        cgi_frame_json(out, &th->frames[th->rec.user], (long)th->rec.user_depth);
    else
        fputs("null", out);
    const cgi_hang_call *c = cgi_threads_call_of(p, th->rec.tid);
    fputs(", \"in_call\": ", out);
    if (c) {
        fputs("{\"api\": ", out);
        cgi_json_str(out, c->api);
        cgi_json_field_str(out, "name", c->name);
        fprintf(out, ", \"age_ns\": %" PRIu64 "}", c->age_ns);
    } else {
        fputs("null", out);
    }
    fputc('}', out);
}

void cgi_status_threads_json(FILE *out, const cgi_status_proc *p)
{
    const cgi_status_threads *t = p->threads;
    if (!t) {
        fputs(", \"threads\": null, \"threads_read\": null", out);
        return;
    }
    int ok = t->answered && t->head.result == CGI_THREADS_OK;
    fputs(", \"threads\": ", out);
    fputs(ok ? "[" : "null", out);
    for (size_t i = 0; ok && i < t->n; i++) {
        fputs(i ? ",\n    " : "\n    ", out);
        cgi_thread_json(out, &t->v[i], p);
    }
    if (ok) fputc(']', out);
    fprintf(out, ",\n   \"threads_read\": {\"asked\": %s, \"answered\": %s", t->asked ? "true" : "false",
            t->answered ? "true" : "false");
    fputs(", \"waited_ns\": ", out);
    t->asked ? fprintf(out, "%" PRIu64, t->waited_ns) : fputs("null", out);
    fputs(", \"read_ns\": ", out);
    t->answered ? fprintf(out, "%" PRIu64, t->head.took_ns) : fputs("null", out);
    cgi_json_field_str(out, "result", t->answered ? cgi_threads_results[t->head.result] : t->why);
    cgi_json_field_str_or_null(out, "stdlib", t->answered && t->head.stdlib[0] ? t->head.stdlib : NULL);
    fprintf(out, ", \"left_out\": %u, \"depth\": %u}", t->answered ? t->head.left_out : 0, t->depth);
}
