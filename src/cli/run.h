/* The parts of `callguard run` (docs/design.md, "The command line"). Not installed.
 *
 *   run.c          the command: the values checked, the program started and
 *                  waited for, then the report and the timeline written, and
 *                  callguard's exit as the program's
 *   run_options.c  the options, and every value checked before the program starts
 *   run_env.c      the run's directory and the child's environment: the
 *                  layers preloaded, the shims, the count of lost processes
 *   run_wait.c     starting the program and waiting for its whole tree,
 *                  settling statistics files as their processes end
 *   run_signals.c  SIGINT, SIGTERM, SIGHUP and SIGQUIT that come to callguard,
 *                  passed to the program once
 *   run_folder.c   `--report DIR/`: one report per run, named by host, rank
 *                  and pid, created exclusively
 *   run_stuck.c    `--stuck`, `--on-stuck`: the job watched while it runs, its
 *                  view said once a call is stuck, the job ended or a command run
 *
 * Calls go from run.c to the others, from run_options.c to run_folder.c
 * (checking the folder), from run_wait.c to run_signals.c and run_stuck.c,
 * and from run_stuck.c to run_folder.c and run_signals.c; none call back. */
#ifndef CLI_RUN_H
#define CLI_RUN_H

#include "cli.h"
#include "../common/variables.h"
#include "../common/stats_file.h"

#include <signal.h>
#include <time.h>

/* The options of `callguard run`. */
typedef struct run_opts {
    /* Each setting's value from its option (cli_run_options), by its
     * CGI_SETTING_ number; --serialize's are joined by commas. */
    const char *set[CGI_NSETTINGS];
    char *serialize;
    const char *report;
    char **apis; /* --api names, in order */
    size_t napis;
    char **layer_files; /* --layer paths, in order */
    size_t nlayer_files;
    int report_all; /* --all: the table of --report - with every row and column */
    char **prog;
} run_opts;

/* Returns -1 when the program should start, else the exit status. */
int run_parse_options(int argc, char **argv, run_opts *o);
/* Which layers: those --api names and --layer files, else every installed
 * one. Loads them into this process, so the checks below know them. */
int run_choose_layers(const run_opts *o, cli_layers *set);
/* Checks every value here, against the layers just loaded, so a typo stops
 * us before the program starts rather than inside it. */
int run_check_values(const run_opts *o, const cli_layers *set);
/* A relative path made absolute against our working directory, once,
 * before the program starts: a process of the tree that changed directory
 * would otherwise read or write another file. "-" and absolute paths are
 * kept. The result is malloc'd and lives for the run. */
const char *run_absolute(const char *path);

/* The child's environment, as execve takes it. */
typedef struct env_list {
    char **v;
    size_t n, cap;
} env_list;
void run_env_free(env_list *e);

/* A directory for this run: the processes' statistics files, and shims/. */
char *run_make_dir(void);

/* The processes that could not keep statistics (stats.h): a page of our
 * memory they count into through /proc, whatever the disk, and the file of
 * the directory the count goes to for the report, made now: its page
 * written, so that a disk full by the end still takes the count, or, on a
 * disk full already, empty, to hold the count as its size (no data). */
typedef struct run_lost {
    cgi_lost_page *page; /* NULL: not counted */
    int memfd, file;
    int written;   /* the file's page is written */
    char path[64]; /* CALLGUARD_STATS_LOST */
} run_lost;
void run_lost_open(run_lost *l, const char *dir);
/* The count into the directory's file (made again when the directory or
 * the file was removed during the run); said on stderr when it cannot be. */
void run_lost_close(run_lost *l, const char *dir);
/* The child's environment: ours, with the layers preloaded and the options
 * as CALLGUARD_* variables; no CALLGUARD_REPORT (we write the one report). */
void run_child_environment(env_list *env, const run_opts *o, const cli_layers *set, const char *dir,
                           const run_lost *lost);

/* `--stuck AFTER` and `--on-stuck ACTION` (run_stuck.c, docs/report.md
 * "Stuck jobs"): the job's statistics files looked at while it runs, every
 * AFTER/16 within [RUN_STUCK_LOOK_MS, RUN_STUCK_LOOK_MAX_MS]: a second at
 * the default 5 minutes, so a long run of many processes reads their files
 * once a second, and a stuck call is said within a second of AFTER. */
