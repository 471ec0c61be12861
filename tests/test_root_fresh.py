"""Root causes on pairs no earlier test had (sm80 and sm90, both orders): a changed call target, a cache modifier, a
transposed dot operand. The first finding names the change at its line in both variants; precision wording comes
from the modifiers actually in the PTX; an attribute change is no more severe than the root it restates. Kernels:
``tests/suites/root_fresh.py``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from diag_helpers import get, ids

from irdiff.bundle import Bundle, VariantResult
from irdiff.diagnose import Diagnosis, diagnose
from irdiff.diagnose.model import SEVERITIES, Finding

FRESH = str(Path(__file__).parent / "suites" / "root_fresh.py")
TARGETS = ["sm80", "sm90"]


def line_of(v: VariantResult, needle: str) -> int:
    first, last = v.metadata["kernel_lines"]
    lines = v.text("python").splitlines()
    return next(i for i in range(first, last + 1) if needle in lines[i - 1])


def at_line(f: Finding, variant: str, line: int) -> bool:
    return any(e.stage == "python" and e.variant == variant and e.line == line for e in f.evidence)


def both_orders(b: Bundle, x: str, y: str) -> list[tuple[str, str, Diagnosis]]:
    return [(a, o, diagnose(b, a, o)) for a, o in ((x, y), (y, x))]


def reached_from(d: Diagnosis, root: str, fid: str) -> bool:
    todo, seen = [fid], set()
    while todo:
        c = todo.pop()
        if c == root:
            return True
        if c in seen:
            continue
        seen.add(c)
        g = d.finding(c)
        todo.extend(g.causes if g else [])
    return False


@pytest.mark.parametrize("target", TARGETS)
def test_changed_call_exp_to_exp2_names_call_and_ftz(compile_suite, target: str) -> None:  # type: ignore[no-untyped-def]
    b = compile_suite(FRESH + "::expcall", ["exp", "exp2"], target)
    le, l2 = line_of(b.variants["exp"], "tl.exp("), line_of(b.variants["exp2"], "tl.math.exp2(")
    ptx_exp, ptx_exp2 = b.variants["exp"].text("ptx"), b.variants["exp2"].text("ptx")
    assert "ex2.approx.f32" in ptx_exp and "ex2.approx.ftz.f32" in ptx_exp2  # the fact the wording must follow
    for _a, _o, d in both_orders(b, "exp", "exp2"):
        first = d.findings[0]
        assert at_line(first, "exp", le) and at_line(first, "exp2", l2), ids(d)
        assert "`tl.exp`" in first.title and "`tl.math.exp2`" in first.title
        if first.id == "precision.math":
            text = first.explanation
            # both sides are approximate: the difference is .ftz, and nothing claims IEEE rounding
            assert "Both use the same rounding (`.approx`)" in text and "`.ftz`" in text
            assert "IEEE" not in text
            assert "`exp2` flushes subnormal" in text
        assert d.unexplained == []


@pytest.mark.parametrize("target", TARGETS)
def test_changed_call_sqrt_to_sqrt_rn_says_approx_vs_ieee(compile_suite, target: str) -> None:  # type: ignore[no-untyped-def]
    b = compile_suite(FRESH + "::sqrtcall", ["fast", "rn"], target)
    lf, lr = line_of(b.variants["fast"], "tl.sqrt("), line_of(b.variants["rn"], "tl.sqrt_rn(")
    for _a, _o, d in both_orders(b, "fast", "rn"):
        first = d.findings[0]
        assert at_line(first, "fast", lf) and at_line(first, "rn", lr), ids(d)
        assert "`tl.sqrt`" in first.title and "`tl.sqrt_rn`" in first.title
        m = get(d, "precision.math")
        assert "`rn`: IEEE round-to-nearest-even" in m.explanation and "`fast`: approximate" in m.explanation
        assert "The rounding differs" in m.explanation
        assert d.unexplained == []


@pytest.mark.parametrize("target", TARGETS)
def test_cache_modifier_claims_only_what_the_ptx_has(compile_suite, target: str) -> None:  # type: ignore[no-untyped-def]
    b = compile_suite(FRESH + "::cachemod", ["cg", "plain"], target)
    lc, lp = line_of(b.variants["cg"], 'cache_modifier=".cg"'), line_of(b.variants["plain"], "v = tl.load")
    ptx = b.variants["cg"].text("ptx") + b.variants["plain"].text("ptx")
    assert "ld.global.cg" in ptx
    rank = {s: i for i, s in enumerate(SEVERITIES)}
    for _a, _o, d in both_orders(b, "cg", "plain"):
        first = d.findings[0]
        assert first.id in ("hint.cache", "source.kwarg-changed"), ids(d)
        assert at_line(first, "cg", lc) and at_line(first, "plain", lp)
        attr = get(d, "ttir.attr-changed")
        assert attr.causes == [first.id]
        assert rank[attr.severity] <= rank[first.severity]  # a restatement is no more severe than its root
        assert ("createpolicy" in attr.explanation) == ("createpolicy" in ptx)
        assert "evict_first" not in attr.explanation and "evict_last" not in attr.explanation
        assert "`.cg` (caches in L2 only" in attr.explanation
        assert d.unexplained == []


def test_transposed_dot_operand_links_the_layout_conversion(compile_suite) -> None:  # type: ignore[no-untyped-def]
    """sm80 (mma.sync): ``tl.trans`` of a loaded tile needs a layout conversion through shared memory; the finding
    names the source change on the ``tl.trans`` line and nothing is unexplained."""
    b = compile_suite(FRESH + "::transdot", ["trans", "direct"], "sm80")
    lt, ld = line_of(b.variants["trans"], "tl.trans(bt)"), line_of(b.variants["direct"], "tl.dot(a, b)")
    for _a, _o, d in both_orders(b, "trans", "direct"):
        conv = get(d, "layout.convert-shared")
        root = next(f for f in d.findings if not f.causes and reached_from(d, f.id, conv.id))
        assert at_line(root, "trans", lt) and at_line(root, "direct", ld), (root.id, root.evidence)
        assert "tl.trans(bt)" in root.title
        assert d.findings[0].id == root.id
        assert d.unexplained == []


# (suite, variants, needle on the changed line per variant, words the first title must contain)
NEW_KINDS = [
    ("volatile", ("volatile", "plain"), ("volatile=True", "v = tl.load"), ("volatile",)),
    ("unroll", ("static", "loop"), ("tl.static_range", "range(NCH)"), ("`tl.static_range`", "`range`")),
    ("offs64", ("i64", "i32"), (".to(tl.int64)", "base = tl.program_id(0) * B"), ("tl.program_id(0).to",)),
    ("dotout", ("f16acc", "f32acc"), ("out_dtype=tl.float16", "c = tl.dot(a, b)"), ("out_dtype",)),
    ("wherefill", ("where", "other"), ("v = tl.load", "other=0.0"), ("other",)),
    ("stagesloop", ("one", "default"), ("tl.range(", "in range(0, K, TK)"), ("`tl.range`", "`range`")),
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(("suite", "variants", "needles", "words"), NEW_KINDS, ids=[k[0] for k in NEW_KINDS])
def test_first_finding_names_the_change(  # type: ignore[no-untyped-def]
    compile_suite, target: str, suite: str, variants: tuple[str, str], needles: tuple[str, str], words: tuple[str]
) -> None:
    """One source change per pair (a load made volatile, a static loop, int64 offsets, a dot's out_dtype, masked
    ``other=`` instead of ``tl.where``, ``tl.range(..., num_stages=1)``): the first finding names it at its line in both variants, nothing is left
    unexplained, and no finding reports equal counts as a difference."""
    b = compile_suite(FRESH + "::" + suite, list(variants), target)
    lines = {v: line_of(b.variants[v], n) for v, n in zip(variants, needles, strict=True)}
    for _a, _o, d in both_orders(b, *variants):
        first = d.findings[0]
        assert all(at_line(first, v, ln) for v, ln in lines.items()), (ids(d), first.evidence)
        assert all(w in first.title for w in words), first.title
        assert d.unexplained == []
        assert not any(re.search(r"(\d+/\d+) in `\w+` vs \1 in `", f.title) for f in d.findings)  # equal counts
