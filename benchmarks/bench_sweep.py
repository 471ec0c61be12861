"""irdiff sweep benchmarks (issue 18).

``executors``  the acceptance plan (benchmarks/plans/acceptance.toml: ≥ 300 jobs) on a Ray cluster started here
               (``ray start --head`` plus a second worker node) and then on the local process pool; checks that the
               two Parquet tables are identical and records both runs' times. Registers ``.venv36`` (Triton 3.6.0)
               through IRDIFF_TRITON_ENVS as CI does.
``scaling``    jobs/s of the local pool with 1, 2, 4, 8, 16 workers on benchmarks/plans/scaling.toml, each with an
               empty irdiff cache and an empty Triton cache (every job compiles); target ≥ 0.8 × workers. Jobs
               start longest predicted first from a timing history kept apart from the caches (``--timings FILE``,
               default a fresh temp file): a first "cold history" run at the largest count (plan order) fills it
               and is reported apart; ``--no-history`` runs everything in plan order.
``overhead``   per-job overhead of the executors themselves: N empty jobs through the local pool and through Ray
               (throughput and one-job round trip), then real jobs whose compiles are cached (plans/overhead.toml:
               cached compile jobs and diagnosis jobs) through both.
``jobcpu``     the first ``--jobs`` compile jobs of plans/scaling.toml one after the other: wall and CPU seconds
               (the worker process and its ptxas/cuobjdump children), and what `import triton`/`import torch` cost.
``static``     whether a static score (tile elements × num_stages) ranks compile-job CPU seconds: a few matmul
               configs × sm90/sm100 compiled one after the other (results/sweep_static_predictor.json).
``hardware``   what the machine's CPUs can give: topology (logical CPUs, cores, threads per core, affinity, cgroup
               quota), then the same fixed work in 1, 2, 4, … N processes at once: a pure-Python loop (the reference
               ceiling for CPU-bound jobs), a memory copy (bandwidth), and fresh interpreters importing torch (the
               page-faulting that every Triton 3.6 compile did before the worker kept torch out).

Run from the repository root: ``PYTHONPATH=. python3 benchmarks/bench_sweep.py executors|scaling|overhead|hardware``;
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
        """Start both nodes; on failure stop whatever started and raise :class:`RuntimeError` with Ray's message.

        Token authentication is off for this loopback cluster (``RAY_AUTH_MODE=disabled`` here and in the driver
        until :meth:`__exit__`, unless the caller set it): with Ray 2.60, ``ray start --head`` turns it on by itself
        once any local ``ray.init()`` has left a token in ``~/.ray/auth_token``, while ``ray start --address`` does
        not, so the second node was refused ("InvalidAuthToken") and the cluster never started."""
        self._auth = os.environ.get("RAY_AUTH_MODE")
        os.environ.setdefault("RAY_AUTH_MODE", "disabled")
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
        if getattr(self, "_auth", "unset") is None:
            os.environ.pop("RAY_AUTH_MODE", None)


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


def _scaling_run(plan: Any, n: int, timings: Any) -> dict[str, Any]:
    """One sweep of ``plan`` on ``n`` local workers with empty irdiff and Triton caches (a temp dir), ordered by
    ``timings`` (None: plan order)."""
    from irdiff.sweep import dry_run, run_sweep
    from irdiff.sweep.executors import LocalExecutor

    tmp = Path(tempfile.mkdtemp(prefix=f"irdiff-scale-{n}-"))
    os.environ["IRDIFF_CACHE_DIR"] = str(tmp / "irdiff")
    os.environ["TRITON_CACHE_DIR"] = str(tmp / "triton")
    try:
        exp, counts = dry_run(plan)
        assert counts.cached == 0
        ex = LocalExecutor(n)
        try:
            r = run_sweep(plan, tmp / "out", ex, expansion=exp, timings=timings)
        finally:
            ex.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    jobs = sum(r.counts.values())
    busy = sum(r.job_seconds.get("compile", [])) + sum(r.job_seconds.get("diagnosis", []))
    return {
        "workers": n,
        "order": r.order,
        "jobs": jobs,
        "compile_jobs": counts.compile_jobs,
        "seconds": round(r.seconds, 2),
        "compile_s": round(r.compile_seconds, 2),
        "diagnose_s": round(r.diagnose_seconds, 2),
        "jobs_per_s": round(jobs / r.seconds, 3),
        "failed": r.counts.get("failed", 0),
        # the jobs' own seconds spread evenly over the workers: what a schedule without idle workers would take
        "ideal_s": round(busy / n, 2),
        "idle_share": round(1 - busy / (n * r.seconds), 3),
        # each job's wall time in its worker: growing with n while the hardware reference does not means the
        # jobs contend for something (memory, disk, locks); equal means the wall time is lost between jobs
        "compile_job_s": _stats(r.job_seconds.get("compile", [])),
        "diagnosis_job_s": _stats(r.job_seconds.get("diagnosis", [])),
        "loadavg_after": _loadavg(),
    }


def scaling(plan_path: Path, worker_counts: list[int], budget_s: float, out_json: Path | None,
            timings_path: Path | None = None, history: bool = True) -> dict[str, Any]:  # fmt: skip
    """Jobs/s of the local pool per worker count, each run with empty irdiff and Triton caches (in a temp dir).

    With ``history`` (the default) the jobs start longest predicted first (:mod:`irdiff.sweep.timings`) from a
    timing history kept apart from the emptied caches (``timings_path``, default a fresh temp file): a first run at
    the largest worker count, in plan order when the history is empty, fills it and is reported on its own
    (``cold_history``, not in the efficiencies); every measured run then reads the history and adds its own times.
    Without ``history`` every run is in plan order."""
    _register_envs()
    from irdiff.sweep import load_plan
    from irdiff.sweep.timings import TimingHistory

    plan = load_plan(plan_path)
    t_start = time.perf_counter()
    result: dict[str, Any] = {"plan": str(plan_path), "versions": _versions(), "runs": []}
    tpath = None
    if history:
        tpath = timings_path or Path(tempfile.mkdtemp(prefix="irdiff-timings-")) / "sweep-timings.json"
        result["timings"] = {"path": str(tpath), "entries_before": len(TimingHistory.load(tpath))}
        cold = _scaling_run(plan, max(worker_counts), TimingHistory.load(tpath))
        result["cold_history"] = cold
        print(json.dumps({"cold_history": cold}), flush=True)
    for n in sorted(worker_counts, reverse=True):
        spent = time.perf_counter() - t_start
        last = result["runs"][-1] if result["runs"] else None
        if last is not None:  # predicted: the last run's time × (its workers / n), assuming linear scaling
            predicted = last["seconds"] * last["workers"] / n
            if spent + predicted > budget_s:
                result["runs"].append({"workers": n, "skipped": f"predicted {predicted:.0f} s exceeds the budget"})
                continue
        run = _scaling_run(plan, n, TimingHistory.load(tpath) if tpath is not None else None)
        result["runs"].append(run)
        print(json.dumps(run), flush=True)
        if out_json:
            out_json.write_text(json.dumps(result, indent=1))
    done = [x for x in result["runs"] if "jobs_per_s" in x]
    base = next((x for x in done if x["workers"] == 1), None)
    for x in done:
        if base is not None:
            x["speedup"] = round(x["jobs_per_s"] / base["jobs_per_s"], 2)
            x["efficiency"] = round(x["speedup"] / x["workers"], 2)
    if history and "cold_history" in result and base is not None:
        c = result["cold_history"]
        c["efficiency"] = round(c["jobs_per_s"] / base["jobs_per_s"] / c["workers"], 2)
    if out_json:
        out_json.write_text(json.dumps(result, indent=1))
    return result


def _stats(xs: list[float]) -> dict[str, float]:
    if not xs:
        return {}
    xs = sorted(xs)
    return {"n": len(xs), "mean": round(sum(xs) / len(xs), 3), "median": xs[len(xs) // 2], "max": xs[-1],
            "sum": round(sum(xs), 2)}  # fmt: skip


def _loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def job_cpu(plan_path: Path, k: int) -> dict[str, Any]:
    """The first ``k`` compile jobs of the plan one after the other in this process (empty irdiff and Triton caches),
    each with its wall time and the CPU seconds of this process and of its children (the compile worker, ptxas,
    cuobjdump, nvdisasm); then the CPU cost of a fresh interpreter importing triton, and torch."""
    import resource

    _register_envs()
    tmp = Path(tempfile.mkdtemp(prefix="irdiff-jobcpu-"))
    os.environ["IRDIFF_CACHE_DIR"] = str(tmp / "irdiff")
    os.environ["TRITON_CACHE_DIR"] = str(tmp / "triton")
    from irdiff.sweep import expand, load_plan
    from irdiff.sweep.jobs import run_compile_job

    def cpu() -> tuple[float, float]:
        a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return a.ru_utime + a.ru_stime, b.ru_utime + b.ru_stime

    out: dict[str, Any] = {"plan": str(plan_path), "versions": _versions(), "loadavg_before": _loadavg(), "jobs": []}
    for job in expand(load_plan(plan_path)).compile_jobs[:k]:
        t, c0 = time.perf_counter(), cpu()
        o = run_compile_job(job)
        c1 = cpu()
        out["jobs"].append({"job": job.label(), "status": o.status, "wall_s": round(time.perf_counter() - t, 2),
                            "self_cpu_s": round(c1[0] - c0[0], 2), "children_cpu_s": round(c1[1] - c0[1], 2)})  # fmt: skip
        print(json.dumps(out["jobs"][-1]), flush=True)
    for mod in ("triton", "torch"):
        c0 = cpu()
        subprocess.run([sys.executable, "-c", f"import {mod}"], check=True, capture_output=True)
        out[f"import_{mod}_cpu_s"] = round(cpu()[1] - c0[1], 2)
    out["loadavg_after"] = _loadavg()
    shutil.rmtree(tmp, ignore_errors=True)
    return out


def static_probe(configs: list[int]) -> dict[str, Any]:
    """Compile jobs of matmul's variant ``annotated`` for ``configs`` × sm90/sm100 one after the other (empty
    caches): wall and children CPU seconds beside the config's tile (BLOCK_SIZE_M × N × K) and ``num_stages``, and
    the Spearman rank correlation of tile × stages with the CPU seconds (whether a static score could rank jobs
    never seen; :mod:`irdiff.sweep.timings`)."""
    import resource

    _register_envs()
    tmp = Path(tempfile.mkdtemp(prefix="irdiff-static-"))
    os.environ["IRDIFF_CACHE_DIR"] = str(tmp / "irdiff")
    os.environ["TRITON_CACHE_DIR"] = str(tmp / "triton")
    from irdiff.suites.matmul import CONFIGS
    from irdiff.sweep.jobs import run_compile_job
    from irdiff.sweep.plan import CompileJob

    def cpu() -> float:
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r.ru_utime + r.ru_stime

    rows = []
    for target in ("sm90", "sm100"):
        for c in configs:
            kw, t, c0 = CONFIGS[c].kwargs, time.perf_counter(), cpu()
            o = run_compile_job(CompileJob("matmul", "annotated", target, None, c, ()))
            rows.append({"target": target, "config": c, "tile": [kw[f"BLOCK_SIZE_{x}"] for x in "MNK"],
                         "stages": CONFIGS[c].num_stages, "warps": CONFIGS[c].num_warps, "status": o.status,
                         "wall": round(time.perf_counter() - t, 2), "child_cpu": round(cpu() - c0, 2),
                         "load": _loadavg()})  # fmt: skip
            print(json.dumps(rows[-1]), flush=True)
    shutil.rmtree(tmp, ignore_errors=True)

    def rank(xs: list[float]) -> list[int]:
        order = sorted(range(len(xs)), key=lambda i: xs[i])
        return [order.index(i) for i in range(len(xs))]

    score = [float(r["tile"][0] * r["tile"][1] * r["tile"][2] * r["stages"]) for r in rows]
    ra, rb, n = rank(score), rank([r["child_cpu"] for r in rows]), len(rows)
    rho = 1 - 6 * sum((x - y) ** 2 for x, y in zip(ra, rb, strict=True)) / (n * (n * n - 1))
    return {"versions": _versions(), "jobs": rows, "spearman_score_vs_child_cpu": round(rho, 2)}


# ----------------------------------------------------------------------------------------------------------- hardware


def _read(path: str) -> str:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return ""


def topology() -> dict[str, Any]:
    """Logical CPUs, physical cores (distinct (package, core id) pairs), threads per core, affinity, cgroup quota."""
    cpus = sorted(int(d.name[3:]) for d in Path("/sys/devices/system/cpu").glob("cpu[0-9]*"))
    cores = set()
    siblings = set()
    for c in cpus:
        t = f"/sys/devices/system/cpu/cpu{c}/topology"
        cores.add((_read(f"{t}/physical_package_id"), _read(f"{t}/core_id")))
        siblings.add(_read(f"{t}/thread_siblings_list"))
    info = _read("/proc/cpuinfo").splitlines()
    first = {}
    for line in info:
        k, _, v = line.partition(":")
        if k.strip() and k.strip() not in first:
            first[k.strip()] = v.strip()
    flags = set(first.get("flags", "").split())
    lscpu = ""
    if shutil.which("lscpu"):
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    keep = ("Model name", "Thread(s) per core", "Core(s) per socket", "Socket(s)", "CPU(s)", "NUMA node(s)",
            "Hypervisor vendor", "Virtualization type", "L2 cache", "L3 cache", "CPU max MHz", "BogoMIPS")  # fmt: skip
    return {
        "logical_cpus": len(cpus),
        "os_cpu_count": os.cpu_count(),
        "affinity": len(os.sched_getaffinity(0)),
        "distinct_cores": len(cores),
        "thread_siblings_lists": sorted(siblings)[:8],
        "cpuinfo": {k: first.get(k, "") for k in ("model name", "siblings", "cpu cores", "cpu MHz", "cache size")},
        "flags": {f: f in flags for f in ("ht", "hypervisor", "avx512f", "amx_tile")},
        "lscpu": [x.strip() for x in lscpu.splitlines() if x.split(":")[0].strip() in keep],
        "cgroup_cpu_max": _read("/sys/fs/cgroup/cpu.max") or _read("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"),
        "cpu_pressure": _read("/proc/pressure/cpu").splitlines()[:1],
        "meminfo": [x for x in _read("/proc/meminfo").splitlines() if x.split(":")[0] in ("MemTotal", "MemFree")],
        "loadavg": _loadavg(),
    }


def _spin(n: int) -> float:
    """A pure-Python CPU-bound loop; returns its own wall time (s)."""
    t = time.perf_counter()
    x = 0
    for i in range(n):
        x = (x + i * i) % 1000003
    return time.perf_counter() - t


def _copy(mb: int) -> float:
    """Copies of a ``mb`` MiB buffer (numpy when present, else bytes); returns GB/s (read + write)."""
    try:
        import numpy as np

        a = np.ones(mb * 2**17)
        b = np.empty_like(a)
        b[:] = a  # first touch outside the timing
        t = time.perf_counter()
        for _ in range(10):
            b[:] = a
        return 2 * 10 * a.nbytes / (time.perf_counter() - t) / 1e9
    except ImportError:
        src = bytes(mb * 2**20)
        t = time.perf_counter()
        for _ in range(10):
            bytearray(src)
        return 2 * 10 * len(src) / (time.perf_counter() - t) / 1e9


def _import_torch(_: int) -> float:
    """A fresh interpreter importing torch (as each Triton 3.6 compile did); returns its wall time (s)."""
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import torch"], check=True, capture_output=True)
    return time.perf_counter() - t


def _parallel(fn: Any, arg: int, n: int, pool: Any) -> dict[str, float]:
    """``fn(arg)`` in ``n`` of the pool's processes at once; wall time of the batch and each process's own result."""
    t = time.perf_counter()
    got = list(pool.map(fn, [arg] * n))
    return {"wall_s": round(time.perf_counter() - t, 3), "each_mean": round(sum(got) / n, 3)}


def hardware(counts: list[int], spin: int, mb: int, imports: bool) -> dict[str, Any]:
    """Topology plus the parallel references (see the module docstring). For the loop and the imports, efficiency
    at n = the 1-process time / the n-process time (equal work per process: 1.0 is linear scaling)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    out: dict[str, Any] = {"topology": topology(), "versions": _versions()}
    top = max(counts)
    with ProcessPoolExecutor(top, mp_context=multiprocessing.get_context("spawn")) as pool:
        list(pool.map(_spin, [1000] * top * 2))  # every process started before timing
        for name, fn, arg in (("python_loop", _spin, spin), ("memory_copy", _copy, mb),
                              *((("import_torch", _import_torch, 0),) if imports else ())):  # fmt: skip
            rows = []
            for n in counts:
                r = _parallel(fn, arg, n, pool)
                rows.append({"processes": n, **r})
                print(name, json.dumps(rows[-1]), flush=True)
            base = rows[0]
            for r in rows:
                if name == "memory_copy":  # GB/s per process; the aggregate is n × that
                    r["aggregate_GBps"] = round(r["each_mean"] * r["processes"], 1)
                    r["efficiency"] = round(r["each_mean"] / base["each_mean"], 2)
                else:
                    r["efficiency"] = round(base["wall_s"] / r["wall_s"], 2)
            out[name] = rows
    return out


