"""``spec.param-added`` and ``config.changed`` (``irdiff/diagnose/rules/parameters.py``) on the facts of real
compiles, in both orders of the variants.

Kernels: ``tests/suites/param_roles.py`` (row copies, sm90, from the shared compile cache) whose parameter lists
differ by role: a runtime row stride ``ld`` (not divisible by 16, divisible by 16, or annotated ``tl.int64``), an
offset ``base``, a mask bound ``nr``, a scalar ``alpha`` used only in arithmetic, and renamed pointers. No parameter
is named after its role: the rules read the role from the TTIR. The context is built as
:func:`irdiff.diagnose.diagnose` builds it (parameters paired by role with :func:`irdiff.diagnose.params.pair_params`).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from irdiff.bundle import Bundle
from irdiff.diagnose.facts import extract_facts
from irdiff.diagnose.model import Finding
from irdiff.diagnose.params import pair_params
from irdiff.diagnose.rules.common import Context
from irdiff.diagnose.rules.parameters import rule_config_changed, rule_param_added
from irdiff.diagnose.texts import stage_text

SUITE = str(Path(__file__).parent / "suites" / "param_roles.py")
VARIANTS = [
    "fixed",
    "odd",
    "even",
    "wide",
    "bounded",
    "odd_bounded",
    "scaled",
    "odd_scaled",
    "shifted",
    "narrow",
    "warps8",
    "capped",
    "scaled_int",
    "square",
    "block512",
    "block512_capped",
]
BOTH = pytest.mark.parametrize("swap", [False, True], ids=["as-named", "swapped"])
WHY = (
    " These values are not part of the kernel's signature: they are chosen per compile (a `tl.constexpr` argument, "
    "an autotuner's pick among its configs — TorchInductor benchmarks several `XBLOCK`/`R0_BLOCK` choices per kernel "
    "and keeps the fastest on this run —, or the launch options). A `tl.constexpr` value is compiled into the code: "
    "as a tile size it decides the layouts (elements per thread), the loop trip counts, the scratch for reductions "
    "and layout conversions, and so the instruction mix and resources; differences below that no signature finding "
    "explains follow from the configuration alone."
)
# the options beside a constexpr are explained by options.changed (one finding for one fact)
OPTS = " What the launch options do is said by `options.changed`."
BLIND = "without `tt.divisibility` tells it nothing"
FOLDED = "In `{other}` the addresses have no such parameter: that quantity is a compile-time constant folded"


@pytest.fixture(scope="module")
def bundle(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(SUITE, VARIANTS, "sm90")


def context(bundle: Bundle, a: str, b: str) -> Context:
    va, vb = bundle.compiled_variant(a), bundle.compiled_variant(b)
    fa, fb = extract_facts(va), extract_facts(vb)
    pairing = pair_params(va.specialization, stage_text(va, "ttir"), vb.specialization, stage_text(vb, "ttir"))
    fa.peer_names, fb.peer_names = pairing.aliases("a"), pairing.aliases("b")
    return Context(a, b, fa, fb, pairing=pairing)


def added(bundle: Bundle, x: str, y: str, swap: bool) -> tuple[Finding, str, str]:
    """The one ``spec.param-added`` finding of the pair, with (inspected, baseline) as compared."""
    a, b = (y, x) if swap else (x, y)
    found = rule_param_added(context(bundle, a, b))
    assert [f.id for f in found] == ["spec.param-added"]
    return found[0], a, b


def ttir_line(bundle: Bundle, variant: str, line: int | None) -> str:
    assert line is not None
    return stage_text(bundle.compiled_variant(variant), "ttir").splitlines()[line - 1]


@BOTH
def test_runtime_stride_without_divisibility_is_the_root(bundle: Bundle, swap: bool) -> None:
    """``odd`` reads its source rows at ``row * ld`` (``ld`` = 1000: the JIT proves no divisibility) where ``fixed``
    multiplies by the constant 1000: ``ld`` is named as the row stride of ``src``, the finding predicts ``odd`` and
    the remedy hints the computed offset; the renamed pointers are paired by role."""
    f, a, b = added(bundle, "fixed", "odd", swap)
    assert (f.severity, f.stage, f.predicts) == ("major", "spec", "odd")
    assert f.title == "`ld` is new in `odd`: the row stride of `src`, a runtime i32 (no divisibility)"
    assert f.explanation.startswith("`odd` takes 1 parameter that `fixed` does not have;")
    assert FOLDED.format(other="fixed") in f.explanation
    assert f"A runtime `ld` {BLIND}" in f.explanation
    assert "specialized divisible" not in f.explanation and "`i64`" not in f.explanation
    assert "bounds the masks" not in f.explanation and "Also only in" not in f.explanation
    assert "In the other direction" not in f.explanation
    # the pointers are renamed, paired by what they do (named as each variant calls them)
    na, nb = ("x_ptr", "src") if a == "fixed" else ("src", "x_ptr")
    assert f"Paired by role, not by name: `{na}` of `{a}` is `{nb}` of `{b}` (a pointer to fp32 loaded from" in (
        f.explanation
    )
    assert f.remedy == (
        "when every caller's `ld` is a multiple of 16 elements, say so in the kernel with `tl.multiple_of(row * ld, "
        "16)` on the computed offset (a hint on the bare parameter has no effect), or pass it as a multiple of 16 "
        "from a caller that lets the JIT specialize it; with TorchInductor, compile this shape statically "
        "(`dynamic=False`, or `torch._dynamo.mark_static` on the dimension)"
    )
    spec, ttir = f.evidence
    assert (spec.variant, spec.stage, spec.line) == ("odd", "spec", None)
    assert spec.text == "ld: i32 — the row stride of `src`, a runtime i32 (no divisibility)"
    assert (ttir.variant, ttir.stage) == ("odd", "ttir") and "%ld: i32" in ttir.text
    assert "%ld: i32" in ttir_line(bundle, "odd", ttir.line)


@BOTH
def test_stride_divisible_by_16_is_minor_and_predicts_nothing(bundle: Bundle, swap: bool) -> None:
    """``even`` passes ``ld`` = 1024: specialized divisible by 16, the alignment survives, so the new stride is named
    (minor) but predicts no slower side and asks for no hint."""
    f, _, _ = added(bundle, "fixed", "even", swap)
    assert (f.severity, f.predicts, f.remedy) == ("minor", None, None)
    assert f.title == "`ld` is new in `even`: the row stride of `src`, a runtime i32 divisible by 16"
    assert FOLDED.format(other="fixed") in f.explanation
    assert "`ld` is specialized divisible by 16 (`tt.divisibility`): offsets computed with it keep" in f.explanation
    assert BLIND not in f.explanation and "`i64`" not in f.explanation
    assert f.evidence[0].text.startswith("ld: i32 div16 — ")
    assert "tt.divisibility = 16" in ttir_line(bundle, "even", f.evidence[1].line)


@BOTH
def test_i64_stride_is_major_even_when_divisible(bundle: Bundle, swap: bool) -> None:
    """``wide`` annotates ``ld: tl.int64``: divisible by 16, but 64-bit: major, predicts ``wide``, and the remedy is
    to pass it as 32 bits, not an alignment hint."""
    f, _, _ = added(bundle, "fixed", "wide", swap)
    assert (f.severity, f.predicts) == ("major", "wide")
    assert f.title == "`ld` is new in `wide`: the row stride of `src`, a runtime i64 divisible by 16"
    assert "As an `i64` it also makes every index computed from it 64-bit" in f.explanation
    assert "`ld` is specialized divisible by 16" in f.explanation and BLIND not in f.explanation
    assert f.remedy == (
        "when every index fits below 2^31, pass `ld` as a 32-bit integer (the JIT types an integer argument i64 only "
        "when it is annotated `tl.int64` or its value does not fit in 32 bits)"
    )
    assert f.evidence[0].text.startswith("ld: i64 div16 — ")


@BOTH
def test_offset_parameter_is_not_called_a_stride(bundle: Bundle, swap: bool) -> None:
    """``shifted`` adds a runtime ``base`` to ``x_ptr`` (no multiply): an offset; the remedy hints the offset
    computed from it, not ``row * base``."""
    f, _, _ = added(bundle, "fixed", "shifted", swap)
    assert (f.severity, f.predicts) == ("major", "shifted")
    assert (
        f.title
        == "`base` is new in `shifted`: an offset added to the address of `x_ptr`, a runtime i32 (no divisibility)"
    )
    assert f"A runtime `base` {BLIND}" in f.explanation and "row stride" not in f.explanation
    assert f.remedy is not None and "`tl.multiple_of` on the offset computed from `base`" in f.remedy
    assert "row * base" not in f.remedy


@BOTH
def test_mask_bound_only(bundle: Bundle, swap: bool) -> None:
    """``bounded`` bounds the row by a runtime ``nr`` (63) in the mask only: root (major, predicts ``bounded``), with
    the mask sentence and no stride sentence, and no alignment remedy (no address depends on it)."""
    f, _, _ = added(bundle, "fixed", "bounded", swap)
    assert (f.severity, f.predicts, f.remedy) == ("major", "bounded", None)
    assert f.title == "`nr` is new in `bounded`: a bound in load/store masks, a runtime i32 (no divisibility)"
    assert "`nr` bounds the masks: without a known divisibility" in f.explanation
    assert "addresses have no such parameter" not in f.explanation and BLIND not in f.explanation
    assert "Paired by role" not in f.explanation  # the pointers keep their names
    assert [(e.variant, e.stage) for e in f.evidence] == [("bounded", "spec"), ("bounded", "ttir")]


@BOTH
def test_stride_and_mask_bound_together(bundle: Bundle, swap: bool) -> None:
    f, _, _ = added(bundle, "fixed", "odd_bounded", swap)
    assert f.title == "`ld` is new in `odd_bounded`: the row stride of `src`, a runtime i32 (no divisibility) (+1 more)"
    assert f.explanation.startswith("`odd_bounded` takes 2 parameters that `fixed` does not have;")
    assert "`ld`: the row stride of `src`" in f.explanation and "`nr`: a bound in load/store masks" in f.explanation
    assert f"A runtime `ld` {BLIND}" in f.explanation  # only the stride is named among the addresses
    assert "`nr` bounds the masks" in f.explanation
    assert [e.text.split(":")[0] for e in f.evidence if e.stage == "spec"] == ["ld", "nr"]
    assert f.remedy is not None and "every caller's `ld` is" in f.remedy and "`nr`" not in f.remedy


@BOTH
def test_scalar_used_only_in_arithmetic_is_blamed_for_nothing(bundle: Bundle, swap: bool) -> None:
    """``alpha`` only scales the loaded values: alone it gives no finding; beside a new stride it is listed as such
    and not counted in the title."""
    for other in ("scaled", "scaled_int"):  # an fp32 and an i32 scalar
        a, b = (other, "fixed") if swap else ("fixed", other)
        assert rule_param_added(context(bundle, a, b)) == []
    f, _, _ = added(bundle, "fixed", "odd_scaled", swap)
    assert f.title == "`ld` is new in `odd_scaled`: the row stride of `src`, a runtime i32 (no divisibility)"
    assert f.explanation.startswith("`odd_scaled` takes 2 parameters that `fixed` does not have;")
    assert (
        "Also only in `odd_scaled`: `alpha`, a runtime fp32 used only in arithmetic (no address depends on it)."
    ) in f.explanation
    assert not any("alpha" in e.text for e in f.evidence)


@BOTH
def test_new_parameters_on_both_sides_give_one_finding_in_either_order(bundle: Bundle, swap: bool) -> None:
    """``odd`` has ``ld`` that ``bounded`` lacks and ``bounded`` has ``nr`` that ``odd`` lacks: one finding, the
    same in both orders (the address parameter's side first), with the other side's title folded in."""
    f, _, _ = added(bundle, "odd", "bounded", swap)
    assert f.title == "`ld` is new in `odd`: the row stride of `src`, a runtime i32 (no divisibility)"
    assert (f.severity, f.predicts) == ("major", "odd")
    assert f.explanation.endswith(
        " In the other direction: `nr` is new in `bounded`: a bound in load/store masks, a runtime i32 (no "
        "divisibility)."
    )
    assert [(e.variant, e.stage) for e in f.evidence] == [
        ("odd", "spec"),
        ("odd", "ttir"),
        ("bounded", "spec"),
        ("bounded", "ttir"),
    ]


@BOTH
def test_minor_side_is_folded_into_the_major_one(bundle: Bundle, swap: bool) -> None:
    """``even`` gains a divisible stride (minor), ``bounded`` a mask bound without divisibility (major): the major
    one is kept whichever variant is inspected."""
    f, _, _ = added(bundle, "even", "bounded", swap)
    assert f.title.startswith("`nr` is new in `bounded`") and (f.severity, f.predicts) == ("major", "bounded")
    assert (
        " In the other direction: `ld` is new in `even`: the row stride of `src`, a runtime i32 divisible by 16."
        in (f.explanation)
    )


@BOTH
def test_configuration_changed(bundle: Bundle, swap: bool) -> None:
    """``narrow`` is ``fixed`` compiled with ``BLOCK`` 512, 8 warps and 2 stages: one ``config.changed`` naming the
    three values in the order of the comparison, no parameter added."""
    a, b = ("narrow", "fixed") if swap else ("fixed", "narrow")
    ctx = context(bundle, a, b)
    assert rule_param_added(ctx) == []
    (f,) = rule_config_changed(ctx)
    assert (f.id, f.severity, f.stage, f.predicts) == ("config.changed", "major", "spec", None)
    vals = {"fixed": ("1024", "4", "3"), "narrow": ("512", "8", "2")}
    (ba, wa, sa), (bb, wb, sb) = vals[a], vals[b]
    assert f.title == (
        f"Configuration differs: `BLOCK`, `num_warps` and `num_stages` ({ba}→{bb}, {wa}→{wb}, {sa}→{sb})"
    )
    assert f.explanation == (
        f"The two kernels were compiled with different configurations: `BLOCK` = {ba} in `{a}` vs {bb} in `{b}`; "
        f"`num_warps` = {wa} in `{a}` vs {wb} in `{b}`; `num_stages` = {sa} in `{a}` vs {sb} in `{b}`.{WHY}{OPTS}"
    )
    # the same kernel source on both sides: no "code change" is claimed
    assert "code change" not in f.explanation
    assert [(e.variant, e.stage, e.line, e.text) for e in f.evidence] == [
        (a, "spec", None, f"BLOCK = {ba}"),
        (b, "spec", None, f"BLOCK = {bb}"),
        (a, "options", None, f"num_warps = {wa}"),
        (b, "options", None, f"num_warps = {wb}"),
        (a, "options", None, f"num_stages = {sa}"),
        (b, "options", None, f"num_stages = {sb}"),
    ]


@BOTH
def test_launch_option_alone_is_no_configuration_change(bundle: Bundle, swap: bool) -> None:
    """``warps8`` differs from ``fixed`` only in ``num_warps``: launch options alone are ``options.changed``'s (it
    says what they are), not a second ``config.changed`` for the same fact. A ``maxnreg`` set on one side only
    (``capped``) is no configuration value either: ``options.changed`` reports it as "unset (no cap)" vs the cap."""
    a, b = ("warps8", "fixed") if swap else ("fixed", "warps8")
    ctx = context(bundle, a, b)
    assert ctx.fa.options.get("num_warps") != ctx.fb.options.get("num_warps")
    assert rule_config_changed(ctx) == []
    a, b = ("capped", "fixed") if swap else ("fixed", "capped")
    ctx = context(bundle, a, b)
    assert ctx.fa.options.get("maxnreg") != ctx.fb.options.get("maxnreg")
    assert rule_config_changed(ctx) == [] and rule_param_added(ctx) == []


def test_same_parameters_and_configuration_give_nothing(bundle: Bundle) -> None:
    """``odd`` and ``even`` differ only in the value of ``ld`` (a specialization, not a parameter or a config)."""
    for a, b in (("odd", "even"), ("even", "odd")):
        ctx = context(bundle, a, b)
        assert rule_param_added(ctx) == [] and rule_config_changed(ctx) == []
        ctx.pairing = None  # without a pairing (no IR) neither rule guesses
        assert rule_param_added(ctx) == [] and rule_config_changed(ctx) == []
    ctx = context(bundle, "fixed", "narrow")
    ctx.pairing = None
    assert rule_config_changed(ctx) == []


@BOTH
def test_stride_that_also_bounds_the_mask_is_named_once(bundle: Bundle, swap: bool) -> None:
    """``square``'s ``ld`` is the row stride and the column bound: named among the strides, not again among the
    masks."""
    f, _, _ = added(bundle, "fixed", "square", swap)
    assert f.title.startswith("`ld` is new in `square`: the row stride of `src`")
    assert f"A runtime `ld` {BLIND}" in f.explanation and "bounds the masks" not in f.explanation


PAIRED = (
    "the parameters are paired by role (pointer or scalar, element type, the loads, stores, masks and index "
    "expressions each one feeds), not by name or position."
)
CONSTANT = (
    "In `fixed` the addresses have no such parameter: that quantity is a compile-time constant folded into the code, "
    "whose divisibility AxisInfo knows."
)
NARROW = (
    "without `tt.divisibility` tells it nothing: offsets computed with it can only be assumed one element aligned, "
    "which caps the vector width of every load and store addressed with it."
)


@BOTH
def test_full_explanations(bundle: Bundle, swap: bool) -> None:
    """The whole explanation of three pairs, sentence by sentence (the pointers keep their names in ``bounded``;
    ``src``/``dst`` are paired by role elsewhere)."""
    f, a, b = added(bundle, "fixed", "even", swap)
    pointers = (
        "Paired by role, not by name: `x_ptr` of `fixed` is `src` of `even` (a pointer to fp32 loaded from, at an "
        "address that depends on the program id); `y_ptr` of `fixed` is `dst` of `even` (a pointer to fp32 stored "
        "to, at an address that depends on the program id)."
        if a == "fixed"
        else "Paired by role, not by name: `src` of `even` is `x_ptr` of `fixed` (a pointer to fp32 loaded from, at "
        "an address that depends on the program id); `dst` of `even` is `y_ptr` of `fixed` (a pointer to fp32 "
        "stored to, at an address that depends on the program id)."
    )
    assert f.explanation == (
        f"`even` takes 1 parameter that `fixed` does not have; {PAIRED} `ld`: the row stride of `src`, a runtime "
        f"i32 divisible by 16. {CONSTANT} `ld` is specialized divisible by 16 (`tt.divisibility`): offsets computed "
        f"with it keep that alignment, so the vector width need not drop. {pointers}"
    )
    f, a, b = added(bundle, "fixed", "bounded", swap)
    assert f.explanation == (
        f"`bounded` takes 1 parameter that `fixed` does not have; {PAIRED} `nr`: a bound in load/store masks, a "
        "runtime i32 (no divisibility). `nr` bounds the masks: without a known divisibility the lowering cannot "
        "prove that several consecutive mask bits are equal, so masked accesses stay narrow."
    )
    f, a, b = added(bundle, "fixed", "wide", swap)
    assert f.explanation.startswith(
        f"`wide` takes 1 parameter that `fixed` does not have; {PAIRED} `ld`: the row stride of `src`, a runtime "
        f"i64 divisible by 16. {CONSTANT} `ld` is specialized divisible by 16 (`tt.divisibility`): offsets computed "
        "with it keep that alignment, so the vector width need not drop. As an `i64` it also makes every index "
        "computed from it 64-bit (two instructions per op). Paired by role, not by name: "
    )
    f, a, b = added(bundle, "fixed", "odd_scaled", swap)
    assert (
        f"{CONSTANT} A runtime `ld` {NARROW} Also only in `odd_scaled`: `alpha`, a runtime fp32 used only in "
        "arithmetic (no address depends on it). Paired by role"
    ) in f.explanation


CODE = (
    " The kernels' source differs too: compare kernels with the same configuration to see what the code change "
    "itself does."
)


def with_sources(bundle: Bundle, a: str, b: str) -> Context:
    """:func:`context` with each variant's python stage (the kernel's source) as :func:`irdiff.diagnose.diagnose`
    passes it."""
    ctx = context(bundle, a, b)
    ctx.python = {v: stage_text(bundle.compiled_variant(v), "python") for v in (a, b)}
    return ctx


def block_only(a: str, b: str, va: str, vb: str) -> str:
    """The explanation of a ``config.changed`` whose only change is ``BLOCK`` (``va`` in ``a``, ``vb`` in ``b``)."""
    return (
        f"The two kernels were compiled with different configurations: `BLOCK` = {va} in `{a}` vs {vb} in `{b}`.{WHY}"
    )


@BOTH
def test_constexpr_alone_changed(bundle: Bundle, swap: bool) -> None:
    """``block512`` is ``fixed`` with ``BLOCK`` 512 and the same launch options: the finding names ``BLOCK`` alone and
    does not point at ``options.changed``; both sides' source is the same kernel text, so no code change is
    claimed."""
    a, b = ("block512", "fixed") if swap else ("fixed", "block512")
    ctx = with_sources(bundle, a, b)
    assert ctx.python[a] and ctx.python[a] == ctx.python[b]
    (f,) = rule_config_changed(ctx)
    vals = {"fixed": "1024", "block512": "512"}
    assert f.title == f"Configuration differs: `BLOCK` ({vals[a]}→{vals[b]})"
    assert f.explanation == block_only(a, b, vals[a], vals[b])


@BOTH
def test_launch_option_set_on_one_side_only_is_not_a_configuration_value(bundle: Bundle, swap: bool) -> None:
    """``block512_capped`` is ``fixed`` with ``BLOCK`` 512 and ``maxnreg`` 128 (unset in ``fixed``): ``BLOCK`` is
    the configuration change; the one-sided ``maxnreg`` is ``options.changed``'s ("unset (no cap)" vs the cap), not
    listed here in either order."""
    a, b = ("block512_capped", "fixed") if swap else ("fixed", "block512_capped")
    ctx = context(bundle, a, b)
    assert (ctx.fa.options.get("maxnreg") is None) != (ctx.fb.options.get("maxnreg") is None)
    (f,) = rule_config_changed(ctx)
    vals = {"fixed": "1024", "block512_capped": "512"}
    assert f.title == f"Configuration differs: `BLOCK` ({vals[a]}→{vals[b]})"
    assert f.explanation == block_only(a, b, vals[a], vals[b])
    assert [e.text for e in f.evidence] == [f"BLOCK = {vals[a]}", f"BLOCK = {vals[b]}"]


@BOTH
def test_source_change_beside_the_configuration(bundle: Bundle, swap: bool) -> None:
    """The python stage is the suite file a variant was compiled from (the same text for every variant of one
    bundle). With ``block512``'s source another file (as when the compared variants come from two suites or two
    revisions of one: here ``tests/suites/diag_loop.py``'s text) the explanation adds that the source differs too.
    Without one side's source (a bundle without the python stage) nothing is claimed about the code."""
    a, b = ("block512", "fixed") if swap else ("fixed", "block512")
    ctx = with_sources(bundle, a, b)
    ctx.python["block512"] = (Path(__file__).parent / "suites" / "diag_loop.py").read_text()
    srcs = dict(ctx.python)
    assert srcs[a] and srcs[b] and srcs[a] != srcs[b]
    vals = {"fixed": "1024", "block512": "512"}
    (f,) = rule_config_changed(ctx)
    assert f.explanation == block_only(a, b, vals[a], vals[b]) + CODE
    for missing in (a, b):
        ctx.python = {v: s for v, s in srcs.items() if v != missing}
        (f,) = rule_config_changed(ctx)
        assert f.explanation == block_only(a, b, vals[a], vals[b])


