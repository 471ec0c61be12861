"""The normalizer's line builder and renamer (irdiff/normalize/builder.py) on names Triton and LLVM really print:
MLIR stems with ``_N`` suffixes (``%a_ptrs_60``), LLVM's digit suffixes (``%.frozen1147``, ``%.lr.ph.2``), strings
that must not be renamed, label definitions shown without their sigil, side columns and region order. Exact outputs.
Cheap: no compile."""

from __future__ import annotations

import re

import pytest

from irdiff.normalize import NormalizedStage, dialect_normalizer
from irdiff.normalize.builder import (
    _SENTINELS,
    Builder,
    BulkBuilder,
    Renamer,
    Sym,
    Symbols,
    _Missing,
    _stem,
    lookup_in_order,
    tokenize_symbols,
)
from irdiff.normalize.mlir import SYMBOLS as MLIR_SYMBOLS
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


# --- BulkBuilder: the same output as Builder, per chunk (issue 15). Small exact cases of every feature it has, so
# that a mutation of it is caught in a second (tests/test_normalize_fast.py fuzzes it and runs real compiles).

_BULK_CASES = {
    "ttgir": (
        "#blocked1 = #ttg.blocked<{sizePerThread = [1, 8], order = [1, 0]}>\n"
        '#loc = loc("k.py":1:0)\n'
        "module {\n"
        '  tt.func public @kern(%x_ptr: !tt.ptr<f16> loc("x"(#loc)), %n: i32) attributes {noinline = false} {\n'
        "    %offs_7 = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32, #blocked1> loc(#loc)\n"
        '    %0 = tt.load %x_ptr {note = "%offs_7 stays"} : !tt.ptr<f16> loc(#loc)\n'
        "    scf.for %arg2 = %c0 to %n step %c1 {\n"
        "      %1 = arith.addi %arg2, %offs_7 : i32   \n"
        "    } loc(#loc)\n"
        "    tt.return\n"
        "  }\n"
        "}\n"
    ),
    "llir": (
        "; ModuleID = 'LLVMDialectModule'\n"
        "define ptx_kernel void @kern(ptr addrspace(1) %0, i32 %1) #3 !dbg !4 {\n"
        "  %3 = add i32 %1, 1, !dbg !7\n"
        "  br label %5, !dbg !7\n"
        "\n"
        "5:                                   ; preds = %2\n"
        '  tail call void asm sideeffect "mov.b32 %r1, $0;", "r"(i32 %3) #4, !dbg !8\n'
        '  %.lr.ph = phi i32 [ %3, %2 ], [ %6, %5 ], !range !9  ; "#3 in a comment"\n'
        '  %x = add i32 "#3 \\\n'
        "  ret void\n"
        "}\n"
        "attributes #4 = { nounwind }\n"
        "attributes #3 = { mustprogress }\n"
    ),
    "sass": (
        "Function:kern\n"
        "  .align 128 R5 LBB7\n"  # a line of no known form: kept as it is, nothing renamed in it
        "--:-:-:-:2\tMOV R1, c[0x0][0x28];\n"
        "--:-:0:-:1\tS2R R12, SR_TID.X;\n"
        "--:-:-:Y:4\t@!P0 BRA LBB3;\n"
        "LBB3:\n"
        "01:-:-:-:1\tIMAD.WIDE.U32 R2, R12, 0x2, UR4;\n"
        "        /*0160*/              @!P1 BRA 0x170 ;                        /* 0x0000002b00f08947 */\n"
        "                                                                      /* 0x000e220000002100 */\n"
        "        /*0170*/                   EXIT ;                                  /* 0x000000000000794d */\n"
    ),
    "ptx": '.visible .entry kern(\n{\n\tmov.u32 %r7, %r3;\n\t.pragma "nounroll %r7";\n$L__BB0_2:\n\tret;\n}\n',
}


def _build(make: type[Builder] | type[BulkBuilder], stage: str) -> NormalizedStage:
    dialect = {"ttgir": "mlir"}.get(stage, stage)
    out = make(stage, _BULK_CASES[stage], with_columns=dialect == "sass")
    dialect_normalizer(dialect)(out, _BULK_CASES[stage].splitlines(), "kern")
    return out.build()


