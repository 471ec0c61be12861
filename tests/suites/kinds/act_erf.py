"""``gelu`` helper (exact, erf) for the ``helper`` suite of ``kinds.py``: the same kernel as ``act_tanh.py``, only
the helper's body is edited."""

import triton
import triton.language as tl


@triton.jit
def gelu(v):
    return 0.5 * v * (1.0 + tl.erf(v * 0.7071067811865476))


@triton.jit
def gelu_rows(src, dst, n, B: tl.constexpr):
    o = tl.program_id(0) * B + tl.arange(0, B)
    ok = o < n
    v = tl.load(src + o, mask=ok)
    tl.store(dst + o, gelu(v), mask=ok)
