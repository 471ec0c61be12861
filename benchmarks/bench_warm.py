"""Warm main job: ``irdiff matmul --target sm86 --no-run`` with every variant in irdiff's cache, against
``python -c "import triton"`` (issue 17, target: ≤ 0.4 s and ≤ 2× the Triton import on the 2-core machine).

Also reports whether the warm job imported Triton or torch (it should not need either once every variant is
cached). Usage: ``python benchmarks/bench_warm.py [--repeat 5] [--out benchmarks/results/bench_warm.txt]``.
Exit status 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

JOB = ["-m", "irdiff", "matmul", "--target", "sm86", "--no-run", "--color", "never", "--paging", "never", "-q"]
PROBE = (
    "import runpy, sys; sys.argv = ['irdiff'] + sys.argv[1:]\n"
    "try:\n    runpy.run_module('irdiff', run_name='__main__')\nexcept SystemExit:\n    pass\n"
    "print('IMPORTED', 'triton' in sys.modules, 'torch' in sys.modules, file=sys.stderr)\n"
)


def timed(args: list[str], env: dict[str, str]) -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    env = {**os.environ, "IRDIFF_NO_GPU_PROBE": "1"}
    timed(JOB, env)  # fill the cache (cold compile on the first run)
    job = statistics.median(timed(JOB, env) for _ in range(args.repeat))
    imp = statistics.median(timed(["-c", "import triton"], env) for _ in range(args.repeat))
    probe = subprocess.run([sys.executable, "-c", PROBE, *JOB[2:]], env=env, capture_output=True, text=True)
    imported = next((ln for ln in probe.stderr.splitlines() if ln.startswith("IMPORTED")), "IMPORTED ? ?").split()
    ok = job <= 0.4 and job <= 2 * imp
    lines = [
        f"# bench_warm.py (median of {args.repeat}; load average {os.getloadavg()[0]:.1f}; {sys.version.split()[0]})",
        "| what | seconds |",
        "|---|---|",
        f"| warm `irdiff {' '.join(JOB[2:])}` | {job:.3f} |",
        f"| `python -c 'import triton'` | {imp:.3f} |",
        f"| ratio | {job / imp:.2f}x |",
        f"| warm job imports triton / torch | {imported[1]} / {imported[2]} |",
        f"| target (≤ 0.4 s and ≤ 2x import triton) | {'met' if ok else 'NOT met'} |",
    ]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.out:
        Path(args.out).write_text(text)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
