import triton, triton.language as tl
from irdiff.suite import Suite, Tensor, Variant


# --- 1. gather every other element (stride 2) vs contiguous -------------------------------
@triton.jit
def scale_unit(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(out_ptr + offs, x * 2.0, mask=m)


@triton.jit
def scale_strided(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs * 2, mask=m)
    tl.store(out_ptr + offs, x * 2.0, mask=m)


stride = Suite(
    name="stride",
    variants={"unit": Variant(scale_unit), "strided": Variant(scale_strided)},
    args=lambda s: {"x_ptr": Tensor((2 * s["N"],), "fp32"),
                    "out_ptr": Tensor((s["N"],), "fp32", output=True), "n": s["N"]},
    shape={"N": 1 << 20},
    constexprs={"BLOCK": 1024},
    options={"num_warps": 4},
    grid=lambda s, meta: (triton.cdiv(s["N"], meta["BLOCK"]),),
)


# --- 2. fp32 matmul: tl.dot input_precision ieee vs tf32 ----------------------------------
@triton.jit
def mm_ieee(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc, input_precision="ieee")
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


@triton.jit
def mm_tf32(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc, input_precision="tf32")
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


dotprec = Suite(
    name="dotprec",
    variants={"ieee": Variant(mm_ieee), "tf32": Variant(mm_tf32)},
    args=lambda s: {"a_ptr": Tensor((s["M"], s["K"]), "fp32"), "b_ptr": Tensor((s["K"], s["N"]), "fp32"),
                    "c_ptr": Tensor((s["M"], s["N"]), "fp32", output=True),
                    "M": s["M"], "N": s["N"], "K": s["K"]},
    shape={"M": 512, "N": 512, "K": 512},
    constexprs={"BM": 64, "BN": 64, "BK": 32},
    options={"num_warps": 4, "num_stages": 3},
    grid=lambda s, meta: (s["M"] // meta["BM"], s["N"] // meta["BN"]),
    reference=lambda inputs, s: {"c_ptr": inputs["a_ptr"] @ inputs["b_ptr"]},
)
