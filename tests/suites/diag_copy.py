"""Minimal copy kernels for the diagnostics rule tests (``tests/test_rules.py``): one rule per pair of variants.

``y[i] = x[i * stride]`` over a 1-D fp16 tensor of ``N`` elements, ``BLOCK`` per program, ``stride`` = 1:

- ``plain``: no annotations; the JIT turns ``stride`` = 1 into a constant and marks pointers divisible by 16.
- ``plain_twin``: the same body under another name (compiles to identical code after normalization).
- ``annotated``: ``stride: int`` → ``stride`` stays a runtime ``i32`` (constant-1 specialization lost).
- ``annotated_hint``: ``annotated`` with ``tl.max_contiguous(tl.multiple_of(offs * stride, BLOCK), BLOCK)`` on the
  strided offsets (the remedy ``spec.constexpr-one-lost`` names): contiguous again.
- ``dns``: ``do_not_specialize=["stride"]`` → same loss through the decorator.
- ``dns_align``: ``do_not_specialize_on_alignment=["x_ptr", "y_ptr"]`` → pointers lose ``tt.divisibility``.
- ``n64``: ``N: tl.int64`` → ``N`` is typed ``i64`` instead of ``i32``.
- ``i64``: the program id is widened to int64 and the flat index split with ``//`` and ``%`` by a runtime ``H``.
- ``i32``: the same split in int32.
"""

from __future__ import annotations

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def copy_plain(x_ptr, y_ptr, N, stride, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    tl.store(y_ptr + offs, tl.load(x_ptr + offs * stride, mask=mask), mask=mask)


@triton.jit
def copy_plain_twin(x_ptr, y_ptr, N, stride, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    tl.store(y_ptr + offs, tl.load(x_ptr + offs * stride, mask=mask), mask=mask)


@triton.jit
def copy_annotated(x_ptr, y_ptr, N, stride: int, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    tl.store(y_ptr + offs, tl.load(x_ptr + offs * stride, mask=mask), mask=mask)


@triton.jit
def copy_annotated_hint(x_ptr, y_ptr, N, stride: int, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    x_offs = tl.max_contiguous(tl.multiple_of(offs * stride, BLOCK), BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + x_offs, mask=mask), mask=mask)


@triton.jit(do_not_specialize=["stride"])
def copy_dns(x_ptr, y_ptr, N, stride, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    tl.store(y_ptr + offs, tl.load(x_ptr + offs * stride, mask=mask), mask=mask)


@triton.jit(do_not_specialize_on_alignment=["x_ptr", "y_ptr"])
def copy_dns_align(x_ptr, y_ptr, N, stride, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    tl.store(y_ptr + offs, tl.load(x_ptr + offs * stride, mask=mask), mask=mask)


@triton.jit
def copy_n64(x_ptr, y_ptr, N: tl.int64, stride, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    tl.store(y_ptr + offs, tl.load(x_ptr + offs * stride, mask=mask), mask=mask)


@triton.jit
def split_i64(x_ptr, y_ptr, N, stride, H, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    h = offs % H
    rest = offs // H
    tl.store(y_ptr + h * (N // H) + rest, tl.load(x_ptr + offs * stride, mask=mask), mask=mask)


@triton.jit
def split_i32(x_ptr, y_ptr, N, stride, H, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    h = offs % H
    rest = offs // H
    tl.store(y_ptr + h * (N // H) + rest, tl.load(x_ptr + offs * stride, mask=mask), mask=mask)


def _args(s: dict[str, int]) -> dict[str, object]:
    return {
        "x_ptr": Tensor((s["N"],), "fp16"),
        "y_ptr": Tensor((s["N"],), "fp16", output=True),
        "N": s["N"],
        "stride": 1,
    }


def _split_args(s: dict[str, int]) -> dict[str, object]:
    return {**_args(s), "H": 12}


suite = Suite(
    name="diag-copy",
    description="minimal copy kernels, one specialization/index-width effect per variant (diagnostics tests)",
    variants={
        "plain": Variant(copy_plain, "no annotations"),
        "plain_twin": Variant(copy_plain_twin, "the same body under another name"),
        "annotated": Variant(copy_annotated, "`stride: int`"),
        "annotated_hint": Variant(copy_annotated_hint, "`stride: int`, contiguity stated on `offs * stride`"),
        "dns": Variant(copy_dns, "do_not_specialize=['stride']"),
        "dns_align": Variant(copy_dns_align, "do_not_specialize_on_alignment=['x_ptr', 'y_ptr']"),
        "n64": Variant(copy_n64, "`N: tl.int64`"),
        "i64": Variant(split_i64, "program id widened to int64, index split by // and %", args=_split_args),
        "i32": Variant(split_i32, "index split by // and % in int32", args=_split_args),
    },
    args=_args,
    shape={"N": 1 << 20},
    constexprs={"BLOCK": 1024},
    options={"num_warps": 4},
    grid=lambda s, meta: (triton.cdiv(s["N"], meta["BLOCK"]),),
    default_pair=("annotated", "plain"),
)
