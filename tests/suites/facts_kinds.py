"""Kernels for the fact-extraction tests of ``tests/test_facts_kinds.py``: loads whose addresses are or are not the
same on every loop iteration, value names that MLIR gives nested loads, unsigned 64-bit division, and masked accesses
whose address and mask come from different parameters.

- ``chase``: a loop with an advancing pointer (``iter_args``) that loads, per iteration, a tile at a fixed offset
  (invariant), a scalar at a fixed index (invariant, with an eviction hint), a tile at an index read in the loop
  (pointer chasing: variant), a tile at a counter returned by an atomic (variant), and the advancing pointer's tile
  (variant), and a tile at an offset computed in the loop from a value loaded BEFORE it (invariant; the offset
  uses one product twice); after the loop it also stores through the advanced pointer (a result of the loop).
- ``nested``: two nested loops; the inner one loads a row chosen by the OUTER index (the same on every inner
  iteration: invariant for the inner loop) and a column chosen by the inner index (variant); a later sibling loop
  reuses the same printed names.
- ``names``: ``acc = tl.sum(tl.load(a_ptrs) * w)`` (a load nested in an expression: MLIR names it ``acc``, the fact
  names it by its pointer ``a_ptrs``), a plainly assigned load ``x = tl.load(x_ptrs)``, and stores of named values.
- ``udiv``: an unsigned 64-bit ``//`` and ``%`` (``arith.divui``/``arith.remui``) of the program id.
- ``piped``: a row loop of masked loads (``num_stages=3``) and a masked store: the load's address comes from ``X`` (a
  pointer parameter named with a capital X) and ``stride``, both masks from ``n``.
- ``seq``: four loops one after the other: a plain one, one unrolled 2x (``loop_unroll_factor=2``: the unrolled loop
  and its remainder), a ``num_stages=1`` loop with no memory access, and a loop with no loop-carried value whose
  body branches (``if``/``else``, an ``scf.if`` with an else region).
- ``carried``: 2-D stores whose addresses come out of control flow: a pointer tile advanced by a scalar in an
  ``scf.for`` (stored to after the loop, strides [C, 1]), a tile chosen by an ``scf.if`` whose branches differ only
  by a scalar offset (strides [C, 1]) or read it transposed (the branches disagree: unknown), and a pointer the loop
  advances by a tensor (``q += cols``: the stride changes each iteration: unknown).
"""

from __future__ import annotations

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def chase(x_ptr, idx_ptr, w_ptr, cnt_ptr, y_ptr, N, K, C: tl.constexpr):
    cols = tl.arange(0, C)
    base = tl.program_id(0) * C
    p = x_ptr + cols
    acc = tl.zeros([C], dtype=tl.float32)
    off = tl.load(idx_ptr)
    for i in range(0, N):  # noqa: B007 (the kernel reads nothing by the index)
        fixed = tl.load(w_ptr + base + cols, cache_modifier=".ca")
        j = tl.load(idx_ptr + K, eviction_policy="evict_last")
        chased = tl.load(w_ptr + j + cols)
        c = tl.atomic_add(cnt_ptr, 1)
        counted = tl.load(w_ptr + c + cols)
        moving = tl.load(p)
        t = off * 3
        pre = tl.load(w_ptr + (t + 1) + t * t + cols)
        acc += fixed + chased + counted + moving + pre
        p += C
    tl.store(y_ptr + base + cols, acc)
    tl.store(p, acc)


@triton.jit
def nested(x_ptr, y_ptr, M, N, C: tl.constexpr):
    cols = tl.arange(0, C)
    acc = tl.zeros([C], dtype=tl.float32)
    for m in range(0, M):
        for n in range(0, N):
            row = tl.load(x_ptr + m * C + cols)
            col = tl.load(x_ptr + n * C + cols)
            acc += row * col
    for m in range(0, M):
        acc += tl.load(y_ptr + m * C + cols)
    tl.store(y_ptr + cols, acc)


@triton.jit
def names(a_ptr, w_ptr, x_ptr, out_ptr, sum_ptr, C: tl.constexpr):
    cols = tl.arange(0, C)
    a_ptrs = a_ptr + cols
    w = tl.load(w_ptr + cols)
    acc = tl.sum(tl.load(a_ptrs) * w)
    x_ptrs = x_ptr + cols
    x = tl.load(x_ptrs)
    scaled = x * acc
    tl.store(out_ptr + cols, scaled)
    tl.store(sum_ptr, acc)


