"""Row-statistics loops for the unit tests of the loop rules (``tests/test_rule_loops.py``), a second kernel family
beside ``tests/suites/rule_loops.py``: each program walks ``R`` rows (a runtime count) of an fp32 ``[R, 128]`` matrix
and keeps eight running statistics per column (sum, sum of squares, maximum, minimum, absolute sum, positive and
negative sums, a weighted sum): every statistics loop carries eight ``tensor<128xf32>`` values, so its ``scf.for``
header (with its ``iter_args``) is longer than the 240 characters a rule quotes.

``stats``: up to three statistics loops one after another (``LOOPS``), the first two written
``tl.range(0, R, num_stages=S1/S2, loop_unroll_factor=U1/U2)``, the third a plain ``range``; ``TABLES`` loads four
per-column tables (weight, bias, scale, shift) column_is_inside_the_row_of_c_columns_of_the_matrix the first loop (the same addresses every iteration: four
loop-invariant loads) instead of once before it.

- ``two``: two loops, 2 stages each, not unrolled; ``none``: no loop (one row only); ``three``: three loops.
- ``s1``/``s3``/``s2``: the first loop unrolled 2× (its remainder loop, marked ``tt.num_stages = 1``, comes before the
  second loop), the second loop with 1, 3 or 2 stages.
- ``x2x1``/``x2x2``/``x2x4``: the first loop unrolled 2×, the second 1×, 2× or 4×.
- ``tables``: the four tables loaded in the first loop (``two`` loads them before it).

``tiles`` (sm80): a tile loop ``tl.range(0, T, flatten=FLAT)`` around a row loop ``tl.range(0, R, loop_unroll_factor=
UNROLL)``, both carrying the eight statistics: ``tflat`` is fused into one loop by ``TritonGPUFuseNestedLoops``,
``tnest2`` keeps the nest with its inner loop unrolled 2× (three TTGIR loops: outer, unrolled, remainder).
"""

