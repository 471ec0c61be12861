"""Stage-0 rules (``irdiff/diagnose/rules/specialization.py``) on the facts of real compiles, called directly, in both
orders of the variants: each finding names the right parameters, the variant that lost the specialization, and why.

Kernels: ``tests/suites/spec_kinds.py`` (a 2-D multiply whose unit strides are called ``incx``/``incw``, not
``stride*``: the unit-stride verdict must come from the IR) and ``tests/suites/spec_renamed.py`` (a row stride renamed
and exempted by one or both decorator lists), sm80, from the shared compile cache. A few branches no
compiled pair reaches (a non-stride parameter equal to 1, options a launch cannot differ in) use facts built by hand.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest

from irdiff.diagnose.facts import VariantFacts, extract_facts
from irdiff.diagnose.model import Finding
from irdiff.diagnose.params import pair_params
from irdiff.diagnose.rules.common import Context
from irdiff.diagnose.rules.specialization import (
    rule_constexpr_changed,
    rule_constexpr_one,
    rule_divisibility,
    rule_options,
    rule_type_changed,
)
from irdiff.diagnose.testing import make_arg, make_context, make_facts
from irdiff.diagnose.texts import stage_text

SUITE = str(Path(__file__).parent / "suites" / "spec_kinds.py")
RENAMED = str(Path(__file__).parent / "suites" / "spec_renamed.py")
ORDERS = ["lost-first", "kept-first"]


@pytest.fixture(scope="module")
def pair(compile_suite):  # type: ignore[no-untyped-def]
    """``pair(a, b) -> Context`` comparing ``a`` with ``b`` (facts, TTGIR and Python of the real compiles)."""
    bundle = compile_suite(SUITE, ["plain", "mixed", "ragged", "wide", "tall"], "sm80")
    facts: dict[str, VariantFacts] = {n: extract_facts(v) for n, v in bundle.variants.items()}

    def make(a: str, b: str) -> Context:
        va, vb = bundle.variants[a], bundle.variants[b]
        return Context(
            a,
            b,
            facts[a],
            facts[b],
            {a: stage_text(va, "ttgir"), b: stage_text(vb, "ttgir")},
            {a: stage_text(va, "python"), b: stage_text(vb, "python")},
        )

    return make


def ordered(pair, lost: str, kept: str, order: str) -> Context:  # type: ignore[no-untyped-def]
    return pair(lost, kept) if order == "lost-first" else pair(kept, lost)


def texts(f: Finding, variant: str, stage: str) -> list[str]:
    return [e.text for e in f.evidence if e.variant == variant and e.stage == stage]


# ------------------------------------------------------------------------------------------ spec.constexpr-one-lost


@pytest.mark.parametrize("order", ORDERS)
def test_unit_strides_lost_by_annotation_and_do_not_specialize(pair, order: str) -> None:  # type: ignore[no-untyped-def]
    """``mixed`` keeps ``incx`` (annotated ``int``) and ``incw`` (``do_not_specialize``) runtime i32; in ``plain``
    the JIT made both the constant 1. Both multiply a ``tl.arange`` offset in an address (read from TTGIR, not from
    the names), so the loss is critical, and each parameter is given its own reason and remedy."""
    (f,) = rule_constexpr_one(ordered(pair, "mixed", "plain", order))
    assert (f.id, f.severity, f.predicts, f.stage) == ("spec.constexpr-one-lost", "critical", "mixed", "spec")
    assert f.title == (
        "`incx` and `incw` lose the constant-1 specialization in `mixed` (`int` annotation, `do_not_specialize`)"
    )
    assert f.explanation.startswith(
        "In `mixed`, `incx` and `incw` are runtime `i32` arguments, while in `plain` the JIT saw the value 1 and made "
        "them a compile-time constant. `incx` is annotated `int`: the JIT types it `i32` from the annotation and no "
        "longer turns the value 1 into a constant"
    )
    assert (
        "`incx` is annotated `int`: the JIT types it `i32` from the annotation and no longer turns the value 1 into a "
        "constant (since Triton 3.4 the annotation replaces the specialized type in the generated binder, "
        "`create_function_from_signature` in `triton/runtime/jit.py`). `incw` is listed in `do_not_specialize`: the "
        "JIT passes the value as a runtime integer and never makes 1 a constant. A unit stride that is a constant lets "
        "AxisInfo prove that `offs * stride` is contiguous; as a runtime value the product has contiguity 1 along that "
        "dimension, so the coalescing pass cannot vectorize the tile's loads and stores, and everything downstream "
        "(vector width, cp.async pipelining) follows."
    ) in f.explanation
    assert f.remedy == (
        "drop the `int` annotation on `incx` (or declare unit strides `tl.constexpr`); remove `incw` from "
        "`do_not_specialize`; or, if the value is always 1, state the contiguity on the strided offsets: "
        "`tl.max_contiguous(tl.multiple_of(offs * incx, BLOCK), BLOCK)` (the same hint on `offs` alone does not help: "
        "the product with a runtime value loses it)."
    )
    spec_lost = texts(f, "mixed", "spec")
    assert [t.split(":")[0] for t in spec_lost] == ["incx", "incw"]
    assert spec_lost[0].startswith("incx: i32 — value 1, annotated `int`")
    assert spec_lost[1].startswith("incw: i32 — value 1, listed in do_not_specialize")
    assert texts(f, "plain", "spec") == [
        "incx: constexpr = 1 — value 1: the JIT specializes an int equal to 1 to the constant 1",
        "incw: constexpr = 1 — value 1: the JIT specializes an int equal to 1 to the constant 1",
    ]
    assert texts(f, "mixed", "ttir") == ["%incx: i32", "%incw: i32"]
    # the annotated parameter's line, then the decorator naming the other (nothing cited in `plain`'s source)
    py = [e for e in f.evidence if e.stage == "python"]
    assert [e.variant for e in py] == ["mixed", "mixed"]
    assert "incx: int" in py[0].text and py[0].text.startswith("def mul_mixed(")
    assert py[1].text == '@triton.jit(do_not_specialize=["incw"])' and py[1].line == (py[0].line or 0) - 1


def test_constant_one_lost_on_a_non_stride_is_major_without_the_axisinfo_story() -> None:
    """A parameter equal to 1 that is no address stride (no TTGIR: nothing multiplies an arange offset) loses the
    constant too, but nothing about contiguity follows: major, not critical; the reason-only cause names it."""
    lost = make_facts("rt", args=[make_arg("n", "i32", reason="value 1, from a caller that passes a tensor size")])
    kept = make_facts("k", args=[make_arg("n", "constexpr", constexpr="1")])
    for ctx in (make_context(lost, kept), make_context(kept, lost)):
        (f,) = rule_constexpr_one(ctx)
        assert (f.severity, f.predicts) == ("major", "rt")
        assert f.title == "`n` loses the constant-1 specialization in `rt`"
        assert f.explanation == (
            "In `rt`, `n` is a runtime `i32` argument, while in `k` the JIT saw the value 1 and made it a "
            "compile-time constant. `n`: value 1, from a caller that passes a tensor size. "
        )
        assert f.remedy == (
            "or, if the value is always 1, state the contiguity on the strided offsets: "
            "`tl.max_contiguous(tl.multiple_of(offs * n, BLOCK), BLOCK)` (the same hint on `offs` alone does not "
            "help: the product with a runtime value loses it)."
        )


def test_constant_one_lost_by_do_not_specialize_only() -> None:
    lost = make_facts("d", args=[make_arg("k", "i32", do_not_specialize=True)])
    kept = make_facts("c", args=[make_arg("k", "constexpr", constexpr="1")])
    (f,) = rule_constexpr_one(make_context(kept, lost))
    assert f.title == "`k` loses the constant-1 specialization in `d` (`do_not_specialize`)"
    assert f.remedy is not None and f.remedy.startswith("remove `k` from `do_not_specialize`; or, if the value")
    # a constant other than 1, or 1 on both sides, is no constant-1 loss
    two = make_facts("t", args=[make_arg("k", "constexpr", constexpr="2")])
    assert rule_constexpr_one(make_context(lost, two)) == []
    assert rule_constexpr_one(make_context(kept, kept)) == []


def test_constant_one_lost_by_several_parameters_for_several_reasons(pair) -> None:  # type: ignore[no-untyped-def]
    """Two annotated parameters (two annotations), two in ``do_not_specialize`` (one also annotated: the decorator
    decides), two passed 1 as runtime values for a reason of their own. Only ``incx`` multiplies an arange offset in
    ``mixed``'s real TTGIR among them: not every parameter is a unit stride, so the loss is major, not critical."""
    ttgir = pair("mixed", "plain").ttgir["mixed"]
    lost_args = [
        make_arg("incx", "i32", annotation="int"),
        make_arg("p", "i32", index=1, annotation="tl.int32"),
        make_arg("d1", "i32", index=2, do_not_specialize=True),
        make_arg("d2", "i32", index=3, do_not_specialize=True, annotation="int"),
        make_arg("r1", "i32", index=4, reason="value 1 from the first caller"),
        make_arg("r2", "i32", index=5, reason="value 1 from the second caller"),
    ]
    kept_args = [make_arg(a.name, "constexpr", constexpr="1", index=a.index) for a in lost_args]
    lost, kept = make_facts("many", args=lost_args), make_facts("one", args=kept_args)
    for ctx in (make_context(lost, kept, ttgir=ttgir), make_context(kept, lost, ttgir=ttgir)):
        (f,) = rule_constexpr_one(ctx)
        assert (f.severity, f.predicts) == ("major", "many")
        assert f.title == (
            "`incx`, `p`, `d1`, `d2`, `r1` and `r2` lose the constant-1 specialization in `many` (`int` and "
            "`tl.int32` annotation, `do_not_specialize`)"
        )
        assert f.explanation == (
            "In `many`, `incx`, `p`, `d1`, `d2`, `r1` and `r2` are runtime `i32` arguments, while in `one` the JIT saw "
            "the value 1 and made them a compile-time constant. `incx` and `p` are annotated `int` and `tl.int32`: the "
            "JIT types them `i32` from the annotation and no longer turns the value 1 into a constant (since Triton "
            "3.4 the annotation replaces the specialized type in the generated binder, `create_function_from_signature` "
            "in `triton/runtime/jit.py`). `d1` and `d2` are listed in `do_not_specialize`: the JIT passes the value as "
            "a runtime integer and never makes 1 a constant. `r1`: value 1 from the first caller; `r2`: value 1 from "
            "the second caller. "
        )
        assert f.remedy is not None and f.remedy.startswith(
            "drop the `int` annotation on `incx` and `p` (or declare unit strides `tl.constexpr`); remove `d1` and `d2` "
            "from `do_not_specialize`; or, if the value is always 1, state the contiguity on the strided offsets: "
            "`tl.max_contiguous(tl.multiple_of(offs * incx, BLOCK), BLOCK)`"
        )


