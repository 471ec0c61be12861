"""Kernels for the tests of ``atomic.returned`` (``tests/test_rule_atomic_return.py``): pairs of kernels whose only
difference is whether an atomic's returned old value is used, with the same op, ``sem``, scope and mask.

Triton lowers a ``tt.atomic_rmw`` whose result has no use, whose op is not ``xchg`` and whose ``sem`` is ``relaxed``
or ``release`` to a reduction (PTX ``red``, SASS ``RED``); otherwise to ``atom`` (SASS ``ATOMG``), which returns the
old value (``AtomicRMWOpConversion``, ``third_party/nvidia/lib/TritonNVIDIAGPUToLLVM/LoadStoreOpToLLVM.cpp``).

- ``hist_ret``/``hist_noret``: a masked i32 histogram (``tl.atomic_add(counts + k, 1, mask=ok, sem="relaxed")``),
  the old count stored per element, or the key stored instead.
- ``hist_arith``: the old count used only through arithmetic (``old + 1`` stored).
- ``fadd_ret``/``fadd_noret``: an unmasked f32 ``tl.atomic_add`` into 64 slots; the old value stored, or the input.
- ``max_ret``/``max_noret``: a masked i32 ``tl.atomic_max`` (``sem="relaxed"``).
- ``tile_ret``/``tile_noret``: an unmasked f32 ``tl.atomic_add`` of a 32x64 tile (``sem="relaxed"``).
- ``xchg_ret``/``xchg_noret``: ``tl.atomic_xchg`` (``sem="relaxed"``): ``atom.exch`` either way (PTX has no
  ``red.exch``).
- ``acq_ret``/``acq_noret``: the histogram with the default ``sem`` (``acq_rel``): ``atom`` either way.
- ``cas_ret``/``cas_noret``: the histogram after a relaxed ``tl.atomic_cas`` on one word whose result is unused in
  both (PTX ``atom.cas`` either way: a compare-and-swap always returns its value).
- ``multi_ret``/``multi_noret``: a relaxed ``tl.atomic_add``, ``tl.atomic_max`` and ``tl.atomic_xchg``, their old
  values summed and stored, or all unused (the add and the max become ``red``, the ``xchg`` stays ``atom``).
- ``inline_ret``: the histogram's old count stored by the statement that makes the atomic (one source line).
- ``generic_ret``: the old count read from an inline-PTX ``atom.add.u32`` on a generic address (no
  ``tt.atomic_rmw``; SASS ``ATOM``, not ``ATOMG``).
- ``asm_ret``/``asm_noret``: the histogram after such an inline-PTX ``atom`` whose result is unused in both: PTX
  ``atom`` in both, which ptxas makes ``RED`` (so the PTX and SASS counts of each variant differ).
- ``asmused_noret``: ``hist_noret`` with an inline-PTX ``atom.global`` whose old value is stored: against ``hist_ret``
  both variants have as many value-returning atomics per thread (PTX ``atom``, SASS ``ATOMG``); only the reductions
  show the histogram's unused result.
"""

