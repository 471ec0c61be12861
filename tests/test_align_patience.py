"""The bounded-cost path of irdiff/align.py (a function too large for the exact alignment, above ``EXACT_CELLS``):
the patience blocks (``_blocks_patience``), the longest increasing run of anchors (``_longest_increasing``) and the
rows made when read (``_linear_diff``, ``_LinearRows``), on small PTX functions with the bound lowered so that they
take that path. Rows, hunks and counts are checked against hand-counted values and against the exact alignment
where both must agree, in both orders. Cheap: no compile."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irdiff.align as align
from irdiff.align import DiffLine, diff_stage
from irdiff.normalize import NormalizedStage, normalize

HEAD = ".visible .entry k(\n\t.param .u64 k_param_0\n)\n{\n\tld.param.u64 \t%rd1, [k_param_0];\n"
TAIL = "\tret;\n}\n"
# 30 instructions whose shapes differ (the immediates): every line is a patience anchor
L = [f"\tadd.s32 \t%r{i + 2}, %r{i + 1}, {i * 7};\n" for i in range(30)]
MUL = "\tmul.lo.s32 \t%r90, %r3, 3;\n"
BAR = "\tbar.sync \t0;\n"
CVT = "\tcvt.rn.f16.f32 \t%rs1, %f1;\n"
EXACT = align.ENGINES[align.DEFAULT_ENGINE]


def _ptx(body: list[str]) -> NormalizedStage:
    return normalize("ptx", HEAD + "".join(body) + TAIL, "k")


def _valid(x: list[str], y: list[str], blocks: list[tuple[int, int, int]]) -> int:
    """Blocks match equal lines, increase on both sides, end with ``(len(x), len(y), 0)``; returns lines matched."""
    assert blocks[-1] == (len(x), len(y), 0)
    pa = pb = 0
    for i, j, n in blocks[:-1]:
        assert n > 0 and i >= pa and j >= pb and x[i : i + n] == y[j : j + n], blocks
        pa, pb = i + n, j + n
    return sum(n for _, _, n in blocks)


def test_patience_blocks_of_an_insertion_and_a_deleted_run() -> None:
    x = [s.strip() for s in L]
    y = x[:10] + [MUL.strip()] + x[10:25] + x[28:]
    blocks = align._blocks_patience(x, y, EXACT, cells=0)  # every gap split by anchors, none matched exactly
    assert blocks == [(0, 0, 10), (10, 11, 15), (28, 26, 2), (30, 28, 0)]
    assert align._blocks_patience(y, x, EXACT, cells=0) == [(0, 0, 10), (11, 10, 15), (26, 28, 2), (28, 30, 0)]


def test_patience_leaves_a_moved_line_unmatched_on_both_sides() -> None:
    x = [s.strip() for s in L[:10]]
    y = x[:2] + x[3:8] + [x[2]] + x[8:]  # line 2 moved below line 7: anchors not increasing
    blocks = align._blocks_patience(x, y, EXACT, cells=0)
    assert blocks == [(0, 0, 2), (3, 2, 5), (8, 8, 2), (10, 10, 0)]
    assert _valid(x, y, blocks) == 9


# a few PTX line shapes, some repeated (not anchors), some unique
_SHAPES = st.lists(
    st.sampled_from(["bar.sync 0;", "mov.u32 %r_, %tid.x;", "ret;", "add.s32 %r_, %r_, 1;", "add.s32 %r_, %r_, 2;",
                     "ld.global.b16 { %rs_ }, [ %rd_ + 0 ];", "st.global.b16 [ %rd_ + 0 ], { %rs_ };"]),
    max_size=24,
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(x=_SHAPES, y=_SHAPES, cells=st.sampled_from([0, 6, 40]))
def test_patience_blocks_are_valid_and_leave_no_anchor_behind(x: list[str], y: list[str], cells: int) -> None:
    """Blocks match equal lines in increasing order; every gap left unmatched (both sides non-empty) that was not
    small enough for the exact matcher starts and ends with different lines and has no line occurring once on each
    side (it would have been an anchor); with a bound above the whole size it is the exact matcher's answer."""
    blocks = align._blocks_patience(x, y, EXACT, cells=cells)
    _valid(x, y, blocks)
    pa = pb = 0
    for i, j, n in blocks:
        gx, gy = x[pa:i], y[pb:j]
        if gx and gy and len(gx) * len(gy) > cells:
            assert gx[0] != gy[0] and gx[-1] != gy[-1], (gx, gy, blocks)
            assert not {s for s in gx if gx.count(s) == 1 and gy.count(s) == 1}, (gx, gy, blocks)
        pa, pb = i + n, j + n
    if len(x) * len(y) <= cells:
        assert sum(n for _, _, n in blocks) == sum(n for _, _, n in EXACT(x, y))


