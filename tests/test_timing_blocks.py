"""The runner's block logic on CPU, with synthetic inputs (issue 14): when a variant has settled under its own load
(:func:`irdiff.run.timing.is_steady`), how long each variant's blocks are, the GPU's wait for the CPU inside a
block, the NVML window statistics, and the distribution-free interval of the median over block medians. The
settling test drives a toy model of the H200's power cap (a controller following NVML's one-second running average
of the power) to show that the time read no longer depends on the partner; GPU runs are marked ``gpu``."""

from __future__ import annotations

import dataclasses
import doctest
import re
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irdiff.run.stats as stats_mod
import irdiff.run.timing as timing_mod
from irdiff.run.stats import median_interval
from irdiff.run.timing import (
    LIMIT_REASONS,
    Chunk,
    ClockSampler,
    TimingOptions,
    gpu_wait_ms,
    is_steady,
    launches_per_block,
    window_stats,
)


def test_module_examples_hold() -> None:
    for mod in (timing_mod, stats_mod):
        res = doctest.testmod(mod)
        assert res.attempted > 0 and res.failed == 0, mod.__name__


# --- a toy power-capped GPU --------------------------------------------------------------------------------------
CAP_W = 700.0
AVG_MS = 1000.0  # NVML's power reading: a boxcar average over ~1 s (H200 trace: +60 W per 100 ms, linear)
STEP_MS = 5.0


class CappedBoard:
    """Power draw and SM clock every 5 ms. The kernel draws ``watts_per_mhz × clock``; the controller lowers the clock
    so that the one-second average stays at the cap, in 15 MHz steps (as NVML reports them)."""

    def __init__(self, history_w: float, watts_per_mhz: float, max_mhz: float = 1980.0):
        n = int(AVG_MS / STEP_MS)
        self.power = [history_w] * n  # the partner's load fills the averaging window
        self.k = watts_per_mhz
        self.max_mhz = max_mhz

    def avg(self) -> float:
        return sum(self.power[-int(AVG_MS / STEP_MS) :]) / (AVG_MS / STEP_MS)

    def step(self) -> tuple[float, float, bool]:
        """Run 5 ms; returns (clock MHz, NVML power W, limited)."""
        a = self.avg()
        # budget for the next step so that the average reaches the cap; never above max clock
        budget = CAP_W + (CAP_W - a) * 0.5
        mhz = min(self.max_mhz, budget / self.k)
        mhz = 15.0 * round(mhz / 15.0)
        self.power.append(self.k * mhz)
        return mhz, self.avg(), mhz < self.max_mhz

    def steady_mhz(self) -> float:
        return min(self.max_mhz, 15.0 * round(CAP_W / self.k / 15.0))


