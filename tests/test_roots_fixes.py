"""Defects of the root engine (irdiff/diagnose/roots.py) found by review, each on real compiled pairs, both orders:

* a hint written as a statement of its own (``col = tl.max_contiguous(col, TILE)``) beside another source root: the
  hint's ``tt.contiguity``/``tt.divisibility`` lands on the op defining the hinted value, a line above the call, so
  the hint's source root traced nothing at its own line and said "No TTIR/TTGIR/LLIR/PTX difference is traced" while
  the attribute change named it as its cause;
* a keyword on a continuation line of a multi-line ``tl.load(…)``: the load's ops are located at the call's first
  line, so the keyword's root traced the load as present in one variant only;
* ``reaches`` (is a finding's chain linked to a root) stopped at a depth of 40 and remembered the cut as a definite
  "no", so every finding of a longer chain, and later queries from shallower starts, were called unexplained.

Kernels: ``tests/suites/hint_beside.py`` (new), ``tests/suites/root_cases.py::division``."""

from __future__ import annotations

import re

import pytest

from irdiff.bundle import Bundle
from irdiff.diagnose import roots as R
from irdiff.diagnose.model import Finding
from tests.test_roots_apply import CASES, SUITES, line_of, rule_findings, run_roots

BESIDE = str(SUITES / "hint_beside.py")
NOTHING = "No TTIR/TTGIR/LLIR/PTX difference is traced"


