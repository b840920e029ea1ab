/* Thread-rule scenarios on Level Zero (Debian's loader with the simulator
 * driver), for tests/threads/threads_tests.sh. Modes:
 *   append    two threads, started on a barrier, append launches of their
 *             own kernels to one command list
 *   append-abort  append, then abort(): the violations must survive in the
 *             statistics file
 *   own       each appends to its own command list: nothing to report
 *   sequence  two threads set the argument of one kernel, then append its launch
 *             to their own command lists
 *   reuse     thread A sets the argument of kernel K and waits; K is destroyed
 *             and a new kernel gets K's handle value; thread B sets and
 *             launches it, then A sets and launches it: a reused handle is a
 *             new object, nothing to report (prints "reused 1" when the value
 *             came back; the checker would otherwise name A's old setting)
 *   wait-signal  two synchronous immediate command lists whose handles the
 *             old 256 striped locks put in one stripe (the test makes lists
 *             until two collide); thread A appends a wait on an event to
 *             the first, which waits in the driver until thread B appends
 *             the event's signal to the second. Prints "collided after N
 *             lists"; exits 4 when it has not finished within 20 s (the
 *             deadlock this case guards against)
 * Prints "thread A TID" and "thread B TID". Exits 3 on an unexpected result. */
#define _GNU_SOURCE
#include "../ze/ze_util.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

static ze_sim sim;
static ze_module_handle_t module;
static ze_kernel_handle_t kernels[2];
static ze_command_list_handle_t lists[2];
static pthread_barrier_t start;
static const char *mode;
static pid_t tids[2];
/* Rounds done: each thread goes on until the other has done its rounds too (threads_cl.c). */
static _Atomic int done[2];

static ze_kernel_handle_t new_kernel(void)
{
    ze_kernel_desc_t kd = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC, .pKernelName = "k"};
    ze_kernel_handle_t k;
    ZE_OK(zeKernelCreate(module, &kd, &k));
    ZE_OK(zeKernelSetGroupSize(k, 1, 1, 1));
    return k;
}

static void set_arg(ze_kernel_handle_t k, int v) { ZE_OK(zeKernelSetArgumentValue(k, 0, sizeof v, &v)); }

static void append(ze_command_list_handle_t l, ze_kernel_handle_t k)
{
    ze_group_count_t g = {1, 1, 1};
    ZE_OK(zeCommandListAppendLaunchKernel(l, k, &g, NULL, 0, NULL));
}

static void *worker(void *arg)
{
    int me = (int)(long)arg;
    tids[me] = gettid();
    pthread_barrier_wait(&start);
    for (int r = 0; r < 6 || atomic_load(&done[1 - me]) < 6; r++, atomic_fetch_add(&done[me], 1)) {
        if (!strncmp(mode, "append", 6))
            append(lists[0], kernels[me]);
        else if (!strcmp(mode, "own"))
            append(lists[me], kernels[me]);
        else if (!strcmp(mode, "sequence"))
            set_arg(kernels[0], me), append(lists[me], kernels[0]);
    }
    return NULL;
}

/* A keeps its thread across the destroy: state the checker kept for the old
 * kernel under A's thread would name A. */
static pthread_barrier_t step;

static void *reuse_a(void *arg)
{
    (void)arg;
    tids[0] = gettid();
    set_arg(kernels[0], 1); /* and no launch */
    pthread_barrier_wait(&step);
    pthread_barrier_wait(&step); /* K destroyed, made again, B used it */
    set_arg(kernels[0], 3);
    append(lists[0], kernels[0]);
    return NULL;
}

static void *reuse_b(void *arg)
{
    (void)arg;
    tids[1] = gettid();
    set_arg(kernels[0], 2);
    append(lists[1], kernels[0]);
    return NULL;
}

/* The stripe the code before per-handle locks gave a handle value (its hash, 256 stripes). */
static unsigned old_stripe(ze_command_list_handle_t l)
{
    uint64_t x = (uint64_t)(uintptr_t)l;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (unsigned)(x & 255);
}

static ze_event_handle_t event;

static void *wait_a(void *arg)
{
    (void)arg;
    tids[0] = gettid();
    /* A synchronous list: the append returns once the wait is over. */
    ZE_OK(zeCommandListAppendWaitOnEvents(lists[0], 1, &event));
    return NULL;
}

static void *signal_b(void *arg)
{
    (void)arg;
    tids[1] = gettid();
    usleep(200 * 1000); /* A is waiting in the driver by now */
    ZE_OK(zeCommandListAppendSignalEvent(lists[1], event));
    return NULL;
}

