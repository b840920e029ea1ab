/* What the commands of the `callguard` command share: the usage and its
 * errors, the exit, and where libcallguard and the installed layers are.
 * The floor of src/cli: it calls no command. */
#define _GNU_SOURCE
#include "cli.h"
#include "../common/message.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef CG_LIBDIR_REL
#define CG_LIBDIR_REL "lib"
#endif

char cli_libdir[PATH_MAX];

int cli_usage_error(const char *fmt, ...)
{
    /* One line, whatever the values in it hold (message.c), as the runtime's. */
    char raw[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    cgi_say("%s (callguard --help)", raw);
    return 2;
}

void cli_exit(int status)
{
    fflush(NULL);
    _exit(status);
}

const char cli_usage[] =
    "usage: callguard run [OPTIONS] [--] PROGRAM [ARGS...]\n"
    "       callguard report [--all | --advice | --json OUT.json] FILE.json...\n"
    "       callguard list [NAME | PATH.so]\n"
    "\n"
    "run: guard every driver call PROGRAM and its children make, and report them.\n"
    "  --serialize FN[=DOMAIN][:process|:handle][,...]\n"
    "                      let one thread at a time into FN; entry points that name the\n"
    "                      same DOMAIN share one lock, across APIs (default DOMAIN: FN)\n"
    "  --release-runtime   leave the runtime each process has (the CPython GIL; Julia: GC-safe)\n"
    "                      around calls, as each entry point's transition policy says (default:\n"
    "                      only detect calls that block while holding it, and report them as\n"
    "                      stalls); --release-gil is the same\n"
    "  --transition always|blocking|never\n"
    "                      which calls leave the runtime with --release-runtime (default: always)\n"
    "  --stall-ms N        a call or lock wait this long with the runtime held is a stall (default 50)\n"
    "  --hang-ms N         when a call has been in flight N ms, print every call in flight to stderr\n"
    "                      (and again when they change; default off)\n"
    "  --timing MODE       sampled (default: a watchdog thread times calls) or exact (every call reads the clock)\n"
    "  --report FILE|DIR/|-  write the report as JSON to FILE, or as a table to stderr (-);\n"
    "                      DIR/ (or an existing folder): a file of its own in DIR for each\n"
    "                      run, named by host, rank and pid (mpirun -n 4 callguard run ...)\n"
    "  --all               with --report -: every row and column of the table, at any width\n"
    "  --check-threads     report threads inside calls that the API's thread rules forbid\n"
    "                      to overlap on one handle, and kernel arguments another thread set\n"
    "                      between a thread's setting and its launch (docs/threads.md)\n"
    "  --serialize-handles turn the same rules into per-handle reader/writer locks\n"
    "  --trace FILE        write a timeline of every guarded call of the whole tree as\n"
    "                      Chrome trace-event JSON (Perfetto, chrome://tracing): calls, lock\n"
    "                      waits and stalls per thread; each thread keeps its last 65535 calls\n"
    "  --trace-lines FILE|-  one text line per guarded call: api entry call_ns lock_wait_ns error\n"
    "  --quirks off|FILE   known driver bugs switched on where a driver matches: off, or\n"
    "                      FILE in place of the shipped share/callguard/quirks.ini (same\n"
    "                      format, docs/quirks.md); the report names each quirk applied\n"
    "  --signals record|off  record: a process that dies of SIGSEGV, SIGBUS, SIGILL, SIGFPE\n"
    "                      or SIGABRT notes the signal, so the report names it even where\n"
    "                      callguard did not reap the process; the program's own handlers\n"
    "                      still run (default: off; CALLGUARD_SIGNALS)\n"
    "  --api LIST          guard these installed layers, comma-separated names: cl,ze\n"
    "                      (libcallguard_NAME.so beside libcallguard; `callguard list`)\n"
    "  --layer PATH.so     guard with this layer from anywhere (repeatable); its shim, if\n"
    "                      it has one, is DIR/callguard/shims/SONAME for a layer in DIR\n"
    "                      default: every installed layer, unless --api or --layer is given\n"
    "An entry point, policy section or CALLGUARD_<API>_LIBRARY that no chosen layer has\n"
    "stops the run before the program starts.\n"
    "exit status: the program's own; its signal if it was killed; 2 for a usage or\n"
    "configuration error; 126 if PROGRAM is not executable; 127 if it is not found;\n"
    "125 if the program succeeded but the report or trace could not be written.\n"
    "\n"
    "report: print the table of reports saved with --report FILE; several (the ranks of\n"
    "  a job, one per node) are merged: a summary, one table over all, one across the\n"
    "  ranks when launchers named them, then every process's section. Tables are sorted\n"
    "  by time in the driver and fit 100 columns (COLUMNS when set); --all shows every row\n"
    "  and column at any width; --advice prints every piece of advice in full, whether it\n"
    "  affects the run or not; --json OUT writes them merged as one JSON report to OUT.\n"
    "list: what a layer is (an installed one by NAME, or a file) and its entry points with\n"
    "  their policies and blocking reasons; with no argument, the installed layers.\n";

void cli_find_libdir(void)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash) return;
    *slash = '\0';
    /* bin/../lib in both the install tree and the build tree */
    char *dir;
    if (asprintf(&dir, "%s/../%s", exe, CG_LIBDIR_REL) < 0) return;
    char *real = realpath(dir, NULL);
    snprintf(cli_libdir, sizeof cli_libdir, "%s", real ? real : dir);
    free(real), free(dir);
}
