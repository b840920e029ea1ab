/* errors.c: MPI calls that fail, and what the program sees after them; the statuses MPI_Sendrecv fills
 * (tests/mpi/test_mpi.py).
 *
 *     errors sendrecv        (under mpirun -n 2)
 *     errors init LEVEL      (under mpirun -n 1)
 *     errors status          (under mpirun -n 2)
 *
 * sendrecv: MPI_ERRORS_RETURN on MPI_COMM_WORLD, then on rank 0 an MPI_Sendrecv whose send names a
 * rank that does not exist while rank 1 sends it a message, then an MPI_Recv of that message; an
 * MPI_Sendrecv whose receive names a rank that does not exist (its send must not leave), then a
 * send of the value rank 1 must receive; an MPI_Sendrecv whose message does not fit; MPI_Send,
 * MPI_Recv, MPI_Bcast and MPI_Allreduce given a bad rank, root or count. Each rank prints, one line
 * per call, the error class returned and the values received, "rank R: ...": a program under
 * callguard must print the same lines as plainly.
 *
 * init: MPI_Init_thread(LEVEL) (any number: an invalid one too), then prints the return code, the
 * level provided and MPI_Query_thread's answer.
 *
 * status: the statuses MPI_Sendrecv fills, MPI_ERROR set to 12345 before each: both ranks sending to and
 * receiving from each other; rank 0 sending to rank 1 and receiving from MPI_PROC_NULL, rank 1 the other
 * way round; both halves MPI_PROC_NULL. */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

static void say(const char *what, int rc)
{
    int cls = rc;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
    printf("rank %d: %s: class %d\n", rank, what, cls);
    fflush(stdout);
}

static int sendrecv(void)
{
    int bad = size + 3;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* A send to no rank: nothing may stay posted, rank 1's message is for the MPI_Recv after it. */
    long out = 5, in = -1;
    if (rank == 0) {
        say("sendrecv to a bad rank",
            MPI_Sendrecv(&out, 1, MPI_LONG, bad, 7, &in, 1, MPI_LONG, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        long got = -1;
        say("recv after it", MPI_Recv(&got, 1, MPI_LONG, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        printf("rank 0: received %ld, sendrecv's buffer %ld\n", got, in);
    } else {
        long v = 42;
        say("send", MPI_Send(&v, 1, MPI_LONG, 0, 7, MPI_COMM_WORLD));
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* A receive from no rank: the send half must not leave either. */
    if (rank == 0) {
        long wrong = 99;
        say("sendrecv from a bad rank",
            MPI_Sendrecv(&wrong, 1, MPI_LONG, 1, 8, &in, 1, MPI_LONG, bad, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        long right = 1;
        say("send after it", MPI_Send(&right, 1, MPI_LONG, 1, 8, MPI_COMM_WORLD));
    } else {
        long got = -1;
        say("recv", MPI_Recv(&got, 1, MPI_LONG, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        printf("rank 1: received %ld\n", got);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* Two values into room for one: the receive fails, the send half completes. */
    long two[2] = {rank, rank}, one = -1;
    say("sendrecv truncated", MPI_Sendrecv(two, rank == 0 ? 2 : 1, MPI_LONG, 1 - rank, 9, &one, 1, MPI_LONG, 1 - rank,
                                           9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_Barrier(MPI_COMM_WORLD);

    say("send to a bad rank", MPI_Send(&out, 1, MPI_LONG, bad, 10, MPI_COMM_WORLD));
    say("recv from a bad rank", MPI_Recv(&in, 1, MPI_LONG, bad, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    say("bcast from a bad root", MPI_Bcast(&out, 1, MPI_LONG, bad, MPI_COMM_WORLD));
    say("allreduce of a negative count", MPI_Allreduce(&out, &in, -1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));

    long sum = 0;
    say("allreduce", MPI_Allreduce(&out, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    printf("rank %d: sum %ld\n", rank, sum);
    fflush(stdout);
    return 0;
}

static int status(void)
{
    static const char *what[] = {"with the other rank", "rank 0 to rank 1", "all MPI_PROC_NULL"};
    for (int k = 0; k < 3; k++) {
        /* k 1: rank 0 sends and receives from MPI_PROC_NULL, rank 1 receives and sends to it. */
        int peer = 1 - rank, source = k == 0 || (k == 1 && rank == 1) ? peer : MPI_PROC_NULL,
            dest = k == 0 || (k == 1 && rank == 0) ? peer : MPI_PROC_NULL, count = -5;
        long out = rank, in = -1;
        MPI_Status st;
        memset(&st, 0x5a, sizeof st);
        st.MPI_ERROR = 12345;
        int rc = MPI_Sendrecv(&out, 1, MPI_LONG, dest, 11, &in, 1, MPI_LONG, source, 11, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_LONG, &count);
        printf("rank %d: sendrecv %s: rc %d, received %ld, source %s, tag %s, count %d, MPI_ERROR %d\n", rank, what[k],
               rc, in,
               st.MPI_SOURCE == MPI_PROC_NULL ? "MPI_PROC_NULL"
               : st.MPI_SOURCE == peer        ? "the other rank"
                                              : "?",
               st.MPI_TAG == MPI_ANY_TAG ? "MPI_ANY_TAG"
               : st.MPI_TAG == 11        ? "11"
                                         : "?",
               count, st.MPI_ERROR);
    }
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "init") == 0) {
        int provided = -7, query = -7;
        int rc = MPI_Init_thread(&argc, &argv, atoi(argv[2]), &provided);
        MPI_Query_thread(&query);
        printf("init_thread %s: rc %d provided %d query %d\n", argv[2], rc, provided, query);
        fflush(stdout);
        MPI_Finalize();
        return 0;
    }
    if (argc != 2 || (strcmp(argv[1], "sendrecv") != 0 && strcmp(argv[1], "status") != 0)) {
        fprintf(stderr, "usage: errors sendrecv | errors status | errors init LEVEL\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rc = strcmp(argv[1], "status") == 0 ? status() : sendrecv();
    MPI_Finalize();
    return rc;
}
