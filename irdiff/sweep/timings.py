"""How long each sweep job took before, and the order that uses it: longest predicted job first.

A sweep's wall time is decided by its last wave: with ``W`` workers, jobs of 2-6 s started in plan order leave
workers idle while the last long jobs finish. Starting the longest jobs first (LPT list scheduling: each free
worker takes the longest job left) keeps the short ones for the end, where they fill the gaps; for independent
jobs its makespan is at most ``4/3 - 1/(3W)`` times the optimum (Graham, 1969), usually close to ``sum / W``.
A sweep's diagnoses depend on two compiles each, so :func:`irdiff.sweep.run_sweep` ranks by the longest chain
(a compile's own time plus its longest diagnosis: highest level first); the short diagnoses then fill the last
wave. On a virtual clock with 64 compiles of 2-6 s and 32 diagnoses of 0.5-1.5 s on 16 workers
(``tests/test_sweep_timings.py``) plan order ends 23 % above ``sum / W``, this order 2 % above.

The prediction is each job's own measured wall time from earlier sweeps, kept in a small history file keyed by the
job's id (:attr:`irdiff.sweep.plan.CompileJob.id`: a digest of its suite, variant, target, Triton release, config
and shape; :attr:`~irdiff.sweep.plan.DiagnosisJob.id` for a pair). The file is
``$IRDIFF_SWEEP_TIMINGS``, else ``sweep-timings.json`` in irdiff's cache root (``$IRDIFF_CACHE_DIR``, else
``~/.cache/irdiff``); ``irdiff sweep --timings FILE`` names another, ``--no-timings`` keeps plan order.

The history is untrusted cache data and only ever changes the order, never a result:

* read: at most :data:`MAX_BYTES`; anything but a JSON object of schema :data:`SCHEMA` is an empty history (plan
  order); entries whose key is not a 16-hex-digit id or whose value is not a finite duration in
  ``(0, MAX_SECONDS]`` are dropped one by one;
* written: merged with the file's current entries under a lock (``filelock``), kept to the :data:`MAX_ENTRIES` most
  recently seen jobs, written by :func:`irdiff.bundle.atomic_write` (a temporary file beside it, renamed: readers see
  the old file or the new one, never a part); a failure to write is ignored (the next sweep starts in plan order).

Each entry holds ``s``, an exponentially weighted mean of the job's seconds (weight 1/2 on the newest run, so one
run under load moves it only half-way), ``n`` the runs seen and ``at`` the Unix time of the latest. Cached compile
jobs are not recorded (their time is a cache lookup, not the compile).

Each duration is also recorded under the job's id with the Triton release left out
(:attr:`~irdiff.sweep.plan.CompileJob.any_release_id`): a job never run under its release (the new half of an upgrade
sweep) is predicted by the same kernel, config, target and shape under another release (a guess: it assumes the
kernel and its config, more than the release, set the compile time; the job's own time replaces it once run). Jobs the history has never seen at all come first, in plan
order (an unknown job run last is the worst case for the tail); with no known job the order is the plan's. No static guess is used: tile size × ``num_stages`` of a
matmul's autotune configs ranks that kernel's compile times well (Spearman 0.93 over 12 compiles,
benchmarks/results/sweep_static_predictor.json), but such a score means nothing across kernels (a reduction's
``BLOCK_SIZE = 1024`` against a matmul's 128 × 128 × 64 tile) and relies on ``BLOCK*`` naming.
"""

from __future__ import annotations

import json
import math
import os
import re
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

__all__ = [
    "MAX_BYTES",
    "MAX_ENTRIES",
    "MAX_SECONDS",
    "SCHEMA",
    "TimingHistory",
    "default_timings_path",
    "lpt_order",
]

SCHEMA = "irdiff.sweep-timings/1"
#: the most jobs kept (the most recently seen); ~80 bytes each
MAX_ENTRIES = 50_000
#: a larger file is not read (a damaged or foreign file: plan order)
MAX_BYTES = 8 * 2**20
#: the longest duration accepted (s): one day
MAX_SECONDS = 86_400.0
_ID = re.compile(r"[0-9a-f]{16}\Z")

J = TypeVar("J")


def default_timings_path() -> Path:
    """``$IRDIFF_SWEEP_TIMINGS``, else ``sweep-timings.json`` in irdiff's cache root (beside the compile cache's
    ``results/``, not in it)."""
    env = os.environ.get("IRDIFF_SWEEP_TIMINGS")
    if env:
        return Path(env)
    from irdiff.compile import cache_dir

    return cache_dir() / "sweep-timings.json"


