/* The reader of saved reports (callguard report FILE): any bytes are read
 * or refused with a one-line message, and the table written from what was
 * read holds no terminal control characters. */
#include "fuzz_input.h"

#include <callguard/callguard.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_file(data, size, path, sizeof path);
    const char *outpath = "/dev/null"; /* a device: written in place */
    for (int format = 0; format < 2; format++) {
        const char *paths[] = {path, path};
        int rc = cg_report_merge_files(paths, format ? 2 : 1, outpath, format ? CG_REPORT_TEXT : CG_REPORT_JSON);
        if (rc != CG_OK && strchr(cg_last_error(), '\n')) abort();
    }
    close(fd);
    return 0;
}
