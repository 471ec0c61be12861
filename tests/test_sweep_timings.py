"""Sweep job order (issue 18): the timing history (untrusted cache data) and longest-predicted-first scheduling.

The schedule itself is tested on a virtual clock (an executor that runs no job and advances time by each job's
given duration), so no test depends on this machine's speed; the real small sweeps check that the order never
changes the table.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest

from irdiff.sweep import TimingHistory, load_plan, run_sweep
from irdiff.sweep.jobs import JobOutcome
from irdiff.sweep.plan import CompileJob, DiagnosisJob, expand
from irdiff.sweep.timings import SCHEMA, default_timings_path, lpt_order

SUITES = Path(__file__).resolve().parent / "suites"
HINTS = SUITES / "sweep_hints.py"
ID = "0123456789abcdef"


# ---------------------------------------------------------------- the history file


def _write(path: Path, data: Any) -> Path:
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def test_history_round_trip_and_running_mean(tmp_path: Path) -> None:
    p = tmp_path / "t.json"
    h = TimingHistory.load(p)
    assert len(h) == 0 and h.predict(ID) is None
    h.record(ID, 4.0)
    assert h.save() and h.predict(ID) == 4.0
    h2 = TimingHistory.load(p)
    assert h2.predict(ID) == 4.0
    h2.record(ID, 2.0)  # the newest run weighs 1/2
    assert h2.save()
    data = json.loads(p.read_text())
    assert data["schema"] == SCHEMA and data["jobs"][ID]["s"] == 3.0 and data["jobs"][ID]["n"] == 2
    assert TimingHistory.load(p).predict(ID) == 3.0
    assert sorted(x.name for x in tmp_path.iterdir()) == ["t.json", "t.json.lock"]  # no temporary file left


@pytest.mark.parametrize(
    "content",
    [
        "",
        "not json",
        "\udcff",
        "[1, 2]",
        {"schema": "irdiff.sweep-timings/0", "jobs": {ID: {"s": 1.0}}},
        {"jobs": {ID: {"s": 1.0}}},
        {"schema": SCHEMA, "jobs": [[ID, 1.0]]},
        "[" * 100_000,
    ],
)
def test_damaged_history_is_empty(tmp_path: Path, content: Any) -> None:
    p = tmp_path / "t.json"
    if content == "\udcff":
        p.write_bytes(b"\xff\xfe{")
    else:
        _write(p, content)
    h = TimingHistory.load(p)
    assert len(h) == 0
    h.record(ID, 1.5)  # and a sweep replaces it with a valid file
    assert h.save() and TimingHistory.load(p).predict(ID) == 1.5


def test_invalid_entries_are_dropped_one_by_one(tmp_path: Path) -> None:
    good = "fedcba9876543210"
    bad = {
        "0123456789ABCDEF": {"s": 1.0},  # not a lower-case hex id
        "0123": {"s": 1.0},
        "../../etc/passwd": {"s": 1.0},
        "1111111111111111": {"s": -1.0},
        "2222222222222222": {"s": 0},
        "3333333333333333": {"s": True},
        "4444444444444444": {"s": "5"},
        "5555555555555555": {"s": 1e9},
        "6666666666666666": {"s": 1.0, "n": 0},
        "7777777777777777": {"s": 1.0, "at": -5},
        "8888888888888888": [1.0],
    }
    p = _write(tmp_path / "t.json", {"schema": SCHEMA, "jobs": {good: {"s": 2.5, "n": 3, "at": 1}, **bad}})
    p.write_text(p.read_text().replace('"s": 0}', '"s": NaN}'))  # Python's json reads NaN: still refused
    h = TimingHistory.load(p)
    assert len(h) == 1 and h.predict(good) == 2.5
    assert all(h.predict(k) is None for k in bad)
    h.record("not-an-id", 1.0)
    h.record(good, math.inf)
    h.record(good, -1.0)
    assert not h.save()  # nothing valid recorded: the file is left as it is


def test_oversized_history_is_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import irdiff.sweep.timings as timings

    p = _write(tmp_path / "t.json", {"schema": SCHEMA, "jobs": {ID: {"s": 1.0, "n": 1, "at": 1}}})
    monkeypatch.setattr(timings, "MAX_BYTES", p.stat().st_size - 1)
    assert len(TimingHistory.load(p)) == 0
    monkeypatch.setattr(timings, "MAX_BYTES", p.stat().st_size)
    assert TimingHistory.load(p).predict(ID) == 1.0


def test_save_merges_other_sweeps_and_keeps_the_newest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import irdiff.sweep.timings as timings

    p = tmp_path / "t.json"
    ids = [f"{i:016x}" for i in range(6)]
    a, b = TimingHistory.load(p), TimingHistory.load(p)  # two sweeps started from the same (empty) file
    a.record(ids[0], 1.0)
    assert a.save()
    b.record(ids[1], 2.0)
    assert b.save()
    merged = TimingHistory.load(p)
    assert merged.predict(ids[0]) == 1.0 and merged.predict(ids[1]) == 2.0  # b kept a's entry
    monkeypatch.setattr(timings, "MAX_ENTRIES", 3)
    later = timings.time.time() + 1000  # after the two entries above
    clock = iter(range(100))
    monkeypatch.setattr(timings.time, "time", lambda: later + next(clock))
    for i in ids[2:]:  # each later than the last
        h = TimingHistory.load(p)
        h.record(i, 3.0)
        assert h.save()
    kept = TimingHistory.load(p)
    assert len(kept) == 3 and [kept.predict(i) for i in ids[3:]] == [3.0, 3.0, 3.0]


def test_unwritable_history_never_raises(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    h = TimingHistory.load(blocker / "t.json")  # a path below a file: unreadable and unwritable
    assert len(h) == 0
    h.record(ID, 1.0)
    assert h.save() is False


def test_default_path_is_beside_the_compile_cache_or_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("IRDIFF_SWEEP_TIMINGS", raising=False)
    monkeypatch.setenv("IRDIFF_CACHE_DIR", str(tmp_path / "cache"))
    assert default_timings_path() == tmp_path / "cache" / "sweep-timings.json"
    monkeypatch.setenv("IRDIFF_SWEEP_TIMINGS", str(tmp_path / "elsewhere.json"))
    assert default_timings_path() == tmp_path / "elsewhere.json"


# ---------------------------------------------------------------- the order


def test_lpt_order_is_stable_and_puts_unseen_jobs_first() -> None:
    assert lpt_order(list("abcde"), [None] * 5) == list("abcde")
    assert lpt_order(list("abcde"), [1.0, 5.0, 1.0, None, 2.0]) == list("dbeac")
    with pytest.raises(ValueError):
        lpt_order(["a"], [])


class VirtualClockExecutor:
    """The executor protocol on a virtual clock: ``workers`` workers take submitted jobs in submission order (as the
    process pool's queue does); each job takes ``durations[job id]`` virtual seconds and runs nothing. Records
    when each job started and ended."""

    name = "virtual"

    def __init__(self, workers: int, durations: dict[str, float]):
        self.workers = workers
        self.max_in_flight = workers + 1
        self.durations = durations
        self.now = 0.0
        self.queue: list[int] = []
        self.running: dict[int, float] = {}  # handle -> end time
        self.jobs: dict[int, Any] = {}
        self.started: list[tuple[float, Any]] = []
        self.ended: dict[str, float] = {}

    def _fill(self) -> None:
        while self.queue and len(self.running) < self.workers:
            h = self.queue.pop(0)
            self.running[h] = self.now + self.durations[self.jobs[h].id]
            self.started.append((self.now, self.jobs[h]))

    def submit(self, fn: Any, item: Any, *args: Any) -> int:
        h = len(self.jobs)
        self.jobs[h] = item
        self.queue.append(h)
        self._fill()
        return h

    def wait_done(self, handles: Any) -> list[tuple[int, Any]]:
        self.now = min(self.running.values())
        done = [h for h, end in self.running.items() if end <= self.now]
        for h in done:
            del self.running[h]
            self.ended[self.jobs[h].id] = self.now
        self._fill()
        out = []
        for h in done:
            job = self.jobs[h]
            row = None
            if isinstance(job, DiagnosisJob):
                from irdiff.sweep.table import failed_row

                row = failed_row(job, "not diagnosed: virtual clock")
            out.append((h, JobOutcome(job.id, "done", seconds=self.durations[job.id], row=row)))
        return out

    def cancel(self, handles: Any) -> None:
        pass

    def close(self) -> None:
        pass


def _scaling_like(tmp_path: Path) -> tuple[Any, list[CompileJob], list[DiagnosisJob]]:
    """matmul × 16 configs × sm90/sm100 (benchmarks/plans/scaling.toml's jobs), expanded only."""
    (tmp_path / "p.toml").write_text('name = "s"\nsuites = ["matmul"]\ntargets = ["sm90", "sm100"]\n'
                                     'configs = "all"\nreports = false\n')  # fmt: skip
    plan = load_plan(tmp_path / "p.toml")
    exp = expand(plan)
    assert len(exp.compile_jobs) == 64 and len(exp.diagnosis_jobs) == 32
    return plan, exp.compile_jobs, exp.diagnosis_jobs


def _simulate(plan: Any, out: Path, durations: dict[str, float], workers: int,
              timings: TimingHistory | None) -> VirtualClockExecutor:  # fmt: skip
    ex = VirtualClockExecutor(workers, durations)
    res = run_sweep(plan, out, ex, timings=timings)
    assert res.counts["done"] == len(durations) and res.counts["failed"] == 0
    return ex


def _durations(cjobs: list[CompileJob], djobs: list[DiagnosisJob], profile: str) -> dict[str, float]:
    """Compile jobs of 2-6 s and diagnoses of 0.5-1.5 s: ``ramp`` has the longest compiles last in plan order (the
    plan order's worst case), ``random`` draws them (seeded)."""
    import random

    rnd = random.Random(18)
    n = len(cjobs) - 1
    d = {j.id: 2.0 + 4.0 * ((i / n) ** 2 if profile == "ramp" else rnd.random()) for i, j in enumerate(cjobs)}
    d.update({j.id: 0.5 + ((i % 3) * 0.5 if profile == "ramp" else rnd.random()) for i, j in enumerate(djobs)})
    return d


def _history(path: Path, durations: dict[str, float]) -> TimingHistory:
    h = TimingHistory.load(path)
    for k, s in durations.items():
        h.record(k, s)
    assert h.save()
    return TimingHistory.load(path)


@pytest.mark.parametrize("profile", ["ramp", "random"])
@pytest.mark.parametrize("workers", [2, 4, 16])
def test_longest_chain_first_shortens_the_tail(tmp_path: Path, workers: int, profile: str) -> None:
    plan, cjobs, djobs = _scaling_like(tmp_path)
    durations = _durations(cjobs, djobs, profile)
    plain = _simulate(plan, tmp_path / "plain", durations, workers, None)
    empty = _simulate(plan, tmp_path / "empty", durations, workers, TimingHistory(tmp_path / "none.json"))
    assert [j for _, j in empty.started] == [j for _, j in plain.started]  # no history: plan order exactly
    # plan order: a diagnosis starts as soon as a worker frees after its pair's compiles end (at most the one job
    # queued beyond the running ones ahead of it)
    for t, j in plain.started:
        if isinstance(j, DiagnosisJob):
            ready = max(plain.ended[j.a.id], plain.ended[j.b.id])
            later = [x for s, x in plain.started if ready <= s < t and isinstance(x, CompileJob)]
            assert len(later) <= 1, (j.label(), later)

    h = _history(tmp_path / "t.json", durations)
    pred = {k: h.predict(k) or 0.0 for k in durations}  # as stored (ms); the sweep then adds its own times
    lpt = _simulate(plan, tmp_path / "lpt", durations, workers, h)
    chain = {j.id: pred[j.id] + max(pred[d.id] for d in djobs if j in (d.a, d.b)) for j in cjobs}
    compiles = [j for _, j in lpt.started if isinstance(j, CompileJob)]
    assert compiles == sorted(cjobs, key=lambda j: -chain[j.id])  # longest chain first
    diagnoses = [j for _, j in lpt.started if isinstance(j, DiagnosisJob)]
    assert diagnoses == sorted(djobs, key=lambda j: -pred[j.id])  # all ready by then: longest first
    last_compile = max(t for t, j in lpt.started if isinstance(j, CompileJob))
    assert all(t >= last_compile for t, j in lpt.started if isinstance(j, DiagnosisJob))  # they fill the last wave
    lower = max(sum(durations.values()) / workers, max(chain.values()))
    assert lpt.now <= plain.now and lpt.now <= 1.03 * lower, (lpt.now, plain.now, lower)
    if workers == 16:  # the plan's order leaves idle workers in the last wave; this order hardly any
        assert plain.now > 1.15 * lower and lpt.now < 1.03 * lower, (plain.now, lpt.now, lower)


def test_unseen_jobs_start_first_in_plan_order(tmp_path: Path) -> None:
    plan, cjobs, djobs = _scaling_like(tmp_path)
    durations = _durations(cjobs, djobs, "random")
    seen = {k: v for k, v in durations.items() if k in {j.id for j in cjobs[:10]} | {d.id for d in djobs}}
    ex = _simulate(plan, tmp_path / "o", durations, 4, _history(tmp_path / "t.json", seen))
    compiles = [j for _, j in ex.started if isinstance(j, CompileJob)]
    assert compiles[:54] == cjobs[10:]  # never seen: first, in plan order
    assert set(compiles[54:]) == set(cjobs[:10])
    # a diagnosis never seen starts as soon as its pair is compiled, as in plan order
    known = {cjobs[0].id: 1.0, djobs[0].id: 1.0}  # djobs[0] waits for cjobs[0] and cjobs[1] (never seen)
    assert (djobs[0].a, djobs[0].b) == (cjobs[0], cjobs[1])
    ex = _simulate(plan, tmp_path / "o2", durations, 4, _history(tmp_path / "t2.json", known))
    compiles = [j for _, j in ex.started if isinstance(j, CompileJob)]
    assert compiles == [*cjobs[1:], cjobs[0]]
    first_diag = next(i for i, (_, j) in enumerate(ex.started) if isinstance(j, DiagnosisJob))
    assert first_diag < 10, ex.started[:12]


def test_a_new_release_is_predicted_by_the_same_jobs_under_another(tmp_path: Path) -> None:
    """An upgrade sweep: every job under the new release is new, and each is predicted by the same job (suite,
    variant, target, config, shape) timed under the old release."""
    plans = {}
    for rel in ("3.6.0", "3.9.0"):
        (tmp_path / f"{rel}.toml").write_text(f'name = "s"\nsuites = ["matmul"]\ntargets = ["sm90"]\nconfigs = "all"\n'
                                              f'triton = ["{rel}"]\nreports = false\n')  # fmt: skip
        plans[rel] = load_plan(tmp_path / f"{rel}.toml")
    old, new = expand(plans["3.6.0"]), expand(plans["3.9.0"])
    assert not {j.id for j in old.compile_jobs} & {j.id for j in new.compile_jobs}
    assert [j.any_release_id for j in old.compile_jobs] == [j.any_release_id for j in new.compile_jobs]
    assert [d.any_release_id for d in old.diagnosis_jobs] == [d.any_release_id for d in new.diagnosis_jobs]
    base = _durations(old.compile_jobs, old.diagnosis_jobs, "random")
    durations = dict(base)
    for jo, jn in zip([*old.compile_jobs, *old.diagnosis_jobs], [*new.compile_jobs, *new.diagnosis_jobs], strict=True):
        durations[jn.id] = base[jo.id]
    h = TimingHistory(tmp_path / "t.json")
    ex = VirtualClockExecutor(4, durations)
    assert run_sweep(plans["3.6.0"], tmp_path / "old", ex, timings=h).order == "plan"  # records both keys
    h = TimingHistory.load(tmp_path / "t.json")
    assert len(h) == 2 * len(base)
    assert all(h.predict(j.id) is None for j in [*new.compile_jobs, *new.diagnosis_jobs])
    pred = {j.id: h.predict(j.any_release_id) or 0.0 for j in [*new.compile_jobs, *new.diagnosis_jobs]}
    chain = {c.id: pred[c.id] + max(pred[d.id] for d in new.diagnosis_jobs if c in (d.a, d.b))
             for c in new.compile_jobs}  # fmt: skip
    ex = VirtualClockExecutor(4, durations)
    res = run_sweep(plans["3.9.0"], tmp_path / "new", ex, timings=h)
    assert res.order == "longest predicted first (0 of 48 jobs predicted, 48 from another Triton release)"
    compiles = [j for _, j in ex.started if isinstance(j, CompileJob)]
    assert compiles == sorted(new.compile_jobs, key=lambda c: -chain[c.id]) != new.compile_jobs


# ---------------------------------------------------------------- real sweeps: the order never changes the table


def test_the_table_is_the_same_in_any_order(tmp_path: Path) -> None:
    """Real compiles (cached after the first run anywhere) and diagnoses: plan order on 2 workers, then a history
    that reverses the plan on 1 worker (so the start order is observable), then the recorded history on 2
    workers: the same Parquet table each time, and the durations recorded."""
    import pyarrow.parquet as pq

    from irdiff.sweep.executors import LocalExecutor

    (tmp_path / "p.toml").write_text(f'targets = ["sm80", "sm90"]\nreports = false\n[[suite]]\nref = "{HINTS}"\n')
    plan = load_plan(tmp_path / "p.toml")
    exp = expand(plan)
    events: dict[str, list[str]] = {}

    def sweep(name: str, workers: int, timings: TimingHistory | None) -> Any:
        ex = LocalExecutor(workers)
        log = events.setdefault(name, [])
        try:
            return run_sweep(plan, tmp_path / name, ex, progress=lambda e, label: log.append(e + " " + label),
                             timings=timings)  # fmt: skip
        finally:
            ex.close()

    plain = sweep("plain", 2, None)
    assert plain.order == "plan"
    backwards = {j.id: 10.0 + i for i, j in enumerate([*exp.compile_jobs, *exp.diagnosis_jobs])}
    rev = sweep("reversed", 1, _history(tmp_path / "rev.json", backwards))
    assert rev.order.startswith("longest predicted first (6 of 6")
    finished = [e for e in events["reversed"] if not e.startswith("start")]
    assert finished[0].endswith(exp.compile_jobs[-1].label()), finished  # the plan's last compile ran first
    assert finished != [e for e in events["plain"] if not e.startswith("start")]
    recorded = TimingHistory.load(tmp_path / "rev.json")
    assert all(recorded.predict(d.id) != backwards[d.id] for d in exp.diagnosis_jobs)  # this run's times merged
    again = sweep("again", 2, recorded)
    tables = [pq.read_table(tmp_path / n / "results.parquet") for n in ("plain", "reversed", "again")]
    assert tables[0].equals(tables[1]) and tables[0].equals(tables[2])
    assert plain.rows == rev.rows == again.rows and len(plain.rows) == 2
    assert all(r["status"] == "ok" for r in plain.rows), plain.rows
    assert os.path.exists(tmp_path / "rev.json")
