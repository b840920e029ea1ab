/* A program for the `callguard run` tests, linked against the toy library
 * like a program linked against a vendor driver. argv[1] says what to do;
 * every mode makes a known number of toy calls. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <toy.h>
#include <unistd.h>

#ifdef CG_DLOPEN_ONLY /* built without linking the toy library: only the dlopen mode works */
static void calls(int n)
{
    (void)n;
    abort();
}
#else
static void calls(int n)
{
    int32_t sum;
    for (int i = 0; i < n; i++)
        toyAdd(i, 1, &sum);
}
#endif

#ifndef CG_DLOPEN_ONLY
/* A named thread making 4 calls. */
static void *worker(void *arg)
{
    char name[16];
    snprintf(name, sizeof name, "worker-%d", (int)(intptr_t)arg);
    pthread_setname_np(pthread_self(), name);
    calls(4);
    return NULL;
}
#endif

/* The program's own SIGSEGV handler (the fatal-signal hook must chain to it). */
static sigjmp_buf recover_to;
static int recover;
static void own_segv(int sig)
{
    static const char msg[] = "own handler ran\n";
    if (write(1, msg, sizeof msg - 1) < 0) _exit(43);
    if (recover) siglongjmp(recover_to, 1);
    _exit(sig == SIGSEGV ? 42 : 44);
}

/* A real fault, and no undefined behaviour for UBSan to stop first: a store
 * to a page mapped without access. */
static void fault(void)
{
    volatile int *nowhere = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if ((void *)nowhere == MAP_FAILED) _exit(45);
    *nowhere = 1;
}

/* own-segv HOW: HOW is sigaction, signal, before (set, then cg_configure
 * turns the hook on: a handler that came first), or recover (sigaction; the
 * handler jumps back and the program goes on). 5 calls, then a fault. */
static int own_segv_mode(const char *how)
{
    if (!strcmp(how, "signal")) {
        signal(SIGSEGV, own_segv);
    } else {
        struct sigaction sa = {.sa_handler = own_segv};
        sigemptyset(&sa.sa_mask);
        sigaction(SIGSEGV, &sa, NULL);
    }
    if (!strcmp(how, "before")) {
        int (*configure)(const char *, const char *) =
            (int (*)(const char *, const char *))dlsym(RTLD_DEFAULT, "cg_configure");
        if (!configure || configure("CALLGUARD_SIGNALS", "record") != 0) return 6;
    }
    /* What the program reads back is its own handler, not callguard's
     * (where callguard run preloaded libcallguard: not for "before"). */
    struct sigaction now;
    sigaction(SIGSEGV, NULL, &now);
    if (strcmp(how, "before") != 0 && now.sa_handler != own_segv) return 7;
    recover = !strcmp(how, "recover");
    calls(5);
    if (sigsetjmp(recover_to, 1) == 0) fault();
    printf("recovered\n");
    return 0;
}

/* The modes: each gets the command line and N (a->argv[2] as a number, else
 * 5), and returns the exit status. */
typedef struct prog_args {
    int argc;
    char **argv;
    int n;
} prog_args;

static int mode_calls(const prog_args *a)
{
    calls(a->n);
    return 0;
}

static int mode_exit(const prog_args *a)
{
    calls(5);
    exit(a->n);
}

static int mode_abort(const prog_args *a)
{
    (void)a;
    calls(5);
    abort();
}

static int mode_own_segv(const prog_args *a) { return own_segv_mode(a->argc > 2 ? a->argv[2] : "sigaction"); }

/* 5 calls, then a fault nobody handles. */
static int mode_segv(const prog_args *a)
{
    (void)a;
    calls(5);
    fault();
    return 8;
}

static int mode__exit(const prog_args *a)
{
    (void)a;
    calls(5);
    _exit(0);
}

/* Parent 3 + 2 calls, child 4. */
static int mode_fork(const prog_args *a)
{
    (void)a;
    calls(3);
    pid_t pid = fork();
    if (pid == 0) {
        calls(4);
        exit(0);
    }
    waitpid(pid, NULL, 0);
    calls(2);
    return 0;
}

