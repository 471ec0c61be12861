"""Row scaling ``y[r, :] = b[r, :] * s`` whose row stride is called ``stride_b`` in one variant and ``ldb`` in the
others, for ``spec.divisibility-lost`` across a rename (``tests/test_rule_specialization.py``); the parameters pair
by role (the row stride of ``b``), not by name.

- ``kept``: no decorator arguments; ``stride_b`` = 1008 is divisible by 16 (``tt.divisibility = 16``).
- ``unaligned``: ``do_not_specialize_on_alignment=["ldb"]``: ``ldb`` keeps no divisibility.
- ``frozen``: ``ldb`` in both ``do_not_specialize`` and ``do_not_specialize_on_alignment``: no specialization at
  all; removing it from ``do_not_specialize`` alone gives ``unaligned``, still without divisibility.
"""

from __future__ import annotations

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def scale_rows(b_ptr, s_ptr, y_ptr, n_cols, stride_b, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    keep = cols < n_cols
    vals = tl.load(b_ptr + row * stride_b + cols, mask=keep)
    tl.store(y_ptr + row * n_cols + cols, vals * tl.load(s_ptr + cols, mask=keep), mask=keep)


@triton.jit(do_not_specialize_on_alignment=["ldb"])
def scale_rows_unaligned(b_ptr, s_ptr, y_ptr, n_cols, ldb, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    keep = cols < n_cols
    vals = tl.load(b_ptr + row * ldb + cols, mask=keep)
    tl.store(y_ptr + row * n_cols + cols, vals * tl.load(s_ptr + cols, mask=keep), mask=keep)


@triton.jit(do_not_specialize=["ldb"], do_not_specialize_on_alignment=["ldb"])
def scale_rows_frozen(b_ptr, s_ptr, y_ptr, n_cols, ldb, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    keep = cols < n_cols
    vals = tl.load(b_ptr + row * ldb + cols, mask=keep)
    tl.store(y_ptr + row * n_cols + cols, vals * tl.load(s_ptr + cols, mask=keep), mask=keep)


def _args(s: dict[str, int]) -> dict[str, object]:
    return {
        "b_ptr": Tensor((s["R"], s["LD"]), "fp32"),
        "s_ptr": Tensor((s["C"],), "fp32"),
        "y_ptr": Tensor((s["R"], s["C"]), "fp32", output=True),
        "n_cols": s["C"],
    }


suite = Suite(
    name="spec-renamed",
    description="row scaling; the row stride renamed and exempted from specialization in two ways",
    variants={
        "kept": Variant(
            scale_rows, "stride_b specialized (divisible by 16)", args=lambda s: {**_args(s), "stride_b": s["LD"]}
        ),
        "unaligned": Variant(
            scale_rows_unaligned, "ldb in do_not_specialize_on_alignment", args=lambda s: {**_args(s), "ldb": s["LD"]}
        ),
        "frozen": Variant(
            scale_rows_frozen,
            "ldb in do_not_specialize and do_not_specialize_on_alignment",
            args=lambda s: {**_args(s), "ldb": s["LD"]},
        ),
    },
    args=_args,
    shape={"R": 64, "C": 1000, "LD": 1008},
    constexprs={"BLOCK": 1024},
    options={"num_warps": 4},
    grid=lambda s, meta: (s["R"],),
)
