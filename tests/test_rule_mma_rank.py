"""``mma.lowering`` when the two lowerings rank alike (irdiff/diagnose/rules/mma_lowering.py ``_OTHER_RANK``).

A layout kind outside ``_RANK`` (mechfacts names an ``nvidia_mma`` of a ``versionMajor`` it has no words for ``mma``)
ranks with ``mma.sync``. Against a real ``mma.sync`` dot the two ranks tie, and the rule used to call whichever
variant came second the slower one: the direction flipped with the order of the variants. Now such a pair is reported
without a slower side, the same in both orders. The dot facts are read from the real sm80 TTGIR of
``tests/suites/mech_signs.py::s8`` (an int8 × int8 product converted to fp16, ``#ttg.nvidia_mma<{versionMajor = 2``)
and from the same text with the MMA layout's ``versionMajor`` set to 1 (and the dot's result renamed, so that its line
is longer than the 240 characters evidence quotes)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from irdiff.bundle import Bundle
from irdiff.diagnose.mechfacts import MechFacts, _dots, clear_memos
from irdiff.diagnose.rules.mma_lowering import rule_mma_lowering
from irdiff.diagnose.testing import make_context, make_facts

SUITE = str(Path(__file__).parent / "suites" / "mech_signs.py")


@pytest.fixture(scope="module")
def s8(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(SUITE, ["s8", "copy"], "sm80")


def test_an_unranked_mma_against_mma_sync_names_no_slower_side(s8: Bundle) -> None:
    clear_memos()
    v = s8.variants["s8"]
    ttir, ttgir = v.text("ttir"), v.text("ttgir")
    assert "versionMajor = 2" in ttgir
    (real,) = _dots(ttir, ttgir, "", "")
    # the edited text's dot result renamed (+36 characters): its line is then over the 240 characters quoted (the real
    # one is 240 under Triton 3.9)
    older_ttgir = re.sub(
        r"(%\w+)( = tt\.dot )",
        r"\1_renamed_so_the_line_is_over_240\2",
        ttgir.replace("versionMajor = 2", "versionMajor = 1"),
    )
    (v1,) = _dots(ttir, older_ttgir, "", "")
    assert len(v1.ttgir.text) > 240
    assert (real.lowering, v1.lowering) == ("mma_v2", "mma")
    sync = make_facts("sync", mech=MechFacts(dots=[real]), arch=80, target="sm80")
    older = make_facts("older", mech=MechFacts(dots=[v1]), arch=80, target="sm80")
    seen = []
    for x, y in ((sync, older), (older, sync)):
        (f,) = rule_mma_lowering(make_context(x, y))
        assert f.predicts is None and f.severity == "major"
        lw = {"sync": "mma_v2", "older": "mma"}
        assert f.title == (
            f"`prod` dot 32x32x64 (f16 × f16) lowered to {lw[x.name]} in `{x.name}` vs {lw[y.name]} in `{y.name}`"
        )
        words = {"sync": "`mma.sync` (Ampere-style tensor-core MMA, synchronous, per warp)", "older": "`mma`"}
        assert f.explanation.startswith(
            f"`prod` dot 32x32x64 (f16 × f16) is lowered to {words[x.name]} in `{x.name}` and to {words[y.name]} in "
            f"`{y.name}`. irdiff ranks the two alike"
        )
        assert f.explanation == (
            f"`prod` dot 32x32x64 (f16 × f16) is lowered to {words[x.name]} in `{x.name}` and to {words[y.name]} in "
            f"`{y.name}`. irdiff ranks the two alike (a layout kind it has no words for counts as `mma.sync`), so "
            "neither side is called the slower; compare their PTX and timings."
        )
        assert (f.id, f.stage) == ("mma.lowering", "ttgir")
        assert [e.variant for e in f.evidence] == [x.name, y.name]
        assert all(e.stage == "ttgir" and " = tt.dot " in e.text for e in f.evidence)
        # the quoted dot line is cut at 240 characters (`older`'s loses its last 3)
        assert [e.text for e in f.evidence] == [d.mech.dots[0].ttgir.text[:240] for d in (x, y)]
        seen.append((f.predicts, f.severity))
    assert seen[0] == seen[1]
    # a ranked pair keeps its direction: the unranked kind (as mma.sync) above FMA, whatever the order
    fma = make_facts("fma", mech=MechFacts(dots=[_fma(real)]), arch=80, target="sm80")
    for x, y in ((fma, older), (older, fma)):
        (g,) = rule_mma_lowering(make_context(x, y))
        assert g.predicts == "fma" and g.severity == "critical"


def _fma(d):  # type: ignore[no-untyped-def]
    import dataclasses

    return dataclasses.replace(d, lowering="fma")
