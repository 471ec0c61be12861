"""The linear-time paths for huge stages give the same results as the general ones (issue 15).

* Every dialect: :class:`irdiff.normalize.builder.BulkBuilder` (chunks of lines renamed per regex split, strings and
  explicit symbols as placeholders, per-line symbols computed when read) against the reference
  :class:`~irdiff.normalize.builder.Builder` (line by line, per symbol), both driven by the same dialect normalizer,
  on fuzzed texts of each dialect and on every stage of real sm86/sm90 compiles.
* PTX: :func:`irdiff.normalize.ptx.normalize_ptx_fast` (whole chunks of lines per regex pass, per-line symbols
  computed when read) against :func:`irdiff.normalize.ptx.normalize_ptx` (line by line, through the Builder), on
  fuzzed PTX-like texts and on a real compile's PTX.
* Alignment: :func:`irdiff.align._linear_diff` (rows made when read, hunks from runs) against the rows a list of
  :class:`~irdiff.align.DiffLine` built eagerly from the same patience blocks gives, in both orders.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irdiff.align as align
from irdiff.align import DiffLine, StageDiff, diff_stage
from irdiff.bundle import Bundle
from irdiff.normalize import NormalizedStage, dialect_normalizer, dialect_of, normalize
from irdiff.normalize.builder import _SENTINELS, Builder, BulkBuilder
from irdiff.normalize.ptx import normalize_ptx, normalize_ptx_fast


def _general(text: str, kernel: str | None) -> NormalizedStage:
    out = Builder("ptx", text)
    normalize_ptx(out, text.splitlines(), kernel)
    return out.build()


def _same(fast: NormalizedStage, slow: NormalizedStage) -> None:
    assert fast.lines == slow.lines
    assert fast.shapes == slow.shapes
    assert fast.raw_line == slow.raw_line
    assert fast.regions == slow.regions
    assert fast.columns == slow.columns
    assert list(fast.symbols) == list(slow.symbols)
    assert list(fast.symbol_spans) == list(slow.symbol_spans)
    assert fast.symbols == slow.symbols and slow.symbol_spans == fast.symbol_spans  # lazy lists compare as lists


# Pieces of PTX as ptxas reads it, and of what the normalizer must survive: registers of every class (and look-alikes
# that are not registers: %rx1, %r1a), labels, debug lines, comments, braces, entries, strings, the kernel's name.
# fmt: off
_PIECES = st.sampled_from(
    [
        "\t", " ", "  ", ", ", ";", "[", "]", "{", "}", "(", ")", "+", "0", "16", "0f3F800000", "//", " // c",
        "%r", "%rd", "%rs", "%rq", "%f", "%fd", "%h", "%hh", "%p", "%b", "%x", "%rx", "%r1a", "%r12", "%rd3",
        "%f7", "%p1", "%hh2", "%fd10", "$L__BB0_", "$L__BB1_2", "$L__tmp0:", "$L__func_begin0:", "@%p1 ",
        "@!%p2 ", "bra.uni ", "ld.global.b32 ", "mov.u32 ", "fma.rn.f32 ", ".loc\t1 40 0", ".file\t1 \"k.py\"",
        ".visible .entry ", ".func ", "(\n", ".param .u64 k_param_0", "k", "kk", "k_param_1", ".reg .b32 %r<9>;",
        '"', '"s %r1"', "\\", ".section\t.debug_info", "\n", "\n", "\n", "\n", "  \n", "ret;", "\x0b", "\r\n",
        # Unicode digits are digits to the symbol pattern; braces balanced inside a line, or opening/closing one
        "%r\u0661", "%rd\u0662\u0663", "$L__BB\u0660_1", "{%r1, %r2}", " {", "} ", "$L__BB0_1:", "\t$L__BB0_2: {",
    ]
)
# fmt: on


@settings(max_examples=400, deadline=None)
@given(
    pieces=st.lists(_PIECES, max_size=120),
    kernel=st.one_of(st.none(), st.sampled_from(["k", "kk", "k.a", ""])),
)
def test_fast_ptx_equals_the_general_normalizer(pieces: list[str], kernel: str | None) -> None:
    text = "".join(pieces)
    slow = _general(text, kernel)
    fast = normalize_ptx_fast("ptx", text, text.splitlines(), kernel)
    if fast is None:  # a string on a kept line: normalize() uses the general path
        assert '"' in text
        got = normalize("ptx", text, kernel)
        assert got.lines == slow.lines and got.symbols == slow.symbols
        return
    _same(fast, slow)
    assert normalize("ptx", text, kernel).lines == slow.lines


def test_fast_ptx_equals_the_general_normalizer_on_real_ptx(matmul_sm86: Bundle) -> None:
    for name in ("annotated", "unannotated"):
        v = matmul_sm86.variants[name]
        text = v.text("ptx")
        fast = normalize_ptx_fast("ptx", text, text.splitlines(), v.kernel)
        assert fast is not None, "Triton's PTX has no strings on kept lines"
        _same(fast, _general(text, v.kernel))
        assert len(fast.lines) > 100 and any(fast.symbols)


# Symbol texts of every PTX class (registers and block labels), Unicode digits included.
_SYMBOL = st.builds(
    lambda cls, n: cls + n,
    st.sampled_from(["%r", "%rd", "%rs", "%rq", "%f", "%fd", "%h", "%hh", "%p", "%b"]),
    st.text(alphabet="0123\u0661\u0662", min_size=1, max_size=3),
) | st.builds(lambda a, b: f"$L__BB{a}_{b}", st.sampled_from(["0", "1", "\u0661"]), st.sampled_from(["0", "7"]))


@settings(max_examples=300, deadline=None)
@given(chunks=st.lists(st.lists(_SYMBOL, min_size=1, max_size=30), max_size=6))
def test_ptx_numbering_equals_first_appearance_per_class(chunks: list[list[str]]) -> None:
    """The fast path's renaming (ids from a defaultdict, classes from the texts without digits, numbers from
    per-class counters, chunk by chunk) against the plain rule: each class (the symbol's letters) numbered by first
    appearance over all chunks; the shape is the class and ``_`` (``$L__BB_`` for labels)."""
    import re

    from irdiff.normalize.ptx import _Numbering

    numbering = _Numbering()
    names: dict[str, str] = {}
    counters: dict[str, int] = {}
    for syms in chunks:
        shown, erased = numbering.rename(syms)
        want_shown, want_erased = [], []
        for s in syms:
            cls = "$L__BB" if s[0] == "$" else re.match(r"%[a-z]+", s).group(0)  # type: ignore[union-attr]
            if s not in names:
                names[s] = cls + str(counters.get(cls, 0))
                counters[cls] = counters.get(cls, 0) + 1
            want_shown.append(names[s])
            want_erased.append(cls + "_")
        assert list(shown) == want_shown and list(erased) == want_erased
    assert numbering.table() == names


def _eager(a: NormalizedStage, b: NormalizedStage, context: int) -> tuple[list[DiffLine], list[align.Hunk], int, int]:
    """The huge-stage diff as rows built eagerly (what irdiff did before the rows became lazy)."""

    def rows_of(x: NormalizedStage, y: NormalizedStage) -> list[DiffLine]:
        rows: list[DiffLine] = []
        ia = ib = 0
        for i, j, n in align._blocks_patience(x.shapes, y.shapes, align.ENGINES[align.DEFAULT_ENGINE]):
            rows += [DiffLine("delete", k, None, x.lines[k], None) for k in range(ia, i)]
            rows += [DiffLine("insert", None, k, None, y.lines[k]) for k in range(ib, j)]
            rows += [DiffLine("equal", i + k, j + k, x.lines[i + k], y.lines[j + k]) for k in range(n)]
            ia, ib = i + n, j + n
        return rows

    if align._orientation_key(a) <= align._orientation_key(b):
        rows = rows_of(a, b)
    else:
        rows = [align._mirror(r) for r in rows_of(b, a)]
    added = sum(r.tag == "insert" for r in rows)
    removed = sum(r.tag == "delete" for r in rows)
    return rows, align._hunks(rows, a, b, context), added, removed


_LINES = st.lists(st.sampled_from(["a", "b", "c", "d", "e", "x1", "x2", "x3", "x4", "y"]), max_size=40)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(xs=_LINES, ys=_LINES, context=st.integers(0, 3), cells=st.sampled_from([0, 4, 30]))
def test_linear_diff_equals_eager_rows(xs: list[str], ys: list[str], context: int, cells: int) -> None:
    a, b = normalize("text", "\n".join(xs)), normalize("text", "\n".join(ys))
    old = align.EXACT_CELLS
    align.EXACT_CELLS = cells  # every pair takes the huge-function path
    try:
        for x, y in ((a, b), (b, a)):
            if len(x.lines) * len(y.lines) <= cells:
                continue
            d: StageDiff = diff_stage(x, y, context)
            rows, hunks, added, removed = _eager(x, y, context)
            assert d.notes and "patience" in d.notes[0]
            assert list(d.lines) == rows and d.lines == rows and len(d.lines) == len(rows)
            assert d.hunks == hunks
            assert (d.added, d.removed) == (added, removed)
            assert [d.lines[k] for k in range(-len(rows), 0)] == rows
    finally:
        align.EXACT_CELLS = old


def _ref_patience(x: list[str], y: list[str], exact: align.Matcher, cells: int) -> align.Blocks:
    """:func:`irdiff.align._blocks_patience` written plainly (anchors picked line by line, sorted, then the longest
    increasing run): the reference its C-level anchor selection must equal."""
    out: align.Blocks = []
    stack = [(0, len(x), 0, len(y))]
    while stack:
        a0, a1, b0, b1 = stack.pop()
        while a0 < a1 and b0 < b1 and x[a0] == y[b0]:
            out.append((a0, b0, 1))
            a0, b0 = a0 + 1, b0 + 1
        n = 0
        while a1 - n > a0 and b1 - n > b0 and x[a1 - n - 1] == y[b1 - n - 1]:
            n += 1
        if n:
            out.append((a1 - n, b1 - n, n))
            a1, b1 = a1 - n, b1 - n
        if a0 >= a1 or b0 >= b1:
            continue
        if (a1 - a0) * (b1 - b0) <= cells:
            out.extend((a0 + i, b0 + j, k) for i, j, k in exact(x[a0:a1], y[b0:b1]) if k)
            continue
        xs, ys = x[a0:a1], y[b0:b1]
        once = {ln for ln in xs if xs.count(ln) == 1 and ys.count(ln) == 1}
        cand = sorted((a0 + xs.index(ln), j) for j, ln in enumerate(ys, b0) if ln in once)
        if not cand:
            continue
        ca, cb = a0, b0
        for i, j in align._longest_increasing(cand):
            if i - ca == j - cb and x[ca:i] == y[cb:j]:
                out.append((ca, cb, i + 1 - ca))
            else:
                stack.append((ca, i, cb, j))
                out.append((i, j, 1))
            ca, cb = i + 1, j + 1
        stack.append((ca, a1, cb, b1))
    merged: align.Blocks = []
    for i, j, k in sorted(out):
        if merged and merged[-1][0] + merged[-1][2] == i and merged[-1][1] + merged[-1][2] == j:
            merged[-1] = (merged[-1][0], merged[-1][1], merged[-1][2] + k)
        else:
            merged.append((i, j, k))
    merged.append((len(x), len(y), 0))
    return merged


_MANY = st.lists(st.sampled_from([f"u{k}" for k in range(12)] + ["a", "b", "c"]), max_size=60)


@settings(max_examples=300, deadline=None)
@given(xs=_MANY, ys=_MANY, cells=st.sampled_from([0, 4, 30]))
def test_patience_blocks_equal_the_plain_reference(xs: list[str], ys: list[str], cells: int) -> None:
    """Moved, repeated, unique, inserted and deleted lines: the same blocks as the plain reference, every block a
    true match, in increasing order."""
    exact = align.ENGINES[align.DEFAULT_ENGINE]
    got = align._blocks_patience(xs, ys, exact, cells)
    assert got == _ref_patience(xs, ys, exact, cells)
    assert all(xs[i + k] == ys[j + k] for i, j, n in got for k in range(n))
    assert all(p[0] + p[2] <= q[0] and p[1] + p[2] <= q[1] for p, q in zip(got, got[1:], strict=False))


# fmt: off
_SASS_PIECES = st.sampled_from(
    ["/*0070*/", "/*00a0*/", "/*007*/", " ", "  ", "\t", "S2R R0, SR_TID.X", ";", " ;", "/* 0x0000000000007919 */",
     "/*0x000e220000002100*/", "/* 0x12 */", "x", "*/", "/*", "\x0b", "\u00a0"]
)
# fmt: on


@settings(max_examples=500, deadline=None)
@given(pieces=st.lists(_SASS_PIECES, max_size=12))
def test_sass_raw_parser_equals_its_reference_regex(pieces: list[str]) -> None:
    """The raw-form SASS line parser (linear) reads what the old regex read (which backtracks on long blanks)."""
    from irdiff.normalize.sass import _SASS_RAW, _sass_raw

    line = "".join(pieces)
    m = _SASS_RAW.match(line)
    got = _sass_raw(line)
    assert (got is None) == (m is None)
    if m is not None and got is not None:
        assert got == (m.group(1), m.group(2))


def _ref_matching_paren(s: str, open_idx: int, opens: str = "(", closes: str = ")") -> int:
    """The character-by-character scanner the linear one replaced."""
    depth = 0
    i = open_idx
    n = len(s)
    while i < n:
        c = s[i]
        if c == '"':
            i += 1
            while i < n and s[i] != '"':
                i += 2 if s[i] == "\\" else 1
        elif c in opens:
            depth += 1
        elif c in closes:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def _ref_strip_locs(line: str, *, eat_blanks: bool = True, quoted: bool = True) -> str:
    """The character-by-character ``loc(...)`` remover the linear one replaced."""
    if "loc(" not in line:
        return line
    out: list[str] = []
    i = 0
    n = len(line)
    while i < n:
        c = line[i]
        if c == '"' and quoted:
            j = i + 1
            while j < n and line[j] != '"':
                j += 2 if line[j] == "\\" else 1
            out.append(line[i : j + 1])
            i = j + 1
            continue
        if line.startswith("loc(", i) and (i == 0 or not (line[i - 1].isalnum() or line[i - 1] in "_$.#")):
            close = _ref_matching_paren(line, i + 3)
            if close < 0:
                close = n - 1
            while eat_blanks and out and out[-1].endswith((" ", "\t")):
                out[-1] = out[-1].rstrip(" \t")
                if out[-1]:
                    break
                out.pop()
            i = close + 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


_LOC_PIECES = st.lists(
    st.sampled_from(['loc(', 'loc("a.py":1:2)', "myloc(", "#loc1", "(", ")", "[", "]", '"', '\\"', "\\", " ", "\t",
                     "x", "%0 = op", "  ", 'callsite(#loc1 at #loc2)', "é"]),
    max_size=25,
)  # fmt: skip


@settings(max_examples=600, deadline=None)
@given(pieces=_LOC_PIECES, eat=st.booleans(), quoted=st.booleans(), at=st.integers(0, 30))
def test_linear_scanners_equal_the_character_loops(pieces: list[str], eat: bool, quoted: bool, at: int) -> None:
    from irdiff.normalize.text import matching_paren, strip_locs

    line = "".join(pieces)
    assert strip_locs(line, eat_blanks=eat, quoted=quoted) == _ref_strip_locs(line, eat_blanks=eat, quoted=quoted)
    at = min(at, len(line))
    for opens, closes in (("(", ")"), ("([", ")]")):
        assert matching_paren(line, at, opens, closes) == _ref_matching_paren(line, at, opens, closes)


def _built(make: type[Builder] | type[BulkBuilder], stage: str, text: str, kernel: str | None) -> NormalizedStage:
    dialect = dialect_of(stage)
    out = make(stage, text, with_columns=dialect == "sass")
    dialect_normalizer(dialect)(out, text.splitlines(), kernel)
    return out.build()


def _bulk_equals_reference(stage: str, text: str, kernel: str | None) -> NormalizedStage:
    ref = _built(Builder, stage, text, kernel)
    _same(_built(BulkBuilder, stage, text, kernel), ref)
    got = normalize(stage, text, kernel)  # the bulk builder (or, for PTX, its own fast path) is what normalize uses
    assert not got.fallback
    _same(got, ref)
    return ref


# Pieces of each dialect as Triton prints it, and what the normalizers must survive: symbols of every kind and
# look-alikes, strings (with symbols and escapes inside, unterminated), labels, signatures, structure, comments,
# debug lines, the kernel's name, placeholder characters, Unicode digits.
_COMMON = [
    "\n",
    "\n",
    "\n",
    " ",
    "  ",
    "\t",
    ",",
    ";",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    "<",
    ">",
    "=",
    ":",
    '"',
    '"%1 #0 R2"',
    '"a\\"',
    "\\",
    "k",
    "kk",
    "x",
    "0",
    "12",
    "\u0663",
    "\u00b2",
    _SENTINELS[0],
    "\x0b",
    # a quote that opens no string (a backslash ends the line): what follows it is not inside a string
    '"#1 \\\n',
    '"!3 %4 \\\n',
]
# fmt: off
_DIALECT_PIECES = {
    "ttgir": _COMMON + [
        "%0", "%12", "%arg3", "%a_ptrs_61", "%a_ptrs.3", "%x", "%_", "%-", "%.y", "%12abc", "#blocked", "#blocked1",
        "#blocked = #ttg.blocked<{sizePerThread = [8], order = [0]}>", "#blocked1 = #ttg.blocked<{order = [1, 0]}>",
        "#mma = #ttg.nvidia_mma<{versionMajor = 2}>", "#smem = #ttg.shared_memory", "#loc3 = loc(\"k.py\":4:1)",
        " loc(#loc1)", ' loc("x"(#loc))', "loc(", "tt.func public @k(", "%x: !tt.ptr<f16> {tt.divisibility = 16}",
        ") attributes {noinline = false} {", "scf.for %i = %c0 to %n step %c1 {", "} else {", "scf.if %c {",
        "module attributes {\"ttg.num-warps\" = 4 : i32} {", "triton_gpu.", "!tt.memdesc<", "tt.return",
        "arith.addi", " = ", " : i32", "tensor<128xf32, #blocked>",
    ],
    "llir": _COMMON + [
        "%0", "%12", "%.lr.ph", "%.frozen1147", "%x", "%a.", "#0", "#1", "#7", "!5", "!12", "a#0", "\"#0", ", !dbg !12",
        " !dbg !3", "!dbg !", ", !dbg !1, !dbg !2", "; comment", "; ModuleID = 'm'", "source_filename = \"m\"",
        "!4 = !DILocation(line: 1, scope: !2)", '!2 = !{i32 2, !"Debug Info Version", i32 3}', "12:", ".lr.ph:",
        "  ", "define void @k(ptr %0, i32 %1) #0 {", "define ptx_kernel void @kk(i32 %x) local_unnamed_addr #1 {",
        "attributes #0 = { nounwind }", "attributes #1 = { \"x\" }", "attributes #7 = {  }", "br label %12",
        'call void asm sideeffect "mov.b32 $0, %r1;", "=r"(i32 %5)', "ret void", "tail call void @llvm.dbg.value",
    ],
    "sass": _COMMON + [
        "--:-:-:-:1\t", "--:-:0:Y:4\t", "01:-:-:-:2\t", "MOV R1, c[0x0][0x28];", "S2R R0, SR_TID.X;", "R12", "UR4",
        "P0", "UP1", "B0", "RZ", "PT", "R2.64", "R2UR", "@!P0 BRA LBB1;", "BRA 0x160;", "BSSY B0, LBB2;", "LBB1:",
        "LBB2", ".L_x_3:", ".L_x_3", "`(.L_x_3)", "CALL.REL 0x20", "Function:k", "Function : kk", "//## File",
        "        /*0070*/                   S2R R0, SR_TID.X ;                      /* 0x0000000000007919 */",
        "        /*0160*/              @!P0 BRA 0x2d60 ;                        /* 0x0000002b00f08947 */",
        "        /*2d60*/                   EXIT ;                                  /* 0x000000000000794d */",
        "                                                                      /* 0x000e220000002100 */",
        "code for sm_90", ".headerflags", "EXIT;", "LBB1R2",
    ],
    "ptx": _COMMON + [
        "%r", "%rd", "%r1a", "%r12", "%rd3", "%f7", "%p1", "%hh2", "%fd10", "%r\u0663", "$L__BB0_", "$L__BB1_2",
        "$L__BB1_2:", "$L__tmp0:", "@%p1 ", "bra.uni ", "ld.global.b32 ", ".loc\t1 40 0", ".visible .entry ", ".func ",
        ".param .u64 k_param_0", "k_param_1", "// c", ".section\t.debug_info", "ret;",
    ],
}
# fmt: on


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    stage=st.sampled_from(["ttir", "ttgir", "llir", "ptx", "sass"]),
    kernel=st.one_of(st.none(), st.sampled_from(["k", "kk", ""])),
)
def test_bulk_builder_equals_the_reference_builder(data: st.DataObject, stage: str, kernel: str | None) -> None:
    pieces = data.draw(st.lists(st.sampled_from(_DIALECT_PIECES["ttgir" if stage == "ttir" else stage]), max_size=80))
    _bulk_equals_reference(stage, "".join(pieces), kernel)


def test_bulk_builder_equals_the_reference_on_real_stages(matmul_sm86: Bundle, matmul_sm90: Bundle) -> None:
    """Every stage of two real compiles (sm86: mma.sync, cp.async; sm90: wgmma, TMA), both variants."""
    seen = 0
    for bundle in (matmul_sm86, matmul_sm90):
        for v in bundle.variants.values():
            for stage in ("ttir", "ttgir", "llir", "ptx", "sass"):
                text = v.text(stage)
                if not text:
                    continue
                ref = _bulk_equals_reference(stage, text, v.kernel)
                assert len(ref.lines) > 100 and sum(map(len, ref.symbols)) > 100, stage
                seen += 1
    assert seen >= 18  # five stages (SASS needs ptxas) of two variants on two targets


def test_bulk_builder_steps_aside_when_every_placeholder_is_taken() -> None:
    """A text holding every placeholder character is normalized by the reference builder, with the same result."""
    text = "%0 = arith.addi %x, %1 : i32 " + _SENTINELS + "\n%2 = arith.muli %0, %0 : i32\n"
    try:
        BulkBuilder("ttgir", text)
    except ValueError:
        pass
    else:  # pragma: no cover
        raise AssertionError("BulkBuilder accepted a text without a free placeholder character")
    got = normalize("ttgir", text)
    assert not got.fallback
    _same(got, _built(Builder, "ttgir", text, None))
    assert got.lines[1] == "%2 = arith.muli %0, %0 : i32"


# get_sass's form only (no raw cuobjdump line, which takes the line-by-line walk): the whole-text path of
# irdiff.normalize.sass, with what it must hand to the reference rule (a code address in a branch, a register right
# after a label, the kernel's name) and what its split must read as the reference does (labels with and without
# backticks, two labels in a row, a label inside an opcode).
# fmt: off
_SASS_BULK_PIECES = [p for p in _DIALECT_PIECES["sass"] if "/*" not in p] + [
    "--:-:-:Y:0\t", "BRA `(.L_x_12);", "@P1 CALL.REL.NOINC 0x369d0;", "BSSY B1, `(.L_x_7);", "LBB1LBB2", "`LBB3`R4",
    ".L_x_1B0", ".L_5UR2", "LBB7P0", "BRA.LBB1 0x30", "JMP 0x0, R2", "LBB0:", "  `.L_x_12`:  ", ".L_3:", "R2.L_x_1",
    "Function:kk", "ISETP.GE.AND P3, PT, R102, UR2, PT;", "LDG.E.128 R98, [R194.64+0x0];", "BRA LBB\u0663;",
]
# fmt: on


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lines=st.lists(
        st.tuples(
            # (and look-alikes that are not control codes: a bad field, no tab, a blank for the tab, one short)
            st.sampled_from(
                [
                    "",
                    "",
                    "--:-:-:-:1\t",
                    "--:-:0:Y:4\t",
                    "01:-:-:-:2\t",
                    "--:-:8:-:1\t",
                    "zz:-:-:-:1\t",
                    "--:-:-:-:1",
                    "--:-:-:-:1 ",
                    "-:-:-:-:1\t",
                    "--:-:-:Y:g\t",
                    "0A:-:-:-:f\t\t",
                ]
            ),
            st.lists(st.sampled_from(_SASS_BULK_PIECES), max_size=6),
        ),
        max_size=30,
    ),
    kernel=st.one_of(st.none(), st.sampled_from(["k", "kk", ""])),
    chunk=st.sampled_from([1, 2, 3, 4096]),
)
def test_sass_whole_text_path_equals_the_reference(
    lines: list[tuple[str, list[str]]], kernel: str | None, chunk: int
) -> None:
    """The chunked path (any chunk size: lines cross chunk boundaries) gives the reference builder's result; most
    lines are instructions (a control code, then pieces)."""
    import pytest

    from irdiff.normalize import sass

    text = "\n".join(ctrl + "".join(pieces) for ctrl, pieces in lines)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sass, "BULK_LINES", chunk)
        out = BulkBuilder("sass", text, with_columns=True)
        sass.normalize_sass(out, text.splitlines(), kernel)
        assert out.symbols is sass._BULK_SYMBOLS  # the whole-text path ran
        _same(out.build(), _built(Builder, "sass", text, kernel))


def test_sass_whole_text_path_on_a_listing() -> None:
    """A get_sass listing of a loop with a call and a kernel-named line: what the whole-text path gives is true
    (labels and registers renamed by first appearance per class, the call's code address a symbol, control codes
    in the side column, one block per label) and the reference builder's."""
    text = "\n".join(
        [
            "Function:scale_rows",
            "--:-:-:-:2\tMOV R1, c[0x0][0x28];",
            "--:-:0:-:1\tS2R R7, SR_TID.X;",
            ".L_x_4:",
            "01:-:-:-:1\tISETP.GE.AND P2, PT, R7, UR5, PT;",
            "--:-:-:Y:4\t@P2 BRA `(.L_x_9);",
            "--:-:-:-:1\tFFMA R9, R7, 2, R9;",
            "--:-:-:-:1\t@!P2 CALL.REL.NOINC 0x3a0;",
            "--:-:-:-:5\tBRA `(.L_x_4);",
            ".L_x_9:",
            "--:-:-:-:1\tSTG.E [R2.64], R9; // scale_rows",
            "--:-:-:-:1\tEXIT;",
            "",
        ]
    )
    got = normalize("sass", text, "scale_rows")
    _same(got, _built(Builder, "sass", text, "scale_rows"))
    assert got.lines == [
        "Function:KERNEL",
        "MOV R0, c[0x0][0x28];",
        "S2R R1, SR_TID.X;",
        ".L_x_0:",
        "ISETP.GE.AND P0, PT, R1, UR0, PT;",
        "@P0 BRA `(.L_x_1);",
        "FFMA R2, R1, 2, R2;",
        "@!P0 CALL.REL.NOINC ADDR0;",
        "BRA `(.L_x_0);",
        ".L_x_1:",
        "STG.E [R3.64], R2; // KERNEL",
        "EXIT;",
    ]
    assert got.shapes[5] == "@P_ BRA `(L_);" and got.shapes[7] == "@!P_ CALL.REL.NOINC A_;"
    assert got.columns is not None and got.columns[4:6] == ["01:-:-:-:1", "--:-:-:Y:4"] and got.columns[3] == ""
    assert got.symbols[7] == ("P0", "ADDR0") and got.symbols[9] == (".L_x_1",)
    assert got.raw_line[3] == 4 and got.raw_line[-1] == 12
    blocks = [(r.start, r.end) for r in got.regions if r.kind == "block"]
    assert blocks == [(3, 8), (9, 11)]


# LLIR's whole-text path (irdiff.normalize.llir._bulk_llir): what its chunk-wide passes must read as the per-line rule
# does. Comments after strings that hold ``;`` (or an unterminated string, or a quote that opens none), ``!dbg``
# attachments in every spelling _drop_dbg handles (after ``, ``, after blanks or two blanks, without a comma, two on a
# line, overlapping, cut by a removal, Unicode digits), dropped debug lines (``#dbg_``, ``!N = !DI...``, the module
# header), lines it hands to the reference walk (define, ``}``, attribute groups, module-level lines), labels (with a
# comment, named, Unicode digits), locations and aliases kept as text, very long lines, the kernel's name.
# fmt: off
_LLIR_BULK_PIECES = _DIALECT_PIECES["llir"] + [
    ", !dbg !205", ",  !dbg !3", " , !dbg !4", ",!dbg !5", "!dbg !dbg !6", "!db", "g !7", ", !dbg !\u0663", "!dbg !\u00b2",
    " !dbg !12 !dbg !13", ", !dbg !1 ; c", "!dbg !8;", '"s;t"', '"a\\";b"', '"u;', '"\\', '"@$2 st.global.b32 [ $0 ], { $1 };"',
    "; preds = %11, %3", ";", "12:", "13:  ", "\u0661\u0662:", "%.lr.ph:", "x:", "  br label %12", "  ret void",
    "  %5 = getelementptr i8, ptr addrspace(1) %0, i64 16", "  tail call void asm sideeffect ", '"l,f,b"(ptr %5)',
    "#dbg_value(i32 %1, !4, !DIExpression(), !5)", "!7 = !DILocation(line: 3, scope: !4)", "!llvm.dbg.cu = !{!0}",
    "!3 = !{i32 2, !\"Dwarf Version\", i32 4}", "!nvvm.annotations = !{!9}", "!9 = !{ptr @k, !\"kernel\", i32 1}",
    "declare void @llvm.dbg.value(metadata, metadata, metadata)", "@k.alias = alias void (), ptr @k", "loc(#loc3)",
    "target datalayout = \"e-i64:64\"", "define ptx_kernel void @k(ptr %0, i32 %1) #0 !dbg !4 {", "}", "} ",
    "attributes #0 = { nounwind }", "attributes #1 = { convergent nounwind }", "#1",
    "attributes #1 = { convergent nounwind }\n7:", "attributes #0 = { nounwind }\n  ret void", "attributes #2 = {}\n}", "%k", "@k", "k_param_0",
    "  %" + "x" * 3000 + " = add i32 %1, %2, !dbg !9", " " * 300, "!dbg !" * 40, "%1, " * 500, "\u00a0", "\t!",
]


# Whole lines of a module, each a kind of line the whole-text path treats apart (labels, named ones used as values
# too; attribute groups before a label, an instruction or a closer; defines; debug lines; module-level lines):
_LLIR_WHOLE_LINES = [
    "12:", "13:                                      ; preds = %12", "x:", ".lr.ph:", "  br label %x, !dbg !3",
    "  %x = add i32 %.lr.ph, 1", "  br label %.lr.ph", "  %x2 = add i32 %x, %.lr.ph3", "x3:", "attributes #0 = { nounwind }", "attributes #1 = { \"x\" }",
    "attributes #3 = { convergent nounwind }", "define void @k(ptr %0, i32 %1) #0 !dbg !4 {", "}", "",
    "define ptx_kernel void @kk(i32 %x) local_unnamed_addr #1 {", "!4 = !DILocation(line: 1, scope: !2)",
    "  #dbg_value(i32 %1, !4, !DIExpression(), !5)", "declare void @foo(i32) #3", "; ModuleID = 'm'",
    "  %7 = call i32 @f(i32 %x), !dbg !1, !dbg !2", '!3 = !{i32 2, !"Dwarf Version", i32 4}', "  #dbg_label(!9, !10)",
    '!2 = !{i32 2, !"Debug Info Version", i32 3}', "  tail call void @llvm.dbg.value(metadata i32 %1, metadata !4)", '  call void asm "a;b", "=r"() ; c', "  ret void, !dbg !6",
]
# fmt: on


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lines=st.lists(
        st.one_of(
            st.tuples(
                st.sampled_from(["  ", "  ", "  ", "", " ", "\t"]),
                st.lists(st.sampled_from(_LLIR_BULK_PIECES), max_size=6),
            ),
            st.tuples(st.just(""), st.lists(st.sampled_from(_LLIR_WHOLE_LINES), min_size=1, max_size=1)),
        ),
        max_size=30,
    ),
    kernel=st.one_of(st.none(), st.sampled_from(["k", "kk", ""])),
    chunk=st.sampled_from([1, 2, 3, 4096]),
)
def test_llir_whole_text_path_equals_the_reference(
    lines: list[tuple[str, list[str]]], kernel: str | None, chunk: int
) -> None:
    """The chunked path (any chunk size: lines cross chunk boundaries) gives the reference builder's result (the
    per-line walk); lines are instructions (two leading blanks, then pieces), pieces, or whole lines of a module."""
    import pytest

    from irdiff.normalize import llir

    text = "\n".join(lead + "".join(pieces) for lead, pieces in lines)
    ran: list[int] = []
    bulk = llir._bulk_llir

    def spy(out: BulkBuilder, raw_lines: list[str], walk: llir._LlirWalk) -> None:
        ran.append(1)
        bulk(out, raw_lines, walk)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(llir, "BULK_LINES", chunk)
        mp.setattr(llir, "_bulk_llir", spy)
        try:
            out = BulkBuilder("llir", text)
        except ValueError:  # every placeholder character taken: normalize() uses the reference builder
            assert all(c in text for c in _SENTINELS)
            return
        llir.normalize_llir(out, text.splitlines(), kernel)
        assert ran == [1]  # the whole-text path ran
        _same(out.build(), _built(Builder, "llir", text, kernel))


