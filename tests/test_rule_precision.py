"""The precision rules (``irdiff/diagnose/rules/precision.py``) on the facts of real compiles, in both orders:
``precision.dot-input``, ``precision.dot-accumulate``, ``precision.dot-upcast``, ``precision.fp64``,
``precision.division`` and ``precision.math``.

Kernels (sm80 unless named, from the shared compile cache): ``tests/suites/precision_kinds.py`` (``chained`` /
``separate``: ``tl.dot(x, w, acc)`` vs ``acc += tl.dot(x, w)``, which Triton folds into the same ``tt.dot``; ``gain64`` / ``gain32``: a scalar ``g: tl.float64``
used only in scalar arithmetic; ``sqrt_rn`` / ``sqrt_fast``; ``hdiv64`` / ``hdiv32``: fp64 vs fp32 ``/``),
``tests/suites/diag_mech.py`` (``tf32`` / ``ieee`` / ``tf32x3`` dots, ``eps64`` / ``eps32``, ``div_rn`` / ``div_full``,
``e5_dot`` / ``f16_dot``; on sm90 ``fp8_default`` / ``fp8_acc32``) and ``tests/suites/kinds/kinds.py`` (``notf32``:
``allow_tf32=False``; ``bf16x3``; ``libexp``: ``libdevice.exp`` vs ``tl.exp``; ``acc16``: ``out_dtype=tl.float16``).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from irdiff.diagnose.facts import extract_facts
from irdiff.diagnose.mechfacts import MechFacts, extract_mech_facts
from irdiff.diagnose.model import Finding
from irdiff.diagnose.params import pair_params
from irdiff.diagnose.rules.common import Context
from irdiff.diagnose.rules.precision import (
    math_modes_words,
    mech,
    pair_dots,
    rule_division,
    rule_dot_accumulate,
    rule_dot_input,
    rule_dot_upcast,
    rule_fp64,
    rule_math,
)
from irdiff.diagnose.testing import make_facts
from irdiff.diagnose.texts import stage_text

SUITES = Path(__file__).parent / "suites"
OWN = str(SUITES / "precision_kinds.py")
MECH = str(SUITES / "diag_mech.py")
KINDS = str(SUITES / "kinds" / "kinds.py")
ALL = (rule_dot_input, rule_dot_accumulate, rule_dot_upcast, rule_fp64, rule_division, rule_math)

# Extracted once per process (mutation runs fork the test process per mutant: the facts are inputs, not under test).
_MEMO: dict[tuple[str, str], Context] = {}
_REQ = {
    "own": (OWN, ["chained", "separate", "gain64", "gain32", "sqrt_rn", "sqrt_fast", "hdiv64", "hdiv32"], "sm80"),
    "mech": (MECH, ["tf32", "ieee", "tf32x3", "eps64", "eps32", "div_full", "div_rn", "e5_dot", "f16_dot"], "sm80"),
    "mech90": (MECH, ["fp8_default", "fp8_acc32"], "sm90"),
    "notf32": (KINDS + "::notf32", ["notf32", "default"], "sm80"),
    "bf16x3": (KINDS + "::bf16x3", ["bf16x3", "tf32"], "sm80"),
    "libexp": (KINDS + "::libexp", ["libdevice", "fast"], "sm80"),
    "acc16": (KINDS + "::acc16", ["f16", "f32"], "sm80"),
}


@pytest.fixture(scope="module")
def pair(compile_suite):  # type: ignore[no-untyped-def]
    """``pair(group, a, b)``: the :class:`Context` of variant ``a`` against ``b`` as ``irdiff.diagnose`` builds it
    (facts, mechanism facts, parameters paired by role)."""

    def make(group: str, a: str, b: str) -> Context:
        if (a, b) not in _MEMO:
            suite, variants, target = _REQ[group]
            bundle = compile_suite(suite, variants, target)
            va, vb = bundle.compiled_variant(a), bundle.compiled_variant(b)
            fa, fb = extract_facts(va), extract_facts(vb)
            fa.mech, fb.mech = extract_mech_facts(va), extract_mech_facts(vb)
            p = pair_params(va.specialization, stage_text(va, "ttir"), vb.specialization, stage_text(vb, "ttir"))
            fa.peer_names, fb.peer_names = p.aliases("a"), p.aliases("b")
            _MEMO[(a, b)] = Context(a, b, fa, fb, {}, {}, p)
        return _MEMO[(a, b)]

    return make


def both(rule, pair, group: str, a: str, b: str) -> tuple[list[Finding], list[Finding]]:  # type: ignore[no-untyped-def]
    return rule(pair(group, a, b)), rule(pair(group, b, a))


def ev(f: Finding) -> list[tuple[str, str]]:
    return [(e.variant, e.stage) for e in f.evidence]


TAIL_INPUT = (
    "Results can differ numerically: tf32 keeps about 3 significant decimal digits of each input, so products differ "
    "from fp32 (ieee) in the 4th digit; tf32x3 is close to fp32. The precision is an argument of `tl.dot` "
    "(`input_precision=`, or `allow_tf32=` in older code; the default is `tf32` for fp32 inputs, set by "
    "`TRITON_F32_DEFAULT` or the backend option `default_dot_input_precision`)."
)
TF32 = (
    "`tf32`: each fp32 input is rounded to tf32 (10-bit mantissa, about 3 decimal digits) and multiplied on the tensor "
    "cores, accumulating in fp32"
)
IEEE = (
    "`ieee`: exact fp32 products (Triton lowers an fp32 dot with ieee precision to FMA instructions; NVIDIA tensor "
    "cores have no fp32 mode)"
)


# ------------------------------------------------------------------------------------------ precision.dot-input


def test_dot_input_ieee_slower_than_tf32_both_orders(pair) -> None:  # type: ignore[no-untyped-def]
    for a, b in (("ieee", "tf32"), ("tf32", "ieee")):
        (f,) = rule_dot_input(pair("mech", a, b))
        prec = {"ieee": "ieee", "tf32": "tf32"}
        words = {"ieee": IEEE, "tf32": TF32}
        label = "`acc` dot 64x64x32 (f32 × f32)"
        assert (f.id, f.severity, f.stage, f.predicts, f.remedy) == (
            "precision.dot-input",
            "major",
            "ttir",
            "ieee",
            None,
        )
        assert f.title == (
            f"{label}: input precision `{prec[a]}` in `{a}` vs `{prec[b]}` in `{b}` (results can differ numerically)"
        )
        assert f.explanation == (
            f"{label} uses input precision `{prec[a]}` in `{a}` and `{prec[b]}` in `{b}`. {words[a]}; {words[b]}. "
            + TAIL_INPUT
        )
        assert ev(f) == [(a, "ttir"), (b, "ttir"), (a, "python"), (b, "python")]
        assert ("inputPrecision = tf32" in f.evidence[0].text) == (a == "tf32")
        assert all("input_precision=PREC" in e.text for e in f.evidence[2:])


def test_dot_input_three_products_and_bf16x3(pair) -> None:  # type: ignore[no-untyped-def]
    """tf32x3 (three MMAs) is slower than tf32; bf16x3 (three bf16 products) likewise, in both orders."""
    for f in (
        *both(rule_dot_input, pair, "mech", "tf32x3", "tf32")[0],
        *both(rule_dot_input, pair, "mech", "tf32", "tf32x3")[0],
    ):
        assert (
            f.predicts == "tf32x3" and "three tensor-core products are summed (hi·hi + hi·lo + lo·hi)" in f.explanation
        )
    x, y = both(rule_dot_input, pair, "bf16x3", "bf16x3", "tf32")
    for (f,) in (x, y):
        assert f.predicts == "bf16x3"
        assert "`bf16x3`: three bf16 products per fp32 product" in f.explanation and TF32 in f.explanation
        assert "allow_tf32" not in f.explanation.split("older code")[1]
        assert f.title.startswith("dot 64x64x64 (f32 × f32): input precision `")  # an unnamed dot: no label


def test_dot_input_allow_tf32_spelling_named(pair) -> None:  # type: ignore[no-untyped-def]
    """``allow_tf32=False`` is TTIR's ieee: the finding says which variant spells it the deprecated way."""
    for a, b in (("notf32", "default"), ("default", "notf32")):
        (f,) = rule_dot_input(pair("notf32", a, b))
        assert f.predicts == "notf32"
        assert f.explanation.endswith(
            TAIL_INPUT + " `notf32` spells it `allow_tf32=` (deprecated): `allow_tf32=False` means `ieee`, `True` or "
            "unset means `tf32`."
        )
        assert [e.variant for e in f.evidence if e.stage == "python"] == [a, b]
        assert "allow_tf32=False" in [e for e in f.evidence if e.variant == "notf32" and e.stage == "python"][0].text


