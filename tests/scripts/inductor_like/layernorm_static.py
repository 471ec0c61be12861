"""Hand-written kernel in the style TorchInductor generates for ``layer_norm(x) * weight + bias`` (one pass per row,
the row in one block) compiled with ``torch.compile(dynamic=False)``: the row length and stride are constants in the
code and ``eps`` is folded in as an fp32 constant."""

import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def triton_per_fused_native_layer_norm_0(
    in_ptr0, in_ptr1, in_ptr2, out_ptr0, xnumel, r0_numel, XBLOCK: tl.constexpr, R0_BLOCK: tl.constexpr
):
    r0_numel = 1024
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_mask = r0_index < r0_numel
    tmp0 = tl.load(in_ptr0 + (r0_index + 1024 * xindex), r0_mask & xmask, other=0.0).to(tl.float32)
    tmp1 = tl.sum(tl.where(r0_mask & xmask, tmp0, 0.0), 1)[:, None] / 1024.0
    tmp2 = tl.where(r0_mask & xmask, tmp0 - tmp1, 0.0)
    tmp3 = tl.sum(tmp2 * tmp2, 1)[:, None] / 1024.0
    tmp4 = libdevice.rsqrt(tmp3 + 1e-05)
    tmp5 = tl.load(in_ptr1 + r0_index, r0_mask, eviction_policy="evict_last", other=0.0).to(tl.float32)
    tmp6 = tl.load(in_ptr2 + r0_index, r0_mask, eviction_policy="evict_last", other=0.0).to(tl.float32)
    tl.store(out_ptr0 + (r0_index + 1024 * xindex), (tmp2 * tmp4 * tmp5 + tmp6).to(tl.float16), r0_mask & xmask)
