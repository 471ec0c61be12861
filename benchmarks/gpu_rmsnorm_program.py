"""The program `benchmarks/gpu_capture_dynamic.sh` captures: a fused RMSNorm + residual under ``torch.compile``.

``--dynamic false`` compiles for the exact sizes (TorchInductor bakes ``rows``/``hidden`` into the kernel);
``--dynamic true`` compiles once for symbolic sizes (they become runtime kernel arguments). Both run the same
calls, check the result against eager PyTorch and time the compiled function with CUDA events. The last line of
stdout is one JSON object: ``compile_s`` (first call, s), ``step_us_median`` (µs per call), ``max_abs_err``.

Usage: ``python benchmarks/gpu_rmsnorm_program.py --dynamic true|false [--rows 8192] [--hidden 4096]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import torch


def rmsnorm_residual(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6):
    h = x + residual
    hf = h.float()
    y = hf * torch.rsqrt(hf.pow(2).mean(-1, keepdim=True) + eps)
    return (y * weight.float()).to(x.dtype), h


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dynamic", choices=["true", "false"], required=True)
    ap.add_argument("--rows", type=int, default=8192)
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--steps", type=int, default=200)
    a = ap.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("this program needs a CUDA GPU")
    torch.manual_seed(0)
    dev, dt = "cuda", torch.bfloat16
    x = torch.randn(a.rows, a.hidden, device=dev, dtype=dt)
    r = torch.randn(a.rows, a.hidden, device=dev, dtype=dt)
    w = torch.randn(a.hidden, device=dev, dtype=dt)
    f = torch.compile(rmsnorm_residual, dynamic=a.dynamic == "true", fullgraph=True)

    t0 = time.perf_counter()
    y, h = f(x, r, w)
    torch.cuda.synchronize()
    compile_s = time.perf_counter() - t0
    ry, rh = rmsnorm_residual(x, r, w)
    err = max(float((y.float() - ry.float()).abs().max()), float((h.float() - rh.float()).abs().max()))

    for _ in range(10):
        f(x, r, w)
    torch.cuda.synchronize()
    times = []
    for _ in range(a.steps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        f(x, r, w)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000.0)
    wall0 = time.perf_counter()
    for _ in range(a.steps):
        f(x, r, w)
    torch.cuda.synchronize()
    host_us = (time.perf_counter() - wall0) / a.steps * 1e6
    out = {
        "dynamic": a.dynamic == "true",
        "rows": a.rows,
        "hidden": a.hidden,
        "compile_s": round(compile_s, 3),
        "step_us_median": round(statistics.median(times), 2),
        "step_us_wall": round(host_us, 2),
        "max_abs_err": err,
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
