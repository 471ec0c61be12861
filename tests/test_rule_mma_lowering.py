"""``mma.lowering`` and ``mma.blackwell-wait`` (``irdiff/diagnose/rules/mma_lowering.py``) on the facts of real
compiles, each rule called directly, in both orders; ``_why`` (what forced the slower lowering) on the dots of those
compiles and on dots whose kinds no small kernel here produces (batched, split-precision on sm90, Blackwell warps).

Kernels: ``tests/suites/diag_mech.py`` (an fp32 dot with ``input_precision="ieee"`` — FMA — vs ``"tf32"``, sm80 and
sm90), ``tests/suites/kinds/kinds.py`` (``notf32``: ``allow_tf32=False`` vs the default; ``bf16x3`` vs ``tf32``, both
``mma.sync``), ``tests/suites/rule_mech.py`` (sm90: an fp16 64x64x32 dot with 4 warps — ``wgmma`` — vs 2 warps, vs a
16-row tile, vs fp64 operands, each ``mma.sync``) and ``tests/suites/diag_loop.py`` on sm100 (``dot1``: the K loop
waits for each ``tcgen05.mma``; ``dot3``: one stays in flight). Counts come from each variant's own PTX.
"""

from __future__ import annotations

import dataclasses

import pytest
from rule_pairs import KINDS, OWN, OWN_VARIANTS, at_line, context, ev, n_ptx, one

from irdiff.bundle import Bundle
from irdiff.diagnose.facts import Ref, VariantFacts
from irdiff.diagnose.mechfacts import DotFact, MechFacts, MmaWaitFact
from irdiff.diagnose.rules.mma_lowering import _why, rule_blackwell_wait, rule_mma_lowering
from irdiff.diagnose.testing import make_context, make_facts

BOTH = pytest.mark.parametrize("swap", [False, True], ids=["as-named", "swapped"])
FMA = "FMA instructions (`fma.rn.f32`: one multiply-add per thread and instruction, no tensor cores)"
V2 = "`mma.sync` (Ampere-style tensor-core MMA, synchronous, per warp)"
V3 = "`wgmma` (Hopper warpgroup MMA, asynchronous, operands from shared memory)"
ON_FMA = (
    "On FMA every output element is accumulated in registers of the thread that owns it, one multiply-add per "
    "instruction: far more instructions than an MMA and registers for the whole operand slices each thread reads, "
    "which is where register pressure and spills come from. "
)
OLDER = (
    "The older instruction computes a smaller tile per instruction and is synchronous: the warp waits for each MMA and "
    "loads/stores cannot overlap it as they do with asynchronous MMAs. "
)
NUMERIC = (
    "Results can differ numerically only where the input precision differs as well (FMA on fp32 is exact fp32; tensor "
    "cores on fp32 inputs use tf32)."
)
IEEE = 'its fp32 inputs use `input_precision="ieee"`: the tensor cores have no fp32 mode'
REGS = "an operand comes from registers instead of shared memory (A: registers, B: registers)"


def title(label: str, low: tuple[str, str], high: tuple[str, str], why: str, a: str) -> str:
    """The title ``mma.lowering`` must give with ``a`` inspected: ``a``'s lowering first, then the baseline's; the
    reason is the slower side's, named as such when that side is the baseline."""
    (lv, lk), (hv, hk) = low, high
    first, second = ((lv, lk), (hv, hk)) if a == lv else ((hv, hk), (lv, lk))
    reason = "" if not why else f" ({why})" if a == lv else f" (in `{lv}`: {why})"
    return f"{label} lowered to {first[1]} in `{first[0]}` vs {second[1]} in `{second[0]}`{reason}"


