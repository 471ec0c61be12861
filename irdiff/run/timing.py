"""Timing launches on a CUDA GPU with CUDA events, each variant under its own sustained load.

Method (written into the bundle as ``runs["timing"]["method"]``):

1. Each launch runs once untimed (the JIT compiles it), then ``warmup`` more times, timed, to estimate one
   launch's duration.
2. Each variant is timed in *blocks*: back-to-back launches lasting at least ``block_ms`` (100 ms by default,
   long enough for the SM clock to settle at what this kernel alone sustains; at most ``max_block_launches``), one
   pair of CUDA events around each launch. The blocks alternate between variants (A B, then B A, …), so slow drift
   of clock and temperature falls on every variant alike, and a fast kernel is never timed in the short gap
   between two launches of a slow, low-power one, at a boost clock it cannot sustain alone (seen on an H200: the
   same GEMM read 735–749 TFLOP/s beside one partner and 642–647 beside another with launch-by-launch
   interleaving). The first block of each variant is warm-up and is dropped. Before every block the variant runs
   untimed until its SM clock (NVML) stops drifting (:func:`_settle`, 100–1500 ms): power and temperature follow
   the previous block's load for longer than one block (with 100 ms blocks and no settling, the same GEMM still
   ran at 1965 MHz after a low-power partner and at 1470 MHz after a hot one, 13 % apart;
   ``benchmarks/results/runner-h200-blocks100``).
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
6. Statistics (:mod:`irdiff.run.stats`): per variant the median and IQR of every timed launch; the verdict's
   interval comes from resampling *blocks* (their medians), so it covers block-to-block variation, not only
   launch-to-launch.
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

__all__ = ["ClockSampler", "Measurement", "TimingOptions", "block_order", "device_info", "measure", "schedule"]


@dataclass
class TimingOptions:
    """Settings of :func:`measure` (see the module docstring for how each is used)."""

    warmup: int = 10
    reps: int | None = None
    block_ms: float = 100.0
    blocks: int = 6
    settle_min_ms: float = 100.0
    settle_max_ms: float = 1500.0
    settle_chunk_ms: float = 25.0
    max_block_launches: int = 2000
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
    :ivar clocks: name → ``{"sm_mhz": median, "power_w": median, "per_block": [{"sm_mhz", "power_w"}, …]}``
        (empty without NVML).
    """

    samples: dict[str, list[float]]
    method: str
    settings: dict[str, Any] = field(default_factory=dict)
    blocks: dict[str, list[list[float]]] = field(default_factory=dict)
    clocks: dict[str, dict[str, Any]] = field(default_factory=dict)


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


