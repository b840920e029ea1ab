/* osc_threads.c: one-sided calls made by a thread other than the one that made the window, as
 * open-mpi/ompi#13347 reports (under mpirun -n 2; MPI_THREAD_MULTIPLE).
 *
 *     osc_threads ROUNDS
 *
 * The main thread creates a window of one int per rank; a second thread then, ROUNDS times, opens an
 * epoch (MPI_Win_fence), puts its round's value into the other rank's int (MPI_Put), closes it, and
 * checks the value the other rank put; then it reads the other rank's int back (MPI_Get). On Open MPI
 * 5.0.0 to 5.0.9 with osc/ucx and UCX 1.18 or later (assertions on) such a thread's first call aborts
 * in UCX (ucs_async_check_owner_thread); elsewhere rank 0 prints "rounds N" and exits 0. */
#include <mpi.h>

#include <pthread.h>
#include <stdio.h>

static int rank, size, rounds, ok;
static MPI_Win win;
static int cell = -1;

static void *one_sided(void *arg)
{
    (void)arg;
    int peer = (rank + 1) % size, n = 0;
    for (int i = 0; i < rounds; i++) {
        int v = 1000 * rank + i;
        if (MPI_Win_fence(0, win) != MPI_SUCCESS || MPI_Put(&v, 1, MPI_INT, peer, 0, 1, MPI_INT, win) != MPI_SUCCESS ||
            MPI_Win_fence(0, win) != MPI_SUCCESS)
            return NULL;
        n += cell == 1000 * ((rank + size - 1) % size) + i;
    }
    int got = -1;
    if (MPI_Win_fence(0, win) != MPI_SUCCESS || MPI_Get(&got, 1, MPI_INT, peer, 0, 1, MPI_INT, win) != MPI_SUCCESS ||
        MPI_Win_fence(0, win) != MPI_SUCCESS)
        return NULL;
    ok = n == rounds && got == 1000 * rank + rounds - 1;
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 2 || sscanf(argv[1], "%d", &rounds) != 1 || rounds < 1 || provided != MPI_THREAD_MULTIPLE) {
        if (rank == 0) fprintf(stderr, "usage: osc_threads ROUNDS (and MPI_THREAD_MULTIPLE: got %d)\n", provided);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Win_create(&cell, sizeof cell, sizeof cell, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    pthread_t t;
    pthread_create(&t, NULL, one_sided, NULL);
    pthread_join(t, NULL);
    MPI_Win_free(&win);
    int all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (rank == 0) printf("rounds %d\n", all ? rounds : -1);
    MPI_Finalize();
    return all ? 0 : 3;
}
