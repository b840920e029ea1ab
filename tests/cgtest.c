/* The test runner behind cgtest.h. */
#define _GNU_SOURCE
#include "cgtest.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern const cgtest_case cgtest_cases[];
extern const size_t cgtest_ncases;
extern char **environ;

double cgtest_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void cgtest_sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

const char *cgtest_tmpdir(void)
{
    static char dir[256];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "%s/cgtest-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        if (!mkdtemp(dir)) {
            perror("mkdtemp");
            exit(1);
        }
    }
    return dir;
}

const char *cgtest_write_file(const char *name, const char *text)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", cgtest_tmpdir(), name);
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
    return path;
}

/* Reads what is there; returns 0 at end of file. */
static int cgtest_drain(int fd, char *buf, size_t cap, size_t *len)
{
    char tmp[4096];
    ssize_t n = read(fd, tmp, sizeof tmp);
    if (n < 0 && errno == EINTR) return 1;
    if (n <= 0) return 0;
    size_t room = cap - 1 - *len;
    size_t take = (size_t)n < room ? (size_t)n : room;
    memcpy(buf + *len, tmp, take);
    *len += take;
    buf[*len] = '\0';
    return 1;
}

int cgtest_run(cgtest_result *r, const char *const *env, const char *const *argv)
{
    int out[2], err[2];
    memset(r, 0, sizeof *r);
    if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) return -1;
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        dup2(out[1], 1);
        dup2(err[1], 2);
        /* A child expected to abort must not leave a core behind. */
        struct rlimit no_core = {0, 0};
        setrlimit(RLIMIT_CORE, &no_core);
        for (const char *const *e = env; e && *e; e++) {
            if (strchr(*e, '='))
                putenv((char *)*e);
            else
                unsetenv(*e);
        }
        execv(argv[0], (char *const *)argv);
        fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(out[1]);
    close(err[1]);
    size_t no = 0, ne = 0;
    struct pollfd p[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
    int open_fds = 2;
    while (open_fds > 0) {
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (int i = 0; i < 2; i++) {
            if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            if (!cgtest_drain(p[i].fd, i ? r->err : r->out, i ? sizeof r->err : sizeof r->out, i ? &ne : &no)) {
                close(p[i].fd);
                p[i].fd = -1;
                open_fds--;
            }
        }
    }
    while (waitpid(pid, &r->status, 0) < 0 && errno == EINTR) {}
    return 0;
}

int cgtest_child(cgtest_result *r, const char *const *env, const char *name, const char *const *args)
{
    const char *argv[32] = {"/proc/self/exe", "--child", name};
    int n = 3;
    for (const char *const *a = args; a && *a && n < 31; a++)
        argv[n++] = *a;
    argv[n] = NULL;
    static char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len > 0) {
        self[len] = '\0';
        argv[0] = self;
    }
    return cgtest_run(r, env, argv);
}

static int cgtest_usage(void)
{
    fprintf(stderr, "usage: cgtest NAME [ARGS...] | cgtest --list\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 2) return cgtest_usage();
    if (strcmp(argv[1], "--list") == 0) {
        /* The tests, one a line: ctest learns them from this (tests/cgtest.cmake). */
        for (size_t i = 0; i < cgtest_ncases; i++)
            if (strncmp(cgtest_cases[i].name, "child_", 6) != 0) puts(cgtest_cases[i].name);
        return 0;
    }
    int child = strcmp(argv[1], "--child") == 0;
    if (child && argc < 3) return cgtest_usage();
    const char *name = argv[child ? 2 : 1];
    for (size_t i = 0; i < cgtest_ncases; i++)
        if (strcmp(cgtest_cases[i].name, name) == 0) {
            int rc = cgtest_cases[i].fn(argc - (child ? 3 : 2), argv + (child ? 3 : 2));
            if (!child) fprintf(stderr, "%s: %s\n", name, rc ? "FAILED" : "ok");
            return rc;
        }
    fprintf(stderr, "cgtest: no test named '%s' (cgtest --list lists them)\n", name);
    return 2;
}

char *cgtest_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) free(s), s = NULL;
    if (s) s[n] = '\0';
    fclose(f);
    if (len) *len = s ? (size_t)n : 0;
    return s;
}
