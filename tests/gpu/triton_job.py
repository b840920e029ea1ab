"""Part c of tests/gpu/run.sh: a Triton kernel, compiled (cache in TRITON_CACHE_DIR, which run.sh makes empty
for each run, so each run compiles and loads the module) and launched; prints a checksum that must be the
same plain and under `callguard run`."""
import torch
import triton
import triton.language as tl


@triton.jit
def axpy(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    x = tl.load(x_ptr + i, mask=m)
    y = tl.load(y_ptr + i, mask=m)
    tl.store(out_ptr + i, alpha * x + tl.sin(y), mask=m)


n = 1 << 20
g = torch.Generator(device="cuda").manual_seed(1)
x = torch.randn(n, device="cuda", generator=g)
y = torch.randn(n, device="cuda", generator=g)
out = torch.empty_like(x)
for _ in range(10):
    axpy[(triton.cdiv(n, 1024),)](x, y, out, n, 0.5, BLOCK=1024)
    x, out = out, x
torch.cuda.synchronize()
print("triton checksum %.6f" % x.double().sum().item())