def test_dot_input_silent_without_a_precision_difference(pair) -> None:  # type: ignore[no-untyped-def]
    """fp16 dots carry no input precision; equal precisions; an unknown precision ranks like tf32x3."""
    assert both(rule_dot_input, pair, "own", "chained", "separate") == ([], [])
    assert both(rule_dot_input, pair, "mech", "e5_dot", "f16_dot") == ([], [])
    c = pair("mech", "tf32x3", "tf32")
    assert rule_dot_input(Context("x", "y", c.fa, c.fa)) == []
    (dx,), (dy,) = c.fa.mech.dots, c.fb.mech.dots  # type: ignore[union-attr]
    odd = dataclasses.replace(c.fa, mech=MechFacts(dots=[dataclasses.replace(dx, precision="bf16x9")]))
    three = c.fa
    for ctx in (Context("odd", "three", odd, three), Context("three", "odd", three, odd)):
        (f,) = rule_dot_input(ctx)
        assert f.predicts is None  # same rank: neither is slower
        # an unknown precision is quoted as it is, without words
        assert (
            ". bf16x9; `tf32x3`: each input" in f.explanation
            or "close to fp32 accuracy for 3× the MMA instructions; bf16x9. " in f.explanation
        )
    for other in ("tf32", "ieee", "bf16x6"):
        o = dataclasses.replace(c.fb, mech=MechFacts(dots=[dataclasses.replace(dy, precision=other)]))
        (f,) = rule_dot_input(Context("odd", "o", odd, o))
        assert f.predicts == {"tf32": "odd", "ieee": "o", "bf16x6": "o"}[other]
        (r,) = rule_dot_input(Context("o", "odd", o, odd))
        assert r.predicts == f.predicts
    six = dataclasses.replace(c.fb, mech=MechFacts(dots=[dataclasses.replace(dy, precision="bf16x6")]))
    (f,) = rule_dot_input(Context("six", "three", six, three))
    assert f.predicts == "six" and "`bf16x6`: six bf16 products per fp32 product" in f.explanation


def test_dots_paired_in_program_order_only_when_counts_match(pair) -> None:  # type: ignore[no-untyped-def]
    c = pair("mech", "tf32", "ieee")
    (x,), (y,) = mech(c.fa).dots, mech(c.fb).dots
    assert pair_dots(c.fa, c.fb) == [(x, y)]
    two = dataclasses.replace(c.fb, mech=MechFacts(dots=[y, y]))
    assert pair_dots(c.fa, two) == [] and rule_dot_input(Context("tf32", "two", c.fa, two)) == []
    assert mech(make_facts("bare")) == MechFacts()
    # the first differing pair is reported once
    fa2 = dataclasses.replace(c.fa, mech=MechFacts(dots=[x, x]))
    (f,) = rule_dot_input(Context("tf32", "two", fa2, two))
    assert f.predicts == "two"


# ------------------------------------------------------------------------------------- precision.dot-accumulate


def test_accumulate_separate_add_folded_by_triton(pair) -> None:  # type: ignore[no-untyped-def]
    """My kernel: ``acc += tl.dot(x, w)`` vs ``tl.dot(x, w, acc)``. Triton's TTIR combine folds the add into the dot
    (``tt.dot %x, %w, %acc``), so both dots are chained and the rule says nothing (no difference the compiler
    removed). A dot whose product is added separately (``arith.addf`` on the result) is named as such, in both
    orders, with the chained side named as the one that passes the accumulator in."""
    c = pair("own", "separate", "chained")
    (x,), (y,) = mech(c.fa).dots, mech(c.fb).dots
    assert x.acc_chained and y.acc_chained and "%acc_2" in x.ttir.text  # type: ignore[union-attr]
    assert both(rule_dot_accumulate, pair, "own", "separate", "chained") == ([], [])
    sep = dataclasses.replace(c.fa, mech=MechFacts(dots=[dataclasses.replace(x, acc_chained=False)]))
    for a, b, fa, fb in (("separate", "chained", sep, c.fb), ("chained", "separate", c.fb, sep)):
        (f,) = rule_dot_accumulate(Context(a, b, fa, fb))
        label = "`acc` dot 64x64x32 (f16 × f16)"
        assert (f.id, f.severity, f.stage, f.predicts) == ("precision.dot-accumulate", "minor", "ttir", None)
        assert f.title == f"{label} accumulates differently in `{a}` and `{b}`"
        assert f.explanation == (
            f"{label}: `chained` passes the accumulator into the dot (`tl.dot(a, b, acc)`: the MMA adds into it), "
            "`separate` adds the product afterwards (`acc += tl.dot(a, b)`: a zero-initialised MMA result plus a "
            "separate elementwise `arith.addf`, one more register tile and add per iteration; the sums are rounded in "
            "a different order, so results can differ in the last bits). Results can differ numerically."
        )
        assert ev(f) == [(a, "ttir"), (b, "ttir"), (a, "python"), (b, "python")]
        py = {e.variant: e.text for e in f.evidence if e.stage == "python"}
        assert py == {"separate": "acc += tl.dot(x, w)", "chained": "acc = tl.dot(x, w, acc)"}


