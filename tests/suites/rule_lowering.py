"""An fp16 ``out = alpha * x + y`` over ``count`` elements, masked by ``i < count``, for the unit tests of
``lower.mask-alignment`` (``tests/test_rule_lowering.py``). ``BLOCK`` 2048 over 4 warps: 16 fp16 per thread, which
the coalescing pass gives every variant alike as ``perThread: 8`` (two 128-bit vectors when nothing else limits them).

- ``spec``: ``count`` = 2^20, specialized divisible by 16: the mask is constant over 16 elements, 128-bit accesses.
- ``dns``: ``do_not_specialize=["count"]``: same pointers and ``perThread``, but the mask alignment is 1, so the
  lowering emits one 16-bit predicated access per element.
- ``ragged``: ``count`` = 2^20 - 8 (not a multiple of 16, so the JIT cannot mark it): as narrow as ``dns``.
- ``skew``: ``x`` only 2-byte aligned (``Tensor(..., align=2)``): the pointer, not the mask, limits its loads.
"""

from __future__ import annotations

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def axpy(x_ptr, y_ptr, out_ptr, count, alpha, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    keep = i < count
    x = tl.load(x_ptr + i, mask=keep)
    y = tl.load(y_ptr + i, mask=keep)
    tl.store(out_ptr + i, alpha * x + y, mask=keep)


axpy_dns = triton.jit(axpy.fn, do_not_specialize=["count"])


def _args(count_less: int = 0, x_align: int = 16):  # type: ignore[no-untyped-def]
    def args(s):  # type: ignore[no-untyped-def]
        return {
            "x_ptr": Tensor((s["N"],), "fp16", align=x_align),
            "y_ptr": Tensor((s["N"],), "fp16"),
            "out_ptr": Tensor((s["N"],), "fp16", output=True),
            "count": s["N"] - count_less,
            "alpha": 0.5,
        }

    return args


suite = Suite(
    name="rule-lowering",
    variants={
        "spec": Variant(axpy),
        "dns": Variant(axpy_dns),
        "ragged": Variant(axpy, args=_args(count_less=8)),
        "skew": Variant(axpy, args=_args(x_align=2)),
    },
    args=_args(),
    shape={"N": 1 << 20},
    constexprs={"BLOCK": 2048},
    options={"num_warps": 4},
    grid=lambda s, meta: (triton.cdiv(s["N"], meta["BLOCK"]),),
    flops=lambda s: 2 * s["N"],
    bytes=lambda s: 6 * s["N"],
)
