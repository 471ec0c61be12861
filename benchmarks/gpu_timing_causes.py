"""Why the runner and ``triton.testing.do_bench`` disagreed on fast GEMMs (issue 14): a cause-finding run.

For each kernel the earlier agreement run missed (and one it did not), on a CUDA GPU:

1. **trace** — the exact load pattern the earlier benchmark gave ``do_bench`` (idle, then ``warmup=1000`` ms of
   back-to-back launches *without* L2 flush, then the timed phase: flush + launch), continued for 1.5 s, in chunks
   of ~20 ms GPU time; every launch timed with CUDA events; NVML SM clock, power, temperature and clock event
   (throttle) reasons sampled every 5 ms. Printed per 100 ms bucket, so one sees whether the first ~100 ms (the
   window do_bench had) differ from the steady state. Also: the GPU's busy fraction per chunk (does the CPU keep
   ahead of the GPU? suspect: launch overhead), and warm-L2 (no flush) vs 120 MiB vs 256 MB flush, alternated.
2. **do_bench** — as the earlier benchmark called it (``warmup=1000, rep=100``), with defaults after 1 s idle, and
   after a 1 s pre-run of do_bench itself (flush + launch: the load of its own timed phase) with ``rep=1000``;
   each twice, with clocks.
3. **runner** — :func:`irdiff.run.timing.measure` beside the partner (as the benchmark), and alone without flush.

Usage: ``PYTHONPATH=. python benchmarks/gpu_timing_causes.py [--out DIR] [--cases matmul:2048:unannotated,...]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

REASONS = {
    0x1: "idle",
    0x2: "app-clocks",
    0x4: "sw-power-cap",
    0x8: "hw-slowdown",
    0x10: "sync-boost",
    0x20: "sw-thermal",
    0x40: "hw-thermal",
    0x80: "hw-power-brake",
    0x100: "display",
}
DEFAULT_CASES = (
    "matmul:2048:unannotated:annotated,matmul:4096:unannotated:annotated,"
    "persistent-matmul:4096:tiled:persistent,persistent-matmul:8192:tiled:persistent,matmul:512:unannotated:annotated"
)


def reason_text(bits: int) -> str:
    return "+".join(v for k, v in REASONS.items() if bits & k) or "none"


class Sampler:
    """NVML: (host time, SM MHz, W, °C, clock event reasons) every ``period`` s in a thread."""

    def __init__(self, period: float = 0.005) -> None:
        import threading

        import pynvml as n

        n.nvmlInit()
        self.n, self.h = n, n.nvmlDeviceGetHandleByIndex(0)
        get = getattr(n, "nvmlDeviceGetCurrentClocksEventReasons", None) or n.nvmlDeviceGetCurrentClocksThrottleReasons
        self.get_reasons = get
        self.rows: list[tuple[float, float, float, float, int]] = []
        self.stop = False
        self.period = period
        self.t = threading.Thread(target=self.loop, daemon=True)
        self.t.start()

    def loop(self) -> None:
        n, h = self.n, self.h
        while not self.stop:
            try:
                self.rows.append(
                    (
                        time.perf_counter(),
                        float(n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_SM)),
                        n.nvmlDeviceGetPowerUsage(h) / 1000.0,
                        float(n.nvmlDeviceGetTemperature(h, n.NVML_TEMPERATURE_GPU)),
                        int(self.get_reasons(h)),
                    )
                )
            except Exception:  # noqa: BLE001
                pass
            time.sleep(self.period)

    def window(self, t0: float, t1: float) -> dict[str, Any]:
        got = [r for r in self.rows if t0 <= r[0] <= t1]
        if not got:
            return {}
        bits = 0
        for r in got:
            bits |= r[4]
        return {
            "mhz": statistics.median(r[1] for r in got),
            "mhz_min": min(r[1] for r in got),
            "w": statistics.median(r[2] for r in got),
            "c": statistics.median(r[3] for r in got),
            "reasons": reason_text(bits),
        }


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--out", default=None)
    ap.add_argument("--cases", default=DEFAULT_CASES, help="SUITE:SIZE:VARIANT:PARTNER,...")
    ap.add_argument("--trace-ms", type=float, default=1500.0)
    a = ap.parse_args()
    cases = [c.split(":") for c in a.cases.split(",")]

    import torch

    if not torch.cuda.is_available():
        print("no CUDA device: nothing measured")
        return 0
    import triton
    import triton.testing

    from irdiff.run.inputs import build_inputs
    from irdiff.run.launch import make_launch
    from irdiff.run.runner import local_target
    from irdiff.run.stats import summarize
    from irdiff.run.timing import TimingOptions, device_info, measure
    from irdiff.suite import load_suite

    target = local_target()
    s = Sampler()
    lines = [f"device: {device_info()}; Triton {triton.__version__}; torch {torch.__version__}"]
    out: dict[str, Any] = {"device": device_info(), "cases": []}
    buf256 = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int32, device="cuda")
    l2 = device_info()["l2_bytes"] or 64 * 2**20
    buf120 = torch.empty(2 * l2, dtype=torch.int8, device="cuda")

    def say(x: str) -> None:
        print(x, flush=True)
        lines.append(x)

    def phase(fn: Any, ms: float, flush: Any, timed: bool, chunk_ms: float, est: float) -> list[dict[str, Any]]:
        """Run ``fn`` for ~``ms`` of GPU time in chunks; per chunk: host t0/t1, launch times, GPU busy span."""
        per = max(1, int(chunk_ms / est))
        chunks = []
        t_end = time.perf_counter() + ms / 1e3
        while time.perf_counter() < t_end:
            t0 = time.perf_counter()
            c0, c1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            c0.record()
            evs = []
            for _ in range(per):
                if flush is not None:
                    flush.zero_()
                if timed:
                    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    e0.record()
                    fn()
                    e1.record()
                    evs.append((e0, e1))
                else:
                    fn()
            c1.record()
            t_enq = time.perf_counter()
            torch.cuda.synchronize()
            t1 = time.perf_counter()
            chunks.append(
                {
                    "t0": t0,
                    "t1": t1,
                    "enqueue_s": t_enq - t0,
                    "gpu_ms": c0.elapsed_time(c1),
                    "times": [x.elapsed_time(y) for x, y in evs],
                }
            )
        return chunks

    def buckets(chunks: list[dict[str, Any]], start: float, width_ms: float = 100.0) -> list[str]:
        rows: dict[int, list[dict[str, Any]]] = {}
        for c in chunks:
            rows.setdefault(int((c["t0"] - start) * 1e3 // width_ms), []).append(c)
        res = []
        for k in sorted(rows):
            cs = rows[k]
            ts = [t for c in cs for t in c["times"]]
            w = s.window(cs[0]["t0"], cs[-1]["t1"])
            wall = sum(c["t1"] - c["t0"] for c in cs) * 1e3
            enq = sum(c["enqueue_s"] for c in cs) * 1e3
            busy = sum(c["gpu_ms"] for c in cs)
            med = f"{statistics.median(ts):.4f}" if ts else "  —   "
            res.append(
                f"    {k * width_ms:5.0f} ms  launch {med} ms (n={len(ts):5d})  {w.get('mhz', 0):5.0f} MHz "
                f"(min {w.get('mhz_min', 0):4.0f})  {w.get('w', 0):4.0f} W  {w.get('c', 0):3.0f} C  "
                f"enqueue {enq / max(wall, 1e-9) * 100:3.0f}% of wall, GPU span {busy / max(wall, 1e-9) * 100:3.0f}%"
                f"  reasons {w.get('reasons', '-')}"
            )
        return res

    def bench(fn: Any, **kw: Any) -> tuple[float, dict[str, Any]]:
        t0 = time.perf_counter()
        ms = float(triton.testing.do_bench(fn, return_mode="median", **kw))
        return ms, s.window(t0, time.perf_counter())

    for suite_name, size_s, name, partner in cases:
        size = int(size_s)
        suite = load_suite(suite_name)
        shape = {k: size for k in suite.shape} if suite_name == "matmul" else {**suite.shape, "M": size, "N": size}
        fns = {}
        for n in (name, partner):
            v = suite.variant(n)
            fns[n] = make_launch(suite, n, build_inputs((v.args or suite.args)(shape), device="cuda"), shape, target)
            fns[n]()
        torch.cuda.synchronize()
        fn = fns[name]
        est = statistics.median(x for c in phase(fn, 50, buf256, True, 10, 0.05) for x in c["times"])
        say(f"\n== {suite_name} {shape} {name} (partner {partner}); one launch ~{est:.4f} ms")
        case: dict[str, Any] = {"suite": suite_name, "shape": shape, "variant": name, "partner": partner}

        # 1. trace of the earlier benchmark's do_bench load
        time.sleep(1.0)
        t_start = time.perf_counter()
        warm = phase(fn, 1000, None, False, 20, est)
        timed = phase(fn, a.trace_ms, buf256, True, 20, est + 0.06)
        say("  trace: 1000 ms back-to-back without flush (do_bench warmup=1000), then flush 256 MB + timed launch:")
        for ln in buckets(warm, t_start):
            say(ln.replace("launch   —    ms (n=    0)", "untimed (no flush)        "))
        for ln in buckets(timed, t_start):
            say(ln)
        all_t = [t for c in timed for t in c["times"]]
        first = [t for c in timed if c["t0"] - timed[0]["t0"] < 0.1 for t in c["times"]]
        last = [t for c in timed if c["t0"] - timed[0]["t0"] >= a.trace_ms / 1e3 - 0.5 for t in c["times"]]
        case["trace"] = {"first_100ms": statistics.median(first), "last_500ms": statistics.median(last),
                         "all": statistics.median(all_t)}  # fmt: skip
        say(f"  timed phase: first 100 ms {case['trace']['first_100ms']:.4f} ms, last 500 ms "
            f"{case['trace']['last_500ms']:.4f} ms ({(case['trace']['first_100ms'] / case['trace']['last_500ms'] - 1) * 100:+.1f}%)")  # fmt: skip

        # L2 state: alternate warm L2 / 120 MiB / 256 MB in 100 ms pieces, steady clock now
        l2res: dict[str, list[float]] = {"warm L2 (no flush)": [], "flush 2xL2 (runner)": [], "flush 256 MB": []}
        for _ in range(3):
            for key, buf in zip(l2res, (None, buf120, buf256), strict=True):
                l2res[key] += [t for c in phase(fn, 100, buf, True, 20, est + 0.06) for t in c["times"]]
        case["l2"] = {k: statistics.median(v) for k, v in l2res.items()}
        say("  L2 state (alternated, 3 x 100 ms each): "
            + "; ".join(f"{k} {v:.4f} ms" for k, v in case["l2"].items()))  # fmt: skip

        # 2. do_bench three ways
        res: dict[str, list[Any]] = {}
        time.sleep(1.0)
        res["warmup=1000,rep=100 (earlier bench)"] = [bench(fn, warmup=1000, rep=100) for _ in range(2)]
        time.sleep(1.0)
        res["defaults after 1 s idle"] = [bench(fn)]
        time.sleep(1.0)
        res["defaults after 1 s idle (again)"] = [bench(fn)]
        bench(fn, rep=1000)  # pre-run: do_bench's own load
        res["rep=1000 after 1 s do_bench pre-run"] = [bench(fn, rep=1000) for _ in range(2)]
        case["do_bench"] = {k: [{"ms": m, "clock": w} for m, w in v] for k, v in res.items()}
        for k, v in res.items():
            say(f"  do_bench {k}: " + "; ".join(
                f"{m:.4f} ms ({w.get('mhz', 0):.0f} MHz, {w.get('w', 0):.0f} W, {w.get('reasons')})" for m, w in v))  # fmt: skip

        # 3. runner
        m = measure({name: fn, partner: fns[partner]}, TimingOptions())
        c = m.clocks.get(name, {})
        rmed = summarize(m.samples[name]).median_ms
        m2 = measure({name: fn}, TimingOptions(flush_l2=False, blocks=3))
        c2 = m2.clocks.get(name, {})
        nf = summarize(m2.samples[name]).median_ms
        case["runner"] = {"beside_partner": rmed, "clock": c.get("sm_mhz"), "no_flush_alone": nf,
                          "no_flush_clock": c2.get("sm_mhz")}  # fmt: skip
        say(f"  runner beside {partner}: {rmed:.4f} ms ({c.get('sm_mhz', 0):.0f} MHz {c.get('power_w', 0):.0f} W); "
            f"alone, no flush: {nf:.4f} ms ({c2.get('sm_mhz', 0):.0f} MHz)")  # fmt: skip
        out["cases"].append(case)
        del fns, fn
        torch.cuda.empty_cache()
    s.stop = True
    if a.out:
        p = Path(a.out)
        p.mkdir(parents=True, exist_ok=True)
        (p / "timing_causes.txt").write_text("\n".join(lines) + "\n")
        (p / "timing_causes.json").write_text(json.dumps(out, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
