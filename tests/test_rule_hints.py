"""``hint.cache``, ``hint.axis-info``, ``compiler.messages`` and ``pipeline.wait-depth``
(``irdiff/diagnose/rules/hints.py``) on the facts of real compiles, each rule called directly, in both orders.

Kernels: ``tests/suites/diag_mech.py`` (a streaming copy with ``evict_first`` loads and ``.cs`` stores vs none;
``tl.where`` on an int32 condition, which Triton warns about, vs a bool one; a K loop with ``num_stages`` 4 vs 2, sm80),
``tests/suites/kinds/kinds.py`` (``storeevict``: ``evict_first`` on the store only; ``hintplace``: ``tl.multiple_of``
on the program id vs on a start offset loaded from memory) and ``tests/suites/rule_mech.py`` (``gather``: ``.cg``,
``.ca`` and ``volatile`` loads vs plain ones, ``tl.max_contiguous(tl.multiple_of(...))`` on the offsets vs none).
Instruction counts are read from each variant's own PTX text, never hard-coded.
"""

from __future__ import annotations

import re

import pytest
from rule_pairs import KINDS, OWN, OWN_VARIANTS, at_line, context, ev, lines, n_ptx, one

from irdiff.bundle import Bundle
from irdiff.diagnose.facts import Access, Ref, VariantFacts
from irdiff.diagnose.mechfacts import AsyncWaitFact, HintFact, MechFacts, compiler_messages
from irdiff.diagnose.rules.hints import (
    _hinted_value,
    rule_axis_hints,
    rule_cache_hints,
    rule_compiler_messages,
    rule_wait_depth,
)
from irdiff.diagnose.testing import make_context, make_facts
from irdiff.diagnose.texts import stage_text

BOTH = pytest.mark.parametrize("swap", [False, True], ids=["as-named", "swapped"])
CACHED = (
    "Hints change where data is cached: they help when the data is touched once (streaming) and other data should "
    "stay cached, and can hurt when it is reused. "
)
RESULTS = "Results are the same (except `volatile`/`.cv`, which re-read memory other threads may change)."
POLICY = (
    "The L2 policy costs instructions of its own (`createpolicy` makes the 64-bit policy operand the accesses carry). "
)
SAME = "They change no instruction count. "
EVICT = "`L1::evict_first` plus an L2 `createpolicy` cache hint: evicted first."
AXIS = (
    "`tl.multiple_of` and `tl.max_contiguous` state divisibility and contiguity that AxisInfo cannot prove (they become "
    "`tt.divisibility`/`tt.contiguity` attributes), `tl.assume` a condition; they change code only through vector "
    "width and pipelining (see the coalescing/pipelining findings, if any). "
)
SAME_WIDTHS = (
    "Here the PTX loads and stores keep the same widths in both variants: the alignment AxisInfo proves differs, but "
    "something else (a mask, the layout) bounds the vector width. "
)
FALSE_HINT = (
    "A hint that is false makes results wrong (misaligned vector accesses); a true one does not change results."
)


