"""Hints written as statements of their own beside another edit of the same kernel, so the pair has more than one
source root and no root reads the whole kernel. ``col = tl.max_contiguous(col, TILE)`` restates what AxisInfo proves
of ``tl.arange`` (no access changes, so no hint rule claims it) and its ``tt.contiguity`` lands on the op defining
``col``, a line above the call; ``off = tl.multiple_of(off, 4)`` does the same on a runtime offset; the eviction hint
of ``keep_cs`` sits on a continuation line of a multi-line ``tl.load``. The other edit stores ``x * 3.0`` for
``x + 1.0``. tests/test_roots_apply.py checks each hint's source root names the hint and what it differs in."""

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def rows_plain(src, dst, pitch, n, TILE: tl.constexpr):
    row = tl.program_id(0)
    off = row * pitch
    col = tl.arange(0, TILE)
    keep = col < n
    x = tl.load(src + off + col, mask=keep)
    tl.store(dst + off + col, x + 1.0, mask=keep)


@triton.jit
def rows_contig(src, dst, pitch, n, TILE: tl.constexpr):
    row = tl.program_id(0)
    off = row * pitch
    col = tl.arange(0, TILE)
    col = tl.max_contiguous(col, TILE)
    keep = col < n
    x = tl.load(src + off + col, mask=keep, other=0.0)
    tl.store(dst + off + col, x + 1.0, mask=keep)


@triton.jit
def rows_multiple(src, dst, pitch, n, TILE: tl.constexpr):
    row = tl.program_id(0)
    off = row * pitch
    col = tl.arange(0, TILE)
    col = tl.multiple_of(col, 16)
    keep = col < n
    x = tl.load(src + off + col, mask=keep, other=0.0)
    tl.store(dst + off + col, x + 1.0, mask=keep)


@triton.jit
def rows_evict(src, dst, pitch, n, TILE: tl.constexpr):
    row = tl.program_id(0)
    off = row * pitch
    col = tl.arange(0, TILE)
    keep = col < n
    x = tl.load(
        src + off + col,
        mask=keep,
        eviction_policy="evict_last",
    )
    tl.store(dst + off + col, x * 3.0, mask=keep)


suite = Suite(
    name="hint-beside",
    variants={
        "plain": Variant(rows_plain),
        "contig": Variant(rows_contig),
        "multiple": Variant(rows_multiple),
        "evict": Variant(rows_evict),
    },
    args=lambda s: {
        "src": Tensor((s["R"], s["P"]), "fp32"),
        "dst": Tensor((s["R"], s["P"]), "fp32", output=True),
        "pitch": s["P"],
        "n": s["N"],
    },
    shape={"R": 16, "N": 256, "P": 264},
    constexprs={"TILE": 256},
    options={"num_warps": 4},
    default_pair=("plain", "contig"),
)
