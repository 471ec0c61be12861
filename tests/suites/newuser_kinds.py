"""Pairs a new user's first suites showed explained incompletely or backwards (``tests/test_newuser_kinds.py``), on
kernels of their kinds written for the tests (not the user's):

- ``axis`` suite, ``rmax_rows`` / ``rmax_cols``: a row maximum of a ``[BM, BN]`` fp32 tile read row-major
  (``r[:, None] * N + c[None, :]``, ``tl.max(x, axis=1)``) vs the same rows read as a transposed ``[BN, BM]`` tile
  (``r[None, :] * N + c[:, None]``, ``tl.max(x, axis=0)``): two source changes (the indexing, the reduction axis).
- ``gap`` suite, ``unit16`` / ``every4`` / ``shift1``: an fp16 copy of 2048 elements read from ``src + i``, from
  ``src + i * 4`` (every fourth element: neighbours 8 bytes apart, 4 of each 32-byte sector used) and from
  ``src + i + 1`` (adjacent elements, only 2-byte aligned: narrower accesses of the same bytes).
- ``warps`` suite, ``w2`` / ``w8``: one softmax-like row scaling kernel (``x / tl.sum(x)``) launched with
  ``num_warps`` 2 vs 8 through ``Variant(options=...)``, the same source: a configuration change only.
"""

from __future__ import annotations

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def rmax_rows(x_ptr, out_ptr, N, BM: tl.constexpr, BN: tl.constexpr):
    r = tl.program_id(0) * BM + tl.arange(0, BM)
    c = tl.arange(0, BN)
    x = tl.load(x_ptr + r[:, None] * N + c[None, :])
    tl.store(out_ptr + r, tl.max(x, axis=1))


@triton.jit
def rmax_cols(x_ptr, out_ptr, N, BM: tl.constexpr, BN: tl.constexpr):
    r = tl.program_id(0) * BM + tl.arange(0, BM)
    c = tl.arange(0, BN)
    x = tl.load(x_ptr + r[None, :] * N + c[:, None])
    tl.store(out_ptr + r, tl.max(x, axis=0))


axis = Suite(
    name="axis",
    description="row maximum: row-major tile, axis=1 vs transposed tile, axis=0",
    variants={"rows": Variant(rmax_rows), "cols": Variant(rmax_cols)},
    args=lambda s: {
        "x_ptr": Tensor((s["M"], s["N"]), "fp32"),
        "out_ptr": Tensor((s["M"],), "fp32", output=True),
        "N": s["N"],
    },
    shape={"M": 1024, "N": 64},
    constexprs={"BM": 16, "BN": 64},
    options={"num_warps": 4},
    grid=lambda s, meta: (s["M"] // meta["BM"],),
)


@triton.jit
def copy_unit16(src, dst, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(dst + i, tl.load(src + i))


@triton.jit
def copy_every4(src, dst, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(dst + i, tl.load(src + i * 4))


@triton.jit
def copy_shift1(src, dst, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(dst + i, tl.load(src + i + 1))


gap = Suite(
    name="gap",
    description="fp16 copy: adjacent elements vs every fourth vs adjacent but 2-byte aligned",
    variants={"unit16": Variant(copy_unit16), "every4": Variant(copy_every4), "shift1": Variant(copy_shift1)},
    args=lambda s: {"src": Tensor((4 * s["N"] + 8,), "fp16"), "dst": Tensor((s["N"],), "fp16", output=True)},
    shape={"N": 1 << 16},
    constexprs={"B": 2048},
    options={"num_warps": 4},
    grid=lambda s, meta: (s["N"] // meta["B"],),
)


@triton.jit
def row_scale(x_ptr, y_ptr, N, B: tl.constexpr):
    row = tl.program_id(0)
    c = tl.arange(0, B)
    x = tl.load(x_ptr + row * N + c, mask=c < N, other=0.0)
    tl.store(y_ptr + row * N + c, x / tl.sum(x, axis=0), mask=c < N)


warps = Suite(
    name="warps",
    description="row scaling with num_warps 2 vs 8 (launch options only)",
    variants={"w2": Variant(row_scale, options={"num_warps": 2}), "w8": Variant(row_scale, options={"num_warps": 8})},
    args=lambda s: {
        "x_ptr": Tensor((s["M"], s["N"]), "fp32"),
        "y_ptr": Tensor((s["M"], s["N"]), "fp32", output=True),
        "N": s["N"],
    },
    shape={"M": 256, "N": 4096},
    constexprs={"B": 4096},
    grid=lambda s, meta: (s["M"],),
)


@triton.jit
def mm_prec(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, PREC: tl.constexpr):
    i = tl.program_id(0) * BM + tl.arange(0, BM)
    j = tl.program_id(1) * BN + tl.arange(0, BN)
    kk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + i[:, None] * K + (k + kk)[None, :])
        b = tl.load(b_ptr + (k + kk)[:, None] * N + j[None, :])
        acc = tl.dot(a, b, acc, input_precision=PREC)
    tl.store(c_ptr + i[:, None] * N + j[None, :], acc)


prec = Suite(
    name="prec",
    description="fp32 matmul: input_precision ieee vs tf32 (the CPU interpreter models neither rounding)",
    variants={
        "exact": Variant(mm_prec, constexprs={"PREC": "ieee"}),
        "tf32": Variant(mm_prec, constexprs={"PREC": "tf32"}),
    },
    args=lambda s: {
        "a_ptr": Tensor((s["M"], s["K"]), "fp32"),
        "b_ptr": Tensor((s["K"], s["N"]), "fp32"),
        "c_ptr": Tensor((s["M"], s["N"]), "fp32", output=True),
        "M": s["M"],
        "N": s["N"],
        "K": s["K"],
    },
    shape={"M": 256, "N": 256, "K": 128},
    constexprs={"BM": 32, "BN": 32, "BK": 32},
    options={"num_warps": 4},
    grid=lambda s, meta: (s["M"] // meta["BM"], s["N"] // meta["BN"]),
    reference=lambda inputs, s: {"c_ptr": inputs["a_ptr"] @ inputs["b_ptr"]},
)
