/* A process's stalls in the text report, by their cost: those that
 * blocked other threads (they waited for the runtime while the call held
 * it), then those of which that is not known, then those that held it
 * while no other thread wanted it (harmless in this run). Then what to do:
 * the package a stall is charged to, its known fix where there is one, and
 * the runtime's general advice, each once per report (the writer's
 * `said`), not once per process or per stall. */
#define _GNU_SOURCE
#include "internal.h"

#include "pypackage.h"

#include <inttypes.h>
#include <string.h>

/* What was said already in this report (cgi_report_writer.said). */
enum { CGI_SAID_CPYTHON = 1u, CGI_SAID_JULIA = 2u, CGI_SAID_KNOWN = 4u /* << the fix's index */ };

/* Fixes known for an entry point called from a package's code. */
static const struct {
    const char *package, *entry, *fix;
} cgi_known_fixes[] = {
    /* mpi4py initializes MPI as mpi4py.MPI is imported (mpi4py.rc,
     * "effective at import time"), holding the GIL. */
    {"mpi4py", "MPI_Init_thread",
     "nothing while the program has one thread when it imports mpi4py.MPI (MPI starts then, "
     "holding the GIL); else import mpi4py.MPI before starting threads, or set "
     "mpi4py.rc.initialize = False first and call MPI.Init_thread() where the wait does not matter; "
     "mpi4py.rc.thread_level (\"multiple\" by default) is the thread support it asks for"},
    {"mpi4py", "MPI_Init",
     "nothing while the program has one thread when it imports mpi4py.MPI (MPI starts then, "
     "holding the GIL); else import mpi4py.MPI before starting threads, or set "
     "mpi4py.rc.initialize = False first and call MPI.Init() where the wait does not matter"},
};
#define CGI_NKNOWN (sizeof cgi_known_fixes / sizeof cgi_known_fixes[0])

/* The known fix for st (charged to pkg), or -1. */
static int cgi_known_fix(const cgi_stall *st, const cgi_py_pkg *pkg)
{
    for (size_t k = 0; k < CGI_NKNOWN; k++)
        if (strcmp(pkg->package, cgi_known_fixes[k].package) == 0 && strcmp(st->name, cgi_known_fixes[k].entry) == 0)
            return (int)k;
    return -1;
}

int cgi_stall_kind(const cgi_stall *st)
{
    return st->waiters > 0 ? CGI_STALL_BLOCKED : st->waiters == 0 ? CGI_STALL_IDLE : CGI_STALL_UNKNOWN;
}

/* "file:line in func()", and the first frame outside the standard library
 * and the module being imported where the stall has them. */
static void cgi_text_place(FILE *out, const cgi_stall *st)
{
    if (!st->py_file[0]) return;
    fputs("  at ", out);
    CGI_TEXT_FIELD(out, st->py_file);
    fprintf(out, ":%d in ", st->py_line);
    CGI_TEXT_FIELD(out, st->py_func);
    fputs("()", out);
    if (st->from_file[0]) {
        fputs(" from ", out);
        CGI_TEXT_FIELD(out, st->from_file);
        fprintf(out, ":%d in ", st->from_line);
        CGI_TEXT_FIELD(out, st->from_func);
        fputs("()", out);
    }
    if (st->import_file[0]) {
        fputs(", importing ", out);
        CGI_TEXT_FIELD(out, st->import_file);
    }
}

static void cgi_text_stall(FILE *out, const cgi_stall *st)
{
    fprintf(out, "    %10.3f ms  %s %s  thread %d \"", cgi_ms(st->ns), st->api, st->name, st->tid);
    CGI_TEXT_FIELD(out, st->thread);
    fputs("\"  holding ", out);
    CGI_TEXT_FIELD(out, st->runtime);
    if (st->waiters > 0) fprintf(out, ", %d other thread%s waiting", st->waiters, st->waiters == 1 ? "" : "s");
    if (st->wait_ns) fprintf(out, " (%.3f ms of it waiting for the lock)", cgi_ms(st->wait_ns));
    cgi_text_place(out, st);
    fputc('\n', out);
}

/* A stall charged to a Python package: the package (and its distribution,
 * where its dist-info says) once per process, from its worst stall; then
 * its known fix, once per report, or whom to tell. */
