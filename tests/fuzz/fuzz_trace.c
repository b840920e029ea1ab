/* The merge of a job's per-process traces (cgi_trace_job, what `callguard
 * trace` runs): any bytes in a folder's file are merged or refused with a
 * one-line reason that names the file, and what is merged is JSON again
 * (read back with the same scanner). The input is a file of the caller's
 * (the merge refuses links such as /proc/self/fd/N), given twice: once
 * alone and once beside a copy of itself, so two processes share a clock
 * and a pid. */
#include "fuzz_input.h"

#include "trace_job.h"
#include "trace_jscan.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

static char dir[64], in[96], twin[96], out[96];

static void put(const char *path, const uint8_t *data, size_t size)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size)) abort();
    close(fd);
}

static void member(cgi_jscan *j, cgi_jspan key, void *ctx)
{
    (void)key, (void)ctx;
    cgi_jscan_value(j, NULL);
}

static void merge(const char *const *inputs, size_t n)
{
    cgi_job_totals t;
    char err[1024];
    unlink(out);
    if (cgi_trace_job(inputs, n, out, &t, err, sizeof err) != 0) {
        if (!err[0] || strchr(err, '\n') || (!strstr(err, dir) && !strstr(err, "every file was empty"))) abort();
        return;
    }
    int fd = open(out, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) abort();
    char *b = malloc((size_t)st.st_size + 1);
    if (!b || read(fd, b, (size_t)st.st_size) != st.st_size) abort();
    close(fd);
    cgi_jscan j = {.start = b, .s = b, .end = b + st.st_size};
    cgi_jscan_object(&j, member, NULL);
    if (j.err || cgi_jscan_peek(&j)) abort();
    free(b);
}

/* Nothing left in /tmp when the fuzzer ends (libFuzzer exits by exit()). */
static void clean(void)
{
    unlink(in), unlink(twin), unlink(out);
    rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/cg-fuzz-trace-XXXXXX");
        if (!mkdtemp(dir)) abort();
        snprintf(in, sizeof in, "%s/a.json", dir);
        snprintf(twin, sizeof twin, "%s/b.json", dir);
        snprintf(out, sizeof out, "%s/out", dir);
        atexit(clean);
    }
    put(in, data, size);
    const char *one[] = {in}, *two[] = {in, twin};
    merge(one, 1);
    put(twin, data, size);
    merge(two, 2);
    unlink(twin);
    return 0;
}
