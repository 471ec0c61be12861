"""An fp64 tile product two ways, for the register evidence of ``tests/test_roots_units.py``
(``irdiff/diagnose/roots.py`` ``_dot_facts``), sm80: ``c = a @ b`` of one 32x32x16 fp64 tile.

- ``mma``: ``tl.dot(lhs, rhs)`` on fp64 operands: Triton lowers it to fp64 MMA (``mma.sync.aligned.m8n8k4`` with
  f64 operands, an ``#mma`` accumulator layout of f64 values: two 32-bit registers each).
- ``fma``: the same product written as a broadcast multiply and a sum over K (``tl.sum(lhs[:, :, None] *
  rhs[None, :, :], axis=1)``): no ``tt.dot`` at all, so FMA on a blocked layout.
- ``ieee``: ``tl.dot(lhs, rhs, input_precision="ieee")``: the dot kept as ``tt.dot``.
"""

from __future__ import annotations

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def gram64(a, b, c, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, HOW: tl.constexpr):
    i = tl.arange(0, BM)
    j = tl.arange(0, BN)
    k = tl.arange(0, BK)
    lhs = tl.load(a + i[:, None] * BK + k[None, :])
    rhs = tl.load(b + k[:, None] * BN + j[None, :])
    if HOW == 0:
        out = tl.dot(lhs, rhs)
    elif HOW == 1:
        out = tl.sum(lhs[:, :, None] * rhs[None, :, :], axis=1)
    else:
        out = tl.dot(lhs, rhs, input_precision="ieee")
    tl.store(c + i[:, None] * BN + j[None, :], out)


_T = {"BM": 32, "BN": 32, "BK": 16}

suite = Suite(
    name="dot-f64",
    description="an fp64 tile product by tl.dot (fp64 MMA on sm80) and by a broadcast multiply-sum (FMA)",
    variants={
        "mma": Variant(gram64, "tl.dot of fp64 tiles", {**_T, "HOW": 0}, target="sm80"),
        "fma": Variant(gram64, "broadcast multiply and tl.sum over K", {**_T, "HOW": 1}, target="sm80"),
        "ieee": Variant(gram64, "tl.dot of fp64 tiles, input_precision='ieee'", {**_T, "HOW": 2}, target="sm80"),
    },
    args=lambda s: {
        "a": Tensor((32, 16), "fp64"),
        "b": Tensor((16, 32), "fp64"),
        "c": Tensor((32, 32), "fp64", output=True),
    },
    shape={},
    options={"num_warps": 4},
    grid=lambda s, meta: (1,),
)
