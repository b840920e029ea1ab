/* What a program sees of the loader's names that the API headers do not
 * declare: the loader's own zel* functions and a ProcAddrTable getter. Built
 * twice, against the real loader and against libcallguard_ze.so in its
 * place; the output (run plain, preloaded or linked) must be the same.
 * Prints the loader's components, the getter's result and which object the
 * table's zeInit points into (the driver in direct mode, the loader with
 * ZE_ENABLE_LOADER_INTERCEPT=1, the tracing layer with
 * ZE_ENABLE_TRACING_LAYER=1), and the number of drivers. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <level_zero/loader/ze_loader.h>
#include <level_zero/ze_ddi.h>

#include "ze_util.h"

int main(void)
{
    ZE_OK(zeInit(0));
    size_t n = 0;
    ZE_OK(zelLoaderGetVersions(&n, NULL));
    zel_component_version_t versions[8];
    if (n > 8) n = 8;
    ZE_OK(zelLoaderGetVersions(&n, versions));
    for (size_t i = 0; i < n; i++)
        printf("component %s\n", versions[i].component_name);

    ze_global_dditable_t table = {0};
    ZE_OK(zeGetGlobalProcAddrTable(ZE_API_VERSION_CURRENT, &table));
    Dl_info info = {0};
    const char *where = table.pfnInit && dladdr((void *)table.pfnInit, &info) && info.dli_fname
                            ? strrchr(info.dli_fname, '/') ? strrchr(info.dli_fname, '/') + 1 : info.dli_fname
                            : "nowhere";
    printf("zeGetGlobalProcAddrTable: pfnInit in %s\n", where);

    uint32_t drivers = 0;
    ZE_OK(zeDriverGet(&drivers, NULL));
    printf("drivers %u\n", drivers);
    return 0;
}
