"""Kernels for the mechanism families of the diagnostics (precision, MMA lowering, atomics, layout conversions,
memory hints, pipeline depth); used by ``tests/test_mechanisms.py``.

``fdot``: one fp32 ``tl.dot`` of a 32×32 tile by a 32×32 tile, launched with one warp:

- ``tf32`` / ``ieee`` / ``tf32x3``: ``input_precision`` of the dot (tensor cores on tf32 inputs, FMA on fp32, three
  tf32 MMAs per product).

``dot_atomic``: a 64×64 ``tl.dot`` result added into the output:

- ``atomic``: ``tl.atomic_add`` of the MMA-layout result (Triton converts it to a blocked layout first).
- ``red_asm``: the same sum written with inline-asm ``red.global.add.f32`` elementwise on the MMA-layout values.

``scale``: ``y = x * eps + 1`` on a row of fp32 values:

- ``eps32`` / ``eps64``: ``eps`` a plain Python float (fp32) vs annotated ``tl.float64`` (the arithmetic is fp64).

``splitk``: split-K ``tl.atomic_add`` of partial dot products into fp32 C:

- ``acq_rel`` / ``relaxed``: the default ``sem`` (acq_rel: fences around each atomic) vs ``sem="relaxed"``.
- ``bf16``: ``relaxed`` into a bf16 output (sm80 has no bf16 atomic add: a CAS loop).

``hints``: a streaming copy with and without cache hints (``evict_first`` / ``.cg`` loads and ``.cs`` stores).

``mdot``: a 64×64×64 fp16 dot, K loop of 4, for sm100 (``tcgen05.mma`` into tensor memory).
"""

from __future__ import annotations

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def fdot(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, PREC: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * BK + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * BN + rn[None, :]
    acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), input_precision=PREC)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