def test_unit_strides_found_in_numbered_arguments(pair) -> None:  # type: ignore[no-untyped-def]
    """Triton <= 3.3 prints function arguments numbered (``%arg6``), not named: the runtime parameters, in signature
    order, name them. ``mixed``'s real TTGIR with its arguments renumbered still shows ``incx``/``incw`` as unit
    strides (critical); without the runtime names nothing could be read and the loss would be only major."""
    ctx = pair("mixed", "plain")
    runtime = [a.name for a in ctx.fa.args if a.type != "constexpr"]
    text = ctx.ttgir["mixed"]
    for i, name in enumerate(runtime):
        text = re.sub(rf"%{name}(?![\w.$-])", f"%arg{i}", text)
    assert "%incx" not in text and "%arg6" in text
    numbered = Context(ctx.a, ctx.b, ctx.fa, ctx.fb, {**ctx.ttgir, "mixed": text}, ctx.python)
    (f,) = rule_constexpr_one(numbered)
    assert f.severity == "critical" and "A unit stride that is a constant" in f.explanation


def test_constant_one_lost_under_another_name(pair) -> None:  # type: ignore[no-untyped-def]
    """Parameters paired by role across a rename (``incx`` in ``mixed`` is ``step`` in the other variant): each side
    is quoted under its own name, the title under the name of the variant that lost the constant."""
    real = pair("mixed", "plain")
    renamed = [make_arg("step" if a.name == "incx" else a.name, a.type, constexpr=a.constexpr, index=a.index,
                        reason=a.reason) for a in real.fb.args]  # fmt: skip
    kept = make_facts("plain", args=renamed, peer_names={"incx": "step"})
    lost = make_facts("mixed", args=real.fa.args, peer_names={"step": "incx"})
    for ctx in (make_context(lost, kept), make_context(kept, lost)):
        (f,) = rule_constexpr_one(ctx)
        assert f.title.startswith("`incx` and `incw` lose the constant-1 specialization in `mixed`")
        assert [t.split(":")[0] for t in texts(f, "plain", "spec")] == ["step", "incw"]
        assert [t.split(":")[0] for t in texts(f, "mixed", "spec")] == ["incx", "incw"]


