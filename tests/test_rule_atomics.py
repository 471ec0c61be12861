"""``atomic.ordering``, ``atomic.cas-loop`` and ``layout.convert-shared`` (``irdiff/diagnose/rules/atomics.py``) on
the facts of real compiles, each rule called directly, in both orders of the variants.

Kernels: ``tests/suites/diag_mech.py`` (split-K ``tl.atomic_add`` with ``sem="relaxed"`` vs the default ``acq_rel``,
into bf16 on sm80 — a CAS loop — and on sm90 — native; a dot result added with ``tl.atomic_add`` vs inline-asm
``red``), ``tests/suites/kinds/kinds.py`` (``atomscope``: ``scope="cta"`` vs gpu; ``atomsem``: ``atomic_max`` with
``sem="release"`` vs ``"relaxed"``) and ``tests/suites/rule_mech.py`` (``tally``: ``sem="acquire"`` vs ``"relaxed"``
at ``scope="sys"``; the user's own ``tl.atomic_cas`` lock). Counts are read from each variant's own PTX/SASS text,
never hard-coded: the kernels force one fence per atomic, not a number of atomics per thread.
"""

from __future__ import annotations

import pytest
from rule_pairs import KINDS, OWN, OWN_VARIANTS, at_line, context, ev, n_ptx, n_sass, one

from irdiff.bundle import Bundle
from irdiff.diagnose.facts import Ref
from irdiff.diagnose.mechfacts import AtomicFact, ConvertFact, MechFacts
from irdiff.diagnose.rules.atomics import _added, _required_by, rule_atomic_ordering, rule_cas_loop, rule_convert_shared
from irdiff.diagnose.testing import make_context, make_facts

BOTH = pytest.mark.parametrize("swap", [False, True], ids=["as-named", "swapped"])
TAIL = (
    "Results are the same for a plain accumulation (the sum's rounding order across CTAs is not fixed in either); the "
    "ordering only matters when other memory operations depend on the atomic (locks, flags)."
)
ACQ_REL = (
    "`acq_rel` (the default of `tl.atomic_*`): each atomic orders the thread's memory operations around it — ptxas "
    "surrounds it with a fence (`MEMBAR`) and an L1 invalidation (`CCTL.IVALL`), and the atomic must return its old "
    "value (`ATOMG`)."
)
RELAXED = (
    "`relaxed`: no ordering beyond the atomic itself; when the result is unused PTX uses a reduction (`red`) that does "
    "not return a value (`RED` in SASS)."
)
RELEASE = "`release`: earlier stores are made visible before the atomic (a fence before it)."
ACQUIRE = "`acquire`: later loads may not move before the atomic (L1 invalidated after it)."


@pytest.fixture(scope="module")
def splitk(mech80: Bundle) -> Bundle:
    return mech80


