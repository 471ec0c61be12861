"""``loop.flattened`` (irdiff/diagnose/rules/loops.py ``_differing_nest``) in a kernel with two loop nests
(``tests/suites/two_nests.py``, sm80): the first nest is ``flatten=True`` in both variants, the second only in
``both``. The finding must be about the second nest (its outer loop runs over ``k``), in both orders: its TTIR and
TTGIR evidence quotes that nest's loops, never the first nest's (over ``i``), which is fused the same in both."""

from __future__ import annotations

from pathlib import Path

import pytest
from diag_helpers import diagnose

SUITE = str(Path(__file__).parent / "suites" / "two_nests.py")


@pytest.mark.parametrize(("a", "b"), [("both", "first"), ("first", "both")])
def test_flattened_names_the_nest_that_differs(compile_suite, a: str, b: str) -> None:  # type: ignore[no-untyped-def]
    bundle = compile_suite(SUITE, ["both", "first"], "sm80")
    d = diagnose(bundle, a, b)
    (f,) = [x for x in d.findings if x.id == "loop.flattened"]
    assert "fused into one loop in `both`" in f.title
    ev = [(e.variant, e.stage, e.text) for e in f.evidence]
    assert ev[0][:2] == ("both", "ttir") and "scf.for %k = " in ev[0][2]  # the second nest's outer loop
    assert ev[1] == ("both", "ttir", "} {tt.flatten}") and "scf.for %m = " in ev[2][2]  # ... and its inner loop
    assert [t for v, s, t in ev if v == "first" and "scf.for %k = " in t]  # the nest `first` keeps
    assert not [t for _, _, t in ev if "scf.for %i = " in t or "scf.for %j = " in t]  # never the first nest
    assert "`first` keeps 3 loop(s) with 1 loop-carried values" in f.explanation