def test_constant_one_lost_without_source_texts() -> None:
    """A context of facts only (no TTGIR, no Python: ``Context``'s defaults) still gives the finding, citing no
    source line and no unit stride."""
    lost = make_facts(
        "d", args=[make_arg("k", "i32", do_not_specialize=True), make_arg("j", "i32", index=1, annotation="int")]
    )
    kept = make_facts(
        "c", args=[make_arg("k", "constexpr", constexpr="1"), make_arg("j", "constexpr", index=1, constexpr="1")]
    )
    (f,) = rule_constexpr_one(Context("d", "c", lost, kept))
    assert f.severity == "major" and f.title.startswith("`k` and `j` lose the constant-1 specialization in `d`")
    assert not [e for e in f.evidence if e.stage == "python"]


def test_constant_one_lost_on_both_sides_is_one_finding() -> None:
    """Finding ids are unique in a diagnosis: when each variant lost a different constant, the first-named variant's
    loss is the finding."""
    a = make_facts("a", args=[make_arg("x", "i32"), make_arg("y", "constexpr", constexpr="1", index=1)])
    b = make_facts("b", args=[make_arg("x", "constexpr", constexpr="1"), make_arg("y", "i32", index=1)])
    assert [(f.predicts, f.title[:3]) for f in rule_constexpr_one(make_context(a, b))] == [("a", "`x`")]
    assert [(f.predicts, f.title[:3]) for f in rule_constexpr_one(make_context(b, a))] == [("b", "`y`")]


# ------------------------------------------------------------------------------------------ spec.divisibility-lost


@pytest.mark.parametrize("order", ORDERS)
def test_divisibility_lost_by_pointer_mask_bound_and_row_stride(pair, order: str) -> None:  # type: ignore[no-untyped-def]
    """``ragged``: ``x_ptr`` is listed in ``do_not_specialize_on_alignment``, ``R`` (only in the row mask) and
    ``ldw`` (a row stride in the offsets) are 1000. Each gets its own sentence: the pointer's alignment, the offsets
    built from ``ldw``, the mask bound ``R`` (roles from the IR); the remedies follow the same split."""
    (f,) = rule_divisibility(ordered(pair, "ragged", "plain", order))
    assert (f.id, f.severity, f.predicts, f.stage) == ("spec.divisibility-lost", "major", "ragged", "spec")
    assert f.title == "`x_ptr`, `R` and `ldw` lose `tt.divisibility = 16` in `ragged`"
    assert f.explanation.startswith(
        "In `plain` the JIT marks `x_ptr`, `R` and `ldw` `tt.divisibility = 16` (pointers 16-byte aligned, integers "
        "multiples of 16); in `ragged` they do not: `x_ptr` is listed in `do_not_specialize_on_alignment`; "
        "`R`: value 1000: a runtime i32; not a multiple of 16, so no divisibility is recorded; "
        "`ldw`: value 1000: a runtime i32; not a multiple of 16, so no divisibility is recorded. "
    )
    assert f.explanation.endswith(
        "no divisibility is recorded. Without it AxisInfo assumes nothing about the alignment of `x_ptr` (divisibility "
        "1 byte), so even a contiguous row cannot be read with vector loads wider than one element. Offsets built from "
        "`ldw` (e.g. `row * stride`) lose their known divisibility, which caps the alignment AxisInfo can prove for "
        "every pointer that uses them. `R` is only used in masks (bound checks such as `offs < R`): without a known "
        "divisibility AxisInfo cannot prove that the mask is the same for several consecutive elements, and the "
        "load/store lowering never vectorizes wider than that. "
    )
    assert f.remedy == (
        "remove `x_ptr` from `do_not_specialize_on_alignment` (the cost is one extra compile per alignment class); "
        "pass a multiple of 16 for `R` and `ldw` (e.g. pad the size); or state the alignment in the kernel, when "
        "every caller guarantees it, with `tl.multiple_of(x_ptr + offs, 16)` on the pointer tensor / "
        "`tl.multiple_of(row * ldw, 16)` on the computed offset / `offs < tl.multiple_of(tl.full(offs.shape, R, "
        "tl.int32), 16)` as the bound: a hint on the bare parameter (`tl.multiple_of(x_ptr, 16)`) has no effect, "
        "because Triton attaches hints to the operation that defines a value and a parameter has none."
    )
    assert [t.split(":")[0] for t in texts(f, "ragged", "spec")] == ["x_ptr", "R", "ldw"]
    assert texts(f, "plain", "spec")[1] == (
        "R: i32 div16 — value 1024: a runtime i32; a multiple of 16, so it is marked divisible by 16"
    )
    assert texts(f, "ragged", "ttir") == ["%x_ptr: !tt.ptr<f16>", "%R: i32", "%ldw: i32"]
    assert texts(f, "plain", "ttir") == [
        "%x_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32}",
        "%R: i32 {tt.divisibility = 16 : i32}",
        "%ldw: i32 {tt.divisibility = 16 : i32}",
    ]
    assert texts(f, "ragged", "python") == ['@triton.jit(do_not_specialize_on_alignment=["x_ptr"])']


