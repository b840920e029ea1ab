/* zesim_bad_cgsim_env_refused: an unknown CGSIM_* variable or a bad value makes zeInit fail, with one stderr line
 * naming the variable, its value and what is accepted. Each case runs in a forked child whose stderr is captured. */
#include "zesim_test.h"

#include <sys/wait.h>
#include <unistd.h>

static void expect_refused(const char *name, const char *value, const char *accepted_hint)
{
    int fds[2];
    CHECK(pipe(fds) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], 2);
        setenv(name, value, 1);
        ze_result_t r = zeInit(0);
        _exit(r == ZE_RESULT_SUCCESS ? 1 : 0);
    }
    close(fds[1]);
    char text[4096] = {0};
    size_t got = 0;
    ssize_t n;
    while (got < sizeof text - 1 && (n = read(fds[0], text + got, sizeof text - 1 - got)) > 0)
        got += (size_t)n;
    close(fds[0]);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    fprintf(stderr, "%s=%s -> %s", name, value, text);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0); /* zeInit failed */
    char expected[256];
    snprintf(expected, sizeof expected, "%s=%s", name, value);
    CHECK(strstr(text, expected) != NULL);
    CHECK(strstr(text, accepted_hint) != NULL);
}

int main(void)
{
    expect_refused("CGSIM_FOO", "1", "CGSIM_COMPILE_MS");
    expect_refused("CGSIM_DEVICES", "0", "1 to 64");
    expect_refused("CGSIM_DEVICES", "65", "1 to 64");
    expect_refused("CGSIM_COMPILE_MS", "fast", "0 to 600000");
    expect_refused("CGSIM_KERNEL_US", "-5", "0 to 60000000");
    expect_refused("CGSIM_COMPILER_RACE", "maybe", "off, abort");
    expect_refused("CGSIM_DRIVER_VERSION", "26.27", "YY.WW.BUILD or YY.WW.BUILD.HOTFIX");
    expect_refused("CGSIM_DRIVER_VERSION", "26.27.39122.x", "YY.WW.BUILD or YY.WW.BUILD.HOTFIX");
    expect_refused("CGSIM_VENDOR_ID", "intel", "a PCI vendor id");
    expect_refused("CGSIM_DEVICE_NAME", "", "1 to 255 characters");
    puts("ok");
    return 0;
}
