"""``lower.mask-alignment`` (``irdiff/diagnose/rules/lowering.py``) called directly on the facts of real compiles, in
both orders of the variants.

Kernels (sm80, from the shared compile cache): ``tests/suites/rule_lowering.py`` (an fp16 ``alpha * x + y`` masked
by ``i < count``: ``count`` specialized divisible by 16, not specialized, or not a multiple of 16; ``x`` misaligned)
and the README's vector add ``tests/suites/readme_add.py`` (``n`` hinted on the bare parameter, a hint Triton
drops). The context is built as :func:`irdiff.diagnose.diagnose` builds it: parameters paired by role, TTGIR and
Python texts by variant.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from irdiff.bundle import Bundle
from irdiff.diagnose.facts import VariantFacts, extract_facts
from irdiff.diagnose.model import Finding
from irdiff.diagnose.params import pair_params
from irdiff.diagnose.rules.common import Context
from irdiff.diagnose.rules.lowering import _mask_source, _pair_lowered, rule_mask_alignment
from irdiff.diagnose.texts import stage_text

SUITES = Path(__file__).parent / "suites"
LOWER = str(SUITES / "rule_lowering.py")
ADD = str(SUITES / "readme_add.py")
BOTH = pytest.mark.parametrize("swap", [False, True], ids=["as-named", "swapped"])
LABELS = "`x` load 2048xf16, `y` load 2048xf16, store 2048xf16 to `out_ptr`"

# Facts extracted once per process (mutation runs fork the test process per mutant: the facts are inputs).
_FACTS: dict[str, VariantFacts] = {}


@pytest.fixture(scope="module")
def axpy(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(LOWER, ["spec", "dns", "ragged", "skew"], "sm80")


@pytest.fixture(scope="module")
def add80(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(ADD, ["plain", "dns", "dns_hint", "dns_param_hint"], "sm80")


def context(bundle: Bundle, a: str, b: str) -> Context:
    va, vb = bundle.compiled_variant(a), bundle.compiled_variant(b)
    for n, v in ((a, va), (b, vb)):
        key = f"{bundle.suite}:{bundle.target}:{n}"
        if key not in _FACTS:
            _FACTS[key] = extract_facts(v)
    fa, fb = (_FACTS[f"{bundle.suite}:{bundle.target}:{n}"] for n in (a, b))
    pairing = pair_params(va.specialization, stage_text(va, "ttir"), vb.specialization, stage_text(vb, "ttir"))
    fa.peer_names, fb.peer_names = pairing.aliases("a"), pairing.aliases("b")
    return Context(
        a,
        b,
        fa,
        fb,
        {a: stage_text(va, "ttgir"), b: stage_text(vb, "ttgir")},
        {a: stage_text(va, "python"), b: stage_text(vb, "python")},
        pairing=pairing,
    )


def one(bundle: Bundle, x: str, y: str, swap: bool) -> Finding:
    a, b = (y, x) if swap else (x, y)
    found = rule_mask_alignment(context(bundle, a, b))
    assert [f.id for f in found] == ["lower.mask-alignment"]
    return found[0]


def line_of(bundle: Bundle, variant: str, stage: str, line: int | None) -> str:
    assert line is not None
    return stage_text(bundle.compiled_variant(variant), stage).splitlines()[line - 1]


@BOTH
def test_unspecialized_bound_splits_every_masked_access(axpy: Bundle, swap: bool) -> None:
    """``dns``: ``count`` not specialized, so the mask ``i < count`` has constancy 1 and each of the 8 fp16 per
    vector becomes its own 16-bit access; ``spec`` keeps 2 × 128-bit. Same title, same narrow side in both orders."""
    f = one(axpy, "dns", "spec", swap)
    assert (f.severity, f.stage, f.predicts) == ("major", "llir", "dns")
    assert f.title == f"Mask alignment splits {LABELS} into 16-bit accesses in `dns` (128-bit in `spec`)"
    assert "each thread gets 8 contiguous elements (`perThread: 8`)" in f.explanation
    assert "enough for 128-bit vectors" in f.explanation
    assert (
        "`x` load 2048xf16, `y` load 2048xf16: 16 × 16-bit instructions per thread each in `dns` vs 2 × 128-bit in "
        "`spec` (`ld.global.b16` vs `ld.global.v4.b32`); store 2048xf16 to `out_ptr`: 16 × 16-bit instructions per "
        "thread in `dns` vs 2 × 128-bit in `spec` (`st.global.b16` vs `st.global.v4.b32`)."
    ) in f.explanation
    # the mask is named by its Python source and its real line, the wide side by its divisibility
    src = stage_text(axpy.compiled_variant("dns"), "python").splitlines()
    line = next(i + 1 for i, t in enumerate(src) if "keep = i < count" in t)
    assert f"The mask is computed from `count` (`keep = i < count`, line {line}), which `spec` marks " in f.explanation
    assert "and `dns` does not." in f.explanation
    assert "enough for the 8-element vectors of `spec`" in f.explanation
    assert "every element in `dns` gets its own predicated 16-bit instruction" in f.explanation
    assert not re.search(r"%\w", f.explanation)
    assert f.remedy == (
        "remove `count` from `do_not_specialize` (the JIT then marks it divisible by 16 whenever its value is); "
        "compare with `tl.multiple_of(tl.full(offs.shape, count, tl.int32), 16)` instead of `count`, only if every "
        "caller passes a multiple of 16 (a false hint lets the last vector read or write past the bound; "
        "`tl.multiple_of(count, 16)` on the parameter itself has no effect)."
    )
    # evidence: each op, its mask's definition, both coalescing lines, both LLIR/PTX instructions, all real lines
    seen = {(e.variant, e.stage) for e in f.evidence}
    assert seen == {(v, s) for v in ("dns", "spec") for s in ("llvm_debug", "llir", "ptx")} | {("dns", "ttgir")}
    for e in f.evidence:
        if e.stage in ("ttgir", "ptx"):
            assert e.text.split("   (")[0] in line_of(axpy, e.variant, e.stage, e.line)
    ttgir = [e.text for e in f.evidence if e.stage == "ttgir"]
    assert sum("tt.load" in t for t in ttgir) == 2 and sum("tt.store" in t for t in ttgir) == 1
    assert any("arith.cmpi slt" in t for t in ttgir) and any("tt.splat %count" in t for t in ttgir)
    ptx = {e.variant: [e.text for e in f.evidence if e.stage == "ptx"] for e in f.evidence}
    assert any(t.endswith("(16× ld.global.b16 for this op)") for t in ptx["dns"])
    assert any(t.endswith("(16× st.global.b16 for this op)") for t in ptx["dns"])
    assert any(t.endswith("(2× ld.global.v4.b32 for this op)") for t in ptx["spec"])
    assert any(t.endswith("(2× st.global.v4.b32 for this op)") for t in ptx["spec"])
    assert all("perThread: 8" in e.text for e in f.evidence if e.stage == "llvm_debug")
    assert len(f.evidence) == len({(e.variant, e.stage, e.line, e.text) for e in f.evidence})


@BOTH
def test_bound_not_a_multiple_of_16_asks_for_padding(axpy: Bundle, swap: bool) -> None:
    """``ragged``: ``count`` = 2^20 - 8 is not divisible by 16 (nothing to un-list from ``do_not_specialize``): the
    remedy pads the tensor instead."""
    f = one(axpy, "ragged", "spec", swap)
    assert f.predicts == "ragged"
    assert f.title == f"Mask alignment splits {LABELS} into 16-bit accesses in `ragged` (128-bit in `spec`)"
    assert "which `spec` marks `tt.divisibility = 16` and `ragged` does not" in f.explanation
    assert f.remedy is not None
    assert f.remedy.startswith("pad the tensor so that `count` is a multiple of 16; compare with `tl.multiple_of(")
    assert "do_not_specialize" not in f.remedy


@BOTH
def test_no_finding_when_the_pointer_or_nothing_limits_the_width(axpy: Bundle, swap: bool) -> None:
    """``skew``'s ``x`` is 2-byte aligned: its loads are 16-bit, but the coalescing pass already saw that (the pointer
    limits them, ``coalesce.vector-width``'s finding); ``dns`` vs ``ragged``: equally narrow; a variant with itself."""
    for x, y in (("skew", "spec"), ("dns", "ragged"), ("spec", "spec")):
        a, b = (y, x) if swap else (x, y)
        assert rule_mask_alignment(context(axpy, a, b)) == []