def test_accumulate_output_type_both_orders(pair) -> None:  # type: ignore[no-untyped-def]
    for a, b in (("f16", "f32"), ("f32", "f16")):
        (f,) = rule_dot_accumulate(pair("acc16", a, b))
        assert (
            f.predicts is None
            and f.title == f"`acc` dot 64x64x32 (f16 × f16) accumulates in `{a}` in `{a}` vs `{b}` in `{b}`"
        )
        assert f.explanation == (
            f"`acc` dot 64x64x32 (f16 × f16): the accumulator/output type is `{a}` in `{a}` and `{b}` in `{b}` "
            "(`out_dtype=`): a narrower accumulator rounds every partial sum. Results can differ numerically."
        )
        assert "out_dtype=tl.float16" in [e.text for e in f.evidence if e.variant == "f16" and e.stage == "python"][0]


def test_accumulate_fp8_imprecise_acc_both_orders(pair) -> None:  # type: ignore[no-untyped-def]
    """sm90 fp8: the default accumulates the whole K imprecisely; 32 promotes every 32 products (slower)."""
    words = {"fp8_default": "the default (no promotion: the whole K in the fast accumulator)", "fp8_acc32": "32"}
    for a, b in (("fp8_default", "fp8_acc32"), ("fp8_acc32", "fp8_default")):
        (f,) = rule_dot_accumulate(pair("mech90", a, b))
        assert f.predicts == "fp8_acc32"
        assert f.explanation == (
            f"`acc` dot 64x64x64 (f8E4M3FN × f8E4M3FN): `max_num_imprecise_acc` is {words[a]} in `{a}` and {words[b]} "
            f"in `{b}`: an fp8 `wgmma` accumulates that many products in the tensor core's reduced-precision "
            "accumulator before Triton adds them into a separate fp32 accumulator (a smaller value means more "
            "promotions: more accurate, more instructions and registers). Results can differ numerically."
        )
        assert ev(f) == [(a, "ttir"), (b, "ttir"), (a, "python"), (b, "python")]


def test_accumulate_limits_compared_by_size(pair) -> None:  # type: ignore[no-untyped-def]
    """Two explicit limits: the smaller one promotes more often (slower), in both orders; equal dots say nothing."""
    c = pair("mech90", "fp8_default", "fp8_acc32")
    (d,) = mech(c.fb).dots
    f16 = dataclasses.replace(c.fb, mech=MechFacts(dots=[dataclasses.replace(d, max_imprecise_acc=16)]))
    for ctx in (Context("acc16", "acc32", f16, c.fb), Context("acc32", "acc16", c.fb, f16)):
        (f,) = rule_dot_accumulate(ctx)
        assert f.predicts == "acc16"
    assert rule_dot_accumulate(Context("a", "b", c.fb, c.fb)) == []
    assert both(rule_dot_accumulate, pair, "mech", "tf32", "ieee") == ([], [])


def test_accumulate_several_differences_in_one_sentence(pair) -> None:  # type: ignore[no-untyped-def]
    c = pair("own", "chained", "separate")
    (y,) = mech(c.fb).dots
    y2 = dataclasses.replace(
        c.fb, mech=MechFacts(dots=[dataclasses.replace(y, acc_type="f16", max_imprecise_acc=8, acc_chained=False)])
    )
    (f,) = rule_dot_accumulate(Context("chained", "sep16", c.fa, y2))
    parts = f.explanation.split("; ")
    assert parts[0].startswith("`acc` dot 64x64x32 (f16 × f16): `max_num_imprecise_acc` is the default")
    assert parts[1].startswith("the accumulator/output type is `f32` in `chained` and `f16` in `sep16`")
    assert parts[2].startswith("`chained` passes the accumulator into the dot")
    assert f.predicts == "sep16"


# ---------------------------------------------------------------------------------------- precision.dot-upcast


def test_fp8e5_upcast_on_sm80_both_orders(pair) -> None:  # type: ignore[no-untyped-def]
    for a, b in (("e5_dot", "f16_dot"), ("f16_dot", "e5_dot")):
        (f,) = rule_dot_upcast(pair("mech", a, b))
        label = "`acc` dot 64x64x64 (f8E5M2 × f8E5M2)"
        assert (f.id, f.severity, f.stage, f.predicts) == ("precision.dot-upcast", "major", "ttgir", "e5_dot")
        assert f.title == f"`e5_dot` upcasts the operands of {label} before the MMA (f8E5M2 → f16)"
        assert f.explanation == (
            f"In `e5_dot` the operands of {label} are converted (f8E5M2 → f16) right before the MMA; in `f16_dot` they "
            "are used as loaded. An upcast means the MMA runs at the wider type's rate (fp16 tensor cores run at half "
            "the fp8 rate on Hopper/Blackwell) and the conversion costs instructions and registers; values are exact "
            "after an upcast, so results differ only through the accumulation."
        )
        (d,) = mech(pair("mech", "e5_dot", "f16_dot").fa).dots
        assert ev(f) == [("e5_dot", "ttgir")] and f.evidence[0].line == d.ttgir.line  # type: ignore[union-attr]
        assert f.evidence[0].text == d.ttgir.text[:220] and len(d.ttgir.text) > 220  # type: ignore[union-attr]
    assert both(rule_dot_upcast, pair, "mech", "tf32", "ieee") == ([], [])


def test_upcast_quoted_from_ttir_without_ttgir(pair) -> None:  # type: ignore[no-untyped-def]
    c = pair("mech", "e5_dot", "f16_dot")
    (d,) = mech(c.fa).dots
    no = dataclasses.replace(c.fa, mech=MechFacts(dots=[dataclasses.replace(d, ttgir=None)]))
    (f,) = rule_dot_upcast(Context("f16_dot", "e5_dot", c.fb, no))
    assert ev(f) == [("e5_dot", "ttir")] and f.evidence[0].text == d.ttir.text[:220]  # type: ignore[union-attr]


# -------------------------------------------------------------------------------------------- precision.fp64


