"""Minimal loop kernels for the diagnostics rule tests (``tests/test_rules.py``).

``rowsum``: each program sums ``ROWS`` rows of an fp16 ``[R, N]`` matrix in a ``tl.range`` loop:

- ``stages3`` / ``stages1``: ``num_stages`` 3 vs 1 on the loop (cp.async ring vs synchronous loads).
- ``warps8``: ``stages3`` compiled with ``num_warps = 8`` (launch option differs).

``dot``: a K loop of ``tl.dot`` (fp16 → fp32), 64×64×32 tiles:

- ``dot3`` / ``dot1``: ``num_stages`` 3 vs 1 on the K loop (on sm90: wgmma waited in every iteration with 1).
- ``dot3w8``: ``dot3`` with ``num_warps = 8`` (another MMA layout, fewer MMA instructions per thread).
- ``tma``: ``dot3`` reading its operands through device-side tensor descriptors (TMA copies on sm90).

``nested``: a tile loop around a K loop of ``tl.dot``, the outer loop ``tl.range(..., flatten=FLATTEN)``:

- ``flat`` / ``nest``: ``FLATTEN`` True vs False (fused into one loop vs kept nested).
"""

from __future__ import annotations

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def rowsum(x_ptr, y_ptr, R, N: tl.constexpr, ROWS: tl.constexpr, STAGES: tl.constexpr):
    cols = tl.arange(0, N)
    acc = tl.zeros((N,), dtype=tl.float32)
    first = tl.program_id(0) * ROWS
    for r in tl.range(first, first + ROWS, num_stages=STAGES):
        acc += tl.load(x_ptr + r * N + cols, mask=r < R, other=0.0).to(tl.float32)
    tl.store(y_ptr + tl.program_id(0) * N + cols, acc.to(tl.float16))


@triton.jit
def dot_loop(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, STAGES: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, K, BK, num_stages=STAGES):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc.to(tl.float16))


@triton.jit
def dot_tma(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, STAGES: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[BM, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, BN], strides=[BN, 1], block_shape=[BK, BN])
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, K, BK, num_stages=STAGES):
        acc = tl.dot(a_desc.load([0, k]), b_desc.load([k, 0]), acc)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc.to(tl.float16))


@triton.jit
def nested_loop(
    a_ptr, b_ptr, c_ptr, T, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, FLATTEN: tl.constexpr
):  # fmt: skip
    rk = tl.arange(0, BK)
    for t in tl.range(tl.program_id(0), T, tl.num_programs(0), flatten=FLATTEN):
        rm = t * BM + tl.arange(0, BM)
        rn = tl.arange(0, BN)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
            b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
            acc = tl.dot(a, b, acc)
        tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc.to(tl.float16))


def _rows(s: dict[str, int]) -> dict[str, object]:
    return {
        "x_ptr": Tensor((s["R"], 256), "fp16"),
        "y_ptr": Tensor((s["R"] // 8, 256), "fp16", output=True),
        "R": s["R"],
    }


def _dot(s: dict[str, int]) -> dict[str, object]:
    return {
        "a_ptr": Tensor((64, s["K"]), "fp16"),
        "b_ptr": Tensor((s["K"], 64), "fp16"),
        "c_ptr": Tensor((64, 64), "fp16", output=True),
        "K": s["K"],
    }


def _nested(s: dict[str, int]) -> dict[str, object]:
    return {
        "a_ptr": Tensor((64 * s["T"], s["K"]), "fp16"),
        "b_ptr": Tensor((s["K"], 64), "fp16"),
        "c_ptr": Tensor((64 * s["T"], 64), "fp16", output=True),
        "T": s["T"],
        "K": s["K"],
    }


_DOT = {"BM": 64, "BN": 64, "BK": 32}
_ROW = {"N": 256, "ROWS": 8}

suite = Suite(
    name="diag-loop",
    description="minimal loop kernels: pipelining depth, launch options, wgmma waits, loop flattening",
    variants={
        "stages3": Variant(rowsum, "row loop num_stages=3", {**_ROW, "STAGES": 3}),
        "stages1": Variant(rowsum, "row loop num_stages=1", {**_ROW, "STAGES": 1}),
        "warps8": Variant(rowsum, "row loop num_stages=3, num_warps=8", {**_ROW, "STAGES": 3}, {"num_warps": 8}),
        "dot3": Variant(dot_loop, "K loop num_stages=3", {**_DOT, "STAGES": 3}, args=_dot),
        "dot1": Variant(dot_loop, "K loop num_stages=1", {**_DOT, "STAGES": 1}, args=_dot),
        "dot3w8": Variant(dot_loop, "K loop num_stages=3, num_warps=8", {**_DOT, "STAGES": 3}, {"num_warps": 8}, _dot),
        "tma": Variant(
            dot_tma,
            "K loop num_stages=3, operands through device-side tensor descriptors (TMA)",
            {**_DOT, "STAGES": 3},
            args=_dot,
        ),
        "flat": Variant(nested_loop, "tile loop flatten=True", {**_DOT, "FLATTEN": True}, args=_nested),
        "nest": Variant(nested_loop, "tile loop flatten=False", {**_DOT, "FLATTEN": False}, args=_nested),
    },
    args=_rows,
    shape={"R": 4096, "K": 1024, "T": 64},
    options={"num_warps": 4},
    grid=lambda s, meta: (1,),
    default_pair=("stages1", "stages3"),
)
