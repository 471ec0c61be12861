"""Kernels for the memory-hint and fp64 facts of ``irdiff/diagnose/mechfacts.py`` (``tests/test_mechfacts_hints.py``).

``gather``: each program reads a row of ``x`` starting at an offset loaded from ``idx`` and writes it to ``y``:

- ``hinted``: every hint on its own line: ``tl.assume(n > 0)``, ``tl.multiple_of`` on the loaded start (the
  attribute lands on the ``tt.load``), ``tl.max_contiguous`` on the offsets (on the ``arith.addi``), a ``.ca`` load, an
  ``evict_last`` load, a ``volatile=True`` load and a ``.wt`` store.
- ``plain``: the same reads and writes without any hint (the pointer arguments still carry the JIT's
  ``tt.divisibility = 16``, which is specialization, not a hint).
- ``tile``: ``tl.multiple_of``/``tl.max_contiguous`` with one value per dimension on a 2-D tile of offsets.

``elsewhere``: ``tl.assume`` with a ``tl.multiple_of`` load, a ``.cg`` load, a ``tl.dot`` with its ``tl.atomic_add``
and a widening to fp64 are done by helpers in ``other.py`` (another file than the kernel's).

``acc64``: an fp64 accumulation: a scalar ``eps * eps`` (fp64 scalar work), halved under a runtime condition (an
``scf.if`` yielding fp64), the loop's loaded fp32 values widened to fp64 and summed into an fp64 accumulator carried
by the loop (at int32 offsets named ``f64``), scaled, reduced (``tt.reduce`` with an fp64 combine region) and stored as fp32.

``ws``: a K loop of ``tl.dot`` under ``tl.range(..., warp_specialize=True)`` for sm100.
"""

from __future__ import annotations

import os
import sys

import triton
import triton.language as tl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from other import aligned_start, dot_into, keep_old, load_streaming, widen  # noqa: E402

from irdiff.suite import Suite, Tensor, Variant  # noqa: E402


@triton.jit
def gather(x_ptr, idx_ptr, y_ptr, n, B: tl.constexpr, MODE: tl.constexpr):
    row = tl.program_id(0)
    if MODE == 1:
        tl.assume(n > 0)
        start = tl.multiple_of(tl.load(idx_ptr + row), 32)
        offs = tl.max_contiguous(start + tl.arange(0, B), 16)
        x = tl.load(x_ptr + offs, mask=offs < n, cache_modifier=".ca")
        w = tl.load(x_ptr + row, eviction_policy="evict_last")
        bias = tl.load(idx_ptr + row + 1, volatile=True)
        tl.store(y_ptr + row * B + tl.arange(0, B), x * w + bias, cache_modifier=".wt")
    elif MODE == 2:
        start = tl.load(idx_ptr + row)
        tile = start + tl.arange(0, 8)[:, None] * n + tl.arange(0, B)[None, :]
        tile = tl.max_contiguous(tl.multiple_of(tile, [1, 16]), [1, B])
        tl.store(y_ptr + row * B + tl.arange(0, B), tl.sum(tl.load(x_ptr + tile), axis=0))
    else:
        start = tl.load(idx_ptr + row)
        offs = start + tl.arange(0, B)
        x = tl.load(x_ptr + offs, mask=offs < n)
        w = tl.load(x_ptr + row)
        bias = tl.load(idx_ptr + row + 1)
        tl.store(y_ptr + row * B + tl.arange(0, B), x * w + bias)


@triton.jit
def elsewhere(x_ptr, idx_ptr, a_ptr, b_ptr, c_ptr, y_ptr, n, B: tl.constexpr):
    offs = aligned_start(idx_ptr, n) + tl.arange(0, B)
    x = load_streaming(x_ptr + offs, offs < n)
    r = tl.arange(0, 32)
    a = tl.load(a_ptr + r[:, None] * 32 + r[None, :])
    b = tl.load(b_ptr + r[:, None] * 32 + r[None, :])
    dot_into(a, b, c_ptr + r[:, None] * 32 + r[None, :])
    tl.store(y_ptr + tl.arange(0, B), widen(x).to(tl.float32))