/* 3 calls, then the new image makes 4. */
static int mode_exec(const prog_args *a)
{
    calls(3);
    execl("/proc/self/exe", a->argv[0], "calls", "4", (char *)NULL);
    return 9;
}

/* 3 calls, then argv[2...] (which makes none). */
static int mode_exec_into(const prog_args *a)
{
    calls(3);
    execvp(a->argv[2], a->argv + 2);
    return 9;
}

/* The child outlives its parent, calls, exits 5. */
static int mode_orphan(const prog_args *a)
{
    (void)a;
    if (fork() == 0) {
        usleep(300000);
        calls(7);
        exit(5);
    }
    calls(1);
    return 0;
}

#ifndef CG_DLOPEN_ONLY
/* Main 2 calls, then N named threads of 4 calls each. */
static int mode_threads(const prog_args *a)
{
    calls(2);
    pthread_t t[16];
    int n = a->n > 16 ? 16 : a->n;
    for (int i = 0; i < n; i++)
        pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    return 0;
}
#endif

/* Reaches the driver only through dlopen + dlsym. */
static int mode_dlopen(const prog_args *a)
{
    (void)a;
    void *h = dlopen("libcgtoy.so", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 4;
    }
    toy_result_t (*add)(int32_t, int32_t, int32_t *) = (toy_result_t(*)(int32_t, int32_t, int32_t *))dlsym(h, "toyAdd");
    int32_t sum = 0;
    for (int i = 0; i < 6; i++)
        add(i, 1, &sum);
    printf("sum %d\n", sum);
    return 0;
}

/* dlerror() at main and after N calls: NULL plainly, nothing failed. */
static int mode_dlerror(const prog_args *a)
{
    const char *e = dlerror();
    printf("at main: %s\n", e ? e : "NULL");
    calls(a->n);
    e = dlerror();
    printf("after calls: %s\n", e ? e : "NULL");
    return 0;
}

static int mode_env(const prog_args *a)
{
    const char *v = getenv(a->argv[2]);
    printf("%s\n", v ? v : "(unset)");
    return 0;
}

static _Noreturn void wait_for_a_signal(void)
{
    for (;;)
        pause();
}

/* N calls, "ready" on stdout, then waits until a signal ends it. */
static int mode_wait_signal(const prog_args *a)
{
    calls(a->n);
    printf("ready\n");
    fflush(stdout);
    wait_for_a_signal();
}

/* Proves the program started. */
static int mode_touch(const prog_args *a)
{
    FILE *f = fopen(a->argv[2], "w");
    if (f) fclose(f);
    return 0;
}

static const struct {
    const char *name;
    int min_argc; /* fewer arguments: an unknown mode */
    int (*run)(const prog_args *a);
} modes[] = {
    {"calls", 0, mode_calls},
    {"exit", 0, mode_exit},
    {"abort", 0, mode_abort},
    {"own-segv", 0, mode_own_segv},
    {"segv", 0, mode_segv},
    {"_exit", 0, mode__exit},
    {"fork", 0, mode_fork},
    {"exec", 0, mode_exec},
    {"exec-into", 3, mode_exec_into},
    {"orphan", 0, mode_orphan},
#ifndef CG_DLOPEN_ONLY
    {"threads", 0, mode_threads},
#endif
    {"dlopen", 0, mode_dlopen},
    {"dlerror", 0, mode_dlerror},
    {"env", 0, mode_env},
    {"wait-signal", 0, mode_wait_signal},
    {"touch", 0, mode_touch},
};

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "calls";
    prog_args a = {argc, argv, argc > 2 ? atoi(argv[2]) : 5};
    for (size_t i = 0; i < sizeof modes / sizeof *modes; i++)
        if (!strcmp(mode, modes[i].name) && argc >= modes[i].min_argc) return modes[i].run(&a);
    fprintf(stderr, "prog: unknown mode %s\n", mode);
    return 2;
}
