"""``irdiff sweep PLAN``: every kernel × config × target × Triton release, on one machine or a Ray cluster.

A plan (TOML, :mod:`irdiff.sweep.plan`) expands into compile jobs (one variant under one setting) and diagnosis
jobs (one pair under one setting). :func:`run_sweep` runs the compile jobs that irdiff's compile cache does not
already hold and every diagnosis job, each pair's as soon as its two compiles are done, on an executor
(:mod:`irdiff.sweep.executors`: local processes or Ray tasks running the same job functions,
:mod:`irdiff.sweep.jobs`), and writes under the output directory:

* ``results.parquet`` — one row per pair and setting (:mod:`irdiff.sweep.table`, schema ``irdiff.sweep/2``);
* ``overview.html`` — the table, sortable, each row linking to ``pairs/<pair>/report.html`` (:mod:`.report`);
* ``digest.md`` — a Markdown digest for a pull-request comment;
* ``pairs/<pair>/bundle`` — each pair's bundle (``irdiff diff`` reads it).

:mod:`irdiff.sweep.gate` compares the table with a baseline (``--baseline``, ``--fail-on``).
"""

from __future__ import annotations

import heapq
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from irdiff.sweep.executors import Executor
from irdiff.sweep.plan import CompileJob, DiagnosisJob, Expansion, Plan, PlanError, expand, load_plan
from irdiff.sweep.timings import TimingHistory, lpt_order

__all__ = ["DryRun", "PlanError", "SweepResult", "TimingHistory", "dry_run", "expand", "load_plan", "run_sweep"]


@dataclass
class DryRun:
    """Job counts of a plan: compile jobs (``cached`` of them already in irdiff's cache) and diagnosis jobs."""

    compile_jobs: int
    cached: int
    diagnosis_jobs: int
    suites: int

    @property
    def total(self) -> int:
        return self.compile_jobs + self.diagnosis_jobs

    def lines(self) -> list[str]:
        return [
            f"suites: {self.suites}",
            f"compile jobs: {self.compile_jobs} ({self.cached} cached, {self.compile_jobs - self.cached} to compile)",
            f"diagnosis jobs (rows): {self.diagnosis_jobs}",
            f"jobs: {self.total}",
        ]


def dry_run(plan: Plan, use_cache: bool = True) -> tuple[Expansion, DryRun]:
    """Expand ``plan`` and count its jobs, checking each compile against irdiff's compile cache.

    :raises PlanError: the plan names an unknown suite, variant, config or Triton release.
    """
    from irdiff.compile.envs import EnvError
    from irdiff.suite import SuiteError
    from irdiff.sweep.jobs import compile_is_cached

    exp = expand(plan)
    cached = 0
    if use_cache:
        for job in exp.compile_jobs:
            try:
                if compile_is_cached(job):
                    exp.cached.add(job.id)
                    cached += 1
            except (SuiteError, EnvError) as e:
                raise PlanError(f"{job.label()}: {e}") from None
            except Exception:  # noqa: BLE001 - a kernel whose launch cannot be resolved: it is compiled (and fails)
                pass
    return exp, DryRun(len(exp.compile_jobs), cached, len(exp.diagnosis_jobs), len(plan.suites))


@dataclass
class SweepResult:
    """What a sweep did: the rows (table order), per-job failures, counts, and wall time (s)."""

    rows: list[dict[str, Any]]
    failures: list[tuple[str, str]] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    #: from the start until the last compile job finished (s); diagnoses of pairs already compiled overlap it
    compile_seconds: float = 0.0
    #: from the last compile job's end until the last diagnosis finished (s)
    diagnose_seconds: float = 0.0
    executor: str = ""
    workers: int = 0
    #: each finished job's wall time in its worker (s), by kind: ``compile`` and ``diagnosis`` (jobs that ran only)
    job_seconds: dict[str, list[float]] = field(default_factory=dict)
    #: the order jobs were started in: ``plan``, or ``longest predicted first`` with how many jobs had a prediction
    order: str = "plan"


# progress(event, label): event is "start" (with the total as label), "done", "cached", "failed"
Progress = Callable[[str, str], None]