def test_llir_whole_text_path_on_a_module() -> None:
    """A module with a debug header, a define, blocks with ``; preds`` comments, an inline asm whose string holds a
    ``;``, ``!dbg`` attachments and attribute groups: what the whole-text path gives is true (values and labels
    renamed by first appearance, a label shown without its sigil, comments, ``!dbg`` and debug metadata gone,
    attribute groups named by content and sorted, one region per block and per function) and the reference
    builder's, at any chunk size."""
    import pytest

    from irdiff.normalize import llir

    text = "\n".join(
        [
            "; ModuleID = 'LLVMDialectModule'",
            'source_filename = "LLVMDialectModule"',
            "",
            "define ptx_kernel void @scale(ptr addrspace(1) %0, i32 %1) local_unnamed_addr #0 !dbg !4 {",
            "  %3 = icmp slt i32 %1, 4, !dbg !7",
            "  br i1 %3, label %4, label %6, !dbg !7",
            "",
            "4:                                                ; preds = %2",
            '  tail call void asm sideeffect "st.global.b32 [ $0 ], { $1 };", "l,r"(ptr addrspace(1) %0, i32 %1) #1, !dbg !8',
            "  br label %6, !dbg !8 ; back",
            "",
            "6:                                                ; preds = %4, %2",
            "  ret void, !dbg !9",
            "}",
            "",
            "attributes #1 = { convergent nounwind }",
            "attributes #0 = { nounwind }",
            "",
            "!7 = !DILocation(line: 3, column: 1, scope: !4)",
        ]
    )
    ref = _built(Builder, "llir", text, "scale")
    for chunk in (1, 3, 4096):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(llir, "BULK_LINES", chunk)
            got = normalize("llir", text, "scale")
        _same(got, ref)
    groups = llir.attribute_group_names(text.splitlines())
    g0, g1 = groups["0"], groups["1"]
    assert got.lines == [
        "define ptx_kernel void @KERNEL(",
        "    ptr addrspace(1) %0",
        "    i32 %1",
        f") local_unnamed_addr {g0} {{",
        "  %2 = icmp slt i32 %1, 4",
        "  br i1 %2, label %3, label %4",
        "3:",
        '  tail call void asm sideeffect "st.global.b32 [ $0 ], { $1 };", "l,r"(ptr addrspace(1) %0, i32 %1) ' + g1,
        "  br label %4",
        "4:",
        "  ret void",
        "}",
        f"attributes {g1} = {{ convergent nounwind }}",  # sorted by content
        f"attributes {g0} = {{ nounwind }}",
    ]
    assert got.shapes[6] == "%_:" and got.symbols[6] == ("%3",) and got.symbol_spans[6] == ((0, 1),)
    assert got.raw_line[6] == 8 and got.raw_line[-1] in (16, 17)
    blocks = [(r.start, r.end) for r in got.regions if r.kind == "block"]
    assert blocks == [(6, 8), (9, 10)]
    assert [(r.start, r.end) for r in got.regions if r.function] == [(0, 11)]


