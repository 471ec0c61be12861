"""Root-cause pairs of kinds no other suite has (``tests/test_root_kinds.py``): each suite's two variants differ in
one change the user made. The first finding must name it (argument, line in both variants, direction).

- ``storeevict``: a row-scaling kernel whose store carries ``eviction_policy="evict_first"`` in ``stream`` only.
- ``notf32``: an fp32 tile ``tl.dot`` with the deprecated ``allow_tf32=False`` (IEEE, FMA) vs the default (tf32).
- ``bf16x3``: the same tile dot with ``input_precision="bf16x3"`` vs ``input_precision="tf32"``.
- ``atomscope``: a bucket count with ``tl.atomic_add(..., scope="cta")`` vs the default (gpu) scope.
- ``swapidx``: a 2-D copy whose source address is ``rows * W + cols`` vs ``cols * W + rows`` (operands swapped:
  reading the transpose, column by column).
- ``invload``: a row loop reading a weight vector inside the loop vs once before it (a loop-invariant load).
- ``rowi64``: row offsets ``row * stride`` in int32 vs ``row.to(tl.int64) * stride``.
- ``colmask``: a 2-D load masked by rows only vs by rows and a runtime column bound.
- ``libexp``: ``libdevice.exp`` (full-precision) vs ``tl.exp`` (``ex2.approx``).
- ``acc16``: a K-loop matmul accumulating in fp16 vs fp32.
- ``unrollf``: an elementwise loop over ``tl.range(..., loop_unroll_factor=4)`` vs ``range``.
- ``blockptr``: a 2-D tile copy through a tensor descriptor (``tl.make_tensor_descriptor``, TMA on sm90) vs pointer arithmetic.
- ``maxreg``: one dot kernel compiled with ``maxnreg=40`` vs no register limit.
- ``hintplace``: ``tl.multiple_of`` on a start offset loaded from memory vs on the program id (a hint on another value).
- ``redaxis``: a tile reduced with ``tl.sum(x, axis=0)`` vs ``axis=1``.
- ``helper``: the same kernel calling a ``@triton.jit`` helper ``gelu`` whose body was edited (tanh vs erf).
"""

from __future__ import annotations

import os
import sys

import triton
import triton.language as tl
from triton.language.extra import libdevice

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import act_erf  # noqa: E402
import act_tanh  # noqa: E402

from irdiff.suite import Suite, Tensor, Variant  # noqa: E402

# ---- storeevict ------------------------------------------------------------------------------------------------


def _rows(s):  # type: ignore[no-untyped-def]
    return {
        "x": Tensor((s["R"], 512), "fp16"),
        "scale": Tensor((s["R"],), "fp32"),
        "y": Tensor((s["R"], 512), "fp16", output=True),
    }


@triton.jit
def rowscale_keep(x, scale, y, C: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, C)
    s = tl.load(scale + r)
    v = tl.load(x + r * C + c).to(tl.float32)
    tl.store(y + r * C + c, (v * s).to(tl.float16))


@triton.jit
def rowscale_stream(x, scale, y, C: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, C)
    s = tl.load(scale + r)
    v = tl.load(x + r * C + c).to(tl.float32)
    tl.store(y + r * C + c, (v * s).to(tl.float16), eviction_policy="evict_first")


storeevict = Suite(
    name="storeevict",
    variants={"stream": Variant(rowscale_stream), "keep": Variant(rowscale_keep)},
    args=_rows,
    shape={"R": 128},
    constexprs={"C": 512},
    options={"num_warps": 4},
)

# ---- notf32 / bf16x3 -------------------------------------------------------------------------------------------


def _tile(s):  # type: ignore[no-untyped-def]
    return {
        "p": Tensor((64, 64), "fp32"),
        "q": Tensor((64, 64), "fp32"),
        "r": Tensor((64, 64), "fp32", output=True),
    }


@triton.jit
def tile_default(p, q, r, T: tl.constexpr):
    i = tl.arange(0, T)
    a = tl.load(p + i[:, None] * T + i[None, :])
    b = tl.load(q + i[:, None] * T + i[None, :])
    tl.store(r + i[:, None] * T + i[None, :], tl.dot(a, b))


