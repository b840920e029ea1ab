/* callguard: the command line.
 *
 *   callguard run [options] -- PROGRAM [ARGS...]   guard an unmodified program (run.c)
 *   callguard report [OPTIONS] FILE.json|DIR/...   saved reports again, merged (report.c)
 *   callguard status [DIR/ | PID ...]              what running processes do now (status.c)
 *   callguard list [NAME | PATH.so]                a layer's entry points and policies (list.c)
 *   callguard trace -o OUT DIR/...                 a job's traces merged on one clock (trace.c)
 *   callguard help [COMMAND]                       a command's help (cli.c)
 *
 * The CLI knows no API by name: layers describe themselves (layers.c). What
 * every command shares (messages, the usage, where the layers are) is in
 * cli.c, which calls none of them. */
#define _GNU_SOURCE
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Tells libcallguard's constructor that this is the CLI (startup.c): its
 * runtime reads no CALLGUARD_* variable and writes nothing. */
__attribute__((visibility("default"), used)) const int cgi_cli_process = 1;

static int dispatch(int argc, char **argv)
{
    if (argc < 2) {
        cli_usage_top(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) return cli_help(NULL);
    if (!strcmp(cmd, "help")) {
        if (argc > 3) return cli_usage_error("help: expected at most one command: run, report, status, list or trace");
        return cli_help(argc == 3 ? argv[2] : NULL);
    }
    if (!strcmp(cmd, "--version")) return puts("callguard " CALLGUARD_VERSION), 0;
    static const struct {
        const char *name;
        int (*run)(int, char **);
    } commands[] = {{"run", cli_cmd_run},
                    {"report", cli_cmd_report},
                    {"status", cli_cmd_status},
                    {"list", cli_cmd_list},
                    {"trace", cli_cmd_trace}};
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (!strcmp(cmd, commands[i].name)) return cli_command = cmd, commands[i].run(argc - 1, argv + 1);
    if (cmd[0] == '-')
        return cli_usage_error("unknown option '%s': expected run, report, status, list, trace or --help", cmd);
    return cli_usage_error("unknown command '%s': expected run, report, status, list, trace or help", cmd);
}

int main(int argc, char **argv)
{
    cli_find_libdir();
    cli_exit(dispatch(argc, argv));
}
