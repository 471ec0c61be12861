"""``rmsnorm``: row-wise RMSNorm in bf16 with and without specialization of its pointers and strides.

``y[r, :] = x[r, :] / sqrt(mean(x[r, :]^2) + eps) * w`` for ``x`` of shape ``[M, N]`` (bf16, ``N = 4096``), one
program per row and the whole row in one block (``BLOCK_N = N``).

- ``specialized``: the JIT sees 16-byte aligned pointers and strides divisible by 16 and marks them
  ``tt.divisibility = 16``; the compiler proves each thread's 8 bf16 elements are contiguous and aligned and
  loads them with one 16-byte ``ld.global.v4.b32``.
- ``dns``: the same body behind ``@triton.jit(do_not_specialize=[strides], do_not_specialize_on_alignment=
  [pointers])``. The binder then records no divisibility for those arguments (``triton/runtime/jit.py``,
  ``specialize_impl`` is told not to), the coalescing pass can no longer prove alignment, and every element is
  loaded and stored on its own (2-byte ``ld.global.b16`` / ``st.global.b16``).
"""

from __future__ import annotations

from typing import Any

import triton
import triton.language as tl

from irdiff.suite import Derived, Suite, Tensor, Variant


@triton.jit
def _rmsnorm_row(x_ptr, w_ptr, y_ptr, stride_x_row, stride_y_row, N, eps, BLOCK_N: tl.constexpr):
    """Normalize row ``program_id(0)``: statistics in fp32, result rounded to ``y``'s element type."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    in_row = cols < N
    x = tl.load(x_ptr + row * stride_x_row + cols, mask=in_row, other=0.0).to(tl.float32)
    mean_square = tl.sum(x * x, axis=0) / N
    inv_rms = tl.rsqrt(mean_square + eps)
    w = tl.load(w_ptr + cols, mask=in_row, other=0.0).to(tl.float32)
    y = x * inv_rms * w
    tl.store(y_ptr + row * stride_y_row + cols, y.to(y_ptr.dtype.element_ty), mask=in_row)


@triton.jit
def rmsnorm_specialized(x_ptr, w_ptr, y_ptr, stride_x_row, stride_y_row, N, eps, BLOCK_N: tl.constexpr):
    _rmsnorm_row(x_ptr, w_ptr, y_ptr, stride_x_row, stride_y_row, N, eps, BLOCK_N)


@triton.jit(
    do_not_specialize=["stride_x_row", "stride_y_row"],
    do_not_specialize_on_alignment=["x_ptr", "w_ptr", "y_ptr"],
)
def rmsnorm_dns(x_ptr, w_ptr, y_ptr, stride_x_row, stride_y_row, N, eps, BLOCK_N: tl.constexpr):
    _rmsnorm_row(x_ptr, w_ptr, y_ptr, stride_x_row, stride_y_row, N, eps, BLOCK_N)


EPS = 1e-6


def rmsnorm_args(shape: dict[str, int]) -> dict[str, object]:
    """``x[M, N]`` and ``y[M, N]`` bf16 row-major, weight ``w[N]`` bf16; strides in elements."""
    M, N = shape["M"], shape["N"]
    x = Tensor((M, N), "bf16")
    y = Tensor((M, N), "bf16", output=True)
    return {
        "x_ptr": x,
        "w_ptr": Tensor((N,), "bf16", init="rand"),
        "y_ptr": y,
        "stride_x_row": x.stride(0),
        "stride_y_row": y.stride(0),
        "N": N,
        "eps": EPS,
    }


def rmsnorm_reference(inputs: dict[str, Any], shape: dict[str, int]) -> dict[str, Any]:
    """``y = x * rsqrt(mean(x^2, dim=-1) + eps) * w`` in float64 (torch), for the output parameter ``y_ptr``."""
    import torch

    x = inputs["x_ptr"].double()
    w = inputs["w_ptr"].double()
    eps = float(inputs.get("eps", EPS))
    return {"y_ptr": x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps) * w}


def torch_rms_norm(inputs: dict[str, Any], shape: dict[str, int]) -> Any:
    """``torch.nn.functional.rms_norm`` in bf16: the library speed the runner shows beside the variants."""
    import torch

    x, w = inputs["x_ptr"], inputs["w_ptr"]
    return torch.nn.functional.rms_norm(x, (x.shape[-1],), w, float(inputs.get("eps", EPS)))


suite = Suite(
    name="rmsnorm",
    description="bf16 RMSNorm (N=4096), one row per program; dns = do_not_specialize on pointers and strides",
    variants={
        "specialized": Variant(rmsnorm_specialized, "pointers and strides specialized (divisible by 16)"),
        "dns": Variant(rmsnorm_dns, "do_not_specialize on the strides, do_not_specialize_on_alignment on pointers"),
    },
    args=rmsnorm_args,
    shape={"M": 4096, "N": 4096},
    constexprs={"BLOCK_N": Derived(lambda s, t: triton.next_power_of_2(s["N"]), "next power of 2 >= N")},
    options={"num_warps": 8},
    grid=lambda s, meta: (s["M"],),
    flops=lambda s: 4.0 * s["M"] * s["N"],
    bytes=lambda s: 2.0 * (2 * s["M"] * s["N"] + s["N"]),
    reference=rmsnorm_reference,
    baseline=torch_rms_norm,
    default_pair=("dns", "specialized"),
)
