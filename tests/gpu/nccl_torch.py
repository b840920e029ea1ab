"""NCCL through PyTorch on the GPU machine, for tests/gpu/nccl_check.sh (the NCCL layer, docs/nccl.md).

    nccl_torch.py ws1 [N]            torch.distributed, NCCL backend, world size 1: N all_reduces, a broadcast
                                     and an all_gather; prints the results and NCCL's version (compared plainly
                                     and under callguard run)
    nccl_torch.py ab [ROUNDS] [N]    under `callguard run --report`: a loop of N small ncclAllReduce calls on a
                                     world-size-1 communicator, made through ctypes from the global scope (so the
                                     preloaded layer's wrapper), statistics on against off in one process,
                                     alternating loop by loop as overhead_ab.py does; then the same with
                                     torch.distributed.all_reduce
    nccl_torch.py job [N]            one rank of a 2-rank torchrun job: N all_reduces, rank 1 skipping the last;
                                     then rank 0 waits in synchronize for the all-reduce rank 1 never joins, and
                                     rank 1 in ncclCommInitRank of a communicator rank 0 never joins (a unique id
                                     rank 0 made and put in the job's store)
"""
import ctypes
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist

mode = sys.argv[1] if len(sys.argv) > 1 else "ws1"


def nccl():
    """NCCL's functions as the program's global scope has them: under callguard run the layer's wrappers (its
    dlsym answers them once a real libnccl is loaded), plainly the library PyTorch loaded."""
    lib = ctypes.CDLL(None)
    try:
        lib.ncclGetVersion
    except AttributeError:
        path = next(l.split()[-1] for l in open("/proc/self/maps") if "libnccl.so" in l)
        lib = ctypes.CDLL(path)
    lib.ncclGetErrorString.restype = ctypes.c_char_p
    return lib


class UniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_char * 128)]


def ws1():
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29511")
    dist.init_process_group("nccl", rank=0, world_size=1)
    t = torch.arange(8, dtype=torch.float32, device="cuda")
    for _ in range(n):
        dist.all_reduce(t)
    b = torch.full((4,), 7.0, device="cuda")
    dist.broadcast(b, src=0)
    g = torch.empty(8, device="cuda")
    dist.all_gather_into_tensor(g, t)
    torch.cuda.synchronize()
    print("nccl", torch.cuda.nccl.version())
    print("all_reduce x%d" % n, t.tolist())
    print("broadcast", b.tolist(), "all_gather", g.tolist())
    dist.destroy_process_group()
    print("destroyed")


def ab():
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
    path = next(l.split()[-1] for l in open("/proc/self/maps") if "libcallguard.so" in l)
    cg = ctypes.CDLL(path)
    lib = nccl()
    uid, comm = UniqueId(), ctypes.c_void_p()
    assert lib.ncclGetUniqueId(ctypes.byref(uid)) == 0
    rc = lib.ncclCommInitRank(ctypes.byref(comm), 1, uid, 0)
    assert rc == 0, lib.ncclGetErrorString(rc)
    x = torch.ones(256, device="cuda")
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    ptr, count = ctypes.c_void_p(x.data_ptr()), ctypes.c_size_t(x.numel())
    allreduce = lib.ncclAllReduce  # ncclFloat32 = 7, ncclSum = 0

    def raw():
        t0 = time.perf_counter()
        for _ in range(n):
            allreduce(ptr, ptr, count, 7, 0, comm, stream)
        torch.cuda.synchronize()
        return (time.perf_counter() - t0) * 1e3

    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29512")
    dist.init_process_group("nccl", rank=0, world_size=1)

    def torch_loop():
        t0 = time.perf_counter()
        for _ in range(n):
            dist.all_reduce(x)
        torch.cuda.synchronize()
        return (time.perf_counter() - t0) * 1e3

    for name, loop in (("ncclAllReduce (ctypes)", raw), ("torch.distributed.all_reduce", torch_loop)):
        loop()
        for noise in (True, False):
            ratios, on_ms, off_ms = [], [], []
            for r in range(rounds):
                t = {}
                for on in ((1, 0) if r % 2 else (0, 1)):
                    cg.cg_stats_enable(on and not noise)
                    t[on] = loop()
                ratios.append(t[1] / t[0])
                on_ms.append(t[1])
                off_ms.append(t[0])
            cg.cg_stats_enable(1)
            print("%s, %s: on/off median %.4f (%+.2f %%) over %d rounds of %d calls; on %.3f ms, off %.3f ms"
                  % (name, "off against off (the noise)" if noise else "statistics on", statistics.median(ratios),
                     (statistics.median(ratios) - 1) * 100, rounds, n, statistics.median(on_ms),
                     statistics.median(off_ms)), flush=True)
    dist.destroy_process_group()
    lib.ncclCommDestroy(comm)


def job():
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    rank = int(os.environ["RANK"])
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", rank))
    store = dist.distributed_c10d._get_default_store()
    lib = nccl()
    uid = UniqueId()
    if rank == 0:
        assert lib.ncclGetUniqueId(ctypes.byref(uid)) == 0
        store.set("cg-uid", bytes(uid.internal))
    else:
        ctypes.memmove(ctypes.byref(uid), store.get("cg-uid"), 128)
    t = torch.ones(1024, device="cuda")
    for i in range(n):
        if rank == 1 and i == n - 1:
            break  # rank 1 skips the last all_reduce
        dist.all_reduce(t)
    print("rank %d issued its all_reduces" % rank, flush=True)
    if rank == 0:
        torch.cuda.synchronize()  # waits for the all-reduce rank 1 never joins
    else:
        torch.cuda.synchronize()
        comm = ctypes.c_void_p()
        lib.ncclCommInitRank(ctypes.byref(comm), 2, uid, 1)  # waits for rank 0, which never comes
    print("rank %d: not reached" % rank, flush=True)


{"ws1": ws1, "ab": ab, "job": job}[mode]()
