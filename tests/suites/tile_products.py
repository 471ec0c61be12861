"""Tile products ``c = a @ b`` of one BMxBNxBK tile written four ways by one kernel (``HOW``), sm80, 4 warps (128
threads), for the register story's dot and product notes (``irdiff/diagnose/roots.py`` ``register_story``:
``_dot_facts``, ``_dot_type``, ``_reduce_product``). Two suites:

``dot-f64`` (``tests/test_fp64_dot_registers.py``), one 32x32x16 fp64 tile:

- ``mma``: ``tl.dot(lhs, rhs)`` on fp64 operands: Triton lowers it to fp64 MMA (``mma.sync.aligned.m8n8k4`` with
  f64 operands, an ``#mma`` accumulator layout of f64 values: two 32-bit registers each).
- ``fma``: the same product written as a broadcast multiply and a sum over K (``tl.sum(lhs[:, :, None] *
  rhs[None, :, :], axis=1)``): no ``tt.dot`` at all, so FMA on a blocked layout.
- ``ieee``: ``tl.dot(lhs, rhs, input_precision="ieee")``: the dot kept as ``tt.dot``.

``dot-tiles`` (``tests/test_roots_apply.py``), different tiles, element types and lowerings:

- ``f64s`` / ``f64l``: ``tl.dot`` of fp64 tiles, 32x32x16 and 64x64x16 (fp64 MMA: 8 and 32 fp64 accumulator values per
  thread, two 32-bit registers each).
- ``f32s`` / ``f32l``: ``tl.dot`` of fp32 tiles (TF32 MMA), 32x32x16 and 64x64x16 (8 and 32 fp32 values per thread).
- ``f32ieee``: the 32x32x16 fp32 dot with ``input_precision="ieee"``: kept as ``tt.dot`` on a ``#blocked`` layout
  (FMA).
- ``sum`` / ``sumtiny``: the fp32 product as a broadcast multiply, scaled by 2, summed over K
  (``tl.sum(lhs[:, :, None] * rhs[None, :, :] * 2.0, axis=1)``) of a 32x32x16 and a 16x16x8 tile: no ``tt.dot``,
  32·16·32 / 128 = 128 and 16·8·16 / 128 = 16 fp32 products per thread before the sum. The scale keeps it a
  ``tt.reduce``: Triton's ``CombineBroadcastMulReducePattern`` (lib/Dialect/Triton/Transforms/Combine.cpp) rewrites
  the plain ``sum(x[:, :, None] * y[None, :, :], 1)`` of ≤ 32-bit floats into ``tt.dot`` (fp64 is left alone).
"""

from __future__ import annotations

import triton
import triton.language as tl

from irdiff.suite import Shape, Suite, Tensor, Variant


@triton.jit
def tile_product(a, b, c, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, HOW: tl.constexpr):
    i = tl.arange(0, BM)
    j = tl.arange(0, BN)
    k = tl.arange(0, BK)
    lhs = tl.load(a + i[:, None] * BK + k[None, :])
    rhs = tl.load(b + k[:, None] * BN + j[None, :])
    if HOW == 0:
        out = tl.dot(lhs, rhs)
    elif HOW == 1:
        out = tl.sum(lhs[:, :, None] * rhs[None, :, :], axis=1)
    elif HOW == 2:
        out = tl.dot(lhs, rhs, input_precision="ieee")
    else:
        out = tl.sum(lhs[:, :, None] * rhs[None, :, :] * 2.0, axis=1)
    tl.store(c + i[:, None] * BN + j[None, :], out)


def _v(how: int, m: int, n: int, k: int, dtype: str, what: str) -> Variant:
    def args(s: Shape) -> dict[str, object]:
        return {"a": Tensor((m, k), dtype), "b": Tensor((k, n), dtype), "c": Tensor((m, n), dtype, output=True)}

    return Variant(tile_product, what, {"BM": m, "BN": n, "BK": k, "HOW": how}, args=args, target="sm80")


f64 = Suite(
    name="dot-f64",
    description="an fp64 tile product by tl.dot (fp64 MMA on sm80) and by a broadcast multiply-sum (FMA)",
    variants={
        "mma": _v(0, 32, 32, 16, "fp64", "tl.dot of fp64 tiles"),
        "fma": _v(1, 32, 32, 16, "fp64", "broadcast multiply and tl.sum over K"),
        "ieee": _v(2, 32, 32, 16, "fp64", "tl.dot of fp64 tiles, input_precision='ieee'"),
    },
    args=lambda s: {},
    shape={},
    options={"num_warps": 4},
    grid=lambda s, meta: (1,),
)

tiles = Suite(
    name="dot-tiles",
    description="tile products of different tiles, element types and lowerings (register story notes)",
    variants={
        "f64s": _v(0, 32, 32, 16, "fp64", "tl.dot of 32x32x16 fp64 tiles"),
        "f64l": _v(0, 64, 64, 16, "fp64", "tl.dot of 64x64x16 fp64 tiles"),
        "f32s": _v(0, 32, 32, 16, "fp32", "tl.dot of 32x32x16 fp32 tiles (TF32 MMA)"),
        "f32l": _v(0, 64, 64, 16, "fp32", "tl.dot of 64x64x16 fp32 tiles (TF32 MMA)"),
        "f32ieee": _v(2, 32, 32, 16, "fp32", "tl.dot of 32x32x16 fp32 tiles, input_precision='ieee' (FMA)"),
        "sum": _v(3, 32, 32, 16, "fp32", "scaled broadcast multiply of 32x32x16 fp32 tiles, tl.sum over K"),
        "sumtiny": _v(3, 16, 16, 8, "fp32", "scaled broadcast multiply of 16x16x8 fp32 tiles, tl.sum over K"),
    },
    args=lambda s: {},
    shape={},
    options={"num_warps": 4},
    grid=lambda s, meta: (1,),
)