def test_longest_increasing_run_of_anchors() -> None:
    cand = [(0, 6), (1, 1), (2, 2), (3, 0), (4, 3), (5, 7), (6, 4)]
    assert align._longest_increasing(cand) == [(1, 1), (2, 2), (4, 3), (6, 4)]
    assert align._longest_increasing([(0, 1), (1, 0)]) == [(1, 0)]  # ties: the later pile's top
    assert align._longest_increasing([(0, 5)]) == [(0, 5)]


def test_patience_gap_small_enough_goes_to_the_exact_matcher_at_its_offset() -> None:
    m, n = "mov.u32 %r_, %tid.x;", "mov.u32 %r_, %ctaid.x;"
    x = ["ld.param.u64", m, m, n, n, "ret;"]
    y = ["ld.param.u64", n, n, m, m, "ret;"]
    # prefix and suffix matched by patience, the middle 4 × 4 (no unique line) by the exact matcher, shifted by 1
    blocks = align._blocks_patience(x, y, EXACT, cells=16)
    assert _valid(x, y, blocks) == 4 and blocks[0] == (0, 0, 1) and blocks[-2] == (5, 5, 1)
    # the same gap above the bound, with nothing unique in it: left unmatched
    assert align._blocks_patience(x, y, EXACT, cells=15) == [(0, 0, 1), (5, 5, 1), (6, 6, 0)]
    # a gap used up on one side by the common prefix and suffix: no line is matched twice
    assert align._blocks_patience(["B", "A"], ["B", "B", "A"], EXACT, cells=0) == [(0, 0, 1), (1, 2, 1), (2, 3, 0)]
    assert align._blocks_patience(["B", "B", "A"], ["B", "A"], EXACT, cells=0) == [(0, 0, 1), (2, 1, 1), (3, 2, 0)]
    # no common line at all
    assert align._blocks_patience(["a", "b"], ["c", "d"], EXACT, cells=0) == [(2, 2, 0)]


def test_linear_diff_rows_hunks_and_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    a = _ptx(L)
    b = _ptx(L[:10] + [MUL] + L[10:20] + L[24:])
    monkeypatch.setattr(align, "EXACT_CELLS", 0)
    d = diff_stage(a, b, 1)
    assert isinstance(d.lines, align._LinearRows)
    assert d.stage == "ptx" and d.a is a and d.b is b  # no joint renaming on this path: each side as given
    assert (d.added, d.removed) == (1, 4) and not d.identical
    assert d.notes == [
        "large function (37 × 34 lines): aligned by patience diff on the normalized lines (linear memory) instead"
        " of the exact alignment; lines that differ only in symbol names count as equal, and changed lines show"
        " as - and + rather than paired"
    ]
    changed = [(r.tag, r.a, r.b) for r in d.lines if r.tag != "equal"]
    assert changed == [("insert", None, 15), *[("delete", k, None) for k in range(25, 29)]]
    assert [(h.a_start, h.a_len, h.b_start, h.b_len) for h in d.hunks] == [(14, 2, 14, 3), (24, 6, 25, 2)]
    assert [(r.tag, r.a, r.b) for r in d.hunks[0].lines] == [("equal", 14, 14), ("insert", None, 15), ("equal", 15, 16)]
    assert d.hunks[0].lines[1].b_text == b.lines[15] and "mul.lo.s32" in b.lines[15]
    assert all(h.header.startswith(".entry") for h in d.hunks)
    # each side keeps its own lines: an equal row shows a's line on the left and b's on the right
    eq = d.lines[len(d.lines) - 1]
    assert eq.tag == "equal" and (eq.a, eq.b) == (36, 33) and (eq.a_text, eq.b_text) == (a.lines[36], b.lines[33])
    # the other order is the mirror image
    m = diff_stage(b, a, 1)
    assert (m.added, m.removed) == (4, 1) and "(34 × 37 lines)" in m.notes[0]
    assert list(m.lines) == [align._mirror(r) for r in d.lines]
    assert [(h.a_start, h.a_len, h.b_start, h.b_len) for h in m.hunks] == [(14, 3, 14, 2), (25, 2, 24, 6)]


