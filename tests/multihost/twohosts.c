/* The MPI program of the two-host tests (test_multihost.py), one process a
 * rank under `callguard run`.
 *
 *   twohosts count N   N MPI_Allreduce on MPI_COMM_WORLD and `rank` more on
 *                      MPI_COMM_SELF (rank R makes N + R: a count that tells
 *                      the ranks apart), one MPI_Barrier, and one line: the
 *                      rank, the size, the host name and the sum
 *   twohosts hang      rank 1 waits in an MPI_Recv that nobody sends, every
 *                      other rank in MPI_Barrier, until the job is ended */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int count(int rank, int size, int n)
{
    long sum = 0;
    for (int i = 0; i < n; i++) {
        long mine = rank + 1, all = 0;
        MPI_Allreduce(&mine, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        sum += all;
    }
    for (int i = 0; i < rank; i++) {
        long mine = 1, all = 0;
        MPI_Allreduce(&mine, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_SELF);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    char host[256] = "unknown";
    gethostname(host, sizeof host - 1);
    printf("rank %d of %d on %s: sum %ld\n", rank, size, host, sum);
    fflush(stdout);
    return 0;
}

static int hang(int rank)
{
    long x = 0;
    if (rank == 1) return MPI_Recv(&x, 1, MPI_LONG, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    int counting = argc == 3 && !strcmp(argv[1], "count");
    if (!counting && !(argc == 2 && !strcmp(argv[1], "hang"))) {
        fprintf(stderr, "usage: twohosts count N | twohosts hang\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rc = counting ? count(rank, size, atoi(argv[2])) : hang(rank);
    MPI_Finalize();
    return rc;
}
