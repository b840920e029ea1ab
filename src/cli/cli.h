/* The parts of the `callguard` command. Not installed. A file includes
 * and calls only what is on a lower floor, or in its own row (tests/floors.py);
 * run.h maps `callguard run`'s files.
 * Floors, lowest first:
 *   0 cli                what the commands share: the library directory, each
 *                        command's help, usage errors, the exit
 *   1 layers             the layers installed and chosen, read from the layers
 *   1 real_library       the real library of an API a shim stands for
 *   1 stuck              a job's processes in brief: which are stuck, the line
 *                        that leads, whether the view changed, as JSON
 *   1 run.h              `callguard run`'s options and parts
 *   2 list               `callguard list`
 *   2 report             `callguard report`: saved reports, files and folders
 *   2 run_folder         `--report DIR/`: one report per run
 *   2 trace              `callguard trace`: a job's traces on one clock; the
 *                        check of `--trace DIR/`
 *   2 run_signals        the signals that come to `callguard run`, passed on once
 *   3 status_files       the statistics files of live processes: a pid's, a
 *                        directory's, a report folder's, all of the caller's
 *   3 run_env            the run's directory and the child's environment
 *   3 run_options        the options, every value checked before the start
 *   4 status             `callguard status`: now, --stuck, --watch, Prometheus
 *   4 run_stuck          `run --stuck`: the job watched, its view said, the action
 *   5 run_wait           starting the program and waiting for its whole tree
 *   6 run.c              `callguard run`
 *   7 main.c             the command line: which command
 */
#ifndef CLI_H
#define CLI_H

#include <callguard/callguard.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* ---- shared by the commands (cli.c) ---------------------------------------- */
/* The directory of libcallguard and the installed layers: bin/../lib
 * (cli_find_libdir sets it at start-up). */
extern char cli_libdir[PATH_MAX];
void cli_find_libdir(void);
/* The command being run ("run", "report", "list"; NULL before one is
 * chosen): usage errors point at its help. */
extern const char *cli_command;
/* Prints a command's help to stdout (NULL: callguard's own) and returns 0;
 * an unknown command is a usage error (2). */
int cli_help(const char *command);
/* `callguard run`'s options, in its help's order, ended by a NULL flag:
 * each one's value (NULL: none), the setting it sets (a CGI_SETTING_ of
 * common/settings.h, or -1: the command's own), the value a flag without
 * one sets, and its help's lines (NULL: an older spelling, not shown). The
 * options' parser, its checks and the program's environment are made from
 * it (run_options.c, run_env.c). */
typedef struct cli_option {
    const char *flag, *value;
    int setting;
    const char *fixed, *help;
} cli_option;
extern const cli_option cli_run_options[];
/* callguard's own help, to out (no command given: to stderr). */
void cli_usage_top(FILE *out);
/* callguard run's status when the program succeeded but its report or
 * trace could not be written (docs/configuration.md, "Exit status"). */
#define CLI_EXIT_LOST_OUTPUT 125
/* One line on stderr pointing at the command's --help; returns 2. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Says on stderr which file was written ("callguard: wrote the report
 * PATH"), so a user who asked for `--report out/` learns its name: one line
 * for a regular file or a folder (`--trace DIR/`, a file per process);
 * nothing for stderr itself or a device (/dev/null).
 * Returns whether it said. */
int cli_say_written(const char *what, const char *path, const char *more);
/* Exits without running the exit handlers of the CLI's own libcallguard:
 * it guards nothing, its report and its settings are not the program's. */
void cli_exit(int status) __attribute__((noreturn));

/* ---- layers (layers.c) ------------------------------------------------------ */
typedef struct cli_layer {
    cg_layer_info info; /* as the layer describes itself (cg_list_layers) */
    char *file;         /* the layer, an absolute path */
    char *shim;         /* its soname shim (of its first soname that has one), NULL if none */
} cli_layer;

typedef struct cli_layers {
    cli_layer *v;
    size_t n;
} cli_layers;

/* The API names of the layers installed beside libcallguard
 * (libcallguard_NAME.so in cli_libdir), sorted. Returns how many. */
size_t cli_installed_apis(char ***names);
/* Loads a layer into this process to read its description: the layer
 * installed for api (path NULL), or the file at path (api NULL). Prints
 * one line and returns 2 when it cannot; 0 otherwise. */
int cli_layer_load(cli_layers *set, const char *api, const char *path);
/* "cl, ze" (malloc'd). */
char *cli_layer_names(const cli_layers *set);
/* The shim standing in for one of the layer's sonames, beside l->shim
 * (malloc'd), NULL if the layer has none for it. */
