"""Mechanism families (precision, MMA lowering, atomics and ordering, layout conversions, memory hints, wait depth,
the compiler's own words, counts): each rule from hand-built facts, and each family on real compiles of
``tests/suites/diag_mech.py`` (sm80 and sm90; sm100 for Blackwell), shared across tests by the session fixtures
``mech80``, ``mech90`` and ``loop100`` of ``tests/conftest.py``."""

from __future__ import annotations

import re

import pytest
from diag_helpers import both_orders, diagnose, get, ids, texts

from irdiff.bundle import Bundle
from irdiff.diagnose import Diagnosis, Finding, causal_paths, count_ops
from irdiff.diagnose.facts import Access, Ref
from irdiff.diagnose.mechfacts import (
    AsyncWaitFact,
    AtomicFact,
    ConvertFact,
    DotFact,
    HintFact,
    MechFacts,
    MmaWaitFact,
    compiler_messages,
)
from irdiff.diagnose.model import SEVERITIES
from irdiff.diagnose.rules.atomics import rule_atomic_ordering, rule_cas_loop, rule_convert_shared
from irdiff.diagnose.rules.hints import rule_axis_hints, rule_cache_hints, rule_compiler_messages, rule_wait_depth
from irdiff.diagnose.rules.mma_lowering import rule_blackwell_wait, rule_mma_lowering
from irdiff.diagnose.rules.precision import rule_division, rule_dot_accumulate, rule_dot_input, rule_fp64
from irdiff.diagnose.testing import make_arg, make_context, make_facts

R = Ref("ttir", 1, "op")


def _dot(lowering: str, precision: str = "tf32", warps: int = 4, **kw: object) -> DotFact:
    base: dict[str, object] = {
        "name": "acc",
        "precision": precision,
        "a_type": "f32",
        "b_type": "f32",
        "acc_type": "f32",
        "shape": [64, 64, 32],
        "rank": 2,
        "max_imprecise_acc": None,
        "lowering": lowering,
        "instr_shape": [],
        "warps": warps,
        "operands": ["registers", "registers"],
        "upcast": [],
        "acc_chained": True,
        "ttir": Ref("ttir", 9, "%acc = tt.dot ..."),
        "ttgir": Ref("ttgir", 40, "%acc = tt.dot ..."),
        "python": Ref("python", 12, "acc = tl.dot(a, b)"),
    }
    base.update(kw)
    return DotFact(**base)  # type: ignore[arg-type]


def _orders(x: object, y: object, swap: bool) -> tuple[object, object]:
    return (y, x) if swap else (x, y)


def check_reasons(d: Diagnosis) -> None:
    """No finding prints an empty reason: a title, an explanation, evidence with text, no empty code span."""
    for f in d.findings:
        assert f.title.strip() and f.explanation.strip(), f.id
        assert f.evidence and all(e.text.strip() for e in f.evidence), f.id
        assert "``" not in f.explanation and ": ." not in f.explanation and "()" not in f.title, f.id


# ------------------------------------------------------------------------------------ hand-built facts, per family


@pytest.mark.parametrize("swap", [False, True])
def test_unit_precision_dot_input_and_fma_lowering(swap: bool) -> None:
    ieee = make_facts("ieee", mech=MechFacts(dots=[_dot("fma", "ieee", warps=1)]))
    tf32 = make_facts("tf32", mech=MechFacts(dots=[_dot("mma_v2", "tf32", warps=1)]))
    fa, fb = _orders(ieee, tf32, swap)
    ctx = make_context(fa, fb)  # type: ignore[arg-type]
    (p,) = rule_dot_input(ctx)
    assert p.predicts == "ieee" and "can differ numerically" in p.explanation
    (m,) = rule_mma_lowering(ctx)
    assert m.severity == "critical" and m.predicts == "ieee"
    assert 'input_precision="ieee"' in m.title and "FMA" in m.title