@pytest.fixture(scope="module")
def renamed(compile_suite):  # type: ignore[no-untyped-def]
    """``renamed(a, b) -> Context`` of ``tests/suites/spec_renamed.py`` (the row stride is ``stride_b`` in ``kept``,
    ``ldb`` elsewhere) with the parameters paired by role as :func:`irdiff.diagnose.diagnose` pairs them."""
    bundle = compile_suite(RENAMED, ["kept", "unaligned", "frozen"], "sm80")
    facts = {n: extract_facts(v) for n, v in bundle.variants.items()}
    stage = {n: (stage_text(v, "ttir"), stage_text(v, "python")) for n, v in bundle.variants.items()}
    spec = {n: v.specialization for n, v in bundle.variants.items()}

    def make(a: str, b: str) -> Context:
        fa, fb = dataclasses.replace(facts[a]), dataclasses.replace(facts[b])
        p = pair_params(spec[a], stage[a][0], spec[b], stage[b][0])
        fa.peer_names, fb.peer_names = p.aliases("a"), p.aliases("b")
        return Context(a, b, fa, fb, {}, {a: stage[a][1], b: stage[b][1]}, p)

    return make


@pytest.mark.parametrize("order", ORDERS)
def test_divisibility_lost_under_another_name_by_the_decorator(renamed, order: str) -> None:  # type: ignore[no-untyped-def]
    """``unaligned`` lists ``ldb`` in ``do_not_specialize_on_alignment``; ``kept`` calls the same row stride
    ``stride_b`` (paired by role). The remedy names the decorator's own spelling, ``ldb`` (the name to remove from
    the list), never ``stride_b``; each side's stage-0 line its own name."""
    ctx = ordered(renamed, "unaligned", "kept", order)
    lost, kept = (ctx.fa, ctx.fb) if order == "lost-first" else (ctx.fb, ctx.fa)
    peer = kept.peer("ldb")
    assert peer is not None and peer.name == "stride_b" and peer.divisibility == 16
    ldb = lost.arg("ldb")
    assert ldb is not None and ldb.divisibility is None and ldb.do_not_specialize_on_alignment
    (f,) = rule_divisibility(ctx)
    assert (f.title, f.predicts) == ("`ldb` loses `tt.divisibility = 16` in `unaligned`", "unaligned")
    assert "in `unaligned` it does not: `ldb` is listed in `do_not_specialize_on_alignment`. " in f.explanation
    assert f.remedy is not None and f.remedy.startswith(
        "remove `ldb` from `do_not_specialize_on_alignment` (the cost is one extra compile per alignment class); or "
        "state the alignment in the kernel, when every caller guarantees it, with `tl.multiple_of(row * ldb, 16)`"
    )
    assert "stride_b" not in f.remedy
    assert [t.split(":")[0] for t in texts(f, "unaligned", "spec")] == ["ldb"]
    assert [t.split(":")[0] for t in texts(f, "kept", "spec")] == ["stride_b"]
    assert texts(f, "unaligned", "python") == ['@triton.jit(do_not_specialize_on_alignment=["ldb"])']


@pytest.mark.parametrize("order", ORDERS)
def test_divisibility_lost_by_both_decorator_lists(renamed, order: str) -> None:  # type: ignore[no-untyped-def]
    """``frozen`` lists ``ldb`` in ``do_not_specialize`` and in ``do_not_specialize_on_alignment``. Removing it from
    ``do_not_specialize`` alone gives ``unaligned``, which still has no divisibility (a real compile): the remedy
    names both lists (it named only ``do_not_specialize``)."""
    (f,) = rule_divisibility(ordered(renamed, "frozen", "kept", order))
    assert (f.title, f.predicts) == ("`ldb` loses `tt.divisibility = 16` in `frozen`", "frozen")
    assert f.remedy is not None and f.remedy.startswith(
        "remove `ldb` from `do_not_specialize`; remove `ldb` from `do_not_specialize_on_alignment` (the cost is one "
        "extra compile per alignment class); or state the alignment"
    )
    assert "stride_b" not in f.remedy
    # both words sit on one decorator line: cited once
    assert texts(f, "frozen", "python") == [
        '@triton.jit(do_not_specialize=["ldb"], do_not_specialize_on_alignment=["ldb"])'
    ]
    # the first removal alone is not enough: `unaligned` still loses the divisibility; frozen vs unaligned: neither
    # has it, no loss
    assert [x.predicts for x in rule_divisibility(ordered(renamed, "unaligned", "kept", order))] == ["unaligned"]
    assert rule_divisibility(ordered(renamed, "frozen", "unaligned", order)) == []


def test_divisibility_ignores_a_constant_one(pair) -> None:  # type: ignore[no-untyped-def]
    """``mixed``'s ``incw`` (``do_not_specialize``) has no divisibility where ``plain`` made it the constant 1: that
    is the constant-1 loss, not a divisibility loss; nothing else differs in alignment."""
    assert rule_divisibility(pair("mixed", "plain")) == []
    assert rule_divisibility(pair("plain", "mixed")) == []


