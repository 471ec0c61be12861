"""Timing launches on a CUDA GPU with CUDA events.

Method (written into the bundle as ``runs["timing"]["method"]``):

1. Each launch runs once untimed (the JIT compiles it), then ``warmup`` more times; the warm-up launches are timed
   to estimate one launch's duration.
2. Unless ``reps`` is given, each variant gets ``ceil(target_ms / slowest estimate)`` timed launches, clamped to
   ``[min_reps, max_reps]``; every variant gets the same number.
3. The timed launches are *interleaved*: rounds of ``round_size`` launches per variant, in the order A B A B …,
   the starting variant rotating from round to round, so clock and temperature drift affect every variant alike.
4. Before every timed launch the L2 cache is flushed by zeroing a buffer twice the device's L2 size
   (``torch.cuda.get_device_properties().L2_cache_size``), so each launch reads its inputs from DRAM as in a
   real program. The flush runs between, not inside, the pair of events.
5. All rounds are enqueued back to back and synchronized once at the end, so a heavy kernel runs under sustained
   load as in ``triton.testing.do_bench`` (the GPU's clock under sustained tensor-core load is lower than in
   short bursts). Where enqueuing a round takes the CPU longer than the GPU takes to run it (tiny kernels), and
   before the first round, a spin kernel (``torch.cuda._sleep``) runs first, long enough for the CPU to enqueue
   the round, so the events measure the kernels, not Python's launch overhead. The clock also depends on the
   power the *other* kernels of the interleave draw: on an H200 a tensor-core-bound GEMM measured 0.222 ms beside
   a slow, low-power variant and 0.233–0.246 ms beside other GEMMs (``benchmarks/results/runner-h200``).
6. With ``graph=True`` (``--graph``), each variant's ``graph_launches`` back-to-back launches are captured in a
   CUDA graph and the graph's replays are timed instead (per-launch time = replay time / ``graph_launches``); no
   flush between the launches of a replay (L2 warm). This suits tiny kernels, where launch overhead dominates.

All times are milliseconds per launch. torch is imported lazily.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["Measurement", "TimingOptions", "device_info", "measure", "schedule"]


@dataclass
class TimingOptions:
    """Settings of :func:`measure` (see the module docstring for how each is used)."""

    warmup: int = 10
    reps: int | None = None
    target_ms: float = 300.0
    min_reps: int = 30
    max_reps: int = 500
    round_size: int = 10
    flush_l2: bool = True
    graph: bool = False
    graph_launches: int = 10
    spin: bool = True

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Measurement:
    """Samples (ms per launch, in launch order) for every name, and the method in words."""

    samples: dict[str, list[float]]
    method: str
    settings: dict[str, Any] = field(default_factory=dict)


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


def measure(launches: Mapping[str, Callable[[], Any]], opts: TimingOptions | None = None) -> Measurement:
    """Time every launch (``{name: zero-argument callable}``) interleaved with the others.

    :returns: per-name samples in ms per launch (``n`` equal for all names) and the method text.
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

    # Warm-up, timed, to estimate each launch's duration and the CPU cost of enqueuing one launch.
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
    slowest = max(est.values()) if est else 1.0
    if opts.reps:
        reps = opts.reps
    else:
        reps = math.ceil(opts.target_ms / max(slowest, 1e-6))
        reps = max(opts.min_reps, min(opts.max_reps, reps))

    flush_ms = _flush_ms(cuda) if flush else 0.0
    cpu_ms = cpu_s * 1e3
    samples: dict[str, list[float]] = {n: [] for n in names}
    rounds = schedule(names, reps, opts.round_size)
    records: list[tuple[str, Any, Any]] = []
    spun = 0
    for r, order in enumerate(rounds):
        # The GPU must never wait for the CPU inside a timed pair: where enqueuing a round takes longer than
        # running it (and before the first round, when the queue is empty), a spin kernel runs first.
        gpu_round = sum(est[n] + flush_ms for n in order)
        if opts.spin and (r == 0 or cpu_ms * len(order) > 0.8 * gpu_round):
            cuda.spin(cpu_ms * len(order) * 1.5)
            spun += 1
        records.extend((name, *_timed(cuda, fns[name], flush)) for name in order)
    cuda.sync()
    for name, s, e in records:
        samples[name].append(s.elapsed_time(e) / per_launch)

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
    method = (
        f"{how}; {opts.warmup} warm-up launches per variant; {reps} timed launches per variant, interleaved in "
        f"rounds of {opts.round_size} (A B A B …, first variant rotating each round) and enqueued back to back"
        + (
            f" (a spin kernel ran before {spun} of {len(rounds)} rounds so that the GPU never waits for the CPU)"
            if spun and cuda.cycles_per_ms > 0
            else ""
        )
        + "; statistics: median and IQR"
    )
    settings = {
        **opts.to_json(),
        "reps_used": reps,
        "flush_bytes": cuda.flush_bytes,
        "flush_ms": flush_ms,
        "cpu_enqueue_ms": cpu_ms,
        "spin_rounds": spun,
        "estimate_ms": est,
    }
    return Measurement(samples=samples, method=method, settings=settings)
