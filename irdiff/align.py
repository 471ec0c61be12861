"""Alignment of two normalized stages: functions, then loops/regions, then lines; intra-line changed tokens.

The algorithm (all inputs are :class:`irdiff.normalize.NormalizedStage`):

1. **Functions and regions.** The anchored regions of each side (functions; MLIR ``scf.for``/``scf.if``/... bodies)
   form a tree. Children of two matched nodes are matched by kind (``tt.func @KERNEL``, ``scf.for``) with a
   longest-common-subsequence; matched children are aligned recursively, so a loop body is only ever compared with
   a loop body.
2. **Lines.** Between matched regions, lines are aligned on their *shape* (renamed symbols erased) by the line
   matcher; inside each unmatched run, lines whose shapes agree up to numbers (``[1, 8]`` vs ``[1, 1]``) are paired
   as replacements, and of the leftovers, as many deleted as inserted lines pair position by position when alike
   (one a prefix of the other, e.g. an argument that gained ``{tt.divisibility = 16 : i32}``, or similar); the rest
   are deletions/insertions.
3. **Symbols** (:class:`_Binder`). Walking the alignment in order, aligned lines are *equal* only if their erased
   symbols correspond one-to-one (``%a_ptrs.3`` on the left always pairs with the same name on the right); a line
   whose operands come from different values is a replacement even if its shape matches. A replacement binds the
   values it defines; a value defined on a deleted line binds later only to one defined on an inserted line of the
   same shape and operands (the same definition printed elsewhere).
4. **Joint names.** Both sides are renumbered *together* (:func:`irdiff.normalize.rename`), by first appearance in
   the alignment and per name prefix (``%a_ptrs.``, LLIR's ``%``, PTX's ``%rd``): corresponding symbols get one name,
   a symbol of one side only a number of its own. So an unchanged line reads the same on both sides, a context line
   and a ``+`` line never show two different values under one name (LLVM's ``%12`` shifts on one side only), and a
   line that differs only in what an operand refers to shows two distinct names. :attr:`StageDiff.a`/``.b`` and the
   texts of :class:`DiffLine` carry these names. A second pass over each run of changes then matches lines that
   are deleted and inserted with the same text (equal, not a ``-``/``+`` pair).
5. **Intra-line spans.** Replacements get token-level spans of what changed (``[1, 8]`` → ``[1, 1]`` marks the
   ``8`` and the ``1``, not the whole line); symbols that correspond are spelled alike and do not count as changed.

The result is computed in a canonical orientation (the lexicographically smaller side first) and mirrored when
needed, so ``diff_stage(a, b)`` and ``diff_stage(b, a)`` are exact mirror images (swapping ``--variant`` and
``--against`` swaps the columns and nothing else).

Line matcher: ``rapidfuzz.distance.Indel`` (C++ longest common subsequence), chosen by measurement on the largest
stage pair (LLIR, sm90, matmul: about 100 ms for normalization + alignment + joint renaming against about 1050 ms
with stdlib :class:`difflib.SequenceMatcher`; ``benchmarks/bench_align.py``). ``engine="difflib"`` selects the
stdlib matcher, which is also the fallback when rapidfuzz is not installed.

Bounded cost: an exact line match costs memory proportional to the product of the two lengths. A stage pair above
:data:`EXACT_CELLS` (a huge function) is aligned by a patience diff on the normalized lines instead, in linear
memory and time (:func:`_linear_rows`, :func:`_blocks_patience`: no symbol correspondence or intra-line spans), and
:attr:`StageDiff.notes` says so (``benchmarks/bench_align_large.py``). Any single match above the bound inside the
exact algorithm is split the same way.

Size: over 800 lines because the five steps above share one set of row/block helpers and the bounded-cost fallback
reuses them; splitting them would scatter one algorithm.
"""

from __future__ import annotations

import bisect
import difflib
import importlib.util
import operator
import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, compress, islice
from typing import Literal, overload

from irdiff.normalize import NormalizedStage, normalize_pair, rename

__all__ = ["DEFAULT_ENGINE", "ENGINES", "Tag", "Span", "DiffLine", "Hunk", "StageDiff", "diff_stage", "diff_texts"]

Tag = Literal["equal", "delete", "insert", "replace"]


@dataclass
class Span:
    """Character range ``[start, end)`` of a changed token run within a line."""

    start: int
    end: int


@dataclass(slots=True)
class DiffLine:
    """One row of the alignment. ``a``/``b`` index into ``NormalizedStage.lines`` (None on the missing side)."""

    tag: Tag
    a: int | None
    b: int | None
    a_text: str | None
    b_text: str | None
    a_spans: list[Span] = field(default_factory=list)
    b_spans: list[Span] = field(default_factory=list)


@dataclass
class Hunk:
    """A run of changes with context. Indices are 0-based into the normalized lines; for a side with no lines in
    the hunk, ``*_start`` is the position where the other side's lines would go."""

    header: str
    a_start: int
    a_len: int
    b_start: int
    b_len: int
    lines: list[DiffLine]