@pytest.mark.parametrize("order", ["ab", "ba"])
def test_linear_rows_equal_the_exact_rows_of_unrelated_changes(monkeypatch: pytest.MonkeyPatch, order: str) -> None:
    """Unrelated lines (never paired) in one gap: the linear path lists them in the exact path's order."""
    a = _ptx(L[:5] + [BAR] + L[5:])
    b = _ptx(L[:5] + [CVT, MUL] + L[5:20] + [BAR] + L[20:])
    x, y = (a, b) if order == "ab" else (b, a)
    exact = diff_stage(x, y, 2)
    monkeypatch.setattr(align, "EXACT_CELLS", 0)
    linear = diff_stage(x, y, 2)
    assert not exact.notes and linear.notes
    assert [(r.tag, r.a, r.b) for r in linear.lines] == [(r.tag, r.a, r.b) for r in exact.lines]
    assert (linear.added, linear.removed) == (exact.added, exact.removed)
    assert [(h.a_start, h.a_len, h.b_start, h.b_len) for h in linear.hunks] == [
        (h.a_start, h.a_len, h.b_start, h.b_len) for h in exact.hunks
    ]


def test_linear_rows_read_like_a_list() -> None:
    la, lb = ["p", "q", "u", "r"], ["p", "x", "y", "r", "s"]
    rows = align._LinearRows([("equal", 0, 0, 1), ("delete", 1, 1, 2), ("insert", 3, 1, 2), ("equal", 3, 3, 1),
                              ("insert", 4, 4, 1)], la, lb)  # fmt: skip
    want = [
        DiffLine("equal", 0, 0, "p", "p"),
        DiffLine("delete", 1, None, "q", None),
        DiffLine("delete", 2, None, "u", None),
        DiffLine("insert", None, 1, None, "x"),
        DiffLine("insert", None, 2, None, "y"),
        DiffLine("equal", 3, 3, "r", "r"),
        DiffLine("insert", None, 4, None, "s"),
    ]
    assert len(rows) == 7 and list(rows) == want and rows == want and rows == rows
    assert rows != want[:6] and rows != [*want[:6], DiffLine("insert", None, 4, None, "t")]
    assert (rows == tuple(want)) is False  # only a list (or rows) compares equal
    assert rows[0] == want[0] and rows[6] == want[6]
    assert rows[-1] == want[6] and rows[-7] == want[0] and rows[1:4] == want[1:4] and rows[::2] == want[::2]
    for k, shown in ((7, "^7$"), (-8, "^-1$")):  # the error names the index (a negative one shifted by len)
        with pytest.raises(IndexError, match=shown):
            rows[k]
    # a/b lines before each row (inside a run of two too), and past the end every line of each side
    assert [rows.a_before(k) for k in range(8)] == [0, 1, 2, 3, 3, 3, 4, 4]
    assert [rows.b_before(k) for k in range(8)] == [0, 1, 1, 1, 2, 3, 4, 5]
    assert rows.a_before(9) == 4 and rows.b_before(9) == 5
    with pytest.raises(TypeError):
        hash(rows)


def test_difflib_engine_matches_repeated_lines() -> None:
    """The stdlib engine must not treat frequent lines as junk (``autojunk``, which difflib applies from 200 lines
    on): an unrolled loop of 150 ``fma`` on each side of a changed block still matches after the change."""
    fma, adds = "fma.rn.f32 %f_, %f_, %f_, %f_;", [f"add.s32 %r_, %r_, {i};" for i in range(100)]
    x = [fma] * 150 + adds + [fma] * 150
    y = [fma] * 149 + adds + ["mul.lo.s32 %r_, %r_, 3;"] + [fma] * 150
    assert align._blocks_difflib(x, y) == [(1, 0, 249), (250, 250, 150), (400, 400, 0)]


def test_patience_keeps_splitting_after_an_empty_or_exactly_matched_gap() -> None:
    """Every gap on the stack is processed: a gap empty on one side (a pure insertion) or small enough to match
    exactly ends only that gap, not the others still waiting (the earlier gaps' repeated lines stay matched)."""
    # unique anchors U, V; an earlier gap [p, C, C] / [q, C, C] (C repeated: no anchor, matched by its common suffix
    # or exactly) and a trailing pure insertion w after the last anchor (popped first: an empty gap on x's side)
    x = ["A", "p", "C", "C", "U", "V"]
    y = ["A", "q", "C", "C", "U", "V", "w"]
    for cells in (0, 1):  # 0: no gap matched exactly; 1: the 1x1 gap [p]/[q] matched exactly (no match) first
        for a, b in ((x, y), (y, x)):
            blocks = align._blocks_patience(a, b, EXACT, cells=cells)
            assert _valid(a, b, blocks) == 5, blocks  # A, C, C, U, V: everything but p/q and w
    # two gaps each small enough to match exactly, the one popped first (the tail) among them
    x2 = ["A", "p", "C", "C", "U", "r", "D", "D"]
    y2 = ["A", "q", "C", "C", "U", "s", "D", "D", "w"]
    for a, b in ((x2, y2), (y2, x2)):
        blocks = align._blocks_patience(a, b, EXACT, cells=16)
        assert _valid(a, b, blocks) == 6, blocks  # A, C, C, U, D, D
