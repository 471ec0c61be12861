"""README.md's example suite (a vector add), for the ``lower.mask-alignment`` rule test (``tests/test_rules.py``).

- ``plain``: ``n`` = 2^20 is specialized as divisible by 16, so the bound check ``offs < n`` is known to be constant
  over 16 elements and each thread's 4 fp32 are one 128-bit ``ld.global.v4.b32``.
- ``dns``: ``do_not_specialize=["n"]``: the coalescing pass still gives 4 elements per thread, but the lowering splits
  every masked load/store into four 32-bit ones (mask alignment 1).
- ``dns_hint``: ``dns`` comparing with ``tl.multiple_of(tl.full(offs.shape, n, tl.int32), 16)`` (the remedy the
  finding names; true here): 128-bit accesses again.
- ``dns_param_hint``: ``dns`` with ``n = tl.multiple_of(n, 16)``: a hint on a bare parameter is dropped (Triton sets it
  on the op defining the value; a parameter has none), so the accesses stay 32-bit.

The kernel and suite are the README's, reformatted; ``dns_hint`` and ``dns_param_hint`` are added.
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


add_dns = triton.jit(add.fn, do_not_specialize=["n"])


@triton.jit(do_not_specialize=["n"])
def add_hint(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < tl.multiple_of(tl.full(offs.shape, n, tl.int32), 16)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


@triton.jit(do_not_specialize=["n"])
def add_param_hint(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    n = tl.multiple_of(n, 16)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


suite = Suite(
    name="add",
    variants={
        "plain": Variant(add),
        "dns": Variant(add_dns),
        "dns_hint": Variant(add_hint),
        "dns_param_hint": Variant(add_param_hint),
    },
    args=lambda s: {
        "x_ptr": Tensor((s["N"],), "fp32"),
        "y_ptr": Tensor((s["N"],), "fp32"),
        "out_ptr": Tensor((s["N"],), "fp32", output=True),
        "n": s["N"],
    },
    shape={"N": 1 << 20},
    constexprs={"BLOCK": 1024},
    options={"num_warps": 4},
    grid=lambda s, meta: (triton.cdiv(s["N"], meta["BLOCK"]),),
    flops=lambda s: s["N"],
    bytes=lambda s: 12 * s["N"],
    reference=lambda inputs, s: {"out_ptr": inputs["x_ptr"] + inputs["y_ptr"]},
)
