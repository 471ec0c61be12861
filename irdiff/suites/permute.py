"""``permute``: copy ``x[B, H, S, D]`` into ``y[B, S, H, D]`` (fp16), index math in int32 vs. int64.

Each program copies ``BLOCK`` consecutive elements of ``y``. It splits their flat index into ``(b, s, h, d)`` with
``//`` and ``%`` and gathers from ``x`` at ``((b * H + h) * S + s) * D + d``. ``D`` (the head size) is a constexpr,
so runs of ``D`` elements stay contiguous and the copy is vectorized in both variants; ``H`` and ``S`` are runtime
values, so dividing by them is a real integer division.

- ``i32``: the program id and all index math stay 32-bit (enough for 2^31 elements).
- ``i64``: the program id is widened with ``.to(tl.int64)`` first, a common guard against overflow. Every
  ``//`` and ``%`` by ``H`` and ``S`` then becomes a 64-bit ``arith.divsi``/``arith.remsi`` in TTIR and
  ``div.s64``/``rem.s64`` in PTX, which ptxas implements as calls to a division subroutine (``CALL.REL`` in SASS):
  more instructions and more registers for the same copy.
"""

from __future__ import annotations

from typing import Any

import triton
import triton.language as tl

from irdiff.suite import Derived, Suite, Tensor, Variant


@triton.jit
def _permute_block(x_ptr, y_ptr, H, S, n_elements, first, D: tl.constexpr, BLOCK: tl.constexpr):
    """Copy ``y.flat[first : first + BLOCK]`` from ``x``; the index type follows ``first`` (i32 or i64)."""
    out_idx = first + tl.arange(0, BLOCK)
    d = out_idx % D
    rest = out_idx // D
    h = rest % H
    rest = rest // H
    s = rest % S
    b = rest // S
    in_idx = ((b * H + h) * S + s) * D + d
    live = out_idx < n_elements
    tl.store(y_ptr + out_idx, tl.load(x_ptr + in_idx, mask=live), mask=live)


@triton.jit
def permute_i32(x_ptr, y_ptr, H, S, n_elements, D: tl.constexpr, BLOCK: tl.constexpr):
    first = tl.program_id(0) * BLOCK
    _permute_block(x_ptr, y_ptr, H, S, n_elements, first, D, BLOCK)


@triton.jit
def permute_i64(x_ptr, y_ptr, H, S, n_elements, D: tl.constexpr, BLOCK: tl.constexpr):
    first = tl.program_id(0).to(tl.int64) * BLOCK
    _permute_block(x_ptr, y_ptr, H, S, n_elements, first, D, BLOCK)


def permute_args(shape: dict[str, int]) -> dict[str, object]:
    """``x`` fp16 ``[B, H, S, D]`` and ``y`` fp16 ``[B, S, H, D]``, both contiguous."""
    B, H, S, D = shape["B"], shape["H"], shape["S"], shape["D"]
    return {
        "x_ptr": Tensor((B, H, S, D), "fp16"),
        "y_ptr": Tensor((B, S, H, D), "fp16", output=True),
        "H": H,
        "S": S,
        "n_elements": B * H * S * D,
    }


def permute_reference(inputs: dict[str, Any], shape: dict[str, int]) -> dict[str, Any]:
    """``y = x.permute(0, 2, 1, 3)`` in float64 (torch), for the output parameter ``y_ptr``."""
    return {"y_ptr": inputs["x_ptr"].double().permute(0, 2, 1, 3).contiguous()}


def torch_permute_copy(inputs: dict[str, Any], shape: dict[str, int]) -> Any:
    """``x.permute(0, 2, 1, 3).contiguous()`` in fp16: the library speed the runner shows beside the variants."""
    return inputs["x_ptr"].permute(0, 2, 1, 3).contiguous()


suite = Suite(
    name="permute",
    description="fp16 copy [B,H,S,D] -> [B,S,H,D]; index math in int32 vs. program id widened to int64",
    variants={
        "i32": Variant(permute_i32, "program id and index math in int32"),
        "i64": Variant(permute_i64, "program id widened with .to(tl.int64) before the index math"),
    },
    args=permute_args,
    shape={"B": 8, "H": 16, "S": 2048, "D": 64},
    constexprs={"D": Derived(lambda s, t: s["D"], "head size D of the shape"), "BLOCK": 1024},
    options={"num_warps": 4},
    grid=lambda s, meta: (triton.cdiv(s["B"] * s["H"] * s["S"] * s["D"], meta["BLOCK"]),),
    flops=lambda s: 0.0,
    bytes=lambda s: 2.0 * 2 * s["B"] * s["H"] * s["S"] * s["D"],
    reference=permute_reference,
    baseline=torch_permute_copy,
    default_pair=("i64", "i32"),
)
