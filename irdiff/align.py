"""Alignment of two normalized stages: functions, then loops/regions, then lines; intra-line changed tokens.

The algorithm (all inputs are :class:`irdiff.normalize.NormalizedStage`):

1. **Functions and regions.** The anchored regions of each side (functions; MLIR ``scf.for``/``scf.if``/... bodies)
   form a tree. Children of two matched nodes are matched by kind (``tt.func @KERNEL``, ``scf.for``) with a
   longest-common-subsequence; matched children are aligned recursively, so a loop body is only ever compared with
   a loop body.
2. **Lines.** Between matched regions, lines are aligned on their *shape* (renamed symbols erased) by the line
   matcher; inside each unmatched run, lines whose shapes agree up to numbers (``[1, 8]`` vs ``[1, 1]``) are paired
   as replacements, the rest are deletions/insertions.
3. **Symbols.** Walking the alignment in order, aligned lines are *equal* only if their erased symbols correspond
   one-to-one (``%a_ptrs.3`` on the left always pairs with the same name on the right); a line whose operands come
   from different values is a replacement even if its shape matches.
4. **Intra-line spans.** Replacements get token-level spans of what changed (``[1, 8]`` → ``[1, 1]`` marks the
   ``8`` and the ``1``, not the whole line); symbols that correspond do not count as changed.

The result is computed in a canonical orientation (the lexicographically smaller side first) and mirrored when
needed, so ``diff_stage(a, b)`` and ``diff_stage(b, a)`` are exact mirror images (swapping ``--variant`` and
``--against`` swaps the columns and nothing else).

Line matcher: ``rapidfuzz.distance.Indel`` (C++ longest common subsequence), chosen by measurement on the largest
stage pair (LLIR, sm90, matmul: 79 ms for normalization + alignment against 1154 ms with stdlib
:class:`difflib.SequenceMatcher`); see ``benchmarks/README.md``. ``engine="difflib"`` selects the stdlib matcher,
which is also the fallback when rapidfuzz is not installed.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Literal

from irdiff.normalize import NormalizedStage, normalize

__all__ = ["DEFAULT_ENGINE", "ENGINES", "Tag", "Span", "DiffLine", "Hunk", "StageDiff", "diff_stage", "diff_texts"]

Tag = Literal["equal", "delete", "insert", "replace"]


@dataclass
class Span:
    """Character range ``[start, end)`` of a changed token run within a line."""

    start: int
    end: int


@dataclass
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

    :ivar added: lines only in b (inserted + replaced b lines).
    :ivar removed: lines only in a (deleted + replaced a lines).
    :ivar lines: the whole alignment (every line of both sides), for full side-by-side views.
    """

    stage: str
    a: NormalizedStage
    b: NormalizedStage
    hunks: list[Hunk]
    added: int
    removed: int
    lines: list[DiffLine] = field(default_factory=list)

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
    na = normalize(stage, a_text, kernel_a, raw=raw)
    nb = normalize(stage, b_text, kernel_b, raw=raw)
    return diff_stage(na, nb, context=context, engine=engine)


def diff_stage(a: NormalizedStage, b: NormalizedStage, context: int = 3, *, engine: str | None = None) -> StageDiff:
    """Align two normalized stages and group the changes into hunks with ``context`` lines around them.

    :param engine: sequence matcher, a key of :data:`ENGINES` (``rapidfuzz``, ``difflib``); default
        :data:`DEFAULT_ENGINE`.
    :raises ValueError: if ``context`` is negative or ``engine`` unknown.
    """
    if context < 0:
        raise ValueError(f"context must be >= 0, got {context}")
    name = engine or DEFAULT_ENGINE
    if name not in ENGINES:
        raise ValueError(f"unknown diff engine {name!r} (have: {', '.join(ENGINES)})")
    match = ENGINES[name]
    if _orientation_key(a) <= _orientation_key(b):
        rows = _diff_rows(a, b, match)
    else:
        rows = [_mirror(r) for r in _diff_rows(b, a, match)]
    added = sum(1 for r in rows if r.tag in ("insert", "replace"))
    removed = sum(1 for r in rows if r.tag in ("delete", "replace"))
    hunks = _hunks(rows, a, b, context)
    return StageDiff(stage=a.stage, a=a, b=b, hunks=hunks, added=added, removed=removed, lines=rows)


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
    blocks = [(m.a, m.b, m.size) for m in _Indel.opcodes(x, y).as_matching_blocks()]
    if not blocks or blocks[-1] != (len(x), len(y), 0):
        blocks.append((len(x), len(y), 0))
    return blocks


try:  # rapidfuzz: C++ longest-common-subsequence (Indel distance); measured 20-60x faster than difflib here
    from rapidfuzz.distance import Indel as _Indel

    ENGINES: dict[str, Callable[[Sequence[str], Sequence[str]], Blocks]] = {
        "rapidfuzz": _blocks_rapidfuzz,
        "difflib": _blocks_difflib,
    }
    DEFAULT_ENGINE = "rapidfuzz"
except ImportError:  # pragma: no cover - rapidfuzz is a dependency; difflib keeps irdiff usable without it
    ENGINES = {"difflib": _blocks_difflib}
    DEFAULT_ENGINE = "difflib"

Matcher = Callable[[Sequence[str], Sequence[str]], Blocks]


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
        out.extend((k, None) for k in range(ia, a0 + i))
        out.extend((None, k) for k in range(ib, b0 + j))
        out.extend((a0 + i + k, b0 + j + k) for k in range(n))
        ia, ib = a0 + i + n, b0 + j + n


# ---------------------------------------------------------------------------------------------------------------
# symbol correspondence and tags

