"""Bundles through the CLI: the manifest records the pair in the order asked, and read-only commands leave it
alone. Uses the irdiff compile cache that the session's matmul sm86 fixture fills (no extra compile)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from irdiff.bundle import Bundle, load_bundle
from irdiff.cli import cli

RECORDED = Path(__file__).parent / "data" / "bundles" / "matmul-sm86"


def run(*args: str) -> str:
    r = CliRunner().invoke(cli, list(args), env={"IRDIFF_NO_GPU_PROBE": "1"})
    assert r.exit_code == 0, r.stderr
    return r.stdout


def run_both(*args: str) -> tuple[str, str]:
    r = CliRunner().invoke(cli, list(args), env={"IRDIFF_NO_GPU_PROBE": "1"})
    assert r.exit_code == 0, r.stderr
    return r.stdout, r.stderr


def side_labels(out: str) -> tuple[str, str]:
    """The bracketed label after each side's kernel name in the header (``""`` when there is none)."""
    got = []
    for sign in "-+":
        m = re.search(rf"^  {re.escape(sign)} \S+\s+\S+(?:  \((.*)\))?$", out, re.M)
        assert m, out[:400]
        got.append(m.group(1) or "")
    return got[0], got[1]


def header(out: str) -> tuple[str, str]:
    m = re.search(r"^irdiff (?:diff · )?matmul  (\S+) vs (\S+)", out, re.M)
    assert m, out[:300]
    return m.group(1), m.group(2)


@pytest.mark.parametrize(
    ("variants", "pair"),
    [([], ("annotated", "unannotated")),  # the suite's own pair, not its listing order (unannotated first)
     (["--variant", "unannotated", "--variant", "annotated"], ("unannotated", "annotated")),
     (["--variant", "annotated", "--variant", "unannotated"], ("annotated", "unannotated"))],
)  # fmt: skip
def test_compile_then_diff_keeps_the_pair(
    matmul_sm86: Bundle, tmp_path: Path, variants: list[str], pair: tuple[str, str]
) -> None:
    b = tmp_path / "B"
    run("compile", "matmul", "--target", "sm86", "--save", str(b), *variants)
    assert tuple(load_bundle(b).pair) == pair
    out = run("diff", str(b), "--color", "never", "--paging", "never", "--stage", "ttir")
    assert header(out) == pair
    # Signs follow: `-` is the first of the pair, whose wrapper annotates stride_ak.
    assert re.search(rf"^  - {pair[0]}\s", out, re.M)


def test_read_only_commands_leave_the_manifest_alone(matmul_sm86: Bundle, tmp_path: Path) -> None:
    b = tmp_path / "B"
    run("compile", "matmul", "--target", "sm86", "--save", str(b))
    before = (b / "manifest.json").read_bytes()
    run("show", str(b), "--stage", "ttir", "--paging", "never")
    run("show", "matmul", "--target", "sm86", "--save", str(b), "--variant", "annotated", "--paging", "never")
    run("diff", str(b), "--paging", "never", "--color", "never", "--stage", "ttir")
    run("report", str(b), "-o", str(tmp_path / "r.md"))
    assert (b / "manifest.json").read_bytes() == before
    # The command that made the bundle, as typed (not the test runner's argv), still recorded.
    assert load_bundle(b).command == ["irdiff", "compile", "matmul", "--target", "sm86", "--save", str(b)]


def test_diff_headers_name_what_the_user_gave(tmp_path: Path) -> None:
    """Each side of ``irdiff diff`` is labelled by what the user passed (``--variant``/``--against``, the paths as
    typed), never by an option the user did not give; a side irdiff chose itself is said once on stderr (which pair,
    how chosen, what else the bundle holds)."""
    opts = ("--color", "never", "--paging", "never", "--stage", "ttir")
    out, err = run_both("diff", str(RECORDED), *opts)
    assert side_labels(out) == ("recorded pair", "recorded pair")
    assert "(--variant)" not in out and "(--against)" not in out
    assert err.strip() == (
        f"irdiff diff: {RECORDED}: annotated (-) vs unannotated (+), the pair its manifest records;"
        " choose with --variant/--against"
    )
    out, err = run_both("diff", str(RECORDED), "--variant", "unannotated", *opts)
    assert header(out) == ("unannotated", "annotated") and side_labels(out) == ("--variant", "the other variant")
    assert "unannotated (-) vs annotated (+), the other of its two variants" in err
    out, err = run_both("diff", str(RECORDED), "--against", "annotated", "--variant", "unannotated", *opts)
    assert side_labels(out) == ("--variant", "--against") and err == ""
    # Two variant directories: the paths as typed, in order; no option is named.
    a, b = str(RECORDED / "unannotated"), str(RECORDED / "annotated")
    out, err = run_both("diff", a, b, *opts)
    assert side_labels(out) == (a, b) and err == ""
    assert out.startswith("irdiff diff · matmul  unannotated vs annotated")
    # A bundle of more than two variants: the recorded pair is diffed and the others are named.
    many = tmp_path / "many"
    shutil.copytree(RECORDED, many)
    shutil.copytree(many / "annotated", many / "annotated2")
    record = json.loads((many / "annotated2" / "variant.json").read_text())
    record["name"] = "annotated2"
    (many / "annotated2" / "variant.json").write_text(json.dumps(record))
    manifest = json.loads((many / "manifest.json").read_text())
    manifest["variants"].append("annotated2")
    (many / "manifest.json").write_text(json.dumps(manifest))
    out, err = run_both("diff", str(many), *opts)
    assert header(out) == ("annotated", "unannotated")
    assert "the pair its manifest records (it holds 3: annotated, unannotated, annotated2)" in err, err
    # irdiff report picks its pair the same way and says so the same way
    _, err = run_both("report", str(many), "-o", str(tmp_path / "r.md"))
    assert err.splitlines()[0] == (
        f"irdiff report: {many}: annotated (-) vs unannotated (+), the pair its manifest records (it holds 3: "
        "annotated, unannotated, annotated2); choose with --variant/--against"
    )
    _, err = run_both("report", str(many), "--variant", "annotated2", "--against", "annotated", "-o", "-")
    assert "irdiff report:" not in err


def test_main_command_labels_the_sides_by_what_was_given(matmul_sm86: Bundle) -> None:
    opts = ("--target", "sm86", "--no-run", "--color", "never", "--paging", "never", "--stage", "ttir")
    out = run("matmul", *opts)
    assert side_labels(out) == ("the suite's default pair", "the suite's default pair")
    out = run("matmul", "--variant", "unannotated", *opts)
    assert header(out) == ("unannotated", "annotated")
    assert side_labels(out) == ("--variant", "the suite's default pair")
    out = run("matmul", "--variant", "annotated", "--against", "unannotated", *opts)
    assert side_labels(out) == ("--variant", "--against")
