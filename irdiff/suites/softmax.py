"""``softmax``: row-wise softmax whose row loop is software-pipelined (4 stages) or not (1 stage).

Like Triton's tutorial ``02-fused-softmax``: each program loops over rows ``pid, pid + programs, ...`` with
``tl.range(row_start, n_rows, row_step, num_stages=NUM_STAGES)`` and normalizes each fp16 row (``N = 1024``, the
whole row in one block) in fp32. The grid has one program per ``ROWS_PER_PROGRAM`` rows, so every program runs
the loop several times.

- ``stages4``: ``num_stages=4`` on the loop. The pipeliner (``triton-loop-pipeline``) turns the row load into
  ``cp.async`` copies issued up to 3 rows ahead into a shared-memory ring (``ttg.async_copy_global_to_local`` in
  TTGIR), so the kernel needs shared memory for those buffers.
- ``stages1``: ``num_stages=1``: the row is loaded straight into registers each iteration; no prefetch, no ring.
"""

from __future__ import annotations

from typing import Any

import triton
import triton.language as tl

from irdiff.suite import Derived, Suite, Tensor, Variant

ROWS_PER_PROGRAM = 8


@triton.jit
def softmax_rows(
    y_ptr,
    x_ptr,
    stride_x_row,
    stride_y_row,
    n_rows,
    n_cols,
    BLOCK_N: tl.constexpr,
    NUM_STAGES: tl.constexpr,
):
    """``y[r, :] = exp(x[r, :] - max) / sum(exp(x[r, :] - max))`` for the rows of this program."""
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_N)
    in_row = cols < n_cols
    for row in tl.range(row_start, n_rows, row_step, num_stages=NUM_STAGES):
        x = tl.load(x_ptr + row * stride_x_row + cols, mask=in_row, other=-float("inf")).to(tl.float32)
        shifted = x - tl.max(x, axis=0)
        e = tl.exp(shifted)
        y = e / tl.sum(e, axis=0)
        tl.store(y_ptr + row * stride_y_row + cols, y.to(y_ptr.dtype.element_ty), mask=in_row)


def softmax_args(shape: dict[str, int]) -> dict[str, object]:
    """``x[M, N]`` and ``y[M, N]`` fp16, row-major; strides in elements."""
    M, N = shape["M"], shape["N"]
    x = Tensor((M, N), "fp16")
    y = Tensor((M, N), "fp16", output=True)
    return {
        "y_ptr": y,
        "x_ptr": x,
        "stride_x_row": x.stride(0),
        "stride_y_row": y.stride(0),
        "n_rows": M,
        "n_cols": N,
    }


def softmax_reference(inputs: dict[str, Any], shape: dict[str, int]) -> dict[str, Any]:
    """``y = softmax(x, dim=-1)`` in float64 (torch), for the output parameter ``y_ptr``."""
    import torch

    return {"y_ptr": torch.softmax(inputs["x_ptr"].double(), dim=-1)}


def torch_softmax(inputs: dict[str, Any], shape: dict[str, int]) -> Any:
    """``torch.softmax(x, dim=-1)`` in fp16: the library speed the runner shows beside the variants."""
    import torch

    return torch.softmax(inputs["x_ptr"], dim=-1)


suite = Suite(
    name="softmax",
    description="fp16 row softmax (N=1024), persistent row loop with num_stages=4 vs. num_stages=1",
    variants={
        "stages4": Variant(softmax_rows, "row loop tl.range(..., num_stages=4): cp.async prefetch", {"NUM_STAGES": 4}),
        "stages1": Variant(softmax_rows, "row loop tl.range(..., num_stages=1): no prefetch", {"NUM_STAGES": 1}),
    },
    args=softmax_args,
    shape={"M": 4096, "N": 1024},
    constexprs={"BLOCK_N": Derived(lambda s, t: triton.next_power_of_2(s["N"]), "next power of 2 >= N")},
    options={"num_warps": 4},
    grid=lambda s, meta: (triton.cdiv(s["M"], ROWS_PER_PROGRAM),),
    flops=lambda s: 5.0 * s["M"] * s["N"],
    bytes=lambda s: 2.0 * 2 * s["M"] * s["N"],
    reference=softmax_reference,
    baseline=torch_softmax,
    default_pair=("stages1", "stages4"),
)
