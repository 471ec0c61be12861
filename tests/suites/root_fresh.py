"""Fresh root-cause pairs (``tests/test_root_fresh.py``): each suite's two variants differ in one source change that
leaves stage 0 identical. The first finding must name that change at its line, in the right variant.

- ``expcall``: ``tl.exp(v)`` vs ``tl.math.exp2(v * log2(e))`` (a call target changed).
- ``sqrtcall``: ``tl.sqrt(v)`` vs ``tl.sqrt_rn(v)`` (a call target changed: approximate vs IEEE square root).
- ``cachemod``: a copy whose load carries ``cache_modifier=".cg"`` in one variant.
- ``transdot``: one-tile ``tl.dot(a, tl.trans(bt))`` (B read transposed) vs ``tl.dot(a, b)`` (B read directly).
- ``wherefill``: ``tl.where(inb, v, 0.0)`` after an unmasked-other load vs ``tl.load(..., other=0.0)``.
- ``offs64``: block offsets computed in int32 vs widened with ``.to(tl.int64)``.
- ``volatile``: ``tl.load(..., volatile=True)`` vs a plain load.
- ``fmacall``: ``tl.fma(a, b, c)`` vs ``a * b + c``.
- ``dotout``: ``tl.dot(a, b)`` vs ``tl.dot(a, b, out_dtype=tl.float16)`` (fp16 operands).
- ``unroll``: a loop over ``tl.static_range`` vs ``range`` with the same constexpr bound.
- ``assume``: ``tl.assume(n % 16 == 0)`` vs none.
- ``reducecombine``: ``tl.sum(v, axis=0)`` vs ``tl.reduce(v, 0, _add)`` with a custom ``@triton.jit`` combine.
- ``stagesloop``: a K loop over ``range`` vs ``tl.range(..., num_stages=1)`` (the pipeliner told not to pipeline it).
"""

from __future__ import annotations

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


def _unary(s):  # type: ignore[no-untyped-def]
    return {"src": Tensor((s["R"], 256), "fp32"), "dst": Tensor((s["R"],), "fp32", output=True)}


@triton.jit
def rowsum_exp(src, dst, W: tl.constexpr):
    r = tl.program_id(0)
    v = tl.load(src + r * W + tl.arange(0, W))
    p = tl.exp(v)
    tl.store(dst + r, tl.sum(p, axis=0))


@triton.jit
def rowsum_exp2(src, dst, W: tl.constexpr):
    r = tl.program_id(0)
    v = tl.load(src + r * W + tl.arange(0, W))
    p = tl.math.exp2(v * 1.4426950408889634)
    tl.store(dst + r, tl.sum(p, axis=0))


expcall = Suite(
    name="expcall",
    variants={"exp": Variant(rowsum_exp), "exp2": Variant(rowsum_exp2)},
    args=_unary,
    shape={"R": 64},
    constexprs={"W": 256},
    options={"num_warps": 4},
)


@triton.jit
def rowsum_sqrt(src, dst, W: tl.constexpr):
    r = tl.program_id(0)
    v = tl.load(src + r * W + tl.arange(0, W))
    q = tl.sqrt(v)
    tl.store(dst + r, tl.sum(q, axis=0))


@triton.jit
def rowsum_sqrt_rn(src, dst, W: tl.constexpr):
    r = tl.program_id(0)
    v = tl.load(src + r * W + tl.arange(0, W))
    q = tl.sqrt_rn(v)
    tl.store(dst + r, tl.sum(q, axis=0))


sqrtcall = Suite(
    name="sqrtcall",
    variants={"fast": Variant(rowsum_sqrt), "rn": Variant(rowsum_sqrt_rn)},
    args=_unary,
    shape={"R": 64},
    constexprs={"W": 256},
    options={"num_warps": 4},
)


def _copy(s):  # type: ignore[no-untyped-def]
    return {"src": Tensor((s["N"],), "fp32"), "dst": Tensor((s["N"],), "fp32", output=True), "n": s["N"]}


