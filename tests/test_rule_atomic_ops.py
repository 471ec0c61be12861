"""``atomic.ops`` and the ptxas side of ``atomic.cas-loop`` (``irdiff/diagnose/rules/atomics.py``) on the facts of
real sm80 compiles of ``tests/suites/rule_atomic_ops.py``, each rule called directly, in both orders of the variants;
plus ``ptx.memory-ops``' direction when stores become atomics. Counts are read from each variant's own PTX/SASS
text, never hard-coded."""

from __future__ import annotations

from pathlib import Path

import pytest
from rule_pairs import at_line, context, n_ptx, n_sass, one

from irdiff.bundle import Bundle
from irdiff.diagnose.rules.atomics import rule_atomic_ops, rule_atomic_ordering, rule_cas_loop
from irdiff.diagnose.rules.ptx import rule_ptx_memory

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
    assert f.explanation.startswith(
        f"`{atom}` writes through 1 atomic operation(s) in TTIR (`fadd` on {shape}xf32); `{plain}` has none and 1 "
        "`tt.store`. An atomic is a read-modify-write performed at the L2"
    )
    assert f.explanation.endswith(f"`{atom}` accumulates all updates and `{plain}` keeps whichever write lands last.")
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


@BOTH
def test_atomic_max_against_a_user_cas_loop(ops: Bundle, swap: bool) -> None:
    """``tl.atomic_max`` against the user's own ``tl.atomic_cas`` retry loop: the ops of both sides in words, the CAS
    side predicted slower; not an emulation (``atomic.cas-loop`` says nothing) and not an ordering change."""
    f, a, b = one(rule_atomic_ops, ops, "max_native", "max_cas", swap)
    ops_ = {"max_native": "`max` on i32", "max_cas": "`cas` on i32"}
    assert (f.id, f.predicts) == ("atomic.ops", "max_cas")
    assert f.title == f"Atomic operations differ: {ops_[a]} in `{a}` vs {ops_[b]} in `{b}`"
    assert "a `tl.atomic_cas` written by the user (`max_cas`) swaps only when the word still holds" in f.explanation
    n = n_sass(ops, "max_cas", r"\bATOMG\.[\w.]*CAS")
    assert n > 0 and f"`max_cas` {n}× `ATOMG`" in f.explanation
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
