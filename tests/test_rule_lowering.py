"""``lower.mask-alignment`` (``irdiff/diagnose/rules/lowering.py``) called directly on the facts of real compiles, in
both orders of the variants.

Kernels (sm80, from the shared compile cache): ``tests/suites/rule_lowering.py`` (an fp16 ``alpha * x + y`` masked
by ``i < count``: ``count`` specialized divisible by 16, not specialized, or not a multiple of 16; ``x`` misaligned)
and the README's vector add ``tests/suites/readme_add.py`` (``n`` hinted on the bare parameter, a hint Triton
drops). The context is built as :func:`irdiff.diagnose.diagnose` builds it: parameters paired by role, TTGIR and
Python texts by variant.
"""

from __future__ import annotations

import copy
import dataclasses
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

# Facts and stage texts read once per process, when the bundle is compiled (mutmut runs the selection twice in one
# process, then forks it per mutant; a bundle directory of the first session may be gone by the second: the
# memo never reads a bundle file again).
_FACTS: dict[str, VariantFacts] = {}
_TEXTS: dict[tuple[str, str], str] = {}
STAGES = ("python", "ttir", "ttgir", "llir", "ptx", "llvm_debug")


def _key(bundle: Bundle, variant: str) -> str:
    return f"{bundle.suite}:{bundle.target}:{variant}"


def _read(bundle: Bundle) -> Bundle:
    for n in bundle.variants:
        if _key(bundle, n) not in _FACTS:
            v = bundle.compiled_variant(n)
            _FACTS[_key(bundle, n)] = extract_facts(v)
            _TEXTS.update({(_key(bundle, n), s): stage_text(v, s) for s in STAGES})
    return bundle


def text(bundle: Bundle, variant: str, stage: str) -> str:
    return _TEXTS[(_key(bundle, variant), stage)]


