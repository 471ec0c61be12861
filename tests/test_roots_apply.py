"""The root engine's linking pass (``apply_roots``), its trace writer (``_add_trace``), the register story
(``register_story``) and the first-diverging-pass root (``_pass_finding``), called directly on the findings the rules
really produce for small compiled pairs, in both orders of the variants.

The rules' findings are captured once per pair at the point where :func:`irdiff.diagnose.diagnose` hands them to
``apply_roots`` (the real rules on the real facts; ``apply_roots`` itself is not run by the capture) and each test
gets a deep copy, so what is asserted here is what the engine makes of them: which finding becomes the root, which
finding is linked to which, the titles naming the edit at its lines, the trace naming the instructions of each
variant, the register evidence with the numbers the kernels force (tile ÷ threads, one 64-bit address per vector).

Kernels: ``tests/suites/root_cases.py`` (``streaming``: ``evict_first`` on one load; ``division``: ``/`` vs
``tl.div_rn``; ``splitk``: ``sem="relaxed"``; ``hinted``: ``tl.multiple_of``/``tl.max_contiguous``; ``warps``:
``num_warps`` 8 vs 4 with ``--passes``), ``tests/suites/kinds/kinds.py::redaxis`` (``axis=0`` vs ``axis=1``),
``tests/suites/annot_scalars.py`` (``n: tl.int64``) and ``tests/suites/diag_loop.py`` (a dot loop at 4 and 8 warps).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from irdiff.bundle import Bundle, VariantResult
from irdiff.diagnose import diagnose
from irdiff.diagnose import roots as R
from irdiff.diagnose.model import Evidence, Finding
from irdiff.diagnose.source import SourceChange, SourceDiff, diff_sources

SUITES = Path(__file__).parent / "suites"
CASES = str(SUITES / "root_cases.py")
MECH_ROOTS = str(SUITES / "mech_roots.py")
_CAPTURED: dict[tuple[Any, ...], tuple[list[Finding], SourceDiff]] = {}


@pytest.fixture(autouse=True)
def _fresh_memo() -> Iterator[None]:
    """``roots._instructions`` is memoized: a memo filled by another test must not answer for this one."""
    R._instructions.cache_clear()
    yield


def rule_findings(b: Bundle, a: str, o: str) -> tuple[list[Finding], SourceDiff]:
    """The rules' findings (linked through ``CAUSES`` and the settings) and the source diff that ``diagnose`` hands
    ``apply_roots`` for ``a`` against ``o``; a fresh deep copy on every call (``apply_roots`` edits findings)."""
    key = (b.directory, a, o)
    if key not in _CAPTURED:
        seen: list[tuple[list[Finding], SourceDiff]] = []

        def record(
            findings: list[Finding], *args: Any, sd: SourceDiff | None = None, **_: Any
        ) -> tuple[list[Finding], list]:
            assert sd is not None
            seen.append((copy.deepcopy(findings), sd))
            return findings, []

        with mock.patch.object(R, "apply_roots", record):
            diagnose(b, a, o)
        (_CAPTURED[key],) = seen
    fs, sd = _CAPTURED[key]
    return copy.deepcopy(fs), sd


def run_roots(b: Bundle, a: str, o: str) -> tuple[dict[str, Finding], list[str], list[str]]:
    """``apply_roots`` on the rules' findings of ``a`` against ``o``: findings by id, their order, the unexplained."""
    fs, sd = rule_findings(b, a, o)
    out, unexplained = R.apply_roots(fs, a, o, b.variants[a], b.variants[o], sd=sd)
    return {f.id: f for f in out}, [f.id for f in out], unexplained


def line_of(v: VariantResult, needle: str) -> int:
    """1-based line of the first source line containing ``needle`` inside the variant's kernel function."""
    first, last = v.metadata["kernel_lines"]
    lines = v.text("python").splitlines()
    return next(i for i in range(first, last + 1) if needle in lines[i - 1])


def python_ev(f: Finding, variant: str) -> list[tuple[int | None, str]]:
    return [(e.line, e.text) for e in f.evidence if e.stage == "python" and e.variant == variant]


def _pair(order: tuple[str, str], b: Bundle) -> tuple[str, str, VariantResult, VariantResult]:
    a, o = order
    return a, o, b.variants[a], b.variants[o]


# ------------------------------------------------------------------------------------------------ claims


