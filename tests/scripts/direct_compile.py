"""A program that calls ``triton.compile`` directly, the way TorchInductor's ``CachingAutotuner._precompile_config``
does (no JIT ``run`` on the stack, no argument values; the caller gives signature, constants and divisibility).
The caller object carries ``inductor_meta``/``triton_meta``/``size_hints`` like Inductor's. Needs a stand-in driver
only for nothing: the target is explicit (sm90, or ``--arch N``).

``--ptxas PATH`` sets ``TRITON_PTXAS_PATH`` inside the program before compiling, as TorchInductor does in its own
process (``torch/_inductor/runtime/compile_tasks.py: _set_triton_ptxas_path`` points it at the ptxas of torch's
CUDA): Triton then assembles with that ptxas and derives the PTX ``.version`` from it."""

from __future__ import annotations

import argparse
import os

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def triton_red_fused_add_mean_0(in_ptr0, out_ptr0, ks0, xnumel, r0_numel, XBLOCK: tl.constexpr, R0_BLOCK: tl.constexpr):
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    acc = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
    for r0_offset in range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + tl.arange(0, R0_BLOCK)[None, :]
        r0_mask = r0_index < r0_numel
        tmp0 = tl.load(in_ptr0 + (r0_index + ks0 * xindex), r0_mask & xmask, other=0.0).to(tl.float32)
        acc = acc + tmp0
    tl.store(out_ptr0 + xindex, tl.sum(acc, 1)[:, None], xmask)


class Config:
    def __init__(self, kwargs: dict, num_warps: int, num_stages: int):
        self.kwargs, self.num_warps, self.num_stages = kwargs, num_warps, num_stages


class FakeAutotuner:
    """Shaped like TorchInductor's CachingAutotuner where irdiff looks (inductor_meta, triton_meta, size_hints)."""

    def __init__(self) -> None:
        self.fn = triton_red_fused_add_mean_0
        self.inductor_meta = {"kernel_name": "triton_red_fused_add_mean_0"}
        self.size_hints = {"x": 8192, "r0_": 4096}
        self.configs = [Config({"XBLOCK": 1, "R0_BLOCK": 1024}, 4, 1)]
        self.triton_meta = {
            "signature": {
                "in_ptr0": "*bf16",
                "out_ptr0": "*fp32",
                "ks0": "i32",
                "xnumel": "i32",
                "r0_numel": "i32",
                "XBLOCK": "constexpr",
                "R0_BLOCK": "constexpr",
            },  # fmt: skip
            "constants": {},
            "configs": [{(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]]}],
        }

    def _precompile_config(self, cfg: Config, arch: int = 90) -> object:
        constants = {(5,): cfg.kwargs["XBLOCK"], (6,): cfg.kwargs["R0_BLOCK"]}
        src = ASTSource(self.fn, self.triton_meta["signature"], constants, self.triton_meta["configs"][0])
        options = {"num_warps": cfg.num_warps, "num_stages": cfg.num_stages}
        return triton.compile(src, target=GPUTarget("cuda", arch, 32), options=options)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", type=int, default=90)
    ap.add_argument("--ptxas", default=None)
    a = ap.parse_args()
    if a.ptxas:
        os.environ["TRITON_PTXAS_PATH"] = a.ptxas
    tuner = FakeAutotuner()
    k = tuner._precompile_config(tuner.configs[0], a.arch)
    print("compiled", k.name)