def test_divisibility_lost_by_do_not_specialize_and_an_annotation() -> None:
    """Parameters the JIT was told not to specialize get the decorator remedy, an annotated one its annotation; the
    caller's data is no remedy for either (the JIT was not free to specialize)."""
    lost = make_facts(
        "l",
        args=[
            make_arg("p", "*fp32", do_not_specialize=True),
            make_arg("q", "*fp32", index=1, annotation="tl.pointer_type"),
            make_arg("m", "i32", index=2, do_not_specialize=True),
        ],
    )
    kept = make_facts(
        "k",
        args=[
            make_arg("p", "*fp32", divisibility=16),
            make_arg("q", "*fp32", index=1, divisibility=16),
            make_arg("m", "i32", index=2, divisibility=16),
        ],
    )
    for ctx in (make_context(lost, kept), make_context(kept, lost)):
        (f,) = rule_divisibility(ctx)
        assert f.predicts == "l" and f.title == "`p`, `q` and `m` lose `tt.divisibility = 16` in `l`"
        assert "in `l` they do not: `p` and `m` are listed in `do_not_specialize`; `q` is annotated " in f.explanation
        assert "the alignment of `p` and `q` (divisibility 1 byte)" in f.explanation
        assert "Offsets built from `m`" in f.explanation and "only used in mask" not in f.explanation
        assert f.remedy is not None
        assert f.remedy.startswith(
            "remove `p` and `m` from `do_not_specialize` (the cost is one extra compile per alignment class); or state"
        )
        assert "pass a" not in f.remedy
        assert "`tl.multiple_of(p + offs, 16)` on the pointer tensor / `tl.multiple_of(row * m, 16)`" in f.remedy


def test_divisibility_reasons_grouped_per_kind() -> None:
    """Parameters sharing a reason share one clause (plural), each alignment exemption too; a parameter given no
    stage-0 reason is still named; seven losses cite at most six TTIR lines per side; both decorator words on one
    decorator line cite it once."""
    ref = "%{}: i32"
    from irdiff.diagnose.facts import Ref

    def arg(n: str, i: int, div: int | None, **kw: object) -> object:
        return make_arg(n, "i32", index=i, divisibility=div, ttir=Ref("ttir", 3, ref.format(n)), **kw)  # type: ignore[arg-type]

    spec: list[tuple[str, dict[str, Any]]] = [
        ("a1", {"annotation": "int"}),
        ("a2", {"annotation": "int"}),
        ("n1", {"do_not_specialize": True}),
        ("n2", {"do_not_specialize": True}),
        ("al1", {}),
        ("al2", {}),
        ("v", {}),
    ]
    lost_args = [arg(n, i, None, **kw) for i, (n, kw) in enumerate(spec)]
    for x in lost_args[4:6]:
        x.do_not_specialize_on_alignment = True  # type: ignore[attr-defined]
    lost = make_facts("l", args=lost_args, kernel="k", arg_roles={"v": ["mask"]})
    kept = make_facts("k", args=[arg(n, i, 16) for i, (n, _) in enumerate(spec)], kernel="k")
    src = '@triton.jit(do_not_specialize=["n1", "n2"], do_not_specialize_on_alignment=["al1", "al2"])\ndef k(a1):\n'
    for ctx in (make_context(lost, kept, python=src), make_context(kept, lost, python=src)):
        (f,) = rule_divisibility(ctx)
        assert (
            "they do not: `a1` and `a2` are annotated `int`; `n1` and `n2` are listed in `do_not_specialize`; `al1` "
            "and `al2` are listed in `do_not_specialize_on_alignment`; `v` was passed another value. "
        ) in f.explanation
        assert "Offsets built from `a1`, `a2`, `n1`, `n2`, `al1` and `al2`" in f.explanation
        assert "`v` is only used in masks (bound checks such as `offs < v`)" in f.explanation
        assert len(texts(f, "l", "ttir")) == 6 and len(texts(f, "k", "ttir")) == 6
        assert [(e.line, e.text) for e in f.evidence if e.stage == "python"] == [(1, src.splitlines()[0])]
        assert f.remedy is not None and f.remedy.startswith(
            "remove `n1` and `n2` from `do_not_specialize`; remove `al1` and `al2` from "
            "`do_not_specialize_on_alignment` (the cost is one extra compile per alignment class); pass a multiple of "
            "16 for `v` (e.g. pad the size); or state the alignment"
        )
        # one hint per kind: the first offset parameter, the first mask bound
        assert (
            "with `tl.multiple_of(row * a1, 16)` on the computed offset / `offs < tl.multiple_of(tl.full(" in f.remedy
        )
        assert "row * a2" not in f.remedy


def test_divisibility_of_two_mask_bounds() -> None:
    """Two parameters used only in bound checks (roles from the IR) share one plural sentence; the remedy hints at
    the first bound only."""
    lost = make_facts(
        "l", args=[make_arg("r", "i32", reason="value 999"), make_arg("c", "i32", index=1, reason="value 1001")],
        arg_roles={"r": ["mask"], "c": ["mask"]},
    )  # fmt: skip
    kept = make_facts("k", args=[make_arg("r", "i32", divisibility=16), make_arg("c", "i32", index=1, divisibility=16)])
    (f,) = rule_divisibility(make_context(kept, lost))
    assert f.explanation.endswith(
        "`r` and `c` are only used in masks (bound checks such as `offs < r`): without a known divisibility AxisInfo "
        "cannot prove that the mask is the same for several consecutive elements, and the load/store lowering never "
        "vectorizes wider than that. "
    )
    assert "Offsets built from" not in f.explanation
    assert f.remedy is not None and f.remedy.startswith("pass a multiple of 16 for `r` and `c` (e.g. pad the size); or")
    assert f.remedy.count("tl.full(offs.shape") == 1


def test_divisibility_lost_by_annotations_only_offers_the_hint_alone() -> None:
    lost = make_facts("l", args=[make_arg("n", "i64", annotation="tl.int64")])
    kept = make_facts("k", args=[make_arg("n", "i64", divisibility=16)])
    (f,) = rule_divisibility(make_context(lost, kept))
    assert f.remedy is not None and f.remedy.startswith(
        "state the alignment in the kernel, when every caller guarantees it, with `tl.multiple_of(row * n, 16)`"
    )


