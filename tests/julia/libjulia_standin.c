/* A STAND-IN for libjulia, not Julia: Julia cannot be installed on these machines (not in Debian 12, no binary on
 * PyPI).
 *
 * It defines, with Julia's semantics (src/jlapi.c, src/julia_threads.h,
 * src/gc*.c of JuliaLang/julia), exactly the functions callguard's Julia
 * adapter looks up:
 *   jl_get_pgcstack()       non-NULL on a thread Julia knows, NULL elsewhere
 *   jl_gc_safe_enter()      marks the calling thread GC-safe, returns its previous state
 *   jl_gc_safe_leave(s)     restores state s; back to GC-unsafe is a safepoint
 * and what the test programs need of Julia around them:
 *   jl_adopt_thread()       makes the calling thread one Julia knows (GC-unsafe)
 *   jl_gc_collect(full)     a stop-the-world collection: waits until every other
 *                           thread Julia knows is not GC-unsafe
 *   jl_gc_safepoint()       where Julia code stops for a collection
 *   jl_gc_unsafe_enter()/jl_gc_unsafe_leave(s)
 *                           what an @cfunction's entry and exit do
 *                           (src/llvm-ptls.cpp): GC-unsafe for the callback,
 *                           the previous state back after it
 * plus two probes that are no part of Julia, for the assertions:
 *   cg_standin_gc_state()   this thread's state, -1 on a thread Julia does not know
 *   cg_standin_safe_enters() how many times this thread called jl_gc_safe_enter
 *
 * Called on a thread Julia does not know, jl_gc_safe_enter/leave abort the
 * process: Julia's dereference the thread's NULL task there and crash. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* As Julia's: every function here is exported (the build hides the rest). */
#define JL_DLLEXPORT __attribute__((visibility("default")))

/* Julia's GC states (julia_threads.h). */
enum { GC_UNSAFE = 0, GC_WAITING = 1, GC_SAFE = 2 };

#define MAX_THREADS 64

typedef struct jthread {
    int state; /* under lock */
    void *gcstack[4];
} jthread;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static jthread threads[MAX_THREADS];
static int nthreads;
static int collecting; /* a collection is running: GC-unsafe is not to be entered */

static __thread jthread *self;
static __thread long safe_enters;

static jthread *known(const char *fn)
{
    if (!self) {
        fprintf(stderr, "libjulia stand-in: %s on a thread Julia does not know (Julia would crash here)\n", fn);
        abort();
    }
    return self;
}

/* The safepoint: a thread going GC-unsafe waits out a running collection. */
static void set_state_locked(jthread *t, int s)
{
    if (s == GC_UNSAFE && t->state != GC_UNSAFE)
        while (collecting)
            pthread_cond_wait(&changed, &lock);
    t->state = s;
    pthread_cond_broadcast(&changed);
}

JL_DLLEXPORT void *jl_get_pgcstack(void) { return self ? self->gcstack : NULL; }

JL_DLLEXPORT void *jl_adopt_thread(void)
{
    pthread_mutex_lock(&lock);
    if (!self) {
        if (nthreads == MAX_THREADS) abort();
        self = &threads[nthreads++];
        self->state = GC_SAFE;
        set_state_locked(self, GC_UNSAFE);
    }
    pthread_mutex_unlock(&lock);
    return self->gcstack;
}

JL_DLLEXPORT int8_t jl_gc_safe_enter(void)
{
    jthread *t = known("jl_gc_safe_enter");
    pthread_mutex_lock(&lock);
    int8_t was = (int8_t)t->state;
    set_state_locked(t, GC_SAFE);
    safe_enters++;
    pthread_mutex_unlock(&lock);
    return was;
}

JL_DLLEXPORT void jl_gc_safe_leave(int8_t state)
{
    jthread *t = known("jl_gc_safe_leave");
    pthread_mutex_lock(&lock);
    set_state_locked(t, state);
    pthread_mutex_unlock(&lock);
}

JL_DLLEXPORT int8_t jl_gc_unsafe_enter(void)
{
    jthread *t = known("jl_gc_unsafe_enter");
    pthread_mutex_lock(&lock);
    int8_t was = (int8_t)t->state;
    set_state_locked(t, GC_UNSAFE);
    pthread_mutex_unlock(&lock);
    return was;
}

JL_DLLEXPORT void jl_gc_unsafe_leave(int8_t state) { jl_gc_safe_leave(state); }

JL_DLLEXPORT void jl_gc_safepoint(void)
{
    jthread *t = known("jl_gc_safepoint");
    pthread_mutex_lock(&lock);
    if (collecting && t->state == GC_UNSAFE) {
        t->state = GC_WAITING;
        pthread_cond_broadcast(&changed);
        set_state_locked(t, GC_UNSAFE);
    }
    pthread_mutex_unlock(&lock);
}

/* Stop the world: every other thread Julia knows GC-safe or waiting at a
 * safepoint; then "collect" (nothing) and let them go on. */
JL_DLLEXPORT void jl_gc_collect(int full)
{
    (void)full;
    jthread *me = known("jl_gc_collect");
    pthread_mutex_lock(&lock);
    while (collecting)
        pthread_cond_wait(&changed, &lock); /* one collector at a time */
    collecting = 1;
    for (;;) {
        int unsafe = 0;
        for (int i = 0; i < nthreads; i++)
            unsafe |= &threads[i] != me && threads[i].state == GC_UNSAFE;
        if (!unsafe) break;
        pthread_cond_wait(&changed, &lock);
    }
    collecting = 0;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

JL_DLLEXPORT int cg_standin_gc_state(void)
{
    if (!self) return -1;
    pthread_mutex_lock(&lock);
    int s = self->state;
    pthread_mutex_unlock(&lock);
    return s;
}

JL_DLLEXPORT long cg_standin_safe_enters(void) { return safe_enters; }