from __future__ import annotations

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def stats(
    x_ptr, weight_table_ptr, bias_table_ptr, scale_table_ptr, shift_table_ptr, out_ptr, R, C: tl.constexpr,
    LOOPS: tl.constexpr, S1: tl.constexpr, S2: tl.constexpr, U1: tl.constexpr, U2: tl.constexpr,
    TABLES: tl.constexpr,
):  # fmt: skip
    cols = tl.arange(0, C)
    # long names on purpose: each table's load line in TTIR is longer than the 240 characters a rule quotes
    column_is_inside_the_row_of_c_columns_of_the_matrix = cols < C
    pointers_to_the_per_column_weight_table_that_the_statistics_loop_reads_again_in_every_row_of_the_input_matrix_x_of_r_rows = (
        weight_table_ptr + cols
    )
    pointers_to_the_per_column_bias_table_that_the_statistics_loop_reads_again_in_every_row_of_the_input_matrix_x_of_r_rows = (
        bias_table_ptr + cols
    )
    pointers_to_the_per_column_scale_table_that_the_statistics_loop_reads_again_in_every_row_of_the_input_matrix_x_of_r_rows = (
        scale_table_ptr + cols
    )
    pointers_to_the_per_column_shift_table_that_the_statistics_loop_reads_again_in_every_row_of_the_input_matrix_x_of_r_rows = (
        shift_table_ptr + cols
    )
    weight = tl.load(
        pointers_to_the_per_column_weight_table_that_the_statistics_loop_reads_again_in_every_row_of_the_input_matrix_x_of_r_rows,
        mask=column_is_inside_the_row_of_c_columns_of_the_matrix,
        other=0.0,
        eviction_policy="evict_last",
    )
    bias = tl.load(
        pointers_to_the_per_column_bias_table_that_the_statistics_loop_reads_again_in_every_row_of_the_input_matrix_x_of_r_rows,
        mask=column_is_inside_the_row_of_c_columns_of_the_matrix,
        other=0.0,
        eviction_policy="evict_last",
    )
    scale = tl.load(
        pointers_to_the_per_column_scale_table_that_the_statistics_loop_reads_again_in_every_row_of_the_input_matrix_x_of_r_rows,
        mask=column_is_inside_the_row_of_c_columns_of_the_matrix,
        other=0.0,
        eviction_policy="evict_last",
    )
    shift = tl.load(
        pointers_to_the_per_column_shift_table_that_the_statistics_loop_reads_again_in_every_row_of_the_input_matrix_x_of_r_rows,
        mask=column_is_inside_the_row_of_c_columns_of_the_matrix,
        other=0.0,
        eviction_policy="evict_last",
    )
    total = tl.zeros([C], tl.float32)
    squares = tl.zeros([C], tl.float32)
    top = tl.full([C], float("-inf"), tl.float32)
    bottom = tl.full([C], float("inf"), tl.float32)
    absolute = tl.zeros([C], tl.float32)
    positive = tl.zeros([C], tl.float32)
    negative = tl.zeros([C], tl.float32)
    weighted = tl.zeros([C], tl.float32)
    if LOOPS == 0:
        v = tl.load(x_ptr + cols)
        total += v
        weighted += v * weight + bias
    if LOOPS >= 1:
        for r in tl.range(0, R, num_stages=S1, loop_unroll_factor=U1):
            if TABLES:
                weight = tl.load(
                    pointers_to_the_per_column_weight_table_that_the_statistics_loop_reads_again_in_every_row_of_the_input_matrix_x_of_r_rows,
                    mask=column_is_inside_the_row_of_c_columns_of_the_matrix,
                    other=0.0,
                    eviction_policy="evict_last",
                )
                bias = tl.load(
                    pointers_to_the_per_column_bias_table_that_the_statistics_loop_reads_again_in_every_row_of_the_input_matrix_x_of_r_rows,
                    mask=column_is_inside_the_row_of_c_columns_of_the_matrix,
                    other=0.0,
                    eviction_policy="evict_last",
                )
                scale = tl.load(
                    pointers_to_the_per_column_scale_table_that_the_statistics_loop_reads_again_in_every_row_of_the_input_matrix_x_of_r_rows,
                    mask=column_is_inside_the_row_of_c_columns_of_the_matrix,
                    other=0.0,
                    eviction_policy="evict_last",
                )
                shift = tl.load(
                    pointers_to_the_per_column_shift_table_that_the_statistics_loop_reads_again_in_every_row_of_the_input_matrix_x_of_r_rows,
                    mask=column_is_inside_the_row_of_c_columns_of_the_matrix,
                    other=0.0,
                    eviction_policy="evict_last",
                )
            v = tl.load(x_ptr + r * C + cols) * scale + shift
            total += v
            squares += v * v
            top = tl.maximum(top, v)
            bottom = tl.minimum(bottom, v)
            absolute += tl.abs(v)
            positive += tl.where(v > 0, v, 0.0)
            negative += tl.where(v < 0, v, 0.0)
            weighted += v * weight + bias
    if LOOPS >= 2:
        for r in tl.range(0, R, num_stages=S2, loop_unroll_factor=U2):
            v = tl.load(x_ptr + r * C + cols)
            total += v
            squares += v * v
            top = tl.maximum(top, v)
            bottom = tl.minimum(bottom, v)
            absolute += tl.abs(v)
            positive += tl.where(v > 0, v, 0.0)
            negative += tl.where(v < 0, v, 0.0)
            weighted += v * weight
    if LOOPS >= 3:
        for r in range(0, R):
            v = tl.load(x_ptr + r * C + cols)
            total += v
            squares += v * v
            top = tl.maximum(top, v)
            bottom = tl.minimum(bottom, v)
            absolute += tl.abs(v)
            positive += tl.where(v > 0, v, 0.0)
            negative += tl.where(v < 0, v, 0.0)
            weighted += v * bias
    tl.store(out_ptr + cols, total)
    tl.store(out_ptr + C + cols, squares)
    tl.store(out_ptr + 2 * C + cols, top)
    tl.store(out_ptr + 3 * C + cols, bottom)
    tl.store(out_ptr + 4 * C + cols, absolute)
    tl.store(out_ptr + 5 * C + cols, positive)
    tl.store(out_ptr + 6 * C + cols, negative)
    tl.store(out_ptr + 7 * C + cols, weighted)


