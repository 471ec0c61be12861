"""The loop rules (``irdiff/diagnose/rules/loops.py``) called directly on the facts of real compiles, in both orders
of the variants: ``loop.flattened``, ``loop.nest``, ``loop.num-stages``, ``loop.unrolled`` and
``loop.invariant-load``.

Kernels (from the shared compile cache): ``tests/suites/rule_loops.py`` on sm80 (a row-scaling loop: unrolled 2× or
4×, ``num_stages`` 1, 2 or 3, a scale and a bias re-loaded in every iteration, an inner loop over column halves),
``tests/suites/diag_loop.py`` on sm90 (``flat``/``nest``: a tile loop around a K loop with and without
``flatten=True``; ``dot3``: the K loop alone) and ``tests/suites/facts_loops.py`` on sm80 (``once``: a plain
``range`` loop, no ``tt.num_stages`` attribute; ``unroll2``: that loop unrolled 2× without ``num_stages``) and
``tests/suites/rule_loops_stats.py`` on sm80 (statistics loops carrying eight values each, so every loop header is
longer than the 240 characters a rule quotes: two or three loops one after another, unrolled or staged per loop, four
table loads in the loop, and a tile loop around a row loop, flattened or kept with its inner loop unrolled).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from rule_pairs import Real, read_once

from irdiff.diagnose.facts import LoopFact, Ref, strip_loc
from irdiff.diagnose.model import Finding
from irdiff.diagnose.rules.common import Context
from irdiff.diagnose.rules.loops import (
    rule_invariant_loads,
    rule_loops,
    rule_num_stages_attr,
    rule_unrolled,
)
from irdiff.diagnose.testing import make_context, make_facts

SUITES = Path(__file__).parent / "suites"
LOOPS = str(SUITES / "rule_loops.py")
LOOP = str(SUITES / "diag_loop.py")
FACTS_LOOPS = str(SUITES / "facts_loops.py")
STATS = str(SUITES / "rule_loops_stats.py")
STATS_VARIANTS = ["two", "none", "three", "s1", "s3", "s2", "x2x1", "x2x2", "x2x4", "tables", "tflat", "tnest2"]
BOTH = pytest.mark.parametrize("swap", [False, True], ids=["as-named", "swapped"])
RULES = (rule_loops, rule_num_stages_attr, rule_unrolled, rule_invariant_loads)

_FACTS: Real = {}


@pytest.fixture(scope="module")
def real(compile_suite) -> Real:  # type: ignore[no-untyped-def]
    return read_once(
        compile_suite,
        (
            (LOOPS, ["base", "u2", "u4", "st1", "st3u2", "reload", "inner"], "sm80", None),
            # the same variant lists as tests/test_rules.py and tests/test_facts.py (one compile per session); facts of
            # the variants used here only
            (
                LOOP,
                ["stages3", "stages1", "warps8", "dot3", "dot1", "dot3w8", "tma", "flat", "nest"],
                "sm90",
                ["flat", "nest", "dot3"],
            ),
            (FACTS_LOOPS, ["reread", "once", "unroll2"], "sm80", None),
            (STATS, STATS_VARIANTS, "sm80", None),
        ),
        _FACTS,
    )


def run(rule, real, x: str, y: str, swap: bool = False) -> list[Finding]:  # type: ignore[no-untyped-def]
    a, b = (y, x) if swap else (x, y)
    return rule(Context(a, b, real[a][0], real[b][0]))


def only(real, x: str, y: str, swap: bool) -> Finding:  # type: ignore[no-untyped-def]
    """The one finding of all loop rules on the pair."""
    found = [f for r in RULES for f in run(r, real, x, y, swap)]
    assert len(found) == 1, [f.id for f in found]
    return found[0]


def line(real, variant: str, stage: str, n: int | None) -> str:  # type: ignore[no-untyped-def]
    assert n is not None
    return real[variant][2][stage].splitlines()[n - 1]


def check_evidence(real, f: Finding) -> None:  # type: ignore[no-untyped-def]
    """Every evidence line quotes (a prefix of) the real line of its stage."""
    for e in f.evidence:
        assert e.text.rstrip() and e.text.rstrip() in line(real, e.variant, e.stage, e.line), (e, f.id)


@BOTH
def test_flattened_nest_is_named_with_its_loops(real, swap: bool) -> None:  # type: ignore[no-untyped-def]
    """``flat`` writes the tile loop ``flatten=True``: TTGIR fuses it with the K loop (no nested ``scf.for`` left);
    ``nest`` keeps the nest. Found from either side, only ``loop.flattened`` (not also ``loop.nest``)."""
    f = only(real, "flat", "nest", swap)
    ff, fn = real["flat"][0], real["nest"][0]
    assert (f.id, f.severity, f.stage, f.predicts) == ("loop.flattened", "major", "ttir", None)
    assert f.title == "Tile loop and K loop are fused into one loop in `flat` (`flatten=True`)"
    assert [lp.dots for lp in ff.loops_ttir] == [0, 1]  # the K loop holds the tt.dot (read from the TTIR)
    main = max(lp.iter_args for lp in ff.loops_ttgir)
    other = max(lp.iter_args for lp in fn.loops_ttgir)
    assert main > other > 1  # the fused loop carries more values than the K loop of the nest
    assert (
        f"(TTIR: 2 nested `scf.for`; TTGIR: {len(ff.loops_ttgir)} `scf.for`, the steady-state one carrying {main} "
        f"values); `nest` keeps {len(fn.loops_ttgir)} loop(s) with {other} loop-carried values."
    ) in f.explanation
    assert f.explanation.startswith("In `flat` the tile loop is written `tl.range(..., flatten=True)`")
    assert f.remedy and f.remedy.startswith("`flatten=False` on the tile loop keeps the nest")
    check_evidence(real, f)
    outer, end, inner, fused, *rest = f.evidence
    assert (outer.variant, outer.stage) == ("flat", "ttir") and outer.text.startswith("scf.for %t = ")
    assert (end.variant, end.stage, end.text) == ("flat", "ttir", "} {tt.flatten}")
    assert "scf.for %k = " in inner.text and (inner.variant, inner.stage) == ("flat", "ttir")
    assert (fused.variant, fused.stage) == ("flat", "ttgir") and f":{main} = scf.for" in fused.text
    assert [(e.variant, e.stage) for e in rest] == [("nest", "ttgir")] * min(2, len(fn.loops_ttgir))


@BOTH
def test_nest_against_a_single_loop(real, swap: bool) -> None:  # type: ignore[no-untyped-def]
    """``nest`` (tile loop around the K loop) vs ``dot3`` (the K loop alone): ``loop.nest``, counts per variant as
    compared; ``num_stages`` 3 of ``dot3``'s attribute equals the default 3 of ``nest``'s two loops: no finding."""
    f = only(real, "nest", "dot3", swap)
    a, b = ("dot3", "nest") if swap else ("nest", "dot3")
    assert (f.id, f.severity, f.stage, f.predicts) == ("loop.nest", "minor", "ttir", None)
    n = {"nest": (2, 2), "dot3": (1, 1)}
    assert f.title == (
        f"Loop nest differs: {n[a][0]} `scf.for` (depth {n[a][1]}) in `{a}` vs {n[b][0]} (depth {n[b][1]}) in `{b}`"
    )
    carried = {v: [lp.iter_args for lp in real[v][0].loops_ttgir] for v in ("nest", "dot3")}
    assert carried["nest"][0] == 0 and len(carried["dot3"]) == 1
    assert f.explanation == (
        f"`{a}` has {n[a][0]} `scf.for` in TTIR (max depth {n[a][1]}) and {len(carried[a])} in TTGIR; `{b}` has "
        f"{n[b][0]} (max depth {n[b][1]}) and {len(carried[b])}. Loop-carried values of the TTGIR loops: "
        f"{carried[a]} vs {carried[b]}."
    )
    check_evidence(real, f)
    assert [e.variant for e in f.evidence] == [a] * len(carried[a]) + [b] * len(carried[b])
    assert all(e.stage == "ttgir" and "scf.for" in e.text for e in f.evidence)


@BOTH
def test_inner_loop_is_a_nest_of_my_kernel(real, swap: bool) -> None:  # type: ignore[no-untyped-def]
    """A second kernel of the kind: ``inner`` adds a loop over column halves inside the row loop of ``base``."""
    f = only(real, "inner", "base", swap)
    a, b = ("base", "inner") if swap else ("inner", "base")
    assert f.id == "loop.nest"
    depth = {"inner": (2, 2), "base": (1, 1)}
    assert f.title == (
        f"Loop nest differs: {depth[a][0]} `scf.for` (depth {depth[a][1]}) in `{a}` vs {depth[b][0]} "
        f"(depth {depth[b][1]}) in `{b}`"
    )


@pytest.mark.parametrize("pair", [("base", "base"), ("u2", "u4"), ("base", "u2"), ("reload", "base")])
def test_same_nest_is_no_loop_finding(real, pair: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """An unroll's remainder loop is not a change of the nest (``loop.unrolled``'s), nor are loads moved into it."""
    for swap in (False, True):
        assert run(rule_loops, real, *pair, swap) == []


@BOTH
def test_unrolled_vs_not(real, swap: bool) -> None:  # type: ignore[no-untyped-def]
    """``u2`` unrolls the row loop 2×, ``base`` not at all; the evidence is ``u2``'s unrolled loop and remainder loop
    (its ``tt.num_stages = 1``) and ``base``'s plain loop."""
    f = only(real, "base", "u2", swap)
    a, b = ("u2", "base") if swap else ("base", "u2")
    say = {"base": "none", "u2": "2×"}
    assert (f.id, f.severity, f.stage, f.predicts) == ("loop.unrolled", "minor", "ttir", None)
    assert f.title == f"Loop unrolling in TTIR (`loop_unroll_factor`): {say[a]} in `{a}` vs {say[b]} in `{b}`"
    assert f.explanation.startswith(f"Loops unrolled in TTIR: {say[a]} in `{a}`, {say[b]} in `{b}`.")
    assert "`u2` issues 2× the instructions per iteration" in f.explanation
    check_evidence(real, f)
    u2 = [e.text for e in f.evidence if e.variant == "u2"]
    assert len(u2) == 4 and u2[1] == "{tt.num_stages = 2 : i32}" and u2[3] == "{tt.num_stages = 1 : i32}"
    assert u2[0].startswith("scf.for %r = ") and u2[2].startswith("scf.for %r = ")
    assert [e.text[:13] for e in f.evidence if e.variant == "base"] == ["scf.for %r = "]


