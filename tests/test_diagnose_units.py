"""The chain machinery of ``irdiff/diagnose/__init__.py`` on its own inputs: linking findings to their causes
(``CAUSES``/``DIRECTION`` of the rule registry, the size rule), stage-0 findings without effect, the timing record as
the runner writes it (verdicts in either orientation, rows without verdicts), wrong results, and the causal paths,
effects and ``--explain`` text of a chain. Findings are the data model's own objects with ids and links of real rules;
``tests/test_diagnose.py`` runs the same code through ``diagnose`` on compiled matmuls. Cheap: no compile."""

from __future__ import annotations

from typing import Any

import pytest

from irdiff.bundle import Bundle
from irdiff.diagnose import (
    Diagnosis,
    Evidence,
    Finding,
    _direction,
    _link,
    _mark_without_effect,
    _result_finding,
    _timing_rows,
    causal_paths,
    effects_of,
    explain,
)


def F(fid: str, predicts: str | None = None, causes: list[str] | None = None, **kw: Any) -> Finding:
    return Finding(
        id=fid,
        severity=kw.pop("severity", "major"),
        title=kw.pop("title", fid),
        explanation=kw.pop("explanation", f"{fid} explained."),
        evidence=kw.pop("evidence", [Evidence(predicts or "a", "ptx", 3, f"{fid} line")]),
        causes=list(causes or []),
        predicts=predicts,
        **kw,
    )


# ------------------------------------------------------------------------------------------------ _link


def test_link_most_direct_present_cause_first() -> None:
    """``resources.registers`` lists ``mma.lowering`` before ``precision.fp64`` in CAUSES; both present and
    independent: both kept, most direct first; ``precision.dot-input`` is a cause of ``mma.lowering`` (an ancestor
    of a kept cause): not linked again; an absent cause is never linked."""
    low, fp64, reg = F("mma.lowering", "a"), F("precision.fp64", "a"), F("resources.registers", "a")
    inp = F("precision.dot-input", "a")
    _link([reg, fp64, inp, low])
    assert reg.causes == ["mma.lowering", "precision.fp64"] and low.causes == ["precision.dot-input"]
    only = F("resources.registers", "a")
    _link([only])
    assert only.causes == []


def test_link_keeps_the_rules_own_causes_first() -> None:
    """``resources.spills`` ← ``resources.registers`` ← ``mma.lowering``: spills links registers only (lowering is
    already its ancestor), after a cause the rule gave itself."""
    low, reg = F("mma.lowering", "a"), F("resources.registers", "a")
    sp = F("resources.spills", "a", causes=["ptx.memory-ops"])
    _link([low, reg, sp])
    assert reg.causes == ["mma.lowering"]
    assert sp.causes == ["ptx.memory-ops", "resources.registers"]