@triton.jit
def tiles(x_ptr, out_ptr, T, R, C: tl.constexpr, FLAT: tl.constexpr, UNROLL: tl.constexpr):
    cols = tl.arange(0, C)
    total = tl.zeros([C], tl.float32)
    squares = tl.zeros([C], tl.float32)
    top = tl.full([C], float("-inf"), tl.float32)
    bottom = tl.full([C], float("inf"), tl.float32)
    absolute = tl.zeros([C], tl.float32)
    positive = tl.zeros([C], tl.float32)
    negative = tl.zeros([C], tl.float32)
    weighted = tl.zeros([C], tl.float32)
    for t in tl.range(0, T, flatten=FLAT):
        for r in tl.range(0, R, loop_unroll_factor=UNROLL):
            v = tl.load(x_ptr + (t * R + r) * C + cols)
            total += v
            squares += v * v
            top = tl.maximum(top, v)
            bottom = tl.minimum(bottom, v)
            absolute += tl.abs(v)
            positive += tl.where(v > 0, v, 0.0)
            negative += tl.where(v < 0, v, 0.0)
            weighted += v * r
        base = out_ptr + t * 8 * C
        tl.store(base + cols, total)
        tl.store(base + C + cols, squares)
        tl.store(base + 2 * C + cols, top)
        tl.store(base + 3 * C + cols, bottom)
        tl.store(base + 4 * C + cols, absolute)
        tl.store(base + 5 * C + cols, positive)
        tl.store(base + 6 * C + cols, negative)
        tl.store(base + 7 * C + cols, weighted)


def _s(loops: int = 2, s1: int = 2, s2: int = 2, u1: int = 1, u2: int = 1, tables: bool = False) -> Variant:
    return Variant(
        stats,
        constexprs={"C": 128, "LOOPS": loops, "S1": s1, "S2": s2, "U1": u1, "U2": u2, "TABLES": tables},
    )


def _t(flat: bool, unroll: int) -> Variant:
    return Variant(tiles, constexprs={"C": 128, "FLAT": flat, "UNROLL": unroll}, args=_tile_args)


def _args(s: dict[str, int]) -> dict[str, object]:
    return {
        "x_ptr": Tensor((s["R"] * 4, 128), "fp32"),
        "weight_table_ptr": Tensor((128,), "fp32"),
        "bias_table_ptr": Tensor((128,), "fp32"),
        "scale_table_ptr": Tensor((128,), "fp32"),
        "shift_table_ptr": Tensor((128,), "fp32"),
        "out_ptr": Tensor((8, 128), "fp32", output=True),
        "R": s["R"],
    }


def _tile_args(s: dict[str, int]) -> dict[str, object]:
    return {
        "x_ptr": Tensor((s["R"] * 4, 128), "fp32"),
        "out_ptr": Tensor((32, 128), "fp32", output=True),
        "T": 4,
        "R": s["R"],
    }


suite = Suite(
    name="rule-loops-stats",
    variants={
        "two": _s(),
        "none": _s(loops=0),
        "three": _s(loops=3),
        "s1": _s(u1=2, s2=1),
        "s3": _s(u1=2, s2=3),
        "s2": _s(u1=2, s2=2),
        "x2x1": _s(u1=2),
        "x2x2": _s(u1=2, u2=2),
        "x2x4": _s(u1=2, u2=4),
        "tables": _s(tables=True),
        "tflat": _t(True, 1),
        "tnest2": _t(False, 2),
    },
    args=_args,
    shape={"R": 64},
    options={"num_warps": 4},
    grid=lambda s, meta: (1,),
)