@pytest.mark.parametrize("swap", [False, True])
def test_unit_mma_downgrade_named_by_num_warps(swap: bool) -> None:
    v2 = make_facts("w1", mech=MechFacts(dots=[_dot("mma_v2", warps=1, a_type="f16", b_type="f16")]))
    v3 = make_facts("w4", mech=MechFacts(dots=[_dot("wgmma", warps=4, a_type="f16", b_type="f16")]))
    fa, fb = _orders(v2, v3, swap)
    (m,) = both_orders(rule_mma_lowering, fa, fb)  # type: ignore[arg-type]
    assert m.severity == "major" and m.predicts == "w1"
    assert "`num_warps` = 1" in m.explanation and "warpgroup" in m.explanation


def test_unit_dot_accumulate_and_silence() -> None:
    sep = make_facts("sep", mech=MechFacts(dots=[_dot("mma_v2", acc_chained=False)]))
    chain = make_facts("chain", mech=MechFacts(dots=[_dot("mma_v2", acc_chained=True)]))
    (f,) = both_orders(rule_dot_accumulate, sep, chain)
    assert "`acc += tl.dot(a, b)`" in f.explanation and "Results can differ numerically" in f.explanation
    assert both_orders(rule_dot_accumulate, chain, chain) == []
    assert both_orders(rule_mma_lowering, chain, chain) == []


@pytest.mark.parametrize("swap", [False, True])
def test_unit_fp64_names_argument(swap: bool) -> None:
    f64 = make_facts(
        "f64",
        args=[make_arg("eps", "fp64", reason="float, annotated `tl.float64`: passed as a runtime fp64")],
        counts={"ptx": {"f64 ops": 24}, "sass": {"DFMA": 8}},
        mech=MechFacts(f64_ttir=5, f64_first=R, f64_args=["eps"]),
    )
    f32 = make_facts("f32", args=[make_arg("eps", "fp32")], counts={"ptx": {"f64 ops": 0}})
    fa, fb = _orders(f64, f32, swap)
    (f,) = both_orders(rule_fp64, fa, fb)  # type: ignore[arg-type]
    assert f.predicts == "f64" and "`eps`" in f.explanation and "8 `DFMA`" in f.explanation
    assert "fp64" in texts(f, "f64", "spec") and "Results can differ numerically" in f.explanation


def test_unit_division_keys() -> None:
    full = make_facts("full", counts={"ptx": {"div.full.f32": 8}})
    rn = make_facts("rn", counts={"ptx": {"div.rn.f32": 8}})
    (f,) = both_orders(rule_division, full, rn)
    assert f.predicts == "rn" and "`div.full.f32` 8 in `full` vs 0 in `rn`" in f.explanation


@pytest.mark.parametrize("swap", [False, True])
def test_unit_atomic_ordering_and_cas(swap: bool) -> None:
    acq = make_facts(
        "acq",
        counts={"sass": {"MEMBAR.GPU": 32, "CCTL": 32, "ATOMG": 32}, "ptx": {"atom.add.f32": 32}},
        mech=MechFacts(atomics=[AtomicFact("fadd", "acq_rel", "gpu", "f32", [64, 64], True, R, None)]),
    )
    rel = make_facts(
        "rel",
        counts={"sass": {"RED": 32}, "ptx": {"red.add.f32": 32}},
        mech=MechFacts(atomics=[AtomicFact("fadd", "relaxed", "gpu", "f32", [64, 64], True, R, None)]),
    )
    fa, fb = _orders(acq, rel, swap)
    (f,) = both_orders(rule_atomic_ordering, fa, fb)  # type: ignore[arg-type]
    assert f.predicts == "acq" and "32× `MEMBAR.GPU`" in f.explanation and "sem=acq_rel" in f.title
    cas = make_facts(
        "cas",
        counts={"ptx": {"atom.cas": 32, "atom": 32}},
        mech=MechFacts(atomics=[AtomicFact("fadd", "relaxed", "gpu", "bf16", [64, 64], True, R, None)]),
    )
    (c,) = both_orders(rule_cas_loop, *_orders(cas, rel, swap))  # type: ignore[misc]
    assert c.predicts == "cas" and "`fadd` on `bf16`" in c.title


def test_unit_cas_written_by_user_is_not_emulation() -> None:
    cas = make_facts(
        "cas",
        counts={"ptx": {"atom.cas": 1}},
        mech=MechFacts(atomics=[AtomicFact("cas", "acq_rel", "gpu", "i32", [], False, R, None)]),
    )
    assert both_orders(rule_cas_loop, cas, make_facts("b")) == []


