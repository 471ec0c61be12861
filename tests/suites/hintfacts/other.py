"""``@triton.jit`` helpers that ``hintfacts.py`` calls from another file: the ops they make carry this file's
positions (``callsite(#loc_here at #loc_caller)``), so no line of the saved kernel source may be quoted for them
(their line numbers lie inside ``hintfacts.py``'s length: a reader that ignored the file name would quote an
unrelated line of the kernel's file).
"""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def aligned_start(idx_ptr, n):
    tl.assume(n > 0)
    return tl.multiple_of(tl.load(idx_ptr + tl.program_id(0)), 16)


@triton.jit
def load_streaming(p, mask):
    return tl.load(p, mask=mask, other=0.0, cache_modifier=".cg")


@triton.jit
def dot_into(a, b, c_ptrs):
    part = tl.dot(a, b)
    tl.atomic_add(c_ptrs, part, sem="relaxed")


@triton.jit
def widen(x):
    return x.to(tl.float64) * 0.5


@triton.jit
def keep_old(p, old, mask):
    tl.store(p, old, mask=mask)
