"""Bundles through the CLI: the manifest records the pair in the order asked, and read-only commands leave it
alone. Uses the irdiff compile cache that the session's matmul sm86 fixture fills (no extra compile)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from irdiff.bundle import Bundle, load_bundle
from irdiff.cli import cli


def run(*args: str) -> str:
    r = CliRunner().invoke(cli, list(args), env={"IRDIFF_NO_GPU_PROBE": "1"})
    assert r.exit_code == 0, r.stderr
    return r.stdout


def header(out: str) -> tuple[str, str]:
    m = re.search(r"^irdiff matmul  (\S+) vs (\S+)", out, re.M)
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
