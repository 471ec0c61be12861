"""A program that launches Triton kernels on a CUDA GPU (for the GPU capture test): ``add_kernel`` launched
5 times on two sizes, ``scale_kernel`` once. Prints the checksum so the run is visibly real."""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * scale, mask=mask)


if __name__ == "__main__":
    total = 0.0
    for n in (4096, 4096, 4096, 65536, 65536):
        x = torch.randn(n, device="cuda", dtype=torch.float16)
        out = torch.empty_like(x)
        add_kernel[(triton.cdiv(n, 1024),)](x, x, out, n, BLOCK=1024)
        total += float(out.float().sum())
    y = torch.ones(1000, device="cuda", dtype=torch.float32)
    scale_kernel[(1,)](y, y, 1000, 0.5, BLOCK=1024)
    torch.cuda.synchronize()
    print(f"checksum {total + float(y.sum()):.3f}")
