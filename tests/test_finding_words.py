"""Finding titles say in field terms what changed (the new-user trial found ``source.annotation`` listing
"`a_ptr` is annotated `tl.pointer_type` in `annotated` and `(nothing)` in `unannotated`", ``ttir.i64-index-math``
saying "`i64` wraps `tl.program_id(0)` in `tl.program_id(0).to`" and ``spec.type-changed`` "`n` changes type"):
which parameters are annotated on which side and whether the JIT specializes them differently (type, divisibility,
constant), i32 vs i64 index arithmetic and where the first i64 value comes from. Real compiles, both orders."""

from __future__ import annotations

from pathlib import Path

from diag_helpers import diagnose, get

from irdiff.bundle import Bundle
from irdiff.diagnose.roots import _spec_words

SUITES = Path(__file__).parent / "suites"


def test_source_annotation_groups_the_annotations_and_says_the_specialization_is_alike(matmul_sm86: Bundle) -> None:
    """The seed matmul: nine annotations that change nothing the JIT specializes are one informational finding
    grouped by annotation; the three that drop the constant-1 strides are the root's (spec.constexpr-one-lost)."""
    for a, b in (("annotated", "unannotated"), ("unannotated", "annotated")):
        d = diagnose(matmul_sm86, a, b)
        f = get(d, "source.annotation")
        assert f.severity == "info"
        assert f.title.startswith(
            "Source: 9 parameter annotations only in `annotated` (`a_ptr`, `b_ptr`, `c_ptr`: `tl.pointer_type`; "
            "`M`, `N`, `K` and 3 more: `int`): the JIT specializes them alike in both (same type, divisibility, "
            "constant)"
        ), f.title
        assert "(nothing)" not in f.title and "stride_ak" not in f.title
        root = d.findings[0]
        assert root.id == "spec.constexpr-one-lost" and "stride_ak" in root.title
    # What the JIT does differently for an annotated parameter, in stage-0 terms (both directions).
    assert _spec_words("stride_ak", "annotated", "unannotated", *_sides(matmul_sm86, "annotated", "unannotated")) == (
        "`stride_ak` is a runtime i32 in `annotated`, the constant 1 in `unannotated`"
    )
    assert _spec_words("stride_ak", "unannotated", "annotated", *_sides(matmul_sm86, "unannotated", "annotated")) == (
        "`stride_ak` is the constant 1 in `unannotated`, a runtime i32 in `annotated`"
    )
    assert _spec_words("M", "annotated", "unannotated", *_sides(matmul_sm86, "annotated", "unannotated")) == ""


def _sides(b: Bundle, x: str, y: str) -> tuple:  # type: ignore[type-arg]
    return b.variants[x], b.variants[y]


def test_an_i64_annotation_names_the_type_and_the_index_width(compile_suite) -> None:  # type: ignore[no-untyped-def]
    """``n: tl.int64`` (a second kernel of the kind, scalars only): the type change says i64 vs i32 and the index
    math says where its first i64 value comes from (the bound check ``offs < n``)."""
    b = compile_suite(str(SUITES / "annot_scalars.py"), ["wide", "plain"], "sm80")
    for x, y in (("wide", "plain"), ("plain", "wide")):
        d = diagnose(b, x, y)
        t = get(d, "spec.type-changed").title
        assert t == f"`n` is {'i64' if x == 'wide' else 'i32'} in `{x}`, {'i32' if x == 'wide' else 'i64'} in `{y}`"
        i64 = get(d, "ttir.i64-index-math").title
        assert i64.startswith("Index arithmetic in i64 in `wide` vs i32 in `plain` ("), i64
        assert "TTIR values of type i64, the first from `m = offs < n`)" in i64
        if x == "wide":  # the explanation quotes the annotation as written (`tl.int64`: a triton.language.dtype)
            assert "annotated `tl.int64`: the JIT types it i64" in get(d, "spec.type-changed").explanation
    wide = {s.name: s for s in b.variants["wide"].specialization}
    assert (wide["n"].annotation, wide["n"].reason.startswith("annotated `tl.int64`")) == ("tl.int64", True)


def test_i64_index_math_names_the_widening(compile_suite) -> None:  # type: ignore[no-untyped-def]
    """The permute seed kind (``.to(tl.int64)`` on the program id): the method call is named as applied to the value
    ("applies `.to(tl.int64)` to `tl.program_id(0)`"), not as a function named ``tl.program_id(0).to``."""
    b = compile_suite("permute", ["i64", "i32"], "sm80")
    for x, y in (("i64", "i32"), ("i32", "i64")):
        d = diagnose(b, x, y)
        f = get(d, "ttir.i64-index-math")
        assert f.title.startswith("Index arithmetic in i64 in `i64` vs i32 in `i32` ("), f.title
        assert "the first from `first = tl.program_id(0).to(tl.int64) * BLOCK`" in f.title
        assert "program_id(0).to`" not in f.title and "wraps" not in f.title
        said = " ".join(e.text for e in f.evidence) + f.explanation
        assert "program_id(0).to`" not in said
        assert "source change: `i64` applies `.to(tl.int64)` to `tl.program_id(0)`, `i32` does not" in said
