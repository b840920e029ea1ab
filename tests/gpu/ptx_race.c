/* The compile race on real PTX (tests/gpu/run.sh, part a): 16 threads, started on a barrier, each load a
 * distinct module with cuModuleLoadData (PTXDIR/k00.ptx .. k15.ptx, made by make_ptx.sh with nvcc) into the
 * primary context, then look up its entry point k<i>. Prints
 *   "loaded N of 16 modules, at most M threads inside, loads took T ms"
 * where M is what the probe below the layer counted (cgcuda_standin_max_inside of PROBE, -1 without one).
 * Exit 0 when every module loaded and its kernel was found.
 *
 *   cgcuda_ptx_race PTXDIR [PROBE.so]
 * Linked to libcuda.so.1 with no run path: LD_LIBRARY_PATH finds the driver (or the stand-in), and under
 * `callguard run` the libcuda.so.1 shim. */
#define _GNU_SOURCE
#include <cuda.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NTHREADS 16

static CUcontext ctx;
static pthread_barrier_t start;
static char *image[NTHREADS];
static int loaded[NTHREADS];

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s && fread(s, 1, (size_t)n, f) == (size_t)n)
        s[n] = 0;
    else
        free(s), s = NULL;
    fclose(f);
    return s;
}

static void *worker(void *arg)
{
    int i = (int)(long)arg;
    CUresult r = cuCtxSetCurrent(ctx);
    pthread_barrier_wait(&start);
    CUmodule mod;
    if (r == CUDA_SUCCESS) r = cuModuleLoadData(&mod, image[i]);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "thread %d: cuModuleLoadData: %d\n", i, (int)r);
        return NULL;
    }
    char name[16];
    snprintf(name, sizeof name, "k%d", i);
    CUfunction f;
    r = cuModuleGetFunction(&f, mod, name);
    if (r != CUDA_SUCCESS) fprintf(stderr, "thread %d: cuModuleGetFunction(%s): %d\n", i, name, (int)r);
    loaded[i] = r == CUDA_SUCCESS && cuModuleUnload(mod) == CUDA_SUCCESS;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: cgcuda_ptx_race PTXDIR [PROBE.so]\n");
        return 2;
    }
    for (int i = 0; i < NTHREADS; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/k%02d.ptx", argv[1], i);
        if (!(image[i] = read_file(path))) {
            fprintf(stderr, "cgcuda_ptx_race: cannot read %s\n", path);
            return 2;
        }
    }
    CUdevice dev;
    CUresult r = cuInit(0);
    if (r == CUDA_SUCCESS) r = cuDeviceGet(&dev, 0);
    if (r == CUDA_SUCCESS) r = cuDevicePrimaryCtxRetain(&ctx, dev);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "set-up failed: %d\n", (int)r);
        return 1;
    }
    pthread_t t[NTHREADS];
    pthread_barrier_init(&start, NULL, NTHREADS);
    double t0 = now_ms();
    for (long i = 0; i < NTHREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    int n = 0;
    for (int i = 0; i < NTHREADS; i++) {
        pthread_join(t[i], NULL);
        n += loaded[i];
    }
    double took = now_ms() - t0;
    int inside = -1;
    void *h = argc > 2 ? dlopen(argv[2], RTLD_NOW | RTLD_NOLOAD) : NULL;
    int (*max_inside)(void) = h ? (int (*)(void))dlsym(h, "cgcuda_standin_max_inside") : NULL;
    if (max_inside) inside = max_inside();
    printf("loaded %d of %d modules, at most %d threads inside, loads took %.1f ms\n", n, NTHREADS, inside, took);
    cuDevicePrimaryCtxRelease(dev);
    return n == NTHREADS ? 0 : 1;
}