static void cgi_text_packages(FILE *out, const cgi_stall *const *v, size_t n, unsigned *said)
{
    char seen[CGI_STATS_MAX_STALLS][64];
    size_t nseen = 0;
    for (size_t i = 0; i < n; i++) {
        const cgi_stall *st = v[i];
        cgi_py_pkg pkg;
        if (!cgi_stall_package(st, &pkg)) continue;
        size_t k = 0;
        while (k < nseen && strcmp(seen[k], pkg.package) != 0)
            k++;
        if (k < nseen) continue;
        memcpy(seen[nseen++], pkg.package, sizeof seen[0]);
        fputs("  held by ", out);
        CGI_TEXT_FIELD(out, pkg.package);
        if (pkg.distribution[0]) {
            fputs(" (distribution ", out);
            CGI_TEXT_FIELD(out, pkg.distribution);
            fputs(pkg.version[0] ? " " : "", out);
            CGI_TEXT_FIELD(out, pkg.version);
            fputc(')', out);
        }
        cgi_py_pkg own;
        int importing = !(st->py_file[0] && cgi_py_package(st->py_file, &own)) && st->import_file[0];
        fputs(": ", out);
        if (importing)
            fputs("importing it", out);
        else
            CGI_TEXT_FIELD(out, st->py_func), fputs("()", out);
        fprintf(out, " held %s through %s for %.3f ms (",
                strcmp(st->runtime, "cpython") == 0 ? "the GIL" : "its runtime", st->name, cgi_ms(st->ns));
        CGI_TEXT_FIELD(out, st->py_file);
        int fix = cgi_known_fix(st, &pkg);
        fprintf(out, ":%d)%s\n", st->py_line, fix < 0 ? ": report it to the package's maintainers" : "");
        if (fix < 0) continue;
        if (*said & (CGI_SAID_KNOWN << fix)) {
            fprintf(out, "  what to do (%s): as above\n", pkg.package);
            continue;
        }
        *said |= CGI_SAID_KNOWN << fix;
        fprintf(out, "  what to do (%s): %s\n", pkg.package, cgi_known_fixes[fix].fix);
    }
}

/* A runtime other than CPython and Julia is left by its binding, through
 * its adapter (docs/adapters.md). */
static void cgi_text_other_runtime(FILE *out, const char *rt)
{
    /* The command first: a line too long for the screen goes on after it. */
    if (strcmp(rt, "ruby") == 0 || strcmp(rt, "ocaml") == 0)
        fprintf(out, "  what to do (%s): cg_set_adapter(cg_adapter_%s(), CG_ADAPTER_ACTIVE) in the binding", rt, rt);
    else
        fprintf(out, "  what to do (%s): the %s adapter set CG_ADAPTER_ACTIVE in the binding", rt, rt);
    fputs(" leaves the runtime around these calls (docs/adapters.md); or the runtime's own way to release it "
          "around a blocking call\n",
          out);
}

/* What to do, once per runtime held by a stall that blocked someone or may
 * have and has no known fix: --release-runtime and ctypes are CPython's;
 * Julia's calls are made GC-safe by the package or by callguard run. The
 * CPython and Julia paragraphs once per report; "as above" after that. */
static void cgi_text_advice(FILE *out, const cgi_stall *const *v, size_t n, uint64_t more, unsigned *said)
{
    /* None listed: the runtime callguard finds itself, CPython's. */
    int cpython = n == 0 && more > 0, julia = 0;
    for (size_t i = 0; i < n; i++) {
        const char *rt = v[i]->runtime;
        cgi_py_pkg pkg;
        if (cgi_stall_kind(v[i]) == CGI_STALL_IDLE || (cgi_stall_package(v[i], &pkg) && cgi_known_fix(v[i], &pkg) >= 0))
            continue;
        if (!rt[0] || strcmp(rt, "cpython") == 0) {
            cpython = 1;
            continue;
        }
        if (strcmp(rt, "julia") == 0) {
            julia = 1;
            continue;
        }
        size_t k = 0;
        while (k < i && strcmp(v[k]->runtime, rt) != 0)
            k++;
        if (k == i) cgi_text_other_runtime(out, rt);
    }
    if (julia && (*said & CGI_SAID_JULIA))
        fputs("  what to do (julia): as above\n", out);
    else if (julia)
        fputs("  what to do (julia): callguard run --release-runtime; or make these calls GC-safe in the "
              "package: @ccall gc_safe=true (Julia 1.12 and later), GPUToolbox's @gcsafe_ccall before\n",
              out);
    if (cpython && (*said & CGI_SAID_CPYTHON))
        fputs("  what to do: as above (callguard run --release-runtime)\n", out);
    else if (cpython)
        fputs("  what to do: callguard run --release-runtime; or release the runtime around these calls in the "
              "binding (Py_BEGIN_ALLOW_THREADS in a C extension, ctypes.CDLL rather than ctypes.PyDLL)\n",
              out);
    *said |= (julia ? CGI_SAID_JULIA : 0u) | (cpython ? CGI_SAID_CPYTHON : 0u);
}