@dataclass
class StageDiff:
    """The diff of one stage. ``a`` = left = ``-`` = the ``--variant``; ``b`` = right = ``+`` = the ``--against``.

    :ivar a: the ``a`` stage as aligned: :func:`irdiff.normalize.normalize`'s output with its symbols renamed
        jointly with ``b`` (corresponding values share a name); shapes, raw lines and regions unchanged.
    :ivar added: lines only in b (inserted + replaced b lines).
    :ivar removed: lines only in a (deleted + replaced a lines).
    :ivar lines: the whole alignment (every line of both sides), for full side-by-side views.
    :ivar notes: how the alignment was made when not the usual way (a function too large for the exact
        alignment: :data:`EXACT_CELLS`), for the stage's header.
    """

    stage: str
    a: NormalizedStage
    b: NormalizedStage
    hunks: list[Hunk]
    added: int
    removed: int
    lines: list[DiffLine] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        """True when no line differs after normalization."""
        return self.added == 0 and self.removed == 0


def diff_texts(
    stage: str,
    a_text: str,
    b_text: str,
    *,
    kernel_a: str | None = None,
    kernel_b: str | None = None,
    raw: bool = False,
    context: int = 3,
    engine: str | None = None,
) -> StageDiff:
    """Normalize two stage texts (``kernel_a``/``kernel_b`` replaced by ``KERNEL``) and diff them
    (see :func:`diff_stage`)."""
    na, nb = normalize_pair(stage, a_text, b_text, kernel_a, kernel_b, raw=raw)
    return diff_stage(na, nb, context=context, engine=engine)


def diff_stage(a: NormalizedStage, b: NormalizedStage, context: int = 3, *, engine: str | None = None) -> StageDiff:
    """Align two normalized stages and group the changes into hunks with ``context`` lines around them.

    The returned :attr:`StageDiff.a`/``.b`` are copies of ``a``/``b`` with their symbols renamed jointly (see the
    module docstring, step 4); row indices refer to both alike.

    :param engine: sequence matcher, a key of :data:`ENGINES` (``rapidfuzz``, ``difflib``); default
        :data:`DEFAULT_ENGINE`.
    :raises ValueError: if ``context`` is negative or ``engine`` unknown.
    """
    if context < 0:
        raise ValueError(f"context must be >= 0, got {context}")
    name = engine or DEFAULT_ENGINE
    if name not in ENGINES:
        raise ValueError(f"unknown diff engine {name!r} (have: {', '.join(ENGINES)})")
    match = _BoundedMatcher(ENGINES[name])
    if len(a.lines) * len(b.lines) > EXACT_CELLS:  # a huge function: linear memory and time, fewer refinements
        match.fallbacks, match.largest = 1, (len(a.lines), len(b.lines))
        return _linear_diff(a, b, match, context)
    diff_rows = _diff_rows
    if _orientation_key(a) <= _orientation_key(b):
        rows, a, b = diff_rows(a, b, match)
    else:
        rows_ba, b, a = diff_rows(b, a, match)
        rows = [_mirror(r) for r in rows_ba]
    added = sum(1 for r in rows if r.tag in ("insert", "replace"))
    removed = sum(1 for r in rows if r.tag in ("delete", "replace"))
    hunks = _hunks(rows, a, b, context)
    note = match.note()
    return StageDiff(
        stage=a.stage, a=a, b=b, hunks=hunks, added=added, removed=removed, lines=rows, notes=[note] if note else []
    )


# ---------------------------------------------------------------------------------------------------------------
# alignment


def _orientation_key(s: NormalizedStage) -> tuple[list[str], list[str]]:
    return (s.shapes, s.lines)


def _mirror(r: DiffLine) -> DiffLine:
    tag: Tag = "insert" if r.tag == "delete" else "delete" if r.tag == "insert" else r.tag
    return DiffLine(tag, r.b, r.a, r.b_text, r.a_text, r.b_spans, r.a_spans)


@dataclass
class _Node:
    start: int
    end: int  # inclusive
    key: str
    children: list[_Node] = field(default_factory=list)


def _tree(s: NormalizedStage) -> _Node:
    root = _Node(0, len(s.lines) - 1, "")
    stack = [root]
    for r in s.regions:
        if not r.anchor or r.start < 0 or r.end >= len(s.lines) or r.end < r.start:
            continue
        while len(stack) > 1 and not (stack[-1].start <= r.start and r.end <= stack[-1].end):
            stack.pop()
        parent = stack[-1]
        if parent.children and parent.children[-1].end >= r.start:
            continue  # overlapping siblings: ignore (malformed structure)
        node = _Node(r.start, r.end, r.kind)
        parent.children.append(node)
        stack.append(node)
    return root


Blocks = list[tuple[int, int, int]]


def _blocks_difflib(x: Sequence[str], y: Sequence[str]) -> Blocks:
    sm = difflib.SequenceMatcher(None, x, y, autojunk=False)
    return [(m.a, m.b, m.size) for m in sm.get_matching_blocks()]


def _blocks_rapidfuzz(x: Sequence[str], y: Sequence[str]) -> Blocks:
    from rapidfuzz.distance import Indel  # imported on first use: a cached comparison (warm run) aligns nothing

    blocks = [(m.a, m.b, m.size) for m in Indel.opcodes(x, y).as_matching_blocks()]
    if not blocks or blocks[-1] != (len(x), len(y), 0):
        blocks.append((len(x), len(y), 0))
    return blocks