def test_unit_convert_shared_names_scratch_and_reason() -> None:
    cvt = ConvertFact("mma_v2", "blocked", [64, 64], "f32", "tt.dot", ["tt.atomic_rmw"], 8, 8, 3, 128, 16384, R, None)
    a = make_facts("atomic", mech=MechFacts(converts=[cvt]))
    b = make_facts("asm")
    for fa, fb in ((a, b), (b, a)):
        (f,) = both_orders(rule_convert_shared, fa, fb)
        assert f.predicts == "atomic" and "16 KB scratch" in f.title
        assert "an atomic on the MMA result" in f.explanation
    reg = ConvertFact("blocked", "blocked", [64], "f32", "tt.load", ["tt.store"], 0, 0, 0, 0, None, R, None)
    assert both_orders(rule_convert_shared, make_facts("x", mech=MechFacts(converts=[reg])), b) == []


def test_unit_hints_and_messages() -> None:
    h = HintFact("eviction_policy", "evict_first", "tt.load", R, None)
    a = make_facts("h", mech=MechFacts(hints=[h]), counts={"ptx": {"hint L1::evict_first": 2, "createpolicy": 1}})
    (f,) = both_orders(rule_cache_hints, a, make_facts("n"))
    assert "evict_first" in f.title and "`L1::evict_first`" in f.explanation
    acc = make_access(vector_bits=128, contiguity=[8])
    m = make_facts("m", mech=MechFacts(hints=[HintFact("multiple_of", "16", "arith.muli", R, None)]), accesses=[acc])
    narrow = make_facts("n", accesses=[make_access(vector_bits=16, contiguity=[1])])
    (g,) = both_orders(rule_axis_hints, m, narrow)
    assert "`tl.multiple_of`(16)" in g.title
    assert both_orders(rule_axis_hints, m, make_facts("same", accesses=[acc])) == []  # restates a proven fact
    log = "ptxas info    : Used 16 registers\n[tritongpu-coalesce]: warning-free\n/x/semantic.py:9: UserWarning: odd\n  warnings.warn(\n"
    msgs = compiler_messages(log)
    assert [r.line for r in msgs] == [3]
    w = make_facts("w", mech=MechFacts(compiler_messages=msgs))
    (c,) = both_orders(rule_compiler_messages, w, make_facts("n"))
    assert "UserWarning: odd" in c.title and c.evidence[0].stage == "compile" and c.evidence[0].line == 3


@pytest.mark.parametrize("swap", [False, True])
def test_unit_wait_depth_and_blackwell_wait(swap: bool) -> None:
    imm = make_facts("s2", mech=MechFacts(async_waits=[AsyncWaitFact(0, True, R)]))
    deep = make_facts("s4", mech=MechFacts(async_waits=[AsyncWaitFact(4, False, R)]))
    (f,) = both_orders(rule_wait_depth, *_orders(imm, deep, swap))  # type: ignore[misc]
    assert f.predicts == "s2" and "fewer stages can be as fast or faster" in f.explanation
    serial = make_facts("d1", mech=MechFacts(mma_waits=[MmaWaitFact(True, 1, R, R)]))
    ring = make_facts("d3", mech=MechFacts(mma_waits=[MmaWaitFact(False, 2, R, R)]))
    (b,) = both_orders(rule_blackwell_wait, *_orders(serial, ring, swap))  # type: ignore[misc]
    assert b.predicts == "d1" and "pendings = 0" in b.explanation


def make_access(vector_bits: int, contiguity: list[int]) -> Access:
    return Access("load", [1024], "f16", 16, contiguity, [16], [0], 8, vector_bits, "x", "x_ptr", R, R, R)


