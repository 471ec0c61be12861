"""The root engine's parts (``irdiff/diagnose/roots.py``) called directly on real compiles, in both orders of the
variants: the mechanism sentences, the stage-0 words of annotation roots, the settings root, the source and attribute
roots, the per-thread register estimates and the chain ordering. ``tests/test_root.py`` checks the whole diagnosis;
this file checks that each sentence names the right variant, instruction and direction (and is fast: the bundles
come from the shared compile cache, nothing is diagnosed end to end).

Kernels: ``tests/suites/root_cases.py`` (``streaming``: ``evict_first`` on one load; ``division``: ``/`` vs
``tl.div_rn``; ``splitk``: ``sem="relaxed"`` on an atomic; ``hinted``: ``tl.multiple_of``/``tl.max_contiguous`` on
matmul offsets), ``tests/suites/kinds/kinds.py::redaxis`` (a reduction's ``axis=``), ``tests/suites/annot_scalars.py``,
``tests/suites/spec_kinds.py`` and ``tests/suites/diag_loop.py`` (a dot loop at ``num_warps`` 4 and 8), sm80/sm86/sm90.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from irdiff.bundle import Bundle
from irdiff.diagnose import roots as R
from irdiff.diagnose.model import Evidence, Finding
from irdiff.diagnose.provenance import attr_changes, stage_trace
from irdiff.diagnose.source import SourceChange, diff_sources

SUITES = Path(__file__).parent / "suites"
CASES = str(SUITES / "root_cases.py")


@pytest.fixture(autouse=True)
def _fresh_memo() -> Iterator[None]:
    """``roots._instructions`` is memoized: a memo filled by another test must not answer for this one."""
    R._instructions.cache_clear()
    yield


def root_ctx(b: Bundle, a: str, o: str) -> R.RootContext:
    """What ``apply_roots`` hands the mechanisms for a root on every changed source line of ``a`` vs ``o``."""
    va, vb = b.variants[a], b.variants[o]
    sd = diff_sources(va, vb)
    attrs = attr_changes(va, vb, sd.line_pairs)
    la = {c.line_a for c in sd.semantic if c.line_a}
    lb = {c.line_b for c in sd.semantic if c.line_b}
    trace = stage_trace(va, vb, la, lb, ("ttir", "ttgir", "ptx"))
    whole = {s: d for s in ("ptx", "sass") if any(d := R._whole_delta(va, vb, s))}
    root = Finding("source.x", "minor", "", "", [])
    return R.RootContext(a, o, root, sd.semantic, attrs, trace, whole)


def mechanisms(ctx: R.RootContext) -> dict[str, str]:
    return {m.__name__: s for m in R.MECHANISMS if (s := m(ctx))}


# ------------------------------------------------------------------------------------------------ mechanisms


@pytest.mark.parametrize("order", [("approx", "ieee"), ("ieee", "approx")])
def test_division_names_each_variant_with_its_instruction(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    ctx = root_ctx(compile_suite(CASES + "::division", ["approx", "ieee"], "sm80"), *order)
    said = mechanisms(ctx)
    assert list(said) == ["_mech_division"]
    assert said["_mech_division"] == (
        "`approx` divides with `div.full.f32` (Triton lowers `/` on fp32 to the approximate division, max error 2 "
        "ulp), `ieee` with `div.rn.f32` (IEEE round-to-nearest, from `tl.div_rn` / `tt.precise_divf`): results may "
        "differ in the last bits, and the IEEE division is a longer instruction sequence (ptxas expands it, with a "
        "slow path it calls as a subroutine)."
    )


@pytest.mark.parametrize("order", [("relaxed", "ordered"), ("ordered", "relaxed")])
def test_atomic_ordering_names_the_fences_of_the_ordered_side(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    ctx = root_ctx(compile_suite(CASES + "::splitk", ["relaxed", "ordered"], "sm80"), *order)
    said = mechanisms(ctx)
    assert list(said) == ["_mech_atomic"]
    s = said["_mech_atomic"]
    assert s.startswith(
        "The atomic's memory ordering differs: with `acq_rel` (Triton's default `sem`) the update also orders the "
        "thread's earlier and later memory accesses, which the lowering implements with fences and a returning "
        "atomic; `relaxed` only makes the update itself atomic. Atomic instructions: "
    )
    atoms = re.search(r"Atomic instructions: (.*) in `(\w+)` vs (.*) in `(\w+)`\.", s)
    assert atoms is not None and (atoms[2], atoms[4]) == order
    mine = {order[0]: atoms[1], order[1]: atoms[3]}
    # Triton 3.9 lowers the relaxed update to a non-returning `red`, 3.6 to an `atom`
    assert re.search(r"`(red|atom)\.global\.gpu\.relaxed\.add\.f32`", mine["relaxed"]), mine
    assert "acq_rel" not in mine["relaxed"]
    assert "`atom.global.gpu.acq_rel.add.f32`" in mine["ordered"] and "relaxed" not in mine["ordered"]
    assert mine["relaxed"].startswith("`RED.") and mine["ordered"].startswith("`ATOMG.")  # SASS sorts first
    fences = re.search(r"Fences and barriers only in `ordered`: (.*); `relaxed` drops them\.$", s)
    assert fences is not None and "`MEMBAR." in fences[1]  # (3.9 also adds a `bar.sync`)


@pytest.mark.parametrize("order", [("evict", "keep"), ("keep", "evict")])
def test_eviction_names_the_policy_and_the_hinted_instructions(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    ctx = root_ctx(compile_suite(CASES + "::streaming", ["evict", "keep"], "sm80"), *order)
    said = mechanisms(ctx)
    assert list(said) == ["_mech_eviction"]
    assert said["_mech_eviction"] == (
        "Cache hints: `evict` sets `evict_first` (the loaded lines are the first to be replaced: for data read once, "
        "so it does not push out data that is reused). Results do not change; the caches keep different data. Only "
        "in `evict`'s PTX/SASS: `LDG.E.EF.128`, `createpolicy.fractional.L2::evict_first.b64`, "
        "`ld.global.L1::evict_first.L2::cache_hint.v4.b32`. `createpolicy` builds the L2 cache-policy operand the "
        "loads carry."
    )


@pytest.mark.parametrize("target", ["sm80", "sm90"])
def test_hints_are_named_and_spills_or_async_copies_are_no_cache_hint(compile_suite, target: str) -> None:  # type: ignore[no-untyped-def]
    """The hinted matmul differs in spill reloads (``LDL.LU``, sm80) and ``cp.async.cg`` copies: the lowering's own
    qualifiers, not a cache hint the source set (before the fix the root said "different cache hints")."""
    b = compile_suite(CASES + "::hinted", ["bare", "hint"], target)
    for order in (("bare", "hint"), ("hint", "bare")):
        ctx = root_ctx(b, *order)
        xa, xb = R._all_ops(ctx)
        assert any(k.startswith("cp.async.cg") for k in xa | xb)
        said = mechanisms(ctx)
        assert list(said) == ["_mech_hints"], said
        assert said["_mech_hints"].startswith("`tl.multiple_of` attaches `tt.divisibility` and `tl.max_contiguous`")


def test_hint_qualifiers_by_instruction() -> None:
    assert R._is_hint_op("ld.global.L1::evict_first.L2::cache_hint.v4.b32")
    assert R._is_hint_op("createpolicy.fractional.L2::evict_last.b64")
    assert R._is_hint_op("LDG.E.EF.128") and R._is_hint_op("ld.global.cg.v4.b32") and R._is_hint_op("STG.E.NA")
    # a qualifier right after the opcode: PTX generic addressing (`ld.cg` with no state space, valid PTX that
    # Triton itself does not write: it names `.global`)
    assert R._is_hint_op("ld.cg.b32")
    assert R._is_hint_op("cp.async.cg.shared.global.L2::cache_hint")  # a hint the source asked for, on a copy
    for plain in ("LOP3.LUT", "LDL.LU", "ld.local.lu.b32", "cp.async.cg.shared.global", "LDG.E.128", "lu.b32"):
        assert not R._is_hint_op(plain), plain


def test_hint_values_read_only_what_the_attributes_set() -> None:
    assert R._hint_values(["cache_modifier = .cg", "eviction_policy = evict_last", "evict = bogus", "x = cs"]) == (
        {"cg"},
        {"evict_last"},
    )
    assert R._hint_values(["CACHE = CS", "Evict = EVICT_FIRST"]) == ({"cs"}, {"evict_first"})


def test_eviction_from_attributes_on_both_sides() -> None:
    from irdiff.diagnose.provenance import AttrChange

    ac = AttrChange("tt.load", 3, 3, 9, 9, "", "", ["cache_modifier = cg"], ["eviction_policy = evict_last"])
    ctx = R.RootContext("p", "q", Finding("x", "info", "", "", []), [], [ac], [], {})
    assert R._mech_eviction(ctx) == (
        "Cache hints: `p` sets `.cg` (caches in L2 only, bypassing L1); `q` sets `evict_last` (the lines stay longer "
        "than others: for data that is reused). Results do not change; the caches keep different data."
    )
    none = R.RootContext("p", "q", Finding("x", "info", "", "", []), [], [], [], {"ptx": ({"LDL.LU": 1}, {})})
    assert R._mech_eviction(none) is None


@pytest.mark.parametrize("order", [("cols", "rows"), ("rows", "cols")])
def test_reduction_axis_counts_shuffles_and_barriers_per_variant(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    b = compile_suite(str(SUITES / "kinds" / "kinds.py") + "::redaxis", ["cols", "rows"], "sm80")
    ctx = root_ctx(b, *order)
    said = mechanisms(ctx)
    assert "_mech_reduce_axis" in said and "_mech_eviction" not in said
    s = said["_mech_reduce_axis"]
    assert s.startswith("The reduction runs along another axis of the same tile: ")
    wa, wb = ctx.whole["ptx"]
    facts = re.findall(r"`([\w.]+)` (\d+) more in `(\w+)`, (\d+) more in `(\w+)`", s)
    assert facts and {f[0] for f in facts} <= {"shfl.sync", "bar.sync", "st.shared", "ld.shared"}
    for op, na, va, nb, vb in facts:
        assert (va, vb) == order
        assert int(na) == sum(v for k, v in wa.items() if k.startswith(op))
        assert int(nb) == sum(v for k, v in wb.items() if k.startswith(op))
        assert int(na) + int(nb) > 0
    # without whole-kernel deltas the PTX trace at the changed lines is read instead
    bare = R.RootContext(ctx.a, ctx.b, ctx.finding, ctx.changes, ctx.attrs, ctx.trace, {})
    assert R._mech_reduce_axis(bare) is not None
    # another change kind on the same pair is no reduction-axis story
    other = R.RootContext(ctx.a, ctx.b, ctx.finding, [], ctx.attrs, ctx.trace, ctx.whole)
    assert R._mech_reduce_axis(other) is None


def test_register_mechanism_appends_once() -> None:
    def extra(ctx: R.RootContext) -> str | None:
        return None

    try:
        assert R.register_mechanism(extra) is extra and R.register_mechanism(extra) is extra
        assert R.MECHANISMS.count(extra) == 1 and R.MECHANISMS[-1] is extra
    finally:
        R.MECHANISMS.remove(extra)


# ------------------------------------------------------------------------------------------------ mechanisms on own kernels
# tests/suites/mech_roots.py: each suite's variants differ on one line (atomic sem/scope/op, cache policy, fp32 vs
# integer division, reduction axis, a hint call as its own statement); sm80, Triton 3.9 and 3.6.

MECH = str(SUITES / "mech_roots.py")
_TICKS = re.compile(r"`[^`]+`")


def _names(listing: str) -> list[str]:
    """```a`, `b``` → ``["a", "b"]``; each item must be one backticked name (the sentence's own separator)."""
    items = listing.split(", ")
    assert all(_TICKS.fullmatch(i) for i in items), listing
    return [i.strip("`") for i in items]


def multi_root_ctx(b: Bundle, a: str, o: str) -> R.RootContext:
    """What ``_add_trace`` hands the mechanisms when the pair has more than one root (``whole_ok=False``): the trace
    runs through the PTX at the changed lines, and no whole-kernel delta is given."""
    ctx = root_ctx(b, a, o)
    va, vb = b.variants[a], b.variants[o]
    la = {c.line_a for c in ctx.changes if c.line_a}
    lb = {c.line_b for c in ctx.changes if c.line_b}
    trace = stage_trace(va, vb, la, lb, ("ttir", "ttgir", "ptx"))
    return R.RootContext(a, o, ctx.finding, ctx.changes, ctx.attrs, trace, {})


@pytest.fixture(scope="module")
def atoms(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(MECH + "::atomsem", ["acqrel", "relaxed", "acquire", "release", "cta", "maxop"], "sm80")


def _atomic_parts(s: str, a: str, b: str) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """The sentence's atomic instructions and fences per variant."""
    m = re.search(rf"Atomic instructions: (.*) in `{a}` vs (.*) in `{b}`\.", s)
    assert m is not None, s
    atoms = {a: _names(m[1]), b: _names(m[2])}
    fences = {
        v: _names(f[1])
        for v in (a, b)
        if (f := re.search(rf"Fences and barriers only in `{v}`: (.*?`)(?:; `\w+` drops them)?\.(?: |$)", s))
    }
    return atoms, fences


ORDERING = (
    "The atomic's memory ordering differs: with `acq_rel` (Triton's default `sem`) the update also orders the thread's "
    "earlier and later memory accesses, which the lowering implements with fences and a returning atomic; `relaxed` "
    "only makes the update itself atomic."
)


@pytest.mark.parametrize("order", [("acqrel", "relaxed"), ("relaxed", "acqrel")])
def test_atomic_sem_relaxed_drops_the_membar_and_the_return(atoms: Bundle, order: tuple[str, str]) -> None:
    s = R._mech_atomic(root_ctx(atoms, *order))
    assert s is not None and s.startswith(ORDERING + " Atomic instructions: ") and "scope differs" not in s
    insts, fences = _atomic_parts(s, *order)
    # the ordered update returns (`atom` → `ATOMG`), the relaxed one need not (`red`/`RED`; 3.6 keeps a PTX `atom`)
    assert "atom.global.gpu.acq_rel.add.u32" in insts["acqrel"] and "ATOMG.E.ADD.STRONG.GPU" in insts["acqrel"]
    assert "RED.E.ADD.STRONG.GPU" in insts["relaxed"] and not any("acq_rel" in k for k in insts["relaxed"])
    assert any(re.fullmatch(r"(red|atom)\.global\.gpu\.relaxed\.add\.u32", k) for k in insts["relaxed"])
    assert insts[order[0]] == sorted(insts[order[0]]) and len(insts["acqrel"]) == 2 == len(insts["relaxed"])
    # ptxas fences the acq_rel update with a GPU-wide MEMBAR; the relaxed one has none of its own
    assert list(fences) == ["acqrel"] and "MEMBAR.ALL.GPU" in fences["acqrel"]
    assert s.endswith("; `relaxed` drops them.")
    xa, xb = R._all_ops(root_ctx(atoms, "acqrel", "relaxed"))
    assert ("bar.sync" in fences["acqrel"]) == ("bar.sync" in xa)  # 3.9 also barriers around the returned value


@pytest.mark.parametrize("order", [("acquire", "release"), ("release", "acquire")])
def test_atomic_release_fences_before_and_acquire_returns(atoms: Bundle, order: tuple[str, str]) -> None:
    """A release update must make earlier writes visible first (ptxas: `MEMBAR.ALL.GPU` before it); an acquire one
    orders later accesses after it (a returning `ATOMG`, no MEMBAR)."""
    s = R._mech_atomic(root_ctx(atoms, *order))
    assert s is not None and s.startswith(ORDERING)
    insts, fences = _atomic_parts(s, *order)
    assert fences == {"release": ["MEMBAR.ALL.GPU"]} and s.endswith("; `acquire` drops them.")
    assert "ATOMG.E.ADD.STRONG.GPU" in insts["acquire"] and "RED.E.ADD.STRONG.GPU" in insts["release"]
    assert "atom.global.gpu.acquire.add.u32" in insts["acquire"]
    assert any(k.endswith("global.gpu.release.add.u32") for k in insts["release"])


@pytest.mark.parametrize("order", [("acqrel", "cta"), ("cta", "acqrel")])
def test_atomic_scope_names_each_side_and_its_membar(atoms: Bundle, order: tuple[str, str]) -> None:
    """``scope="cta"`` (same ``sem``): no ordering sentence, the scope of each side, and the MEMBAR each has only
    (`MEMBAR.ALL.GPU` vs `MEMBAR.ALL.CTA`): both named, neither "drops" fences (before the fix a scope change had
    no mechanism at all)."""
    s = R._mech_atomic(root_ctx(atoms, *order))
    assert s is not None and s.startswith("The atomic's scope differs: ") and "memory ordering" not in s
    gpu, cta = "`acqrel` (`gpu`) against every thread on the GPU", "`cta` (`cta`) against the threads of its own CTA"
    said = f"{gpu} and {cta}" if order[0] == "acqrel" else f"{cta} and {gpu}"
    assert f"only with respect to the threads of its scope: {said}. A narrower scope" in s
    assert (
        "A narrower scope needs cheaper fences, but an update of the same address from a thread outside it is not "
        "atomic with this one (a data race in the PTX memory model)."
    ) in s  # what the narrower side risks, not only that the scopes differ
    insts, fences = _atomic_parts(s, *order)
    assert "atom.global.gpu.acq_rel.add.u32" in insts["acqrel"] and "atom.global.cta.acq_rel.add.u32" in insts["cta"]
    assert "MEMBAR.ALL.GPU" in fences["acqrel"] and "MEMBAR.ALL.CTA" in fences["cta"] and "drops" not in s


@pytest.mark.parametrize("order", [("release", "cta"), ("cta", "release")])
def test_atomic_sem_and_scope_both_sides_keep_their_own_fences(atoms: Bundle, order: tuple[str, str]) -> None:
    """``release`` at GPU scope vs the default ``acq_rel`` at CTA scope: each side has a MEMBAR the other lacks
    (`MEMBAR.ALL.GPU` / `MEMBAR.ALL.CTA`); before the fix the sentence named only one side's and said the other
    "drops them"."""
    s = R._mech_atomic(root_ctx(atoms, *order))
    assert s is not None and s.startswith(ORDERING + " The atomic's scope differs: ")
    _, fences = _atomic_parts(s, *order)
    assert fences["release"] == ["MEMBAR.ALL.GPU"] and "MEMBAR.ALL.CTA" in fences["cta"] and "drops" not in s
    assert s.index(f"only in `{order[0]}`") < s.index(f"only in `{order[1]}`")


@pytest.mark.parametrize("order", [("acqrel", "maxop"), ("maxop", "acqrel")])
def test_atomic_op_change_is_no_ordering_story(atoms: Bundle, order: tuple[str, str]) -> None:
    """``tl.atomic_max`` vs ``tl.atomic_add`` (same sem and scope): the TTIR differs in the op word only."""
    ctx = root_ctx(atoms, *order)
    assert sorted(t for ac in ctx.attrs for t in (*ac.only_a, *ac.only_b)) == ["add", "max"]
    assert R._mech_atomic(ctx) is None and "_mech_atomic" not in mechanisms(ctx)
    # with the scope changed too (cta vs a max at gpu scope), only the scope is told
    s = R._mech_atomic(root_ctx(atoms, "cta", "maxop"))
    assert s is not None and s.startswith("The atomic's scope differs: ")


@pytest.mark.parametrize("order", [("acqrel", "relaxed"), ("relaxed", "acqrel")])
def test_atomic_cas_and_fp16_add_relaxed(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    b = compile_suite(MECH + "::atomcas", ["acqrel", "relaxed"], "sm80")
    ctx = root_ctx(b, *order)
    sems = {"acqrel": "acq_rel", "relaxed": "relaxed"}
    assert [(ac.only_a, ac.only_b) for ac in ctx.attrs] == [([sems[order[0]]], [sems[order[1]]])] * 2  # cas, add
    s = R._mech_atomic(ctx)
    assert s is not None and s.startswith(ORDERING)
    insts, fences = _atomic_parts(s, *order)
    assert {"atom.global.acq_rel.gpu.cas.b32", "atom.global.gpu.acq_rel.add.noftz.f16"} <= set(insts["acqrel"])
    assert "atom.global.relaxed.gpu.cas.b32" in insts["relaxed"]
    assert list(fences) == ["acqrel"] and "MEMBAR.ALL.GPU" in fences["acqrel"]


@pytest.mark.parametrize("order", [("acqrel", "relaxed"), ("relaxed", "acqrel")])
def test_atomic_sentence_with_one_side_bare_and_every_fence_spelling(atoms: Bundle, order: tuple[str, str]) -> None:
    """The real ``sem`` root of ``acqrel``/``relaxed`` with its instruction deltas replaced: no compiled Triton
    atomic here leaves one side without an atomic instruction or emits a PTX ``fence.*``/``membar.*`` or a SASS
    ``FENCE.*`` of its own (ptxas adds ``MEMBAR.*``), so these spellings (the PTX ``fence.acq_rel.gpu`` and
    ``membar.gl``, the SASS ``FENCE.VIEW.ASYNC.S`` other kernels have) are set in the whole-stage deltas: an empty
    side is named ``none``, and every fence prefix is listed as the side's own."""
    a, o = order
    ctx = root_ctx(atoms, a, o)
    atom = "atom.global.gpu.acq_rel.add.u32"
    for mine in (a, o):
        ctx.trace = []
        ctx.whole = {"ptx": ({atom: 1}, {}) if mine == a else ({}, {atom: 1})}
        s = R._mech_atomic(ctx)
        said = (f"`{atom}` in `{a}` vs none in `{o}`") if mine == a else (f"none in `{a}` vs `{atom}` in `{o}`")
        assert s == f"{ORDERING} Atomic instructions: {said}."
    fences = {"fence.acq_rel.gpu": 1, "membar.gl": 1, "FENCE.VIEW.ASYNC.S": 1, "MEMBAR.ALL.GPU": 1}
    ctx.whole = {"ptx": (dict(fences), {})}
    assert R._mech_atomic(ctx) == (
        f"{ORDERING} Fences and barriers only in `{a}`: `FENCE.VIEW.ASYNC.S`, `MEMBAR.ALL.GPU`, `fence.acq_rel.gpu`, "
        f"`membar.gl`; `{o}` drops them."
    )


@pytest.fixture(scope="module")
def quot(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(MECH + "::quot", ["approx", "ieee", "mul", "pow2", "odd"], "sm80")


@pytest.mark.parametrize("pair", [("approx", "mul"), ("ieee", "mul"), ("pow2", "odd")], ids=lambda p: "-".join(p))
def test_division_needs_both_divisions(quot: Bundle, pair: tuple[str, str]) -> None:
    """Only `div.full.f32` on one side and `div.rn.f32` on the other is the approximate-vs-IEEE story: one fp32
    division against a multiply, or an integer division by 8 (a shift) against one by 7 (`mul.hi`), is not."""
    for order in (pair, pair[::-1]):
        ctx = root_ctx(quot, *order)
        xa, xb = R._all_ops(ctx)
        assert xa and xb
        assert R._mech_division(ctx) is None and "_mech_division" not in mechanisms(ctx)
    xa, xb = R._all_ops(root_ctx(quot, *pair))
    if pair == ("approx", "mul"):
        assert R._has(xa, "div.full.f32") and R._has(xb, "mul.f32") and not R._has(xa | xb, "div.rn")
    if pair == ("ieee", "mul"):
        assert R._has(xa, "div.rn.f32") and not R._has(xa | xb, "div.full")
    if pair == ("pow2", "odd"):
        assert R._has(xa, "shr.s32") and R._has(xb, "mul.hi.s32") and not R._has(xa | xb, "div.")


@pytest.mark.parametrize("order", [("odd", "ieee"), ("ieee", "odd")])
def test_division_fp32_story_beside_an_integer_change(quot: Bundle, order: tuple[str, str]) -> None:
    """``odd`` divides fp32 with ``/`` (and ints by 7), ``ieee`` with ``tl.div_rn`` (ints by 8): the fp32 sentence
    names each variant with its instruction, whichever comes first."""
    s = R._mech_division(root_ctx(quot, *order))
    assert s is not None and s.startswith("`odd` divides with `div.full.f32` (") and ", `ieee` with `div.rn.f32` (" in s


@pytest.fixture(scope="module")
def caches(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(MECH + "::cachepol", ["plain", "last", "cg", "stfirst", "both"], "sm80")


LAST = "`evict_last` (the lines stay longer than others: for data that is reused)"
CG = "`.cg` (caches in L2 only, bypassing L1)"
FIRST = (
    "`evict_first` (the loaded lines are the first to be replaced: for data read once, so it does not push out data "
    "that is reused)"
)
SAME = " Results do not change; the caches keep different data."
POLICY = " `createpolicy` builds the L2 cache-policy operand the loads carry."


def _only(s: str, v: str) -> list[str]:
    m = re.search(rf" Only in `{v}`'s PTX/SASS: (.*?`)\.(?: |$)", s)
    return _names(m[1]) if m else []


@pytest.mark.parametrize("order", [("plain", "cg"), ("cg", "plain")])
def test_eviction_cache_modifier_has_no_policy(caches: Bundle, order: tuple[str, str]) -> None:
    """``.cg`` is a qualifier of the load itself (`ld.global.cg`): no `createpolicy` sentence."""
    s = R._mech_eviction(root_ctx(caches, *order))
    assert s is not None and s.startswith(f"Cache hints: `cg` sets {CG}.{SAME}")
    assert "createpolicy" not in s and _only(s, "plain") == []
    assert "ld.global.cg.v4.b32" in _only(s, "cg")


@pytest.mark.parametrize("order", [("last", "cg"), ("cg", "last")])
def test_eviction_each_side_its_own_hint(caches: Bundle, order: tuple[str, str]) -> None:
    s = R._mech_eviction(root_ctx(caches, *order))
    said = {"last": f"`last` sets {LAST}", "cg": f"`cg` sets {CG}"}
    assert s is not None and s.startswith(f"Cache hints: {said[order[0]]}; {said[order[1]]}.{SAME}")
    assert s.endswith(POLICY) and "ld.global.cg.v4.b32" in _only(s, "cg")
    assert any(k.startswith("createpolicy.fractional.L2::evict_last") for k in _only(s, "last"))


@pytest.mark.parametrize("order", [("both", "stfirst"), ("stfirst", "both")])
def test_eviction_two_hints_in_one_variant_and_a_store_policy(caches: Bundle, order: tuple[str, str]) -> None:
    """``both`` loads ``a`` with ``evict_last`` and ``b`` with ``.cg``; ``stfirst`` stores with ``evict_first``: each
    variant's own words, in its order, and each policy's instructions on its side."""
    s = R._mech_eviction(root_ctx(caches, *order))
    said = {"both": f"`both` sets {CG}; {LAST}", "stfirst": f"`stfirst` sets {FIRST}"}
    assert s is not None and s.startswith(f"Cache hints: {said[order[0]]}; {said[order[1]]}.{SAME}")
    assert any(k.startswith("st.global.L1::evict_first") for k in _only(s, "stfirst"))
    assert not any("evict_first" in k for k in _only(s, "both"))
    assert "ld.global.cg.v4.b32" in _only(s, "both") and s.endswith(POLICY)
    assert any(
        k.startswith(("ld.global.L1::evict_last", "createpolicy.fractional.L2::evict_last")) for k in _only(s, "both")
    )


@pytest.mark.parametrize(
    "order", [("plain", "cg"), ("cg", "plain"), ("plain", "last"), ("last", "plain")], ids=lambda p: "-".join(p)
)
def test_eviction_with_another_root_reads_the_ptx_at_the_line(caches: Bundle, order: tuple[str, str]) -> None:
    """With more than one root there is no whole-kernel delta: the TTIR attribute alone says what each side sets,
    and the hint instructions come from the PTX at the changed line (3.6 maps the hinted load there, 3.9 does not)."""
    ctx = multi_root_ctx(caches, *order)
    assert not ctx.whole
    hinted = next(v for v in order if v != "plain")
    s = R._mech_eviction(ctx)
    assert s is not None and s.startswith(f"Cache hints: `{hinted}` sets {CG if hinted == 'cg' else LAST}.{SAME}")
    at_line = sorted(k for d in ctx.trace if d.stage == "ptx" for k in (*d.only_a, *d.only_b) if R._is_hint_op(k))
    assert _only(s, hinted) == at_line[:4] and _only(s, "plain") == []


@pytest.mark.parametrize(
    "order", [("plain", "cg"), ("cg", "plain"), ("plain", "last"), ("last", "plain")], ids=lambda p: "-".join(p)
)
def test_eviction_from_the_attribute_alone(caches: Bundle, order: tuple[str, str]) -> None:
    """A bundle whose PTX/SASS say nothing at the root (only TTIR/TTGIR traced, no whole-kernel delta): the one
    attribute either side sets is enough for the sentence, and no instruction is named."""
    ctx = root_ctx(caches, *order)
    ir = [d for d in ctx.trace if d.stage in ("ttir", "ttgir")]
    s = R._mech_eviction(R.RootContext(*order, ctx.finding, ctx.changes, ctx.attrs, ir, {}))
    hinted = next(v for v in order if v != "plain")
    assert s == f"Cache hints: `{hinted}` sets {CG if hinted == 'cg' else LAST}.{SAME}"


def test_eviction_names_at_most_four_hinted_instructions(compile_suite) -> None:  # type: ignore[no-untyped-def]
    """``all3`` hints both loads and the store: more hinted instructions than the sentence lists (the first four,
    sorted)."""
    b = compile_suite(MECH + "::cachepol", ["plain", "all3"], "sm80")
    ctx = root_ctx(b, "all3", "plain")
    hinted = sorted(k for _, (oa, _ob) in ctx.whole.items() for k in oa if R._is_hint_op(k))
    assert len(hinted) > 4
    s = R._mech_eviction(ctx)
    assert s is not None and _only(s, "all3") == hinted[:4]


def test_eviction_hint_ops_alone_from_the_ptx_at_the_line(caches: Bundle) -> None:
    """No attribute at the root's lines (the attribute change is a root of its own), but the PTX there carries the
    hinted load: the sentence still names it, without words for what the source set."""
    ctx = multi_root_ctx(caches, "plain", "cg")
    bare = R.RootContext(ctx.a, ctx.b, ctx.finding, ctx.changes, [], ctx.trace, {})
    at_line = [k for d in ctx.trace if d.stage == "ptx" for k in d.only_b if R._is_hint_op(k)]
    s = R._mech_eviction(bare)
    if not at_line:  # Triton 3.9 maps the `ld.global.cg` to another line: nothing to tell
        assert s is None
    else:
        assert s == f"The memory instructions carry different cache hints.{SAME} Only in `cg`'s PTX/SASS: " + (
            ", ".join(f"`{k}`" for k in sorted(at_line)) + "."
        )


@pytest.fixture(scope="module")
def maxaxis(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(MECH + "::maxaxis", ["down", "across"], "sm80")


REDUCE = (
    "The reduction runs along another axis of the same tile: along the axis whose elements sit in one thread and the "
    "lanes of one warp it finishes with warp shuffles (`shfl.sync.bfly`); along an axis spread across warps the "
    "partial results meet in shared memory, with barriers (`bar.sync`) around it, and the result comes out in another "
    "layout (a `ttg.convert_layout` may follow)."
)
_FACT = re.compile(r"`([\w.]+)` (\d+) more in `(\w+)`, (\d+) more in `(\w+)`")


def _reduce_facts(s: str, order: tuple[str, str]) -> dict[str, dict[str, int]]:
    assert s.startswith(REDUCE + " PTX: ") and s.endswith(".")
    body = s[len(REDUCE + " PTX: ") : -1].split("; ")
    out: dict[str, dict[str, int]] = {}
    for part in body:
        m = _FACT.fullmatch(part)
        assert m is not None and (m[3], m[5]) == order, part
        out[m[1]] = {order[0]: int(m[2]), order[1]: int(m[4])}
    return out


def _ptx_counts(wa: dict[str, int], wb: dict[str, int], order: tuple[str, str]) -> dict[str, dict[str, int]]:
    ops = ("shfl.sync", "bar.sync", "st.shared", "ld.shared")
    got = {
        op: {
            order[0]: sum(n for k, n in wa.items() if k.startswith(op)),
            order[1]: sum(n for k, n in wb.items() if k.startswith(op)),
        }
        for op in ops
    }
    return {op: c for op, c in got.items() if any(c.values())}


@pytest.mark.parametrize("order", [("down", "across"), ("across", "down")])
def test_reduce_axis_across_shuffles_down_meets_in_shared(maxaxis: Bundle, order: tuple[str, str]) -> None:
    """``tl.max(axis=1)`` on a 128x128 tile at 8 warps reduces inside warps (`shfl.sync.bfly` only in ``across``),
    ``axis=0`` across warps through shared memory (`bar.sync` only in ``down``); every one of the four counted
    instructions that differs is named, with its count per variant."""
    ctx = root_ctx(maxaxis, *order)
    s = R._mech_reduce_axis(ctx)
    assert s is not None
    facts = _reduce_facts(s, order)
    assert facts["shfl.sync"]["down"] == 0 < facts["shfl.sync"]["across"]
    assert facts["bar.sync"]["across"] == 0 < facts["bar.sync"]["down"]
    assert facts == _ptx_counts(*ctx.whole["ptx"], order)
    assert list(facts) == [op for op in ("shfl.sync", "bar.sync", "st.shared", "ld.shared") if op in facts]


@pytest.mark.parametrize("order", [("down", "across"), ("across", "down")])
def test_reduce_axis_with_another_root_counts_the_ptx_at_the_line(maxaxis: Bundle, order: tuple[str, str]) -> None:
    ctx = multi_root_ctx(maxaxis, *order)
    ptx = [d for d in ctx.trace if d.stage == "ptx"]
    assert len(ptx) == 1 and not ctx.whole
    s = R._mech_reduce_axis(ctx)
    assert s is not None
    facts = _reduce_facts(s, order)
    assert facts and facts == _ptx_counts(ptx[0].only_a, ptx[0].only_b, order)
    assert facts.get("bar.sync", {}).get("across", 0) == 0  # the barriers are the across-warps side's


def test_reduce_axis_without_ptx_names_no_counts(maxaxis: Bundle) -> None:
    """A bundle without PTX (only SASS differs as a whole): the sentence alone, no empty "PTX:" list."""
    ctx = root_ctx(maxaxis, "down", "across")
    sass_only = R.RootContext(
        "down",
        "across",
        ctx.finding,
        ctx.changes,
        [],
        [d for d in ctx.trace if d.stage != "ptx"],
        {"sass": ctx.whole["sass"]},
    )
    assert R._mech_reduce_axis(sass_only) == REDUCE


@pytest.fixture(scope="module")
def hintstmt(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(MECH + "::hintstmt", ["bare", "mult", "contig"], "sm80")


@pytest.mark.parametrize("hinted", ["mult", "contig"])
def test_hint_call_as_its_own_statement(hintstmt: Bundle, hinted: str) -> None:
    """``start = tl.multiple_of(start, 16)`` / ``offs = tl.max_contiguous(offs, 64)`` on a line of their own: the
    source root (a statement, no call name) gets the AxisInfo sentence; the attribute lands on the line defining the
    value (``arith.muli`` / ``arith.addi``), and that attribute change, caused by the statement, does not repeat it
    (before the fix neither root said it: the attribute tokens were compared whole, ``tt.divisibility = dense<16>``)."""
    hint = {"mult": "tt.divisibility", "contig": "tt.contiguity"}[hinted]
    for order in (("bare", hinted), (hinted, "bare")):
        ctx = root_ctx(hintstmt, *order)
        assert [c.kind for c in ctx.changes] == ["statement"] and [c.name for c in ctx.changes] == [""]
        names = [t.split(" = ")[0] for ac in ctx.attrs for t in (*ac.only_a, *ac.only_b)]
        assert names == [hint]
        statement = R.RootContext(*order, Finding("source.statement", "minor", "", "", []), ctx.changes, [], [], {})
        s = R._mech_hints(statement)
        assert s is not None and s == mechanisms(statement)["_mech_hints"]
        assert s.startswith("`tl.multiple_of` attaches `tt.divisibility` and `tl.max_contiguous` attaches ")
        caused = Finding("ttir.attr-changed", "minor", "", "", [], causes=["source.statement"])
        assert R._mech_hints(R.RootContext(*order, caused, [], ctx.attrs, [], {})) is None
        alone = Finding("ttir.attr-changed", "minor", "", "", [])
        assert R._mech_hints(R.RootContext(*order, alone, [], ctx.attrs, [], {})) == s
    # an unrelated statement on the same pair of kernels is no hint story
    other = SourceChange("statement", True, "", text_a="start = start + 0", text_b="")
    assert R._mech_hints(R.RootContext("bare", hinted, alone, [other], [], [], {})) is None


HINT_SENTENCE = (
    "`tl.multiple_of` attaches `tt.divisibility` and `tl.max_contiguous` attaches `tt.contiguity` to the value: "
    "AxisInfo then knows the offsets are aligned and contiguous even through `%` or other ops it cannot see through, "
    "which lets the coalescing pass vectorize the loads that use them and the pipeliner copy them asynchronously."
)


def test_hint_sentence_in_full(hintstmt: Bundle) -> None:
    ctx = root_ctx(hintstmt, "bare", "mult")
    root = R.RootContext("bare", "mult", Finding("source.statement", "minor", "", "", []), ctx.changes, [], [], {})
    assert R._mech_hints(root) == HINT_SENTENCE


# ------------------------------------------------------------------------------------------------ stage-0 words


def test_spec_words_name_how_the_jit_specialized_each_side(compile_suite) -> None:  # type: ignore[no-untyped-def]
    b = compile_suite(str(SUITES / "spec_kinds.py"), ["plain", "mixed", "ragged", "wide", "tall"], "sm80")
    v = b.variants

    def words(name: str, x: str, y: str) -> str | None:
        return R._spec_words(name, x, y, v[x], v[y])

    assert words("incx", "mixed", "plain") == "`incx` is a runtime i32 in `mixed`, the constant 1 in `plain`"
    assert words("incx", "plain", "mixed") == "`incx` is the constant 1 in `plain`, a runtime i32 in `mixed`"
    assert words("R", "wide", "plain") == "`R` is i64 in `wide`, i32 in `plain`"
    assert words("R", "plain", "wide") == "`R` is i32 in `plain`, i64 in `wide`"
    assert words("BR", "tall", "plain") == "`BR` is the constant 32 in `tall`, the constant 16 in `plain`"
    assert words("ldw", "ragged", "plain") == "`ldw` has no divisibility-16 in `ragged` (16 in `plain`)"
    assert words("ldw", "plain", "ragged") == "`ldw` has no divisibility-16 in `ragged` (16 in `plain`)"
    assert words("C", "ragged", "plain") == ""
    assert words("nope", "ragged", "plain") is None


def test_spec_words_two_divisibilities() -> None:
    from irdiff.bundle import ArgSpec, VariantResult

    def vr(name: str, div: int) -> VariantResult:
        v = VariantResult(name=name, kernel="k", directory="/nonexistent")
        v.specialization = [ArgSpec(name="n", index=0, type="i32", divisibility=div)]
        return v

    assert R._spec_words("n", "a", "b", vr("a", 8), vr("b", 16)) == "`n` has divisibility 8 in `a`, 16 in `b`"


@pytest.mark.parametrize("order", [("wide", "plain"), ("plain", "wide")])
def test_annotation_root_says_what_the_jit_made_of_it(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    b = compile_suite(str(SUITES / "annot_scalars.py"), ["wide", "plain"], "sm80")
    a, o = order
    va, vb = b.variants[a], b.variants[o]
    cs = [c for c in diff_sources(va, vb).semantic if c.kind == "annotation"]
    assert [c.name for c in cs] == ["n"]
    ta, tb = ("i64", "i32") if a == "wide" else ("i32", "i64")
    assert R._annotation_words(cs, a, o, va, vb) == (
        f"1 parameter annotation only in `wide` (`n`: `tl.int64`): `n` is {ta} in `{a}`, {tb} in `{o}`"
    )
    f = R._source_finding("annotation", cs, a, o, va, vb)
    la, lb = (c := cs[0]).line_a, c.line_b
    assert (f.id, f.severity, f.stage) == ("source.annotation", "minor", "python")
    assert f.title == (
        f"Source: 1 parameter annotation only in `wide` (`n`: `tl.int64`): `n` is {ta} in `{a}`, {tb} in `{o}` "
        f"(line {la} of `{a}`, line {lb} of `{o}`)"
    )
    assert [(e.variant, e.line) for e in f.evidence] == [(a, la), (o, lb)]
    assert "n: tl.int64" in next(e.text for e in f.evidence if e.variant == "wide")


def test_annotations_alike_in_stage_0(compile_suite) -> None:  # type: ignore[no-untyped-def]
    b = compile_suite(str(SUITES / "annot_scalars.py"), ["annotated", "plain"], "sm80")
    va, vb = b.variants["annotated"], b.variants["plain"]
    cs = [c for c in diff_sources(va, vb).semantic if c.kind == "annotation"]
    assert R._annotation_words(cs, "annotated", "plain", va, vb) == (
        "2 parameter annotations only in `annotated` (`n`: `int`; `scale`: `float`): the JIT specializes them alike "
        "in both (same type, divisibility, constant)"
    )
    # the baseline first: the annotations are only in the second-named variant
    back = [c for c in diff_sources(vb, va).semantic if c.kind == "annotation"]
    assert R._annotation_words(back, "plain", "annotated", vb, va) == (
        "2 parameter annotations only in `annotated` (`n`: `int`; `scale`: `float`): the JIT specializes them alike "
        "in both (same type, divisibility, constant)"
    )
    # a parameter stage 0 does not know: nothing claimed about the JIT
    ghost = SourceChange("annotation", True, "", name="ghost", old="int")
    assert R._annotation_words([ghost], "annotated", "plain", va, vb) == (
        "1 parameter annotation only in `annotated` (`ghost`: `int`)"
    )
    # a default value or decorator change is no parameter annotation: the generic title is used
    assert R._annotation_words([SourceChange("annotation", True, "default of `n`", name="n")], "a", "b", va, vb) is None
    assert R._annotation_words([], "a", "b", va, vb) is None


def test_annotation_words_differing_and_many(compile_suite) -> None:  # type: ignore[no-untyped-def]
    b = compile_suite(str(SUITES / "spec_kinds.py"), ["plain", "mixed", "ragged", "wide", "tall"], "sm80")
    v = b.variants
    cs = [
        SourceChange("annotation", True, "", name=n, old=o, new=w)
        for n, o, w in (("R", "tl.int64", ""), ("C", "", "int"), ("ldx", "int", "tl.int32"), ("incx", "int", "int"))
    ]
    said = R._annotation_words(cs, "wide", "plain", v["wide"], v["plain"])
    assert said == (
        "4 parameter annotations that differ between `wide` and `plain` (`R`: `tl.int64` vs `—`; `C`: `—` vs `int`; "
        "`ldx`: `int` vs `tl.int32`; `incx`: `int` vs `int`): `R` is i64 in `wide`, i32 in `plain`"
    )
    four = [SourceChange("annotation", True, "", name=n, new="int") for n in ("R", "C", "ldx", "ldw")]
    assert R._annotation_words(four, "plain", "ragged", v["plain"], v["ragged"]) == (
        "4 parameter annotations only in `ragged` (`R`, `C`, `ldx` and 1 more: `int`): `R` has no divisibility-16 in "
        "`ragged` (16 in `plain`); `ldw` has no divisibility-16 in `ragged` (16 in `plain`)"
    )
    three = [SourceChange("annotation", True, "", name=n, new="int") for n in ("x_ptr", "R", "ldw")]
    assert R._annotation_words(three, "plain", "ragged", v["plain"], v["ragged"]).endswith(  # type: ignore[union-attr]
        ": `x_ptr` has no divisibility-16 in `ragged` (16 in `plain`); `R` has no divisibility-16 in `ragged` (16 in "
        "`plain`); … 1 more"
    )


# ------------------------------------------------------------------------------------------------ settings


def test_settings_root_names_target_and_ptxas_once_each(compile_suite) -> None:  # type: ignore[no-untyped-def]
    """sm80 vs sm90 (Triton 3.9 assembles sm90 with another ptxas, 3.6 with the same one): each difference once, in
    both orders; a ptxas version is quoted as it reads (``ptxas V12.9.86``, not ``ptxas ptxas V12.9.86``)."""
    import copy
    import dataclasses

    k80 = compile_suite(CASES + "::streaming", ["evict", "keep"], "sm80").variants["keep"]
    k90 = compile_suite(CASES + "::streaming", ["evict", "keep"], "sm90").variants["keep"]
    p80, p90 = k80.resources.ptxas_version, k90.resources.ptxas_version
    assert p80 and p90 and p80.startswith("ptxas")
    if p80 == p90:  # the same ptxas for both targets: give sm90 another one (as Triton 3.9 does)
        k90 = copy.copy(k90)
        p90 = "ptxas-blackwell V13.4.59"
        k90.resources = dataclasses.replace(k90.resources, ptxas_version=p90)
    for (x, vx, px, tx), (y, vy, py, ty) in (
        (("k80", k80, p80, "sm80"), ("k90", k90, p90, "sm90")),
        (("k90", k90, p90, "sm90"), ("k80", k80, p80, "sm80")),
    ):
        f = R._settings_finding(x, y, vx, vy)
        assert f is not None and (f.id, f.severity, f.stage) == ("settings.changed", "major", "options")
        desc = f"target {tx} in `{x}` vs {ty} in `{y}`, {px} in `{x}` vs {py} in `{y}`"
        assert f.title == f"Settings differ: {desc}"
        assert f.explanation.startswith(f"The compile settings differ: {desc}. The target selects the backend's")
        assert [(e.variant, e.text) for e in f.evidence] == [
            (x, f"target = {tx}"),
            (y, f"target = {ty}"),
            (x, f"ptxas = {px}"),
            (y, f"ptxas = {py}"),
        ]
    e80 = compile_suite(CASES + "::streaming", ["evict", "keep"], "sm80").variants["evict"]
    assert R._settings_finding("e", "k", e80, k80) is None


def test_settings_triton_version_alone_has_no_target_sentence(compile_suite) -> None:  # type: ignore[no-untyped-def]
    import copy

    k80 = compile_suite(CASES + "::streaming", ["evict", "keep"], "sm80").variants["keep"]
    old = copy.copy(k80)
    old.metadata = {**k80.metadata, "triton_version": "3.0.0"}
    f = R._settings_finding("old", "new", old, k80)
    assert f is not None
    assert f.title == f"Settings differ: Triton version 3.0.0 in `old` vs {k80.metadata['triton_version']} in `new`"
    assert "The target selects" not in f.explanation


# ------------------------------------------------------------------------------------------------ source and attributes


@pytest.mark.parametrize("order", [("evict", "keep"), ("keep", "evict")])
def test_kwarg_root_and_its_attribute_change(compile_suite, order: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    b = compile_suite(CASES + "::streaming", ["evict", "keep"], "sm80")
    a, o = order
    va, vb = b.variants[a], b.variants[o]
    sd = diff_sources(va, vb)
    (c,) = sd.semantic
    f = R._source_finding(c.kind, [c], a, o, va, vb)
    assert f.id == "source.kwarg-changed" and f.severity == "minor"
    assert f.title == f"Source: {c.words(a, o)} (line {c.line_a} of `{a}`, line {c.line_b} of `{o}`)"
    assert "eviction_policy='evict_first'` in `evict`" in f.title
    assert f.explanation == f"What changed in the source (compared as Python syntax trees): {c.words(a, o)}."
    assert [(e.variant, e.line) for e in f.evidence] == [(a, c.line_a), (o, c.line_b)]
    assert 'eviction_policy="evict_first"' in next(e.text for e in f.evidence if e.variant == "evict")

    (ac,) = attr_changes(va, vb, sd.line_pairs)
    g = R._attr_finding([ac], a, o)
    assert (g.id, g.severity, g.stage) == ("ttir.attr-changed", "minor", "ttir")
    assert g.title == ac.words(a, o) and "evict_first" in g.title and "(and" not in g.title
    assert g.explanation == ac.words(a, o) + "."
    assert [(e.variant, e.stage, e.line) for e in g.evidence] == [(a, "ttir", ac.ttir_a), (o, "ttir", ac.ttir_b)]
    assert "evict_first" in next(e.text for e in g.evidence if e.variant == "evict")
    two = R._attr_finding([ac, ac], a, o)
    assert two.title == ac.words(a, o) + " (and 1 more op(s))" and len(two.evidence) == 4


def test_source_root_orders_triton_calls_first_and_counts_the_rest(compile_suite) -> None:  # type: ignore[no-untyped-def]
    b = compile_suite(CASES + "::hinted", ["bare", "hint"], "sm80")
    va, vb = b.variants["bare"], b.variants["hint"]
    cs = diff_sources(va, vb).semantic
    index = SourceChange("op-changed", True, "`i + 1` in `{A}` is `i + 2` in `{B}`", line_a=3, line_b=None)
    f = R._source_finding("call-added", [index, *cs], "bare", "hint", va, vb)
    assert f.title.startswith("Source: `hint` wraps `(pid_m * BM + tl.arange(0, BM)) % M` in `tl.max_contiguous`")
    assert f.title.endswith(f" (and 2 more) (line {cs[0].line_a} of `bare`, line {cs[0].line_b} of `hint`)")
    assert f.explanation.endswith("; `i + 1` in `bare` is `i + 2` in `hint`.")
    # the added statement exists in `bare` only: it is cited there alone
    assert ("bare", 3) in [(e.variant, e.line) for e in f.evidence]
    many = [SourceChange("statement", True, f"s{i}", line_a=i, line_b=i) for i in range(1, 11)]
    g = R._source_finding("statement", many, "p", "q", va, vb)
    assert g.title == "Source: s1 (and 9 more) (line 1 of `p`, line 1 of `q`)"
    assert g.explanation.endswith("s8. … and 2 more.") and len(g.evidence) == 16
    only_b = [SourceChange("statement", True, "t", line_a=None, line_b=7, text_b="x = 1")]
    h = R._source_finding("statement", only_b, "p", "q", va, vb)
    assert h.title == "Source: t (line — of `p`, line 7 of `q`)" and [e.variant for e in h.evidence] == ["q"]
    helper = [SourceChange("op-changed", True, "u", function="helper", line_a=5, line_b=5, file_a="lib.py")]
    k = R._source_finding("op-changed", helper, "p", "q", va, vb)
    assert k.title == "Source: u in the called `@triton.jit` function `helper` (line 5 of `p`, line 5 of `q`)"
    assert [(e.variant, e.line) for e in k.evidence] == [("p", None), ("q", 5)]


# ------------------------------------------------------------------------------------------------ claims and titles


def test_claims_by_line_or_by_stage_0_parameter() -> None:
    f = Finding("hint.cache", "minor", "", "", [Evidence("a", "spec", None, "n: i64 div16")])
    line = SourceChange("kwarg-changed", True, "", line_a=10, end_a=12, line_b=20)
    assert R._claims(f, line, {12}, set()) and R._claims(f, line, set(), {20})
    assert not R._claims(f, line, {9, 13}, {19, 21})
    moved = SourceChange("kwarg-changed", True, "", line_a=10, line_b=20, file_a="lib.py")
    assert not R._claims(f, moved, {10}, {20})  # another file's lines are the kernel's call site in the IR
    ann = SourceChange("annotation", True, "", name="n", line_a=3, line_b=3)
    assert R._claims(f, ann, set(), set())  # the parameter's stage-0 evidence, whatever its lines
    assert not R._claims(f, SourceChange("annotation", True, "", name="m", line_a=3, line_b=3), {3}, {3})
    deco = SourceChange("annotation", True, "", name="triton.jit", line_a=3, line_b=3)
    assert R._claims(f, deco, {3}, set()) and not R._claims(f, deco, set(), set())
    assert R._span(4, None) == {4} and R._span(4, 6) == {4, 5, 6} and R._span(4, 2) == {4} and R._span(None, 5) == set()


def test_claimed_change_prefixes_the_title_with_the_edit() -> None:
    kw = SourceChange(
        "kwarg-changed", True, "`tl.load` has `x` in `{A}`", line_a=65, line_b=56, name="eviction_policy",
        old="'evict_first'",
    )  # fmt: skip
    f = Finding("hint.cache", "minor", "Loads differ", "", [])
    R._name_claimed_change(f, [kw], "a", "b")
    assert f.title == "`tl.load` has `x` in `a` (line 65 of `a`, line 56 of `b`): Loads differ"
    g = Finding("hint.cache", "minor", "eviction_policy=evict_first on the load", "", [])
    R._name_claimed_change(g, [kw], "a", "b")
    assert g.title == "eviction_policy=evict_first on the load (line 65 of `a`, line 56 of `b`)"
    R._name_claimed_change(g, [kw], "a", "b")  # its lines are named once
    assert g.title == "eviction_policy=evict_first on the load (line 65 of `a`, line 56 of `b`)"
    # a respelled call ranks after a keyword added on its line, and both are named
    resp = SourceChange(
        "call-changed", True, "`range` is `tl.range`", line_a=7, line_b=7, name="range", old="range", new="tl.range"
    )
    unroll = SourceChange(
        "kwarg-changed", True, "`tl.range` gains `loop_unroll_factor=4`", line_a=7, line_b=7,
        name="loop_unroll_factor", new="4",
    )  # fmt: skip
    h = Finding("loop.unrolled", "major", "Loop unrolled", "", [])
    R._name_claimed_change(h, [resp, unroll], "a", "b")
    assert h.title == (
        "`tl.range` gains `loop_unroll_factor=4`; `range` is `tl.range` (line 7 of `a`, line 7 of `b`): Loop unrolled"
    )
    assert R._respelling(resp) and not R._respelling(unroll)
    assert not R._respelling(SourceChange("call-changed", True, "", old="tl.exp", new="tl.exp2"))
    # an edit inside a called helper says so; an annotation is named by the rules themselves
    inner = SourceChange("op-changed", True, "`/` is `*`", function="helper", line_a=3, line_b=3, name="/", old="/")
    k = Finding("precision.division", "minor", "Division", "", [])
    R._name_claimed_change(k, [inner], "a", "b", kernel="kern")
    assert (
        k.title == "`/` is `*` in the called `@triton.jit` function `helper` (line 3 of `a`, line 3 of `b`): Division"
    )
    m = Finding("spec.type-changed", "major", "T", "", [])
    R._name_claimed_change(m, [SourceChange("annotation", True, "x", name="n")], "a", "b")
    assert m.title == "T"


# ------------------------------------------------------------------------------------------------ registers


def test_dot_and_address_registers_per_thread(compile_suite) -> None:  # type: ignore[no-untyped-def]
    """64×64 fp32 accumulator over 4 warps (128 threads) = 32 values per thread, 16 over 8 warps; the MMA layout.
    The dot loop's A and B loads and the C store: 2 address registers per vector of each."""
    b = compile_suite(str(SUITES / "diag_loop.py"), ["dot3", "dot3w8"], "sm86")
    d4, d8 = b.variants["dot3"], b.variants["dot3w8"]
    assert R._dot_facts(d4) == (32, "mma") and R._dot_facts(d8) == (16, "mma")
    assert R._address_regs(d4) == 2 * R._address_regs(d8) > 0
    assert R._count(d4, "ptx", "cp.async") > R._count(d8, "ptx", "cp.async") > 0
    s = compile_suite(CASES + "::streaming", ["evict", "keep"], "sm80").variants["keep"]
    assert R._dot_facts(s) is None
    # 1024 fp32 per program over 128 threads, 4 contiguous per thread: 2 loads and a store, 2 registers each
    assert R._address_regs(s) == 3 * 2 * (1024 // 128 // 4)
    assert R._count(s, "ptx", "ld.global") == 4 and R._count(s, "ptx", "nothing.such") == 0


# ------------------------------------------------------------------------------------------------ ordering


def _f(fid: str, severity: str = "major", stage: str = "ttgir", causes: list[str] | None = None) -> Finding:
    return Finding(fid, severity, fid, "", [], causes=causes or [], stage=stage)  # type: ignore[arg-type]


def test_order_roots_then_effects_by_stage_and_depth_then_unexplained() -> None:
    fs = [
        _f("time.measured", stage="time"),
        _f("lonely", stage="ptx"),
        _f("deep", stage="ptx", causes=["mid"]),
        _f("mid", stage="ttgir", causes=["source.op-changed"]),
        _f("info.root", severity="info", stage="python"),
        _f("source.op-changed", stage="python"),
        _f("same.stage", stage="ptx", causes=["source.op-changed"]),
        _f("settings.changed", stage="options"),
    ]
    out = R._order(fs, {"source.op-changed", "settings.changed", "info.root"}, {"lonely"})
    assert [f.id for f in out] == [
        "settings.changed",
        "source.op-changed",
        "info.root",
        "mid",
        "same.stage",
        "deep",
        "lonely",
        "time.measured",
    ]


def test_restatement_is_no_more_severe_than_its_cause() -> None:
    rule = _f("hint.cache", severity="minor")
    attr = _f("ttir.attr-changed", severity="major", causes=["hint.cache"])
    src = _f("source.kwarg-changed", severity="critical", causes=["hint.cache", "missing"])
    other = _f("coalesce.contiguity", severity="critical", causes=["hint.cache"])
    lower = _f("source.call-added", severity="info", causes=["hint.cache"])
    fs = [rule, attr, src, other, lower]
    R._cap_restatements(fs, {f.id: f for f in fs})
    assert [f.severity for f in fs] == ["minor", "minor", "minor", "critical", "info"]
    orphan = _f("source.x", severity="major", causes=["gone"])
    R._cap_restatements([orphan], {})
    assert orphan.severity == "major"


def test_restatement_is_capped_at_its_most_severe_cause_and_never_raised() -> None:
    """Several causes: the restatement is capped at the most severe one, whichever position it has among the causes;
    a restatement already less severe than its cause keeps its severity (the cap never raises one); a restatement
    whose causes are all absent is skipped without stopping the ones after it."""
    minor, major = _f("hint.cache", severity="minor"), _f("precision.division", severity="major")
    orphan = _f("source.statement", severity="critical", causes=["gone"])
    attr = _f("ttir.attr-changed", severity="critical", causes=["hint.cache", "precision.division"])
    src = _f("source.kwarg-changed", severity="critical", causes=["precision.division", "hint.cache"])
    low = _f("source.call-added", severity="minor", causes=["precision.division"])
    lowest = _f("source.op-changed", severity="info", causes=["hint.cache", "precision.division"])
    fs = [orphan, minor, major, attr, src, low, lowest]
    R._cap_restatements(fs, {f.id: f for f in fs})
    assert [f.severity for f in fs] == ["critical", "minor", "major", "major", "major", "minor", "info"]


def test_lift_roots_follows_every_path_of_the_chain_and_lifts_only_roots() -> None:
    """A root takes the worst severity of its whole chain: two levels down; past a finding reached twice (a diamond:
    the critical effect is looked at last, after the shared one is met again); through a cause cycle (it ends: the
    engine never promises an acyclic graph). A finding outside ``roots``, or a root with a cause of its own, keeps
    its severity whatever follows it."""
    import signal

    src = _f("source.op-changed", severity="minor")
    div = _f("precision.division", severity="minor", causes=["source.op-changed"])
    sass = _f("sass.instructions", severity="critical", causes=["precision.division"])
    R._lift_roots([src, div, sass], {"source.op-changed"})
    assert (src.severity, div.severity, sass.severity) == ("critical", "minor", "critical")
    # a diamond: effects of the root are popped last-listed first; the critical one is listed first
    root = _f("source.kwarg-changed", severity="info")
    worst = _f("mma.lowering", severity="critical", causes=["source.kwarg-changed"])
    left = _f("ttir.i64-index-math", severity="minor", causes=["source.kwarg-changed"])
    right = _f("coalesce.contiguity", severity="minor", causes=["source.kwarg-changed"])
    shared = _f("ptx.memory-ops", severity="minor", causes=["ttir.i64-index-math", "coalesce.contiguity"])
    R._lift_roots([root, worst, left, right, shared], {"source.kwarg-changed"})
    assert root.severity == "critical"
    # not a root, or a root with a cause: unchanged
    lone = _f("ptx.memory-ops", severity="minor")
    after = _f("sass.instructions", severity="critical", causes=["ptx.memory-ops"])
    caused = _f("settings.changed", severity="info", causes=["spec.constexpr-changed"])
    below = _f("resources.registers", severity="major", causes=["settings.changed"])
    R._lift_roots([lone, after, caused, below], {"settings.changed"})
    assert (lone.severity, caused.severity) == ("minor", "info")
    # a cycle among the effects: every finding is looked at once
    top = _f("source.call-added", severity="minor")
    x = _f("hint.cache", severity="minor", causes=["source.call-added", "ttir.attr-changed"])
    y = _f("ttir.attr-changed", severity="major", causes=["hint.cache"])

    def _stuck(*_: object) -> None:
        raise TimeoutError("_lift_roots did not end on a cause cycle")

    old = signal.signal(signal.SIGALRM, _stuck)
    signal.setitimer(signal.ITIMER_REAL, 5.0)
    try:
        R._lift_roots([top, x, y], {"source.call-added"})
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert top.severity == "major"


def test_order_of_dangling_causes_and_unknown_stages() -> None:
    """A finding whose causes are all absent is one level deep (after a finding without causes, tied with one a
    level above a leaf: first listed first); a stage that is no pipeline stage sorts after every known stage."""
    fs = [
        _f("dangling", stage="ptx", causes=["ghost"]),
        _f("upper", stage="ptx", causes=["leaf"]),
        _f("leaf", stage="ptx"),
    ]
    out = R._order(fs, set(), {"dangling", "upper", "leaf"})
    assert [f.id for f in out] == ["leaf", "dangling", "upper"]
    fs = [
        _f("odd", stage="custom", causes=["root"]),
        _f("known", stage="sass", causes=["root"]),
        _f("root", stage="python"),
    ]
    out = R._order(fs, {"root"}, set())
    assert [f.id for f in out] == ["root", "known", "odd"]


def test_order_measures_a_cycle_as_deep_as_the_guard() -> None:
    """A cycle (``c1`` ↔ ``c2``) is measured as deep as the guard lets the walk go (31 levels): after every chain up
    to 30 links, tied with deeper chains (listed first, first)."""
    chain = [_f("n0", stage="ptx")] + [_f(f"n{k}", stage="ptx", causes=[f"n{k - 1}"]) for k in range(1, 32)]
    cycle = [_f("c1", stage="ptx", causes=["c2"]), _f("c2", stage="ptx", causes=["c1"])]
    fs = cycle + chain
    out = R._order(fs, set(), {f.id for f in fs})
    assert [f.id for f in out] == [f"n{k}" for k in range(31)] + ["c1", "c2", "n31"]


def test_trace_text_and_op_lists() -> None:
    from irdiff.diagnose.provenance import StageDelta

    trace = [
        StageDelta("ttir", {"% = arith.divf %, % : tensor<512xf32>": 1}, {"% = tt.precise_divf %, %": 2}, False),
        StageDelta("ttgir", {}, {}, True),
        StageDelta("ptx", {"div.full.f32": 4}, {"div.rn.f32": 4}, False),
    ]
    whole = {"ptx": ({"div.full.f32": 4}, {"div.rn.f32": 4, "a": 1, "b": 1, "c": 1, "d": 1})}
    assert R._trace_text("x", "y", trace, whole) == (
        "TTIR at these lines: `% = arith.divf %, %` in `x` where `y` has `% = tt.precise_divf %, %` ×2; "
        "PTX (whole kernel): `div.full.f32` ×4 only in `x`, `div.rn.f32` ×4, `a`, `b`, `c` and 1 more only in `y`"
    )
    assert R._fmt_ops({}) == "nothing"
    assert R._short("x" * 200) == "x" * 107 + "..." and R._short("y" * 110) == "y" * 110
    assert R._short("% = tt.load %, % : !tt.ptr<f32>") == "% = tt.load %, %"


def test_hint_predicates_and_root_ids() -> None:
    from irdiff.diagnose.provenance import AttrChange

    hint = SourceChange("call-added", True, "", text_a="o = offs", text_b="o = tl.multiple_of(offs, 16)")
    assert R._is_hint_change(hint)
    assert R._is_hint_change(SourceChange("call-added", True, "", text_a="tl.assume(n > 0)"))
    assert not R._is_hint_change(SourceChange("call-added", True, "", text_a="x = my_multiple_of(y)", text_b="z"))

    def ac(a: list[str], b: list[str]) -> AttrChange:
        return AttrChange("arith.remsi", 1, 1, 2, 2, "", "", a, b)

    div = ac([], ["tt.divisibility = dense<16>", "tt.contiguity = dense<128>"])
    assert R._hint_attrs_only([div]) and R._hint_only(div)
    assert R._hint_attrs_only([ac(["tt.constancy = dense<4>"], [])]) and not R._hint_only(ac(["tt.constancy"], []))
    evict = ac(["eviction_policy = evict_first"], [])
    assert not R._hint_attrs_only([div, evict]) and not R._hint_only(evict)
    assert not R._hint_attrs_only([]) and R._hint_only(ac([], []))
    fs = [
        _f("source.op-changed"),
        _f("settings.changed", causes=["x"]),
        _f("hint.cache"),
        _f("coalesce.contiguity"),
        _f("ttir.attr-changed"),
    ]
    assert R._root_ids(fs) == {"source.op-changed", "ttir.attr-changed"}
    assert R._root_ids(fs, {"hint.cache"}) == {"source.op-changed", "ttir.attr-changed", "hint.cache"}
    assert R._occ([_f("resources.occupancy")]) and not R._occ([_f("resources.registers")])
    assert R.source_id("kwarg-changed") == "source.kwarg-changed" and R.source_id("brand-new") == "source.brand-new"


def test_has_and_all_ops() -> None:
    from irdiff.diagnose.provenance import StageDelta

    ctx = R.RootContext(
        "a", "b", _f("x"), [], [], [StageDelta("ptx", {"div.full.f32": 1}, {"x": 1}, False)],
        {"sass": ({"FMUL": 2}, {"MUFU.RCP": 1})},
    )  # fmt: skip
    assert R._all_ops(ctx) == ({"div.full.f32", "FMUL"}, {"x", "MUFU.RCP"})
    assert R._has({"div.full.f32"}, "div", "full") and not R._has({"div.full.f32"}, "div", "rn")
    assert not R._has(set(), "div")


# ------------------------------------------------------------------------------------------------ survivors of the device run


def _edited(tmp: Path, v: Bundle | object, name: str, edit: object, options: dict | None = None):  # type: ignore[no-untyped-def]
    """A copy of variant ``v`` whose TTGIR is ``edit(text)`` (other stages absent) and whose options are ``options``."""
    import copy as _copy

    from irdiff.diagnose.texts import stage_text

    d = tmp / name
    d.mkdir()
    (d / "ttgir.mlir").write_text(edit(stage_text(v, "ttgir")))  # type: ignore[operator,arg-type]
    w = _copy.copy(v)
    w.directory, w.stages, w.options = str(d), {"ttgir": "ttgir.mlir"}, dict(options or {})  # type: ignore[attr-defined]
    return w


def test_per_thread_sizes_read_the_module_warps_first(compile_suite, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """``ttg.num-warps`` of the TTGIR module decides the threads; the options' ``num_warps`` only when the module does
    not say it, 4 when neither does; register counts are integers; no TTGIR, no sizes."""
    from irdiff.bundle import VariantResult

    d4 = compile_suite(str(SUITES / "diag_loop.py"), ["dot3", "dot3w8"], "sm86").variants["dot3"]
    same = _edited(tmp_path, d4, "opt8", lambda t: t, {"num_warps": 8})
    assert R._dot_facts(same) == R._dot_facts(d4) == (32, "mma")
    assert R._address_regs(same) == R._address_regs(d4)
    drop = '"ttg.num-warps" = 4 : i32, '
    assert drop in R.stage_text(d4, "ttgir")
    w8 = _edited(tmp_path, d4, "w8", lambda t: t.replace(drop, ""), {"num_warps": 8})
    assert R._dot_facts(w8) == (16, "mma") and R._address_regs(w8) == R._address_regs(d4) // 2
    bare = _edited(tmp_path, d4, "bare", lambda t: t.replace(drop, ""), {})
    assert R._dot_facts(bare) == (32, "mma") and R._address_regs(bare) == R._address_regs(d4)
    s = compile_suite(CASES + "::streaming", ["evict", "keep"], "sm80").variants["keep"]
    assert isinstance(R._address_regs(s), int) and R._address_regs(s) == 12
    # one element per thread and vector (sizePerThread [1], 512 over 128 threads): 4 addresses of 2 registers per op
    h = compile_suite(str(SUITES / "hint_statement.py"), ["plain", "hinted"], "sm80").variants["plain"]
    assert "sizePerThread = [1]" in R.stage_text(h, "ttgir") and R._address_regs(h) == 2 * (2 * 4)
    # two elements per thread in one vector of 2: one address per op, 2 registers (not fewer than one)
    r = compile_suite(str(SUITES / "hint_restated.py"), ["plain", "twice"], "sm80").variants["plain"]
    assert "sizePerThread = [2]" in R.stage_text(r, "ttgir") and R._address_regs(r) == 2 * 2
    empty = VariantResult("e", kernel="k", directory=str(tmp_path / "none"))
    assert R._address_regs(empty) == 0 and R._dot_facts(empty) is None and R._count(empty, "ptx", "ld") == 0


def test_annotation_words_sides_pronoun_and_three_names(compile_suite) -> None:  # type: ignore[no-untyped-def]
    b = compile_suite(str(SUITES / "spec_kinds.py"), ["plain", "mixed", "ragged", "wide", "tall"], "sm80")
    v = b.variants
    one = [SourceChange("annotation", True, "", name="C", new="int")]
    assert R._annotation_words(one, "ragged", "plain", v["ragged"], v["plain"]) == (
        "1 parameter annotation only in `plain` (`C`: `int`): the JIT specializes it alike in both (same type, "
        "divisibility, constant)"
    )
    both = [SourceChange("annotation", True, "", name="C", old="int", new="tl.int32")]
    assert R._annotation_words(both, "ragged", "plain", v["ragged"], v["plain"]).startswith(  # type: ignore[union-attr]
        "1 parameter annotation that differ between `ragged` and `plain` (`C`: `int` vs `tl.int32`)"
    )
    mixed = [SourceChange("annotation", True, "", name="C", new="int"), *both]
    assert "that differ between" in R._annotation_words(mixed, "ragged", "plain", v["ragged"], v["plain"])  # type: ignore[operator]
    three = [SourceChange("annotation", True, "", name=n, new="int") for n in ("C", "incx", "BR")]
    said = R._annotation_words(three, "plain", "tall", v["plain"], v["tall"])
    assert said is not None and said.startswith("3 parameter annotations only in `tall` (`C`, `incx`, `BR`: `int`)")
    deco = [SourceChange("annotation", True, "decorator `@triton.jit` has `do_not_specialize`", name="n")]
    assert R._annotation_words(deco, "a", "b", v["plain"], v["tall"]) is None


def test_attribute_root_cuts_texts_and_lists_six(compile_suite) -> None:  # type: ignore[no-untyped-def]
    import dataclasses

    b = compile_suite(CASES + "::streaming", ["evict", "keep"], "sm80")
    va, vb = b.variants["evict"], b.variants["keep"]
    (ac,) = attr_changes(va, vb, diff_sources(va, vb).line_pairs)
    long = dataclasses.replace(ac, text_a="a" * 300, text_b="b" * 300)
    g = R._attr_finding([long] * 7, "evict", "keep")
    assert len(g.evidence) == 12 and {len(e.text) for e in g.evidence} == {240}
    assert g.explanation == "; ".join([ac.words("evict", "keep")] * 6) + "."
    assert g.title.endswith(" (and 6 more op(s))")


def test_claims_of_annotation_names_that_are_no_parameter() -> None:
    f = Finding("spec.x", "minor", "", "", [])
    for name in ("jit", "jit_opts", "tl.constexpr", "x.y"):
        c = SourceChange("annotation", True, "", name=name, line_a=3, line_b=4)
        assert R._claims(f, c, {3}, set()) and R._claims(f, c, set(), {4}), name  # by line, not by stage 0
    span = SourceChange("kwarg-changed", True, "", line_a=10, line_b=20, end_b=22)
    assert R._claims(f, span, set(), {22}) and not R._claims(f, span, set(), {23})


def test_op_lists_ties_by_name_and_the_limit() -> None:
    from irdiff.diagnose.provenance import StageDelta

    assert R._fmt_ops({"b": 1, "a": 1, "c": 2}) == "`c` ×2, `a`, `b`"
    assert R._fmt_ops({"a": 1, "b": 1, "c": 1, "d": 1}) == "`a`, `b`, `c`, `d`"
    assert R._short("k" * 111) == "k" * 107 + "..."
    one_sided = [StageDelta("ttgir", {}, {}, True), StageDelta("ttir", {"x": 1}, {}, False)]
    assert R._trace_text("p", "q", one_sided, {"ptx": ({"y": 2}, {})}) == (
        "TTIR at these lines: `x` in `p` where `q` has nothing; PTX (whole kernel): `y` ×2 only in `p`, nothing only "
        "in `q`"
    )
    assert R._hint_attrs_only([R.AttrChange("arith.muli", 1, 1, 2, 2, "", "", [], ["tt.contiguity=dense<4>"])])  # type: ignore[attr-defined]


def test_claimed_change_title_words_and_lines() -> None:
    def kw(old: str, line_a: int = 5, line_b: int = 6) -> SourceChange:
        return SourceChange(
            "kwarg-changed",
            True,
            "`tl.load` has `x` in `{A}`",
            line_a=line_a,
            line_b=line_b,
            name="eviction_policy",
            old=old,
        )

    f = Finding("hint.cache", "minor", "eviction_policy differs", "", [])
    R._name_claimed_change(f, [kw("'evict_first'")], "a", "b")
    assert f.title == "`tl.load` has `x` in `a` (line 5 of `a`, line 6 of `b`): eviction_policy differs"
    g = Finding("hint.cache", "minor", "eviction_policy=evict_first", "", [])
    R._name_claimed_change(g, [kw('"evict_first"')], "a", "b")
    assert g.title == "eviction_policy=evict_first (line 5 of `a`, line 6 of `b`)"
    h = Finding("hint.cache", "minor", "eviction_policy=evict_first (line 99 of `a`)", "", [])
    R._name_claimed_change(h, [kw("'evict_first'")], "a", "b")
    assert h.title == "eviction_policy=evict_first (line 99 of `a`)"  # a title that names its lines keeps them
    # a called function is named only when the kernel is known
    k = Finding("x", "minor", "T", "", [])
    R._name_claimed_change(
        k, [SourceChange("op-changed", True, "`/` is `*`", function="helper", line_a=3, line_b=3)], "a", "b"
    )
    assert k.title == "`/` is `*` (line 3 of `a`, line 3 of `b`): T"
    # one-character and two-character names: a one-character name is no evidence that the title names it
    short = SourceChange("op-changed", True, "`/` is `*`", name="/", old="/", new="*", line_a=1, line_b=1)
    m = Finding("x", "minor", "Division / rounding", "", [])
    R._name_claimed_change(m, [short], "a", "b")
    assert m.title == "`/` is `*` (line 1 of `a`, line 1 of `b`): Division / rounding"
    two = SourceChange("op-changed", True, "`lu` is `cg`", name="lu", line_a=1, line_b=1)
    n = Finding("x", "minor", "lu hint", "", [])
    R._name_claimed_change(n, [two], "a", "b")
    assert n.title == "lu hint (line 1 of `a`, line 1 of `b`)"
    # two named changes on one line: only a respelling is named beside the first; no lines, no parentheses
    op = SourceChange("op-changed", True, "`+` is `-`", name="+", line_a=7, line_b=7)
    p = Finding("x", "minor", "T", "", [])
    R._name_claimed_change(p, [kw("'evict_first'", line_a=7, line_b=7), op], "a", "b")
    assert p.title == "`tl.load` has `x` in `a` (line 7 of `a`, line 7 of `b`): T"
    q = Finding("x", "minor", "T", "", [])
    R._name_claimed_change(q, [SourceChange("op-changed", True, "`+` is `-`", name="+")], "a", "b")
    assert q.title == "`+` is `-`: T"


def test_respelling_compares_the_last_dotted_part() -> None:
    assert R._respelling(SourceChange("call-changed", True, "", old="tl.exp", new="tl.math.exp"))
    assert not R._respelling(SourceChange("call-changed", True, "", old=None, new="tl.exp"))  # type: ignore[arg-type]
    assert not R._respelling(SourceChange("call-changed", True, "", old="tl.exp", new="tl.math.log"))


def test_settings_evidence_stage_and_one_sided_triton_version(compile_suite) -> None:  # type: ignore[no-untyped-def]
    import copy

    k80 = compile_suite(CASES + "::streaming", ["evict", "keep"], "sm80").variants["keep"]
    k90 = compile_suite(CASES + "::streaming", ["evict", "keep"], "sm90").variants["keep"]
    f = R._settings_finding("x", "y", k80, k90)
    assert f is not None and {e.stage for e in f.evidence} == {"options"}
    assert f.explanation.endswith(
        " The target selects the backend's pass pipeline and lowering (MMA version, async copies, TMA on sm90+) and "
        "the ptxas that assembles the PTX (Triton bundles a different ptxas for sm90+)."
    )
    blind = copy.copy(k80)
    blind.metadata = {k: v for k, v in k80.metadata.items() if k != "triton_version"}
    assert R._settings_finding("x", "y", blind, k80) is None and R._settings_finding("x", "y", k80, blind) is None


def test_source_root_word_counts_and_lines_of_one_side(compile_suite) -> None:  # type: ignore[no-untyped-def]
    b = compile_suite(CASES + "::hinted", ["bare", "hint"], "sm80")
    va, vb = b.variants["bare"], b.variants["hint"]
    two = [SourceChange("statement", True, f"s{i}", line_a=i, line_b=None) for i in (1, 2)]
    f = R._source_finding("statement", two, "p", "q", va, vb)
    assert f.title == "Source: s1 (and 1 more) (line 1 of `p`, line — of `q`)"
    for n, tail in ((8, "s8."), (9, "s8. … and 1 more.")):
        many = [SourceChange("statement", True, f"s{i}", line_a=i, line_b=i) for i in range(1, n + 1)]
        assert R._source_finding("statement", many, "p", "q", va, vb).explanation.endswith(tail)
    nowhere = R._source_finding("statement", [SourceChange("statement", True, "s")], "p", "q", va, vb)
    assert nowhere.title == "Source: s"
    ann = [SourceChange("annotation", True, "", name="M", new="int")]
    assert R._source_finding("annotation", ann, "p", "q", va, vb).title == (
        "Source: 1 parameter annotation only in `q` (`M`: `int`): the JIT specializes it alike in both (same type, "
        "divisibility, constant)"
    )
    other_file = [SourceChange("op-changed", True, "u", function="helper", line_a=5, line_b=6, file_b="lib.py")]
    k = R._source_finding("op-changed", other_file, "p", "q", va, vb)
    assert [(e.variant, e.line) for e in k.evidence] == [("p", 5), ("q", None)]


def test_spec_words_of_a_parameter_one_side_lacks() -> None:
    from irdiff.bundle import ArgSpec, VariantResult

    a = VariantResult(name="a", kernel="k", directory="/nonexistent")
    a.specialization = [ArgSpec(name="n", index=0, type="i32", divisibility=16)]
    b = VariantResult(name="b", kernel="k", directory="/nonexistent")
    assert R._spec_words("n", "a", "b", a, b) is None and R._spec_words("n", "b", "a", b, a) is None


@pytest.mark.parametrize("order", ["hint in a", "hint in b"])
def test_hint_call_by_bare_name_in_a_later_change(order: str) -> None:
    """A root whose second source change is a bare ``multiple_of(start, 16)`` statement (imported by name, its result
    dropped: the call alone on its line) gets the AxisInfo sentence, in either variant order; an unrelated first
    change does not hide it (the changes' texts are read line by line, each line's call at a word boundary)."""
    other = SourceChange("statement", True, "", text_a="x = x + 0", text_b="x = x + 1")
    hint = SourceChange("statement", True, "", text_a="multiple_of(start, 16)", text_b="")
    if order == "hint in b":
        hint = SourceChange("statement", True, "", text_a="", text_b="multiple_of(start, 16)")
        other = SourceChange("statement", True, "", text_a="x = x + 1", text_b="x = x + 0")
    root = Finding("source.statement", "minor", "", "", [])
    assert R._mech_hints(R.RootContext("p", "q", root, [other, hint], [], [], {})) == HINT_SENTENCE
    assert R._mech_hints(R.RootContext("p", "q", root, [other], [], [], {})) is None


@pytest.mark.parametrize("order", [("p", "q"), ("q", "p")])
def test_reduction_axis_counts_a_one_sided_whole_kernel_delta(order: tuple[str, str]) -> None:
    """The whole-kernel PTX delta of an axis change is read even when only one variant has instructions the other
    lacks (its PTX a superset of the other's: 12 more warp shuffles on one side, none on the other); the line trace
    is read only when that delta is empty on both sides."""
    axis = SourceChange("kwarg-changed", True, "", name="axis", old="0", new="1")
    root = Finding("source.kwarg-changed", "minor", "", "", [])
    more = {"shfl.sync.bfly.b32": 12}  # `p` has them, whichever side it is on
    whole = {"ptx": (more, {}) if order[0] == "p" else ({}, more)}
    want = {"p": "`shfl.sync` 12 more in `p`, 0 more in `q`", "q": "`shfl.sync` 0 more in `q`, 12 more in `p`"}
    s = R._mech_reduce_axis(R.RootContext(*order, root, [axis], [], [], whole))
    assert s is not None and s.endswith(f" PTX: {want[order[0]]}.")


# --- direct unit tests on small hand-written inputs (no compile): the transposed-access root and its helpers ---


def _acc(kind: str, ptr_args: list[str], strides: list[int | None], shape: list[int] | None = None, name: str = ""):  # type: ignore[no-untyped-def]
    """A :class:`LoweredAccess` as ``extract_facts`` builds it from TTGIR: only kind, shape (elements), pointer
    parameters, name and element strides (elements per step along each dimension) matter to the transposed root."""
    from irdiff.diagnose.facts import LoweredAccess, Ref

    return LoweredAccess(
        kind=kind, shape=shape or [64, 64], elem="bf16", elem_bits=16, name=name, mask="", mask_refs=[],
        mask_args=[], ptr_args=ptr_args, per_thread=None, coalesce_bits=None, coalesce_index=None, llir_bits=None,
        llir_count=0, ptx_bits=None, ptx_count=0, ptx_key="", ref=Ref("ttgir", 1, "tt.load"), llir_ref=None,
        ptx_ref=None, strides=strides,
    )  # fmt: skip


ROW, COL = [None, 1], [1, None]  # element strides: `src + r[:, None] * ld + c[None, :]` and its transpose


def _pairs(la, lb):  # type: ignore[no-untyped-def]
    return [(x.ptr_args, y.ptr_args, da, db) for x, y, da, db in R.transposed_accesses(la, lb)]


def test_transposed_accesses_pairing_rules() -> None:
    """Accesses pair by their first pointer parameter, each access of ``b`` at most once; without a pointer match,
    the n-th with the n-th when both variants have as many; an unpaired access does not stop the search."""
    # by pointer, not by position: p flips nowhere, q flips (dimension 1 in a, 0 in b)
    la = [_acc("load", ["p"], ROW), _acc("load", ["q", "ld"], ROW)]
    lb = [_acc("load", ["q", "ld"], COL), _acc("load", ["p"], ROW)]
    assert _pairs(la, lb) == [(["q", "ld"], ["q", "ld"], 1, 0)]
    assert _pairs(lb, la) == [(["q", "ld"], ["q", "ld"], 0, 1)]
    # no pointer in common, as many accesses: the n-th with the n-th
    assert _pairs([_acc("load", ["a"], ROW)], [_acc("load", ["b"], COL)]) == [(["a"], ["b"], 1, 0)]
    assert _pairs([_acc("store", ["b"], COL)], [_acc("store", ["a"], ROW)]) == [(["b"], ["a"], 0, 1)]
    # an access of a with no partner (counts differ) is skipped, the next one still pairs
    la = [_acc("load", ["z"], ROW), _acc("load", ["q"], ROW)]
    assert _pairs(la, [_acc("load", ["q"], COL)]) == [(["q"], ["q"], 1, 0)]
    # one b access per a access: the second load of p pairs with the second of p
    la = [_acc("load", ["p"], ROW), _acc("load", ["p"], ROW)]
    lb = [_acc("load", ["p"], ROW), _acc("load", ["p"], COL)]
    assert _pairs(la, lb) == [(["p"], ["p"], 1, 0)]
    assert _pairs(lb, la) == [(["p"], ["p"], 0, 1)]


def _tr(la, lb, cs, findings, title="Source: `r[:, None]` becomes `r[:, None] * ld`", **kw):  # type: ignore[no-untyped-def]
    g = Finding(id="source.index", severity="major", title=title, explanation="The index changes.")
    R._name_transposed(g, cs, "a", "b", (la, lb), findings, **kw)
    return g.title, g.explanation


def _chg(text_a: str, text_b: str = "") -> SourceChange:
    return SourceChange(kind="expression", semantic=True, summary="index", text_a=text_a, text_b=text_b)


def test_name_transposed_titles_and_explanation_exactly() -> None:
    """The transposed side, both majors, the pointer, the shared-memory conversion only when it follows from the root
    and shows evidence in the transposed variant, and the tile shape in the explanation; both orders."""
    conv = Finding(
        id="layout.convert-shared", severity="major", title="conv", explanation="", causes=["source.index"],
        evidence=[Evidence("b", "ttgir", 3, "ttg.local_alloc")],
    )  # fmt: skip
    la, lb = [_acc("load", ["src"], ROW)], [_acc("load", ["src"], COL)]
    title, expl = _tr(la, lb, [_chg("src")], [conv])
    assert title == (
        "Source: the load reads `src` transposed in `b` (column-major), row-major in `a`, so Triton converts the layout "
        "through shared memory (`r[:, None]` becomes `r[:, None] * ld`)"
    )
    assert expl == (
        "In `b` the load of `src` (64x64 bf16) steps one element in memory along dimension 0 of its tile, in `a` along "
        "dimension 1 (element strides [None, 1] in `a`, [1, None] in `b`, from the TTGIR address arithmetic): the "
        "access is transposed. The index changes."
    )
    # the other order: `a` is transposed; the conversion's evidence is in `b` only, so it is not said
    title, _ = _tr(lb, la, [_chg("", "src")], [conv])
    assert title == (
        "Source: the load reads `src` transposed in `a` (column-major), row-major in `b` (`r[:, None]` becomes "
        "`r[:, None] * ld`)"
    )
    # a conversion that does not follow from this root is not said; no conversion at all is fine
    free = Finding(id="layout.convert-shared", severity="major", title="c", explanation="", evidence=conv.evidence)
    for fs in ([free], []):
        assert _tr(la, lb, [_chg("src")], fs)[0] == (
            "Source: the load reads `src` transposed in `b` (column-major), row-major in `a` (`r[:, None]` becomes "
            "`r[:, None] * ld`)"
        )
        assert _tr(la, lb, [], fs, title="config.changed", config=True)[0] == (
            "config.changed: the load reads `src` transposed in `b` (column-major), row-major in `a`"
        )
    assert _tr(la, lb, [], [conv], title="config.changed", config=True)[0] == (
        "config.changed: the load reads `src` transposed in `b` (column-major), row-major in `a`, so Triton converts "
        "the layout through shared memory"
    )


def test_name_transposed_picks_the_changed_access_and_its_name() -> None:
    """Only an access whose pointer or value name is on a changed line (the first such pair); the pointer named is
    a's first pointer parameter, else b's, else a's value name, b's, or "its pointer"; rank 3 names both dimensions."""
    two_a = [_acc("load", ["p"], ROW), _acc("load", ["q"], ROW)]
    two_b = [_acc("load", ["p"], COL), _acc("load", ["q"], COL)]
    assert "`q` transposed" in _tr(two_a, two_b, [_chg("x = q")], [])[0]
    assert "`p` transposed" in _tr(two_a, two_b, [_chg("x = p + q")], [])[0]
    unchanged = "Source: `r[:, None]` becomes `r[:, None] * ld`"
    assert _tr(two_a, two_b, [_chg("x = w")], [])[0] == unchanged
    # a name at the end of one side's line and nothing else: the lines are joined by a space
    assert "`p` transposed" in _tr(two_a, two_b, [_chg("p")], [])[0]
    assert "`q` transposed" in _tr(two_a, two_b, [_chg("", "q")], [])[0]

    def ptr(xa, ya, xn="", yn=""):  # type: ignore[no-untyped-def]
        t = _tr([_acc("load", xa, ROW, name=xn)], [_acc("load", ya, COL, name=yn)], [], [])[0]
        return re.search(r"reads `([^`]*)`", t).group(1)  # type: ignore[union-attr]

    assert ptr(["p"], ["q"]) == "p" and ptr(["p"], []) == "p" and ptr([], ["q"], "u") == "q"
    assert ptr([], [], "u", "v") == "u" and ptr([], [], "u", "") == "u" and ptr([], [], "", "v") == "v"
    assert ptr([], []) == "its pointer"
    # rank 3, neither side along the last dimension: a is named first, with both dimensions
    a3 = [_acc("store", ["out"], [1, None, None], shape=[4, 8, 16])]
    b3 = [_acc("store", ["out"], [None, 1, None], shape=[4, 8, 16])]
    title, expl = _tr(a3, b3, [], [])
    assert title == (
        "Source: the store writes `out` transposed in `a` (adjacent along dimension 0), adjacent along dimension 1 "
        "in `b` (`r[:, None]` becomes `r[:, None] * ld`)"
    )
    assert expl.startswith("In `a` the store of `out` (4x8x16 bf16) steps one element in memory along dimension 0")
    assert _tr(b3, a3, [], [])[0].startswith(
        "Source: the store writes `out` transposed in `a` (adjacent along dimension 1), adjacent along dimension 0 in `b`"
    )


def test_follows_walks_every_cause_once() -> None:
    """``_follows``: any path of causes reaches the root; causes naming no finding are skipped, not followed; a cycle
    ends; no causes, no root."""
    import signal

    def f(i: str, *causes: str) -> Finding:
        return Finding(id=i, severity="minor", title=i, explanation="", causes=list(causes))

    x, y = f("x"), f("y", "root")
    fs = [x, y, f("root")]
    assert R._follows(f("t", "root", "x"), "root", fs)  # "x" is walked first, then "root"
    assert R._follows(f("t", "y", "gone"), "root", fs)  # "gone" is not a finding: skipped
    assert R._follows(f("t", "root", "gone"), "root", fs)
    assert not R._follows(f("t", "gone"), "root", fs)
    assert not R._follows(f("t"), "root", fs)
    assert x.causes == [] and y.causes == ["root"]  # the findings' causes are left as they were
    # a cycle without the root ends (SIGALRM turns an endless walk into a failure)
    old = signal.signal(signal.SIGALRM, lambda *_: (_ for _ in ()).throw(TimeoutError("cycle")))
    signal.setitimer(signal.ITIMER_REAL, 5)
    try:
        assert not R._follows(f("t", "c1"), "root", [f("c1", "c2"), f("c2", "c1")])
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _ttgir_variant(tmp: Path, name: str, text: str, options: dict | None = None):  # type: ignore[no-untyped-def]
    from irdiff.bundle import VariantResult

    d = tmp / name
    d.mkdir()
    (d / "ttgir.mlir").write_text(text)
    return VariantResult(
        name, kernel="k", directory=str(d), stages={"ttgir": "ttgir.mlir"}, options=dict(options or {})
    )


_REDUCE_3D = """  %r = "tt.reduce"(%p) <{axis = 1 : i32}> ({
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    tt.reduce.return %s : f32
  }) : (tensor<16x16x16xf32, #blocked>) -> tensor<16x16xf32, #ttg.slice<{dim = 1, parent = #blocked}>>
"""


def test_reduce_product_threads_from_module_then_options_then_four(tmp_path: Path) -> None:
    """16x16x16 products over ``ttg.num-warps`` × 32 threads: the module's warps win over the options', the
    options' over the default 4 (values per thread: 4096 / 256 = 16 at 8 warps, 32 at 4, 64 at 2)."""
    mod = 'module attributes {"ttg.num-warps" = 8 : i32} {\n' + _REDUCE_3D + "}\n"
    bare = "module {\n" + _REDUCE_3D + "}\n"
    assert R._reduce_product(_ttgir_variant(tmp_path, "m", mod, {"num_warps": 2})) == ("16x16x16", 16, "fp32")
    assert R._reduce_product(_ttgir_variant(tmp_path, "o", bare, {"num_warps": 8})) == ("16x16x16", 16, "fp32")
    assert R._reduce_product(_ttgir_variant(tmp_path, "n", bare, {})) == ("16x16x16", 32, "fp32")
    assert R._reduce_product(_ttgir_variant(tmp_path, "x", "module {\n}\n", {})) is None


def test_dot_type_and_facts_ignore_the_location(tmp_path: Path) -> None:
    """The dot's result type is read before its ``loc(...)``: a location naming another tensor type changes nothing
    (64x64 fp32 on #mma over 4 warps: 4096 / 128 = 32 accumulators per thread)."""
    line = (
        "  %d = tt.dot %a, %b, %c : tensor<64x16xf16, #dot0> * tensor<16x64xf16, #dot1> -> tensor<64x64xf32, #mma> "
        'loc("tensor<8x8xf64, #blocked>")\n'
    )
    v = _ttgir_variant(tmp_path, "d", 'module attributes {"ttg.num-warps" = 4 : i32} {\n' + line + "}\n")
    assert R._dot_type(v) == "fp32" and R._dot_facts(v) == (32, "mma")
