"""Precision pairs no other suite has (``tests/test_rule_precision.py``), each differing in one numeric choice:

- ``chained`` / ``separate``: a K-loop fp16 matmul that passes the accumulator into the dot (``tl.dot(a, b, acc)``)
  vs adds the product afterwards (``acc += tl.dot(a, b)``); Triton's TTIR combine folds the add into the dot, so the
  two compile to the same ``tt.dot`` (a pair where no accumulation difference may be claimed).
- ``gain64`` / ``gain32``: a row gain computed from a scalar ``g`` (``g * g + 0.5``) and cast to fp32 before it meets
  the row; ``g`` annotated ``tl.float64`` vs a plain Python float: fp64 arithmetic on scalars only.
- ``sqrt_rn`` / ``sqrt_fast``: ``tl.sqrt_rn(x)`` (IEEE-rounded ``sqrt.rn.f32``) vs ``tl.sqrt(x)`` (``sqrt.approx``).
- ``hdiv64`` / ``hdiv32``: a row halved by fp64 division (``x.to(tl.float64) / d``) vs fp32 ``/``.
"""

from __future__ import annotations

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def mm_chained(a, b, c, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    m = tl.arange(0, BM)
    n = tl.arange(0, BN)
    k = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        x = tl.load(a + m[:, None] * K + (k0 + k)[None, :])
        w = tl.load(b + (k0 + k)[:, None] * BN + n[None, :])
        acc = tl.dot(x, w, acc)
    tl.store(c + m[:, None] * BN + n[None, :], acc)


@triton.jit
def mm_separate(a, b, c, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    m = tl.arange(0, BM)
    n = tl.arange(0, BN)
    k = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        x = tl.load(a + m[:, None] * K + (k0 + k)[None, :])
        w = tl.load(b + (k0 + k)[:, None] * BN + n[None, :])
        acc += tl.dot(x, w)
    tl.store(c + m[:, None] * BN + n[None, :], acc)


@triton.jit
def gain_f64(x, y, g: tl.float64, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    s = (g * g + 0.5).to(tl.float32)
    tl.store(y + i, tl.load(x + i, mask=i < n) * s, mask=i < n)


@triton.jit
def gain_f32(x, y, g, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    s = (g * g + 0.5).to(tl.float32)
    tl.store(y + i, tl.load(x + i, mask=i < n) * s, mask=i < n)


@triton.jit
def root_rn(x, y, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(y + i, tl.sqrt_rn(tl.load(x + i, mask=i < n)), mask=i < n)


@triton.jit
def root_fast(x, y, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(y + i, tl.sqrt(tl.load(x + i, mask=i < n)), mask=i < n)


@triton.jit
def half_f64(x, y, d, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    v = tl.load(x + i, mask=i < n).to(tl.float64) / d
    tl.store(y + i, v.to(tl.float32), mask=i < n)


@triton.jit
def half_f32(x, y, d, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(y + i, tl.load(x + i, mask=i < n) / d, mask=i < n)


def _mm(s: dict[str, int]) -> dict[str, object]:
    return {
        "a": Tensor((64, 128), "fp16"),
        "b": Tensor((128, 64), "fp16"),
        "c": Tensor((64, 64), "fp32", output=True),
        "K": 128,
    }


def _row(extra: dict[str, object]):  # type: ignore[no-untyped-def]
    def args(s: dict[str, int]) -> dict[str, object]:
        return {"x": Tensor((4096,), "fp32"), "y": Tensor((4096,), "fp32", output=True), **extra, "n": 4096}

    return args


_MMC = {"BM": 64, "BN": 64, "BK": 32}
_ROW = {"B": 512}

suite = Suite(
    name="precision-kinds",
    description="precision pairs: accumulator chaining, scalar-only fp64, sqrt rounding, fp64 division",
    variants={
        "chained": Variant(mm_chained, "acc = tl.dot(x, w, acc)", _MMC, {"num_warps": 4}, _mm),
        "separate": Variant(mm_separate, "acc += tl.dot(x, w)", _MMC, {"num_warps": 4}, _mm),
        "gain64": Variant(gain_f64, "g: tl.float64, cast to fp32 before the row", _ROW, args=_row({"g": 0.25})),
        "gain32": Variant(gain_f32, "g a plain float (fp32)", _ROW, args=_row({"g": 0.25})),
        "sqrt_rn": Variant(root_rn, "tl.sqrt_rn", _ROW, args=_row({})),
        "sqrt_fast": Variant(root_fast, "tl.sqrt", _ROW, args=_row({})),
        "hdiv64": Variant(half_f64, "x.to(tl.float64) / d", _ROW, args=_row({"d": 2.0})),
        "hdiv32": Variant(half_f32, "x / d in fp32", _ROW, args=_row({"d": 2.0})),
    },
    args=_row({}),
    shape={"N": 4096},
    options={"num_warps": 4},
    grid=lambda s, meta: (1,),
    default_pair=("separate", "chained"),
)