def test_fp64_argument_promotes_tensor_math_both_orders(pair) -> None:  # type: ignore[no-untyped-def]
    """``eps: tl.float64`` meets the fp32 row: per-element fp64 (major), ``eps`` named with both sides' spec lines."""
    c = pair("mech", "eps64", "eps32")
    f64 = c.fa
    n_ptx, dfma, f2f = f64.counts["ptx"]["f64 ops"], f64.counts["sass"]["DFMA"], f64.counts["sass"]["F2F.F64"]
    assert mech(f64).f64_tensor > 0
    for a, b in (("eps64", "eps32"), ("eps32", "eps64")):
        (f,) = rule_fp64(pair("mech", a, b))
        assert (f.id, f.severity, f.stage, f.predicts, f.instructions) == (
            "precision.fp64",
            "major",
            "ttir",
            "eps64",
            None,
        )
        assert f.title == f"`eps64` computes in fp64 ({n_ptx} PTX f64 instructions, {dfma} `DFMA`, {f2f} `F2F.F64`)"
        assert f.explanation == (
            f"`eps64` computes in fp64: {mech(f64).f64_ttir} TTIR ops with `f64` results, {n_ptx} PTX `.f64` "
            f"instructions and {dfma} `DFMA`, {f2f} `F2F.F64` in SASS; `eps32` has 0 and 0. In `eps64` the fp64 "
            "argument `eps` promotes the arithmetic it meets to fp64 (Triton's type promotion: fp32 × fp64 → fp64), "
            "with conversions (`cvt.f64.f32`/`F2F`) in and out. fp64 throughput is a small fraction of fp32 on most "
            "GPUs (1/64 on consumer parts; 1/2 on A100/H100) and every fp64 value takes two registers. Results can "
            "differ numerically (fp64 intermediates are rounded to fp32 once, at the end). Remedy: pass the scalar as "
            "fp32 (drop a `tl.float64` annotation) or cast it inside the kernel (`eps.to(tl.float32)`)."
        )
        assert ev(f) == [
            ("eps64", "ttir"),
            ("eps64", "python"),
            ("eps64", "spec"),
            ("eps32", "spec"),
            ("eps64", "ptx"),
            ("eps64", "sass"),
        ]
        assert f.evidence[2].text.startswith("eps: fp64 — float, annotated `tl.float64`")
        assert f.evidence[3].text.startswith("eps: fp32 — float")
        assert f.evidence[4].text.endswith(f"({n_ptx}× f64 ops)") and f.evidence[5].text.endswith(f"({dfma}× DFMA)")


def test_fp64_scalar_only_is_minor_and_bounded(pair) -> None:  # type: ignore[no-untyped-def]
    """My kernel: ``g: tl.float64`` only in ``g * g + 0.5``, cast to fp32 before the row. No TTIR tensor is f64, so
    the finding is minor and bounded by its own instructions, even when SASS computes the scalar with ``DFMA`` (the rule once
    ranked this major, as if the row were computed in fp64)."""
    g = pair("own", "gain64", "gain32").fa
    m = mech(g)
    assert (m.f64_tensor, m.f64_args) == (0, ["g"]) and m.f64_ttir > 0
    sass = g.counts.get("sass", {})
    ptx, f2f = g.counts["ptx"]["f64 ops"], sass.get("F2F.F64", 0)
    math = sum(sass.get(k, 0) for k in ("DFMA", "DMUL", "DADD"))  # ptxas's choice (one DFMA with Triton 3.9.0's)
    for a, b in (("gain64", "gain32"), ("gain32", "gain64")):
        (f,) = rule_fp64(pair("own", a, b))
        assert (f.severity, f.predicts, f.instructions) == ("minor", "gain64", ptx + f2f + math)
        scalars = "Only scalars are fp64 here (no TTIR tensor has an `f64` element type"
        if math:
            scalars += f"; the {math} SASS fp64 instruction{'s' if math > 1 else ''} work on scalars"
        assert (
            scalars + "): a few instructions per program, the per-element arithmetic stays fp32, so the cost is "
            in (f.explanation)
        )
        assert "per-element arithmetic stays fp32, so the cost is negligible." in f.explanation
        assert "fp64 throughput" not in f.explanation
        assert "the fp64 argument `g` promotes the arithmetic it meets" in f.explanation
        assert re.match(r"%s(_\d+)? = arith\.mulf %g, %g : f64", f.evidence[0].text), f.evidence[0].text
        assert ("gain32", "spec") in ev(f)


def test_fp64_value_without_an_argument(pair) -> None:  # type: ignore[no-untyped-def]
    """``x.to(tl.float64) / d``: no fp64 parameter; the promotion is named as a value, no spec evidence."""
    for a, b in (("hdiv64", "hdiv32"), ("hdiv32", "hdiv64")):
        (f,) = rule_fp64(pair("own", a, b))
        assert f.severity == "major" and f.predicts == "hdiv64"
        assert "In `hdiv64` an fp64 value (a tensor or a constant) promotes the arithmetic it meets to fp64" in (
            f.explanation
        )
        assert "spec" not in {e.stage for e in f.evidence}
        h = pair("own", "hdiv64", "hdiv32").fa
        sass = [f"{h.counts['sass'][k]} `{k}`" for k in ("DFMA", "DMUL", "DADD", "F2F.F64") if h.counts["sass"].get(k)]
        assert (
            f.title
            == f"`hdiv64` computes in fp64 ({h.counts['ptx']['f64 ops']} PTX f64 instructions, {', '.join(sass)})"
        )
        assert [e.stage for e in f.evidence] == ["ttir", "python", "ptx", "sass", "sass"][: len(f.evidence)]


def test_fp64_argument_pairing_by_role() -> None:
    """The other side's partner comes from the role pairing: renamed, missing, or the same name."""
    from irdiff.diagnose.facts import Ref
    from irdiff.diagnose.testing import make_arg

    r = Ref("ttir", 3, "%s = arith.mulf %g, %g : f64")
    m = MechFacts(f64_ttir=2, f64_first=r, f64_args=["g", "h"])
    fa = make_facts(
        "wide",
        args=[make_arg("g", "fp64", reason="fp64 g"), make_arg("h", "fp64", reason="fp64 h")],
        counts={"ptx": {"f64 ops": 2}},
        mech=m,
    )
    fb = make_facts("narrow", args=[make_arg("scale", "fp32", reason="fp32 scale")], counts={"ptx": {}})
    fb.peer_names = {"g": "scale", "h": None}
    for ctx in (Context("wide", "narrow", fa, fb), Context("narrow", "wide", fb, fa)):
        (f,) = rule_fp64(ctx)
        assert (
            "the fp64 arguments `g` (paired by role with `scale` of `narrow`), `h` (a parameter only `wide` has) "
            "promote the arithmetic it meets to fp64" in f.explanation
        )
        assert [e.text for e in f.evidence if e.stage == "spec"] == [
            "g: fp64 — fp64 g",
            "scale: fp32 — fp32 scale",
            "h: fp64 — fp64 h",
        ]
        assert f.severity == "minor" and f.instructions == 2
        assert f.explanation.count("Only scalars are fp64 here (no TTIR tensor has an `f64` element type):") == 1
    fb.peer_names = {}
    fb.args = [make_arg("g", "fp32", reason="fp32 g")]
    (f,) = rule_fp64(Context("wide", "narrow", fa, fb))
    assert "the fp64 arguments `g`, `h` (a parameter only `wide` has) promote" in f.explanation