@pytest.fixture(scope="module")
def beside(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(BESIDE, ["plain", "contig", "multiple", "evict"], "sm80")


@pytest.mark.parametrize(
    ("hinted", "call", "attr"),
    [
        ("contig", "col = tl.max_contiguous(col, TILE)", "tt.contiguity = dense<256>"),
        ("multiple", "col = tl.multiple_of(col, 16)", "tt.divisibility = dense<16>"),
    ],
)
@pytest.mark.parametrize("swap", [False, True])
def test_hint_statement_root_names_the_attribute_on_the_hinted_value(
    beside: Bundle, hinted: str, call: str, attr: str, swap: bool
) -> None:
    a, o = ("plain", hinted) if not swap else (hinted, "plain")
    by, _ids, unexplained = run_roots(beside, a, o)
    src, kw, at = by["source.statement"], by["source.kwarg-changed"], by["ttir.attr-changed"]
    assert unexplained == []
    assert f"statement `{call}` only in `{hinted}`" in src.title
    # the hint's attribute is on the `tt.make_range` of `col = tl.arange(0, TILE)`, the line above the call
    above = line_of(beside.variants[hinted], "col = tl.arange(0, TILE)")
    assert above + 1 == line_of(beside.variants[hinted], call)
    assert at.causes == ["source.statement"] and f"line {above} of `{hinted}`" in at.title
    assert NOTHING not in src.explanation and src.severity == "minor"
    said = (
        f"TTIR `tt.make_range` from line {line_of(beside.variants[a], 'col = tl.arange')} of `{a}` (line "
        f"{line_of(beside.variants[o], 'col = tl.arange')} of `{o}`) differs only in its attributes: "
    )
    assert said in src.explanation
    side = src.explanation.split(said, 1)[1]
    mine = f"`{attr}` (" if hinted == a else "nothing"
    theirs = f"`{attr}` (" if hinted == o else "nothing"
    assert side.startswith(f"{mine}") and f"in `{a}`, {theirs}" in side
    assert f"TTIR at these lines: `% = tt.make_range {{end = 256` in `{a}`" in src.explanation
    # the other root keeps its own lines: the load gaining `other=0.0`, not the hint
    assert "`tl.load` has `other=0.0`" in kw.title and attr not in kw.explanation


@pytest.mark.parametrize("swap", [False, True])
def test_keyword_on_a_continuation_line_traces_the_whole_call(beside: Bundle, swap: bool) -> None:
    a, o = ("plain", "evict") if not swap else ("evict", "plain")
    by, _ids, _ = run_roots(beside, a, o)
    kw = by["source.kwarg-changed"]
    ev = beside.variants["evict"]
    first, keyword = line_of(ev, "x = tl.load("), line_of(ev, 'eviction_policy="evict_last"')
    assert keyword == first + 3
    assert f"line {keyword} of `evict`" in kw.title
    m = re.search(rf"TTIR at these lines: (.*?) in `{a}` where `{o}` has (.*?);", kw.explanation)
    assert m is not None, kw.explanation
    load = {a: m.group(1), o: m.group(2)}
    # the load on both sides (3.9 prints `cachePolicy = #tt.cache_policy<…>`, 3.6 `evictionPolicy = evict_last`)
    assert load["plain"] == "`% = tt.load %, %`"
    assert load["evict"].startswith("`% = tt.load %, % ") and "evict_last" in load["evict"]
    assert "where `evict` has nothing" not in kw.explanation and "`plain` has nothing" not in kw.explanation
    # the eviction story now sees the hinted PTX at the call's lines
    assert "`ld.global.L1::evict_last.L2::cache_hint.b32`" in kw.explanation
    assert "Only in `evict`'s PTX/SASS: `createpolicy.fractional.L2::evict_last.b64`" in kw.explanation


def _chain(n: int) -> list[Finding]:
    """``link0`` caused by ``link1`` … caused by ``link{n-1}``, caused by ``precision.division`` (a root)."""
    return [
        Finding(
            f"link{i}", "minor", f"L{i}", f"L{i}.", [], causes=[f"link{i + 1}" if i + 1 < n else "precision.division"]
        )
        for i in range(n)
    ]


def test_reaches_follows_a_chain_of_any_length_in_any_query_order() -> None:
    chain = _chain(60)
    by_id = {f.id: f for f in chain}
    roots = {"precision.division"}
    memo: dict[str, bool] = {}
    # the deepest start first (the old depth cut said no and remembered it for link0..link40), then the others
    assert R._reaches("link0", by_id, roots, memo)
    assert all(R._reaches(f"link{i}", by_id, roots, memo) for i in range(60))
    memo = {}
    assert all(R._reaches(f"link{i}", by_id, roots, memo) for i in reversed(range(60)))
    # a cycle, and a cause that names no finding, reach nothing; the no is definite and remembered for the walk
    loop = [
        Finding("x", "minor", "X", "X.", [], causes=["y"]),
        Finding("y", "minor", "Y", "Y.", [], causes=["x", "gone"]),
    ]
    by_id = {f.id: f for f in loop}
    memo = {}
    assert not R._reaches("x", by_id, roots, memo) and memo == {"x": False, "y": False, "gone": False}
    assert not R._reaches("y", by_id, roots, memo)
    # a root itself, and a finding joining a chain already known to reach one
    memo = {"link5": True}
    assert R._reaches("precision.division", {}, roots, memo)
    late = Finding("late", "minor", "Late", "Late.", [], causes=["x", "link5"])
    assert R._reaches("late", {"late": late, **by_id}, set(), memo) and memo["late"]
    # a known no is not walked again, and does not stop a sibling cause from reaching
    memo = {"x": False}
    both = Finding("both", "minor", "B", "B.", [], causes=["x", "r"])
    assert R._reaches("both", {"both": both, "x": loop[0], "y": loop[1]}, {"r"}, memo)


def test_reaches_walks_on_past_a_dead_end_and_a_finding_met_twice() -> None:
    """The walk takes the last-listed cause first: a cause naming no finding, or one already known to reach nothing,
    listed after the root's branch, is looked at first and must not end the walk; nor must a finding met a second
    time (a diamond: ``b`` and ``c`` share ``d``, and the root's branch ``r`` is listed first, so walked last)."""
    roots = {"r"}
    dead = Finding("dead", "minor", "D", "D.", [], causes=["r", "gone"])
    assert R._reaches("dead", {"dead": dead}, roots, {})
    known = Finding("known", "minor", "K", "K.", [], causes=["r", "x"])
    x = Finding("x", "minor", "X", "X.", [])
    assert R._reaches("known", {"known": known, "x": x}, roots, {"x": False})
    top = Finding("top", "minor", "T", "T.", [], causes=["r", "b", "c"])
    b, c = (Finding(i, "minor", i, i, [], causes=["d"]) for i in ("b", "c"))
    d = Finding("d", "minor", "D", "D.", [])
    memo: dict[str, bool] = {}
    assert R._reaches("top", {f.id: f for f in (top, b, c, d)}, roots, memo) and memo["top"]


def test_a_long_chain_below_a_rule_root_is_explained(compile_suite) -> None:  # type: ignore[no-untyped-def]
    b = compile_suite(CASES + "::division", ["approx", "ieee"], "sm80")
    fs, sd = rule_findings(b, "approx", "ieee")
    chain = _chain(50)
    out, unexplained = R.apply_roots([*chain, *fs], "approx", "ieee", *b.variants.values(), sd=sd)
    assert unexplained == []
    assert not any(R.UNEXPLAINED_NOTE in f.explanation for f in out)
    assert [f.id for f in out][0] == "precision.division"


def test_affected_reads_the_named_side_and_refuses_any_other(beside: Bundle) -> None:
    """``SourceDiff.affected`` follows ``col`` through ``plain``'s flow for ``"a"`` and ``contig``'s for ``"b"`` (the
    hint statement makes ``contig`` one line longer); any other side is an error, not silently ``b``."""
    _, sd = rule_findings(beside, "plain", "contig")
    pv, cv = beside.variants["plain"], beside.variants["contig"]
    p_col, c_col = line_of(pv, "col = tl.arange"), line_of(cv, "col = tl.arange")
    assert sd.affected("a", {p_col}) == {p_col, p_col + 1, p_col + 2, p_col + 3}  # keep, load, store
    assert sd.affected("b", {c_col}) == {c_col, c_col + 1, c_col + 2, c_col + 3, c_col + 4}  # and the hint
    for bad in ("c", "B", "", "plain"):
        with pytest.raises(ValueError, match="side must be 'a' or 'b'"):
            sd.affected(bad, {p_col})


@pytest.mark.parametrize("swap", [False, True])
def test_statement_and_hinted_lines_of_the_real_flows(beside: Bundle, swap: bool) -> None:
    """The statement flows of ``evict`` and ``contig`` (:func:`diff_sources`, either side): any line of the
    multi-line ``x = tl.load(…)``, its first and its last included, widens to exactly the call's lines; the hint
    statement ``col = tl.max_contiguous(col, TILE)`` points at exactly the line defining ``col`` above it (the call's
    own statement, which also defines ``col``, is not one of them)."""
    from irdiff.diagnose.source import diff_sources

    ev, co = beside.variants["evict"], beside.variants["contig"]
    sd = diff_sources(beside.variants["plain"], ev) if not swap else diff_sources(ev, beside.variants["plain"])
    flow = sd.flow_b if not swap else sd.flow_a
    first, keyword = line_of(ev, "x = tl.load("), line_of(ev, 'eviction_policy="evict_last"')
    (st,) = [s for s in flow if s.first == first]
    assert st.last >= keyword > first
    call = set(range(first, st.last + 1))
    for ln in (first, keyword, st.last):
        assert R._statements(flow, {ln}) == call
    sd = diff_sources(beside.variants["plain"], co) if not swap else diff_sources(co, beside.variants["plain"])
    flow = sd.flow_b if not swap else sd.flow_a
    hint, above = line_of(co, "col = tl.max_contiguous(col, TILE)"), line_of(co, "col = tl.arange(0, TILE)")
    assert R._hinted_lines(flow, {hint}) == {above}
