"""One copy kernel launched with num_warps=4 and with num_warps=8: the same source, other launch options
(``tests/test_identical_options.py``)."""

from __future__ import annotations

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def copy(x, y, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + o, tl.load(x + o, mask=o < n), mask=o < n)


suite = Suite(
    name="warps-only",
    description="the same copy kernel with num_warps 4 and 8",
    variants={
        "w4": Variant(copy, "num_warps=4", {"BLOCK": 1024}, {"num_warps": 4}),
        "w8": Variant(copy, "num_warps=8", {"BLOCK": 1024}, {"num_warps": 8}),
    },
    args=lambda s: {"x": Tensor((4096,), "fp32"), "y": Tensor((4096,), "fp32", output=True), "n": 4096},
    shape={},
    grid=lambda s, meta: (4,),
)