def run_sweep(
    plan: Plan,
    out_dir: str | Path,
    executor: Executor,
    progress: Progress | None = None,
    use_cache: bool = True,
    expansion: Expansion | None = None,
    timings: TimingHistory | None = None,
) -> SweepResult:
    """Run ``plan`` on ``executor`` and write the table, overview and digest under ``out_dir``.

    ``use_cache=False`` (``--no-cache``) compiles every variant afresh (the results re-enter the cache). A failing
    compile or diagnosis is reported per job (its row says ``failed``); it never stops the sweep.

    Order: without ``timings``, or when it predicts none of the jobs, compiles start in plan order and a pair's
    diagnosis as soon as its two compiles are done (before compiles still waiting). With predictions
    (:mod:`irdiff.sweep.timings`) the job whose chain is longest starts first: a diagnosis's chain is its predicted
    seconds, a compile's its own plus those of the longest diagnosis waiting for it (highest level first, the list
    scheduling of Hu/Graham). A job never run under its Triton release is predicted by the same job under another
    release (an upgrade sweep's new jobs); jobs never seen at all come first, in plan order. Each job's seconds
    are recorded into ``timings`` (saved at the end). The order never changes the table: rows are sorted when written.
    """
    from irdiff.sweep.jobs import JobOutcome, run_compile_job, run_diagnosis_job
    from irdiff.sweep.report import write_digest, write_overview
    from irdiff.sweep.table import failed_row, write_table

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    exp = expansion or expand(plan)
    t0 = time.perf_counter()
    counts = {"done": 0, "cached": 0, "failed": 0}
    failures: list[tuple[str, str]] = []
    failed_compiles: dict[str, str] = {}

    def tell(event: str, label: str) -> None:
        if progress is not None:
            progress(event, label)

    tell("start", str(len(exp.compile_jobs) + len(exp.diagnosis_jobs)))
    to_run: list[CompileJob] = []
    for job in exp.compile_jobs:
        if use_cache and job.id in exp.cached:  # deduplicated against the cache: nothing to run
            counts["cached"] += 1
            tell("cached", job.label())
        else:
            to_run.append(job)
    # rank of each diagnosis among those ready at once: plan order, or longest predicted first
    diag_order = list(exp.diagnosis_jobs)
    order = "plan"
    level: dict[str, float | None] = {}  # job id -> predicted seconds until the end of its chain; None: unknown
    if timings is not None and len(timings):
        every: list[CompileJob | DiagnosisJob] = [*to_run, *diag_order]
        pred = {j.id: timings.predict(j.id) for j in every}
        known = sum(v is not None for v in pred.values())
        for j in every:  # never run under this release: the same job under another one
            if pred[j.id] is None:
                pred[j.id] = timings.predict(j.any_release_id)
        other = sum(v is not None for v in pred.values()) - known
        if known + other:
            for d in diag_order:
                level[d.id] = pred[d.id]
            after: dict[str, float | None] = {}  # compile job id -> the longest diagnosis waiting for it
            for d in diag_order:
                for j in (d.a, d.b):
                    prev, cur = after.get(j.id, 0.0), level[d.id]
                    after[j.id] = None if prev is None or cur is None else max(prev, cur)
            for c in to_run:
                own, then = pred[c.id], after.get(c.id, 0.0)
                level[c.id] = None if own is None or then is None else own + then
            to_run = lpt_order(to_run, [level[j.id] for j in to_run])
            diag_order = lpt_order(diag_order, [level[d.id] for d in diag_order])
            also = f", {other} from another Triton release" if other else ""
            order = f"longest predicted first ({known} of {len(to_run) + len(diag_order)} jobs predicted{also})"

    def diagnosis_next() -> bool:
        """Whether the next job to start is the first ready diagnosis (else the next compile)."""
        if not ready:
            return False
        if not compile_jobs or not level:  # plan order: a diagnosis as soon as its pair is compiled
            return True
        ld, lc = level[ready[0][1].id], level[compile_jobs[0].id]
        return ld is None or (lc is not None and ld >= lc)

    diag_rank = {d.id: i for i, d in enumerate(diag_order)}
    compile_jobs: deque[CompileJob] = deque(to_run)
    # In plan order a pair's diagnosis starts as soon as its two compiles are done (before compiles still queued),
    # so the workers that finish the last compiles early diagnose instead of idling until every compile is over.
    # With predictions the job with the longest predicted chain starts first (a compile's chain is its own time plus
    # its longest diagnosis): the short diagnoses then wait for the compile queue to empty and fill the last wave.
    to_compile = {j.id for j in compile_jobs}
    waiting: dict[str, list[DiagnosisJob]] = {}  # compile job id -> the diagnoses waiting for it
    blocked: dict[str, int] = {}  # diagnosis job id -> compiles it still waits for
    ready: list[tuple[int, DiagnosisJob]] = []  # a heap: (rank in diag_order, job)

    def make_ready(d: DiagnosisJob) -> None:
        heapq.heappush(ready, (diag_rank[d.id], d))

    for d in exp.diagnosis_jobs:
        needs = {j.id for j in (d.a, d.b) if j.id in to_compile}
        for n in needs:
            waiting.setdefault(n, []).append(d)
        blocked[d.id] = len(needs)
        if not needs:
            make_ready(d)

    rows: list[dict[str, Any]] = []
    t_compiled = t0
    pending: dict[Any, CompileJob | DiagnosisJob] = {}
    out_s = str(out.resolve())

    job_seconds: dict[str, list[float]] = {"compile": [], "diagnosis": []}

    def on_diagnosis(djob: DiagnosisJob, res: Any) -> None:
        if isinstance(res, JobOutcome):
            outcome = res
            job_seconds["diagnosis"].append(round(res.seconds, 3))
            if timings is not None:
                timings.record(djob.id, res.seconds)
                timings.record(djob.any_release_id, res.seconds)
        else:
            outcome = JobOutcome(djob.id, "failed", f"{type(res).__name__}: {res}", row=failed_row(djob, str(res)))
        rows.append(outcome.row or failed_row(djob, outcome.error or "failed"))
        status = "done" if outcome.status != "failed" else "failed"
        counts[status] += 1
        if status == "failed":
            failures.append((djob.label(), outcome.error or "failed"))
        tell(status, djob.label())

    def on_compile(job: CompileJob, res: Any) -> None:
        outcome = res if isinstance(res, JobOutcome) else JobOutcome(job.id, "failed", f"{type(res).__name__}: {res}")
        if isinstance(res, JobOutcome):
            job_seconds["compile"].append(round(res.seconds, 3))
            if timings is not None and res.status != "cached":  # a cache hit's time is not the compile's
                timings.record(job.id, res.seconds)
                timings.record(job.any_release_id, res.seconds)
        counts[outcome.status] = counts.get(outcome.status, 0) + 1
        if outcome.status == "failed":
            failed_compiles[job.id] = outcome.error or "failed"
            failures.append((job.label(), outcome.error or "failed"))
        tell(outcome.status, job.label())
        for d in waiting.pop(job.id, []):
            blocked[d.id] -= 1
            if blocked[d.id] == 0:
                make_ready(d)

    try:
        while compile_jobs or ready or pending:
            while (compile_jobs or ready) and len(pending) < executor.max_in_flight:
                if diagnosis_next():
                    d = heapq.heappop(ready)[1]
                    bad = next(((j, failed_compiles[j.id]) for j in (d.a, d.b) if j.id in failed_compiles), None)
                    if bad is not None:
                        err = f"{bad[0].variant} failed to compile: {bad[1]}"
                        rows.append(failed_row(d, err))
                        counts["failed"] += 1  # its compile's failure is the one listed
                        tell("failed", d.label())
                        continue
                    pending[executor.submit(run_diagnosis_job, d, out_s, plan.reports)] = d
                else:
                    job = compile_jobs.popleft()
                    pending[executor.submit(run_compile_job, job, use_cache)] = job
            if not pending:
                continue
            for handle, res in executor.wait_done(list(pending)):
                item = pending.pop(handle)
                if isinstance(item, DiagnosisJob):
                    on_diagnosis(item, res)
                else:
                    on_compile(item, res)
                    if not compile_jobs and not any(isinstance(x, CompileJob) for x in pending.values()):
                        t_compiled = time.perf_counter()
    finally:
        if pending:
            executor.cancel(list(pending))
    t2 = time.perf_counter()
    if timings is not None:
        timings.save()

    write_table(rows, out / "results.parquet")
    from irdiff.sweep.table import read_table

    table_rows = read_table(out / "results.parquet")
    write_overview(table_rows, out / "overview.html", plan.name)
    write_digest(table_rows, out / "digest.md", plan.name)
    return SweepResult(
        rows=table_rows,
        failures=failures,
        counts=counts,
        seconds=t2 - t0,
        compile_seconds=t_compiled - t0,
        diagnose_seconds=t2 - t_compiled,
        executor=executor.name,
        workers=executor.workers,
        job_seconds=job_seconds,
        order=order,
    )