from __future__ import annotations

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def hist_ret(keys, counts, prev, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n
    k = tl.load(keys + offs, mask=ok, other=0)
    old = tl.atomic_add(counts + k, 1, mask=ok, sem="relaxed")
    tl.store(prev + offs, old, mask=ok)


@triton.jit
def hist_noret(keys, counts, prev, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n
    k = tl.load(keys + offs, mask=ok, other=0)
    tl.atomic_add(counts + k, 1, mask=ok, sem="relaxed")
    tl.store(prev + offs, k, mask=ok)


@triton.jit
def hist_arith(keys, counts, prev, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n
    k = tl.load(keys + offs, mask=ok, other=0)
    old = tl.atomic_add(counts + k, 1, mask=ok, sem="relaxed")
    tl.store(prev + offs, old + 1, mask=ok)


@triton.jit
def hist_acq_ret(keys, counts, prev, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n
    k = tl.load(keys + offs, mask=ok, other=0)
    old = tl.atomic_add(counts + k, 1, mask=ok)
    tl.store(prev + offs, old, mask=ok)


@triton.jit
def hist_acq_noret(keys, counts, prev, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n
    k = tl.load(keys + offs, mask=ok, other=0)
    tl.atomic_add(counts + k, 1, mask=ok)
    tl.store(prev + offs, k, mask=ok)


@triton.jit
def max_ret(keys, counts, prev, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n
    k = tl.load(keys + offs, mask=ok, other=0)
    old = tl.atomic_max(counts + k % 256, offs, mask=ok, sem="relaxed")
    tl.store(prev + offs, old, mask=ok)


@triton.jit
def max_noret(keys, counts, prev, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n
    k = tl.load(keys + offs, mask=ok, other=0)
    tl.atomic_max(counts + k % 256, offs, mask=ok, sem="relaxed")
    tl.store(prev + offs, k, mask=ok)


@triton.jit
def xchg_ret(keys, counts, prev, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n
    k = tl.load(keys + offs, mask=ok, other=0)
    old = tl.atomic_xchg(counts + k % 256, offs, mask=ok, sem="relaxed")
    tl.store(prev + offs, old, mask=ok)


@triton.jit
def xchg_noret(keys, counts, prev, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n
    k = tl.load(keys + offs, mask=ok, other=0)
    tl.atomic_xchg(counts + k % 256, offs, mask=ok, sem="relaxed")
    tl.store(prev + offs, k, mask=ok)


@triton.jit
def cas_ret(keys, counts, prev, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n
    tl.atomic_cas(counts + 255, 0, 1, sem="relaxed")
    k = tl.load(keys + offs, mask=ok, other=0)
    old = tl.atomic_add(counts + k, 1, mask=ok, sem="relaxed")
    tl.store(prev + offs, old, mask=ok)


@triton.jit
def cas_noret(keys, counts, prev, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n
    tl.atomic_cas(counts + 255, 0, 1, sem="relaxed")
    k = tl.load(keys + offs, mask=ok, other=0)
    tl.atomic_add(counts + k, 1, mask=ok, sem="relaxed")
    tl.store(prev + offs, k, mask=ok)


@triton.jit
def multi_ret(keys, counts, prev, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n
    k = tl.load(keys + offs, mask=ok, other=0)
    a = tl.atomic_add(counts + k % 64, 1, mask=ok, sem="relaxed")
    b = tl.atomic_max(counts + 64 + k % 64, offs, mask=ok, sem="relaxed")
    c = tl.atomic_xchg(counts + 128 + k % 64, offs, mask=ok, sem="relaxed")
    tl.store(prev + offs, a + b + c, mask=ok)


@triton.jit
def multi_noret(keys, counts, prev, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n
    k = tl.load(keys + offs, mask=ok, other=0)
    tl.atomic_add(counts + k % 64, 1, mask=ok, sem="relaxed")
    tl.atomic_max(counts + 64 + k % 64, offs, mask=ok, sem="relaxed")
    tl.atomic_xchg(counts + 128 + k % 64, offs, mask=ok, sem="relaxed")
    tl.store(prev + offs, k, mask=ok)


@triton.jit
def inline_ret(keys, counts, prev, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n
    k = tl.load(keys + offs, mask=ok, other=0)
    tl.store(prev + offs, tl.atomic_add(counts + k, 1, mask=ok, sem="relaxed"), mask=ok)


@triton.jit
def generic_ret(keys, counts, prev, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n
    k = tl.load(keys + offs, mask=ok, other=0)
    old = tl.inline_asm_elementwise(
        "atom.add.u32 $0, [$1], $2;", "=r,l,r", [counts + k, k], dtype=tl.int32, is_pure=False, pack=1
    )
    tl.store(prev + offs, old, mask=ok)


@triton.jit
def asm_ret(keys, counts, prev, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n
    k = tl.load(keys + offs, mask=ok, other=0)
    tl.inline_asm_elementwise(
        "atom.global.add.u32 $0, [$1], $2;", "=r,l,r", [counts + 255 - k % 64, k], dtype=tl.int32, is_pure=False, pack=1
    )
    old = tl.atomic_add(counts + k, 1, mask=ok, sem="relaxed")
    tl.store(prev + offs, old, mask=ok)


@triton.jit
def asm_noret(keys, counts, prev, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n
    k = tl.load(keys + offs, mask=ok, other=0)
    tl.inline_asm_elementwise(
        "atom.global.add.u32 $0, [$1], $2;", "=r,l,r", [counts + 255 - k % 64, k], dtype=tl.int32, is_pure=False, pack=1
    )
    tl.atomic_add(counts + k, 1, mask=ok, sem="relaxed")
    tl.store(prev + offs, k, mask=ok)


@triton.jit
def asmused_noret(keys, counts, prev, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n
    k = tl.load(keys + offs, mask=ok, other=0)
    got = tl.inline_asm_elementwise(
        "atom.global.add.u32 $0, [$1], $2;", "=r,l,r", [counts + 255 - k % 64, k], dtype=tl.int32, is_pure=False, pack=1
    )
    tl.atomic_add(counts + k, 1, mask=ok, sem="relaxed")
    tl.store(prev + offs, got, mask=ok)


def _hist(s: dict[str, int]) -> dict[str, object]:
    return {
        "keys": Tensor((s["N"],), "i32", init="zeros"),
        "counts": Tensor((256,), "i32", output=True, init="zeros"),
        "prev": Tensor((s["N"],), "i32", output=True, init="zeros"),
        "n": s["N"],
    }


@triton.jit
def fadd_ret(x, acc, out, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x + offs)
    old = tl.atomic_add(acc + offs % 64, v, sem="relaxed")
    tl.store(out + offs, old)


@triton.jit
def fadd_noret(x, acc, out, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x + offs)
    tl.atomic_add(acc + offs % 64, v, sem="relaxed")
    tl.store(out + offs, v)


def _fadd(s: dict[str, int]) -> dict[str, object]:
    return {
        "x": Tensor((s["N"],), "fp32"),
        "acc": Tensor((64,), "fp32", output=True, init="zeros"),
        "out": Tensor((s["N"],), "fp32", output=True, init="zeros"),
    }


@triton.jit
def tile_ret(x, acc, out, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    idx = rm[:, None] * BN + rn[None, :]
    v = tl.load(x + tl.program_id(0) * BM * BN + idx)
    old = tl.atomic_add(acc + idx, v, sem="relaxed")
    tl.store(out + tl.program_id(0) * BM * BN + idx, old)


@triton.jit
def tile_noret(x, acc, out, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    idx = rm[:, None] * BN + rn[None, :]
    v = tl.load(x + tl.program_id(0) * BM * BN + idx)
    tl.atomic_add(acc + idx, v, sem="relaxed")
    tl.store(out + tl.program_id(0) * BM * BN + idx, v)


def _tile(s: dict[str, int]) -> dict[str, object]:
    return {
        "x": Tensor((s["N"],), "fp32"),
        "acc": Tensor((32 * 64,), "fp32", output=True, init="zeros"),
        "out": Tensor((s["N"],), "fp32", output=True, init="zeros"),
    }


_TILE = {"BM": 32, "BN": 64}

suite = Suite(
    name="rule-atomic-return",
    description="an atomic's returned old value used vs unused (same op, sem, scope, mask)",
    variants={
        "hist_ret": Variant(hist_ret, "i32 atomic_add, old value stored", {"BLOCK": 256}),
        "hist_noret": Variant(hist_noret, "i32 atomic_add, result unused", {"BLOCK": 256}),
        "hist_arith": Variant(hist_arith, "i32 atomic_add, old + 1 stored", {"BLOCK": 256}),
        "acq_ret": Variant(hist_acq_ret, "acq_rel atomic_add, old value stored", {"BLOCK": 256}),
        "acq_noret": Variant(hist_acq_noret, "acq_rel atomic_add, result unused", {"BLOCK": 256}),
        "max_ret": Variant(max_ret, "i32 atomic_max, old value stored", {"BLOCK": 256}),
        "max_noret": Variant(max_noret, "i32 atomic_max, result unused", {"BLOCK": 256}),
        "xchg_ret": Variant(xchg_ret, "atomic_xchg, old value stored", {"BLOCK": 256}),
        "xchg_noret": Variant(xchg_noret, "atomic_xchg, result unused", {"BLOCK": 256}),
        "cas_ret": Variant(cas_ret, "relaxed atomic_cas, then i32 atomic_add, old value stored", {"BLOCK": 256}),
        "cas_noret": Variant(cas_noret, "relaxed atomic_cas, then i32 atomic_add, result unused", {"BLOCK": 256}),
        "multi_ret": Variant(multi_ret, "atomic_add, atomic_max, atomic_xchg, old values stored", {"BLOCK": 256}),
        "multi_noret": Variant(multi_noret, "atomic_add, atomic_max, atomic_xchg, results unused", {"BLOCK": 256}),
        "inline_ret": Variant(inline_ret, "i32 atomic_add stored by the statement making it", {"BLOCK": 256}),
        "generic_ret": Variant(generic_ret, "inline-PTX atom.add on a generic address", {"BLOCK": 256}),
        "asm_ret": Variant(asm_ret, "inline-PTX atom unused, then i32 atomic_add, old value stored", {"BLOCK": 256}),
        "asm_noret": Variant(asm_noret, "inline-PTX atom unused, then i32 atomic_add, result unused", {"BLOCK": 256}),
        "asmused_noret": Variant(
            asmused_noret, "inline-PTX atom whose value is stored, then i32 atomic_add, result unused", {"BLOCK": 256}
        ),
        "fadd_ret": Variant(fadd_ret, "f32 atomic_add, old value stored", {"BLOCK": 256}, args=_fadd),
        "fadd_noret": Variant(fadd_noret, "f32 atomic_add, result unused", {"BLOCK": 256}, args=_fadd),
        "tile_ret": Variant(tile_ret, "32x64 f32 atomic_add, old tile stored", _TILE, args=_tile),
        "tile_noret": Variant(tile_noret, "32x64 f32 atomic_add, result unused", _TILE, args=_tile),
    },
    args=_hist,
    shape={"N": 1 << 14},
    options={"num_warps": 4},
    grid=lambda s, meta: (s["N"] // meta.get("BLOCK", meta.get("BM", 1) * meta.get("BN", 1)),),
)