@triton.jit
def tile_notf32(p, q, r, T: tl.constexpr):
    i = tl.arange(0, T)
    a = tl.load(p + i[:, None] * T + i[None, :])
    b = tl.load(q + i[:, None] * T + i[None, :])
    tl.store(r + i[:, None] * T + i[None, :], tl.dot(a, b, allow_tf32=False))


@triton.jit
def tile_tf32(p, q, r, T: tl.constexpr):
    i = tl.arange(0, T)
    a = tl.load(p + i[:, None] * T + i[None, :])
    b = tl.load(q + i[:, None] * T + i[None, :])
    tl.store(r + i[:, None] * T + i[None, :], tl.dot(a, b, input_precision="tf32"))


@triton.jit
def tile_bf16x3(p, q, r, T: tl.constexpr):
    i = tl.arange(0, T)
    a = tl.load(p + i[:, None] * T + i[None, :])
    b = tl.load(q + i[:, None] * T + i[None, :])
    tl.store(r + i[:, None] * T + i[None, :], tl.dot(a, b, input_precision="bf16x3"))


notf32 = Suite(
    name="notf32",
    variants={"notf32": Variant(tile_notf32), "default": Variant(tile_default)},
    args=_tile,
    shape={},
    constexprs={"T": 64},
    options={"num_warps": 4},
    grid=lambda s, meta: (1,),
)

bf16x3 = Suite(
    name="bf16x3",
    variants={"bf16x3": Variant(tile_bf16x3), "tf32": Variant(tile_tf32)},
    args=_tile,
    shape={},
    constexprs={"T": 64},
    options={"num_warps": 4},
    grid=lambda s, meta: (1,),
)

# ---- atomscope -------------------------------------------------------------------------------------------------


def _buckets(s):  # type: ignore[no-untyped-def]
    return {
        "keys": Tensor((s["N"],), "i32", init="arange"),
        "counts": Tensor((64,), "i32", output=True, init="zeros"),
        "n": s["N"],
    }


@triton.jit
def bucket_gpu(keys, counts, n, B: tl.constexpr):
    o = tl.program_id(0) * B + tl.arange(0, B)
    ok = o < n
    k = tl.load(keys + o, mask=ok, other=0)
    tl.atomic_add(counts + (k & 63), 1, mask=ok)


@triton.jit
def bucket_cta(keys, counts, n, B: tl.constexpr):
    o = tl.program_id(0) * B + tl.arange(0, B)
    ok = o < n
    k = tl.load(keys + o, mask=ok, other=0)
    tl.atomic_add(counts + (k & 63), 1, mask=ok, scope="cta")


atomscope = Suite(
    name="atomscope",
    variants={"cta": Variant(bucket_cta), "gpu": Variant(bucket_gpu)},
    args=_buckets,
    shape={"N": 1 << 14},
    constexprs={"B": 256},
    options={"num_warps": 4},
)

# ---- swapidx ---------------------------------------------------------------------------------------------------


def _square(s):  # type: ignore[no-untyped-def]
    return {"src": Tensor((s["W"], s["W"]), "fp32"), "dst": Tensor((s["W"], s["W"]), "fp32", output=True), "W": s["W"]}


@triton.jit
def copy_rowmajor(src, dst, W, BR: tl.constexpr, BC: tl.constexpr):
    rows = tl.program_id(0) * BR + tl.arange(0, BR)[:, None]
    cols = tl.program_id(1) * BC + tl.arange(0, BC)[None, :]
    v = tl.load(src + rows * W + cols)
    tl.store(dst + rows * W + cols, v)


@triton.jit
def copy_colmajor(src, dst, W, BR: tl.constexpr, BC: tl.constexpr):
    rows = tl.program_id(0) * BR + tl.arange(0, BR)[:, None]
    cols = tl.program_id(1) * BC + tl.arange(0, BC)[None, :]
    v = tl.load(src + cols * W + rows)
    tl.store(dst + rows * W + cols, v)


