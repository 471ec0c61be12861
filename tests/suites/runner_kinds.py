"""Kernels of the kinds the runner must handle (issue 20), written for irdiff's tests and the H200 acceptance run.

- ``splitk-fp32`` / ``splitk-bf16``: split-K matmul, each K slice ``tl.atomic_add``-ed into the output (which must
  start at zero), against a one-pass matmul that stores its tile. ``splitk-nan`` is the same kernels with the
  output left at the default NaN start: the runner must refuse it and say why.
  ``rmw`` reads C with ``tl.load`` and stores it back for every K slice (the same need, without atomics).
- ``histogram``: integer ``tl.atomic_add`` per element against a per-program ``tl.histogram`` then one atomic add
  per bin (i32 counts starting at zero).
- ``hint-fault``: a copy with an offset of 3 elements; ``hinted`` claims (``tl.multiple_of``/``tl.max_contiguous``)
  the offsets are multiples of 16, so it loads 16 bytes at a time from addresses that are only 4-byte aligned: a
  "misaligned address" fault on the GPU (the interpreter does not check alignment).
- ``tma``: a matmul reading A and B through ``tl.make_tensor_descriptor`` (needs Triton's allocator for the
  descriptors) against plain pointers.
- ``padded-rows`` / ``padded-rows-nocompare``: a row scaling whose ``padded`` variant writes rows padded to a
  power of two (the padding zeroed); the first suite compares the common region, the second says nothing.
- ``dot-precision``: an fp32 ``tl.dot`` with ``input_precision="tf32"`` against ``"ieee"``.
- ``no-reference``: two copies without a reference (they can only agree with each other).
- ``crash``: a copy loading 2**40 elements past its input: an illegal address on the GPU, a segfault of the
  interpreter's process.
"""

from __future__ import annotations

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant

# ------------------------------------------------------------------------------------------------ split-K


@triton.jit
def splitk_atomic(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                  SPLIT: tl.constexpr):  # fmt: skip
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    pid_k = tl.program_id(2)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    k_per = tl.cdiv(K, SPLIT)
    for k0 in range(pid_k * k_per, (pid_k + 1) * k_per, BK):
        rk = k0 + tl.arange(0, BK)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.atomic_add(c_ptr + rm[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty), mask=mask)


@triton.jit
def splitk_direct(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                  SPLIT: tl.constexpr):  # fmt: skip
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + tl.arange(0, BK)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty), mask=mask)


@triton.jit
def splitk_rmw(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
               SPLIT: tl.constexpr):  # fmt: skip
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    c_ptrs = c_ptr + rm[:, None] * N + rn[None, :]
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    for k0 in range(0, K, BK):  # C += A[:, k0:k0+BK] @ B[k0:k0+BK, :] through C itself, one slice at a time
        rk = k0 + tl.arange(0, BK)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        c = tl.load(c_ptrs, mask=mask, other=0.0).to(tl.float32)
        tl.store(c_ptrs, tl.dot(a, b, c).to(c_ptr.dtype.element_ty), mask=mask)


def _splitk_suite(name: str, out_dtype: str, init: object) -> Suite:
    def args(s: dict[str, int]) -> dict[str, object]:
        return {
            "a_ptr": Tensor((s["M"], s["K"]), "fp16"),
            "b_ptr": Tensor((s["K"], s["N"]), "fp16"),
            "c_ptr": Tensor((s["M"], s["N"]), out_dtype, output=True, init=init),
            "M": s["M"],
            "N": s["N"],
            "K": s["K"],
        }

    def reference(inputs: dict, shape: dict[str, int]) -> dict:
        return {"c_ptr": inputs["c_ptr"].double() + inputs["a_ptr"].double() @ inputs["b_ptr"].double()}

    return Suite(
        name=name,
        description=f"split-K matmul accumulating with tl.atomic_add into a {out_dtype} output",
        variants={
            "splitk": Variant(splitk_atomic, "4 K slices, each atomically added into C", constexprs={"SPLIT": 4}),
            "direct": Variant(splitk_direct, "one pass over K, C stored", constexprs={"SPLIT": 1}),
            "rmw": Variant(splitk_rmw, "C loaded, added to and stored back per K slice", constexprs={"SPLIT": 1}),
        },
        args=args,
        shape={"M": 64, "N": 64, "K": 256},
        constexprs={"BM": 32, "BN": 32, "BK": 32},
        grid=lambda s, m: (triton.cdiv(s["M"], m["BM"]), triton.cdiv(s["N"], m["BN"]), m["SPLIT"]),
        flops=lambda s: 2.0 * s["M"] * s["N"] * s["K"],
        reference=reference,
        default_pair=("splitk", "direct"),
    )


splitk_fp32 = _splitk_suite("splitk-fp32", "fp32", "zeros")
splitk_bf16 = _splitk_suite("splitk-bf16", "bf16", "zeros")
splitk_nan = _splitk_suite("splitk-nan", "fp32", None)

# ------------------------------------------------------------------------------------------------ histogram