def test_counts_keys() -> None:
    ptx = (
        "\tdiv.full.f32 %r1, %r2, %r3;\n\tdiv.rn.f32 %r1, %r2, %r3;\n"
        "\t@%p1 atom.global.gpu.acq_rel.add.f32 %r1, [%rd1+0], %r2;\n"
        "\tatom.relaxed.gpu.global.cas.b32 %r1, [%rd1], %r2, %r3;\n"
        "\tred.global.gpu.relaxed.add.v4.f32 [%rd1], {%r1, %r2, %r3, %r4};\n"
        "\tld.global.L1::evict_first.L2::cache_hint.v4.b32 {%r1, %r2, %r3, %r4}, [%rd1], %rd2;\n"
        "\ttcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2, %p1;\n"
        "\tmma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%f1}, {%r1}, {%r2}, {%f2};\n"
    )
    c = count_ops("ptx", ptx)
    assert c["div.full.f32"] == 1 and c["div.rn.f32"] == 1
    assert c["atom.add.f32"] == 1 and c["atom.acq_rel"] == 1 and c["atom.cas"] == 1 and c["atom"] == 2
    assert c["red.add.v4.f32"] == 1 and c["ld.global.v4.b32"] == 1 and c["hint L1::evict_first"] == 1
    assert c["tcgen05.mma"] == 1 and c["tcgen05.mma.f16"] == 1 and c["mma.sync.tf32"] == 1
    sass = (
        "\t@!PT LDS RZ, [RZ] ;\n\tLDS.128 R4, [R2] ;\n\tATOMG.E.ADD.F32.FTZ.RN.STRONG.GPU PT, R1, [R2], R3 ;\n"
        "\tMEMBAR.ALL.GPU ;\n\tATOMG.E.CAS.STRONG.GPU PT, R1, [R2], R4, R5 ;\n\tDFMA R2, R4, R6, R8 ;\n"
    )
    s = count_ops("sass", sass)
    assert s.get("LDS", 0) == 0 and s["LDS.128"] == 1 and s["instructions"] == 5  # padding is not a load
    assert s["ATOMG"] == 2 and s["ATOMG.ADD.F32"] == 1 and s["ATOMG.CAS"] == 1
    assert s["MEMBAR.GPU"] == 1 and s["DFMA"] == 1 and s["f64 ops"] == 1


# ------------------------------------------------------------------------------------ real compiles


def _bundle(request: pytest.FixtureRequest, target: str) -> Bundle:
    return request.getfixturevalue({"sm80": "mech80", "sm90": "mech90"}[target])  # type: ignore[no-any-return]


@pytest.mark.parametrize("target", ["sm80", "sm90"])
@pytest.mark.parametrize("order", [("ieee", "tf32"), ("tf32", "ieee")])
def test_fma_lowering_is_root_of_registers_and_spills(
    request: pytest.FixtureRequest, target: str, order: tuple[str, str]
) -> None:
    d = diagnose(_bundle(request, target), *order)
    check_reasons(d)
    m = get(d, "mma.lowering")
    assert m.severity == "critical" and m.predicts == "ieee" and "FMA" in m.title
    assert "ieee" in m.title and "fma.f32" in texts(m, "ieee", "ptx")
    reg, sp = get(d, "resources.registers"), get(d, "resources.spills")
    assert reg.predicts == sp.predicts == "ieee"
    assert reg.causes[0] == "mma.lowering" and "resources.registers" in sp.causes
    paths, _ = causal_paths(d, "resources.spills")
    assert any(p.index("mma.lowering") < p.index("resources.spills") for p in paths if "mma.lowering" in p)
    assert "precision.dot-input" in get(d, "mma.lowering").causes
    assert "can differ numerically" in get(d, "precision.dot-input").explanation
    # the root (the precision the user chose) is as severe as its worst effect (the FMA lowering), in both orders
    # (here the precision is the constexpr `PREC`: the root is `config.changed`, above `precision.dot-input`)
    up, roots = [m], []
    while up:
        g = up.pop()
        roots += [g] if not g.causes else []
        up += [get(d, c) for c in g.causes]
    assert {r.id for r in roots} == {"config.changed"} and {r.severity for r in roots} == {"critical"}
    assert_roots_at_least_their_effects(d)
    # the lowering is said with the inspected variant first
    a, b = order
    assert m.title.index(f" in `{a}`") < m.title.index(f" in `{b}`")


def assert_roots_at_least_their_effects(d: Diagnosis) -> None:
    """Every finding that starts a chain is at least as severe as every finding the chain reaches."""
    rank = {s: i for i, s in enumerate(SEVERITIES)}
    kids: dict[str, list[Finding]] = {}
    for f in d.findings:
        for c in f.causes:
            kids.setdefault(c, []).append(f)
    for root in (f for f in d.findings if not f.causes and f.id in kids):
        todo, seen = list(kids[root.id]), set()
        while todo:
            g = todo.pop()
            if g.id not in seen:
                seen.add(g.id)
                assert rank[root.severity] >= rank[g.severity], (root.id, root.severity, g.id, g.severity)
                todo.extend(kids.get(g.id, []))


