"""Sweep gate fixture: a row-wise scale kernel over padded rows whose stride (1032 elements: a multiple of 8 but not
of 16, so Triton's divisibility specialization says nothing) is made known by a ``tl.multiple_of`` hint. ``reference`` and
``candidate`` start identical; tests/test_sweep.py plants a regression by deleting the candidate's hint line."""

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def scale_rows_reference(x_ptr, y_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    start = row * stride
    start = tl.multiple_of(start, 8)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + start + cols, mask=mask)
    tl.store(y_ptr + start + cols, x * 2.0, mask=mask)


@triton.jit
def scale_rows_candidate(x_ptr, y_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    start = row * stride
    start = tl.multiple_of(start, 8)  # HINT
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + start + cols, mask=mask)
    tl.store(y_ptr + start + cols, x * 2.0, mask=mask)


suite = Suite(
    name="sweep-hints",
    variants={"candidate": Variant(scale_rows_candidate), "reference": Variant(scale_rows_reference)},
    args=lambda s: {
        "x_ptr": Tensor((s["R"], s["S"]), "fp32"),
        "y_ptr": Tensor((s["R"], s["S"]), "fp32", output=True),
        "stride": s["S"],
        "n_cols": s["C"],
    },
    shape={"R": 64, "C": 1024, "S": 1032},
    constexprs={"BLOCK": 1024},
    options={"num_warps": 4},
    default_pair=("candidate", "reference"),
)
