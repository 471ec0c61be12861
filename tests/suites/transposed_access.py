"""A 64x64 bf16 tile copy whose source or destination is accessed transposed (sm80, 4 warps), for
``tests/test_transposed_root.py``: the root of each pair names the access whose fastest-varying dimension flips.

- ``rowmaj``: ``tl.load(src + r[:, None] * stride + c[None, :])`` then a row-major store.
- ``colmaj``: ``tl.load(src + r[:, None] + c[None, :] * stride)``: the load reads ``src`` column-major; Triton
  loads it in a column-major blocked layout and converts to the store's row-major one through shared memory.
- ``colstore``: a row-major load of ``inp`` (other names: ``i``, ``j``, ``ld``) stored column-major into ``out``.
- ``rowstore``: the same kernel as ``colstore`` with a row-major store.
- ``t0`` / ``t1``: one kernel whose constexpr ``T`` chooses the load's index expression (``T=True``: column-major):
  the same source, so the root is ``config.changed``.
"""

from __future__ import annotations

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def rowmaj(src, dst, stride, B: tl.constexpr):
    r = tl.arange(0, B)
    c = tl.arange(0, B)
    x = tl.load(src + r[:, None] * stride + c[None, :])
    tl.store(dst + r[:, None] * B + c[None, :], x)


@triton.jit
def colmaj(src, dst, stride, B: tl.constexpr):
    r = tl.arange(0, B)
    c = tl.arange(0, B)
    x = tl.load(src + r[:, None] + c[None, :] * stride)
    tl.store(dst + r[:, None] * B + c[None, :], x)


@triton.jit
def rowstore(inp, out, ld, B: tl.constexpr):
    i = tl.arange(0, B)
    j = tl.arange(0, B)
    v = tl.load(inp + i[:, None] * B + j[None, :])
    tl.store(out + i[:, None] * ld + j[None, :], v)


@triton.jit
def colstore(inp, out, ld, B: tl.constexpr):
    i = tl.arange(0, B)
    j = tl.arange(0, B)
    v = tl.load(inp + i[:, None] * B + j[None, :])
    tl.store(out + i[:, None] + j[None, :] * ld, v)


@triton.jit
def either(src, dst, stride, B: tl.constexpr, T: tl.constexpr):
    r = tl.arange(0, B)
    c = tl.arange(0, B)
    if T:
        x = tl.load(src + r[:, None] + c[None, :] * stride)
    else:
        x = tl.load(src + r[:, None] * stride + c[None, :])
    tl.store(dst + r[:, None] * B + c[None, :], x)


def _args(s: dict[str, int]) -> dict[str, object]:
    return {"src": Tensor((64, 64), "bf16"), "dst": Tensor((64, 64), "bf16", output=True), "stride": 64}


def _args2(s: dict[str, int]) -> dict[str, object]:
    return {"inp": Tensor((64, 64), "bf16"), "out": Tensor((64, 64), "bf16", output=True), "ld": 64}


suite = Suite(
    name="transposed-access",
    description="a bf16 tile copy with a row-major or a transposed (column-major) load or store",
    variants={
        "rowmaj": Variant(rowmaj, "row-major load", {"B": 64}, target="sm80"),
        "colmaj": Variant(colmaj, "column-major load", {"B": 64}, target="sm80"),
        "rowstore": Variant(rowstore, "row-major store", {"B": 64}, args=_args2, target="sm80"),
        "colstore": Variant(colstore, "column-major store", {"B": 64}, args=_args2, target="sm80"),
        "t0": Variant(either, "T=False: row-major load", {"B": 64, "T": False}, target="sm80"),
        "t1": Variant(either, "T=True: column-major load", {"B": 64, "T": True}, target="sm80"),
    },
    args=_args,
    shape={},
    options={"num_warps": 4},
    grid=lambda s, meta: (1,),
)
