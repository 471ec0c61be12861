"""What keeps a huge stage's normalization small (issue 15, ``benchmarks/bench_align_large.py``) changes nothing in
its result:

* :class:`irdiff.normalize.text.RawLines` (a long text's lines split a piece at a time) reads as ``splitlines()``,
  and every dialect gives the same stage from it as from the list, whatever the piece boundaries (a line at a
  piece's edge, a symbol first seen in a later piece, functions, regions and signatures spanning pieces);
* :class:`~irdiff.normalize.builder.BulkBuilder` past ``per_line_after`` lines keeps no pre-rename chunks (and says
  so if its per-line symbols are read), and no reference cycle keeps its tables once a stage is built;
* :func:`irdiff.normalize.parallel.pack` / :func:`~irdiff.normalize.parallel.unpack` (a forked normalizer's
  result) give back every field, also lines or labels that hold a line break, with shapes and columns pooled.
"""

from __future__ import annotations

import gc
import pickle
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irdiff.normalize as N
from irdiff.bundle import Bundle
from irdiff.normalize import NormalizedStage, Region, normalize
from irdiff.normalize import text as T
from irdiff.normalize.builder import BulkBuilder
from irdiff.normalize.mlir import SYMBOLS as MLIR_SYMBOLS
from irdiff.normalize.parallel import pack, unpack

ROOT = Path(__file__).resolve().parent.parent


def _fields(n: NormalizedStage) -> tuple[object, ...]:
    return (n.stage, n.lines, n.shapes, n.raw_line, n.columns, n.regions, n.fallback, list(n.symbols),
            list(n.symbol_spans))  # fmt: skip


_LINE_PIECES = st.sampled_from(["a", "bb", " ", "\n", "\n", "\n\n", "x = y", "\t%r1", ""])


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINE_PIECES, max_size=40), st.integers(1, 12), st.data())
def test_raw_lines_read_as_splitlines(pieces: list[str], size: int, data: st.DataObject) -> None:
    """Length, iteration, items (negative too) and slices (any bounds, any step) are those of the list, for
    pieces of 1-12 characters (so lines at every edge, empty lines, a missing last line break)."""
    text = "".join(pieces)
    ref = text.splitlines()
    old = T.RAW_PIECE_CHARS
    T.RAW_PIECE_CHARS = size
    try:
        got = T.RawLines(text)
    finally:
        T.RAW_PIECE_CHARS = old
    assert len(got) == len(ref)
    assert list(got) == ref
    assert [got[i] for i in range(len(ref))] == [got[i] for i in range(-len(ref), 0)] == ref
    for _ in range(5):
        a, b = data.draw(st.integers(-3, len(ref) + 3)), data.draw(st.integers(-3, len(ref) + 3))
        step = data.draw(st.sampled_from([None, 1, 2, 3, -1]))
        assert got[a:b:step] == ref[a:b:step]
    for i in (len(ref), -len(ref) - 1):
        with pytest.raises(IndexError):
            got[i]


class _Slices(str):
    """The text of a :class:`~irdiff.normalize.text.RawLines`, recording the length of every slice taken of it."""

    sizes: list[int]

    def __getitem__(self, key):  # type: ignore[no-untyped-def,override]
        if isinstance(key, slice):
            self.sizes.append(len(range(*key.indices(len(self)))))
        return str.__getitem__(self, key)


def test_raw_lines_split_a_piece_at_a_time_and_each_piece_once() -> None:
    """What RawLines is for, not only what it reads: iterating splits one piece at a time (no slice much longer than
    RAW_PIECE_CHARS), reading every line by index splits each piece once (the piece held is reused), a line of the
    second piece read first is right, and an index out of range raises IndexError with its own message."""
    text = "".join(f"line {i}\n" for i in range(3000))
    ref = text.splitlines()
    old = T.RAW_PIECE_CHARS
    T.RAW_PIECE_CHARS = 1000
    try:
        got, fresh = T.RawLines(text), T.RawLines(text)
    finally:
        T.RAW_PIECE_CHARS = old
    spy = _Slices(text)
    spy.sizes = []
    got.text = fresh.text = spy
    assert list(got) == ref
    pieces = list(spy.sizes)
    assert len(pieces) > 10 and max(pieces) <= 1000 + len(ref[-1]) + 1 and sum(pieces) == len(text)
    spy.sizes.clear()
    assert [got[i] for i in range(len(ref))] == ref
    assert spy.sizes == pieces
    second = text[: pieces[0]].count("\n")  # the first line of the second piece
    assert fresh[second] == ref[second] and fresh[second - 1] == ref[second - 1]
    for bad in (len(ref), -len(ref) - 1):
        with pytest.raises(IndexError, match="^line index out of range$"):
            got[bad]


