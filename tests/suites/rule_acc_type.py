"""A K-loop matmul for sm90 whose two variants differ only in the accumulator's type (``tests/test_rule_precision.py``,
the links of ``precision.dot-accumulate``): ``acc32`` accumulates ``tl.dot(x, y, acc)`` in fp32 (the default),
``acc16`` passes an fp16 accumulator with ``out_dtype=tl.float16``; ``fp8`` is ``acc32``'s kernel on fp8 (e4m3) operands
(``tests/test_rule_pipelining.py``: the row-major B tile must be transposed for an 8-bit ``wgmma``, so it is not
pipelined)."""

from __future__ import annotations

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def kloop32(a, b, c, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + tl.arange(0, BK)
        x = tl.load(a + rm[:, None] * K + rk[None, :])
        y = tl.load(b + rk[:, None] * BN + rn[None, :])
        acc = tl.dot(x, y, acc)
    tl.store(c + rm[:, None] * BN + rn[None, :], acc.to(tl.float16))


@triton.jit
def kloop16(a, b, c, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    acc = tl.zeros((BM, BN), tl.float16)
    for k0 in range(0, K, BK):
        rk = k0 + tl.arange(0, BK)
        x = tl.load(a + rm[:, None] * K + rk[None, :])
        y = tl.load(b + rk[:, None] * BN + rn[None, :])
        acc = tl.dot(x, y, acc, out_dtype=tl.float16)
    tl.store(c + rm[:, None] * BN + rn[None, :], acc)


def _args_of(dtype: str):  # type: ignore[no-untyped-def]
    def args(s: dict[str, int]) -> dict[str, object]:
        return {
            "a": Tensor((64, s["K"]), dtype),
            "b": Tensor((s["K"], 64), dtype),
            "c": Tensor((64, 64), "fp16", output=True),
            "K": s["K"],
        }

    return args


_args = _args_of("fp16")


suite = Suite(
    name="rule-acc-type",
    description="fp32 vs fp16 (out_dtype) accumulator of a K-loop wgmma matmul",
    variants={
        "acc32": Variant(kloop32, "fp32 accumulator"),
        "acc16": Variant(kloop16, "fp16 accumulator (out_dtype=tl.float16)"),
        "fp8": Variant(kloop32, "fp32 accumulator, fp8 e4m3 operands", args=_args_of("fp8e4nv")),
    },
    args=_args,
    constexprs={"BM": 64, "BN": 64, "BK": 32},
    shape={"K": 512},
    options={"num_warps": 4},
    grid=lambda s, meta: (1,),
)
