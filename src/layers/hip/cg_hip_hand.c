/* cg_hip_hand.c: the HIP layer's hand-written wrappers (wrapper = hand in apis/hip.ini). cg_hip.c
 * #includes this file at its end, so it sees the generated cgl_sites, cgl_layer and cgl_guarded_<name>
 * (include/callguard/layer.h, "Hand-written wrappers"). Not compiled on its own.
 *
 * The runtime's identity for the quirks file (cg_layer_identify, docs/quirks.md). HIP initializes
 * itself at whatever call comes first, and programs rarely call hipInit (PyTorch starts with
 * hipGetDeviceCount): so hipInit, hipGetDeviceCount and the module loads ask for the probe before their
 * guarded call. A program whose first call is a load still gets the fix of a load quirk; and the
 * probe's hipDriverGetVersion, which initializes HIP, is then the process's first HIP call, made by one
 * thread under the runtime's probe lock while other threads' first hipInit or hipGetDeviceCount wait
 * for it (the first-call bug of rocm-systems#10196, apis/quirks.ini). The runtime runs the probe once
 * per process and only when the quirks file has a HIP quirk; every later call costs one atomic load
 * more.
 *
 * What HIP says of itself: hipDriverGetVersion (HIP_VERSION: major * 10000000 + minor * 100000 +
 * patch, 50221153 for ROCm 5.2.3's runtime), written "5.2.21153"; the first device's name
 * (hipDeviceGetName) and AMD's PCI vendor id, 0x1002, when there is a device (none: vendor 0, no name,
 * so a quirk that names no vendor still matches on the version). */

#include <stdio.h>
#include <string.h>

static unsigned cgl_hip_probe(cg_layer *l, cg_identity *ids, unsigned max)
{
    hipError_t (*version)(int *) = cg_real_function(l, "hipDriverGetVersion");
    hipError_t (*count)(int *) = cg_real_function(l, "hipGetDeviceCount");
    hipError_t (*name)(char *, int, hipDevice_t) = cg_real_function(l, "hipDeviceGetName");
    int v = 0, n = 0;
    if (!max || !version || version(&v) != hipSuccess || v <= 0) return 0;
    cg_identity *id = &ids[0];
    memset(id, 0, sizeof *id);
    snprintf(id->version, sizeof id->version, "%d.%d.%d", v / 10000000, v / 100000 % 100, v % 100000);
    if (count && count(&n) == hipSuccess && n > 0) {
        id->vendor = 0x1002;
        if (!name || name(id->name, (int)sizeof id->name - 1, 0) != hipSuccess) id->name[0] = '\0';
    }
    return 1;
}

CG_EXPORT hipError_t hipInit(unsigned int flags)
{
    cg_layer_identify(&cgl_layer, cgl_hip_probe);
    return cgl_guarded_hipInit(flags);
}

CG_EXPORT hipError_t hipGetDeviceCount(int *count)
{
    cg_layer_identify(&cgl_layer, cgl_hip_probe);
    return cgl_guarded_hipGetDeviceCount(count);
}

CG_EXPORT hipError_t hipModuleLoad(hipModule_t *module, const char *fname)
{
    cg_layer_identify(&cgl_layer, cgl_hip_probe);
    return cgl_guarded_hipModuleLoad(module, fname);
}

CG_EXPORT hipError_t hipModuleLoadData(hipModule_t *module, const void *image)
{
    cg_layer_identify(&cgl_layer, cgl_hip_probe);
    return cgl_guarded_hipModuleLoadData(module, image);
}

CG_EXPORT hipError_t hipModuleLoadDataEx(hipModule_t *module, const void *image, unsigned int numOptions,
                                         hipJitOption *options, void **optionValues)
{
    cg_layer_identify(&cgl_layer, cgl_hip_probe);
    return cgl_guarded_hipModuleLoadDataEx(module, image, numOptions, options, optionValues);
}