def test_skewed_pointer_is_seen_by_the_coalescing_pass(axpy: Bundle) -> None:
    """The facts the rule's exclusion relies on: ``skew``'s ``x`` load is 16-bit already in the coalescing pass, the
    other accesses match ``spec``'s."""
    ctx = context(axpy, "skew", "spec")
    pairs = _pair_lowered(ctx.fa, ctx.fb)
    assert [(x.kind, x.name, y.name) for x, y in pairs] == [("load", "x", "x"), ("load", "y", "y"), ("store", "", "")]
    (x, sx), (y, sy), _ = pairs
    assert (x.coalesce_bits, x.llir_bits, sx.coalesce_bits, sx.llir_bits) == (16, 16, 128, 128)
    assert (y.coalesce_bits, y.llir_bits) == (sy.coalesce_bits, sy.llir_bits) == (128, 128)


@BOTH
def test_hint_on_the_bare_parameter_is_dropped(add80: Bundle, swap: bool) -> None:
    """The README's add with ``n = tl.multiple_of(n, 16)`` under ``do_not_specialize=["n"]``: 4 fp32 per thread, split
    into 32-bit accesses; the comparison line is ``m = offs < n`` (the hint line has no comparison)."""
    f = one(add80, "dns_param_hint", "plain", swap)
    assert f.predicts == "dns_param_hint"
    assert f.title == (
        "Mask alignment splits load 1024xf32 from `x_ptr`, load 1024xf32 from `y_ptr`, store 1024xf32 to `out_ptr` "
        "into 32-bit accesses in `dns_param_hint` (128-bit in `plain`)"
    )
    assert "(`perThread: 4`)" in f.explanation and "4-element vectors of `plain`" in f.explanation
    assert "8 × 32-bit instructions per thread each in `dns_param_hint` vs 2 × 128-bit in `plain`" in f.explanation
    src = stage_text(add80.compiled_variant("dns_param_hint"), "python").splitlines()
    line = next(i + 1 for i, t in enumerate(src) if t.strip() == "m = offs < n" and i > 40)
    assert f"The mask is computed from `n` (`m = offs < n`, line {line})" in f.explanation
    assert f.remedy is not None and f.remedy.startswith("remove `n` from `do_not_specialize`")


