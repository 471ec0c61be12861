"""A second kernel module for rel_suite.py: it stays unchanged when rel_ops.py is edited (its cache is reused)."""

import triton
import triton.language as tl


@triton.jit
def neg_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, -tl.load(x_ptr + offs, mask=mask), mask=mask)
