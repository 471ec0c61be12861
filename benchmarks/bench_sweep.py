"""irdiff sweep benchmarks (issue 18).

``executors``  the acceptance plan (benchmarks/plans/acceptance.toml: ≥ 300 jobs) on a Ray cluster started here
               (``ray start --head`` plus a second worker node) and then on the local process pool; checks that the
               two Parquet tables are identical and records both runs' times. Registers ``.venv36`` (Triton 3.6.0)
               through IRDIFF_TRITON_ENVS as CI does.
``scaling``    jobs/s of the local pool with 1, 2, 4, 8, 16 workers on benchmarks/plans/scaling.toml, each with an
               empty irdiff cache and an empty Triton cache (every job compiles); target ≥ 0.8 × workers.
``overhead``   per-job overhead of the executors themselves: N empty jobs through the local pool and through Ray.

Run from the repository root: ``PYTHONPATH=. python3 benchmarks/bench_sweep.py executors|scaling|overhead``;
``--json FILE`` writes the result (benchmarks/results/sweep_*.json).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _venv36() -> Path | None:
    for p in (ROOT / ".venv36", Path(sys.prefix).parent / ".venv36"):
        if (p / "bin" / "python").exists():
            return p
    return None


def _register_envs() -> None:
    v36 = _venv36()
    if v36 is not None and str(v36) not in os.environ.get("IRDIFF_TRITON_ENVS", ""):
        os.environ["IRDIFF_TRITON_ENVS"] = os.pathsep.join(
            x for x in (os.environ.get("IRDIFF_TRITON_ENVS", ""), str(v36)) if x
        )
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # as irdiff's CLI sets it (part of the cache key)
    os.environ["PYTHONPATH"] = os.pathsep.join(x for x in (str(ROOT), os.environ.get("PYTHONPATH", "")) if x)


def _versions() -> dict[str, str]:
    from importlib.metadata import version

    out = {"python": platform.python_version(), "cpus": str(os.cpu_count())}
    for pkg in ("triton", "pyarrow", "ray"):
        try:
            out[pkg] = version(pkg)
        except Exception:  # noqa: BLE001
            out[pkg] = "absent"
    return out


# ------------------------------------------------------------------------------------------------ a local Ray cluster


class LocalRayCluster:
    """``ray start --head`` plus one more node on this machine, each with ``cpus`` CPUs; stopped by process id (only
    the processes of this cluster: those naming its temp directory, and their children)."""

    def __init__(self, cpus_per_node: int = 1, port: int = 6391):
        self.port = port
        self.cpus = cpus_per_node
        self.temp = tempfile.mkdtemp(prefix="irdiff-ray-")
        self.ray = str(Path(sys.executable).parent / "ray")

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def __enter__(self) -> LocalRayCluster:
        """Start both nodes; on failure stop whatever started and raise :class:`RuntimeError` with Ray's message."""
        common = ["--num-cpus", str(self.cpus), "--disable-usage-stats"]
        head = [
            self.ray,
            "start",
            "--head",
            "--port",
            str(self.port),
            "--include-dashboard=false",
            "--temp-dir",
            self.temp,
        ]
        for cmd in ([*head, *common], [self.ray, "start", "--address", self.address, *common]):
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                self.__exit__(None, None, None)
                lines = [x.strip() for x in (r.stderr + r.stdout).splitlines() if x.strip()]
                why = [x for x in lines if "error" in x.lower() or "failed" in x.lower()] or lines[-1:] or ["?"]
                raise RuntimeError(f"`ray start` failed (exit {r.returncode}): {why[-1][:300]}")
        return self

    def _pids(self) -> list[int]:
        procs: dict[int, tuple[int, str]] = {}
        for d in Path("/proc").iterdir():
            if not d.name.isdigit():
                continue
            try:
                cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            procs[int(d.name)] = (ppid, cmd)
        mine = {pid for pid, (_, cmd) in procs.items() if self.temp in cmd or f":{self.port} " in cmd + " "}
        grew = True
        while grew:
            kids = {pid for pid, (ppid, _) in procs.items() if ppid in mine and pid not in mine}
            grew = bool(kids)
            mine |= kids
        mine.discard(os.getpid())
        return sorted(mine)

    def __exit__(self, *exc: object) -> None:
        try:
            import ray

            if ray.is_initialized():
                ray.shutdown()
        except ImportError:
            pass
        for sig in (signal.SIGTERM, signal.SIGKILL):
            pids = self._pids()
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except OSError:
                    pass
            if pids and sig == signal.SIGTERM:
                time.sleep(3)
        shutil.rmtree(self.temp, ignore_errors=True)


