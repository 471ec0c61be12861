"""Stage-0 specialization kinds on a 2-D kernel (``tests/test_rule_specialization.py``): ``y = x * w`` over an fp16
``[R, C]`` tile, both inputs read through a runtime row stride and a column stride passed as 1. The parameters are
deliberately not called ``stride*`` (``incx``/``incw`` are the column strides, ``ldx``/``ldw`` the row strides): the
rules must decide from the IR and stage 0, not from names.

- ``plain``: no annotations; ``incx``/``incw`` = 1 become constants, every pointer and ``R``/``C``/``ld*`` are
  divisible by 16.
- ``mixed``: ``incx: int`` (annotation) and ``do_not_specialize=["incw"]``: both unit strides stay runtime i32, for
  two different reasons.
- ``ragged``: ``do_not_specialize_on_alignment=["x_ptr"]`` and ``R`` = 1000 (not a multiple of 16, used only in the
  row mask) and ``ldw`` = 1000 (used in the row offsets): the pointer and both integers lose divisibility 16.
- ``wide``: ``R: tl.int64``: ``R`` is typed i64.
- ``tall``: ``plain`` with ``BR`` = 32 instead of 16 and ``num_warps`` = 8.
"""

from __future__ import annotations

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def mul_plain(x_ptr, w_ptr, y_ptr, R, C, ldx, incx, ldw, incw, BR: tl.constexpr, BC: tl.constexpr):
    rows = tl.program_id(0) * BR + tl.arange(0, BR)
    cols = tl.arange(0, BC)
    m = (rows < R)[:, None]
    x = tl.load(x_ptr + rows[:, None] * ldx + cols[None, :] * incx, mask=m)
    w = tl.load(w_ptr + rows[:, None] * ldw + cols[None, :] * incw, mask=m)
    tl.store(y_ptr + rows[:, None] * C + cols[None, :], x * w, mask=m)


@triton.jit(do_not_specialize=["incw"])
def mul_mixed(x_ptr, w_ptr, y_ptr, R, C, ldx, incx: int, ldw, incw, BR: tl.constexpr, BC: tl.constexpr):
    rows = tl.program_id(0) * BR + tl.arange(0, BR)
    cols = tl.arange(0, BC)
    m = (rows < R)[:, None]
    x = tl.load(x_ptr + rows[:, None] * ldx + cols[None, :] * incx, mask=m)
    w = tl.load(w_ptr + rows[:, None] * ldw + cols[None, :] * incw, mask=m)
    tl.store(y_ptr + rows[:, None] * C + cols[None, :], x * w, mask=m)


@triton.jit(do_not_specialize_on_alignment=["x_ptr"])
def mul_ragged(x_ptr, w_ptr, y_ptr, R, C, ldx, incx, ldw, incw, BR: tl.constexpr, BC: tl.constexpr):
    rows = tl.program_id(0) * BR + tl.arange(0, BR)
    cols = tl.arange(0, BC)
    m = (rows < R)[:, None]
    x = tl.load(x_ptr + rows[:, None] * ldx + cols[None, :] * incx, mask=m)
    w = tl.load(w_ptr + rows[:, None] * ldw + cols[None, :] * incw, mask=m)
    tl.store(y_ptr + rows[:, None] * C + cols[None, :], x * w, mask=m)


@triton.jit
def mul_wide(x_ptr, w_ptr, y_ptr, R: tl.int64, C, ldx, incx, ldw, incw, BR: tl.constexpr, BC: tl.constexpr):
    rows = tl.program_id(0) * BR + tl.arange(0, BR)
    cols = tl.arange(0, BC)
    m = (rows < R)[:, None]
    x = tl.load(x_ptr + rows[:, None] * ldx + cols[None, :] * incx, mask=m)
    w = tl.load(w_ptr + rows[:, None] * ldw + cols[None, :] * incw, mask=m)
    tl.store(y_ptr + rows[:, None] * C + cols[None, :], x * w, mask=m)


def _args(s: dict[str, int]) -> dict[str, object]:
    return {
        "x_ptr": Tensor((s["R"], s["C"]), "fp16"),
        "w_ptr": Tensor((s["R"], s["C"]), "fp16"),
        "y_ptr": Tensor((s["R"], s["C"]), "fp16", output=True),
        "R": s["R"],
        "C": s["C"],
        "ldx": s["C"],
        "incx": 1,
        "ldw": s["C"],
        "incw": 1,
    }


def _ragged(s: dict[str, int]) -> dict[str, object]:
    return {**_args(s), "R": 1000, "ldw": 1000}


suite = Suite(
    name="spec-kinds",
    description="2-D multiply whose strides are not named stride*: one stage-0 specialization kind per variant",
    variants={
        "plain": Variant(mul_plain, "no annotations"),
        "mixed": Variant(mul_mixed, "`incx: int`, do_not_specialize=['incw']"),
        "ragged": Variant(mul_ragged, "x_ptr not alignment-specialized; R and ldw not multiples of 16", args=_ragged),
        "wide": Variant(mul_wide, "`R: tl.int64`"),
        "tall": Variant(mul_plain, "BR 32, num_warps 8", constexprs={"BR": 32}, options={"num_warps": 8}),
    },
    args=_args,
    shape={"R": 1024, "C": 64},
    constexprs={"BR": 16, "BC": 64},
    options={"num_warps": 4},
    grid=lambda s, meta: (triton.cdiv(s["R"], meta["BR"]),),
)
