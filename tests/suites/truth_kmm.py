"""Kernels for ``tests/test_truth_findings.py``: statements the findings make about these variants must be true of
these variants (the precision a register note names, the limiter an occupancy link follows, the operand whose copies
are narrow, the pipelining depth a lowering needs, each SASS instruction counted once).

``kmm``: a K-loop product of a 64×BK tile of A by a BK×64 tile of B (fp32 in memory), accumulated in fp32,
``num_stages`` 4. ``PREC`` is ``tl.dot``'s ``input_precision`` (``ieee``, ``tf32``, ``tf32x3``) or ``f16``/``bf16``
(both operands converted with ``.to`` before the dot); ``LAY`` is how A and B are stored: ``nn`` (A row-major: K
contiguous; B row-major: N contiguous) or ``tn`` (A column-major: M contiguous; B column-major: K contiguous).

``rowmax``: the maximum of each row of a 2048-wide fp32 matrix, ``num_warps`` 2, 4 or 8 (options only).
"""

from __future__ import annotations

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant


@triton.jit
def kmm(a_ptr, b_ptr, c_ptr, M, N, K, BK: tl.constexpr, PREC: tl.constexpr, LAY: tl.constexpr):
    om = tl.program_id(0) * 64 + tl.arange(0, 64)
    on = tl.program_id(1) * 64 + tl.arange(0, 64)
    ok = tl.arange(0, BK)
    acc = tl.zeros((64, 64), dtype=tl.float32)
    for k0 in range(0, K, BK):
        if LAY == "tn":
            x = tl.load(a_ptr + om[:, None] + (k0 + ok)[None, :] * M)
            y = tl.load(b_ptr + (k0 + ok)[:, None] + on[None, :] * K)
        else:
            x = tl.load(a_ptr + om[:, None] * K + (k0 + ok)[None, :])
            y = tl.load(b_ptr + (k0 + ok)[:, None] * N + on[None, :])
        if PREC == "f16":
            acc = tl.dot(x.to(tl.float16), y.to(tl.float16), acc)
        elif PREC == "bf16":
            acc = tl.dot(x.to(tl.bfloat16), y.to(tl.bfloat16), acc)
        else:
            acc = tl.dot(x, y, acc, input_precision=PREC)
    tl.store(c_ptr + om[:, None] * N + on[None, :], acc)


def _v(prec: str, lay: str = "nn") -> Variant:
    return Variant(kmm, f"input precision {prec}, layout {lay}", constexprs={"PREC": prec, "LAY": lay})


kmm_suite = Suite(
    name="truth_kmm",
    variants={
        "ieee": _v("ieee"),
        "tf32": _v("tf32"),
        "tf32x3": _v("tf32x3"),
        "f16": _v("f16"),
        "bf16": _v("bf16"),
        "ieee_tn": _v("ieee", "tn"),
        "tf32_tn": _v("tf32", "tn"),
    },
    args=lambda s: {
        "a_ptr": Tensor((s["M"], s["K"]), "fp32"),
        "b_ptr": Tensor((s["K"], s["N"]), "fp32"),
        "c_ptr": Tensor((s["M"], s["N"]), "fp32", output=True),
        "M": s["M"],
        "N": s["N"],
        "K": s["K"],
    },
    shape={"M": 256, "N": 256, "K": 256},
    constexprs={"BK": 16, "PREC": "tf32", "LAY": "nn"},
    options={"num_warps": 4, "num_stages": 4},
    grid=lambda s, meta: (s["M"] // 64, s["N"] // 64),
    default_pair=("ieee", "tf32"),
)


@triton.jit
def rowmax(x_ptr, y_ptr, W: tl.constexpr):
    r = tl.program_id(0)
    v = tl.load(x_ptr + r * W + tl.arange(0, W))
    tl.store(y_ptr + r, tl.max(v, axis=0))


rowmax_suite = Suite(
    name="truth_rowmax",
    variants={
        "w2": Variant(rowmax, "2 warps", options={"num_warps": 2}),
        "w4": Variant(rowmax, "4 warps", options={"num_warps": 4}),
        "w8": Variant(rowmax, "8 warps", options={"num_warps": 8}),
    },
    args=lambda s: {"x_ptr": Tensor((s["R"], 2048), "fp32"), "y_ptr": Tensor((s["R"],), "fp32", output=True)},
    shape={"R": 1024},
    constexprs={"W": 2048},
    grid=lambda s, meta: (s["R"],),
    default_pair=("w4", "w8"),
)