# rapidfuzz: C++ longest-common-subsequence (Indel distance); measured 20-60x faster than difflib here. Found, not
# imported (~20 ms); difflib keeps irdiff usable without it.
ENGINES: dict[str, Callable[[Sequence[str], Sequence[str]], Blocks]] = {"difflib": _blocks_difflib}
if importlib.util.find_spec("rapidfuzz") is not None:
    ENGINES = {"rapidfuzz": _blocks_rapidfuzz, **ENGINES}
DEFAULT_ENGINE = next(iter(ENGINES))

Matcher = Callable[[Sequence[str], Sequence[str]], Blocks]

# Size bound of one exact match (lines × lines). The engines' longest-common-subsequence keeps a matrix of that many
# bits (rapidfuzz) or worse (difflib), so memory grows with the square of the largest function: 4e8 cells is about
# 50 MB and 0.2 s. Larger runs are split by a patience diff (:func:`_blocks_patience`, linear memory) first.
EXACT_CELLS = 400_000_000


def _blocks_patience(x: Sequence[str], y: Sequence[str], exact: Matcher, cells: int = EXACT_CELLS) -> Blocks:
    """Matching blocks in linear memory (Bram Cohen's patience diff, as ``git diff --patience``): common prefix and
    suffix are matched; lines occurring exactly once on each side are anchors, of which the longest increasing
    run (patience sorting, O(n log n)) is kept; the gaps between anchors are split the same way until each is
    small enough (``len × len ≤ cells``) for the ``exact`` matcher. A gap with no unique line that is still too
    large stays unmatched (deleted and inserted)."""
    out: Blocks = []
    stack = [(0, len(x), 0, len(y))]
    while stack:
        a0, a1, b0, b1 = stack.pop()
        while a0 < a1 and b0 < b1 and x[a0] == y[b0]:  # common prefix
            out.append((a0, b0, 1))
            a0, b0 = a0 + 1, b0 + 1
        n = 0
        while a1 - n > a0 and b1 - n > b0 and x[a1 - n - 1] == y[b1 - n - 1]:  # common suffix
            n += 1
        if n:
            out.append((a1 - n, b1 - n, n))
            a1, b1 = a1 - n, b1 - n
        if a0 >= a1 or b0 >= b1:
            continue
        if (a1 - a0) * (b1 - b0) <= cells:
            out.extend((a0 + i, b0 + j, k) for i, j, k in exact(x[a0:a1], y[b0:b1]) if k)
            continue
        # lines occurring once on each side (counted, selected and looked up in C: this runs on 10^5-10^6 lines)
        xs, ys = x[a0:a1], y[b0:b1]
        count_b = Counter(ys)
        once = {k for k, v in Counter(xs).items() if v == 1 and count_b.get(k) == 1}
        where_a = dict(zip(xs, range(a0, a1)))
        sel = list(map(once.__contains__, ys))
        cand_j = list(compress(range(b0, b1), sel))  # the anchors in y's order, then where each is in x
        cand_i = list(map(where_a.__getitem__, compress(ys, sel)))
        del xs, ys, count_b, where_a, sel
        if not cand_j:
            continue  # nothing to anchor on and too large to match exactly: left unmatched
        if all(map(operator.lt, cand_i, islice(cand_i, 1, None))):
            lis = list(zip(cand_i, cand_j))  # no line moved: every anchor is in the longest increasing run (usual)
        else:
            lis = _longest_increasing(sorted(zip(cand_i, cand_j)))
        ca, cb = a0, b0
        for i, j in lis:
            if i - ca == j - cb and x[ca:i] == y[cb:j]:  # an equal gap: what its prefix pass would match
                out.append((ca, cb, i + 1 - ca))
            else:
                stack.append((ca, i, cb, j))
                out.append((i, j, 1))
            ca, cb = i + 1, j + 1
        stack.append((ca, a1, cb, b1))
    out.sort()
    merged: Blocks = []
    for i, j, k in out:
        if merged and merged[-1][0] + merged[-1][2] == i and merged[-1][1] + merged[-1][2] == j:
            merged[-1] = (merged[-1][0], merged[-1][1], merged[-1][2] + k)
        else:
            merged.append((i, j, k))
    merged.append((len(x), len(y), 0))
    return merged


