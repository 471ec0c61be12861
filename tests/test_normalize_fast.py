"""The linear-time paths for huge stages give the same results as the general ones (issue 15).

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
from irdiff.normalize import NormalizedStage, normalize
from irdiff.normalize.builder import Builder
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
