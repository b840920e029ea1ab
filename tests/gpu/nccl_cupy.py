"""CuPy's NCCL binding (cupy.cuda.nccl) at world size 1, for tests/gpu/nccl_check.sh: a unique id, a
communicator, 50 all-reduces and a broadcast on CuPy arrays; prints the results and NCCL's version (compared
plainly and under callguard run). Exits 77 when CuPy has no NCCL (its binding needs libnccl.so.2)."""
import sys

try:
    import cupy
    from cupy.cuda import nccl
except Exception as e:  # noqa: BLE001  (no CuPy, or CuPy built without NCCL)
    print("SKIP: no cupy.cuda.nccl: %s" % e)
    sys.exit(77)
if not getattr(nccl, "available", True):
    print("SKIP: cupy.cuda.nccl is not available")
    sys.exit(77)

uid = nccl.get_unique_id()
comm = nccl.NcclCommunicator(1, uid, 0)
x = cupy.arange(8, dtype=cupy.float32)
stream = cupy.cuda.Stream.null.ptr
for _ in range(50):
    comm.allReduce(x.data.ptr, x.data.ptr, x.size, nccl.NCCL_FLOAT32, nccl.NCCL_SUM, stream)
b = cupy.full(4, 3.0, dtype=cupy.float32)
comm.bcast(b.data.ptr, b.size, nccl.NCCL_FLOAT32, 0, stream)
cupy.cuda.Device().synchronize()
print("nccl", nccl.get_version())
print("allReduce x50", x.tolist(), "bcast", b.tolist())
comm.destroy()
print("destroyed")
