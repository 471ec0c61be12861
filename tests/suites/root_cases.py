"""Kernels for the root-cause tests (``tests/test_root.py``): each suite's two variants differ in one thing that
leaves stage 0 (the JIT's specialization) identical, so only the source diff, the IR provenance or the pass trace
can name it.

- ``streaming``: ``out = alpha * x + y`` over a flat array; ``evict`` reads ``y`` (the last load) with
  ``eviction_policy="evict_first"``, ``keep`` without it.
- ``hinted``: a tiled fp16 matmul whose A is column-major (``stride_am`` = 1, leading dimension 1024 for M = 1000)
  and whose row offsets wrap with ``% M``; ``hint`` states ``tl.max_contiguous(tl.multiple_of(offs_m, BM), BM)`` on
  them, ``bare`` does not (AxisInfo cannot see through ``% M`` with M not a multiple of 16).
- ``division``: ``z = x / y`` (``approx``) vs ``z = tl.div_rn(x, y)`` (``ieee``) in fp32.
- ``splitk``: a split-K style column reduction: each program adds its partial sums into the output with
  ``tl.atomic_add``; ``relaxed`` passes ``sem="relaxed"``, ``ordered`` uses the default semantics.
- ``warps``: one softmax-like row kernel compiled with ``num_warps`` 4 (``w4``) and 8 (``w8``).
- ``moved``: a loop kernel where ``scaled`` computes the scale inside the loop, ``hoisted`` before it.
"""

from __future__ import annotations

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def axpy_keep(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inb = offs < n
    x = tl.load(x_ptr + offs, mask=inb)
    y = tl.load(y_ptr + offs, mask=inb)
    tl.store(out_ptr + offs, alpha * x + y, mask=inb)


@triton.jit
def axpy_evict(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inb = offs < n
    x = tl.load(x_ptr + offs, mask=inb)
    y = tl.load(y_ptr + offs, mask=inb, eviction_policy="evict_first")
    tl.store(out_ptr + offs, alpha * x + y, mask=inb)


def _flat(s):  # type: ignore[no-untyped-def]
    return {
        "x_ptr": Tensor((s["N"],), "fp32"),
        "y_ptr": Tensor((s["N"],), "fp32"),
        "out_ptr": Tensor((s["N"],), "fp32", output=True),
        "n": s["N"],
        "alpha": 2.0,
    }


streaming = Suite(
    name="streaming",
    variants={"evict": Variant(axpy_evict), "keep": Variant(axpy_keep)},
    args=_flat,
    shape={"N": 1 << 20},
    constexprs={"BLOCK": 1024},
    options={"num_warps": 4},
)


@triton.jit
def mm_colmajor_bare(
    a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, BM: tl.constexpr, BN: tl.constexpr,
    BK: tl.constexpr,
):  # fmt: skip
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = (pid_m * BM + tl.arange(0, BM)) % M
    offs_n = pid_n * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, tl.cdiv(K, BK)):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc)
        a_ptrs += BK * stride_ak
        b_ptrs += BK * stride_bk
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc.to(tl.float16))


@triton.jit
def mm_colmajor_hint(
    a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, BM: tl.constexpr, BN: tl.constexpr,
    BK: tl.constexpr,
):  # fmt: skip
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = tl.max_contiguous(tl.multiple_of((pid_m * BM + tl.arange(0, BM)) % M, BM), BM)
    offs_n = pid_n * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, tl.cdiv(K, BK)):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc)
        a_ptrs += BK * stride_ak
        b_ptrs += BK * stride_bk
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc.to(tl.float16))


def _mm(s):  # type: ignore[no-untyped-def]
    m, n, k = s["M"], s["N"], s["K"]
    return {
        "a_ptr": Tensor((m, k), "fp16", strides=(1, s["LDA"])),
        "b_ptr": Tensor((k, n), "fp16"),
        "c_ptr": Tensor((m, n), "fp16", output=True),
        "M": m,
        "N": n,
        "K": k,
        "stride_am": 1,
        "stride_ak": s["LDA"],
        "stride_bk": n,
        "stride_bn": 1,
    }


hinted = Suite(
    name="hinted",
    variants={"bare": Variant(mm_colmajor_bare), "hint": Variant(mm_colmajor_hint)},
    args=_mm,
    shape={"M": 1000, "N": 1024, "K": 1024, "LDA": 1024},
    constexprs={"BM": 128, "BN": 128, "BK": 32},
    options={"num_warps": 4, "num_stages": 3},
)


