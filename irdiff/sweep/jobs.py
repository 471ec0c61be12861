"""The two job functions a sweep runs, on any executor: pure functions of their job (suite source and settings)
whose only side effects are entries in irdiff's compile cache (``$IRDIFF_CACHE_DIR``) and files under the sweep's
output directory. A Ray task and a local worker process call the same functions.

* :func:`run_compile_job` compiles one variant under one setting through :func:`irdiff.compile.compile_bundle`
  (a fresh Triton process per compile, as always); the result lands in the compile cache, so a rerun on either
  executor, and the diagnosis jobs, reuse it.
* :func:`run_diagnosis_job` assembles the pair's bundle from the cache, normalizes, aligns and diagnoses it
  (:func:`irdiff.pipeline.build_comparison`) and returns one row of the result table (:mod:`irdiff.sweep.table`),
  optionally writing the pair's HTML report.

Neither raises for a failing kernel: the outcome says ``failed`` and carries the error's first line.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from irdiff.sweep.plan import CompileJob, DiagnosisJob

__all__ = ["JobOutcome", "compile_is_cached", "pair_dirname", "run_compile_job", "run_diagnosis_job"]


@dataclass
class JobOutcome:
    """What one job reports back to the driver.

    :ivar status: ``done`` (compiled or diagnosed), ``cached`` (the compile cache held it) or ``failed``.
    :ivar error: the first line of the error for ``failed``.
    :ivar seconds: wall time of the job in its worker (s).
    :ivar row: the result-table row (diagnosis jobs only).
    """

    job_id: str
    status: str
    error: str | None = None
    seconds: float = 0.0
    row: dict[str, Any] | None = field(default=None, repr=False)


def _first_line(text: str) -> str:
    lines = [x for x in text.strip().splitlines() if x.strip()]
    return lines[0].strip()[:400] if lines else "failed"


def _side(job: CompileJob, name: str = "") -> Any:
    from irdiff.compile import Side

    return Side(job.variant, target=job.target, triton=job.triton, name=name)


def _existing_env(version: str | None) -> Any:
    """The Triton environment :func:`irdiff.compile.envs.resolve_env` would pick for ``version``, without creating
    one (a dry run downloads nothing): the installed Triton, a registered one (``IRDIFF_TRITON_ENVS``), or an
    irdiff-managed one that exists; None otherwise."""
    from irdiff.compile.envs import EnvError, TritonEnv, current_env, local_env, managed_env

    cur = current_env()
    if not version or version == cur.version:
        return cur
    for part in (os.environ.get("IRDIFF_TRITON_ENVS") or "").split(os.pathsep):
        try:
            env = local_env(part.strip()) if part.strip() else None
        except EnvError:
            continue
        if env is not None and env.version == version:
            return TritonEnv(env.version, env.python, "registered", env.pythonpath, env.location)
    try:
        return managed_env(version, create=False)
    except EnvError:
        return None


def compile_is_cached(job: CompileJob) -> bool:
    """Whether irdiff's compile cache holds an error-free compile of ``job`` (the key :func:`irdiff.compile.
    compile_bundle` uses: :func:`irdiff.compile.variant_cache_key` with the job's Triton environment).

    A release whose environment does not exist yet counts as not cached (nothing is created here).

    :raises irdiff.suite.SuiteError: unknown suite or variant.
    """
    from irdiff.compile import cache_dir, cached_variant, compile_sources_digest, variant_cache_key
    from irdiff.suite import load_suite

    suite = load_suite(job.suite)
    tenv = _existing_env(job.triton)
    if tenv is None:  # that release's environment does not exist yet: nothing of it can be cached
        return False
    r: dict[str, Any] = {
        "suite": job.suite,
        "variant": job.variant,
        "target": job.target,
        "config": job.config,
        "shape": dict(job.shape),
        "passes": False,
    }
    env = dict(getattr(suite.variant(job.variant), "env", {}) or {})
    if env:
        r["env"] = env
    identity = None if tenv.kind == "current" else f"{tenv.version}|{tenv.python}|{tenv.pythonpath}"
    key = variant_cache_key(suite, r, tenv.version, compile_sources_digest(), identity)
    return cached_variant(cache_dir() / "results" / key, key) is not None


def run_compile_job(job: CompileJob, use_cache: bool = True) -> JobOutcome:
    """Compile ``job`` into irdiff's compile cache (nothing else is kept); ``use_cache=False`` compiles even when
    the cache holds it. Never raises for a failing kernel."""
    from irdiff.compile import CompileRequest, compile_bundle

    t0 = time.perf_counter()
    tmp = tempfile.mkdtemp(prefix="irdiff-sweep-")
    try:
        req = CompileRequest(
            suite=job.suite,
            variants=[],
            target=job.target,
            config=job.config,
            shape=dict(job.shape),
            sides=[_side(job)],
            triton=job.triton,
            jobs=1,
            use_cache=use_cache,
        )
        bundle = compile_bundle(req, Path(tmp) / "bundle", command=["irdiff", "sweep"])
        v = next(iter(bundle.variants.values()))
        status = "failed" if v.error else ("cached" if v.cache_hit else "done")
        return JobOutcome(job.id, status, _first_line(v.error) if v.error else None, time.perf_counter() - t0)
    except Exception as e:  # noqa: BLE001 - one failing job never stops the sweep
        return JobOutcome(job.id, "failed", f"{type(e).__name__}: {_first_line(str(e))}", time.perf_counter() - t0)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def pair_dirname(job: DiagnosisJob) -> str:
    """``<suite>-<a>-<b>-<id>``: the pair's directory under ``<out>/pairs`` (file-name safe)."""
    from irdiff.suite import load_suite

    try:
        suite = load_suite(job.suite).name
    except Exception:  # noqa: BLE001 - only a name
        suite = Path(job.suite.partition("::")[0]).stem
    raw = f"{suite}-{job.a.variant}-{job.b.variant}"
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in raw)[:80]
    return f"{safe}-{job.id}"


def run_diagnosis_job(job: DiagnosisJob, out_dir: str, report: bool = True) -> JobOutcome:
    """Assemble the pair's bundle under ``out_dir/pairs/<pair>/bundle`` (from the compile cache; a variant missing
    there is compiled), diagnose it and return its table row; with ``report`` also ``report.html`` beside it.
    Never raises for a failing kernel or rule: the row's ``status`` says ``failed`` and ``error`` why."""
    from irdiff.compile import CompileRequest, compile_bundle
    from irdiff.sweep.table import failed_row, row_from_comparison

    t0 = time.perf_counter()
    pair_dir = Path(out_dir) / "pairs" / pair_dirname(job)
    rel_report = f"pairs/{pair_dir.name}/report.html" if report else None
    try:
        from irdiff.compile import side_names

        names = side_names([_side(job.a), _side(job.b)])
        if names[0] == names[1]:  # the same variant under the same settings: still two columns
            names = [f"{names[0]}@a", f"{names[1]}@b"]
        req = CompileRequest(
            suite=job.suite,
            variants=[],
            target=job.a.target,
            config=job.a.config,
            shape=dict(job.a.shape),
            sides=[_side(job.a, names[0]), _side(job.b, names[1])],
            jobs=1,
        )
        pair_dir.mkdir(parents=True, exist_ok=True)
        bundle = compile_bundle(req, pair_dir / "bundle", command=["irdiff", "sweep"])
        a, b = names
        bad = [v for v in (bundle.variants[a], bundle.variants[b]) if v.error]
        if bad:
            err = f"{bad[0].name} failed to compile: {_first_line(bad[0].error or '')}"
            return JobOutcome(job.id, "failed", err, time.perf_counter() - t0, failed_row(job, err))
        from irdiff.pipeline import build_comparison

        comparison = build_comparison(bundle, a, b)
        row = row_from_comparison(job, comparison, rel_report)
        if report:
            from irdiff.render.report import render_report, write_report

            write_report(str(pair_dir / "report.html"), render_report(comparison, "html"), force=True)
        status = "failed" if comparison.diagnosis_error else "done"
        return JobOutcome(job.id, status, comparison.diagnosis_error, time.perf_counter() - t0, row)
    except Exception as e:  # noqa: BLE001 - one failing job never stops the sweep
        err = f"{type(e).__name__}: {_first_line(str(e)) if str(e) else ''}"
        if os.environ.get("IRDIFF_SWEEP_TRACEBACK"):
            err += "\n" + traceback.format_exc()
        return JobOutcome(job.id, "failed", err, time.perf_counter() - t0, failed_row(job, err))


def job_to_json(job: CompileJob | DiagnosisJob) -> str:
    """A job as JSON (for messages and logs)."""
    if isinstance(job, DiagnosisJob):
        return json.dumps({"a": job.a.__dict__, "b": job.b.__dict__}, default=str)
    return json.dumps(job.__dict__, default=str)
