"""Part c of tests/gpu/run.sh: PyTorch matrix products in a loop, then synchronize; prints a checksum that
must be the same plain and under `callguard run` (same inputs, same kernels: deterministic on one GPU)."""
import torch

torch.manual_seed(0)
a = torch.randn(2048, 2048, device="cuda")
b = torch.randn(2048, 2048, device="cuda")
for _ in range(50):
    a = torch.tanh(a @ b / 45.0)
torch.cuda.synchronize()
print("torch checksum %.6f" % a.double().sum().item())