@triton.jit
def ratio_approx(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    keep = offs < n
    x = tl.load(x_ptr + offs, mask=keep, other=1.0)
    y = tl.load(y_ptr + offs, mask=keep, other=1.0)
    tl.store(z_ptr + offs, x / y, mask=keep)


@triton.jit
def ratio_ieee(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    keep = offs < n
    x = tl.load(x_ptr + offs, mask=keep, other=1.0)
    y = tl.load(y_ptr + offs, mask=keep, other=1.0)
    tl.store(z_ptr + offs, tl.div_rn(x, y), mask=keep)


division = Suite(
    name="division",
    variants={"approx": Variant(ratio_approx), "ieee": Variant(ratio_ieee)},
    args=lambda s: {
        "x_ptr": Tensor((s["N"],), "fp32"),
        "y_ptr": Tensor((s["N"],), "fp32"),
        "z_ptr": Tensor((s["N"],), "fp32", output=True),
        "n": s["N"],
    },
    shape={"N": 1 << 16},
    constexprs={"BLOCK": 512},
    options={"num_warps": 4},
)


@triton.jit
def colsum_ordered(x_ptr, out_ptr, R, C, CHUNK: tl.constexpr, BC: tl.constexpr):
    first = tl.program_id(0) * CHUNK
    cols = tl.program_id(1) * BC + tl.arange(0, BC)
    part = tl.zeros((BC,), dtype=tl.float32)
    for r in range(first, first + CHUNK):
        part += tl.load(x_ptr + r * C + cols, mask=(r < R) & (cols < C), other=0.0)
    tl.atomic_add(out_ptr + cols, part, mask=cols < C)


@triton.jit
def colsum_relaxed(x_ptr, out_ptr, R, C, CHUNK: tl.constexpr, BC: tl.constexpr):
    first = tl.program_id(0) * CHUNK
    cols = tl.program_id(1) * BC + tl.arange(0, BC)
    part = tl.zeros((BC,), dtype=tl.float32)
    for r in range(first, first + CHUNK):
        part += tl.load(x_ptr + r * C + cols, mask=(r < R) & (cols < C), other=0.0)
    tl.atomic_add(out_ptr + cols, part, mask=cols < C, sem="relaxed")


splitk = Suite(
    name="splitk",
    variants={"relaxed": Variant(colsum_relaxed), "ordered": Variant(colsum_ordered)},
    args=lambda s: {
        "x_ptr": Tensor((s["R"], s["C"]), "fp32"),
        "out_ptr": Tensor((s["C"],), "fp32", output=True),
        "R": s["R"],
        "C": s["C"],
    },
    shape={"R": 4096, "C": 512},
    constexprs={"CHUNK": 64, "BC": 256},
    options={"num_warps": 4},
)


@triton.jit
def row_softmax(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=cols < n_cols)


warps = Suite(
    name="warps",
    variants={"w8": Variant(row_softmax, options={"num_warps": 8}), "w4": Variant(row_softmax)},
    args=lambda s: {
        "x_ptr": Tensor((s["R"], s["C"]), "fp32"),
        "y_ptr": Tensor((s["R"], s["C"]), "fp32", output=True),
        "n_cols": s["C"],
    },
    shape={"R": 4096, "C": 2048},
    constexprs={"BLOCK": 2048},
    options={"num_warps": 4},
)


@triton.jit
def scale_rows_inside(x_ptr, s_ptr, y_ptr, R, n_cols, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    for r in range(tl.program_id(0), R, tl.num_programs(0)):
        scale = tl.load(s_ptr) * 0.5
        v = tl.load(x_ptr + r * n_cols + cols, mask=cols < n_cols)
        tl.store(y_ptr + r * n_cols + cols, v * scale, mask=cols < n_cols)


@triton.jit
def scale_rows_hoisted(x_ptr, s_ptr, y_ptr, R, n_cols, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    scale = tl.load(s_ptr) * 0.5
    for r in range(tl.program_id(0), R, tl.num_programs(0)):
        v = tl.load(x_ptr + r * n_cols + cols, mask=cols < n_cols)
        tl.store(y_ptr + r * n_cols + cols, v * scale, mask=cols < n_cols)


moved = Suite(
    name="moved",
    variants={"inside": Variant(scale_rows_inside), "hoisted": Variant(scale_rows_hoisted)},
    args=lambda s: {
        "x_ptr": Tensor((s["R"], s["C"]), "fp32"),
        "s_ptr": Tensor((1,), "fp32"),
        "y_ptr": Tensor((s["R"], s["C"]), "fp32", output=True),
        "R": s["R"],
        "n_cols": s["C"],
    },
    shape={"R": 1024, "C": 1024},
    constexprs={"BLOCK": 1024},
    options={"num_warps": 4},
)

suite = streaming