def _valid(key: Any, value: Any) -> tuple[float, int, float] | None:
    """``(seconds, runs, at)`` of one stored entry, or None when it is not one."""
    if not isinstance(key, str) or not _ID.match(key) or not isinstance(value, dict):
        return None
    s, n, at = value.get("s"), value.get("n", 1), value.get("at", 0)
    if isinstance(s, bool) or not isinstance(s, (int, float)) or not (0 < s <= MAX_SECONDS) or not math.isfinite(s):
        return None
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        return None
    if isinstance(at, bool) or not isinstance(at, (int, float)) or not math.isfinite(at) or at < 0:
        return None
    return float(s), n, float(at)


def _read(path: Path) -> dict[str, tuple[float, int, float]]:
    """The valid entries of the file at ``path``; {} when it is missing, too large, not JSON or of another
    schema."""
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_BYTES + 1)
    except OSError:
        return {}
    if len(raw) > MAX_BYTES:
        return {}
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return {}
    if not isinstance(data, dict) or data.get("schema") != SCHEMA or not isinstance(data.get("jobs"), dict):
        return {}
    out = {}
    for k, v in data["jobs"].items():
        e = _valid(k, v)
        if e is not None:
            out[k] = e
    return out


class TimingHistory:
    """Measured seconds per job id (see the module docstring). ``path=None``: an in-memory history (tests, or
    ``--no-timings`` with :meth:`record` still collecting)."""

    def __init__(self, path: str | Path | None, entries: dict[str, tuple[float, int, float]] | None = None):
        self.path = Path(path) if path is not None else None
        self._old: dict[str, tuple[float, int, float]] = dict(entries or {})
        self._new: dict[str, float] = {}

    @classmethod
    def load(cls, path: str | Path | None = None) -> TimingHistory:
        """The history at ``path`` (default :func:`default_timings_path`); empty when missing or damaged. Never
        raises."""
        p = Path(path) if path is not None else default_timings_path()
        return cls(p, _read(p))

    def __len__(self) -> int:
        return len(self._old)

    def predict(self, job_id: str) -> float | None:
        """The job's expected seconds, or None when no earlier sweep ran it."""
        e = self._old.get(job_id)
        return e[0] if e is not None else None

    def record(self, job_id: str, seconds: float) -> None:
        """Remember that ``job_id`` took ``seconds`` in this sweep (written by :meth:`save`); invalid values are
        ignored."""
        if _ID.match(job_id) and isinstance(seconds, (int, float)) and 0 < seconds <= MAX_SECONDS:
            self._new[job_id] = float(seconds)

    def save(self) -> bool:
        """Merge this sweep's durations into the file (under a lock, atomically; see the module docstring).
        Returns whether it was written; never raises."""
        if self.path is None or not self._new:
            return False
        from filelock import FileLock, Timeout

        from irdiff.bundle import atomic_write

        path = self.path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with FileLock(str(path.with_name(path.name + ".lock")), timeout=30):
                entries = _read(path)
                now = time.time()
                for k, s in self._new.items():
                    old = entries.get(k)
                    entries[k] = (s, 1, now) if old is None else ((old[0] + s) / 2, old[1] + 1, now)
                keep = sorted(entries.items(), key=lambda kv: kv[1][2], reverse=True)[:MAX_ENTRIES]
                data = {"schema": SCHEMA, "jobs": {k: {"s": round(s, 3), "n": n, "at": round(at)}
                                                   for k, (s, n, at) in sorted(keep)}}  # fmt: skip
                atomic_write(path, json.dumps(data, separators=(",", ":")))
        except (OSError, Timeout, ValueError):
            return False
        self._old.update({k: v for k, v in entries.items() if k in self._new})
        self._new.clear()
        return True


def lpt_order(jobs: Sequence[J], predicted: Iterable[float | None]) -> list[J]:
    """``jobs`` longest predicted first (stable: equal predictions keep their order); jobs predicted None (never
    seen) come first, in their order. With no prediction at all this is ``jobs`` unchanged.

    >>> lpt_order(["a", "b", "c", "d"], [1.0, None, 3.0, 1.0])
    ['b', 'c', 'a', 'd']
    """
    preds = list(predicted)
    if len(preds) != len(jobs):
        raise ValueError("lpt_order: one prediction per job")
    idx = sorted(range(len(jobs)), key=lambda i: (preds[i] is not None, -(preds[i] or 0.0), i))
    return [jobs[i] for i in idx]