@BOTH
def test_unknown_constexpr_value_is_a_dash(bundle: Bundle, swap: bool) -> None:
    """A bundle may record a declared ``tl.constexpr`` without its value (``constexpr: null``, allowed by the bundle
    schema): the explanation prints ``—`` for it, not ``None``. Here ``block512``'s ``BLOCK`` record is read so."""
    va, vb = bundle.compiled_variant("fixed"), bundle.compiled_variant("block512")
    spec_b = [dataclasses.replace(s, constexpr=None) if s.name == "BLOCK" else s for s in vb.specialization]
    assert spec_b != vb.specialization
    sa, sb = (va.specialization, stage_text(va, "ttir")), (spec_b, stage_text(vb, "ttir"))
    a, b = ("block512", "fixed") if swap else ("fixed", "block512")
    (xa, ta), (xb, tb) = (sb, sa) if swap else (sa, sb)
    ctx = Context(a, b, extract_facts(bundle.compiled_variant(a)), extract_facts(bundle.compiled_variant(b)))
    ctx.pairing = pair_params(xa, ta, xb, tb)
    (f,) = rule_config_changed(ctx)
    vals = {"fixed": "1024", "block512": "—"}
    assert f.explanation == block_only(a, b, vals[a], vals[b])


@BOTH
def test_added_lists_of_two(bundle: Bundle, swap: bool) -> None:
    """``_added`` on parameter roles no suite pair has (two of each kind, ParamRole objects as
    :func:`irdiff.diagnose.params.param_roles` makes them): two divisible strides, two mask bounds, two scalars used
    only in arithmetic, and an i64 stride without divisibility, whose remedy joins the alignment and 32-bit advice.
    The facts are a real variant's (``fixed``: none of these names, so no TTIR evidence)."""
    from irdiff.diagnose.params import ParamPairing, ParamRole
    from irdiff.diagnose.rules.parameters import _added, _names

    assert (_names([]), _names(["a"]), _names(["a", "b"]), _names(["a", "b", "c"])) == (
        "", "`a`", "`a` and `b`", "`a`, `b` and `c`")  # fmt: skip

    def role(name: str, typ: str, feats: set[str], div: int | None = None) -> ParamRole:
        kind = "float" if typ.startswith("fp") else "int"
        return ParamRole(name, 0, kind, typ, divisibility=div, features=frozenset(feats), ir_seen=True)

    new = [role("ld", "i32", {"stride", "row"}, 16), role("inc", "i32", {"stride"}, 16), role("nr", "i32", {"mask"}),
           role("nc", "i32", {"mask"}), role("alpha", "fp32", {"value"}), role("beta", "fp32", {"value"}),
           role("wide", "i64", {"stride", "row"})]  # fmt: skip
    side, other = ("b", "a") if swap else ("a", "b")
    facts = extract_facts(bundle.compiled_variant("fixed"))
    f = _added(side, other, new, ParamPairing([]), facts, ("a", "b"))
    assert f is not None and f.severity == "major" and f.predicts == side
    assert (
        "`ld` is specialized divisible by 16; `inc` is specialized divisible by 16 (`tt.divisibility`): offsets "
        "computed with them keep that alignment, so the vector width need not drop."
    ) in f.explanation
    assert "`nr` and `nc` bound the masks: without a known divisibility" in f.explanation
    assert (
        f"Also only in `{side}`: `alpha`, a runtime fp32 used only in arithmetic (no address depends on it); `beta`, "
        "a runtime fp32 used only in arithmetic (no address depends on it)."
    ) in f.explanation
    assert f.remedy == (
        "when every caller's `wide` is a multiple of 16 elements, say so in the kernel with "
        "`tl.multiple_of(row * wide, 16)` on the computed offset (a hint on the bare parameter has no effect), or "
        "pass it as a multiple of 16 from a caller that lets the JIT specialize it; with TorchInductor, compile this "
        "shape statically (`dynamic=False`, or `torch._dynamo.mark_static` on the dimension); when every index fits "
        "below 2^31, pass `wide` as a 32-bit integer (the JIT types an integer argument i64 only when it is annotated "
        "`tl.int64` or its value does not fit in 32 bits)"
    )
    one = _added(side, other, new[:1] + new[2:3], ParamPairing([]), facts, ("a", "b"))
    assert one is not None and "offsets computed with it keep" in one.explanation
    assert "`nr` bounds the masks" in one.explanation