def test_divisibility_needs_a_runtime_value_that_had_it_elsewhere() -> None:
    """A constant (1 in one variant, a multiple of 16 in the other) is no divisibility loss; neither is a value
    without divisibility on both sides."""
    one = make_facts("c", args=[make_arg("n", "constexpr", constexpr="1"), make_arg("m", "i32", index=1)])
    sixteen = make_facts("r", args=[make_arg("n", "i32", divisibility=16), make_arg("m", "i32", index=1)])
    assert rule_divisibility(make_context(one, sixteen)) == []
    assert rule_divisibility(make_context(sixteen, one)) == []


def test_divisibility_under_another_name_and_without_source_text() -> None:
    """Paired across a rename (``x`` in ``l`` is ``src`` in ``k``): every sentence and remedy names the parameter as
    the variant that lost the divisibility spells it. A context without source texts (facts only) cites no line."""
    lost = make_facts(
        "l",
        args=[make_arg("x", "*fp16", do_not_specialize=True), make_arg("n", "i32", index=1, reason="value 1000")],
        peer_names={"src": "x", "size": "n"},
    )
    kept = make_facts(
        "k",
        args=[make_arg("src", "*fp16", divisibility=16), make_arg("size", "i32", index=1, divisibility=16)],
        peer_names={"x": "src", "n": "size"},
    )
    for ctx in (Context("l", "k", lost, kept), Context("k", "l", kept, lost)):
        (f,) = rule_divisibility(ctx)
        assert f.title == "`x` and `n` lose `tt.divisibility = 16` in `l`"
        assert "alignment of `x` (divisibility 1 byte)" in f.explanation and "Offsets built from `n`" in f.explanation
        assert f.remedy is not None and f.remedy.startswith("remove `x` from `do_not_specialize`")
        assert "`tl.multiple_of(row * n, 16)`" in f.remedy and "pass a multiple of 16 for `n`" in f.remedy
        assert [e.text.split(":")[0] for e in f.evidence if e.variant == "k"] == ["src", "size"]
        assert not [e for e in f.evidence if e.stage == "python"]


def test_divisibility_of_one_plain_pointer() -> None:
    lost = make_facts("l", args=[make_arg("p", "*fp16", divisibility=8, reason="base address 8-byte aligned")])
    kept = make_facts("k", args=[make_arg("p", "*fp16", divisibility=16)])
    (f,) = rule_divisibility(make_context(lost, kept))
    assert f.title == "`p` loses `tt.divisibility = 16` in `l`"
    assert "in `l` it does not: `p`: base address 8-byte aligned. " in f.explanation
    assert f.remedy == (
        "pass a 16-byte-aligned tensor for `p` (a fresh allocation, or a `.clone()` of an offset view: the JIT "
        "specializes on the base address of each call); or state the alignment in the kernel, when every caller "
        "guarantees it, with `tl.multiple_of(p + offs, 16)` on the pointer tensor: a hint on the bare parameter "
        "(`tl.multiple_of(p, 16)`) has no effect, because Triton attaches hints to the operation that defines a value "
        "and a parameter has none."
    )
    # more divisibility in `l` than in `k` is no loss in `l`; equal divisibility none at all
    assert [x.predicts for x in rule_divisibility(make_context(kept, lost))] == ["l"]
    assert rule_divisibility(make_context(kept, kept)) == []


# ------------------------------------------------------------------------------------------ spec.type-changed


@pytest.mark.parametrize("order", ORDERS)
def test_type_changed_predicts_the_i64_variant(pair, order: str) -> None:  # type: ignore[no-untyped-def]
    ctx = ordered(pair, "wide", "plain", order)
    (f,) = rule_type_changed(ctx)
    a, b = ctx.a, ctx.b
    ta, tb = ("i64", "i32") if a == "wide" else ("i32", "i64")
    assert (f.id, f.severity, f.predicts, f.stage) == ("spec.type-changed", "major", "wide", "spec")
    assert f.title == f"`R` is {ta} in `{a}`, {tb} in `{b}`"
    assert f.explanation.startswith(f"`R` is `{ta}` in `{a}` and `{tb}` in `{b}` (")
    assert f.explanation.endswith(". A 64-bit integer argument makes every index computed from it 64-bit.")
    assert texts(f, "wide", "ttir") == ["%R: i64 {tt.divisibility = 16 : i32}"]
    assert texts(f, "plain", "ttir") == ["%R: i32 {tt.divisibility = 16 : i32}"]
    assert texts(f, "wide", "spec")[0].startswith("R: i64 div16 — annotated `tl.int64`")
    assert rule_type_changed(pair("mixed", "plain")) == []  # i32 vs the constant 1 is no type change


def test_type_changed_two_parameters_listed_without_more() -> None:
    a = make_facts("a", args=[make_arg("x", "i64"), make_arg("y", "i64", index=1)])
    b = make_facts("b", args=[make_arg("x", "i32"), make_arg("y", "i32", index=1)])
    (f,) = rule_type_changed(make_context(a, b))
    assert f.title == "`x` is i64 in `a`, i32 in `b`; `y` is i64 in `a`, i32 in `b`"


def test_type_changed_pointer_element_type_is_minor_and_lists_at_most_two() -> None:
    def facts(name: str, t: str) -> VariantFacts:
        return make_facts(name, args=[make_arg(n, t, index=i) for i, n in enumerate(("x", "y", "z"))])

    (f,) = rule_type_changed(make_context(facts("h", "*fp16"), facts("s", "*fp32")))
    assert (f.severity, f.predicts) == ("minor", None)
    assert f.title == "`x` is *fp16 in `h`, *fp32 in `s`; `y` is *fp16 in `h`, *fp32 in `s` (and 1 more)"
    assert "64-bit" not in f.explanation
    assert f.explanation == (
        "`x` is `*fp16` in `h` and `*fp32` in `s` (); `y` is `*fp16` in `h` and `*fp32` in `s` (); `z` is `*fp16` in "
        "`h` and `*fp32` in `s` ()."
    )
    assert len(f.evidence) == 6


