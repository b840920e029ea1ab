/* cg_mpi_large_count.c: the thread fix (CALLGUARD_MPI_THREADS=serialize, docs/mpi.md) for the blocking
 * calls of MPI 4.0's large-count form, MPI_Send_c ... MPI_Exscan_c: each made as its nonblocking _c form
 * plus tests, as cg_mpi_hand.c makes the int forms; included at the end of cg_mpi_hand.c, so it sees what
 * that file and the generated layer define. Not compiled on its own.
 *
 * Open MPI 4.1's mpi.h, which the layer is compiled with, lacks these functions: the generator took them
 * from MPI 5.0's mpi_abi.h with ABI-neutral types (counts long, handles and pointers to them void *) and
 * exports each through an IFUNC that answers its wrapper, cgl_w_NAME, where the process's library has the
 * function (docs/configuration.md, "Other ABIs"). Each wrapper hands its arguments on whole. */

CGM_THUNK_BY_REQUEST(MPI_Send_c, MPI_Isend_c, CGM_STATUS_IGNORE, f->buf, f->count, f->datatype, f->dest, f->tag,
                     f->comm);
static int cgl_w_MPI_Send_c(const void *buf, long count, void *datatype, int dest, int tag, void *comm)
{
    CGM_BY_TESTS(MPI_Send_c, buf, count, datatype, dest, tag, comm);
}

CGM_THUNK_BY_REQUEST(MPI_Bsend_c, MPI_Ibsend_c, CGM_STATUS_IGNORE, f->buf, f->count, f->datatype, f->dest, f->tag,
                     f->comm);
static int cgl_w_MPI_Bsend_c(const void *buf, long count, void *datatype, int dest, int tag, void *comm)
{
    CGM_BY_TESTS(MPI_Bsend_c, buf, count, datatype, dest, tag, comm);
}

CGM_THUNK_BY_REQUEST(MPI_Ssend_c, MPI_Issend_c, CGM_STATUS_IGNORE, f->buf, f->count, f->datatype, f->dest, f->tag,
                     f->comm);
static int cgl_w_MPI_Ssend_c(const void *buf, long count, void *datatype, int dest, int tag, void *comm)
{
    CGM_BY_TESTS(MPI_Ssend_c, buf, count, datatype, dest, tag, comm);
}

CGM_THUNK_BY_REQUEST(MPI_Rsend_c, MPI_Irsend_c, CGM_STATUS_IGNORE, f->buf, f->count, f->datatype, f->dest, f->tag,
                     f->comm);
static int cgl_w_MPI_Rsend_c(const void *buf, long count, void *datatype, int dest, int tag, void *comm)
{
    CGM_BY_TESTS(MPI_Rsend_c, buf, count, datatype, dest, tag, comm);
}

CGM_THUNK_BY_REQUEST(MPI_Recv_c, MPI_Irecv_c, f->status, f->buf, f->count, f->datatype, f->source, f->tag, f->comm);
static int cgl_w_MPI_Recv_c(void *buf, long count, void *datatype, int source, int tag, void *comm, void *status)
{
    CGM_BY_TESTS(MPI_Recv_c, buf, count, datatype, source, tag, comm, status);
}

CGM_THUNK_BY_REQUEST(MPI_Mrecv_c, MPI_Imrecv_c, f->status, f->buf, f->count, f->datatype, f->message);
static int cgl_w_MPI_Mrecv_c(void *buf, long count, void *datatype, void *message, void *status)
{
    CGM_BY_TESTS(MPI_Mrecv_c, buf, count, datatype, message, status);
}

/* ---- collectives: their nonblocking _c forms ---- */

CGM_THUNK_BY_REQUEST(MPI_Bcast_c, MPI_Ibcast_c, CGM_STATUS_IGNORE, f->buffer, f->count, f->datatype, f->root, f->comm);
static int cgl_w_MPI_Bcast_c(void *buffer, long count, void *datatype, int root, void *comm)
{
    CGM_BY_TESTS(MPI_Bcast_c, buffer, count, datatype, root, comm);
}

CGM_THUNK_BY_REQUEST(MPI_Reduce_c, MPI_Ireduce_c, CGM_STATUS_IGNORE, f->sendbuf, f->recvbuf, f->count, f->datatype,
                     f->op, f->root, f->comm);
static int cgl_w_MPI_Reduce_c(const void *sendbuf, void *recvbuf, long count, void *datatype, void *op, int root,
                              void *comm)
{
    CGM_BY_TESTS(MPI_Reduce_c, sendbuf, recvbuf, count, datatype, op, root, comm);
}

