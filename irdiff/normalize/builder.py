"""Builds a :class:`~irdiff.normalize.model.NormalizedStage` from parts: literal text and renamable symbols
(:class:`Sym`), renamed by first appearance over the whole text (:class:`Renamer`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from operator import itemgetter

from irdiff.normalize.model import LazyPerLine, NormalizedStage, Region
from irdiff.normalize.text import split_strings

# How a dialect finds its renamable symbols in a line's text: the pattern, what a match becomes (see
# :func:`tokenize_symbols`), and whether ``"..."`` strings are skipped.
Make = Callable[[re.Match[str]], "Sym | str | None"]


@dataclass(frozen=True)
class Symbols:
    """A dialect's symbol syntax: ``pattern`` finds a symbol, ``make(match)`` says what it becomes (a :class:`Sym`,
    literal text, or None to keep it as it is); with ``strings`` nothing inside ``"..."`` is a symbol. ``plain`` is
    ``pattern``'s source without capturing groups (compiled with its flags for :class:`BulkBuilder`'s ``re.split``);
    it must find the same matches (``tests/test_normalize_fast.py`` checks each dialect's)."""

    pattern: re.Pattern[str]
    make: Make
    plain: str
    strings: bool = True
    # the common symbols without a Sym: text -> (namespace, name, stem, prefix, erased) when ``make`` would give a
    # ``Sym(namespace, name, erased, fmt)`` that :class:`Renamer` names ``prefix + str(n)``, ``n`` counted per
    # (namespace, stem) (``stem``: :func:`stem_of` for a ``{stem}`` format, else ""), else None (``make`` decides)
    quick: Callable[[str], tuple[str, str, str, str, str] | None] | None = None


def _symbol_parts(text: str | list[str | Sym], symbols: Symbols) -> list[str | Sym]:
    """Literal text and symbols of a line's parts: each literal part split at the symbols ``symbols`` finds in it
    (strings kept whole where the dialect has them), Sym parts as they are (:meth:`Builder.add_text`)."""
    parts: list[str | Sym] = []
    for p in [text] if isinstance(text, str) else text:
        if isinstance(p, Sym):
            parts.append(p)
        elif symbols.strings:
            parts.extend(tokenize_symbols(p, symbols.pattern, symbols.make))
        else:
            parts.extend(_tokenize_segment(p, symbols.pattern, symbols.make))
    return parts


class Builder:
    """Collects normalized lines; symbols are renamed at the end (first-appearance order over the whole text).

    The reference builder: every line is kept as parts (literal text and :class:`Sym`) until :meth:`build`.
    :class:`BulkBuilder` gives the same result in linear time on huge texts."""

    def __init__(self, stage: str, raw: str, with_columns: bool = False) -> None:
        self.stage = stage
        self.raw = raw
        # per line: list of parts; a part is str (literal text) or Sym
        self.parts: list[list[str | Sym]] = []
        self.raw_line: list[int] = []
        self.columns: list[str] | None = [] if with_columns else None
        self.regions: list[Region] = []
        self.renamer = Renamer()
        self.symbols: Symbols | None = None

    def use(self, symbols: Symbols) -> None:
        """The dialect's symbol syntax, for :meth:`add_text` (set before the first line)."""
        self.symbols = symbols

    def __len__(self) -> int:
        return len(self.parts)

    def add(self, parts: list[str | Sym], raw_line: int, column: str = "") -> int:
        """Add one line of literal text and symbols; returns its index."""
        self.parts.append(parts)
        self.raw_line.append(raw_line)
        if self.columns is not None:
            self.columns.append(column)
        return len(self.parts) - 1

    def add_text(self, text: str | list[str | Sym], raw_line: int, column: str = "") -> int:
        """Add one line whose symbols are found by :attr:`symbols` in ``text`` (or in the literal parts of a parts
        list); returns its index."""
        if self.symbols is None:
            raise ValueError("add_text needs the dialect's symbols (Builder.use)")
        return self.add(_symbol_parts(text, self.symbols), raw_line, column)

    def build(self) -> NormalizedStage:
        lines: list[str] = []
        shapes: list[str] = []
        symbols: list[tuple[str, ...]] = []
        spans: list[tuple[tuple[int, int], ...]] = []
        # first-appearance order: resolve names in line order
        for parts in self.parts:
            text: list[str] = []
            shape: list[str] = []
            syms: list[str] = []
            where: list[tuple[int, int]] = []
            pos = 0
            for p in parts:
                if isinstance(p, str):
                    text.append(p)
                    shape.append(p)
                    pos += len(p)
                else:
                    name = self.renamer.name(p)
                    shown = name[1:] if p.bare else name
                    text.append(shown)
                    shape.append(p.erased)
                    syms.append(name)
                    where.append((pos, pos + len(shown)))
                    pos += len(shown)
            lines.append("".join(text).rstrip())
            shapes.append("".join(shape).rstrip())
            symbols.append(tuple(syms))
            spans.append(tuple(where))
        regions = sorted(self.regions, key=lambda r: (r.start, -r.end))
        # the readable lines and their shapes, the symbols renamed in them, then where each came from
        return NormalizedStage(self.stage, lines, shapes, self.raw_line, self.columns, self.raw, symbols, regions,
                               symbol_spans=spans)  # fmt: skip


@dataclass(frozen=True)
class Sym:
    """A renamable symbol: ``cls`` is its namespace, ``name`` the original spelling, ``erased`` its shape text."""

    cls: str
    name: str
    erased: str
    fmt: str  # format for the new name: "{stem}.{n}" style, see Renamer
    bare: bool = False  # shown without its sigil (LLIR label definitions: "12:" names the value %12)


class Renamer:
    """Renames symbols by first appearance: per (namespace, stem) counters."""

    def __init__(self) -> None:
        self.names: dict[tuple[str, str], str] = {}
        self.counters: dict[tuple[str, str], int] = {}

    def name(self, sym: Sym) -> str:
        key = (sym.cls, sym.name)
        got = self.names.get(key)
        if got is None:
            stem = _stem(sym)
            ckey = (sym.cls, stem)
            n = self.counters.get(ckey, 0)
            self.counters[ckey] = n + 1
            got = sym.fmt.format(stem=stem, n=n)
            self.names[key] = got
        return got


def _stem(sym: Sym) -> str:
    """The name without its uniquing suffix: MLIR appends ``_N`` (``%a_ptrs_60``), LLVM appends digits
    (``%.frozen1147``); our own output's ``.N`` is stripped too, so normalizing twice is stable."""
    if "{stem}" not in sym.fmt:
        return ""
    return stem_of(sym.cls, sym.name)


def stem_of(cls: str, name: str) -> str:
    """The stem of a symbol named by a ``{stem}`` format (see :func:`_stem`): LLVM's rule for namespace ``val``,
    MLIR's for the others."""
    m = (_LLVM_SUFFIX if cls == "val" else _MLIR_SUFFIX).match(name)
    return m.group(1) if m else name


# Uniquing suffixes: MLIR appends ``_N`` to a name (stem ``a_ptrs``), our own output ``.N``:
#   a_ptrs_61
#   a_ptrs.3
_MLIR_SUFFIX = re.compile(r"^(.+?)[_.]\d+$")
# LLVM appends digits (stem ``.frozen``), or ``.N``:
#   .frozen1147
#   .lr.ph.2
_LLVM_SUFFIX = re.compile(r"^(.*?\D)\.?\d+$")


def tokenize_symbols(
    line: str, pattern: re.Pattern[str], make: Callable[[re.Match[str]], Sym | str | None]
) -> list[str | Sym]:
    """Split ``line`` into literal text and the symbols found by ``pattern`` outside strings; ``make(match)``
    returns a :class:`Sym`, a string (literal text shown and compared instead of the match), or None to keep the
    match as literal text."""
    parts: list[str | Sym] = []
    for is_str, seg in split_strings(line):
        if is_str:
            parts.append(seg)
        else:
            parts.extend(_tokenize_segment(seg, pattern, make))
    return parts


def _tokenize_segment(seg: str, pattern: re.Pattern[str], make: Make) -> list[str | Sym]:
    """Literal text and the symbols ``pattern`` finds in ``seg`` (no string skipping)."""
    parts: list[str | Sym] = []
    pos = 0
    for m in pattern.finditer(seg):
        sym = make(m)
        if sym is None:
            continue
        if m.start() > pos:
            parts.append(seg[pos : m.start()])
        parts.append(sym)
        pos = m.end()
    if pos < len(seg):
        parts.append(seg[pos:])
    return parts


# Characters a placeholder is made of (Unicode private use: not ``\w``, so no symbol pattern reads one as part of a
# name); the first one absent from the raw text is used.
_SENTINELS = "\ue000\ue001\ue002\ue003\ue004\ue005\ue006\ue007"
_CHUNK = 4096  # lines per regex pass: bounds the temporary pieces of a split to about a MB


class BulkBuilder:
    """The same :class:`NormalizedStage` as :class:`Builder` (``tests/test_normalize_fast.py``) in linear time and
    little memory on huge texts (a 10 MB function: ``benchmarks/bench_align_large.py``).

    Lines given as text (:meth:`add_text`) are searched for symbols over chunks of lines with one ``re.split`` each
    and renamed with ``map``/``join`` (C speed); each new symbol text is named once, in first-appearance order, by
    the same :class:`Renamer` (a symbol's new name depends only on its class and name). What must not be searched
    (a ``"..."`` string when the dialect skips strings, literal parts and :class:`Sym` of :meth:`add`) travels as a
    placeholder (a private-use character, a number, the character again), which keeps line and segment boundaries
    as the reference sees them: the placeholder's characters are not ``\\w``, so no lookaround or name class crosses
    it. Per-line :attr:`~NormalizedStage.symbols` and spans are computed when read, from the kept pre-rename chunks.
    """

    def __init__(self, stage: str, raw: str, with_columns: bool = False, per_line_after: int | None = None) -> None:
        """``per_line_after``: past this many lines the pre-rename chunks the per-line symbols are computed from are
        no longer kept (the caller computes those otherwise, ``irdiff.normalize.RECOMPUTE_LINES``; 13 MB of a 10 MB
        LLIR side): the built stage's :attr:`~NormalizedStage.symbols` then raise when read; None: always kept."""
        sentinel = next((c for c in _SENTINELS if c not in raw), None)
        if sentinel is None:
            raise ValueError("no placeholder character is free in this text: use Builder")
        self.stage = stage
        self.raw = raw
        self.raw_line: list[int] = []
        self.columns: list[str] | None = [] if with_columns else None
        self.regions: list[Region] = []
        self.renamer = Renamer()
        self.symbols: Symbols | None = None  # the dialect's, for add_text (use): add alone needs none
        self._quick: Callable[[str], tuple[str, str, str, str, str] | None] | None = None
        self._s = sentinel
        self._split = re.compile(f"({sentinel}\\d+{sentinel})")
        self._lines: list[str] = []
        self._shapes: list[str] = []
        self._chunk: list[str] = []  # pre-rename texts of the lines not yet renamed
        self._kept: list[str] | None = []  # every chunk's pre-rename text, for the per-line symbols (None: dropped)
        self._keep_up_to = per_line_after
        # symbol text (or placeholder) -> readable text; it refers back to this builder (its _name) until build
        self._shown: _Missing = _Missing(self._name)
        self._erased: dict[str, str] = {}  # ... -> shape text
        self._literals: set[str] = set()  # ... that are literal text, not a symbol (few)
        self._bare: dict[str, str] = {}  # ... -> the new name of a symbol shown without its sigil (few)
        self._held: dict[str, str | Sym] = {}  # placeholder -> what it stands for, until its chunk is renamed
        self._keys: dict[str | Sym, str] = {}  # what a placeholder stands for -> the placeholder
        self._pool: dict[str, str] = {}  # one string per distinct shape (and side column)
        self._n = 0
        self._k = 0  # placeholders made
        self._many_new = True  # whether the last chunk had many new symbols (_name_new)

    def use(self, symbols: Symbols) -> None:
        """The dialect's symbol syntax, for :meth:`add_text` (set before the first line)."""
        if self._n:
            raise ValueError("BulkBuilder.use after the first line")
        self.symbols = symbols
        self._quick = symbols.quick
        self._split = re.compile(f"({symbols.plain}|{self._s}\\d+{self._s})", symbols.pattern.flags)

    def __len__(self) -> int:
        return self._n

    def _hold(self, what: str | Sym) -> str:
        """The placeholder of ``what``: one per distinct literal or :class:`Sym` (equal ones are named alike), so a
        label used many times is named once."""
        key = self._keys.get(what)
        if key is None:
            self._k += 1
            key = self._keys[what] = f"{self._s}{self._k}{self._s}"
            self._held[key] = what
        return key

    def _push(self, text: str, raw_line: int, column: str) -> int:
        self._chunk.append(text)
        self.raw_line.append(raw_line)
        if self.columns is not None:
            self.columns.append(self._pool.setdefault(column, column))  # a few distinct control codes
        self._n += 1
        if len(self._chunk) >= _CHUNK:
            self._flush()
        return self._n - 1

    def add(self, parts: list[str | Sym], raw_line: int, column: str = "") -> int:
        """Add one line of literal text and symbols (nothing searched); returns its index."""
        return self._push(self.added(parts), raw_line, column)

    def added(self, parts: list[str | Sym]) -> str:
        """The pre-rename text :meth:`add` keeps for ``parts`` (each :class:`Sym`, and literal text the split would
        read, as a placeholder), for :meth:`extend`."""
        acc: list[str] = []
        run: list[str] = []  # adjacent literal parts: kept as they are when no symbol can be read in them
        for p in parts:
            if isinstance(p, Sym):
                if run:
                    acc.append(self._literal("".join(run)))
                    run.clear()
                acc.append(self._hold(p))
            else:
                run.append(p)
        if run:
            acc.append(self._literal("".join(run)))
        return "".join(acc)

    def searched_alone(self, text: str | list[str | Sym], symbols: Symbols) -> str:
        """The pre-rename text of a line whose symbols ``symbols`` finds in each literal part alone, as
        :meth:`Builder.add_text` reads it, whatever this builder's own split would find in the line (every symbol
        and literal its split would read are placeholders): for lines a dialect's whole-text path cannot give the
        split as they are."""
        return self.added(_symbol_parts(text, symbols))

    def held(self, items: Sequence[str | Sym]) -> list[str]:
        """The placeholders of ``items`` for a whole-text path's lines: of strings the dialect skips, as
        :meth:`searched` makes them for a line's strings, or of :class:`Sym`, as :meth:`added` does; equal items
        share one."""
        return list(map(self._hold, items))

    def _literal(self, text: str) -> str:
        """``text`` as literal text in a line: itself when the split finds nothing in it, else a placeholder."""
        return self._hold(text) if self._split.search(text) else text

    def add_text(self, text: str | list[str | Sym], raw_line: int, column: str = "") -> int:
        """Add one line whose symbols are found in ``text`` (or in the literal parts of a parts list); returns its
        index; raises ValueError before :meth:`use`, as :meth:`Builder.add_text` does."""
        syn = self.symbols
        if syn is None:
            raise ValueError("add_text needs the dialect's symbols (BulkBuilder.use)")
        line = text if isinstance(text, str) and not (syn.strings and '"' in text) else self.searched(text)
        # _push, inlined: this runs once per line of a huge text
        self._chunk.append(line)
        self.raw_line.append(raw_line)
        if self.columns is not None:
            self.columns.append(self._pool.setdefault(column, column))  # a few distinct control codes
        self._n += 1
        if len(self._chunk) >= _CHUNK:
            self._flush()
        return self._n - 1

    def searched(self, text: str | list[str | Sym]) -> str:
        """The pre-rename text :meth:`add_text` keeps for ``text`` (strings and :class:`Sym` as placeholders), for
        :meth:`extend`; raises ValueError before :meth:`use`."""
        syn = self.symbols
        if syn is None:
            raise ValueError("add_text needs the dialect's symbols (BulkBuilder.use)")
        if isinstance(text, str):
            if syn.strings and '"' in text:
                return "".join(self._hold(seg) if is_str else seg for is_str, seg in split_strings(text))
            return text
        acc: list[str] = []
        for p in text:
            if isinstance(p, Sym):
                acc.append(self._hold(p))
            elif syn.strings and '"' in p:
                acc.extend(self._hold(seg) if is_str else seg for is_str, seg in split_strings(p))
            else:
                acc.append(p)
        return "".join(acc)

    def extend(self, texts: list[str], raw_lines: Iterable[int], columns: list[str] | None = None) -> None:
        """Add many lines at once, as :meth:`add_text` of each would (``texts``: each line's text with no string
        the dialect skips and no placeholder character, or made by :meth:`searched`; ``columns``: each line's side
        column, pooled here, or None for ""). The whole-text paths of huge stages feed lines this way."""
        if self.symbols is None:
            raise ValueError("extend needs the dialect's symbols (BulkBuilder.use)")
        self._chunk.extend(texts)
        self.raw_line.extend(raw_lines)
        if self.columns is not None:
            pool = self._pool.setdefault
            self.columns.extend(map(pool, columns, columns) if columns is not None else [pool("", "")] * len(texts))
        self._n += len(texts)
        if len(self._chunk) >= _CHUNK:
            self._flush()

    def _name(self, s: str) -> str:
        """Name a symbol text (or a placeholder) seen for the first time: its readable text (``_shown``'s missing
        key; the shape text goes to ``_erased``)."""
        if s[0] != self._s and self._quick is not None and (q := self._quick(s)) is not None:
            # Renamer.name of the Sym ``make`` would give, inlined: once per distinct symbol of a huge text
            key = (q[0], q[1])
            names = self.renamer.names
            name = names.get(key)
            if name is None:
                counters = self.renamer.counters
                ckey = (q[0], q[2])
                n = counters.get(ckey, 0)
                counters[ckey] = n + 1
                name = names[key] = q[3] + str(n)
            self._shown[s] = name
            self._erased[s] = q[4]
            return name
        what: str | Sym | None
        if s[0] == self._s:
            what = self._held.pop(s)
        else:
            syn = self.symbols
            assert syn is not None  # the split finds a symbol's text only after use() (before: placeholders only)
            m = syn.pattern.match(s)
            if m is None or m.end() != len(s):
                raise ValueError(f"split and pattern disagree on {s!r}")
            what = syn.make(m)
        if what is None or isinstance(what, str):
            shown = self._shown[s] = self._erased[s] = s if what is None else what
            self._literals.add(s)
            return shown
        name = self.renamer.name(what)
        shown = self._shown[s] = name[1:] if what.bare else name
        self._erased[s] = what.erased
        if what.bare:
            self._bare[s] = name
        return shown

    def _name_new(self, syms: list[str]) -> None:
        """Name the symbols of ``syms`` not seen before, in first-appearance order, as the lookups in :meth:`_flush`
        would one by one (:meth:`_name`), with the common ones (:attr:`Symbols.quick`) named in one loop here: a
        10 MB LLIR function has ~1.1e5 new values per side, and three Python calls each (the table's
        ``__missing__``, :meth:`_name`, ``quick``) were ~15 % of its normalization's instructions."""
        shown = self._shown
        fresh = [s for s in dict.fromkeys(syms) if s not in shown]
        # few new symbols (SASS registers: a few hundred in a whole listing): the next chunks leave them to the
        # lookups, which then cost less than this pass (+1.7 % instructions on 2 MB of SASS)
        self._many_new = len(fresh) * 8 > len(syms)
        if not fresh:
            return
        quick, sentinel, erased = self._quick, self._s, self._erased
        assert quick is not None
        names, counters = self.renamer.names, self.renamer.counters
        for s in fresh:
            if s[0] == sentinel or (q := quick(s)) is None:
                self._name(s)  # a placeholder, or a symbol make decides
                continue
            key = (q[0], q[1])
            name = names.get(key)
            if name is None:
                ckey = (q[0], q[2])
                n = counters.get(ckey, 0)
                counters[ckey] = n + 1
                name = names[key] = q[3] + str(n)
            shown[s] = name
            erased[s] = q[4]

    def _flush(self) -> None:
        if not self._chunk:
            return
        joined = "\n".join(self._chunk)
        self._chunk.clear()
        if self._kept is not None:
            if self._keep_up_to is not None and self._n > self._keep_up_to:
                self._kept = None  # the caller computes the per-line symbols otherwise
            else:
                self._kept.append(joined)
        parts = self._split.split(joined)
        syms = parts[1::2]
        if syms:
            if self._quick is not None and self._many_new:
                self._name_new(syms)
            # looked up in order (in C): a symbol not seen before is named by _name, so in first-appearance order
            parts[1::2] = lookup_in_order(self._shown, syms)
        self._lines.extend(map(str.rstrip, "".join(parts).split("\n")))
        if syms:
            parts[1::2] = lookup_in_order(self._erased, syms)
        got = list(map(str.rstrip, "".join(parts).split("\n")))
        self._shapes.extend(map(self._pool.setdefault, got, got))

    def _per_line(self) -> tuple[list[tuple[str, ...]], list[tuple[tuple[int, int], ...]]]:
        """Symbols and their spans of every line, from the kept pre-rename chunks."""
        symbols: list[tuple[str, ...]] = []
        spans: list[tuple[tuple[int, int], ...]] = []
        split, shown, literal, bare = self._split.split, self._shown, self._literals, self._bare
        if self._kept is None:
            raise RuntimeError("per-line symbols not kept past per_line_after lines")
        for joined in self._kept:
            for line in joined.split("\n"):
                parts = split(line)
                if len(parts) == 1:
                    symbols.append(())
                    spans.append(())
                    continue
                syms: list[str] = []
                where: list[tuple[int, int]] = []
                pos = len(parts[0])
                for k in range(1, len(parts), 2):
                    s = parts[k]
                    text = shown[s]
                    if s not in literal:
                        syms.append(bare.get(s, text))
                        where.append((pos, pos + len(text)))
                    pos += len(text) + len(parts[k + 1])
                symbols.append(tuple(syms))
                spans.append(tuple(where))
        return symbols, spans

    def build(self) -> NormalizedStage:
        self._flush()
        self._held.clear()
        self._keys.clear()
        # every symbol is named: neither the table nor the dialect's symbol syntax (whose ``make`` may be a method
        # of a walk that holds this builder: LLIR's) refers back to this builder any more, so no reference cycle
        # keeps the tables alive once the built stage no longer needs them (until the next full garbage collection
        # they held 45-57 MB of a 10 MB TTGIR or LLIR side after normalize returned, 20 MB of SASS's)
        self._shown.close()
        self.symbols = self._quick = None
        regions = sorted(self.regions, key=lambda r: (r.start, -r.end))
        n = self._n
        both: list[tuple[list[tuple[str, ...]], list[tuple[tuple[int, int], ...]]]] = []

        def per_line() -> tuple[list[tuple[str, ...]], list[tuple[tuple[int, int], ...]]]:
            if not both:
                both.append(self._per_line())
            return both[0]

        return NormalizedStage(
            self.stage,
            self._lines,
            self._shapes,
            self.raw_line,
            self.columns,
            self.raw,
            LazyPerLine(n, lambda: per_line()[0]),
            regions,
            symbol_spans=LazyPerLine(n, lambda: per_line()[1]),
        )


class _Missing(dict[str, str]):
    """A dict whose missing key is made by ``make(key)`` (which stores it): looking up a chunk's symbols in order
    names each new one on its first use, so in first-appearance order, while the lookups themselves run in C."""

    def __init__(self, make: Callable[[str], str]) -> None:
        super().__init__()
        self._make = make

    def __missing__(self, key: str) -> str:
        return self._make(key)

    def close(self) -> None:
        """No more names are made (a missing key raises KeyError): drops ``make``, which may refer back to the
        table's owner (:meth:`BulkBuilder.build`)."""
        self._make = _no_name


def _no_name(key: str) -> str:
    raise KeyError(key)


def lookup_in_order(table: dict[str, str], keys: list[str]) -> tuple[str, ...] | list[str]:
    """``[table[k] for k in keys]`` in C (``operator.itemgetter``, measured 7 % less CPU than ``map`` on the 10 MB PTX
    pair, whose ~10^5 distinct registers make every lookup a cache miss), in the order of ``keys`` (a table with a
    ``__missing__``, like :class:`_Missing`, makes new keys on the way in that order)."""
    if len(keys) > 1:
        got: tuple[str, ...] = itemgetter(*keys)(table)
        return got
    return [table[k] for k in keys]
