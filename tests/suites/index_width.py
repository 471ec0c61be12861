"""Row-gather kernels for the index-width rule tests (``tests/test_rule_index_math.py``): each program copies one
row of a 2-D tensor given its row stride; the variants differ only in the width of the row index.

- ``row32``: ``row = tl.program_id(0)`` (int32 index math).
- ``row64``: ``row = tl.program_id(0).to(tl.int64)`` (the row offset and everything derived from it are int64).
- ``row64split``: ``row64`` that also splits the row into (group, member) with ``//`` and ``%`` by a runtime ``G``
  (64-bit division and remainder).
"""

from __future__ import annotations

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def row_copy32(x_ptr, y_ptr, stride_row, n_cols, G, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    keep = cols < n_cols
    vals = tl.load(x_ptr + row * stride_row + cols, mask=keep)
    tl.store(y_ptr + row * n_cols + cols, vals, mask=keep)


@triton.jit
def row_copy64(x_ptr, y_ptr, stride_row, n_cols, G, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    keep = cols < n_cols
    vals = tl.load(x_ptr + row * stride_row + cols, mask=keep)
    tl.store(y_ptr + row * n_cols + cols, vals, mask=keep)


@triton.jit
def row_copy64_split(x_ptr, y_ptr, stride_row, n_cols, G, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    src = (row % G) * (tl.num_programs(0) // G) + row // G
    cols = tl.arange(0, BLOCK)
    keep = cols < n_cols
    vals = tl.load(x_ptr + src * stride_row + cols, mask=keep)
    tl.store(y_ptr + row * n_cols + cols, vals, mask=keep)


suite = Suite(
    name="index-width",
    description="one row copied per program; int32 vs int64 row index, with and without a 64-bit // and %",
    variants={
        "row32": Variant(row_copy32, "int32 row index"),
        "row64": Variant(row_copy64, "row index widened to int64"),
        "row64split": Variant(row_copy64_split, "int64 row index split by // and % by a runtime G"),
    },
    args=lambda s: {
        "x_ptr": Tensor((s["R"], s["C"]), "fp32"),
        "y_ptr": Tensor((s["R"], s["C"]), "fp32", output=True),
        "stride_row": s["C"],
        "n_cols": s["C"],
        "G": 6,
    },
    shape={"R": 96, "C": 1000},
    constexprs={"BLOCK": 1024},
    options={"num_warps": 4},
    grid=lambda s, meta: (s["R"],),
)