def test_fp64_nothing_when_both_or_neither(pair) -> None:  # type: ignore[no-untyped-def]
    e = pair("mech", "eps64", "eps32")
    assert rule_fp64(Context("x", "y", e.fa, e.fa)) == [] and rule_fp64(Context("x", "y", e.fb, e.fb)) == []
    # fp64 only in PTX on one side (no TTIR op): still a difference
    ptx_only = make_facts("p", counts={"ptx": {"f64 ops": 3}})
    (f,) = rule_fp64(Context("p", "eps32", ptx_only, e.fb))
    assert f.predicts == "p" and "0 TTIR ops with `f64` results, 3 PTX `.f64` instructions" in f.explanation


# ---------------------------------------------------------------------------------------- precision.division


def test_division_full_vs_rn_both_orders(pair) -> None:  # type: ignore[no-untyped-def]
    for a, b in (("div_full", "div_rn"), ("div_rn", "div_full")):
        (f,) = rule_division(pair("mech", a, b))
        n = {"div_full": (8, 0), "div_rn": (0, 8)}  # (div.full.f32, div.rn.f32)
        assert (f.id, f.severity, f.stage, f.predicts) == ("precision.division", "minor", "ptx", "div_rn")
        assert f.title == f"fp32 division: `div.full.f32` {n[a][0]} vs {n[b][0]}, `div.rn.f32` {n[a][1]} vs {n[b][1]}"
        words = {"div_full": "full-range approximate (2 ulp)", "div_rn": "IEEE round-to-nearest-even"}
        assert f.explanation == (
            f"fp32 division: `div.full.f32` {n[a][0]} in `{a}` vs {n[b][0]} in `{b}`; `div.rn.f32` {n[a][1]} in `{a}` "
            f"vs {n[b][1]} in `{b}`. `{a}`: {words[a]}; `{b}`: {words[b]}. The rounding differs, so results can "
            "differ in the last bits. Triton lowers `/` on fp32 to `div.full.f32` (approximate, within 2 ulp, a few "
            "instructions). `div.rn.f32` (from `tl.div_rn`) is IEEE-rounded: ptxas emits a longer sequence with a "
            "slow path."
        )
        # per key, each side's first line (a side without the key has none)
        assert ev(f) == [("div_full", "ptx"), ("div_rn", "ptx")]
        assert f.evidence[0].text.endswith("(8× div.full.f32)") and f.evidence[1].text.endswith("(8× div.rn.f32)")


def test_fp64_division_is_not_called_fp32(pair) -> None:  # type: ignore[no-untyped-def]
    """My kernel: fp64 ``/`` is ``div.rn.f64``; the finding once said "fp32 division" and credited ``tl.div_rn``,
    and predicted nothing although the IEEE fp64 division is the slower side."""
    for a, b in (("hdiv64", "hdiv32"), ("hdiv32", "hdiv64")):
        (f,) = rule_division(pair("own", a, b))
        n = {"hdiv64": (0, 4), "hdiv32": (4, 0)}  # (div.full.f32, div.rn.f64)
        assert f.predicts == "hdiv64"
        assert f.title == f"Division: `div.full.f32` {n[a][0]} vs {n[b][0]}, `div.rn.f64` {n[a][1]} vs {n[b][1]}"
        assert "tl.div_rn" not in f.explanation and "fp32 division" not in f.explanation
        assert f.explanation.startswith(f"Division: `div.full.f32` {n[a][0]} in `{a}` vs {n[b][0]} in `{b}`; ")
        assert f.explanation.endswith(
            " `div.rn.f64` is an fp64 `/` (an operand promoted to fp64): IEEE-rounded, and ptxas expands it into an "
            "fp64 (`DFMA`) sequence at the fp64 rate."
        )
    h32 = pair("own", "hdiv64", "hdiv32").fb
    only64 = make_facts("only64", counts={"ptx": {"div.rn.f64": 2}})
    (f,) = rule_division(Context("only64", "hdiv32", only64, h32))
    assert f.title.startswith("Division") and "div.full.f32" in f.title
    (f,) = rule_division(Context("only64", "none", only64, make_facts("none", counts={"ptx": {"div.rn.f64": 1}})))
    assert f.title == "fp64 division: `div.rn.f64` 2 vs 1" and f.predicts == "only64"


def test_division_keys_and_silence(pair) -> None:  # type: ignore[no-untyped-def]
    """Only ``div.<mode>.f32|f64`` keys count (not the integer ``div.s32`` or a bare ``div.f32``); equal counts are
    silent."""
    a = make_facts("a", counts={"ptx": {"div.s32": 4, "div.f32": 2, "div.full.f32": 3}})
    b = make_facts("b", counts={"ptx": {"div.s32": 9, "div.f32": 5, "div.full.f32": 3}})
    assert rule_division(Context("a", "b", a, b)) == []
    assert both(rule_division, pair, "mech", "tf32", "ieee") == ([], [])
    c = make_facts("c", counts={"ptx": {"div.full.f32": 1, "div.approx.f32": 2}})
    (f,) = rule_division(Context("a", "c", a, c))
    assert f.title == "fp32 division: `div.approx.f32` 0 vs 2, `div.full.f32` 3 vs 1" and f.predicts is None
    assert "`div.rn" not in f.explanation and "Triton lowers `/` on fp32 to `div.full.f32`" in f.explanation


# ------------------------------------------------------------------------------------------- precision.math


def test_math_ftz_only_both_orders(pair) -> None:  # type: ignore[no-untyped-def]
    """``libdevice.exp`` vs ``tl.exp``: both ``ex2.approx``, only ``.ftz`` differs, and the finding says which side
    flushes."""
    for a, b in (("libdevice", "fast"), ("fast", "libdevice")):
        (f,) = rule_math(pair("libexp", a, b))
        n = {"libdevice": (0, 8), "fast": (8, 0)}  # (ex2.approx.f32, ex2.approx.ftz.f32)
        assert (f.id, f.severity, f.stage, f.predicts) == ("precision.math", "minor", "ptx", None)
        assert f.title == (
            f"Math instructions differ: `ex2.approx.f32` {n[a][0]} vs {n[b][0]}, `ex2.approx.ftz.f32` {n[a][1]} vs "
            f"{n[b][1]}"
        )
        words = {
            "libdevice": "approximate (special function unit, a few ulp of error), subnormal inputs and results "
            "flushed to zero",
            "fast": "approximate (special function unit, a few ulp of error)",
        }
        assert f.explanation == (
            f"Math instructions: `ex2.approx.f32` {n[a][0]} in `{a}` vs {n[b][0]} in `{b}`; `ex2.approx.ftz.f32` "
            f"{n[a][1]} in `{a}` vs {n[b][1]} in `{b}`. `{a}`: {words[a]}; `{b}`: {words[b]}. Both use the same "
            "rounding (`.approx`); the difference is `.ftz`: `libdevice` flushes subnormal values (below 2^-126 in "
            "fp32) to zero, `fast` keeps them, so results differ only for tiny inputs or results."
        )
        assert ev(f) == [("fast", "ptx"), ("libdevice", "ptx")]
        assert f.evidence[0].text.endswith("(8× ex2.approx.f32)")