@pytest.mark.parametrize("order", [("evict", "keep"), ("keep", "evict")])
def test_cache_hint_rule_claims_the_keyword_and_roots_the_chain(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """``eviction_policy="evict_first"`` on one load: the cache-hint rule's evidence sits on that line, so it claims
    the keyword change (no ``source.*`` root); the TTIR attribute change on the same op is its restatement (caused by
    it, no more severe); the SASS count has no line evidence and links to the single root."""
    b = compile_suite(CASES + "::streaming", ["evict", "keep"], "sm80")
    a, o, va, vb = _pair(order, b)
    by, ids, unexplained = run_roots(b, a, o)
    assert ids == ["hint.cache", "ttir.attr-changed", "sass.instructions"] and unexplained == []
    le, lk = line_of(b.variants["evict"], 'eviction_policy="evict_first"'), line_of(b.variants["keep"], "y = tl.load")
    lines = {"evict": le, "keep": lk}
    rule = by["hint.cache"]
    # information in itself, raised to its worst effect's severity (the SASS count, minor): a root is at least as
    # severe as what follows from it
    assert rule.causes == [] and rule.severity == by["sass.instructions"].severity == "minor"
    # the claimed change at its lines, each variant's line once (the rule's title already names the keyword)
    assert rule.title.endswith(f"(line {lines[a]} of `{a}`, line {lines[o]} of `{o}`)")
    assert rule.title.count(f"line {lines[a]} of `{a}`") == 1
    for v in (a, o):
        assert [ln for ln, _ in python_ev(rule, v)] == [lines[v]]
    attr = by["ttir.attr-changed"]
    assert attr.causes == ["hint.cache"] and attr.severity == "info"  # capped to its cause's severity
    assert attr.title.startswith(f"TTIR `tt.load` from line {lines[a]} of `{a}` (line {lines[o]} of `{o}`)")
    # the policy on the side that sets it (Triton 3.9 spells the attribute `eviction_policy`, 3.6 `evictionPolicy`)
    if a == "evict":
        assert attr.title.endswith("eviction policy `evict_first`) in `evict`, nothing in `keep`")
    else:
        assert "attributes: nothing in `keep`, `" in attr.title and attr.title.endswith("`evict_first`) in `evict`")
    # its trace: the op at its lines in each variant, the whole-kernel PTX/SASS (one root), the hint in words
    assert " Downstream: TTIR at these lines: " in attr.explanation
    assert "PTX (whole kernel): " in attr.explanation and "SASS (whole kernel): " in attr.explanation
    assert "Cache hints: `evict` sets `evict_first`" in attr.explanation
    assert "`createpolicy` builds the L2 cache-policy operand" in attr.explanation
    # the whole-kernel evidence: the PTX/SASS instruction most often only in a variant, cited where it is
    ptx_ev = [e for e in attr.evidence if e.stage == "ptx"]
    assert ptx_ev and all(e.line and e.text.endswith(f"only in `{e.variant}`)") for e in ptx_ev)
    assert "evict" in {e.variant for e in ptx_ev}
    assert by["sass.instructions"].causes == ["hint.cache"]
    assert not any(i.startswith("source.") for i in ids)


@pytest.mark.parametrize("order", [("approx", "ieee"), ("ieee", "approx")])
def test_division_rule_title_is_prefixed_with_the_edit(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    b = compile_suite(CASES + "::division", ["approx", "ieee"], "sm80")
    a, o, va, vb = _pair(order, b)
    by, ids, unexplained = run_roots(b, a, o)
    assert ids[0] == "precision.division" and unexplained == [] and "source.op-changed" not in ids
    lines = {"approx": line_of(b.variants["approx"], "x / y"), "ieee": line_of(b.variants["ieee"], "tl.div_rn")}
    edit = {"approx": "`x / y`", "ieee": "`tl.div_rn(x, y)`"}
    f = by["precision.division"]
    assert f.title.startswith(
        f"{edit[a]} in `{a}` is {edit[o]} in `{o}` (line {lines[a]} of `{a}`, line {lines[o]} of `{o}`): fp32 division"
    )
    for v in (a, o):
        ((ln, text),) = python_ev(f, v)
        assert ln == lines[v] and text.startswith("source change: ") and edit[a] in text
    assert all(by[i].causes == ["precision.division"] for i in ids[1:])


@pytest.mark.parametrize("order", [("relaxed", "ordered"), ("ordered", "relaxed")])
def test_atomic_rule_claims_sem_and_the_attribute_change_follows(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    b = compile_suite(CASES + "::splitk", ["relaxed", "ordered"], "sm80")
    a, o, va, vb = _pair(order, b)
    by, ids, unexplained = run_roots(b, a, o)
    assert ids == ["atomic.ordering", "ttir.attr-changed"] and unexplained == []
    lines = {
        "relaxed": line_of(b.variants["relaxed"], 'sem="relaxed"'),
        "ordered": line_of(b.variants["ordered"], "atomic_add"),
    }
    rule, attr = by["atomic.ordering"], by["ttir.attr-changed"]
    assert rule.title.endswith(f"(line {lines[a]} of `{a}`, line {lines[o]} of `{o}`)")
    assert attr.causes == ["atomic.ordering"]
    # the attribute change is traced to the IR, so it weighs (minor → major), and no more than its cause
    assert attr.severity == rule.severity == "major"
    assert attr.title.startswith(f"TTIR `tt.atomic_rmw` from line {lines[a]} of `{a}`")
    assert "The atomic's memory ordering differs" in attr.explanation
    assert "Fences and barriers only in `ordered`: " in attr.explanation


@pytest.mark.parametrize("order", [("wide", "plain"), ("plain", "wide")])
def test_annotation_is_claimed_by_the_stage_0_finding_of_its_parameter(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    b = compile_suite(str(SUITES / "annot_scalars.py"), ["wide", "plain"], "sm80")
    a, o, va, vb = _pair(order, b)
    by, ids, unexplained = run_roots(b, a, o)
    assert ids == ["spec.type-changed", "ttir.i64-index-math"] and unexplained == []
    spec = by["spec.type-changed"]
    assert spec.causes == [] and by["ttir.i64-index-math"].causes == ["spec.type-changed"]
    # the annotation's line in both variants, once each, as the claimed change
    lw = line_of(b.variants["wide"], "n: tl.int64")
    ev = {v: python_ev(spec, v) for v in (a, o)}
    assert [ln for ln, _ in ev["wide"]] == [lw] and len(ev["plain"]) == 1
    assert all(t.startswith("source change: `n` is annotated") for x in ev.values() for _, t in x)


# ------------------------------------------------------------------------------------------------ source roots


@pytest.mark.parametrize("order", [("cols", "rows"), ("rows", "cols")])
def test_unclaimed_keyword_is_the_single_root_with_its_trace(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """``axis=0`` vs ``axis=1``: only counts differ (they never claim), so the change is a ``source.kwarg-changed``
    root; the counts without a cause link to it; its trace names both variants' instructions."""
    b = compile_suite(str(SUITES / "kinds" / "kinds.py") + "::redaxis", ["cols", "rows"], "sm80")
    a, o, va, vb = _pair(order, b)
    by, ids, unexplained = run_roots(b, a, o)
    assert ids[0] == "source.kwarg-changed" and unexplained == []
    root = by["source.kwarg-changed"]
    assert root.severity == "major"  # minor, and the whole kernel differs
    assert by["ptx.memory-ops"].causes == ["source.kwarg-changed"]
    assert by["resources.shared"].causes == ["source.kwarg-changed"]
    assert by["sass.instructions"].causes == ["ptx.memory-ops"]
    x = root.explanation
    assert " Downstream: TTGIR at these lines: " in x
    assert "PTX (whole kernel): " in x and f"only in `{a}`, " in x and x.count(f"only in `{o}`") >= 1
    assert "The reduction runs along another axis of the same tile" in x
    assert "No other finding follows from it" not in x and R.UNEXPLAINED_NOTE not in x
    # the shuffles are in `rows` (axis=1: along the lanes of a warp)
    ptx = x.split("PTX (whole kernel): ")[1].split("SASS (whole kernel)")[0]
    rows_part = ptx.split("only in `rows`")[0] if a == "rows" else ptx.split("only in `cols`, ")[1]
    assert "shfl.sync.bfly" in rows_part
    cites = {(e.variant, e.stage) for e in root.evidence if e.stage in ("ptx", "sass")}
    assert cites == {(a, "ptx"), (o, "ptx"), (a, "sass"), (o, "sass")}


def test_source_root_without_followers_is_information(compile_suite) -> None:  # type: ignore[no-untyped-def]
    """The same keyword change with no rule finding at all: the root explains nothing and says so."""
    b = compile_suite(str(SUITES / "kinds" / "kinds.py") + "::redaxis", ["cols", "rows"], "sm80")
    _, sd = rule_findings(b, "cols", "rows")
    out, unexplained = R.apply_roots([], "cols", "rows", b.variants["cols"], b.variants["rows"], sd=sd)
    (root,) = out
    assert root.id == "source.kwarg-changed" and root.severity == "info" and unexplained == []
    assert root.explanation.endswith(" No other finding follows from it.")
    assert root.explanation.startswith("What changed in the source (compared as Python syntax trees): ")


@pytest.mark.parametrize("order", [("bare", "hint"), ("hint", "bare")])
def test_hint_attributes_follow_the_hint_rule_and_take_their_effects_first(
    compile_suite, order: tuple[str, str]
) -> None:  # type: ignore[no-untyped-def]
    """``tl.multiple_of``/``tl.max_contiguous``: the AxisInfo hint rule claims both hint calls (its evidence is on the
    hinted value's line); the ``tt.divisibility``/``tt.contiguity`` attributes are caused by it; a finding whose
    evidence uses the hinted value links to the attribute change before any other root."""
    b = compile_suite(CASES + "::hinted", ["bare", "hint"], "sm80")
    a, o, va, vb = _pair(order, b)
    by, ids, unexplained = run_roots(b, a, o)
    assert ids[:2] == ["hint.axis-info", "ttir.attr-changed"] and unexplained == []
    assert not any(i.startswith("source.") for i in ids)
    rule, attr = by["hint.axis-info"], by["ttir.attr-changed"]
    lines = {"bare": line_of(b.variants["bare"], "offs_m = "), "hint": line_of(b.variants["hint"], "offs_m = ")}
    assert rule.causes == [] and rule.title.endswith(f"(line {lines[a]} of `{a}`, line {lines[o]} of `{o}`)")
    assert attr.causes == ["hint.axis-info"] and attr.title.startswith(f"TTIR `arith.remsi` from line {lines[a]} of")
    assert "`tl.multiple_of` attaches `tt.divisibility`" in attr.explanation
    # the wait depth follows the load the pipeliner left out (too narrow for cp.async: contiguity -> vector width),
    # a chain that ends at the hint rule
    chain, fid = [], "pipeline.wait-depth"
    while fid != "hint.axis-info" and len(chain) < 6:
        chain.append(fid)
        assert len(by[fid].causes) == 1, (fid, by[fid].causes)
        fid = by[fid].causes[0]
    assert chain == [
        "pipeline.wait-depth",
        "pipeline.load-not-pipelined",
        "coalesce.vector-width",
        "coalesce.contiguity",
    ]
    # both claimed hint calls are named once each as source changes, at the hinted line of each variant
    for v in (a, o):
        ev = python_ev(rule, v)
        assert {ln for ln, _ in ev} == {lines[v]}


# ------------------------------------------------------------------------------------------------ first diverging pass


@pytest.mark.parametrize("order", [("w8", "w4"), ("w4", "w8")])
def test_first_diverging_pass_is_linked_to_the_option_root(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """``num_warps`` 8 vs 4, TTIR equal: the first pass whose output differs is ``ConvertTritonToTritonGPU`` (it
    assigns ``warpsPerCTA``); its hunk's removed lines cite the inspected variant, the added lines the other."""
    b = compile_suite(CASES + "::warps", ["w8", "w4"], "sm90", passes=True)
    a, o, va, vb = _pair(order, b)
    by, ids, unexplained = run_roots(b, a, o)
    # launch options alone: one root (options.changed), no config.changed restating it
    assert ids[:2] == ["options.changed", "pass.first-diverging"] and unexplained == []
    assert "config.changed" not in ids
    p = by["pass.first-diverging"]
    assert (p.severity, p.stage, p.causes) == ("info", "ttgir", ["options.changed"])
    assert p.title == "First diverging pass: `ConvertTritonToTritonGPU`"
    assert p.explanation == (
        "The per-pass snapshots are equal up to `ConvertTritonToTritonGPU`, whose output differs first. Its output "
        "hunk is in the evidence."
    )
    warps = {"w8": 8, "w4": 4}
    minus = [e for e in p.evidence if e.text.startswith("-")]
    plus = [e for e in p.evidence if e.text.startswith("+")]
    assert 0 < len(minus) <= 7 and 0 < len(plus) <= 7 and len(minus) + len(plus) == len(p.evidence)
    assert {e.variant for e in minus} == {a} and {e.variant for e in plus} == {o}
    assert all(e.stage == "passes" and e.line is None for e in p.evidence)
    assert any(f'"ttg.num-warps" = {warps[a]}' in e.text for e in minus)
    assert any(f'"ttg.num-warps" = {warps[o]}' in e.text for e in plus)
    cfg = by["options.changed"]
    assert cfg.title.endswith("; first diverging pass: `ConvertTritonToTritonGPU`")
    # a parent that names the pass already is not named twice; without a parent the pass root stands alone
    again = R._pass_finding(a, o, va, vb, [cfg])
    assert again is not None and again.causes == ["options.changed"] and cfg.title.count("first diverging pass") == 1
    alone = R._pass_finding(a, o, va, vb, [Finding("options.changed", "major", "t", "", [], causes=["x"])])
    assert alone is not None and alone.causes == []
    # no per-pass snapshots: no pass root
    s = compile_suite(CASES + "::streaming", ["evict", "keep"], "sm80")
    assert R._pass_finding("evict", "keep", s.variants["evict"], s.variants["keep"], []) is None


@pytest.mark.parametrize("swap", [False, True])
def test_target_change_gets_a_settings_root_and_the_passes_only_one_target_runs(compile_suite, swap: bool) -> None:  # type: ignore[no-untyped-def]
    """The same kernel for sm80 and sm90: no source change, the engine adds ``settings.changed`` (the rules' own
    settings findings left out) and links the first diverging pass to it; the TMA lowering pass runs on sm90 only."""
    from irdiff.pipeline import load_pair

    b80 = compile_suite(CASES + "::warps", ["w4"], "sm80", passes=True)
    b90 = compile_suite(CASES + "::warps", ["w4"], "sm90", passes=True)
    bundle, x80, x90 = load_pair(Path(b80.directory) / "w4", Path(b90.directory) / "w4")
    a, o = (x90, x80) if swap else (x80, x90)
    va, vb = bundle.variants[a], bundle.variants[o]
    out, unexplained = R.apply_roots([], a, o, va, vb, sd=SourceDiff())
    assert [f.id for f in out] == ["settings.changed", "pass.first-diverging"] and unexplained == []
    s, p = out
    tgt = {x80: "sm80", x90: "sm90"}
    assert s.title.startswith(f"Settings differ: target {tgt[a]} in `{a}` vs {tgt[o]} in `{o}`")
    assert s.title.endswith("; first diverging pass: `ConvertTritonToTritonGPU`")
    assert s.severity == "major" and p.causes == ["settings.changed"]
    # the settings root's trace: whole-kernel SASS of each side (the only root), cited at its lines
    assert " Downstream: " in s.explanation and "SASS (whole kernel): " in s.explanation
    assert {e.variant for e in s.evidence if e.stage == "sass"} == {a, o}
    only = p.explanation.split(" Passes only ")[1]
    in_a, in_o = only.split(f"; only `{o}`: ")
    assert in_a.startswith(f"`{a}` runs: ")
    tma = "`TritonNvidiaGPUTMALoweringPass`"
    assert (tma in in_o and tma not in in_a) if tgt[o] == "sm90" else (tma in in_a and tma not in in_o)


# ------------------------------------------------------------------------------------------------ registers


@pytest.mark.parametrize("order", [("dot3", "dot3w8"), ("dot3w8", "dot3")])
def test_register_story_of_a_dot_loop_at_4_and_8_warps(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """A 64×64 fp32 accumulator over 128 threads is 32 values per thread, over 256 threads 16: the 4-warp kernel needs
    more registers, and the evidence names the accumulator, the addresses (twice the vectors per thread) and the
    pipelined copies; the causes are the option root, the memory ops and the MMA layout, most direct first."""
    b = compile_suite(str(SUITES / "diag_loop.py"), ["dot3", "dot3w8"], "sm86")
    a, o, va, vb = _pair(order, b)
    assert b.variants["dot3"].resources.registers > b.variants["dot3w8"].resources.registers  # type: ignore[operator]
    by, ids, unexplained = run_roots(b, a, o)
    reg = by["resources.registers"]
    assert reg.causes == ["options.changed", "ptx.memory-ops", "layout.mma"]
    acc = {"dot3": 32, "dot3w8": 16}
    addr = {v: R._address_regs(b.variants[v]) for v in acc}
    cp = {v: R._count(b.variants[v], "ptx", "cp.async") for v in acc}
    assert addr["dot3"] == 2 * addr["dot3w8"] and cp["dot3"] > cp["dot3w8"]
    assert (
        f" Evidence for the difference: the dot accumulator holds {acc[a]} fp32 values per thread in `{a}` and "
        f"{acc[o]} in `{o}` (tile ÷ threads); global loads/stores need {addr[a]} address registers per thread in "
        f"`{a}` and {addr[o]} in `{o}` (one 64-bit pointer per vector: elements per thread from the blocked layout ÷ "
        f"vector width × 2); {cp[a]} vs {cp[o]} `cp.async` in PTX: more loads in flight keep their addresses live; "
        "another MMA layout changes the fragment sizes per thread." in reg.explanation
    )
    assert "Occupancy does not change" not in reg.explanation  # it does: resources.occupancy is a finding
    assert reg.severity == "info"  # as the rule left it


def _regs(b: Bundle, a: str, o: str, *others: Finding, severity: str = "minor") -> Finding:
    f = Finding("resources.registers", severity, "Registers", "R.", [], causes=["stale"], stage="resources")  # type: ignore[arg-type]
    R.register_story(f, a, o, b.variants[a], b.variants[o], [f, *others])
    return f


@pytest.mark.parametrize("order", [("approx", "ieee"), ("ieee", "approx")])
def test_register_story_without_evidence_says_not_explained(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """``/`` vs ``tl.div_rn``: no dot, the same loads and stores, no async copies: nothing the story looks at differs,
    so it says so and keeps no cause; occupancy is not a finding, so the difference costs nothing (info)."""
    b = compile_suite(CASES + "::division", ["approx", "ieee"], "sm80")
    a, o = order
    ra, rb = b.variants[a].resources.registers, b.variants[o].resources.registers
    assert ra and rb and ra != rb and max(ra, rb) < 255
    f = _regs(b, a, o)
    assert f.causes == [] and f.severity == "info"
    assert f.explanation == (
        "R. Not explained: the accumulator and fragment sizes per thread, the lowering (FMA/MMA), the index width, "
        "vector width and pipeline depth are the same in both variants. Occupancy does not change (same CTAs per "
        "SM): the extra registers cost nothing at this launch."
    )
    # with spills the kernel is at the cap: the severity stays
    capped = _regs(b, a, o, Finding("resources.spills", "major", "", "", []))
    assert capped.severity == "minor" and capped.explanation.endswith(
        "Occupancy does not change (same CTAs per SM), but the kernel is at the 255-register cap, where ptxas trades "
        "registers for spills."
    )
    # occupancy changes: nothing said about it; an info finding stays info
    occ = _regs(b, a, o, Finding("resources.occupancy", "major", "", "", []), severity="major")
    assert occ.severity == "major" and "Occupancy" not in occ.explanation
    # equal registers: nothing to attribute
    s = compile_suite(CASES + "::streaming", ["evict", "keep"], "sm80")
    same = _regs(s, "evict", "keep")
    assert (same.explanation, same.causes, same.severity) == ("R.", ["stale"], "minor")


@pytest.mark.parametrize("order", [("approx", "ieee"), ("ieee", "approx")])
def test_register_story_mechanism_findings_fit_only_the_direction(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """``ieee`` has more registers (the IEEE division's longer sequence): a mechanism finding that predicts ``ieee``
    slower (or nothing) explains it, one that predicts ``approx`` cannot; at most three causes, the most direct
    first, none that an already kept cause descends from."""
    b = compile_suite(CASES + "::division", ["approx", "ieee"], "sm80")
    a, o = order
    va, vb = b.variants[a], b.variants[o]
    more = a if va.resources.registers > vb.resources.registers else o  # type: ignore[operator]
    less = o if more == a else a
    assert more == "ieee"
    delta = abs(va.resources.registers - vb.resources.registers)  # type: ignore[operator]

    def fnd(
        fid: str, predicts: str | None = None, instructions: int | None = None, causes: list[str] | None = None
    ) -> Finding:
        return Finding(fid, "minor", fid, "", [], causes=causes or [], predicts=predicts, instructions=instructions)

    # these kernels have no dot: a dot mechanism finding (even one that predicts `more`) states nothing about them
    f = _regs(b, a, o, fnd("mma.lowering", more), fnd("precision.dot-input", less), fnd("precision.dot-accumulate"))
    assert f.causes == [] and "Not explained" in f.explanation
    assert "Evidence for the difference" not in f.explanation and "operand slices" not in f.explanation
    # fp64: a pair of registers per value, so a few fp64 instructions bound the difference
    few = _regs(b, a, o, fnd("precision.fp64", more, instructions=1))
    assert delta > 2 and few.causes == [] and "Not explained" in few.explanation
    many = _regs(b, a, o, fnd("precision.fp64", None, instructions=delta))
    assert many.causes == ["precision.fp64"] and "fp64 values take two 32-bit registers each" in many.explanation
    # index width, loops, MMA layout; a cause the kept one descends from is dropped; three at most
    g = _regs(
        b, a, o,
        fnd("ttir.i64-index-math", less), fnd("loop.flattened", more, causes=["loop.nest"]), fnd("loop.nest"),
        fnd("layout.mma", less),
    )  # fmt: skip
    assert g.causes == ["loop.flattened", "layout.mma"]
    assert "64-bit index math" not in g.explanation and "another loop nest changes" in g.explanation
    h = _regs(
        b, a, o,
        fnd("mma.lowering"), fnd("precision.dot-input"), fnd("ttir.i64-index-math", more), fnd("loop.nest", more),
    )  # fmt: skip
    assert h.causes == ["ttir.i64-index-math", "loop.nest"]
    assert "64-bit index math takes two registers per index" in h.explanation and "dot" not in h.explanation


@pytest.mark.parametrize("order", [("w8", "w4"), ("w4", "w8")])
def test_register_story_of_a_row_kernel_at_8_and_4_warps(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """No dot: the 2048-wide row over 128 threads holds twice the elements per thread as over 256, so the 4-warp
    kernel needs twice the address registers; the unvectorized accesses the memory-op count names are where they
    live, and ``num_warps`` differs, so the option root fits too."""
    b = compile_suite(CASES + "::warps", ["w8", "w4"], "sm90", passes=True)
    a, o, va, vb = _pair(order, b)
    assert vb.resources.registers != va.resources.registers
    addr = {v: R._address_regs(b.variants[v]) for v in ("w8", "w4")}
    assert addr["w4"] == 2 * addr["w8"] > 0
    opts = Finding("options.changed", "major", "", "", [], causes=["config.changed"])
    cfg = Finding("config.changed", "major", "", "", [])
    mem = Finding("ptx.memory-ops", "minor", "", "", [], causes=["options.changed"])
    f = _regs(b, a, o, mem, opts, cfg)
    regs = {v: b.variants[v].resources.registers or 0 for v in ("w8", "w4")}
    assert regs["w4"] > regs["w8"] > 0  # twice the elements per thread
    assert f.causes == ["ptx.memory-ops"]  # options.changed fits too, but the memory-op count descends from it
    assert (
        f" Evidence for the difference: global loads/stores need {addr[a]} address registers per thread in `{a}` and "
        f"{addr[o]} in `{o}` (one 64-bit pointer per vector: elements per thread from the blocked layout ÷ vector "
        "width × 2)." in f.explanation
    )
    # the memory-op count predicting the other variant slower does not fit; the option root does then
    mem.predicts = "w8"
    g = _regs(b, a, o, mem, opts, cfg)
    assert g.causes == ["options.changed"]


def _snapshots(tmp: Path, src: VariantResult, name: str, edit: Any = None, drop: tuple[int, ...] = ()) -> VariantResult:
    """``src`` under another name whose per-pass snapshots are copies of ``src``'s (without the positions ``drop``),
    each passed through ``edit(position, text)`` when given."""
    d = tmp / name / "passes"
    d.mkdir(parents=True)
    files = []
    for pos, fn in enumerate(src.passes):
        if pos in drop:
            continue
        text = (Path(src.directory) / "passes" / fn).read_text()
        (d / fn).write_text(edit(pos, text) if edit is not None else text)
        files.append(fn)
    v = copy.copy(src)
    v.name, v.directory, v.passes = name, str(tmp / name), files
    return v


def test_first_diverging_pass_when_the_first_differing_pass_only_records_an_option(
    compile_suite, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """``w4``'s snapshots against copies of them where, from one pass on, the module records another
    ``ttg.num-warps`` and, two passes later, the code differs too: the root names the pass that changes code and says
    that the one before only records the option; the parent's title names the code pass."""
    w4 = compile_suite(CASES + "::warps", ["w8", "w4"], "sm90", passes=True).variants["w4"]
    from irdiff.diagnose.passes import pass_names

    names = pass_names(w4)
    k = next(
        i for i, fn in enumerate(w4.passes) if '"ttg.num-warps" = 4' in (Path(w4.directory) / "passes" / fn).read_text()
    )

    def edit(pos: int, text: str) -> str:
        if pos >= k:
            text = text.replace('"ttg.num-warps" = 4', '"ttg.num-warps" = 16')
        if pos >= k + 2:
            text = text.replace("tt.splat", "tt.broadcast_splat")
        return text

    other = _snapshots(tmp_path, w4, "w16", edit)
    assert "tt.splat" in (Path(w4.directory) / "passes" / w4.passes[k + 2]).read_text()
    for a, o, va, vb in (("w4", "w16", w4, other), ("w16", "w4", other, w4)):
        parent = Finding("options.changed", "major", "Options differ", "", [])
        p = R._pass_finding(a, o, va, vb, [parent])
        assert p is not None and p.causes == ["options.changed"]
        code, recorder = names[k + 1], names[k - 1]
        assert p.title == f"First diverging pass: `{code}`"
        assert p.explanation == (
            f"The per-pass snapshots are equal up to `{code}`, whose output differs first (before it, `{recorder}` "
            "only records the option in the module attributes). Its output hunk is in the evidence."
        )
        assert parent.title == f"Options differ; first diverging pass: `{code}`"
        assert any("broadcast_splat" in e.text for e in p.evidence if e.variant == "w16")


def test_first_diverging_pass_when_every_snapshot_is_equal(compile_suite, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Equal snapshots: the variants diverge after the MLIR pipeline; a pass only one side saved is named on its side
    (``none`` on the other), and the parent's title is left alone (no pass to name)."""
    w4 = compile_suite(CASES + "::warps", ["w8", "w4"], "sm90", passes=True).variants["w4"]
    from irdiff.diagnose.passes import pass_names

    names = pass_names(w4)
    same = _snapshots(tmp_path, w4, "same")
    equal = "Every saved MLIR pass snapshot is equal: the variants diverge after the MLIR pipeline (LLVM/PTX/ptxas)"
    parent = Finding("settings.changed", "major", "Settings differ", "", [])
    p = R._pass_finding("w4", "same", w4, same, [parent])
    assert p is not None and (p.title, p.explanation, p.evidence) == (equal, equal + ".", [])
    assert p.causes == ["settings.changed"] and parent.title == "Settings differ"
    n = len(names)  # the last two snapshots saved by one side only: everything both saved is equal
    fewer = _snapshots(tmp_path, w4, "fewer", drop=(n - 2, n - 1))
    for a, o, va, vb in (("w4", "fewer", w4, fewer), ("fewer", "w4", fewer, w4)):
        p = R._pass_finding(a, o, va, vb, [])
        assert p is not None and p.title == equal and p.causes == []
        listed = f"`{names[-2]}`, `{names[-1]}`"
        assert p.explanation == equal + (
            f". Passes only `w4` runs: {listed}; only `fewer`: none." if a == "w4"
            else f". Passes only `fewer` runs: none; only `w4`: {listed}."
        )  # fmt: skip


# ------------------------------------------------------------------------------------------------ trace through the stages


def _division_root(b: Bundle, a: str, o: str, needle: tuple[str, str] = ("x / y", "tl.div_rn")) -> R._Root:
    """A ``source.op-changed`` root on the lines of ``needle`` (in ``approx``, in ``ieee``) of the division pair."""
    at = {"approx": line_of(b.variants["approx"], needle[0]), "ieee": line_of(b.variants["ieee"], needle[1])}
    f = Finding("source.op-changed", "minor", "Source", "S.", [], stage="python")
    return R._Root(f, {at[a]}, {at[o]})


def _trace(
    b: Bundle, r: R._Root, a: str, o: str, findings: list[Finding] | None = None, whole_ok: bool = True
) -> Finding:
    va, vb = b.variants[a], b.variants[o]
    sd = R.diff_sources(va, vb)
    R._add_trace(
        r,
        a,
        o,
        va,
        vb,
        R.attr_changes(va, vb, sd.line_pairs),
        sd,
        [r.finding] if findings is None else findings,
        whole_ok,
    )
    return r.finding


@pytest.mark.parametrize("order", [("approx", "ieee"), ("ieee", "approx")])
def test_trace_of_a_single_root_reads_the_whole_kernel(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """The one root of the pair: TTIR at its lines, the whole PTX/SASS delta of each variant (and its most frequent
    instruction cited at its line), the division mechanism, nothing else in TTIR/TTGIR; minor becomes major."""
    b = compile_suite(CASES + "::division", ["approx", "ieee"], "sm80")
    a, o, va, vb = _pair(order, b)
    f = _trace(b, _division_root(b, a, o), a, o)
    assert f.severity == "major"
    x = f.explanation
    assert x.startswith("S. Downstream: TTIR at these lines: ")
    assert "PTX at these lines" not in x and "TTGIR at these lines" in x
    wa, wb = R._whole_delta(va, vb, "ptx")
    assert "div.full.f32" in (wa if a == "approx" else wb) and "div.rn.f32" in (wb if a == "approx" else wa)
    assert "; PTX (whole kernel): " in x and f" only in `{a}`, " in x and "; SASS (whole kernel): " in x
    assert " Nothing else differs in TTIR/TTGIR. `approx` divides with `div.full.f32`" in x
    cited = [(e.variant, e.stage, e.text) for e in f.evidence]
    assert [(v, s) for v, s, _ in cited] == [(a, "ptx"), (o, "ptx"), (a, "sass"), (o, "sass")]
    for (v, stage, text), e in zip(cited, f.evidence, strict=True):
        da, db = R._whole_delta(va, vb, stage)
        ops = da if v == a else db
        top = max(ops.values())
        key = text.split("   (")[0]
        assert ops[key] == top and text == f"{key}   ({top}× only in `{v}`)"
        assert e.line is not None and key in R.stage_text(b.variants[v], stage).splitlines()[e.line - 1]


@pytest.mark.parametrize("order", [("approx", "ieee"), ("ieee", "approx")])
def test_trace_of_one_root_among_several_stays_at_its_lines(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """With other roots the whole-kernel delta is no one root's: the trace reads PTX at the root's lines only, cites
    no whole-kernel instruction, and does not claim that nothing else differs while another root stands."""
    b = compile_suite(CASES + "::division", ["approx", "ieee"], "sm80")
    a, o, _, _ = _pair(order, b)
    r = _division_root(b, a, o)
    other = Finding("options.changed", "major", "", "", [], stage="options")
    f = _trace(b, r, a, o, [r.finding, other], whole_ok=False)
    x = f.explanation
    assert "(whole kernel)" not in x and "; PTX at these lines: " in x
    assert x.startswith("S. Downstream: TTIR at these lines: ") and "; TTGIR at these lines: " in x
    ptx = x.split("; PTX at these lines: ")[1]
    mine, theirs = ("div.full.f32", "div.rn.f32") if a == "approx" else ("div.rn.f32", "div.full.f32")
    assert ptx.index(f"`{mine}`") < ptx.index(f" in `{a}` where `{o}` has ") < ptx.index(f"`{theirs}`")
    assert "Nothing else differs" not in x and "`approx` divides with `div.full.f32`" in x
    assert f.evidence == [] and f.severity == "minor"  # no whole-kernel delta, no attribute: the trace alone
    # the other root caused by something: it is no root, so nothing else differs again
    other.causes = ["x"]
    g = _trace(b, _division_root(b, a, o), a, o, [other], whole_ok=False)
    assert g.explanation.count(" Nothing else differs in TTIR/TTGIR.") == 1


@pytest.mark.parametrize("order", [("approx", "ieee"), ("ieee", "approx")])
def test_trace_of_lines_that_compile_alike_is_information(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """A source root on lines whose IR is the same in both variants (the offsets): no trace, info, and it says so;
    a root that is no source change keeps its severity."""
    b = compile_suite(CASES + "::division", ["approx", "ieee"], "sm80")
    a, o, _, _ = _pair(order, b)
    r = _division_root(b, a, o, ("offs = ", "offs = "))
    f = _trace(b, r, a, o, whole_ok=False)
    assert f.severity == "info" and f.evidence == []
    assert " Downstream: " not in f.explanation and f.explanation.startswith("S. No TTIR/TTGIR/LLIR/PTX difference")
    assert f.explanation.endswith(
        " No TTIR/TTGIR/LLIR/PTX difference is traced to these lines (their IR is the same, or they have none, like "
        "an ignored annotation)."
    )
    r2 = _division_root(b, a, o, ("offs = ", "offs = "))
    r2.finding.id = "settings.changed"
    g = _trace(b, r2, a, o, whole_ok=False)
    assert g.severity == "minor" and "No TTIR/TTGIR/LLIR/PTX difference" not in g.explanation


@pytest.mark.parametrize("order", [("evict", "keep"), ("keep", "evict")])
def test_trace_names_the_attribute_change_on_the_root_lines(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """A source root on the load that gained ``evict_first``: the attribute change at its lines is said in words
    (not for the attribute finding itself, whose title says it), the cache-hint mechanism is named, and it weighs."""
    b = compile_suite(CASES + "::streaming", ["evict", "keep"], "sm80")
    a, o, va, vb = _pair(order, b)
    sd = R.diff_sources(va, vb)
    (ac,) = R.attr_changes(va, vb, sd.line_pairs)
    lines = {"evict": line_of(b.variants["evict"], "evict_first"), "keep": line_of(b.variants["keep"], "y = tl.load")}
    src = Finding("source.kwarg-changed", "minor", "Source", "S.", [], stage="python")
    f = _trace(b, R._Root(src, {lines[a]}, {lines[o]}), a, o, whole_ok=False)
    assert f.explanation.startswith(f"S. {ac.words(a, o)}. Downstream: TTIR at these lines: ")
    assert "Cache hints: `evict` sets `evict_first`" in f.explanation and f.severity == "major"
    # a root elsewhere: the attribute is not its own
    far = _trace(b, R._Root(Finding("source.x", "minor", "", "S.", []), {1}, {1}), a, o, whole_ok=False)
    assert ac.words(a, o) not in far.explanation
    attr = Finding("ttir.attr-changed", "minor", "T", "A.", [], stage="ttir")
    g = _trace(b, R._Root(attr, {ac.line_a}, {ac.line_b}), a, o, whole_ok=False)
    assert ac.words(a, o) not in g.explanation and "Cache hints: `evict` sets `evict_first`" in g.explanation
    assert g.severity == "major"


@pytest.mark.parametrize("order", [("bare", "hint"), ("hint", "bare")])
def test_trace_of_hint_attributes_alone_does_not_weigh(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """The ``tl.multiple_of`` line with only its AxisInfo attributes (no whole-kernel delta): the hints matter only
    through their effects, so the root stays minor."""
    b = compile_suite(CASES + "::hinted", ["bare", "hint"], "sm80")
    a, o, _, _ = _pair(order, b)
    lines = {v: line_of(b.variants[v], "offs_m = ") for v in ("bare", "hint")}
    src = Finding("source.call-added", "minor", "Source", "S.", [], stage="python")
    f = _trace(b, R._Root(src, {lines[a]}, {lines[o]}), a, o, whole_ok=False)
    assert "tt.divisibility = dense<128>" in f.explanation  # the attribute change in words, at the hinted line
    assert f.severity == "minor"
    assert "`tl.multiple_of` attaches `tt.divisibility`" in f.explanation
    # the rest of the TTGIR differs (vector widths, async copies), the rest of the TTIR does not: not "nothing else"
    assert "Nothing else differs" not in f.explanation
    single = Finding("source.call-added", "minor", "Source", "S.", [], stage="python")
    g = _trace(b, R._Root(single, {lines[a]}, {lines[o]}), a, o)  # the one root: the whole PTX/SASS, no PTX trace
    assert "(whole kernel)" in g.explanation and "Nothing else differs" not in g.explanation


def test_a_failing_mechanism_does_not_break_the_trace(compile_suite) -> None:  # type: ignore[no-untyped-def]
    b = compile_suite(CASES + "::division", ["approx", "ieee"], "sm80")

    def broken(ctx: R.RootContext) -> str | None:
        raise RuntimeError("boom")

    def said(ctx: R.RootContext) -> str | None:
        return f"[{ctx.finding.id} {ctx.a} {ctx.b} {len(ctx.changes)} {sorted(s.stage for s in ctx.trace)}]"

    R.register_mechanism(broken)
    R.register_mechanism(said)
    try:
        f = _trace(b, _division_root(b, "ieee", "approx"), "ieee", "approx")
    finally:
        R.MECHANISMS.remove(broken)
        R.MECHANISMS.remove(said)
    assert f.explanation.endswith(" [source.op-changed ieee approx 1 ['ttgir', 'ttir']]")


# ------------------------------------------------------------------------------------------------ more linking


@pytest.mark.parametrize("order", [("evict", "keep"), ("keep", "evict")])
def test_unclaimed_keyword_roots_its_attribute_change(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """Without a rule to claim it, ``eviction_policy=`` is a source root at its lines, and the TTIR attribute change
    on that line is its effect (linked by line, no more severe than it)."""
    b = compile_suite(CASES + "::streaming", ["evict", "keep"], "sm80")
    a, o, va, vb = _pair(order, b)
    _, sd = rule_findings(b, a, o)
    out, unexplained = R.apply_roots([], a, o, va, vb, sd=sd)
    assert [f.id for f in out] == ["source.kwarg-changed", "ttir.attr-changed"] and unexplained == []
    src, attr = out
    lines = {"evict": line_of(b.variants["evict"], "evict_first"), "keep": line_of(b.variants["keep"], "y = tl.load")}
    assert src.title.endswith(f"(line {lines[a]} of `{a}`, line {lines[o]} of `{o}`)")
    assert [(e.variant, e.line) for e in src.evidence if e.stage == "python"] == [(a, lines[a]), (o, lines[o])]
    assert attr.causes == ["source.kwarg-changed"] and src.causes == []
    # one root (the attribute change has a cause): both traces read the whole kernel, and it weighs
    assert src.severity == attr.severity == "major"
    assert "; PTX (whole kernel): " in src.explanation and "; PTX (whole kernel): " in attr.explanation
    assert "No other finding follows" not in src.explanation
    # the source diff is computed when not given, and an empty one has no source root
    again, _ = R.apply_roots([], a, o, va, vb)
    assert [(f.id, f.title, f.causes) for f in again] == [(f.id, f.title, f.causes) for f in out]
    none, _ = R.apply_roots([], a, o, va, vb, sd=SourceDiff())
    assert [f.id for f in none] == []


@pytest.mark.parametrize("order", [("plain", "hinted"), ("hinted", "plain")])
def test_hint_statement_is_claimed_by_the_hint_rule_off_its_line(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """``base = tl.multiple_of(base, 4)`` on a line of its own: ``tt.divisibility`` lands on the ``arith.muli`` of the
    line above, where the hint rule's evidence is, so the rule claims the hint call although it is on another line,
    names it in its title at the call's line, and the attribute change on the line above follows from it."""
    b = compile_suite(str(SUITES / "hint_statement.py"), ["plain", "hinted"], "sm80")
    a, o, va, vb = _pair(order, b)
    call, above = line_of(b.variants["hinted"], "tl.multiple_of(base, 4)"), line_of(b.variants["hinted"], "base = pid")
    assert call == above + 1
    by, ids, unexplained = run_roots(b, a, o)
    assert ids[:2] == ["hint.axis-info", "ttir.attr-changed"] and unexplained == []
    assert not any(i.startswith("source.") for i in ids)
    rule = by["hint.axis-info"]
    assert rule.title.startswith(
        f"statement `base = tl.multiple_of(base, 4)` only in `hinted` (line {call} of `hinted`): AxisInfo hints differ"
    )
    assert [ln for ln, t in python_ev(rule, "hinted") if t.startswith("source change: ")] == [call]
    assert python_ev(rule, "plain") == []  # the statement has no line in `plain`
    attr = by["ttir.attr-changed"]
    assert attr.causes == ["hint.axis-info"] and "from line" in attr.title and "`arith.muli`" in attr.title
    assert f"line {above} of `hinted`" in attr.title
    # without the rule, the statement is the source root and the attribute change (a line above it) still follows;
    # the wider accesses are in the whole-kernel PTX, so the hint is not called inert although no finding names them
    # (before the fix: "no access, layout or instruction differs because of them", and info)
    _, sd = rule_findings(b, a, o)
    out, unexplained = R.apply_roots([], a, o, va, vb, sd=sd)
    assert [(f.id, f.causes) for f in out] == [("source.statement", []), ("ttir.attr-changed", ["source.statement"])]
    src = out[0]
    assert "PTX (whole kernel): " in src.explanation and "`ld.global.v4.b32`" in src.explanation
    assert "It only adds AxisInfo hint attributes" not in src.explanation and src.severity == "major"
    # the root traces the hinted value's definition a line above the call, where the attribute is; the TTGIR
    # layouts (4 elements per thread, vectorized) differ outside any op, so nothing is said to be the same
    assert f"TTIR `arith.muli` from line {line_of(b.variants[a], 'base = pid')} of `{a}`" in src.explanation
    assert "Nothing else differs" not in src.explanation


def test_rewrite_lists_the_changes_and_lets_the_rules_root_the_chain(compile_suite) -> None:  # type: ignore[no-untyped-def]
    """A persistent matmul against the tiled one: more than ``REWRITE_CHANGES`` source changes, so no change is taken
    for a root: one informational list, and the rules' own findings start the chains (the loop nest here)."""
    b = compile_suite("persistent-matmul", ["tiled", "persistent", "persistent-noflatten"], "sm90")
    for a, o in (("persistent-noflatten", "tiled"), ("tiled", "persistent-noflatten")):
        by, ids, unexplained = run_roots(b, a, o)
        assert unexplained == [] and "loop.nest" in ids and "source.statement" in ids
        lst = by["source.statement"]
        n = int(lst.title.split(" places")[0].rsplit(" ", 1)[1])
        assert n > R.REWRITE_CHANGES and lst.severity == "info" and lst.causes == []
        assert lst.title == f"Source: the kernels differ in {n} places (a rewrite); see the python stage diff"
        assert lst.explanation.startswith(
            f"{n} source changes between `{a}` and `{o}`: too many for one of them to be the root of every "
            "difference below. Findings whose evidence is on a changed line name it; the rest follow their own "
            "rules. What changed in the source"
        )
        assert "Downstream" not in lst.explanation  # no trace: it is no root
        assert not any(i.startswith("source.") and i != "source.statement" for i in ids)
        assert by["loop.nest"].causes == [] and by["resources.registers"].causes == ["loop.nest"]


@pytest.mark.parametrize("swap", [False, True])
def test_the_rules_settings_finding_is_the_root_of_the_first_diverging_pass(compile_suite, swap: bool) -> None:  # type: ignore[no-untyped-def]
    from irdiff.pipeline import load_pair

    b80 = compile_suite(CASES + "::warps", ["w4"], "sm80", passes=True)
    b90 = compile_suite(CASES + "::warps", ["w4"], "sm90", passes=True)
    bundle, x80, x90 = load_pair(Path(b80.directory) / "w4", Path(b90.directory) / "w4")
    a, o = (x90, x80) if swap else (x80, x90)
    by, ids, unexplained = run_roots(bundle, a, o)
    assert ids[0] == "settings.target-changed" and "settings.changed" not in ids and unexplained == []
    assert by["pass.first-diverging"].causes == ["settings.target-changed"]
    assert by["settings.target-changed"].title.endswith("; first diverging pass: `ConvertTritonToTritonGPU`")


def test_measured_time_is_never_linked_nor_unexplained_and_cycles_reach_no_root(compile_suite) -> None:  # type: ignore[no-untyped-def]
    b = compile_suite(CASES + "::division", ["approx", "ieee"], "sm80")
    fs, sd = rule_findings(b, "approx", "ieee")
    tm = Finding("time.measured", "major", "Time", "T.", [], stage="time")
    loop_a = Finding("coalesce.contiguity", "major", "A", "A.", [], causes=["coalesce.vector-width"])
    loop_b = Finding("coalesce.vector-width", "major", "B", "B.", [], causes=["coalesce.contiguity"])
    gone = Finding("pipeline.buffers", "minor", "C", "C.", [], causes=["nowhere"])
    out, unexplained = R.apply_roots([tm, *fs, loop_a, loop_b, gone], "approx", "ieee", *b.variants.values(), sd=sd)
    ids = [f.id for f in out]
    assert ids[0] == "precision.division" and ids[-1] == "time.measured" and tm.causes == []
    assert sorted(unexplained) == ["coalesce.contiguity", "coalesce.vector-width", "pipeline.buffers"]
    # last but the time, the shallow chain first (a cycle is as deep as the guard lets it be)
    assert ids[-4:-1] == ["pipeline.buffers", "coalesce.contiguity", "coalesce.vector-width"]
    for f in (loop_a, loop_b, gone):
        assert f.explanation.endswith(R.UNEXPLAINED_NOTE) and f.explanation.count("Unexplained:") == 1
        assert f.explanation == f.title + "." + R.UNEXPLAINED_NOTE
    assert R.UNEXPLAINED_NOTE not in tm.explanation


@pytest.mark.parametrize("order", [("plain", "restated"), ("restated", "plain")])
def test_hint_that_restates_what_axisinfo_proves_is_information(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """``tl.multiple_of(pid * BLOCK, BLOCK)`` (tests/suites/hint_restated.py): the hint's attribute is the only
    difference, no rule finds an effect, so the source root is information and says that nothing follows from the
    hint attributes; a real effect linked to it would keep it minor."""
    b = compile_suite(str(SUITES / "hint_restated.py"), ["plain", "restated"], "sm80")
    a, o, va, vb = _pair(order, b)
    fs, sd = rule_findings(b, a, o)
    assert fs == []  # no rule sees a difference
    out, unexplained = R.apply_roots(fs, a, o, va, vb, sd=sd)
    kind = "source.call-added" if a == "plain" else "source.call-removed"
    assert [(f.id, f.causes) for f in out] == [(kind, []), ("ttir.attr-changed", [kind])] and unexplained == []
    src, attr = out
    assert src.severity == attr.severity == "info"
    assert "(whole kernel)" not in src.explanation  # the PTX and SASS are the same
    assert src.explanation.startswith("What changed in the source (compared as Python syntax trees): ")
    assert src.explanation.endswith(
        " It only adds AxisInfo hint attributes (`tt.divisibility`/`tt.contiguity`); no access, layout or instruction "
        "differs because of them."
    )
    assert "tt.divisibility = dense<256>" in attr.title
    _, sd = rule_findings(b, a, o)
    effect = Finding("ptx.memory-ops", "minor", "M", "M.", [], causes=[kind], stage="ptx")
    out, _ = R.apply_roots([effect], a, o, va, vb, sd=sd)
    src = next(f for f in out if f.id == kind)
    assert src.severity == "minor" and "It only adds AxisInfo hint attributes" not in src.explanation


@pytest.mark.parametrize("order", [("plain", "mixed"), ("mixed", "plain")])
def test_annotation_claim_that_shows_its_line_gets_no_second_citation(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """``incx: int`` and ``do_not_specialize=["incw"]`` in ``mixed``: the stage-0 finding cites the annotated lines
    itself, so claiming the changes adds no ``source change:`` evidence on either side."""
    b = compile_suite(str(SUITES / "spec_kinds.py"), ["plain", "mixed", "ragged", "wide", "tall"], "sm80")
    a, o, va, vb = _pair(order, b)
    before, _ = rule_findings(b, a, o)
    shown = {(e.variant, e.line) for f in before if f.id == "spec.constexpr-one-lost" for e in f.evidence}
    assert {ln for v, ln in shown if v == "mixed"} >= {line_of(b.variants["mixed"], "incx: int")}
    by, ids, unexplained = run_roots(b, a, o)
    # (Triton 3.6 adds layout-conversion findings no rule links: the unexplained list is version-specific here)
    assert ids[0] == "spec.constexpr-one-lost" and not any(i.startswith("source.") for i in ids)
    spec = by["spec.constexpr-one-lost"]
    assert not any(e.text.startswith("source change:") for e in spec.evidence)
    assert {(e.variant, e.line) for e in spec.evidence} == shown


def _ir_line(v: VariantResult, stage: str, needle: str) -> int:
    """1-based line of the first ``stage`` line of ``v`` that contains ``needle``."""
    return next(i for i, ln in enumerate(R.stage_text(v, stage).splitlines(), 1) if needle in ln)


@pytest.mark.parametrize("order", [("evict", "keep"), ("keep", "evict")])
def test_a_finding_on_a_line_that_uses_the_changed_value_is_linked_by_provenance(
    compile_suite, order: tuple[str, str]
) -> None:  # type: ignore[no-untyped-def]
    """A finding cited at the TTGIR ``tt.store`` (the line after the hinted load, storing ``alpha * x + y``) uses the
    value the changed line defines: it is linked to the attribute change of that line first (not to the keyword root
    beside it), and a finding on a line that uses nothing changed stays unexplained."""
    b = compile_suite(CASES + "::streaming", ["evict", "keep"], "sm80")
    a, o, va, vb = _pair(order, b)
    _, sd = rule_findings(b, a, o)
    store = Finding("x.store", "minor", "S", "S.", [Evidence(a, "ttgir", _ir_line(va, "ttgir", "tt.store"), "st")])
    first = Finding("x.pid", "minor", "P", "P.", [Evidence(o, "python", line_of(vb, "tl.program_id(0)"), "pid")])
    out, unexplained = R.apply_roots([store, first], a, o, va, vb, sd=sd)
    assert store.causes == ["ttir.attr-changed"] and unexplained == ["x.pid"] and first.causes == []
    assert [f.id for f in out] == ["source.kwarg-changed", "ttir.attr-changed", "x.store", "x.pid"]


@pytest.mark.parametrize("order", [("approx", "ieee"), ("ieee", "approx")])
def test_a_claim_read_from_one_variant_only(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """A finding whose only evidence is one variant's PTX ``div.full.f32`` (at the division's line in ``approx``)
    claims the division change from that side, in either order; cited in ``ieee``'s PTX at an unchanged line, it
    does not: the change is a source root and the finding is unexplained."""
    b = compile_suite(CASES + "::division", ["approx", "ieee"], "sm80")
    a, o, va, vb = _pair(order, b)
    _, sd = rule_findings(b, a, o)
    ax = b.variants["approx"]
    div = Finding(
        "precision.division",
        "minor",
        "Division",
        "D.",
        [Evidence("approx", "ptx", _ir_line(ax, "ptx", "div.full.f32"), "d")],
    )
    out, unexplained = R.apply_roots([div], a, o, va, vb, sd=sd)
    assert [f.id for f in out] == ["precision.division"] and unexplained == []
    assert div.title.startswith(
        "`x / y` in `approx` is `tl.div_rn(x, y)` in `ieee`"
        if a == "approx"
        else "`tl.div_rn(x, y)` in `ieee` is `x / y` in `approx`"
    )
    ix = b.variants["ieee"]
    other = Finding(
        "precision.division",
        "minor",
        "Division",
        "D.",
        [Evidence("ieee", "ptx", _ir_line(ix, "ptx", "ld.global"), "l")],
    )
    out, unexplained = R.apply_roots([other], a, o, va, vb, sd=sd)
    assert [f.id for f in out] == ["source.op-changed", "precision.division"]
    # its evidence is a load before the division: no provenance to the change, so it reaches no root
    assert other.causes == [] and other.title == "Division" and unexplained == ["precision.division"]


def test_register_story_boundaries_of_the_fp64_bound(compile_suite) -> None:  # type: ignore[no-untyped-def]
    """fp64 holds a register pair per value: ``n`` fp64 instructions explain up to ``2n`` registers (inclusive)."""
    b = compile_suite(CASES + "::division", ["approx", "ieee"], "sm80")
    va, vb = b.variants["approx"], b.variants["ieee"]
    delta = abs((va.resources.registers or 0) - (vb.resources.registers or 0))
    assert delta > 4 and delta % 2 == 0

    def fp64(n: int) -> Finding:
        return _regs(b, "ieee", "approx", Finding("precision.fp64", "minor", "", "", [], instructions=n))

    edge = fp64(delta // 2)
    assert edge.causes == ["precision.fp64"]
    assert " Evidence for the difference: fp64 values take two 32-bit registers each." in edge.explanation
    assert fp64(delta // 2 - 1).causes == []


def test_register_story_reads_registers_and_dots_only_where_both_have_them(compile_suite) -> None:  # type: ignore[no-untyped-def]
    """A variant without a register count (no ptxas info) leaves the story untold; a dot kernel against one without
    a dot says nothing about accumulators; two dots of the same tile (the hinted matmul) neither."""
    import dataclasses

    d = compile_suite(CASES + "::division", ["approx", "ieee"], "sm80")
    va, vb = d.variants["approx"], d.variants["ieee"]
    blind = copy.copy(vb)
    blind.resources = dataclasses.replace(vb.resources, registers=None)
    for x, y in ((va, blind), (blind, va)):
        f = Finding("resources.registers", "minor", "R", "R.", [], causes=["stale"])
        R.register_story(f, x.name, y.name, x, y, [f])
        assert (f.explanation, f.causes, f.severity) == ("R.", ["stale"], "minor")
    loop = compile_suite(str(SUITES / "diag_loop.py"), ["dot3", "dot3w8"], "sm86").variants["dot3"]
    for x, y in ((loop, va), (va, loop)):
        f = Finding("resources.registers", "minor", "R", "R.", [])
        R.register_story(f, x.name, y.name, x, y, [f])
        assert "dot accumulator" not in f.explanation and "lowers the dot to FMA" not in f.explanation
    h = compile_suite(CASES + "::hinted", ["bare", "hint"], "sm80")
    assert R._dot_facts(h.variants["bare"]) == R._dot_facts(h.variants["hint"]) == (128, "mma")
    f = _regs(h, "bare", "hint")
    assert "dot accumulator" not in f.explanation and "lowers the dot to FMA" not in f.explanation


@pytest.mark.parametrize("order", [("dot3", "dot3w8"), ("dot3w8", "dot3")])
def test_register_story_keeps_mechanisms_before_the_tile_causes(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """A mechanism finding that fits comes first; the tile that holds more accumulator values per thread fits a
    constexpr change as well as an option change; the dot's input precision is named in words."""
    b = compile_suite(str(SUITES / "diag_loop.py"), ["dot3", "dot3w8"], "sm86")
    a, o = order
    mech = Finding("precision.dot-input", "minor", "", "", [])
    spec = Finding("spec.constexpr-changed", "major", "", "", [])
    f = _regs(b, a, o, mech, spec)
    # both variants' dots have the same input precision: the precision finding is not evidence here (no tf32x3 claim)
    assert f.causes == ["spec.constexpr-changed"]
    assert f.explanation.startswith("R. Evidence for the difference: the dot accumulator holds ")
    assert "tf32x3" not in f.explanation


def test_rewrite_threshold_and_which_rule_findings_start_chains(compile_suite) -> None:  # type: ignore[no-untyped-def]
    """``REWRITE_CHANGES`` unclaimed changes are still roots; one more makes a rewrite. In a rewrite every rule finding
    without a cause starts a chain except the counts (PTX, SASS, resources) and the time: those follow the one real
    root when they have no line evidence."""
    import dataclasses

    b = compile_suite("persistent-matmul", ["tiled", "persistent", "persistent-noflatten"], "sm90")
    a, o = "persistent-noflatten", "tiled"
    va, vb = b.variants[a], b.variants[o]
    fs, sd = rule_findings(b, a, o)
    sem = [c for c in sd.changes if c.semantic and c.kind != "option"]
    assert len(sem) > R.REWRITE_CHANGES + 1
    at = dataclasses.replace(sd, changes=sem[: R.REWRITE_CHANGES])
    out, _ = R.apply_roots(copy.deepcopy(fs), a, o, va, vb, sd=at)
    assert not any("(a rewrite)" in f.title for f in out)
    assert {f.id for f in out if f.id.startswith("source.")} == {R.source_id(c.kind) for c in at.semantic} - {
        f.id for f in fs
    }
    over = dataclasses.replace(sd, changes=sem[: R.REWRITE_CHANGES + 1])
    counts = [Finding(f"x.{s}", "minor", s, ".", [], stage=s) for s in ("sass", "resources", "time", "ptx")]
    ttgir = Finding("x.ttgir", "minor", "t", ".", [], stage="ttgir")
    out, unexplained = R.apply_roots([*copy.deepcopy(fs), *counts, ttgir], a, o, va, vb, sd=over)
    by = {f.id: f for f in out}
    assert by["source.statement"].title == (
        f"Source: the kernels differ in {R.REWRITE_CHANGES + 1} places (a rewrite); see the python stage diff"
    )
    # two chains start (the loop nest and the TTGIR finding), so the counts stay unlinked and unexplained
    assert ttgir.causes == [] and by["loop.nest"].causes == []
    assert sorted(unexplained) == ["x.ptx", "x.resources", "x.sass", "x.time"]
    # with the loop nest alone, they follow it
    out, unexplained = R.apply_roots([*copy.deepcopy(fs), *copy.deepcopy(counts)], a, o, va, vb, sd=over)
    assert unexplained == [] and all(f.causes == ["loop.nest"] for f in out if f.id.startswith("x."))


@pytest.mark.parametrize("order", [("evict", "keep"), ("keep", "evict")])
def test_attribute_change_without_a_source_change_follows_the_configuration(
    compile_suite, order: tuple[str, str]
) -> None:  # type: ignore[no-untyped-def]
    """The load's ``evict_first`` attribute with no source change named for it (a source diff that only pairs the
    lines): no root on its lines, no claim, so the configuration root that nothing causes is its cause."""
    b = compile_suite(CASES + "::streaming", ["evict", "keep"], "sm80")
    a, o, va, vb = _pair(order, b)
    _, sd = rule_findings(b, a, o)
    paired = SourceDiff(line_pairs=sd.line_pairs)
    opts = Finding("options.changed", "major", "Options", "O.", [], causes=["config.changed"], stage="options")
    cfg = Finding("config.changed", "major", "Config", "C.", [], stage="options")
    out, unexplained = R.apply_roots([opts, cfg], a, o, va, vb, sd=paired)
    by = {f.id: f for f in out}
    assert by["ttir.attr-changed"].causes == ["config.changed"] and unexplained == []
    out, _ = R.apply_roots([], a, o, va, vb, sd=paired)
    assert [(f.id, f.causes) for f in out] == [("ttir.attr-changed", [])]  # a root of its own


@pytest.mark.parametrize("order", [("plain", "restated"), ("restated", "plain")])
def test_only_the_hint_rule_claims_a_hint_off_its_line(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """Another rule finding without a cause and without evidence on the hint's line does not claim the hint call;
    the informational source root is still the one real root, so a whole-kernel finding follows it."""
    b = compile_suite(str(SUITES / "hint_restated.py"), ["plain", "restated"], "sm80")
    a, o, va, vb = _pair(order, b)
    _, sd = rule_findings(b, a, o)
    other = Finding("pipeline.wait-depth", "minor", "W", "W.", [Evidence(a, "python", line_of(va, "keep = "), "k")])
    whole = Finding("sass.instructions", "minor", "S", "S.", [], stage="sass")
    out, unexplained = R.apply_roots([other, whole], a, o, va, vb, sd=sd)
    kind = "source.call-added" if a == "plain" else "source.call-removed"
    by = {f.id: f for f in out}
    assert kind in by and other.title == "W" and by[kind].severity == "minor"
    # it uses the hinted value (``keep = offs < n``): an effect of the hint's attribute, not its claimer
    assert whole.causes == [kind] and other.causes == ["ttir.attr-changed"] and unexplained == []
    # an info root that is no source change is no real root: the count follows the option root
    spec = Finding("spec.x", "info", "X", "X.", [], stage="spec")
    opts = Finding("options.changed", "major", "O", "O.", [], stage="options")
    whole2 = Finding("sass.instructions", "minor", "S", "S.", [], stage="sass")
    out, _ = R.apply_roots([spec, opts, whole2], a, o, va, vb, sd=SourceDiff())
    assert whole2.causes == ["options.changed"]


@pytest.mark.parametrize("order", [("inside", "hoisted"), ("hoisted", "inside")])
def test_a_finding_on_a_line_using_a_moved_value_follows_the_move(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """``scale = tl.load(s_ptr) * 0.5`` moved out of the loop: a finding cited at the TTGIR ``tt.store`` (which stores
    ``v * scale``) is linked to the move by provenance."""
    b = compile_suite(CASES + "::moved", ["inside", "hoisted"], "sm80")
    a, o, va, vb = _pair(order, b)
    _, sd = rule_findings(b, a, o)
    store = Finding("x.store", "minor", "S", "S.", [Evidence(o, "ttgir", _ir_line(vb, "ttgir", "tt.store"), "st")])
    out, unexplained = R.apply_roots([store], a, o, va, vb, sd=sd)
    assert [f.id for f in out] == ["source.moved", "x.store"] and store.causes == ["source.moved"]
    assert unexplained == []


@pytest.mark.parametrize("order", [("approx", "ieee"), ("ieee", "approx")])
def test_trace_of_lines_on_one_side_only(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """A root with lines in one variant only (a statement the other lacks): its IR at those lines is what only that
    variant has, and the other side's list is empty."""
    b = compile_suite(CASES + "::division", ["approx", "ieee"], "sm80")
    a, o, _, _ = _pair(order, b)
    ln = line_of(b.variants["ieee"], "tl.div_rn")
    f = Finding("source.statement", "minor", "Source", "S.", [], stage="python")
    root = R._Root(f, {ln} if a == "ieee" else set(), {ln} if o == "ieee" else set())
    x = _trace(b, root, a, o, whole_ok=False).explanation
    ttir = x.split(" Downstream: TTIR at these lines: ")[1].split("; TTGIR")[0]
    assert "No TTIR/TTGIR/LLIR/PTX difference" not in x  # one side's IR is a difference
    if a == "ieee":
        assert "precise_divf" in ttir.split(f" in `{a}` where `{o}` has ")[0] and ttir.endswith(" has nothing")
    else:
        assert ttir.startswith(f"nothing in `{a}` where `{o}` has ") and "precise_divf" in ttir


@pytest.mark.parametrize("order", [("plain", "twice"), ("twice", "plain")])
def test_whole_kernel_delta_on_one_side_only(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """``twice`` stores its result a second time: its PTX is ``plain``'s and more, so the whole-kernel PTX delta is
    one-sided; it is still reported ("nothing only in `plain`") and only ``twice``'s side is cited."""
    b = compile_suite(str(SUITES / "hint_restated.py"), ["plain", "twice"], "sm80")
    a, o, va, vb = _pair(order, b)
    d_plain, d_twice = R._whole_delta(b.variants["plain"], b.variants["twice"], "ptx")
    assert d_plain == {} and any(k.startswith("st.global") for k in d_twice)
    f = Finding("settings.changed", "major", "S", "S.", [], stage="options")
    R._add_trace(R._Root(f, set(), set()), a, o, va, vb, [], SourceDiff(), [f], True)
    ptx = R._fmt_ops(d_twice)
    said = (
        f"nothing only in `plain`, {ptx} only in `twice`"
        if a == "plain"
        else f"{ptx} only in `twice`, nothing only in `plain`"
    )
    assert f" Downstream: PTX (whole kernel): {said}; SASS (whole kernel): " in f.explanation
    assert [(e.variant, e.stage) for e in f.evidence if e.stage == "ptx"] == [("twice", "ptx")]


@pytest.mark.parametrize("order", [("evict", "keep"), ("keep", "evict")])
def test_trace_attribute_words_by_line_of_either_side_and_at_most_three(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """An attribute change is the root's when its line is among the root's lines on either side; at most three are
    said, joined by semicolons."""
    b = compile_suite(CASES + "::streaming", ["evict", "keep"], "sm80")
    a, o, va, vb = _pair(order, b)
    sd = R.diff_sources(va, vb)
    (ac,) = R.attr_changes(va, vb, sd.line_pairs)
    for la, lb in (({ac.line_a}, set()), (set(), {ac.line_b})):
        f = Finding("source.kwarg-changed", "minor", "Source", "S.", [], stage="python")
        R._add_trace(R._Root(f, la, lb), a, o, va, vb, [ac], sd, [f], False)
        assert f.explanation.startswith(f"S. {ac.words(a, o)}. Downstream: ")
    f = Finding("source.kwarg-changed", "minor", "Source", "S.", [], stage="python")
    R._add_trace(R._Root(f, {ac.line_a}, {ac.line_b}), a, o, va, vb, [ac] * 4, sd, [f], False)
    assert f.explanation.startswith(f"S. {'; '.join([ac.words(a, o)] * 3)}. Downstream: ")


@pytest.mark.parametrize("order", [("cols", "rows"), ("rows", "cols")])
def test_mechanisms_see_the_changes_on_the_root_lines_of_either_side(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """The reduction-axis sentence needs the ``axis=`` change among the root's changes: a root on its line in one
    variant has it, a root on the ``tl.arange`` line does not."""
    b = compile_suite(str(SUITES / "kinds" / "kinds.py") + "::redaxis", ["cols", "rows"], "sm80")
    a, o, va, vb = _pair(order, b)
    sd = R.diff_sources(va, vb)
    (c,) = sd.semantic
    assert c.line_a is not None and c.line_b is not None
    axis = "The reduction runs along another axis of the same tile"
    for la, lb in (({c.line_a}, set()), (set(), {c.line_b})):
        f = Finding("source.kwarg-changed", "minor", "Source", "S.", [], stage="python")
        R._add_trace(R._Root(f, la, lb), a, o, va, vb, [], sd, [f], True)
        assert axis in f.explanation
    g = Finding("source.kwarg-changed", "minor", "Source", "S.", [], stage="python")
    other = {line_of(va, "i = tl.arange")}, {line_of(vb, "i = tl.arange")}
    R._add_trace(R._Root(g, *other), a, o, va, vb, [], sd, [g], True)
    assert axis not in g.explanation


def _with_regs(v: VariantResult, n: int) -> VariantResult:
    import dataclasses

    w = copy.copy(v)
    w.resources = dataclasses.replace(v.resources, registers=n)
    return w


@pytest.mark.parametrize("order", [("notf32", "default"), ("default", "notf32")])
def test_register_story_names_the_fma_side(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """``allow_tf32=False`` lowers the fp32 dot to FMA on a ``#blocked`` layout, the default to MMA: the story names
    the FMA variant; the layout, settings and option roots fit it, after a mechanism finding."""
    b = compile_suite(str(SUITES / "kinds" / "kinds.py") + "::notf32", ["notf32", "default"], "sm80")
    a, o = order
    assert R._dot_facts(b.variants["notf32"])[1].startswith("blocked")  # type: ignore[index]
    assert R._dot_facts(b.variants["default"])[1] == "mma"  # type: ignore[index]
    f = _regs(b, a, o, Finding("mma.lowering", "minor", "", "", []), Finding("layout.mma", "minor", "", "", []))
    fma_more = b.variants["notf32"].resources.registers > b.variants["default"].resources.registers  # type: ignore[operator]
    if fma_more:  # the lowering's note names the FMA side's operand slices, and says the layout once
        assert (
            "`notf32` lowers the dot to FMA: each thread keeps the operand slices of all its outputs" in f.explanation
        )
        assert f.causes == ["mma.lowering", "layout.mma"]
    else:  # the FMA side has fewer registers: the lowering explains nothing about more; the layout fact is stated
        assert "`notf32` lowers the dot to FMA (blocked layout), the other to MMA" in f.explanation
        assert "operand slices" not in f.explanation and f.causes == ["layout.mma"]
    for fid in ("settings.changed", "options.changed"):
        g = _regs(b, a, o, Finding(fid, "major", "", "", []))
        assert g.causes == [fid]
    assert _regs(b, a, o).causes == []


@pytest.mark.parametrize("order", [("dot3", "dot3w8"), ("dot3w8", "dot3")])
def test_register_story_address_and_copy_causes(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """More address registers fit the coalescing and mask-alignment findings; more ``cp.async`` the pipelining ones;
    the tile difference fits the settings root."""
    b = compile_suite(str(SUITES / "diag_loop.py"), ["dot3", "dot3w8"], "sm86")
    a, o = order

    def fs(*ids: str) -> list[Finding]:
        return [Finding(i, "minor", "", "", []) for i in ids]

    assert _regs(b, a, o, *fs("coalesce.vector-width", "coalesce.contiguity", "lower.mask-alignment")).causes == [
        "coalesce.vector-width",
        "coalesce.contiguity",
        "lower.mask-alignment",
    ]
    assert _regs(b, a, o, *fs("pipeline.async-copies", "pipeline.buffers", "loop.num-stages")).causes == [
        "pipeline.async-copies",
        "pipeline.buffers",
        "loop.num-stages",
    ]
    assert _regs(b, a, o, *fs("settings.changed")).causes == ["settings.changed"]


def test_register_story_options_only_when_num_warps_differ_and_the_cap(compile_suite) -> None:  # type: ignore[no-untyped-def]
    """The option root fits the per-thread evidence only when ``num_warps`` differs (the hinted matmul: same warps);
    255 registers is the cap (the severity stays); below it, without an occupancy finding, a major difference is
    information; ancestors are followed through the whole chain; a cause that is no finding is ignored."""
    h = compile_suite(CASES + "::hinted", ["bare", "hint"], "sm80")
    f = _regs(h, "bare", "hint", Finding("options.changed", "major", "", "", []))
    assert "Evidence for the difference" in f.explanation and "options.changed" not in f.causes
    d = compile_suite(CASES + "::division", ["approx", "ieee"], "sm80")
    va, vb = d.variants["approx"], d.variants["ieee"]
    for top, sev in ((255, "major"), (254, "info")):
        g = Finding("resources.registers", "major", "R", "R.", [])
        R.register_story(g, "x", "y", _with_regs(va, top), _with_regs(vb, 200), [g])
        assert g.severity == sev and ("255-register cap" in g.explanation) == (top == 255)
    # fp64 bound with one instruction: 2 registers (not 4)
    g = Finding("resources.registers", "minor", "R", "R.", [])
    fp = Finding("precision.fp64", "minor", "", "", [], instructions=1)
    R.register_story(g, "x", "y", _with_regs(va, 24), _with_regs(vb, 20), [g, fp])
    assert g.causes == []
    g = Finding("resources.registers", "minor", "R", "R.", [])
    chain = [
        Finding("loop.flattened", "minor", "", "", [], causes=["loop.nest"]),
        Finding("loop.nest", "minor", "", "", [], causes=["layout.mma", "ghost"]),
        Finding("layout.mma", "minor", "", "", []),
    ]
    R.register_story(g, "approx", "ieee", va, vb, [g, *chain])
    assert g.causes == ["loop.flattened"]
    assert g.explanation.startswith(
        "R. Evidence for the difference: the fused loop carries more values across iterations; another loop nest "
        "changes which values stay live across iterations; another MMA layout changes the fragment sizes per thread."
    )
    i64 = Finding("ttir.i64-index-math", "minor", "", "", [])
    g = Finding("resources.registers", "minor", "R", "R.", [])
    R.register_story(g, "approx", "ieee", va, vb, [g, i64])
    assert g.explanation.startswith("R. Evidence for the difference: 64-bit index math takes two registers per index.")


# ------------------------------------------------------------------------------------------------ mutation survivors


def _change(kind: str, va: VariantResult, vb: VariantResult, needle: str, **kw: Any) -> SourceChange:
    """A stand-in source change of ``kind`` on the (real) line holding ``needle`` in each variant's kernel."""
    la, lb = line_of(va, needle), line_of(vb, needle)
    fields: dict[str, Any] = {"line_a": la, "line_b": lb, "end_a": la, "end_b": lb, "name": "", "text_a": needle}
    fields.update(kw)
    return SourceChange(kind, True, f"`{needle}` differs", function=va.kernel, function_b=vb.kernel, **fields)


@pytest.mark.parametrize("order", [("approx", "ieee"), ("ieee", "approx")])
def test_two_source_roots_each_traced_at_its_lines_and_judged(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """Two unclaimed changes of different kinds (a stand-in change on the ``offs = `` line, whose IR is the same in
    both variants, then the division): two roots, so no trace reads the whole kernel (it is not one root's doing);
    the offsets root finds no IR difference (information, said once, nothing more appended); the division root
    differs in PTX at its lines but no finding follows from it, so it becomes information and says so."""
    import dataclasses

    b = compile_suite(CASES + "::division", ["approx", "ieee"], "sm80")
    a, o, va, vb = _pair(order, b)
    _, sd = rule_findings(b, a, o)
    (div,) = sd.semantic
    offs = _change("constant-changed", va, vb, "offs = ")
    out, unexplained = R.apply_roots([], a, o, va, vb, sd=dataclasses.replace(sd, changes=[offs, div]))
    by = {f.id: f for f in out}
    assert set(by) == {"source.constant-changed", "source.op-changed"} and unexplained == []
    same, op = by["source.constant-changed"], by["source.op-changed"]
    assert same.severity == "info" and "No TTIR/TTGIR/LLIR/PTX difference is traced" in same.explanation
    assert "No other finding follows" not in same.explanation
    assert op.severity == "info" and op.explanation.endswith(" No other finding follows from it.")
    assert "; PTX at these lines: " in op.explanation and "(whole kernel)" not in op.explanation
    assert op.explanation.startswith("What changed in the source")


@pytest.mark.parametrize("order", [("annotated", "plain"), ("plain", "annotated")])
def test_annotation_root_without_ir_difference_is_still_the_one_real_root(
    compile_suite, order: tuple[str, str]
) -> None:  # type: ignore[no-untyped-def]
    """``n: int`` and ``scale: float`` (the JIT specializes them alike): the annotation root's title says so (stage 0
    of both variants), its trace finds nothing (information); being a source change it is still the one real root,
    so a whole-kernel finding without line evidence follows it."""
    b = compile_suite(str(SUITES / "annot_scalars.py"), ["annotated", "plain"], "sm80")
    a, o, va, vb = _pair(order, b)
    sd = R.diff_sources(va, vb)
    whole = Finding("sass.instructions", "minor", "S", "S.", [], stage="sass")
    out, unexplained = R.apply_roots([whole], a, o, va, vb, sd=sd)
    assert [f.id for f in out] == ["source.annotation", "sass.instructions"] and unexplained == []
    root = out[0]
    assert root.title.startswith(
        "Source: 2 parameter annotations only in `annotated` (`n`: `int`; `scale`: `float`): the JIT specializes them "
        "alike in both (same type, divisibility, constant)"
    )
    # information in itself, raised to the severity of the whole-kernel count that follows it
    assert root.severity == "minor" and "No TTIR/TTGIR/LLIR/PTX difference is traced" in root.explanation
    assert whole.causes == ["source.annotation"] and "No other finding follows" not in root.explanation


@pytest.mark.parametrize("order", [("inside", "hoisted"), ("hoisted", "inside")])
def test_findings_using_a_moved_value_follow_the_claimer_or_the_root_from_either_side(
    compile_suite, order: tuple[str, str]
) -> None:  # type: ignore[no-untyped-def]
    """``scale = tl.load(s_ptr) * 0.5`` moved out of the loop. A finding cited at the TTGIR ``tt.store`` (which uses
    ``scale``) of either variant is linked by provenance: to the rule finding that claimed the move (its evidence on
    the moved line, in ``a`` only) when there is one, else to the ``source.moved`` root."""
    b = compile_suite(CASES + "::moved", ["inside", "hoisted"], "sm80")
    a, o, va, vb = _pair(order, b)
    _, sd = rule_findings(b, a, o)

    def stores() -> list[Finding]:
        return [
            Finding(f"x.store-{v}", "minor", "S", "S.", [Evidence(v, "ttgir", _ir_line(x, "ttgir", "tt.store"), "st")])
            for v, x in ((a, va), (o, vb))
        ]

    claimer = Finding("x.scale", "minor", "Scale", "C.", [Evidence(a, "python", line_of(va, "scale = "), "s")])
    linked = stores()
    out, unexplained = R.apply_roots([claimer, *linked], a, o, va, vb, sd=sd)
    assert not any(f.id.startswith("source.") for f in out) and unexplained == []
    assert claimer.causes == [] and [f.causes for f in linked] == [["x.scale"], ["x.scale"]]
    linked = stores()
    out, unexplained = R.apply_roots(linked, a, o, va, vb, sd=sd)
    assert [f.causes for f in linked] == [["source.moved"], ["source.moved"]] and unexplained == []


@pytest.mark.parametrize("order", [("inside", "hoisted"), ("hoisted", "inside")])
def test_a_finding_hit_by_several_roots_names_the_first_two(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """The move plus two stand-in changes of other kinds on the store line: a count cited at the TTGIR ``tt.store`` uses
    what all three change; it is linked to two of them (no attribute change among them), in root order."""
    import dataclasses

    b = compile_suite(CASES + "::moved", ["inside", "hoisted"], "sm80")
    a, o, va, vb = _pair(order, b)
    _, sd = rule_findings(b, a, o)
    (mv,) = sd.semantic
    extra = [_change(k, va, vb, "tl.store(") for k in ("op-changed", "call-added")]
    count = Finding(
        "ptx.memory-ops", "minor", "M", "M.", [Evidence(o, "ttgir", _ir_line(vb, "ttgir", "tt.store"), "st")]
    )
    out, unexplained = R.apply_roots([count], a, o, va, vb, sd=dataclasses.replace(sd, changes=[mv, *extra]))
    assert count.causes == ["source.moved", "source.op-changed"] and unexplained == []


@pytest.mark.parametrize("order", [("evict", "keep"), ("keep", "evict")])
def test_attribute_change_cause_by_side_and_by_kind(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """Which finding the ``evict_first`` attribute change follows: a change with a line on one side only roots or is
    claimed from that side (also when it spans two lines there); a root or claim on another line is not its cause,
    even when it is a hint call (a hint call only explains AxisInfo hint attributes); then the option or settings root
    that nothing causes; and a claimed change does not stop the changes after it from becoming roots."""
    import dataclasses

    b = compile_suite(CASES + "::streaming", ["evict", "keep"], "sm80")
    a, o, va, vb = _pair(order, b)
    fs, sd = rule_findings(b, a, o)
    (kw,) = sd.semantic

    def run(changes: list[SourceChange], findings: list[Finding]) -> dict[str, Finding]:
        out, _ = R.apply_roots(findings, a, o, va, vb, sd=dataclasses.replace(sd, changes=changes))
        return {f.id: f for f in out}

    # the keyword located on one side only: a root from either side; claimed by the rule, whose evidence is in
    # `evict` only, from that side (also when the change spans two lines there: the one before and its own)
    for side in ("a", "b"):
        one = dataclasses.replace(kw, **{f"line_{x}": None for x in "ab" if x != side})
        assert run([one], [])["ttir.attr-changed"].causes == ["source.kwarg-changed"]
    side = "a" if a == "evict" else "b"
    one = dataclasses.replace(kw, **{f"line_{x}": None for x in "ab" if x != side})
    assert run([one], copy.deepcopy(fs))["ttir.attr-changed"].causes == ["hint.cache"]
    ln = getattr(kw, f"line_{side}")
    two = dataclasses.replace(one, **{f"line_{side}": ln - 1, f"end_{side}": ln})
    by = run([two], copy.deepcopy(fs))
    assert by["ttir.attr-changed"].causes == ["hint.cache"] and not any(i.startswith("source.") for i in by)
    # a change after the claimed one is a root of its own, and not the attribute's cause
    by = run([kw, _change("constant-changed", va, vb, "inb = ")], copy.deepcopy(fs))
    assert by["ttir.attr-changed"].causes == ["hint.cache"] and "source.constant-changed" in by
    # a hint call on another line (a root, or claimed by a rule there): the options or settings root instead
    hint = _change("call-added", va, vb, "inb = ", text_a="inb = tl.multiple_of(offs, 4) < n")
    claimer = Finding("x.inb", "minor", "I", "I.", [Evidence(a, "python", hint.line_a, "i")])
    for root in ("options.changed", "settings.target-changed"):
        for findings in ([], [claimer]):
            top = Finding(root, "major", "R", "R.", [], stage="options")
            by = run([hint], [*copy.deepcopy(findings), top])
            assert by["ttir.attr-changed"].causes == [root]


@pytest.mark.parametrize("order", [("evict", "keep"), ("keep", "evict")])
def test_a_finding_using_the_changed_value_in_the_other_variant_follows_the_attribute(
    compile_suite, order: tuple[str, str]
) -> None:  # type: ignore[no-untyped-def]
    """The TTGIR ``tt.store`` of the other variant (``o``) uses the changed load too: linked to the attribute change."""
    b = compile_suite(CASES + "::streaming", ["evict", "keep"], "sm80")
    a, o, va, vb = _pair(order, b)
    _, sd = rule_findings(b, a, o)
    store = Finding("x.store", "minor", "S", "S.", [Evidence(o, "ttgir", _ir_line(vb, "ttgir", "tt.store"), "st")])
    out, unexplained = R.apply_roots([store], a, o, va, vb, sd=sd)
    assert store.causes == ["ttir.attr-changed"] and unexplained == []


@pytest.mark.parametrize("order", [("approx", "ieee"), ("ieee", "approx")])
def test_claimed_change_in_a_called_function_is_named_with_it(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """The division change as if it sat in a called ``@triton.jit`` function ``helper`` (same file): the claiming
    rule's title names the edit and the function (the kernel's name is what it is compared with)."""
    import dataclasses

    b = compile_suite(CASES + "::division", ["approx", "ieee"], "sm80")
    a, o, va, vb = _pair(order, b)
    fs, sd = rule_findings(b, a, o)
    (div,) = sd.semantic
    inner = dataclasses.replace(div, function="helper", function_b="helper")
    out, _ = R.apply_roots(fs, a, o, va, vb, sd=dataclasses.replace(sd, changes=[inner]))
    f = next(f for f in out if f.id == "precision.division")
    assert " in the called `@triton.jit` function `helper` (line " in f.title
    out, _ = R.apply_roots(rule_findings(b, a, o)[0], a, o, va, vb, sd=sd)
    assert "called" not in next(f for f in out if f.id == "precision.division").title


@pytest.mark.parametrize("order", [("bare", "hint"), ("hint", "bare")])
def test_hint_call_with_a_file_on_one_side_is_not_claimed_off_its_line(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """A hint call recorded in another file on one side (a called function whose lines are not the kernel's): the hint
    rule's evidence cannot be matched to it, so it does not claim it; it stays a source root."""
    import dataclasses

    b = compile_suite(CASES + "::hinted", ["bare", "hint"], "sm80")
    a, o, va, vb = _pair(order, b)
    fs, sd = rule_findings(b, a, o)
    hints = [c for c in sd.semantic if R._is_hint_change(c)]
    assert hints
    moved = [dataclasses.replace(c, file_a="<lib.hints>") if R._is_hint_change(c) else c for c in sd.changes]
    out, _ = R.apply_roots(fs, a, o, va, vb, sd=dataclasses.replace(sd, changes=moved))
    ids = {f.id for f in out}
    assert {R.source_id(c.kind) for c in hints} <= ids


@pytest.mark.parametrize("order", [("wide", "plain"), ("plain", "wide")])
def test_annotation_claim_with_python_evidence_elsewhere_still_cites_the_annotation(
    compile_suite, order: tuple[str, str]
) -> None:  # type: ignore[no-untyped-def]
    """The stage-0 finding of ``n: tl.int64`` also cites another Python line (the compare): that does not show the
    annotation, so the claim adds the annotated line of each variant."""
    b = compile_suite(str(SUITES / "annot_scalars.py"), ["wide", "plain"], "sm80")
    a, o, va, vb = _pair(order, b)
    fs, sd = rule_findings(b, a, o)
    spec = next(f for f in fs if f.id == "spec.type-changed")
    spec.evidence.append(Evidence(a, "python", line_of(va, "m = offs < n"), "m = offs < n"))
    R.apply_roots(fs, a, o, va, vb, sd=sd)
    cited = {(e.variant, e.line) for e in spec.evidence if e.text.startswith("source change: ")}
    assert cited == {
        ("wide", line_of(b.variants["wide"], "n: tl.int64")),
        ("plain", line_of(b.variants["plain"], "n,")),
    }


@pytest.mark.parametrize("swap", [False, True])
def test_settings_root_beside_an_attribute_change(compile_suite, swap: bool) -> None:  # type: ignore[no-untyped-def]
    """``evict`` for sm80 against ``keep`` for sm90: a keyword root, its attribute change and the settings root; the
    settings root has no lines, so the attribute change is not said in its explanation."""
    from irdiff.pipeline import load_pair

    b80 = compile_suite(CASES + "::streaming", ["evict", "keep"], "sm80")
    b90 = compile_suite(CASES + "::streaming", ["keep"], "sm90")
    bundle, x80, x90 = load_pair(Path(b80.directory) / "evict", Path(b90.directory) / "keep")
    a, o = (x90, x80) if swap else (x80, x90)
    out, _ = R.apply_roots([], a, o, bundle.variants[a], bundle.variants[o])
    by = {f.id: f for f in out}
    assert {"source.kwarg-changed", "ttir.attr-changed", "settings.changed"} <= set(by)
    assert by["ttir.attr-changed"].causes == ["source.kwarg-changed"]
    assert "evict_first" not in by["settings.changed"].explanation.split(" Downstream: ")[0]


def test_chains_reach_their_root_up_to_forty_links(compile_suite) -> None:  # type: ignore[no-untyped-def]
    """A chain of 40 links and one of 41 both reach their roots (the walk used to stop after 40 links and call the top
    of the longer chain unexplained; tests/test_roots_fixes.py has the long chains)."""
    b = compile_suite(CASES + "::streaming", ["evict", "keep"], "sm80")
    va, vb = b.variants["evict"], b.variants["keep"]

    def chain(p: str, n: int, root: str) -> list[Finding]:
        return [
            Finding(f"{p}{k}", "minor", "", "", [], causes=[f"{p}{k - 1}" if k > 1 else root]) for k in range(n, 0, -1)
        ]

    roots = [
        Finding("options.changed", "major", "", "", [], stage="options"),
        Finding("config.changed", "major", "", "", [], stage="options"),
    ]
    fs = [*chain("a", 40, "options.changed"), *chain("b", 41, "config.changed"), *roots]
    _, unexplained = R.apply_roots(fs, "evict", "keep", va, vb, sd=SourceDiff())
    assert unexplained == []


@pytest.mark.parametrize("order", [("plain", "restated"), ("restated", "plain")])
@pytest.mark.parametrize("stage", ["ptx", "sass"])
def test_hint_is_not_called_inert_when_the_whole_ptx_or_sass_differs(
    compile_suite, tmp_path: Path, order: tuple[str, str], stage: str
) -> None:  # type: ignore[no-untyped-def]
    """The restated hint (whole PTX and SASS equal: information, "only adds AxisInfo hint attributes") against a copy
    of ``restated`` whose PTX (or SASS) has one instruction more: something differs that no rule named, so the hint
    is not said to be inert."""
    import shutil

    b = compile_suite(str(SUITES / "hint_restated.py"), ["plain", "restated"], "sm80")
    src = b.variants["restated"]
    shutil.copytree(src.directory, tmp_path / "restated")
    edited = copy.copy(src)
    edited.directory = str(tmp_path / "restated")
    path = Path(edited.directory) / src.stages[stage]
    lines = path.read_text().splitlines(keepends=True)
    no = R._instructions(stage, R.stage_text(src, stage))[3][0]
    path.write_text("".join(lines[:no] + [lines[no - 1]] + lines[no:]))
    vs = {"plain": b.variants["plain"], "restated": edited}
    a, o = order
    _, sd = rule_findings(b, a, o)
    out, _ = R.apply_roots([], a, o, vs[a], vs[o], sd=sd)
    src_root = out[0]
    assert src_root.id.startswith("source.") and "It only adds AxisInfo hint attributes" not in src_root.explanation
    assert f"{stage.upper()} (whole kernel): " in src_root.explanation


def test_whole_kernel_delta_needs_both_texts(compile_suite) -> None:  # type: ignore[no-untyped-def]
    """A variant without SASS (no disassembler) makes no SASS instruction of the other look one-sided."""
    b = compile_suite(CASES + "::division", ["approx", "ieee"], "sm80")
    va, vb = b.variants["approx"], b.variants["ieee"]
    blind = copy.copy(vb)
    blind.stages = {k: v for k, v in vb.stages.items() if k != "sass"}
    assert R._whole_delta(va, blind, "sass") == ({}, {}) == R._whole_delta(blind, va, "sass")
    assert R._whole_delta(va, vb, "sass") != ({}, {})


def test_first_diverging_pass_that_only_records_the_option_and_no_pass_changes_code(
    compile_suite, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """``w4``'s snapshots against copies where, from one pass on, only the recorded ``ttg.num-warps`` differs (no pass
    changes the code): the root names the pass whose output differs first and says nothing about a later code pass."""
    w4 = compile_suite(CASES + "::warps", ["w8", "w4"], "sm90", passes=True).variants["w4"]
    from irdiff.diagnose.passes import first_diverging_pass, pass_names

    names = pass_names(w4)
    k = next(
        i for i, fn in enumerate(w4.passes) if '"ttg.num-warps" = 4' in (Path(w4.directory) / "passes" / fn).read_text()
    )
    other = _snapshots(
        tmp_path, w4, "w16", lambda pos, t: t.replace('"ttg.num-warps" = 4', '"ttg.num-warps" = 16') if pos >= k else t
    )
    for a, o, va, vb in (("w4", "w16", w4, other), ("w16", "w4", other, w4)):
        pd = first_diverging_pass(va, vb)
        assert pd is not None and pd.records_only and pd.code_pass == "" and pd.pass_name == names[k - 1]
        p = R._pass_finding(a, o, va, vb, [])
        assert p is not None and p.title == f"First diverging pass: `{names[k - 1]}`"
        assert p.explanation == (
            f"The per-pass snapshots are equal up to `{names[k - 1]}`, whose output differs first. Its output hunk is "
            "in the evidence."
        )


def _notf32_dots(compile_suite) -> tuple[Any, Any]:  # type: ignore[no-untyped-def]
    """The real first dots of ``kinds.py::notf32`` (``allow_tf32=False``: ``ieee``, FMA, 64×64×64 fp32) and
    ``default`` (``tf32``, ``mma_v2``) on sm80, as :func:`extract_mech_facts` reads them."""
    from irdiff.diagnose.mechfacts import extract_mech_facts

    b = compile_suite(str(SUITES / "kinds" / "kinds.py") + "::notf32", ["notf32", "default"], "sm80")
    fma, mma = (extract_mech_facts(b.variants[n]).dots[0] for n in ("notf32", "default"))
    assert (fma.precision, fma.lowering, mma.precision, mma.lowering) == ("ieee", "fma", "tf32", "mma_v2")
    return fma, mma


def test_dot_notes_names_each_side_of_each_dot_mechanism(compile_suite) -> None:  # type: ignore[no-untyped-def]
    """Every sentence of ``_dot_notes`` on the real dots of ``notf32``/``default`` and copies of them with one field
    changed (``dataclasses.replace``), with ``more`` on either side: the note names ``more``'s value and the other
    variant's, and is None whenever ``more``'s dot is not the costlier one (same value, or the other side wider)."""
    import dataclasses

    fma, mma = _notf32_dots(compile_suite)

    def note(fid: str, x: Any, y: Any, more: str = "x") -> str | None:
        return R._dot_notes(fid, "x", "y", more, ([x], [y]))

    # no dot on one side: nothing to say
    assert R._dot_notes("mma.lowering", "x", "y", "x", ([], [mma])) is None
    assert R._dot_notes("mma.lowering", "x", "y", "x", ([fma], [])) is None
    # mma.lowering: FMA named only when the FMA side has more; MMA kinds named per variant; same or unknown: None
    fma_note = "`{}` lowers the dot to FMA: each thread keeps the operand slices of all its outputs"
    assert note("mma.lowering", fma, mma, "x") == fma_note.format("x")
    assert note("mma.lowering", mma, fma, "y") == fma_note.format("y")
    assert note("mma.lowering", fma, mma, "y") is None and note("mma.lowering", mma, fma, "x") is None
    wg = dataclasses.replace(mma, lowering="wgmma")
    for more in ("x", "y"):
        assert note("mma.lowering", mma, wg, more) == (
            "the dot is lowered to `mma_v2` in `x` and `wgmma` in `y`: the operand and accumulator fragments each "
            "thread holds differ"
        )
        assert note("mma.lowering", mma, mma, more) is None
        assert note("mma.lowering", dataclasses.replace(mma, lowering=""), wg, more) is None
        assert note("mma.lowering", wg, dataclasses.replace(mma, lowering=""), more) is None
    # precision.dot-input
    x3 = dataclasses.replace(mma, precision="tf32x3")
    split = (
        "`{}` uses input precision `tf32x3` (`{}`: `{}`): each fp32 operand is split into a high and a low part, "
        "both kept in registers for several MMAs"
    )
    assert note("precision.dot-input", x3, mma, "x") == split.format("x", "y", "tf32")
    assert note("precision.dot-input", mma, x3, "y") == split.format("y", "x", "tf32")
    assert note("precision.dot-input", x3, dataclasses.replace(mma, precision=""), "x") == split.format(
        "x", "y", "none"
    )
    assert note("precision.dot-input", x3, mma, "y") is None  # tf32 in `more`: no extra parts
    assert note("precision.dot-input", x3, dataclasses.replace(mma, precision="bf16x3"), "x") is None
    ieee = "`{}` uses input precision `ieee` (`{}`: `tf32`), which the tensor cores cannot run: its fp32 products are FMA instructions"
    assert note("precision.dot-input", fma, mma, "x") == ieee.format("x", "y")
    assert note("precision.dot-input", mma, fma, "y") == ieee.format("y", "x")
    assert note("precision.dot-input", fma, mma, "y") is None  # tf32 against ieee: neither sentence fits
    assert note("precision.dot-input", fma, fma, "x") is None and note("precision.dot-input", x3, x3, "x") is None
    # precision.dot-accumulate: max_num_imprecise_acc (None = never promoted), accumulator width, a second tile
    acc = "precision.dot-accumulate"
    promote = "`{}` promotes partial sums into a second fp32 accumulator more often (`max_num_imprecise_acc`)"
    m32, m64 = (dataclasses.replace(mma, max_imprecise_acc=n) for n in (32, 64))
    assert note(acc, m32, m64, "x") == promote.format("x") and note(acc, m64, m32, "y") == promote.format("y")
    assert note(acc, m32, mma, "x") == promote.format("x") and note(acc, mma, m32, "y") == promote.format("y")
    assert note(acc, mma, m32, "x") is None and note(acc, m64, m32, "x") is None
    assert note(acc, m32, m32, "x") is None and note(acc, mma, mma, "x") is None
    wider = "`{}` accumulates in `{}` (`{}`: `{}`): wider registers"
    for hi, lo in (("f64", "f32"), ("f32", "f16"), ("f32", "bf16"), ("i32", "f16"), ("f64", "i32"), ("f16", "x8")):
        h, lw = dataclasses.replace(mma, acc_type=hi), dataclasses.replace(mma, acc_type=lo)
        assert note(acc, h, lw, "x") == wider.format("x", hi, "y", lo)
        assert note(acc, lw, h, "y") == wider.format("y", hi, "x", lo)
        assert note(acc, lw, h, "x") is None and note(acc, h, lw, "y") is None
    for s, t in (("f32", "i32"), ("i32", "f32"), ("f16", "bf16"), ("bf16", "f16"), ("x8", "x8"), ("f32", "f32")):
        assert note(acc, dataclasses.replace(mma, acc_type=s), dataclasses.replace(mma, acc_type=t), "x") is None
    sep = dataclasses.replace(mma, acc_chained=False)  # `acc += tl.dot(a, b)`: a second tile
    tile = (
        "`{}` adds the product afterwards (`acc += tl.dot(a, b)`): the MMA result is a second accumulator tile in "
        "registers"
    )
    assert note(acc, sep, mma, "x") == tile.format("x") and note(acc, mma, sep, "y") == tile.format("y")
    assert note(acc, mma, sep, "x") is None and note(acc, sep, sep, "x") is None
    assert note("precision.fp64", fma, mma, "x") is None


def _story(b: Bundle, a: str, o: str, regs: dict[str, int], *ids: str, dots: Any = None) -> Finding:
    """``register_story`` of ``a`` against ``o`` with the variants' register counts set to ``regs`` (the IR is the
    compiled one; only the count that picks ``more`` is chosen) and plain findings ``ids`` beside it."""
    f = Finding("resources.registers", "minor", "Registers", "R.", [], causes=["stale"], stage="resources")  # type: ignore[arg-type]
    va, vb = _with_regs(b.variants[a], regs[a]), _with_regs(b.variants[o], regs[o])
    R.register_story(f, a, o, va, vb, [f, *(Finding(i, "minor", "", "", []) for i in ids)], dots=dots)
    return f


@pytest.mark.parametrize("order", [("notf32", "default"), ("default", "notf32")])
def test_register_story_dot_mechanisms_with_the_fma_side_costlier(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """``notf32`` (``ieee``, FMA on ``#blocked1``) given more registers than ``default`` (``tf32``, MMA): the lowering's
    note names it once (the ``ieee`` note, which says FMA again, only adds its cause), the dots are read from the
    variants whenever any one dot mechanism finding is there, at most three causes are kept, and a layout finding
    fits without its generic note (one side has no MMA layout) while the other generic notes stay."""
    import dataclasses

    b = compile_suite(str(SUITES / "kinds" / "kinds.py") + "::notf32", ["notf32", "default"], "sm80")
    a, o = order
    regs = {"notf32": 40, "default": 30}
    fma_note = "`notf32` lowers the dot to FMA: each thread keeps the operand slices of all its outputs"
    blocked_note = "`notf32` lowers the dot to FMA (blocked layout), the other to MMA"
    ieee = (
        "`notf32` uses input precision `ieee` (`default`: `tf32`), which the tensor cores cannot run: its fp32 "
        "products are FMA instructions"
    )
    fp64 = "fp64 values take two 32-bit registers each"
    both = ("mma.lowering", "precision.dot-input", "precision.dot-accumulate", "precision.fp64", "layout.mma")
    f = _story(b, a, o, regs, *both)
    assert f.explanation.startswith(f"R. Evidence for the difference: {fma_note}; {fp64}.")
    assert f.causes == ["mma.lowering", "precision.dot-input", "precision.fp64"]
    for fid in ("mma.lowering", "precision.dot-input"):  # any one dot finding makes the story read the dots
        f = _story(b, a, o, regs, fid)
        first = fma_note if fid == "mma.lowering" else f"{ieee}; {blocked_note}"
        assert f.explanation.startswith(f"R. Evidence for the difference: {first}."), f.explanation
        assert f.causes == [fid]
    f = _story(b, a, o, regs, "layout.mma", "settings.changed")
    assert f.explanation.startswith(f"R. Evidence for the difference: {blocked_note}.")
    assert "another MMA layout" not in f.explanation and f.causes == ["layout.mma", "settings.changed"]
    f = _story(b, a, o, regs, "ttir.i64-index-math")
    assert "64-bit index math takes two registers per index" in f.explanation
    assert f.causes == ["ttir.i64-index-math"]
    # dots handed in are the ones read (not the variants'): a second accumulator tile on `notf32`'s side
    fx, mx = _notf32_dots(compile_suite)
    sep = dataclasses.replace(fx, acc_chained=False)
    given = ([sep], [mx]) if a == "notf32" else ([mx], [sep])
    f = _story(b, a, o, regs, "precision.dot-accumulate", dots=given)
    assert f.explanation.startswith(
        "R. Evidence for the difference: `notf32` adds the product afterwards (`acc += tl.dot(a, b)`): the MMA result "
        f"is a second accumulator tile in registers; {blocked_note}."
    )
    # a dot mechanism with nothing to say does not stop the ones after it
    f = _story(b, a, o, regs, "mma.lowering", "precision.fp64", dots=([mx], [mx]))
    assert f.explanation.startswith(f"R. Evidence for the difference: {fp64}; {blocked_note}.")
    assert f.causes == ["precision.fp64"]


@pytest.mark.parametrize("order", [("dot3", "dot3w8"), ("dot3w8", "dot3")])
def test_register_story_reads_the_first_dot_of_each_side_and_keeps_earlier_fits(
    compile_suite, order: tuple[str, str]
) -> None:  # type: ignore[no-untyped-def]
    """``dot3`` (4 warps) and ``dot3w8`` (8 warps), both MMA: the layout finding's generic note stays unless the
    first dot handed in for a side is FMA (a second dot's lowering is not read); the tile cause is added after a
    mechanism's, not in its place."""
    b = compile_suite(str(SUITES / "diag_loop.py"), ["dot3", "dot3w8"], "sm86")
    a, o = order
    fx, mx = _notf32_dots(compile_suite)
    regs = {"dot3": 90, "dot3w8": 60}
    generic = "another MMA layout changes the fragment sizes per thread"
    f = _story(b, a, o, regs, "layout.mma", dots=([mx, fx], [mx]))
    assert generic in f.explanation and f.causes == ["layout.mma"]
    f = _story(b, a, o, regs, "layout.mma", dots=([fx], [mx]))
    assert generic not in f.explanation and f.causes == ["layout.mma"]
    f = _story(b, a, o, regs, "precision.fp64", "options.changed")
    assert f.causes == ["precision.fp64", "options.changed"]


@pytest.mark.parametrize("order", [("acqrel", "relaxed"), ("relaxed", "acqrel")])
def test_trace_says_nothing_else_differs_only_from_ttir_and_ttgir(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """``_add_trace`` on the only root of a pair, on its own. ``sem="relaxed"``: TTIR/TTGIR differ at the atomic's
    line only (the PTX also elsewhere, which the sentence does not speak of), so a root there says "Nothing else
    differs in TTIR/TTGIR" even with the PTX traced; a root with no lines (a settings root) traces nothing and says
    nothing. ``tl.multiple_of`` beside ``other=0.0`` (``hint_beside.py``): the TTIR differs away from the root's
    line (the TTGIR does not), so no such sentence; the whole-kernel PTX delta alone makes a minor root major."""
    b = compile_suite(MECH_ROOTS + "::atomsem", ["acqrel", "relaxed", "acquire", "release", "cta", "maxop"], "sm80")
    a, o = order
    va, vb = b.variants[a], b.variants[o]
    sd = diff_sources(va, vb)
    nothing = "Nothing else differs in TTIR/TTGIR."
    g = Finding("source.kwarg-changed", "minor", "T", "E.", [])
    la, lb = {line_of(va, "tl.atomic_add")}, {line_of(vb, "tl.atomic_add")}
    R._add_trace(R._Root(g, la, lb), a, o, va, vb, [], sd, [g], False)
    assert nothing in g.explanation and "PTX at these lines" in g.explanation
    s = Finding("settings.changed", "minor", "T", "E.", [])
    R._add_trace(R._Root(s, set(), set()), a, o, va, vb, [], sd, [s], False)
    assert s.explanation == "E." and s.severity == "minor"
    h = compile_suite(str(SUITES / "hint_beside.py"), ["plain", "contig", "multiple", "evict"], "sm80")
    for x, y in (("plain", "multiple"), ("multiple", "plain")):
        vx, vy = h.variants[x], h.variants[y]
        g = Finding("source.kwarg-changed", "minor", "T", "E.", [])
        row = ({line_of(vx, "row = tl.program_id")}, {line_of(vy, "row = tl.program_id")})
        R._add_trace(R._Root(g, *row), x, y, vx, vy, [], diff_sources(vx, vy), [g], True)
        assert nothing not in g.explanation and "No TTIR/TTGIR/LLIR/PTX difference" not in g.explanation
        assert "PTX (whole kernel)" in g.explanation and g.severity == "major"


@pytest.mark.parametrize("order", [("kloop2", "kloop4"), ("kloop4", "kloop2")])
def test_trace_sees_a_ttgir_only_difference_elsewhere(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """``num_stages`` 2 vs 4 on a K loop (``diag_mech.py``): the TTIR is the same, the TTGIR pipelines differently
    (same layout definitions): a root on the ``rm = tl.arange`` line must not say "Nothing else differs"."""
    b = compile_suite(str(SUITES / "diag_mech.py"), ["kloop2", "kloop4"], "sm80")
    a, o = order
    va, vb = b.variants[a], b.variants[o]
    assert R._layouts(va) == R._layouts(vb)
    g = Finding("source.kwarg-changed", "minor", "T", "E.", [])
    rm = ({line_of(va, "rm = tl.arange")}, {line_of(vb, "rm = tl.arange")})
    R._add_trace(R._Root(g, *rm), a, o, va, vb, [], diff_sources(va, vb), [g], True)
    assert "Nothing else differs" not in g.explanation


@pytest.mark.parametrize("order", [("fp8_default", "fp8_acc32"), ("fp8_acc32", "fp8_default")])
def test_register_story_reads_the_dots_for_an_accumulation_finding_alone(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """An fp8 ``wgmma`` dot on sm90 with ``max_num_imprecise_acc=32`` against the default (no promotion; TTIR prints
    none or a value past 2**30): with ``precision.dot-accumulate`` the only dot finding and no dots handed in, the
    story reads the variants' dots and names the promoting side when it has more registers (the counts are set:
    the compiled ones depend on the Triton version; 93 vs 64 under 3.9), and nothing when the other side has."""
    b = compile_suite(str(SUITES / "diag_mech.py"), ["fp8_default", "fp8_acc32"], "sm90")
    a, o = order
    acc = "precision.dot-accumulate"
    f = _story(b, a, o, {"fp8_acc32": 93, "fp8_default": 64}, acc)
    assert (
        "`fp8_acc32` promotes partial sums into a second fp32 accumulator more often (`max_num_imprecise_acc`)"
        in f.explanation
    )
    assert f.causes == [acc]
    f = _story(b, a, o, {"fp8_acc32": 64, "fp8_default": 93}, acc)
    assert "promotes partial sums" not in f.explanation and f.causes == []


@pytest.mark.parametrize("order", [("plain", "hinted"), ("hinted", "plain")])
def test_hint_change_with_a_file_on_one_side_is_not_traced_in_the_kernel(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """``base = tl.multiple_of(base, 4)`` (tests/suites/hint_statement.py, sm80, only in ``hinted``, kernel line 25)
    recorded with a file on the ``plain`` side (its counterpart in a called function's file): a hint change with a
    file on either side is not looked up in the kernel's flow (its lines may be another file's), so the source root
    quotes no ``tt.divisibility = dense<4>`` attribute (of the kernel's ``base = pid * stride``, line 24), only the
    whole-kernel PTX/SASS downstream."""
    import dataclasses

    b = compile_suite(str(SUITES / "hint_statement.py"), ["plain", "hinted"], "sm80")
    a, o, va, vb = _pair(order, b)
    fs, sd = rule_findings(b, a, o)
    side = "file_a" if a == "plain" else "file_b"
    moved = [dataclasses.replace(c, **{side: "<lib.hints>"}) if R._is_hint_change(c) else c for c in sd.changes]
    assert moved != sd.changes
    out, _ = R.apply_roots(fs, a, o, va, vb, sd=dataclasses.replace(sd, changes=moved))
    (root,) = [f for f in out if f.id.startswith("source.")]
    assert "base = tl.multiple_of(base, 4)" in root.title
    assert "dense<4>" not in root.explanation and "differs only in its attributes" not in root.explanation
    assert "Downstream: PTX (whole kernel): " in root.explanation


# ------------------------------------------------------------------------------------------------ dot and product notes

TILES = str(SUITES / "tile_products.py") + "::dot-tiles"


@pytest.fixture(scope="module")
def tiles(compile_suite):  # type: ignore[no-untyped-def]
    return compile_suite(TILES, ["f64s", "f64l", "f32s", "f32l", "f32ieee", "sum", "sumtiny"], "sm80")


def _acc(b: Bundle, v: str) -> int:
    d = R._dot_facts(b.variants[v])
    assert d is not None and d[1] == "mma"
    return d[0]


@pytest.mark.parametrize(
    ("order", "kinds", "fp64"),
    [
        (("f64s", "f64l"), "fp64", True),
        (("f64l", "f64s"), "fp64", True),
        (("f64s", "f32l"), "fp64 (`f64s`) / fp32 (`f32l`)", True),
        (("f32l", "f64s"), "fp32 (`f32l`) / fp64 (`f64s`)", True),
        (("f32s", "f32l"), "fp32", False),
        (("f32l", "f32s"), "fp32", False),
    ],
)
def test_register_story_names_each_accumulator_type_and_the_fp64_register_pair(  # type: ignore[no-untyped-def]
    tiles, order: tuple[str, str], kinds: str, fp64: bool
) -> None:
    """Two MMA dots of different tiles: the accumulator values per thread (tile ÷ 128 threads: 8 for 32x32, 32 for
    64x64) with each variant's accumulator type, named once when both are the same, per variant when they differ;
    an fp64 accumulator on either side adds that each fp64 value takes two 32-bit registers."""
    a, o = order
    assert (_acc(tiles, a), _acc(tiles, o)) == tuple(8 if v.endswith("s") else 32 for v in order)
    f = _regs(tiles, a, o)
    said = (
        f"the dot accumulator holds {_acc(tiles, a)} {kinds} values per thread in `{a}` and {_acc(tiles, o)} in `{o}` "
        "(tile ÷ threads" + ("; an fp64 value takes two 32-bit registers" if fp64 else "") + ")"
    )
    assert said in f.explanation
    # the larger tile is the variant with more registers: a constexpr change explains it, in either order
    assert _regs(tiles, a, o, Finding("spec.constexpr-changed", "major", "", "", [])).causes == [
        "spec.constexpr-changed"
    ]


@pytest.mark.parametrize("order", [("sum", "f32s"), ("f32s", "sum")])
def test_register_story_counts_an_fp32_product_one_register_a_value(tiles, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """A scaled broadcast multiply of 32x16x32 fp32 values summed over K holds 128 products per thread (one 32-bit
    register each) against the MMA dot's 8 accumulators: the product variant has more registers and is named."""
    a, o = order
    assert tiles.variants["sum"].resources.registers > tiles.variants["f32s"].resources.registers  # type: ignore[operator]
    assert (
        "`sum` computes the product without `tt.dot` (FMA): a broadcast multiply of a 32x16x32 fp32 tile summed by "
        "`tt.reduce`, 128 fp32 values (128 32-bit registers) per thread before the sum; `f32s`'s dot is MMA with 8 "
        "fp32 accumulator values per thread" in _regs(tiles, a, o).explanation
    )


@pytest.mark.parametrize("order", [("sum", "f32ieee"), ("f32ieee", "sum")])
def test_register_story_names_a_product_against_an_fma_dot(tiles, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """Against a dot that is FMA itself (``input_precision="ieee"``: ``#blocked``), the 32x16x32 product still holds
    128 values per thread against the dot's 8 accumulators, and the note says the dot's lowering as it is."""
    a, o = order
    assert tiles.variants["sum"].resources.registers > tiles.variants["f32ieee"].resources.registers  # type: ignore[operator]
    assert R._dot_facts(tiles.variants["f32ieee"])[1].startswith("blocked")  # type: ignore[index]
    f = _regs(tiles, a, o)
    assert (
        "`sum` computes the product without `tt.dot` (FMA): a broadcast multiply of a 32x16x32 fp32 tile summed by "
        "`tt.reduce`, 128 fp32 values (128 32-bit registers) per thread before the sum; `f32ieee`'s dot is FMA "
        "(blocked layout) with 8 fp32 accumulator values per thread" in f.explanation
    )
    assert "Not explained" not in f.explanation


@pytest.mark.parametrize("order", [("sumtiny", "f32l"), ("f32l", "sumtiny")])
def test_register_story_names_a_product_only_when_it_has_more_registers(tiles, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """A 16x8x16 product (16 values per thread) has fewer registers than a 64x64 MMA dot (32 accumulators per
    thread): the product note does not explain the dot variant's extra registers."""
    a, o = order
    assert tiles.variants["sumtiny"].resources.registers < tiles.variants["f32l"].resources.registers  # type: ignore[operator]
    assert R._reduce_product(tiles.variants["sumtiny"]) == ("16x8x16", 16, "fp32")
    assert "computes the product without `tt.dot`" not in _regs(tiles, a, o).explanation


# ------------------------------------------------------------------------------------------------ transposed roots

TRANSPOSED = str(SUITES / "transposed_access.py")


@pytest.mark.parametrize("order", [("rowmaj", "colmaj"), ("colmaj", "rowmaj")])
def test_a_source_root_nothing_follows_is_not_named_the_transposed_access(
    compile_suite, order: tuple[str, str]
) -> None:  # type: ignore[no-untyped-def]
    """The index expression that transposes ``src``'s load is the source root; with the rules' findings it is
    retitled as the transposed access. Handed no rule finding, nothing follows from it: it is information and keeps
    its own title (an access it transposes is not said where no effect is)."""
    b = compile_suite(TRANSPOSED, ["rowmaj", "colmaj"], "sm80")
    a, o = order
    fs, sd = rule_findings(b, a, o)
    out, _ = R.apply_roots(fs, a, o, b.variants[a], b.variants[o], sd=sd)
    (root,) = [f for f in out if f.id.startswith("source.")]
    assert root.severity != "info" and "the load reads `src` transposed in `colmaj` (column-major)" in root.title
    out, _ = R.apply_roots([], a, o, b.variants[a], b.variants[o], sd=sd)
    (alone,) = out
    assert alone.id == root.id and alone.severity == "info"
    assert "transposed" not in alone.title and "transposed" not in alone.explanation


@pytest.mark.parametrize("order", [("t0", "t1"), ("t1", "t0")])
def test_only_a_configuration_root_is_named_the_transposed_access(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """Same source, the constexpr ``T`` picks the index expression: ``config.changed`` names the transposed access.
    Without a ``config.changed`` finding nothing is retitled (and nothing fails); one that follows from another
    finding is no root and keeps its title."""
    b = compile_suite(TRANSPOSED, ["t0", "t1"], "sm80")
    a, o = order
    va, vb = b.variants[a], b.variants[o]
    fs, sd = rule_findings(b, a, o)
    assert not [c for c in sd.semantic if c.kind != "option"]
    out, _ = R.apply_roots(copy.deepcopy(fs), a, o, va, vb, sd=sd)
    cfg = next(f for f in out if f.id == "config.changed")
    assert "the load reads `src` transposed in `t1` (column-major), row-major in `t0`" in cfg.title
    rest = [f for f in fs if f.id != "config.changed"]
    out, _ = R.apply_roots(copy.deepcopy(rest), a, o, va, vb, sd=sd)
    assert not any("transposed" in f.title for f in out)
    led = copy.deepcopy(fs)
    cfg = next(f for f in led if f.id == "config.changed")
    title = cfg.title
    cfg.causes = ["settings.changed"]
    led.append(Finding("settings.changed", "major", "Settings differ", "S.", []))
    out, _ = R.apply_roots(led, a, o, va, vb, sd=sd)
    assert next(f for f in out if f.id == "config.changed").title == title


@pytest.mark.parametrize("order", [("f32ieee", "sumtiny"), ("sumtiny", "f32ieee")])
def test_register_story_of_an_fma_dot_against_a_product_names_no_mma_layout(tiles, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """An FMA dot (``input_precision="ieee"``) with more registers than a 16x8x16 broadcast product: neither side
    has an MMA layout, so a ``layout.mma`` finding fits without the "another MMA layout" note, whether
    ``apply_roots`` hands in the dots ``diagnose`` extracted or the story reads them itself (no product note: the
    product side has fewer registers)."""
    from irdiff.diagnose.mechfacts import extract_mech_facts

    a, o = order
    va, vb = tiles.variants[a], tiles.variants[o]
    assert tiles.variants["f32ieee"].resources.registers > tiles.variants["sumtiny"].resources.registers  # type: ignore[operator]
    dots = (extract_mech_facts(va).dots, extract_mech_facts(vb).dots)
    assert [d.lowering for d in dots[order.index("f32ieee")][:1]] == ["fma"] and not dots[order.index("sumtiny")]
    _, sd = rule_findings(tiles, a, o)
    for kw in ({"dots": dots}, {}):
        reg = Finding("resources.registers", "minor", "R", "R.", [], stage="resources")
        R.apply_roots([reg, Finding("layout.mma", "minor", "", "", [])], a, o, va, vb, sd=sd, **kw)  # type: ignore[arg-type]
        assert "layout.mma" in reg.causes
        assert "another MMA layout" not in reg.explanation and "computes the product" not in reg.explanation
