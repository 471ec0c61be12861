"""A strided 2-D copy with three autotune configs, for ``irdiff SUITE --all-configs``.

``unit`` leaves the column stride unannotated, so the JIT specializes the 1 the example passes into a constant and
loads along a row can be vectorized; ``annotated`` declares it ``int`` (a runtime i32). With ``BLOCK_N=1`` the two
compile alike apart from stage 0; with wider rows the vector width differs.
"""

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def copy_rows(x_ptr, y_ptr, M, N, stride_m, stride_n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * stride_m + rn[None, :] * stride_n, mask=mask)
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], x, mask=mask)


@triton.jit
def copy_rows_annotated(x_ptr, y_ptr, M, N, stride_m, stride_n: int, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * stride_m + rn[None, :] * stride_n, mask=mask)
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], x, mask=mask)


suite = Suite(
    name="configs-copy",
    variants={"unit": Variant(copy_rows), "annotated": Variant(copy_rows_annotated)},
    args=lambda s: {
        "x_ptr": Tensor((s["M"], s["N"]), "fp16"),
        "y_ptr": Tensor((s["M"], s["N"]), "fp16", output=True),
        "M": s["M"],
        "N": s["N"],
        "stride_m": s["N"],
        "stride_n": 1,
    },
    shape={"M": 256, "N": 512},
    configs=[
        {"BLOCK_M": 32, "BLOCK_N": 1, "num_warps": 1},
        {"BLOCK_M": 16, "BLOCK_N": 128, "num_warps": 2},
        {"BLOCK_M": 32, "BLOCK_N": 64, "num_warps": 4},
    ],
    default_config=0,
    default_pair=("annotated", "unit"),
    grid=lambda s, meta: (triton.cdiv(s["M"], meta["BLOCK_M"]), triton.cdiv(s["N"], meta["BLOCK_N"])),
)
