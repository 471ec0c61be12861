"""A program that runs a fused RMSNorm the way a torch.compile'd model does: ``--dynamic`` picks the kernel
generated for dynamic shapes, ``--r0-block`` the reduction block an autotuner would pick. The kernel is launched
normally (with stand-in tensors: no GPU here); under ``irdiff capture --target`` the launch compiles it and
is then skipped.
``--rows`` only changes this driver (outside the kernels). ``--kernel layernorm`` runs a fused LayerNorm instead,
whose dynamic kernel takes ``eps`` as a runtime fp64 scalar (``in_ptr1``) ahead of the weight and bias pointers."""

import argparse
import os
import sys

import triton.language as tl
from triton.runtime.jit import MockTensor  # data_ptr() 0 (16-byte aligned) and a dtype: all the JIT looks at

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

p = argparse.ArgumentParser()
p.add_argument("--dynamic", type=int, default=0)
p.add_argument("--r0-block", type=int, default=2048)
p.add_argument("--rows", type=int, nargs="*", default=[4096])
p.add_argument("--both", action="store_true", help="also launch the static kernel (with R0_BLOCK 2048)")
p.add_argument("--kernel", choices=["rmsnorm", "layernorm"], default="rmsnorm")
p.add_argument("--kernels", default=os.path.dirname(os.path.abspath(__file__)), help="directory of the kernel files")
a = p.parse_args()
sys.path.insert(0, a.kernels)

rows, cols = a.rows[0], 2048
x, res, w, h, y = (MockTensor(tl.bfloat16) for _ in range(5))
if a.kernel == "layernorm":
    cols = 1024
    x, w, b, y = (MockTensor(tl.float16) for _ in range(4))
    if a.dynamic:
        from layernorm_dynamic import triton_per_fused_native_layer_norm_0 as ln

        ln[(rows,)](x, 1e-5, w, b, y, cols, rows, cols, XBLOCK=1, R0_BLOCK=1024, num_warps=4)
    else:
        from layernorm_static import triton_per_fused_native_layer_norm_0 as ln

        ln[(rows,)](x, w, b, y, rows, cols, XBLOCK=1, R0_BLOCK=1024, num_warps=4)
    print("program: steps done")
    sys.exit(0)
if a.both:
    from rmsnorm_static import triton_red_fused_add_mean_mul_rsqrt_0 as static_kernel

    static_kernel[(rows,)](x, res, w, h, y, rows, cols, XBLOCK=1, R0_BLOCK=2048, num_warps=8)
for _ in range(2):  # the model's steps
    if a.dynamic:
        from rmsnorm_dynamic import triton_red_fused_add_mean_mul_rsqrt_0 as k

        k[(rows,)](x, res, 1e-6, w, h, y, cols, rows, cols, XBLOCK=1, R0_BLOCK=a.r0_block, num_warps=8)
    else:
        from rmsnorm_static import triton_red_fused_add_mean_mul_rsqrt_0 as k

        k[(rows,)](x, res, w, h, y, rows, cols, XBLOCK=1, R0_BLOCK=a.r0_block, num_warps=8)
print("program: steps done")
