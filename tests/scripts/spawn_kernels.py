"""A program whose kernels are compiled in a *child* Python process (``multiprocessing`` with ``spawn``), as
TorchInductor's compile workers do: `irdiff capture` must reach that process too. The parent compiles one kernel,
the child another. Needs a stand-in driver (``irdiff capture --target sm90``)."""

from __future__ import annotations

import multiprocessing
import sys

import triton
import triton.language as tl


class Buf:
    def __init__(self, n: int):
        self.shape = (n,)
        self.dtype = tl.float32

    def data_ptr(self) -> int:
        return 0x7F0000000000


@triton.jit
def parent_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)


@triton.jit
def child_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1.0, mask=offs < n)


def child() -> None:
    child_kernel.warmup(Buf(1024), 1024, BLOCK=256, grid=(1,))


if __name__ == "__main__":
    parent_kernel.warmup(Buf(1024), 1024, BLOCK=256, grid=(1,))
    p = multiprocessing.get_context("spawn").Process(target=child)
    p.start()
    p.join()
    print(f"child exit code {p.exitcode}")
    sys.exit(p.exitcode)