@pytest.mark.parametrize("stage", sorted(_BULK_CASES))
def test_bulk_builder_gives_the_builders_output(stage: str) -> None:
    ref, got = _build(Builder, stage), _build(BulkBuilder, stage)
    assert (got.lines, got.shapes, got.raw_line, got.columns) == (ref.lines, ref.shapes, ref.raw_line, ref.columns)
    assert (got.regions, list(got.symbols), list(got.symbol_spans)) == (ref.regions, ref.symbols, ref.symbol_spans)
    assert got.symbols == ref.symbols and got.symbol_spans == ref.symbol_spans  # lazy lists compare as lists
    assert not any(c in "".join(got.lines + got.shapes) for c in _SENTINELS)  # no placeholder left
    assert any(got.symbols) and got.raw == _BULK_CASES[stage]


def test_bulk_builder_cases_read_true() -> None:
    """What the cases above exercise, stated: strings kept, a label shown without its sigil, sorted attribute
    groups named by content, registers numbered by first appearance, control codes in the side column."""
    t = _build(BulkBuilder, "ttgir")
    assert '    %0 = tt.load %x_ptr.0 {note = "%offs_7 stays"} : !tt.ptr<f16>' in t.lines
    assert "      %1 = arith.addi %arg0, %offs.0 : i32" in t.lines  # rstripped; block argument and stem renamed
    ll = _build(BulkBuilder, "llir")
    k = ll.lines.index("3:")  # the label of value %5, the fourth numbered value
    assert ll.symbols[k] == ("%3",) and ll.symbol_spans[k] == ((0, 1),) and ll.shapes[k] == "%_:"
    assert '  tail call void asm sideeffect "mov.b32 %r1, $0;", "r"(i32 %2) #attrs.' in ll.lines[k + 1]  # %r1 kept
    assert ll.lines[k + 3] == '  %x.0 = add i32 "#3 \\'  # a quote that opens no string: #3 after it stays
    assert [x.split("= ")[1] for x in ll.lines[-2:]] == ["{ mustprogress }", "{ nounwind }"]  # sorted by content
    assert ll.lines[3] == ") " + ll.lines[-2].split(" = ")[0].removeprefix("attributes ") + " {"
    s = _build(BulkBuilder, "sass")
    assert s.lines[1] == ".align 128 R5 LBB7" and s.symbols[1] == ()
    assert s.lines[2:7] == ["MOV R0, c[0x0][0x28];", "S2R R1, SR_TID.X;", "@!P0 BRA LBB0;", "LBB0:",
                            "IMAD.WIDE.U32 R2, R1, 0x2, UR0;"]  # fmt: skip
    assert s.lines[7:] == ["@!P1 BRA LBB1;", "LBB1:", "EXIT;"]  # the raw form's target address became a label
    assert s.columns == ["", "", "--:-:-:-:2", "--:-:0:-:1", "--:-:-:Y:4", "", "01:-:-:-:1", "--:-:0:-:1", "", ""]
    assert s.shapes[4] == "@!P_ BRA L_;" and s.symbols[4] == ("P0", "LBB0")


def test_bulk_builder_refuses_what_it_cannot_do() -> None:
    with pytest.raises(ValueError, match="placeholder"):
        BulkBuilder("ttgir", "x" + _SENTINELS)
    out = BulkBuilder("ttgir", "%0 = op")
    out.use(MLIR_SYMBOLS)
    out.add_text("%0 = op", 1)
    with pytest.raises(ValueError, match="first line"):
        out.use(MLIR_SYMBOLS)
    ref = Builder("ttgir", "")
    with pytest.raises(ValueError, match="symbols"):
        ref.add_text("%0", 1)


