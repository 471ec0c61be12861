"""A hint written as a statement of its own (``x = tl.multiple_of(x, 8)`` / ``tl.max_contiguous``): the attribute
lands on the op that defines the value, a line above the call. tests/test_root_kinds.py checks the root names the
call's line, not the attribute's."""

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def shift_plain(x_ptr, y_ptr, stride, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    base = pid * stride
    offs = tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + base + offs, mask=m)
    tl.store(y_ptr + base + offs, v + 1.0, mask=m)


@triton.jit
def shift_hinted(x_ptr, y_ptr, stride, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    base = pid * stride
    base = tl.multiple_of(base, 4)
    offs = tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + base + offs, mask=m)
    tl.store(y_ptr + base + offs, v + 1.0, mask=m)


suite = Suite(
    name="hint-statement",
    variants={"plain": Variant(shift_plain), "hinted": Variant(shift_hinted)},
    args=lambda s: {
        "x_ptr": Tensor((s["R"], s["S"]), "fp32"),
        "y_ptr": Tensor((s["R"], s["S"]), "fp32", output=True),
        "stride": s["S"],
        "n": s["C"],
    },
    shape={"R": 32, "C": 512, "S": 516},
    constexprs={"BLOCK": 512},
    options={"num_warps": 4},
    default_pair=("plain", "hinted"),
)
