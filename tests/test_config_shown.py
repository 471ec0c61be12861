"""``config.changed`` (irdiff/diagnose/rules/parameters.py) prints a value one variant does not have the same way in
its title, explanation and evidence: ``—`` (it used to print ``None→512`` in the title beside ``—`` in the
explanation). Both orders; hand-built facts (a configuration value with no recorded value is not something a
plain compile produces)."""

from __future__ import annotations

import dataclasses

from irdiff.diagnose.params import pair_params
from irdiff.diagnose.rules.parameters import rule_config_changed
from irdiff.diagnose.testing import make_arg, make_context, make_facts


def _finding(first: str):  # type: ignore[no-untyped-def]
    fa = make_facts(
        "a",
        args=[
            make_arg("x", "*fp32"),
            make_arg("BLOCK", "constexpr", index=1, constexpr=None, annotation="tl.constexpr"),
        ],
    )
    fb = make_facts(
        "b",
        args=[
            make_arg("x", "*fp32"),
            make_arg("BLOCK", "constexpr", index=1, constexpr="512", annotation="tl.constexpr"),
        ],
    )
    x, y = (fa, fb) if first == "a" else (fb, fa)
    ctx = dataclasses.replace(make_context(x, y), pairing=pair_params(x.args, "", y.args, ""))
    (f,) = rule_config_changed(ctx)
    return f


def test_missing_config_value_prints_a_dash_everywhere() -> None:
    f = _finding("a")
    assert f.title == "Configuration differs: `BLOCK` (—→512)"
    assert "`BLOCK` = — in `a` vs 512 in `b`" in f.explanation
    assert [e.text for e in f.evidence] == ["BLOCK = —", "BLOCK = 512"]
    g = _finding("b")
    assert g.title == "Configuration differs: `BLOCK` (512→—)"
    assert "`BLOCK` = 512 in `b` vs — in `a`" in g.explanation
    assert "None" not in f.title + f.explanation + g.title + g.explanation
