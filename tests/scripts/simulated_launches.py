"""Drive the capture's GPU-only hooks (kernel load, launch sampling) on a machine without a GPU.

Run under ``irdiff capture --target sm90``: a kernel is really compiled (warm-up), then the two things a GPU run
does after that are replayed with Triton's own objects, because neither can run here:

* ``CompiledKernel._init_handles`` calls ``knobs.runtime.kernel_load_end_hook(module, function, name,
  metadata_group, hash)``: done from a frame whose ``self`` is the compiled kernel, as Triton's is;
* each launch calls ``launch_enter_hook(LazyDict)``; the ``LazyDict`` is built as ``CompiledKernel.launch_metadata``
  builds it (name, CUDA function, stream, plus the JIT function's ``launch_metadata`` callback), from a frame shaped
  like TorchInductor's generated launcher (``grid_0``/``grid_1``/``grid_2`` and the kernel arguments as locals).

Five launches of ``add_kernel`` on two sizes through the JIT-style LazyDict, and five of ``other_kernel`` through a
LazyDict without the callback (frame fallback): three from an autotuner's benchmark (a ``kernel_call`` closure, as
TorchInductor's ``CachingAutotuner.bench`` and Triton's ``Autotuner._bench`` time a config), then two by the
program. The recorder writes its counts at exit like the atexit hook does.
"""

from __future__ import annotations

import triton
import triton.language as tl
from triton.compiler.compiler import LazyDict

from irdiff.capture.hooks import recorder


class Buf:
    def __init__(self, n: int):
        self.shape = (n,)
        self.dtype = tl.float16

    def data_ptr(self) -> int:
        return 0x7F0000000000

    def stride(self) -> tuple[int, ...]:
        return (1,)


@triton.jit
def add_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)


@triton.jit
def other_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def _init_handles(self, function: int) -> None:  # the frame Triton's kernel_load_end_hook is called from
    triton.knobs.runtime.kernel_load_end_hook(None, function, self.name, self.metadata_group, self.hash)


def jit_launch(kernel, function: int, grid: tuple[int, ...], *args: object) -> None:
    ret = LazyDict({"name": kernel.name, "function": function, "stream": 0})
    fn = kernel.src.fn
    if fn.launch_metadata is not None:
        ret.add(fn.launch_metadata, (grid, kernel.metadata, dict(zip(fn.arg_names, args))))
    triton.knobs.runtime.launch_enter_hook(ret)


def launcher(x_ptr, n, stream):  # shaped like TorchInductor's generated launcher
    grid_0, grid_1, grid_2 = (n + 255) // 256, 1, 1
    triton.knobs.runtime.launch_enter_hook(LazyDict({"name": "other_kernel", "function": 2002, "stream": stream}))
    return grid_0 + grid_1 + grid_2


if __name__ == "__main__":
    rec = recorder()
    assert rec is not None, "run me under irdiff capture"
    rec.config.launches = 8
    knobs = triton.knobs.runtime
    knobs.kernel_load_end_hook.add(lambda *a: rec.on_load(*a[1:]))
    knobs.launch_enter_hook.add(rec.on_launch)
    k1 = add_kernel.warmup(Buf(4096), Buf(4096), 4096, BLOCK=1024, grid=(1,))
    k2 = other_kernel.warmup(Buf(512), 512, BLOCK=256, grid=(1,))
    _init_handles(k1, 1001)
    _init_handles(k2, 2002)
    for n in (4096, 4096, 4096, 65536, 65536):
        jit_launch(k1, 1001, ((n + 1023) // 1024,), Buf(n), Buf(n), n, 1024)

    def bench(n: int) -> None:  # shaped like CachingAutotuner.bench: the launcher is called from `kernel_call`
        def kernel_call() -> None:
            launcher(Buf(n), n, 0)

        for _ in range(3):
            kernel_call()

    bench(512)
    for n in (512, 512):
        launcher(Buf(n), n, 0)
    rec.write_launch_counts()
    print("launched")
