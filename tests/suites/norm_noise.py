"""Kernel pairs whose LLIR attribute groups and SASS register allocation differ without meaning (normalization
tests): the ``fenced`` variant calls one more intrinsic (``tl.debug_barrier``) before anything else, so LLVM
numbers its attribute groups in another order; ``offset`` computes one more value, so ptxas allocates the
registers of the same load/store code differently."""

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def axpy_plain(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, alpha * x + y, mask=mask)


@triton.jit
def axpy_fenced(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    tl.debug_barrier()
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, alpha * x + y, mask=mask)


@triton.jit
def axpy_offset(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, alpha * x + y + pid.to(tl.float32), mask=mask)


suite = Suite(
    name="norm_noise",
    variants={"plain": Variant(axpy_plain), "fenced": Variant(axpy_fenced), "offset": Variant(axpy_offset)},
    args=lambda s: {
        "x_ptr": Tensor((s["N"],), "fp32"),
        "y_ptr": Tensor((s["N"],), "fp32"),
        "out_ptr": Tensor((s["N"],), "fp32", output=True),
        "alpha": 0.5,
        "n": s["N"],
    },
    shape={"N": 8192},
    constexprs={"BLOCK": 1024},
    options={"num_warps": 4},
)
