"""``persistent-matmul``: one output tile per program vs. a persistent tile loop (seed 001).

Written from the description of Triton's tutorial ``09-persistent-matmul.py`` (fp16, ``M = N = K = 4096``,
tiles 128x256x64, ``GROUP_SIZE_M`` 8, 8 warps, 3 stages):

- ``tiled``: one program per output tile, the K loop advancing the A/B pointers (the tutorial's ``matmul_kernel``).
- ``persistent``: ``NUM_SMS`` programs; each walks the tiles ``pid, pid + NUM_SMS, ...`` in a
  ``tl.range(..., flatten=True)`` loop. The tile's row/column offsets are computed once per tile, outside the K
  loop, and the epilogue stores each tile (the tutorial's ``matmul_kernel_persistent``).
- ``persistent-noflatten``: the same kernel with ``flatten=False`` (the control).

With ``flatten=True`` the NVIDIA backend fuses the tile loop and the K loop into one loop
(``TritonGPUFuseNestedLoops``, run for capability 8x and 9x in ``make_ttgir``). The column offsets of B then become
loop-carried values redefined under an ``scf.if``; the pipeliner's axis analysis loses their contiguity, so the
B load is 16 bits wide, "too small for pipelining" (``triton-loop-pipeline`` debug log), and only A is copied with
``cp.async`` (3 ``ttg.async_copy_global_to_local`` in TTGIR instead of 6).

``NUM_SMS`` is a constexpr resolved per target (:func:`irdiff.suite.by_target`): the SM count of the usual
data-centre part of that architecture.
"""

from __future__ import annotations

from typing import Any

import triton
import triton.language as tl

from irdiff.suite import Suite, Variant, by_target
from irdiff.suites.matmul import matmul_args

# SM count of the data-centre GPU of each architecture: A100 (sm80), A40 (sm86), L40S (sm89), H100/H200 SXM (sm90),
# B200 (sm100), RTX PRO 6000 Blackwell (sm120). The runner may override it with the measured device's count.
NUM_SMS = by_target({"sm80": 108, "sm86": 84, "sm89": 142, "sm90": 132, "sm100": 148, "sm120": 188})


@triton.jit
def _tile_position(tile_id, num_pid_m, num_pid_n, GROUP_SIZE_M: tl.constexpr):
    """Row and column of output tile ``tile_id`` in grouped order: ``GROUP_SIZE_M`` tile rows are walked
    column by column, so programs running at the same time share A rows and B columns in L2."""
    tiles_per_group = GROUP_SIZE_M * num_pid_n
    group = tile_id // tiles_per_group
    first_row = group * GROUP_SIZE_M
    rows_here = min(num_pid_m - first_row, GROUP_SIZE_M)
    in_group = tile_id % tiles_per_group
    return first_row + in_group % rows_here, in_group // rows_here


