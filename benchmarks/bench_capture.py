"""What `irdiff capture` adds to a program's run time, on a CPU-only machine.

Measured, each in fresh processes (median of ``--repeat``, wall clock):

1. Python start-up: ``python -c pass`` bare vs with the capture bootstrap on ``PYTHONPATH`` (``sitecustomize`` +
   the import watcher; triton is not imported). This is the cost every Python process of the program pays.
2. ``import triton``: bare vs with the hooks installed right after it.
3. A program that compiles 4 kernels (``tests/scripts/warmup_kernels.py``, warm-up only, sm90 stand-in driver):
   bare vs under ``irdiff capture``, cold (fresh Triton cache: every kernel compiled) and warm (every kernel loaded
   from Triton's cache: the hooks' own cost stands out). "program" is the program's own wall time as capture
   measures it; "after-run" is the SASS/ptxas/compiler-log step that follows the program (not part of its time).
4. The launch hook per call (GPU launches cannot run here): :meth:`Recorder.on_launch` with Triton's ``LazyDict``,
   in the steady state (samples taken) and while sampling.

Targets (exit status 1 when missed): ≤ 20 ms per Python process start-up, ≤ 50 ms per kernel loaded from Triton's
cache (the hooks' own work), ≤ 1 µs per launch once sampling is done.

Usage: ``python benchmarks/bench_capture.py [--repeat 5] [--out benchmarks/results/bench_capture_cpu.txt]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BARE_RUNNER = r"""
import runpy, sys
from triton.backends.compiler import GPUTarget
from triton.runtime.driver import driver
from irdiff.compile.worker import TargetDriver
driver.set_active(TargetDriver(GPUTarget("cuda", 90, 32)))
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def timed(cmd: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, capture_output=True, cwd=ROOT)
    return time.perf_counter() - t0


def capture_env(out: Path) -> dict[str, str]:
    """The environment `irdiff capture` gives a program (see irdiff.capture.run_capture)."""
    from irdiff.bundle import SCHEMA
    from irdiff.capture.hooks import STATE_DIR, CaptureConfig

    (out / STATE_DIR / "hashes").mkdir(parents=True, exist_ok=True)
    (out / "manifest.json").write_text(json.dumps({"schema": SCHEMA, "suite": "capture", "variants": []}))
    env = dict(os.environ)
    env.update(CaptureConfig(out, None, "sm90", 8).to_env())
    env["IRDIFF_CAPTURE_PKG"] = str(ROOT / "irdiff")
    env["PYTHONPATH"] = str(ROOT / "irdiff" / "capture" / "bootstrap")
    return env


def med(xs: list[float]) -> float:
    return statistics.median(xs)


