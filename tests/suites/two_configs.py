"""A small suite with two autotune configs (for --all-configs and --config selection)."""

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def scale(x_ptr, y_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * alpha, mask=mask)


@triton.jit(do_not_specialize=["n"])
def scale_dns(x_ptr, y_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * alpha, mask=mask)


suite = Suite(
    name="two-configs",
    variants={"plain": Variant(scale), "dns": Variant(scale_dns)},
    args=lambda s: {
        "x_ptr": Tensor((s["N"],), "fp32"),
        "y_ptr": Tensor((s["N"],), "fp32", output=True, align=8),
        "n": s["N"],
        "alpha": 2.0,
    },
    shape={"N": 4096},
    configs=[
        {"BLOCK": 256, "num_warps": 2},
        {"BLOCK": 1024, "num_warps": 4},
    ],
    default_config=1,
    grid=lambda s, meta: (triton.cdiv(s["N"], meta["BLOCK"]),),
)