@pytest.fixture(scope="module")
def own(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(OWN, OWN_VARIANTS, "sm80")  # type: ignore[no-any-return]


# ------------------------------------------------------------------------------------------------------ hint.cache


@BOTH
def test_cg_load_named_with_its_ptx_qualifier(own: Bundle, swap: bool) -> None:
    """``cache_modifier=".cg"`` on the load: named on the load (TTIR ``cachePolicy`` and the Python call), with the
    PTX qualifier it became (``ld.global.cg``) counted in the PTX; no instruction count changes."""
    f, a, b = one(rule_cache_hints, own, "cg", "plain", swap)
    assert (f.id, f.severity, f.stage, f.predicts) == ("hint.cache", "info", "ttir", None)
    desc = {"cg": "load cache_modifier=cg", "plain": "none"}
    assert f.title == f"Cache hints: {desc[a]} in `{a}` vs {desc[b]} in `{b}`"
    n = n_ptx(own, "cg", r"\bld\.global\.cg\b")
    assert n > 0 and n_ptx(own, "plain", r"\.cg\b") == 0
    ptx = {"cg": f"`cg` {n}× `hint .cg`", "plain": "`plain` no cache qualifiers"}
    assert f.explanation == (
        f"Memory hints: {desc[a]} in `{a}`; {desc[b]} in `{b}`. In PTX: {ptx[a]}; {ptx[b]}. `.cg`: cache in L2 only, "
        f"bypass L1. {CACHED}{SAME}{RESULTS}"
    )
    assert ev(f) == [("cg", "ttir"), ("cg", "python"), ("cg", "ptx")]
    assert f.evidence[0].text == at_line(own, f, 0)[:220] and re.search(r"cache_?[mM]odifier = cg", f.evidence[0].text)
    assert 'cache_modifier=".cg"' in f.evidence[1].text and f.evidence[1].text == at_line(own, f, 1)
    assert (f.evidence[2].line, f.evidence[2].text) == (None, f"{n}× hint .cg")


@BOTH
def test_ca_against_cg_names_both_effects(own: Bundle, swap: bool) -> None:
    """Two different modifiers: each side's hint, qualifier count and meaning, in the order of the sorted hints."""
    f, a, b = one(rule_cache_hints, own, "ca", "cg", swap)
    assert f.title == f"Cache hints: load cache_modifier={a} in `{a}` vs load cache_modifier={b} in `{b}`"
    n = {v: n_ptx(own, v, rf"\bld\.global\.{v}\b") for v in ("ca", "cg")}
    assert f"In PTX: `{a}` {n[a]}× `hint .{a}`; `{b}` {n[b]}× `hint .{b}`. " in f.explanation
    assert "`.ca`: cache at all levels. `.cg`: cache in L2 only, bypass L1. " + CACHED + SAME in f.explanation
    assert ev(f) == [(a, "ttir"), (a, "python"), (a, "ptx"), (b, "ttir"), (b, "python"), (b, "ptx")]


@BOTH
def test_volatile_load_named(own: Bundle, swap: bool) -> None:
    f, a, b = one(rule_cache_hints, own, "vol", "plain", swap)
    assert "load volatile=true in `vol`" in f.title and "none in `plain`" in f.title
    n = n_ptx(own, "vol", r"\bld\.volatile\b")
    assert n > 0 and f"`vol` {n}× `hint volatile`" in f.explanation
    assert "`ld.volatile`: never cached or merged. " + CACHED + SAME in f.explanation
    assert "isVolatile = true" in f.evidence[0].text and "volatile=True" in f.evidence[1].text


@BOTH
def test_evict_first_and_cs_name_the_l2_policy_cost(mech80: Bundle, swap: bool) -> None:
    """``eviction_policy="evict_first"`` loads and ``.cs`` stores: the L2 ``createpolicy`` costs instructions (the
    explanation says so instead of "no instruction count"); both hints are named on their op."""
    f, a, b = one(rule_cache_hints, mech80, "hints", "nohints", swap)
    desc = {"hints": "store cache_modifier=cs, load eviction_policy=evict_first", "nohints": "none"}
    assert f.title == f"Cache hints: {desc[a]} in `{a}` vs {desc[b]} in `{b}`"
    pol = n_ptx(mech80, "hints", r"\bcreatepolicy\b")
    cs = n_ptx(mech80, "hints", r"\bst\.global\.cs\b")
    ef = n_ptx(mech80, "hints", r"L1::evict_first")
    assert pol > 0 and cs > 0 and ef > 0
    ptx = {
        "hints": f"`hints` {pol}× `createpolicy`, {cs}× `hint .cs`, {ef}× `hint L1::evict_first`, {ef}× `hint L2::cache_hint`",
        "nohints": "`nohints` no cache qualifiers",
    }
    assert f.explanation == (
        f"Memory hints: {desc[a]} in `{a}`; {desc[b]} in `{b}`. In PTX: {ptx[a]}; {ptx[b]}. `.cs`: streaming, likely "
        f"accessed once (evict first). {EVICT} {CACHED}{POLICY}{RESULTS}"
    )
    assert ev(f) == [("hints", "ttir"), ("hints", "python"), ("hints", "ttir"), ("hints", "python"), ("hints", "ptx")]
    assert (
        re.search(r"evict(ion_policy|ionPolicy) = evict_first", f.evidence[0].text) and "tt.load" in f.evidence[0].text
    )
    assert re.search(r"cache_?[mM]odifier = cs", f.evidence[2].text) and "tt.store" in f.evidence[2].text
    # PTX and SASS qualifiers together, sorted by key
    parts = f.evidence[4].text.split(", ")
    keys = [p.split("× ", 1)[1] for p in parts]
    assert keys == sorted(keys) and f"{pol}× createpolicy" in parts and f"{cs}× hint .cs" in parts
    assert any(p.endswith("LDG hint .EF") for p in parts) and any(p.endswith("STG hint .EF") for p in parts)


@BOTH
def test_store_only_evict_first(compile_suite, swap: bool) -> None:  # type: ignore[no-untyped-def]
    b_ = compile_suite(KINDS + "::storeevict", ["stream", "keep"], "sm80")
    f, a, b = one(rule_cache_hints, b_, "stream", "keep", swap)
    desc = {"stream": "store eviction_policy=evict_first", "keep": "none"}
    assert f.title == f"Cache hints: {desc[a]} in `{a}` vs {desc[b]} in `{b}`"
    assert f"{EVICT} {CACHED}{POLICY}{RESULTS}" in f.explanation and "`.cs`" not in f.explanation
    assert "tl.store(" in f.evidence[1].text and 'eviction_policy="evict_first"' in f.evidence[1].text


def test_same_hints_are_silent(own: Bundle, mech80: Bundle) -> None:
    assert rule_cache_hints(context(own, "cg", "cg")) == []
    assert rule_cache_hints(context(own, "contig", "plain")) == []  # AxisInfo hints are not cache hints
    assert rule_cache_hints(context(mech80, "relaxed", "acq_rel")) == []


# -------------------------------------------------------------------------------------------------- hint.axis-info


@BOTH
def test_hint_on_another_value_names_each_line(compile_suite, swap: bool) -> None:  # type: ignore[no-untyped-def]
    """``tl.multiple_of(…, 16)`` on the program id in ``onpid`` and on the loaded start in ``onstart``: the same hint
    moved to another value, named with the wrapped expression and its line in each variant; the accesses differ in
    width (major)."""
    bundle = compile_suite(KINDS + "::hintplace", ["onpid", "onstart"], "sm80")
    f, a, b = one(rule_axis_hints, bundle, "onpid", "onstart", swap)
    assert (f.id, f.severity, f.stage, f.predicts) == ("hint.axis-info", "major", "ttir", None)
    ln = {
        "onpid": lines(bundle, "onpid", "python", r"tl\.multiple_of\(tl\.program_id\(0\), 16\)")[0][0],
        "onstart": lines(bundle, "onstart", "python", r"tl\.multiple_of\(tl\.load\(starts \+ pid\), 16\)")[0][0],
    }
    on = {"onpid": "tl.program_id(0)", "onstart": "tl.load(starts + pid)"}
    d = {v: f"`tl.multiple_of`(16) on `{on[v]}` at line {ln[v]} of `{v}`" for v in on}
    assert f.title == f"AxisInfo hints differ: {d[a]} only in `{a}`, {d[b]} only in `{b}`"
    assert f.explanation.startswith(
        f"Hints only in `{a}`: {d[a]}; only in `{b}`: {d[b]}. The same hint sits on another value in each variant: "
        "only the value whose divisibility or contiguity reaches an address changes an access (AxisInfo propagates "
        "the hint through the arithmetic that uses it). `tl.multiple_of` and `tl.max_contiguous` state"
    )
    assert "keep the same widths" not in f.explanation
    # the widths differ, so nothing says they are the same: the mechanism, then the warning about false hints
    assert f.explanation == (
        f"Hints only in `{a}`: {d[a]}; only in `{b}`: {d[b]}. The same hint sits on another value in each variant: "
        "only the value whose divisibility or contiguity reaches an address changes an access (AxisInfo propagates "
        f"the hint through the arithmetic that uses it). {AXIS}{FALSE_HINT}"
    )
    assert ev(f) == [(a, "python"), (b, "python")]
    assert [e.line for e in f.evidence] == [ln[a], ln[b]]


@BOTH
def test_max_contiguous_hint_widens_accesses(own: Bundle, swap: bool) -> None:
    """Own kernel: ``tl.max_contiguous(tl.multiple_of(first + o, 8), 8)`` on a runtime row start vs no hint; the
    hinted side's accesses change, so the hints (not moved: no line named) are reported, each once."""
    f, a, b = one(rule_axis_hints, own, "contig", "plain", swap)
    hs = "`tl.max_contiguous`(8), `tl.multiple_of`(8)"
    d = {"contig": hs, "plain": "none"}
    assert f.title == f"AxisInfo hints differ: {d[a]} only in `{a}`, {d[b]} only in `{b}`"
    assert f.explanation.startswith(f"Hints only in `{a}`: {d[a]}; only in `{b}`: {d[b]}. `tl.multiple_of` and ")
    assert "sits on another value" not in f.explanation
    fa, fb = context(own, "contig", "plain").fa, context(own, "contig", "plain").fb
    widths = sorted(x.ptx_bits or 0 for x in fa.lowered), sorted(x.ptx_bits or 0 for x in fb.lowered)
    same = widths[0] == widths[1]
    assert f.severity == ("minor" if same else "major")
    assert ("keep the same widths in both variants" in f.explanation) == same
    assert f.explanation.endswith(
        "A hint that is false makes results wrong (misaligned vector accesses); a true one does not change results."
    )
    assert ev(f) == [("contig", "python"), ("contig", "python")]
    assert "tl.max_contiguous(tl.multiple_of(first + o, 8), 8)" in f.evidence[0].text


def test_same_or_unrelated_hints_are_silent(own: Bundle) -> None:
    """No AxisInfo hint on either side (a cache modifier is not one), or the same hints: nothing."""
    assert rule_axis_hints(context(own, "cg", "plain")) == []
    assert rule_axis_hints(context(own, "contig", "contig")) == []


def test_hinted_value() -> None:
    """The expression a hint wraps on its Python line; "" for a line that does not parse or has no such call."""
    assert _hinted_value("pid = tl.multiple_of(tl.program_id(0), 16)", "multiple_of") == "tl.program_id(0)"
    assert _hinted_value("  x = multiple_of(a + b, 8)", "multiple_of") == "a + b"
    assert _hinted_value("p = tl.max_contiguous(tl.multiple_of(f + o, 8), 8)", "multiple_of") == "f + o"
    assert _hinted_value("p = tl.max_contiguous(tl.multiple_of(f + o, 8), 8)", "max_contiguous") == (
        "tl.multiple_of(f + o, 8)"
    )
    long = "x = tl.multiple_of(" + " + ".join(f"v{i}" for i in range(20)) + ", 16)"
    got = _hinted_value(long, "multiple_of")
    assert len(got) == 60 and got.endswith("...") and got.startswith("v0 + v1")
    assert _hinted_value("x = tl.multiple_of(" + "a" * 60 + ", 16)", "multiple_of") == "a" * 60
    assert _hinted_value("x = tl.multiple_of(" + "a" * 61 + ", 16)", "multiple_of") == "a" * 57 + "..."
    assert _hinted_value("x = tl.multiple_of(", "multiple_of") == ""
    assert _hinted_value("x = tl.assume(a > 0)", "multiple_of") == ""
    assert _hinted_value("x = f()(a)", "multiple_of") == ""
    assert _hinted_value("tl.assume(n > 0)", "assume") == "n > 0"


# ----------------------------------------------------------------------------------------------- compiler.messages


@BOTH
def test_compiler_warning_quoted_for_its_variant(mech80: Bundle, swap: bool) -> None:
    """Triton warns about ``tl.where`` on an int32 condition: the message is quoted (without the file prefix before
    "Warning: "), at its line of the compile log, for ``where_int`` only."""
    f, a, b = one(rule_compiler_messages, mech80, "where_int", "where_bool", swap)
    assert (f.id, f.severity, f.stage, f.predicts) == ("compiler.messages", "minor", "python", None)
    e = f.evidence
    assert [(x.variant, x.stage) for x in e] == [("where_int", "compile")]
    assert "UserWarning: tl.where with a non-boolean condition is deprecated" in e[0].text
    assert f.title == f"Compiler message for `where_int`: {e[0].text[:140]}"
    assert f.explanation == (
        f"The compiler printed messages for one variant only (1 shown): `where_int`: {e[0].text}. These are Triton's, "
        "MLIR's or ptxas' own words about this kernel (deprecations, upcasts, pipelining or MMA decisions); they often "
        "name the construct that changes the generated code."
    )
    log = stage_text(mech80.compiled_variant("where_int"), "compile").splitlines()
    assert e[0].line is not None and log[e[0].line - 1].endswith(e[0].text)
    assert rule_compiler_messages(context(mech80, "where_bool", "div_rn")) == []
    assert rule_compiler_messages(context(mech80, "where_int", "where_int")) == []


# ------------------------------------------------------------------------------------------------ pipeline.wait-depth


@BOTH
def test_two_stage_loop_waits_for_its_own_copies(mech80: Bundle, swap: bool) -> None:
    """``num_stages=4`` keeps copy groups in flight (``ttg.async_wait {num = N>0}``); with 2 stages the loop waits for
    the copies it committed in the same iteration (``num = 0``): that side is predicted, the deeper one named."""
    f, a, b = one(rule_wait_depth, mech80, "kloop4", "kloop2", swap)
    waits = {v: context(mech80, v, v).fa.mech.async_waits for v in ("kloop4", "kloop2")}  # type: ignore[union-attr]
    ws = {v: sorted({w.num for w in waits[v]}) for v in waits}
    assert max(ws["kloop4"]) > max(ws["kloop2"])
    # the release decides whether the 2-stage wait names this iteration's own tokens (3.9) or a carried one
    imm = any(w.immediate for w in waits["kloop2"]) and not any(w.immediate for w in waits["kloop4"])
    assert (f.id, f.severity, f.stage, f.predicts) == (
        "pipeline.wait-depth",
        "minor",
        "ttgir",
        "kloop2" if imm else None,
    )
    assert f.title == f"Async-copy wait depth in the loop: {ws[a]} in `{a}` vs {ws[b]} in `{b}`" + (
        " (`kloop2` waits for the copies it just issued)" if imm else ""
    )
    n = {v: ", ".join(map(str, ws[v])) for v in ws}
    own_tokens = (
        "In `kloop2` the loop waits for the copies it committed earlier in the same iteration (the wait names this "
        "iteration's `ttg.async_commit_group` tokens, not loop-carried ones): a prefetch waited for right after it is "
        "issued overlaps nothing issued after it. "
    )
    assert f.explanation == (
        f"In the loop, `ttg.async_wait` lets {n[a]} copy group(s) stay in flight in `{a}` and {n[b]} in `{b}` "
        "(`cp.async.wait_group N` in PTX); `kloop4` keeps more loads in flight while it computes. "
        + (own_tokens if imm else "")
        + "Deeper pipelines cost shared memory (one buffer per stage) and can lower "
        "occupancy, so fewer stages can be as fast or faster when enough CTAs per SM hide the latency; the measured "
        "time decides. Results are the same."
    )
    assert ev(f) == [(a, "ttgir"), (a, "ptx"), (b, "ttgir"), (b, "ptx")]
    for k, v in ((0, a), (2, b)):
        assert f.evidence[k].text == at_line(mech80, f, k)[:200] and "ttg.async_wait" in f.evidence[k].text
        m = re.search(r"\{num = (\d+)", f.evidence[k].text)
        assert m and int(m.group(1)) in ws[v]
        depths = sorted({int(t.split()[-1].rstrip(";")) for _, t in lines(mech80, v, "ptx", r"cp\.async\.wait_group")})
        assert f.evidence[k + 1].text.endswith(f"   (cp.async.wait_group depths {depths})")
        assert f.evidence[k + 1].text.startswith("cp.async.wait_group")


def test_wait_depth_silent_without_waits_or_difference(mech80: Bundle) -> None:
    assert rule_wait_depth(context(mech80, "kloop4", "kloop4")) == []
    assert rule_wait_depth(context(mech80, "kloop2", "tf32")) == []  # no async copies in the other
    assert rule_wait_depth(context(mech80, "tf32", "kloop2")) == []


# ---------------------------------------------------------------- the same rules on logs and waits written out here


R = Ref("ttir", 1, "op")


def _log_facts(name: str, log: str) -> VariantFacts:
    return make_facts(name, mech=MechFacts(compiler_messages=compiler_messages(log)))


def test_compiler_message_compared_without_its_file_prefix() -> None:
    """The same warning printed from another install (another path and line of ``semantic.py``) is not a difference:
    messages compare from their "Warning: " on; an MLIR ``warning:`` line has no such prefix and compares whole."""
    a = _log_facts("a", "/x/triton/semantic.py:9: UserWarning: odd mask\n  warnings.warn(\n")
    b = _log_facts("b", "/y/site-packages/triton/language/semantic.py:1759: UserWarning: odd mask\n")
    assert rule_compiler_messages(make_context(a, b)) == [] == rule_compiler_messages(make_context(b, a))
    m = _log_facts("m", "loc(3): warning: the layout conversion is expensive\n")
    (f,) = rule_compiler_messages(make_context(m, a))
    assert f.title == "Compiler message for `m`: loc(3): warning: the layout conversion is expensive"
    assert [(e.variant, e.line) for e in f.evidence] == [("m", 1), ("a", 1)]
    assert f.explanation.startswith(
        "The compiler printed messages for one variant only (2 shown): `m`: loc(3): warning: the layout conversion "
        "is expensive | `a`: /x/triton/semantic.py:9: UserWarning: odd mask. These are Triton's"
    )
    # a message quoting another warning keeps everything after its first "Warning: "
    q = _log_facts("q", "/x/semantic.py:1: UserWarning: UserWarning: nested\n")
    r = _log_facts("r", "/z/semantic.py:2: UserWarning: UserWarning: nested\n")
    assert rule_compiler_messages(make_context(q, r)) == []
    s = _log_facts("s", "/x/semantic.py:1: UserWarning: cast A; DeprecationWarning: x\n")
    t = _log_facts("t", "/x/semantic.py:1: UserWarning: cast B; DeprecationWarning: x\n")
    (g,) = rule_compiler_messages(make_context(s, t))
    assert [e.variant for e in g.evidence] == ["s", "t"]


def test_compiler_messages_quote_at_most_six() -> None:
    log = "".join(f"/x/semantic.py:{i}: UserWarning: message {i}\n" for i in range(1, 9))
    many = _log_facts("many", log)
    (f,) = rule_compiler_messages(make_context(many, make_facts("none")))
    assert [e.line for e in f.evidence] == [1, 2, 3, 4, 5, 6]
    assert f.explanation.startswith("The compiler printed messages for one variant only (6 shown): `many`: ")
    assert " | `many`: /x/semantic.py:6: UserWarning: message 6. These" in f.explanation


def _waits(name: str, *waits: tuple[int, bool], ptx: tuple[int, ...] = ()) -> VariantFacts:
    ws = [
        AsyncWaitFact(n, imm, Ref("ttgir", 10 + k, f"ttg.async_wait {{num = {n} : i32}} #{k}"))
        for k, (n, imm) in enumerate(waits)
    ]
    cw = [(n, Ref("ptx", 50 + k, f"cp.async.wait_group {n};")) for k, n in enumerate(ptx)]
    return make_facts(name, mech=MechFacts(async_waits=ws, cp_async_waits=cw))


def test_wait_depth_same_deepest_and_several_waits() -> None:
    """Waits of two loops with the same deepest depth but another set: no side keeps more in flight; several depths
    are listed; the evidence is the first immediate wait (else the first) and the first PTX wait with all depths."""
    a = _waits("a", (1, False), (2, False), ptx=(1, 2))
    b = _waits("b", (2, False), (0, True), ptx=(2, 0))
    for x, y in ((a, b), (b, a)):
        (f,) = rule_wait_depth(make_context(x, y))
        assert f.predicts == "b" and f.title.endswith("(`b` waits for the copies it just issued)")
        assert f.stage == "ttgir" and f.severity == "minor"
    (f,) = rule_wait_depth(make_context(a, b))
    assert (
        f.title
        == "Async-copy wait depth in the loop: [1, 2] in `a` vs [0, 2] in `b` (`b` waits for the copies it just issued)"
    )
    assert f.explanation.startswith(
        "In the loop, `ttg.async_wait` lets 1, 2 copy group(s) stay in flight in `a` and 0, 2 in `b` (`cp.async."
        "wait_group N` in PTX). In `b` the loop waits"
    )
    assert [(e.variant, e.stage, e.line, e.text) for e in f.evidence] == [
        ("a", "ttgir", 10, "ttg.async_wait {num = 1 : i32} #0"),
        ("a", "ptx", 50, "cp.async.wait_group 1;   (cp.async.wait_group depths [1, 2])"),
        ("b", "ttgir", 11, "ttg.async_wait {num = 0 : i32} #1"),
        ("b", "ptx", 50, "cp.async.wait_group 2;   (cp.async.wait_group depths [0, 2])"),
    ]
    # neither waits for its own copies and the deepest depth is the same: nothing to say
    assert rule_wait_depth(make_context(_waits("c", (2, False)), _waits("d", (2, False), (1, False)))) != []
    assert rule_wait_depth(make_context(_waits("c", (2, False)), _waits("d", (2, False)))) == []
    assert rule_wait_depth(make_context(_waits("c", (2, False)), _waits("d"))) == []
    (g,) = rule_wait_depth(make_context(_waits("c", (2, False)), _waits("d", (2, False), (1, False))))
    assert g.predicts is None and "keeps more loads" not in g.explanation
    assert g.explanation.startswith(
        "In the loop, `ttg.async_wait` lets 2 copy group(s) stay in flight in `c` and 1, 2 in `d` (`cp.async."
        "wait_group N` in PTX). Deeper pipelines"
    )
    assert g.title == "Async-copy wait depth in the loop: [2] in `c` vs [1, 2] in `d`"


def test_assume_hint_counts_as_an_axis_hint() -> None:
    """``tl.assume`` (``llvm.intr.assume`` in TTIR) present in one variant only, with the accesses differing: named."""
    acc = Access("load", [1024], "f16", 16, [8], [16], [0], 8, 128, "x", "x_ptr", R, R, R)
    narrow = Access("load", [1024], "f16", 16, [1], [2], [0], 8, 16, "x", "x_ptr", R, R, R)
    a = make_facts("a", mech=MechFacts(hints=[HintFact("assume", "", "llvm.intr.assume", R, None)]), accesses=[acc])
    b = make_facts("b", accesses=[narrow])
    (f,) = rule_axis_hints(make_context(a, b))
    assert f.title == "AxisInfo hints differ: `tl.assume` only in `a`, none only in `b`"
    assert (
        rule_axis_hints(make_context(b, a))[0].title
        == "AxisInfo hints differ: none only in `b`, `tl.assume` only in `a`"
    )


def test_assume_alone_explains_that_widths_stayed() -> None:
    """AxisInfo proves another alignment (the coalescing log's vector width differs) but no PTX access changed width
    (no lowered access on either side differs): the explanation says the width is bounded by something else, and
    the finding is minor."""
    acc = Access("load", [1024], "f16", 16, [8], [16], [0], 8, 128, "x", "x_ptr", R, R, R)
    narrow = Access("load", [1024], "f16", 16, [1], [2], [0], 8, 16, "x", "x_ptr", R, R, R)
    a = make_facts("a", mech=MechFacts(hints=[HintFact("assume", "", "llvm.intr.assume", R, None)]), accesses=[acc])
    b = make_facts("b", accesses=[narrow])
    for x, y in ((a, b), (b, a)):
        (f,) = rule_axis_hints(make_context(x, y))
        d = {"a": "`tl.assume`", "b": "none"}
        assert f.severity == "minor"
        assert f.explanation == (
            f"Hints only in `{x.name}`: {d[x.name]}; only in `{y.name}`: {d[y.name]}. {AXIS}{SAME_WIDTHS}{FALSE_HINT}"
        )


def _hint(kind: str, value: str, op: str, python: Ref | None) -> HintFact:
    return HintFact(kind, value, op, Ref("ttir", 3, f"%h = {op} ... {kind} {value}"), python)


def test_moved_hint_without_a_readable_line_names_its_line_or_op() -> None:
    """The same ``tl.multiple_of(…, 16)`` on another op in each variant: a Python line that does not parse on its own
    (a call continued on the next line) is named by its line number only; a hint without a Python line by the op it
    sits on."""
    acc = Access("load", [1024], "f16", 16, [8], [16], [0], 8, 128, "x", "x_ptr", R, R, R)
    narrow = Access("load", [1024], "f16", 16, [1], [2], [0], 8, 16, "x", "x_ptr", R, R, R)
    cut = Ref("python", 7, "    off = tl.multiple_of(")
    a = make_facts("a", mech=MechFacts(hints=[_hint("multiple_of", "16", "arith.muli", cut)]), accesses=[acc])
    b = make_facts("b", mech=MechFacts(hints=[_hint("multiple_of", "16", "tt.load", None)]), accesses=[narrow])
    for x, y in ((a, b), (b, a)):
        (f,) = rule_axis_hints(make_context(x, y))
        d = {"a": "`tl.multiple_of`(16) at line 7 of `a`", "b": "`tl.multiple_of`(16) on `tt.load`"}
        assert f.title == f"AxisInfo hints differ: {d[x.name]} only in `{x.name}`, {d[y.name]} only in `{y.name}`"


def test_axis_hint_evidence_is_bounded_and_cut() -> None:
    """Nine hints only in one variant, two only in the other: the evidence quotes the first seven of the first
    variant and the first of the second (no finding loses its other side); Python lines are cut at 220 characters."""
    acc = Access("load", [1024], "f16", 16, [8], [16], [0], 8, 128, "x", "x_ptr", R, R, R)
    narrow = Access("load", [1024], "f16", 16, [1], [2], [0], 8, 16, "x", "x_ptr", R, R, R)
    long_py = "    p = tl.multiple_of(" + " + ".join(f"o{i}" for i in range(80)) + ", 1)"
    many = [
        _hint("multiple_of", str(2**i), "arith.addi", Ref("python", 10 + i, long_py if i == 0 else f"m{i}"))
        for i in range(9)
    ]
    few = [_hint("max_contiguous", str(v), "arith.addi", Ref("python", 40 + v, f"c{v}")) for v in (4, 8)]
    a = make_facts("many", mech=MechFacts(hints=many), accesses=[acc])
    b = make_facts("few", mech=MechFacts(hints=few), accesses=[narrow])
    (f,) = rule_axis_hints(make_context(a, b))
    assert [(e.variant, e.line) for e in f.evidence] == [("many", 10 + i) for i in range(7)] + [("few", 44)]
    assert len(long_py) > 221 and f.evidence[0].text == long_py[:220]
    (g,) = rule_axis_hints(make_context(b, a))
    assert [(e.variant, e.line) for e in g.evidence] == [("few", 44), ("few", 48)] + [
        ("many", 10 + i) for i in range(5)
    ]


def test_cache_hint_moved_from_load_to_store() -> None:
    """``.cs`` on the load in one variant and on the store in the other: the PTX qualifier counts are the same, the
    hints are not, so it is reported, each on its op; neither side has SASS counts (no SASS difference to report:
    the instruction count is unchanged). TTIR lines are cut at 220 characters."""
    long_ref = Ref("ttir", 6, "%x = tt.load %p {cacheModifier = cs} : tensor<" + "1024x" * 60 + "f32>")
    ld = make_facts(
        "ld",
        counts={"ptx": {"hint .cs": 2}},
        mech=MechFacts(hints=[HintFact("cache_modifier", "cs", "tt.load", long_ref, None)]),
    )
    st = make_facts(
        "st", counts={"ptx": {"hint .cs": 2}}, mech=MechFacts(hints=[_hint("cache_modifier", "cs", "tt.store", None)])
    )
    d = {"ld": "load cache_modifier=cs", "st": "store cache_modifier=cs"}
    for x, y in ((ld, st), (st, ld)):
        (f,) = rule_cache_hints(make_context(x, y))
        a, b = x.name, y.name
        assert f.title == f"Cache hints: {d[a]} in `{a}` vs {d[b]} in `{b}`"
        assert f.explanation == (
            f"Memory hints: {d[a]} in `{a}`; {d[b]} in `{b}`. In PTX: `{a}` 2× `hint .cs`; `{b}` 2× `hint .cs`. "
            f"`.cs`: streaming, likely accessed once (evict first). {CACHED}{SAME}{RESULTS}"
        )
    (f,) = rule_cache_hints(make_context(ld, st))
    assert [(e.variant, e.stage, e.line) for e in f.evidence] == [
        ("ld", "ttir", 6),
        ("ld", "ptx", None),
        ("st", "ttir", 3),
        ("st", "ptx", None),
    ]
    assert len(long_ref.text) > 221 and f.evidence[0].text == long_ref.text[:220]


def test_cache_hint_without_known_effect_and_with_sass_change() -> None:
    """A hint whose PTX effect the rule has no words for (``evict_normal``) and SASS counts that differ: no effect
    sentence, and no claim that the instruction count is unchanged."""
    a = make_facts(
        "a",
        counts={"sass": {"LDG.E": 2, "instructions": 40}},
        mech=MechFacts(hints=[_hint("eviction_policy", "evict_normal", "tt.load", None)]),
    )
    b = make_facts("b", counts={"sass": {"LDG.E": 2, "instructions": 38}})
    (f,) = rule_cache_hints(make_context(a, b))
    assert f.explanation == (
        "Memory hints: load eviction_policy=evict_normal in `a`; none in `b`. In PTX: `a` no cache qualifiers; `b` no "
        f"cache qualifiers. {CACHED}{RESULTS}"
    )


def test_compiler_message_from_a_path_with_a_blank_is_the_same_message() -> None:
    """A Python warning from a file whose path has a blank (``/home/my kernels/...``) compares from its "Warning: " on
    like any other: the same ``odd mask`` warning from two installs is no difference, in either order."""
    a = _log_facts("a", "/home/my kernels/triton/semantic.py:9: UserWarning: odd mask\n")
    b = _log_facts("b", "/y/site-packages/triton/language/semantic.py:1759: UserWarning: odd mask\n")
    assert rule_compiler_messages(make_context(a, b)) == [] == rule_compiler_messages(make_context(b, a))


def test_wait_depth_quotes_the_first_immediate_wait_cut_at_200() -> None:
    """``b``'s loop waits right after issuing twice (two prefetch groups, each waited for at once): the evidence quotes
    the first of them only, and a wait naming many tokens (a line over 200 characters) is cut at 200 characters; the
    whole explanation names ``b`` as the side that waits for the copies it just issued."""
    tokens = ", ".join(f"%token_{k}" for k in range(24))
    long = Ref("ttgir", 20, f"%w = ttg.async_wait {tokens} {{num = 0 : i32}}")
    assert len(long.text) > 200
    b = make_facts(
        "b",
        mech=MechFacts(
            async_waits=[AsyncWaitFact(0, True, long), AsyncWaitFact(0, True, Ref("ttgir", 30, "ttg.async_wait #2"))]
        ),
    )
    a = _waits("a", (2, False))
    for x, y in ((a, b), (b, a)):
        (f,) = rule_wait_depth(make_context(x, y))
        assert [(e.variant, e.line, e.text) for e in f.evidence if e.variant == "b"] == [("b", 20, long.text[:200])]
        n = {"a": "2", "b": "0"}
        assert f.explanation == (
            f"In the loop, `ttg.async_wait` lets {n[x.name]} copy group(s) stay in flight in `{x.name}` and "
            f"{n[y.name]} in `{y.name}` (`cp.async.wait_group N` in PTX); `a` keeps more loads in flight while it "
            "computes. In `b` the loop waits for the copies it committed earlier in the same iteration (the wait names "
            "this iteration's `ttg.async_commit_group` tokens, not loop-carried ones): a prefetch waited for right "
            "after it is issued overlaps nothing issued after it. Deeper pipelines cost shared memory (one buffer per "
            "stage) and can lower occupancy, so fewer stages can be as fast or faster when enough CTAs per SM hide the "
            "latency; the measured time decides. Results are the same."
        )
