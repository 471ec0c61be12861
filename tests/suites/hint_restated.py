"""A hint that restates what AxisInfo already proves: ``tl.multiple_of(pid * BLOCK, BLOCK)`` (a product with the
constexpr ``BLOCK`` is a multiple of it anyway). The hint's ``tt.divisibility`` attribute is the only difference in
TTIR, and no access, layout or instruction changes because of it (tests/test_roots_apply.py). ``twice`` stores the
result a second time, after the first: its PTX and SASS are ``plain``'s and more."""

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def scale_plain(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    start = tl.program_id(0) * BLOCK
    offs = start + tl.arange(0, BLOCK)
    keep = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=keep) * 3.0, mask=keep)


@triton.jit
def scale_restated(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    start = tl.multiple_of(tl.program_id(0) * BLOCK, BLOCK)
    offs = start + tl.arange(0, BLOCK)
    keep = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=keep) * 3.0, mask=keep)


@triton.jit
def scale_twice(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    start = tl.program_id(0) * BLOCK
    offs = start + tl.arange(0, BLOCK)
    keep = offs < n
    v = tl.load(x_ptr + offs, mask=keep) * 3.0
    tl.store(y_ptr + offs, v, mask=keep)
    tl.store(y_ptr + n + offs, v, mask=keep)


suite = Suite(
    name="hint-restated",
    variants={"plain": Variant(scale_plain), "restated": Variant(scale_restated), "twice": Variant(scale_twice)},
    args=lambda s: {
        "x_ptr": Tensor((s["N"],), "fp32"),
        "y_ptr": Tensor((2 * s["N"],), "fp32", output=True),
        "n": s["N"],
    },
    shape={"N": 1 << 16},
    constexprs={"BLOCK": 256},
    options={"num_warps": 4},
    default_pair=("plain", "restated"),
)