@triton.jit
def dup_plain(src, dst, n, B: tl.constexpr):
    o = tl.program_id(0) * B + tl.arange(0, B)
    ok = o < n
    v = tl.load(src + o, mask=ok)
    tl.store(dst + o, v, mask=ok)


@triton.jit
def dup_cg(src, dst, n, B: tl.constexpr):
    o = tl.program_id(0) * B + tl.arange(0, B)
    ok = o < n
    v = tl.load(src + o, mask=ok, cache_modifier=".cg")
    tl.store(dst + o, v, mask=ok)


cachemod = Suite(
    name="cachemod",
    variants={"cg": Variant(dup_cg), "plain": Variant(dup_plain)},
    args=_copy,
    shape={"N": 1 << 16},
    constexprs={"B": 512},
    options={"num_warps": 4},
)


@triton.jit
def tile_dot_direct(a_ptr, b_ptr, c_ptr, TM: tl.constexpr, TN: tl.constexpr, TK: tl.constexpr):
    i = tl.arange(0, TM)
    j = tl.arange(0, TN)
    k = tl.arange(0, TK)
    a = tl.load(a_ptr + i[:, None] * TK + k[None, :])
    b = tl.load(b_ptr + k[:, None] * TN + j[None, :])
    c = tl.dot(a, b)
    tl.store(c_ptr + i[:, None] * TN + j[None, :], c)


@triton.jit
def tile_dot_trans(a_ptr, b_ptr, c_ptr, TM: tl.constexpr, TN: tl.constexpr, TK: tl.constexpr):
    i = tl.arange(0, TM)
    j = tl.arange(0, TN)
    k = tl.arange(0, TK)
    a = tl.load(a_ptr + i[:, None] * TK + k[None, :])
    bt = tl.load(b_ptr + j[:, None] + k[None, :] * TN)
    c = tl.dot(a, tl.trans(bt))
    tl.store(c_ptr + i[:, None] * TN + j[None, :], c)


transdot = Suite(
    name="transdot",
    variants={"trans": Variant(tile_dot_trans), "direct": Variant(tile_dot_direct)},
    args=lambda s: {
        "a_ptr": Tensor((64, 32), "fp16"),
        "b_ptr": Tensor((32, 64), "fp16"),
        "c_ptr": Tensor((64, 64), "fp32", output=True),
    },
    shape={"M": 64},
    constexprs={"TM": 64, "TN": 64, "TK": 32},
    options={"num_warps": 4},
)


@triton.jit
def fill_where(src, dst, n, B: tl.constexpr):
    o = tl.program_id(0) * B + tl.arange(0, B)
    inb = o < n
    v = tl.load(src + o, mask=inb)
    v = tl.where(inb, v, 0.0)
    tl.store(dst + tl.program_id(0), tl.sum(v, axis=0))


@triton.jit
def fill_other(src, dst, n, B: tl.constexpr):
    o = tl.program_id(0) * B + tl.arange(0, B)
    inb = o < n
    v = tl.load(src + o, mask=inb, other=0.0)
    tl.store(dst + tl.program_id(0), tl.sum(v, axis=0))