def _longest_increasing(cand: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest run of ``cand`` (sorted by its first item) increasing in its second item (patience sorting)."""
    tails: list[int] = []  # patience piles: last j of an increasing run of each length
    tail_idx: list[int] = []
    prev = [-1] * len(cand)
    for k, (_, j) in enumerate(cand):
        p = bisect.bisect_left(tails, j)
        if p == len(tails):
            tails.append(j)
            tail_idx.append(k)
        else:
            tails[p] = j
            tail_idx[p] = k
        prev[k] = tail_idx[p - 1] if p else -1
    lis: list[tuple[int, int]] = []
    k = tail_idx[-1]
    while k >= 0:
        lis.append(cand[k])
        k = prev[k]
    lis.reverse()
    return lis


def _linear_diff(a: NormalizedStage, b: NormalizedStage, match: _BoundedMatcher, context: int) -> StageDiff:
    """The diff of stages too large for the exact alignment: a patience diff of the normalized lines' shapes
    (symbols erased; :func:`_blocks_patience`, gaps matched exactly where small enough), as ``git diff --patience``
    would on the shapes; no region tree, symbol correspondence, joint renaming or intra-line spans: each side keeps
    its own numbering, and lines of the same shape are shown as context even where their operands differ. The rows
    (:class:`_LinearRows`) are made when read: only the hunks' rows are built."""
    mirrored = not _orientation_key(a) <= _orientation_key(b)  # align in the same orientation as the exact path
    x, y = (b, a) if mirrored else (a, b)
    segs: list[tuple[Tag, int, int, int]] = []  # (tag, a lines before, b lines before, rows): the rows in order
    changed: list[int] = []
    # the exact path's order of a gap's rows: x's unmatched lines (deleted), then y's (inserted), mirrored when x is b
    order: tuple[Tag, Tag] = ("insert", "delete") if mirrored else ("delete", "insert")
    row = pa = pb = 0  # rows so far, and the a and b lines in them
    for i, j, n in _blocks_patience(x.shapes, y.shapes, match.exact):
        ai, bi = (j, i) if mirrored else (i, j)  # where the matched run starts in a and in b
        for tag in order:
            count = ai - pa if tag == "delete" else bi - pb
            if count > 0:
                segs.append((tag, pa, pb, count))
                changed.extend(range(row, row + count))
                row += count
                if tag == "delete":
                    pa += count
                else:
                    pb += count
        if n:
            segs.append(("equal", pa, pb, n))
            row, pa, pb = row + n, pa + n, pb + n
    rows = _LinearRows(segs, a.lines, b.lines)
    removed = sum(n for tag, _, _, n in segs if tag == "delete")
    added = sum(n for tag, _, _, n in segs if tag == "insert")
    hunks = _group_hunks(rows, changed, rows.a_before, rows.b_before, a, b, context)
    note = match.note()
    return StageDiff(a.stage, a, b, hunks, added, removed, lines=rows, notes=[note] if note else [])  # type: ignore[arg-type]


class _LinearRows(Sequence[DiffLine]):
    """The rows of a huge stage's alignment, made when read from runs ``(tag, a0, b0, n)``: ``n`` rows of one tag
    whose first row has ``a0`` a lines and ``b0`` b lines before it. Compares equal to the list of its rows."""

    __hash__ = None  # type: ignore[assignment]

    def __init__(self, segs: list[tuple[Tag, int, int, int]], la: list[str], lb: list[str]) -> None:
        self.segs = segs
        self.starts = list(accumulate((n for _, _, _, n in segs), initial=0))
        self.la, self.lb = la, lb

    def __len__(self) -> int:
        return self.starts[-1]

    def _row(self, k: int) -> DiffLine:
        s = bisect.bisect_right(self.starts, k) - 1
        tag, a0, b0, _ = self.segs[s]
        off = k - self.starts[s]
        if tag == "equal":
            return DiffLine(tag, a0 + off, b0 + off, self.la[a0 + off], self.lb[b0 + off])
        if tag == "delete":
            return DiffLine(tag, a0 + off, None, self.la[a0 + off], None)
        return DiffLine(tag, None, b0 + off, None, self.lb[b0 + off])

    def a_before(self, k: int) -> int:
        """The number of a lines in rows ``0..k-1``."""
        if k >= len(self):
            return len(self.la)
        s = bisect.bisect_right(self.starts, k) - 1
        tag, a0, _, _ = self.segs[s]
        return a0 + (k - self.starts[s] if tag != "insert" else 0)

    def b_before(self, k: int) -> int:
        """The number of b lines in rows ``0..k-1``."""
        if k >= len(self):
            return len(self.lb)
        s = bisect.bisect_right(self.starts, k) - 1
        tag, _, b0, _ = self.segs[s]
        return b0 + (k - self.starts[s] if tag != "delete" else 0)

    @overload
    def __getitem__(self, k: int) -> DiffLine: ...
    @overload
    def __getitem__(self, k: slice) -> list[DiffLine]: ...
    def __getitem__(self, k: int | slice) -> DiffLine | list[DiffLine]:
        if isinstance(k, slice):
            return [self._row(i) for i in range(*k.indices(len(self)))]
        if k < 0:
            k += len(self)
        if not 0 <= k < len(self):
            raise IndexError(k)
        return self._row(k)

    def __iter__(self) -> Iterator[DiffLine]:
        for k in range(len(self)):
            yield self._row(k)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _LinearRows | list):
            return len(self) == len(other) and list(self) == list(other)
        return NotImplemented


class _BoundedMatcher:
    """An engine whose inputs above :data:`EXACT_CELLS` go through :func:`_blocks_patience`; remembers the
    largest such input for the stage's note."""

    def __init__(self, exact: Matcher, cells: int = EXACT_CELLS) -> None:
        self.exact = exact
        self.cells = cells
        self.fallbacks = 0
        self.largest = (0, 0)

    def __call__(self, x: Sequence[str], y: Sequence[str]) -> Blocks:
        if len(x) * len(y) <= self.cells:
            return self.exact(x, y)
        self.fallbacks += 1
        if len(x) * len(y) > self.largest[0] * self.largest[1]:
            self.largest = (len(x), len(y))
        return _blocks_patience(x, y, self.exact, self.cells)

    def note(self) -> str | None:
        if not self.fallbacks:
            return None
        return (
            f"large function ({self.largest[0]:,} × {self.largest[1]:,} lines): aligned by patience diff on the "
            f"normalized lines (linear memory) instead of the exact alignment; lines that differ only in symbol "
            f"names count as equal, and changed lines show as - and + rather than paired"
        )