char *cli_shim_for(const cli_layer *l, const char *soname);
/* The layer whose library variable this is; NULL if none. */
const cli_layer *cli_layer_for_library_var(const cli_layers *set, const char *var);

/* ---- the real library (real_library.c) ----------------------------------------- */
/* The real library a program guarded by this layer should get (malloc'd
 * absolute path), or NULL: CALLGUARD_<API>_LIBRARY, else the path found
 * when the layer was built if that file exists, else the soname as the
 * dynamic loader would find it, skipping callguard's own files. */
char *cli_real_library(const cli_layer *l);
/* The DT_SONAME of a 64-bit ELF object (malloc'd), NULL if none or unreadable. */
char *cli_soname_of(const char *path);

/* ---- the statistics files of live processes (status_files.c) ---------------------- */
typedef struct status_files {
    char **v; /* their paths */
    size_t n, cap;
    int refused; /* processes named that are not the caller's, or not guarded */
    int quiet;   /* say nothing of a folder that cannot be read (run --stuck looks again) */
    /* The ranks of report folders whose run ended: a report of theirs is
     * there (named by host, rank and pid), "3 on vm, 4 on vm". */
    char ended[512];
    size_t nended;
    /* Other hosts' stuck jobs, from their runs' notes in a shared report
     * folder (run_stuck_note_read): a line each, at most a few. */
    char elsewhere[2048];
    size_t nelsewhere;
} status_files;
/* One process: its statistics file, when it is the caller's and guarded.
 * `named`: the user named it (say why when it is not there). */
void status_add_pid(status_files *f, pid_t pid, int named);
/* Every live process with a statistics file in dir. */
void status_add_dir(status_files *f, const char *dir);
/* Every process of the caller's on this host that callguard run started. */
void status_add_all(status_files *f);
/* A report folder: each live run's statistics directory (its note), or
 * the folder itself as a statistics directory. Returns 1 when some run or
 * file was found, 0 when none, -1 when the folder cannot be read. */
int status_add_folder(status_files *f, const char *dir);
void status_files_free(status_files *f);

/* ---- a job's processes in brief (stuck.c) ------------------------------------------ */
/* The processes of a job as one look at their statistics files saw them. */
typedef struct stuck_look {
    cg_status_brief *v;
    unsigned long long *sig; /* what each does: its pid and oldest call; 0: in no call */
    size_t n;
    uint64_t after_ns; /* a call this old is stuck */
    size_t nstuck;     /* processes with a call that old */
    size_t lead;       /* the one the headline names (the odd one out); n when none stuck */
} stuck_look;
/* Reads the files (quiet: nothing said of one that cannot be read).
 * Returns 0, or -1 out of memory. */
int stuck_look_at(stuck_look *l, const status_files *f, uint64_t after_ns, int quiet);
void stuck_look_free(stuck_look *l);
/* What the processes did when the view was last said. */
typedef struct stuck_said {
    unsigned long long *sig;
    unsigned char *stuck;
    size_t n;
} stuck_said;
/* Whether the view changed since: a process stuck in a call it was not in
 * then, or one stuck then that is not now (it moved on, ended, went). A
 * process that only passed AFTER in the call it was in is no change. */
int stuck_changed(const stuck_look *l, const stuck_said *said);
/* l as said now: 0, or -1 out of memory. */
int stuck_remember(const stuck_look *l, stuck_said *said);
void stuck_forget(stuck_said *said);
/* The line that leads: "rank 2 (pid 12 on vm) in MPI_Recv at job.py:6 in
 * <module> for 4.1 s". */
void stuck_headline(const stuck_look *l, char *out, size_t cap);
/* "4s", "1500ms", "5m": a duration as given back to people. */
void stuck_duration(uint64_t ms, char *out, size_t cap);
/* s as a JSON string. */
void stuck_json_str(FILE *out, const char *s);
/* The processes in a call as a JSON array (each stuck or not yet), into out. */
void stuck_json_list(FILE *out, const stuck_look *l);
/* The view of these files as callguard status writes it (format), into a
 * malloc'd string; NULL when it could not be made. */
char *stuck_view(const status_files *f, const char *where, cg_report_format format);

/* ---- the commands ---------------------------------------------------------------- */
int cli_cmd_run(int argc, char **argv);
int cli_cmd_list(int argc, char **argv);
int cli_cmd_report(int argc, char **argv);
int cli_cmd_status(int argc, char **argv);
int cli_cmd_trace(int argc, char **argv);
/* --trace DIR/ checked before the run (trace.c): -1 when traces could be
 * written there, else the usage error's status. */
int trace_check_folder(const char *flag, const char *dir);

#endif
