"""The normalizer's output: :class:`NormalizedStage` (lines, shapes, raw line map, symbols) and its :class:`Region`."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar, overload

T = TypeVar("T")


@dataclass(slots=True)  # no per-object __dict__: a 10 MB LLIR or PTX side has 25-32 thousand blocks
class Region:
    """A function, loop/region or basic block of a normalized stage: lines ``start..end`` (0-based, inclusive).

    :ivar kind: what opened it: ``tt.func @KERNEL``, ``scf.for``, ``scf.if``, ``define @KERNEL``, ``.entry KERNEL``,
        ``Function:KERNEL``, ``block``.
    :ivar label: text for hunk headers, e.g. ``scf.for (line 186)`` (raw line of the opener).
    :ivar anchor: True when the aligner should match it as a unit (functions, MLIR regions); basic blocks of
        LLIR/PTX/SASS only name hunks.
    :ivar function: True for functions (hunk headers always name the enclosing function).
    """

    start: int
    end: int
    kind: str
    label: str
    anchor: bool = True
    function: bool = False


@dataclass
class NormalizedStage:
    """One stage text after normalization; all per-line lists have the same length.

    :ivar stage: ``ttir``, ``ttgir``, ``llir``, ``ptx``, ``sass``, ``python`` (anything else is treated as text).
    :ivar lines: readable normalized lines (what a diff shows).
    :ivar shapes: the "shape" form of each line used for alignment: renamed symbols erased to their class.
    :ivar raw_line: 1-based line number in :attr:`raw` for each normalized line; non-decreasing, except in LLIR's
        block of ``attributes`` definitions, which is sorted by content (LLVM orders it by first use).
    :ivar columns: side column per line (SASS control codes such as ``--:-:0:Y:4``), else None.
    :ivar raw: the raw text.
    :ivar symbols: per line, the symbols erased from the shape, in order (readable names, e.g. ``%a_ptrs.3``).
    :ivar symbol_spans: per line, the ``(start, end)`` character range of each symbol of :attr:`symbols` in
        :attr:`lines` (a label definition prints its name without the sigil: ``12:`` names ``%12``); used by
        :func:`rename` and by the aligner, which renames both sides of a diff together.
        :attr:`symbols` and :attr:`symbol_spans` may be a :class:`LazyPerLine` (computed on first read: the
        aligner of a huge function never reads them).
    :ivar regions: functions, loops/regions and basic blocks, in pre-order (outer before inner).
    :ivar fallback: True when the dialect normalizer failed on this text and lines are the raw lines.
    """

    stage: str
    lines: list[str]
    shapes: list[str]
    raw_line: list[int]
    columns: list[str] | None
    raw: str
    symbols: Sequence[tuple[str, ...]] = field(default_factory=list)
    regions: list[Region] = field(default_factory=list)
    fallback: bool = False
    symbol_spans: Sequence[tuple[tuple[int, int], ...]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.lines)


class LazyPerLine(Sequence[T], Generic[T]):
    """A per-line list computed on its first read (its length is known before): a huge stage's
    :attr:`NormalizedStage.symbols` and :attr:`~NormalizedStage.symbol_spans`, which only the exact alignment of
    functions small enough for it reads. Compares equal to a list with the same items."""

    __hash__ = None  # type: ignore[assignment]

    def __init__(self, n: int, compute: Callable[[], list[T]]) -> None:
        self._n = n
        self._compute: Callable[[], list[T]] | None = compute
        self._items: list[T] | None = None

    @staticmethod
    def recomputed(
        n: int, again: Callable[[], NormalizedStage]
    ) -> tuple[LazyPerLine[tuple[str, ...]], LazyPerLine[tuple[tuple[int, int], ...]]]:
        """:attr:`~NormalizedStage.symbols` and :attr:`~NormalizedStage.symbol_spans` of an ``n``-line stage, taken
        when first read from ``again()`` (the same normalization run again, once for both)."""
        memo: list[NormalizedStage] = []

        def get() -> NormalizedStage:
            if not memo:
                memo.append(again())
            return memo[0]

        return LazyPerLine(n, lambda: list(get().symbols)), LazyPerLine(n, lambda: list(get().symbol_spans))

    def _get(self) -> list[T]:
        if self._items is None:
            assert self._compute is not None
            self._items = self._compute()
            self._compute = None
            if len(self._items) != self._n:
                raise AssertionError(f"per-line list of {len(self._items)} items, expected {self._n}")
        return self._items

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: int) -> T: ...
    @overload
    def __getitem__(self, i: slice) -> list[T]: ...
    def __getitem__(self, i: int | slice) -> T | list[T]:
        return self._get()[i]

    def __iter__(self) -> Iterator[T]:
        return iter(self._get())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyPerLine | list):
            return len(self) == len(other) and self._get() == list(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"LazyPerLine({self._get()!r})" if self._items is not None else f"LazyPerLine(<{self._n} lines>)"