def test_math_rounding_differs_both_orders(pair) -> None:  # type: ignore[no-untyped-def]
    """My kernel: ``tl.sqrt_rn`` (``sqrt.rn.f32``) vs ``tl.sqrt`` (``sqrt.approx.ftz.f32``)."""
    for a, b in (("sqrt_rn", "sqrt_fast"), ("sqrt_fast", "sqrt_rn")):
        (f,) = rule_math(pair("own", a, b))
        n = {"sqrt_rn": (0, 4), "sqrt_fast": (4, 0)}  # (sqrt.approx.ftz.f32, sqrt.rn.f32)
        assert f.title == (
            f"Math instructions differ: `sqrt.approx.ftz.f32` {n[a][0]} vs {n[b][0]}, `sqrt.rn.f32` {n[a][1]} vs "
            f"{n[b][1]}"
        )
        assert f.explanation.endswith(". The rounding differs, so results can differ in the last bits.")
        assert "`sqrt_rn`: IEEE round-to-nearest-even" in f.explanation
        assert ev(f) == [("sqrt_fast", "ptx"), ("sqrt_rn", "ptx")]
    assert both(rule_math, pair, "mech", "div_full", "div_rn") == ([], [])


def test_math_title_and_evidence_cut() -> None:
    """At most three keys in the title and four keys' evidence lines; opcodes outside the math set are ignored."""
    from irdiff.diagnose.facts import Ref

    keys = ["cos.approx.f32", "ex2.approx.f32", "lg2.approx.f32", "rcp.rn.f32", "rsqrt.approx.f32"]
    first = {k: Ref("ptx", i + 1, k + " %r1, %r2;") for i, k in enumerate(keys)}
    fa = make_facts("a", counts={"ptx": {k: 2 for k in keys} | {"add.f32": 4}}, first_lines={"ptx": first})
    fb = make_facts("b", counts={"ptx": {"add.f32": 9, "tanh.approx.f32": 1}})
    (f,) = rule_math(Context("a", "b", fa, fb))
    assert (
        f.title == "Math instructions differ: `cos.approx.f32` 2 vs 0, `ex2.approx.f32` 2 vs 0, `lg2.approx.f32` 2 vs 0"
    )
    assert [e.text.split(" ")[0] for e in f.evidence] == keys[:4]
    assert "add.f32" not in f.explanation and "`tanh.approx.f32` 0 in `a` vs 1 in `b`" in f.explanation


def test_math_modes_words() -> None:
    """The sentences are built from the modifiers each side uses: same rounding with and without ``.ftz``, rounding
    that differs, ``.ftz`` alone (no rounding modifier), nothing to say."""
    same = math_modes_words("p", "q", {"ex2.approx.ftz.f32": 1}, {"ex2.approx.f32": 2})
    assert same == (
        "`p`: approximate (special function unit, a few ulp of error), subnormal inputs and results flushed to zero; "
        "`q`: approximate (special function unit, a few ulp of error). Both use the same rounding (`.approx`); the "
        "difference is `.ftz`: `p` flushes subnormal values (below 2^-126 in fp32) to zero, `q` keeps them, so results "
        "differ only for tiny inputs or results."
    )
    mirrored = math_modes_words("q", "p", {"ex2.approx.f32": 2}, {"ex2.approx.ftz.f32": 1})
    assert "`p` flushes subnormal values (below 2^-126 in fp32) to zero, `q` keeps them" in mirrored
    # a key counted 0 says nothing about its side's modes
    assert math_modes_words("p", "q", {"sqrt.rn.f32": 1}, {"sqrt.approx.f32": 0, "sqrt.rn.f64": 3}) == (
        "`p`: IEEE round-to-nearest-even; `q`: IEEE round-to-nearest-even. Both use the same rounding (`.rn`)."
    )
    assert math_modes_words("p", "q", {"sqrt.rn.f32": 0}, {"sqrt.approx.f32": 1}) == (
        "`q`: approximate (special function unit, a few ulp of error). The rounding differs, so results can differ "
        "in the last bits."
    )
    assert math_modes_words("p", "q", {"sqrt.rn.f32": 1}, {"sqrt.rn.f64": 3}) == (
        "`p`: IEEE round-to-nearest-even; `q`: IEEE round-to-nearest-even. Both use the same rounding (`.rn`)."
    )
    assert math_modes_words("p", "q", {"mul.ftz.f32": 1}, {"mul.f32": 1}) == (
        "`p`: subnormal inputs and results flushed to zero. `p` flushes subnormal values to zero (`.ftz`), `q` keeps "
        "them."
    )
    assert math_modes_words("p", "q", {"mul.f32": 1}, {"mul.ftz.f32": 1}).endswith(
        "`q` flushes subnormal values to zero (`.ftz`), `p` keeps them."
    )
    assert math_modes_words("p", "q", {"mul.f32": 1}, {"add.f32": 1}) == ""
    assert math_modes_words("p", "q", {"sqrt.rz.f32": 1, "sqrt.rm.f32": 1}, {"sqrt.rp.f32": 1}) == (
        "`p`: IEEE round-down, IEEE round-toward-zero; `q`: IEEE round-up. The rounding differs, so results can differ "
        "in the last bits."
    )


def test_identical_facts_find_nothing(pair) -> None:  # type: ignore[no-untyped-def]
    for group, a, b in (("own", "gain64", "gain32"), ("mech", "tf32x3", "tf32"), ("libexp", "libdevice", "fast")):
        c = pair(group, a, b)
        for rule in ALL:
            assert rule(Context(a, a, c.fa, c.fa)) == [], rule.__name__