_DEAD = "\x00dead"


def _diff_rows(a: NormalizedStage, b: NormalizedStage, match: Matcher) -> list[DiffLine]:
    pairs = _align(a, b, match)
    sym_a = a.symbols if len(a.symbols) == len(a.lines) else [() for _ in a.lines]
    sym_b = b.symbols if len(b.symbols) == len(b.lines) else [() for _ in b.lines]
    map_a: dict[str, str] = {}
    map_b: dict[str, str] = {}
    rows: list[DiffLine] = []
    for i, j in pairs:
        if i is None:
            assert j is not None
            for y in sym_b[j]:
                map_b.setdefault(y, _DEAD)
            rows.append(DiffLine("insert", None, j, None, b.lines[j]))
            continue
        if j is None:
            for x in sym_a[i]:
                map_a.setdefault(x, _DEAD)
            rows.append(DiffLine("delete", i, None, a.lines[i], None))
            continue
        sa, sb = sym_a[i], sym_b[j]
        same = a.shapes[i] == b.shapes[j] and _bind(sa, sb, map_a, map_b)
        if same:
            rows.append(DiffLine("equal", i, j, a.lines[i], b.lines[j]))
            continue
        if len(sa) == len(sb):
            for x, y in zip(sa, sb, strict=True):
                if x not in map_a and y not in map_b:
                    map_a[x] = y
                    map_b[y] = x
        for x in sa:
            map_a.setdefault(x, _DEAD)
        for y in sb:
            map_b.setdefault(y, _DEAD)
        a_spans, b_spans = _spans(a.lines[i], b.lines[j], sa, sb, map_a, map_b, match)
        rows.append(DiffLine("replace", i, j, a.lines[i], b.lines[j], a_spans, b_spans))
    return rows


def _bind(sa: tuple[str, ...], sb: tuple[str, ...], map_a: dict[str, str], map_b: dict[str, str]) -> bool:
    """True (and new bindings committed) if the symbols correspond one-to-one with the bindings so far."""
    if len(sa) != len(sb):
        return False
    new_a: dict[str, str] = {}
    new_b: dict[str, str] = {}
    for x, y in zip(sa, sb, strict=True):
        bx = map_a.get(x, new_a.get(x))
        by = map_b.get(y, new_b.get(y))
        if bx is None and by is None:
            new_a[x] = y
            new_b[y] = x
        elif bx != y or by != x:
            return False
    map_a.update(new_a)
    map_b.update(new_b)
    return True


# ---------------------------------------------------------------------------------------------------------------
# intra-line spans

_TOKEN = re.compile(r"[%#@$!]?[\w$.\-]+|\s+|.")


def _tokens(line: str, syms: tuple[str, ...], mapping: dict[str, str], side: int) -> tuple[list[str], list[int]]:
    """Tokens of a line as compare keys plus their start offsets (one extra: the line length); symbol tokens get
    a key shared by corresponding symbols, so a renamed-but-corresponding value is not a change."""
    toks = _TOKEN.findall(line)
    keys = list(toks)
    pos = 0
    for sym in syms:
        try:
            k = toks.index(sym, pos)
        except ValueError:
            break
        partner = mapping.get(sym)
        if partner is None or partner == _DEAD:
            keys[k] = f"\x01{side}{sym}"
        else:
            keys[k] = f"\x01{sym}\x02{partner}" if side == 0 else f"\x01{partner}\x02{sym}"
        pos = k + 1
    starts = [0, *accumulate(map(len, toks))]
    return keys, starts


def _spans(
    la: str,
    lb: str,
    sa: tuple[str, ...],
    sb: tuple[str, ...],
    map_a: dict[str, str],
    map_b: dict[str, str],
    match: Matcher,
) -> tuple[list[Span], list[Span]]:
    ka, pa = _tokens(la, sa, map_a, 0)
    kb, pb = _tokens(lb, sb, map_b, 1)
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


def _scopes(s: NormalizedStage) -> list[str]:
    """Per line, ``function > innermost region`` label ('' outside any)."""
    n = len(s.lines)
    func: list[str] = [""] * n
    inner: list[str] = [""] * n
    for r in s.regions:  # pre-order: inner regions overwrite outer ones
        lo, hi = max(0, r.start), min(n - 1, r.end)
        target = func if r.function else inner
        for k in range(lo, hi + 1):
            target[k] = r.label
    return [f"{f} > {i}" if f and i else f or i for f, i in zip(func, inner, strict=True)]


def _hunks(rows: list[DiffLine], a: NormalizedStage, b: NormalizedStage, context: int) -> list[Hunk]:
    changed = [k for k, r in enumerate(rows) if r.tag != "equal"]
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
    # positions: number of a/b lines before each row
    apos: list[int] = []
    bpos: list[int] = []
    pa = pb = 0
    for r in rows:
        apos.append(pa)
        bpos.append(pb)
        pa += r.a is not None
        pb += r.b is not None
    scopes_a = _scopes(a)
    scopes_b = _scopes(b)
    hunks: list[Hunk] = []
    for lo, hi in groups:
        s, e = max(0, lo - context), min(len(rows) - 1, hi + context)
        body = rows[s : e + 1]
        first = rows[lo]
        if first.a is not None and first.a < len(scopes_a):
            header = scopes_a[first.a]
        elif first.b is not None and first.b < len(scopes_b):
            header = scopes_b[first.b]
        else:
            header = ""
        hunks.append(
            Hunk(
                header=header,
                a_start=apos[s],
                a_len=sum(1 for r in body if r.a is not None),
                b_start=bpos[s],
                b_len=sum(1 for r in body if r.b is not None),
                lines=body,
            )
        )
    return hunks
