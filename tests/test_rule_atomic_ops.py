"""``atomic.ops`` and the ptxas side of ``atomic.cas-loop`` (``irdiff/diagnose/rules/atomics.py``) on the facts of
real sm80 compiles of ``tests/suites/rule_atomic_ops.py``, each rule called directly, in both orders of the variants;
plus ``ptx.memory-ops``' direction when stores become atomics. Counts are read from each variant's own PTX/SASS
text, never hard-coded."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rule_pairs import at_line, context, n_ptx, n_sass, one

from irdiff.bundle import Bundle
from irdiff.diagnose.counts import count_ops
from irdiff.diagnose.facts import Ref, _first_lines
from irdiff.diagnose.mechfacts import AtomicFact, MechFacts
from irdiff.diagnose.rules.atomics import _ops, rule_atomic_ops, rule_atomic_ordering, rule_cas_loop
from irdiff.diagnose.rules.ptx import rule_ptx_memory
from irdiff.diagnose.testing import make_context, make_facts

SUITE = str(Path(__file__).parent / "suites" / "rule_atomic_ops.py")
VARIANTS = [
    "scatter_add",
    "scatter_store",
    "splitk_add",
    "splitk_parts",
    "max_native",
    "max_cas",
    "f32_add",
    "f16_add",
    "bf16_add",
]
BOTH = pytest.mark.parametrize("swap", [False, True], ids=["as-named", "swapped"])
PAIRS = pytest.mark.parametrize(
    ("atom", "plain", "shape"), [("scatter_add", "scatter_store", "256"), ("splitk_add", "splitk_parts", "64x64")]
)


@pytest.fixture(scope="module")
def ops(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(SUITE, VARIANTS, "sm80")  # type: ignore[no-any-return]


@PAIRS
@BOTH
def test_atomic_against_plain_store_names_the_atomic_side(ops: Bundle, atom: str, plain: str, shape: str, swap: bool):
    """A scatter-add (and split-K partial sums added into C) written with ``tl.atomic_add`` against the same values
    written with ``tl.store``: the atomic side is named and predicted slower, with its op, shape and line, and the
    explanation says the results differ where addresses repeat (the store keeps the last write)."""
    f, a, b = one(rule_atomic_ops, ops, atom, plain, swap)
    assert (f.id, f.severity, f.stage, f.predicts) == ("atomic.ops", "major", "ttir", atom)
    assert f.title == (
        f"`{atom}` updates memory with `tl.atomic_add` (`fadd` on {shape}xf32) where `{plain}` has no atomic "
        "(1 plain `tl.store`)"
    )
    assert f.explanation == (
        f"`{atom}` writes through 1 atomic operation(s) in TTIR (`fadd` on {shape}xf32); `{plain}` has none and 1 "
        "`tt.store`. An atomic is a read-modify-write performed at the L2 (PTX `atom`/`red`, SASS `ATOMG`/`RED`): "
        "updates of one address from different threads or programs are serialized there, and an atomic that returns "
        "its old value (`ATOMG`, the default `sem='acq_rel'`) also waits for it; a plain store only writes, can be "
        "merged in the L2 and never waits. The results are the same only when every address is written once: where "
        "two programs write the same address (duplicate scatter indices, split-K partial sums into one C tile) "
        f"`{atom}` accumulates all updates and `{plain}` keeps whichever write lands last."
    )
    by = {(e.variant, e.stage): e for e in f.evidence}
    assert (
        "tt.atomic_rmw fadd" in by[(atom, "ttir")].text
        and by[(atom, "ttir")].text == at_line(ops, f, f.evidence.index(by[(atom, "ttir")]))[:220]
    )
    assert by[(atom, "python")].text.startswith("tl.atomic_add(")
    assert by[(plain, "ttir")].text.startswith("tt.store ")
    assert (plain, "python") not in by
    # the atomic's SASS: read from the variant's own text (RED for a relaxed add, ATOMG for acq_rel)
    sass = by[(atom, "sass")].text
    n = n_sass(ops, atom, r"\b(RED|ATOMG)\.")
    assert n > 0 and sass.startswith(f"{n}× ") and (plain, "sass") not in by
    # every SASS atomic kind of the variant with its count, comma-separated (RED and RED.ADD.F32, ...)
    parts = sass.split(", ")
    assert len(parts) > 1 and all(re.fullmatch(r"\d+× [A-Z0-9.]+", x) for x in parts), sass


@PAIRS
@BOTH
def test_memory_ops_count_atomics_as_global_memory_ops(ops: Bundle, atom: str, plain: str, shape: str, swap: bool):
    """``ptx.memory-ops`` once predicted the store side slower (its ``st.global`` were counted, the atomics not): the
    atomics count as global memory operations, so it predicts the atomic side or nothing, never the plain store."""
    a, b = (plain, atom) if swap else (atom, plain)
    (f,) = rule_ptx_memory(context(ops, a, b))
    assert n_ptx(ops, plain, r"\bst\.global") > 0 and n_ptx(ops, atom, r"\bst\.global") == 0
    assert n_ptx(ops, atom, r"\b(atom|red)\.global") > 0
    assert f.predicts in (atom, None)


@pytest.fixture(scope="module")
def gsum(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(SUITE, ["sum_tile", "sum_scalar"], "sm80")  # type: ignore[no-any-return]


@BOTH
def test_memory_ops_list_and_total_the_atomics(gsum: Bundle, swap: bool) -> None:
    """A global sum written as a tile of ``tl.atomic_add`` to one word against ``tl.sum`` then one atomic per
    program: both have ``fadd`` atomics (``atomic.ops`` says nothing), so ``ptx.memory-ops`` is where the 1024
    atomics per program against 1 show. It once listed only the shared-memory kinds and totalled the global
    instructions without the atomics ("2 in `sum_tile` vs 2 in `sum_scalar`"): the ``atom`` count of each side (read
    from its own PTX) is a row of the table and part of the global total, and the tile side is predicted slower."""
    a, b = ("sum_scalar", "sum_tile") if swap else ("sum_tile", "sum_scalar")
    (f,) = rule_ptx_memory(context(gsum, a, b))
    n = {v: n_ptx(gsum, v, r"^\s*(@%p\d+\s+)?atom\.global") for v in (a, b)}
    assert n["sum_tile"] > n["sum_scalar"] >= 1
    g = {v: n[v] + n_ptx(gsum, v, r"^\s*(@%p\d+\s+)?(ld|st)\.global") for v in (a, b)}
    assert f"`atom` {n[a]} vs {n[b]}" in f.explanation
    assert f.title.split(": ", 1)[1].startswith(f"atom {n[a]}/{n[b]}, ")
    assert f"Global memory instructions in total: {g[a]} in `{a}` vs {g[b]} in `{b}`" in f.explanation
    assert f.predicts == "sum_tile"
    assert rule_atomic_ops(context(gsum, a, b)) == []


@BOTH
def test_atomic_max_against_a_user_cas_loop(ops: Bundle, swap: bool) -> None:
    """``tl.atomic_max`` against the user's own ``tl.atomic_cas`` retry loop: the ops of both sides in words, the CAS
    side predicted slower; not an emulation (``atomic.cas-loop`` says nothing) and not an ordering change."""
    f, a, b = one(rule_atomic_ops, ops, "max_native", "max_cas", swap)
    ops_ = {"max_native": "`max` on i32", "max_cas": "`cas` on i32"}
    assert (f.id, f.predicts) == ("atomic.ops", "max_cas")
    assert f.title == f"Atomic operations differ: {ops_[a]} in `{a}` vs {ops_[b]} in `{b}`"
    n = n_sass(ops, "max_cas", r"\bATOMG\.[\w.]*CAS")
    assert n > 0 and f"`max_cas` {n}× `ATOMG`" in f.explanation
    # the SASS atomic kinds of each side, read from its own counts
    ctx = context(ops, a, b)
    sass = {
        v: ", ".join(
            f"{k}× `{key}`"
            for key, k in sorted(c.counts["sass"].items())
            if key.split(".")[0] in ("ATOMG", "ATOM", "ATOMS", "RED") and k
        )
        for v, c in ((a, ctx.fa), (b, ctx.fb))
    }
    assert f.explanation == (
        f"The TTIR atomics are {ops_[a]} in `{a}` and {ops_[b]} in `{b}` (`tt.atomic_rmw` op, or `tt.atomic_cas`). "
        "Each is one read-modify-write at the L2 per element; a `tl.atomic_cas` written by the user (`max_cas`) swaps "
        "only when the word still holds the expected value, so a loop around it retries under contention where a "
        f"single `atomic_max`/`atomic_add` always succeeds in one operation. Per thread, SASS has `{a}` {sass[a]}; "
        f"`{b}` {sass[b]}."
    )
    py = [e for e in f.evidence if e.stage == "python"]
    assert {(e.variant, e.text.split("(")[0]) for e in py} == {
        ("max_native", "tl.atomic_max"),
        ("max_cas", "seen = tl.atomic_cas"),
    }
    assert rule_cas_loop(context(ops, a, b)) == [] and rule_atomic_ordering(context(ops, a, b)) == []


def test_same_atomic_ops_are_no_finding(ops: Bundle) -> None:
    """The same ``fadd`` into another element type, and a pair without atomics, say nothing."""
    for x, y in (("f16_add", "f32_add"), ("bf16_add", "f16_add"), ("splitk_parts", "scatter_store")):
        assert rule_atomic_ops(context(ops, x, y)) == [] and rule_atomic_ops(context(ops, y, x)) == []


@BOTH
def test_ptxas_emulated_f16_add_is_a_cas_loop(ops: Bundle, swap: bool) -> None:
    """A scalar fp16 ``atomic_add`` (default ``acq_rel``) on sm80: the PTX has the native ``atom.add.noftz.f16``, but
    the SASS is an ``ATOMG.CAS`` loop ptxas wrote; fp32 is a native ``ATOMG.ADD``. Named as ptxas's, at the SASS."""
    f, a, b = one(rule_cas_loop, ops, "f16_add", "f32_add", swap)
    assert n_ptx(ops, "f16_add", r"\bcas\b") == 0 and n_ptx(ops, "f16_add", r"atom\.[\w.]*add\.noftz\.f16") > 0
    n = n_sass(ops, "f16_add", r"\bATOMG\.[\w.]*CAS")
    assert n > 0 and n_sass(ops, "f32_add", r"CAS") == 0
    assert (f.id, f.severity, f.stage, f.predicts) == ("atomic.cas-loop", "major", "sass", "f16_add")
    assert f.title == "`f16_add` emulates `fadd` on `f16` with a compare-and-swap loop (by ptxas, in SASS)"
    assert f.explanation.startswith(
        "In `f16_add` the PTX has a native atomic for `fadd` on `f16` (`atom.add.f16`), but ptxas has no SASS atomic "
        f"for it on sm80 and emulates it with a compare-and-swap loop ({n}× `ATOMG.CAS` per thread in SASS"
    )
    assert "`f32_add` uses a native atomic/reduction." in f.explanation
    stages = [(e.variant, e.stage) for e in f.evidence]
    assert stages == [("f16_add", "ttir"), ("f16_add", "ptx"), ("f16_add", "sass"), ("f32_add", "ptx")]
    # each quote is its own line of the variant's text (after a predicate such as ``@%p2``), with its count
    assert "noftz.f16" in f.evidence[1].text and f.evidence[1].text.split("   (")[0] in at_line(ops, f, 1)
    k = n_ptx(ops, "f16_add", r"atom[.\w]*add\.noftz\.f16")
    assert f.evidence[1].text.endswith(f"({k}× atom.add.f16)")
    assert "CAS" in f.evidence[2].text and f.evidence[2].text.split("   (")[0] in at_line(ops, f, 2)
    assert f.evidence[2].text.endswith(f"({n}× ATOMG.CAS)")


