"""``gelu`` helper (tanh approximation) for the ``helper`` suite of ``kinds.py``; ``act_erf.py`` holds the same
helper name with an edited body."""

import triton
import triton.language as tl


@triton.jit
def gelu(v):
    inner = 0.7978845608028654 * (v + 0.044715 * v * v * v)
    return 0.5 * v * (1.0 + (2.0 * tl.sigmoid(2.0 * inner) - 1.0))


@triton.jit
def gelu_rows(src, dst, n, B: tl.constexpr):
    o = tl.program_id(0) * B + tl.arange(0, B)
    ok = o < n
    v = tl.load(src + o, mask=ok)
    tl.store(dst + o, gelu(v), mask=ok)
