"""Root causes of change kinds no earlier test had, each fixed by kind (``tests/suites/kinds/kinds.py``): every pair
is diagnosed in both orders (``diag_helpers.diagnose`` checks the mirror), and each kind has a second kernel that
no other test has. The first finding must name what the user changed (argument, line in both variants, direction)
and the mechanism the IR shows; nothing may be left unexplained.

Kinds: a hint's title names its line (store ``eviction_policy``, atomic ``scope``/``sem``); a module-qualified call
(``libdevice.exp`` vs ``tl.exp``); ``tl.range(..., loop_unroll_factor=N)`` (not the remainder loop's
``num_stages``); ``tl.multiple_of`` placed on another value; ``maxnreg`` set vs unset; a reduction's ``axis=``; a
transposed access (operands swapped in the address); a loop-invariant load moved into a loop; a single TMA tile
(not a ring); an edited ``@triton.jit`` helper.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from diag_helpers import diagnose, get, ids

from irdiff.bundle import Bundle, VariantResult
from irdiff.diagnose import Diagnosis
from irdiff.diagnose.facts import extract_facts
from irdiff.diagnose.model import Finding

KINDS = str(Path(__file__).parent / "suites" / "kinds" / "kinds.py")
BOTH = ["sm80", "sm90"]


def line_of(v: VariantResult, needle: str) -> int:
    first, last = v.metadata["kernel_lines"]
    lines = v.text("python").splitlines()
    return next(i for i in range(first, last + 1) if needle in lines[i - 1])


def orders(b: Bundle, x: str, y: str) -> list[Diagnosis]:
    """Both orders; :func:`diag_helpers.diagnose` asserts that each mirrors the other."""
    return [diagnose(b, x, y), diagnose(b, y, x)]


def reaches(d: Diagnosis, fid: str, root: str) -> bool:
    todo, seen = [fid], set()
    while todo:
        c = todo.pop()
        if c == root:
            return True
        if c not in seen:
            seen.add(c)
            g = d.finding(c)
            todo.extend(g.causes if g else [])
    return False


def names_lines(f: Finding, lines: dict[str, int]) -> bool:
    return all(f"line {ln} of `{v}`" in f.title for v, ln in lines.items())


# -- 1. a rule that names the hint also names its line (hint.cache, atomic.ordering) -------------------------------

HINTED = [
    # suite, variants, needle per variant, first id, targets (the second kernel of a kind on one target: CI cost)
    ("storeevict", ("stream", "keep"), ('eviction_policy="evict_first"', "tl.store(y"), "hint.cache", BOTH),
    ("atomscope", ("cta", "gpu"), ('scope="cta"', "tl.atomic_add("), "atomic.ordering", BOTH),
    ("atomsem", ("release", "relaxed"), ('sem="release"', 'sem="relaxed"'), "atomic.ordering", ["sm80"]),
]


@pytest.mark.parametrize(
    ("suite", "variants", "needles", "fid", "target"),
    [(s, v, n, f, t) for s, v, n, f, ts in HINTED for t in ts],
    ids=[f"{h[0]}-{t}" for h in HINTED for t in h[4]],
)
def test_hint_title_names_its_lines(  # type: ignore[no-untyped-def]
    compile_suite, suite: str, variants: tuple[str, str], needles: tuple[str, str], fid: str, target: str
) -> None:
    b = compile_suite(KINDS + "::" + suite, list(variants), target)
    lines = {v: line_of(b.variants[v], n) for v, n in zip(variants, needles, strict=True)}
    sass = {v: b.variants[v].text("sass") for v in variants}
    for d in orders(b, *variants):
        first = d.findings[0]
        assert first.id == fid, ids(d)
        assert names_lines(first, lines), first.title
        assert d.unexplained == []
        if fid == "atomic.ordering":
            heavy = first.predicts
            assert heavy is not None and f"(`{heavy}` adds " in first.title
            other = next(v for v in variants if v != heavy)
            # the title claims an L1 invalidation only when the heavier side's SASS has more CCTL
            more_cctl = sass[heavy].count("CCTL") > sass[other].count("CCTL")
            assert ("L1 invalidation" in first.title) == more_cctl, first.title
            gpu_fences = {v: len(re.findall(r"MEMBAR(?:\.ALL)?\.GPU", sass[v])) for v in variants}
            assert ("GPU-wide fence" in first.title) == (gpu_fences[heavy] > gpu_fences[other]), first.title
            assert "fence" in first.title
        else:
            attr = get(d, "ttir.attr-changed")
            assert "`eviction_policy = evict_first`" in attr.title
            assert "cache_modifier = none" not in attr.title and "tt.cache_policy" not in attr.title
            ptx = b.variants["stream"].text("ptx")
            assert ("createpolicy" in ptx) == ("`createpolicy` makes" in first.explanation)
            assert "not the instruction count" not in first.explanation


# -- 2. a call to another module's function of the same name is named whole ---------------------------------------

QUALIFIED = [
    ("libexp", ("libdevice", "fast"), ("libdevice.exp(", "tl.exp("), ("`libdevice.exp`", "`tl.exp`"), BOTH),
    ("libsqrt", ("libdevice", "fast"), ("libdevice.sqrt(", "tl.sqrt("), ("`libdevice.sqrt`", "`tl.sqrt`"), ["sm90"]),
]


@pytest.mark.parametrize(
    ("suite", "variants", "needles", "words", "target"),
    [(s, v, n, w, t) for s, v, n, w, ts in QUALIFIED for t in ts],
    ids=[f"{s}-{t}" for s, _, _, _, ts in QUALIFIED for t in ts],
)
def test_module_qualified_call_is_named_whole(  # type: ignore[no-untyped-def]
    compile_suite, suite: str, variants: tuple[str, str], needles: tuple[str, str], words: tuple[str, str], target: str
) -> None:
    b = compile_suite(KINDS + "::" + suite, list(variants), target)
    lines = {v: line_of(b.variants[v], n) for v, n in zip(variants, needles, strict=True)}
    for d in orders(b, *variants):
        first = d.findings[0]
        assert all(w in first.title for w in words), first.title
        assert "`libdevice` in" not in first.title and "`tl` in" not in first.title
        assert names_lines(first, lines), first.title
        assert d.unexplained == []
    if suite == "libexp":  # ex2.approx with and without .ftz: the precision rule names the call
        assert first.id == "precision.math" and "`.ftz`" in first.explanation


# -- 3. loop_unroll_factor is named, the remainder loop's num_stages = 1 is not --------------------------------------

UNROLLED = [("unrollf", 4, BOTH), ("unrollred", 2, ["sm80"])]


@pytest.mark.parametrize(
    ("suite", "factor", "target"),
    [(s, f, t) for s, f, ts in UNROLLED for t in ts],
    ids=[f"{s}-{t}" for s, _, ts in UNROLLED for t in ts],
)
def test_unroll_factor_is_the_root(compile_suite, suite: str, factor: int, target: str) -> None:  # type: ignore[no-untyped-def]
    b = compile_suite(KINDS + "::" + suite, ["unrolled", "plain"], target)
    fu = extract_facts(b.variants["unrolled"])
    assert [lp.unroll for lp in fu.loops_ttir if lp.unroll > 1] == [factor]
    assert sum(lp.remainder for lp in fu.loops_ttir) == 1  # the remainder loop (tt.num_stages = 1) is recognized
    lines = {
        "unrolled": line_of(b.variants["unrolled"], "loop_unroll_factor"),
        "plain": line_of(b.variants["plain"], "in range("),
    }
    for d in orders(b, "unrolled", "plain"):
        first = d.findings[0]
        assert first.id == "loop.unrolled", ids(d)
        assert f"`loop_unroll_factor={factor}`" in first.title and f"{factor}× in `unrolled`" in first.title
        assert names_lines(first, lines), first.title
        assert not {"loop.num-stages", "loop.nest", "loop.invariant-load"} & set(ids(d)), ids(d)
        assert all(reaches(d, f.id, "loop.unrolled") for f in d.findings), [(f.id, f.causes) for f in d.findings]
        assert d.unexplained == []


# -- 4. the same hint on another value ------------------------------------------------------------------------------

PLACED = [
    # suite, variants, (hinted expression, its line's needle) per variant, aligned variant, sm targets
    ("hintplace", ("onpid", "onstart"), (("tl.program_id(0)", "pid = tl.multiple_of"), ("tl.load(starts + pid)", "start = tl.multiple_of")), BOTH),
    ("hintjag", ("onend", "onstart"), (("tl.load(rowptr + pid + 1)", "end = tl.multiple_of"), ("tl.load(rowptr + pid)", "start = tl.multiple_of")), ["sm90"]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("suite", "variants", "hinted", "target"),
    [(s, v, h, t) for s, v, h, ts in PLACED for t in ts],
    ids=[f"{s}-{t}" for s, _, _, ts in PLACED for t in ts],
)
def test_hint_on_another_value(  # type: ignore[no-untyped-def]
    compile_suite, suite: str, variants: tuple[str, str], hinted: tuple[tuple[str, str], ...], target: str
) -> None:
    b = compile_suite(KINDS + "::" + suite, list(variants), target)
    for d in orders(b, *variants):
        first = d.findings[0]
        assert first.id == "hint.axis-info", ids(d)
        for v, (expr, needle) in zip(variants, hinted, strict=True):
            assert f"on `{expr}` at line {line_of(b.variants[v], needle)} of `{v}`" in first.title, first.title
        cont = get(d, "coalesce.contiguity")
        assert reaches(d, cont.id, first.id)
        # the start offset's hint is the one that reaches the address: `onstart` is proven 16-byte aligned
        assert "16 bytes in `onstart`" in cont.title, cont.title
        widths_differ = any(f.id == "coalesce.vector-width" for f in d.findings)
        # at least its own judgement (major when the widths differ), raised to its worst effect's severity
        own = "major" if widths_differ else "minor"
        sev = ("info", "minor", "major", "critical")
        worst = max([own] + [f.severity for f in d.findings if f.id != first.id and reaches(d, f.id, first.id)],
                    key=sev.index)  # fmt: skip
        assert first.severity == worst
        assert ("keep the same widths" in first.explanation) == (not widths_differ)
        assert d.unexplained == []


# -- 5. maxnreg set vs unset is an option change --------------------------------------------------------------------

CAPPED = [("maxreg", 40, "sm80"), ("maxregfma", 48, "sm80"), ("maxregfma", 48, "sm90")]


@pytest.mark.parametrize(("suite", "cap", "target"), CAPPED, ids=[f"{s}-{t}" for s, _, t in CAPPED])
def test_maxnreg_unset_is_an_option(compile_suite, suite: str, cap: int, target: str) -> None:  # type: ignore[no-untyped-def]
    b = compile_suite(KINDS + "::" + suite, ["cap", "free"], target)
    assert f".maxnreg {cap}" in b.variants["cap"].text("ptx") and ".maxnreg" not in b.variants["free"].text("ptx")
    for d in orders(b, "cap", "free"):
        first = d.findings[0]
        assert first.id == "options.changed", ids(d)
        assert f" {cap} in `cap`" in first.title and "`maxnreg` = " in first.title
        assert "unset (no cap) in `free`" in first.title
        assert "`.maxnreg`" in first.explanation
        assert all(reaches(d, f.id, first.id) for f in d.findings)
        assert d.unexplained == []
    if suite == "maxreg":  # 40 registers for a 64x64 fp32 accumulator: ptxas spills, and the spills name the cap
        assert "options.changed" in get(d, "resources.spills").causes


# -- 6. a reduction axis: the keyword is the root, the instruction counts are its effects ---------------------------

AXES = [("redaxis", ("cols", "rows"), BOTH), ("maxaxis", ("axis0", "axis1"), ["sm90"])]


@pytest.mark.parametrize(
    ("suite", "variants", "target"),
    [(s, v, t) for s, v, ts in AXES for t in ts],
    ids=[f"{s}-{t}" for s, _, ts in AXES for t in ts],
)
def test_reduction_axis_is_the_root(compile_suite, suite: str, variants: tuple[str, str], target: str) -> None:  # type: ignore[no-untyped-def]
    b = compile_suite(KINDS + "::" + suite, list(variants), target)
    lines = {v: line_of(b.variants[v], "axis=") for v in variants}
    for d in orders(b, *variants):
        first = d.findings[0]
        assert first.id == "source.kwarg-changed", ids(d)
        assert "`axis=0`" in first.title and "`axis=1`" in first.title and names_lines(first, lines)
        assert "warp shuffles" in first.explanation and "`bar.sync`" in first.explanation
        assert "cache hints" not in first.explanation  # LOP3.LUT is no `.LU` cache operator
        assert all(reaches(d, f.id, first.id) for f in d.findings)
        assert d.unexplained == []


# -- 7. a transposed access: each variant's own contiguous dimension, no attribute change from a type --------------

SWAPPED = [
    ("swapidx", ("colmajor", "rowmajor"), "v = tl.load", BOTH),
    ("swapstore", ("cols", "rows"), "tl.store(dst", ["sm90"]),
]


@pytest.mark.parametrize(
    ("suite", "variants", "needle", "target"),
    [(s, v, n, t) for s, v, n, ts in SWAPPED for t in ts],
    ids=[f"{s}-{t}" for s, _, _, ts in SWAPPED for t in ts],
)
def test_transposed_access(  # type: ignore[no-untyped-def]
    compile_suite, suite: str, variants: tuple[str, str], needle: str, target: str
) -> None:
    b = compile_suite(KINDS + "::" + suite, list(variants), target)
    lines = {v: line_of(b.variants[v], needle) for v in variants}
    best = {}
    for v in variants:
        acc = extract_facts(b.variants[v]).accesses
        best[v] = max(max(a.contiguity) for a in acc if a.kind == ("store" if "store" in needle else "load"))
    for d in orders(b, *variants):
        first = d.findings[0]
        assert names_lines(first, lines) and all(f"`{v}`" in first.title for v in variants), first.title
        assert "`cols` and `rows` swapped" in first.title, first.title  # the two operands that traded places
        assert "ttir.attr-changed" not in ids(d)  # a 64x1 vs 1x64 splat differs in type, not in attributes
        cont = get(d, "coalesce.contiguity")
        assert cont.severity != "critical"  # both are contiguous, along another dimension each
        assert all(
            f"contiguity {best[v]} in `{v}`" in cont.title or f"{best[v]} in `{v}`" in cont.title for v in variants
        )
        assert reaches(d, "layout.convert-shared", first.id)
        assert d.unexplained == []


# -- 8. a loop-invariant load moved into a loop ---------------------------------------------------------------------

MOVED = [("invload", "wv = tl.load", BOTH), ("invrow", "b = tl.load", ["sm80"])]


@pytest.mark.parametrize(
    ("suite", "needle", "target"),
    [(s, n, t) for s, n, ts in MOVED for t in ts],
    ids=[f"{s}-{t}" for s, _, ts in MOVED for t in ts],
)
def test_loop_invariant_load(compile_suite, suite: str, needle: str, target: str) -> None:  # type: ignore[no-untyped-def]
    b = compile_suite(KINDS + "::" + suite, ["inside", "hoisted"], target)
    assert len(extract_facts(b.variants["inside"]).invariant_loads) == 1
    assert extract_facts(b.variants["hoisted"]).invariant_loads == []
    lines = {v: line_of(b.variants[v], needle) for v in ("inside", "hoisted")}
    for d, word in zip(orders(b, "inside", "hoisted"), ("out of the loop", "into the loop"), strict=True):
        first = d.findings[0]
        assert first.id == "loop.invariant-load" and first.predicts == "inside", ids(d)
        assert f"moved {word}" in first.title and names_lines(first, lines), first.title
        assert d.unexplained == []


# -- 9. one TMA tile is one buffer, not a ring ----------------------------------------------------------------------


@pytest.mark.parametrize("suite", ["blockptr", "descwide"])
def test_single_tma_tile_is_not_a_ring(compile_suite, suite: str) -> None:  # type: ignore[no-untyped-def]
    b = compile_suite(KINDS + "::" + suite, ["desc", "ptrs"], "sm90")
    fd = extract_facts(b.variants["desc"])
    assert fd.tma_copies and fd.buffers and all(x.depth == 1 for x in fd.buffers)
    line = line_of(b.variants["desc"], "tl.make_tensor_descriptor")
    for d in orders(b, "desc", "ptrs"):
        assert "pipeline.buffers" not in ids(d), get(d, "pipeline.buffers").title
        assert "Multi-buffered" not in " ".join(f.title for f in d.findings)
        assert any(f"line {line} of `desc`" in f.title for f in d.findings if not f.causes)
        assert reaches(d, "ttgir.tma", d.findings[0].id) or get(d, "ttgir.tma").causes
        assert d.unexplained == []


# -- 10. an edited @triton.jit helper is named as such -------------------------------------------------------------


@pytest.mark.parametrize("target", BOTH)
def test_edited_helper_is_named(compile_suite, target: str) -> None:  # type: ignore[no-untyped-def]
    b = compile_suite(KINDS + "::helper", ["erf", "tanh"], target)
    for d in orders(b, "erf", "tanh"):
        roots = [f for f in d.findings if not f.causes]
        assert roots and all("the called `@triton.jit` function `gelu`" in f.title for f in roots), [
            f.title for f in roots
        ]
        assert re.search(r"`tl\.erf\(", " ".join(f.title for f in roots))
        assert d.unexplained == []


def test_hint_statement_of_its_own_is_the_root_at_its_line(compile_suite) -> None:  # type: ignore[no-untyped-def]
    """``base = tl.multiple_of(base, 4)`` on a line of its own puts ``tt.divisibility`` on the ``arith.muli`` of the
    line above. The root is the hint at the call's line (not the attribute's), the attribute change is its effect,
    and nothing is unexplained; the wider accesses follow from it. Both orders. (The sweep gate's fixture,
    tests/suites/sweep_hints.py, is the second kernel of this kind: a dropped ``tl.multiple_of(start, 8)``.)"""
    suite = str(Path(__file__).parent / "suites" / "hint_statement.py")
    b = compile_suite(suite, ["plain", "hinted"], "sm80")
    call = line_of(b.variants["hinted"], "tl.multiple_of(base, 4)")
    for d in orders(b, "plain", "hinted"):
        first = d.findings[0]
        assert first.id == "hint.axis-info" and first.severity == "major", ids(d)
        assert f"line {call} of `hinted`" in first.title, first.title
        assert not d.unexplained, d.unexplained
        attr = get(d, "ttir.attr-changed")
        assert attr.causes == ["hint.axis-info"], attr.causes
        assert "tt.divisibility" in attr.title
        assert get(d, "coalesce.vector-width").severity == "major"