def _matching_blocks(match: Matcher, x: Sequence[str], y: Sequence[str]) -> Blocks:
    """Matching blocks ``(i, j, n)`` of two sequences, increasing, ending with ``(len(x), len(y), 0)``."""
    if not x or not y:
        return [(len(x), len(y), 0)]
    return match(x, y)


_DIGITS = re.compile(r"\d+")


def _coarse(shape: str) -> str:
    return _DIGITS.sub("0", shape)


def _align(a: NormalizedStage, b: NormalizedStage, match: Matcher) -> list[tuple[int | None, int | None]]:
    out: list[tuple[int | None, int | None]] = []
    if not a.lines and not b.lines:
        return out
    _align_node(a, b, _tree(a), _tree(b), out, match)
    return out


def _align_node(
    a: NormalizedStage,
    b: NormalizedStage,
    na: _Node,
    nb: _Node,
    out: list[tuple[int | None, int | None]],
    match: Matcher,
) -> None:
    pairs: list[tuple[_Node, _Node]] = []
    if na.children and nb.children:
        for i, j, n in _matching_blocks(match, [c.key for c in na.children], [c.key for c in nb.children]):
            pairs.extend((na.children[i + k], nb.children[j + k]) for k in range(n))
    ca, cb = na.start, nb.start
    for x, y in pairs:
        _align_lines(a, b, ca, x.start, cb, y.start, out, match)
        _align_node(a, b, x, y, out, match)
        ca, cb = x.end + 1, y.end + 1
    _align_lines(a, b, ca, na.end + 1, cb, nb.end + 1, out, match)


def _align_lines(
    a: NormalizedStage,
    b: NormalizedStage,
    a0: int,
    a1: int,
    b0: int,
    b1: int,
    out: list[tuple[int | None, int | None]],
    match: Matcher,
) -> None:
    """Align lines ``a[a0:a1]`` with ``b[b0:b1]`` on shapes; pair leftovers on coarse shapes."""
    if a0 >= a1 and b0 >= b1:
        return
    ia, ib = a0, b0
    for i, j, n in _matching_blocks(match, a.shapes[a0:a1], b.shapes[b0:b1]):
        _pair_gap(a, b, ia, a0 + i, ib, b0 + j, out, match)
        out.extend((a0 + i + k, b0 + j + k) for k in range(n))
        ia, ib = a0 + i + n, b0 + j + n


def _pair_gap(
    a: NormalizedStage,
    b: NormalizedStage,
    a0: int,
    a1: int,
    b0: int,
    b1: int,
    out: list[tuple[int | None, int | None]],
    match: Matcher,
) -> None:
    if a0 >= a1:
        out.extend((None, j) for j in range(b0, b1))
        return
    if b0 >= b1:
        out.extend((i, None) for i in range(a0, a1))
        return
    ia, ib = a0, b0
    xa = [_coarse(s) for s in a.shapes[a0:a1]]
    xb = [_coarse(s) for s in b.shapes[b0:b1]]
    for i, j, n in _matching_blocks(match, xa, xb):
        _pair_similar(a, b, ia, a0 + i, ib, b0 + j, out, match)
        out.extend((a0 + i + k, b0 + j + k) for k in range(n))
        ia, ib = a0 + i + n, b0 + j + n


_SIMILAR = 0.5  # similarity (2 * matched / total characters of the two shapes) from which k:k leftovers pair
_SIMILAR_MAX = 256  # leftover runs longer than this are not paired (cost)


def _pair_similar(
    a: NormalizedStage,
    b: NormalizedStage,
    a0: int,
    a1: int,
    b0: int,
    b1: int,
    out: list[tuple[int | None, int | None]],
    match: Matcher,
) -> None:
    """Leftovers of a gap: as many deleted as inserted lines pair position by position when the two lines are
    alike (one a prefix of the other, e.g. an argument that gained ``{tt.divisibility = 16 : i32}``, or similarity
    at least :data:`_SIMILAR`), so the change is shown within the line; the rest are deletions, then insertions."""
    n = a1 - a0
    if n > 0 and n == b1 - b0 and n <= _SIMILAR_MAX:
        for k in range(n):
            if _alike(a.shapes[a0 + k], b.shapes[b0 + k], match):
                out.append((a0 + k, b0 + k))
            else:
                out.append((a0 + k, None))
                out.append((None, b0 + k))
        return
    out.extend((k, None) for k in range(a0, a1))
    out.extend((None, k) for k in range(b0, b1))


_BARE_NAME = re.compile(r"[A-Za-z_]\w*")


def _alike(x: str, y: str, match: Matcher) -> bool:
    """Whether two changed lines are similar enough to show as one replaced line. Symmetric: ``_alike(x, y) ==
    _alike(y, x)`` for every pair, equal lengths included (each test is tried with either line as the shorter one,
    and the matched characters are counted in both directions, since a matcher's blocks may depend on the order)."""
    x, y = x.strip(), y.strip()
    if not x or not y:
        return False
    orders = [(x, y), (y, x)] if len(x) == len(y) else [(x, y) if len(x) < len(y) else (y, x)]
    for short, long in orders:
        if len(short) >= 3 and long.startswith(short):
            return True
        # A bare name that gained (or lost) an annotation or default: ``M,`` vs ``M: int,`` (Python parameters).
        core = short.rstrip(",;)")
        if _BARE_NAME.fullmatch(core) and long.startswith(core) and long[len(core) : len(core) + 1] in (":", "=", " "):
            return True
    same = max(sum(n for _, _, n in _matching_blocks(match, x, y)), sum(n for _, _, n in _matching_blocks(match, y, x)))
    return 2 * same >= _SIMILAR * (len(x) + len(y))