# ----------------------------------------------------------------------------------------------------------- overhead


def _empty_job(i: int) -> int:
    return i


def _per_job(ex: Any, fn: Any, items: list[Any], *args: Any) -> tuple[float, list[Any]]:
    """Wall seconds per job (all items through ``ex`` at once, divided by their number) and the results."""
    t = time.perf_counter()
    got = [r for _, r in ex.map_unordered(fn, items, *args)]
    return (time.perf_counter() - t) / max(1, len(items)), got


def _measure(ex: Any, n: int, compile_jobs: list[Any], diag_jobs: list[Any], out: Path) -> dict[str, Any]:
    """Empty jobs (throughput, one-job round trip) and real cached jobs through the executor ``ex``; every worker
    has run each kind of job once before anything is timed (imports are not per-job overhead)."""
    from irdiff.sweep.jobs import JobOutcome, run_compile_job, run_diagnosis_job

    w = ex.workers
    list(ex.map_unordered(_empty_job, range(4 * w)))
    list(ex.map_unordered(run_compile_job, compile_jobs[: 2 * w], True))
    list(ex.map_unordered(run_diagnosis_job, diag_jobs[: 2 * w], str(out / "warm"), False))
    r: dict[str, Any] = {"workers": w}
    s, got = _per_job(ex, _empty_job, list(range(n)))
    assert sorted(got) == list(range(n))
    r["empty_ms_per_job"] = round(s * 1000, 3)
    t = time.perf_counter()
    for i in range(20):
        list(ex.map_unordered(_empty_job, [i]))
    r["empty_round_trip_ms"] = round((time.perf_counter() - t) / 20 * 1000, 2)
    for kind, fn, items, args in (("cached_compile", run_compile_job, compile_jobs, (True,)),
                                  ("diagnosis", run_diagnosis_job, diag_jobs, (str(out / "timed"), False))):  # fmt: skip
        s, got = _per_job(ex, fn, items, *args)
        outcomes = [g for g in got if isinstance(g, JobOutcome)]
        assert len(outcomes) == len(items) and all(o.status in ("cached", "done") for o in outcomes), got[:2]
        inside = sum(o.seconds for o in outcomes) / len(outcomes)
        r[kind] = {
            "jobs": len(items),
            "wall_ms_per_job": round(s * 1000, 1),  # throughput: wall / jobs, `workers` at once
            "in_worker_ms_per_job": round(inside * 1000, 1),  # the job function's own time, in its worker
            # what the executor adds to each job: workers × wall per job − the job's own time
            "overhead_ms_per_job": round((s * w - inside) * 1000, 1),
        }
    return r


