"""Two row-softmax kernels for the parameter-pairing test: ``softmax_a`` has constant row strides; ``softmax_b`` renames
its pointers, takes runtime input/output row strides and a scale (inserted at other positions)."""

import triton
import triton.language as tl


@triton.jit
def softmax_a(out_ptr, in_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = offs < n_cols
    x = tl.load(in_ptr + row * 1024 + offs, mask=m, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * 1024 + offs, e / tl.sum(e, axis=0), mask=m)


@triton.jit
def softmax_b(output, inp, in_stride, out_stride, n_cols, scale, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = offs < n_cols
    x = tl.load(inp + row * in_stride + offs, mask=m, other=-float("inf")) * scale
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(output + row * out_stride + offs, e / tl.sum(e, axis=0), mask=m)