# ---------------------------------------------------------------------------------------------------------------
# symbol correspondence, joint names and tags


def _diff_rows(
    a: NormalizedStage, b: NormalizedStage, match: Matcher
) -> tuple[list[DiffLine], NormalizedStage, NormalizedStage]:
    """Rows of the alignment, and both stages renamed so that corresponding symbols share one name."""
    pairs = _align(a, b, match)
    sym_a = a.symbols if len(a.symbols) == len(a.lines) else [() for _ in a.lines]
    sym_b = b.symbols if len(b.symbols) == len(b.lines) else [() for _ in b.lines]
    bd = _Binder(a, b, sym_a, sym_b)
    tags: list[Tag] = []
    for i, j in pairs:
        if i is None:
            assert j is not None
            bd.unmatched(1, j)
            tags.append("insert")
        elif j is None:
            bd.unmatched(0, i)
            tags.append("delete")
        elif a.shapes[i] == b.shapes[j] and bd.bind(sym_a[i], sym_b[j]):
            tags.append("equal")
        else:
            bd.replaced(i, j)
            tags.append("replace")
    map_a, map_b = bd.map_a, bd.map_b
    na, nb = _joint_names(pairs, sym_a, sym_b, map_a, map_b)
    ra, rb = rename(a, na), rename(b, nb)
    entries = _rematch(list(zip(pairs, tags, strict=True)), ra, rb, match)
    rows: list[DiffLine] = []
    for (i, j), tag in entries:
        ta = ra.lines[i] if i is not None else None
        tb = rb.lines[j] if j is not None else None
        if tag == "replace" and ta == tb:
            tag = "equal"  # same text under the joint names: nothing to show (cannot happen when shapes differ)
        if tag == "replace":
            assert ta is not None and tb is not None
            a_spans, b_spans = _spans(ta, tb, match)
            rows.append(DiffLine(tag, i, j, ta, tb, a_spans, b_spans))
        else:
            rows.append(DiffLine(tag, i, j, ta, tb))
    return rows, ra, rb


_Entry = tuple[tuple[int | None, int | None], Tag]


def _rematch(entries: list[_Entry], a: NormalizedStage, b: NormalizedStage, match: Matcher) -> list[_Entry]:
    """Second pass over each run of changed rows, on the jointly renamed lines: a line deleted on one side and
    inserted on the other with the same text (a value whose operands became known to correspond only further
    down, or a line the shape alignment placed elsewhere in the run) is equal, not a ``-``/``+`` pair."""
    out: list[_Entry] = []
    k = 0
    while k < len(entries):
        if entries[k][1] == "equal":
            out.append(entries[k])
            k += 1
            continue
        m = k
        while m < len(entries) and entries[m][1] != "equal":
            m += 1
        out.extend(_rematch_run(entries[k:m], a, b, match))
        k = m
    return out


def _rematch_run(run: list[_Entry], a: NormalizedStage, b: NormalizedStage, match: Matcher) -> list[_Entry]:
    ia = [i for (i, _), _ in run if i is not None]
    jb = [j for (_, j), _ in run if j is not None]
    if not ia or not jb:
        return run
    ka = [a.lines[i] + "\x00" + a.shapes[i] for i in ia]
    kb = [b.lines[j] + "\x00" + b.shapes[j] for j in jb]
    if set(ka).isdisjoint(kb):
        return run
    blocks = _matching_blocks(match, ka, kb)
    # segment of every unmatched line: the gap before matching block number s
    seg_a: dict[int, int] = {}
    seg_b: dict[int, int] = {}
    pa = pb = 0
    for s, (x, y, n) in enumerate(blocks):
        seg_a.update((ia[q], s) for q in range(pa, x))
        seg_b.update((jb[q], s) for q in range(pb, y))
        pa, pb = x + n, y + n
    gaps: list[list[_Entry]] = [[] for _ in blocks]
    for (i, j), tag in run:
        si = seg_a.get(i) if i is not None else None
        sj = seg_b.get(j) if j is not None else None
        if tag == "replace" and si is not None and si == sj:
            gaps[si].append(((i, j), "replace"))
            continue
        if si is not None:
            gaps[si].append(((i, None), "delete"))
        if sj is not None:
            gaps[sj].append(((None, j), "insert"))
    out: list[_Entry] = []
    for s, (x, y, n) in enumerate(blocks):
        out.extend(gaps[s])
        out.extend(((ia[x + q], jb[y + q]), "equal") for q in range(n))
    return out


_PENDING = "\x00pending"


