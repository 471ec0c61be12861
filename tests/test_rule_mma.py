"""``layout.mma`` (``irdiff/diagnose/rules/mma.py``) on the facts of real compiles: the dot loop of
``tests/suites/diag_loop.py`` with 4 or 8 warps on sm86 (``mma.sync``, version 2) and sm90 (``wgmma``, version 3),
against a kernel without a dot. Both orders: the finding says each variant's layout next to its own name."""

from __future__ import annotations

from pathlib import Path

import pytest

from irdiff.bundle import Bundle
from irdiff.diagnose.facts import VariantFacts, extract_facts
from irdiff.diagnose.rules.mma import rule_mma
from irdiff.diagnose.testing import make_context

SUITES = Path(__file__).parent / "suites"
LOOP = str(SUITES / "diag_loop.py")
TAIL = (
    " (versionMajor 2 = `mma.sync`, 3 = Hopper `wgmma`, 5 = Blackwell `tcgen05`; instrShape is the per-instruction "
    "tile, warpsPerCTA how the warps split the output tile)."
)


@pytest.fixture(scope="module")
def facts(compile_suite) -> dict[str, VariantFacts]:  # type: ignore[no-untyped-def]
    out: dict[str, VariantFacts] = {}
    for target in ("sm86", "sm90"):
        b: Bundle = compile_suite(LOOP, ["dot3", "dot3w8"], target)
        for n, v in b.variants.items():
            f = extract_facts(v)
            f.name = f"{n}_{target}"
            out[f.name] = f
    plain = compile_suite(str(SUITES / "root_cases.py") + "::streaming", ["keep"], "sm80").variants["keep"]
    out["nodot"] = extract_facts(plain)
    out["nodot"].name = "nodot"
    return out


def test_warps_split_differently_both_orders(facts: dict[str, VariantFacts]) -> None:
    w8, w4 = facts["dot3w8_sm86"], facts["dot3_sm86"]
    l8, l4 = "v2 instrShape [16, 8] warpsPerCTA [2, 4]", "v2 instrShape [16, 8] warpsPerCTA [2, 2]"
    (f,) = rule_mma(make_context(w8, w4))
    assert (f.id, f.severity, f.stage, f.predicts) == ("layout.mma", "minor", "ttgir", None)
    assert f.title == f"MMA layout: {l8} vs {l4}"
    assert f.explanation == f"MMA layouts: {l8} in `dot3w8_sm86` vs {l4} in `dot3_sm86`" + TAIL
    # evidence: each variant's own #mma alias line of its TTGIR
    assert [(e.variant, e.stage) for e in f.evidence] == [("dot3w8_sm86", "ttgir"), ("dot3_sm86", "ttgir")]
    assert "warpsPerCTA = [2, 4]" in f.evidence[0].text and "warpsPerCTA = [2, 2]" in f.evidence[1].text
    assert all(e.text.startswith("#mma = #ttg.nvidia_mma<") and e.line == w8.mma[0]["ref"]["line"] for e in f.evidence)
    (r,) = rule_mma(make_context(w4, w8))
    assert r.title == f"MMA layout: {l4} vs {l8}"
    assert r.explanation == f"MMA layouts: {l4} in `dot3_sm86` vs {l8} in `dot3w8_sm86`" + TAIL
    assert [e.variant for e in r.evidence] == ["dot3_sm86", "dot3w8_sm86"]


def test_version_and_instruction_shape(facts: dict[str, VariantFacts]) -> None:
    h, a = facts["dot3_sm90"], facts["dot3_sm86"]
    (f,) = rule_mma(make_context(h, a))
    assert f.title == (
        "MMA layout: v3 instrShape [16, 64, 16] warpsPerCTA [4, 1] vs v2 instrShape [16, 8] warpsPerCTA [2, 2]"
    )
    # the same version with a different instruction shape (8 warps split the N tile: 32 columns per wgmma)
    (g,) = rule_mma(make_context(facts["dot3w8_sm90"], h))
    assert g.title == (
        "MMA layout: v3 instrShape [16, 32, 16] warpsPerCTA [4, 2] vs v3 instrShape [16, 64, 16] warpsPerCTA [4, 1]"
    )


def test_no_dot_on_one_side_and_equal_layouts(facts: dict[str, VariantFacts]) -> None:
    h, n = facts["dot3_sm90"], facts["nodot"]
    (f,) = rule_mma(make_context(n, h))
    assert f.title == "MMA layout: none vs v3 instrShape [16, 64, 16] warpsPerCTA [4, 1]"
    assert f.explanation.startswith("MMA layouts: none in `nodot` vs v3 instrShape")
    assert [e.variant for e in f.evidence] == ["dot3_sm90"]
    (r,) = rule_mma(make_context(h, n))
    assert r.title.endswith("vs none") and [e.variant for e in r.evidence] == ["dot3_sm90"]
    # the same layout (another variant with the same MMA facts), or no dot on either side: nothing
    twin = extract_facts_copy(h, "twin")
    assert rule_mma(make_context(h, twin)) == []
    assert rule_mma(make_context(n, extract_facts_copy(n, "nodot2"))) == []
    # two MMA layouts in one variant are all named, in order
    two = extract_facts_copy(h, "two")
    two.mma = [*h.mma, *facts["dot3_sm86"].mma]
    (t,) = rule_mma(make_context(two, h))
    assert t.title.startswith(
        "MMA layout: v3 instrShape [16, 64, 16] warpsPerCTA [4, 1]; v2 instrShape [16, 8] warpsPerCTA [2, 2] vs v3"
    )
    assert [e.variant for e in t.evidence] == ["two", "two", "dot3_sm90"]


def extract_facts_copy(f: VariantFacts, name: str) -> VariantFacts:
    import dataclasses

    return dataclasses.replace(f, name=name, mma=list(f.mma))