# ---------------------------------------------------------------------------------------------------------- executors


def compare_executors(plan_path: Path, out: Path, workers: int = 2, port: int = 6391) -> dict[str, Any]:
    """The plan on a two-node local Ray cluster (``workers`` CPUs in all), then on the local pool (``workers``
    processes), into ``out/ray`` and ``out/local``; returns times, counts and whether the tables are identical."""
    import pyarrow.parquet as pq

    _register_envs()
    from irdiff.sweep import dry_run, load_plan, run_sweep
    from irdiff.sweep.executors import LocalExecutor, RayExecutor

    plan = load_plan(plan_path)
    exp, counts = dry_run(plan)
    result: dict[str, Any] = {
        "plan": str(plan_path.relative_to(ROOT)) if plan_path.is_relative_to(ROOT) else str(plan_path),
        "jobs": counts.total,
        "compile_jobs": counts.compile_jobs,
        "cached_before": counts.cached,
        "rows": counts.diagnosis_jobs,
        "versions": _versions(),
        "triton_envs": os.environ.get("IRDIFF_TRITON_ENVS", ""),
    }
    with LocalRayCluster(cpus_per_node=max(1, workers // 2), port=port) as cluster:
        ex = RayExecutor(cluster.address)
        try:
            import ray

            result["ray_nodes"] = len([n for n in ray.nodes() if n.get("Alive")])
            r = run_sweep(plan, out / "ray", ex, expansion=exp)
        finally:
            ex.close()
    result["ray"] = {"seconds": round(r.seconds, 1), "compile_s": round(r.compile_seconds, 1),
                     "diagnose_s": round(r.diagnose_seconds, 1), "counts": r.counts, "workers": r.workers}  # fmt: skip
    exp2, _ = dry_run(plan)
    loc = LocalExecutor(workers)
    try:
        l_res = run_sweep(plan, out / "local", loc, expansion=exp2)
    finally:
        loc.close()
    result["local"] = {"seconds": round(l_res.seconds, 1), "compile_s": round(l_res.compile_seconds, 1),
                       "diagnose_s": round(l_res.diagnose_seconds, 1), "counts": l_res.counts, "workers": workers}  # fmt: skip
    ta, tb = pq.read_table(out / "ray" / "results.parquet"), pq.read_table(out / "local" / "results.parquet")
    result["identical"] = bool(ta.equals(tb)) and r.rows == l_res.rows
    result["failed_rows"] = sum(row["status"] != "ok" for row in l_res.rows)
    result["root_severities"] = {
        s: sum(row.get("root_severity") == s for row in l_res.rows) for s in ("critical", "major", "minor", "info")
    }
    return result


# ------------------------------------------------------------------------------------------------------------ scaling


def scaling(plan_path: Path, worker_counts: list[int], budget_s: float, out_json: Path | None) -> dict[str, Any]:
    """Jobs/s of the local pool per worker count, each run with empty irdiff and Triton caches (in a temp dir)."""
    _register_envs()
    from irdiff.sweep import dry_run, load_plan, run_sweep
    from irdiff.sweep.executors import LocalExecutor

    plan = load_plan(plan_path)
    t_start = time.perf_counter()
    result: dict[str, Any] = {"plan": str(plan_path), "versions": _versions(), "runs": []}
    for n in sorted(worker_counts, reverse=True):
        spent = time.perf_counter() - t_start
        last = result["runs"][-1] if result["runs"] else None
        if last is not None:  # predicted: the last run's time × (its workers / n), assuming linear scaling
            predicted = last["seconds"] * last["workers"] / n
            if spent + predicted > budget_s:
                result["runs"].append({"workers": n, "skipped": f"predicted {predicted:.0f} s exceeds the budget"})
                continue
        tmp = Path(tempfile.mkdtemp(prefix=f"irdiff-scale-{n}-"))
        os.environ["IRDIFF_CACHE_DIR"] = str(tmp / "irdiff")
        os.environ["TRITON_CACHE_DIR"] = str(tmp / "triton")
        exp, counts = dry_run(plan)
        assert counts.cached == 0
        ex = LocalExecutor(n)
        try:
            r = run_sweep(plan, tmp / "out", ex, expansion=exp)
        finally:
            ex.close()
        jobs = sum(r.counts.values())
        run = {
            "workers": n,
            "jobs": jobs,
            "compile_jobs": counts.compile_jobs,
            "seconds": round(r.seconds, 2),
            "compile_s": round(r.compile_seconds, 2),
            "diagnose_s": round(r.diagnose_seconds, 2),
            "jobs_per_s": round(jobs / r.seconds, 3),
            "failed": r.counts.get("failed", 0),
        }
        result["runs"].append(run)
        shutil.rmtree(tmp, ignore_errors=True)
        print(json.dumps(run), flush=True)
        if out_json:
            out_json.write_text(json.dumps(result, indent=1))
    done = [x for x in result["runs"] if "jobs_per_s" in x]
    base = next((x for x in done if x["workers"] == 1), None)
    for x in done:
        if base is not None:
            x["speedup"] = round(x["jobs_per_s"] / base["jobs_per_s"], 2)
            x["efficiency"] = round(x["speedup"] / x["workers"], 2)
    if out_json:
        out_json.write_text(json.dumps(result, indent=1))
    return result


# ----------------------------------------------------------------------------------------------------------- overhead


def _empty_job(i: int) -> int:
    return i


def overhead(n: int, workers: int) -> dict[str, Any]:
    """Seconds per empty job through the local pool and through Ray (two-node local cluster), ``workers`` each."""
    _register_envs()
    from irdiff.sweep.executors import LocalExecutor, RayExecutor

    out: dict[str, Any] = {"jobs": n, "workers": workers, "versions": _versions()}
    ex = LocalExecutor(workers)
    list(ex.map_unordered(_empty_job, range(4)))  # start the workers first
    t = time.perf_counter()
    got = sorted(r for _, r in ex.map_unordered(_empty_job, range(n)))
    out["local_ms_per_job"] = round((time.perf_counter() - t) / n * 1000, 3)
    ex.close()
    assert got == list(range(n))
    with LocalRayCluster(cpus_per_node=max(1, workers // 2)) as cluster:
        rex = RayExecutor(cluster.address)
        list(rex.map_unordered(_empty_job, range(4)))
        t = time.perf_counter()
        got = sorted(r for _, r in rex.map_unordered(_empty_job, range(n)))
        out["ray_ms_per_job"] = round((time.perf_counter() - t) / n * 1000, 3)
        rex.close()
    assert got == list(range(n))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["executors", "scaling", "overhead"])
    ap.add_argument("--plan", type=Path, default=None)
    ap.add_argument("--workers", default="1,2,4,8,16", help="scaling: worker counts; executors/overhead: one count")
    ap.add_argument("--budget", type=float, default=540.0, help="scaling: stop before exceeding this many seconds")
    ap.add_argument("--out", type=Path, default=None, help="executors: output directory (default: a temp dir)")
    ap.add_argument("--jobs", type=int, default=200, help="overhead: empty jobs")
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args()
    if a.what == "executors":
        out = a.out or Path(tempfile.mkdtemp(prefix="irdiff-sweep-exec-"))
        res = compare_executors(a.plan or ROOT / "benchmarks/plans/acceptance.toml", out, int(a.workers.split(",")[0]))
    elif a.what == "scaling":
        counts = [int(x) for x in a.workers.split(",")]
        res = scaling(a.plan or ROOT / "benchmarks/plans/scaling.toml", counts, a.budget, a.json)
    else:
        res = overhead(a.jobs, int(a.workers.split(",")[0]))
    res["command"] = " ".join(["python3", *sys.argv])
    text = json.dumps(res, indent=1)
    print(text)
    if a.json:
        a.json.write_text(text)


if __name__ == "__main__":
    main()