def test_upcast_of_a_later_dot_and_several_conversions(pair) -> None:  # type: ignore[no-untyped-def]
    """Two dots, the first alike on both sides and the second upcast in one: the second is reported. Operands
    converted from two types (mixed fp8 formats) are all listed."""
    c = pair("mech", "e5_dot", "f16_dot")
    (up,), (plain,) = mech(c.fa).dots, mech(c.fb).dots
    mixed = dataclasses.replace(up, upcast=["f8E5M2 → f16", "f8E4M3FN → f16"])
    x = dataclasses.replace(c.fa, mech=MechFacts(dots=[plain, mixed]))
    y = dataclasses.replace(c.fb, mech=MechFacts(dots=[plain, plain]))
    for ctx in (Context("x", "y", x, y), Context("y", "x", y, x)):
        (f,) = rule_dot_upcast(ctx)
        assert f.predicts == "x"
        assert f.title.endswith("before the MMA (f8E5M2 → f16, f8E4M3FN → f16)")
        assert "are converted (f8E5M2 → f16, f8E4M3FN → f16) right before the MMA" in f.explanation


def test_counts_without_a_ptx_stage(pair) -> None:  # type: ignore[no-untyped-def]
    """A side whose bundle has no PTX counts (a stage not captured) counts as zero divisions and math instructions."""
    c = pair("mech", "div_full", "div_rn")
    bare = dataclasses.replace(c.fb, name="bare", counts={})
    (f,) = rule_division(Context("div_full", "bare", c.fa, bare))
    assert f.title == "fp32 division: `div.full.f32` 8 vs 0"
    lib = pair("libexp", "libdevice", "fast")
    (m,) = rule_math(Context("bare", "fast", bare, lib.fb))
    assert m.title == "Math instructions differ: `ex2.approx.f32` 0 vs 8"


def test_mode_words_for_each_rounding_and_labels_without_a_shape() -> None:
    """Each rounding modifier on both sides, one side with ``.ftz``: the same rounding, the flush named; two modes
    alike on both sides are both listed. A dot whose shape is unknown is labelled ``?``."""
    from irdiff.diagnose.rules.precision import _dot_label

    for m in ("approx", "full", "rn", "rz", "rm", "rp"):
        text = math_modes_words("p", "q", {f"op.{m}.f32": 1}, {f"op.{m}.ftz.f32": 1})
        assert f"Both use the same rounding (`.{m}`); the difference is `.ftz`: `q` flushes" in text, m
    both_modes = math_modes_words("p", "q", {"a.rn.f32": 1, "b.rz.f32": 1}, {"a.rn.ftz.f32": 1, "b.rz.f32": 2})
    assert "Both use the same rounding (`.rn`, `.rz`)" in both_modes
    from irdiff.diagnose.facts import Ref
    from irdiff.diagnose.mechfacts import DotFact

    r = Ref("ttir", 1, "%0 = tt.dot %a, %b, %c")
    d = DotFact("", "ieee", "f32", "f32", "f32", [], 2, None, "fma", [], 4, [], [], True, r, None, None)
    assert _dot_label(d) == "dot ? (f32 × f32)"


def test_accumulator_type_explains_the_wgmma_wait_and_registers(compile_suite) -> None:  # type: ignore[no-untyped-def]
    """``tests/suites/rule_acc_type.py`` (sm90): a K-loop wgmma matmul with an fp16 accumulator (``out_dtype``)
    against fp32, nothing else changed. The whole diagnosis, both orders: ``precision.dot-accumulate`` is the root
    (it claims the ``out_dtype=`` change), names both types, and the wgmma wait every iteration in ``acc16``
    (``pendings`` 0 vs 1, read from each TTGIR) and the register difference are its effects, not unexplained."""
    from irdiff.diagnose import diagnose

    suite = str(Path(__file__).parent / "suites" / "rule_acc_type.py")
    bundle = compile_suite(suite, ["acc16", "acc32", "fp8"], "sm90")  # the bundle of test_rule_pipelining
    pend = {
        v: re.findall(r"ttng\.warp_group_dot_wait .*pendings = (\d+)", stage_text(bundle.compiled_variant(v), "ttgir"))
        for v in ("acc16", "acc32")
    }
    assert "0" in pend["acc16"] and "1" in pend["acc32"]
    for a, b in (("acc16", "acc32"), ("acc32", "acc16")):
        d = diagnose(bundle, a, b)
        by = {f.id: f for f in d.findings}
        root = by["precision.dot-accumulate"]
        assert not root.causes and root.title.endswith(
            f"`acc` dot 64x64x32 (f16 × f16) accumulates in `{'f16' if a == 'acc16' else 'f32'}` in `{a}` vs "
            f"`{'f16' if b == 'acc16' else 'f32'}` in `{b}`"
        )
        assert "`out_dtype=tl.float16`" in root.title
        wait = by["pipeline.wgmma-wait"]
        assert wait.causes == ["precision.dot-accumulate"] and wait.predicts == "acc16"
        assert by["resources.registers"].causes == ["precision.dot-accumulate"]
        assert "pipeline.wgmma-wait" not in d.unexplained and "resources.registers" not in d.unexplained


# ------------------------------------------------------------------ cases the kernels above do not reach (issue 19)


def test_upcasts_differ_signed_unsigned_and_other_types(pair) -> None:  # type: ignore[no-untyped-def]
    """Both sides convert a dot's operands, from other types (the real ``e5_dot`` dot with its ``upcast`` list
    replaced): ``i8`` read signed vs ``u8`` unsigned names the sign; the same source to another type, or two fp8
    formats, only say the MMA follows the converted type. Evidence: each side's TTGIR dot line cut to 220 characters."""
    c = pair("mech", "e5_dot", "f16_dot")
    (d,) = mech(c.fa).dots
    assert d.ttgir is not None and len(d.ttgir.text) > 220 and d.ttgir.text[:220] != d.ttir.text[:220]
    label = "`acc` dot 64x64x64 (f8E5M2 × f8E5M2)"

    def side(name: str, ups: list[str]):  # type: ignore[no-untyped-def]
        return dataclasses.replace(c.fa, name=name, mech=MechFacts(dots=[dataclasses.replace(d, upcast=ups)]))

    sign = (
        " The same integer width is read signed in one (`arith.sitofp`, an `i` type: -128…127 for 8 bits) and "
        "unsigned in the other (`arith.uitofp`, a `u` type: 0…255): bytes with the top bit set become different "
        "values, so the results differ; the MMA itself is the same."
    )
    rate = " The MMA multiplies what the conversions give; its rate follows the converted type."
    cases = (
        (["i8 → f16"], ["u8 → f16"], sign),
        (["i8 → f16"], ["i8 → f32"], rate),
        (["f8E5M2 → f16"], ["f8E4M3FN → f16"], rate),
    )
    for ux, uy, tail in cases:
        for (a, ua), (b, ub) in (((("x", ux)), ("y", uy)), (("y", uy), ("x", ux))):
            (f,) = rule_dot_upcast(Context(a, b, side(a, ua), side(b, ub)))
            qa, qb = ", ".join(f"`{u}`" for u in ua), ", ".join(f"`{u}`" for u in ub)
            assert (f.id, f.severity, f.stage, f.predicts) == ("precision.dot-upcast", "major", "ttgir", None)
            assert f.title == f"The operands of {label} are upcast from other types: {qa} in `{a}` vs {qb} in `{b}`"
            assert f.explanation == (
                f"The operands of {label} are converted right before the MMA in both variants, from other types: "
                f"{qa} in `{a}`, {qb} in `{b}`." + tail
            )
            assert ev(f) == [(a, "ttgir"), (b, "ttgir")]
            assert [e.text for e in f.evidence] == [d.ttgir.text[:220]] * 2
            assert [e.line for e in f.evidence] == [d.ttgir.line] * 2


