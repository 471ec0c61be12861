"""Kernels for the atomic facts of ``irdiff/diagnose/mechfacts.py`` (``tests/test_mechfacts_atomics.py``): every
read-modify-write kind, CAS, memory orders and scopes, scalar and masked tensor atomics, values that are loaded,
passed in, cast or produced by a ``tl.dot`` (compiled for sm80; ``ext1`` for sm100 too).

- ``kinds``: on one 128-element int32/fp32/fp16 block: ``tl.atomic_xchg`` (release, cta, its old value stored),
  ``atomic_max`` (acquire, sys), ``atomic_min`` (relaxed), ``atomic_and``/``or``/``xor`` (acq_rel default), an fp16
  ``atomic_add`` of a loaded fp32 value cast down, masked, and two scalar fp32 adds (a kernel argument, a constant).
- ``cas``: a spin lock on one word (scalar ``tl.atomic_cas``, acquire, gpu; released by ``atomic_xchg``), a tensor
  ``atomic_cas`` (relaxed, cta) whose new value is a ``tl.dot`` result and whose comparand is loaded, and an
  ``atomic_add`` of that loaded comparand (converted between two blocked layouts, no MMA).
- ``fmax``: ``tl.atomic_max`` of a fp32 dot result (Triton splits a float max into an int ``max`` on the non-negative
  values and an unsigned ``umin`` on the negative ones, both on bit casts of the MMA-layout value).
- ``ext1`` / ``fp8``: an fp16 ``tl.dot`` result widened to fp32 (``arith.extf``) or passed through fp8
  (``tt.fp_to_fp`` both ways) before an ``atomic_add``: Triton converts the layout before the widening cast.
"""

from __future__ import annotations

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def kinds(i_ptr, f_ptr, h_ptr, o_ptr, v, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < N
    k = tl.load(i_ptr + offs, mask=m)
    old = tl.atomic_xchg(i_ptr + offs, k + 1, mask=m, sem="release", scope="cta")
    tl.store(o_ptr + offs, old, mask=m)
    tl.atomic_max(i_ptr + BLOCK + offs, k, sem="acquire", scope="sys")
    tl.atomic_min(i_ptr + 2 * BLOCK + offs, k, sem="relaxed")
    tl.atomic_and(i_ptr + 3 * BLOCK + offs, k)
    tl.atomic_or(i_ptr + 4 * BLOCK + offs, k)
    tl.atomic_xor(i_ptr + 5 * BLOCK + offs, k)
    x = tl.load(f_ptr + offs, mask=m)
    tl.atomic_add(h_ptr + offs, x.to(tl.float16), mask=m)
    tl.atomic_add(f_ptr + BLOCK, v)
    tl.atomic_add(f_ptr + BLOCK + 1, 1.0)


@triton.jit
def cas(lock_ptr, a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    while tl.atomic_cas(lock_ptr, 0, 1, sem="acquire", scope="gpu") == 1:
        pass
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    c_ptrs = c_ptr + rm[:, None] * BN + rn[None, :]
    expected = tl.load(c_ptrs)
    tl.atomic_cas(c_ptrs, expected, tl.dot(a, b), sem="relaxed", scope="cta")
    tl.atomic_add(c_ptrs, expected)
    tl.atomic_xchg(lock_ptr, 0, sem="release")


@triton.jit
def fmax(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    tl.atomic_max(c_ptr + rm[:, None] * BN + rn[None, :], tl.dot(a, b))


@triton.jit
def cast_add(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, CHAIN: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :]).to(tl.float16)
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :]).to(tl.float16)
    part = tl.dot(a, b, out_dtype=tl.float16)
    if CHAIN == 1:
        part = part.to(tl.float32)
    if CHAIN == 8:
        part = part.to(tl.float8e5).to(tl.float32)
    tl.atomic_add(c_ptr + rm[:, None] * BN + rn[None, :], part)


def _kinds(s: dict[str, int]) -> dict[str, object]:
    return {
        "i_ptr": Tensor((6 * 128,), "i32", output=True, init="zeros"),
        "f_ptr": Tensor((130,), "fp32", output=True, init="zeros"),
        "h_ptr": Tensor((128,), "fp16", output=True, init="zeros"),
        "o_ptr": Tensor((128,), "i32", output=True),
        "v": 0.5,
        "N": 100,
    }


def _dot(s: dict[str, int]) -> dict[str, object]:
    return {
        "lock_ptr": Tensor((1,), "i32", output=True, init="zeros"),
        "a_ptr": Tensor((64, 32), "fp32"),
        "b_ptr": Tensor((32, 64), "fp32"),
        "c_ptr": Tensor((64, 64), "fp32", output=True, init="zeros"),
    }


def _fmax(s: dict[str, int]) -> dict[str, object]:
    args = _dot(s)
    del args["lock_ptr"]
    return args


_T = {"BM": 64, "BN": 64, "BK": 32}

suite = Suite(
    name="mech-atomics",
    description="atomic facts: every rmw kind, CAS, memory orders and scopes, scalar/masked, loaded/dot values",
    variants={
        "kinds": Variant(kinds, "xchg/max/min/and/or/xor, fp16 and scalar adds", {"BLOCK": 128}),
        "cas": Variant(cas, "CAS spin lock and a CAS of a dot result", _T, args=_dot),
        "fmax": Variant(fmax, "atomic_max of an fp32 dot result", _T, args=_fmax),
        "ext1": Variant(cast_add, "fp16 dot result widened to fp32, atomic_add", {**_T, "CHAIN": 1}, args=_fmax),
        "fp8": Variant(cast_add, "fp16 dot result through fp8 to fp32, atomic_add", {**_T, "CHAIN": 8}, args=_fmax),
    },
    options={"num_warps": 4},
    args=_kinds,
    grid=lambda s, meta: (1,),
)
