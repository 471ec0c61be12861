"""A matmul with a planted bug, for the runner's correctness check (``irdiff tests/suites/planted_bug.py``).

``half_k`` subtracts the K offset twice in its K mask (``ks < K - k0 - k0``), so a step at offset ``k0`` loads only
``K - 2 * k0`` of its ``BLOCK_SIZE_K`` columns: the first half of K is accumulated, the second half is masked to
zero. On random inputs the result's relative Frobenius error against ``A @ B`` is about ``sqrt(1/2) = 0.707``.
``correct`` is the built-in matmul suite's unannotated kernel.
"""

from __future__ import annotations

import triton
import triton.language as tl

from irdiff.suite import Suite, Variant
from irdiff.suites.matmul import CONFIGS, matmul_args, matmul_kernel_unannotated, matmul_reference, torch_matmul


@triton.jit
def matmul_half_k(
    a_ptr, b_ptr, c_ptr, M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE: tl.constexpr,
):  # fmt: skip
    pid = tl.program_id(0)
    grid_m = tl.cdiv(M, BLOCK_SIZE_M)
    grid_n = tl.cdiv(N, BLOCK_SIZE_N)
    pid_m, pid_n = tl.swizzle2d(pid // grid_n, pid % grid_n, grid_m, grid_n, GROUP_SIZE)
    rows = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    cols = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    ks = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + rows[:, None] * stride_am + ks[None, :] * stride_ak
    b_ptrs = b_ptr + ks[:, None] * stride_bk + cols[None, :] * stride_bn
    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k0 in tl.range(0, K, BLOCK_SIZE_K):
        k_left = K - k0
        k_ok = ks < k_left - k0  # BUG: the offset k0 is subtracted a second time
        a = tl.load(a_ptrs, mask=(rows[:, None] < M) & k_ok[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=k_ok[:, None] & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    c_ptrs = c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(rows[:, None] < M) & (cols[None, :] < N))


suite = Suite(
    name="planted-bug",
    description="matmul whose K mask subtracts the K offset twice (half of K accumulated)",
    variants={
        "half_k": Variant(matmul_half_k, "K mask `ks < K - k0 - k0`: only the first half of K is accumulated"),
        "correct": Variant(matmul_kernel_unannotated, "the matmul suite's unannotated kernel"),
    },
    args=matmul_args,
    shape={"M": 1024, "N": 1024, "K": 1024},
    configs=CONFIGS,
    default_config=2,
    grid=lambda s, meta: (triton.cdiv(s["M"], meta["BLOCK_SIZE_M"]) * triton.cdiv(s["N"], meta["BLOCK_SIZE_N"]),),
    flops=lambda s: 2.0 * s["M"] * s["N"] * s["K"],
    bytes=lambda s: 2.0 * (s["M"] * s["K"] + s["K"] * s["N"] + s["M"] * s["N"]),
    reference=matmul_reference,
    baseline=torch_matmul,
    default_pair=("half_k", "correct"),
)
