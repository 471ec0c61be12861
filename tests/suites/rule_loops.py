"""A row-scaling loop for the unit tests of the loop rules (``tests/test_rule_loops.py``): each program walks ``R``
rows (a runtime count) of an fp32 ``[R, 128]`` matrix and writes ``rows * s`` where the scale ``s`` is read from
memory. The row loop is ``tl.range(0, R, num_stages=STAGES, loop_unroll_factor=UNROLL)``; ``RELOAD`` loads ``s``
inside the loop (the same address every iteration) instead of once before it; ``INNER`` adds a second loop over
column halves inside the row loop.

- ``base``: 2 stages, not unrolled, ``s`` loaded once.
- ``u2``/``u4``: unrolled 2× / 4× (``triton-loop-unroll`` adds a remainder loop marked ``tt.num_stages = 1``).
- ``st1``: ``num_stages=1`` (the pipeliner leaves the loop alone).
- ``st3u2``: 3 stages and unrolled 2×.
- ``reload``: ``s`` (and a bias ``b``) loaded in every iteration: 2 loop-invariant loads.
- ``inner``: the row loop holds a loop over the two column halves (a nest of depth 2).
"""

from __future__ import annotations

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def scale_rows(
    x_ptr, s_ptr, b_ptr, out_ptr, R, C: tl.constexpr, STAGES: tl.constexpr, UNROLL: tl.constexpr,
    RELOAD: tl.constexpr, INNER: tl.constexpr,
):  # fmt: skip
    cols = tl.arange(0, C)
    s = tl.load(s_ptr)
    b = tl.load(b_ptr)
    for r in tl.range(0, R, num_stages=STAGES, loop_unroll_factor=UNROLL):
        if RELOAD:
            s = tl.load(s_ptr)
            b = tl.load(b_ptr)
        if INNER:
            half = tl.arange(0, C // 2)
            for h in range(0, 2):
                v = tl.load(x_ptr + r * C + h * (C // 2) + half)
                tl.store(out_ptr + r * C + h * (C // 2) + half, v * s + b)
        else:
            v = tl.load(x_ptr + r * C + cols)
            tl.store(out_ptr + r * C + cols, v * s + b)


def _k(stages: int = 2, unroll: int = 1, reload: bool = False, inner: bool = False) -> dict[str, object]:
    return {"C": 128, "STAGES": stages, "UNROLL": unroll, "RELOAD": reload, "INNER": inner}


suite = Suite(
    name="rule-loops",
    variants={
        "base": Variant(scale_rows, constexprs=_k()),
        "u2": Variant(scale_rows, constexprs=_k(unroll=2)),
        "u4": Variant(scale_rows, constexprs=_k(unroll=4)),
        "st1": Variant(scale_rows, constexprs=_k(stages=1)),
        "st3u2": Variant(scale_rows, constexprs=_k(stages=3, unroll=2)),
        "reload": Variant(scale_rows, constexprs=_k(reload=True)),
        "inner": Variant(scale_rows, constexprs=_k(inner=True)),
    },
    args=lambda s: {
        "x_ptr": Tensor((s["R"], 128), "fp32"),
        "s_ptr": Tensor((1,), "fp32"),
        "b_ptr": Tensor((1,), "fp32"),
        "out_ptr": Tensor((s["R"], 128), "fp32", output=True),
        "R": s["R"],
    },
    shape={"R": 64},
    options={"num_warps": 4},
    grid=lambda s, meta: (1,),
    flops=lambda s: 2 * s["R"] * 128,
    bytes=lambda s: 8 * s["R"] * 128,
)
