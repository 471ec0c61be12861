"""Kernels for the tests of ``atomic.ops`` and of ``atomic.cas-loop``'s ptxas emulation
(``tests/test_rule_atomic_ops.py``); each pair differs in one thing, all for sm80.

``bincount_*``: a weighted bincount (``counts[keys[i]] += w[i]``):

- ``scatter_add``: ``tl.atomic_add(..., sem="relaxed")``; ``scatter_store``: a plain ``tl.store`` of the weights (the
  racy version: duplicate keys keep one weight).

``splitk_*``: a split-K matmul whose programs along axis 1 each reduce a slice of K:

- ``splitk_add``: the partial sums are added into C with ``tl.atomic_add`` (default ``sem``);
  ``splitk_parts``: each split stores its partial tile into its own slab of C (reduced later by another kernel).

``colmax_*``: the maximum of an i32 vector into one word:

- ``max_native``: ``tl.atomic_max``; ``max_cas``: the user's own compare-and-swap retry loop.

``accum``: ``tl.atomic_add`` with the default ``sem`` (``acq_rel``) of an fp32 vector, cast to the output's type,
into slots read from memory (no contiguity: one element per atomic), for three output types:

- ``f32_add``: native ``atom.add.f32``; ``f16_add``: PTX ``atom.add.noftz.f16``, which ptxas emulates with
  ``ATOMG.CAS`` in SASS on sm80; ``bf16_add``: Triton's own ``atom.cas`` loop in PTX (sm80 has no bf16 atomic add).
``gsum_*``: the sum of an fp32 vector into one word:
- ``sum_tile``: every element ``tl.atomic_add``-ed to the same address (a tile of atomics: one per element);
  ``sum_scalar``: the block reduced with ``tl.sum`` first, one ``tl.atomic_add`` per program.
"""