@triton.jit
def _tile_offsets(pid_m, pid_n, M, N, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    """Row offsets of A and column offsets of B for one tile. Rows/columns past the edge are clamped to 0 (the
    store masks them), so the loads need no M/N mask, and the hints tell the compiler each block of offsets is
    contiguous and starts at a multiple of the block size."""
    rows = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    cols = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    rows = tl.max_contiguous(tl.multiple_of(tl.where(rows < M, rows, 0), BLOCK_SIZE_M), BLOCK_SIZE_M)
    cols = tl.max_contiguous(tl.multiple_of(tl.where(cols < N, cols, 0), BLOCK_SIZE_N), BLOCK_SIZE_N)
    return rows, cols


@triton.jit
def _store_tile(
    c_ptr, acc, pid_m, pid_n, M, N, stride_cm, stride_cn, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr
):
    rows = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    cols = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    ptrs = c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn
    tl.store(ptrs, acc.to(c_ptr.dtype.element_ty), mask=(rows[:, None] < M) & (cols[None, :] < N))


@triton.jit
def matmul_tiled(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    stride_cm,
    stride_cn,
    BLOCK_SIZE_M: tl.constexpr,
    BLOCK_SIZE_N: tl.constexpr,
    BLOCK_SIZE_K: tl.constexpr,
    GROUP_SIZE_M: tl.constexpr,
):
    """``C[M, N] = A[M, K] @ B[K, N]``, one program per 128x256 output tile."""
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    pid_m, pid_n = _tile_position(tl.program_id(0), num_pid_m, num_pid_n, GROUP_SIZE_M)
    rows, cols = _tile_offsets(pid_m, pid_n, M, N, BLOCK_SIZE_M, BLOCK_SIZE_N)
    ks = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + rows[:, None] * stride_am + ks[None, :] * stride_ak
    b_ptrs = b_ptr + ks[:, None] * stride_bk + cols[None, :] * stride_bn

    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k_step in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        k_left = K - k_step * BLOCK_SIZE_K
        a = tl.load(a_ptrs, mask=ks[None, :] < k_left, other=0.0)
        b = tl.load(b_ptrs, mask=ks[:, None] < k_left, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk

    _store_tile(c_ptr, acc, pid_m, pid_n, M, N, stride_cm, stride_cn, BLOCK_SIZE_M, BLOCK_SIZE_N)


@triton.jit
def matmul_persistent(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    stride_cm,
    stride_cn,
    BLOCK_SIZE_M: tl.constexpr,
    BLOCK_SIZE_N: tl.constexpr,
    BLOCK_SIZE_K: tl.constexpr,
    GROUP_SIZE_M: tl.constexpr,
    NUM_SMS: tl.constexpr,
    FLATTEN: tl.constexpr,
):
    """``C[M, N] = A[M, K] @ B[K, N]`` with ``NUM_SMS`` programs, each looping over every ``NUM_SMS``-th tile;
    ``FLATTEN`` asks the compiler to fuse the tile loop with the K loop."""
    first_tile = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_tiles = num_pid_m * num_pid_n
    k_steps = tl.cdiv(K, BLOCK_SIZE_K)
    ks = tl.arange(0, BLOCK_SIZE_K)
    # The epilogue recomputes its tile from a counter of its own, as the tutorial does (a value used both before
    # and after the K loop trips the Blackwell pipeliner).
    store_tile = first_tile - NUM_SMS

    for tile_id in tl.range(first_tile, num_tiles, NUM_SMS, flatten=FLATTEN):
        pid_m, pid_n = _tile_position(tile_id, num_pid_m, num_pid_n, GROUP_SIZE_M)
        rows, cols = _tile_offsets(pid_m, pid_n, M, N, BLOCK_SIZE_M, BLOCK_SIZE_N)

        acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
        for k_step in range(k_steps):
            k_offs = k_step * BLOCK_SIZE_K + ks
            k_left = K - k_step * BLOCK_SIZE_K
            a_ptrs = a_ptr + rows[:, None] * stride_am + k_offs[None, :] * stride_ak
            b_ptrs = b_ptr + k_offs[:, None] * stride_bk + cols[None, :] * stride_bn
            a = tl.load(a_ptrs, mask=ks[None, :] < k_left, other=0.0)
            b = tl.load(b_ptrs, mask=ks[:, None] < k_left, other=0.0)
            acc = tl.dot(a, b, acc)

        store_tile += NUM_SMS
        pid_m, pid_n = _tile_position(store_tile, num_pid_m, num_pid_n, GROUP_SIZE_M)
        _store_tile(c_ptr, acc, pid_m, pid_n, M, N, stride_cm, stride_cn, BLOCK_SIZE_M, BLOCK_SIZE_N)


def _grid(shape: dict[str, int], meta: dict[str, Any]) -> tuple[int, ...]:
    """One program per tile (``tiled``), or ``min(NUM_SMS, tiles)`` programs (persistent variants)."""
    tiles = triton.cdiv(shape["M"], meta["BLOCK_SIZE_M"]) * triton.cdiv(shape["N"], meta["BLOCK_SIZE_N"])
    if "NUM_SMS" in meta:
        return (min(meta["NUM_SMS"], tiles),)
    return (tiles,)


def persistent_matmul_reference(inputs: dict[str, Any], shape: dict[str, int]) -> dict[str, Any]:
    """``C = A @ B`` in float64 (torch), for the output parameter ``c_ptr``."""
    return {"c_ptr": inputs["a_ptr"].double() @ inputs["b_ptr"].double()}


def torch_matmul(inputs: dict[str, Any], shape: dict[str, int]) -> Any:
    """``torch.matmul(A, B)`` in fp16 (cuBLAS): the library speed the runner shows beside the variants."""
    import torch

    return torch.matmul(inputs["a_ptr"], inputs["b_ptr"])


suite = Suite(
    name="persistent-matmul",
    description="fp16 GEMM 4096^3: one program per tile vs. a persistent, flattened tile loop (seed 001)",
    variants={
        "tiled": Variant(matmul_tiled, "one program per 128x256 output tile, K loop inside"),
        "persistent": Variant(
            matmul_persistent,
            "NUM_SMS programs loop over tiles with tl.range(..., flatten=True)",
            constexprs={"NUM_SMS": NUM_SMS, "FLATTEN": True},
        ),
        "persistent-noflatten": Variant(
            matmul_persistent,
            "the persistent kernel with flatten=False: tile loop and K loop stay nested",
            constexprs={"NUM_SMS": NUM_SMS, "FLATTEN": False},
        ),
    },
    args=matmul_args,
    shape={"M": 4096, "N": 4096, "K": 4096},
    constexprs={"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 8},
    options={"num_warps": 8, "num_stages": 3},
    grid=_grid,
    flops=lambda s: 2.0 * s["M"] * s["N"] * s["K"],
    bytes=lambda s: 2.0 * (s["M"] * s["K"] + s["K"] * s["N"] + s["M"] * s["N"]),
    reference=persistent_matmul_reference,
    baseline=torch_matmul,
    default_pair=("persistent", "tiled"),
)