@BOTH
def test_unrolled_by_another_factor(real, swap: bool) -> None:  # type: ignore[no-untyped-def]
    """``u4`` vs ``u2``: both unrolled, by 4 and 2; ``u4`` issues 4× the instructions per iteration in both orders
    (the larger factor, not the first variant's)."""
    f = only(real, "u2", "u4", swap)
    a, b = ("u4", "u2") if swap else ("u2", "u4")
    say = {"u2": "2×", "u4": "4×"}
    assert f.title == f"Loop unrolling in TTIR (`loop_unroll_factor`): {say[a]} in `{a}` vs {say[b]} in `{b}`"
    assert "`u4` issues 4× the instructions per iteration" in f.explanation
    # each side's unrolled loop and its remainder: no extra plain loops
    assert [e.variant for e in f.evidence] == [a] * 4 + [b] * 4


@BOTH
def test_num_stages_one_predicts_the_unpipelined_loop(real, swap: bool) -> None:  # type: ignore[no-untyped-def]
    """``st1``: ``num_stages=1`` on the row loop, ``base`` 2: ``st1`` is predicted slower, the evidence is each
    loop's attribute line."""
    f = only(real, "base", "st1", swap)
    a, b = ("st1", "base") if swap else ("base", "st1")
    s = {"base": 2, "st1": 1}
    assert (f.id, f.severity, f.stage, f.predicts) == ("loop.num-stages", "major", "ttir", "st1")
    assert f.title == f"Loop pipelining depth `tt.num_stages`: {s[a]} in `{a}` vs {s[b]} in `{b}`"
    assert f.explanation.startswith(f"The loop's `tt.num_stages` is {s[a]} in `{a}` and {s[b]} in `{b}`.")
    assert f.remedy and "tl.range(..., num_stages=N)" in f.remedy
    check_evidence(real, f)
    assert [(e.variant, e.stage) for e in f.evidence] == [(a, "ttir"), (b, "ttir")]
    assert f"tt.num_stages = {s[a]} : i32" in f.evidence[0].text


@BOTH
def test_num_stages_ignores_the_remainder_loop(real, swap: bool) -> None:  # type: ignore[no-untyped-def]
    """``st3u2`` vs ``u2``: both unrolled 2× (their remainder loops say ``tt.num_stages = 1``); the user's loops say 3
    and 2, so ``u2`` is the shallower one and no "1" appears."""
    found = run(rule_num_stages_attr, real, "st3u2", "u2", swap)
    assert len(found) == 1
    f = found[0]
    a, b = ("u2", "st3u2") if swap else ("st3u2", "u2")
    s = {"st3u2": 3, "u2": 2}
    assert f.predicts == "u2"
    assert f.title == f"Loop pipelining depth `tt.num_stages`: {s[a]} in `{a}` vs {s[b]} in `{b}`"
    assert len(f.evidence) == 2 and all("tt.num_stages = 1" not in e.text for e in f.evidence)