# ------------------------------------------------------------------------------------------ spec.constexpr-changed


@pytest.mark.parametrize("order", ORDERS)
def test_constexpr_changed_names_the_tile_size(pair, order: str) -> None:  # type: ignore[no-untyped-def]
    ctx = ordered(pair, "tall", "plain", order)
    (f,) = rule_constexpr_changed(ctx)
    x, y = ("32", "16") if ctx.a == "tall" else ("16", "32")
    assert (f.id, f.severity, f.predicts) == ("spec.constexpr-changed", "minor", None)
    assert f.title == f"Constexpr `BR` differs: `BR` = {x} in `{ctx.a}` vs {y} in `{ctx.b}`"
    assert f.explanation == (
        f"Compile-time constants differ: `BR` = {x} in `{ctx.a}` vs {y} in `{ctx.b}`. Each value is a separate "
        "compilation; code that depends on it (loop bounds, tile shapes, pipelining depth) is specialized for it."
    )
    assert f.stage == "spec"
    assert [(e.variant, e.stage, e.text) for e in f.evidence] == [
        (ctx.a, "spec", f"BR: constexpr = {x}"),
        (ctx.b, "spec", f"BR: constexpr = {y}"),
    ]
    assert rule_constexpr_changed(pair("mixed", "plain")) == []  # a constant 1 vs a runtime value: no constexpr


def test_constexpr_changed_under_another_name() -> None:
    """``S`` in ``a`` is ``STAGES`` in ``b`` (paired by role): quoted under ``a``'s name, and what it feeds is read
    from ``a``'s source under that name; a context without source texts says nothing about what it feeds."""
    src = "def k(S: tl.constexpr):\n    for i in tl.range(0, 8, num_stages=S, flatten=S, loop_unroll_factor=S):\n"
    a = make_facts("a", args=[make_arg("S", "constexpr", constexpr="2")], peer_names={"STAGES": "S"})
    b = make_facts("b", args=[make_arg("STAGES", "constexpr", constexpr="4")], peer_names={"S": "STAGES"})
    ctx = Context("a", "b", a, b, {}, {"a": src, "b": src.replace("S", "STAGES")})
    (f,) = rule_constexpr_changed(ctx)
    assert f.title == "Constexpr `S` differs: `S` = 2 in `a` vs 4 in `b`" and f.severity == "major"
    assert f.explanation.startswith("Compile-time constants differ: `S` = 2 in `a` vs 4 in `b`. Each value")
    assert f.explanation.endswith(" `S` feeds `tl.range(..., num_stages=...)`, which sets the loop's `tt.num_stages` "
                                  "attribute: how many iterations ahead the software pipeliner may prefetch.")  # fmt: skip
    for key in ("num_stages", "flatten", "loop_unroll_factor"):
        only = Context("a", "b", a, b, {}, {"a": f"tl.range(0, 8, {key}=S)\n", "b": ""})
        assert rule_constexpr_changed(only)[0].severity == "major", key
    (bare,) = rule_constexpr_changed(Context("a", "b", a, b))
    assert bare.severity == "minor" and "feeds" not in bare.explanation


_LOOP = """
@triton.jit
def k(x_ptr, S: tl.constexpr, F: tl.constexpr, U: tl.constexpr, B: tl.constexpr):
    for i in tl.range(0, 8, num_stages=S, flatten=F):
        for j in tl.range(0, 8, loop_unroll_factor=U):
            pass
"""


def test_constexpr_feeding_a_loop_option_is_major() -> None:
    """What a constant feeds is read from the kernel source: ``num_stages=S`` (pipelining depth, named), ``flatten=F``
    and ``loop_unroll_factor=U`` make the change major; ``B``, which feeds nothing, keeps it minor."""

    def facts(name: str, v: str) -> VariantFacts:
        return make_facts(name, args=[make_arg(n, "constexpr", constexpr=v, index=i) for i, n in enumerate("SFUB")])

    def one(name: str) -> VariantFacts:
        args = [make_arg(n, "constexpr", constexpr="2" if n == name else "3", index=i) for i, n in enumerate("SFUB")]
        return make_facts("a", args=args)

    (f,) = rule_constexpr_changed(make_context(one("S"), facts("b", "3"), python=_LOOP))
    assert f.severity == "major" and f.title == "Constexpr `S` differs: `S` = 2 in `a` vs 3 in `b`"
    assert f.explanation.endswith(
        " `S` feeds `tl.range(..., num_stages=...)`, which sets the loop's `tt.num_stages` attribute: how many "
        "iterations ahead the software pipeliner may prefetch."
    )
    for name in "FU":
        (g,) = rule_constexpr_changed(make_context(one(name), facts("b", "3"), python=_LOOP))
        assert g.severity == "major" and "num_stages" not in g.explanation
    (h,) = rule_constexpr_changed(make_context(one("B"), facts("b", "3"), python=_LOOP))
    assert h.severity == "minor" and "feeds" not in h.explanation
    (both,) = rule_constexpr_changed(make_context(facts("a", "2"), facts("b", "3"), python=_LOOP))
    assert both.title.startswith("Constexpr `S`, `F`, `U` and `B` differ: `S` = 2 in `a` vs 3 in `b`, `F` = 2")


# ------------------------------------------------------------------------------------------ options.changed


