/* answers.c: asks the HIP runtime what it answers without an AMD GPU and prints it, one line per call,
 * so a run under callguard can be compared with a plain one (tests/hip/test_hip.py). Built twice: linked
 * to libamdhip64, and (CG_ANSWERS_DLOPEN) opening the soname given as argument 1 and looking each name up,
 * as Triton's AMD backend does. Debian 12's runtime (ROCm 5.2.3) answers hipGetDeviceCount with 100
 * (hipErrorNoDevice) and hipDriverGetVersion with 50221153. */
#define __HIP_PLATFORM_AMD__ 1
#include <hip/hip_runtime_api.h>

#include "../answers.h"

int main(int argc, char **argv)
{
    cg_answers_open(argc, argv);
    int n = -1, v = -1, rv = -1;
    hipError_t e = CALL(hipInit)(0);
    printf("hipInit %d\n", (int)e);
    e = CALL(hipGetDeviceCount)(&n);
    printf("hipGetDeviceCount %d %d\n", (int)e, n);
    e = CALL(hipDriverGetVersion)(&v);
    printf("hipDriverGetVersion %d %d\n", (int)e, v);
    e = CALL(hipRuntimeGetVersion)(&rv);
    printf("hipRuntimeGetVersion %d %d\n", (int)e, rv);
    e = CALL(hipSetDevice)(0);
    printf("hipSetDevice %d\n", (int)e);
    printf("hipGetErrorName %s\n", CALL(hipGetErrorName)(hipErrorNoDevice));
    hipModule_t m = NULL;
    e = CALL(hipModuleLoadData)(&m, "not a code object");
    printf("hipModuleLoadData %d\n", (int)e);
    return 0;
}