class _Binder:
    """Which symbol of ``a`` corresponds to which of ``b``, decided walking the alignment in order.

    * An *equal* line binds its symbols position by position, if that is consistent with the bindings so far
      (``%a_ptrs.3`` on the left always pairs with the same name on the right); otherwise the line is replaced.
    * A *replaced* line binds its still unbound symbols position by position when both lines have as many and the
      names do not contradict each other (``%c128_i32`` never pairs with ``%c96_i32``): the value it defines keeps
      one name, e.g. an argument that gained ``tt.divisibility``.
    * A symbol first seen on a deleted/inserted (or unbound on a replaced) line is *pending*: it binds later only
      to a pending symbol of the other side defined by a line of the same shape whose other symbols correspond,
      i.e. the same line moved (``%c128_i32 = arith.constant 128`` printed elsewhere); else it corresponds to
      nothing, and gets a name of its own.
    """

    def __init__(
        self,
        a: NormalizedStage,
        b: NormalizedStage,
        sym_a: Sequence[tuple[str, ...]],
        sym_b: Sequence[tuple[str, ...]],
    ) -> None:
        self.shapes = (a.shapes, b.shapes)
        self.syms = (sym_a, sym_b)
        self.map_a: dict[str, str] = {}
        self.map_b: dict[str, str] = {}
        self.origin: tuple[dict[str, int], dict[str, int]] = ({}, {})  # pending symbol → its first line

    def _maps(self, side: int) -> dict[str, str]:
        return self.map_a if side == 0 else self.map_b

    def unmatched(self, side: int, i: int) -> None:
        m, origin = self._maps(side), self.origin[side]
        for x in self.syms[side][i]:
            if x not in m:
                m[x] = _PENDING
                origin[x] = i

    def replaced(self, i: int, j: int) -> None:
        sa, sb = self.syms[0][i], self.syms[1][j]
        if len(sa) == len(sb):
            for x, y in zip(sa, sb, strict=True):
                if x not in self.map_a and y not in self.map_b and _compatible(x, y):
                    self.map_a[x] = y
                    self.map_b[y] = x
        self.unmatched(0, i)
        self.unmatched(1, j)

    def bind(self, sa: tuple[str, ...], sb: tuple[str, ...]) -> bool:
        """True (and new bindings committed) if the symbols correspond one-to-one with the bindings so far."""
        if len(sa) != len(sb):
            return False
        new_a: dict[str, str] = {}
        new_b: dict[str, str] = {}
        for x, y in zip(sa, sb, strict=True):
            bx = new_a.get(x) or self.map_a.get(x)
            by = new_b.get(y) or self.map_b.get(y)
            if bx == y and by == x:
                continue
            if (bx is None and by is None) or (bx == _PENDING and by == _PENDING and self._moved(x, y)):
                new_a[x] = y
                new_b[y] = x
                continue
            return False
        self.map_a.update(new_a)
        self.map_b.update(new_b)
        return True

    def _moved(self, x: str, y: str) -> bool:
        """Pending ``x`` and ``y`` were first seen at the same place of two lines of one shape whose other
        symbols correspond: the same definition, printed at another place."""
        i, j = self.origin[0][x], self.origin[1][y]
        if self.shapes[0][i] != self.shapes[1][j]:
            return False
        sa, sb = self.syms[0][i], self.syms[1][j]
        if len(sa) != len(sb):
            return False
        for p, q in zip(sa, sb, strict=True):
            if (p == x) != (q == y):
                return False
            if p != x and (self.map_a.get(p) != q or self.map_b.get(q) != p):
                return False
        return True


def _compatible(x: str, y: str) -> bool:
    """Two names may denote one value if they have one prefix, or one sigil and at most one stem: ``%c128_i32``
    and ``%c96_i32`` are different constants, ``%r`` and ``%rd`` different register classes, ``%5`` and ``!5`` a
    value and metadata; ``%5`` and ``%offs.3`` may be one value printed two ways."""
    px, py = _prefix(x), _prefix(y)
    return px == py or (px[:1] == py[:1] and (_is_plain(px) or _is_plain(py)))


_NUMBERED = re.compile(r"^(.*?)(\d+)$")


def _prefix(name: str) -> str:
    """``%a_ptrs.3`` → ``%a_ptrs.``, ``%12`` → ``%``, ``%rd7`` → ``%rd``, ``$L__BB2`` → ``$L__BB``."""
    m = _NUMBERED.match(name)
    return m.group(1) if m else name


def _joint_names(
    pairs: list[tuple[int | None, int | None]],
    sym_a: Sequence[tuple[str, ...]],
    sym_b: Sequence[tuple[str, ...]],
    map_a: dict[str, str],
    map_b: dict[str, str],
) -> tuple[dict[str, str], dict[str, str]]:
    """Renumber the symbols of both sides together, by first appearance in the alignment, one counter per name
    prefix (``%a_ptrs.``, ``%``, ``%rd``, ``$L__BB``): corresponding symbols get one name, a symbol of one side
    only gets a number of its own, so equal lines read the same and no two different values share a name.

    A corresponding pair whose prefixes differ takes the Python-derived stem over a bare number (``%offs.`` over
    ``%``), else the first side's (of the canonical orientation, so that swapping the sides mirrors the diff).
    """
    names_a: dict[str, str] = {}
    names_b: dict[str, str] = {}
    counters: dict[str, int] = {}

    def fresh(prefix: str, old: str) -> str:
        if _NUMBERED.match(old) is None:
            return old  # nothing to renumber
        n = counters.get(prefix, 0)
        counters[prefix] = n + 1
        return f"{prefix}{n}"

    def name_a(x: str) -> None:
        if x in names_a:
            return
        y = map_a.get(x)
        if y is not None and map_b.get(y) == x and y not in names_b:
            px, py = _prefix(x), _prefix(y)
            prefix = py if px != py and _is_plain(px) and not _is_plain(py) else px
            names_a[x] = names_b[y] = fresh(prefix, x if prefix == px else y)
        else:
            names_a[x] = fresh(_prefix(x), x)

    def name_b(y: str) -> None:
        if y in names_b:
            return
        x = map_b.get(y)
        if x is not None and map_a.get(x) == y and x not in names_a:
            name_a(x)
        else:
            names_b[y] = fresh(_prefix(y), y)

    for i, j in pairs:
        if i is not None:
            for x in sym_a[i]:
                name_a(x)
        if j is not None:
            for y in sym_b[j]:
                name_b(y)
    return names_a, names_b