#define RUN_STUCK_DEFAULT_MS (5u * 60u * 1000u)
#define RUN_STUCK_LOOK_MS 250
#define RUN_STUCK_LOOK_MAX_MS 1000
#define RUN_STUCK_GRACE_S 5    /* abort: SIGTERM, then SIGKILL this much later */
#define RUN_STUCK_COMMAND_S 10 /* a command's time to end before it is killed */
#define RUN_STUCK_EXIT 124     /* callguard run's status when abort ended the job */
enum { RUN_STUCK_REPORT, RUN_STUCK_ABORT, RUN_STUCK_COMMAND };
typedef struct run_watch {
    uint64_t after_ms; /* 0: off */
    int action;        /* RUN_STUCK_* */
    const char *command;
    const char *stats_dir, *folder; /* the run's statistics; --report DIR/ (NULL: none) */
    pid_t program;
    uint64_t next_ns; /* the next look, CLOCK_MONOTONIC */
    /* What was said: the processes when the view was last said; stuck now. */
    stuck_said said;
    int stuck;
    unsigned views;
    char *lease; /* held: this run speaks for the job on this host */
    int spoke;   /* this run said the view */
    int noted;   /* its note for the other hosts is there (run_stuck_note_name) */
    char headline[600];
    char *view, *stuck_list; /* the last view as JSON (status's), its stuck processes */
    uint64_t late_ms;        /* how long after AFTER the first view was said */
    long long first_unix_ms;
    /* abort */
    int aborted, killed;
    uint64_t abort_ns, ended_ms; /* ended_ms: the tree ended this long after SIGTERM */
    size_t signalled;
    /* the command */
    pid_t cmd;
    uint64_t cmd_ns;
    int cmd_ran, cmd_killed;
    char cmd_result[160];
} run_watch;
/* The options' values (checked already) into w, off when AFTER is off. */
void run_stuck_options(const run_opts *o, run_watch *w);
/* The milliseconds until the next look; -1: none (off, or the job done). */
int run_stuck_wait_ms(const run_watch *w);
/* A look at the job when it is time: the view said when a call is past
 * AFTER (once, and again when it changes), the action taken. */
void run_stuck_look(run_watch *w);
/* Whether pid, just reaped with status, was the command: its end said. */
int run_stuck_reaped(run_watch *w, pid_t pid, int status);
/* The whole tree has exited: the lease given back (unless aborted), the
 * report's `stuck` member set (cg_report_set_stuck). */
void run_stuck_end(run_watch *w);
/* The lease given back: at the end, or after an aborted run lingered, so
 * the other ranks' runs, aborting too, do not speak again. */
void run_stuck_leave(run_watch *w);

typedef struct run_result {
    int exec_errno; /* nonzero: the program could not be started */
    pid_t pid;      /* the program's */
    int child_status;
    cg_proc_exit *exits;
    size_t nexits;
} run_result;
/* Starts the program and waits for it and every orphan of its tree that
 * comes to us, so "after the whole tree has exited" means it, settling
 * statistics files as their processes end. Returns 0, or 1 when callguard
 * itself failed. */
int run_start_and_wait(char **prog, env_list *env, const char *dir, run_watch *w, run_result *r);
/* Whether the run was stopped (SIGINT, SIGTERM, SIGHUP or SIGQUIT came to
 * it, passed on or not), and when (CLOCK_MONOTONIC). */
int run_stopped_at(struct timespec *at);

/* run_signals.c: SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to callguard reach
 * the program once. Before the program starts: the four are added to
 * *block, which is blocked, and taken out of *waiting (the mask callguard
 * waits in), and noted when they come. */
void run_sig_start(sigset_t *block, sigset_t *waiting);
/* In the child before exec: their actions as they were. */
void run_sig_in_child(void);
/* Right before the program's fork, then with its pid. */
void run_sig_before_program(void);
void run_sig_program(pid_t pid);
/* After a wait: each that came is passed to the program, unless it was
 * sent to the program's group (or to all) and so reached it already. */
void run_sig_pass(void);
/* The program was reaped: nothing more is passed on (the witness ends). */
void run_sig_end(void);
/* Whether pid, just reaped, was the witness process: no process of the
 * program's tree (a child of callguard's that sees the group's signals). */
int run_sig_witness(pid_t pid);
/* Whether pid is the witness process (nothing changed). */
int run_sig_is_witness(pid_t pid);

/* The lease that one run of this host holds to speak for the job when it is
 * stuck (run_stuck.c): DIR/.callguard-HOST-stuck.lease, malloc'd. */
char *run_stuck_lease_name(const char *dir);
/* A run that speaks for a stuck job also leaves a note for the job's other
 * hosts (a shared DIR/), written again at each look while the job is stuck
 * and removed when it is not: DIR/.callguard-HOST-stuck.note, malloc'd. Its
 * text: "callguard stuck\n" and the view's line ("rank 1 (pid 12 on b) in
 * MPI_Recv ... on b, over --stuck 1s"). */
char *run_stuck_note_name(const char *dir);
/* Reads note `name` of the folder open at dfd: 1 and its line when it is
 * another host's, the caller's own and written in the last
 * RUN_STUCK_NOTE_FRESH_S; else 0. */
#define RUN_STUCK_NOTE_FRESH_S 5
int run_stuck_note_read(int dfd, const char *name, char *line, size_t cap);
/* Whether --report names a folder: a trailing slash, or a folder that exists. */
int run_report_is_folder(const char *report);
/* Refuses a folder no report could be written in (not a folder, no
 * permission, a missing parent, names too long); -1 when it is fine, else
 * the exit status. Creates nothing. */
int run_check_folder(const char *flag, const char *dir);
/* The report's file in folder dir for the program of pid, made now, empty
 * and exclusively (the folder too, when missing); malloc'd. NULL when it
 * cannot be, said on stderr. */
char *run_folder_claim(const char *dir, pid_t pid);
/* The note in report folder dir that this run is alive and where its
 * statistics are (callguard status DIR/); malloc'd path to remove when
 * the report is written, or NULL (no note: the run goes on). */
char *run_live_note(const char *dir, const char *stats_dir);
/* Reads note `name` of the folder open at dfd into stats: 1 when it is a
 * live run's note of this host, the caller's own; else 0. */
int run_live_note_read(int dfd, const char *name, char *stats, size_t cap);

#endif
