/* `callguard status [DIR/ | PID ...]`: what running guarded processes are
 * doing now. This file finds their statistics files; libcallguard reads
 * and writes them (cg_status_write). A process's file is in the directory
 * its `callguard run` named in its environment (CALLGUARD_STATS_DIR),
 * which only its user (and root) can read: the processes of other users
 * are refused, never read. A report folder (`run --report DIR/`) holds a
 * note per live run naming that directory (run_folder.c). Nothing here
 * signals, traces or pauses a process: a hung one answers as well. Its
 * Python threads are asked for through the file, which the process's own
 * watchdog answers (cg_status_write_threads). */
#define _GNU_SOURCE
#include "../common/message.h"
#include "../common/stats_file.h"
#include "cli.h"
#include "run.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* --depth's value: 0 (no threads) to CGI_THREADS_MAX_DEPTH; -1 when it is none of them. */
static int status_depth(const char *v)
{
    char *end;
    errno = 0;
    long d = v ? strtol(v, &end, 10) : -1;
    return v && *v && !*end && !errno && d >= 0 && d <= CGI_THREADS_MAX_DEPTH ? (int)d : -1;
}

int cli_cmd_status(int argc, char **argv)
{
    int json = 0, i = 1, depth = 16;
    for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        if (!strcmp(argv[i], "--")) {
            i++;
            break;
        }
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) return cli_help("status");
        if (!strcmp(argv[i], "--json")) {
            json = 1;
        } else if (!strcmp(argv[i], "--all")) {
            depth = CGI_THREADS_MAX_DEPTH;
        } else if (!strcmp(argv[i], "--depth") || !strncmp(argv[i], "--depth=", 8)) {
            const char *v = argv[i][7] == '=' ? argv[i] + 8 : i + 1 < argc ? argv[++i] : NULL;
            if ((depth = status_depth(v)) < 0)
                return cli_usage_error("status: --depth '%s': expected a number of frames from 0 (no threads) to %d",
                                       v ? v : "", CGI_THREADS_MAX_DEPTH);
        } else {
            return cli_usage_error("status: unknown option '%s': expected --json, --depth N, --all or --help", argv[i]);
        }
    }
    status_files f = {0};
    char host[256] = "", where[300];
    gethostname(host, sizeof host - 1);
    snprintf(where, sizeof where, "on %s", host[0] ? host : "this host");
    int all = i == argc;
    if (all) status_add_all(&f);
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] && strspn(a, "0123456789") == strlen(a) && strlen(a) < 10) {
            status_add_pid(&f, (pid_t)atoi(a), 1);
            continue;
        }
        struct stat st;
        if (stat(a, &st) != 0 || !S_ISDIR(st.st_mode))
            return cli_usage_error("status: '%s': expected a pid or a report folder (run --report DIR/)", a);
        if (status_add_folder(&f, a) == 0)
            cgi_say("status: %s: no run of it is alive on %s%s", a, host,
                    f.nended ? " (some ended: callguard report DIR/)" : "");
    }
    if (!f.n) {
        if (!f.refused && all) cgi_say("status: no process of yours runs under callguard on %s", host);
        free(f.v);
        return 1;
    }
    int rc =
        cg_status_write_threads((const char *const *)f.v, f.n, where, 1, json ? CG_REPORT_JSON : CG_REPORT_TEXT, depth);
    if (!json && f.nended)
        printf("  ended, with a report in the folder: rank%s %s\n", f.nended == 1 ? "" : "s", f.ended);
    for (size_t k = 0; k < f.n; k++)
        free(f.v[k]);
    free(f.v);
    return rc == CG_OK && !f.refused ? 0 : 1;
}
