"""``atomic.result-used`` (``irdiff/diagnose/rules/atomics.py``) on the facts of real sm80 and sm90 compiles of
``tests/suites/rule_atomic_return.py``, the rule called directly in both orders of the variants; the facts it reads
(:attr:`~irdiff.diagnose.mechfacts.AtomicFact.users`); and the whole diagnosis of the histogram pair (the finding is
the root, the layout conversion of the returned values its effect).

Counts are read from each variant's own PTX/SASS text, never hard-coded. Under Triton 3.9 the difference shows in
PTX (``atom`` vs ``red``); under Triton 3.6 the PTX has ``atom`` in both and ptxas makes an unused one ``RED``: each
test reads which from the compiled ``noret`` variant.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from diag_helpers import diagnose, get, ids
from rule_pairs import at_line, context, ev, n_ptx, n_sass, one

from irdiff.bundle import Bundle
from irdiff.diagnose.facts import Ref
from irdiff.diagnose.mechfacts import AtomicFact, MechFacts
from irdiff.diagnose.rules.atomics import (
    _may_reduce,
    _returning,
    rule_atomic_ops,
    rule_atomic_ordering,
    rule_atomic_result,
)
from irdiff.diagnose.testing import make_context, make_facts

SUITE = str(Path(__file__).parent / "suites" / "rule_atomic_return.py")
VARIANTS = [
    "hist_ret",
    "hist_noret",
    "hist_arith",
    "acq_ret",
    "acq_noret",
    "max_ret",
    "max_noret",
    "xchg_ret",
    "xchg_noret",
    "fadd_ret",
    "fadd_noret",
    "tile_ret",
    "tile_noret",
]
# the kernels of the tests below the first ones (a second bundle: one bundle's folder is named after its variants)
MORE = [
    "hist_ret",
    "hist_noret",
    "max_ret",
    "xchg_noret",
    "acq_noret",
    "cas_ret",
    "cas_noret",
    "multi_ret",
    "multi_noret",
    "inline_ret",
    "generic_ret",
    "asm_ret",
    "asm_noret",
]
BOTH = pytest.mark.parametrize("swap", [False, True], ids=["as-named", "swapped"])
TARGETS = pytest.mark.parametrize("target", ["sm80", "sm90"])
# (uses the old value, ignores it, the atomic as the title names it, the Python call, the op reading the value and
# the statement it comes from)
PAIRS = pytest.mark.parametrize(
    ("ret", "noret", "what", "call", "user", "stmt"),
    [
        ("hist_ret", "hist_noret", "`add` on 256xi32", "tl.atomic_add", "tt.store", "tl.store(prev + offs, old, "),
        ("hist_arith", "hist_noret", "`add` on 256xi32", "tl.atomic_add", "arith.addi", "old + 1"),
        ("max_ret", "max_noret", "`max` on 256xi32", "tl.atomic_max", "tt.store", "tl.store(prev + offs, old, "),
        ("fadd_ret", "fadd_noret", "`fadd` on 256xf32", "tl.atomic_add", "tt.store", "tl.store(out + offs, old)"),
        ("tile_ret", "tile_noret", "`fadd` on 32x64xf32", "tl.atomic_add", "tt.store", ", old)"),
    ],
    ids=["i32-add-masked", "i32-add-arith", "i32-max-masked", "f32-add-unmasked", "f32-add-2d-tile"],
)


def _bundle(compile_suite, target: str) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(SUITE, VARIANTS, target)  # type: ignore[no-any-return]


def _more(compile_suite, target: str) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(SUITE, MORE, target)  # type: ignore[no-any-return]


def _shown_in(b: Bundle, noret: str) -> str:
    """Where the lowering differs: ``ptx`` when Triton emitted ``red`` for the unused result, else ``sass``."""
    return "ptx" if n_ptx(b, noret, r"\bred\.") else "sass"


@TARGETS
@PAIRS
@BOTH
def test_used_old_value_is_named_with_its_lowering(
    compile_suite,  # type: ignore[no-untyped-def]
    target: str,
    ret: str,
    noret: str,
    what: str,
    call: str,
    user: str,
    stmt: str,
    swap: bool,
) -> None:
    """The variant that reads the atomic's old value is named (whichever variant is inspected), predicted slower,
    with what reads the value and its line, the instruction each variant's atomic becomes and each one's own count;
    the evidence is the two TTIR atomics, their calls, the reading op and its statement, and the first ``atom``/``red``
    (or ``ATOMG``/``RED``) line of each side."""
    b = _bundle(compile_suite, target)
    f, _, _ = one(rule_atomic_result, b, ret, noret, swap)
    assert (f.id, f.severity, f.stage, f.predicts) == ("atomic.result-used", "major", "ttir", ret)
    st = _shown_in(b, noret)
    # the user's reading op: its TTIR line is the third evidence item, its statement the fourth (a line of its own)
    assert ev(f)[:4] == [(ret, "ttir"), (ret, "python"), (ret, "ttir"), (ret, "python")]
    assert "tt.atomic_rmw" in f.evidence[0].text and f.evidence[0].text == at_line(b, f, 0)[:220]
    assert f"{call}(" in f.evidence[1].text and f.evidence[1].text.startswith("old = ")
    assert f.evidence[2].text.startswith(f"{user} ") or f" = {user} " in f.evidence[2].text
    assert f.evidence[2].text == at_line(b, f, 2)[:220]
    assert stmt in f.evidence[3].text and f.evidence[3].text == at_line(b, f, 3)
    line = f.evidence[3].line
    lowered = {"ptx": ("`atom` (SASS `ATOMG`)", "`red` (SASS `RED`)"), "sass": ("`ATOMG`", "`RED`")}[st]
    assert f.title == (
        f"`{ret}` uses the old value of `{call}` ({what}; read by `{user}` at line {line}): it lowers to "
        f"{lowered[0]} and waits for it; unused in `{noret}`, it lowers to {lowered[1]}"
    )
    # the unused side's atomic and call
    assert ev(f)[4:6] == [(noret, "ttir"), (noret, "python")]
    assert "tt.atomic_rmw" in f.evidence[4].text and not f.evidence[5].text.startswith("old = ")
    # each side's own count of value-returning atomics and reductions, per thread
    if st == "ptx":
        nu, no = n_ptx(b, ret, r"\batom\."), n_ptx(b, noret, r"\bred\.")
        assert n_ptx(b, ret, r"\bred\.") == 0 and n_ptx(b, noret, r"\batom\.") == 0
        keys = ("atom", "red")
    else:
        nu, no = n_sass(b, ret, r"\bATOMG\."), n_sass(b, noret, r"\bREDG?\.")
        assert n_sass(b, ret, r"\bREDG?\.") == 0 and n_sass(b, noret, r"\bATOMG\.") == 0
        assert n_ptx(b, ret, r"\batom\.") == n_ptx(b, noret, r"\batom\.") > 0  # Triton 3.6: `atom` either way
        keys = ("ATOMG", "RED")
    assert nu > 0 and no > 0
    assert (
        f"Per thread, {st.upper()} has {nu} value-returning atomic(s) and 0 reduction(s) in `{ret}`, 0 and {no} in "
        f"`{noret}`." in f.explanation
    )
    assert ev(f)[6:8] == [(ret, st), (noret, st)]
    for k, key, n in ((6, keys[0], nu), (7, keys[1], no)):
        txt = f.evidence[k].text.removesuffix(f"   ({n}× {key})")
        assert txt != f.evidence[k].text and at_line(b, f, k).endswith(txt)
    assert f.explanation.startswith(
        f"In `{ret}` the old value returned by {what} is read by `{user}` (line {line}: `{f.evidence[3].text}`); in "
        f"`{noret}` the same atomic's result has no use. Triton lowers a `tt.atomic_rmw` to a reduction"
    )
    assert f.explanation.endswith(
        f"The memory updates are the same; only `{ret}` reads the values the atomics replaced."
    )
    assert ("ptxas makes the difference" in f.explanation) == (st == "sass")
    assert "would keep `atom` even without the use" not in f.explanation


@TARGETS
def test_same_use_or_same_lowering_is_silent(compile_suite, target: str) -> None:  # type: ignore[no-untyped-def]
    """No finding, in either order, when both variants read the old value (stored as is vs ``old + 1``), when
    neither does, when the ops differ (``atomic.ops``' finding), and when the use differs but the lowering cannot:
    ``tl.atomic_xchg`` (no ``red.exch``) and the default ``acq_rel`` add stay ``atom``/``ATOMG`` either way."""
    b = _bundle(compile_suite, target)
    for x, y in (
        ("hist_ret", "hist_arith"),
        ("hist_noret", "hist_noret"),
        ("hist_ret", "max_noret"),
        ("xchg_ret", "xchg_noret"),
        ("acq_ret", "acq_noret"),
    ):
        assert rule_atomic_result(context(b, x, y)) == [], (x, y)
        assert rule_atomic_result(context(b, y, x)) == [], (y, x)
    # the last two pairs are silent because the lowering is the same, not because the use was missed
    for used, unused in (("xchg_ret", "xchg_noret"), ("acq_ret", "acq_noret")):
        fu, fo = context(b, used, unused).fa.mech, context(b, used, unused).fb.mech
        assert fu is not None and fo is not None
        assert fu.atomics[0].users == ["tt.store"] and fo.atomics[0].users == []
        assert n_ptx(b, unused, r"\bred\.") == 0 and n_sass(b, unused, r"\bREDG?\.") == 0
        assert n_ptx(b, used, r"\batom\.") == n_ptx(b, unused, r"\batom\.") > 0
    # an op change is atomic.ops' finding
    assert [g.id for g in rule_atomic_ops(context(b, "hist_ret", "max_noret"))] == ["atomic.ops"]


@pytest.mark.parametrize("target", ["sm80"])
@BOTH
def test_sem_and_use_both_differ(compile_suite, target: str, swap: bool) -> None:  # type: ignore[no-untyped-def]
    """``acq_rel`` with the old value stored against ``relaxed`` with it unused: ``atomic.ordering`` names the sems
    and this finding the use, and says that the used side's ``sem`` alone would keep ``atom`` too."""
    b = _bundle(compile_suite, target)
    f, _, _ = one(rule_atomic_result, b, "acq_ret", "hist_noret", swap)
    assert f.predicts == "acq_ret" and f.title.startswith("`acq_ret` uses the old value of `tl.atomic_add`")
    assert f.explanation.endswith(
        "`acq_ret`'s `sem=acq_rel` would keep `atom` even without the use (`atomic.ordering` names the sems): both "
        "differences lead to it."
    )
    g, _, _ = one(rule_atomic_ordering, b, "acq_ret", "hist_noret", swap)
    assert g.predicts == "acq_ret"


@TARGETS
def test_users_of_the_returned_value(compile_suite, target: str) -> None:  # type: ignore[no-untyped-def]
    """:attr:`AtomicFact.users` from TTIR: the op that reads the result (the store, or the ``arith.addi`` of
    ``old + 1``), its TTIR line and statement; nothing for an unused result."""
    b = _bundle(compile_suite, target)
    c = context(b, "hist_arith", "hist_noret")
    assert c.fa.mech is not None and c.fb.mech is not None
    (x,), (y,) = c.fa.mech.atomics, c.fb.mech.atomics
    assert isinstance(x, AtomicFact) and (x.op, x.sem, x.users) == ("add", "relaxed", ["arith.addi"])
    assert x.user is not None and "arith.addi" in x.user.text and x.ref.text.split(" = ")[0] in x.user.text
    assert x.user_python is not None and "old + 1" in x.user_python.text
    assert (y.users, y.user, y.user_python) == ([], None, None)
    (z,) = context(b, "tile_ret", "tile_noret").fa.mech.atomics  # type: ignore[union-attr]
    assert z.shape == [32, 64] and z.users == ["tt.store"]


@TARGETS
@PAIRS
def test_whole_diagnosis_roots_at_the_used_value(  # type: ignore[no-untyped-def]
    compile_suite, target: str, ret: str, noret: str, what: str, call: str, user: str, stmt: str
) -> None:
    """Each pair diagnosed in both orders (checked mirrored by ``diag_helpers.diagnose``): the first finding is this
    one, naming the variant that reads the value; a conversion of the returned values through shared memory, where
    there is one, is its effect (the histograms' 256xi32 result, not the pointer conversion both variants make
    before the atomic), never a root beside it."""
    b = _bundle(compile_suite, target)
    for x, y in ((ret, noret), (noret, ret)):
        d = diagnose(b, x, y)
        top = d.findings[0]
        assert (top.id, top.predicts, top.causes) == ("atomic.result-used", ret, [])
        assert f"`{ret}` uses the old value of `{call}` ({what}; " in top.title
        if "layout.convert-shared" in ids(d):
            conv = get(d, "layout.convert-shared")
            assert conv.causes == ["atomic.result-used"] and conv.predicts == ret
            # the returned values, or what the kernel computed from them (`old + 1`)
            src = "tt.atomic_rmw" if user == "tt.store" else user
            assert f"produced by `{src}`" in conv.explanation
            moved = (
                f" In `{ret}` the returned values are also moved to another layout through shared memory before their "
                "use (`layout.convert-shared`). The memory updates are the same"
            )
            assert (moved in top.explanation) == (src == "tt.atomic_rmw")
        if ret.startswith("hist"):
            assert "256xi32 from blocked to blocked" in get(d, "layout.convert-shared").title


@TARGETS
def test_whole_diagnosis_without_a_lowering_difference(compile_suite, target: str) -> None:  # type: ignore[no-untyped-def]
    """``tl.atomic_xchg`` and the ``acq_rel`` add return their value either way: no ``atomic.result-used`` (the
    conversion of the stored result is what differs); ``acq_rel`` used against ``relaxed`` unused: both
    ``atomic.ordering`` and ``atomic.result-used`` are roots."""
    b = _bundle(compile_suite, target)
    for x, y in (("xchg_ret", "xchg_noret"), ("acq_ret", "acq_noret")):
        assert "atomic.result-used" not in ids(diagnose(b, x, y))
    d = diagnose(b, "acq_ret", "hist_noret")
    for fid in ("atomic.ordering", "atomic.result-used"):
        assert get(d, fid).causes == [] and get(d, fid).predicts == "acq_ret"


# ------------------------------------------------------------------------- the same rule on facts written out here


def _atom(users: list[str], line: int | None = 12, sem: str = "relaxed", op: str = "add") -> AtomicFact:
    user = Ref("ttir", 20, "tt.store %p, %old") if users else None
    py = Ref("python", line, "tl.store(p, old)") if users and line else None
    return AtomicFact(
        op, sem, "gpu", "i32", [128], False, Ref("ttir", 19, "%old = tt.atomic_rmw"), None, users, user, py
    )


def _facts(name: str, atoms: list[AtomicFact], ptx: dict[str, int], sass: dict[str, int]):  # type: ignore[no-untyped-def]
    return make_facts(name, counts={"ptx": ptx, "sass": sass}, mech=MechFacts(atomics=atoms))


def test_written_out_facts() -> None:
    """PTX ``atom`` in both and ``ATOMG`` vs ``RED`` in SASS (ptxas's choice): the SASS counts are quoted; an atomic
    whose reader has no source line is named by its op; atomics used in one variant and others in the other, a
    lowering that does not differ, a different number of atomics or a different op: no finding."""
    ptx = {"atom": 4, "atom.add.u32": 4}
    u = _facts("u", [_atom(["tt.store"], line=None)], ptx, {"ATOMG": 4, "ATOMG.ADD": 4})
    o = _facts("o", [_atom([])], ptx, {"RED": 4, "RED.ADD": 4})
    for x, y in ((u, o), (o, u)):
        (f,) = rule_atomic_result(make_context(x, y))
        assert (f.predicts, f.stage) == ("u", "ttir")
        assert f.title == (
            "`u` uses the old value of `tl.atomic_add` (`add` on 128xi32; read by `tt.store`): it lowers to `ATOMG` and "
            "waits for it; unused in `o`, it lowers to `RED`"
        )
        assert "Per thread, SASS has 4 value-returning atomic(s) and 0 reduction(s) in `u`, 0 and 4 in `o`." in (
            f.explanation
        )
        assert (
            "ptxas makes the difference: the `atom` whose destination register is never read becomes `RED` in `o`"
            in (f.explanation)
        )
        assert [(e.variant, e.stage, e.line) for e in f.evidence] == [
            ("u", "ttir", 19),
            ("u", "ttir", 20),
            ("o", "ttir", 19),
            ("u", "sass", None),
            ("o", "sass", None),
        ]
    # the same SASS on both sides: nothing shows the use
    same = _facts("same", [_atom([])], ptx, {"ATOMG": 4})
    assert rule_atomic_result(make_context(u, same)) == [] == rule_atomic_result(make_context(same, u))
    # two atomics, the first read in one variant, the second in the other: no variant to name
    two_a = _facts("a", [_atom(["tt.store"]), _atom([])], {"atom": 2, "red": 2}, {})
    two_b = _facts("b", [_atom([]), _atom(["tt.store"])], {"atom": 2, "red": 2}, {})
    assert rule_atomic_result(make_context(two_a, two_b)) == [] == rule_atomic_result(make_context(two_b, two_a))
    # one atomic more, or another op: atomic.ops' finding
    more = _facts("more", [_atom([]), _atom([])], {"red": 8}, {"RED": 8})
    other_op = _facts("max", [_atom([], op="max")], {"red": 4}, {"RED": 4})
    for x in (more, other_op):
        assert rule_atomic_result(make_context(u, x)) == [] == rule_atomic_result(make_context(x, u))


# --------------------------------------------------- what the counts and the pairing read, on more compiled kernels

_CAS_PTX = r"\batom\.\S*\bcas\."  # `atom.global.gpu.relaxed.cas.b32`
_CAS_SASS = r"\bATOMG?\.\S*\bCAS\b"  # `ATOMG.E.CAS.STRONG.GPU`


@TARGETS
def test_returning_counts_each_compiled_variant(compile_suite, target: str) -> None:  # type: ignore[no-untyped-def]
    """``_returning`` per thread, read against each variant's own PTX/SASS text: a compare-and-swap (``atom.cas``,
    ``ATOMG.E.CAS``) is not counted as an atomic whose returned value the rule is about, an inline-PTX ``atom`` on a
    generic address (SASS ``ATOM``, not ``ATOMG``) is, and a ``RED``/``REDG`` is a reduction."""
    b = _more(compile_suite, target)
    seen = {}
    for v in ("cas_ret", "cas_noret", "generic_ret", "hist_noret", "multi_noret"):
        f = context(b, v, v).fa
        ptx = (n_ptx(b, v, r"\batom\.") - n_ptx(b, v, _CAS_PTX), n_ptx(b, v, r"\bred\."))
        sass = (
            n_sass(b, v, r"\bATOMG\.") + n_sass(b, v, r"\bATOM\.") - n_sass(b, v, _CAS_SASS),
            n_sass(b, v, r"\bREDG?\."),
        )
        assert _returning(f, "ptx") == ptx and _returning(f, "sass") == sass, v
        seen[v] = ptx, sass
    # what the kernels hold: one compare-and-swap per thread beside the histogram, a generic `ATOM` only
    assert n_ptx(b, "cas_ret", _CAS_PTX) == n_sass(b, "cas_ret", _CAS_SASS) == 1
    assert seen["cas_ret"][1][0] == seen["generic_ret"][1][0] == n_sass(b, "generic_ret", r"\bATOM\.") > 0
    assert n_sass(b, "generic_ret", r"\bATOMG\.") == 0
    assert seen["cas_noret"][1] == (0, n_sass(b, "cas_noret", r"\bREDG?\.")) and seen["cas_noret"][1][1] > 0


@TARGETS
def test_may_reduce_by_op_and_sem(compile_suite, target: str) -> None:  # type: ignore[no-untyped-def]
    """``_may_reduce`` on the compiled atomics: a relaxed add or max may become ``red``; a relaxed ``xchg`` (no
    ``red.exch``), a relaxed compare-and-swap (no ``red.cas``) and an ``acq_rel`` add may not — and the unused
    ``xchg``/``acq_rel``/``cas`` atomics indeed stay ``atom`` in the PTX."""
    b = _more(compile_suite, target)
    got = {}
    for v in ("hist_ret", "max_ret", "xchg_noret", "acq_noret", "cas_noret"):
        m = context(b, v, v).fa.mech
        assert m is not None
        a = m.atomics[0]
        got[v] = (a.op, a.sem, _may_reduce(a))
    assert got == {
        "hist_ret": ("add", "relaxed", True),
        "max_ret": ("max", "relaxed", True),
        "xchg_noret": ("exch", "relaxed", False),
        "acq_noret": ("add", "acq_rel", False),
        "cas_noret": ("cas", "relaxed", False),
    }
    assert n_ptx(b, "xchg_noret", r"\bred\.") == n_ptx(b, "acq_noret", r"\bred\.") == 0
    assert n_ptx(b, "cas_noret", _CAS_PTX) == 1


@TARGETS
@BOTH
def test_cas_beside_is_left_out(compile_suite, target: str, swap: bool) -> None:  # type: ignore[no-untyped-def]
    """A compare-and-swap whose result is unused in both variants, before the histogram: the pairing skips it (the
    add is the atomic named, its TTIR line the first evidence) and the per-thread counts leave its ``atom.cas`` out."""
    b = _more(compile_suite, target)
    f, _, _ = one(rule_atomic_result, b, "cas_ret", "cas_noret", swap)
    assert f.predicts == "cas_ret"
    assert f.title.startswith("`cas_ret` uses the old value of `tl.atomic_add` (`add` on 256xi32; read by `tt.store`")
    assert "tt.atomic_rmw add" in f.evidence[0].text and "cas" not in f.evidence[0].text
    st = _shown_in(b, "cas_noret")
    if st == "ptx":
        nu = n_ptx(b, "cas_ret", r"\batom\.") - n_ptx(b, "cas_ret", _CAS_PTX)
        no_atom = n_ptx(b, "cas_noret", r"\batom\.") - n_ptx(b, "cas_noret", _CAS_PTX)
        no = n_ptx(b, "cas_noret", r"\bred\.")
    else:
        nu = n_sass(b, "cas_ret", r"\bATOMG\.") - n_sass(b, "cas_ret", _CAS_SASS)
        no_atom = n_sass(b, "cas_noret", r"\bATOMG\.") - n_sass(b, "cas_noret", _CAS_SASS)
        no = n_sass(b, "cas_noret", r"\bREDG?\.")
    assert no_atom == 0 and nu > 0 and no > 0
    assert (
        f"Per thread, {st.upper()} has {nu} value-returning atomic(s) and 0 reduction(s) in `cas_ret`, 0 and {no} in "
        "`cas_noret`." in f.explanation
    )


@TARGETS
@BOTH
def test_xchg_beside_is_not_named(compile_suite, target: str, swap: bool) -> None:  # type: ignore[no-untyped-def]
    """An add, a max and an ``xchg``, their old values read in one variant and unused in the other: the add and
    the max become ``red``, the ``xchg`` stays ``atom`` either way, so the finding names the add and the max only,
    and does not blame the (relaxed) ``sem`` for an ``atom`` that ``xchg`` keeps."""
    b = _more(compile_suite, target)
    f, _, _ = one(rule_atomic_result, b, "multi_ret", "multi_noret", swap)
    st = _shown_in(b, "multi_noret")
    lowered = {"ptx": ("`atom` (SASS `ATOMG`)", "`red` (SASS `RED`)"), "sass": ("`ATOMG`", "`RED`")}[st]
    line = f.evidence[3].line
    assert "a + b + c" in f.evidence[3].text
    assert f.title == (
        "`multi_ret` uses the old value of `tl.atomic_add` and `tl.atomic_max` (`add` on 256xi32, `max` on 256xi32; "
        f"read by `arith.addi` at line {line}): it lowers to {lowered[0]} and waits for it; unused in `multi_noret`, "
        f"it lowers to {lowered[1]}"
    )
    assert "sem=" not in f.explanation and "would keep `atom`" not in f.explanation
    # the xchg is `atom` in both
    assert n_ptx(b, "multi_noret", r"\batom\.\S*\bexch\.") == n_ptx(b, "multi_ret", r"\batom\.\S*\bexch\.") > 0


@TARGETS
@BOTH
def test_reader_on_the_atomic_line(compile_suite, target: str, swap: bool) -> None:  # type: ignore[no-untyped-def]
    """``tl.store(prev + offs, tl.atomic_add(...), mask=ok)``: the store reads the old value on the atomic's own
    source line; that line is quoted once (the reader's TTIR line follows it directly), and named as the reader's."""
    b = _more(compile_suite, target)
    f, _, _ = one(rule_atomic_result, b, "inline_ret", "hist_noret", swap)
    assert f.predicts == "inline_ret"
    assert ev(f)[:4] == [
        ("inline_ret", "ttir"),
        ("inline_ret", "python"),
        ("inline_ret", "ttir"),
        ("hist_noret", "ttir"),
    ]
    stmt = f.evidence[1]
    assert stmt.text.startswith("tl.store(prev + offs, tl.atomic_add(")
    assert f"read by `tt.store` (line {stmt.line}: `{stmt.text}`); in `hist_noret`" in f.explanation


@TARGETS
@BOTH
def test_counts_of_the_stage_shown(compile_suite, target: str, swap: bool) -> None:  # type: ignore[no-untyped-def]
    """Beside the histogram, an inline-PTX ``atom.global`` whose result is unused in both variants: the PTX has it as
    ``atom`` and ptxas makes it ``RED``, so each variant's PTX and SASS counts differ; the stage that shows the use
    is chosen, and counted, from both variants' counts of that same stage."""
    b = _more(compile_suite, target)
    f, _, _ = one(rule_atomic_result, b, "asm_ret", "asm_noret", swap)
    st = _shown_in(b, "asm_noret")
    lowered = {"ptx": ("`atom` (SASS `ATOMG`)", "`red` (SASS `RED`)"), "sass": ("`ATOMG`", "`RED`")}[st]
    assert f.title.endswith(
        f"it lowers to {lowered[0]} and waits for it; unused in `asm_noret`, it lowers to {lowered[1]}"
    )
    ptx = {v: (n_ptx(b, v, r"\batom\."), n_ptx(b, v, r"\bred\.")) for v in ("asm_ret", "asm_noret")}
    sass = {v: (n_sass(b, v, r"\bATOMG\."), n_sass(b, v, r"\bREDG?\.")) for v in ("asm_ret", "asm_noret")}
    assert ptx["asm_ret"] != sass["asm_ret"] and ptx["asm_noret"] != sass["asm_noret"]  # the inline `atom` is `RED`
    (nu, ru), (no, ro) = ({"ptx": ptx, "sass": sass}[st][v] for v in ("asm_ret", "asm_noret"))
    assert nu > no and ru < ro
    assert (
        f"Per thread, {st.upper()} has {nu} value-returning atomic(s) and {ru} reduction(s) in `asm_ret`, {no} and "
        f"{ro} in `asm_noret`." in f.explanation
    )


# a TTIR line longer than the 220 characters evidence quotes of it
_LONG = "%old = tt.atomic_rmw add, relaxed, gpu, %ptrs, %ones, %mask : (" + ", ".join(["tensor<128x!tt.ptr<i32>>"] * 8)
_LONG_STORE = "tt.store %prev_ptrs, %old, %mask : " + " ".join(["tensor<128x!tt.ptr<i32>>"] * 10)


def _atom36(users: list[str], ref: str = _LONG) -> AtomicFact:
    user = Ref("ttir", 20, _LONG_STORE) if users else None
    py = Ref("python", 12, "tl.store(prev + offs, old, mask=ok)") if users else None
    return AtomicFact("add", "relaxed", "gpu", "i32", [128], False, Ref("ttir", 19, ref), None, users, user, py)


def test_written_out_sass_only_wording() -> None:
    """The Triton 3.6 shape (``benchmarks/results/atomic-return-h200``, and the sm90 compiles of ``hist_ret``/
    ``hist_noret`` with ``.venv36``): PTX ``atom.add.u32`` in both, SASS ``ATOMG.E.ADD`` vs ``REDG.E.ADD`` (counted
    as ``RED``). The whole explanation, word for word; the evidence: TTIR lines cut at 220 characters, the reader's
    statement (the atomic's own call has no source line here), the first ``ATOMG``/``RED`` SASS line of each side
    with its count, and each side's SASS atomics."""
    assert len(_LONG) > 220 and len(_LONG_STORE) > 220
    ptx = {"atom": 2, "atom.add.u32": 2, "atom.relaxed": 2}
    first_u = {"sass": {"ATOMG": Ref("sass", 48, "ATOMG.E.ADD.STRONG.GPU PT, R7, desc[UR6][R2.64], R7;")}}
    first_o = {"sass": {"RED": Ref("sass", 44, "REDG.E.ADD.STRONG.GPU desc[UR6][R4.64], R11;")}}
    u = make_facts(
        "u",
        counts={"ptx": ptx, "sass": {"ATOMG": 2, "ATOMG.ADD": 2}},
        first_lines=first_u,
        mech=MechFacts(atomics=[_atom36(["tt.store"])]),
    )
    o = make_facts(
        "o",
        counts={"ptx": ptx, "sass": {"RED": 2, "RED.ADD": 2}},
        first_lines=first_o,
        mech=MechFacts(atomics=[_atom36([], ref=_LONG.replace("%old", "%0"))]),
    )
    for x, y in ((u, o), (o, u)):
        (f,) = rule_atomic_result(make_context(x, y))
        assert f.predicts == "u"
        assert f.title == (
            "`u` uses the old value of `tl.atomic_add` (`add` on 128xi32; read by `tt.store` at line 12): it lowers to "
            "`ATOMG` and waits for it; unused in `o`, it lowers to `RED`"
        )
        assert f.explanation == (
            "In `u` the old value returned by `add` on 128xi32 is read by `tt.store` (line 12: "
            "`tl.store(prev + offs, old, mask=ok)`); in `o` the same atomic's result has no use. Triton lowers a "
            "`tt.atomic_rmw` to a reduction — PTX `red`, which returns nothing — only when its result has no use, "
            "its op is not `xchg` and its `sem` is `relaxed` or `release` (`AtomicRMWOpConversion`, "
            "`third_party/nvidia/lib/TritonNVIDIAGPUToLLVM/LoadStoreOpToLLVM.cpp`); otherwise it emits `atom`, which "
            "returns the old value. Here the PTX has `atom` in both variants (this Triton emits `atom` whatever the "
            "use) and ptxas makes the difference: the `atom` whose destination register is never read becomes `RED` "
            "in `o`. Per thread, SASS has 2 value-returning atomic(s) and 0 reduction(s) in `u`, 0 and 2 in `o`. An "
            "`atom` whose value is read holds a destination register and the first instruction that reads it waits "
            "until the value comes back from the L2 (a round trip per atomic); a `red` is issued and not waited for. "
            "Where many threads update the same few addresses the updates serialize at the L2 in both variants, and "
            "that can hide the wait; it shows where the updates are spread out. The memory updates are the same; "
            "only `u` reads the values the atomics replaced."
        )
        assert [(e.variant, e.stage, e.line, e.text) for e in f.evidence] == [
            ("u", "ttir", 19, _LONG[:220]),
            ("u", "ttir", 20, _LONG_STORE[:220]),
            ("u", "python", 12, "tl.store(prev + offs, old, mask=ok)"),
            ("o", "ttir", 19, _LONG.replace("%old", "%0")[:220]),
            ("u", "sass", 48, "ATOMG.E.ADD.STRONG.GPU PT, R7, desc[UR6][R2.64], R7;   (2× ATOMG)"),
            ("o", "sass", 44, "REDG.E.ADD.STRONG.GPU desc[UR6][R4.64], R11;   (2× RED)"),
            ("u", "sass", None, "2× ATOMG, 2× ATOMG.ADD"),
            ("o", "sass", None, "2× RED, 2× RED.ADD"),
        ]


def test_written_out_op_without_words() -> None:
    """An op the table of ``tl.atomic_*`` names does not hold (none of Triton's ``tt.atomic_rmw`` ops today; a new
    one of a later Triton) is named as TTIR writes it, in backquotes."""
    ptx_u, ptx_o = {"atom": 4}, {"red": 4}
    u = _facts("u", [_atom(["tt.store"], op="fmax")], ptx_u, {"ATOMG": 4})
    o = _facts("o", [_atom([], op="fmax")], ptx_o, {"RED": 4})
    for x, y in ((u, o), (o, u)):
        (f,) = rule_atomic_result(make_context(x, y))
        assert f.title.startswith("`u` uses the old value of `fmax` (`fmax` on 128xi32; read by `tt.store` at line 12)")


@TARGETS
@BOTH
def test_other_value_returning_atomics_do_not_hide_the_unused_result(compile_suite, target: str, swap: bool) -> None:  # type: ignore[no-untyped-def]
    """``hist_ret`` against ``asmused_noret``: the histogram's old value is read only in ``hist_ret``, while
    ``asmused_noret`` has an inline-PTX ``atom.global`` whose value it stores. Per thread both have as many
    value-returning atomics (PTX ``atom``, SASS ``ATOMG``); ``asmused_noret`` alone has the reductions. The finding
    names ``hist_ret`` from the PTX reductions (it was silent: it also asked for more ``atom`` in ``hist_ret``)."""
    b = compile_suite(SUITE, ["hist_ret", "asmused_noret"], target)
    ptx = {v: (n_ptx(b, v, r"\batom\."), n_ptx(b, v, r"\bred\.")) for v in ("hist_ret", "asmused_noret")}
    sass = {v: (n_sass(b, v, r"\bATOMG\."), n_sass(b, v, r"\bREDG?\.")) for v in ("hist_ret", "asmused_noret")}
    (nu, ru), (no, ro) = ptx["hist_ret"], ptx["asmused_noret"]
    assert nu == no > 0 and ru == 0 < ro  # the same number of atom, the reductions only in asmused_noret
    assert sass["hist_ret"][0] == sass["asmused_noret"][0] and sass["hist_ret"][1] < sass["asmused_noret"][1]
    f, _, _ = one(rule_atomic_result, b, "hist_ret", "asmused_noret", swap)
    assert f.predicts == "hist_ret"
    assert f.title.endswith(
        "it lowers to `atom` (SASS `ATOMG`) and waits for it; unused in `asmused_noret`, it lowers to `red` (SASS `RED`)"
    )
    assert (
        f"Per thread, PTX has {nu} value-returning atomic(s) and 0 reduction(s) in `hist_ret`, {no} and {ro} in "
        "`asmused_noret`." in f.explanation
    )
