/* zesim_compiler_race_aborts: with CGSIM_COMPILER_RACE=abort, two threads inside zeModuleCreate at once make the
 * driver abort() (as IGC 2.38.x did); with CGSIM_COMPILER_RACE=off the same program succeeds. Each case runs in a
 * forked child so the parent can observe the SIGABRT. */
#include "zesim_test.h"

#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define THREADS 8

static pthread_barrier_t barrier;
static struct sim sim;

static void *compile(void *arg)
{
    (void)arg;
    uint8_t buf[64];
    const char *specs[] = {"k"};
    size_t len = make_spirv(buf, sizeof buf, specs, 1);
    pthread_barrier_wait(&barrier);
    ze_module_handle_t mod;
    OK(create_module(&sim, ZE_MODULE_FORMAT_IL_SPIRV, buf, len, &mod, NULL));
    OK(zeModuleDestroy(mod));
    return NULL;
}

static int run_child(const char *race)
{
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        /* The environment is read at zeInit, which happens only in the child. */
        setenv("CGSIM_COMPILER_RACE", race, 1);
        sim = sim_open();
        pthread_barrier_init(&barrier, NULL, THREADS);
        pthread_t threads[THREADS];
        for (int i = 0; i < THREADS; i++)
            CHECK(pthread_create(&threads[i], NULL, compile, NULL) == 0);
        for (int i = 0; i < THREADS; i++)
            pthread_join(threads[i], NULL);
        _exit(0);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    return status;
}

int main(void)
{
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);

    int status = run_child("abort");
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGABRT);

    status = run_child("off");
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    puts("ok");
    return 0;
}
