"""Kernels for the unit tests of the mechanism rules (``tests/test_rule_atomics.py``, ``tests/test_rule_hints.py``,
``tests/test_rule_mma_lowering.py``), beside ``tests/suites/diag_mech.py``; each pair differs in one thing.

``gram``: ``c = a @ b`` of one fp16 (or fp32/fp64) tile, for sm90 (MMA lowering by what the tile forces):

- ``wg4``: 64x64x32 fp16, 4 warps: ``wgmma``.
- ``wg2``: the same tile with 2 warps: ``mma.sync`` (``wgmma`` needs a warpgroup).
- ``m16``: a 16x64x32 tile with 4 warps: ``mma.sync`` (M below the 64 rows of one warpgroup MMA).
- ``f64``: the 64x64x32 tile in fp64: FMA (no MMA for fp64 operands in Triton).

``accum``: ``tl.atomic_add`` of a 64x64 fp32 tile into C (sm80 and sm90):

- ``dot80`` / ``dot90``: the tile is a ``tl.dot`` result (MMA layout: converted to a blocked layout through shared
  memory first); ``ld80`` / ``ld90``: the tile is computed from ``tl.arange`` in the layout the atomic uses (no
  conversion; a loaded tile would be converted between two blocked layouts).

``tally``: a histogram of byte values with an atomic per element (sm80):

- ``acquire``: ``tl.atomic_add(..., sem="acquire", scope="sys")``; ``relaxed``: ``sem="relaxed", scope="sys"``.
- ``lock``: the user's own ``tl.atomic_cas`` on a lock word (a CAS that is not an emulation) plus a relaxed add.

``gather``: a strided row read with cache and volatility qualifiers (sm80):

- ``cg``: ``cache_modifier=".cg"`` loads; ``ca``: ``.ca``; ``vol``: ``volatile=True``; ``plain``: none.
- ``contig``: the same read with ``tl.max_contiguous(tl.multiple_of(first + o, 8), 8)`` on the offsets vs ``plain``.
"""