def overhead(n: int, workers: int, plan_path: Path) -> dict[str, Any]:
    """Per-job cost of the local pool and of Ray (a two-node cluster started here), ``workers`` each: empty jobs,
    and the real jobs of ``plan_path`` with every compile cached (compiled first if needed, not timed)."""
    _register_envs()
    from irdiff.sweep import dry_run, load_plan, run_sweep
    from irdiff.sweep.executors import LocalExecutor, RayExecutor

    plan = load_plan(plan_path)
    exp, counts = dry_run(plan)
    tmp = Path(tempfile.mkdtemp(prefix="irdiff-overhead-"))
    out: dict[str, Any] = {"jobs": n, "workers": workers, "plan": str(plan_path.relative_to(ROOT)),
                           "compiled_first": counts.compile_jobs - counts.cached, "versions": _versions(),
                           "loadavg_before": _loadavg()}  # fmt: skip
    if counts.cached < counts.compile_jobs:
        ex = LocalExecutor(workers)
        try:
            run_sweep(plan, tmp / "fill", ex, expansion=exp)
        finally:
            ex.close()
    exp, counts = dry_run(plan)
    assert counts.cached == counts.compile_jobs, "compiles missing from the cache"
    cjobs, djobs = list(exp.compile_jobs), list(exp.diagnosis_jobs)
    ex = LocalExecutor(workers)
    try:
        out["local"] = _measure(ex, n, cjobs, djobs, tmp / "local")
    finally:
        ex.close()
    print(json.dumps({"local": out["local"]}), flush=True)
    for _attempt in range(3):  # Ray's node start gives up after 30 s, which an overloaded machine can exceed
        try:
            cluster = LocalRayCluster(cpus_per_node=max(1, workers // 2)).__enter__()
        except RuntimeError as e:
            out.setdefault("ray_start_failures", []).append(str(e)[:200])
            time.sleep(10)
            continue
        try:
            rex = RayExecutor(cluster.address)
            try:
                out["ray"] = _measure(rex, n, cjobs, djobs, tmp / "ray")
            finally:
                rex.close()
        finally:
            cluster.__exit__(None, None, None)
        break
    out["loadavg_after"] = _loadavg()
    shutil.rmtree(tmp, ignore_errors=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["executors", "scaling", "overhead", "hardware", "jobcpu", "static"])
    ap.add_argument("--plan", type=Path, default=None)
    ap.add_argument("--workers", default="1,2,4,8,16", help="scaling: worker counts; executors/overhead: one count")
    ap.add_argument("--budget", type=float, default=540.0, help="scaling: stop before exceeding this many seconds")
    ap.add_argument(
        "--timings",
        type=Path,
        default=None,
        help="scaling: the timing history (default: a fresh temp file, filled by a first cold run)",
    )
    ap.add_argument("--no-history", action="store_true", help="scaling: every run in plan order (no history)")
    ap.add_argument("--out", type=Path, default=None, help="executors: output directory (default: a temp dir)")
    ap.add_argument("--jobs", type=int, default=200, help="overhead: empty jobs")
    ap.add_argument("--spin", type=int, default=5_000_000, help="hardware: loop iterations per process (~1-2 s)")
    ap.add_argument("--mb", type=int, default=256, help="hardware: MiB copied per process")
    ap.add_argument("--no-imports", action="store_true", help="hardware: skip the parallel `import torch`")
    ap.add_argument("--configs", default=None, help="static: matmul autotune config indices (6,0,8,9,15,2)")
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args()
    if a.what == "executors":
        out = a.out or Path(tempfile.mkdtemp(prefix="irdiff-sweep-exec-"))
        res = compare_executors(a.plan or ROOT / "benchmarks/plans/acceptance.toml", out, int(a.workers.split(",")[0]))
    elif a.what == "scaling":
        counts = [int(x) for x in a.workers.split(",")]
        res = scaling(
            a.plan or ROOT / "benchmarks/plans/scaling.toml", counts, a.budget, a.json, a.timings, not a.no_history
        )
    elif a.what == "static":
        res = static_probe([int(x) for x in (a.configs or "6,0,8,9,15,2").split(",")])
    elif a.what == "jobcpu":
        res = job_cpu(a.plan or ROOT / "benchmarks/plans/scaling.toml", a.jobs)
    elif a.what == "hardware":
        counts = [int(x) for x in a.workers.split(",")]
        res = hardware(counts, a.spin, a.mb, not a.no_imports)
    else:
        res = overhead(a.jobs, int(a.workers.split(",")[0]), a.plan or ROOT / "benchmarks/plans/overhead.toml")
    res["command"] = " ".join(["python3", *sys.argv])
    text = json.dumps(res, indent=1)
    print(text)
    if a.json:
        a.json.write_text(text)


if __name__ == "__main__":
    main()