@triton.jit
def hist_atomic(x_ptr, h_ptr, N, BINS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < N
    x = tl.load(x_ptr + offs, mask=m, other=0).to(tl.int32)
    tl.atomic_add(h_ptr + x, tl.full((BLOCK,), 1, tl.int32), mask=m)


@triton.jit
def hist_private(x_ptr, h_ptr, N, BINS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < N
    x = tl.load(x_ptr + offs, mask=m, other=0).to(tl.int32)
    x = tl.where(m, x, BINS)  # masked lanes fall outside the bins
    h = tl.histogram(x, BINS)
    tl.atomic_add(h_ptr + tl.arange(0, BINS), h)


def _hist_args(s: dict[str, int]) -> dict[str, object]:
    return {"x_ptr": Tensor((s["N"],), "u8"), "h_ptr": Tensor((16,), "i32", output=True, init="zeros"), "N": s["N"]}


def _hist_reference(inputs: dict, shape: dict[str, int]) -> dict:
    import torch

    return {"h_ptr": inputs["h_ptr"] + torch.bincount(inputs["x_ptr"].long(), minlength=16).to(torch.int32)}


histogram = Suite(
    name="histogram",
    description="16-bin histogram of u8 values with integer atomics",
    variants={
        "atomic": Variant(hist_atomic, "one tl.atomic_add per element"),
        "private": Variant(hist_private, "tl.histogram per program, one atomic add per bin"),
    },
    args=_hist_args,
    shape={"N": 4096},
    constexprs={"BINS": 16, "BLOCK": 1024},
    grid=lambda s, m: (triton.cdiv(s["N"], m["BLOCK"]),),
    reference=_hist_reference,
    default_pair=("atomic", "private"),
)

# ------------------------------------------------------------------------------------------------ wrong hint


@triton.jit
def copy_hinted(x_ptr, y_ptr, N, OFF, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    src = tl.max_contiguous(tl.multiple_of(i + OFF, 16), 16)  # wrong: OFF is 3, the offsets are not multiples of 16
    y = tl.load(x_ptr + src)
    tl.store(y_ptr + i, y)


@triton.jit
def copy_plain(x_ptr, y_ptr, N, OFF, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    y = tl.load(x_ptr + i + OFF)
    tl.store(y_ptr + i, y)


def _copy_args(s: dict[str, int]) -> dict[str, object]:
    return {"x_ptr": Tensor((s["N"] + 16,), "fp32"), "y_ptr": Tensor((s["N"],), "fp32", output=True), "N": s["N"],
            "OFF": 3}  # fmt: skip


hint_fault = Suite(
    name="hint-fault",
    description="an offset copy whose hinted variant claims 16-element alignment it does not have",
    variants={
        "hinted": Variant(copy_hinted, "tl.multiple_of(i + OFF, 16): 16-byte loads from 4-byte aligned addresses"),
        "plain": Variant(copy_plain, "no hint"),
    },
    args=_copy_args,
    shape={"N": 4096},
    constexprs={"BLOCK": 1024},
    grid=lambda s, m: (triton.cdiv(s["N"], m["BLOCK"]),),
    bytes=lambda s: 8.0 * s["N"],
    reference=lambda inp, s: {"y_ptr": inp["x_ptr"][3 : 3 + s["N"]].double()},
    default_pair=("hinted", "plain"),
)

# ------------------------------------------------------------------------------------------------ TMA descriptors


@triton.jit
def mm_descriptor(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BK, BN])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    om = tl.program_id(0) * BM
    on = tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        acc = tl.dot(a_desc.load([om, k0]), b_desc.load([k0, on]), acc)
    c_desc.store([om, on], acc.to(tl.float16))


@triton.jit
def mm_pointers(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + tl.arange(0, BK)
        acc = tl.dot(
            tl.load(a_ptr + rm[:, None] * K + rk[None, :]), tl.load(b_ptr + rk[:, None] * N + rn[None, :]), acc
        )
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


def _mm_args(s: dict[str, int]) -> dict[str, object]:
    return {"a_ptr": Tensor((s["M"], s["K"]), "fp16"), "b_ptr": Tensor((s["K"], s["N"]), "fp16"),
            "c_ptr": Tensor((s["M"], s["N"]), "fp16", output=True), "M": s["M"], "N": s["N"], "K": s["K"]}  # fmt: skip


tma = Suite(
    name="tma",
    description="fp16 matmul through tl.make_tensor_descriptor (TMA on sm90) against plain pointers",
    variants={
        "descriptor": Variant(mm_descriptor, "A, B and C through tensor descriptors"),
        "pointers": Variant(mm_pointers, "A, B and C through pointer tensors"),
    },
    args=_mm_args,
    shape={"M": 64, "N": 64, "K": 64},
    constexprs={"BM": 32, "BN": 32, "BK": 32},
    grid=lambda s, m: (triton.cdiv(s["M"], m["BM"]), triton.cdiv(s["N"], m["BN"])),
    flops=lambda s: 2.0 * s["M"] * s["N"] * s["K"],
    reference=lambda inp, s: {"c_ptr": inp["a_ptr"].double() @ inp["b_ptr"].double()},
    default_pair=("descriptor", "pointers"),
)

# ------------------------------------------------------------------------------------------------ padded rows


@triton.jit
def scale_rows(x_ptr, y_ptr, N, OUT_STRIDE, BLOCK: tl.constexpr, PAD: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0)
    y = x * 2.0
    if PAD:
        tl.store(y_ptr + row * OUT_STRIDE + cols, tl.where(cols < N, y, 0.0))  # padding columns zeroed
    else:
        tl.store(y_ptr + row * OUT_STRIDE + cols, y, mask=cols < N)


def _rows_args(pad: bool):  # type: ignore[no-untyped-def]
    def args(s: dict[str, int]) -> dict[str, object]:
        width = triton.next_power_of_2(s["N"]) if pad else s["N"]
        return {"x_ptr": Tensor((s["M"], s["N"]), "fp32"), "y_ptr": Tensor((s["M"], width), "fp32", output=True),
                "N": s["N"], "OUT_STRIDE": width}  # fmt: skip

    return args


def _rows_suite(name: str, compare: object) -> Suite:
    return Suite(
        name=name,
        description="row scaling; the padded variant writes rows padded to a power of two",
        variants={
            "padded": Variant(
                scale_rows,
                "rows of next_power_of_2(N), padding zeroed",
                constexprs={"PAD": True},
                args=_rows_args(True),
            ),  # fmt: skip
            "exact": Variant(scale_rows, "rows of N", constexprs={"PAD": False}, args=_rows_args(False)),
        },
        args=_rows_args(False),
        shape={"M": 8, "N": 100},
        constexprs={"BLOCK": 128},
        grid=lambda s, m: (s["M"],),
        reference=lambda inp, s: {"y_ptr": inp["x_ptr"].double() * 2.0},
        compare=compare,
        default_pair=("padded", "exact"),
    )


padded_rows = _rows_suite("padded-rows", "common")
padded_rows_nocompare = _rows_suite("padded-rows-nocompare", None)

# ------------------------------------------------------------------------------------------------ TF32 vs IEEE


@triton.jit
def dot_fp32(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
             PRECISION: tl.constexpr):  # fmt: skip
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + tl.arange(0, BK)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


dot_precision = Suite(
    name="dot-precision",
    description="fp32 tl.dot with TF32 inputs against IEEE fp32",
    variants={
        "tf32": Variant(dot_fp32, "input_precision='tf32'", constexprs={"PRECISION": "tf32"}),
        "ieee": Variant(dot_fp32, "input_precision='ieee'", constexprs={"PRECISION": "ieee"}),
    },
    args=lambda s: {
        "a_ptr": Tensor((s["M"], s["K"]), "fp32"),
        "b_ptr": Tensor((s["K"], s["N"]), "fp32"),
        "c_ptr": Tensor((s["M"], s["N"]), "fp32", output=True),
        "M": s["M"],
        "N": s["N"],
        "K": s["K"],
    },  # fmt: skip
    shape={"M": 64, "N": 64, "K": 64},
    constexprs={"BM": 32, "BN": 32, "BK": 32},
    grid=lambda s, m: (triton.cdiv(s["M"], m["BM"]), triton.cdiv(s["N"], m["BN"])),
    flops=lambda s: 2.0 * s["M"] * s["N"] * s["K"],
    reference=lambda inp, s: {"c_ptr": inp["a_ptr"].double() @ inp["b_ptr"].double()},
    default_pair=("tf32", "ieee"),
)

# ------------------------------------------------------------------------------------------------ no reference

no_reference = Suite(
    name="no-reference",
    description="two offset copies and no reference: they can only agree with each other",
    variants={"plain": Variant(copy_plain, "no hint"), "again": Variant(copy_plain, "the same kernel")},
    args=_copy_args,
    shape={"N": 2048},
    constexprs={"BLOCK": 1024},
    grid=lambda s, m: (triton.cdiv(s["N"], m["BLOCK"]),),
    default_pair=("plain", "again"),
)

# ------------------------------------------------------------------------------------------------ a fault


@triton.jit
def copy_wild(x_ptr, y_ptr, N, OFF, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    far = i.to(tl.int64) * (1 << 40)  # far outside any allocation: an illegal address (a segfault when interpreted)
    tl.store(y_ptr + i, tl.load(x_ptr + far))


crash = Suite(
    name="crash",
    description="a copy reading terabytes past its input: the process running it faults",
    variants={"wild": Variant(copy_wild, "loads 2**40 elements apart"), "plain": Variant(copy_plain, "no hint")},
    args=_copy_args,
    shape={"N": 2048},
    constexprs={"BLOCK": 1024},
    grid=lambda s, m: (triton.cdiv(s["N"], m["BLOCK"]),),
    bytes=lambda s: 8.0 * s["N"],
    reference=lambda inp, s: {"y_ptr": inp["x_ptr"][3 : 3 + s["N"]].double()},
    default_pair=("wild", "plain"),
)