def settle_on(board: CappedBoard, opts: TimingOptions, reasons: bool = True) -> tuple[float, float]:
    """Drive the board in 25 ms chunks until :func:`is_steady`; returns (ms spent, clock of the next 100 ms)."""
    hist: list[Chunk] = []
    t = 0.0
    while t < opts.settle_max_ms:
        rows = [board.step() for _ in range(int(opts.settle_chunk_ms / STEP_MS))]
        t += opts.settle_chunk_ms
        mhz = sorted(r[0] for r in rows)[len(rows) // 2]
        watts = sorted(r[1] for r in rows)[len(rows) // 2]
        hist.append(Chunk(t, mhz, watts, any(r[2] for r in rows) if reasons else False))
        if is_steady(hist, opts):
            break
    block = [board.step()[0] for _ in range(20)]
    return t, float(np.median(block))


@pytest.mark.parametrize("reasons", [True, None])
def test_settling_makes_a_capped_kernel_independent_of_its_partner(reasons: bool | None) -> None:
    """A capped kernel (690 W at 1470 MHz) after a cool partner (600 W) or a hot one (695 W): once settled, it runs at
    its own steady clock after either; settling on the clock alone (no limit seen) stops while the clock still
    follows the partner's power (the +2.7 % of the H200 partner test)."""
    opts = TimingOptions()
    k = 690.0 / 1470.0
    ends = {}
    for partner_w in (600.0, 695.0):
        board = CappedBoard(partner_w, k)
        if reasons is None:  # reasons unknown: the power criterion applies to every chunk
            hist: list[Chunk] = []
            t = 0.0
            while t < opts.settle_max_ms:
                rows = [board.step() for _ in range(5)]
                t += 25.0
                hist.append(Chunk(t, rows[2][0], rows[2][1], None))
                if is_steady(hist, opts):
                    break
            spent, mhz = t, float(np.median([board.step()[0] for _ in range(20)]))
        else:
            spent, mhz = settle_on(board, opts)
        assert spent < opts.settle_max_ms, "settling must end by its criterion, not the time limit"
        ends[partner_w] = mhz
    assert abs(ends[600.0] - ends[695.0]) <= 15.0, ends
    assert abs(ends[600.0] - CappedBoard(0, k).steady_mhz()) <= 15.0

    clock_only = {}
    for partner_w in (600.0, 695.0):
        spent, mhz = settle_on(CappedBoard(partner_w, k), opts, reasons=False)
        clock_only[partner_w] = mhz
    assert clock_only[600.0] - clock_only[695.0] >= 30.0, (
        "the toy model must show the partner effect the power criterion removes",
        clock_only,
    )


def test_uncapped_kernel_settles_on_its_clock_alone() -> None:
    """A kernel far below the cap runs at boost clock after any partner: no need to wait for the power average."""
    opts = TimingOptions()
    board = CappedBoard(690.0, 300.0 / 1980.0)
    spent, mhz = settle_on(board, opts)
    assert mhz == 1980.0
    assert spent <= opts.settle_min_ms + opts.clock_window_ms + opts.settle_chunk_ms


def _chunks(mhz: list[float], watts: list[float], limited: list[bool | None], dt: float = 25.0) -> list[Chunk]:
    return [Chunk(dt * (i + 1), m, w, lim) for i, (m, w, lim) in enumerate(zip(mhz, watts, limited, strict=True))]


def test_is_steady_needs_the_minimum_time_and_a_window_before() -> None:
    opts = TimingOptions(settle_min_ms=100.0)
    flat = _chunks([1980.0] * 3, [300.0] * 3, [False] * 3)
    assert not is_steady(flat, opts)  # 75 ms < settle_min
    assert not is_steady([], opts)
    assert is_steady(_chunks([1980.0] * 5, [300.0] * 5, [False] * 5), opts)


def test_is_steady_rejects_a_clock_step_anywhere_in_the_window() -> None:
    """One chunk 30 MHz off inside the last 100 ms is drift, even when the ends agree."""
    opts = TimingOptions()
    m = [1500.0] * 60  # 1.5 s: past the minimum settling under a limit
    m[-2] = 1530.0
    assert not is_steady(_chunks(m, [690.0] * 60, [True] * 60), opts)
    m[-2] = 1515.0  # one NVML step (15 MHz) is within tolerance
    assert is_steady(_chunks(m, [690.0] * 60, [True] * 60), opts)


@pytest.mark.parametrize("limited", [True, None])
def test_power_must_be_flat_when_a_limit_holds_the_clock_or_reasons_are_unknown(limited: bool | None) -> None:
    opts = TimingOptions()
    ramp = _chunks([1470.0] * 60, [600.0 + 2.5 * i for i in range(60)], [limited] * 60)  # +20 W per 200 ms
    assert not is_steady(ramp, opts)
    flat = _chunks([1470.0] * 60, [690.0 + (i % 2) * 3.0 for i in range(60)], [limited] * 60)
    assert is_steady(flat, opts)
    free = _chunks([1980.0] * 20, [600.0 + 2.5 * i for i in range(20)], [False] * 20)
    assert is_steady(free, opts)


def test_under_a_limit_settling_lasts_the_power_averaging_window() -> None:
    """Under a power limit a flat clock and power are not enough before ``limited_settle_min_ms`` (NVML's ~1 s
    power average still holds the partner's load); without a limit ``settle_min_ms`` is enough."""
    opts = TimingOptions()
    n_short = int(opts.limited_settle_min_ms / opts.settle_chunk_ms) - 2
    capped = _chunks([1470.0] * n_short, [690.0] * n_short, [True] * n_short)
    assert not is_steady(capped, opts)
    n_long = n_short + 4
    assert is_steady(_chunks([1470.0] * n_long, [690.0] * n_long, [True] * n_long), opts)
    assert is_steady(_chunks([1980.0] * n_short, [300.0] * n_short, [False] * n_short), opts)


def test_a_limit_seen_in_the_power_window_counts() -> None:
    opts = TimingOptions()
    lim: list[bool | None] = [False] * 20
    lim[-4] = True  # 100 ms ago the cap held the clock
    ramp = _chunks([1980.0] * 20, [600.0 + 2.5 * i for i in range(20)], lim)
    assert not is_steady(ramp, opts)


def test_blocks_are_equal_in_each_variants_own_time() -> None:
    opts = TimingOptions(block_ms=100.0, max_block_launches=4000)
    k = launches_per_block({"annotated": 5.57, "unannotated": 0.2458, "tiny": 0.0147}, 0.03, opts)
    assert k["annotated"] == 18  # ceil(100 / 5.60)
    assert k["unannotated"] == 363
    assert k["tiny"] == 2238  # ceil(100 / 0.0447)
    for n, ms in {"annotated": 5.57, "unannotated": 0.2458, "tiny": 0.0147}.items():
        assert 100.0 <= k[n] * (ms + 0.03) < 100.0 + ms + 0.03
    clamped = launches_per_block({"slow": 500.0, "fast": 0.001}, 0.0, TimingOptions(max_block_launches=50))
    assert clamped == {"slow": 3, "fast": 50}
    assert launches_per_block({"a": 1.0, "b": 0.1}, 0.0, TimingOptions(reps=60, blocks=6)) == {"a": 10, "b": 10}


def test_gpu_wait_is_zero_when_the_queue_stays_full() -> None:
    launch, flush = 0.015, 0.03
    starts = [i * (launch + flush) for i in range(100)]
    ends = [s + launch for s in starts]
    assert gpu_wait_ms(starts, ends, flush * 1.25) == 0.0
    # the CPU falls behind for the last 10 launches: each waits 20 µs more
    late = starts[:90] + [starts[89] + (launch + flush + 0.02) * (i + 1) for i in range(10)]
    late_ends = [s + launch for s in late]
    assert gpu_wait_ms(late, late_ends, flush * 1.25) == pytest.approx(10 * (0.02 - 0.25 * flush - 0.005))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0.001, 1.0), st.floats(0.0, 1.0)), min_size=1, max_size=40))
