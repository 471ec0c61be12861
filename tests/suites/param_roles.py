"""Row copies whose parameter lists differ by role, for ``spec.param-added`` and ``config.changed``
(``irdiff/diagnose/rules/parameters.py``; tests: ``tests/test_rule_parameters.py``). No parameter is named after
its role: the rules must read the role from the TTIR.

- ``fixed``: each row starts at ``row * 1000`` (a constant folded into the code); ``n_cols`` bounds the mask.
- ``odd``: the pointers renamed (``src``/``dst``) and the source's row stride a runtime ``i32`` ``ld`` passed as
  1000 (no divisibility).
- ``even``: as ``odd`` with ``ld`` = 1024 (the JIT specializes it divisible by 16).
- ``wide``: as ``even`` with ``ld`` annotated ``tl.int64``.
- ``bounded``: ``fixed`` with a runtime ``nr`` that bounds the row in the mask (passed as 63: no divisibility).
- ``odd_bounded``: ``odd`` with ``nr`` as well.
- ``scaled``: ``fixed`` with a runtime ``alpha`` used only in arithmetic.
- ``odd_scaled``: ``odd`` with ``alpha`` as well.
- ``shifted``: ``fixed`` whose row start is a runtime ``i32`` ``base`` added to the address (an offset, 1000).
- ``narrow``: ``fixed`` with ``BLOCK`` = 512, ``num_warps`` = 8 and ``num_stages`` = 2 (the same kernel, another configuration).
- ``scaled_int``: ``scaled`` with ``alpha`` an integer (3: a runtime ``i32`` used only in arithmetic).
- ``square``: square rows: one runtime ``ld`` (1000) is both the row stride and the column bound.
- ``warps8``: ``fixed`` with ``num_warps`` = 8 only; ``capped``: ``fixed`` with ``maxnreg`` = 128 (unset in the others).
- ``block512``: ``fixed`` with ``BLOCK`` = 512 only (the launch options unchanged); ``block512_capped``: ``block512``
  with ``maxnreg`` = 128 as well.
"""

from __future__ import annotations

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def copy_fixed(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    tl.store(y_ptr + row * 1000 + cols, tl.load(x_ptr + row * 1000 + cols, mask=m), mask=m)


@triton.jit
def copy_ld(src, dst, n_cols, ld, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    tl.store(dst + row * 1000 + cols, tl.load(src + row * ld + cols, mask=m), mask=m)


@triton.jit
def copy_ld64(src, dst, n_cols, ld: tl.int64, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    tl.store(dst + row * 1000 + cols, tl.load(src + row * ld + cols, mask=m), mask=m)


@triton.jit
def copy_ld_bounded(src, dst, n_cols, ld, nr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = (cols < n_cols) & (row < nr)
    tl.store(dst + row * 1000 + cols, tl.load(src + row * ld + cols, mask=m), mask=m)


@triton.jit
def copy_bounded(x_ptr, y_ptr, n_cols, nr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = (cols < n_cols) & (row < nr)
    tl.store(y_ptr + row * 1000 + cols, tl.load(x_ptr + row * 1000 + cols, mask=m), mask=m)


@triton.jit
def copy_scaled(x_ptr, y_ptr, n_cols, alpha, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    tl.store(y_ptr + row * 1000 + cols, tl.load(x_ptr + row * 1000 + cols, mask=m) * alpha, mask=m)


@triton.jit
def copy_ld_scaled(src, dst, n_cols, ld, alpha, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    tl.store(dst + row * 1000 + cols, tl.load(src + row * ld + cols, mask=m) * alpha, mask=m)


@triton.jit
def copy_square(src, dst, ld, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < ld
    tl.store(dst + row * 1000 + cols, tl.load(src + row * ld + cols, mask=m), mask=m)


@triton.jit
def copy_shifted(x_ptr, y_ptr, n_cols, base, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    tl.store(y_ptr + row * 1000 + cols, tl.load(x_ptr + base + cols, mask=m), mask=m)


def _tensors(x: str, y: str):  # type: ignore[no-untyped-def]
    return {x: Tensor((64 * 1024,), "fp32"), y: Tensor((64 * 1000,), "fp32", output=True)}


def _args(**extra: object):  # type: ignore[no-untyped-def]
    def args(s):  # type: ignore[no-untyped-def]
        return {**_tensors("x_ptr", "y_ptr"), "n_cols": s["C"], **extra}

    return args


def _args_ld(ld: int, **extra: object):  # type: ignore[no-untyped-def]
    def args(s):  # type: ignore[no-untyped-def]
        return {**_tensors("src", "dst"), "n_cols": s["C"], "ld": ld, **extra}

    return args


suite = Suite(
    name="param_roles",
    variants={
        "fixed": Variant(copy_fixed),
        "odd": Variant(copy_ld, args=_args_ld(1000)),
        "even": Variant(copy_ld, args=_args_ld(1024)),
        "wide": Variant(copy_ld64, args=_args_ld(1024)),
        "bounded": Variant(copy_bounded, args=_args(nr=63)),
        "odd_bounded": Variant(copy_ld_bounded, args=_args_ld(1000, nr=63)),
        "scaled": Variant(copy_scaled, args=_args(alpha=0.5)),
        "odd_scaled": Variant(copy_ld_scaled, args=_args_ld(1000, alpha=0.5)),
        "shifted": Variant(copy_shifted, args=_args(base=1000)),
        "narrow": Variant(copy_fixed, constexprs={"BLOCK": 512}, options={"num_warps": 8, "num_stages": 2}),
        "warps8": Variant(copy_fixed, options={"num_warps": 8}),
        "scaled_int": Variant(copy_scaled, args=_args(alpha=3)),
        "square": Variant(
            copy_square,
            args=lambda s: {**_tensors("src", "dst"), "ld": 1000},
        ),
        "capped": Variant(copy_fixed, options={"maxnreg": 128}),
        "block512": Variant(copy_fixed, constexprs={"BLOCK": 512}),
        "block512_capped": Variant(copy_fixed, constexprs={"BLOCK": 512}, options={"maxnreg": 128}),
    },
    args=_args(),
    shape={"C": 1000},
    constexprs={"BLOCK": 1024},
    options={"num_warps": 4, "num_stages": 3},
    grid=lambda s, meta: (64,),
)