@triton.jit
def dot_atomic(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, ASM: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    part = tl.dot(a, b)
    c_ptrs = c_ptr + rm[:, None] * BN + rn[None, :]
    if ASM:
        tl.inline_asm_elementwise(
            "red.global.add.f32 [$1], $2;\n\tmov.u32 $0, 0;",
            "=r,l,r",
            [c_ptrs, part],
            dtype=tl.int32,
            is_pure=False,
            pack=1,
        )
    else:
        tl.atomic_add(c_ptrs, part)


@triton.jit
def scale(x_ptr, y_ptr, eps, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < N)
    tl.store(y_ptr + offs, x * eps + 1.0, mask=offs < N)


@triton.jit
def scale64(x_ptr, y_ptr, eps: tl.float64, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < N)
    tl.store(y_ptr + offs, x * eps + 1.0, mask=offs < N)


@triton.jit
def splitk(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, SEM: tl.constexpr):
    pid_k = tl.program_id(0)
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = pid_k * BK + tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    part = tl.dot(a, b)
    tl.atomic_add(c_ptr + rm[:, None] * BN + rn[None, :], part.to(c_ptr.dtype.element_ty), sem=SEM)


@triton.jit
def stream(x_ptr, y_ptr, N, BLOCK: tl.constexpr, HINTS: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if HINTS:
        x = tl.load(x_ptr + offs, mask=offs < N, eviction_policy="evict_first")
        tl.store(y_ptr + offs, x * 2, mask=offs < N, cache_modifier=".cs")
    else:
        x = tl.load(x_ptr + offs, mask=offs < N)
        tl.store(y_ptr + offs, x * 2, mask=offs < N)


@triton.jit
def relu_where(x_ptr, y_ptr, N, BLOCK: tl.constexpr, INT_MASK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < N)
    keep = x > 0
    if INT_MASK:
        keep = keep.to(tl.int32)
    tl.store(y_ptr + offs, tl.where(keep, x, 0.0), mask=offs < N)


@triton.jit
def fdiv(x_ptr, y_ptr, N, BLOCK: tl.constexpr, RN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < N)
    y = tl.load(y_ptr + offs, mask=offs < N)
    if RN:
        q = tl.div_rn(x, y + 1.0)
    else:
        q = x / (y + 1.0)
    tl.store(y_ptr + offs, q, mask=offs < N)


@triton.jit
def kloop(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, STAGES: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * BN + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in tl.range(0, K, BK, num_stages=STAGES):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc)
        a_ptrs += BK
        b_ptrs += BK * BN
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


@triton.jit
def rows2(x_ptr, y_ptr, N, COLS: tl.constexpr, STEP: tl.constexpr):
    rows = tl.arange(0, 8)
    cols = tl.arange(0, COLS)
    x = tl.load(x_ptr + rows[:, None] * N + STEP * cols[None, :])
    tl.store(y_ptr + rows[:, None] * COLS + cols[None, :], x)


@triton.jit
def fp8dot(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, IMPRECISE: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    acc = tl.dot(a, b, max_num_imprecise_acc=IMPRECISE)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


def _ab(dtype: str):  # type: ignore[no-untyped-def]
    def args(s: dict[str, int]) -> dict[str, object]:
        return {
            "a_ptr": Tensor((64, 64), dtype),
            "b_ptr": Tensor((64, 64), dtype),
            "c_ptr": Tensor((64, 64), "fp32", output=True),
        }

    return args


def _fdot(s: dict[str, int]) -> dict[str, object]:
    return {
        "a_ptr": Tensor((64, 32), "fp32"),
        "b_ptr": Tensor((32, 64), "fp32"),
        "c_ptr": Tensor((64, 64), "fp32", output=True),
    }


def _dot16(s: dict[str, int]) -> dict[str, object]:
    return {
        "a_ptr": Tensor((64, 64), "fp16"),
        "b_ptr": Tensor((64, 64), "fp16"),
        "c_ptr": Tensor((64, 64), "fp32", output=True),
    }


def _scale(s: dict[str, int]) -> dict[str, object]:
    return {
        "x_ptr": Tensor((s["N"],), "fp32"),
        "y_ptr": Tensor((s["N"],), "fp32", output=True),
        "eps": 1e-6,
        "N": s["N"],
    }


def _splitk(dtype: str):  # type: ignore[no-untyped-def]
    def args(s: dict[str, int]) -> dict[str, object]:
        return {
            "a_ptr": Tensor((64, s["K"]), "fp16"),
            "b_ptr": Tensor((s["K"], 64), "fp16"),
            "c_ptr": Tensor((64, 64), dtype, output=True),
            "K": s["K"],
        }

    return args


def _stream(s: dict[str, int]) -> dict[str, object]:
    return {"x_ptr": Tensor((s["N"],), "fp32"), "y_ptr": Tensor((s["N"],), "fp32", output=True), "N": s["N"]}


_F = {"BM": 64, "BN": 64, "BK": 32}
_D = {"BM": 64, "BN": 64, "BK": 64}

suite = Suite(
    name="diag-mech",
    description="mechanism families: dot precision and MMA lowering, atomics, layout conversions, fp64, cache hints",
    variants={
        "tf32": Variant(fdot, "fp32 dot, input_precision tf32, 1 warp", {**_F, "PREC": "tf32"}),
        "ieee": Variant(fdot, "fp32 dot, input_precision ieee, 1 warp", {**_F, "PREC": "ieee"}),
        "tf32x3": Variant(fdot, "fp32 dot, input_precision tf32x3, 1 warp", {**_F, "PREC": "tf32x3"}),
        "atomic": Variant(dot_atomic, "tl.atomic_add of a dot result", {**_D, "ASM": False}, {"num_warps": 4}, _dot16),
        "red_asm": Variant(
            dot_atomic, "inline-asm red.global.add of a dot result", {**_D, "ASM": True}, {"num_warps": 4}, _dot16
        ),
        "eps32": Variant(scale, "eps as a Python float (fp32)", {"BLOCK": 1024}, {"num_warps": 4}, _scale),
        "eps64": Variant(scale64, "eps annotated tl.float64", {"BLOCK": 1024}, {"num_warps": 4}, _scale),
        "acq_rel": Variant(
            splitk, "split-K atomic_add, default sem", {**_D, "SEM": "acq_rel"}, {"num_warps": 4}, _splitk("fp32")
        ),
        "relaxed": Variant(
            splitk, "split-K atomic_add, sem=relaxed", {**_D, "SEM": "relaxed"}, {"num_warps": 4}, _splitk("fp32")
        ),
        "bf16": Variant(
            splitk, "split-K atomic_add into bf16, relaxed", {**_D, "SEM": "relaxed"}, {"num_warps": 4}, _splitk("bf16")
        ),
        "hints": Variant(
            stream,
            "copy with .cg/evict_first loads and .cs stores",
            {"BLOCK": 1024, "HINTS": True},
            {"num_warps": 4},
            _stream,
        ),
        "where_bool": Variant(
            relu_where, "tl.where on a bool mask", {"BLOCK": 1024, "INT_MASK": False}, {"num_warps": 4}, _stream
        ),
        "where_int": Variant(
            relu_where, "tl.where on an int32 mask", {"BLOCK": 1024, "INT_MASK": True}, {"num_warps": 4}, _stream
        ),
        "div_full": Variant(fdiv, "fp32 x / y", {"BLOCK": 1024, "RN": False}, {"num_warps": 4}, _stream),
        "div_rn": Variant(fdiv, "fp32 tl.div_rn(x, y)", {"BLOCK": 1024, "RN": True}, {"num_warps": 4}, _stream),
        "kloop2": Variant(
            kloop, "K loop, num_stages=2", {**_D, "BK": 32, "STAGES": 2}, {"num_warps": 4}, _splitk("fp32")
        ),
        "kloop4": Variant(
            kloop, "K loop, num_stages=4", {**_D, "BK": 32, "STAGES": 4}, {"num_warps": 4}, _splitk("fp32")
        ),
        "stride2": Variant(rows2, "stride-2 [8, 64] load", {"COLS": 64, "STEP": 2}, {"num_warps": 4}, _stream),
        "contig": Variant(rows2, "contiguous [8, 128] load", {"COLS": 128, "STEP": 1}, {"num_warps": 4}, _stream),
        "fp8_default": Variant(
            fp8dot,
            "fp8 dot, default max_num_imprecise_acc (no promotion)",
            {**_D, "IMPRECISE": None},
            {"num_warps": 4},
            _ab("fp8e4nv"),
        ),
        "fp8_acc32": Variant(
            fp8dot,
            "fp8 dot, max_num_imprecise_acc=32 (promote every 32 products)",
            {**_D, "IMPRECISE": 32},
            {"num_warps": 4},
            _ab("fp8e4nv"),
        ),
        "e5_dot": Variant(fp8dot, "fp8e5 operands", {**_D, "IMPRECISE": None}, {"num_warps": 4}, _ab("fp8e5")),
        "f16_dot": Variant(fp8dot, "fp16 operands", {**_D, "IMPRECISE": None}, {"num_warps": 4}, _ab("fp16")),
        "nohints": Variant(
            stream, "copy without cache hints", {"BLOCK": 1024, "HINTS": False}, {"num_warps": 4}, _stream
        ),
    },
    args=_fdot,
    shape={"N": 1 << 20, "K": 1024},
    options={"num_warps": 1},
    grid=lambda s, meta: (1,),
    default_pair=("ieee", "tf32"),
)
