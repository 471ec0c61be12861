"""Normalization + alignment of the largest stage pair of the seed-000 comparison (matmul, LLIR, sm90).

Target (issue 3): normalizing both sides and aligning them takes ≤ 0.2 s on a 2-core CPU machine; peak Python
memory is reported (``tracemalloc``, a separate pass because tracing slows the code down). The reference cost is
``git diff --no-index --histogram`` on the two raw files, timed in the same run. Each diff engine of
``irdiff.align.ENGINES`` is measured, so the numbers behind the default choice are reproducible.

Usage: ``python benchmarks/bench_align.py [--bundle DIR] [--stage llir] [--repeat 7]``. Without ``--bundle`` the
``matmul`` suite is compiled for sm90 (irdiff's compile cache makes later runs instant). Prints a table (ms, MiB).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from irdiff.align import DEFAULT_ENGINE, ENGINES, diff_stage  # noqa: E402
from irdiff.bundle import STAGE_FILES, Bundle, load_bundle  # noqa: E402
from irdiff.normalize import normalize  # noqa: E402

TARGET_S = 0.2


def get_bundle(path: str | None, tmp: str) -> Bundle:
    if path:
        return load_bundle(path)
    from irdiff.compile import CompileRequest, compile_bundle

    req = CompileRequest(suite="matmul", variants=["annotated", "unannotated"], target="sm90")
    return compile_bundle(req, Path(tmp) / "bundle", command=["bench_align.py"])


def run_once(stage: str, ta: str, tb: str, ka: str, kb: str, engine: str) -> tuple[float, float, int]:
    """Returns (normalize seconds, align seconds, changed rows)."""
    t0 = time.perf_counter()
    a = normalize(stage, ta, ka)
    b = normalize(stage, tb, kb)
    t1 = time.perf_counter()
    d = diff_stage(a, b, engine=engine)
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1, d.added + d.removed


def peak_mib(stage: str, ta: str, tb: str, ka: str, kb: str, engine: str) -> float:
    tracemalloc.start()
    try:
        diff_stage(normalize(stage, ta, ka), normalize(stage, tb, kb), engine=engine)
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def git_histogram(pa: Path, pb: Path, repeat: int) -> tuple[float, int] | None:
    git = shutil.which("git")
    if git is None:
        return None
    times = []
    out = ""
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = subprocess.run(
            [git, "diff", "--no-index", "--histogram", "--no-color", str(pa), str(pb)], capture_output=True, text=True
        ).stdout
        times.append(time.perf_counter() - t0)
    changed = sum(1 for ln in out.splitlines() if ln[:1] in "+-" and not ln.startswith(("+++", "---")))
    return statistics.median(times), changed


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--bundle", help="bundle directory with variants 'annotated' and 'unannotated'")
    ap.add_argument("--stage", default="llir")
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="irdiff-bench-align-") as tmp:
        bundle = get_bundle(args.bundle, tmp)
        va, vb = bundle.variants["annotated"], bundle.variants["unannotated"]
        ta, tb = va.text(args.stage), vb.text(args.stage)
        pa, pb = Path(tmp, "a" + STAGE_FILES[args.stage]), Path(tmp, "b" + STAGE_FILES[args.stage])
        pa.write_text(ta)
        pb.write_text(tb)
        print(
            f"{bundle.suite} {bundle.target} {args.stage} (Triton {bundle.triton_version}): "
            f"annotated {len(ta.splitlines())} lines / {len(ta) // 1024} KiB, "
            f"unannotated {len(tb.splitlines())} lines / {len(tb) // 1024} KiB; median of {args.repeat} runs"
        )
        rows: list[tuple[str, str, str, str, str, str]] = []
        total_default = 0.0
        for engine in ENGINES:
            run_once(args.stage, ta, tb, va.kernel, vb.kernel, engine)  # warm-up (imports, regex compiles)
            runs = [run_once(args.stage, ta, tb, va.kernel, vb.kernel, engine) for _ in range(args.repeat)]
            norm = statistics.median(r[0] for r in runs)
            align = statistics.median(r[1] for r in runs)
            total = statistics.median(r[0] + r[1] for r in runs)
            mem = peak_mib(args.stage, ta, tb, va.kernel, vb.kernel, engine)
            if engine == DEFAULT_ENGINE:
                total_default = total
            rows.append(
                (f"irdiff ({engine})", f"{norm * 1e3:.0f}", f"{align * 1e3:.0f}", f"{total * 1e3:.0f}",
                 f"{mem:.1f}", str(runs[0][2]))
            )  # fmt: skip
        git = git_histogram(pa, pb, args.repeat)
        if git is not None:
            rows.append(("git diff --histogram (raw)", "-", "-", f"{git[0] * 1e3:.0f}", "-", str(git[1])))
        head = ("what", "normalize ms", "align ms", "total ms", "peak MiB", "changed lines")
        widths = [max(len(r[k]) for r in [head, *rows]) for k in range(len(head))]
        for r in [head, *rows]:
            print("  ".join(c.ljust(w) if k == 0 else c.rjust(w) for k, (c, w) in enumerate(zip(r, widths))))
        ok = total_default <= TARGET_S
        print(
            f"target: normalize + align <= {TARGET_S * 1e3:.0f} ms with the default engine: {'PASS' if ok else 'FAIL'}"
        )
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
