"""``irdiff SUITE --all-configs``: every autotune config compiled, one summary row per config, then the full
comparison of the config that differs most (or ``--config N``). A small suite of our own (``configs_copy.py``: a
strided copy whose column stride is ``int``-annotated in one variant, three configs) keeps it cheap; the 32-kernel
matmul run is done by hand (see the report in ``benchmarks/results/``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from irdiff.cli import cli
from irdiff.compile import CompileRequest, compile_bundle
from irdiff.render.configs import config_rows, most_different, split_config_name

SUITE = str(Path(__file__).parent / "suites" / "configs_copy.py")
ARGS = [SUITE, "--all-configs", "--target", "sm80", "--color", "never", "--paging", "never", "--stage", "ttgir"]


def run(*extra: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, [*ARGS, *extra], env={"IRDIFF_NO_GPU_PROBE": "1"})
    return r.exit_code, r.stdout, r.stderr


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    return compile_bundle(
        CompileRequest(SUITE, ["annotated", "unit"], "sm80", config="all"),
        tmp_path_factory.mktemp("cfg") / "b",
        command=[],
    )


def table_rows(out: str) -> dict[int, str]:
    """Table rows by config index, without the two-space indent (`` ▶1  16×128 w2 …`` for the chosen one)."""
    return {int(m.group(2)): m.group(0)[2:] for m in re.finditer(r"^  ([▶ ])(\d+) .*$", out, re.M)}


def test_rows_hold_the_bundles_facts(bundle) -> None:  # type: ignore[no-untyped-def]
    rows = config_rows(bundle, "annotated", "unit")
    assert [r.index for r in rows] == [0, 1, 2]
    for r in rows:
        va, vb = bundle.variants[r.a], bundle.variants[r.b]
        assert r.registers == (va.resources.registers, vb.resources.registers)
        assert r.shared == (va.resources.shared_bytes, vb.resources.shared_bytes)
        assert r.root is not None and r.root[0] == "spec.constexpr-one-lost", r.root
        assert "stride_n" in r.root[1]
    # One column wide (BLOCK_N=1): nothing to vectorize, so fewer consequences than with 64- or 128-wide rows.
    assert rows[0].findings < rows[1].findings and rows[0].counts_differ < rows[1].counts_differ
    best = most_different(rows)
    assert best is not None and best.index in (1, 2)
    assert best.score == max(r.score for r in rows)


def test_rows_from_the_sweep_executor_match_the_sequential_rows(bundle) -> None:  # type: ignore[no-untyped-def]
    """``--all-configs`` diagnoses the configs on the sweep's local executor (worker processes load the bundle from
    disk): the same rows, diagnoses included, as one after the other here."""
    from irdiff.sweep.executors import LocalExecutor

    ex = LocalExecutor(2)
    try:
        parallel = config_rows(bundle, "annotated", "unit", executor=ex)
    finally:
        ex.close()
    sequential = config_rows(bundle, "annotated", "unit")
    assert [r.index for r in parallel] == [0, 1, 2]
    for p, q in zip(parallel, sequential):
        assert (p.root, p.findings, p.score, p.counts_differ, p.registers, p.shared) == (
            q.root, q.findings, q.score, q.counts_differ, q.registers, q.shared,
        )  # fmt: skip
        assert p.diagnosis is not None and q.diagnosis is not None
        assert [f.id for f in p.diagnosis.findings] == [f.id for f in q.diagnosis.findings]


def test_all_configs_prints_the_table_then_the_chosen_config() -> None:
    code, out, err = run()
    assert code == 0, err
    rows = table_rows(out)
    assert sorted(rows) == [0, 1, 2]
    chosen = [i for i, ln in rows.items() if ln.startswith("▶")]
    assert len(chosen) == 1 and chosen[0] != 0
    assert f"full comparison: config {chosen[0]} (the config that differs most" in out
    assert re.search(rf"^irdiff configs-copy  annotated@{chosen[0]} vs unit@{chosen[0]}", out, re.M)
    assert "32×1 w1" in rows[0] and "16×128 w2" in rows[1]
    assert "── findings" in out and "━━ ttgir" in out
    # the root column counts every finding of that config: the chosen one's count is its comparison's
    shown = re.search(r"── findings \((\d+)[:, ]", out)
    assert shown is not None
    assert f"spec.constexpr-one-lost ({shown.group(1)} findings in all)" in rows[chosen[0]], rows[chosen[0]]


@pytest.mark.parametrize("extra", [["--config", "0"], ["--variant", "annotated@0"], ["--against", "unit@0"]])
def test_config_picks_the_diagnosed_config(extra: list[str]) -> None:
    code, out, err = run(*extra)
    assert code == 0, err
    assert table_rows(out)[0].startswith("▶0")
    assert "full comparison: config 0 (picked with --config)" in out
    assert re.search(r"^irdiff configs-copy  annotated@0 vs unit@0", out, re.M)


def test_both_orders_mirror() -> None:
    code, out, err = run("--variant", "unit", "--against", "annotated", "--config", "1")
    assert code == 0, err
    assert re.search(r"^irdiff configs-copy  unit@1 vs annotated@1", out, re.M)
    assert "registers unit|annotated" in out


def test_single_config_by_name_without_all_configs() -> None:
    """``--variant annotated@2`` without --all-configs compiles config 2 of both variants."""
    r = CliRunner().invoke(
        cli,
        [SUITE, "--variant", "annotated@2", "--target", "sm80", "--color", "never", "--paging", "never", "--no-run"],
        env={"IRDIFF_NO_GPU_PROBE": "1"},
    )
    assert r.exit_code == 0, r.stderr
    assert "annotated vs unit" in r.stdout
    # the stage-0 note says which config was compiled (config 2: BLOCK_M=32, BLOCK_N=64, num_warps=4)
    assert "not timed; config BLOCK_M=32, BLOCK_N=64, num_warps=4\n" in r.stdout, r.stdout


@pytest.mark.parametrize(
    ("extra", "config"),
    [([], "BLOCK_M=32, BLOCK_N=1, num_warps=1"),  # the suite's default_config=0
     (["--config", "1"], "BLOCK_M=16, BLOCK_N=128, num_warps=2"),
     (["--variant", "unit@1", "--against", "annotated"], "BLOCK_M=16, BLOCK_N=128, num_warps=2"),
     (["--all-configs"], None)],
)  # fmt: skip
def test_the_compiled_config_is_named_in_every_format(extra: list[str], config: str | None, tmp_path: Path) -> None:
    """Which config a comparison comes from is stated beside the compiled shape, in the terminal, Markdown and HTML
    alike; under --all-configs it is the config of the pair shown (the table's ▶ row)."""
    md, html = tmp_path / "r.md", tmp_path / "r.html"
    args = [SUITE, *extra, "--target", "sm80", "--color", "never", "--paging", "never", "--no-run", "--stage", "ttir"]
    r = CliRunner().invoke(cli, [*args, "--md", str(md), "--html", str(html)], env={"IRDIFF_NO_GPU_PROBE": "1"})
    assert r.exit_code == 0, r.stderr
    if config is None:  # --all-configs: the config of the chosen row
        chosen = next(ln for ln in table_rows(r.stdout).values() if ln.startswith("▶"))
        block_m, block_n = re.search(r"(\d+)×(\d+) w", chosen).groups()  # type: ignore[union-attr]
        config = f"BLOCK_M={block_m}, BLOCK_N={block_n}, "
    note = re.search(r"^  compiled at M=256,N=512; not timed; config (.*)$", r.stdout, re.M)
    assert note is not None and (note.group(1) + ", ").startswith(config), r.stdout
    assert config.rstrip(", ") in md.read_text().replace("\\_", "_")  # Markdown escapes `_`
    assert config.rstrip(", ") in html.read_text()


@pytest.mark.parametrize(
    ("extra", "says"),
    [(["--variant", "annotated@1", "--against", "unit@2"], "different configs"),
     (["--variant", "annotated@1", "--config", "2"], "different configs"),
     (["--config", "7"], "configs are 0..2"), (["--config", "BLOCK_M=32"], "by its index")],
)  # fmt: skip
def test_conflicting_config_choices_are_one_line_errors(extra: list[str], says: str) -> None:
    code, out, err = run(*extra)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and says in err


def test_split_config_name() -> None:
    assert split_config_name("annotated@3") == ("annotated", 3)
    assert split_config_name("a@b") == ("a@b", None)
    assert split_config_name("plain") == ("plain", None)
