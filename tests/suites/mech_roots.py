"""Kernels for the mechanism sentences of the root engine (``irdiff/diagnose/roots.py``, ``_mech_*``;
``tests/test_roots_mechanisms.py``). Each suite's variants differ on one source line only:

- ``atomsem``: a bucket counter ``tl.atomic_add(hist + (key & 63), 1)`` on int32: ``acqrel`` (the default
  ``sem``), ``relaxed``, ``acquire``, ``release``, ``cta`` (``scope="cta"``, default ``sem``), ``maxop``
  (``tl.atomic_max`` instead of the add, default ``sem`` and scope).
- ``cachepol``: ``out = a + b`` where the load of ``b`` is plain (``plain``), ``eviction_policy="evict_last"``
  (``last``) or ``cache_modifier=".cg"`` (``cg``), or the store carries ``eviction_policy="evict_first"``
  (``stfirst``), or the load of ``a`` is ``evict_last`` and that of ``b`` ``.cg`` (``both``: ptxas rejects
  ``.cg`` with an L1 eviction priority on one load), or
  both loads as in ``both`` and the store as in ``stfirst`` (``all3``).
- ``quot``: ``z = x / y`` in fp32 (``approx``), ``tl.div_rn(x, y)`` (``ieee``), ``x * y`` (``mul``: no division),
  and an int32 quotient ``k // 8`` (``pow2``) vs ``k // 7`` (``odd``) with the fp32 line left as ``x / y``.
- ``maxaxis``: a 128x128 fp32 tile reduced with ``tl.max(v, axis=0)`` (``down``) vs ``axis=1`` (``across``), at
  ``num_warps`` 8.
- ``hintstmt``: ``start = pid * stride`` then, on a line of its own, ``start = tl.multiple_of(start, 16)``
  (``mult``) or ``offs = tl.max_contiguous(offs, 64)`` (``contig``), vs neither (``bare``): the hint call's line
  creates no op (the attribute lands on the line that defines the value).
- ``atomcas``: a claim flag ``tl.atomic_cas`` and an fp16 ``tl.atomic_add``, both with the default ``sem``
  (``acqrel``) vs ``sem="relaxed"`` (``relaxed``).
"""

from __future__ import annotations

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant

# ---- atomsem ---------------------------------------------------------------------------------------------------