def test_raw_lines_of_splits_lazily_only_plain_long_texts(monkeypatch: pytest.MonkeyPatch) -> None:
    """A text of at least LAZY_LINES_CHARS characters whose only line break is \\n is read a piece at a time; a
    shorter one, a non-ASCII one and one with another line break splitlines knows (\\r, \\v, \\f, \\x1c-\\x1e) is the
    list (both are ``splitlines()``)."""
    monkeypatch.setattr(T, "LAZY_LINES_CHARS", 10)
    plain = "a\nbb\n\nccc\n"
    assert isinstance(T.raw_lines_of(plain), T.RawLines)
    assert isinstance(T.raw_lines_of(plain[:9]), list)
    for odd in ("\r\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\u2028", "\x85", "é"):
        text = plain + odd + "d"
        got = T.raw_lines_of(text)
        assert isinstance(got, list) and got == text.splitlines()


def _stages(*bundles: Bundle) -> list[tuple[str, str, str | None]]:
    out = []
    for b in bundles:
        for v in list(b.variants.values())[:2]:
            for stage in ("ttir", "ttgir", "llir", "ptx", "sass"):
                if v.text(stage):
                    out.append((stage, v.text(stage), v.kernel))
    return out


def _generated(stage: str, mb: float) -> tuple[str, str]:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import bench_align_large as gen
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    a = gen.STAGES[stage][0](mb)
    return a, gen.edit(a, seed=3, stage=stage)