@pytest.mark.parametrize("swap", [False, True])
def test_link_direction(swap: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """DIRECTION +1 (``mma.lowering`` → ``sass.instructions``): linked only when both predict the same variant;
    −1 (``pipeline.buffers`` → ``resources.registers``: more buffers in one variant, fewer registers there): only
    when they predict opposite variants. A finding without a predicted variant links either way. (No −1 pair is in
    CAUSES today: the registry's CAUSES is extended here to reach that branch.)"""
    from irdiff.diagnose.rules import CAUSES

    x, y = ("b", "a") if swap else ("a", "b")
    same, other = F("mma.lowering", x), F("sass.instructions", x)
    _link([same, other])
    assert other.causes == ["mma.lowering"]
    against = F("sass.instructions", y)
    _link([F("mma.lowering", x), against])
    assert against.causes == []
    free = F("sass.instructions", None)
    _link([F("mma.lowering", x), free])
    assert free.causes == ["mma.lowering"]
    monkeypatch.setitem(CAUSES, "resources.registers", [*CAUSES["resources.registers"], "pipeline.buffers"])
    reg = F("resources.registers", y)
    _link([F("pipeline.buffers", x), reg])
    assert reg.causes == ["pipeline.buffers"]
    reg2 = F("resources.registers", x)
    _link([F("pipeline.buffers", x), reg2])
    assert reg2.causes == []


def test_link_too_small_to_explain() -> None:
    """A cause whose instruction count is under a quarter of the finding's is skipped (at a quarter it links)."""
    small, big = F("precision.fp64", "a", instructions=2), F("sass.instructions", "a", instructions=200)
    _link([small, big])
    assert big.causes == []
    q, total = F("precision.fp64", "a", instructions=50), F("sass.instructions", "a", instructions=200)
    _link([q, total])
    assert total.causes == ["precision.fp64"]
    unknown = F("sass.instructions", "a", instructions=200)
    _link([F("precision.fp64", "a"), unknown])  # no size on the cause: no size rule
    assert unknown.causes == ["precision.fp64"]


# ------------------------------------------------------------------------------------------------ without effect


def test_stage0_finding_without_effect_becomes_information() -> None:
    lost = F("spec.divisibility-lost", "a", severity="major", remedy="tl.multiple_of")
    _mark_without_effect([lost, F("resources.registers", "a")])
    assert (lost.severity, lost.predicts, lost.remedy) == ("info", None, None)
    assert lost.explanation.startswith("spec.divisibility-lost explained. Nothing downstream differs because of it")
    kept = F("spec.divisibility-lost", "a")
    _mark_without_effect([kept, F("coalesce.contiguity", "a")])  # an effect of its kind is present
    assert (kept.severity, kept.predicts) == ("major", "a")
    cause = F("spec.divisibility-lost", "a")
    _mark_without_effect([cause, F("resources.registers", "a", causes=["spec.divisibility-lost"])])  # linked
    assert cause.severity == "major"
    other = F("resources.registers", "a")
    _mark_without_effect([other])  # not a stage-0 finding with declared effects
    assert other.severity == "major"


# ------------------------------------------------------------------------------------------------ timing record


def _verdict(a: str, b: str, ratio: float, word: str, ci: list[float], **kw: Any) -> dict[str, Any]:
    return {"a": a, "b": b, "ratio": ratio, "verdict": word, "ci": ci, "min_effect": 0.02, "sentence": "s", **kw}


def test_timing_rows_from_verdicts_in_both_orientations() -> None:
    timing = {
        "verdicts": [
            _verdict("x", "y", 2.0, "slower", [1.8, 2.5], shape={"M": 1}),
            _verdict("y", "x", 0.5, "faster", [0.4, 0.625], shape={"M": 2}),
            _verdict("x", "z", 3.0, "slower", [2.0, 4.0]),  # another pair
            {"a": "x", "b": "y", "ratio": 0},  # no usable ratio
            "junk",
        ],
        "rows": [{"variants": {"x": {"median_ms": 1.0}, "y": {"median_ms": 4.0}}}],
    }
    rows = _timing_rows(timing, "x", "y")
    assert [(s, r) for s, r, _ in rows] == [({"M": 1}, 2.0), ({"M": 2}, 2.0)]
    assert rows[0][2]["verdict"] == "slower"
    flipped = rows[1][2]
    assert flipped["verdict"] == "slower" and flipped["ci"] == [1 / 0.625, 1 / 0.4] and flipped["min_effect"] == 0.02
    assert flipped["sentence"] == "s"
    assert _timing_rows(timing, "y", "x")[0][1] == 0.5 and _timing_rows(timing, "y", "x")[0][2]["verdict"] == "faster"
    same = _timing_rows({"verdicts": [_verdict("y", "x", 1.0, "no significant difference", [])]}, "x", "y")
    assert same[0][2]["verdict"] == "no significant difference" and same[0][2]["ci"] is None


def test_timing_rows_without_verdicts_use_medians() -> None:
    timing = {
        "rows": [
            {"shape": {"N": 4}, "variants": {"x": {"median_ms": 3.0}, "y": {"median_ms": 1.5}}},
            {"variants": {"x": {"median_ms": 0}, "y": {"median_ms": 1.0}}},  # not measured
            {"variants": {"x": {"median_ms": 2.0}}},  # one side only
            {"variants": {"x": "2.0", "y": {"median_ms": 1.0}}},
            "junk",
        ]
    }
    assert _timing_rows(timing, "x", "y") == [({"N": 4}, 2.0, {"a_ms": 3.0, "b_ms": 1.5})]
    assert _timing_rows(None, "x", "y") == [] and _timing_rows({"verdicts": None, "rows": None}, "x", "y") == []


def test_direction_by_the_runners_verdict_else_five_percent() -> None:
    assert _direction("x", "y", 0.9, {"verdict": "slower"}) == "x"  # the verdict wins over the ratio
    assert _direction("x", "y", 1.5, {"verdict": "faster"}) == "y"
    assert _direction("x", "y", 1.5, {"verdict": "no significant difference"}) is None
    assert _direction("x", "y", 1.06, {}) == "x" and _direction("x", "y", 1.05, {}) is None
    assert _direction("x", "y", 1 / 1.06, {}) == "y" and _direction("x", "y", 1 / 1.05, {}) is None


# ------------------------------------------------------------------------------------------------ wrong results


def _bundle(runs: dict[str, Any]) -> Bundle:
    return Bundle(suite="s", target="sm90", triton_version="3.9.0", ptxas_version="", command=[], runs=runs)


def test_wrong_result_finding() -> None:
    runs = {
        "timing": {
            "findings": [
                {"kind": "agreement", "variant": "x,y", "message": "x and y differ\nmax abs diff 3"},
                {"kind": "correctness", "variant": "y", "message": "y: max abs error 0.5 vs reference\ndetail"},
                {"kind": "note", "variant": "x", "message": "ignored"},
            ]
        },
        "interpret": {"findings": [{"kind": "error", "variant": "other", "message": "not this pair"}]},
    }
    f = _result_finding(_bundle(runs), "x", "y")
    assert f is not None and (f.id, f.severity, f.stage) == ("time.wrong-result", "critical", "time")
    assert f.title == "`y` computes a wrong result"
    assert f.explanation.startswith("y: max abs error 0.5 vs reference. Timing a wrong or failed kernel")
    assert [(e.variant, e.text) for e in f.evidence] == [
        ("x,y", "x and y differ"),
        ("y", "y: max abs error 0.5 vs reference"),
    ]
    # a runner finding without a message (found by this test: it raised IndexError)
    failed = _result_finding(_bundle({"interpret": {"findings": [{"kind": "error", "variant": "x"}]}}), "x", "y")
    assert failed is not None and failed.title == "`x` failed to run" and failed.explanation == "Fix the result first."
    assert [(e.variant, e.text) for e in failed.evidence] == [("x", "error")]
    agree = _result_finding(_bundle({"timing": {"findings": [{"kind": "agreement", "variant": "a,b"}]}}), "x", "y")
    assert agree is not None and agree.title == "`x` and `y` compute different results"
    assert _result_finding(_bundle({"timing": {"findings": [{"kind": "error", "variant": "z"}]}}), "x", "y") is None
    assert _result_finding(_bundle({}), "x", "y") is None


# ------------------------------------------------------------------------------------------------ paths, explain


def _chain() -> Diagnosis:
    """spec → lowering → registers → spills, and spec → pipeline → registers (two paths into registers)."""
    spec = F("spec.constexpr-changed", "a", evidence=[Evidence("a", "spec", None, "BLOCK 64 vs 128")])
    low = F("mma.lowering", "a", ["spec.constexpr-changed"], evidence=[Evidence("a", "ttgir", 40, "tt.dot")])
    pipe = F("pipeline.buffers", "b", ["spec.constexpr-changed"], evidence=[Evidence("b", "ttgir", 12, "local_alloc")])
    reg = F("resources.registers", "a", ["mma.lowering", "pipeline.buffers"], remedy="fewer warps")
    sp = F("resources.spills", "a", ["resources.registers"], evidence=[Evidence("a", "ptxas", None, "8 bytes spill")])
    alone = F("compiler.messages", None)
    return Diagnosis("a", "b", [spec, low, pipe, reg, sp, alone], unexplained=["compiler.messages"])


def test_causal_paths_and_effects() -> None:
    d = _chain()
    paths, more = causal_paths(d, "resources.registers")
    assert more == 0 and paths == [
        ["spec.constexpr-changed", "mma.lowering", "resources.registers", "resources.spills"],
        ["spec.constexpr-changed", "pipeline.buffers", "resources.registers", "resources.spills"],
    ]
    assert causal_paths(d, "compiler.messages") == ([["compiler.messages"]], 0)
    assert causal_paths(d, "resources.registers", limit=1) == (paths[:1], 1)
    assert effects_of(d, "spec.constexpr-changed") == [
        "mma.lowering",
        "pipeline.buffers",
        "resources.registers",
        "resources.spills",
    ]
    assert effects_of(d, "resources.spills") == [] and effects_of(d, "mma.lowering") == [
        "resources.registers",
        "resources.spills",
    ]


def test_explain_text() -> None:
    d = _chain()
    text = explain(d, "resources.registers")
    lines = text.splitlines()
    assert lines[0] == "resources.registers [major] resources.registers"
    assert lines[2].startswith("causal paths (2) through resources.registers")
    assert lines[3] == "  spec.constexpr-changed → mma.lowering → resources.registers → resources.spills"
    assert "effects linked to resources.registers (1): resources.spills" in lines
    assert "remedy (not tested by irdiff): fewer warps" in lines
    # evidence grouped by stage in pipeline order (spec, ttgir, ptx, ptxas), this finding's marked with *
    stages = [ln[3:] for ln in lines if ln.startswith("── ")]
    assert stages == ["spec", "ttgir", "ptx", "ptxas"]
    assert " *[resources.registers] a:3  resources.registers line" in lines
    assert "  [mma.lowering] a:40  tt.dot" in lines and "  [resources.spills] a  8 bytes spill" in lines
    one = explain(d, "compiler.messages")
    assert "causal path" not in one and "unexplained: its chain reaches no root" in one
    assert explain(d, "resources.sp").startswith("resources.spills [major]")  # a unique prefix
    with pytest.raises(KeyError, match="no finding 'nope' \\(findings: spec.constexpr-changed, mma.lowering"):
        explain(d, "nope")


# ------------------------------------------------------------------------------------------------ time.measured


def _facts(name: str, gmem: int, ctas: int) -> Any:
    from irdiff.diagnose.facts import Occupancy
    from irdiff.diagnose.testing import make_facts

    occ = Occupancy(ctas_per_sm=ctas, limiter="registers", limits={"registers": ctas}, warps_per_sm=4 * ctas, source="")
    counts = {"ptx": {"ld.global.v4.b32": gmem, "st.global.b32": 1, "ld.shared.b32": 99}}
    return make_facts(name, counts=counts, occupancy=occ)


def _timed(word: str, ratio: float, shape: dict[str, int] | None = None) -> Bundle:
    ci = [ratio * 0.9, ratio * 1.1]
    return _bundle({"timing": {"verdicts": [_verdict("x", "y", ratio, word, ci, shape=shape or {"M": 64})]}})


@pytest.mark.parametrize("swap", [False, True])
def test_time_finding_agrees_with_the_static_chain(swap: bool) -> None:
    """``x`` has 4× the global memory instructions (8 vs 2 PTX ``ld.global``/``st.global``; shared loads do not
    count) and half the CTAs per SM; it is measured 2.5× slower and a critical finding predicts it: agreement,
    critical, linked to that finding and the leaf it explains; the indicators are quoted as support. Named the
    other way round (the runner's verdict flipped), the same facts read the same."""
    from irdiff.diagnose import _time_finding

    fx, fy = _facts("x", 7, 2), _facts("y", 1, 4)
    crit = F("mma.lowering", "x", severity="critical")
    eff = F("resources.registers", "x", ["mma.lowering"])
    if swap:
        f = _time_finding(_timed("slower", 2.5), "y", "x", fy, fx, [crit, eff])
        occ = "4 vs 2 CTAs per SM (`y` vs `x`)"
    else:
        f = _time_finding(_timed("slower", 2.5), "x", "y", fx, fy, [crit, eff])
        occ = "2 vs 4 CTAs per SM (`x` vs `y`)"
    assert f is not None and (f.id, f.severity, f.predicts, f.stage) == ("time.measured", "critical", "x", "time")
    assert f.title == "`x` is measured 2.5× slower than `y` at M=64"
    assert f"the static chain predicts this direction (4.0× the global memory instructions in `x`; {occ})." in (
        f.explanation
    )
    assert "Contradicting" not in f.explanation and "Disagreement" not in f.explanation
    assert f.causes == ["mma.lowering", "resources.registers"]
    assert [e.text for e in f.evidence] == ["M=64: s"]


def test_time_finding_disagreement_and_no_difference() -> None:
    from irdiff.diagnose import _time_finding

    fx, fy = _facts("x", 7, 2), _facts("y", 1, 4)
    crit = F("mma.lowering", "x", severity="critical")
    f = _time_finding(_timed("faster", 0.5), "x", "y", fx, fy, [crit])
    assert f is not None and f.severity == "critical" and f.predicts == "y"
    assert f.title == "Measured x/y time ratio 0.5× disagrees with the static chain"
    assert f.explanation.startswith("Disagreement: `y` is measured 2× slower than `x` at M=64, but the static chain")
    assert "The top static finding, mma.lowering (`mma.lowering`), predicts `x` slower" in f.explanation
    assert f.causes == []
    same = _time_finding(_timed("no significant difference", 1.01), "x", "y", fx, fy, [])
    assert same is not None and (same.severity, same.predicts) == ("info", None)
    assert same.title == "No significant time difference between `x` and `y` (ratio 1.01×)"
    heavy = _time_finding(_timed("no significant difference", 1.01), "x", "y", fx, fy, [crit])
    assert heavy is not None and heavy.severity == "major" and heavy.explanation.startswith("Disagreement: the static")
    assert _time_finding(_bundle({}), "x", "y", fx, fy, [crit]) is None


def test_indicators_need_both_sides_and_a_difference() -> None:
    """Static indicators of speed: the global memory instruction ratio only when both variants have global accesses
    and their counts differ (PTX ``ld.global``/``st.global``/``cp.async``; equal counts or a side without any say
    nothing); the first ``pipeline.load-not-pipelined`` finding, its title without a final period, predicting what it
    predicts; CTAs per SM when they differ, the side with fewer predicted slower. Facts without PTX counts have no
    global memory instructions (no indicator, no error)."""
    from irdiff.diagnose import _gmem, _indicators
    from irdiff.diagnose.testing import make_facts

    x, y = _facts("x", 3, 4), _facts("y", 3, 4)  # 4 global instructions each, same occupancy
    assert _indicators("x", "y", x, y, []) == []
    none = make_facts("n", counts={"ptx": {"ld.shared.b32": 8}})
    assert _gmem(none) == 0 and _gmem(make_facts("bare")) == 0
    assert _indicators("n", "y", none, y, []) == [] == _indicators("y", "n", y, none, [])
    assert _indicators("b", "y", make_facts("b"), y, []) == []
    # cp.async copies count as global memory instructions (async global-to-shared loads)
    cp = make_facts("cp", counts={"ptx": {"cp.async 16B": 4, "ld.global.b32": 2, "cp.async.commit_group": 1}})
    assert _gmem(cp) == 6
    assert _indicators("cp", "y", cp, _facts("y", 1, 4), []) == [("3.0× the global memory instructions in `cp`", "cp")]
    assert _indicators("y", "cp", _facts("y", 1, 4), cp, []) == [("3.0× the global memory instructions in `cp`", "cp")]
    late = F("pipeline.load-not-pipelined", "x", title="`b_ptrs` not pipelined in `x`.")
    other = F("pipeline.load-not-pipelined", "y", title="`a_ptrs` not pipelined in `y`")
    assert _indicators("x", "y", x, y, [F("mma.lowering", "y"), late, other]) == [
        ("`b_ptrs` not pipelined in `x`", "x")
    ]
    fewer = _facts("f", 3, 2)
    assert _indicators("f", "y", fewer, y, []) == [("2 vs 4 CTAs per SM (`f` vs `y`)", "f")]
    assert _indicators("y", "f", y, fewer, []) == [("4 vs 2 CTAs per SM (`y` vs `f`)", "f")]


def test_shape_text() -> None:
    """A timed shape as ``M=64,N=128`` (the runner's key order), an empty one as the default shape; the measured
    time finding names it."""
    from irdiff.diagnose import _shape_text, _time_finding

    assert _shape_text({"M": 64, "N": 128}) == "M=64,N=128"
    assert _shape_text({}) == "the default shape"
    fx, fy = _facts("x", 7, 2), _facts("y", 1, 4)
    crit = [F("mma.lowering", "x", severity="critical")]  # the static chain agrees: the title is the measurement
    two = _time_finding(_timed("slower", 2.5, {"M": 64, "N": 128}), "x", "y", fx, fy, crit)
    assert two is not None and two.title == "`x` is measured 2.5× slower than `y` at M=64,N=128"
    dflt = _bundle({"timing": {"verdicts": [_verdict("x", "y", 2.5, "slower", [2.2, 2.8], shape={})]}})
    f = _time_finding(dflt, "x", "y", fx, fy, crit)
    assert f is not None and f.title == "`x` is measured 2.5× slower than `y` at the default shape"
    assert [e.text for e in f.evidence] == ["the default shape: s"]


def test_lazy_names_resolve_on_first_use() -> None:
    """The package re-exports names of its submodules on first use (PEP 562 ``__getattr__``): each is the defining
    module's own object; an unknown name raises AttributeError naming the module and the name."""
    import irdiff.diagnose as d
    from irdiff.diagnose import counts, facts, roots, rules

    assert d.count_ops is counts.count_ops and d.KEY_COUNTS is counts.KEY_COUNTS
    assert d.extract_facts is facts.extract_facts and d.VariantFacts is facts.VariantFacts
    assert d.ROOT_IDS is roots.ROOT_IDS and d.RULE_IDS is rules.RULE_IDS
    with pytest.raises(AttributeError, match=r"^module 'irdiff\.diagnose' has no attribute 'no_such_name'$"):
        d.no_such_name  # noqa: B018
    assert not hasattr(d, "count_op")