@pytest.fixture(scope="module")
def own(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(OWN, OWN_VARIANTS, "sm80")  # type: ignore[no-any-return]


# -------------------------------------------------------------------------------------------------- mma.lowering


@pytest.mark.parametrize("target", ["sm80", "sm90"])
@BOTH
def test_ieee_dot_is_fma_and_critical(request: pytest.FixtureRequest, target: str, swap: bool) -> None:
    """An fp32 dot with ``input_precision="ieee"`` stays a blocked ``tt.dot`` (FMA) where tf32 uses the tensor cores
    (``mma.sync``: ``fdot`` runs on one warp, so sm90 too): critical, predicts ``ieee``, names the precision."""
    bundle: Bundle = request.getfixturevalue({"sm80": "mech80", "sm90": "mech90"}[target])
    f, a, b = one(rule_mma_lowering, bundle, "ieee", "tf32", swap)
    assert (f.id, f.severity, f.stage, f.predicts) == ("mma.lowering", "critical", "ttgir", "ieee")
    assert f.title == title("`acc` dot 64x64x32 (f32 × f32)", ("ieee", "FMA"), ("tf32", "mma_v2"), IEEE, a)
    if a == "tf32":  # the inspected side first, the slower side's reason named as the baseline's
        assert (
            f.title
            == f"`acc` dot 64x64x32 (f32 × f32) lowered to mma_v2 in `tf32` vs FMA in `ieee` (in `ieee`: {IEEE})"
        )
    # the counts the rule quotes are the facts' (counts.py: every `fma.*.f32`, every `mma.sync`); the PTX has them
    ci, ct = context(bundle, "ieee", "ieee").fa.counts["ptx"], context(bundle, "tf32", "tf32").fa.counts["ptx"]
    nf, nm = ci.get("fma.f32", 0), ct.get("mma.sync", 0)
    assert 0 < n_ptx(bundle, "ieee", r"\bfma(\.\w+)*\.f32\b") and 0 < n_ptx(bundle, "tf32", r"\bmma\.sync\.aligned\b")
    assert nf > 0 and nm > 0 and n_ptx(bundle, "ieee", r"\bmma\.sync\b") == 0
    assert f.explanation == (
        f"`acc` dot 64x64x32 (f32 × f32) is lowered to {FMA} in `ieee` and to {V2} in `tf32` (per thread, PTX: "
        f"`ieee`: {nf} `fma.f32`; `tf32`: {nm} `mma.sync`). What forced it in `ieee`: {IEEE}. {ON_FMA}{NUMERIC}"
    )
    assert ev(f) == [("ieee", "ttgir"), ("tf32", "ttgir"), ("ieee", "ptx"), ("tf32", "ptx"), ("ieee", "python")]
    assert f.evidence[0].text == at_line(bundle, f, 0)[:240] and "tt.dot" in f.evidence[0].text
    assert "#blocked" in f.evidence[0].text and "#mma" in f.evidence[1].text
    assert f.evidence[2].text == f"{at_line(bundle, f, 2)}   ({nf}× fma.f32)"
    assert f.evidence[3].text == f"{at_line(bundle, f, 3)}   ({nm}× mma.sync)"
    assert "input_precision=PREC" in f.evidence[4].text


@BOTH
def test_allow_tf32_false_is_named_as_ieee(compile_suite, swap: bool) -> None:  # type: ignore[no-untyped-def]
    bundle = compile_suite(KINDS + "::notf32", ["notf32", "default"], "sm80")
    f, a, b = one(rule_mma_lowering, bundle, "notf32", "default", swap)
    assert (f.severity, f.predicts) == ("critical", "notf32")
    assert f.title == title("dot 64x64x64 (f32 × f32)", ("notf32", "FMA"), ("default", "mma_v2"), IEEE, a)
    assert "allow_tf32=False" in f.evidence[-1].text and f.evidence[-1].stage == "python"


@BOTH
def test_two_warps_cannot_use_wgmma(own: Bundle, swap: bool) -> None:
    """Own kernel, sm90: the same fp16 64x64x32 dot with 2 warps is ``mma.sync`` (``wgmma`` needs a warpgroup of 4
    warps): major (an MMA generation, not FMA), predicts the 2-warp side, the warps first among the reasons."""
    f, a, b = one(rule_mma_lowering, own, "wg2", "wg4", swap)
    assert (f.id, f.severity, f.stage, f.predicts) == ("mma.lowering", "major", "ttgir", "wg2")
    warps = "`num_warps` = 2: `wgmma` needs a warpgroup (4 warps)"
    assert f.title == title("dot 64x64x32 (f16 × f16)", ("wg2", "mma_v2"), ("wg4", "wgmma"), warps, a)
    n2 = n_ptx(own, "wg2", r"\bmma\.sync\.aligned\b")
    n4 = n_ptx(own, "wg4", r"\bwgmma\.mma_async\b")
    assert n2 > 0 and n4 > 0
    assert f.explanation == (
        f"dot 64x64x32 (f16 × f16) is lowered to {V2} in `wg2` and to {V3} in `wg4` (per thread, PTX: `wg2`: {n2} "
        f"`mma.sync`; `wg4`: {n4} `wgmma`). What forced it in `wg2`: {warps}; {REGS}. {OLDER}{NUMERIC}"
    )
    assert ev(f) == [("wg2", "ttgir"), ("wg4", "ttgir"), ("wg2", "ptx"), ("wg4", "ptx"), ("wg2", "python")]
    assert "ttng.warp_group_dot" in f.evidence[1].text and "tt.dot" in f.evidence[0].text
    assert f.evidence[3].text == f"{at_line(own, f, 3)}   ({n4}× wgmma)"


@BOTH
def test_sixteen_row_tile_cannot_use_wgmma(own: Bundle, swap: bool) -> None:
    f, a, b = one(rule_mma_lowering, own, "m16", "wg4", swap)
    assert (f.severity, f.predicts) == ("major", "m16")
    rows = "M = 16 is below the 64 rows one warpgroup MMA computes"
    assert f.title == title("dot 16x64x32 (f16 × f16)", ("m16", "mma_v2"), ("wg4", "wgmma"), rows, a)
    assert f"What forced it in `m16`: {rows}; {REGS}. {OLDER}" in f.explanation
    assert "num_warps" not in f.explanation  # both use 4 warps


@BOTH
def test_fp64_dot_has_no_wgmma(own: Bundle, swap: bool) -> None:
    """fp64 operands: no warpgroup MMA takes them, so Triton emits ``mma.sync`` (DMMA) on sm90: the reason is
    the operand type (before this test the only reason given was where the operands came from)."""
    f, a, b = one(rule_mma_lowering, own, "f64", "wg4", swap)
    assert (f.severity, f.predicts) == ("major", "f64")
    assert n_ptx(own, "f64", r"\bmma\.sync\.aligned\.\w+\.row\.col\.f64") > 0
    fp64 = "its fp64 operands have no `wgmma` form: fp64 dots use `mma.sync`"
    assert f.title == title("dot 64x64x32 (f64 × f64)", ("f64", "mma_v2"), ("wg4", "wgmma"), fp64, a)
    assert f"What forced it in `f64`: {fp64}; {REGS}. " in f.explanation


def test_same_lowering_is_silent(own: Bundle, mech80: Bundle, compile_suite) -> None:  # type: ignore[no-untyped-def]
    """Both ``mma.sync`` (fp64 vs a 2-warp fp16 dot; tf32x3 vs tf32; bf16x3 vs tf32), or no dot on one side: nothing."""
    assert rule_mma_lowering(context(own, "f64", "wg2")) == []
    assert rule_mma_lowering(context(mech80, "tf32x3", "tf32")) == []
    assert rule_mma_lowering(context(mech80, "relaxed", "eps32")) == []
    assert rule_mma_lowering(context(mech80, "eps32", "tf32")) == []
    b = compile_suite(KINDS + "::bf16x3", ["bf16x3", "tf32"], "sm80")
    assert rule_mma_lowering(context(b, "bf16x3", "tf32")) == []
    assert rule_mma_lowering(context(b, "tf32", "bf16x3")) == []


# ------------------------------------------------------------------------------------------------------------ _why


def _dot(lowering: str, **kw: object) -> DotFact:
    """A dot of the kind named (fields as mechfacts reads them from TTGIR); the rest as in ``wg4``."""
    base = DotFact("acc", "", "f16", "f16", "f32", [64, 64, 32], 2, None, lowering, [], 4, ["shared", "shared"], [],
                   True, None, None, None)  # fmt: skip
    return dataclasses.replace(base, **kw)  # type: ignore[arg-type]


def test_why_fma_reasons() -> None:
    mma = _dot("mma_v2", operands=["registers", "registers"])
    assert _why(_dot("fma", a_type="f32", b_type="f32", precision="ieee"), mma, 80) == [IEEE]
    assert _why(_dot("fma", a_type="f32", b_type="f32", precision="tf32"), mma, 80) == []
    for t in ("f64", "i32", "i64"):
        assert _why(_dot("fma", a_type=t, b_type=t), mma, 80) == [
            f"operand types {t} × {t} have no MMA instruction here"
        ]
    assert _why(_dot("fma", a_type="f16", b_type="f32"), mma, 80) == [
        "operand types f16 × f32 have no MMA instruction here"
    ]
    small = "is smaller than one MMA instruction (16x8x8)"
    assert _why(_dot("fma", shape=[8, 64, 32]), mma, 80) == [f"the tile 8x64x32 {small}"]
    assert _why(_dot("fma", shape=[16, 4, 32]), mma, 80) == [f"the tile 16x4x32 {small}"]
    assert _why(_dot("fma", shape=[16, 8, 4]), mma, 80) == [f"the tile 16x8x4 {small}"]
    assert _why(_dot("fma", shape=[16, 8, 8]), mma, 80) == []
    assert _why(_dot("fma", shape=[]), mma, 80) == []
    # an FMA dot's operands are registers by nature: not a reason; warps and precision are
    assert _why(_dot("fma", operands=["registers", "registers"], warps=1, precision="ieee"), mma, 80) == [
        "`num_warps` is 1 vs 4"
    ]  # the other (fp16) dot has no precision: none is compared (no empty code span)
    assert _why(_dot("fma", warps=1, precision="ieee"), _dot("mma_v2", precision="tf32"), 80) == [
        "`num_warps` is 1 vs 4",
        "input precision `ieee` vs `tf32`",
    ]


def test_why_mma_v2_against_wgmma_and_tcgen05() -> None:
    for high in ("wgmma", "tcgen05"):
        h = _dot(high)
        assert _why(_dot("mma_v2", warps=2), h, 90) == ["`num_warps` = 2: `wgmma` needs a warpgroup (4 warps)"]
        assert _why(_dot("mma_v2", warps=0), h, 90) == []
        assert _why(_dot("mma_v2", rank=3), h, 90) == [
            "it is a batched (3-D) dot: Triton lowers batched dots with `mma.sync`"
        ]
        assert _why(_dot("mma_v2", shape=[32, 64, 32]), h, 90) == [
            "M = 32 is below the 64 rows one warpgroup MMA computes"
        ]
        assert _why(_dot("mma_v2", shape=[64, 64, 32]), h, 90) == []
        for p in ("tf32x3", "bf16x3", "bf16x6"):
            got = _why(_dot("mma_v2", a_type="f32", b_type="f32", precision=p), _dot(high, precision=p), 90)
            assert got == [f"`{p}` splits each product into several MMAs, which Triton emits with `mma.sync`"]
        assert _why(_dot("mma_v2", a_type="f16", precision="tf32x3"), _dot(high, precision="tf32x3"), 90) == []
        assert _why(_dot("mma_v2", a_type="f64", b_type="f64"), h, 90) == [
            f"its fp64 operands have no `{high}` form: fp64 dots use `mma.sync`"
        ]
        assert _why(_dot("mma_v2"), h, 80) == ["sm80 has no `wgmma`"]
        assert _why(_dot("mma_v2"), h, 0) == []
    # against another mma_v2 (or FMA) none of the warpgroup reasons apply
    assert _why(_dot("mma_v2", warps=2, rank=3, shape=[16, 64, 32]), _dot("mma_v2", warps=2), 80) == []


def test_why_wgmma_against_tcgen05_and_shared_reasons() -> None:
    t5 = _dot("tcgen05")
    assert _why(_dot("wgmma", warps=2), t5, 100) == ["`num_warps` = 2"]  # named once
    assert _why(_dot("wgmma", warps=4), t5, 100) == []
    assert _why(_dot("wgmma", warps=2), _dot("wgmma", warps=4), 90) == ["`num_warps` is 2 vs 4"]
    # operands from registers only for an MMA and only when they differ
    regs = _dot("wgmma", operands=["registers", "shared"])
    assert _why(regs, t5, 100) == ["an operand comes from registers instead of shared memory (A: registers, B: shared)"]
    assert (
        _why(_dot("wgmma", operands=["shared", "registers"]), _dot("tcgen05", operands=["shared", "registers"]), 100)
        == []
    )
    assert (
        _why(_dot("wgmma", operands=["shared", "shared"]), _dot("tcgen05", operands=["registers", "shared"]), 100) == []
    )
    # precision named when it differs and no reason already names it
    assert _why(_dot("wgmma", precision="tf32"), _dot("tcgen05", precision="ieee"), 100) == [
        "input precision `tf32` vs `ieee`"
    ]
    assert _why(_dot("wgmma", precision=""), _dot("tcgen05", precision="ieee"), 100) == []
    assert _why(_dot("wgmma", precision="tf32"), _dot("tcgen05", precision=""), 100) == []
    assert _why(_dot("wgmma", warps=4), _dot("tcgen05", warps=0), 100) == []


# ------------------------------------------------------------------------------------------------ mma.blackwell-wait


@BOTH
def test_blackwell_loop_waiting_for_each_mma(loop100: Bundle, swap: bool) -> None:
    """sm100: with one stage the K loop waits on the barrier its own ``tcgen05.mma`` commits to; with three stages
    the wait is on an earlier MMA's barrier. The serial side is predicted; the other's ring of MMA barriers named."""
    f, a, b = one(rule_blackwell_wait, loop100, "dot1", "dot3", swap)
    assert (f.id, f.severity, f.stage, f.predicts) == ("mma.blackwell-wait", "major", "ttgir", "dot1")
    assert f.title == "`tcgen05.mma` is waited on at every iteration in `dot1`"
    ring = max(w.ring for w in context(loop100, "dot3", "dot3").fa.mech.mma_waits)  # type: ignore[union-attr]
    assert ring > 1
    assert f.explanation == (
        "In `dot1`, each loop iteration issues a `tcgen05.mma` (`ttng.tc_gen5_mma`), commits it to an mbarrier and "
        "then waits on that same barrier (`ttng.wait_barrier`): the MMA must finish before the iteration ends, so "
        f"loads for the next step and the MMA do not overlap. In `dot3` the wait is on an earlier MMA's barrier "
        f"({ring} MMA barriers): one MMA stays in flight while the next operands arrive. This is the Blackwell "
        "counterpart of Hopper's `warp_group_dot_wait {pendings = 0}`; Triton keeps an MMA in flight only when the "
        "loop is pipelined (multi-buffered operands, `num_stages` > 1). Results are the same."
    )
    assert ev(f) == [("dot1", "ttgir")] * 2 + [("dot3", "ttgir")] * 2
    for k in range(4):
        assert f.evidence[k].text == at_line(loop100, f, k)[:200]
    assert "ttng.tc_gen5_mma" in f.evidence[0].text and "ttng.wait_barrier" in f.evidence[1].text
    assert "ttng.tc_gen5_mma" in f.evidence[2].text and "ttng.wait_barrier" in f.evidence[3].text


def test_blackwell_wait_silent_elsewhere(loop100: Bundle, mech80: Bundle) -> None:
    assert rule_blackwell_wait(context(loop100, "dot1", "dot1")) == []
    assert rule_blackwell_wait(context(loop100, "dot3", "dot3")) == []
    assert rule_blackwell_wait(context(mech80, "kloop2", "kloop4")) == []  # no tcgen05 on sm80


# ----------------------------------------------------------------------- the same rules on dot and wait facts written out


def _facts(name: str, *dots: DotFact, arch: int = 90) -> VariantFacts:
    return make_facts(name, arch=arch, target=f"sm{arch}", mech=MechFacts(dots=list(dots)))


def test_fma_against_shared_operands_names_no_register_reason() -> None:
    """An FMA dot reads registers by nature: against a ``wgmma`` with shared operands that is not a reason."""
    fma = _dot("fma", a_type="f32", b_type="f32", precision="ieee", operands=["registers", "registers"])
    assert _why(fma, _dot("wgmma", precision="tf32"), 90) == [IEEE]  # the precision is named once


def test_mma_lowering_pairs_dots_in_order_and_skips_unknown() -> None:
    """Two dots per kernel, paired in program order: the first pair lowered alike is skipped, the second reported;
    a dot whose lowering is unknown (no TTGIR) is never compared; a cross-target pair names the target."""
    long = Ref("ttgir", 40, "%acc = tt.dot " + "t" * 300)
    a = _facts("a", _dot("mma_v2"), _dot("mma_v2", ttgir=long))
    b = _facts("b", _dot("mma_v2"), _dot("wgmma"))
    for x, y in ((a, b), (b, a)):
        (f,) = rule_mma_lowering(make_context(x, y))
        assert f.predicts == "a" and f.severity == "major"
    (f,) = rule_mma_lowering(make_context(a, b))
    assert f.evidence[0].text == long.text[:240] and f.evidence[0].line == 40
    assert rule_mma_lowering(make_context(_facts("u", _dot("")), _facts("v", _dot("fma")))) == []
    assert rule_mma_lowering(make_context(_facts("v", _dot("fma")), _facts("u", _dot("")))) == []
    old = _facts("old", _dot("mma_v2"), arch=80)
    new = _facts("new", _dot("wgmma"), arch=90)
    for x, y in ((old, new), (new, old)):
        (g,) = rule_mma_lowering(make_context(x, y))
        assert g.predicts == "old" and g.title.endswith(
            "(sm80 has no `wgmma`)" if x is old else "(in `old`: sm80 has no `wgmma`)"
        )
        kind = "mma_v2" if x is old else "wgmma"
        assert g.title.startswith(f"`acc` dot 64x64x32 (f16 × f16) lowered to {kind} in `{x.name}` vs ")


def _mw(immediate: bool, ring: int, k: int) -> MmaWaitFact:
    wait = Ref("ttgir", 20 + k, "ttng.wait_barrier " + "w" * 250)
    mma = Ref("ttgir", 19 + k, "ttng.tc_gen5_mma " + "m" * 250)
    return MmaWaitFact(immediate, ring, wait, mma)


def test_blackwell_wait_against_a_loop_without_waits() -> None:
    """The serial side against a variant with no MMA wait in a loop: said so, no barrier ring named; long lines are
    cut at 200 characters."""
    serial = make_facts("s", mech=MechFacts(mma_waits=[_mw(True, 1, 0)]))
    none = make_facts("n")
    for x, y in ((serial, none), (none, serial)):
        (f,) = rule_blackwell_wait(make_context(x, y))
        assert f.predicts == "s" and "`n` has no such wait in a loop. " in f.explanation
        assert "MMA barriers" not in f.explanation
        assert [(e.variant, e.line, len(e.text)) for e in f.evidence] == [("s", 19, 200), ("s", 20, 200)]
    ring = make_facts("r", mech=MechFacts(mma_waits=[_mw(False, 3, 5)]))
    (g,) = rule_blackwell_wait(make_context(serial, ring))
    assert "(3 MMA barriers)" in g.explanation
    assert [(e.variant, e.line, len(e.text)) for e in g.evidence] == [
        ("s", 19, 200),
        ("s", 20, 200),
        ("r", 24, 200),
        ("r", 25, 200),
    ]
    assert rule_blackwell_wait(make_context(none, none)) == []


def test_mma_lowering_without_a_known_reason() -> None:
    """``wgmma`` against ``tcgen05`` with the same warps, operands and precision: no reason is claimed (no "What
    forced it", nothing in parentheses)."""
    a = _facts("hopper", _dot("wgmma"), arch=90)
    b = _facts("blackwell", _dot("tcgen05"), arch=100)
    for x, y in ((a, b), (b, a)):
        (f,) = rule_mma_lowering(make_context(x, y))
        assert f.predicts == "hopper" and f.severity == "major"
        assert f.title == title(
            "`acc` dot 64x64x32 (f16 × f16)", ("hopper", "wgmma"), ("blackwell", "tcgen05"), "", x.name
        )
        assert "What forced it" not in f.explanation and "XXXX" not in f.explanation
        assert f.explanation.startswith("`acc` dot 64x64x32 (f16 × f16) is lowered to `wgmma` (Hopper warpgroup MMA")
        assert (
            "(per thread, PTX: `hopper`: 0 `wgmma`; `blackwell`: 0 `tcgen05.mma`). The older instruction"
            in f.explanation
        )


def test_mma_of_an_unknown_version_is_named_not_counted() -> None:
    """An ``nvidia_mma`` layout of a ``versionMajor`` irdiff has no words for (mechfacts calls it ``mma``) against
    ``wgmma``: ranked as ``mma.sync``, it is the lower side; it is named by its kind in a code span and gets no PTX
    count (there is no instruction key to count; it used to print an empty code span)."""
    old = _facts("v1", _dot("mma"), arch=90)
    new = _facts("v3", _dot("wgmma"), arch=90)
    for x, y in ((old, new), (new, old)):
        (f,) = rule_mma_lowering(make_context(x, y))
        assert (f.predicts, f.severity) == ("v1", "major")
        assert f.title == title("`acc` dot 64x64x32 (f16 × f16)", ("v1", "mma"), ("v3", "wgmma"), "", x.name)
        assert f.explanation.startswith(
            "`acc` dot 64x64x32 (f16 × f16) is lowered to `mma` in `v1` and to `wgmma` (Hopper warpgroup MMA, "
            "asynchronous, operands from shared memory) in `v3` (per thread, PTX: `v1`: no PTX instruction known for "
            "`mma`; `v3`: 0 `wgmma`). "
        )
        assert "``" not in f.explanation
    # and the other way round: the unknown kind on the higher side is named the same way
    fma = _facts("f", _dot("fma", a_type="f32", b_type="f32", precision="ieee"), arch=90)
    (g,) = rule_mma_lowering(make_context(old, fma))
    assert g.predicts == "f" and " in `f` and to `mma` in `v1` (per thread, PTX: `f`: 0 `fma.f32`; `v1`: no PTX " in (
        g.explanation
    )