swapidx = Suite(
    name="swapidx",
    variants={"colmajor": Variant(copy_colmajor), "rowmajor": Variant(copy_rowmajor)},
    args=_square,
    shape={"W": 1024},
    constexprs={"BR": 32, "BC": 64},
    options={"num_warps": 4},
    grid=lambda s, meta: (s["W"] // meta["BR"], s["W"] // meta["BC"]),
)

# ---- invload ---------------------------------------------------------------------------------------------------


def _rowloop(s):  # type: ignore[no-untyped-def]
    return {
        "x": Tensor((s["R"], 256), "fp32"),
        "w": Tensor((256,), "fp32"),
        "out": Tensor((s["R"],), "fp32", output=True),
        "R": s["R"],
    }


@triton.jit
def rowdot_inside(x, w, out, R, C: tl.constexpr, RPP: tl.constexpr):
    c = tl.arange(0, C)
    for i in range(RPP):
        row = tl.program_id(0) * RPP + i
        wv = tl.load(w + c)
        v = tl.load(x + row * C + c)
        tl.store(out + row, tl.sum(v * wv, axis=0))


@triton.jit
def rowdot_hoisted(x, w, out, R, C: tl.constexpr, RPP: tl.constexpr):
    c = tl.arange(0, C)
    wv = tl.load(w + c)
    for i in range(RPP):
        row = tl.program_id(0) * RPP + i
        v = tl.load(x + row * C + c)
        tl.store(out + row, tl.sum(v * wv, axis=0))


invload = Suite(
    name="invload",
    variants={"inside": Variant(rowdot_inside), "hoisted": Variant(rowdot_hoisted)},
    args=_rowloop,
    shape={"R": 1024},
    constexprs={"C": 256, "RPP": 8},
    options={"num_warps": 4},
    grid=lambda s, meta: (s["R"] // meta["RPP"],),
)

# ---- rowi64 ----------------------------------------------------------------------------------------------------


def _strided(s):  # type: ignore[no-untyped-def]
    return {
        "x": Tensor((s["R"], s["S"]), "fp16"),
        "y": Tensor((s["R"], s["S"]), "fp16", output=True),
        "stride": s["S"],
    }


@triton.jit
def rownorm_i32(x, y, stride, C: tl.constexpr):
    row = tl.program_id(0)
    c = tl.arange(0, C)
    base = row * stride
    v = tl.load(x + base + c).to(tl.float32)
    tl.store(y + base + c, (v / tl.sum(v * v, axis=0)).to(tl.float16))


@triton.jit
def rownorm_i64(x, y, stride, C: tl.constexpr):
    row = tl.program_id(0)
    c = tl.arange(0, C)
    base = row.to(tl.int64) * stride
    v = tl.load(x + base + c).to(tl.float32)
    tl.store(y + base + c, (v / tl.sum(v * v, axis=0)).to(tl.float16))


rowi64 = Suite(
    name="rowi64",
    variants={"i64": Variant(rownorm_i64), "i32": Variant(rownorm_i32)},
    args=_strided,
    shape={"R": 256, "S": 1024},
    constexprs={"C": 1024},
    options={"num_warps": 4},
    grid=lambda s, meta: (s["R"],),
)

# ---- colmask ---------------------------------------------------------------------------------------------------


def _masked2d(s):  # type: ignore[no-untyped-def]
    return {
        "src": Tensor((s["M"], 128), "fp16"),
        "dst": Tensor((s["M"], 128), "fp16", output=True),
        "M": s["M"],
        "N": 100,
    }


@triton.jit
def neg_rowmask(src, dst, M, N, BM: tl.constexpr, BN: tl.constexpr):
    r = tl.program_id(0) * BM + tl.arange(0, BM)[:, None]
    c = tl.arange(0, BN)[None, :]
    ok = r < M
    v = tl.load(src + r * BN + c, mask=ok, other=0.0)
    tl.store(dst + r * BN + c, -v, mask=ok)


@triton.jit
def neg_fullmask(src, dst, M, N, BM: tl.constexpr, BN: tl.constexpr):
    r = tl.program_id(0) * BM + tl.arange(0, BM)[:, None]
    c = tl.arange(0, BN)[None, :]
    ok = (r < M) & (c < N)
    v = tl.load(src + r * BN + c, mask=ok, other=0.0)
    tl.store(dst + r * BN + c, -v, mask=ok)


colmask = Suite(
    name="colmask",
    variants={"full": Variant(neg_fullmask), "rows": Variant(neg_rowmask)},
    args=_masked2d,
    shape={"M": 1000},
    constexprs={"BM": 32, "BN": 128},
    options={"num_warps": 4},
    grid=lambda s, meta: (triton.cdiv(s["M"], meta["BM"]),),
)

# ---- libexp ----------------------------------------------------------------------------------------------------


def _soft(s):  # type: ignore[no-untyped-def]
    return {"x": Tensor((s["N"],), "fp32"), "y": Tensor((s["N"],), "fp32", output=True), "n": s["N"]}


@triton.jit
def softplus_fast(x, y, n, B: tl.constexpr):
    o = tl.program_id(0) * B + tl.arange(0, B)
    ok = o < n
    v = tl.load(x + o, mask=ok)
    e = tl.exp(v)
    tl.store(y + o, tl.log(1.0 + e), mask=ok)


@triton.jit
def softplus_libdevice(x, y, n, B: tl.constexpr):
    o = tl.program_id(0) * B + tl.arange(0, B)
    ok = o < n
    v = tl.load(x + o, mask=ok)
    e = libdevice.exp(v)
    tl.store(y + o, tl.log(1.0 + e), mask=ok)


libexp = Suite(
    name="libexp",
    variants={"libdevice": Variant(softplus_libdevice), "fast": Variant(softplus_fast)},
    args=_soft,
    shape={"N": 1 << 16},
    constexprs={"B": 1024},
    options={"num_warps": 4},
)

# ---- acc16 -----------------------------------------------------------------------------------------------------


def _mm(s):  # type: ignore[no-untyped-def]
    return {
        "a": Tensor((s["M"], s["K"]), "fp16"),
        "b": Tensor((s["K"], s["N"]), "fp16"),
        "c": Tensor((s["M"], s["N"]), "fp16", output=True),
        "K": s["K"],
    }


@triton.jit
def mm_acc32(a, b, c, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, N: tl.constexpr):
    m = tl.program_id(0) * BM + tl.arange(0, BM)
    n = tl.program_id(1) * BN + tl.arange(0, BN)
    k = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        x = tl.load(a + m[:, None] * K + (k0 + k)[None, :])
        w = tl.load(b + (k0 + k)[:, None] * N + n[None, :])
        acc = tl.dot(x, w, acc)
    tl.store(c + m[:, None] * N + n[None, :], acc.to(tl.float16))


@triton.jit
def mm_acc16(a, b, c, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, N: tl.constexpr):
    m = tl.program_id(0) * BM + tl.arange(0, BM)
    n = tl.program_id(1) * BN + tl.arange(0, BN)
    k = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float16)
    for k0 in range(0, K, BK):
        x = tl.load(a + m[:, None] * K + (k0 + k)[None, :])
        w = tl.load(b + (k0 + k)[:, None] * N + n[None, :])
        acc = tl.dot(x, w, acc, out_dtype=tl.float16)
    tl.store(c + m[:, None] * N + n[None, :], acc.to(tl.float16))


acc16 = Suite(
    name="acc16",
    variants={"f16": Variant(mm_acc16), "f32": Variant(mm_acc32)},
    args=_mm,
    shape={"M": 512, "N": 512, "K": 512},
    constexprs={"BM": 64, "BN": 64, "BK": 32, "N": 512},
    options={"num_warps": 4, "num_stages": 3},
    grid=lambda s, meta: (s["M"] // meta["BM"], s["N"] // meta["BN"]),
)

# ---- unrollf ---------------------------------------------------------------------------------------------------


def _chunks(s):  # type: ignore[no-untyped-def]
    return {"x": Tensor((s["N"],), "fp32"), "y": Tensor((s["N"],), "fp32", output=True), "n": s["N"]}


@triton.jit
def chunked_plain(x, y, n, B: tl.constexpr):
    base = tl.program_id(0) * n
    for s in range(0, n, B):
        o = base + s + tl.arange(0, B)
        tl.store(y + o, tl.load(x + o) * 3.0)


@triton.jit
def chunked_unrolled(x, y, n, B: tl.constexpr):
    base = tl.program_id(0) * n
    for s in tl.range(0, n, B, loop_unroll_factor=4):
        o = base + s + tl.arange(0, B)
        tl.store(y + o, tl.load(x + o) * 3.0)


unrollf = Suite(
    name="unrollf",
    variants={"unrolled": Variant(chunked_unrolled), "plain": Variant(chunked_plain)},
    args=_chunks,
    shape={"N": 1 << 14},
    constexprs={"B": 512},
    options={"num_warps": 4},
    grid=lambda s, meta: (1,),
)

# ---- blockptr --------------------------------------------------------------------------------------------------


def _tiles(s):  # type: ignore[no-untyped-def]
    return {
        "src": Tensor((s["M"], s["N"]), "fp16"),
        "dst": Tensor((s["M"], s["N"]), "fp16", output=True),
        "M": s["M"],
        "N": s["N"],
    }


@triton.jit
def tile_ptrs(src, dst, M, N, BM: tl.constexpr, BN: tl.constexpr):
    r = tl.program_id(0) * BM + tl.arange(0, BM)[:, None]
    c = tl.program_id(1) * BN + tl.arange(0, BN)[None, :]
    v = tl.load(src + r * N + c)
    tl.store(dst + r * N + c, v * 2.0)


@triton.jit
def tile_blockptr(src, dst, M, N, BM: tl.constexpr, BN: tl.constexpr):
    desc = tl.make_tensor_descriptor(src, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    v = desc.load([tl.program_id(0) * BM, tl.program_id(1) * BN])
    r = tl.program_id(0) * BM + tl.arange(0, BM)[:, None]
    c = tl.program_id(1) * BN + tl.arange(0, BN)[None, :]
    tl.store(dst + r * N + c, v * 2.0)


blockptr = Suite(
    name="blockptr",
    variants={"desc": Variant(tile_blockptr), "ptrs": Variant(tile_ptrs)},
    args=_tiles,
    shape={"M": 512, "N": 512},
    constexprs={"BM": 64, "BN": 64},
    options={"num_warps": 4},
    grid=lambda s, meta: (s["M"] // meta["BM"], s["N"] // meta["BN"]),
)

# ---- maxreg ----------------------------------------------------------------------------------------------------

maxreg = Suite(
    name="maxreg",
    variants={"cap": Variant(mm_acc32, options={"maxnreg": 40}), "free": Variant(mm_acc32)},
    args=_mm,
    shape={"M": 512, "N": 512, "K": 512},
    constexprs={"BM": 64, "BN": 64, "BK": 32, "N": 512},
    options={"num_warps": 4, "num_stages": 3},
    grid=lambda s, meta: (s["M"] // meta["BM"], s["N"] // meta["BN"]),
)

# ---- hintplace -------------------------------------------------------------------------------------------------


def _gather(s):  # type: ignore[no-untyped-def]
    return {
        "table": Tensor((1 << 20,), "fp16"),
        "starts": Tensor((s["R"],), "i32", init="zeros"),
        "out": Tensor((s["R"], 128), "fp16", output=True),
    }


@triton.jit
def gather_hint_start(table, starts, out, BD: tl.constexpr):
    pid = tl.program_id(0)
    start = tl.multiple_of(tl.load(starts + pid), 16)
    v = tl.load(table + start + tl.arange(0, BD))
    tl.store(out + pid * BD + tl.arange(0, BD), v)


@triton.jit
def gather_hint_pid(table, starts, out, BD: tl.constexpr):
    pid = tl.multiple_of(tl.program_id(0), 16)
    start = tl.load(starts + pid)
    v = tl.load(table + start + tl.arange(0, BD))
    tl.store(out + pid * BD + tl.arange(0, BD), v)


hintplace = Suite(
    name="hintplace",
    variants={"onpid": Variant(gather_hint_pid), "onstart": Variant(gather_hint_start)},
    args=_gather,
    shape={"R": 512},
    constexprs={"BD": 128},
    options={"num_warps": 1},
    grid=lambda s, meta: (s["R"],),
)

# ---- redaxis ---------------------------------------------------------------------------------------------------


def _square_tile(s):  # type: ignore[no-untyped-def]
    return {"x": Tensor((64, 64), "fp32"), "out": Tensor((64,), "fp32", output=True)}


@triton.jit
def tilesum_rows(x, out, T: tl.constexpr):
    i = tl.arange(0, T)
    v = tl.load(x + i[:, None] * T + i[None, :])
    tl.store(out + i, tl.sum(v, axis=1))


@triton.jit
def tilesum_cols(x, out, T: tl.constexpr):
    i = tl.arange(0, T)
    v = tl.load(x + i[:, None] * T + i[None, :])
    tl.store(out + i, tl.sum(v, axis=0))


redaxis = Suite(
    name="redaxis",
    variants={"cols": Variant(tilesum_cols), "rows": Variant(tilesum_rows)},
    args=_square_tile,
    shape={},
    constexprs={"T": 64},
    options={"num_warps": 4},
    grid=lambda s, meta: (1,),
)

# ---- helper ----------------------------------------------------------------------------------------------------

helper = Suite(
    name="helper",
    variants={"erf": Variant(act_erf.gelu_rows), "tanh": Variant(act_tanh.gelu_rows)},
    args=lambda s: {"src": Tensor((s["N"],), "fp32"), "dst": Tensor((s["N"],), "fp32", output=True), "n": s["N"]},
    shape={"N": 1 << 16},
    constexprs={"B": 1024},
    options={"num_warps": 4},
)

# ==== second kernels of the same kinds (each a different kernel from the pair above) ============================

# ---- libsqrt: a module-qualified call changed (``libdevice.sqrt`` vs ``tl.sqrt``) ------------------------------


@triton.jit
def rms_fast(x, y, n, B: tl.constexpr):
    o = tl.program_id(0) * B + tl.arange(0, B)
    ok = o < n
    v = tl.load(x + o, mask=ok, other=1.0)
    r = tl.sqrt(v * v + 1.0)
    tl.store(y + o, v / r, mask=ok)


@triton.jit
def rms_libdevice(x, y, n, B: tl.constexpr):
    o = tl.program_id(0) * B + tl.arange(0, B)
    ok = o < n
    v = tl.load(x + o, mask=ok, other=1.0)
    r = libdevice.sqrt(v * v + 1.0)
    tl.store(y + o, v / r, mask=ok)


libsqrt = Suite(
    name="libsqrt",
    variants={"libdevice": Variant(rms_libdevice), "fast": Variant(rms_fast)},
    args=_soft,
    shape={"N": 1 << 16},
    constexprs={"B": 512},
    options={"num_warps": 4},
)

# ---- unrollred: a reduction loop carrying a sum, ``loop_unroll_factor=2`` vs ``range`` ---------------------------


@triton.jit
def colsum_plain(x, out, R, C: tl.constexpr, BR: tl.constexpr):
    c = tl.program_id(0) * C + tl.arange(0, C)
    acc = tl.zeros((C,), dtype=tl.float32)
    for r in range(0, R, BR):
        rows = r + tl.arange(0, BR)
        acc += tl.sum(tl.load(x + rows[:, None] * (C * 4) + c[None, :]), axis=0)
    tl.store(out + c, acc)


@triton.jit
def colsum_unrolled(x, out, R, C: tl.constexpr, BR: tl.constexpr):
    c = tl.program_id(0) * C + tl.arange(0, C)
    acc = tl.zeros((C,), dtype=tl.float32)
    for r in tl.range(0, R, BR, loop_unroll_factor=2):
        rows = r + tl.arange(0, BR)
        acc += tl.sum(tl.load(x + rows[:, None] * (C * 4) + c[None, :]), axis=0)
    tl.store(out + c, acc)


unrollred = Suite(
    name="unrollred",
    variants={"unrolled": Variant(colsum_unrolled), "plain": Variant(colsum_plain)},
    args=lambda s: {"x": Tensor((s["R"], 256), "fp32"), "out": Tensor((256,), "fp32", output=True), "R": s["R"]},
    shape={"R": 512},
    constexprs={"C": 64, "BR": 16},
    options={"num_warps": 4},
    grid=lambda s, meta: (4,),
)

# ---- swapstore: the store's address operands swapped (writing the transpose) ------------------------------------


@triton.jit
def scale_store_rows(src, dst, W, BR: tl.constexpr, BC: tl.constexpr):
    rows = tl.program_id(0) * BR + tl.arange(0, BR)[:, None]
    cols = tl.program_id(1) * BC + tl.arange(0, BC)[None, :]
    v = tl.load(src + rows * W + cols)
    tl.store(dst + rows * W + cols, v * 0.5)


@triton.jit
def scale_store_cols(src, dst, W, BR: tl.constexpr, BC: tl.constexpr):
    rows = tl.program_id(0) * BR + tl.arange(0, BR)[:, None]
    cols = tl.program_id(1) * BC + tl.arange(0, BC)[None, :]
    v = tl.load(src + rows * W + cols)
    tl.store(dst + cols * W + rows, v * 0.5)


swapstore = Suite(
    name="swapstore",
    variants={"cols": Variant(scale_store_cols), "rows": Variant(scale_store_rows)},
    args=lambda s: {
        "src": Tensor((s["W"], s["W"]), "fp16"),
        "dst": Tensor((s["W"], s["W"]), "fp16", output=True),
        "W": s["W"],
    },
    shape={"W": 512},
    constexprs={"BR": 64, "BC": 32},
    options={"num_warps": 4},
    grid=lambda s, meta: (s["W"] // meta["BR"], s["W"] // meta["BC"]),
)

# ---- hintjag: ``tl.multiple_of`` on a jagged row's start vs on its end (which only feeds the mask) ---------------


@triton.jit
def jag_hint_start(vals, rowptr, out, BD: tl.constexpr):
    pid = tl.program_id(0)
    start = tl.multiple_of(tl.load(rowptr + pid), 8)
    end = tl.load(rowptr + pid + 1)
    o = start + tl.arange(0, BD)
    v = tl.load(vals + o, mask=o < end, other=0.0)
    tl.store(out + pid, tl.sum(v, axis=0))


@triton.jit
def jag_hint_end(vals, rowptr, out, BD: tl.constexpr):
    pid = tl.program_id(0)
    start = tl.load(rowptr + pid)
    end = tl.multiple_of(tl.load(rowptr + pid + 1), 8)
    o = start + tl.arange(0, BD)
    v = tl.load(vals + o, mask=o < end, other=0.0)
    tl.store(out + pid, tl.sum(v, axis=0))


hintjag = Suite(
    name="hintjag",
    variants={"onend": Variant(jag_hint_end), "onstart": Variant(jag_hint_start)},
    args=lambda s: {
        "vals": Tensor((s["R"] * 64,), "fp32"),
        "rowptr": Tensor((s["R"] + 1,), "i32", init="zeros"),
        "out": Tensor((s["R"],), "fp32", output=True),
    },
    shape={"R": 256},
    constexprs={"BD": 64},
    options={"num_warps": 2},
    grid=lambda s, meta: (s["R"],),
)

# ---- maxregfma: ``maxnreg=48`` vs unset on an FMA-lowered fp32 tile dot --------------------------------------------

maxregfma = Suite(
    name="maxregfma",
    variants={"cap": Variant(tile_notf32, options={"maxnreg": 48}), "free": Variant(tile_notf32)},
    args=_tile,
    shape={},
    constexprs={"T": 64},
    options={"num_warps": 4},
    grid=lambda s, meta: (1,),
)

# ---- maxaxis: ``tl.max(x, axis=0)`` vs ``axis=1`` on a 128x128 fp16 tile, 8 warps -----------------------------------------


@triton.jit
def tilemax_cols(x, out, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)
    c = tl.arange(0, C)
    v = tl.load(x + r[:, None] * C + c[None, :])
    m = tl.max(v, axis=0)
    tl.store(out + c, m)


@triton.jit
def tilemax_rows(x, out, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)
    c = tl.arange(0, C)
    v = tl.load(x + r[:, None] * C + c[None, :])
    m = tl.max(v, axis=1)
    tl.store(out + c, m)


maxaxis = Suite(
    name="maxaxis",
    variants={"axis0": Variant(tilemax_cols), "axis1": Variant(tilemax_rows)},
    args=lambda s: {"x": Tensor((128, 128), "fp16"), "out": Tensor((128,), "fp16", output=True)},
    shape={},
    constexprs={"R": 128, "C": 128},
    options={"num_warps": 8},
    grid=lambda s, meta: (1,),
)

# ---- invrow: a K loop re-loading a loop-invariant bias row every iteration vs once --------------------------------


@triton.jit
def biasacc_inside(x, bias, out, K, N: tl.constexpr, BK: tl.constexpr):
    n = tl.arange(0, N)
    acc = tl.zeros((N,), dtype=tl.float32)
    for k in tl.range(0, K, BK):
        ks = k + tl.arange(0, BK)
        t = tl.load(x + ks[:, None] * N + n[None, :])
        b = tl.load(bias + n)
        acc += tl.sum(t, axis=0) + b
    tl.store(out + n, acc)


@triton.jit
def biasacc_hoisted(x, bias, out, K, N: tl.constexpr, BK: tl.constexpr):
    n = tl.arange(0, N)
    acc = tl.zeros((N,), dtype=tl.float32)
    b = tl.load(bias + n)
    for k in tl.range(0, K, BK):
        ks = k + tl.arange(0, BK)
        t = tl.load(x + ks[:, None] * N + n[None, :])
        acc += tl.sum(t, axis=0) + b
    tl.store(out + n, acc)


invrow = Suite(
    name="invrow",
    variants={"inside": Variant(biasacc_inside), "hoisted": Variant(biasacc_hoisted)},
    args=lambda s: {
        "x": Tensor((s["K"], 128), "fp32"),
        "bias": Tensor((128,), "fp32"),
        "out": Tensor((128,), "fp32", output=True),
        "K": s["K"],
    },
    shape={"K": 1024},
    constexprs={"N": 128, "BK": 16},
    options={"num_warps": 4},
    grid=lambda s, meta: (1,),
)

# ---- descwide: a 128x64 bf16 tile read through a tensor descriptor vs pointer arithmetic -------------------------


@triton.jit
def wide_ptrs(src, dst, M, N, BM: tl.constexpr, BN: tl.constexpr):
    r = tl.program_id(0) * BM + tl.arange(0, BM)[:, None]
    c = tl.arange(0, BN)[None, :]
    v = tl.load(src + r * N + c)
    tl.store(dst + r * N + c, v + 1.0)


@triton.jit
def wide_desc(src, dst, M, N, BM: tl.constexpr, BN: tl.constexpr):
    d = tl.make_tensor_descriptor(src, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    v = d.load([tl.program_id(0) * BM, 0])
    r = tl.program_id(0) * BM + tl.arange(0, BM)[:, None]
    c = tl.arange(0, BN)[None, :]
    tl.store(dst + r * N + c, v + 1.0)


descwide = Suite(
    name="descwide",
    variants={"desc": Variant(wide_desc), "ptrs": Variant(wide_ptrs)},
    args=lambda s: {
        "src": Tensor((s["M"], 64), "bf16"),
        "dst": Tensor((s["M"], 64), "bf16", output=True),
        "M": s["M"],
        "N": 64,
    },
    shape={"M": 1024},
    constexprs={"BM": 128, "BN": 64},
    options={"num_warps": 4},
    grid=lambda s, meta: (s["M"] // meta["BM"],),
)

# ---- atomsem: ``tl.atomic_max(..., sem="release")`` vs ``sem="relaxed"`` (a flag-like maximum) -------------------


@triton.jit
def peak_relaxed(x, peak, n, B: tl.constexpr):
    o = tl.program_id(0) * B + tl.arange(0, B)
    v = tl.load(x + o, mask=o < n, other=0)
    tl.atomic_max(peak, tl.max(v, axis=0), sem="relaxed")


@triton.jit
def peak_release(x, peak, n, B: tl.constexpr):
    o = tl.program_id(0) * B + tl.arange(0, B)
    v = tl.load(x + o, mask=o < n, other=0)
    tl.atomic_max(peak, tl.max(v, axis=0), sem="release")


atomsem = Suite(
    name="atomsem",
    variants={"release": Variant(peak_release), "relaxed": Variant(peak_relaxed)},
    args=lambda s: {
        "x": Tensor((s["N"],), "i32", init="arange"),
        "peak": Tensor((1,), "i32", output=True, init="zeros"),
        "n": s["N"],
    },
    shape={"N": 1 << 14},
    constexprs={"B": 512},
    options={"num_warps": 4},
)
