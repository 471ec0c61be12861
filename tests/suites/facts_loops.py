"""Loop kernels for the fact extraction tests (``tests/test_facts.py``): each program scales ``ROWS`` rows (a runtime count) of an fp32
``[R, C]`` matrix by a gain read from memory.

- ``reread``: the gain ``tl.load(g_ptr)`` sits inside the row loop (the same address every iteration: an invariant
  load that Triton's LICM does not hoist), the row load moves with the loop.
- ``once``: the gain is loaded once, before the loop.
- ``unroll2``: ``once`` with the row loop written ``tl.range(..., loop_unroll_factor=2)`` (``triton-loop-unroll``
  duplicates the body and adds a remainder loop).
"""

from __future__ import annotations

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def gain_reread(x_ptr, g_ptr, y_ptr, R, ROWS, C: tl.constexpr):
    cols = tl.arange(0, C)
    for i in range(0, ROWS):
        row = tl.program_id(0) * ROWS + i
        gain = tl.load(g_ptr)
        v = tl.load(x_ptr + row * C + cols, mask=row < R)
        tl.store(y_ptr + row * C + cols, v * gain, mask=row < R)


@triton.jit
def gain_once(x_ptr, g_ptr, y_ptr, R, ROWS, C: tl.constexpr):
    cols = tl.arange(0, C)
    gain = tl.load(g_ptr)
    for i in range(0, ROWS):
        row = tl.program_id(0) * ROWS + i
        v = tl.load(x_ptr + row * C + cols, mask=row < R)
        tl.store(y_ptr + row * C + cols, v * gain, mask=row < R)


@triton.jit
def gain_unroll2(x_ptr, g_ptr, y_ptr, R, ROWS, C: tl.constexpr):
    cols = tl.arange(0, C)
    gain = tl.load(g_ptr)
    for i in tl.range(0, ROWS, loop_unroll_factor=2):
        row = tl.program_id(0) * ROWS + i
        v = tl.load(x_ptr + row * C + cols, mask=row < R)
        tl.store(y_ptr + row * C + cols, v * gain, mask=row < R)


suite = Suite(
    name="facts-loops",
    description="rows scaled by a gain from memory: reloaded in the loop, loaded once, or with the loop unrolled 2x",
    variants={
        "reread": Variant(gain_reread, "gain loaded in every iteration"),
        "once": Variant(gain_once, "gain loaded before the loop"),
        "unroll2": Variant(gain_unroll2, "gain before the loop, loop_unroll_factor=2"),
    },
    args=lambda s: {
        "x_ptr": Tensor((s["R"], 128), "fp32"),
        "g_ptr": Tensor((1,), "fp32"),
        "y_ptr": Tensor((s["R"], 128), "fp32", output=True),
        "R": s["R"],
        "ROWS": 5,
    },
    shape={"R": 1000},
    constexprs={"C": 128},
    options={"num_warps": 4},
    grid=lambda s, meta: (triton.cdiv(s["R"], 5),),
)