def test_llir_whole_text_path_on_real_stages(
    matmul_sm86: Bundle, matmul_sm90: Bundle, mech80: Bundle, mech90: Bundle, loop100: Bundle
) -> None:
    """Every LLIR stage of the suites' real compiles (matmul on sm86/sm90, the mechanism kernels on sm80/sm90, the
    loop kernels on sm100): the whole-text path gives the reference builder's result."""
    import pytest

    from irdiff.normalize import llir

    seen = 0
    for bundle in (matmul_sm86, matmul_sm90, mech80, mech90, loop100):
        for v in bundle.variants.values():
            text = v.text("llir")
            if not text:
                continue
            for chunk in (64, 4096):  # chunks that start inside functions, and whole modules
                with pytest.MonkeyPatch.context() as mp:
                    mp.setattr(llir, "BULK_LINES", chunk)
                    _bulk_equals_reference("llir", text, v.kernel)
            seen += 1
    assert seen >= 30


def test_sass_whole_text_path_after_dropped_lines_and_label_hazards() -> None:
    """Two functions of one listing, each after lines the walk drops (cuobjdump's ``code for`` header, a comment,
    ``.headerflags``), and labels followed at once by a register's first letter (``.L_x_1R2``: the reference reads
    the label, then ``R2``) on two lines of a listing without ``LBB``: the whole-text path gives the reference
    builder's lines, regions (each function's region starts at its own ``Function`` line) and symbols."""
    text = "\n".join(
        [
            "\tcode for sm_90",
            "\t\tFunction : first",
            '\t.headerflags\t@"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"',
            "--:-:-:-:2\tMOV R1, c[0x0][0x28];",
            "        // a comment",
            ".L_x_0:",
            "--:-:-:-:1\tEXIT;",
            "\t\tFunction : second",
            "--:-:-:-:1\tMOV R2, .L_x_1R2;",
            "--:-:-:-:1\tIADD3 R3, .L_x_2B0, R3;",
            "--:-:-:-:1\tEXIT;",
            "",
        ]
    )
    got = normalize("sass", text, "first")
    _same(got, _built(Builder, "sass", text, "first"))
    functions = [(r.start, r.label) for r in got.regions if r.function]
    assert functions == [(0, "Function:KERNEL"), (4, "Function:second")]
    # registers and labels numbered by first appearance across the listing: R2 is the second register, .L_x_1 the
    # second label (the split reads ``.L_x_1R2`` as the label, then the register)
    assert got.lines[4:7] == ["Function:second", "MOV R1, .L_x_1R1;", "IADD3 R2, .L_x_2B0, R2;"]