def test_bulk_builder_api_directly() -> None:
    """Every way to add a line, against Builder: text, parts lists mixing text (strings skipped), Sym and literal
    text, literal lines with and without symbol look-alikes, over more than one chunk, with side columns."""

    def fill(out: Builder | BulkBuilder) -> NormalizedStage:
        out.use(MLIR_SYMBOLS)
        for k in range(4200):
            out.add_text(f"%{k % 97} = op %x_{k % 13}  ", k + 1, f"c{k % 3}")
        out.add_text(['%a_1 = "s %b_2" ', _ssa("a_1"), ' "%c_3 \\', "%d_4"], 4201, "p")
        out.add_text(['x "%q"', Sym("ssa", "y_5", "%_", MLIR_FMT, bare=True), "%y_5 tail  "], 4202)
        out.add(["lit %z_9 ", _ssa("z_9"), " more"], 4203, "L")
        out.add(["plain literal", "  "], 4204)
        out.add([], 4205)
        return out.build()

    ref, got = fill(Builder("ttgir", "", with_columns=True)), fill(BulkBuilder("ttgir", "", with_columns=True))
    assert (got.lines, got.shapes, got.raw_line, got.columns) == (ref.lines, ref.shapes, ref.raw_line, ref.columns)
    assert (list(got.symbols), list(got.symbol_spans)) == (ref.symbols, ref.symbol_spans)
    assert got.lines[-5:] == [
        '%a.0 = "s %b_2" %a.0 "%c.0 \\%d.0',  # a quote before a backslash at the part's end opens no string
        'x "%q"y.0%y.0 tail',
        "lit %z_9 %z.0 more",
        "plain literal",
        "",
    ]
    assert got.symbols[-4] == ("%y.0", "%y.0") and got.symbol_spans[-4] == ((6, 9), (9, 13))
    assert got.columns is not None and got.columns[:4] == ["c0", "c1", "c2", "c0"] and got.columns[-3:] == ["L", "", ""]
    assert len(got) == 4205 and got.raw_line[-1] == 4205


def test_lookup_in_order_names_new_keys_in_order() -> None:
    """``lookup_in_order`` over a table that names a missing key on first use (as the bulk builder's is): a list
    of the values in the order of the keys, new keys named in that order, for no key, one key and many."""
    made: list[str] = []

    def name(k: str) -> str:
        made.append(k)
        table[k] = f"v{len(made) - 1}"
        return table[k]

    table = _Missing(name)
    assert list(lookup_in_order(table, [])) == []
    assert list(lookup_in_order(table, ["%b"])) == ["v0"]  # one name, not its characters
    assert list(lookup_in_order(table, ["%a", "%b", "%a"])) == ["v1", "v0", "v1"]
    assert list(lookup_in_order(table, ["%c", "%d", "%c", "%a"])) == ["v2", "v3", "v2", "v1"]
    assert made == ["%b", "%a", "%c", "%d"]


def test_a_line_with_one_symbol_is_renamed_by_the_bulk_builder() -> None:
    """A chunk whose only symbol is one register (a one-line text): named, not split into characters."""
    for make in (Builder, BulkBuilder):
        out = make("ttgir", "")
        out.use(MLIR_SYMBOLS)
        out.add_text("tt.return %x_5", 1)
        n = out.build()
        assert (n.lines, list(n.symbols), list(n.symbol_spans)) == (["tt.return %x.0"], [("%x.0",)], [((10, 14),)])


def test_builder_errors_say_what_to_do() -> None:
    """Misuse raises ValueError naming the step that was missed; the bulk builder refuses add_text before use as
    the reference builder does (it used to keep such lines as literal text)."""
    with pytest.raises(ValueError, match=r"^add_text needs the dialect's symbols \(Builder\.use\)$"):
        Builder("ttgir", "").add_text("%0", 1)
    with pytest.raises(ValueError, match=r"^add_text needs the dialect's symbols \(BulkBuilder\.use\)$"):
        BulkBuilder("ttgir", "").add_text("%0", 1)
    with pytest.raises(ValueError, match=r"^add_text needs the dialect's symbols \(BulkBuilder\.use\)$"):
        BulkBuilder("ttgir", "").add_text(["%0 = ", _ssa("a_1")], 1)
    with pytest.raises(ValueError, match=r"^no placeholder character is free in this text: use Builder$"):
        BulkBuilder("ttgir", _SENTINELS)
    out = BulkBuilder("ttgir", "")
    out.use(MLIR_SYMBOLS)
    out.add(["x"], 1)  # add counts as a line too
    with pytest.raises(ValueError, match=r"^BulkBuilder\.use after the first line$"):
        out.use(MLIR_SYMBOLS)
    # A dialect whose plain split finds more than its pattern: a longer piece (%1x, the pattern reads only %1) or
    # one the pattern does not match at all (%q): refused, not renamed by a partial match.
    for text, bad in (("%1x = op %2", "%1x"), ("%7 = op %q", "%q")):
        out = BulkBuilder("ttgir", text)
        out.use(Symbols(re.compile(r"%(\d+)"), lambda m: _ssa(m.group(1)), r"%\d+x?|%q"))
        out.add_text(text, 1)
        with pytest.raises(ValueError, match=r"^split and pattern disagree on ") as err:
            out.build()
        assert str(err.value).endswith(repr(bad))


