/* cg_cl_hand.c: the OpenCL layer's hand-written wrapper (wrapper = hand in apis/cl.ini). cg_cl.c
 * #includes this file at its end, so it sees the generated cgl_sites, cgl_layer and cgl_guarded_<name>
 * (include/callguard/layer.h, "Hand-written wrappers"). Not compiled on its own.
 *
 * clGetPlatformIDs makes its guarded call and, once it succeeded, asks the runtime to read the
 * drivers' identity for the quirks file (cg_layer_identify, docs/quirks.md): before it returns, so
 * before the program can reach clBuildProgram. The runtime runs the probe once per process and only
 * when the quirks file has an OpenCL quirk; every later call costs one atomic load more.
 *
 * What OpenCL says of a driver, per platform: CL_PLATFORM_NAME; and of its first device,
 * CL_DEVICE_VENDOR_ID (the PCI vendor id) and CL_DRIVER_VERSION (NEO: "YY.WW.BUILD.HOTFIX"). */

#include <stdio.h>
#include <string.h>

#define CGL_CL_MAX_PLATFORMS 16

static unsigned cgl_cl_probe(cg_layer *l, cg_identity *ids, unsigned max)
{
    cl_int (*platforms)(cl_uint, cl_platform_id *, cl_uint *) = cg_real_function(l, "clGetPlatformIDs");
    cl_int (*platform_info)(cl_platform_id, cl_platform_info, size_t, void *, size_t *) =
        cg_real_function(l, "clGetPlatformInfo");
    cl_int (*device_ids)(cl_platform_id, cl_device_type, cl_uint, cl_device_id *, cl_uint *) =
        cg_real_function(l, "clGetDeviceIDs");
    cl_int (*device_info)(cl_device_id, cl_device_info, size_t, void *, size_t *) =
        cg_real_function(l, "clGetDeviceInfo");
    if (!platforms || !platform_info || !device_ids || !device_info) return 0;
    cl_platform_id p[CGL_CL_MAX_PLATFORMS];
    cl_uint n = 0;
    if (platforms(CGL_CL_MAX_PLATFORMS, p, &n) != CL_SUCCESS) return 0;
    if (n > CGL_CL_MAX_PLATFORMS) n = CGL_CL_MAX_PLATFORMS;
    unsigned got = 0;
    for (cl_uint i = 0; i < n && got < max; i++) {
        cg_identity *id = &ids[got];
        memset(id, 0, sizeof *id);
        if (platform_info(p[i], CL_PLATFORM_NAME, sizeof id->name - 1, id->name, NULL) != CL_SUCCESS)
            id->name[0] = '\0';
        cl_device_id dev = NULL;
        cl_uint nd = 0;
        if (device_ids(p[i], CL_DEVICE_TYPE_ALL, 1, &dev, &nd) != CL_SUCCESS || nd == 0 || !dev) continue;
        cl_uint vendor = 0;
        if (device_info(dev, CL_DEVICE_VENDOR_ID, sizeof vendor, &vendor, NULL) == CL_SUCCESS) id->vendor = vendor;
        if (device_info(dev, CL_DRIVER_VERSION, sizeof id->version - 1, id->version, NULL) != CL_SUCCESS) continue;
        got++;
    }
    return got;
}

CG_EXPORT cl_int CL_API_CALL clGetPlatformIDs(cl_uint num_entries, cl_platform_id *platforms, cl_uint *num_platforms)
{
    cl_int r = cgl_guarded_clGetPlatformIDs(num_entries, platforms, num_platforms);
    if (r == CL_SUCCESS) cg_layer_identify(&cgl_layer, cgl_cl_probe);
    return r;
}
