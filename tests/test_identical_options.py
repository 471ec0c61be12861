"""The one-line report of identical stages (irdiff/render/terminal.py ``_identical_line``) when the variants' launch
options differ: ``tests/suites/warps_only.py`` is one copy kernel compiled with ``num_warps`` 4 and 8 (sm80). With
``--stage python`` the sources are identical but the variants are not: the line says so and names the option, in
both orders; the same variant against itself keeps the plain "identical" line."""

from __future__ import annotations

from pathlib import Path

import pytest

from irdiff.pipeline import build_comparison
from irdiff.render.terminal import TerminalOptions, render

SUITE = str(Path(__file__).parent / "suites" / "warps_only.py")


@pytest.mark.parametrize(("a", "b", "wa", "wb"), [("w4", "w8", 4, 8), ("w8", "w4", 8, 4)])
def test_identical_source_with_other_launch_options(compile_suite, a: str, b: str, wa: int, wb: int) -> None:  # type: ignore[no-untyped-def]
    bundle = compile_suite(SUITE, ["w4", "w8"], "sm80")
    c = build_comparison(bundle, a, b, stages="python")
    assert [d.identical for d in c.stage_diffs] == [True]  # the kernel text is the same
    out = render(c, TerminalOptions(color=False))
    assert out == (
        f"{a} and {b}: the sources are identical after normalization (python; sm80), but the launch options "
        f"differ: `num_warps` = {wa} in {a} vs {wb} in {b}\n"
    )
    same = render(build_comparison(bundle, a, a, stages="python"), TerminalOptions(color=False))
    assert same == f"{a} and {a} are identical after normalization (python; sm80)\n"