def test_tf32x3_three_mmas(mech80: Bundle) -> None:
    d = diagnose(mech80, "tf32x3", "tf32")
    p = get(d, "precision.dot-input")
    assert p.predicts == "tf32x3" and "three tensor-core products" in p.explanation
    c3, c1 = (mech80.variants[v].text("ptx").count("mma.sync.aligned") for v in ("tf32x3", "tf32"))
    assert c3 == 3 * c1 and "`mma.sync` 384 vs 128" in get(d, "ptx.mma").title
    assert "mma.lowering" not in ids(d)  # both are mma.sync: no downgrade
    assert get(d, "resources.registers").causes[0] == "precision.dot-input"


@pytest.mark.parametrize("target", ["sm80", "sm90"])
def test_atomic_on_mma_result_converts_through_shared(request: pytest.FixtureRequest, target: str) -> None:
    b = _bundle(request, target)
    for a, o in (("atomic", "red_asm"), ("red_asm", "atomic")):
        d = diagnose(b, a, o)
        check_reasons(d)
        f = get(d, "layout.convert-shared")
        assert f.predicts == "atomic" and "16 KB scratch" in f.title  # 64x64 fp32 = 16 KB in one round
        assert "an atomic on the MMA result" in f.explanation and "st.shared" in texts(f, "atomic", "ptx")
        assert "tl.atomic_add" in texts(f, "atomic", "python")


@pytest.mark.parametrize("target", ["sm80", "sm90"])
def test_fp64_scalar(request: pytest.FixtureRequest, target: str) -> None:
    b = _bundle(request, target)
    eps = next(s for s in b.variants["eps64"].specialization if s.name == "eps")
    assert eps.type == "fp64" and "fp64" in eps.reason and "fp32" not in eps.reason
    for order in (("eps64", "eps32"), ("eps32", "eps64")):
        d = diagnose(b, *order)
        check_reasons(d)
        f = get(d, "precision.fp64")
        assert f.predicts == "eps64" and "`eps`" in f.explanation and "`DFMA`" in f.title
        assert "fp64" in texts(f, "eps64", "spec")
        assert "precision.fp64" in get(d, "resources.registers").causes
        assert "spec.type-changed" in f.causes


def test_split_k_sem_counts_fences_not_padding(mech80: Bundle) -> None:
    d = diagnose(mech80, "relaxed", "acq_rel")
    f = get(d, "atomic.ordering")
    assert f.predicts == "acq_rel" and "32× `MEMBAR.GPU`" in f.explanation and "32× `CCTL`" in f.explanation
    for v in ("acq_rel", "relaxed"):
        sass = mech80.variants[v].text("sass")
        real = len(re.findall(r"^(?!.*@!PT)[^\n]*\bLDS\b", sass, re.M))
        counted = sum(n for k, n in count_ops("sass", sass).items() if k.split(".")[0] == "LDS")
        assert counted == real
    assert "sass.instructions" in ids(d) and "atomic.ordering" in get(d, "sass.instructions").causes


def test_bf16_atomic_is_a_cas_loop_on_sm80_only(mech80: Bundle, mech90: Bundle) -> None:
    f = get(diagnose(mech80, "relaxed", "bf16"), "atomic.cas-loop")
    assert f.predicts == "bf16" and "`fadd` on `bf16`" in f.title
    assert "atomic.cas-loop" not in ids(diagnose(mech90, "relaxed", "bf16"))  # sm90 has a native bf16 red


def test_cache_hints_named_with_ptx_effect(mech80: Bundle) -> None:
    f = get(diagnose(mech80, "nohints", "hints"), "hint.cache")
    assert "eviction_policy=evict_first" in f.title and "cache_modifier=cs" in f.title
    assert "`hint L1::evict_first`" in f.explanation and "createpolicy" in f.explanation


