"""Cold and warm compile time of the ``matmul`` suite (two variants), irdiff against bare Triton.

Targets (issue 2): irdiff's cold overhead over bare compilation of the same two variants ≤ 30 %; a warm run
(irdiff's result cache hit) ≤ 1 s end to end. Each measurement is a fresh process with fresh cache directories,
so the numbers include Python start-up and ``import triton`` on both sides.

Usage: ``python benchmarks/bench_compile.py [--target sm90] [--repeat 3]``. Prints a table (seconds, wall clock).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Bare Triton: one process, the JIT's own warmup path under a target stand-in, both variants in sequence, with
# the ptxas report (Triton prints it) and nothing else: no SASS, no LLVM debug log, no bundle.
BARE = r"""
import sys, os
import triton
from triton.backends.compiler import GPUTarget
from triton.runtime.driver import driver
from irdiff.compile.worker import TargetDriver, FakeTensor, select_config
from irdiff.suite import Tensor, load_suite
arch = int(sys.argv[1])
driver.set_active(TargetDriver(GPUTarget("cuda", arch, 32)))
suite = load_suite("matmul")
kw = select_config(suite, None, None)
for name in ("unannotated", "annotated"):
    args = {k: FakeTensor(v) if isinstance(v, Tensor) else v for k, v in suite.args(suite.shape).items()}
    k = suite.variants[name].kernel.run(grid=(1,), warmup=True, **args, **kw)
    assert k.asm["ptx"]
"""


def timed(cmd: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, capture_output=True, cwd=ROOT)
    return time.perf_counter() - t0


def fresh_env(tmp: str) -> dict[str, str]:
    env = dict(os.environ)
    env["TRITON_CACHE_DIR"] = os.path.join(tmp, "triton")
    env["IRDIFF_CACHE_DIR"] = os.path.join(tmp, "irdiff")
    env["TRITON_DEFAULT_FP_FUSION"] = "1"
    env["IRDIFF_NO_GPU_PROBE"] = "1"
    env["PYTHONPATH"] = str(ROOT)
    return env


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", default="sm90")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    arch = a.target.removeprefix("sm")
    irdiff = [sys.executable, "-m", "irdiff", "compile", "matmul", "--target", a.target]
    rows: dict[str, list[float]] = {"bare triton (2 variants, sequential)": [], "irdiff cold": [], "irdiff warm": []}
    rows["irdiff cold -j1"] = []
    rows["irdiff warm, main job (compile+diff+render)"] = []
    for _ in range(a.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            rows["bare triton (2 variants, sequential)"].append(
                timed([sys.executable, "-c", BARE, arch], fresh_env(tmp))
            )
        with tempfile.TemporaryDirectory() as tmp:
            env = fresh_env(tmp)
            rows["irdiff cold"].append(timed([*irdiff, "--save", os.path.join(tmp, "b")], env))
            rows["irdiff warm"].append(timed([*irdiff, "--save", os.path.join(tmp, "b")], env))
            main_job = [sys.executable, "-m", "irdiff", "matmul", "--variant", "annotated", "--against", "unannotated"]
            main_job += ["--target", a.target, "--color", "never", "--save", os.path.join(tmp, "m")]
            timed(main_job, env)  # fills irdiff's result cache for the pair
            rows["irdiff warm, main job (compile+diff+render)"].append(timed(main_job, env))
        with tempfile.TemporaryDirectory() as tmp:
            rows["irdiff cold -j1"].append(
                timed([*irdiff, "-j", "1", "--save", os.path.join(tmp, "b")], fresh_env(tmp))
            )
    bare = statistics.median(rows["bare triton (2 variants, sequential)"])
    print(f"matmul, 2 variants, target {a.target}, {os.cpu_count()} cores, median of {a.repeat} (seconds)")
    print(f"{'measurement':46s} {'median':>8s} {'min':>8s} {'vs bare':>8s}")
    for name, xs in rows.items():
        med = statistics.median(xs)
        print(f"{name:46s} {med:8.2f} {min(xs):8.2f} {100 * (med / bare - 1):+7.0f}%")
    print("targets: irdiff cold overhead <= +30% over bare; warm main job <= 1 s")


if __name__ == "__main__":
    main()