@pytest.mark.parametrize("order", ORDERS)
def test_options_num_warps(pair, order: str) -> None:  # type: ignore[no-untyped-def]
    ctx = ordered(pair, "tall", "plain", order)
    (f,) = rule_options(ctx)
    x, y = (8, 4) if ctx.a == "tall" else (4, 8)
    assert (f.id, f.severity, f.stage) == ("options.changed", "major", "options")
    assert f.title == f"Options differ: `num_warps` = {x} in `{ctx.a}` vs {y} in `{ctx.b}`"
    assert f.explanation == (
        f"Compile options differ: `num_warps` = {x} in `{ctx.a}` vs {y} in `{ctx.b}`. `num_warps` is the number of "
        f"warps per CTA: {x} ({32 * x} threads) in `{ctx.a}` vs {y} ({32 * y} threads) in `{ctx.b}`. The layouts "
        "split each tile over them (`warpsPerCTA`), so with more warps each thread holds and issues fewer elements, a "
        "reduction across warps combines its partial results through shared memory, and each thread may use fewer "
        "registers (one SM's register file is shared by all its resident threads)."
    )
    assert [(e.variant, e.text) for e in f.evidence] == [(ctx.a, f"num_warps = {x}"), (ctx.b, f"num_warps = {y}")]
    assert rule_options(pair("plain", "ragged")) == []


def test_options_every_key_in_both_orders() -> None:
    one = make_facts("one", options={"num_warps": 4, "num_stages": 3, "num_ctas": 1, "maxnreg": None})
    two = make_facts("two", options={"num_warps": 4, "num_stages": 3, "num_ctas": 2, "maxnreg": 64})
    (f,) = rule_options(make_context(one, two))
    assert (
        f.title
        == "Options differ: `num_ctas` = 1 in `one` vs 2 in `two`, `maxnreg` = unset (no cap) in `one` vs 64 in `two`"
    )
    assert f.explanation == (
        "Compile options differ: `num_ctas` = 1 in `one` vs 2 in `two`, `maxnreg` = unset (no cap) in `one` vs 64 in "
        "`two`. `maxnreg` caps the registers per thread (Triton passes it to ptxas as `.maxnreg` in the PTX): a cap "
        "below what the kernel needs makes ptxas spill to local memory (slow, through L1/L2), while fewer registers "
        "per thread can let more warps fit on an SM."
    )
    assert [(e.variant, e.stage, e.text) for e in f.evidence] == [
        ("one", "options", "num_ctas = 1"),
        ("two", "options", "num_ctas = 2"),
        ("one", "options", "maxnreg = unset (no cap)"),
        ("two", "options", "maxnreg = 64"),
    ]
    (g,) = rule_options(
        make_context(make_facts("s2", options={"num_stages": 2}), make_facts("s4", options={"num_stages": 4}))
    )
    assert g.explanation == (
        "Compile options differ: `num_stages` = 2 in `s2` vs 4 in `s4`. `num_stages` is the default pipelining depth "
        "of every `scf.for` with loads (cp.async ring size)."
    )


def test_options_maxnreg_unset_is_a_setting_and_other_unset_options_are_unknown() -> None:
    capped = make_facts("cap", options={"num_warps": 4, "num_stages": 2, "maxnreg": 128})
    free = make_facts("free", options={"num_warps": 4, "num_stages": 3, "num_ctas": 2})
    (f,) = rule_options(make_context(capped, free))
    assert f.title == (
        "Options differ: `num_stages` = 2 in `cap` vs 3 in `free`, `maxnreg` = 128 in `cap` vs unset (no cap) in `free`"
    )
    assert "`num_ctas`" not in f.title  # unset in `cap`: unknown, not a difference
    assert " `maxnreg` caps the registers per thread" in f.explanation
    assert " `num_stages` is the default pipelining depth of every `scf.for`" in f.explanation
    assert "`num_warps` changes" not in f.explanation
    assert [e.text for e in f.evidence if e.variant == "free"] == ["num_stages = 3", "maxnreg = unset (no cap)"]


def test_unit_strides_numbered_with_a_constexpr_declared_first(pair) -> None:  # type: ignore[no-untyped-def]
    """As above, with ``mixed``'s constexpr parameters declared before its runtime ones: ``%argN`` numbers the
    runtime parameters only (Triton drops constexprs from the signature), so ``incx``/``incw`` are still found as
    unit strides (critical) in both orders of the variants."""
    ctx = pair("mixed", "plain")
    runtime = [a.name for a in ctx.fa.args if a.type != "constexpr"]
    text = ctx.ttgir["mixed"]
    for i, name in enumerate(runtime):
        text = re.sub(rf"%{name}(?![\w.$-])", f"%arg{i}", text)
    consts = [a for a in ctx.fa.args if a.type == "constexpr"]
    assert consts and ctx.fa.args[0].type != "constexpr"  # the real kernel declares them last
    first = dataclasses.replace(ctx.fa, args=consts + [a for a in ctx.fa.args if a.type != "constexpr"])
    ttgir = {**ctx.ttgir, "mixed": text}
    for numbered in (Context("mixed", "plain", first, ctx.fb, ttgir, ctx.python),
                     Context("plain", "mixed", ctx.fb, first, ttgir, ctx.python)):  # fmt: skip
        (f,) = rule_constexpr_one(numbered)
        assert f.severity == "critical" and "A unit stride that is a constant" in f.explanation


def test_divisibility_lost_on_a_parameter_whose_type_changed() -> None:
    """``p`` is a pointer without divisibility in ``lost`` and an i32 divisible by 16 in ``kept`` (a tensor passed
    where the other caller passes an integer): the sentences follow the lost side's type (a pointer's alignment),
    in both orders of the variants."""
    lost = make_facts("lost", args=[make_arg("p", "*fp32")])
    kept = make_facts("kept", args=[make_arg("p", "i32", divisibility=16)])
    for ctx in (make_context(lost, kept), make_context(kept, lost)):
        (f,) = rule_divisibility(ctx)
        assert "Without it AxisInfo assumes nothing about the alignment of `p`" in f.explanation
        assert "Offsets built from" not in f.explanation and "only used in masks" not in f.explanation