@triton.jit
def bump_acqrel(keys, hist, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = offs < n
    k = tl.load(keys + offs, mask=live, other=0)
    tl.atomic_add(hist + (k & 63), 1, mask=live)


@triton.jit
def bump_relaxed(keys, hist, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = offs < n
    k = tl.load(keys + offs, mask=live, other=0)
    tl.atomic_add(hist + (k & 63), 1, mask=live, sem="relaxed")


@triton.jit
def bump_acquire(keys, hist, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = offs < n
    k = tl.load(keys + offs, mask=live, other=0)
    tl.atomic_add(hist + (k & 63), 1, mask=live, sem="acquire")


@triton.jit
def bump_release(keys, hist, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = offs < n
    k = tl.load(keys + offs, mask=live, other=0)
    tl.atomic_add(hist + (k & 63), 1, mask=live, sem="release")


@triton.jit
def bump_cta(keys, hist, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = offs < n
    k = tl.load(keys + offs, mask=live, other=0)
    tl.atomic_add(hist + (k & 63), 1, mask=live, scope="cta")


@triton.jit
def bump_maxop(keys, hist, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = offs < n
    k = tl.load(keys + offs, mask=live, other=0)
    tl.atomic_max(hist + (k & 63), 1, mask=live)


atomsem = Suite(
    name="atomsem",
    variants={
        "acqrel": Variant(bump_acqrel),
        "relaxed": Variant(bump_relaxed),
        "acquire": Variant(bump_acquire),
        "release": Variant(bump_release),
        "cta": Variant(bump_cta),
        "maxop": Variant(bump_maxop),
    },
    args=lambda s: {"keys": Tensor((s["N"],), "i32"), "hist": Tensor((64,), "i32", output=True), "n": s["N"]},
    shape={"N": 1 << 16},
    constexprs={"BLOCK": 256},
    options={"num_warps": 4},
)

# ---- cachepol --------------------------------------------------------------------------------------------------


@triton.jit
def add_plain(a, b, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = offs < n
    x = tl.load(a + offs, mask=live)
    y = tl.load(b + offs, mask=live)
    tl.store(out + offs, x + y, mask=live)


@triton.jit
def add_last(a, b, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = offs < n
    x = tl.load(a + offs, mask=live)
    y = tl.load(b + offs, mask=live, eviction_policy="evict_last")
    tl.store(out + offs, x + y, mask=live)


@triton.jit
def add_cg(a, b, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = offs < n
    x = tl.load(a + offs, mask=live)
    y = tl.load(b + offs, mask=live, cache_modifier=".cg")
    tl.store(out + offs, x + y, mask=live)


@triton.jit
def add_stfirst(a, b, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = offs < n
    x = tl.load(a + offs, mask=live)
    y = tl.load(b + offs, mask=live)
    tl.store(out + offs, x + y, mask=live, eviction_policy="evict_first")


@triton.jit
def add_both(a, b, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = offs < n
    x = tl.load(a + offs, mask=live, eviction_policy="evict_last")
    y = tl.load(b + offs, mask=live, cache_modifier=".cg")
    tl.store(out + offs, x + y, mask=live)


@triton.jit
def add_all3(a, b, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = offs < n
    x = tl.load(a + offs, mask=live, eviction_policy="evict_last")
    y = tl.load(b + offs, mask=live, cache_modifier=".cg")
    tl.store(out + offs, x + y, mask=live, eviction_policy="evict_first")


cachepol = Suite(
    name="cachepol",
    variants={
        "plain": Variant(add_plain),
        "last": Variant(add_last),
        "cg": Variant(add_cg),
        "stfirst": Variant(add_stfirst),
        "both": Variant(add_both),
        "all3": Variant(add_all3),
    },
    args=lambda s: {
        "a": Tensor((s["N"],), "fp16"),
        "b": Tensor((s["N"],), "fp16"),
        "out": Tensor((s["N"],), "fp16", output=True),
        "n": s["N"],
    },
    shape={"N": 1 << 18},
    constexprs={"BLOCK": 2048},
    options={"num_warps": 8},
)

# ---- quot ------------------------------------------------------------------------------------------------------


@triton.jit
def quot_approx(x, y, k, z, q, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = offs < n
    xv = tl.load(x + offs, mask=live, other=1.0)
    yv = tl.load(y + offs, mask=live, other=1.0)
    kv = tl.load(k + offs, mask=live, other=0)
    zv = xv / yv
    qv = kv // 8
    tl.store(z + offs, zv, mask=live)
    tl.store(q + offs, qv, mask=live)


@triton.jit
def quot_ieee(x, y, k, z, q, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = offs < n
    xv = tl.load(x + offs, mask=live, other=1.0)
    yv = tl.load(y + offs, mask=live, other=1.0)
    kv = tl.load(k + offs, mask=live, other=0)
    zv = tl.div_rn(xv, yv)
    qv = kv // 8
    tl.store(z + offs, zv, mask=live)
    tl.store(q + offs, qv, mask=live)


@triton.jit
def quot_mul(x, y, k, z, q, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = offs < n
    xv = tl.load(x + offs, mask=live, other=1.0)
    yv = tl.load(y + offs, mask=live, other=1.0)
    kv = tl.load(k + offs, mask=live, other=0)
    zv = xv * yv
    qv = kv // 8
    tl.store(z + offs, zv, mask=live)
    tl.store(q + offs, qv, mask=live)


@triton.jit
def quot_odd(x, y, k, z, q, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = offs < n
    xv = tl.load(x + offs, mask=live, other=1.0)
    yv = tl.load(y + offs, mask=live, other=1.0)
    kv = tl.load(k + offs, mask=live, other=0)
    zv = xv / yv
    qv = kv // 7
    tl.store(z + offs, zv, mask=live)
    tl.store(q + offs, qv, mask=live)


quot = Suite(
    name="quot",
    variants={
        "approx": Variant(quot_approx),
        "ieee": Variant(quot_ieee),
        "mul": Variant(quot_mul),
        "pow2": Variant(quot_approx),
        "odd": Variant(quot_odd),
    },
    args=lambda s: {
        "x": Tensor((s["N"],), "fp32"),
        "y": Tensor((s["N"],), "fp32"),
        "k": Tensor((s["N"],), "i32"),
        "z": Tensor((s["N"],), "fp32", output=True),
        "q": Tensor((s["N"],), "i32", output=True),
        "n": s["N"],
    },
    shape={"N": 1 << 16},
    constexprs={"BLOCK": 512},
    options={"num_warps": 4},
)

# ---- maxaxis ---------------------------------------------------------------------------------------------------


@triton.jit
def tilemax_down(x, out, T: tl.constexpr):
    i = tl.arange(0, T)
    v = tl.load(x + i[:, None] * T + i[None, :])
    tl.store(out + i, tl.max(v, axis=0))


@triton.jit
def tilemax_across(x, out, T: tl.constexpr):
    i = tl.arange(0, T)
    v = tl.load(x + i[:, None] * T + i[None, :])
    tl.store(out + i, tl.max(v, axis=1))


maxaxis = Suite(
    name="maxaxis",
    variants={"down": Variant(tilemax_down), "across": Variant(tilemax_across)},
    args=lambda s: {"x": Tensor((128, 128), "fp32"), "out": Tensor((128,), "fp32", output=True)},
    shape={},
    constexprs={"T": 128},
    options={"num_warps": 8},
)

# ---- hintstmt --------------------------------------------------------------------------------------------------


@triton.jit
def rows_bare(x, y, stride, n, BLOCK: tl.constexpr):
    start = tl.program_id(0) * stride
    offs = start + tl.arange(0, BLOCK) % n
    v = tl.load(x + offs)
    tl.store(y + offs, v * 2.0)


@triton.jit
def rows_mult(x, y, stride, n, BLOCK: tl.constexpr):
    start = tl.program_id(0) * stride
    start = tl.multiple_of(start, 16)
    offs = start + tl.arange(0, BLOCK) % n
    v = tl.load(x + offs)
    tl.store(y + offs, v * 2.0)


@triton.jit
def rows_contig(x, y, stride, n, BLOCK: tl.constexpr):
    start = tl.program_id(0) * stride
    offs = start + tl.arange(0, BLOCK) % n
    offs = tl.max_contiguous(offs, 64)
    v = tl.load(x + offs)
    tl.store(y + offs, v * 2.0)


hintstmt = Suite(
    name="hintstmt",
    variants={"bare": Variant(rows_bare), "mult": Variant(rows_mult), "contig": Variant(rows_contig)},
    args=lambda s: {
        "x": Tensor((s["R"] * 256,), "fp32"),
        "y": Tensor((s["R"] * 256,), "fp32", output=True),
        "stride": 256,
        "n": 200,
    },
    shape={"R": 64},
    constexprs={"BLOCK": 256},
    options={"num_warps": 4},
)

# ---- atomcas ---------------------------------------------------------------------------------------------------


@triton.jit
def claim_acqrel(keys, slots, vals, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = offs < n
    k = tl.load(keys + offs, mask=live, other=0)
    tl.atomic_cas(slots + tl.program_id(0) % 64, 0, 1)
    tl.atomic_add(vals + (k & 63), tl.full([BLOCK], 1.0, tl.float16), mask=live)


@triton.jit
def claim_relaxed(keys, slots, vals, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = offs < n
    k = tl.load(keys + offs, mask=live, other=0)
    tl.atomic_cas(slots + tl.program_id(0) % 64, 0, 1, sem="relaxed")
    tl.atomic_add(vals + (k & 63), tl.full([BLOCK], 1.0, tl.float16), mask=live, sem="relaxed")


atomcas = Suite(
    name="atomcas",
    variants={"acqrel": Variant(claim_acqrel), "relaxed": Variant(claim_relaxed)},
    args=lambda s: {
        "keys": Tensor((s["N"],), "i32"),
        "slots": Tensor((64,), "i32", output=True),
        "vals": Tensor((64,), "fp16", output=True),
        "n": s["N"],
    },
    shape={"N": 1 << 14},
    constexprs={"BLOCK": 256},
    options={"num_warps": 4},
)