class ClockSampler:
    """SM clock (MHz) and board power (W) of GPU 0 sampled by a background thread through NVML (``pynvml`` from
    ``nvidia-ml-py``); ``available`` is False when the binding or the driver's NVML is missing."""

    def __init__(self, period_s: float = 0.005):
        self.period_s = period_s
        self.available = False
        self.samples: list[tuple[float, float, float]] = []  # (host time, MHz, W)
        self._stop = False
        self._thread: Any = None
        try:
            import pynvml

            pynvml.nvmlInit()
            idx = 0
            visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
            if visible.isdigit():
                idx = int(visible)
            self._nvml = pynvml
            self._handle = pynvml.nvmlDeviceGetHandleByIndex(idx)
            self.available = True
        except Exception:  # noqa: BLE001 - NVML is optional
            self.available = False

    def _read(self) -> tuple[float, float]:
        n = self._nvml
        mhz = float(n.nvmlDeviceGetClockInfo(self._handle, n.NVML_CLOCK_SM))
        watts = float(n.nvmlDeviceGetPowerUsage(self._handle)) / 1000.0
        return mhz, watts

    def __enter__(self) -> ClockSampler:
        if self.available:
            import threading

            def loop() -> None:
                while not self._stop:
                    try:
                        mhz, w = self._read()
                        self.samples.append((time.perf_counter(), mhz, w))
                    except Exception:  # noqa: BLE001
                        return
                    time.sleep(self.period_s)

            self._thread = threading.Thread(target=loop, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop = True
        if self._thread is not None:
            self._thread.join(timeout=1.0)

    def window(self, t0: float, t1: float) -> dict[str, float] | None:
        """Median clock and power of the samples taken between host times ``t0`` and ``t1``."""
        got = [(m, w) for t, m, w in self.samples if t0 <= t <= t1]
        if not got:
            return None
        mhz = sorted(m for m, _ in got)[len(got) // 2]
        w = sorted(x for _, x in got)[len(got) // 2]
        return {"sm_mhz": mhz, "power_w": w, "n": len(got)}


def _settle(cuda: _Cuda, fn: Callable[[], Any], launch_ms: float, flush: bool, sampler: Any,
            opts: TimingOptions) -> float:  # fmt: skip
    """Run ``fn`` untimed, in chunks of ~``settle_chunk_ms``, until the SM clock is steady (two successive chunks
    the clock now within 1 % or 15 MHz of the clock 100 ms earlier) after at least ``settle_min_ms``, or ``settle_max_ms`` has passed; without NVML, for
    ``settle_min_ms``. Power and temperature, hence the clock, follow the previous variant's load for far longer than
    one block (on an H200 the same GEMM ran at 1965 MHz after a low-power partner and 1470 MHz after a hot one):
    this lets each variant reach its own steady state. Returns the milliseconds spent."""
    n = max(1, math.ceil(opts.settle_chunk_ms / max(launch_ms, 1e-3)))
    n = min(n, opts.max_block_launches)
    t_start = time.perf_counter()
    history: list[tuple[float, float]] = []  # (ms since start, chunk's median MHz)
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            if flush:
                cuda.flush()
            fn()
        cuda.sync()
        t1 = time.perf_counter()
        spent = (t1 - t_start) * 1e3
        if spent >= opts.settle_max_ms:
            return spent
        if spent < opts.settle_min_ms:
            continue
        if sampler is None or not getattr(sampler, "available", False):
            return spent
        w = sampler.window(t0, t1)
        if w is None:
            return spent
        mhz = float(w["sm_mhz"])
        before = [c for t, c in history if t <= spent - 100.0]
        if before and abs(mhz - before[-1]) <= max(15.0, 0.01 * before[-1]):
            return spent  # no drift over the last 100 ms
        history.append((spent, mhz))


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


def measure(launches: Mapping[str, Callable[[], Any]], opts: TimingOptions | None = None) -> Measurement:
    """Time every launch (``{name: zero-argument callable}``) in alternating sustained blocks (module docstring).

    :returns: per-name samples in ms per launch from the measured blocks (``n`` equal for all names), the blocks,
        NVML clocks, and the method text.
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
        times = sorted(s.elapsed_time(e) for s, e in evs)
        est[name] = times[len(times) // 2]
    flush_ms = _flush_ms(cuda) if flush else 0.0
    slowest = max(est.values()) if est else 1.0
    if opts.reps:
        per_block = max(1, math.ceil(opts.reps / max(1, opts.blocks)))
    else:
        per_block = math.ceil(opts.block_ms / max(slowest + flush_ms, 1e-6))
        per_block = max(opts.min_block_launches, min(opts.max_block_launches, per_block))
    cpu_ms = cpu_s * 1e3

    blocks: dict[str, list[list[float]]] = {n: [] for n in names}
    per_block_clock: dict[str, list[dict[str, float]]] = {n: [] for n in names}
    spun = 0
    order = block_order(names, opts.blocks)
    seen: set[str] = set()
    settle_ms: dict[str, list[float]] = {n: [] for n in names}
    with ClockSampler() if opts.sample_clocks else contextlib.nullcontext() as sampler:
        for name in order:
            settle_ms[name].append(_settle(cuda, fns[name], est[name] + flush_ms, flush, sampler, opts))
            gpu_ms = per_block * (est[name] + flush_ms)
            t0 = time.perf_counter()
            if opts.spin and cpu_ms * per_block > 0.5 * gpu_ms:
                cuda.spin(cpu_ms * per_block * 1.5)
                spun += 1
            else:
                cuda.spin(min(2.0, cpu_ms * 4))
            recs = [_timed(cuda, fns[name], flush) for _ in range(per_block)]
            cuda.sync()
            t1 = time.perf_counter()
            times = [s.elapsed_time(e) / per_launch for s, e in recs]
            if name not in seen:  # the first block of each variant is warm-up
                seen.add(name)
                continue
            blocks[name].append(times)
            if sampler is not None and sampler.available:
                w = sampler.window(t0, t1)
                if w:
                    per_block_clock[name].append(w)
    samples = {n: [t for b in blocks[n] for t in b] for n in names}
    settled = [x for n in names for x in settle_ms[n][1:]]
    clocks: dict[str, dict[str, Any]] = {}
    for n in names:
        pb = per_block_clock[n]
        if pb:
            clocks[n] = {
                "sm_mhz": sorted(x["sm_mhz"] for x in pb)[len(pb) // 2],
                "power_w": sorted(x["power_w"] for x in pb)[len(pb) // 2],
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
    block_len = per_block * (slowest + flush_ms)
    method = (
        f"{how}; {opts.warmup} warm-up launches per variant; each variant timed in {opts.blocks} blocks of "
        f"{per_block} back-to-back launches (~{block_len:.0f} ms for the slowest) after one warm-up block, blocks "
        "alternating between variants (A B, B A, …); before each block the variant runs untimed until its SM clock "
        f"is steady ({opts.settle_min_ms:.0f}–{opts.settle_max_ms:.0f} ms"
        + (f", median {sorted(settled)[len(settled) // 2]:.0f} ms" if settled else "")
        + ")"
        + (f" (a spin kernel ran before {spun} blocks so that the GPU never waits for the CPU)" if spun else "")
        + ("; SM clock and power sampled through NVML during every block" if clocks else "; no NVML clocks")
        + "; statistics: median and IQR of launches, verdict interval by resampling blocks"
    )
    settings = {
        **opts.to_json(),
        "launches_per_block": per_block,
        "reps_used": per_block * opts.blocks,
        "flush_bytes": cuda.flush_bytes,
        "flush_ms": flush_ms,
        "cpu_enqueue_ms": cpu_ms,
        "spin_blocks": spun,
        "settle_ms": settle_ms,
        "estimate_ms": est,
    }
    return Measurement(samples=samples, method=method, settings=settings, blocks=blocks, clocks=clocks)