@triton.jit
def acc64(x_ptr, y_ptr, eps: tl.float64, n, B: tl.constexpr):
    f64 = tl.arange(0, B)  # a name is no type: these offsets are int32
    e2 = eps * eps
    if n > 4096:
        e2 = e2 * 0.5
    acc = tl.zeros([B], dtype=tl.float64)
    for i in range(0, n, B):
        acc += tl.load(x_ptr + i + f64).to(tl.float64)
    total = tl.sum(acc * e2, axis=0)
    tl.store(y_ptr + tl.program_id(0), total.to(tl.float32))


@triton.jit
def ws_loop(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[BM, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, BN], strides=[BN, 1], block_shape=[BK, BN])
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, K, BK, num_stages=2, warp_specialize=True):
        acc = tl.dot(a_desc.load([0, k]), b_desc.load([k, 0]), acc)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


def _gather(s: dict[str, int]) -> dict[str, object]:
    return {
        "x_ptr": Tensor((s["N"],), "fp32"),
        "idx_ptr": Tensor((s["R"] + 1,), "i32", init="zeros"),
        "y_ptr": Tensor((s["R"], 64), "fp32", output=True),
        "n": s["N"],
    }


def _elsewhere(s: dict[str, int]) -> dict[str, object]:
    return {
        "x_ptr": Tensor((s["N"],), "fp32"),
        "idx_ptr": Tensor((s["R"],), "i32", init="zeros"),
        "a_ptr": Tensor((32, 32), "fp16"),
        "b_ptr": Tensor((32, 32), "fp16"),
        "c_ptr": Tensor((32, 32), "fp32", output=True, init="zeros"),
        "y_ptr": Tensor((64,), "fp32", output=True),
        "n": s["N"],
    }


def _ws(s: dict[str, int]) -> dict[str, object]:
    return {
        "a_ptr": Tensor((128, s["K"]), "fp16"),
        "b_ptr": Tensor((s["K"], 128), "fp16"),
        "c_ptr": Tensor((128, 128), "fp32", output=True),
        "K": s["K"],
    }


def _acc64(s: dict[str, int]) -> dict[str, object]:
    return {"x_ptr": Tensor((s["N"],), "fp32"), "y_ptr": Tensor((64,), "fp32", output=True), "eps": 1e-3, "n": s["N"]}


@triton.jit
def old_elsewhere(cnt_ptr, key_ptr, prev_ptr, n, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    ok = offs < n
    k = tl.load(key_ptr + offs, mask=ok, other=0)
    old = tl.atomic_add(cnt_ptr + k, 1, mask=ok, sem="relaxed")
    keep_old(prev_ptr + offs, old, ok)


def _old_elsewhere(s: dict[str, int]) -> dict[str, object]:
    return {
        "cnt_ptr": Tensor((64,), "i32", output=True, init="zeros"),
        "key_ptr": Tensor((s["N"],), "i32", init="zeros"),
        "prev_ptr": Tensor((s["N"],), "i32", output=True, init="zeros"),
        "n": s["N"],
    }


suite = Suite(
    name="hintfacts",
    description="memory hints (cache, eviction, volatile, multiple_of, max_contiguous, assume), helpers in another file, fp64",
    variants={
        "hinted": Variant(gather, "every hint kind, one per line", {"B": 64, "MODE": 1}),
        "plain": Variant(gather, "the same reads and writes, no hint", {"B": 64, "MODE": 0}),
        "tile": Variant(gather, "per-dimension multiple_of/max_contiguous on a 2-D tile", {"B": 64, "MODE": 2}),
        "elsewhere": Variant(
            elsewhere, "hinted load, dot, atomic and fp64 in helpers of other.py", {"B": 64}, args=_elsewhere
        ),
        "ws": Variant(
            ws_loop,
            "K loop of tl.dot with warp_specialize=True (sm100)",
            {"BM": 128, "BN": 128, "BK": 64},
            args=_ws,
            target="sm100",
        ),
        "acc64": Variant(acc64, "fp64 scalar and loop-carried fp64 accumulator", {"B": 64}, args=_acc64),
        "oldelse": Variant(
            old_elsewhere, "an atomic's old value stored by keep_old in other.py", {"B": 64}, args=_old_elsewhere
        ),
    },
    args=_gather,
    shape={"N": 1 << 16, "R": 64, "K": 1024},
    options={"num_warps": 4},
    grid=lambda s, meta: (s["R"],),
)
