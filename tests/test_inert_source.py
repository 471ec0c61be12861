"""A source change that compiles to nothing: ``tests/suites/probe_pairs.py::mask`` adds ``n = tl.multiple_of(n, 16)``
on the scalar argument ``n`` (Triton 3.9 drops a hint on a scalar argument: TTIR through SASS are identical, sm80).
The diagnosis is identical and says which change had no effect, with its line; the terminal no longer reads "no
known cause for the differences" (there are none downstream), in both orders."""

from __future__ import annotations

from pathlib import Path

import pytest

from irdiff.diagnose import diagnose
from irdiff.pipeline import build_comparison
from irdiff.render.terminal import TerminalOptions, render

SUITE = str(Path(__file__).parent / "suites" / "probe_pairs.py") + "::mask"


@pytest.mark.parametrize(("a", "b"), [("plain", "hinted"), ("hinted", "plain")])
def test_hint_without_effect_is_named(compile_suite, a: str, b: str) -> None:  # type: ignore[no-untyped-def]
    bundle = compile_suite(SUITE, ["plain", "hinted"], "sm80")
    line = 1 + next(
        i for i, t in enumerate(Path(SUITE.split("::")[0]).read_text().splitlines()) if "tl.multiple_of(n, 16)" in t
    )
    d = diagnose(bundle, a, b)
    assert d.identical and d.findings == []
    assert d.notes == [
        f"the source differs (statement `n = tl.multiple_of(n, 16)` only in `hinted` (line {line} of `hinted`)) but "
        "the compiled code (TTIR, TTGIR, LLIR, PTX, SASS) and the specialization are identical after normalization: "
        "the change has no effect on this compile"
    ]
    out = render(build_comparison(bundle, a, b, cache=False), TerminalOptions(color=False, width=200))
    assert "no findings: the compiled code is identical after normalization" in out
    assert "no known cause" not in out
    assert f"note: the source differs (statement `n = tl.multiple_of(n, 16)` only in `hinted` (line {line}" in out
    # the same variant against itself: no source change, no note
    assert diagnose(bundle, a, a).notes == []
