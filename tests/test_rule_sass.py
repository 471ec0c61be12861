"""SASS rules (``irdiff/diagnose/rules/sass.py``): subroutine calls and the instruction count, in both orders.

Real compiles (shared compile cache): ``tests/suites/diag_copy.py`` on sm86, ``i64`` (a flat index widened to int64
and split with ``//`` and ``%``: PTX ``div.s64``, which ptxas turns into calls of its division routine) vs ``i32``;
``tests/suites/diag_mech.py`` on sm80, ``div_rn`` (``tl.div_rn``: IEEE ``div.rn.f32``, whose slow path ptxas calls as
a subroutine) vs ``div_full`` (``x / y``: ``div.full.f32``, no call). Edges of the thresholds on hand-built facts.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from diag_helpers import both_orders

from irdiff.diagnose.facts import Ref, VariantFacts, extract_facts
from irdiff.diagnose.rules.sass import rule_sass_calls, rule_sass_instructions
from irdiff.diagnose.testing import make_context, make_facts

SUITES = Path(__file__).parent / "suites"
DIV64 = (
    "They call ptxas' 64-bit integer division routine ({n} `div.s64`/`rem.s64` in PTX): each call is a subroutine of "
    "tens of instructions with a return jump, on the path of every index computation."
)
GENERIC = (
    "ptxas emits such subroutines for operations without a single hardware instruction (e.g. some divisions and math "
    "functions); the SASS listing does not name the routine."
)


@pytest.fixture(scope="module")
def real(compile_suite) -> dict[str, VariantFacts]:  # type: ignore[no-untyped-def]
    copy = compile_suite(str(SUITES / "diag_copy.py"), ["i64", "i32"], "sm86")
    mech = compile_suite(str(SUITES / "diag_mech.py"), ["div_full", "div_rn"], "sm80")
    return {n: extract_facts(v) for b in (copy, mech) for n, v in b.variants.items()}


def test_real_64_bit_division_calls_the_routine(real: dict[str, VariantFacts]) -> None:
    i64, i32 = real["i64"], real["i32"]
    n, ndiv = len(i64.sass_calls), i64.counts["ptx"]["div.s64"] + i64.counts["ptx"]["rem.s64"]
    assert n > 0 and ndiv > 0 and i32.sass_calls == [] and i32.counts["ptx"]["div.s64"] == 0
    for fa, fb in ((i64, i32), (i32, i64)):
        (f,) = rule_sass_calls(make_context(fa, fb))
        assert (f.id, f.severity, f.predicts, f.stage) == ("sass.division-calls", "major", "i64", "sass")
        assert f.title == f"`i64` calls a software routine in SASS ({n} `CALL`)"
        na, nb = len(fa.sass_calls), len(fb.sass_calls)
        assert f.explanation == (
            f"SASS subroutine calls (`CALL` to code that returns with `RET`): {na} in `{fa.name}` vs {nb} in "
            f"`{fb.name}`. " + DIV64.format(n=ndiv)
        )
        # the first two calls of `i64`, with their SASS lines, then each side's instruction count
        calls = [e for e in f.evidence if e.line is not None]
        assert [(e.variant, e.stage, e.line) for e in calls] == [("i64", "sass", r.line) for r in i64.sass_calls[:2]]
        assert all(e.text.startswith("CALL") and e.text.endswith(f"({n} subroutine call(s))") for e in calls)
        counts = [(e.variant, e.text) for e in f.evidence if e.line is None]
        assert counts == [(v.name, f"{v.counts['sass']['instructions']} SASS instructions") for v in (fa, fb)]


def test_real_ieee_division_slow_path(real: dict[str, VariantFacts]) -> None:
    rn, full = real["div_rn"], real["div_full"]
    k = rn.counts["ptx"]["div.rn.f32"]
    assert k > 0 and full.counts["ptx"].get("div.rn.f32", 0) == 0 and full.sass_calls == []
    for fa, fb in ((rn, full), (full, rn)):
        (f,) = rule_sass_calls(make_context(fa, fb))
        assert (f.id, f.severity, f.predicts) == ("sass.calls", "info", "div_rn")
        assert f"`div_rn` has more IEEE-rounded operations in PTX (`div.rn.f32` +{k}): ptxas inlines" in f.explanation
        assert "64-bit integer division" not in f.explanation


def test_real_instruction_count(real: dict[str, VariantFacts]) -> None:
    i64, i32 = real["i64"], real["i32"]
    na, nb = i64.counts["sass"]["instructions"], i32.counts["sass"]["instructions"]
    assert na > 1.1 * nb
    (f,) = both_orders(rule_sass_instructions, i64, i32)
    assert (f.id, f.severity, f.predicts, f.instructions) == ("sass.instructions", "minor", "i64", na - nb)
    assert f.title == f"SASS instruction count {na} in `i64` vs {nb} in `i32` ({na / nb:.2f}×)"
    (r,) = rule_sass_instructions(make_context(i32, i64))
    assert r.title == f"SASS instruction count {nb} in `i32` vs {na} in `i64` ({nb / na:.2f}×)" and r.predicts == "i64"


# ------------------------------------------------------------------------------------------------ hand-built edges


def calls(name: str, n: int, ptx: dict[str, int] | None = None, sass_n: int = 300) -> VariantFacts:
    refs = [Ref("sass", 10 * (i + 1), "CALL.REL.NOINC 0x9c0;") for i in range(n)]
    return make_facts(name, sass_calls=refs, counts={"ptx": ptx or {}, "sass": {"instructions": sass_n}})


def test_calls_equal_in_number_is_no_finding() -> None:
    assert both_orders(rule_sass_calls, calls("a", 2), calls("b", 2)) == []
    assert both_orders(rule_sass_calls, calls("a", 0), calls("b", 0)) == []


def test_calls_of_unknown_routine_and_at_most_two_quoted() -> None:
    (f,) = both_orders(rule_sass_calls, calls("few", 1, sass_n=120), calls("many", 3, sass_n=200))
    assert (f.id, f.severity, f.predicts) == ("sass.calls", "info", "many")
    assert f.title == "`many` calls a software routine in SASS (3 `CALL`)"
    assert f.explanation == (
        "SASS subroutine calls (`CALL` to code that returns with `RET`): 1 in `few` vs 3 in `many`. " + GENERIC
    )
    assert [(e.variant, e.line, e.text) for e in f.evidence] == [
        ("many", 10, "CALL.REL.NOINC 0x9c0;   (3 subroutine call(s))"),
        ("many", 20, "CALL.REL.NOINC 0x9c0;   (3 subroutine call(s))"),
        ("few", None, "120 SASS instructions"),
        ("many", None, "200 SASS instructions"),
    ]


@pytest.mark.parametrize("key", ["div.s64", "rem.s64", "div.u64", "rem.u64"])
def test_each_64_bit_division_counts(key: str) -> None:
    (f,) = both_orders(rule_sass_calls, calls("wide", 2, {key: 3}), calls("narrow", 0))
    assert (f.id, f.severity, f.predicts) == ("sass.division-calls", "major", "wide")
    assert DIV64.format(n=3) in f.explanation


def test_division_counted_on_the_calling_side_only() -> None:
    # the side without calls has 64-bit divisions too (ptxas inlined them): the explanation counts the caller's
    (f,) = both_orders(rule_sass_calls, calls("a", 2, {"div.s64": 2, "rem.u64": 1}), calls("b", 0, {"div.s64": 5}))
    assert f.id == "sass.division-calls" and DIV64.format(n=3) in f.explanation


@pytest.mark.parametrize(
    ("key", "slow"),
    [("div.rn.f32", True), ("sqrt.rn.f64", True), ("rcp.rn.f64", True), ("div.full.f32", False),
     ("sqrt.approx.f32", False), ("div.rn.f16", False), ("add.rn.f32", False)],
)  # fmt: skip
def test_only_ieee_rounded_division_reciprocal_and_root_have_a_slow_path(key: str, slow: bool) -> None:
    (f,) = both_orders(rule_sass_calls, calls("x", 1, {key: 4}), calls("y", 0, {key: 1}))
    assert f.predicts == "x" and f.id == "sass.calls"
    if slow:
        assert f"`x` has more IEEE-rounded operations in PTX (`{key}` +3): ptxas inlines" in f.explanation
    else:
        assert f.explanation.endswith(GENERIC)


def test_slow_path_lists_only_the_operations_the_caller_has_more_of() -> None:
    more = {"div.rn.f32": 4, "sqrt.rn.f32": 2, "rcp.rn.f64": 1}
    less = {"div.rn.f32": 1, "sqrt.rn.f32": 2, "rcp.rn.f64": 3}
    (f,) = both_orders(rule_sass_calls, calls("x", 2, more), calls("y", 1, less))
    assert "(`div.rn.f32` +3): ptxas inlines" in f.explanation


def instr(name: str, n: int, warps: int = 4, **ops: int) -> VariantFacts:
    sass = {"instructions": n, **{k.replace("_", "."): v for k, v in ops.items()}}
    first = {k: Ref("sass", 5 + i, f"{k} R2, [R4.64];") for i, k in enumerate(sass) if k != "instructions"}
    return make_facts(
        name, counts={"sass": sass}, first_lines={"sass": first}, options={"num_warps": warps, "num_stages": 3}
    )


@pytest.mark.parametrize(("na", "nb", "found"), [(112, 100, True), (111, 100, False), (100, 100, False)])
def test_instructions_more_than_ten_percent_of_the_larger(na: int, nb: int, found: bool) -> None:
    got = both_orders(rule_sass_instructions, instr("a", na), instr("b", nb))
    assert len(got) == found
    if found:
        assert got[0].predicts == "a" and got[0].instructions == na - nb and got[0].severity == "minor"


def test_instructions_missing_count_is_no_finding() -> None:
    assert both_orders(rule_sass_instructions, instr("a", 0), instr("b", 100)) == []
    assert both_orders(rule_sass_instructions, make_facts("a"), instr("b", 100)) == []


def test_instructions_name_the_memory_ops_that_differ() -> None:
    a = instr("a", 400, LDG_E_128=4, STG_E_128=2, LDGSTS=6, LDGSTS_E_128=6, HMMA_16816_F32=8, IADD3=50)
    b = instr("b", 200, LDG_E_128=4, STG_E_U16=8, LDGSTS=0, HMMA_16816_F32=4, IADD3=10)
    (f,) = both_orders(rule_sass_instructions, a, b)
    assert f.title == "SASS instruction count 400 in `a` vs 200 in `b` (2.00×)" and f.predicts == "a"
    assert f.explanation == (
        "SASS has 400 instructions in `a` and 200 in `b` (2.00×). Memory/matrix ops that differ: "
        "`HMMA.16816.F32` 8 vs 4; `LDGSTS.E.128` 6 vs 0; `STG.E.128` 2 vs 0; `STG.E.U16` 0 vs 8."
    )
    # per op, its first line in each variant that has it, with the count
    assert [(e.variant, e.line, e.text.split("(")[-1]) for e in f.evidence[2:]] == [
        ("a", a.first_lines["sass"]["HMMA.16816.F32"].line, "8× HMMA.16816.F32)"),
        ("b", b.first_lines["sass"]["HMMA.16816.F32"].line, "4× HMMA.16816.F32)"),
        ("a", a.first_lines["sass"]["LDGSTS.E.128"].line, "6× LDGSTS.E.128)"),
        ("a", a.first_lines["sass"]["STG.E.128"].line, "2× STG.E.128)"),
        ("b", b.first_lines["sass"]["STG.E.U16"].line, "8× STG.E.U16)"),
    ]
    assert [(e.variant, e.text) for e in f.evidence[:2]] == [("a", "400 instructions"), ("b", "200 instructions")]


def test_instructions_at_most_six_ops_quoted_and_eight_named() -> None:
    ops_a = {f"LDG_E_{i}": 2 for i in range(9)}
    (f,) = both_orders(rule_sass_instructions, instr("a", 400, **ops_a), instr("b", 200))
    named = f.explanation.split("differ: ")[1].split("; ")
    assert len(named) == 8 and len(f.evidence) == 2 + 6


def test_instructions_with_other_num_warps_predict_nothing() -> None:
    (f,) = both_orders(rule_sass_instructions, instr("w8", 200, warps=8), instr("w4", 400, warps=4))
    assert (f.severity, f.predicts) == ("info", None)
    assert f.explanation.endswith("so they do not compare directly.")
    assert f.explanation.startswith("SASS has 200 instructions in `w8` and 400 in `w4` (0.50×).")


def test_calls_evidence_when_a_listing_has_no_instruction_count() -> None:
    # no SASS counts at all on one side, counts without the total on the other: both quote 0 instructions
    a = make_facts("a", sass_calls=[Ref("sass", 9, "CALL.REL.NOINC 0x100;")], counts={"sass": {"CALL": 1}})
    b = make_facts("b")
    (f,) = both_orders(rule_sass_calls, a, b)
    assert [(e.variant, e.stage, e.line, e.text) for e in f.evidence] == [
        ("a", "sass", 9, "CALL.REL.NOINC 0x100;   (1 subroutine call(s))"),
        ("a", "sass", None, "0 SASS instructions"),
        ("b", "sass", None, "0 SASS instructions"),
    ]


def test_instructions_exactly_ten_percent_apart_is_no_finding() -> None:
    assert both_orders(rule_sass_instructions, instr("a", 100), instr("b", 90)) == []  # 10 = 0.1 x 100
    (f,) = both_orders(rule_sass_instructions, instr("a", 100), instr("b", 89))
    assert (f.stage, f.predicts) == ("sass", "a")


def test_instructions_without_memory_op_differences_say_only_the_counts() -> None:
    (f,) = both_orders(rule_sass_instructions, instr("a", 400, IADD3=50), instr("b", 200, IADD3=10))
    assert f.explanation == "SASS has 400 instructions in `a` and 200 in `b` (2.00×)."
    assert [(e.variant, e.stage, e.line, e.text) for e in f.evidence] == [
        ("a", "sass", None, "400 instructions"),
        ("b", "sass", None, "200 instructions"),
    ]
    # no first lines recorded: the counts are still compared and named, without lines
    a = make_facts("a", counts={"sass": {"instructions": 400, "LDS.U16": 4}})
    b = make_facts("b", counts={"sass": {"instructions": 200}})
    (g,) = both_orders(rule_sass_instructions, a, b)
    assert g.explanation.endswith("Memory/matrix ops that differ: `LDS.U16` 4 vs 0.") and len(g.evidence) == 2


@pytest.mark.parametrize("op", ["LDS.U16", "STS.128", "LDSM.16.M88.4", "HGMMA.64x64x16.F32", "UTMALDG.2D", "LDG.E"])
def test_instructions_name_each_kind_of_memory_or_matrix_op(op: str) -> None:
    a = instr("a", 400, **{op.replace(".", "_"): 3})
    (f,) = both_orders(rule_sass_instructions, a, instr("b", 200))
    assert f"`{op}` 3 vs 0" in f.explanation
    assert f.evidence[2].variant == "a" and f.evidence[2].text.endswith(f"(3× {op})")


def test_instructions_compare_a_missing_op_as_zero() -> None:
    # an op counted 0 on one side and absent on the other does not differ; counted 1 vs absent does
    a = instr("a", 400, LDS_U16=0, STS_128=1)
    b = instr("b", 200)
    (f,) = both_orders(rule_sass_instructions, a, b)
    assert f.explanation.endswith("Memory/matrix ops that differ: `STS.128` 1 vs 0.")
    # the line of an op counted 0 is not quoted
    assert [e.text.split("(")[-1] for e in f.evidence[2:]] == ["1× STS.128)"]
    (r,) = both_orders(rule_sass_instructions, b, a)
    assert r.explanation.endswith("Memory/matrix ops that differ: `STS.128` 0 vs 1.")


def test_slow_path_names_every_operation_the_caller_has_more_of_even_one() -> None:
    more = {"div.rn.f32": 4, "sqrt.rn.f32": 2}
    less = {"div.rn.f32": 1, "sqrt.rn.f32": 1}
    (f,) = both_orders(rule_sass_calls, calls("x", 2, more), calls("y", 1, less))
    assert f.explanation == (
        "SASS subroutine calls (`CALL` to code that returns with `RET`): 2 in `x` vs 1 in `y`. `x` has more "
        "IEEE-rounded operations in PTX (`div.rn.f32` +3, `sqrt.rn.f32` +1): ptxas inlines their fast path and calls "
        "a subroutine for the slow path (subnormal or very large operands), so each adds a `CALL` and a branch but "
        "the subroutine runs only for those operands."
    )
