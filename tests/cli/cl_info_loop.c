/* An OpenCL program that asks its device's name N times (argv[1], default
 * 200,000) with clGetDeviceInfo, as a tool polling a device does: the
 * timeline's test of a long run (every call an event, with its arguments).
 * Prints the name and the size the last call returned. `bad`: two calls
 * that fail before reading a bad string pointer or writing an output (no
 * program; an unknown param_name), which the timeline must not read, and
 * one with no output that fails (clRetainContext of no context). `N kill`: each third of the first N/2 calls
 * also asks the platform's name (runs of one site's calls, ended by another's), then the process kills itself
 * (SIGKILL), its last N/2 calls one run, where its statistics file holds them. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "bad") == 0) {
        cl_int err = 0;
        cl_kernel k = clCreateKernel(NULL, (const char *)16, &err);
        cl_platform_id p;
        cl_device_id d;
        if (clGetPlatformIDs(1, &p, NULL) != CL_SUCCESS || clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL)) return 1;
        cl_int info = clGetDeviceInfo(d, 0x7fff, 0, NULL, (size_t *)16);
        cl_int retain = clRetainContext(NULL); /* fails, a call with no output */
        printf("%s %d %d %d\n", k ? "kernel" : "none", err, info, retain);
        return 0;
    }
    long n = argc > 1 ? atol(argv[1]) : 200000;
    cl_platform_id p;
    cl_device_id d;
    cl_uint np = 0;
    if (clGetPlatformIDs(1, &p, &np) != CL_SUCCESS || np == 0 ||
        clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL) != CL_SUCCESS)
        return 1;
    char name[256] = "";
    size_t got = 0;
    int kill = argc > 2 && strcmp(argv[2], "kill") == 0;
    for (long i = 0; i < n; i++) {
        if (clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof name, name, &got) != CL_SUCCESS) return 2;
        if (kill && i < n / 2 && i % 3 == 0 && clGetPlatformInfo(p, CL_PLATFORM_NAME, 0, NULL, NULL) != CL_SUCCESS)
            return 3;
    }
    printf("%s %zu\n", name, got);
    fflush(stdout);
    if (kill) raise(SIGKILL);
    return 0;
}
