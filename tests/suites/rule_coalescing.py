"""A 2-D fp16 tile copy ``[32, 64]`` for the unit tests of the coalescing rules (``tests/test_rule_coalescing.py``):
``dst[r, c] = src[r, c]`` with ``src`` addressed four ways.

- ``rows``: row-major, the column index contiguous (``src + r * ld + c``, ``ld`` specialized divisible by 16).
- ``gather``: the column index multiplied by a runtime ``step`` (= 3): nothing contiguous, one element per access.
- ``skew``: as ``rows`` with ``src`` only 4-byte aligned: the same contiguity, less alignment.
- ``cols``: ``src`` read column-major (``src + c * ld + r``): contiguous along the other dimension.
- ``pairs``: a ``[32, 32]`` tile of every other column (``src + r * ld + 2 * c``): another tile shape, paired with
  the ``[32, 64]`` loads of the others by its pointer ``src``.
- ``tt``: ``src`` read and ``dst`` written column-major: both accesses contiguous along dimension 0.
- ``dskew``: as ``rows`` with ``dst`` only 4-byte aligned (the mirror of ``skew``: the store loses the alignment).
- ``tskew``: as ``cols`` with ``src`` only 4-byte aligned: contiguous along dimension 0, not aligned.
- ``inline``: the loaded tile stored column-major without a name (``tl.store(dst + c * R + r, tl.load(...))``): its
  store pairs with the others' named store by kind, shape and element type.
- ``two``: the ``rows`` copy, then ``x`` reassigned to the ``pairs`` tile and stored too: two loads (and stores) of
  other shapes from pointers named ``x``; each pairs once, by shape first.
- ``twoq``: as ``two`` with a ``[32, 16]`` tile of every fourth column second: its second load has a shape no other
  variant has, so it pairs (by its pointer ``x``) only with a load left over.
- ``zx``: as ``twoq`` with the first tile named ``z``: its ``[32, 64]`` load has another pointer name than the others'.
- ``rows2``/``cols2``: ``rows``/``cols`` two columns wide (``C = 2``): contiguity 2 along dim 1 vs 32 along dim 0.
- ``bytes``: an int8 row-major tile read 8 elements past ``src``: contiguous, proven only 8-byte aligned.
"""

from __future__ import annotations

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def tile_rows(src, dst, ld, step, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)[:, None]
    c = tl.arange(0, C)[None, :]
    x = tl.load(src + r * ld + c)
    tl.store(dst + r * C + c, x)


@triton.jit
def tile_gather(src, dst, ld, step, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)[:, None]
    c = tl.arange(0, C)[None, :]
    x = tl.load(src + r * ld + c * step)
    tl.store(dst + r * C + c, x)


@triton.jit
def tile_cols(src, dst, ld, step, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)[:, None]
    c = tl.arange(0, C)[None, :]
    x = tl.load(src + c * ld + r)
    tl.store(dst + r * C + c, x)


@triton.jit
def tile_pairs(src, dst, ld, step, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)[:, None]
    c = tl.arange(0, C)[None, :]
    x = tl.load(src + r * ld + 2 * c)
    tl.store(dst + r * C + c, x)


@triton.jit
def tile_tt(src, dst, ld, step, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)[:, None]
    c = tl.arange(0, C)[None, :]
    x = tl.load(src + c * ld + r)
    tl.store(dst + c * R + r, x)


@triton.jit
def tile_inline(src, dst, ld, step, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)[:, None]
    c = tl.arange(0, C)[None, :]
    tl.store(dst + c * R + r, tl.load(src + r * ld + c))


@triton.jit
def tile_two(src, dst, ld, step, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)[:, None]
    c = tl.arange(0, C)[None, :]
    x = tl.load(src + r * ld + c)
    tl.store(dst + r * C + c, x)
    h = tl.arange(0, C // 2)[None, :]
    x = tl.load(src + r * ld + 2 * h)
    tl.store(dst + r * C + h, x)


@triton.jit
def tile_twoq(src, dst, ld, step, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)[:, None]
    c = tl.arange(0, C)[None, :]
    x = tl.load(src + r * ld + c)
    tl.store(dst + r * C + c, x)
    q = tl.arange(0, C // 4)[None, :]
    x = tl.load(src + r * ld + 4 * q)
    tl.store(dst + r * C + q, x)


@triton.jit
def tile_bytes(src, dst, ld, step, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)[:, None]
    c = tl.arange(0, C)[None, :]
    x = tl.load(src + 8 + r * ld + c)
    tl.store(dst + r * C + c, x)


@triton.jit
def tile_zx(src, dst, ld, step, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)[:, None]
    c = tl.arange(0, C)[None, :]
    z = tl.load(src + r * ld + c)
    tl.store(dst + r * C + c, z)
    q = tl.arange(0, C // 4)[None, :]
    x = tl.load(src + r * ld + 4 * q)
    tl.store(dst + r * C + q, x)


def _args(align: int = 16, dst_align: int = 16, dtype: str = "fp16"):  # type: ignore[no-untyped-def]
    def args(s):  # type: ignore[no-untyped-def]
        return {
            "src": Tensor((256 * 256,), dtype, align=align),
            "dst": Tensor((32 * 64,), dtype, output=True, align=dst_align),
            "ld": 256,
            "step": 3,
        }

    return args


suite = Suite(
    name="rule-coalescing",
    variants={
        "rows": Variant(tile_rows),
        "gather": Variant(tile_gather),
        "skew": Variant(tile_rows, args=_args(4)),
        "cols": Variant(tile_cols),
        "pairs": Variant(tile_pairs, constexprs={"C": 32}),
        "tt": Variant(tile_tt),
        "dskew": Variant(tile_rows, args=_args(dst_align=4)),
        "tskew": Variant(tile_cols, args=_args(4)),
        "inline": Variant(tile_inline),
        "two": Variant(tile_two),
        "twoq": Variant(tile_twoq),
        "zx": Variant(tile_zx),
        "rows2": Variant(tile_rows, constexprs={"C": 2}),
        "cols2": Variant(tile_cols, constexprs={"C": 2}),
        "bytes": Variant(tile_bytes, args=_args(dtype="i8")),
    },
    args=_args(),
    shape={},
    constexprs={"R": 32, "C": 64},
    options={"num_warps": 4},
    grid=lambda s, meta: (1,),
    flops=lambda s: 0,
    bytes=lambda s: 4 * 32 * 64,
)
