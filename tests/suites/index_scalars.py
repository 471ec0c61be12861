"""Segment kernels whose sizes are scalar arguments, for the index-width rule tests (``tests/test_rule_index_math.py``):
the 64-bit index math starts from a division of two ``tl.int64`` arguments, not from a widened program id.

- ``head32``: ``seg_len = N // S`` with ``N`` and ``S`` typed i32 by the JIT; each program copies the head of its
  segment (int32 index math, a 32-bit division).
- ``head64``: the same with ``N: tl.int64, S: tl.int64``: the first 64-bit value is ``arith.divsi`` of the two
  arguments, and the PTX keeps a 64-bit ``div`` (LLVM cannot narrow it: both operands are full 64-bit values).
- ``tail64``: ``rest = N % S`` with the same annotations: the first 64-bit value is an ``arith.remsi``; one program
  copies the ``rest`` elements past the last full segment.
"""

from __future__ import annotations

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def seg_head32(x_ptr, y_ptr, N, S, BLOCK: tl.constexpr):
    seg_len = N // S
    cols = tl.arange(0, BLOCK)
    keep = cols < seg_len
    vals = tl.load(x_ptr + tl.program_id(0) * seg_len + cols, mask=keep)
    tl.store(y_ptr + tl.program_id(0) * BLOCK + cols, vals, mask=keep)


@triton.jit
def seg_head64(x_ptr, y_ptr, N: tl.int64, S: tl.int64, BLOCK: tl.constexpr):
    seg_len = N // S
    cols = tl.arange(0, BLOCK)
    keep = cols < seg_len
    vals = tl.load(x_ptr + tl.program_id(0) * seg_len + cols, mask=keep)
    tl.store(y_ptr + tl.program_id(0) * BLOCK + cols, vals, mask=keep)


@triton.jit
def seg_tail64(x_ptr, y_ptr, N: tl.int64, S: tl.int64, BLOCK: tl.constexpr):
    rest = N % S
    cols = tl.arange(0, BLOCK)
    keep = cols < rest
    tl.store(y_ptr + cols, tl.load(x_ptr + (N - rest) + cols, mask=keep), mask=keep)


suite = Suite(
    name="index-scalars",
    description="segment heads/tails sized by scalar arguments; int32 vs tl.int64 sizes",
    variants={
        "head32": Variant(seg_head32, "segment length N // S in int32"),
        "head64": Variant(seg_head64, "N, S annotated tl.int64: a 64-bit division first"),
        "tail64": Variant(seg_tail64, "N, S annotated tl.int64: a 64-bit remainder first"),
    },
    args=lambda s: {
        "x_ptr": Tensor((s["N"],), "fp32"),
        "y_ptr": Tensor((s["S"] * 256,), "fp32", output=True),
        "N": s["N"],
        "S": s["S"],
    },
    shape={"N": 4000, "S": 6},
    constexprs={"BLOCK": 256},
    options={"num_warps": 4},
    grid=lambda s, meta: (s["S"],),
)
