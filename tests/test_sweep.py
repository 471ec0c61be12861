"""irdiff sweep: plans, executors, the Parquet table, overview/digest, and the CI gate — on real compiles.

The compiling tests use small plans (one target, two variants) so CI stays cheap; the ≥ 300-job acceptance plan
(every built-in suite × all autotune configs × sm80/sm90/sm100 × two Triton releases) runs on the local pool and
on a Ray cluster in ``test_acceptance_local_and_ray_tables_identical`` (slow: set IRDIFF_SWEEP_ACCEPTANCE=1) and in
``benchmarks/bench_sweep.py``.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from irdiff.cli import cli
from irdiff.sweep import dry_run, load_plan, run_sweep
from irdiff.sweep.executors import LocalExecutor
from irdiff.sweep.gate import evaluate, parse_rule
from irdiff.sweep.plan import expand
from irdiff.sweep.report import render_digest, render_overview
from irdiff.sweep.table import read_table, write_table

ROOT = Path(__file__).resolve().parent.parent
SUITES = Path(__file__).resolve().parent / "suites"
HINTS = SUITES / "sweep_hints.py"


def _plan(tmp: Path, text: str, name: str = "plan.toml") -> Path:
    p = tmp / name
    p.write_text(text)
    return p


def _sweep(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(cli, ["sweep", *args], catch_exceptions=False)
    return r.exit_code, r.output


# ---------------------------------------------------------------- plans (no compiling)


def test_acceptance_plan_expands_to_over_300_deduplicated_jobs(tmp_path: Path) -> None:
    plan = load_plan(
        _plan(
            tmp_path,
            'suites = ["builtin"]\ntargets = ["sm80", "sm90", "sm100"]\ntriton = ["3.6.0", "3.9.0"]\nconfigs = "all"\n',
        )
    )
    exp = expand(plan)
    # matmul has 16 autotune configs, the other four suites none: (16 + 4) × 3 targets × 2 releases pairs
    assert len(exp.diagnosis_jobs) == (16 + 4) * 3 * 2
    assert len(exp.compile_jobs) == 2 * len(exp.diagnosis_jobs)  # two variants per pair, none shared
    assert len(exp.compile_jobs) + len(exp.diagnosis_jobs) >= 300
    matmul = [d for d in exp.diagnosis_jobs if d.a.suite == "matmul"]
    assert {d.a.config for d in matmul} == set(range(16)) and {d.a.triton for d in matmul} == {"3.6.0", "3.9.0"}
    assert all(d.a.variant == "annotated" and d.b.variant == "unannotated" for d in matmul)  # the suite's pair


def test_pairs_share_compile_jobs_and_self_pairs_cross_the_axis(tmp_path: Path) -> None:
    text = (
        'targets = ["sm80", "sm90"]\n[[suite]]\nref = "matmul"\n'
        'pairs = [["annotated", "unannotated"], ["unannotated", "annotated"]]\n'
    )
    exp = expand(load_plan(_plan(tmp_path, text)))
    assert len(exp.diagnosis_jobs) == 4 and len(exp.compile_jobs) == 4  # both orders reuse the same compiles
    text = 'suites = ["softmax"]\ntargets = ["sm80", "sm90", "sm100"]\npairs = "self"\nacross = "target"\n'
    exp = expand(load_plan(_plan(tmp_path, text)))
    # each variant on sm90 and sm100 against itself on sm80 (the first target, the baseline)
    assert sorted((d.a.variant, d.a.target, d.b.target) for d in exp.diagnosis_jobs) == [
        ("stages1", "sm100", "sm80"), ("stages1", "sm90", "sm80"),
        ("stages4", "sm100", "sm80"), ("stages4", "sm90", "sm80"),
    ]  # fmt: skip
    assert len(exp.compile_jobs) == 6


def test_dry_run_creates_no_triton_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A release with no environment yet counts as to be compiled; the dry run downloads and creates nothing."""
    monkeypatch.setenv("IRDIFF_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("IRDIFF_TRITON_ENVS", raising=False)
    plan = _plan(tmp_path, 'suites = ["softmax"]\ntargets = ["sm90"]\ntriton = ["3.1.0"]\n')
    code, out = _sweep(str(plan), "--dry-run")
    assert code == 0, out
    assert "compile jobs: 2 (0 cached, 2 to compile)" in out and "jobs: 3" in out
    assert not (tmp_path / "cache" / "envs").exists()


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('suites = ["matmul"]\ntargetz = ["sm90"]\n', "unknown key 'targetz'"),
        ('suites = ["matmul"]\ntargets = ["sm42"]\n', "sm42"),
        ('suites = ["matmul"]\nconfigs = [99]\n', "no autotune config 99"),
        ('suites = ["nosuch.py"]\n', "does not exist"),
        ('suites = ["matmul"]\npairs = [["annotated", "nope"]]\n', "no variant 'nope'"),
        ('suites = ["matmul"]\npairs = "self"\n', "two releases"),
        ("suites = [\n", "not valid TOML"),
        ('targets = ["sm90"]\n', "names no suite"),
    ],
)
def test_bad_plans_are_one_line_errors(tmp_path: Path, text: str, needle: str) -> None:
    code, out = _sweep(str(_plan(tmp_path, text)), "--dry-run")
    assert code == 2, out
    assert out.startswith("error: ") and needle in out and out.count("\n") == 1, out


