/* The first demo: eight threads compile at once through the toy API, whose
 * compiler aborts when two threads are inside it on one device (as Intel's
 * IGC 2.38.x aborted in zeModuleCreate). Linked against the generated toy
 * layer instead of the toy library; run it with CALLGUARD_SERIALIZE=toyCompile
 * and it finishes. */
#include <pthread.h>
#include <stdio.h>
#include <toy.h>

static pthread_barrier_t start;

static void *compile(void *arg)
{
    toy_device_t dev;
    toy_program_t prog;
    (void)arg;
    toyGetDevice(0, &dev);
    pthread_barrier_wait(&start);
    if (toyCompile(dev, "kernel", 20000, &prog) == TOY_SUCCESS) toyProgramRelease(prog);
    return NULL;
}

int main(void)
{
    pthread_t t[8];
    pthread_barrier_init(&start, NULL, 8);
    for (int i = 0; i < 8; i++)
        pthread_create(&t[i], NULL, compile, NULL);
    for (int i = 0; i < 8; i++)
        pthread_join(t[i], NULL);
    toy_stats_t st;
    toyGetStats(&st);
    printf("toy_race: %u compiles finished, at most %u thread(s) inside the compiler at once\n", st.compiles,
           st.max_inside);
    return 0;
}
