/* callguard trace [-o OUT] DIR/|FILE ...: the per-process traces of a job
 * (`callguard run --trace DIR/` on each host) merged into one timeline on
 * one clock (src/report/trace_job.c says how the hosts' clocks are
 * aligned); and the check of --trace DIR/ before a run. */
#define _GNU_SOURCE
#include "cli.h"
#include "../common/message.h"
#include "../report/trace_dir.h"
#include "../report/trace_job.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int trace_check_folder(const char *flag, const char *dir)
{
    char where[600];
    int e = cgi_trace_folder_check(dir, where, sizeof where);
    if (!e) return -1;
    return cli_usage_error("%s %s: cannot write traces in %s: %s (a folder: one trace per process, named by host, "
                           "rank and pid)",
                           flag, dir, where, strerror(e));
}

int cli_cmd_trace(int argc, char **argv)
{
    const char *out = NULL;
    const char **inputs = calloc((size_t)argc, sizeof *inputs);
    size_t n = 0;
    int options = 1;
    if (!inputs) return 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (options && !strcmp(a, "--")) {
            options = 0;
        } else if (options && (!strcmp(a, "-h") || !strcmp(a, "--help"))) {
            free(inputs);
            return cli_help("trace");
        } else if (options && (!strcmp(a, "-o") || !strcmp(a, "--output"))) {
            if (i + 1 >= argc || !*argv[i + 1]) return free(inputs), cli_usage_error("trace: %s needs a file name", a);
            out = argv[++i];
        } else if (options && a[0] == '-' && a[1]) {
            free(inputs);
            return cli_usage_error("trace: unknown option '%s': expected -o OUT or --help", a);
        } else {
            inputs[n++] = a;
        }
    }
    if (!n) return free(inputs), cli_usage_error("trace: expected a folder of traces (callguard run --trace DIR/)");
    if (!out) return free(inputs), cli_usage_error("trace: expected -o OUT, the merged trace's file (- for stdout)");
    if (!strcmp(out, "-")) out = "/dev/stdout";
    cgi_job_totals t;
    char err[1024];
    int rc = cgi_trace_job(inputs, n, out, &t, err, sizeof err);
    free(inputs);
    if (rc) {
        cgi_say("trace: %s", err);
        return 1;
    }
    char more[300];
    snprintf(more, sizeof more, ": %zu process%s on %zu host%s, %" PRIu64 " events; ", t.processes,
             t.processes == 1 ? "" : "es", t.hosts, t.hosts == 1 ? "" : "s", t.events);
    if (t.clocks > 1)
        snprintf(more + strlen(more), sizeof more - strlen(more),
                 "%zu clocks aligned within %.3f us, plus the hosts' realtime sync (not measured)", t.clocks,
                 (double)t.uncertainty_ns / 1000);
    else
        snprintf(more + strlen(more), sizeof more - strlen(more), "one clock: exact");
    cli_say_written("the job's timeline", out, more);
    return 0;
}