def test_bulk_builder_without_use_adds_parts_like_the_builder() -> None:
    """add (parts: literal text and Sym, nothing searched) needs no dialect: the stage name, no side column by
    default, literal runs joined as given, symbols renamed, regions in pre-order (the longer first on a start)."""

    def fill(out: Builder | BulkBuilder) -> NormalizedStage:
        out.add(["x = ", "f(", _ssa("a_1"), ", ", "%b_2", ")"], 3)
        out.add([_ssa("a_7"), " ", _ssa("a_1")], 4)
        out.regions += [Region(1, 1, "block", "inner"), Region(0, 0, "x", "y"), Region(0, 1, "tt.func @KERNEL", "f")]
        return out.build()

    ref, got = fill(Builder("ttgir", "raw")), fill(BulkBuilder("ttgir", "raw"))
    assert got.lines == ref.lines == ["x = f(%a.0, %b_2)", "%a.1 %a.0"]
    assert got.shapes == ref.shapes == ["x = f(%_, %b_2)", "%_ %_"]
    assert list(got.symbols) == ref.symbols == [("%a.0",), ("%a.1", "%a.0")]
    assert list(got.symbol_spans) == ref.symbol_spans == [((6, 10),), ((0, 4), (5, 9))]
    assert got.regions == ref.regions
    assert [r.label for r in got.regions] == ["f", "y", "inner"]
    assert (got.stage, got.raw, got.columns, got.raw_line) == ("ttgir", "raw", None, [3, 4])


def test_bulk_builder_with_other_symbol_syntaxes() -> None:
    """Symbol syntaxes the four dialects do not all use, each against Builder with its stated result: no quick
    (make names everything), make keeping a match (None) or replacing it (text), strings not skipped
    (``strings=False``, as SASS), a case-insensitive pattern (plain compiled with its flags), and a held Sym of
    the same namespace and stem as a text symbol (one counter for both)."""
    reg = re.compile(r"%(r\d+|keep|lit)\b", re.I)

    def make(m: re.Match[str]) -> Sym | str | None:
        g = m.group(1)
        return None if g == "keep" else "LIT" if g.lower() == "lit" else Sym("reg", g.lower(), "%r_", "%r{n}")

    cases = [
        (Symbols(reg, make, r"%(?:r\d+|keep|lit)\b"), ['mov %r5, %keep, %LIT "%r6"', "add %R7, %r5"],
         ['mov %r0, %keep, LIT "%r6"', "add %r1, %r0"]),
        (Symbols(reg, make, r"%(?:r\d+|keep|lit)\b", strings=False), ['mov %r5, "%r6"', 'x "%r5'],
         ['mov %r0, "%r1"', 'x "%r0']),
        (MLIR_SYMBOLS, ["%a_2 = op", '%a_9 = "s %a_3"'], ["%a.1 = op", '%a.2 = "s %a_3"']),
    ]  # fmt: skip
    for symbols, texts, want in cases:
        got = []
        for make_builder in (Builder, BulkBuilder):
            out = make_builder("ttgir", "")
            out.use(symbols)
            if symbols is MLIR_SYMBOLS:
                out.add([_ssa("a_1"), " = held"], 1)  # a Sym of namespace ssa, stem a: %a.0
            for k, text in enumerate(texts):
                out.add_text(text if k else [text[:4], text[4:]], k + 2)  # a parts list, then a plain text
            n = out.build()
            got.append((n.lines, n.shapes, list(n.symbols), list(n.symbol_spans)))
        assert got[0] == got[1]
        assert got[1][0][-len(want) :] == want
