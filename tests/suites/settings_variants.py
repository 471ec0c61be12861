"""Test suites whose variants differ only in settings: target, compile environment, typed scalars.

``tiles``: a batched tile product ``C[b] = A[b] @ B[b]`` (one 64x64 tile per program, K loop) compiled per target and
with ``DISABLE_MMA_V3`` (a Triton knob that turns off Hopper ``wgmma``). ``scaled``: an elementwise ``y = x * eps +
n`` whose scalars are passed as typed scalars (``Scalar``), as torch.compile passes them.
"""

from __future__ import annotations

import triton
import triton.language as tl

from irdiff.suite import Scalar, Suite, Tensor, Variant


@triton.jit
def tile_product(a_ptr, b_ptr, c_ptr, K, stride_ab, stride_bb, stride_cb, BLOCK: tl.constexpr, BK: tl.constexpr):
    batch = tl.program_id(0)
    r = tl.arange(0, BLOCK)
    k = tl.arange(0, BK)
    a_base = a_ptr + batch * stride_ab
    b_base = b_ptr + batch * stride_bb
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(a_base + r[:, None] * K + (k0 + k)[None, :])
        b = tl.load(b_base + (k0 + k)[:, None] * BLOCK + r[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + batch * stride_cb + r[:, None] * BLOCK + r[None, :], acc.to(tl.float16))


def _tile_args(s: dict[str, int]) -> dict[str, object]:
    n, k = s["B"], s["K"]
    return {
        "a_ptr": Tensor((n, 64, k), "fp16"),
        "b_ptr": Tensor((n, k, 64), "fp16"),
        "c_ptr": Tensor((n, 64, 64), "fp16", output=True),
        "K": k,
        "stride_ab": 64 * k,
        "stride_bb": 64 * k,
        "stride_cb": 64 * 64,
    }


tiles = Suite(
    name="tiles",
    description="one tile product per program; variants differ in target and compile environment only",
    variants={
        "on_sm80": Variant(tile_product, "compiled for sm80", target="sm80"),
        "on_sm90": Variant(tile_product, "compiled for sm90", target="sm90"),
        "no_wgmma": Variant(tile_product, "sm90 with DISABLE_MMA_V3=1", target="sm90", env={"DISABLE_MMA_V3": "1"}),
        "as_is": Variant(tile_product, "the kernel with the run's settings"),
    },
    args=_tile_args,
    shape={"B": 8, "K": 256},
    constexprs={"BLOCK": 64, "BK": 32},
    options={"num_warps": 4, "num_stages": 3},
    grid=lambda s, meta: (s["B"],),
)


@triton.jit
def scale_shift(x_ptr, y_ptr, n, eps, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x * eps + n, mask=mask)


def _scaled_args(typed: bool):  # type: ignore[no-untyped-def]
    def build(s: dict[str, int]) -> dict[str, object]:
        n = s["N"]
        return {
            "x_ptr": Tensor((n,), "fp32"),
            "y_ptr": Tensor((n,), "fp32", output=True),
            "n": Scalar(n, "i64") if typed else n,
            "eps": Scalar(1e-6, "fp64") if typed else 1e-6,
        }

    return build


scaled = Suite(
    name="scaled",
    description="y = x * eps + n with plain Python scalars vs typed scalars (as torch.compile passes them)",
    variants={
        "plain": Variant(scale_shift, "Python int and float: the JIT's own types", args=_scaled_args(False)),
        "typed": Variant(scale_shift, "Scalar(n, 'i64'), Scalar(1e-6, 'fp64')", args=_scaled_args(True)),
    },
    args=_scaled_args(False),
    shape={"N": 4096},
    constexprs={"BLOCK": 1024},
    grid=lambda s, meta: (triton.cdiv(s["N"], meta["BLOCK"]),),
)
