"""Timing launches on a CUDA GPU with CUDA events, each variant under its own sustained load.

Method (written into the bundle as ``runs["timing"]["method"]``):

1. Each launch runs once untimed (the JIT compiles it), then ``warmup`` more times, timed, to estimate one
   launch's duration.
2. Each variant is timed in *blocks*: back-to-back launches lasting ``block_ms`` (100 ms by default) of *its own*
   GPU time (:func:`launches_per_block`; at most ``max_block_launches``), one pair of CUDA events around each
   launch. The blocks alternate between variants (A B, then B A, …), so slow drift of clock and temperature falls on
   every variant alike, and a fast kernel is never timed in the short gap between two launches of a slow, low-power
   one, at a boost clock it cannot sustain alone (seen on an H200: the same GEMM read 735–749 TFLOP/s beside one
   partner and 642–647 beside another with launch-by-launch interleaving). The first block of each variant is
   warm-up and is dropped; its launches, run settled, re-estimate the variant's launch time, and its measured blocks
   are sized from that (the first estimate, step 1, is taken from a GPU that may still be at its idle clock: on an
   H200 a 2048³ GEMM's 20 ms blocks came out at 14.5 ms when sized from it). Before every block the variant runs untimed until it holds the GPU in its own steady
   state (:func:`is_steady`, 100–2500 ms): the SM clock steady over 100 ms and, where a power or thermal limit
   holds the clock (NVML clock event reasons), NVML's power reading flat over 200 ms. That reading is a ~1 s
   running average and the power cap's controller follows it, so after a partner of different power the clock of a
   capped kernel drifts for about a second; settling on the clock alone (its 15 MHz steps hide the drift) left the
   same ``tiled`` GEMM 2.7 % apart beside two partners (1485 vs 1455 MHz, ``benchmarks/results/
   agreement-h200-final``), and no settling at all 13 % apart (``benchmarks/results/runner-h200-blocks100``).
   A block whose settling ran into ``settle_max_ms`` is counted (``unsteady_blocks``) and said in the method.
3. Before every timed launch the L2 cache is flushed by zeroing a buffer twice the device's L2 size, between, not
   inside, the pair of events, so each launch reads its inputs from DRAM as in a real program: cold-L2 times, as
   ``triton.testing.do_bench`` measures them (it zeroes 256 MiB, ``get_empty_cache_for_benchmark`` in
   ``triton/backends/nvidia/driver.py``; both exceed the L2). With a warm L2 (no flush) small problems would read
   their inputs from the L2 and a tiny kernel's launches would outrun the CPU (on the H200, matmul 2048 back to
   back without flush read 0.055 ms per launch against 0.030 flushed: the events then time the CPU's launch
   latency); ``--graph`` is the warm-L2 option, for tiny kernels. On the H200 the runner's sustained cold-L2 times
   agree with do_bench run in a comparable sustained setting (1 s of its own load first, a ≥ 1 s window) within
   0.2–2.4 % where an earlier comparison missed by 3.5–9.6 %; that comparison gave do_bench a 1 s warm-up without
   flush and a 100 ms window, which fell into the power cap's recovery transient
   (``benchmarks/results/agreement-h200-causes/README.md``).
4. A block is enqueued whole and then synchronized. Where enqueuing it takes the CPU longer than the GPU takes to
   run it (tiny kernels), a spin kernel (``torch.cuda._sleep``) runs first, long enough for the CPU to get ahead.
5. During every block the SM clock and the board power are sampled through NVML (``nvidia-ml-py``, optional:
   without it no clocks are reported) every few milliseconds; each variant's median clock and power are reported
   beside its time, and the runner flags a variant whose clock differs from its partner's by more than 3 %.
6. Statistics (:mod:`irdiff.run.stats`): per variant the median and IQR of every timed launch, and an interval
   of the median from the block medians (:func:`irdiff.run.stats.median_interval`); the verdict's interval comes
   from resampling *blocks* (their medians), so both cover block-to-block variation, not only launch-to-launch.
   Per block the runner also records the GPU's wait for the CPU (:func:`gpu_wait_ms`), the limit reasons and the
   clock's trend inside the block (:func:`window_stats`).
7. With ``graph=True`` (``--graph``), each variant's ``graph_launches`` back-to-back launches are captured in a
   CUDA graph and the graph's replays are timed instead (per-launch time = replay time / ``graph_launches``); no
   flush between the launches of a replay (L2 warm). This suits tiny kernels, where launch overhead dominates.

All times are milliseconds per launch. torch is imported lazily.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = [
    "LIMIT_REASONS",
    "Chunk",
    "ClockSampler",
    "Measurement",
    "TimingOptions",
    "block_order",
    "device_info",
    "gpu_wait_ms",
    "is_steady",
    "launches_per_block",
    "measure",
    "schedule",
    "window_stats",
]


@dataclass
class TimingOptions:
    """Settings of :func:`measure` (see the module docstring for how each is used).

    Block length: ``block_ms`` of each variant's *own* GPU time (``launches_per_block``), between
    ``min_block_launches`` and ``max_block_launches`` launches. Settling (:func:`is_steady`): at least
    ``settle_min_ms``, at most ``settle_max_ms``; the SM clock steady over ``clock_window_ms`` (within
    ``clock_tol_mhz`` or ``clock_tol``); where a power or thermal limit held the clock, also NVML's power reading
    steady over ``power_window_ms`` (within ``power_tol_w`` or ``power_tol``) and at least ``limited_settle_min_ms``
    of the variant's own load (NVML's power averaging window, about 1 s, plus margin).
    """

    warmup: int = 10
    reps: int | None = None
    block_ms: float = 100.0
    blocks: int = 6
    settle_min_ms: float = 100.0
    settle_max_ms: float = 2500.0
    settle_chunk_ms: float = 25.0
    clock_window_ms: float = 100.0
    clock_tol_mhz: float = 15.0
    clock_tol: float = 0.01
    power_window_ms: float = 200.0
    limited_settle_min_ms: float = 1200.0
    power_tol_w: float = 8.0
    power_tol: float = 0.012
    max_block_launches: int = 4000
    min_block_launches: int = 3
    flush_l2: bool = True
    graph: bool = False
    graph_launches: int = 10
    spin: bool = True
    sample_clocks: bool = True

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Measurement:
    """Samples (ms per launch, in launch order) for every name, the block structure, clocks, and the method.

    :ivar blocks: name → per measured block, the launch times (ms) of that block.
    :ivar clocks: name → ``{"sm_mhz": median, "power_w": median, "per_block": [{"sm_mhz", "power_w", …}, …]}``
        (empty without NVML).
    :ivar block_info: name → per measured block: ``launches``, ``settle_ms``, ``settled`` (False: settling ran
        into ``settle_max_ms``), ``gpu_wait_pct`` (share of the block's GPU span the GPU waited for the CPU,
        :func:`gpu_wait_ms`) and, with NVML, the block's ``sm_mhz``, ``power_w``, ``limited_pct`` and
        ``clock_trend_mhz`` (:func:`window_stats`).
    """

    samples: dict[str, list[float]]
    method: str
    settings: dict[str, Any] = field(default_factory=dict)
    blocks: dict[str, list[list[float]]] = field(default_factory=dict)
    clocks: dict[str, dict[str, Any]] = field(default_factory=dict)
    block_info: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


def schedule(names: Sequence[str], reps: int, round_size: int) -> list[list[str]]:
    """The order of timed launches: ``ceil(reps / round_size)`` rounds, each ``round_size`` (the last round: the
    rest) launches of every name, interleaved ``A B A B …``, the first name rotating by one each round.

    >>> schedule(["A", "B"], 3, 2)
    [['A', 'B', 'A', 'B'], ['B', 'A']]
    """
    if reps <= 0 or round_size <= 0:
        raise ValueError("reps and round_size must be positive")
    out: list[list[str]] = []
    done = 0
    r = 0
    while done < reps:
        k = min(round_size, reps - done)
        order = list(names[r % len(names) :]) + list(names[: r % len(names)]) if names else []
        out.append([n for _ in range(k) for n in order])
        done += k
        r += 1
    return out


def device_info() -> dict[str, Any]:
    """Name, compute capability, SM count, L2 size (bytes) and memory of CUDA device 0, plus torch/CUDA versions."""
    import torch

    p = torch.cuda.get_device_properties(0)
    return {
        "name": p.name,
        "capability": f"sm{p.major}{p.minor}",
        "sm_count": p.multi_processor_count,
        "l2_bytes": int(getattr(p, "L2_cache_size", 0) or 0),
        "memory_bytes": int(p.total_memory),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
    }


class _Cuda:
    """Events, L2 flush and the spin kernel on the current CUDA stream."""

    def __init__(self, flush: bool, spin: bool):
        import torch

        self.torch = torch
        l2 = device_info()["l2_bytes"] or 64 * 2**20
        self.flush_bytes = 2 * l2 if flush else 0
        self.buf = torch.empty(self.flush_bytes, dtype=torch.int8, device="cuda") if flush else None
        self.cycles_per_ms = self._calibrate_spin() if spin and hasattr(torch.cuda, "_sleep") else 0.0

    def event(self) -> Any:
        return self.torch.cuda.Event(enable_timing=True)

    def flush(self) -> None:
        if self.buf is not None:
            self.buf.zero_()

    def sync(self) -> None:
        self.torch.cuda.synchronize()

    def _calibrate_spin(self) -> float:
        torch = self.torch
        torch.cuda._sleep(1000)
        s, e = self.event(), self.event()
        s.record()
        torch.cuda._sleep(5_000_000)
        e.record()
        torch.cuda.synchronize()
        ms = s.elapsed_time(e)
        return 5_000_000 / ms if ms > 0 else 0.0

    def spin(self, ms: float) -> None:
        if self.cycles_per_ms > 0 and ms > 0:
            self.torch.cuda._sleep(int(min(ms, 200.0) * self.cycles_per_ms))


def _flush_ms(cuda: _Cuda) -> float:
    """Median GPU time of one L2 flush (ms)."""
    evs = []
    for _ in range(5):
        s, e = cuda.event(), cuda.event()
        s.record()
        cuda.flush()
        e.record()
        evs.append((s, e))
    cuda.sync()
    return sorted(s.elapsed_time(e) for s, e in evs)[2]


def _timed(cuda: _Cuda, fn: Callable[[], Any], flush: bool) -> tuple[Any, Any]:
    if flush:
        cuda.flush()
    s, e = cuda.event(), cuda.event()
    s.record()
    fn()
    e.record()
    return s, e


def _capture_graphs(launches: Mapping[str, Callable[[], Any]], k: int) -> dict[str, Callable[[], Any]]:
    import torch

    replays: dict[str, Callable[[], Any]] = {}
    for name, fn in launches.items():
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(3):
                fn()
        torch.cuda.current_stream().wait_stream(stream)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(k):
                fn()
        torch.cuda.synchronize()
        replays[name] = g.replay
    return replays


LIMIT_REASONS = 0x4 | 0x8 | 0x20 | 0x40 | 0x80
"""NVML clock event reasons that mean a power or thermal limit holds the clock down (``nvml.h``:
``SwPowerCap`` 0x4, ``HwSlowdown`` 0x8, ``SwThermalSlowdown`` 0x20, ``HwThermalSlowdown`` 0x40,
``HwPowerBrakeSlowdown`` 0x80). Under them the clock depends on the recent power history, not only on the kernel."""

Sample = tuple[float, float, float, "int | None"]
"""One NVML reading: (host time in s from ``time.perf_counter``, SM clock MHz, board power W, clock event reasons
bit mask or None where the driver does not report them)."""


def window_stats(samples: Sequence[Sample]) -> dict[str, Any] | None:
    """Median SM clock (MHz) and power (W) of ``samples``, the share of them with a limit reason
    (``limited_pct``, None when no reasons were read) and the clock trend inside the window (``clock_trend_mhz``:
    median clock of the last third minus that of the first third; 0 with fewer than 3 samples); None for no samples.

    >>> window_stats([(0.0, 1500.0, 690.0, 4), (0.1, 1470.0, 691.0, 4), (0.2, 1455.0, 689.0, 0)])["clock_trend_mhz"]
    -45.0
    """
    if not samples:
        return None
    mhz = sorted(m for _, m, _, _ in samples)
    watts = sorted(w for _, _, w, _ in samples)
    reasons = [r for *_, r in samples if r is not None]
    n = len(samples)
    trend = 0.0
    if n >= 3:
        third = n // 3
        first = sorted(m for _, m, _, _ in samples[:third])
        last = sorted(m for _, m, _, _ in samples[n - third :])
        trend = last[len(last) // 2] - first[len(first) // 2]
    return {
        "sm_mhz": mhz[n // 2],
        "power_w": watts[n // 2],
        "n": n,
        "limited_pct": 100.0 * sum(1 for r in reasons if r & LIMIT_REASONS) / len(reasons) if reasons else None,
        "clock_trend_mhz": trend,
    }


class ClockSampler:
    """SM clock (MHz), board power (W) and clock event reasons of GPU 0 sampled by a background thread through NVML
    (``pynvml`` from ``nvidia-ml-py``); ``available`` is False when the binding or the driver's NVML is missing.

    NVML's power reading (``nvmlDeviceGetPowerUsage``) is a running average over about one second on Hopper: under a
    constant load on the H200 it climbed linearly from 136 to 669 W in 900 ms
    (``benchmarks/results/agreement-h200-causes/timing_causes.txt``), so a flat reading means the last second's load
    was the same as now."""

    def __init__(self, period_s: float = 0.005):
        self.period_s = period_s
        self.available = False
        self.samples: list[Sample] = []
        self._times: list[float] = []
        self._stop = False
        self._thread: Any = None
        self._reasons: Any = None
        try:
            import pynvml

            pynvml.nvmlInit()
            idx = 0
            visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
            if visible.isdigit():
                idx = int(visible)
            self._nvml = pynvml
            self._handle = pynvml.nvmlDeviceGetHandleByIndex(idx)
            self._reasons = getattr(pynvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or getattr(
                pynvml, "nvmlDeviceGetCurrentClocksThrottleReasons", None
            )
            self.available = True
        except Exception:  # noqa: BLE001 - NVML is optional
            self.available = False

    def _read(self) -> tuple[float, float, int | None]:
        n = self._nvml
        mhz = float(n.nvmlDeviceGetClockInfo(self._handle, n.NVML_CLOCK_SM))
        watts = float(n.nvmlDeviceGetPowerUsage(self._handle)) / 1000.0
        bits: int | None = None
        if self._reasons is not None:
            try:
                bits = int(self._reasons(self._handle))
            except Exception:  # noqa: BLE001 - reasons are optional
                self._reasons = None
        return mhz, watts, bits

    def __enter__(self) -> ClockSampler:
        if self.available:
            import threading

            def loop() -> None:
                while not self._stop:
                    try:
                        mhz, w, bits = self._read()
                    except Exception:  # noqa: BLE001
                        return
                    t = time.perf_counter()
                    self.samples.append((t, mhz, w, bits))
                    self._times.append(t)
                    time.sleep(self.period_s)

            self._thread = threading.Thread(target=loop, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop = True
        if self._thread is not None:
            self._thread.join(timeout=1.0)

    def between(self, t0: float, t1: float) -> list[Sample]:
        """The samples taken between host times ``t0`` and ``t1`` (s, ``time.perf_counter``)."""
        import bisect

        n = len(self._times)  # the thread only appends: a snapshot of the length is consistent
        times = self._times
        i = bisect.bisect_left(times, t0, 0, n)
        j = bisect.bisect_right(times, t1, 0, n)
        return self.samples[i:j]

    def window(self, t0: float, t1: float) -> dict[str, Any] | None:
        """:func:`window_stats` of the samples taken between host times ``t0`` and ``t1``."""
        return window_stats(self.between(t0, t1))


@dataclass(frozen=True)
class Chunk:
    """One chunk of untimed settling launches: when it ended (ms since settling began) and NVML's readings during it.

    :ivar limited: a power or thermal limit reason was seen (None: reasons unknown).
    """

    end_ms: float
    sm_mhz: float
    power_w: float
    limited: bool | None


def is_steady(history: Sequence[Chunk], opts: TimingOptions) -> bool:
    """Has the variant reached the state its own sustained load holds the GPU in? ``history``: the settling chunks
    so far, oldest first.

    Steady when, after ``settle_min_ms``: (1) the SM clock of every chunk of the last ``clock_window_ms`` (and the
    chunk just before that window) is within ``max(clock_tol_mhz, clock_tol × clock)`` of the latest; and (2) where
    any chunk of the last ``power_window_ms`` ran under a power/thermal limit reason (or reasons are unknown), NVML's
    power reading moved by at most ``max(power_tol_w, power_tol × power)`` over that window, after at least
    ``limited_settle_min_ms`` of settling. (2) is the part that
    makes a variant's time independent of its partner: under the power cap the controller follows the last second's
    power (NVML's averaging window), so after a partner of different power the clock drifts for about a second
    (H200, ``tiled`` 8192×8192×4096: 1485 MHz after ``persistent`` at ~600 W, 1455 MHz after
    ``persistent-noflatten`` at ~690 W, when settling stopped on the clock alone; its 15 MHz steps hide a slow
    drift). Without a limit the clock is the kernel's own and the power history does not matter.

    >>> o = TimingOptions()
    >>> flat = [Chunk(25.0 * i, 1980.0, 300.0 + 5 * i, False) for i in range(1, 9)]
    >>> is_steady(flat, o)  # at boost clock, no limit: the power's drift does not matter
    True
    >>> capped = [Chunk(25.0 * i, 1470.0, 600.0 + 2.0 * i, True) for i in range(1, 13)]
    >>> is_steady(capped, o)  # capped and the power still climbing 16 W per 200 ms
    False
    """
    if not history:
        return False
    last = history[-1]
    if last.end_ms < opts.settle_min_ms:
        return False
    before = [c for c in history if c.end_ms <= last.end_ms - opts.clock_window_ms]
    if not before:
        return False
    recent = [before[-1]] + [c for c in history if c.end_ms > last.end_ms - opts.clock_window_ms]
    tol = max(opts.clock_tol_mhz, opts.clock_tol * last.sm_mhz)
    if any(abs(c.sm_mhz - last.sm_mhz) > tol for c in recent):
        return False
    window = [c for c in history if c.end_ms >= last.end_ms - opts.power_window_ms]
    if all(c.limited is False for c in window):
        return True
    if last.end_ms < opts.limited_settle_min_ms:
        # under a limit, the controller follows a ~1 s running average of power: until the variant's own load has
        # filled it, the clock still carries the partner's (H200, ``tiled`` 8192×8192×4096 beside two partners:
        # +2.19 % with settling on a flat 200 ms power reading, +1.42 % with ≥ 1200 ms of its own load,
        # ``benchmarks/results/agreement-h200-settle/``)
        return False
    ref = [c for c in history if c.end_ms <= last.end_ms - opts.power_window_ms]
    if not ref:
        return False
    p0 = ref[-1].power_w
    return abs(last.power_w - p0) <= max(opts.power_tol_w, opts.power_tol * p0)


def launches_per_block(est_ms: Mapping[str, float], flush_ms: float, opts: TimingOptions) -> dict[str, int]:
    """Launches in one block for each variant: ``block_ms`` of its *own* GPU time (launch + flush), within
    ``[min_block_launches, max_block_launches]``; with ``opts.reps`` the same ``ceil(reps / blocks)`` for all.

    Each variant gets as much time under its own load as any other: with one launch count for all (the slowest
    variant's), the fast kernels' timed launches in the H200 benchmark added up to 24–232 ms over all six blocks
    (``matmul`` 2048 unannotated 24 ms, 1024 unannotated 97 ms, ``tiled`` 8192 232 ms; the slow partners 456–782
    ms; ``benchmarks/results/agreement-h200-final/bench_agreement.json``, ``window_ms``).

    >>> launches_per_block({"slow": 2.0, "fast": 0.5}, 0.0, TimingOptions(block_ms=100))
    {'slow': 50, 'fast': 200}
    """
    if opts.reps:
        k = max(1, math.ceil(opts.reps / max(1, opts.blocks)))
        return {n: k for n in est_ms}
    out = {}
    for n, ms in est_ms.items():
        k = math.ceil(opts.block_ms / max(ms + flush_ms, 1e-6))
        out[n] = max(opts.min_block_launches, min(opts.max_block_launches, k))
    return out


def gpu_wait_ms(
    starts_ms: Sequence[float], ends_ms: Sequence[float], between_ms: float, slack_ms: float = 0.005
) -> float:
    """How long the GPU waited for the CPU inside one block (ms): the sum over launches of the gap from one launch's
    end event to the next one's start event beyond ``between_ms`` (the L2 flush between them) plus ``slack_ms``.
    ``starts_ms``/``ends_ms``: event times of each launch, relative to one event of the block. A waiting GPU adds
    the CPU's launch latency to the launches it waits for (the events then time the CPU); the spin kernel is there
    to prevent it.

    >>> gpu_wait_ms([0.0, 0.05, 0.20], [0.01, 0.06, 0.21], between_ms=0.04)
    0.095
    """
    wait = 0.0
    for i in range(1, min(len(starts_ms), len(ends_ms))):
        gap = starts_ms[i] - ends_ms[i - 1]
        wait += max(0.0, gap - between_ms - slack_ms)
    return round(wait, 9)


def _settle(cuda: _Cuda, fn: Callable[[], Any], launch_ms: float, flush: bool, sampler: Any,
            opts: TimingOptions) -> tuple[float, bool]:  # fmt: skip
    """Run ``fn`` untimed, in chunks of ~``settle_chunk_ms``, until :func:`is_steady` (or ``settle_max_ms``);
    without NVML, for ``settle_min_ms``. Returns the milliseconds spent and whether the state was steady."""
    n = max(1, math.ceil(opts.settle_chunk_ms / max(launch_ms, 1e-3)))
    n = min(n, opts.max_block_launches)
    t_start = time.perf_counter()
    history: list[Chunk] = []
    nvml = sampler is not None and getattr(sampler, "available", False)
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            if flush:
                cuda.flush()
            fn()
        cuda.sync()
        t1 = time.perf_counter()
        spent = (t1 - t_start) * 1e3
        if not nvml:
            if spent >= opts.settle_min_ms:
                return spent, False
            continue
        w = sampler.window(t0, t1)
        if w is not None:
            lim = w["limited_pct"]
            history.append(Chunk(spent, float(w["sm_mhz"]), float(w["power_w"]), None if lim is None else lim > 0))
            if is_steady(history, opts):
                return spent, True
        if spent >= opts.settle_max_ms:
            return spent, False


def block_order(names: Sequence[str], blocks: int) -> list[str]:
    """The order of blocks: one warm-up block each, then ``blocks`` rounds with the first name rotating.

    >>> block_order(["A", "B"], 2)
    ['A', 'B', 'A', 'B', 'B', 'A']
    """
    out = list(names)
    for r in range(blocks):
        k = r % len(names) if names else 0
        out += list(names[k:]) + list(names[:k])
    return out


def _median(xs: Sequence[float]) -> float:
    s = sorted(xs)
    return s[len(s) // 2]


def measure(launches: Mapping[str, Callable[[], Any]], opts: TimingOptions | None = None) -> Measurement:
    """Time every launch (``{name: zero-argument callable}``) in alternating sustained blocks (module docstring).

    :returns: per-name samples in ms per launch from the measured blocks (each variant's own count: blocks are
        equal in time, not in launches), the blocks and what was seen during each, NVML clocks, and the method text.
    :raises RuntimeError: no CUDA device.
    """
    import torch

    opts = opts or TimingOptions()
    if not torch.cuda.is_available():
        raise RuntimeError("no CUDA device")
    names = list(launches)
    for fn in launches.values():  # compile (JIT) outside any timing
        fn()
    torch.cuda.synchronize()
    per_launch = 1
    fns = dict(launches)
    if opts.graph:
        per_launch = max(1, opts.graph_launches)
        fns = _capture_graphs(launches, per_launch)
    flush = opts.flush_l2 and not opts.graph
    cuda = _Cuda(flush, opts.spin)

    est: dict[str, float] = {}
    cpu_s = 0.0
    for name in names:
        evs = []
        t0 = time.perf_counter()
        for _ in range(max(1, opts.warmup)):
            evs.append(_timed(cuda, fns[name], flush))
        cpu_s = max(cpu_s, (time.perf_counter() - t0) / max(1, opts.warmup))
        cuda.sync()
        est[name] = _median([s.elapsed_time(e) for s, e in evs])
    flush_ms = _flush_ms(cuda) if flush else 0.0
    per_block = launches_per_block(est, flush_ms, opts)
    cpu_ms = cpu_s * 1e3

    blocks: dict[str, list[list[float]]] = {n: [] for n in names}
    info: dict[str, list[dict[str, Any]]] = {n: [] for n in names}
    per_block_clock: dict[str, list[dict[str, Any]]] = {n: [] for n in names}
    spun = 0
    order = block_order(names, opts.blocks)
    seen: set[str] = set()
    settle_ms: dict[str, list[float]] = {n: [] for n in names}
    with ClockSampler() if opts.sample_clocks else contextlib.nullcontext() as sampler:
        nvml = sampler is not None and sampler.available
        for name in order:
            spent, steady = _settle(cuda, fns[name], est[name] + flush_ms, flush, sampler, opts)
            settle_ms[name].append(spent)
            k = per_block[name]
            gpu_ms = k * (est[name] + flush_ms)
            if opts.spin and cpu_ms * k > 0.5 * gpu_ms:
                cuda.spin(cpu_ms * k * 1.5)
                spun += 1
            else:
                cuda.spin(min(2.0, cpu_ms * 4))
            recs = [_timed(cuda, fns[name], flush) for _ in range(k)]
            cuda.sync()
            t1 = time.perf_counter()
            times = [s.elapsed_time(e) / per_launch for s, e in recs]
            if name not in seen:  # the first block of each variant is warm-up
                seen.add(name)
                if not opts.reps and recs:  # its launches ran settled: size this variant's blocks from them
                    est[name] = _median([s.elapsed_time(e) for s, e in recs])
                    per_block[name] = launches_per_block({name: est[name]}, flush_ms, opts)[name]
                continue
            blocks[name].append(times)
            first = recs[0][0]
            starts = [0.0] + [first.elapsed_time(s) for s, _ in recs[1:]]
            ends = [first.elapsed_time(e) for _, e in recs]
            span = ends[-1] if ends else 0.0
            wait = gpu_wait_ms(starts, ends, flush_ms + 0.25 * flush_ms)
            row: dict[str, Any] = {"launches": k, "settle_ms": round(spent, 1), "settled": steady if nvml else None,
                                   "span_ms": round(span, 3),
                                   "gpu_wait_pct": round(100.0 * wait / span, 2) if span > 0 else 0.0}  # fmt: skip
            if nvml and sampler is not None:
                w = sampler.window(t1 - span / 1e3, t1)  # the block's GPU span, not the spin before it
                if w:
                    row.update({k2: w[k2] for k2 in ("sm_mhz", "power_w", "limited_pct", "clock_trend_mhz")})
                    per_block_clock[name].append(w)
            info[name].append(row)
    samples = {n: [t for b in blocks[n] for t in b] for n in names}
    settled = [x for n in names for x in settle_ms[n][1:]]
    clocks: dict[str, dict[str, Any]] = {}
    for n in names:
        pb = per_block_clock[n]
        if pb:
            clocks[n] = {
                "sm_mhz": _median([x["sm_mhz"] for x in pb]),
                "power_w": _median([x["power_w"] for x in pb]),
                "per_block": pb,
            }
    if opts.graph:
        how = (
            f"CUDA graph replays of {per_launch} back-to-back launches timed with CUDA events (time per launch = "
            f"replay time / {per_launch}; L2 not flushed)"
        )
    else:
        how = "CUDA events around each launch" + (
            f"; L2 flushed before each timed launch by zeroing {cuda.flush_bytes / 2**20:.0f} MiB (2x the L2)"
            if flush
            else "; L2 not flushed"
        )
    unsteady = sum(1 for n in names for r in info[n] if r["settled"] is False)
    counts = ", ".join(f"{n} {per_block[n]}" for n in names)
    method = (
        f"{how}; {opts.warmup} warm-up launches per variant; each variant timed in {opts.blocks} blocks of "
        f"~{opts.block_ms:.0f} ms of its own launches ({counts} launches) after one warm-up block, blocks "
        "alternating between variants (A B, B A, …); before each block the variant runs untimed until its SM clock "
        "is steady and, under a power or thermal limit, NVML's power reading too "
        f"({opts.settle_min_ms:.0f}–{opts.settle_max_ms:.0f} ms"
        + (f", median {sorted(settled)[len(settled) // 2]:.0f} ms" if settled else "")
        + (f"; {unsteady} blocks not steady by {opts.settle_max_ms:.0f} ms" if unsteady else "")
        + ")"
        + (f" (a spin kernel ran before {spun} blocks so that the GPU never waits for the CPU)" if spun else "")
        + ("; SM clock and power sampled through NVML during every block" if clocks else "; no NVML clocks")
        + "; statistics: median and IQR of launches, intervals by the spread of block medians"
    )
    settings = {
        **opts.to_json(),
        "launches_per_block": per_block,
        "reps_used": {n: per_block[n] * opts.blocks for n in names},
        "flush_bytes": cuda.flush_bytes,
        "flush_ms": flush_ms,
        "cpu_enqueue_ms": cpu_ms,
        "spin_blocks": spun,
        "settle_ms": settle_ms,
        "unsteady_blocks": unsteady,
        "estimate_ms": est,
    }
    return Measurement(samples=samples, method=method, settings=settings, blocks=blocks, clocks=clocks, block_info=info)