@pytest.mark.parametrize("piece", [1, 97, 4096])
def test_lazy_lines_give_the_same_stage_on_real_stages(
    matmul_sm86: Bundle, matmul_sm90: Bundle, piece: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every stage of real sm86/sm90 compiles (two variants each), split into pieces of one line, 97 characters
    (many lines cut at every position of a piece) and 4096: the same stage as from the list, symbols included."""
    seen = 0
    for stage, text, kernel in _stages(matmul_sm86, matmul_sm90):
        monkeypatch.setattr(T, "LAZY_LINES_CHARS", 1 << 40)
        ref = normalize(stage, text, kernel)
        monkeypatch.setattr(T, "LAZY_LINES_CHARS", 0)
        monkeypatch.setattr(T, "RAW_PIECE_CHARS", piece)
        assert isinstance(T.raw_lines_of(text), T.RawLines)
        assert _fields(normalize(stage, text, kernel)) == _fields(ref)
        assert not ref.fallback and sum(map(len, ref.symbols)) > 50
        seen += 1
    assert seen == 20


@pytest.mark.parametrize("stage", ["ptx", "ttgir", "llir", "sass"])
def test_lazy_lines_give_the_same_stage_on_generated_functions(stage: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fully unrolled function of each dialect (the benchmark's generator, 0.3 MB, and its edited copy) in pieces
    of 8 KB: symbols first seen in a later piece, a function and its blocks or regions across every piece, TTGIR's
    ``#loc`` definitions and LLIR's metadata after the function; the same stage as from the list (also when the
    per-line symbols are recomputed, past RECOMPUTE_LINES)."""
    for text in _generated(stage, 0.3):
        monkeypatch.setattr(T, "LAZY_LINES_CHARS", 1 << 40)
        ref = normalize(stage, text, "big_kernel")
        monkeypatch.setattr(T, "LAZY_LINES_CHARS", 0)
        monkeypatch.setattr(T, "RAW_PIECE_CHARS", 8192)
        raw = T.raw_lines_of(text)
        assert isinstance(raw, T.RawLines) and len(raw._starts) > 30  # noqa: SLF001 (many pieces)
        assert _fields(normalize(stage, text, "big_kernel")) == _fields(ref)
        monkeypatch.setattr(N, "RECOMPUTE_LINES", 100)
        assert _fields(normalize(stage, text, "big_kernel")) == _fields(ref)
        monkeypatch.setattr(N, "RECOMPUTE_LINES", 100_000)


def test_bulk_builder_keeps_no_chunks_past_per_line_after() -> None:
    """Past ``per_line_after`` lines the pre-rename chunks go (reading the per-line symbols then raises); up to it
    they are kept and the symbols read as without the limit. Lines and shapes are the same either way."""

    def fill(out: BulkBuilder, n: int) -> NormalizedStage:
        out.use(MLIR_SYMBOLS)
        for i in range(n):
            out.add_text(f"%x_{i} = arith.addi %x_{max(i - 1, 0)}, %c : i32", i + 1)
        return out.build()

    n = 3 * 4096 + 5  # several of the builder's chunks
    ref = fill(BulkBuilder("ttgir", ""), n)
    dropped = fill(BulkBuilder("ttgir", "", per_line_after=n - 1), n)
    kept = fill(BulkBuilder("ttgir", "", per_line_after=n), n)
    assert (dropped.lines, dropped.shapes) == (kept.lines, kept.shapes) == (ref.lines, ref.shapes)
    assert list(kept.symbols) == list(ref.symbols) and list(kept.symbol_spans) == list(ref.symbol_spans)
    with pytest.raises(RuntimeError, match="^per-line symbols not kept past per_line_after lines$"):
        list(dropped.symbols)


def test_no_reference_cycle_keeps_the_renaming_tables(matmul_sm86: Bundle, monkeypatch: pytest.MonkeyPatch) -> None:
    """Once normalize returns, its builder and tables are freed by reference counting (a cycle through the
    builder's name table or LLIR's walk held 20-57 MB per 10 MB side until the next full garbage collection):
    with the collector off, nothing of theirs is left for it, for every stage of a real compile, kept or
    recomputed per-line symbols."""
    v = next(iter(matmul_sm86.variants.values()))
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for recompute in (10**9, 10):
            monkeypatch.setattr(N, "RECOMPUTE_LINES", recompute)
            for stage in ("ttir", "ttgir", "llir", "ptx", "sass"):
                got = normalize(stage, v.text(stage), v.kernel)
                assert sum(map(len, got.symbols)) > 50
                del got
                gc.collect()
                left = {type(o).__name__ for o in gc.garbage}
                gc.garbage.clear()
                assert not left & {"BulkBuilder", "_Missing", "Renamer", "_LlirWalk", "_SassWalk"}, (stage, left)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was:
            gc.enable()


def test_pack_and_unpack_give_back_every_field() -> None:
    """What a forked normalizer sends: lines, shapes, side columns and region labels come back as they were, also
    when one holds a line break (then that list travels as it is), raw line numbers past 2**31, regions of every
    flag; equal shapes and columns come back as one string each (as the normalizers pool them)."""
    regions = [Region(0, 3, "tt.func @KERNEL", "tt.func @KERNEL", True, True), Region(1, 2, "block", "L1", False)]
    cases = [
        (["a %0", "b", "", "a %0"], ["a %_", "b", "", "a %_"], ["--:-:-:-:1", "", "--:-:-:-:1", "x"], regions),
        (["a\nb", "c"], ["x", "x"], None, [Region(0, 1, "block", "two\nlines", False)]),
        ([], [], [], []),
        ([""], [""], None, regions[:1]),
    ]
    for lines, shapes, columns, regs in cases:
        stage = NormalizedStage("sass", list(lines), list(shapes), [1, 2**40, 3, 4][: len(lines)],
                                None if columns is None else list(columns)[: len(lines)], "raw", regions=list(regs))  # fmt: skip
        wire = pickle.loads(pickle.dumps(pack(lambda s=stage: s)))
        got = unpack(wire)
        assert got is not None
        assert got == {"stage": "sass", "lines": lines, "shapes": shapes, "raw_line": [1, 2**40, 3, 4][: len(lines)],
                       "columns": None if columns is None else columns[: len(lines)], "regions": regs,
                       "fallback": False}  # fmt: skip
        if len(lines) == 4:
            assert got["shapes"][0] is got["shapes"][3] and got["columns"][0] is got["columns"][2]
    assert unpack(("too", "short")) is None and unpack(None) is None