@BOTH
def test_num_stages_default_from_the_options(real, swap: bool) -> None:  # type: ignore[no-untyped-def]
    """``once`` loops over a plain ``range`` (no ``tt.num_stages``): its depth is the compile option (3), against
    ``st1``'s attribute 1; the default side has no evidence line."""
    f = run(rule_num_stages_attr, real, "once", "st1", swap)[0]
    a, b = ("st1", "once") if swap else ("once", "st1")
    opt = real["once"][0].options["num_stages"]
    assert opt == 3
    s = {"once": f"default ({opt})", "st1": "1"}
    assert f.predicts == "st1"
    assert f.title == f"Loop pipelining depth `tt.num_stages`: {s[a]} in `{a}` vs {s[b]} in `{b}`"
    assert [e.variant for e in f.evidence] == ["st1"]


@pytest.mark.parametrize(
    "pair", [("once", "reread"), ("nest", "dot3"), ("u2", "base"), ("flat", "nest"), ("st1", "st1")]
)
def test_num_stages_same_or_absent(real, pair: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """No finding: neither loop has the attribute; ``dot3``'s 3 equals ``nest``'s default 3 (two loops); ``u2``'s
    remainder loop's 1 is not the user's; the same variant."""
    for swap in (False, True):
        assert run(rule_num_stages_attr, real, *pair, swap) == []


@BOTH
def test_invariant_loads_in_the_loop(real, swap: bool) -> None:  # type: ignore[no-untyped-def]
    """``reload`` loads the scale and the bias inside the row loop (2 loads of one address each), ``base`` before it:
    ``reload`` predicted slower, the evidence is its two ``tt.load`` lines in the loop."""
    f = only(real, "reload", "base", swap)
    a, b = ("base", "reload") if swap else ("reload", "base")
    n = {"reload": 2, "base": 0}
    assert (f.id, f.severity, f.stage, f.predicts) == ("loop.invariant-load", "minor", "ttir", "reload")
    assert f.title == (
        f"Loop-invariant loads inside a loop: {n[a]} in `{a}` vs {n[b]} in `{b}` (re-issued every iteration)"
    )
    assert f.explanation.startswith(
        f"Loads inside a loop whose address and mask are the same on every iteration: {n[a]} in `{a}`, {n[b]} in `{b}`."
    )
    assert "so `reload` reads the same memory again on each iteration" in f.explanation
    assert f.remedy == "load the value once before the loop"
    check_evidence(real, f)
    assert [e.variant for e in f.evidence] == ["reload"] * 2
    # the SSA names of the two loaded values (Triton 3.6 suffixes the second `%b` as `%b_0`)
    assert sorted(e.text.split(" = ")[0].rstrip("_0123456789") for e in f.evidence) == ["%b", "%s"]
    loop = next(lp for lp in real["reload"][0].loops_ttir)
    assert all(loop.ref.line < (e.line or 0) < loop.end_line for e in f.evidence)


@BOTH
def test_invariant_load_of_another_kernel(real, swap: bool) -> None:  # type: ignore[no-untyped-def]
    """``reread`` (tests/suites/facts_loops.py) re-loads its gain in the loop, ``once`` not: 1 vs 0."""
    f = run(rule_invariant_loads, real, "reread", "once", swap)[0]
    a, b = ("once", "reread") if swap else ("reread", "once")
    n = {"reread": 1, "once": 0}
    assert f.predicts == "reread" and f"{n[a]} in `{a}` vs {n[b]} in `{b}`" in f.title
    assert len(f.evidence) == 1 and "tt.load %g_ptr" in f.evidence[0].text
    assert run(rule_invariant_loads, real, "once", "unroll2", swap) == []


def test_flattened_exact_texts(real) -> None:  # type: ignore[no-untyped-def]
    """The whole explanation, severity, remedy and evidence lines (the first 240 characters of each loop header)."""
    f = only(real, "flat", "nest", False)
    ff, fn = real["flat"][0], real["nest"][0]
    main = max(lp.iter_args for lp in ff.loops_ttgir)
    other = max(lp.iter_args for lp in fn.loops_ttgir)
    assert f.explanation == (
        "In `flat` the tile loop is written `tl.range(..., flatten=True)` (`tt.flatten` on the outer `scf.for`), and "
        "the NVIDIA backend's `TritonGPUFuseNestedLoops` pass (run in `make_ttgir` for sm80 and newer) fuses it with "
        "the inner K loop into a single loop over tiles × K steps (TTIR: 2 nested `scf.for`; TTGIR: "
        f"{len(ff.loops_ttgir)} `scf.for`, the steady-state one carrying {main} values); `nest` keeps "
        f"{len(fn.loops_ttgir)} loop(s) with {other} loop-carried values. The per-tile work (computing the tile's "
        "row/column offsets, the epilogue store) now happens inside the fused loop under `scf.if`, and values that "
        "used to be recomputed per tile become loop-carried."
    )
    assert f.severity == "major" and f.remedy == (
        "`flatten=False` on the tile loop keeps the nest (both operands can then be pipelined)"
    )
    outer = next(lp for lp in ff.loops_ttir if lp.flatten)
    assert f.evidence[1].line == outer.end_line and f.evidence[0].line == outer.ref.line
    assert "} {tt.flatten}" in line(real, "flat", "ttir", outer.end_line)
    longest = 0
    for e in f.evidence:
        if e.text == "} {tt.flatten}":
            continue
        full = line(real, e.variant, e.stage, e.line).strip()
        assert full.startswith(e.text) and len(e.text) <= 240
        assert len(e.text) == 240 or e.text == full.split(" loc(")[0]
        longest = max(longest, len(full))
    assert longest > 240  # the fused loop's header, with all its iter_args, is cut at 240 characters


def test_flatten_attribute_without_fusion_is_no_finding(real) -> None:  # type: ignore[no-untyped-def]
    """A nest marked ``tt.flatten`` whose TTGIR still has both loops (the pass did not fuse it) is not
    ``loop.flattened``, nor a different nest; a nest whose inner loop is gone from TTGIR without ``tt.flatten`` is a
    ``loop.nest`` difference, not a fusion."""
    ff, fn = real["flat"][0], real["nest"][0]
    unfused = dataclasses.replace(ff, loops_ttgir=fn.loops_ttgir)
    for swap in (False, True):
        a, b = ("nest", "flat") if swap else ("flat", "nest")
        facts = {"flat": unfused, "nest": fn}
        assert rule_loops(Context(a, b, facts[a], facts[b])) == []
    shallow = dataclasses.replace(fn, loops_ttgir=[lp for lp in fn.loops_ttgir if lp.depth == 1])
    for swap in (False, True):
        a, b = ("nest", "cut") if swap else ("cut", "nest")
        facts = {"cut": shallow, "nest": fn}
        assert [f.id for f in rule_loops(Context(a, b, facts[a], facts[b]))] == ["loop.nest"]
    # no loops at all against a nest: the nest differs (not a fusion)
    empty = dataclasses.replace(fn, loops_ttir=[], loops_ttgir=[])
    (f,) = rule_loops(Context("none", "nest", empty, fn))
    assert f.id == "loop.nest" and f.title.startswith("Loop nest differs: 0 `scf.for` (depth 0) in `none` vs 2")


def test_flattened_without_ttgir_loops_on_either_side(real) -> None:  # type: ignore[no-untyped-def]
    """The fusion is read from TTIR's ``tt.flatten`` nest and a shallower TTGIR: with no TTGIR loop left on the fused
    side the steady-state count is unknown (``?``); with none on the other side, no count is claimed for it."""
    ff, fn = real["flat"][0], real["nest"][0]
    bare = dataclasses.replace(ff, loops_ttgir=[])
    (f,) = rule_loops(Context("flat", "nest", bare, fn))
    assert f.id == "loop.flattened" and "the steady-state one carrying ? values)" in f.explanation
    assert "TTGIR: 0 `scf.for`" in f.explanation and "`nest` keeps" in f.explanation
    (g,) = rule_loops(Context("nest", "flat", dataclasses.replace(fn, loops_ttgir=[]), ff))
    assert g.id == "loop.flattened" and "keeps" not in g.explanation
    assert "values). The per-tile work" in g.explanation
    assert [e.variant for e in g.evidence] == ["flat"] * 4


def test_nest_evidence_is_cut_at_240_characters(real) -> None:  # type: ignore[no-untyped-def]
    """``loop.nest`` quotes at most three TTGIR loop headers per side, each cut at 240 characters (the K loop's
    header, with its iter_args, is longer)."""
    f = only(real, "nest", "dot3", False)
    full = [line(real, e.variant, e.stage, e.line).strip() for e in f.evidence]
    assert all(len(e.text) <= 240 and t.startswith(e.text) for e, t in zip(f.evidence, full))
    assert any(len(t.split(" loc(")[0]) > 240 and len(e.text) == 240 for e, t in zip(f.evidence, full))


def cut(real, e) -> str:  # type: ignore[no-untyped-def]
    """The real line ``e`` quotes, without its ``loc(...)``: asserts ``e.text`` is its first 240 characters and that
    the line is longer (the quote is cut)."""
    full = strip_loc(line(real, e.variant, e.stage, e.line)).strip()
    assert len(full) > 240 and e.text == full[:240], (e, full)
    return full


@BOTH
def test_flattened_quotes_long_headers_cut_and_two_loops_of_the_other(real, swap: bool) -> None:  # type: ignore[no-untyped-def]
    """``tflat`` (tests/suites/rule_loops_stats.py): the tile loop, written ``flatten=True``, and the row loop both carry
    the eight statistics, so the outer and inner TTIR headers and the fused TTGIR header are each cut at 240
    characters; ``tnest2`` keeps the nest with its row loop unrolled 2× (three TTGIR loops: outer, unrolled,
    remainder), of which the first two are quoted."""
    (f,) = run(rule_loops, real, "tflat", "tnest2", swap)  # (``loop.unrolled`` also holds: ``tnest2`` unrolls)
    ff, fn = real["tflat"][0], real["tnest2"][0]
    assert f.id == "loop.flattened" and f.title.endswith("in `tflat` (`flatten=True`)")
    # a statistics nest, no matmul: named as the outer and inner loop it is, never "tile loop and K loop"
    assert f.title == "Outer loop and inner loop (no `tl.dot`) are fused into one loop in `tflat` (`flatten=True`)"
    assert "K loop" not in f.explanation and "tile" not in f.explanation and "tile" not in (f.remedy or "")
    assert f.explanation.startswith(
        "In `tflat` the outer loop is written `tl.range(..., flatten=True)` (`tt.flatten` on the outer `scf.for`), and "
        "the NVIDIA backend's `TritonGPUFuseNestedLoops` pass (run in `make_ttgir` for sm80 and newer) fuses it with "
        "the inner loop into a single loop over outer × inner iterations (TTIR: 2 nested `scf.for`;"
    )
    assert f.explanation.endswith(
        ". The outer loop's own work (the statements before and after the inner loop) now happens inside the fused "
        "loop under `scf.if`, and values that used to be recomputed per outer iteration become loop-carried."
    )
    assert f.remedy == "`flatten=False` on the outer loop keeps the nest (the inner loop is then pipelined on its own)"
    assert [lp.dots for lp in ff.loops_ttir] == [0, 0]  # read from the TTIR: no tt.dot in either loop
    assert len(fn.loops_ttgir) == 3 and [lp.remainder for lp in fn.loops_ttgir] == [False, False, True]
    outer, end, inner, fused, *rest = f.evidence
    assert "scf.for %t = " in cut(real, outer) and "iter_args(" in outer.text
    assert end.text == "} {tt.flatten}" and end.line == next(lp for lp in ff.loops_ttir if lp.flatten).end_line
    assert "scf.for %r = " in cut(real, inner) and (inner.variant, inner.stage) == ("tflat", "ttir")
    main = max(ff.loops_ttgir, key=lambda lp: lp.iter_args)
    assert (fused.variant, fused.stage, fused.line) == ("tflat", "ttgir", main.ref.line) and cut(real, fused)
    assert [(e.variant, e.stage, e.line) for e in rest] == [
        ("tnest2", "ttgir", lp.ref.line) for lp in fn.loops_ttgir[:2]
    ]
    for e in rest:
        cut(real, e)
    carried = max(lp.iter_args for lp in fn.loops_ttgir)
    assert carried == 8  # the eight statistics
    assert f"; `tnest2` keeps 3 loop(s) with {carried} loop-carried values." in f.explanation


@BOTH
def test_nest_quotes_three_loops_per_side_cut(real, swap: bool) -> None:  # type: ignore[no-untyped-def]
    """``three`` (three statistics loops one after another) vs ``x2x2`` (two loops, each unrolled 2×: four TTGIR
    loops with the remainders): the TTIR nests differ (3 loops vs 2, the remainders are not the user's); at most three
    TTGIR headers per side are quoted, each cut at 240 characters."""
    (f,) = run(rule_loops, real, "three", "x2x2", swap)  # (with ``loop.unrolled``: ``x2x2`` unrolls)
    a, b = ("x2x2", "three") if swap else ("three", "x2x2")
    assert f.id == "loop.nest"
    n = {"three": 3, "x2x2": 2}
    assert f.title == f"Loop nest differs: {n[a]} `scf.for` (depth 1) in `{a}` vs {n[b]} (depth 1) in `{b}`"
    assert len(real["x2x2"][0].loops_ttgir) == 4 and len(real["three"][0].loops_ttgir) == 3
    assert [e.variant for e in f.evidence] == [a] * 3 + [b] * 3
    for v in (a, b):
        lines_ = [e.line for e in f.evidence if e.variant == v]
        assert lines_ == [lp.ref.line for lp in real[v][0].loops_ttgir[:3]]
    for e in f.evidence:
        assert e.stage == "ttgir" and "= scf.for %" in cut(real, e)


@BOTH
def test_nest_against_no_loop_at_all(real, swap: bool) -> None:  # type: ignore[no-untyped-def]
    """``none`` handles one row without any loop, ``two`` walks the rows twice: ``loop.nest`` with depth 0 and no
    TTGIR loop on the loop-free side, whichever side it is."""
    f = only(real, "none", "two", swap)  # (no ``loop.num-stages``: ``none`` has no loop to pipeline)
    a, b = ("two", "none") if swap else ("none", "two")
    n = {"none": (0, 0), "two": (2, 1)}
    assert real["none"][0].loops_ttir == [] and real["none"][0].loops_ttgir == []
    assert f.title == (
        f"Loop nest differs: {n[a][0]} `scf.for` (depth {n[a][1]}) in `{a}` vs {n[b][0]} (depth {n[b][1]}) in `{b}`"
    )
    carried = {"none": [], "two": [lp.iter_args for lp in real["two"][0].loops_ttgir]}
    assert len(carried["two"]) == 2 and all(c >= 8 for c in carried["two"])
    assert f.explanation == (
        f"`{a}` has {n[a][0]} `scf.for` in TTIR (max depth {n[a][1]}) and {len(carried[a])} in TTGIR; `{b}` has "
        f"{n[b][0]} (max depth {n[b][1]}) and {len(carried[b])}. Loop-carried values of the TTGIR loops: "
        f"{carried[a]} vs {carried[b]}."
    )
    assert [e.variant for e in f.evidence] == ["two", "two"]


@BOTH
def test_num_stages_per_loop_after_a_remainder(real, swap: bool) -> None:  # type: ignore[no-untyped-def]
    """``s1`` and ``s3``: the first loop unrolled 2× with 2 stages (its remainder loop, ``tt.num_stages = 1``, comes
    before the second loop), the second loop with 1 and 3 stages. Both loops of each side are read (not only the ones
    before the remainder); ``s1`` has the shallower loop."""
    f = only(real, "s1", "s3", swap)
    a, b = ("s3", "s1") if swap else ("s1", "s3")
    s = {"s1": "2, 1", "s3": "2, 3"}
    assert (f.id, f.predicts) == ("loop.num-stages", "s1")
    assert f.title == f"Loop pipelining depth `tt.num_stages`: {s[a]} in `{a}` vs {s[b]} in `{b}`"
    check_evidence(real, f)
    for v in (a, b):
        user = [lp for lp in real[v][0].loops_ttir if not lp.remainder]
        assert [e.line for e in f.evidence if e.variant == v] == [lp.end_line for lp in user]
    assert [e.variant for e in f.evidence] == [a, a, b, b]


def test_num_stages_exact_texts(real) -> None:  # type: ignore[no-untyped-def]
    """The whole explanation and remedy of ``loop.num-stages``."""
    f = only(real, "s1", "s3", False)
    assert f.explanation == (
        "The loop's `tt.num_stages` is 2, 1 in `s1` and 2, 3 in `s3`. The software pipeliner (`triton-loop-pipeline`) "
        "prefetches loads `num_stages - 1` iterations ahead with `cp.async` into a ring of shared-memory buffers; "
        "with `num_stages = 1` it leaves the loop alone, so each iteration waits for its own global loads."
    )
    assert f.remedy == "`num_stages >= 2` on the loop (`tl.range(..., num_stages=N)`) lets the row loads be prefetched"
    assert (f.severity, f.stage) == ("major", "ttir")


@BOTH
def test_num_stages_same_shallowest_loop_predicts_nothing(real, swap: bool) -> None:  # type: ignore[no-untyped-def]
    """``s3`` (2, 3) vs ``s2`` (2, 2): the depths differ, but both variants' shallowest loop has 2 stages: no
    direction is claimed, in either order."""
    f = only(real, "s3", "s2", swap)
    a, b = ("s2", "s3") if swap else ("s3", "s2")
    s = {"s3": "2, 3", "s2": "2, 2"}
    assert (f.id, f.predicts) == ("loop.num-stages", None)
    assert f.title == f"Loop pipelining depth `tt.num_stages`: {s[a]} in `{a}` vs {s[b]} in `{b}`"


@BOTH
def test_num_stages_unknown_default_is_no_finding(real, swap: bool) -> None:  # type: ignore[no-untyped-def]
    """A bundle whose options lack an integer ``num_stages`` (bundles are untrusted data) and whose loop has no
    attribute: that side's depth is unknown, so no difference is claimed (and no crash); with the option back the
    default 3 differs from ``st1``'s 1 again."""
    once = real["once"][0]
    for opts, found in (({}, 0), ({"num_stages": "3"}, 0), ({"num_stages": 3}, 1)):
        bare = dataclasses.replace(once, options=opts)
        a, b = ("st1", "bare") if swap else ("bare", "st1")
        facts = {"bare": bare, "st1": real["st1"][0]}
        assert len(rule_num_stages_attr(Context(a, b, facts[a], facts[b]))) == found, opts


@BOTH
def test_unrolled_against_three_plain_loops(real, swap: bool) -> None:  # type: ignore[no-untyped-def]
    """``x2x1`` unrolls its first loop 2×, ``three`` unrolls none of its three loops: ``x2x1``'s unrolled loop and its
    remainder (header cut at 240, closing attribute line) and the first two of ``three``'s loops."""
    (f,) = run(rule_unrolled, real, "x2x1", "three", swap)  # (with ``loop.nest``: 2 loops vs 3)
    assert f.id == "loop.unrolled" and "`x2x1` issues 2× the instructions per iteration" in f.explanation
    check_evidence(real, f)
    u = [e for e in f.evidence if e.variant == "x2x1"]
    t = [e for e in f.evidence if e.variant == "three"]
    loops = real["x2x1"][0].loops_ttir
    assert [e.line for e in u] == [loops[0].ref.line, loops[0].end_line, loops[1].ref.line, loops[1].end_line]
    assert "scf.for %r = " in cut(real, u[0]) and "scf.for %r = " in cut(real, u[2])
    assert u[1].text == "{tt.num_stages = 2 : i32}" and u[3].text == "{tt.num_stages = 1 : i32}"
    assert [e.line for e in t] == [lp.ref.line for lp in real["three"][0].loops_ttir[:2]]
    for e in t:
        cut(real, e)


@BOTH
def test_unrolled_without_num_stages_quotes_the_bare_brace(real, swap: bool) -> None:  # type: ignore[no-untyped-def]
    """``unroll2`` (tests/suites/facts_loops.py) unrolls a loop written without ``num_stages``: the unrolled loop's
    closing line carries no attribute, so its evidence is the bare ``}`` of that line."""
    f = only(real, "unroll2", "once", swap)
    lp = next(x for x in real["unroll2"][0].loops_ttir if x.unroll > 1)
    assert lp.unroll == 2 and lp.attrs == ""
    assert "}" in [e.text for e in f.evidence if e.variant == "unroll2" and e.line == lp.end_line]
    check_evidence(real, f)


@BOTH
def test_unrolled_two_loops_by_different_factors(real, swap: bool) -> None:  # type: ignore[no-untyped-def]
    """``x2x4`` unrolls its two loops 2× and 4×, ``x2x1`` only the first 2×: both factors are named, ``x2x4`` issues
    4× the instructions per iteration; the whole explanation."""
    f = only(real, "x2x4", "x2x1", swap)
    a, b = ("x2x1", "x2x4") if swap else ("x2x4", "x2x1")
    say = {"x2x4": "2× and 4×", "x2x1": "2×"}
    assert f.title == f"Loop unrolling in TTIR (`loop_unroll_factor`): {say[a]} in `{a}` vs {say[b]} in `{b}`"
    assert f.explanation == (
        f"Loops unrolled in TTIR: {say[a]} in `{a}`, {say[b]} in `{b}`. `tl.range(..., loop_unroll_factor=N)` has "
        "Triton's `triton-loop-unroll` pass copy the loop body N times into one iteration (N times the loads and "
        "stores in flight per iteration, fewer branches and index updates) and add a remainder loop for the leftover "
        "iterations, which it marks `tt.num_stages = 1` (never pipelined). `x2x4` issues 4× the instructions per "
        "iteration: more registers and a larger kernel, more memory parallelism per thread; whether that is faster "
        "depends on whether the loop was latency-bound."
    )
    assert (f.severity, f.stage, f.predicts, f.remedy) == ("minor", "ttir", None, None)


@BOTH
def test_unrolled_same_factor_in_more_loops(real, swap: bool) -> None:  # type: ignore[no-untyped-def]
    """``x2x2`` unrolls both loops 2×, ``x2x1`` one: the largest factor is the same, ``x2x2`` is the variant that
    unrolls more, in either order (not simply the second one)."""
    f = only(real, "x2x2", "x2x1", swap)
    assert "`x2x2` issues 2× the instructions per iteration" in f.explanation
    assert "2× and 2× in `x2x2`" in f.title


def test_unrolled_equal_weight_names_neither(real) -> None:  # type: ignore[no-untyped-def]
    """Unroll factors that differ but tie on the largest factor, the number of unrolled loops and the total copies
    (2×, 4×, 4× vs 3×, 3×, 4×): no variant is said to unroll more."""
    base = real["x2x4"][0]
    unrolled = base.loops_ttir[0]
    assert unrolled.unroll == 2 and not unrolled.remainder
    p = dataclasses.replace(base, loops_ttir=[dataclasses.replace(unrolled, unroll=u) for u in (2, 4, 4)])
    q = dataclasses.replace(base, loops_ttir=[dataclasses.replace(unrolled, unroll=u) for u in (3, 3, 4)])
    for a, b in (("p", "q"), ("q", "p")):
        facts = {"p": p, "q": q}
        (f,) = rule_unrolled(Context(a, b, facts[a], facts[b]))
        assert "Both variants' most unrolled loops issue 4× the instructions per iteration" in f.explanation
        assert "`p` issues" not in f.explanation and "`q` issues" not in f.explanation


@BOTH
def test_invariant_loads_four_tables_three_quoted_cut(real, swap: bool) -> None:  # type: ignore[no-untyped-def]
    """``tables`` loads its four per-column tables (weight, bias, scale, shift) in the first statistics loop, ``two``
    before it: 4 vs 0, ``tables`` predicted slower; at most three loads are quoted, each line cut at 240 characters;
    the whole explanation."""
    f = only(real, "tables", "two", swap)
    a, b = ("two", "tables") if swap else ("tables", "two")
    n = {"tables": 4, "two": 0}
    assert (f.id, f.predicts) == ("loop.invariant-load", "tables")
    assert len(real["tables"][0].invariant_loads) == 4
    assert [e.line for e in f.evidence] == [r.line for r in real["tables"][0].invariant_loads[:3]]
    for e, table in zip(f.evidence, ("weight", "bias", "scale"), strict=True):
        assert e.variant == "tables" and "tt.load" in cut(real, e)
        assert f"pointers_to_the_per_column_{table}_table" in e.text
    assert f.explanation == (
        f"Loads inside a loop whose address and mask are the same on every iteration: {n[a]} in `{a}`, {n[b]} in "
        f"`{b}`. Triton's loop-invariant code motion (`make_ttir`) hoists index arithmetic but never a load, so "
        "`tables` reads the same memory again on each iteration (more load instructions and memory requests, usually "
        "L1/L2 hits; the value also cannot stay in registers across iterations), where a load before the loop reads "
        "it once."
    )


def test_unrolled_attribute_line_is_cut_at_240(real) -> None:  # type: ignore[no-untyped-def]
    """The closing attribute dictionary of an unrolled loop is quoted at most 240 characters long (bundles are
    untrusted data: here ``x2x1``'s real dictionary with a long made-up attribute added); a short one whole."""
    x = real["x2x1"][0]
    unrolled = x.loops_ttir[0]
    assert unrolled.unroll == 2 and unrolled.attrs == "{tt.num_stages = 2 : i32}"
    long_attrs = '{tt.num_stages = 2 : i32, irdiff.note = "' + "x" * 300 + '"}'
    wide = dataclasses.replace(x, loops_ttir=[dataclasses.replace(unrolled, attrs=long_attrs), *x.loops_ttir[1:]])
    for a, b in (("wide", "two"), ("two", "wide")):
        facts = {"wide": wide, "two": real["two"][0]}
        (f,) = rule_unrolled(Context(a, b, facts[a], facts[b]))
        ends = [e.text for e in f.evidence if e.variant == "wide" and e.line == unrolled.end_line]
        assert ends == [long_attrs[:240]]
        assert [e.text for e in f.evidence if e.variant == "wide" and e.line == x.loops_ttir[1].end_line] == [
            "{tt.num_stages = 1 : i32}"
        ]


@BOTH
def test_unrolled_copies_and_rings_name_no_slower_side(real, swap: bool) -> None:  # type: ignore[no-untyped-def]
    """``u4`` unrolls the pipelined row loop 4×: each copy of the body gets its own async copy, ring and PTX
    instructions, so ``pipeline.async-copies``, ``pipeline.buffers`` and ``ptx.memory-ops`` see more of them in ``u4``
    for the same rows and the same depth. They once predicted ``base`` (fewer copies) slower; now they predict no
    side and say why, naming each variant's factor. Against ``st3u2`` (unrolled 2× too, 3 stages) ``u2``'s rings are
    compared as before (same factor)."""
    from irdiff.diagnose.rules.pipelining import rule_async_copies, rule_buffers
    from irdiff.diagnose.rules.ptx import rule_ptx_memory

    a, b = ("u4", "base") if swap else ("base", "u4")
    say = {"base": "not", "u4": "4×"}
    note = (
        f"The loops are unrolled {say[a]} in `{a}` and {say[b]} in `{b}` (`loop_unroll_factor`): each copy of the body "
        "has its own loads"
    )
    copies = run(rule_async_copies, real, a, b)
    assert len(copies) == 1 and copies[0].predicts is None and note in copies[0].explanation
    na = len(real["u4"][0].async_copies_loop)
    assert na == 4 * len(real["base"][0].async_copies_loop) > 0  # read from the TTGIR: one copy per unrolled body
    mem = run(rule_ptx_memory, real, a, b)
    assert len(mem) == 1 and mem[0].predicts is None and note in mem[0].explanation
    for f in run(rule_buffers, real, a, b):  # rings, where the two variants' differ
        assert f.predicts is None and note in f.explanation
    # the same factor on both sides: no note, and the copies compare as before
    for f in run(rule_async_copies, real, "u2", "st3u2", swap) + run(rule_buffers, real, "u2", "st3u2", swap):
        assert "loop_unroll_factor" not in f.explanation


NOTE_TAIL = (
    " (`loop_unroll_factor`): each copy of the body has its own loads, so their async copies, shared-memory rings and "
    "instructions multiply by the factor for the same elements and the same pipeline depth; the counts name no slower "
    "side."
)


@BOTH
def test_unroll_note_names_every_factor(real, swap: bool) -> None:  # type: ignore[no-untyped-def]
    """``_unroll_note`` (``irdiff/diagnose/rules/common.py``), which the PTX and pipelining findings append: the
    factors of each side's unrolled loops (``x2x4``: 2× and 4×, ``x2x1``: 2×, ``u2``: 2×, ``base``: none), "not"
    for none, and nothing when the factors are the same (``u2`` and ``st3u2``: 2× each)."""
    from irdiff.diagnose.rules.common import _unroll_note

    def note(x: str, y: str) -> str:
        a, b = (y, x) if swap else (x, y)
        return _unroll_note(Context(a, b, real[a][0], real[b][0]))

    say = {"x2x4": "2× and 4×", "x2x1": "2×", "u2": "2×", "base": "not"}
    for x, y in (("x2x4", "x2x1"), ("u2", "base")):
        a, b = (y, x) if swap else (x, y)
        assert note(x, y) == f" The loops are unrolled {say[a]} in `{a}` and {say[b]} in `{b}`{NOTE_TAIL}"
    assert note("u2", "st3u2") == "" and note("base", "st1") == ""


def _loop(stage: str, depth: int, line: int, end: int = 0, *, flatten: bool = False, dots: int = 0) -> LoopFact:
    """A written-out ``scf.for`` at ``line`` (closing at ``end``) of the given nesting depth."""
    return LoopFact(stage, depth, 1, flatten, Ref(stage, line, f"scf.for at {line}"), end, dots=dots)


@BOTH
def test_flattened_nest_after_other_loops_quotes_its_own_inner_loop(swap: bool) -> None:
    """Facts written out by hand, in both orders of the variants: in ``f`` TTIR has a loop (or a nest) before the
    nest fused by ``flatten=True``; the inner loop quoted is one level deeper *inside* the first ``tt.flatten`` loop
    (between its opening and closing lines), never a deeper loop elsewhere, and none when that loop has no inner
    loop (a single flattened loop before the fused nest). ``o`` keeps its nest in TTGIR."""
    other = make_facts(
        "o",
        loops_ttir=[_loop("ttir", 1, 10, 20), _loop("ttir", 2, 12, 18, dots=1)],
        loops_ttgir=[_loop("ttgir", 1, 10, 20), _loop("ttgir", 2, 12, 18)],
    )
    cases = [
        # a single `flatten=True` loop (lines 10-20) first, then a matmul nest (K loop at line 35, one `tt.dot`)
        (
            [_loop("ttir", 1, 10, 20, flatten=True), _loop("ttir", 1, 30, 50, flatten=True), _loop("ttir", 2, 35, 45, dots=1)],
            None,
        ),
        # a matmul nest first (its K loop at line 12), then the `flatten=True` nest whose inner loop (line 35) has no dot
        (
            [_loop("ttir", 1, 10, 20), _loop("ttir", 2, 12, 18, dots=1), _loop("ttir", 1, 30, 50, flatten=True), _loop("ttir", 2, 35, 45)],
            35,
        ),
    ]  # fmt: skip
    for ttir, inner in cases:
        fused = make_facts("f", loops_ttir=ttir, loops_ttgir=[_loop("ttgir", 1, 10, 20), _loop("ttgir", 1, 30, 50)])
        (f,) = rule_loops(make_context(other, fused) if swap else make_context(fused, other))
        assert f.id == "loop.flattened"
        assert f.title == "Outer loop and inner loop (no `tl.dot`) are fused into one loop in `f` (`flatten=True`)"
        outer = next(lp for lp in ttir if lp.flatten)
        quoted = [e.line for e in f.evidence if e.variant == "f" and e.stage == "ttir"]
        assert quoted == [outer.ref.line, outer.end_line] + ([inner] if inner else [])


def _at(stage: str, depth: int, line: int | None, end: int, *, iters: int = 1, flatten: bool = False, dots: int = 0) -> LoopFact:  # fmt: skip
    """A written-out ``scf.for`` whose opening line may be unknown (``None``) and with ``iters`` loop-carried values."""
    return LoopFact(stage, depth, iters, flatten, Ref(stage, line, f"scf.for at {line}"), end, dots=dots)


def test_nest_keeps_the_loops_between_the_top_loops_lines() -> None:
    """``_nest`` on written-out TTGIR loops: the loops of the ``rank``-th top-level nest are those whose opening line
    lies between the top loop's opening and closing lines, both included; an unknown line counts as 0."""
    from irdiff.diagnose.rules.loops import _nest

    top, at_end = _at("ttgir", 1, 10, 20), _at("ttgir", 2, 20, 20)
    assert _nest([top, at_end], 0, 1) == [top, at_end]  # a loop opening on the top loop's closing line is inside
    top, inner = _at("ttgir", 1, None, 20), _at("ttgir", 2, 5, 8)
    assert _nest([top, inner], 0, 1) == [top, inner]  # a top loop of unknown line starts at 0
    top, unknown = _at("ttgir", 1, 1, 20), _at("ttgir", 2, None, 0)
    assert _nest([top, unknown], 0, 1) == [top]  # a loop of unknown line (0) is before a top loop at line 1
    top, first = _at("ttgir", 1, None, 0), _at("ttgir", 2, 1, 1)
    assert _nest([top, first], 0, 1) == [top]  # an unknown closing line (0) ends the nest before line 1
    assert _nest([top, first], None, 1) == [top, first] and _nest([top, first], 0, 2) == [top, first]


@BOTH
def test_flattened_inner_loop_is_strictly_inside_the_outer_loop(swap: bool) -> None:
    """Facts written out by hand, in both orders: the inner loop quoted (and whose ``tt.dot`` makes the nest a matmul's)
    is one level deeper and opens after the ``tt.flatten`` loop's opening line (an unknown line counts as 0), up to and
    including its closing line; a deeper loop on the same line, or of unknown line, is not it."""
    other = make_facts("o", loops_ttir=[_loop("ttir", 1, 10, 20), _loop("ttir", 2, 12, 18)], loops_ttgir=[_loop("ttgir", 1, 10, 20), _loop("ttgir", 2, 12, 18)])  # fmt: skip
    cases = [
        ([_at("ttir", 1, 10, 20, flatten=True), _at("ttir", 2, 10, 10), _at("ttir", 2, 12, 18, dots=1)], 12),
        ([_at("ttir", 1, None, 20, flatten=True), _at("ttir", 2, None, 0), _at("ttir", 2, 5, 18, dots=1)], 5),
        ([_at("ttir", 1, None, 20, flatten=True), _at("ttir", 2, 1, 18, dots=1)], 1),
        ([_at("ttir", 1, 10, 20, flatten=True), _at("ttir", 2, 20, 20, dots=1)], 20),
    ]
    for ttir, inner in cases:
        fused = make_facts("f", loops_ttir=ttir, loops_ttgir=[_loop("ttgir", 1, 30, 40)])
        (f,) = rule_loops(make_context(other, fused) if swap else make_context(fused, other))
        assert f.title == "Tile loop and K loop are fused into one loop in `f` (`flatten=True`)", inner
        quoted = [e.text for e in f.evidence if e.variant == "f" and e.stage == "ttir"]
        assert quoted == [f"scf.for at {ttir[0].ref.line}", "} {tt.flatten}", f"scf.for at {inner}"]


@BOTH
def test_flattened_second_nest_quotes_its_own_ttgir_loops(swap: bool) -> None:
    """Facts written out by hand, in both orders: a plain loop (lines 10-20), then a nest (lines 30-50) that ``f``
    flattens and ``o`` keeps. The steady-state loop quoted for ``f`` is the fused nest's TTGIR loop (line 30, 3
    loop-carried values), not the plain loop carrying more (5); the two TTGIR loops quoted for ``o`` are that nest's
    (lines 30 and 35), not the plain loop."""
    plain, nest_o, inner_o = _at("ttir", 1, 10, 20), _at("ttir", 1, 30, 50), _at("ttir", 2, 35, 45)
    other = make_facts(
        "o",
        loops_ttir=[plain, nest_o, inner_o],
        loops_ttgir=[_at("ttgir", 1, 10, 20, iters=5), _at("ttgir", 1, 30, 50, iters=2), _at("ttgir", 2, 35, 45)],
    )
    fused = make_facts(
        "f",
        loops_ttir=[plain, _at("ttir", 1, 30, 50, flatten=True), inner_o],
        loops_ttgir=[_at("ttgir", 1, 10, 20, iters=5), _at("ttgir", 1, 30, 50, iters=3)],
    )
    (f,) = rule_loops(make_context(other, fused) if swap else make_context(fused, other))
    assert [(e.variant, e.stage, e.line) for e in f.evidence] == [
        ("f", "ttir", 30),
        ("f", "ttir", 50),
        ("f", "ttir", 35),
        ("f", "ttgir", 30),
        ("o", "ttgir", 30),
        ("o", "ttgir", 35),
    ]
    assert "the steady-state one carrying 3 values); `o` keeps 3 loop(s) with 2 loop-carried values" in f.explanation


@BOTH
def test_flattened_nested_flatten_loop_has_no_top_rank(swap: bool) -> None:
    """Facts written out by hand, in both orders: the ``tt.flatten`` loop is itself nested (depth 2, inside a loop at
    lines 10-50), so it has no rank among the top-level loops and every TTGIR loop is the nest's."""
    other = make_facts("o", loops_ttir=[_at("ttir", 1, 10, 50)], loops_ttgir=[_at("ttgir", 1, 10, 50, iters=4)])
    fused = make_facts(
        "f",
        loops_ttir=[_at("ttir", 1, 10, 50), _at("ttir", 2, 12, 40, flatten=True), _at("ttir", 3, 15, 30)],
        loops_ttgir=[_at("ttgir", 1, 10, 50, iters=2), _at("ttgir", 2, 12, 40, iters=6)],
    )
    (f,) = rule_loops(make_context(other, fused) if swap else make_context(fused, other))
    assert [(e.variant, e.stage, e.line) for e in f.evidence] == [
        ("f", "ttir", 12),
        ("f", "ttir", 40),
        ("f", "ttir", 15),
        ("f", "ttgir", 12),
        ("o", "ttgir", 10),
    ]
    assert "the steady-state one carrying 6 values); `o` keeps 1 loop(s) with 4 loop-carried values" in f.explanation
