/* threads.c: two threads per rank exchange messages with each other and with the other rank,
 * as a program written for MPI_THREAD_MULTIPLE does (tests/mpi/test_mpi.py).
 *
 *     threads multiple|serialized ROUNDS     (under mpirun -n 2)
 *
 * asks MPI_Init_thread for that level. Each round, on each rank: thread 0 receives from thread
 * 1 of the same rank and then sends to it (and thread 1 the other way round), so a receive waits
 * for a send of another thread of its own rank; then each thread exchanges a value with its
 * twin on the other rank (MPI_Sendrecv) and sums a value over both ranks (MPI_Allreduce), on a
 * communicator of its own. Rank 0 prints the level it asked for, the level it was told, the level
 * the library itself holds (PMPI_Query_thread: past any tool), and a checksum of every value
 * received. Exit status 3 when a value is wrong. */
#include <mpi.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, rounds;
static MPI_Comm comms[2];
static long sums[2];
static int bad;

static const char *level_name(int level)
{
    switch (level) {
    case MPI_THREAD_SINGLE: return "single";
    case MPI_THREAD_FUNNELED: return "funneled";
    case MPI_THREAD_SERIALIZED: return "serialized";
    case MPI_THREAD_MULTIPLE: return "multiple";
    default: return "?";
    }
}

static long value(int r, int t, int i) { return (long)(r * 2 + t) * 100000 + i; }

static void *thread_main(void *arg)
{
    int t = (int)(long)arg, other = 1 - rank;
    for (int i = 0; i < rounds; i++) {
        /* Within the rank: thread 0 waits for thread 1, then thread 1 for thread 0. */
        long v = value(rank, t, i), got = -1;
        for (int turn = 0; turn < 2; turn++) {
            if (t == turn) {
                MPI_Recv(&got, 1, MPI_LONG, rank, 1000 * (turn + 1), MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                if (got != value(rank, 1 - t, i)) bad = 1;
                sums[t] += got;
            } else {
                MPI_Send(&v, 1, MPI_LONG, rank, 1000 * (turn + 1), MPI_COMM_WORLD);
            }
        }
        /* With the twin thread on the other rank, on this thread's communicator. */
        MPI_Sendrecv(&v, 1, MPI_LONG, other, 7, &got, 1, MPI_LONG, other, 7, comms[t], MPI_STATUS_IGNORE);
        if (got != value(other, t, i)) bad = 1;
        sums[t] += got;
        long total = 0;
        MPI_Allreduce(&v, &total, 1, MPI_LONG, MPI_SUM, comms[t]);
        if (total != value(0, t, i) + value(1, t, i)) bad = 1;
        sums[t] += total;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[1], "multiple") != 0 && strcmp(argv[1], "serialized") != 0)) {
        fprintf(stderr, "usage: threads multiple|serialized ROUNDS\n");
        return 2;
    }
    int asked = strcmp(argv[1], "multiple") == 0 ? MPI_THREAD_MULTIPLE : MPI_THREAD_SERIALIZED, told = -1, library = -1,
        size = 0;
    rounds = atoi(argv[2]);
    MPI_Init_thread(&argc, &argv, asked, &told);
    PMPI_Query_thread(&library);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        fprintf(stderr, "threads: run it with 2 ranks, not %d\n", size);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int t = 0; t < 2; t++)
        MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
    pthread_t th[2];
    for (long t = 0; t < 2; t++)
        pthread_create(&th[t], NULL, thread_main, (void *)t);
    for (int t = 0; t < 2; t++)
        pthread_join(th[t], NULL);
    long mine = sums[0] + sums[1], all = 0;
    int any_bad = 0;
    MPI_Reduce(&mine, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
    for (int t = 0; t < 2; t++)
        MPI_Comm_free(&comms[t]);
    if (rank == 0) {
        printf("asked %s told %s library %s\n", level_name(asked), level_name(told), level_name(library));
        printf("checksum %ld%s\n", all, any_bad ? " (wrong values)" : "");
    }
    MPI_Finalize();
    return any_bad ? 3 : 0;
}