CGM_THUNK_BY_REQUEST(MPI_Allreduce_c, MPI_Iallreduce_c, CGM_STATUS_IGNORE, f->sendbuf, f->recvbuf, f->count,
                     f->datatype, f->op, f->comm);
static int cgl_w_MPI_Allreduce_c(const void *sendbuf, void *recvbuf, long count, void *datatype, void *op, void *comm)
{
    CGM_BY_TESTS(MPI_Allreduce_c, sendbuf, recvbuf, count, datatype, op, comm);
}

CGM_THUNK_BY_REQUEST(MPI_Gather_c, MPI_Igather_c, CGM_STATUS_IGNORE, f->sendbuf, f->sendcount, f->sendtype, f->recvbuf,
                     f->recvcount, f->recvtype, f->root, f->comm);
static int cgl_w_MPI_Gather_c(const void *sendbuf, long sendcount, void *sendtype, void *recvbuf, long recvcount,
                              void *recvtype, int root, void *comm)
{
    CGM_BY_TESTS(MPI_Gather_c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

CGM_THUNK_BY_REQUEST(MPI_Gatherv_c, MPI_Igatherv_c, CGM_STATUS_IGNORE, f->sendbuf, f->sendcount, f->sendtype,
                     f->recvbuf, f->recvcounts, f->displs, f->recvtype, f->root, f->comm);
static int cgl_w_MPI_Gatherv_c(const void *sendbuf, long sendcount, void *sendtype, void *recvbuf,
                               const long *recvcounts, const long *displs, void *recvtype, int root, void *comm)
{
    CGM_BY_TESTS(MPI_Gatherv_c, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
}

CGM_THUNK_BY_REQUEST(MPI_Scatter_c, MPI_Iscatter_c, CGM_STATUS_IGNORE, f->sendbuf, f->sendcount, f->sendtype,
                     f->recvbuf, f->recvcount, f->recvtype, f->root, f->comm);
static int cgl_w_MPI_Scatter_c(const void *sendbuf, long sendcount, void *sendtype, void *recvbuf, long recvcount,
                               void *recvtype, int root, void *comm)
{
    CGM_BY_TESTS(MPI_Scatter_c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

CGM_THUNK_BY_REQUEST(MPI_Scatterv_c, MPI_Iscatterv_c, CGM_STATUS_IGNORE, f->sendbuf, f->sendcounts, f->displs,
                     f->sendtype, f->recvbuf, f->recvcount, f->recvtype, f->root, f->comm);
static int cgl_w_MPI_Scatterv_c(const void *sendbuf, const long *sendcounts, const long *displs, void *sendtype,
                                void *recvbuf, long recvcount, void *recvtype, int root, void *comm)
{
    CGM_BY_TESTS(MPI_Scatterv_c, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

CGM_THUNK_BY_REQUEST(MPI_Allgather_c, MPI_Iallgather_c, CGM_STATUS_IGNORE, f->sendbuf, f->sendcount, f->sendtype,
                     f->recvbuf, f->recvcount, f->recvtype, f->comm);
static int cgl_w_MPI_Allgather_c(const void *sendbuf, long sendcount, void *sendtype, void *recvbuf, long recvcount,
                                 void *recvtype, void *comm)
{
    CGM_BY_TESTS(MPI_Allgather_c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

CGM_THUNK_BY_REQUEST(MPI_Allgatherv_c, MPI_Iallgatherv_c, CGM_STATUS_IGNORE, f->sendbuf, f->sendcount, f->sendtype,
                     f->recvbuf, f->recvcounts, f->displs, f->recvtype, f->comm);
static int cgl_w_MPI_Allgatherv_c(const void *sendbuf, long sendcount, void *sendtype, void *recvbuf,
                                  const long *recvcounts, const long *displs, void *recvtype, void *comm)
{
    CGM_BY_TESTS(MPI_Allgatherv_c, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
}

CGM_THUNK_BY_REQUEST(MPI_Alltoall_c, MPI_Ialltoall_c, CGM_STATUS_IGNORE, f->sendbuf, f->sendcount, f->sendtype,
                     f->recvbuf, f->recvcount, f->recvtype, f->comm);
static int cgl_w_MPI_Alltoall_c(const void *sendbuf, long sendcount, void *sendtype, void *recvbuf, long recvcount,
                                void *recvtype, void *comm)
{
    CGM_BY_TESTS(MPI_Alltoall_c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

CGM_THUNK_BY_REQUEST(MPI_Alltoallv_c, MPI_Ialltoallv_c, CGM_STATUS_IGNORE, f->sendbuf, f->sendcounts, f->sdispls,
                     f->sendtype, f->recvbuf, f->recvcounts, f->rdispls, f->recvtype, f->comm);
static int cgl_w_MPI_Alltoallv_c(const void *sendbuf, const long *sendcounts, const long *sdispls, void *sendtype,
                                 void *recvbuf, const long *recvcounts, const long *rdispls, void *recvtype, void *comm)
{
    CGM_BY_TESTS(MPI_Alltoallv_c, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
}

CGM_THUNK_BY_REQUEST(MPI_Alltoallw_c, MPI_Ialltoallw_c, CGM_STATUS_IGNORE, f->sendbuf, f->sendcounts, f->sdispls,
                     f->sendtypes, f->recvbuf, f->recvcounts, f->rdispls, f->recvtypes, f->comm);
static int cgl_w_MPI_Alltoallw_c(const void *sendbuf, const long *sendcounts, const long *sdispls,
                                 const void *sendtypes, void *recvbuf, const long *recvcounts, const long *rdispls,
                                 const void *recvtypes, void *comm)
{
    CGM_BY_TESTS(MPI_Alltoallw_c, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                 comm);
}

CGM_THUNK_BY_REQUEST(MPI_Reduce_scatter_c, MPI_Ireduce_scatter_c, CGM_STATUS_IGNORE, f->sendbuf, f->recvbuf,
                     f->recvcounts, f->datatype, f->op, f->comm);
static int cgl_w_MPI_Reduce_scatter_c(const void *sendbuf, void *recvbuf, const long *recvcounts, void *datatype,
                                      void *op, void *comm)
{
    CGM_BY_TESTS(MPI_Reduce_scatter_c, sendbuf, recvbuf, recvcounts, datatype, op, comm);
}

CGM_THUNK_BY_REQUEST(MPI_Reduce_scatter_block_c, MPI_Ireduce_scatter_block_c, CGM_STATUS_IGNORE, f->sendbuf, f->recvbuf,
                     f->recvcount, f->datatype, f->op, f->comm);
static int cgl_w_MPI_Reduce_scatter_block_c(const void *sendbuf, void *recvbuf, long recvcount, void *datatype,
                                            void *op, void *comm)
{
    CGM_BY_TESTS(MPI_Reduce_scatter_block_c, sendbuf, recvbuf, recvcount, datatype, op, comm);
}

CGM_THUNK_BY_REQUEST(MPI_Scan_c, MPI_Iscan_c, CGM_STATUS_IGNORE, f->sendbuf, f->recvbuf, f->count, f->datatype, f->op,
                     f->comm);
static int cgl_w_MPI_Scan_c(const void *sendbuf, void *recvbuf, long count, void *datatype, void *op, void *comm)
{
    CGM_BY_TESTS(MPI_Scan_c, sendbuf, recvbuf, count, datatype, op, comm);
}

CGM_THUNK_BY_REQUEST(MPI_Exscan_c, MPI_Iexscan_c, CGM_STATUS_IGNORE, f->sendbuf, f->recvbuf, f->count, f->datatype,
                     f->op, f->comm);
static int cgl_w_MPI_Exscan_c(const void *sendbuf, void *recvbuf, long count, void *datatype, void *op, void *comm)
{
    CGM_BY_TESTS(MPI_Exscan_c, sendbuf, recvbuf, count, datatype, op, comm);
}

/* ---- MPI_Sendrecv_c: as MPI_Sendrecv (cgm_sendrecv), of MPI_Send_init_c and MPI_Irecv_c ---- */

static int cgm_th_MPI_Sendrecv_c(void *frame)
{
    struct cgl_fr_MPI_Sendrecv_c *f = frame;
    struct cgm_sendrecv a = {f->sendbuf,  f->sendcount, f->sendtype, f->dest, f->sendtag, f->recvbuf, f->recvcount,
                             f->recvtype, f->source,    f->recvtag,  f->comm, f->status,  1};
    f->cgl_ret = cgm_sendrecv(&a);
    return cgl_thunk_code(f->cgl_ret);
}
static int cgl_w_MPI_Sendrecv_c(const void *sendbuf, long sendcount, void *sendtype, int dest, int sendtag,
                                void *recvbuf, long recvcount, void *recvtype, int source, int recvtag, void *comm,
                                void *status)
{
    CGM_BY_TESTS(MPI_Sendrecv_c, sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                 recvtag, comm, status);
}
