"""Size and render time of the HTML report for ``matmul`` (both variants, all six stages).

Targets (issue 5): the file is ≤ 2 MB and renders in the browser in under 1 s on a 2-core machine. Measured:

* Python: ``build_comparison`` (normalize, align, diagnose) and ``render_html`` (highlight, template, compress),
  wall clock, best of ``--repeat``;
* file size in bytes;
* browser: headless Chromium (``/usr/bin/chromium`` through Playwright) loading the file from ``file://`` until
  the report's script has unpacked its compressed stage tables (``<html data-irdiff-ready>``) and two animation
  frames have passed (layout and first paint of the visible part), in a fresh tab each time; best and median of
  ``--repeat``. The time is ``performance.now()`` at that point (from navigation start).

Usage: ``python benchmarks/bench_html.py [--target sm86] [--repeat 5] [--keep report.html]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--target", default="sm86")
    ap.add_argument("--suite", default="matmul")
    ap.add_argument("--variant", default="annotated")
    ap.add_argument("--against", default="unannotated")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--keep", default=None, help="Also save the report here.")
    args = ap.parse_args()

    from irdiff.compile import CompileRequest, compile_bundle
    from irdiff.pipeline import build_comparison
    from irdiff.render.html import render_html

    with tempfile.TemporaryDirectory(prefix="irdiff-bench-html-") as tmp:
        bundle = compile_bundle(
            CompileRequest(suite=args.suite, variants=[args.variant, args.against], target=args.target),
            Path(tmp) / "bundle",
            command=["bench_html"],
        )
        t_cmp, t_html = [], []
        html = ""
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            c = build_comparison(bundle, args.variant, args.against)
            t1 = time.perf_counter()
            html = render_html(c)
            t2 = time.perf_counter()
            t_cmp.append(t1 - t0)
            t_html.append(t2 - t1)
        stages = [d.stage for d in c.stage_diffs]
        rows = sum(len(h.lines) for d in c.stage_diffs for h in d.hunks)
        path = Path(args.keep) if args.keep else Path(tmp) / "report.html"
        path.write_text(html, encoding="utf-8")
        size = path.stat().st_size

        browser_ms: list[float] = []
        note = ""
        try:
            from report_browser import Browser, chromium_path, wait_until

            exe = chromium_path()
            if exe is None:
                raise RuntimeError("chromium not installed")
            b = Browser(exe)
            try:
                for _ in range(args.repeat + 1):
                    with b.open_report(path, ready=False) as (page, log):
                        wait_until(page, "() => document.documentElement.dataset.irdiffReady", timeout=30)
                        ms = page.evaluate(
                            "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame("
                            "() => r(performance.now()))))"
                        )
                        assert page.evaluate("document.documentElement.dataset.irdiffReady") == "1"
                        assert not log.console_errors, log.console_errors
                        browser_ms.append(float(ms))
                browser_ms = browser_ms[1:]  # the first load also starts the renderer process
            finally:
                b.close()
        except Exception as e:  # noqa: BLE001 - report why the browser part did not run
            note = f"browser not measured: {type(e).__name__}: {e}"

    print(f"{args.suite} {args.variant} vs {args.against} ({args.target}), stages: {', '.join(stages)}")
    print(f"  diff rows in hunks      {rows}")
    print(f"  build_comparison        best {min(t_cmp):.3f} s   median {statistics.median(t_cmp):.3f} s")
    print(f"  render_html             best {min(t_html):.3f} s   median {statistics.median(t_html):.3f} s")
    print(f"  file size               {size:,} bytes ({size / 1e6:.2f} MB; target <= 2 MB)")
    if browser_ms:
        print(
            f"  browser ready + paint   best {min(browser_ms):.0f} ms   median {statistics.median(browser_ms):.0f} ms"
            f"   (target < 1000 ms; {len(browser_ms)} loads)"
        )
    else:
        print(f"  {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