@pytest.fixture(scope="module")
def scope(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(KINDS + "::atomscope", ["cta", "gpu"], "sm80")  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def sem(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(KINDS + "::atomsem", ["release", "relaxed"], "sm80")  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def own(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(OWN, OWN_VARIANTS, "sm80")  # type: ignore[no-any-return]


# ------------------------------------------------------------------------------------------------ atomic.ordering


@BOTH
def test_acq_rel_vs_relaxed_names_fence_and_invalidation(splitk: Bundle, swap: bool) -> None:
    """The default ``acq_rel`` split-K add gets a GPU fence, an error barrier and an L1 invalidation per atomic and
    returns a value (``ATOMG``); ``relaxed`` becomes a reduction (``RED``) with no fence: ``acq_rel`` is predicted
    slower, and every count is the SASS/PTX's own."""
    f, a, b = one(rule_atomic_ordering, splitk, "relaxed", "acq_rel", swap)
    assert (f.id, f.severity, f.stage, f.predicts) == ("atomic.ordering", "major", "ttir", "acq_rel")
    desc = {"relaxed": "sem=relaxed scope=gpu", "acq_rel": "sem=acq_rel scope=gpu"}
    assert f.title == (
        f"Atomic ordering: {desc[a]} in `{a}` vs {desc[b]} in `{b}` (`acq_rel` adds a GPU-wide fence (`MEMBAR.GPU`) "
        "and an L1 invalidation (`CCTL`) per atomic)"
    )
    n = n_sass(splitk, "acq_rel", r"\bATOMG\b")
    assert n > 0 and n == n_sass(splitk, "acq_rel", r"\bMEMBAR\.[A-Z.]*GPU") == n_sass(splitk, "acq_rel", r"\bCCTL")
    # relaxed with the result unused: a reduction (RED / red) where the release allows it (Triton 3.9), else ATOMG
    red = n_sass(splitk, "relaxed", r"\bRED\b")
    sk = "RED" if red else "ATOMG"
    r = n_sass(splitk, "relaxed", rf"\b{sk}\b")
    assert r > 0 and n_sass(splitk, "relaxed", r"\bMEMBAR|\bCCTL") == 0
    fences = {"relaxed": "`relaxed` none", "acq_rel": f"`acq_rel` {n}× `MEMBAR.GPU`, {n}× `ERRBAR`, {n}× `CCTL`"}
    pa = n_ptx(splitk, "acq_rel", r"\batom\.[\w.:]*acq_rel[\w.:]*\.add\.f32")
    assert pa == n
    assert f.explanation.startswith(
        f"Atomics use {desc[a]} in `{a}` and {desc[b]} in `{b}`. {ACQ_REL} {RELAXED} Fences and L1 invalidations in "
        f"SASS: {fences[a]}; {fences[b]}. Per thread, PTX has "
    )
    # the PTX atomics of each side as its facts count them (qualified keys, sorted); the acq_rel side's are its atoms
    ptx = {
        v: f"`{v}` "
        + ", ".join(
            f"{c_}× `{key}`"
            for key, c_ in sorted(context(splitk, v, v).fa.counts["ptx"].items())
            if key.split(".")[0] in ("atom", "red") and "." in key and c_
        )
        for v in (a, b)
    }
    assert f"Per thread, PTX has {ptx[a]}; {ptx[b]}. " in f.explanation
    assert f"{pa}× `atom.acq_rel`" in ptx["acq_rel"] and f"{pa}× `atom.add.f32`" in ptx["acq_rel"]
    assert f.explanation.endswith(f". {TAIL}")
    # the atomic of each variant (TTIR line and the Python call), then the fence and the SASS atomics
    assert ev(f)[:4] == [(a, "ttir"), (a, "python"), (b, "ttir"), (b, "python")]
    tail = [(e.variant, e.stage, e.line is None) for e in f.evidence[4:]]
    want = {"acq_rel": [("acq_rel", "sass", False), ("acq_rel", "sass", True)], "relaxed": [("relaxed", "sass", True)]}
    assert tail == want[a] + want[b]
    for k, v in ((0, a), (2, b)):
        assert f.evidence[k].text == at_line(splitk, f, k).strip()[:220]
        assert f"tt.atomic_rmw fadd, {v}, gpu" in f.evidence[k].text
    assert "tl.atomic_add(" in f.evidence[1].text and "sem=SEM" in f.evidence[1].text
    fence = next(e for e in f.evidence if e.variant == "acq_rel" and e.stage == "sass" and e.line)
    assert fence.text.startswith("MEMBAR") and fence.text.endswith(f"   ({n}× MEMBAR.GPU)")
    counts = {e.variant: e.text for e in f.evidence if e.stage == "sass" and e.line is None}
    assert counts == {"acq_rel": f"{n}× ATOMG, {n}× ATOMG.ADD.F32", "relaxed": f"{r}× {sk}, {r}× {sk}.ADD.F32"}


@BOTH
def test_gpu_scope_adds_gpu_fence_and_invalidation_over_cta(scope: Bundle, swap: bool) -> None:
    """``scope="cta"`` keeps ``acq_rel`` but fences the CTA only (``MEMBAR.CTA``): the default gpu scope is the
    heavier side, with a GPU fence and an L1 invalidation per atomic."""
    f, a, b = one(rule_atomic_ordering, scope, "cta", "gpu", swap)
    assert (f.severity, f.predicts) == ("major", "gpu")
    assert f.title == (
        f"Atomic ordering: sem=acq_rel scope={a} in `{a}` vs sem=acq_rel scope={b} in `{b}` (`gpu` adds a GPU-wide "
        "fence (`MEMBAR.GPU`) and an L1 invalidation (`CCTL`) per atomic)"
    )
    n = n_sass(scope, "gpu", r"\bATOMG\b")
    assert n == n_sass(scope, "cta", r"\bATOMG\b") == n_sass(scope, "cta", r"\bMEMBAR\.[A-Z.]*CTA")
    assert n_sass(scope, "cta", r"\bCCTL") == 0
    fences = {"cta": f"`cta` {n}× `MEMBAR.CTA`", "gpu": f"`gpu` {n}× `MEMBAR.GPU`, {n}× `ERRBAR`, {n}× `CCTL`"}
    assert f"Fences and L1 invalidations in SASS: {fences[a]}; {fences[b]}." in f.explanation
    assert f.explanation.startswith(
        f"Atomics use sem=acq_rel scope={a} in `{a}` and sem=acq_rel scope={b} in `{b}`. {ACQ_REL} Fences"
    )
    assert "`relaxed`" not in f.explanation
    # each side's fence line is quoted: the gpu side's `MEMBAR.ALL.GPU`, the cta side's `MEMBAR.ALL.CTA` (it has
    # no CCTL/ERRBAR; it used to quote nothing)
    fence = {e.variant: e.text for e in f.evidence if e.stage == "sass" and e.line}
    assert fence["gpu"].startswith("MEMBAR.ALL.GPU") and fence["gpu"].endswith(f"({n}× MEMBAR.GPU)")
    assert fence["cta"].startswith("MEMBAR.ALL.CTA") and fence["cta"].endswith(f"({n}× MEMBAR.CTA)")
    assert [e.variant for e in f.evidence if e.stage == "sass" and e.line] == [a, b]
    assert 'scope="cta"' in next(e.text for e in f.evidence if e.variant == "cta" and e.stage == "python")


@BOTH
def test_release_fences_but_invalidates_nothing(sem: Bundle, swap: bool) -> None:
    """``sem="release"`` on an ``atomic_max`` whose result is unused stays a reduction (``RED``) but gets a fence
    before it; it invalidates no L1 (that is ``acquire``'s part): the title names the fence only."""
    f, a, b = one(rule_atomic_ordering, sem, "release", "relaxed", swap)
    assert (f.severity, f.predicts) == ("major", "release")
    assert f.title.endswith("(`release` adds a GPU-wide fence (`MEMBAR.GPU`) per atomic)")
    assert f.title.startswith(f"Atomic ordering: sem={a} scope=gpu in `{a}` vs sem={b} scope=gpu in `{b}`")
    # words in the order of the sorted sems, each once
    assert f"in `{b}`. {RELAXED} {RELEASE} Fences" in f.explanation and ACQ_REL not in f.explanation
    n = n_sass(sem, "release", r"\bMEMBAR\.[A-Z.]*GPU")
    assert n > 0 and n_sass(sem, "release", r"\bCCTL") == 0 and n_sass(sem, "relaxed", r"\bMEMBAR") == 0
    assert "`relaxed` none" in f.explanation
    assert f"`release` {n}× `MEMBAR.GPU`, {n}× `ERRBAR`" in f.explanation


@BOTH
def test_acquire_at_system_scope_invalidates_l1(own: Bundle, swap: bool) -> None:
    """Own kernel: a histogram ``tl.atomic_add(..., scope="sys")`` with ``sem="acquire"`` vs ``"relaxed"``: acquire
    fences and invalidates L1 after the atomic; predicted slower, described with both sems' words."""
    f, a, b = one(rule_atomic_ordering, own, "acquire", "relaxed", swap)
    assert (f.id, f.severity, f.predicts) == ("atomic.ordering", "major", "acquire")
    assert f.title.startswith(f"Atomic ordering: sem={a} scope=sys in `{a}` vs sem={b} scope=sys in `{b}` (`acquire`")
    assert f"in `{b}`. {ACQUIRE} {RELAXED} Fences" in f.explanation
    assert n_sass(own, "acquire", r"\bCCTL") > 0 and "an L1 invalidation (`CCTL`)" in f.title
    assert n_sass(own, "relaxed", r"\bCCTL|\bMEMBAR") == 0 and "`relaxed` none" in f.explanation


def test_same_sem_and_fences_is_silent(mech80: Bundle, mech90: Bundle) -> None:
    """``relaxed`` fp32 vs ``relaxed`` bf16: the same sem and scope and no fences on either side (the bf16 CAS loop is
    ``atomic.cas-loop``'s finding), on sm80 and sm90, both orders; a variant without atomics is never compared."""
    for b in (mech80, mech90):
        assert rule_atomic_ordering(context(b, "relaxed", "bf16")) == []
        assert rule_atomic_ordering(context(b, "bf16", "relaxed")) == []
    assert rule_atomic_ordering(context(mech80, "acq_rel", "tf32")) == []
    assert rule_atomic_ordering(context(mech80, "tf32", "acq_rel")) == []


def test_added_words() -> None:
    """What the heavier side adds: SASS kinds first (PTX fences only when SASS shows none), "fences" when no kind is
    known to grow."""
    assert _added({"MEMBAR.SYS": 2, "CCTL": 2}, {}) == (
        "a system-wide fence (`MEMBAR.SYS`) and an L1 invalidation (`CCTL`) per atomic"
    )
    assert _added({"MEMBAR.CTA": 1, "fence.sc": 1}, {"MEMBAR.CTA": 1}) == (
        "a sequentially consistent fence (`fence.sc`) per atomic"
    )
    assert _added({"MEMBAR.GPU": 1, "fence.acq_rel": 1}, {}) == "a GPU-wide fence (`MEMBAR.GPU`) per atomic"
    assert _added({"membar": 3}, {"membar": 1}) == "a fence (`membar`) per atomic"
    assert _added({"MEMBAR.GPU": 1}, {"MEMBAR.GPU": 1}) == "fences per atomic"
    assert _added({"ERRBAR": 4}, {}) == "fences per atomic"


# ------------------------------------------------------------------------------------------------ atomic.cas-loop


@BOTH
def test_bf16_add_is_a_cas_loop_on_sm80(splitk: Bundle, swap: bool) -> None:
    """sm80 has no bf16 atomic add: Triton emits a CAS retry loop (``atom.cas`` in PTX); the fp32 ``relaxed`` add is a
    native reduction. The loop side is named, with its op and type, the target, and its own ``atom.cas`` count."""
    f, a, b = one(rule_cas_loop, splitk, "relaxed", "bf16", swap)
    assert (f.id, f.severity, f.stage, f.predicts) == ("atomic.cas-loop", "major", "ptx", "bf16")
    assert f.title == "`bf16` emulates `fadd` on `bf16` with a compare-and-swap loop"
    n = n_ptx(splitk, "bf16", r"\batom\.[\w.:]*cas\.b32")
    assert n > 0 and n_ptx(splitk, "relaxed", r"\.cas\.") == 0
    assert f.explanation == (
        "In `bf16` `fadd` on `bf16` has no native atomic instruction on sm80, so Triton emits a compare-and-swap "
        "loop: load the old value, compute the new one, `atom.cas` it, and retry when another thread changed the word "
        f"in between ({n} `atom.cas` per thread). Under contention (split-K, histograms) each retry is another round "
        "trip to L2. `relaxed` uses a native atomic/reduction. Results are the same up to the (unordered) summation "
        "order."
    )
    assert ev(f) == [("bf16", "ttir"), ("bf16", "ptx"), ("relaxed", "ptx")]
    assert "tt.atomic_rmw fadd, relaxed, gpu" in f.evidence[0].text and "bf16" in f.evidence[0].text
    assert f.evidence[0].text == at_line(splitk, f, 0).strip()[:220]
    assert (
        f.evidence[1].text == f"{at_line(splitk, f, 1).strip()}   ({n}× atom.cas)" and ".cas.b32" in f.evidence[1].text
    )
    pk = "red" if n_ptx(splitk, "relaxed", r"\bred\.") else "atom"  # a reduction where the release emits one
    r = n_ptx(splitk, "relaxed", rf"\b{pk}\.")
    assert r > 0 and f.evidence[2].line is None
    assert set(f.evidence[2].text.split(", ")) == {f"{r}× {pk}", f"{r}× {pk}.add.f32", f"{r}× {pk}.relaxed"}


def test_native_bf16_on_sm90_and_user_cas_are_not_emulation(mech90: Bundle, own: Bundle) -> None:
    """sm90 has a native bf16 reduction: no CAS loop either way. A ``tl.atomic_cas`` the user wrote (a lock) is not an
    emulation, in both orders; a variant pair without any ``atom.cas`` says nothing."""
    for x, y in (("relaxed", "bf16"), ("bf16", "relaxed")):
        assert rule_cas_loop(context(mech90, x, y)) == []
    assert n_ptx(own, "lock", r"\.cas\.") > 0
    for x, y in (("lock", "relaxed"), ("relaxed", "lock")):
        assert rule_cas_loop(context(own, x, y)) == []
    assert rule_cas_loop(context(own, "acquire", "relaxed")) == []


# ------------------------------------------------------------------------------------------- layout.convert-shared


@pytest.mark.parametrize("target", ["sm80", "sm90"])
@BOTH
def test_atomic_on_mma_result_goes_through_shared(own: Bundle, target: str, swap: bool) -> None:
    """Own kernel: ``tl.atomic_add`` of a 64x64 fp32 dot result: the MMA layout is converted to a blocked one through
    shared memory (64·64·4 B = 16 KB scratch, 128 B stored per thread of 128) before the atomic; adding a loaded
    (already blocked) tile needs no conversion. The converting side is named, with what required it."""
    dot, ld = f"dot{target[2:]}", f"ld{target[2:]}"
    f, a, b = one(rule_convert_shared, own, dot, ld, swap)
    assert (f.id, f.severity, f.stage, f.predicts) == ("layout.convert-shared", "minor", "ttgir", dot)
    src, producer = {"sm80": ("mma_v2", "tt.dot"), "sm90": ("wgmma", "ttng.warp_group_dot")}[target]
    c = next(x for x in context(own, a, b).facts(dot).mech.converts if x.shared_stores)  # type: ignore[union-attr]
    # 64·64·4 B in one round (16 KB) or two (8 KB), as the release's scratch allocation decides
    kb = {16384: "16 KB", 8192: "8 KB"}[c.scratch_bytes or 0]
    assert f.title == f"`{dot}` converts 64x64xf32 from {src} to blocked through shared memory ({kb} scratch)"
    assert c.stored_bytes == 128 and c.shared_loads > 0 and c.barriers > 0
    assert f.explanation == (
        f"In `{dot}` a `ttg.convert_layout` moves the 64x64xf32 value produced by `{producer}` from the {src} layout "
        f"to a blocked layout through shared memory: each thread stores its elements ({c.shared_stores} `st.shared`, "
        f"128 B), the CTA synchronises ({c.barriers} `bar.sync`) and each thread loads the elements it needs "
        f"({c.shared_loads} loads) — about {kb} of shared-memory scratch per CTA (bytes stored × threads / rounds). "
        "It is required by an atomic on the MMA result: atomics are emitted in a blocked layout, so the MMA-layout "
        f"values are redistributed between threads through shared memory first. `{ld}` has 0 such conversion(s): "
        "it consumes the value in the layout it was produced in. The scratch reuses shared memory freed by earlier "
        "buffers, so `metadata.shared` may not grow; the cost is the extra shared-memory traffic and barriers. "
        "Results are the same."
    )
    assert ev(f) == [(dot, "ttgir"), (dot, "python"), (dot, "ptx")]
    assert f.evidence[0].text == at_line(own, f, 0)[:240] and "ttg.convert_layout" in f.evidence[0].text
    assert "#mma" in f.evidence[0].text and "#blocked" in f.evidence[0].text
    assert "tl.atomic_add(out, part)" in f.evidence[1].text
    assert f.evidence[2].text == (
        f"{c.shared_stores} st.shared + {c.shared_loads} ld.shared (128 B stored per thread), {c.barriers} bar.sync at "
        "the conversion's source line"
    )


def test_no_shared_conversion_on_either_side_is_silent(mech80: Bundle, own: Bundle) -> None:
    """Two variants without a conversion through shared memory (or with the same ones) say nothing."""
    assert rule_convert_shared(context(own, "ld80", "ld90")) == []
    assert rule_convert_shared(context(own, "dot80", "dot80")) == []
    assert rule_convert_shared(context(mech80, "hints", "nohints")) == []


R = Ref("ttgir", 1, "op")


def _cvt(src: str, consumers: list[str]) -> ConvertFact:
    return ConvertFact(src, "blocked", [64, 64], "f32", "tt.dot", consumers, 8, 8, 2, 128, 16384, R, None)


def test_required_by_names_the_consumer() -> None:
    """Why a conversion was needed, from its source layout and its consumers (TTGIR users of the converted value)."""
    atomic = "an atomic on the MMA result: atomics are emitted in a blocked layout, so the MMA-layout values are "
    for src in ("mma_v2", "wgmma", "tcgen05", "linear"):
        assert _required_by(_cvt(src, ["tt.atomic_rmw"])).startswith(atomic)
        assert _required_by(_cvt(src, ["tt.atomic_cas"])).startswith(atomic)
        assert (
            _required_by(_cvt(src, ["tt.store"]))
            == "storing the MMA result: the store is coalesced in a blocked layout"
        )
    assert _required_by(_cvt("blocked", ["tt.atomic_rmw"])) == "a consumer that expects another layout (tt.atomic_rmw)"
    assert _required_by(_cvt("blocked", ["tt.store"])) == "a consumer that expects another layout (tt.store)"
    assert _required_by(_cvt("blocked", ["tt.reduce", "tt.trans"])) == (
        "a reduction that needs another distribution of the values"
    )
    assert _required_by(_cvt("blocked", ["tt.trans", "tt.reshape"])) == "a `tt.reshape`"
    for op in ("tt.trans", "tt.split", "tt.join", "tt.cat"):
        assert _required_by(_cvt("mma_v2", [op, "arith.addf"])) == f"a `{op}`"
    assert _required_by(_cvt("blocked", ["tt.dot"])) == "feeding a dot operand"
    assert _required_by(_cvt("blocked", ["arith.mulf", "arith.addf"])) == (
        "a consumer that expects another layout (arith.addf, arith.mulf)"
    )


# ------------------------------------------------------------- the same rules on counts of PTX/SASS written out here


def test_ptx_fences_counted_when_sass_has_none() -> None:
    """Inline-asm fences (``fence.sc.gpu``, ``fence.acq_rel.gpu``, ``membar.gl``) counted from PTX text: they make a
    difference, and the heavier side is named with them when SASS shows no fence kind."""
    from irdiff.diagnose.counts import count_ops

    ptx = "\tfence.sc.gpu;\n\tfence.acq_rel.gpu;\n\tmembar.gl;\n\tred.global.gpu.relaxed.add.f32 [%rd1], %r1;\n"
    plain = "\tred.global.gpu.relaxed.add.f32 [%rd1], %r1;\n"
    atom = [AtomicFact("fadd", "relaxed", "gpu", "f32", [], False, R, None)]
    a = make_facts("fenced", counts={"ptx": count_ops("ptx", ptx)}, mech=MechFacts(atomics=atom))
    b = make_facts("plain", counts={"ptx": count_ops("ptx", plain)}, mech=MechFacts(atomics=atom))
    (f,) = rule_atomic_ordering(make_context(a, b))
    assert f.predicts == "fenced" and f.severity == "major"
    assert f.title.endswith(
        "(`fenced` adds a sequentially consistent fence (`fence.sc`) and a fence (`fence.acq_rel`) and a fence "
        "(`membar`) per atomic)"
    )
    assert "`fenced` 1× `fence.acq_rel`, 1× `fence.sc`, 1× `membar`; `plain` none." in f.explanation
    assert rule_atomic_ordering(make_context(a, a)) == []


def test_sys_fence_and_generic_atomics_in_sass() -> None:
    """A system-scope fence (``MEMBAR.SYS``) and shared/generic atomics (``ATOMS``, ``ATOM``) from SASS text."""
    from irdiff.diagnose.counts import count_ops

    sys_sass = "\tMEMBAR.SC.SYS ;\n\tATOM.E.ADD.STRONG.SYS PT, R1, [R2], R3 ;\n\tATOMS.ADD R1, [R2], R3 ;\n"
    cta_sass = "\tMEMBAR.SC.CTA ;\n\tATOM.E.ADD.STRONG.GPU PT, R1, [R2], R3 ;\n\tATOMS.ADD R1, [R2], R3 ;\n"
    at = [AtomicFact("add", "acq_rel", "sys", "i32", [], False, R, None)]
    ac = [AtomicFact("add", "acq_rel", "cta", "i32", [], False, R, None)]
    a = make_facts("sys", counts={"sass": count_ops("sass", sys_sass)}, mech=MechFacts(atomics=at))
    b = make_facts("cta", counts={"sass": count_ops("sass", cta_sass)}, mech=MechFacts(atomics=ac))
    (f,) = rule_atomic_ordering(make_context(a, b))
    assert f.predicts is None and f.severity == "minor"  # one fence each: neither side is heavier
    assert "Fences and L1 invalidations in SASS: `sys` 1× `MEMBAR.SYS`; `cta` 1× `MEMBAR.CTA`." in f.explanation
    counts = [e.text for e in f.evidence if e.stage == "sass" and e.line is None]
    assert counts == ["1× ATOM, 1× ATOM.ADD, 1× ATOMS, 1× ATOMS.ADD"] * 2


def test_cas_loop_of_one_atomic_and_without_ttir_atomics() -> None:
    """One ``atom.cas`` per thread is a loop too; without a TTIR atomic (facts without them) the op is "the
    atomic"; long TTIR lines are cut at 220 characters."""
    long_ref = Ref("ttir", 7, "%1 = tt.atomic_rmw fadd, relaxed, gpu, " + "x" * 300)
    one = make_facts(
        "one",
        counts={"ptx": {"atom.cas": 1, "atom": 1}},
        mech=MechFacts(atomics=[AtomicFact("fadd", "relaxed", "gpu", "bf16", [], False, long_ref, None)]),
    )
    native = make_facts("native", counts={"ptx": {"red": 1, "red.add.f32": 1}})
    for x, y in ((one, native), (native, one)):
        (f,) = rule_cas_loop(make_context(x, y))
        assert f.predicts == "one" and f.title == "`one` emulates `fadd` on `bf16` with a compare-and-swap loop"
        assert f.evidence[0].text == long_ref.text[:220] and f.evidence[0].line == 7
        assert "(1 `atom.cas` per thread)" in f.explanation
    bare = make_facts("bare", counts={"ptx": {"atom.cas": 2}})
    (g,) = rule_cas_loop(make_context(bare, native))
    assert g.title == "`bare` emulates the atomic with a compare-and-swap loop"
    assert "In `bare` the atomic has no native atomic instruction on sm90" in g.explanation


def test_required_by_reshape_alone() -> None:
    assert _required_by(_cvt("blocked", ["tt.reshape"])) == "a `tt.reshape`"


# ------------------------------------------------- fence lines, several orderings, conversions on both sides


@BOTH
def test_lock_names_every_ordering_and_quotes_its_gpu_fence(own: Bundle, swap: bool) -> None:
    """Own kernel: a ``tl.atomic_cas`` lock (default ``acq_rel``, gpu scope) and ``tl.atomic_xchg`` unlock around a
    ``relaxed`` sys-scope add, against the add alone: the lock side lists both of its orderings, is predicted slower
    (its acquire/release fences the GPU and invalidates L1) and its first GPU fence line is quoted with its count."""
    f, a, b = one(rule_atomic_ordering, own, "lock", "relaxed", swap)
    d = {"lock": "sem=acq_rel scope=gpu, sem=relaxed scope=sys", "relaxed": "sem=relaxed scope=sys"}
    assert (f.severity, f.predicts) == ("major", "lock")
    assert f.title == (
        f"Atomic ordering: {d[a]} in `{a}` vs {d[b]} in `{b}` (`lock` adds a GPU-wide fence (`MEMBAR.GPU`) and an L1 "
        "invalidation (`CCTL`) per atomic)"
    )
    assert f.explanation.startswith(f"Atomics use {d[a]} in `{a}` and {d[b]} in `{b}`. {ACQ_REL} {RELAXED} Fences")
    n = n_sass(own, "lock", r"\bMEMBAR\.[A-Z.]*GPU")
    assert n > 0 and n_sass(own, "relaxed", r"\bMEMBAR|\bCCTL") == 0
    fence = [(e.variant, e.text) for e in f.evidence if e.stage == "sass" and e.line]
    assert len(fence) == 1 and fence[0][0] == "lock"
    k = next(i for i, e in enumerate(f.evidence) if e.stage == "sass" and e.line)
    # the SASS line as listed (after its scheduling prefix), then the count of its kind
    txt = fence[0][1].removesuffix(f"   ({n}× MEMBAR.GPU)")
    assert txt != fence[0][1] and txt.startswith("MEMBAR") and ".GPU" in txt and at_line(own, f, k).endswith(txt)


@BOTH
def test_acquire_quotes_its_l1_invalidation(own: Bundle, swap: bool) -> None:
    """``sem="acquire"`` fences nothing in SASS but invalidates L1 after the atomic (``CCTL``): that line is the
    fence evidence of the acquire side, with its count."""
    f, _, _ = one(rule_atomic_ordering, own, "acquire", "relaxed", swap)
    n = n_sass(own, "acquire", r"\bCCTL")
    assert n > 0 and n_sass(own, "acquire", r"\bMEMBAR|\bERRBAR") == 0
    k = [i for i, e in enumerate(f.evidence) if e.stage == "sass" and e.line]
    assert len(k) == 1 and f.evidence[k[0]].variant == "acquire"
    txt = f.evidence[k[0]].text.removesuffix(f"   ({n}× CCTL)")
    assert txt != f.evidence[k[0]].text and txt.startswith("CCTL") and at_line(own, f, k[0]).endswith(txt)


def _sass_facts(name: str, sass: str, atoms: list[AtomicFact]):  # type: ignore[no-untyped-def]
    from irdiff.diagnose.counts import count_ops
    from irdiff.diagnose.facts import _first_lines

    return make_facts(
        name,
        counts={"sass": count_ops("sass", sass)},
        first_lines={"sass": _first_lines("sass", sass)},
        mech=MechFacts(atomics=atoms),
    )


def test_fence_evidence_is_the_line_of_that_fence_kind() -> None:
    """SASS with a CTA fence before a GPU fence (a CTA-scope atomic, then a gpu-scope one): the quoted fence line is
    the ``MEMBAR.ALL.GPU`` one, not the first ``MEMBAR`` of any scope (fixed: the rule looked up ``MEMBAR``); a side
    with a system fence and an error barrier quotes its system fence (fixed: it quoted only the ``ERRBAR``). Neither side is heavier (3 fences each):
    the title says who uses what and no more."""
    mixed = (
        "\tMEMBAR.SC.CTA ;\n\tATOMG.E.ADD.STRONG.GPU PT, R1, [R2], R3 ;\n\tMEMBAR.ALL.GPU ;\n\tERRBAR;\n"
        "\tATOMG.E.ADD.STRONG.GPU PT, R4, [R2], R3 ;\n"
    )
    sys = "\tMEMBAR.SC.SYS ;\n\tERRBAR;\n\tRED.E.ADD.STRONG.SYS [R2], R3 ;\n\tMEMBAR.SC.SYS ;\n"
    long_ref = Ref("ttir", 9, "%7 = tt.atomic_rmw fadd, acq_rel, gpu, " + "%x, " * 80)
    am = [
        AtomicFact("fadd", "acq_rel", "cta", "f32", [], False, long_ref, None),
        AtomicFact("fadd", "acq_rel", "gpu", "f32", [], False, R, None),
    ]
    a = _sass_facts("mixed", mixed, am)
    b = _sass_facts("sys", sys, [AtomicFact("fadd", "release", "sys", "f32", [], False, R, None)])
    for x, y in ((a, b), (b, a)):
        (f,) = rule_atomic_ordering(make_context(x, y))
        assert f.predicts is None and f.severity == "minor"
        d = {"mixed": "sem=acq_rel scope=cta, sem=acq_rel scope=gpu", "sys": "sem=release scope=sys"}
        assert f.title == f"Atomic ordering: {d[x.name]} in `{x.name}` vs {d[y.name]} in `{y.name}`"
        fence = {e.variant: (e.line, e.text) for e in f.evidence if e.stage == "sass" and e.line}
        assert fence == {
            "mixed": (3, "MEMBAR.ALL.GPU ;   (1× MEMBAR.GPU)"),
            "sys": (1, "MEMBAR.SC.SYS ;   (2× MEMBAR.SYS)"),
        }
        # the first atomic's TTIR line, cut at 220 characters
        e = next(e for e in f.evidence if e.variant == "mixed" and e.stage == "ttir")
        assert e.line == 9 and e.text == long_ref.text[:220] and len(long_ref.text) > 221


@BOTH
def test_mma_v2_vs_wgmma_conversion_names_the_inspected_side(own: Bundle, swap: bool) -> None:
    """Own kernel: the dot result added atomically on sm80 (``mma_v2``) and on sm90 (``wgmma``): each side converts
    one 64x64 tile through shared memory, from a different layout. Neither has more conversions: an ``info`` finding
    about the inspected side, predicting nothing, quoting the other side's conversion too."""
    f, a, b = one(rule_convert_shared, own, "dot80", "dot90", swap)
    assert (f.id, f.severity, f.stage, f.predicts) == ("layout.convert-shared", "info", "ttgir", None)
    src = {"dot80": "mma_v2", "dot90": "wgmma"}
    c = next(x for x in context(own, a, b).fa.mech.converts if x.shared_stores)  # type: ignore[union-attr]
    kb = {16384: "16 KB", 8192: "8 KB"}[c.scratch_bytes or 0]
    assert f.title == f"`{a}` converts 64x64xf32 from {src[a]} to blocked through shared memory ({kb} scratch)"
    assert f.explanation.startswith(f"In `{a}` a `ttg.convert_layout` moves the 64x64xf32 value produced by ")
    assert f"from the {src[a]} layout to a blocked layout" in f.explanation and src[b] not in f.explanation
    assert f"`{b}` has 1 such conversion(s). The scratch reuses" in f.explanation
    assert "it consumes the value" not in f.explanation
    assert ev(f) == [(a, "ttgir"), (a, "python"), (a, "ptx"), (b, "ttgir")]
    for k in (0, 3):
        assert f.evidence[k].text == at_line(own, f, k)[:240] and "ttg.convert_layout" in f.evidence[k].text
    assert f.evidence[0].line != f.evidence[3].line or a != b


def _cv(src: str, shape: list[int], stores: int, scratch: int | None, producer: str, ref: Ref) -> ConvertFact:
    return ConvertFact(
        src, "blocked", shape, "f32", producer, ["tt.store"], stores, 2, 1, 4 * stores, scratch, ref, None
    )


def test_the_conversion_only_one_side_has_is_described() -> None:
    """Two conversions each, one in common (listed first): the finding describes the inspected side's other one, a
    single ``st.shared`` per thread still counts as going through shared memory, and only the first conversion of the
    other side is quoted. A conversion without a producing op (a loop-carried value) and without a scratch estimate
    (stores but no loads at its line) says neither. Long TTGIR lines are cut at 240 characters."""
    wide = "%c = ttg.convert_layout %acc : tensor<64x64xf32, #ttg.nvidia_mma<{versionMajor = 2, " + "x" * 200 + "}>>"
    common = _cv("mma_v2", [64, 64], 8, 16384, "tt.dot", Ref("ttgir", 5, wide))
    long_ref = Ref("ttgir", 12, "%9 = ttg.convert_layout %arg7 : tensor<32x64xf32, #mma> -> " + "#blocked " * 40)
    mine = _cv("mma_v2", [32, 64], 1, None, "", long_ref)
    theirs = _cv("linear", [64, 32], 4, 4096, "tt.trans", Ref("ttgir", 8, "%t = ttg.convert_layout %tr"))
    a = make_facts("loop", mech=MechFacts(converts=[common, mine]))
    b = make_facts("flat", mech=MechFacts(converts=[common, theirs]))
    (f,) = rule_convert_shared(make_context(a, b))
    assert (f.severity, f.predicts) == ("info", None)
    assert f.title == "`loop` converts 32x64xf32 from mma_v2 to blocked through shared memory"
    assert f.explanation.startswith(
        "In `loop` a `ttg.convert_layout` moves the 32x64xf32 value from the mma_v2 layout to a blocked layout "
        "through shared memory: each thread stores its elements (1 `st.shared`, 4 B), the CTA synchronises (1 "
        "`bar.sync`) and each thread loads the elements it needs (2 loads) — shared-memory scratch per CTA"
    )
    assert "`flat` has 2 such conversion(s). The scratch" in f.explanation
    assert ev(f) == [("loop", "ttgir"), ("loop", "ptx"), ("flat", "ttgir")]
    assert (f.evidence[0].line, f.evidence[0].text) == (12, long_ref.text[:240]) and len(long_ref.text) > 241
    assert (f.evidence[2].line, f.evidence[2].text) == (5, wide[:240]) and len(wide) > 241
    # shared-memory instructions per thread: `loop` (8+2) + (1+2) = 13, `flat` (8+2) + (4+2) = 16: 3 fewer in `loop`
    assert f.instructions == 3
    # the other order: `flat` has the transposed tile only it converts
    (g,) = rule_convert_shared(make_context(b, a))
    assert g.title == "`flat` converts 64x32xf32 from linear to blocked through shared memory (4 KB scratch)"
    assert " produced by `tt.trans`" in g.explanation and "about 4 KB of shared-memory scratch" in g.explanation
    assert g.instructions == 3
    # without its single-store conversion `loop` has one conversion less, and it is the one `flat` shares: minor
    c = make_facts("one", mech=MechFacts(converts=[common]))
    (h,) = rule_convert_shared(make_context(b, c))
    assert (h.severity, h.predicts) == ("minor", "flat") and "from linear" in h.title
    assert h.instructions == 6  # `flat` 16 against `one` (8+2) = 10
