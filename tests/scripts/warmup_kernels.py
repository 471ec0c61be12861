"""A program that only warms Triton kernels up (compiles, never launches): what `irdiff capture --target` captures.

Two versions of the "code" stand for a before/after change:

* ``add_kernel``: the same in both, warmed up twice (n = 4096 and n = 4001: the JIT marks only the first
  divisible by 16), so each capture holds ``add_kernel`` and ``add_kernel-2``;
* ``scale_rows``: ``after`` annotates ``stride_col: int``; called with 1 it stays a runtime i32 instead of the
  JIT's constant 1 (the seed-000 mechanism), so the loads lose their vector width;
* ``copy_kernel`` (before) is renamed ``copy_rows`` (after) with the same body: paired by source similarity;
* ``relu_kernel`` exists only after: an unpaired kernel.

Options: ``--version before|after``, ``--exit N`` (exit with N after compiling), ``--crash`` (raise after the
second kernel), ``--torch`` (pass torch CPU tensors instead of duck-typed stand-ins). Prints a line on stdout and
one on stderr so tests can check they pass through. Needs no GPU only when a stand-in driver is active
(``irdiff capture --target sm90``).
"""

from __future__ import annotations

import argparse
import sys

import triton
import triton.language as tl

_parser = argparse.ArgumentParser()
_parser.add_argument("--version", choices=["before", "after"], default="before")
_parser.add_argument("--exit", type=int, default=0)
_parser.add_argument("--crash", action="store_true")
_parser.add_argument("--torch", action="store_true")
ARGS = _parser.parse_args()


class Buf:
    """Duck-typed tensor for the JIT's binder: ``data_ptr()`` and ``dtype`` (plus shape/stride for the record)."""

    def __init__(self, shape: tuple[int, ...], dtype: object = tl.float16, ptr: int = 0x7F0000000000):
        self.shape = shape
        self.dtype = dtype
        self._ptr = ptr

    def data_ptr(self) -> int:
        return self._ptr

    def stride(self) -> tuple[int, ...]:
        out, acc = [], 1
        for s in reversed(self.shape):
            out.append(acc)
            acc *= s
        return tuple(reversed(out))


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


if ARGS.version == "before":

    @triton.jit
    def scale_rows(x_ptr, out_ptr, stride_row, stride_col, n_cols, scale, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride_row + cols * stride_col, mask=mask)
        tl.store(out_ptr + row * stride_row + cols * stride_col, x * scale, mask=mask)

else:

    @triton.jit
    def scale_rows(x_ptr, out_ptr, stride_row, stride_col: int, n_cols, scale, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride_row + cols * stride_col, mask=mask)
        tl.store(out_ptr + row * stride_row + cols * stride_col, x * scale, mask=mask)


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


@triton.jit
def copy_rows(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


@triton.jit
def relu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(x, 0.0), mask=mask)


def main() -> int:
    a = ARGS

    if a.torch:
        import torch

        def make(*shape: int) -> object:
            return torch.empty(shape, dtype=torch.float16)
    else:

        def make(*shape: int) -> object:
            return Buf(shape)

    print(f"program: warming kernels up ({a.version})", flush=True)
    print("program: a line on stderr", file=sys.stderr, flush=True)
    x, y, out = make(4096), make(4096), make(4096)
    add_kernel.warmup(x, y, out, 4096, BLOCK=1024, grid=(1,))
    add_kernel.warmup(x, y, out, 4001, BLOCK=1024, grid=(1,))
    if a.crash:
        raise RuntimeError("the program failed after two kernels")
    m = make(64, 256)
    scale_rows.warmup(m, m, 256, 1, 256, 0.5, BLOCK=256, grid=(1,))
    (copy_kernel if a.version == "before" else copy_rows).warmup(x, out, 4096, BLOCK=512, grid=(1,))
    if a.version == "after":
        relu_kernel.warmup(x, out, 4096, BLOCK=1024, grid=(1,))
    print("program: done", flush=True)
    return a.exit


if __name__ == "__main__":
    sys.exit(main())
