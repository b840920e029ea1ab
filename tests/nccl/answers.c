/* answers.c: asks NCCL what it answers without a GPU and prints it, one line per call, so a run under
 * callguard can be compared with a plain one (tests/nccl/test_nccl.py). Built twice: linked to
 * libnccl.so.2 (found through its run path), and (CG_ANSWERS_DLOPEN) opening the soname or path given as
 * argument 1 and looking each name up, as CuPy and PyTorch's loaders do. Error strings are printed as
 * NCCL gives them: they must be the same under callguard. */
#include <nccl.h>

#include "../answers.h"

int main(int argc, char **argv)
{
    cg_answers_open(argc, argv);
    int v = -1;
    ncclResult_t e = CALL(ncclGetVersion)(&v);
    printf("ncclGetVersion %d %d\n", (int)e, v);
    printf("ncclGetErrorString %s\n", CALL(ncclGetErrorString)(ncclInvalidArgument));
    ncclUniqueId id;
    e = CALL(ncclGetUniqueId)(&id);
    printf("ncclGetUniqueId %d\n", (int)e);
    ncclComm_t comm = NULL;
    e = CALL(ncclCommInitRank)(&comm, 1, id, 0);
    printf("ncclCommInitRank %d %s\n", (int)e, comm ? "a communicator" : "none");
    printf("ncclGetLastError %s\n", CALL(ncclGetLastError)(NULL));
    e = CALL(ncclGroupStart)();
    printf("ncclGroupStart %d\n", (int)e);
    e = CALL(ncclGroupEnd)();
    printf("ncclGroupEnd %d\n", (int)e);
    e = CALL(ncclAllReduce)(NULL, NULL, 1, ncclFloat, ncclSum, NULL, NULL);
    printf("ncclAllReduce %d\n", (int)e);
    e = CALL(ncclCommDestroy)(NULL);
    printf("ncclCommDestroy %d\n", (int)e);
    return 0;
}
