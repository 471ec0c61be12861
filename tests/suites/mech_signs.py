"""Kernels for facts the mechanism rules once misread (tests/test_mech_signs.py).

``pdot``: a 32×64 by 64×32 product of two 8-bit integer tiles converted to fp16 right before ``tl.dot``; the
tiles are loaded from pointers whose element type the JIT takes from the arguments, so one kernel gives
``s8`` (int8 × int8, ``arith.sitofp``), ``u8`` (uint8 × uint8, ``arith.uitofp``) and ``mixed`` (int8 A, uint8 B).

``scale``: one row of fp64 values copied (``copy``: loads, address arithmetic on ``!tt.ptr<f64>``, stores: no fp64
arithmetic), scaled (``twice``: one ``arith.mulf`` on an f64 tensor), or an fp32 row copied (``copy32``).
"""

from __future__ import annotations

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def pdot(x_ptr, w_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    i = tl.arange(0, M)
    j = tl.arange(0, N)
    k = tl.arange(0, K)
    x = tl.load(x_ptr + i[:, None] * K + k[None, :])
    w = tl.load(w_ptr + k[:, None] * N + j[None, :])
    prod = tl.dot(x.to(tl.float16), w.to(tl.float16))
    tl.store(out_ptr + i[:, None] * N + j[None, :], prod)


@triton.jit
def scale(src, dst, n, WIDTH: tl.constexpr, TWICE: tl.constexpr):
    at = tl.program_id(0) * WIDTH + tl.arange(0, WIDTH)
    v = tl.load(src + at, mask=at < n)
    if TWICE:
        v = v * 2.0
    tl.store(dst + at, v, mask=at < n)


def _pdot(x: str, w: str):  # type: ignore[no-untyped-def]
    return lambda s: {
        "x_ptr": Tensor((32, 64), x),
        "w_ptr": Tensor((64, 32), w),
        "out_ptr": Tensor((32, 32), "fp32", output=True),
    }


def _scale(t: str):  # type: ignore[no-untyped-def]
    return lambda s: {"src": Tensor((s["N"],), t), "dst": Tensor((s["N"],), t, output=True), "n": s["N"]}


_P = {"M": 32, "N": 32, "K": 64}
suite = Suite(
    name="mech-signs",
    variants={
        "s8": Variant(pdot, "int8 x int8 .to(fp16)", _P, {}, _pdot("i8", "i8")),
        "u8": Variant(pdot, "uint8 x uint8 .to(fp16)", _P, {}, _pdot("u8", "u8")),
        "mixed": Variant(pdot, "int8 x uint8 .to(fp16)", _P, {}, _pdot("i8", "u8")),
        "copy": Variant(scale, "fp64 copy", {"WIDTH": 256, "TWICE": False}, {}, _scale("fp64")),
        "twice": Variant(scale, "fp64 times 2", {"WIDTH": 256, "TWICE": True}, {}, _scale("fp64")),
        "copy32": Variant(scale, "fp32 copy", {"WIDTH": 256, "TWICE": False}, {}, _scale("fp32")),
    },
    args=_pdot("i8", "i8"),
    shape={"N": 1000},
    constexprs={},
    options={"num_warps": 4},
    default_pair=("s8", "u8"),
)
