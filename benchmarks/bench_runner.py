"""The runner's timing spread, against itself and against ``triton.testing.do_bench`` (needs a CUDA GPU).

Targets (issue 7), per launch measured:
- self-agreement: the same variant timed twice in one run (two entries of the same launch, interleaved with each
  other) gives medians within 2 % of each other;
- do_bench agreement: the runner's median is within 5 % of ``triton.testing.do_bench(launch, return_mode="median")``
  on the same launch (do_bench also flushes the L2 between launches, with its own 256 MB buffer).

Usage: ``PYTHONPATH=. python benchmarks/bench_runner.py [--shapes 1024,4096] [--out DIR]``. Prints a table and,
with ``--out``, writes ``bench_runner.json`` and ``bench_runner.txt`` there. Exit status 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--suite", default="matmul")
    ap.add_argument("--variants", default="unannotated,annotated")
    ap.add_argument("--shapes", default="1024,4096")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()

    import torch
    import triton
    import triton.testing

    from irdiff.run.inputs import build_inputs
    from irdiff.run.launch import make_launch
    from irdiff.run.runner import local_target
    from irdiff.run.stats import summarize
    from irdiff.run.sweep import parse_shapes, shape_label
    from irdiff.run.timing import TimingOptions, device_info, measure
    from irdiff.suite import load_suite

    if not torch.cuda.is_available():
        print("no CUDA device: nothing to benchmark")
        return 0
    suite = load_suite(a.suite)
    target = local_target()
    rows: list[dict[str, Any]] = []
    ok = True
    for shape in parse_shapes([a.shapes], suite.shape):
        for name in a.variants.split(","):
            inputs = build_inputs(suite.args(shape), device="cuda")
            launch = make_launch(suite, name, inputs, shape, target)
            m = measure({"first": launch, "second": launch}, TimingOptions())
            s1, s2 = summarize(m.samples["first"]), summarize(m.samples["second"])
            bench = float(triton.testing.do_bench(launch, return_mode="median"))
            self_dev = abs(s1.median_ms / s2.median_ms - 1.0)
            bench_dev = abs(s1.median_ms / bench - 1.0)
            good = self_dev <= 0.02 and bench_dev <= 0.05
            ok &= good
            rows.append(
                {
                    "shape": shape,
                    "variant": name,
                    "first_ms": s1.median_ms,
                    "second_ms": s2.median_ms,
                    "iqr_ms": s1.iqr_ms,
                    "n": s1.n,
                    "do_bench_ms": bench,
                    "self_dev": self_dev,
                    "do_bench_dev": bench_dev,
                    "ok": good,
                }
            )
            del inputs, launch
            torch.cuda.empty_cache()
    head = f"{'shape':<12} {'variant':<12} {'run 1 ms':>9} {'run 2 ms':>9} {'diff':>6} {'do_bench':>9} {'diff':>6}  ok"
    lines = [
        f"device: {device_info()['name']}; Triton {triton.__version__}; torch {torch.__version__}",
        f"method: {m.method}",
        "targets: run 1 vs run 2 within 2 %; run 1 vs do_bench(return_mode='median') within 5 %",
        "",
        head,
        "-" * len(head),
    ]
    for r in rows:
        lines.append(
            f"{shape_label(r['shape']):<12} {r['variant']:<12} {r['first_ms']:9.4f} {r['second_ms']:9.4f} "
            f"{r['self_dev'] * 100:5.2f}% {r['do_bench_ms']:9.4f} {r['do_bench_dev'] * 100:5.2f}%  "
            f"{'yes' if r['ok'] else 'NO'}"
        )
    text = "\n".join(lines)
    print(text)
    if a.out:
        out = Path(a.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "bench_runner.txt").write_text(text + "\n")
        (out / "bench_runner.json").write_text(json.dumps({"rows": rows, "method": m.method}, indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
