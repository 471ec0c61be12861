"""``irdiff bisect`` over six Triton releases: cold (environments created), warm (reused), and warm environments
with a cold compile cache; disk used per environment.

The run: ``irdiff bisect matmul --variant annotated --good 3.3.0 --bad 3.6.0 --fact 'spec.stride_ak.type!=constexpr'
--target sm80`` — releases 3.3.0, 3.3.1, 3.4.0, 3.5.0, 3.5.1, 3.6.0 from the package index. Target (issue 13): warm
≤ 60 s on a 2-core machine.

* cold: a fresh ``IRDIFF_CACHE_DIR``: each release tried gets its environment (``uv venv`` + ``uv pip install
  triton==X``; the wheel comes from uv's own cache when an earlier run downloaded it, else from the index — the table
  says which) and compiles;
* warm-envs: same cache dir, irdiff's compile results and bundles removed (a new kernel's bisect on known releases);
* warm: everything reused (the same bisect again).

Usage: ``python benchmarks/bench_bisect.py [--out benchmarks/results/bench_bisect.txt]``. Exit status 1 when warm
takes more than 60 s or the first bad release is not found.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CMD = [
    "bisect", "matmul", "--variant", "annotated", "--good", "3.3.0", "--bad", "3.6.0",
    "--fact", "spec.stride_ak.type!=constexpr", "--target", "sm80", "--color", "never", "--paging", "never",
]  # fmt: skip
TARGET_WARM_S = 60.0


def run(cache: Path) -> tuple[float, str]:
    env = dict(os.environ, IRDIFF_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT), IRDIFF_NO_GPU_PROBE="1")
    env.pop("IRDIFF_TRITON_ENVS", None)  # every release from irdiff's own environments
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "irdiff", *CMD], env=env, capture_output=True, text=True, cwd=ROOT)
    dt = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"bisect failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return dt, proc.stdout + proc.stderr


def uv_cached_wheels() -> set[str]:
    uv = Path(sys.executable).parent / "uv"
    try:
        d = subprocess.run([str(uv), "cache", "dir"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return set()
    # uv keeps unpacked wheels as wheels-vN/<index>/triton/<version>-<tags>/
    return {p.name.split("-")[0] for p in Path(d).glob("wheels*/*/triton/*") if p.is_dir()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "bench_bisect.txt"))
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from irdiff.compile.envs import env_disk_bytes

    cached_before = uv_cached_wheels()
    cache = Path(tempfile.mkdtemp(prefix="irdiff-bench-bisect-"))
    rows = []
    try:
        cold, out_cold = run(cache)
        rows.append(("cold (envs created, compiles)", cold))
        for sub in ("results", "bundles"):
            shutil.rmtree(cache / sub, ignore_errors=True)
        warm_envs, _ = run(cache)
        rows.append(("warm envs, cold compile cache", warm_envs))
        warm, out_warm = run(cache)
        rows.append(("warm (envs and results reused)", warm))
        envs = sorted((cache / "envs").glob("triton-*"))
        disk = [(e.name[len("triton-") :], env_disk_bytes(e)) for e in envs if e.is_dir()]
        # hard links into uv's cache: the files an env shares with it are counted once per inode here
        apparent = [(e.name, sum(f.stat().st_size for f in e.rglob("*") if f.is_file() and not f.is_symlink()))
                    for e in envs if e.is_dir()]  # fmt: skip
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    m = re.search(r"first bad release: (\S+) \(last good: (\S+)\)", out_warm)
    tried = re.search(r"releases tried \(oldest first\): (.+)", out_warm)
    lines = [
        "irdiff bisect " + " ".join(CMD[1:12]),
        f"machine: {os.cpu_count()} cores; python {sys.version.split()[0]}",
        f"Triton wheels already in uv's cache before the cold run: {', '.join(sorted(cached_before)) or 'none'}",
        "",
        f"{'run':<34} {'seconds':>8}",
        *[f"{name:<34} {s:>8.1f}" for name, s in rows],
        "",
        f"releases tried: {tried.group(1) if tried else '?'}",
        f"first bad release: {m.group(1) if m else 'NOT FOUND'} (last good: {m.group(2) if m else '?'})",
        "",
        f"{'environment':<14} {'MiB on disk':>12} {'MiB apparent':>13}",
        *[f"triton {v:<7} {b / 2**20:>12.0f} {a / 2**20:>13.0f}" for (v, b), (_, a) in zip(disk, apparent)],
        f"{'total':<14} {sum(b for _, b in disk) / 2**20:>12.0f} {sum(a for _, a in apparent) / 2**20:>13.0f}",
        "(on disk: allocated blocks, each inode once; apparent: file sizes; uv links files from its cache when it can)",
        "",
        "cold run output:",
        *["  " + ln for ln in out_cold.splitlines()[:14]],
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    ok = warm <= TARGET_WARM_S and m is not None
    print(f"target warm <= {TARGET_WARM_S:.0f} s: {'met' if ok else 'MISSED'} ({warm:.1f} s)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