@BOTH
def test_two_cas_loops_are_no_difference(ops: Bundle, swap: bool) -> None:
    """bf16 (Triton's ``atom.cas`` loop in PTX) against fp16 (ptxas's ``ATOMG.CAS`` loop): both emulate, so neither
    is named as the one with a loop; bf16 against fp32 is Triton's loop, at the PTX."""
    a, b = ("f16_add", "bf16_add") if swap else ("bf16_add", "f16_add")
    assert n_ptx(ops, "bf16_add", r"\bcas\.b32") > 0
    assert rule_cas_loop(context(ops, a, b)) == []
    f, _, _ = one(rule_cas_loop, ops, "bf16_add", "f32_add", swap)
    assert (f.stage, f.predicts) == ("ptx", "bf16_add")
    assert f.title == "`bf16_add` emulates `fadd` on `bf16` with a compare-and-swap loop"


@BOTH
def test_atomic_ops_is_the_root_of_a_store_turned_atomic(ops: Bundle, swap: bool) -> None:
    """The whole diagnosis of the scatter-add against the scatter-store: ``atomic.ops`` is the first finding and the
    root (it claims the source change on the atomic's line), the PTX memory-op difference is its effect, nothing is
    left unexplained, and no finding predicts the plain-store variant slower."""
    from irdiff.diagnose import diagnose

    a, b = ("scatter_store", "scatter_add") if swap else ("scatter_add", "scatter_store")
    d = diagnose(ops, a, b)
    first = d.findings[0]
    assert first.id == "atomic.ops" and not first.causes and first.predicts == "scatter_add"
    assert any(e.stage == "python" and e.variant == "scatter_store" for e in first.evidence)  # the changed line
    mem = next(f for f in d.findings if f.id == "ptx.memory-ops")
    assert mem.causes == ["atomic.ops"] and mem.predicts != "scatter_store"
    assert d.unexplained == []
    assert all(f.predicts != "scatter_store" for f in d.findings)


