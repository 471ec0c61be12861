"""The normalizer's line builder and renamer (irdiff/normalize/builder.py) on names Triton and LLVM really print:
MLIR stems with ``_N`` suffixes (``%a_ptrs_60``), LLVM's digit suffixes (``%.frozen1147``, ``%.lr.ph.2``), strings
that must not be renamed, label definitions shown without their sigil, side columns and region order. Exact outputs.
Cheap: no compile."""

from __future__ import annotations

import re

from irdiff.normalize.builder import Builder, Renamer, Sym, _stem, tokenize_symbols
from irdiff.normalize.model import Region

MLIR_FMT = "%{stem}.{n}"


def _ssa(name: str) -> Sym:
    return Sym("ssa", name, "%_", MLIR_FMT)


def test_stems_drop_the_uniquing_suffix() -> None:
    assert _stem(_ssa("a_ptrs_60")) == "a_ptrs"
    assert _stem(_ssa("a_ptrs.3")) == "a_ptrs"  # our own output: normalizing twice is stable
    assert _stem(_ssa("offs_am")) == "offs_am"  # no suffix
    assert _stem(_ssa("x_1_2")) == "x_1"
    assert _stem(Sym("val", ".frozen1147", "%_", MLIR_FMT)) == ".frozen"  # LLVM: digits straight after the name
    assert _stem(Sym("val", ".lr.ph.2", "%_", MLIR_FMT)) == ".lr.ph"
    assert _stem(Sym("val", "a_60", "%_", MLIR_FMT)) == "a_"  # LLVM rule for values: "_" is part of the stem
    assert _stem(Sym("val", "42", "%_", MLIR_FMT)) == "42"  # all digits: nothing to strip
    assert _stem(Sym("reg", "r12", "%r_", "%r{n}")) == ""  # a format without {stem}: numbered per class


def test_renamer_numbers_per_class_and_stem_in_first_appearance_order() -> None:
    r = Renamer()
    assert r.name(_ssa("a_ptrs_60")) == "%a_ptrs.0"
    assert r.name(_ssa("b_ptrs_61")) == "%b_ptrs.0"
    assert r.name(_ssa("a_ptrs_75")) == "%a_ptrs.1"
    assert r.name(_ssa("a_ptrs_60")) == "%a_ptrs.0"  # the same value keeps its name
    assert r.name(Sym("blockarg", "a_ptrs_60", "%_", MLIR_FMT)) == "%a_ptrs.0"  # another namespace counts apart
    assert r.name(Sym("reg", "r7", "%r_", "%r{n}")) == "%r0"
    assert r.name(Sym("reg", "r3", "%r_", "%r{n}")) == "%r1"
    assert r.name(Sym("regrd", "rd3", "%rd_", "%rd{n}")) == "%rd0"


def test_tokenize_keeps_strings_and_refused_matches_literal() -> None:
    pat = re.compile(r"%(\w+)")

    def make(m: re.Match[str]) -> Sym | None:
        return None if m.group(1) == "skip" else _ssa(m.group(1))

    parts = tokenize_symbols('%x_1 = foo %skip, "%not_a_value" %y_2', pat, make)
    assert parts == [_ssa("x_1"), " = foo %skip, ", '"%not_a_value"', " ", _ssa("y_2")]
    assert tokenize_symbols("plain text", pat, make) == ["plain text"]
    assert tokenize_symbols("%a_1", pat, make) == [_ssa("a_1")]
    # A refused match does not end the segment: the symbols after it are still found.
    assert tokenize_symbols("%skip, %a_1", pat, make) == ["%skip, ", _ssa("a_1")]


def test_builder_lines_shapes_symbols_spans_columns_and_regions() -> None:
    b = Builder("llir", "raw text", with_columns=True)
    assert b.add([_ssa("acc_3"), " = add ", _ssa("acc_3"), ", 1   "], 7, "c0") == 0
    assert b.add([Sym("label", "12", "L_", "%{n}", bare=True), ":"], 9, "c1") == 1
    assert b.add(["  ret"], 11) == 2
    b.regions += [Region(1, 2, "block", "b"), Region(0, 2, "define @KERNEL", "f"), Region(1, 1, "block", "c")]
    n = b.build()
    assert n.lines == ["%acc.0 = add %acc.0, 1", "0:", "  ret"]  # trailing blanks stripped
    assert n.shapes == ["%_ = add %_, 1", "L_:", "  ret"]
    assert n.symbols == [("%acc.0", "%acc.0"), ("%0",), ()]
    assert n.symbol_spans == [((0, 6), (13, 19)), ((0, 1),), ()]  # a bare label is shown without its sigil
    assert n.raw_line == [7, 9, 11] and n.columns == ["c0", "c1", ""]
    assert (n.stage, n.raw, n.fallback) == ("llir", "raw text", False)
    # Pre-order: by start, the longer region first.
    assert [(r.start, r.end) for r in n.regions] == [(0, 2), (1, 2), (1, 1)]
    assert Builder("ptx", "").build().columns is None
