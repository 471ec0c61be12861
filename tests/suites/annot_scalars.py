"""Scalar parameters annotated in one variant only (``source.annotation`` titles, ``tests/test_root_kinds.py``):

- ``annotated``: ``n: int`` and ``scale: float``: the JIT types them as it would anyway (i32 divisible by 16, fp32),
  so stage 0 is alike and the annotations change nothing;
- ``wide``: ``n: tl.int64``: the JIT types ``n`` i64 (the annotation replaces the specialized type), so the index
  math compares in 64 bits.
"""

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def scale_plain(x_ptr, y_ptr, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) * scale, mask=m)


@triton.jit
def scale_annotated(x_ptr, y_ptr, n: int, scale: float, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) * scale, mask=m)


@triton.jit
def scale_wide(x_ptr, y_ptr, n: tl.int64, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) * scale, mask=m)


suite = Suite(
    name="annot-scalars",
    variants={
        "plain": Variant(scale_plain),
        "annotated": Variant(scale_annotated),
        "wide": Variant(scale_wide),
    },
    args=lambda s: {
        "x_ptr": Tensor((s["N"],), "fp32"),
        "y_ptr": Tensor((s["N"],), "fp32", output=True),
        "n": s["N"],
        "scale": 0.5,
    },
    shape={"N": 4096},
    constexprs={"BLOCK": 256},
    options={"num_warps": 4},
)
