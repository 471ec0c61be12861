"""Six small kernel pairs, each a different performance cause, written by a kernel author triaging perf reports
(``/work/team/probe.md`` records what irdiff says about each pair, in both orders)."""

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


# 1. a mask on a length with no known divisibility vs the same length hinted a multiple of 16
@triton.jit
def mask_plain(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


@triton.jit
def mask_hinted(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    n = tl.multiple_of(n, 16)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


mask = Suite(
    name="mask",
    variants={"plain": Variant(mask_plain), "hinted": Variant(mask_hinted)},
    args=lambda s: {
        "x_ptr": Tensor((s["N"],), "fp32"),
        "out_ptr": Tensor((s["N"],), "fp32", output=True),
        "n": s["N"],
    },
    shape={"N": 1000000 + 8},
    constexprs={"BLOCK": 1024},
    options={"num_warps": 4},
    grid=lambda s, meta: (triton.cdiv(s["N"], meta["BLOCK"]),),
)


# 2. int64 vs int32 offsets
@triton.jit
def idx_i32(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + 1.0, mask=m)


@triton.jit
def idx_i64(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + 1.0, mask=m)


index = Suite(
    name="index",
    variants={"i32": Variant(idx_i32), "i64": Variant(idx_i64)},
    args=lambda s: {
        "x_ptr": Tensor((s["N"],), "fp32"),
        "out_ptr": Tensor((s["N"],), "fp32", output=True),
        "n": s["N"],
    },
    shape={"N": 1 << 20},
    constexprs={"BLOCK": 1024},
    options={"num_warps": 4},
    grid=lambda s, meta: (triton.cdiv(s["N"], meta["BLOCK"]),),
)


# 3. a K-loop matmul with num_stages=1 vs 3 (same kernel, launch option only)
@triton.jit
def mm(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


def _mm_args(s):
    return {
        "a_ptr": Tensor((s["M"], s["K"]), "fp16"),
        "b_ptr": Tensor((s["K"], s["N"]), "fp16"),
        "c_ptr": Tensor((s["M"], s["N"]), "fp16", output=True),
        "M": s["M"],
        "N": s["N"],
        "K": s["K"],
    }


stages = Suite(
    name="stages",
    variants={"s1": Variant(mm, options={"num_stages": 1}), "s3": Variant(mm, options={"num_stages": 3})},
    args=_mm_args,
    shape={"M": 512, "N": 512, "K": 512},
    constexprs={"BM": 64, "BN": 64, "BK": 32},
    options={"num_warps": 4},
    grid=lambda s, meta: (s["M"] // meta["BM"], s["N"] // meta["BN"]),
)


# 4. fp32 tl.dot with input_precision="ieee" vs "tf32"
@triton.jit
def dot_ieee(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    c = tl.dot(a, b, input_precision="ieee")
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], c)


@triton.jit
def dot_tf32(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    c = tl.dot(a, b, input_precision="tf32")
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], c)


precision = Suite(
    name="precision",
    variants={"ieee": Variant(dot_ieee), "tf32": Variant(dot_tf32)},
    args=lambda s: {
        "a_ptr": Tensor((64, 32), "fp32"),
        "b_ptr": Tensor((32, 64), "fp32"),
        "c_ptr": Tensor((64, 64), "fp32", output=True),
    },
    shape={},
    constexprs={"BM": 64, "BN": 64, "BK": 32},
    options={"num_warps": 4},
    grid=lambda s, meta: (1,),
)


# 5. sum of a row-major tile along the contiguous axis (rows) vs the strided axis (columns)
@triton.jit
def sum_rows(x_ptr, out_ptr, stride, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * stride + rn[None, :])
    tl.store(out_ptr + rm, tl.sum(x, axis=1))


@triton.jit
def sum_cols(x_ptr, out_ptr, stride, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    x = tl.load(x_ptr + rn[:, None] * stride + rm[None, :])
    tl.store(out_ptr + rm, tl.sum(x, axis=0))


reduce = Suite(
    name="reduce",
    variants={"rows": Variant(sum_rows), "cols": Variant(sum_cols)},
    args=lambda s: {
        "x_ptr": Tensor((s["N"], s["N"]), "fp32"),
        "out_ptr": Tensor((s["N"],), "fp32", output=True),
        "stride": s["N"],
    },
    shape={"N": 256},
    constexprs={"BM": 32, "BN": 256},
    options={"num_warps": 4},
    grid=lambda s, meta: (s["N"] // meta["BM"],),
)


# 6. a global sum: every element atomically added to one address vs the block reduced first, one atomic per block
@triton.jit
def atomic_tile(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    tl.atomic_add(out_ptr + tl.zeros_like(offs), x, mask=m)


@triton.jit
def atomic_scalar(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(x, axis=0))


atomic = Suite(
    name="atomic",
    variants={"tile": Variant(atomic_tile), "scalar": Variant(atomic_scalar)},
    args=lambda s: {
        "x_ptr": Tensor((s["N"],), "fp32"),
        "out_ptr": Tensor((1,), "fp32", output=True, init="zeros"),
        "n": s["N"],
    },
    shape={"N": 1 << 20},
    constexprs={"BLOCK": 1024},
    options={"num_warps": 4},
    grid=lambda s, meta: (triton.cdiv(s["N"], meta["BLOCK"]),),
)