from __future__ import annotations

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def bincount_add(keys, w, counts, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n
    k = tl.load(keys + offs, mask=ok, other=0)
    wt = tl.load(w + offs, mask=ok, other=0.0)
    tl.atomic_add(counts + k, wt, mask=ok, sem="relaxed")


@triton.jit
def bincount_store(keys, w, counts, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n
    k = tl.load(keys + offs, mask=ok, other=0)
    wt = tl.load(w + offs, mask=ok, other=0.0)
    tl.store(counts + k, wt, mask=ok)


def _bincount(s: dict[str, int]) -> dict[str, object]:
    return {
        "keys": Tensor((s["N"],), "i32", init="zeros"),
        "w": Tensor((s["N"],), "fp32"),
        "counts": Tensor((1024,), "fp32", output=True, init="zeros"),
        "n": s["N"],
    }


@triton.jit
def splitk_add(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, SPLIT: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in range(tl.program_id(1) * BK, K, BK * SPLIT):
        rk = k0 + tl.arange(0, BK)
        acc += tl.dot(tl.load(a + rm[:, None] * K + rk[None, :]), tl.load(b + rk[:, None] * N + rn[None, :]))
    tl.atomic_add(c + rm[:, None] * N + rn[None, :], acc)


@triton.jit
def splitk_parts(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, SPLIT: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in range(tl.program_id(1) * BK, K, BK * SPLIT):
        rk = k0 + tl.arange(0, BK)
        acc += tl.dot(tl.load(a + rm[:, None] * K + rk[None, :]), tl.load(b + rk[:, None] * N + rn[None, :]))
    tl.store(c + tl.program_id(1) * M * N + rm[:, None] * N + rn[None, :], acc)


def _splitk(s: dict[str, int]) -> dict[str, object]:
    return {
        "a": Tensor((128, 512), "fp16"),
        "b": Tensor((512, 64), "fp16"),
        "c": Tensor((4 * 128 * 64,), "fp32", output=True, init="zeros"),
        "M": 128,
        "N": 64,
        "K": 512,
    }


@triton.jit
def colmax_native(x, out, n, B: tl.constexpr):
    o = tl.program_id(0) * B + tl.arange(0, B)
    v = tl.load(x + o, mask=o < n, other=-1)
    tl.atomic_max(out, tl.max(v, 0))


@triton.jit
def colmax_cas(x, out, n, B: tl.constexpr):
    o = tl.program_id(0) * B + tl.arange(0, B)
    v = tl.load(x + o, mask=o < n, other=-1)
    m = tl.max(v, 0)
    cur = tl.load(out)
    while cur < m:
        seen = tl.atomic_cas(out, cur, m)
        if seen == cur:
            cur = m
        else:
            cur = seen


def _colmax(s: dict[str, int]) -> dict[str, object]:
    return {
        "x": Tensor((s["N"],), "i32", init="arange"),
        "out": Tensor((1,), "i32", output=True, init="zeros"),
        "n": s["N"],
    }


@triton.jit
def accum(x, slot, acc, n, B: tl.constexpr):
    o = tl.program_id(0) * B + tl.arange(0, B)
    v = tl.load(x + o, mask=o < n, other=0.0)
    s = tl.load(slot + o, mask=o < n, other=0)
    tl.atomic_add(acc + s, v.to(acc.dtype.element_ty), mask=o < n)


@triton.jit
def gsum_tile(x, out, n, B: tl.constexpr):
    o = tl.program_id(0) * B + tl.arange(0, B)
    v = tl.load(x + o, mask=o < n, other=0.0)
    tl.atomic_add(out + tl.zeros_like(o), v, mask=o < n)


@triton.jit
def gsum_scalar(x, out, n, B: tl.constexpr):
    o = tl.program_id(0) * B + tl.arange(0, B)
    v = tl.load(x + o, mask=o < n, other=0.0)
    tl.atomic_add(out, tl.sum(v, axis=0))


def _gsum(s: dict[str, int]) -> dict[str, object]:
    return {
        "x": Tensor((s["N"],), "fp32"),
        "out": Tensor((1,), "fp32", output=True, init="zeros"),
        "n": s["N"],
    }


def _accum(dtype: str):  # type: ignore[no-untyped-def]
    def args(s: dict[str, int]) -> dict[str, object]:
        return {
            "x": Tensor((s["N"],), "fp32"),
            "slot": Tensor((s["N"],), "i32", init="zeros"),
            "acc": Tensor((128,), dtype, output=True, init="zeros"),
            "n": s["N"],
        }

    return args


_SK = {"BM": 64, "BN": 64, "BK": 32, "SPLIT": 4}

suite = Suite(
    name="rule-atomic-ops",
    description="atomic vs plain store, atomic_max vs a CAS loop, fp32/fp16/bf16 atomic adds (sm80)",
    variants={
        "scatter_add": Variant(bincount_add, "bincount with atomic_add", {"BLOCK": 256}, args=_bincount),
        "scatter_store": Variant(bincount_store, "bincount with a plain store", {"BLOCK": 256}, args=_bincount),
        "splitk_add": Variant(splitk_add, "split-K partials atomic_add-ed into C", _SK, args=_splitk),
        "splitk_parts": Variant(splitk_parts, "split-K partials stored per split", _SK, args=_splitk),
        "max_native": Variant(colmax_native, "tl.atomic_max", {"B": 1024}, args=_colmax),
        "max_cas": Variant(colmax_cas, "the user's CAS loop", {"B": 1024}, args=_colmax),
        "f32_add": Variant(accum, "atomic_add into fp32", {"B": 512}, args=_accum("fp32")),
        "f16_add": Variant(accum, "atomic_add into fp16", {"B": 512}, args=_accum("fp16")),
        "bf16_add": Variant(accum, "atomic_add into bf16", {"B": 512}, args=_accum("bf16")),
        "sum_tile": Variant(gsum_tile, "every element atomic_add-ed to one word", {"B": 1024}, args=_gsum),
        "sum_scalar": Variant(gsum_scalar, "tl.sum, then one atomic_add per program", {"B": 1024}, args=_gsum),
    },
    args=_bincount,
    shape={"N": 1 << 14},
    options={"num_warps": 4},
    grid=lambda s, meta: (s["N"] // 256,),
)