@triton.jit
def udiv(x_ptr, y_ptr, G, C: tl.constexpr):
    pid = tl.program_id(0).to(tl.uint64)
    g = G.to(tl.uint64)
    src = (pid % g) * C + (pid // g)
    cols = tl.arange(0, C)
    tl.store(y_ptr + pid * C + cols, tl.load(x_ptr + src + cols))


@triton.jit
def piped(X, y_ptr, stride, n, ROWS, C: tl.constexpr):
    cols = tl.arange(0, C)
    acc = tl.zeros([C], dtype=tl.float32)
    for r in range(0, ROWS):
        acc += tl.load(X + r * stride + cols, mask=cols < n, other=0.0)
    tl.store(y_ptr + cols, acc, mask=cols < n)


@triton.jit
def seq(x_ptr, y_ptr, N, C: tl.constexpr):
    cols = tl.arange(0, C)
    acc = tl.zeros([C], dtype=tl.float32)
    for i in range(0, N):
        acc += tl.load(x_ptr + i * C + cols)
    for i in tl.range(0, N, loop_unroll_factor=2):
        acc += tl.load(y_ptr + i * C + cols)
    for i in tl.range(0, N, num_stages=1):  # noqa: B007
        acc += 1.0
    for i in range(0, N):
        if i < C:
            tl.store(y_ptr + i * C + cols, acc)
        else:
            tl.store(y_ptr + i * C + cols, -acc)


def _f32(n: int, output: bool = False) -> Tensor:
    return Tensor((n,), "fp32", output=output)


@triton.jit
def carried(x_ptr, y_ptr, N, flag, C: tl.constexpr):
    r = tl.arange(0, C)
    c = tl.arange(0, C)
    tile = r[:, None] * C + c[None, :]
    p = y_ptr + tile
    q = y_ptr + c
    for i in range(0, N):  # noqa: B007 (the kernel reads nothing by the index)
        p += C * C
        q += c
    x = tl.load(x_ptr + tile)
    tl.store(p, x)
    if flag > 4:
        s = y_ptr + tile
    else:
        s = y_ptr + tile + C
    tl.store(s, x)
    if flag > 9:
        t = y_ptr + tile
    else:
        t = y_ptr + r[:, None] + c[None, :] * C
    tl.store(t, x)
    tl.store(q, c.to(tl.float32))


suite = Suite(
    name="facts-kinds",
    description="invariant and variant loads in loops, nested-load names, unsigned 64-bit division, masked accesses",
    variants={
        "chase": Variant(
            chase,
            "fixed, chased, counted and advancing loads in one loop",
            args=lambda s: {
                "x_ptr": _f32(4096),
                "idx_ptr": Tensor((64,), "i32"),
                "w_ptr": _f32(4096),
                "cnt_ptr": Tensor((1,), "i32"),
                "y_ptr": _f32(4096, True),
                "N": 4,
                "K": 3,
            },
        ),
        "nested": Variant(
            nested,
            "inner-loop loads by the outer and the inner index",
            args=lambda s: {"x_ptr": _f32(4096), "y_ptr": _f32(4096, True), "M": 4, "N": 4},
        ),
        "names": Variant(
            names,
            "a load nested in an expression and plainly assigned ones",
            args=lambda s: {
                "a_ptr": _f32(64),
                "w_ptr": _f32(64),
                "x_ptr": _f32(64),
                "out_ptr": _f32(64, True),
                "sum_ptr": _f32(1, True),
            },
        ),
        "udiv": Variant(
            udiv,
            "unsigned 64-bit // and %",
            args=lambda s: {"x_ptr": _f32(4096), "y_ptr": _f32(4096, True), "G": 6},
        ),
        "piped": Variant(
            piped,
            "masked row loads and a masked store",
            args=lambda s: {"X": _f32(4096), "y_ptr": _f32(64, True), "stride": 64, "n": 50, "ROWS": 8},
        ),
        "seq": Variant(
            seq,
            "a plain loop, an unrolled one, a num_stages=1 one and a branching one",
            args=lambda s: {"x_ptr": _f32(4096), "y_ptr": _f32(4096, True), "N": 8},
        ),
        "carried": Variant(
            carried,
            "stores through pointers that come out of an scf.for and an scf.if",
            args=lambda s: {"x_ptr": _f32(4096), "y_ptr": _f32(16384, True), "N": 2, "flag": 7},
        ),
    },
    args=lambda s: {},
    shape={},
    constexprs={"C": 64},
    options={"num_warps": 2, "num_stages": 3},
    grid=lambda s, meta: (4,),
)