# ------------------------------------------------- the same rules on facts of TTIR/SASS/PTX lines written out here

R = Ref("ttir", 1, "%0 = tt.atomic_rmw fadd, acq_rel, gpu, %ptr, %val, %mask")
# a TTIR line longer than the 220 characters the evidence quotes
LONG = Ref(
    "ttir", 3, "%5 = tt.atomic_rmw fadd, acq_rel, gpu, %ptrs, %vals, %mask : (tensor<64x!tt.ptr<f32>, " + "y" * 260
)
# SASS of two fp32 atomic adds and an i32 atomic max (the default acq_rel returns the old value: ATOMG)
SASS_ADD_MAX = (
    "\tATOMG.E.ADD.F32.FTZ.RN.STRONG.GPU PT, R5, [R2.64], R7 ;\n\tATOMG.E.ADD.F32.FTZ.RN.STRONG.GPU PT, R9, [R2.64+0x4], R8 ;\n"
    "\tATOMG.E.MAX.S32.STRONG.GPU PT, R3, [R4.64], R6 ;\n"
)
# SASS of a CAS loop through a generic address (ATOM, not ATOMG): what ptxas emits when the pointer is not known global
SASS_GENERIC_CAS = (
    "\tATOM.E.CAS.STRONG.GPU PT, R1, [R2], R4, R5 ;\n\tBRA 0x70 ;\n\tATOM.E.CAS.STRONG.GPU PT, R1, [R2], R4, R5 ;\n"
)


