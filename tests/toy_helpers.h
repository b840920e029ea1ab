/* What the runners of the toy layer's behaviour tests share
 * (test_serialize.c, test_stats.c, test_stall.c): the toy driver's devices,
 * its compile race, a thread that holds a domain and a handle's lock, and a
 * file read whole. */
#ifndef TOY_HELPERS_H
#define TOY_HELPERS_H

#include <stdint.h>
#include <toy.h>

/* Device i of the toy driver; aborts when it has none. */
toy_device_t dev(uint32_t i);
/* nthreads compile at once, spread over `devices`, each sleeping sleep_us in
 * the toy compiler's race window; returns how many failed. */
int run_race(int nthreads, int devices, uint32_t sleep_us);
/* child_compile_race, a child case: 8 threads compile on one device;
 * argv[0] = plain | api | env. */
int child_compile_race(int argc, char **argv);
/* A thread's body: holds device 2's handle lock and, in a 300 ms
 * toyCompile on device 0, the compiler's domain if serialized. */
void *hold_lock(void *arg);
/* The whole file, valid until the next call; NULL if it cannot be read. */
char *slurp(const char *path);

#endif
