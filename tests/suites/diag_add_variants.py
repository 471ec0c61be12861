"""The README's ``add`` example (``tests/suites/readme_add.py``) with the variants of a user's report, for the
diagnostics wording tests (``tests/test_rules.py``, ``tests/test_diagnose.py``).

- ``plain``: as in the README: 16-byte-aligned fp32 tensors, ``n`` divisible by 16: 128-bit accesses.
- ``mis8``: ``x_ptr`` only 8-byte aligned (``Tensor(..., align=8)``): 4 elements per thread, but its loads are narrower.
- ``mis4``: ``x_ptr`` only 4-byte aligned: its loads become one element (32 bits) each.
- ``w8``: ``num_warps`` 8 instead of 4: twice the threads, half the elements per thread.
- ``i64``: the program id cast to int64, so the index math is 64-bit (no ``//`` or ``%``).
"""

from __future__ import annotations

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


@triton.jit
def add_i64(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


def _args(x_align: int):  # type: ignore[no-untyped-def]
    def args(s):  # type: ignore[no-untyped-def]
        return {
            "x_ptr": Tensor((s["N"],), "fp32", align=x_align),
            "y_ptr": Tensor((s["N"],), "fp32"),
            "out_ptr": Tensor((s["N"],), "fp32", output=True),
            "n": s["N"],
        }

    return args


suite = Suite(
    name="add_variants",
    variants={
        "plain": Variant(add),
        "mis8": Variant(add, args=_args(8)),
        "mis4": Variant(add, args=_args(4)),
        "w8": Variant(add, options={"num_warps": 8}),
        "i64": Variant(add_i64),
    },
    args=_args(16),
    shape={"N": 1 << 20},
    constexprs={"BLOCK": 1024},
    options={"num_warps": 4},
    grid=lambda s, meta: (triton.cdiv(s["N"], meta["BLOCK"]),),
    flops=lambda s: s["N"],
    bytes=lambda s: 12 * s["N"],
    reference=lambda inputs, s: {"out_ptr": inputs["x_ptr"] + inputs["y_ptr"]},
)