static void deadlocked(int sig)
{
    (void)sig;
    static const char msg[] = "threads_ze: wait-signal has not finished in 20 s: deadlocked\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(4);
}

static void wait_signal(void)
{
    ze_command_queue_desc_t qd = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                  .mode = ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS};
    ze_command_list_handle_t made[257];
    int n = 0, a = -1, b = -1;
    /* 257 lists cannot all have stripes of their own: a pair collides by then. */
    while (b < 0 && n < 257) {
        ZE_OK(zeCommandListCreateImmediate(sim.context, sim.device, &qd, &made[n]));
        for (int i = 0; i < n && b < 0; i++)
            if (old_stripe(made[i]) == old_stripe(made[n])) a = i, b = n;
        n++;
    }
    for (int i = 0; i < n; i++)
        if (i != a && i != b) ZE_OK(zeCommandListDestroy(made[i]));
    printf("collided after %d lists\n", n);
    lists[0] = made[a], lists[1] = made[b];
    ze_event_pool_desc_t pd = {
        .stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE, .count = 1};
    ze_event_pool_handle_t pool;
    ZE_OK(zeEventPoolCreate(sim.context, &pd, 1, &sim.device, &pool));
    ze_event_desc_t ed = {
        .stype = ZE_STRUCTURE_TYPE_EVENT_DESC, .signal = ZE_EVENT_SCOPE_FLAG_HOST, .wait = ZE_EVENT_SCOPE_FLAG_HOST};
    ZE_OK(zeEventCreate(pool, &ed, &event));
    signal(SIGALRM, deadlocked);
    alarm(20);
    pthread_t t[2];
    pthread_create(&t[0], NULL, wait_a, NULL);
    pthread_create(&t[1], NULL, signal_b, NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    alarm(0);
    ZE_OK(zeEventHostSynchronize(event, 0));
    ZE_OK(zeEventDestroy(event));
    ZE_OK(zeEventPoolDestroy(pool));
}

static void run_thread(void *(*fn)(void *))
{
    pthread_t t;
    pthread_create(&t, NULL, fn, NULL);
    pthread_join(t, NULL);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s append|own|sequence|reuse|wait-signal\n", argv[0]);
        return 2;
    }
    mode = argv[1];
    sim = ze_sim_open();
    ZE_OK(ze_sim_compile(&sim, &module));
    for (int i = 0; i < 2; i++) {
        kernels[i] = new_kernel();
        ze_command_list_desc_t ld = {.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC};
        ZE_OK(zeCommandListCreate(sim.context, sim.device, &ld, &lists[i]));
    }
    if (!strcmp(mode, "wait-signal")) {
        for (int i = 0; i < 2; i++)
            ZE_OK(zeCommandListDestroy(lists[i]));
        wait_signal();
    } else if (!strcmp(mode, "reuse")) {
        pthread_barrier_init(&step, NULL, 2);
        pthread_t a;
        pthread_create(&a, NULL, reuse_a, NULL);
        pthread_barrier_wait(&step);
        /* glibc's calloc takes no chunk from the thread's cache: free more
         * kernels than it holds, so the old kernel's memory comes back. */
        ze_kernel_handle_t old = kernels[0], spare[16];
        for (int i = 0; i < 9; i++)
            spare[i] = new_kernel();
        for (int i = 0; i < 9; i++)
            ZE_OK(zeKernelDestroy(spare[i]));
        ZE_OK(zeKernelDestroy(old));
        int n = 0;
        for (kernels[0] = new_kernel(); kernels[0] != old && n < 16; kernels[0] = new_kernel())
            spare[n++] = kernels[0];
        for (int i = 0; i < n; i++)
            ZE_OK(zeKernelDestroy(spare[i]));
        printf("reused %d\n", kernels[0] == old);
        run_thread(reuse_b);
        pthread_barrier_wait(&step);
        pthread_join(a, NULL);
    } else {
        pthread_barrier_init(&start, NULL, 2);
        pthread_t t[2];
        for (long i = 0; i < 2; i++)
            pthread_create(&t[i], NULL, worker, (void *)i);
        for (int i = 0; i < 2; i++)
            pthread_join(t[i], NULL);
    }
    printf("thread A %d\nthread B %d\n", (int)tids[0], (int)tids[1]);
    if (!strcmp(mode, "append-abort")) {
        fflush(stdout);
        abort();
    }
    for (int i = 0; i < 2; i++) {
        ZE_OK(zeCommandListClose(lists[i]));
        ZE_OK(zeCommandListDestroy(lists[i]));
        ZE_OK(zeKernelDestroy(kernels[i]));
    }
    ZE_OK(zeModuleDestroy(module));
    ZE_OK(zeContextDestroy(sim.context));
    return 0;
}