wherefill = Suite(
    name="wherefill",
    variants={"where": Variant(fill_where), "other": Variant(fill_other)},
    args=lambda s: {
        "src": Tensor((s["N"],), "fp32"),
        "dst": Tensor((s["N"] // 512,), "fp32", output=True),
        "n": s["N"],
    },
    shape={"N": 1 << 16},
    constexprs={"B": 512},
    options={"num_warps": 4},
)


@triton.jit
def scale_i32(src, dst, n, B: tl.constexpr):
    base = tl.program_id(0) * B
    o = base + tl.arange(0, B)
    ok = o < n
    tl.store(dst + o, 3.0 * tl.load(src + o, mask=ok), mask=ok)


@triton.jit
def scale_i64(src, dst, n, B: tl.constexpr):
    base = tl.program_id(0).to(tl.int64) * B
    o = base + tl.arange(0, B)
    ok = o < n
    tl.store(dst + o, 3.0 * tl.load(src + o, mask=ok), mask=ok)


offs64 = Suite(
    name="offs64",
    variants={"i64": Variant(scale_i64), "i32": Variant(scale_i32)},
    args=_copy,
    shape={"N": 1 << 16},
    constexprs={"B": 512},
    options={"num_warps": 4},
)


@triton.jit
def dup_volatile(src, dst, n, B: tl.constexpr):
    o = tl.program_id(0) * B + tl.arange(0, B)
    ok = o < n
    v = tl.load(src + o, mask=ok, volatile=True)
    tl.store(dst + o, v, mask=ok)


volatile = Suite(
    name="volatile",
    variants={"volatile": Variant(dup_volatile), "plain": Variant(dup_plain)},
    args=_copy,
    shape={"N": 1 << 16},
    constexprs={"B": 512},
    options={"num_warps": 4},
)


def _tri(s):  # type: ignore[no-untyped-def]
    return {
        "x": Tensor((s["N"],), "fp32"),
        "y": Tensor((s["N"],), "fp32"),
        "z": Tensor((s["N"],), "fp32"),
        "out": Tensor((s["N"],), "fp32", output=True),
    }


@triton.jit
def muladd_expr(x, y, z, out, B: tl.constexpr):
    o = tl.program_id(0) * B + tl.arange(0, B)
    a = tl.load(x + o)
    b = tl.load(y + o)
    c = tl.load(z + o)
    r = a * b + c
    tl.store(out + o, r)


@triton.jit
def muladd_fma(x, y, z, out, B: tl.constexpr):
    o = tl.program_id(0) * B + tl.arange(0, B)
    a = tl.load(x + o)
    b = tl.load(y + o)
    c = tl.load(z + o)
    r = tl.fma(a, b, c)
    tl.store(out + o, r)


fmacall = Suite(
    name="fmacall",
    variants={"fma": Variant(muladd_fma), "expr": Variant(muladd_expr)},
    args=_tri,
    shape={"N": 1 << 16},
    constexprs={"B": 512},
    options={"num_warps": 4},
)


@triton.jit
def tile_dot_f32(a_ptr, b_ptr, c_ptr, TM: tl.constexpr, TN: tl.constexpr, TK: tl.constexpr):
    i = tl.arange(0, TM)
    j = tl.arange(0, TN)
    k = tl.arange(0, TK)
    a = tl.load(a_ptr + i[:, None] * TK + k[None, :])
    b = tl.load(b_ptr + k[:, None] * TN + j[None, :])
    c = tl.dot(a, b)
    tl.store(c_ptr + i[:, None] * TN + j[None, :], c.to(tl.float16))


@triton.jit
def tile_dot_f16(a_ptr, b_ptr, c_ptr, TM: tl.constexpr, TN: tl.constexpr, TK: tl.constexpr):
    i = tl.arange(0, TM)
    j = tl.arange(0, TN)
    k = tl.arange(0, TK)
    a = tl.load(a_ptr + i[:, None] * TK + k[None, :])
    b = tl.load(b_ptr + k[:, None] * TN + j[None, :])
    c = tl.dot(a, b, out_dtype=tl.float16)
    tl.store(c_ptr + i[:, None] * TN + j[None, :], c.to(tl.float16))


dotout = Suite(
    name="dotout",
    variants={"f16acc": Variant(tile_dot_f16), "f32acc": Variant(tile_dot_f32)},
    args=lambda s: {
        "a_ptr": Tensor((64, 32), "fp16"),
        "b_ptr": Tensor((32, 64), "fp16"),
        "c_ptr": Tensor((64, 64), "fp16", output=True),
    },
    shape={"M": 64},
    constexprs={"TM": 64, "TN": 64, "TK": 32},
    options={"num_warps": 4},
)


def _rows(s):  # type: ignore[no-untyped-def]
    return {"src": Tensor((s["R"], 4 * 128), "fp32"), "dst": Tensor((s["R"],), "fp32", output=True)}


@triton.jit
def chunks_static(src, dst, W: tl.constexpr, NCH: tl.constexpr):
    r = tl.program_id(0)
    acc = tl.zeros((W,), dtype=tl.float32)
    for c in tl.static_range(NCH):
        acc += tl.load(src + r * W * NCH + c * W + tl.arange(0, W))
    tl.store(dst + r, tl.sum(acc, axis=0))


@triton.jit
def chunks_range(src, dst, W: tl.constexpr, NCH: tl.constexpr):
    r = tl.program_id(0)
    acc = tl.zeros((W,), dtype=tl.float32)
    for c in range(NCH):
        acc += tl.load(src + r * W * NCH + c * W + tl.arange(0, W))
    tl.store(dst + r, tl.sum(acc, axis=0))


unroll = Suite(
    name="unroll",
    variants={"static": Variant(chunks_static), "loop": Variant(chunks_range)},
    args=_rows,
    shape={"R": 64},
    constexprs={"W": 128, "NCH": 4},
    options={"num_warps": 4},
)


@triton.jit
def dup_assumed(src, dst, n, B: tl.constexpr):
    tl.assume(n % 16 == 0)
    o = tl.program_id(0) * B + tl.arange(0, B)
    ok = o < n
    v = tl.load(src + o, mask=ok)
    tl.store(dst + o, v, mask=ok)


assume = Suite(
    name="assume",
    variants={"assumed": Variant(dup_assumed), "plain": Variant(dup_plain)},
    args=_copy,
    shape={"N": 1 << 16},
    constexprs={"B": 512},
    options={"num_warps": 4},
)


@triton.jit
def _add(x, y):
    return x + y


@triton.jit
def rowsum_sum(src, dst, W: tl.constexpr):
    r = tl.program_id(0)
    v = tl.load(src + r * W + tl.arange(0, W))
    tl.store(dst + r, tl.sum(v, axis=0))


@triton.jit
def rowsum_reduce(src, dst, W: tl.constexpr):
    r = tl.program_id(0)
    v = tl.load(src + r * W + tl.arange(0, W))
    tl.store(dst + r, tl.reduce(v, 0, _add))


reducecombine = Suite(
    name="reducecombine",
    variants={"reduce": Variant(rowsum_reduce), "sum": Variant(rowsum_sum)},
    args=_unary,
    shape={"R": 64},
    constexprs={"W": 256},
    options={"num_warps": 4},
)


def _mm(s):  # type: ignore[no-untyped-def]
    return {
        "a_ptr": Tensor((128, s["K"]), "fp16"),
        "b_ptr": Tensor((s["K"], 128), "fp16"),
        "c_ptr": Tensor((128, 128), "fp32", output=True),
        "K": s["K"],
    }


@triton.jit
def kloop_default(a_ptr, b_ptr, c_ptr, K, TM: tl.constexpr, TN: tl.constexpr, TK: tl.constexpr):
    i = tl.program_id(0) * TM + tl.arange(0, TM)
    j = tl.arange(0, TN)
    k = tl.arange(0, TK)
    acc = tl.zeros((TM, TN), dtype=tl.float32)
    for k0 in range(0, K, TK):
        a = tl.load(a_ptr + i[:, None] * K + (k0 + k)[None, :])
        b = tl.load(b_ptr + (k0 + k)[:, None] * TN + j[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + i[:, None] * TN + j[None, :], acc)


@triton.jit
def kloop_one_stage(a_ptr, b_ptr, c_ptr, K, TM: tl.constexpr, TN: tl.constexpr, TK: tl.constexpr):
    i = tl.program_id(0) * TM + tl.arange(0, TM)
    j = tl.arange(0, TN)
    k = tl.arange(0, TK)
    acc = tl.zeros((TM, TN), dtype=tl.float32)
    for k0 in tl.range(0, K, TK, num_stages=1):
        a = tl.load(a_ptr + i[:, None] * K + (k0 + k)[None, :])
        b = tl.load(b_ptr + (k0 + k)[:, None] * TN + j[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + i[:, None] * TN + j[None, :], acc)


stagesloop = Suite(
    name="stagesloop",
    variants={"one": Variant(kloop_one_stage), "default": Variant(kloop_default)},
    args=_mm,
    shape={"K": 512},
    constexprs={"TM": 64, "TN": 128, "TK": 32},
    options={"num_warps": 4, "num_stages": 3},
)
