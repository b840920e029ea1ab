/* The reader of one statistics file (cgi_stats_read_fd, what the merge of a
 * run reads each process's file with) and the report written from it: any
 * bytes, in a file of the right size or cut short, are read or refused with
 * a one-line reason, nothing is read past a field, and the report holds no
 * terminal control characters.
 *
 * The input is laid out in the file as the interesting parts are: its first
 * CORE bytes at the start (the header and the first 32 records), the rest
 * at the stalls (then the thread slots); the file is sparse in between. */
#include "fuzz_input.h"

#include "report.h"

#include <fcntl.h>
#include <string.h>

#define CORE (offsetof(cgi_stats_region, r) + 32 * sizeof(cgi_stats_record))

static cgi_stats_region *region;

static void read_and_report(int fd)
{
    char why[160];
    memset(why, 0, sizeof why);
    if (cgi_stats_read_fd(fd, region, why, sizeof why) != 0) {
        if (!why[0] || strchr(why, '\n')) abort();
        return;
    }
    cgi_proc_view v = {.region = region};
    for (int format = 0; format < 2; format++)
        if (cgi_report_to("/dev/null", &v, 1, 0, format ? CG_REPORT_TEXT : CG_REPORT_JSON) != CG_OK) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!region && !(region = calloc(1, sizeof *region))) abort();
    int fd = memfd_create("fuzz-stats", MFD_CLOEXEC);
    if (fd < 0) abort();
    size_t core = size < CORE ? size : CORE;
    if (pwrite(fd, data, core, 0) != (ssize_t)core) abort();
    if (size > core &&
        pwrite(fd, data + core, size - core, (off_t)offsetof(cgi_stats_region, stall)) != (ssize_t)(size - core))
        abort();
    if (ftruncate(fd, (off_t)sizeof(cgi_stats_region)) != 0) abort();
    read_and_report(fd);
    /* The same file cut short where the input ends. */
    if (ftruncate(fd, (off_t)core) != 0) abort();
    read_and_report(fd);
    close(fd);
    return 0;
}