from __future__ import annotations

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def gram(a, b, c, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    i = tl.arange(0, BM)
    j = tl.arange(0, BN)
    k = tl.arange(0, BK)
    lhs = tl.load(a + i[:, None] * BK + k[None, :])
    rhs = tl.load(b + k[:, None] * BN + j[None, :])
    tl.store(c + i[:, None] * BN + j[None, :], tl.dot(lhs, rhs).to(c.dtype.element_ty))


def _gram(dtype: str, m: int):  # type: ignore[no-untyped-def]
    def args(s: dict[str, int]) -> dict[str, object]:
        return {
            "a": Tensor((m, 32), dtype),
            "b": Tensor((32, 64), dtype),
            "c": Tensor((m, 64), "fp64" if dtype == "fp64" else "fp32", output=True),
        }

    return args


@triton.jit
def tally(data, hist, lock, n, B: tl.constexpr, SEM: tl.constexpr, LOCK: tl.constexpr):
    o = tl.program_id(0) * B + tl.arange(0, B)
    inside = o < n
    v = tl.load(data + o, mask=inside, other=0)
    if LOCK:
        while tl.atomic_cas(lock, 0, 1) == 1:
            pass
    tl.atomic_add(hist + (v & 255), 1, mask=inside, sem=SEM, scope="sys")
    if LOCK:
        tl.atomic_xchg(lock, 0)


def _tally(s: dict[str, int]) -> dict[str, object]:
    return {
        "data": Tensor((s["N"],), "i32", init="arange"),
        "hist": Tensor((256,), "i32", output=True, init="zeros"),
        "lock": Tensor((1,), "i32", output=True, init="zeros"),
        "n": s["N"],
    }


@triton.jit
def gather(src, dst, starts, W, B: tl.constexpr, MODE: tl.constexpr):
    row = tl.program_id(0)
    o = tl.arange(0, B)
    first = tl.load(starts + row)
    if MODE == 5:
        p = src + tl.max_contiguous(tl.multiple_of(first + o, 8), 8)
    else:
        p = src + first + o
    if MODE == 1:
        x = tl.load(p, mask=o < W, cache_modifier=".cg")
    elif MODE == 2:
        x = tl.load(p, mask=o < W, cache_modifier=".ca")
    elif MODE == 3:
        x = tl.load(p, mask=o < W, volatile=True)
    else:
        x = tl.load(p, mask=o < W)
    tl.store(dst + row * B + o, x, mask=o < W)


@triton.jit
def accum(a, b, c, x, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, DOT: tl.constexpr):
    i = tl.arange(0, BM)
    j = tl.arange(0, BN)
    k = tl.arange(0, BK)
    out = c + i[:, None] * BN + j[None, :]
    if DOT:
        part = tl.dot(tl.load(a + i[:, None] * BK + k[None, :]), tl.load(b + k[:, None] * BN + j[None, :]))
    else:
        part = (i[:, None] * BN + j[None, :]).to(tl.float32)
    tl.atomic_add(out, part)


def _accum(s: dict[str, int]) -> dict[str, object]:
    return {
        "a": Tensor((64, 64), "fp16"),
        "b": Tensor((64, 64), "fp16"),
        "c": Tensor((64, 64), "fp32", output=True, init="zeros"),
        "x": Tensor((64, 64), "fp32"),
    }


def _gather(s: dict[str, int]) -> dict[str, object]:
    return {
        "src": Tensor((s["N"],), "fp32"),
        "dst": Tensor((s["N"],), "fp32", output=True),
        "starts": Tensor((s["R"],), "i32", init="zeros"),
        "W": 256,
    }


_G = {"BM": 64, "BN": 64, "BK": 32}
_D = {"BM": 64, "BN": 64, "BK": 64}

suite = Suite(
    name="rule-mech",
    description="unit-test pairs of the mechanism rules: MMA lowering forced by the tile, atomics, cache hints",
    variants={
        "wg4": Variant(gram, "fp16 64x64x32 dot, 4 warps", _G, {"num_warps": 4}, _gram("fp16", 64), "sm90"),
        "wg2": Variant(gram, "fp16 64x64x32 dot, 2 warps", _G, {"num_warps": 2}, _gram("fp16", 64), "sm90"),
        "m16": Variant(
            gram, "fp16 16x64x32 dot, 4 warps", {**_G, "BM": 16}, {"num_warps": 4}, _gram("fp16", 16), "sm90"
        ),
        "f64": Variant(gram, "fp64 64x64x32 dot, 4 warps", _G, {"num_warps": 4}, _gram("fp64", 64), "sm90"),
        "dot80": Variant(accum, "atomic_add of a dot result", {**_D, "DOT": True}, {"num_warps": 4}, _accum, "sm80"),
        "ld80": Variant(accum, "atomic_add of an arange tile", {**_D, "DOT": False}, {"num_warps": 4}, _accum, "sm80"),
        "dot90": Variant(accum, "atomic_add of a dot result", {**_D, "DOT": True}, {"num_warps": 4}, _accum, "sm90"),
        "ld90": Variant(accum, "atomic_add of an arange tile", {**_D, "DOT": False}, {"num_warps": 4}, _accum, "sm90"),
        "acquire": Variant(tally, "sem=acquire, scope=sys", {"B": 256, "SEM": "acquire", "LOCK": False}, target="sm80"),
        "relaxed": Variant(tally, "sem=relaxed, scope=sys", {"B": 256, "SEM": "relaxed", "LOCK": False}, target="sm80"),
        "lock": Variant(
            tally, "user CAS lock around a relaxed add", {"B": 256, "SEM": "relaxed", "LOCK": True}, target="sm80"
        ),
        "cg": Variant(gather, ".cg loads", {"B": 256, "MODE": 1}, args=_gather, target="sm80"),
        "ca": Variant(gather, ".ca loads", {"B": 256, "MODE": 2}, args=_gather, target="sm80"),
        "vol": Variant(gather, "volatile loads", {"B": 256, "MODE": 3}, args=_gather, target="sm80"),
        "plain": Variant(gather, "plain loads", {"B": 256, "MODE": 0}, args=_gather, target="sm80"),
        "contig": Variant(
            gather, "max_contiguous/multiple_of on the row start", {"B": 256, "MODE": 5}, args=_gather, target="sm80"
        ),
    },
    args=_tally,
    shape={"N": 1 << 16, "R": 256},
    options={"num_warps": 4},
    grid=lambda s, meta: (s["N"] // 256,),
)
