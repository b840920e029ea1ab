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

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "calls";
    int n = argc > 2 ? atoi(argv[2]) : 5;
    if (!strcmp(mode, "calls")) {
        calls(n);
        return 0;
    }
    if (!strcmp(mode, "exit")) {
        calls(5);
        exit(n);
    }
    if (!strcmp(mode, "abort")) {
        calls(5);
        abort();
    }
    if (!strcmp(mode, "own-segv")) return own_segv_mode(argc > 2 ? argv[2] : "sigaction");
    if (!strcmp(mode, "segv")) { /* 5 calls, then a fault nobody handles */
        calls(5);
        fault();
        return 8;
    }
    if (!strcmp(mode, "_exit")) {
        calls(5);
        _exit(0);
    }
    if (!strcmp(mode, "fork")) { /* parent 3 + 2 calls, child 4 */
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
    if (!strcmp(mode, "exec")) { /* 3 calls, then the new image makes 4 */
        calls(3);
        execl("/proc/self/exe", argv[0], "calls", "4", (char *)NULL);
        return 9;
    }
    if (!strcmp(mode, "exec-into") && argc > 2) { /* 3 calls, then argv[2...] (which makes none) */
        calls(3);
        execvp(argv[2], argv + 2);
        return 9;
    }
    if (!strcmp(mode, "orphan")) { /* the child outlives its parent, calls, exits 5 */
        if (fork() == 0) {
            usleep(300000);
            calls(7);
            exit(5);
        }
        calls(1);
        return 0;
    }
#ifndef CG_DLOPEN_ONLY
    if (!strcmp(mode, "threads")) { /* main 2 calls, then N named threads of 4 calls each */
        calls(2);
        pthread_t t[16];
        if (n > 16) n = 16;
        for (int i = 0; i < n; i++)
            pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i);
        for (int i = 0; i < n; i++)
            pthread_join(t[i], NULL);
        return 0;
    }
#endif
    if (!strcmp(mode, "dlopen")) { /* reaches the driver only through dlopen + dlsym */
        void *h = dlopen("libcgtoy.so", RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            fprintf(stderr, "dlopen: %s\n", dlerror());
            return 4;
        }
        toy_result_t (*add)(int32_t, int32_t, int32_t *) =
            (toy_result_t(*)(int32_t, int32_t, int32_t *))dlsym(h, "toyAdd");
        int32_t sum = 0;
        for (int i = 0; i < 6; i++)
            add(i, 1, &sum);
        printf("sum %d\n", sum);
        return 0;
    }
    if (!strcmp(mode, "dlerror")) { /* dlerror() at main and after N calls: NULL plainly, nothing failed */
        const char *e = dlerror();
        printf("at main: %s\n", e ? e : "NULL");
        calls(n);
        e = dlerror();
        printf("after calls: %s\n", e ? e : "NULL");
        return 0;
    }
    if (!strcmp(mode, "env")) {
        const char *v = getenv(argv[2]);
        printf("%s\n", v ? v : "(unset)");
        return 0;
    }
    if (!strcmp(mode, "wait-signal")) { /* N calls, "ready" on stdout, then waits until a signal ends it */
        calls(n);
        printf("ready\n");
        fflush(stdout);
        for (;;)
            pause();
    }
    if (!strcmp(mode, "touch")) { /* proves the program started */
        FILE *f = fopen(argv[2], "w");
        if (f) fclose(f);
        return 0;
    }
    fprintf(stderr, "prog: unknown mode %s\n", mode);
    return 2;
}