@pytest.fixture(scope="module")
def axpy(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return _read(compile_suite(LOWER, ["spec", "dns", "ragged", "skew"], "sm80"))


@pytest.fixture(scope="module")
def add80(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return _read(compile_suite(ADD, ["plain", "dns", "dns_hint", "dns_param_hint"], "sm80"))


def context(bundle: Bundle, a: str, b: str) -> Context:
    fa, fb = _FACTS[_key(bundle, a)], _FACTS[_key(bundle, b)]
    spec = {n: bundle.compiled_variant(n).specialization for n in (a, b)}
    pairing = pair_params(spec[a], text(bundle, a, "ttir"), spec[b], text(bundle, b, "ttir"))
    fa.peer_names, fb.peer_names = pairing.aliases("a"), pairing.aliases("b")
    return Context(
        a,
        b,
        fa,
        fb,
        {a: text(bundle, a, "ttgir"), b: text(bundle, b, "ttgir")},
        {a: text(bundle, a, "python"), b: text(bundle, b, "python")},
        pairing=pairing,
    )


def one(bundle: Bundle, x: str, y: str, swap: bool) -> Finding:
    a, b = (y, x) if swap else (x, y)
    found = rule_mask_alignment(context(bundle, a, b))
    assert [f.id for f in found] == ["lower.mask-alignment"]
    return found[0]


def line_of(bundle: Bundle, variant: str, stage: str, line: int | None) -> str:
    assert line is not None
    return text(bundle, variant, stage).splitlines()[line - 1]


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
    src = text(axpy, "dns", "python").splitlines()
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
    src = text(add80, "dns_param_hint", "python").splitlines()
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
    assert f.explanation.startswith("The coalescing pass treats these accesses alike in both variants: each thread")
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
    # the body ends at the next top-level line (another def), not at a blank line inside it
    two = "def k(n):\n    x = n + 1\n\n    y = x\ndef other(n):\n    m = offs < n\n"
    assert _mask_source(two, "k", ["n"]) is None
    assert _mask_source(two.replace("    y = x", "    y = x < n"), "k", ["n"]) == (4, "y = x < n")
    assert _mask_source("@triton.jit\ndef k(n):\n    pass\n@deco\n    m = offs < n\n", "k", ["n"]) is None


def test_exact_explanation_and_evidence_texts(axpy: Bundle) -> None:
    """The whole explanation of ``dns`` vs ``spec``, and each evidence line's text: the coalescing line prefixed
    with the access label, the LLIR instruction (first 200 characters) and the PTX instruction with their counts."""
    f = one(axpy, "dns", "spec", False)
    src = text(axpy, "dns", "python").splitlines()
    line = next(i + 1 for i, t in enumerate(src) if "keep = i < count" in t)
    assert f.explanation == (
        "The coalescing pass treats these accesses alike in both variants: each thread gets 8 contiguous elements "
        "(`perThread: 8`), and AxisInfo proves the same pointer contiguity and alignment, enough for 128-bit "
        "vectors. The difference appears when TTGIR is lowered to LLVM IR: `x` load 2048xf16, `y` load 2048xf16: "
        "16 × 16-bit instructions per thread each in `dns` vs 2 × 128-bit in `spec` (`ld.global.b16` vs "
        "`ld.global.v4.b32`); store 2048xf16 to `out_ptr`: 16 × 16-bit instructions per thread in `dns` vs 2 × "
        "128-bit in `spec` (`st.global.b16` vs `st.global.v4.b32`). Triton's load/store lowering "
        "(`LoadOpConversion`/`StoreOpConversion` in `LoadStoreOpToLLVM.cpp`) takes `vec = min(vector size of the "
        "pointer, getMaskAlignment(mask))`, where the mask alignment is AxisInfo's constancy of the mask along the "
        "fastest dimension: how many consecutive elements are known to share one mask bit. The mask is computed "
        f"from `count` (`keep = i < count`, line {line}), which `spec` marks `tt.divisibility = 16` and `dns` does "
        "not. For a bound check `offs < n` on contiguous offsets, AxisInfo's `CmpOpAxisInfoVisitor` sets the mask's "
        "constancy to gcd(contiguity of `offs`, divisibility of `offs`, divisibility of `n`): with `n` a multiple of "
        "16 that is up to 16 elements (enough for the 8-element vectors of `spec`), without it 1, so every element "
        "in `dns` gets its own predicated 16-bit instruction."
    )
    labels = ["`x` load 2048xf16", "`y` load 2048xf16", "store 2048xf16 to `out_ptr`"]
    coalescing = [e for e in f.evidence if e.stage == "llvm_debug"]
    assert [e.variant for e in coalescing] == ["dns", "spec"] * 3
    for e, label in zip(coalescing, [x for x in labels for _ in (0, 1)]):
        assert e.text == f"{label}: {line_of(axpy, e.variant, e.stage, e.line)}"
    llir = [e for e in f.evidence if e.stage == "llir"]
    assert [e.variant for e in llir] == ["dns", "spec"] * 3
    counts = {"dns": 16, "spec": 2}
    for e in llir:
        real = line_of(axpy, e.variant, "llir", e.line).strip()
        assert e.text == f"{real[:200]}   ({counts[e.variant]}× for this op)"
    # the 128-bit inline asm is longer than 200 characters: the evidence quotes its first 200
    assert any(len(line_of(axpy, e.variant, "llir", e.line).strip()) > 200 for e in llir)
    for e in f.evidence:
        if e.stage == "ttgir":
            assert line_of(axpy, e.variant, "ttgir", e.line).strip().startswith(e.text)


def test_without_python_source_the_comparison_is_named_in_ttgir(axpy: Bundle) -> None:
    """No saved Python source: the mask's comparison is named by its TTGIR predicate (``arith.cmpi slt``); with
    neither a source nor a comparison among the mask's definitions, no parenthesis at all."""
    ctx = context(axpy, "dns", "spec")
    ctx.python = {}
    (f,) = rule_mask_alignment(ctx)
    assert "The mask is computed from `count` (an `arith.cmpi slt` in TTGIR), which `spec` marks" in f.explanation
    fd = dataclasses.replace(ctx.fa, lowered=[dataclasses.replace(x, mask_refs=[]) for x in ctx.fa.lowered])
    (g,) = rule_mask_alignment(Context("dns", "spec", fd, ctx.fb))
    assert "The mask is computed from `count`, which `spec` marks" in g.explanation
    assert all(e.stage != "ttgir" or "tt.load" in e.text or "tt.store" in e.text for e in g.evidence)


@BOTH
def test_only_the_mask_limited_accesses_are_named(axpy: Bundle, swap: bool) -> None:
    """``skew`` vs ``dns``: ``x`` is 16-bit in both (the pointer limits ``skew``'s, the mask ``dns``'s): not a
    difference; ``y`` and the store are 128-bit in ``skew``, 16-bit in ``dns`` because of the mask."""
    f = one(axpy, "dns", "skew", swap)
    assert f.predicts == "dns"
    assert f.title == (
        "Mask alignment splits `y` load 2048xf16, store 2048xf16 to `out_ptr` into 16-bit accesses in `dns` "
        "(128-bit in `skew`)"
    )
    assert "`x` load" not in f.explanation and "which `skew` marks `tt.divisibility = 16`" in f.explanation


def _facts(bundle: Bundle, variant: str) -> VariantFacts:
    return copy.deepcopy(_FACTS[_key(bundle, variant)])


def test_what_excludes_an_access(axpy: Bundle) -> None:
    """On the real facts of ``dns``/``spec`` with one fact changed at a time: an access without LLIR bits, an unmasked
    narrow access, and one the coalescing pass gave fewer elements per thread are not the mask's doing; the rest
    still are (the first listed access need not be the one found)."""
    fd, fs = _facts(axpy, "dns"), _facts(axpy, "spec")

    def labels(a: VariantFacts, b: VariantFacts) -> list[str]:
        found = rule_mask_alignment(Context("dns", "spec", a, b))
        return [] if not found else found[0].title.split("splits ")[1].split(" into ")[0].split(", ")

    assert labels(fd, fs) == ["`x` load 2048xf16", "`y` load 2048xf16", "store 2048xf16 to `out_ptr`"]
    for change in ({"llir_bits": None}, {"mask": ""}, {"per_thread": 4}, {"per_thread": None}):
        x = dataclasses.replace(fd.lowered[0], **change)
        assert labels(dataclasses.replace(fd, lowered=[x, *fd.lowered[1:]]), fs) == [
            "`y` load 2048xf16",
            "store 2048xf16 to `out_ptr`",
        ], change
    # the wide side without LLIR bits for `x` (no debug location): `x` is left out as well
    wx = dataclasses.replace(fs.lowered[0], llir_bits=None)
    assert labels(fd, dataclasses.replace(fs, lowered=[wx, *fs.lowered[1:]]))[0] == "`y` load 2048xf16"
    # one access only: its label alone; four: three and an ellipsis
    assert labels(dataclasses.replace(fd, lowered=fd.lowered[:1]), fs) == ["`x` load 2048xf16"]
    more = [dataclasses.replace(x, name=f"{x.name}{i}") for i in (1, 2) for x in fd.lowered[:2]]
    wide = [dataclasses.replace(x, name=f"{x.name}{i}") for i in (1, 2) for x in fs.lowered[:2]]
    title = rule_mask_alignment(
        Context("dns", "spec", dataclasses.replace(fd, lowered=more), dataclasses.replace(fs, lowered=wide))
    )[0].title
    assert title.startswith("Mask alignment splits `x1` load 2048xf16, `y1` load 2048xf16, `x2` load 2048xf16 … into")


def test_remedy_pads_a_negative_or_odd_value_only(axpy: Bundle) -> None:
    """The padding remedy depends on the value the JIT saw: a multiple of 16 (unspecialized by
    ``do_not_specialize``) asks to remove it from the list; an odd or negative-odd value asks to pad."""
    fd, fs = _facts(axpy, "dns"), _facts(axpy, "spec")
    for value, pad in (("1048576", False), ("1048568", True), ("-8", True), ("-16", False)):
        args = [dataclasses.replace(a, value=value) if a.name == "count" else a for a in fd.args]
        (f,) = rule_mask_alignment(Context("dns", "spec", dataclasses.replace(fd, args=args), fs))
        assert f.remedy is not None
        assert ("pad the tensor so that `count` is a multiple of 16" in f.remedy) is pad, value
        assert f.remedy.startswith("remove `count` from `do_not_specialize`")
        assert f.remedy.count("; ") == (2 if pad else 1) + f.remedy.count("; `tl.multiple_of(count")


@BOTH
def test_remedy_of_two_unspecialized_bounds(axpy: Bundle, swap: bool) -> None:
    """A mask computed from two parameters, each unspecialized in ``dns`` and divisible by 16 in ``spec`` (``count``
    and a copy of it, ``count2``): the remedy names each, one after the other, separated by "; "."""
    fd, fs = _facts(axpy, "dns"), _facts(axpy, "spec")

    def remedy(names: list[str]) -> str:
        facts = {}
        for name, f in (("dns", fd), ("spec", fs)):
            count = next(a for a in f.args if a.name == "count")
            args = [*f.args, dataclasses.replace(count, name="count2")]
            lowered = [dataclasses.replace(v, mask_args=names) for v in f.lowered] if f is fd else f.lowered
            facts[name] = dataclasses.replace(f, args=args, lowered=lowered)
        ctx = (
            Context("spec", "dns", facts["spec"], facts["dns"])
            if swap
            else Context("dns", "spec", facts["dns"], facts["spec"])
        )
        (f,) = rule_mask_alignment(ctx)
        assert f.predicts == "dns" and f.remedy is not None
        return f.remedy

    one, two = remedy(["count"]), remedy(["count2"])
    assert one.startswith("remove `count` from `do_not_specialize`") and "`count2`" not in one
    assert remedy(["count", "count2"]) == one.removesuffix(".") + "; " + two


def test_pairing_of_lowered_accesses(axpy: Bundle) -> None:
    """``_pair_lowered`` on real lowered accesses: by (kind, shape, element type) and name in order, whatever the
    other variant's order; unnamed ones (the store) by pointer origin; left-overs with another tile shape by
    pointer origin; never two accesses of different names. Pairs are given as (index in a, index in b)."""
    fd, fs = _facts(axpy, "dns"), _facts(axpy, "spec")
    x, y, st = fs.lowered
    dx, dy, dst = fd.lowered

    def pairs(a: list, b: list) -> list[tuple[int, int]]:  # type: ignore[type-arg]
        got = _pair_lowered(dataclasses.replace(fd, lowered=a), dataclasses.replace(fs, lowered=b))
        return [
            (next(i for i, v in enumerate(a) if v is p), next(j for j, v in enumerate(b) if v is q)) for p, q in got
        ]

    assert pairs([dx, dy, dst], [st, y, x]) == [(0, 2), (1, 1), (2, 0)]
    # another name is never paired, in either pass
    assert pairs([dx, dst], [dataclasses.replace(x, name="z"), st]) == [(1, 1)]
    # unnamed accesses of another pointer are not paired; of the same pointer (or both without one) they are
    assert pairs([dst], [dataclasses.replace(st, ptr_args=["y_ptr"])]) == []
    assert pairs([dst], [dataclasses.replace(st, ptr_args=[])]) == []
    assert pairs([dataclasses.replace(dst, ptr_args=[])], [st]) == []
    assert pairs([dataclasses.replace(dst, ptr_args=[])], [dataclasses.replace(st, ptr_args=[])]) == [(0, 0)]
    assert pairs([dataclasses.replace(dst, ptr_args=["out_ptr", "x_ptr"])], [st]) == [(0, 0)]
    # another tile shape: paired by pointer origin (kind, element type and rank equal), each partner once
    hx, hy, hst = (dataclasses.replace(v, shape=[1024]) for v in (x, y, st))
    assert pairs([dx, dy, dst], [hst, hy, hx]) == [(0, 2), (1, 1), (2, 0)]
    assert pairs([dx, dataclasses.replace(dx, name="")], [hx]) == [(0, 0)]
    assert pairs([dx, dataclasses.replace(dx)], [hx, dataclasses.replace(hx)]) == [(0, 0), (1, 1)]
    assert pairs([dataclasses.replace(dst, ptr_args=[])], [hst]) == []
    assert pairs([dx], [dataclasses.replace(hx, name="w")]) == []
    assert pairs([dx], [dataclasses.replace(hx, ptr_args=["y_ptr"], name="")]) == []
    assert pairs([dx], [dataclasses.replace(hx, kind="store")]) == []
    assert pairs([dx], [dataclasses.replace(hx, elem="f32")]) == []
    assert pairs([dx], [dataclasses.replace(hx, shape=[32, 32])]) == []
    assert pairs([dx, dy], [hy, dataclasses.replace(hx, kind="store"), hx]) == [(0, 2), (1, 0)]
    # a named access never pairs in the first pass with an unnamed one of another pointer (nor in the second)
    assert pairs([dx], [dataclasses.replace(x, name="", ptr_args=["y_ptr"])]) == []
    # an unnamed one of another pointer is passed over for the same pointer's, even with another tile in between
    assert pairs([dst], [dataclasses.replace(st, ptr_args=["y_ptr"]), hst, st]) == [(0, 2)]
    # a partner of the first pass is used once; an access paired there is not paired again in the second pass
    assert pairs([dx, dataclasses.replace(dx)], [x]) == [(0, 0)]
    assert pairs([dx], [x, hx]) == [(0, 0)]
    # an access paired in the first pass does not stop the second pass for the ones after it
    assert pairs([dx, dy], [x, hy]) == [(0, 0), (1, 1)]


def test_access_the_coalescing_log_does_not_show_is_left_out(axpy: Bundle) -> None:
    """An access whose coalescing-log entry is unknown (no index, or one past the log) on either side: the rule
    cannot tell the pointer from the mask, so that access is left out and the others are still named."""
    fd, fs = _facts(axpy, "dns"), _facts(axpy, "spec")
    rest = "`y` load 2048xf16, store 2048xf16 to `out_ptr`"
    for index in (None, len(fd.accesses), -1):
        for narrow in (True, False):
            a, b = (fd, fs) if narrow else (fs, fd)
            x = dataclasses.replace(a.lowered[0], coalesce_index=index)
            changed = dataclasses.replace(a, lowered=[x, *a.lowered[1:]])
            fa, fb = (changed, fs) if narrow else (fd, changed)
            (f,) = rule_mask_alignment(Context("dns", "spec", fa, fb))
            assert f.title.startswith(f"Mask alignment splits {rest} into 16-bit"), (index, narrow)


def test_rows_mixed_from_real_facts(axpy: Bundle) -> None:
    """``dns``/``spec``'s real accesses with one fact changed: which side is narrow is decided by the first row
    found; the title's widths are the first row's; the PTX keys are quoted only when both sides have one; long TTGIR
    lines are cut at 240 characters and at most three mask definitions are quoted; the facts of each side are read
    from that side (a coalescing index valid on one side only)."""
    fd, fs = _facts(axpy, "dns"), _facts(axpy, "spec")
    x, y, st = fd.lowered
    sx, sy, sst = fs.lowered

    def run(la: list, lb: list, a: dict | None = None, b: dict | None = None) -> Finding:  # type: ignore[type-arg]
        fa = dataclasses.replace(fd, lowered=la, **(a or {}))
        fb = dataclasses.replace(fs, lowered=lb, **(b or {}))
        (f,) = rule_mask_alignment(Context("dns", "spec", fa, fb))
        return f

    # `y` is 32-bit (8 per thread) in `dns` and the store 64-bit in `spec`: the title quotes the first row's widths
    f = run(
        [x, dataclasses.replace(y, llir_bits=32, llir_count=8), st], [sx, sy, dataclasses.replace(sst, llir_bits=64)]
    )
    assert f.title.endswith("into 16-bit accesses in `dns` (128-bit in `spec`)")
    assert "`y` load 2048xf16: 8 × 32-bit instructions per thread in `dns` vs 2 × 128-bit in `spec`" in f.explanation
    # `x` narrow in `dns`, `y` narrow in `spec` (a mask limited there): the first row's side is named, only its rows
    f = run(
        [x, dataclasses.replace(y, llir_bits=128, llir_count=2), dataclasses.replace(st, llir_bits=128)],
        [sx, dataclasses.replace(sy, llir_bits=16, llir_count=16), sst],
    )
    assert f.predicts == "dns" and f.title.startswith("Mask alignment splits `x` load 2048xf16 into 16-bit")
    # without a PTX key on one side the keys are not quoted
    f = run([dataclasses.replace(x, ptx_key="")], [sx])
    assert "in `spec`." in f.explanation and "`ld.global.b16` vs" not in f.explanation
    # long TTGIR lines and four mask definitions
    long = dataclasses.replace(x.ref, text="%x_6 = tt.load " + "y" * 300)
    refs = [dataclasses.replace(r, text=f"{i}:" + "m" * 300) for i, r in enumerate([*x.mask_refs, *x.mask_refs])][:4]
    f = run([dataclasses.replace(x, ref=long, mask_refs=refs)], [sx])
    ttgir = [e.text for e in f.evidence if e.stage == "ttgir"]
    assert [len(t) for t in ttgir] == [240, 240, 240, 240] and [t[:2] for t in ttgir[1:]] == ["0:", "1:", "2:"]
    # the pointer, not the mask: `dns`'s `x` proven less aligned in its coalescing log, or its coalescing width
    # already 16 bits: `x` is left out, the others stay
    acc = list(fd.accesses)
    acc[x.coalesce_index] = dataclasses.replace(acc[x.coalesce_index], divisibility=[2])
    f = run([x, y, st], [sx, sy, sst], a={"accesses": acc})
    assert f.title.startswith("Mask alignment splits `y` load 2048xf16, store")
    f = run([dataclasses.replace(x, coalesce_bits=16), y, st], [sx, sy, sst])
    assert f.title.startswith("Mask alignment splits `y` load 2048xf16, store")
    # a coalescing index valid only in the side's own log: each side's facts are read from that side
    extra = [*fd.accesses, fd.accesses[x.coalesce_index]]
    f = run([dataclasses.replace(x, coalesce_index=len(fd.accesses))], [sx], a={"accesses": extra})
    assert f.title.startswith("Mask alignment splits `x` load")
    extra = [*fs.accesses, fs.accesses[sx.coalesce_index]]
    f = run([x], [dataclasses.replace(sx, coalesce_index=len(fs.accesses))], b={"accesses": extra})
    assert f.title.startswith("Mask alignment splits `x` load")
    # the same with the wide side first (`spec` as `a`): the wide access's facts are read from `a`, not `b`
    fw = dataclasses.replace(fs, lowered=[dataclasses.replace(sx, coalesce_index=len(fs.accesses))], accesses=extra)
    (f,) = rule_mask_alignment(Context("spec", "dns", fw, dataclasses.replace(fd, lowered=[x])))
    assert f.predicts == "dns" and f.title.startswith("Mask alignment splits `x` load")