def _fadd(ref: Ref = R) -> AtomicFact:
    return AtomicFact("fadd", "acq_rel", "gpu", "f32", [64], False, ref, None)


def _max() -> AtomicFact:
    return AtomicFact("max", "acq_rel", "gpu", "i32", [], False, R, None)


def test_ops_counts_repeated_atomics_in_program_order() -> None:
    """``_ops``: each op and shape once, in program order, with ``×n`` when it repeats."""
    assert _ops([_fadd(), _max(), _fadd()]) == "`fadd` on 64xf32 ×2, `max` on i32"
    assert _ops([_max()]) == "`max` on i32"


def test_other_atomic_ops_without_a_user_cas() -> None:
    """Two fp32 adds and a max against one add: the ops of both sides (a repeat counted), no CAS sentence, no
    prediction; a side without SASS atomics says "none"; only the first two atomics of a side are quoted, each TTIR
    line cut at 220 characters."""
    many = make_facts(
        "many", counts={"sass": count_ops("sass", SASS_ADD_MAX)}, mech=MechFacts(atomics=[_fadd(LONG), _fadd(), _max()])
    )
    single = make_facts("single", mech=MechFacts(atomics=[_fadd()]))
    d = {"many": "`fadd` on 64xf32 ×2, `max` on i32", "single": "`fadd` on 64xf32"}
    sass = {"many": "3× `ATOMG`, 2× `ATOMG.ADD.F32`, 1× `ATOMG.MAX.S32`", "single": "none"}
    for x, y in ((many, single), (single, many)):
        a, b = x.name, y.name
        (f,) = rule_atomic_ops(make_context(x, y))
        assert (f.id, f.severity, f.predicts) == ("atomic.ops", "major", None)
        assert f.title == f"Atomic operations differ: {d[a]} in `{a}` vs {d[b]} in `{b}`"
        assert f.explanation == (
            f"The TTIR atomics are {d[a]} in `{a}` and {d[b]} in `{b}` (`tt.atomic_rmw` op, or `tt.atomic_cas`). Each "
            f"is one read-modify-write at the L2 per element. Per thread, SASS has `{a}` {sass[a]}; `{b}` {sass[b]}."
        )
        quoted = [(e.line, e.text) for e in f.evidence if e.variant == "many" and e.stage == "ttir"]
        assert quoted == [(3, LONG.text[:220]), (1, R.text)] and len(LONG.text) > 221
        assert [e.text for e in f.evidence if e.stage == "sass"] == ["3× ATOMG, 2× ATOMG.ADD.F32, 1× ATOMG.MAX.S32"]