def test_dot_rules_look_past_a_first_alike_dot_and_rank_precisions(pair) -> None:  # type: ignore[no-untyped-def]
    """Two dots, the first alike on both sides: the second's difference is still reported (input precision and
    accumulator type). A dot without an input precision (fp16 operands) against an fp32 one says nothing; the
    slower side by precision rank: tf32 < tf32x3 = bf16x3 < bf16x6 < ieee."""
    t = pair("mech", "tf32", "ieee")
    (dt,), (di,) = mech(t.fa).dots, mech(t.fb).dots
    assert (dt.precision, di.precision) == ("tf32", "ieee")

    def two(name: str, first: object, second: object):  # type: ignore[no-untyped-def]
        return dataclasses.replace(t.fa, name=name, mech=MechFacts(dots=[first, second]))  # type: ignore[list-item]

    x, y = two("x", dt, dt), two("y", dt, di)
    for ctx in (Context("x", "y", x, y), Context("y", "x", y, x)):
        (f,) = rule_dot_input(ctx)
        assert f.predicts == "y" and "`tf32`" in f.title and "`ieee`" in f.title
    a = pair("acc16", "f16", "f32")
    (d16,), (d32,) = mech(a.fa).dots, mech(a.fb).dots
    assert (d16.acc_type, d32.acc_type) == ("f16", "f32")
    x, y = two("x", d32, d16), two("y", d32, d32)
    for ctx in (Context("x", "y", x, y), Context("y", "x", y, x)):
        (f,) = rule_dot_accumulate(ctx)
        want = "`f16` in `x` vs `f32` in `y`" if ctx.a == "x" else "`f32` in `y` vs `f16` in `x`"
        assert f.title == "`acc` dot 64x64x32 (f16 × f16) accumulates in " + want
    # no input precision on one side (an fp16 dot): not a precision difference
    none = dataclasses.replace(t.fa, name="n", mech=MechFacts(dots=[dataclasses.replace(dt, precision="")]))
    assert rule_dot_input(Context("n", "tf32", none, t.fa)) == []
    assert rule_dot_input(Context("tf32", "n", t.fa, none)) == []

    def prec(name: str, p: str):  # type: ignore[no-untyped-def]
        return dataclasses.replace(t.fa, name=name, mech=MechFacts(dots=[dataclasses.replace(dt, precision=p)]))

    for p, q, slow in (("bf16x3", "tf32x3", None), ("bf16x6", "ieee", "q"), ("bf16x3", "bf16x6", "q")):
        for ctx in (Context("p", "q", prec("p", p), prec("q", q)), Context("q", "p", prec("q", q), prec("p", p))):
            (f,) = rule_dot_input(ctx)
            assert f.predicts == slow, (p, q)


def test_fp64_hand_built_counts() -> None:
    """Hand-built fp64 facts: one fp64 op on one side is enough (TTIR or PTX); the SASS ``DMUL``/``DADD`` first
    lines are evidence; the plural of the scalar SASS count; the other side's PTX count; a PTX-only side names no
    SASS."""
    from irdiff.diagnose.facts import Ref

    none = make_facts("n", counts={"ptx": {}})
    ttir1 = make_facts("t", mech=MechFacts(f64_ttir=1), counts={"ptx": {}})
    ptx1 = make_facts("p", counts={"ptx": {"f64 ops": 1}})
    for one in (ttir1, ptx1):
        for ctx in (Context(one.name, "n", one, none), Context("n", one.name, none, one)):
            (f,) = rule_fp64(ctx)
            assert f.predicts == one.name
    # PTX only: no SASS clause in the explanation or the title
    (f,) = rule_fp64(Context("p", "n", ptx1, none))
    assert f.title == "`p` computes in fp64 (1 PTX f64 instructions)"
    assert f.explanation.startswith(
        "`p` computes in fp64: 0 TTIR ops with `f64` results, 1 PTX `.f64` instructions; `n` has 0 and 0. In `p` an"
    )
    # SASS DMUL/DADD lines, the other side's PTX count, the scalar count's plural
    r = Ref("ttir", 3, "%s = arith.mulf %g, %g : f64")
    sass_first = {k: Ref("sass", i + 10, f"{k}.X R2, R4, R6 ;") for i, k in enumerate(("DMUL", "DADD"))}
    for sass, words in (
        ({"DMUL": 1}, "the 1 SASS fp64 instruction work"),
        ({"DMUL": 1, "DADD": 1}, "the 2 SASS fp64 instructions work"),
    ):
        wide = make_facts(
            "w",
            mech=MechFacts(f64_ttir=2, f64_first=r),
            counts={"ptx": {"f64 ops": 5}, "sass": sass},
            first_lines={"sass": {k: sass_first[k] for k in sass}},
        )
        narrow = make_facts("o", counts={"ptx": {"f64 ops": 1}})
        in_sass = ", ".join(f"1 `{k}`" for k in sass)
        for ctx in (Context("w", "o", wide, narrow), Context("o", "w", narrow, wide)):
            (f,) = rule_fp64(ctx)
            assert f.predicts == "w" and f.severity == "minor"
            assert f"{words} on scalars" in f.explanation
            assert f"5 PTX `.f64` instructions and {in_sass} in SASS; `o` has 0 and 1. In `w` an" in f.explanation
            assert [(e.stage, e.text) for e in f.evidence] == [("ttir", r.text)] + [
                ("sass", f"{k}.X R2, R4, R6 ;   (1× {k})") for k in sass
            ]


def test_math_sin_and_rsqrt_keys() -> None:
    """``sin`` and ``rsqrt`` are math opcodes (``tl.sin`` → ``sin.approx.f32``, ``tl.math.rsqrt`` →
    ``rsqrt.approx.f32``), counted like ``ex2``."""
    for key in ("sin.approx.ftz.f32", "rsqrt.approx.ftz.f32"):
        fa, fb = make_facts("a", counts={"ptx": {key: 2}}), make_facts("b", counts={"ptx": {}})
        for ctx in (Context("a", "b", fa, fb), Context("b", "a", fb, fa)):
            (f,) = rule_math(ctx)
            assert f"`{key}`" in f.title