def bench_hook(n: int = 200_000) -> tuple[float, float]:
    """ns per on_launch call: steady state (sampling done) and sampling (a new launch record each call)."""
    from triton.compiler.compiler import LazyDict

    from irdiff.capture.hooks import CaptureConfig, LaunchState, Recorder

    with tempfile.TemporaryDirectory() as d:
        out = Path(d)
        (out / "k").mkdir()
        rec = Recorder(CaptureConfig(out, launches=8))
        rec.by_function[1234] = LaunchState(variant="k")
        meta = {"irdiff_launch": ((4, 1, 1), "h", {"x": 1, "n": 4096})}
        lazy = LazyDict({"name": "k", "function": 1234, "stream": 0})
        lazy.add(lambda: meta, ())
        for _ in range(100):
            rec.on_launch(lazy)  # take the samples
        t0 = time.perf_counter_ns()
        for _ in range(n):
            rec.on_launch(lazy)
        steady = (time.perf_counter_ns() - t0) / n
        m = 2000
        t0 = time.perf_counter_ns()
        for i in range(m):
            rec.by_function[i] = LaunchState(variant="k")
            lz = LazyDict({"name": "k", "function": i, "stream": 0})
            lz.add(lambda i=i: {"irdiff_launch": ((i, 1, 1), "h", {"n": i})}, ())
            rec.on_launch(lz)
        sampling = (time.perf_counter_ns() - t0) / m
    return steady, sampling


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default=None, help="Also write the table to this file.")
    a = ap.parse_args()
    py = sys.executable
    script = str(ROOT / "tests" / "scripts" / "warmup_kernels.py")
    rows: dict[str, list[float]] = {}

    def add(name: str, value: float) -> None:
        rows.setdefault(name, []).append(value)

    for _ in range(a.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            t = Path(tmp)
            base = dict(os.environ, TRITON_CACHE_DIR=str(t / "tc"))
            add("python -c pass: bare", timed([py, "-c", "pass"], base))
            add("python -c pass: capture bootstrap", timed([py, "-c", "pass"], capture_env(t / "c0")))
            add("import triton: bare", timed([py, "-c", "import triton"], base))
            hooked = capture_env(t / "c1")
            hooked.pop("IRDIFF_CAPTURE_TARGET")
            add("import triton: hooks installed", timed([py, "-c", "import triton"], hooked))
            # 4 kernels, cold: fresh caches on both sides
            add("4 kernels cold: bare program", timed([py, "-c", BARE_RUNNER, script], dict(base)))
            cold = dict(os.environ, TRITON_CACHE_DIR=str(t / "tc2"))
            cap = [py, "-m", "irdiff", "capture", "--target", "sm90", "--force", "-o"]
            wall = timed([*cap, str(t / "cap"), "--", py, script], cold)
            info = json.loads((t / "cap" / "capture.json").read_text())
            add("4 kernels cold: captured program", info["program_seconds"])
            add("4 kernels cold: after-run step", info["finalize_seconds"])
            add("4 kernels cold: irdiff capture, whole", wall)
            # warm: every kernel from Triton's cache (filled above)
            add("4 kernels warm: bare program", timed([py, "-c", BARE_RUNNER, script], dict(base)))
            timed([*cap, str(t / "cap"), "--no-explain", "--", py, script], cold)
            info = json.loads((t / "cap" / "capture.json").read_text())
            add("4 kernels warm: captured program", info["program_seconds"])
    steady, sampling = bench_hook()

    lines = [f"irdiff capture overhead, {os.cpu_count()} cores (shared), median of {a.repeat} runs, seconds"]
    lines.append(f"{'measurement':40s} {'median':>8s} {'min':>8s} {'max':>8s}")
    for name, xs in rows.items():
        lines.append(f"{name:40s} {med(xs):8.3f} {min(xs):8.3f} {max(xs):8.3f}")
    d_start = med(rows["python -c pass: capture bootstrap"]) - med(rows["python -c pass: bare"])
    d_import = med(rows["import triton: hooks installed"]) - med(rows["import triton: bare"])
    d_cold = med(rows["4 kernels cold: captured program"]) - med(rows["4 kernels cold: bare program"])
    d_warm = med(rows["4 kernels warm: captured program"]) - med(rows["4 kernels warm: bare program"])
    lines.append("")
    lines.append(f"per Python process start-up:      {1000 * d_start:+7.1f} ms")
    lines.append(f"import triton + installing hooks: {1000 * d_import:+7.1f} ms")
    lines.append(
        f"per kernel compiled (cold):       {1000 * d_cold / 4:+7.1f} ms  (program +{100 * d_cold / med(rows['4 kernels cold: bare program']):.0f}%)"
    )
    lines.append(
        f"per kernel from Triton's cache:   {1000 * d_warm / 4:+7.1f} ms  (program +{100 * d_warm / med(rows['4 kernels warm: bare program']):.0f}%)"
    )
    lines.append(f"launch hook, steady state:        {steady:7.0f} ns per launch")
    lines.append(
        f"launch hook, while sampling:      {sampling / 1000:7.1f} µs per sampled launch (first 8 distinct per kernel)"
    )
    checks = [
        ("start-up per Python process <= 20 ms", d_start <= 0.020),
        ("per kernel from Triton's cache <= 50 ms", d_warm / 4 <= 0.050),
        ("launch hook in the steady state <= 1 µs", steady <= 1000),
    ]
    lines.append("")
    lines += [f"target: {name}: {'met' if ok else 'MISSED'}" for name, ok in checks]
    text = "\n".join(lines)
    print(text)
    if a.out:
        Path(a.out).write_text(text + "\n")
    sys.exit(0 if all(ok for _, ok in checks) else 1)


if __name__ == "__main__":
    main()
