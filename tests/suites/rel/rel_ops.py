"""@jit helpers imported by rel_suite.py (tests/test_reliability.py): a kernel in another module, as users lay
suites out. The test copies this directory and edits this file to check that the compile cache sees the change."""

import triton
import triton.language as tl

SCALE = tl.constexpr(3.0)


@triton.jit
def scaled(x):
    return x * SCALE


@triton.jit
def axpy_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, scaled(x) + y, mask=mask)