def test_missing_plan_and_bad_rule_are_usage_errors(tmp_path: Path) -> None:
    code, out = _sweep(str(tmp_path / "none.toml"), "--dry-run")
    assert code == 2 and "cannot read plan" in out
    plan = _plan(tmp_path, 'suites = ["softmax"]\n')
    code, out = _sweep(str(plan), "--fail-on", "severity>=huge")
    assert code == 2 and "severity is one of" in out
    code, out = _sweep(str(plan), "--fail-on", "registers>+4")
    assert code == 2 and "--baseline" in out


def test_gate_rules_parse() -> None:
    r = parse_rule("registers>+10%")
    assert (r.metric, r.relative, r.percent, r.value) == ("registers", True, True, 10.0)
    assert parse_rule("severity>=major").level == "major"
    assert parse_rule("severity>minor").value == 2  # strictly above minor = major or worse
    for bad in ("severity>=+major", "spills>+5%", "failed>+1", "findings>3", "bogus>1", "registers>>1"):
        with pytest.raises(ValueError):
            parse_rule(bad)


# ---------------------------------------------------------------- real sweeps


@pytest.fixture(scope="module")
def hint_sweeps(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Three sweeps of one plan over a copy of tests/suites/sweep_hints.py on sm90 (local executor, 2 workers):
    ``base`` and ``again`` unchanged, ``planted`` after deleting the candidate's ``tl.multiple_of`` hint."""
    d = tmp_path_factory.mktemp("sweep-gate")
    src = d / "kernels.py"
    shutil.copy(HINTS, src)
    plan = _plan(d, 'name = "gate"\ntargets = ["sm90"]\n[[suite]]\nref = "kernels.py"\n')
    out = {"plan": plan, "src": src}
    code, text = _sweep(str(plan), "--out", str(d / "base"), "-j", "2", "-q")
    assert code == 0, text
    out["base"] = d / "base"
    out["base_log"] = text  # type: ignore[assignment]
    code, text = _sweep(str(plan), "--out", str(d / "again"), "-j", "2", "-q", "--no-reports",
                        "--baseline", str(d / "base" / "results.parquet"), "--fail-on", "severity>=major",
                        "--fail-on", "registers>+2")  # fmt: skip
    out["again"], out["again_code"], out["again_log"] = d / "again", code, text  # type: ignore[assignment]
    src.write_text("".join(line for line in HINTS.read_text().splitlines(True) if "# HINT" not in line))
    code, text = _sweep(str(plan), "--out", str(d / "planted"), "-j", "2", "-q",
                        "--baseline", str(d / "base" / "results.parquet"), "--fail-on", "severity>=major",
                        "--fail-on", "registers>+2")  # fmt: skip
    out["planted"], out["planted_code"], out["planted_log"] = d / "planted", code, text  # type: ignore[assignment]
    return out


def test_unchanged_plan_passes_the_gate(hint_sweeps: dict) -> None:
    assert hint_sweeps["again_code"] == 0, hint_sweeps["again_log"]
    log = hint_sweeps["again_log"]
    assert "changes since" in log and ": none" in log and "gate: passed" in log
    # the second run found both compiles in the cache: deduplicated, nothing compiled
    assert "2 cached" in log, log
    rows = read_table(hint_sweeps["base"] / "results.parquet")
    assert len(rows) == 1 and rows[0]["status"] == "ok" and rows[0]["identical"] is True
    assert rows[0]["root_id"] is None and rows[0]["findings"] == 0


def test_gate_trips_on_a_dropped_hint(hint_sweeps: dict) -> None:
    code, log = hint_sweeps["planted_code"], hint_sweeps["planted_log"]
    assert code == 1, log
    row = read_table(hint_sweeps["planted"] / "results.parquet")[0]
    assert (row["variant_a"], row["variant_b"]) == ("candidate", "reference")
    assert row["root_severity"] == "major" and row["status"] == "ok"
    assert row["chain_severity"] == "major"  # no effect is more severe than this root
    # the root names the lost divisibility hint on the candidate side; the vector width fell as its effect
    assert "tl.multiple_of" in row["root_title"] and "`candidate`" in row["root_title"], row["root_title"]
    assert "coalesce.vector-width" in row["finding_ids"]
    assert row["registers_a"] > row["registers_b"]  # the hint-less candidate computes scalar addresses
    assert "gate: --fail-on 'severity>=major' tripped on 1 row(s)" in log
    assert (
        f"sweep-hints candidate vs reference sm90 triton {row['triton_a']}: root no finding → {row['root_id']}"
        " [major]" in log
    )
    assert "--fail-on 'registers>+2' tripped" in log and "registers_a" in log
    assert "gate: FAILED" in log
    digest = (hint_sweeps["planted"] / "digest.md").read_text()
    assert "Changes since the baseline" in digest and row["root_id"] in digest


@pytest.mark.parametrize("order", [("plain", "aligned"), ("aligned", "plain")])
def test_gate_judges_a_root_by_its_chain(compile_suite, tmp_path: Path, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """A root (a ``tl.multiple_of`` on a loaded CSR row start) whose effect is ``critical`` (fp16 loads of 16 vs 128
    bits): the row's ``chain_severity`` is ``critical`` (and the root is lifted to it); for a ``minor`` root, and
    ``severity>=critical`` trips on the new root even when the baseline row already had as many critical findings
    under another root (counting them would not). A baseline of schema ``irdiff.sweep/1`` (no ``chain_severity``) is
    read and judged by its ``root_severity``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from irdiff.pipeline import build_comparison
    from irdiff.sweep.plan import CompileJob, DiagnosisJob
    from irdiff.sweep.table import row_from_comparison, schema

    ref = str(SUITES / "csr_hint.py")
    b = compile_suite(ref, ["plain", "aligned"], "sm90")
    job = DiagnosisJob(CompileJob(ref, order[0], "sm90", None, None), CompileJob(ref, order[1], "sm90", None, None))
    row = row_from_comparison(job, build_comparison(b, *order), None)
    # the diagnosis lifts a root to the worst severity its chain reaches (roots._lift_roots)
    assert (row["root_id"], row["root_severity"], row["chain_severity"]) == ("hint.axis-info", "critical", "critical")
    assert row["max_severity"] == "critical" and "coalesce.vector-width" in row["finding_ids"]
    # the gate on a row whose root itself is minor (as tables written before roots were lifted hold it)
    row = {**row, "root_severity": "minor"}
    write_table([row], tmp_path / "new.parquet")
    new = read_table(tmp_path / "new.parquet")
    assert new[0]["chain_severity"] == "critical"
    old = [{**row, "root_id": "settings.other", "root_severity": "minor", "chain_severity": "minor"}]
    trips = evaluate([parse_rule("severity>=critical")], new, old)
    assert len(trips) == 1, trips
    assert trips[0].rows[0].endswith("root settings.other [minor] → hint.axis-info [minor; chain critical]")
    assert evaluate([parse_rule("severity>=critical")], new, [row]) == []  # the same root: no trip
    # A table written before chain_severity existed (schema irdiff.sweep/1): read, judged by its root alone.
    sc = schema()
    v1 = pa.schema([f for f in sc if f.name != "chain_severity"], metadata={"irdiff.sweep.schema": "irdiff.sweep/1"})
    old_row = {k: v for k, v in row.items() if k != "chain_severity"}
    pq.write_table(pa.Table.from_pylist([old_row], schema=v1), tmp_path / "v1.parquet")
    back = read_table(tmp_path / "v1.parquet")
    assert back[0]["chain_severity"] is None and back[0]["root_severity"] == "minor"
    moved = [{**back[0], "root_id": "settings.other"}]
    assert evaluate([parse_rule("severity>=critical")], back, moved) == []
    assert evaluate([parse_rule("severity>=minor")], back, moved)[0].rows[0].endswith("→ hint.axis-info [minor]")
    assert "minor (chain critical)" in render_digest(new, "n")


def test_table_schema_is_queryable_with_duckdb(hint_sweeps: dict) -> None:
    duckdb = pytest.importorskip("duckdb")
    path = hint_sweeps["planted"] / "results.parquet"
    q = (
        f"SELECT suite, variant_a, root_severity, chain_severity, registers_a - registers_b AS dreg, "
        f"counts_a['ptx:ld.global.v4.b32'] AS v4a, counts_b['ptx:ld.global.v4.b32'] AS v4b "
        f"FROM '{path}' WHERE root_severity IN ('major', 'critical')"
    )
    rows = duckdb.sql(q).fetchall()
    assert len(rows) == 1
    suite, variant, sev, chain, dreg, v4a, v4b = rows[0]
    assert (suite, variant, sev, chain) == ("sweep-hints", "candidate", "major", "major") and dreg > 0
    assert v4a == 0 and v4b > 0  # reference loads/stores 128-bit vectors, the hint-less candidate does not


def test_overview_links_each_row_to_its_report(hint_sweeps: dict) -> None:
    base = hint_sweeps["base"]
    html = (base / "overview.html").read_text()
    row = read_table(base / "results.parquet")[0]
    assert row["report"] and f'href="{row["report"]}"' in html
    assert (base / row["report"]).is_file() and "<html" in (base / row["report"]).read_text()[:200].lower()
    assert "http://" not in html and "https://" not in html  # works offline


def test_overview_and_digest_escape_file_derived_text(tmp_path: Path) -> None:
    from irdiff.sweep.plan import CompileJob, DiagnosisJob
    from irdiff.sweep.table import failed_row

    job = DiagnosisJob(
        CompileJob("x.py", "<b>a</b>", "sm90", None, None), CompileJob("x.py", "b|c", "sm90", None, None)
    )
    row = failed_row(job, "<script>alert(1)</script>\x1b[31m")
    write_table([row], tmp_path / "t.parquet")
    rows = read_table(tmp_path / "t.parquet")
    html = render_overview(rows, "<i>n</i>")
    assert "<script>alert" not in html and "&lt;script&gt;" in html and "<b>a</b>" not in html
    md = render_digest(rows, "n")
    assert "<script>" not in md and "&lt;b&gt;" in md


def test_a_failing_job_does_not_stop_the_sweep(tmp_path: Path) -> None:
    plan = _plan(tmp_path, f'targets = ["sm90"]\nreports = false\n[[suite]]\nref = "{SUITES / "broken.py"}"\n'
                 'pairs = [["broken", "ok"], ["ok", "ok"]]\n')  # fmt: skip
    code, log = _sweep(str(plan), "--out", str(tmp_path / "o"), "-j", "2", "-q", "--fail-on", "failed>0")
    assert code == 1, log
    assert "failed: broken.py broken sm90" in log and "undefined_scale is not defined" in log
    rows = {(r["variant_a"], r["variant_b"]): r for r in read_table(tmp_path / "o" / "results.parquet")}
    assert rows[("broken", "ok")]["status"] == "failed" and "undefined_scale" in rows[("broken", "ok")]["error"]
    assert rows[("ok", "ok")]["status"] == "ok" and rows[("ok", "ok")]["identical"] is True


def test_a_pair_is_diagnosed_as_soon_as_its_compiles_are_done(tmp_path: Path) -> None:
    """One worker, two pairs (sm80 and sm90, compiled afresh): the sm80 pair's diagnosis runs before the last sm90
    compile, not after every compile of the sweep; the table is the same as ever."""
    plan = load_plan(_plan(tmp_path, f'targets = ["sm80", "sm90"]\nreports = false\n[[suite]]\nref = "{HINTS}"\n'))
    events: list[tuple[str, str]] = []
    ex = LocalExecutor(1)
    try:
        res = run_sweep(plan, tmp_path / "o", ex, progress=lambda e, label: events.append((e, label)),
                        use_cache=False)  # fmt: skip
    finally:
        ex.close()
    finished = [label for e, label in events if e in ("done", "failed", "cached")]
    assert len(finished) == 6 and res.counts == {"done": 6, "cached": 0, "failed": 0}, events
    diag_sm80 = finished.index("sweep_hints.py candidate→reference sm80 triton installed")
    last_compile = finished.index("sweep_hints.py reference sm90 triton installed")
    assert diag_sm80 < last_compile, finished
    assert [r["target_a"] for r in res.rows] == ["sm80", "sm90"] and all(r["status"] == "ok" for r in res.rows)
    assert len(res.job_seconds["compile"]) == 4 and len(res.job_seconds["diagnosis"]) == 2


def test_gate_without_baseline_reads_the_absolute_severity(hint_sweeps: dict) -> None:
    rows = read_table(hint_sweeps["planted"] / "results.parquet")
    assert [t.rule for t in evaluate([parse_rule("severity>=major")], rows, None)] == ["severity>=major"]
    assert evaluate([parse_rule("severity>=critical")], rows, None) == []
    assert evaluate([parse_rule("registers>200")], rows, None) == []


@pytest.mark.ray
def test_ray_executor_gives_the_local_table(tmp_path: Path) -> None:
    """A Ray cluster started here (``ray start --head`` plus a second node, benchmarks/bench_sweep.py) runs the same
    jobs as the process pool; the tables are equal."""
    if importlib.util.find_spec("ray") is None:
        pytest.skip("ray is not installed (pip install 'irdiff[sweep]')")
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench_sweep

    from irdiff.sweep.executors import RayExecutor

    plan = load_plan(_plan(tmp_path, f'targets = ["sm90"]\nreports = false\n[[suite]]\nref = "{HINTS}"\n'))
    exp, counts = dry_run(plan)
    local = run_sweep(plan, tmp_path / "local", LocalExecutor(1), expansion=exp)
    cluster = bench_sweep.LocalRayCluster(cpus_per_node=1, port=6397)
    try:
        cluster.__enter__()  # entered once: a second `ray start --head` on the port fails ("already running")
    except RuntimeError as e:  # an overloaded machine: Ray's own start-up timed out (not irdiff's doing)
        pytest.skip(str(e))
    try:
        ray_ex = RayExecutor(address=cluster.address)
        try:
            assert ray_ex.workers == 2  # two nodes of one CPU each
            ray = run_sweep(plan, tmp_path / "ray", ray_ex)
        finally:
            ray_ex.close()
    finally:
        cluster.__exit__(None, None, None)
    import pyarrow.parquet as pq

    a, b = pq.read_table(tmp_path / "local" / "results.parquet"), pq.read_table(tmp_path / "ray" / "results.parquet")
    assert a.equals(b) and local.rows == ray.rows and len(local.rows) == 1


# ---------------------------------------------------------------- acceptance (slow)

ACCEPTANCE_PLAN = ROOT / "benchmarks" / "plans" / "acceptance.toml"


@pytest.mark.slow
@pytest.mark.ray
@pytest.mark.skipif(os.environ.get("IRDIFF_SWEEP_ACCEPTANCE") != "1",
                    reason="≥ 300 jobs (240 compiles): set IRDIFF_SWEEP_ACCEPTANCE=1 (CI skips it; see benchmarks/)")  # fmt: skip
def test_acceptance_local_and_ray_tables_identical(tmp_path: Path) -> None:
    """Every built-in suite × all configs × sm80/sm90/sm100 × Triton 3.6.0 and 3.9.0 (.venv36 registered through
    IRDIFF_TRITON_ENVS), on a Ray cluster of two nodes (`ray start --head` + a worker node) and on the local pool:
    identical Parquet tables."""
    if importlib.util.find_spec("ray") is None:
        pytest.skip("ray is not installed")
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench_sweep

    result = bench_sweep.compare_executors(ACCEPTANCE_PLAN, tmp_path, workers=2)
    assert result["jobs"] >= 300
    assert result["identical"], result
    assert result["rows"] == 120 and result["failed_rows"] == 0, result


@pytest.mark.parametrize("name", ["../../x", "/tmp/x", "a/b", "..", ".", "~/x", "x\x1b]0;t\x07"])
def test_default_out_dir_stays_in_the_working_directory(name: str) -> None:
    """A plan's name becomes the default output folder: never a path out of the working directory (new-user fault:
    a plan named ``../../x`` wrote to ``../../x.sweep``); two different names never share a folder."""
    from irdiff.sweep.plan import default_out_dir

    out = default_out_dir(name)
    assert len(out.parts) == 1 and not out.is_absolute() and out.name.endswith(".sweep")
    assert out.name not in (".sweep", "..sweep") and not out.name.startswith(".")
    assert all(c.isprintable() for c in out.name)
    assert default_out_dir(name) != default_out_dir(name + "y")


def test_plain_plan_name_is_its_folder() -> None:
    from irdiff.sweep.plan import default_out_dir

    assert default_out_dir("triton-upgrade") == Path("triton-upgrade.sweep")