def test_atomics_of_two_ops_against_no_write() -> None:
    """An add and a max against a variant with neither atomics nor stores (nor any listed line): both
    ``tl.atomic_*`` are named, and no plain store is counted; against two stores, the first store's TTIR line is
    quoted, cut at 220 characters."""
    both = make_facts(
        "both", counts={"sass": count_ops("sass", SASS_ADD_MAX)}, mech=MechFacts(atomics=[_fadd(), _max()])
    )
    bare = make_facts("bare")
    st = Ref("ttir", 4, "tt.store %ptrs, %vals, %mask : tensor<64x!tt.ptr<f32>, #blocked" + " " * 10 + "z" * 200)
    stores = make_facts("stores", counts={"ttir": {"tt.store": 2}}, first_lines={"ttir": {"tt.store": st}})
    for swap in (False, True):
        (f,) = rule_atomic_ops(make_context(bare, both) if swap else make_context(both, bare))
        assert f.predicts == "both"
        assert f.title == (
            "`both` updates memory with `tl.atomic_add` and `tl.atomic_max` (`fadd` on 64xf32, `max` on i32) where "
            "`bare` has no atomic"
        )
        assert f.explanation.startswith(
            "`both` writes through 2 atomic operation(s) in TTIR (`fadd` on 64xf32, `max` on i32); `bare` has none. "
            "An atomic is a read-modify-write"
        )
        assert [e.variant for e in f.evidence] == ["both", "both", "both"]
        (g,) = rule_atomic_ops(make_context(stores, both) if swap else make_context(both, stores))
        assert g.title.endswith("where `stores` has no atomic (2 plain `tl.store`)")
        assert "; `stores` has none and 2 `tt.store`. An atomic" in g.explanation
        assert [(e.line, e.text) for e in g.evidence if e.variant == "stores"] == [(4, st.text[:220])]
        assert len(st.text) > 221


def test_ptxas_cas_loop_through_a_generic_address() -> None:
    """SASS whose CAS loop uses the generic ``ATOM.CAS`` (no ``ATOMG``): still ptxas's emulation, counted and quoted
    from that line. Without a PTX ``atom``/``red`` line the explanation names no PTX instruction; facts with counts
    but no listed lines quote none and still name the PTX atomic."""
    f16 = AtomicFact("fadd", "acq_rel", "gpu", "f16", [], False, R, None)
    lines = make_facts(
        "generic",
        counts={"sass": count_ops("sass", SASS_GENERIC_CAS)},
        first_lines={"sass": _first_lines("sass", SASS_GENERIC_CAS)},
        mech=MechFacts(atomics=[f16]),
    )
    counted = make_facts(
        "generic",
        counts={"sass": count_ops("sass", SASS_GENERIC_CAS), "ptx": {"atom": 1, "atom.add.f16": 1}},
        mech=MechFacts(atomics=[f16]),
    )
    native = make_facts("native", counts={"ptx": {"red": 1, "red.add.f32": 1}})
    tail = (
        ", but ptxas has no SASS atomic for it on sm90 and emulates it with a compare-and-swap loop (2× `ATOMG.CAS` "
        "per thread in SASS: read the word, compute the new value, swap it in, retry when another thread changed it). "
        "Under contention (split-K, histograms) each retry is another round trip to L2. `native` uses a native "
        "atomic/reduction. Results are the same up to the (unordered) summation order."
    )
    for x, y in ((lines, native), (native, lines)):
        (f,) = rule_cas_loop(make_context(x, y))
        assert (f.stage, f.predicts) == ("sass", "generic")
        assert f.title == "`generic` emulates `fadd` on `f16` with a compare-and-swap loop (by ptxas, in SASS)"
        assert f.explanation == "In `generic` the PTX has a native atomic for `fadd` on `f16`" + tail
        assert [(e.variant, e.stage, e.line, e.text) for e in f.evidence] == [
            ("generic", "ttir", 1, R.text),
            ("generic", "sass", 1, "ATOM.E.CAS.STRONG.GPU PT, R1, [R2], R4, R5 ;   (2× ATOMG.CAS)"),
            ("native", "ptx", None, "1× red, 1× red.add.f32"),
        ]
    for x, y in ((counted, native), (native, counted)):
        (f,) = rule_cas_loop(make_context(x, y))
        assert f.explanation == "In `generic` the PTX has a native atomic for `fadd` on `f16` (`atom.add.f16`)" + tail
        assert [(e.variant, e.stage) for e in f.evidence] == [("generic", "ttir"), ("native", "ptx")]
