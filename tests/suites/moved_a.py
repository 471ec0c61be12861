"""A small tiled matmul, used by tests/test_align.py: ``sub/moved_b.py`` is the same kernel moved to another file,
shifted down by comments and blank lines, with the local ``acc`` renamed; normalized stages must diff to zero."""

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def moved_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * N + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptrs, mask=rk[None, :] < K - k, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < K - k, other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BK
        b_ptrs += BK * N
    c = acc.to(tl.float16)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], c, mask=(rm[:, None] < M) & (rn[None, :] < N))


suite = Suite(
    name="moved",
    variants={"v": Variant(moved_kernel, "original location")},
    args=lambda s: {
        "a_ptr": Tensor((s["M"], s["K"]), "fp16"),
        "b_ptr": Tensor((s["K"], s["N"]), "fp16"),
        "c_ptr": Tensor((s["M"], s["N"]), "fp16", output=True),
        "M": s["M"],
        "N": s["N"],
        "K": s["K"],
    },
    shape={"M": 256, "N": 256, "K": 256},
    constexprs={"BM": 64, "BN": 64, "BK": 32},
    options={"num_warps": 4, "num_stages": 3},
    grid=lambda s, meta: (triton.cdiv(s["M"], meta["BM"]), triton.cdiv(s["N"], meta["BN"])),
)