def test_compiler_warning_quoted(mech80: Bundle) -> None:
    d = diagnose(mech80, "where_int", "where_bool")
    f = get(d, "compiler.messages")
    assert "non-boolean condition" in f.title and f.evidence[0].stage == "compile"
    assert f.evidence[0].variant == "where_int"


def test_division_modes(mech80: Bundle) -> None:
    f = get(diagnose(mech80, "div_full", "div_rn"), "precision.division")
    assert "`div.full.f32` 8 vs 0" in f.title and "`div.rn.f32` 0 vs 8" in f.title and f.predicts == "div_rn"


def test_two_stage_prefetch_waited_immediately(mech80: Bundle) -> None:
    d = diagnose(mech80, "kloop4", "kloop2")
    f = get(d, "pipeline.wait-depth")
    assert f.predicts == "kloop2" and "waits for the copies it just issued" in f.title
    assert "loop.num-stages" in f.causes


def test_blackwell_wait_and_mma_counts_in_summary(loop100: Bundle) -> None:
    from irdiff.pipeline import build_comparison
    from irdiff.render import stage_summaries

    for order in (("dot1", "dot3"), ("dot3", "dot1")):
        d = diagnose(loop100, *order)
        check_reasons(d)
        f = get(d, "mma.blackwell-wait")
        assert f.predicts == "dot1" and "tc_gen5_mma" in texts(f, "dot1", "ttgir")
    rows = {
        s.stage: {k: (x, y) for k, x, y in s.counts} for s in stage_summaries(build_comparison(loop100, "dot1", "dot3"))
    }
    assert rows["ptx"]["tcgen05.mma"][0] > 0 and rows["sass"]["UTCHMMA"][0] > 0
    assert rows["ttgir"]["ttng.tc_gen5_mma"][0] > 0


def test_load_labelled_by_pointer_name_not_enclosing_assignment(mech80: Bundle) -> None:
    from irdiff.diagnose.facts import extract_facts

    f = extract_facts(mech80.variants["tf32"])  # acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), ...)
    loads = [a.name for a in f.accesses if a.kind == "load"]
    assert loads == ["a_ptrs", "b_ptrs"]
    assert [x.name for x in f.lowered if x.kind == "load"] == ["a_ptrs", "b_ptrs"]


@pytest.mark.parametrize("order", [("stride2", "contig"), ("contig", "stride2")])
def test_accesses_paired_by_pointer_origin_across_tile_shapes(mech80: Bundle, order: tuple[str, str]) -> None:
    d = diagnose(mech80, *order)
    c = get(d, "coalesce.contiguity")
    assert c.predicts == "stride2" and "`x` load" in c.title
    assert "8x64" in c.explanation + c.title and "128" in c.title
    assert "spec.constexpr-changed" in c.causes
    assert get(d, "coalesce.vector-width").predicts == "stride2"


def test_fp8_upcast_before_mma_on_sm80(mech80: Bundle) -> None:
    for order in (("e5_dot", "f16_dot"), ("f16_dot", "e5_dot")):
        f = get(diagnose(mech80, *order), "precision.dot-upcast")
        assert f.predicts == "e5_dot" and "f8E5M2 → f16" in f.title


def test_fp8_max_num_imprecise_acc_on_sm90(mech90: Bundle) -> None:
    d = diagnose(mech90, "fp8_default", "fp8_acc32")
    f = get(d, "precision.dot-accumulate")
    assert f.predicts == "fp8_acc32" and "`max_num_imprecise_acc` is the default" in f.explanation
    assert "Results can differ numerically" in f.explanation
    assert get(d, "resources.registers").causes[0] == "precision.dot-accumulate"


def test_ieee_division_slow_path_calls_are_linked_to_the_division(mech80: Bundle) -> None:
    """``tl.div_rn`` (``div.rn.f32``) makes ptxas call a slow-path subroutine: the SASS ``CALL`` finding names the PTX
    operation on the calling side and links to ``precision.division``, never to 64-bit division or another root."""
    for a, b in (("div_full", "div_rn"), ("div_rn", "div_full")):
        d = diagnose(mech80, a, b)
        f = get(d, "sass.calls")
        assert f.predicts == "div_rn" and "`div_rn` calls" in f.title
        assert "`div.rn.f32` +" in f.explanation and "64-bit" not in f.explanation
        assert f.causes == ["precision.division"]
