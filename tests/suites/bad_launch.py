"""Suites whose JIT call does not bind to the kernel, one kind each (``tests/test_compile.py``): a parameter no one
gives, a name the kernel lacks (in ``args``, in ``constexprs``, in ``options``), a name given twice, a tensor given to a
``tl.constexpr``, and an ``args`` builder that fails. Each must be a one-line suite error (exit 2) before any compile.
"""

from __future__ import annotations

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def row_scale(x_ptr, out_ptr, stride_row, n_cols, gain, BLOCK_C: tl.constexpr, CLAMP: tl.constexpr = False):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_C)
    m = cols < n_cols
    v = tl.load(x_ptr + row * stride_row + cols, mask=m) * gain
    if CLAMP:
        v = tl.minimum(v, 1.0)
    tl.store(out_ptr + row * stride_row + cols, v, mask=m)


def _args(s: dict[str, int]) -> dict[str, object]:
    return {
        "x_ptr": Tensor((s["R"], s["C"]), "fp16"),
        "out_ptr": Tensor((s["R"], s["C"]), "fp16", output=True),
        "stride_row": s["C"],
        "n_cols": s["C"],
        "gain": 0.5,
    }


def _suite(name: str, args=_args, constexprs=None, options=None, variant_options=None):  # type: ignore[no-untyped-def]
    return Suite(
        name=name,
        variants={
            "plain": Variant(row_scale),
            "clamped": Variant(row_scale, constexprs={"CLAMP": True}, options=variant_options or {}),
        },
        args=args,
        shape={"R": 64, "C": 512},
        constexprs={"BLOCK_C": 512} if constexprs is None else constexprs,
        options=options or {},
    )


# `gain` is given by no one (the JIT: "missing 1 required positional argument: 'gain'").
missing_arg = _suite("missing-arg", args=lambda s: {k: v for k, v in _args(s).items() if k != "gain"})
# `BLOCK_C` (a constexpr without a default) is given by no one.
missing_constexpr = _suite("missing-constexpr", constexprs={})
# `stride_col` is not a parameter (the JIT: "Keyword argument stride_col was specified but unrecognised").
unknown_arg = _suite("unknown-arg", args=lambda s: {**_args(s), "stride_col": 1})
# `BLOCK_CC` is a misspelt constexpr.
unknown_constexpr = _suite("unknown-constexpr", constexprs={"BLOCK_CC": 512})
# `num_warp` is a misspelt compile option (only in the second variant).
unknown_option = _suite("unknown-option", variant_options={"num_warp": 2})
# `BLOCK_C` given in args and in constexprs.
given_twice = _suite("given-twice", args=lambda s: {**_args(s), "BLOCK_C": 512})
# A tensor given to the constexpr `BLOCK_C`.
constexpr_tensor = _suite(
    "constexpr-tensor", args=lambda s: {**_args(s), "BLOCK_C": Tensor((4,), "i32")}, constexprs={}
)
# args() reads a size the shape lacks.
args_fail = _suite("args-fail", args=lambda s: {**_args(s), "n_cols": s["COLS"]})
