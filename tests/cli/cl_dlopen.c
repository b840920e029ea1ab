/* An OpenCL program that never links libOpenCL.so.1: it dlopens it by
 * soname and calls through dlsym, as PyTorch and Triton do with libcuda.
 * Only a soname shim reaches such calls. Makes 3 clGetPlatformIDs calls and
 * prints the platform name. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <dlfcn.h>
#include <stdio.h>

int main(void)
{
    void *h = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    cl_int (*get_ids)(cl_uint, cl_platform_id *, cl_uint *) =
        (cl_int(*)(cl_uint, cl_platform_id *, cl_uint *))dlsym(h, "clGetPlatformIDs");
    cl_int (*get_info)(cl_platform_id, cl_platform_info, size_t, void *, size_t *) =
        (cl_int(*)(cl_platform_id, cl_platform_info, size_t, void *, size_t *))dlsym(h, "clGetPlatformInfo");
    cl_platform_id p = NULL;
    cl_uint n = 0;
    for (int i = 0; i < 3; i++)
        get_ids(1, &p, &n);
    char name[256] = "";
    if (n) get_info(p, CL_PLATFORM_NAME, sizeof name, name, NULL);
    printf("platforms %u: %s\n", n, name);
    return n ? 0 : 1;
}
