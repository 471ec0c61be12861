"""A suite with one variant that fails to compile (an undefined name in the kernel) and one that works."""

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def copy_ok(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@triton.jit
def copy_broken(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * undefined_scale, mask=offs < n)  # noqa: F821


suite = Suite(
    name="broken",
    variants={"ok": Variant(copy_ok), "broken": Variant(copy_broken)},
    args=lambda s: {"x_ptr": Tensor((s["N"],), "fp32"), "y_ptr": Tensor((s["N"],), "fp32", output=True), "n": s["N"]},
    shape={"N": 4096},
    constexprs={"BLOCK": 1024},
    options={"num_warps": 4},
)