def _is_plain(prefix: str) -> bool:
    """A numbered name without a stem (``%``, ``%arg``, ``%r``): a Python-derived stem reads better."""
    return len(prefix) <= 1 or prefix in ("%arg",)


# ---------------------------------------------------------------------------------------------------------------
# intra-line spans

_TOKEN = re.compile(r"[%#@$!]?[\w$.\-]+|\s+|.")


def _tokens(line: str) -> tuple[list[str], list[int]]:
    """Tokens of a line plus their start offsets (one extra: the line length). Symbols are whole tokens and,
    after joint renaming, corresponding symbols are spelled alike, so comparing the text compares the values."""
    toks = _TOKEN.findall(line)
    return toks, [0, *accumulate(map(len, toks))]


def _spans(la: str, lb: str, match: Matcher) -> tuple[list[Span], list[Span]]:
    ka, pa = _tokens(la)
    kb, pb = _tokens(lb)
    spans_a: list[Span] = []
    spans_b: list[Span] = []
    ia = ib = 0
    for i, j, n in _matching_blocks(match, ka, kb):
        _add_span(spans_a, ka, pa, ia, i)
        _add_span(spans_b, kb, pb, ib, j)
        ia, ib = i + n, j + n
    return spans_a, spans_b


def _add_span(spans: list[Span], keys: list[str], starts: list[int], lo: int, hi: int) -> None:
    """Add the span of tokens ``keys[lo:hi]`` (without blank tokens at either end), merging with the last span."""
    while lo < hi and keys[lo].isspace():
        lo += 1
    while hi > lo and keys[hi - 1].isspace():
        hi -= 1
    if lo >= hi:
        return
    start, end = starts[lo], starts[hi]
    if spans and spans[-1].end >= start:
        spans[-1].end = max(spans[-1].end, end)
    else:
        spans.append(Span(start, end))


# ---------------------------------------------------------------------------------------------------------------
# hunks


def _scopes(s: NormalizedStage) -> Callable[[int], str]:
    """Line index → its ``function > innermost region`` label ('' outside any)."""
    n = len(s.lines)
    func: list[str] = [""] * n
    inner: list[str] = [""] * n
    for r in s.regions:  # pre-order: inner regions overwrite outer ones
        lo, hi = max(0, r.start), min(n - 1, r.end)
        if hi >= lo:
            (func if r.function else inner)[lo : hi + 1] = [r.label] * (hi + 1 - lo)

    def scope(k: int) -> str:
        f, i = func[k], inner[k]
        return f"{f} > {i}" if f and i else f or i

    return scope


def _hunks(rows: list[DiffLine], a: NormalizedStage, b: NormalizedStage, context: int) -> list[Hunk]:
    changed = [k for k, r in enumerate(rows) if r.tag != "equal"]
    apos = list(accumulate((r.a is not None for r in rows), initial=0))  # a/b lines before each row
    bpos = list(accumulate((r.b is not None for r in rows), initial=0))
    return _group_hunks(rows, changed, apos.__getitem__, bpos.__getitem__, a, b, context)


def _group_hunks(
    rows: Sequence[DiffLine],
    changed: list[int],
    apos: Callable[[int], int],
    bpos: Callable[[int], int],
    a: NormalizedStage,
    b: NormalizedStage,
    context: int,
) -> list[Hunk]:
    """Hunks around the ``changed`` rows (increasing indices), ``context`` rows around each; ``apos(k)``/``bpos(k)``:
    the number of a/b lines in the rows before row ``k``."""
    if not changed:
        return []
    groups: list[tuple[int, int]] = []
    lo = hi = changed[0]
    for k in changed[1:]:
        if k - hi - 1 <= 2 * context:
            hi = k
        else:
            groups.append((lo, hi))
            lo = hi = k
    groups.append((lo, hi))
    scopes_a = _scopes(a)
    scopes_b = _scopes(b)
    hunks: list[Hunk] = []
    for lo, hi in groups:
        s, e = max(0, lo - context), min(len(rows) - 1, hi + context)
        body = list(rows[s : e + 1])
        first = rows[lo]
        if first.a is not None and first.a < len(a.lines):
            header = scopes_a(first.a)
        elif first.b is not None and first.b < len(b.lines):
            header = scopes_b(first.b)
        else:
            header = ""
        hunks.append(
            Hunk(
                header=header,
                a_start=apos(s),
                a_len=apos(e + 1) - apos(s),
                b_start=bpos(s),
                b_len=bpos(e + 1) - bpos(s),
                lines=body,
            )
        )
    return hunks