/* The stalls of one kind, worst first, under their heading. */
static void cgi_text_kind(FILE *out, const cgi_stall *const *v, size_t n, int kind)
{
    static const char *const head[] = {
        [CGI_STALL_BLOCKED] = "blocked other threads: held the runtime while they waited for it (worst first)",
        [CGI_STALL_UNKNOWN] = "held the runtime; whether other threads waited for it is not known (worst first)",
        [CGI_STALL_IDLE] = "held the runtime while no other thread wanted it (harmless in this run)",
    };
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += cgi_stall_kind(v[i]) == kind;
    if (!k) return;
    fprintf(out, "  %zu stall%s %s:\n", k, k == 1 ? "" : "s", head[kind]);
    for (size_t i = 0; i < n; i++)
        if (cgi_stall_kind(v[i]) == kind) cgi_text_stall(out, v[i]);
}

/* The stalls that cost nothing in this run, in one line: how many, their
 * time, the worst and its Python line's file name (in full: --all). */
static void cgi_text_idle(FILE *out, const cgi_stall *const *v, size_t n)
{
    size_t k = 0;
    uint64_t ns = 0;
    const cgi_stall *worst = NULL;
    for (size_t i = 0; i < n; i++)
        if (cgi_stall_kind(v[i]) == CGI_STALL_IDLE) k++, ns += v[i]->ns, worst = worst ? worst : v[i];
    if (!k) return;
    fprintf(out, "  %zu stall%s, harmless (no other thread wanted the runtime): ", k, k == 1 ? "" : "s");
    if (k > 1) fprintf(out, "%.3f ms in all, the worst ", cgi_ms(ns));
    CGI_TEXT_FIELD(out, worst->name);
    fprintf(out, " %.3f ms", cgi_ms(worst->ns));
    if (worst->py_file[0]) {
        const char *base = strrchr(worst->py_file, '/');
        fputs(" at ", out);
        cgi_text_str(out, base ? base + 1 : worst->py_file, sizeof worst->py_file);
        fprintf(out, ":%d", worst->py_line);
    }
    fputc('\n', out);
}

void cgi_text_stalls(FILE *out, const cgi_stats_region *r, uint64_t stalls, int width, unsigned *said)
{
    const cgi_stall *v[CGI_STATS_MAX_STALLS];
    size_t n = cgi_stalls_worst_first(r, v);
    if (!stalls && !n) return;
    cgi_text_kind(out, v, n, CGI_STALL_BLOCKED);
    cgi_text_kind(out, v, n, CGI_STALL_UNKNOWN);
    if (width)
        cgi_text_idle(out, v, n);
    else
        cgi_text_kind(out, v, n, CGI_STALL_IDLE);
    uint64_t more = atomic_load(&r->h.stalls_dropped);
    if (stalls > n && stalls - n > more) more = stalls - n;
    if (more)
        fprintf(out,
                "  %" PRIu64 " more stall%s not listed (a process keeps its worst %d): whether %s blocked anyone is "
                "not known\n",
                more, more == 1 ? "" : "s", CGI_STATS_MAX_STALLS, more == 1 ? "it" : "they");
    if (width) {
        /* What to do only of those that cost something. */
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (cgi_stall_kind(v[i]) != CGI_STALL_IDLE) v[m++] = v[i];
        n = m;
    }
    cgi_text_packages(out, v, n, said);
    cgi_text_advice(out, v, n, more, said);
}
