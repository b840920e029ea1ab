/* callguard: the command line.
 *
 *   callguard run [options] -- PROGRAM [ARGS...]   guard an unmodified program (run.c)
 *   callguard report [--all|--advice|--json OUT] FILE.json...  the table again, from saved reports (merged)
 *   callguard list [NAME | PATH.so]                a layer's entry points and policies (list.c)
 *
 * The CLI knows no API by name: layers describe themselves (layers.c). What
 * every command shares (messages, the usage, where the layers are) is in
 * cli.c, which calls none of them. */
#define _GNU_SOURCE
#include "cli.h"
#include "../common/message.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Tells libcallguard's constructor that this is the CLI (startup.c): its
 * runtime reads no CALLGUARD_* variable and writes nothing. */
__attribute__((visibility("default"), used)) const int cgi_cli_process = 1;

/* ---- report --------------------------------------------------------------------- */

static int cmd_report(int argc, char **argv)
{
    if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) return fputs(cli_usage, stdout), 0;
    /* --json OUT: the merged report as JSON into OUT (the ranks' files of
     * a job into one), not the table; --all: every row and column of the
     * table; --advice: every piece of advice in full. */
    const char *json = NULL;
    int all = 0, advice = 0;
    for (;;) {
        if (argc >= 2 && !strcmp(argv[1], "--json")) {
            if (argc < 3 || !*argv[2]) return cli_usage_error("report: --json needs a file name");
            json = argv[2];
            argc -= 2, argv += 2;
        } else if (argc >= 2 && (!strcmp(argv[1], "--all") || !strcmp(argv[1], "--advice"))) {
            *(!strcmp(argv[1], "--all") ? &all : &advice) = 1;
            argc--, argv++;
        } else {
            break;
        }
    }
    if (!!json + all + advice > 1) return cli_usage_error("report: --json, --all and --advice: choose one");
    cg_report_format format = json     ? CG_REPORT_JSON
                              : all    ? CG_REPORT_TEXT_ALL
                              : advice ? CG_REPORT_ADVICE
                                       : CG_REPORT_TEXT;
    if (argc < 2)
        return cli_usage_error("report: expected one or more report files (saved with callguard run --report FILE)");
    /* "/dev/stdout" is the stdout we were given, never reopened:
     * `callguard report F >> log` appends to log (a reopen would write
     * from its start). */
    int rc =
        cg_report_merge_files((const char *const *)argv + 1, (size_t)argc - 1, json ? json : "/dev/stdout", format);
    if (rc != CG_OK) {
        cgi_say("%s", cg_last_error());
        return 2;
    }
    return 0;
}

static int dispatch(int argc, char **argv)
{
    if (argc < 2) {
        fputs(cli_usage, stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) return fputs(cli_usage, stdout), 0;
    if (!strcmp(cmd, "--version")) return puts("callguard " CALLGUARD_VERSION), 0;
    if (!strcmp(cmd, "run")) return cli_cmd_run(argc - 1, argv + 1);
    if (!strcmp(cmd, "report")) return cmd_report(argc - 1, argv + 1);
    if (!strcmp(cmd, "list")) return cli_cmd_list(argc - 1, argv + 1);
    return cli_usage_error("unknown command '%s': expected run, report or list", cmd);
}

int main(int argc, char **argv)
{
    cli_find_libdir();
    cli_exit(dispatch(argc, argv));
}
