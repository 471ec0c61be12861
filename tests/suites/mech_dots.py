"""Dot kinds the mechanism-fact tests (``tests/test_mechfacts_dots.py``) compile beside ``diag_mech.py``: operands
converted right before the product, an accumulator converted before it is chained in, and a batched (3-D) product.

``cdot``: ``tl.dot(A, B, acc)`` of a 64×32 tile by a 32×64 tile, 4 warps, the operands loaded in their own dtype and
converted with ``.to`` (``OP``) before the dot:

- ``ext32``: fp16 A and B ``.to(tl.float32)`` (``arith.extf`` to an fp32 tf32 dot).
- ``i8``: int8 A ``.to(tl.float16)`` (``arith.sitofp``) times fp16 B.
- ``u8``: uint8 A ``.to(tl.float16)`` (``arith.uitofp``) times fp16 B.
- ``acc16``: fp16 A and B as they are, the accumulator an fp16 tile ``.to(tl.float32)`` (``arith.extf``) passed as
  ``tl.dot``'s third operand: no operand is converted.

``dmax``: ``rowmax``: ``tl.store(d, tl.max(tl.dot(a, b), axis=1))``, the row maximum of an fp16 product written
on the dot's own line.

``bdot``: ``bmm``: a batched fp16 product ``[2, 32, 16] × [2, 16, 64]`` (M = 32, K = 16, N = 64 all differ).
"""

from __future__ import annotations

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def cdot(a_ptr, b_ptr, c_ptr, d_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, OP: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    c_offs = rm[:, None] * BN + rn[None, :]
    if OP == "ext32":
        acc = tl.dot(a.to(tl.float32), b.to(tl.float32))
    elif OP == "int":
        acc = tl.dot(a.to(tl.float16), b)
    else:
        acc = tl.dot(a, b, tl.load(c_ptr + c_offs).to(tl.float32))
    tl.store(d_ptr + c_offs, acc)


@triton.jit
def bdot(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rb = tl.arange(0, 2)
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rb[:, None, None] * M * K + rm[None, :, None] * K + rk[None, None, :])
    b = tl.load(b_ptr + rb[:, None, None] * K * N + rk[None, :, None] * N + rn[None, None, :])
    acc = tl.dot(a, b)
    tl.store(c_ptr + rb[:, None, None] * M * N + rm[None, :, None] * N + rn[None, None, :], acc)


@triton.jit
def dmax(a_ptr, b_ptr, c_ptr, d_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    tl.store(d_ptr + rm, tl.max(tl.dot(a, b), axis=1))


def _cdot(a: str, b: str):  # type: ignore[no-untyped-def]
    def args(s: dict[str, int]) -> dict[str, object]:
        return {
            "a_ptr": Tensor((64, 32), a),
            "b_ptr": Tensor((32, 64), b),
            "c_ptr": Tensor((64, 64), "fp16"),
            "d_ptr": Tensor((64, 64), "fp32", output=True),
        }

    return args


def _bdot(s: dict[str, int]) -> dict[str, object]:
    return {
        "a_ptr": Tensor((2, 32, 16), "fp16"),
        "b_ptr": Tensor((2, 16, 64), "fp16"),
        "c_ptr": Tensor((2, 32, 64), "fp32", output=True),
    }


_C = {"BM": 64, "BN": 64, "BK": 32}
_W = {"num_warps": 4}

suite = Suite(
    name="mech-dots",
    description="dots with converted operands or accumulator, and a batched dot",
    variants={
        "ext32": Variant(cdot, "fp16 operands .to(fp32)", {**_C, "OP": "ext32"}, _W, _cdot("fp16", "fp16")),
        "i8": Variant(cdot, "int8 A .to(fp16)", {**_C, "OP": "int"}, _W, _cdot("i8", "fp16")),
        "u8": Variant(cdot, "uint8 A .to(fp16)", {**_C, "OP": "int"}, _W, _cdot("u8", "fp16")),
        "acc16": Variant(cdot, "fp16 accumulator .to(fp32)", {**_C, "OP": "acc"}, _W, _cdot("fp16", "fp16")),
        "rowmax": Variant(dmax, "tl.max of a dot on one line", _C, _W, _cdot("fp16", "fp16")),
        "bmm": Variant(bdot, "batched fp16 dot", {"M": 32, "N": 64, "K": 16}, _W, _bdot),
    },
    args=_cdot("fp16", "fp16"),
    shape={},
    options=_W,
    grid=lambda s, meta: (1,),
    default_pair=("ext32", "acc16"),
)