def test_gpu_wait_never_exceeds_the_idle_time(runs: list[tuple[float, float]]) -> None:
    starts, ends, t = [], [], 0.0
    for dur, gap in runs:
        starts.append(t)
        ends.append(t + dur)
        t += dur + gap
    idle = sum(s - e for s, e in zip(starts[1:], ends[:-1], strict=False))
    w = gpu_wait_ms(starts, ends, 0.0, slack_ms=0.0)
    assert 0.0 <= w <= idle + 1e-9
    assert w == pytest.approx(idle, abs=1e-9)


def test_window_stats_medians_limits_and_trend() -> None:
    s = [(0.01 * i, 1500.0 - 15.0 * (i // 3), 690.0 + i, 4 if i < 6 else 0) for i in range(9)]
    w = window_stats(s)
    assert w is not None
    assert w["sm_mhz"] == 1485.0 and w["power_w"] == 694.0 and w["n"] == 9
    assert w["limited_pct"] == pytest.approx(100 * 6 / 9)
    assert w["clock_trend_mhz"] == -30.0
    assert window_stats([]) is None
    unknown = window_stats([(0.0, 1980.0, 300.0, None), (0.1, 1980.0, 310.0, None)])
    assert unknown is not None and unknown["limited_pct"] is None and unknown["clock_trend_mhz"] == 0.0
    assert window_stats([(0.0, 1980.0, 300.0, 1)])["limited_pct"] == 0.0  # type: ignore[index]  # GPU idle: no limit
    assert LIMIT_REASONS & 0x4 and not LIMIT_REASONS & 0x1


def test_clock_sampler_window_selects_by_host_time() -> None:
    cs = ClockSampler()
    cs.available = False
    for i in range(10):
        cs.samples.append((float(i), 1000.0 + i, 100.0 + i, None))
        cs._times.append(float(i))
    assert [x[1] for x in cs.between(2.0, 4.0)] == [1002.0, 1003.0, 1004.0]
    w = cs.window(2.5, 7.0)
    assert w is not None and w["sm_mhz"] == 1005.0 and w["n"] == 5
    assert cs.window(20.0, 30.0) is None


class _FakeCuda:
    def flush(self) -> None:
        pass

    def sync(self) -> None:
        pass


class _ModelSampler:
    """A sampler whose readings come from a function of the time since it was made (ms)."""

    available = True

    def __init__(self, model: Callable[[float], tuple[float, float, bool]]):
        self.t0 = time.perf_counter()
        self.model = model

    def window(self, t0: float, t1: float) -> dict[str, float | None]:
        mhz, w, lim = self.model((t1 - self.t0) * 1e3)
        return {"sm_mhz": mhz, "power_w": w, "limited_pct": 100.0 if lim else 0.0, "n": 3, "clock_trend_mhz": 0.0}


def test_settle_loop_waits_for_the_power_average_under_the_cap() -> None:
    """The settle loop itself (fake device, real time): power flat after ~120 ms, capped throughout."""
    opts = TimingOptions(settle_min_ms=10.0, settle_max_ms=1000.0, settle_chunk_ms=5.0, clock_window_ms=20.0,
                         power_window_ms=40.0, limited_settle_min_ms=60.0)  # fmt: skip

    def model(ms: float) -> tuple[float, float, bool]:
        return 1470.0, 600.0 + min(ms, 120.0) * 0.9, True

    spent, steady = _run_settle(_ModelSampler(model), opts)
    assert steady and 120.0 <= spent < 400.0
    spent, steady = _run_settle(None, opts)
    assert not steady and 10.0 <= spent < 100.0  # no NVML: settle_min_ms, and not called steady
    short = TimingOptions(settle_min_ms=10.0, settle_max_ms=60.0, settle_chunk_ms=5.0)
    spent, steady = _run_settle(_ModelSampler(lambda ms: (1470.0, 600.0 + ms, True)), short)
    assert not steady and 60.0 <= spent < 200.0


def _run_settle(sampler: Any, opts: TimingOptions) -> tuple[float, bool]:
    """``_settle`` on a fake device whose launch takes 5 ms of real time."""
    cuda: Any = _FakeCuda()
    return timing_mod._settle(cuda, lambda: time.sleep(0.005), 5.0, True, sampler, opts)


# --- the interval of the median over block medians -----------------------------------------------------------------
def test_median_interval_order_statistics() -> None:
    assert median_interval([3.0, 1.0, 2.0, 6.0, 5.0, 4.0]) == (1.0, 6.0, 0.96875)
    lo, hi, level = median_interval(list(range(1, 10)))  # n = 9: 2nd and 8th
    assert (lo, hi) == (2.0, 8.0) and level == pytest.approx(1 - 2 * 10 / 512)
    lo, hi, level = median_interval([1.0, 2.0, 3.0])  # too few for 95 %: [min, max] and its lower coverage
    assert (lo, hi, level) == (1.0, 3.0, 0.75)
    with pytest.raises(ValueError, match="no values"):
        median_interval([])


def test_median_interval_covers_as_promised() -> None:
    """Six blocks from a skewed distribution with a known median: coverage ≈ 96.9 %."""
    rng = np.random.default_rng(7)
    true_median = float(np.log(2.0))  # exponential(1)
    trials = 4000
    hits = 0
    for _ in range(trials):
        lo, hi, _ = median_interval(rng.exponential(1.0, size=6).tolist())
        hits += lo <= true_median <= hi
    assert abs(hits / trials - 0.96875) < 0.01


@settings(max_examples=80, deadline=None)
@given(st.lists(st.floats(0.001, 100.0), min_size=1, max_size=30), st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.99]))
def test_median_interval_holds_the_sample_median(xs: list[float], conf: float) -> None:
    lo, hi, level = median_interval(xs, conf)
    assert lo <= float(np.median(xs)) <= hi
    assert level >= conf or (lo, hi) == (min(xs), max(xs))
    lo2, hi2, _ = median_interval(xs, 0.5)
    assert lo <= lo2 and hi2 <= hi  # more confidence never narrows it


def test_agreement_benchmark_reports_the_block_facts() -> None:
    """``benchmarks/bench_agreement.py``'s block columns from a synthetic measurement (the device run must not be the
    first run of this code)."""
    import importlib.util
    from pathlib import Path

    from irdiff.run.timing import Measurement

    path = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_agreement.py"
    spec = importlib.util.spec_from_file_location("bench_agreement", path)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    blocks = [[1.00, 1.02, 0.99], [1.01, 1.00, 1.03], [0.98, 0.99, 1.00], [1.04, 1.02, 1.03], [1.0] * 3, [1.01] * 3]
    info = [{"launches": 3, "settle_ms": s, "settled": s < 2500, "gpu_wait_pct": w} for s, w in
            [(1100.0, 0.0), (1200.0, 0.1), (2500.0, 3.0), (900.0, 0.0), (1000.0, 0.0), (1300.0, 0.0)]]  # fmt: skip
    m = Measurement(samples={"tiled": [t for b in blocks for t in b]}, method="", blocks={"tiled": blocks},
                    settings={"launches_per_block": {"tiled": 3}}, block_info={"tiled": info})  # fmt: skip
    b = bench.block_facts(m, "tiled")
    assert b["block_medians"] == [1.00, 1.01, 0.99, 1.03, 1.0, 1.01]
    assert b["ci"] == (0.99, 1.03) and b["ci_level"] == 0.96875
    assert b["settle_ms"] == 1200.0 and b["unsteady"] == 1 and b["wait_pct"] == 3.0
    text = bench.block_text(b, 1.005)
    assert text.startswith("block CI -1.5/+2.5% (97%), 3 launches/block, settle 1200 ms, 1 unsteady")
    assert text.endswith("GPU waited 3.0%")
    b["settle_ms"] = None
    assert "settle —" in bench.block_text(b, 1.005)


class _SimEvent:
    def __init__(self, gpu: _SimGpu):
        self.gpu, self.t = gpu, 0.0

    def record(self) -> None:
        self.t = self.gpu.now

    def elapsed_time(self, other: _SimEvent) -> float:
        return other.t - self.t


class _SimGpu:
    """A simulated device for :func:`measure`: a GPU clock (ms) that launches and flushes advance; no CUDA."""

    flush_bytes = 120 * 2**20
    cycles_per_ms = 0.0

    def __init__(self) -> None:
        self.now = 0.0
        self.flushes = 0

    def event(self) -> _SimEvent:
        return _SimEvent(self)

    def flush(self) -> None:
        self.now += 0.03
        self.flushes += 1

    def sync(self) -> None:
        pass

    def spin(self, ms: float) -> None:
        self.now += ms


def test_measure_loop_on_a_simulated_device(monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole block loop of :func:`measure` (order, warm-up block dropped, equal-time blocks, block records) with
    CUDA replaced by a simulated clock: a 2 ms and a 0.015 ms kernel."""
    torch = pytest.importorskip("torch")
    gpu = _SimGpu()
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    monkeypatch.setattr(timing_mod, "_Cuda", lambda flush, spin: gpu)
    order: list[str] = []

    def launch(name: str, ms: float) -> Callable[[], None]:
        def fn() -> None:
            gpu.now += ms
            order.append(name)

        return fn

    opts = TimingOptions(block_ms=20.0, blocks=4, settle_min_ms=1.0, sample_clocks=False, spin=False)
    m = timing_mod.measure({"slow": launch("slow", 2.0), "fast": launch("fast", 0.015)}, opts)
    k = m.settings["launches_per_block"]
    assert k == {"slow": 10, "fast": 445}  # ceil(20 / 2.03), ceil(20 / 0.045)
    assert [len(b) for b in m.blocks["slow"]] == [10] * 4 and [len(b) for b in m.blocks["fast"]] == [445] * 4
    assert m.samples["slow"] == [pytest.approx(2.0)] * 40 and m.samples["fast"] == [pytest.approx(0.015)] * 1780
    assert m.settings["reps_used"] == {"slow": 40, "fast": 1780}
    for n in ("slow", "fast"):
        rows = m.block_info[n]
        assert len(rows) == 4 and all(r["settled"] is None and r["gpu_wait_pct"] == 0.0 for r in rows)
        assert all(r["span_ms"] == pytest.approx(k[n] * (0.03 + (2.0 if n == "slow" else 0.015)) - 0.03) for r in rows)
    assert "blocks of ~20 ms of its own launches (slow 10, fast 445 launches)" in m.method
    assert m.clocks == {} and "no NVML clocks" in m.method
    timed = [n for n, prev in zip(order, [None, *order], strict=False) if n != prev]
    assert timed[:2] == ["slow", "fast"]  # JIT launch of each first


def test_blocks_are_sized_from_the_settled_warm_up_block(monkeypatch: pytest.MonkeyPatch) -> None:
    """A GPU still at its idle clock during the first launches (here: 3 ms per launch for the first 12, then 2 ms,
    as an H200 ramping from 345 MHz): the measured blocks are sized from the warm-up block, which ran settled, so a
    block lasts ``block_ms`` of the steady kernel (20 ms = 10 launches), not 7 launches sized from the cold
    estimate (14 ms: what the H200 GPU test saw, 14.5 of 20 ms)."""
    torch = pytest.importorskip("torch")
    gpu = _SimGpu()
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    monkeypatch.setattr(timing_mod, "_Cuda", lambda flush, spin: gpu)
    calls = [0]

    def ramping() -> None:
        calls[0] += 1
        gpu.now += 3.0 if calls[0] <= 12 else 2.0

    opts = TimingOptions(block_ms=20.0, blocks=3, settle_min_ms=1.0, sample_clocks=False, spin=False, flush_l2=False)
    m = timing_mod.measure({"ramp": ramping}, opts)
    assert m.settings["launches_per_block"] == {"ramp": 10}
    assert [len(b) for b in m.blocks["ramp"]] == [10] * 3
    assert all(r["span_ms"] == pytest.approx(20.0) for r in m.block_info["ramp"])
    assert "(ramp 10 launches)" in m.method
    # with a fixed launch count (--reps) nothing is re-sized
    m = timing_mod.measure({"ramp": ramping}, dataclasses.replace(opts, reps=9))
    assert [len(b) for b in m.blocks["ramp"]] == [3] * 3


def test_block_report_reads_the_committed_h200_run() -> None:
    """``benchmarks/agreement_blocks.py`` on the H200 run in ``benchmarks/results/agreement-h200-final``."""
    import importlib.util
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    spec = importlib.util.spec_from_file_location("agreement_blocks", root / "benchmarks" / "agreement_blocks.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rows = json.loads((root / "benchmarks/results/agreement-h200-final/bench_agreement.json").read_text())["rows"]
    text = mod.report(rows)
    assert re.search(r"matmul +1024 unannotated +97 +-3\.58%", text)
    assert "M=N=8192: partner effect +2.69%" in text
    assert "m1 tiled      1500/633 1485/625 1455/698" in text
    assert text == (root / "benchmarks/results/agreement-h200-final/blocks.txt").read_text().split("\n", 1)[1].rstrip()


class _FakeNvml:
    """A ClockSampler stand-in: capped at 1470 MHz / 690 W, reasons SwPowerCap, whatever the window."""

    available = True

    def __enter__(self) -> _FakeNvml:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def window(self, t0: float, t1: float) -> dict[str, Any] | None:
        return window_stats([(t0, 1470.0, 690.0, 4), (t1, 1470.0, 690.0, 4), (t1, 1470.0, 690.0, 4)])


def test_measure_records_nvml_per_block_on_a_simulated_device(monkeypatch: pytest.MonkeyPatch) -> None:
    """The NVML path of :func:`measure`: settling ends by its criterion (flat clock and power under the cap), each
    block carries clock, power, limit share and trend, and the variant's median clock and power are reported."""
    torch = pytest.importorskip("torch")
    gpu = _SimGpu()
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    monkeypatch.setattr(timing_mod, "_Cuda", lambda flush, spin: gpu)
    monkeypatch.setattr(timing_mod, "ClockSampler", _FakeNvml)

    def launch() -> None:
        gpu.now += 0.5
        time.sleep(0.001)  # settling is timed on the host

    opts = TimingOptions(block_ms=5.0, blocks=2, settle_min_ms=10.0, settle_chunk_ms=2.0, clock_window_ms=5.0,
                         power_window_ms=10.0, spin=False)  # fmt: skip
    m = timing_mod.measure({"tiled": launch}, opts)
    rows = m.block_info["tiled"]
    assert len(rows) == 2
    for r in rows:
        assert r["settled"] is True and r["settle_ms"] >= 10.0
        assert (r["sm_mhz"], r["power_w"], r["limited_pct"], r["clock_trend_mhz"]) == (1470.0, 690.0, 100.0, 0.0)
    assert m.clocks["tiled"]["sm_mhz"] == 1470.0 and m.clocks["tiled"]["power_w"] == 690.0
    assert len(m.clocks["tiled"]["per_block"]) == 2
    assert "SM clock and power sampled through NVML" in m.method and "not steady" not in m.method
    assert m.settings["unsteady_blocks"] == 0

    class Climbing(_FakeNvml):  # the power average never flattens: every settling runs into settle_max_ms
        calls = 0

        def window(self, t0: float, t1: float) -> dict[str, Any] | None:
            Climbing.calls += 1
            w = 600.0 + 20.0 * Climbing.calls
            return window_stats([(t0, 1470.0, w, 4), (t1, 1470.0, w, 4), (t1, 1470.0, w, 4)])

    monkeypatch.setattr(timing_mod, "ClockSampler", Climbing)
    m = timing_mod.measure({"tiled": launch}, TimingOptions(**{**opts.to_json(), "settle_max_ms": 30.0}))
    assert [r["settled"] for r in m.block_info["tiled"]] == [False, False]
    assert m.settings["unsteady_blocks"] == 2 and "2 blocks not steady by 30 ms" in m.method


@pytest.mark.gpu
def test_gpu_blocks_equal_in_time_and_recorded() -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    from irdiff.run.timing import measure

    a = torch.randn(2048, 2048, device="cuda", dtype=torch.float16)
    small = torch.randn(256, 256, device="cuda", dtype=torch.float16)
    m = measure({"big": lambda: a @ a, "small": lambda: small @ small},
                TimingOptions(block_ms=20, blocks=3, settle_max_ms=500))  # fmt: skip
    k = m.settings["launches_per_block"]
    assert k["small"] > k["big"]
    for n in ("big", "small"):
        assert len(m.blocks[n]) == 3 and len(m.block_info[n]) == 3
        for row in m.block_info[n]:
            assert row["launches"] == k[n] and 0.0 <= row["gpu_wait_pct"] <= 100.0
            assert row["span_ms"] >= 15.0 or row["launches"] == m.settings["max_block_launches"]