@BOTH
def test_the_remedied_hint_leaves_nothing(add80: Bundle, swap: bool) -> None:
    """``dns_hint`` compares with ``tl.multiple_of(tl.full(offs.shape, n, tl.int32), 16)`` (the remedy): 128-bit
    again, no finding against ``plain``; against ``dns`` the narrow side is ``dns``, but no parameter's divisibility
    differs (``n`` is unspecialized in both): no parameter is blamed and no remedy is offered."""
    a, b = ("plain", "dns_hint")[:: -1 if swap else 1]
    assert rule_mask_alignment(context(add80, a, b)) == []
    f = one(add80, "dns", "dns_hint", swap)
    assert f.predicts == "dns" and "into 32-bit accesses in `dns` (128-bit in `dns_hint`)" in f.title
    assert f.remedy is None and "The mask is computed from" not in f.explanation
    assert f.explanation.endswith("In `dns` that constancy is lower, so the lowering splits each thread's vector.")


def test_mask_source_reads_only_the_kernel_body() -> None:
    """``_mask_source`` on Python text: the first comparison naming a parameter in ``def kernel``'s body, not one in
    another function or in a comment; None without the kernel or a comparison."""
    text = (
        "def other(n):\n"
        "    m = offs < n\n"
        "@triton.jit\n"
        "def k(x_ptr, n, lim):\n"
        "    # offs < n in a comment\n"
        "    offs = tl.arange(0, 4)\n"
        "    bound = n + 1\n"
        "    keep = offs >= lim  # lower bound\n"
        "    m = offs < n\n"
        "def after(n):\n"
        "    q = offs < n\n"
    )
    assert _mask_source(text, "k", ["n"]) == (9, "m = offs < n")
    assert _mask_source(text, "k", ["lim"]) == (8, "keep = offs >= lim")
    assert _mask_source(text, "k", ["x_ptr"]) is None
    assert _mask_source(text, "after", ["n"]) == (11, "q = offs < n")
    assert _mask_source(text, "missing", ["n"]) is None
    assert _mask_source("def kk(n):\n    m = offs < n\n", "k", ["n"]) is None
