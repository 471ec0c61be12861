"""Builds a :class:`~irdiff.normalize.model.NormalizedStage` from parts: literal text and renamable symbols
(:class:`Sym`), renamed by first appearance over the whole text (:class:`Renamer`)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from irdiff.normalize.model import NormalizedStage, Region
from irdiff.normalize.text import split_strings


class Builder:
    """Collects normalized lines; symbols are renamed at the end (first-appearance order over the whole text)."""

    def __init__(self, stage: str, raw: str, with_columns: bool = False) -> None:
        self.stage = stage
        self.raw = raw
        # per line: list of parts; a part is str (literal text) or Sym
        self.parts: list[list[str | Sym]] = []
        self.raw_line: list[int] = []
        self.columns: list[str] | None = [] if with_columns else None
        self.regions: list[Region] = []
        self.renamer = Renamer()

    def add(self, parts: list[str | Sym], raw_line: int, column: str = "") -> int:
        self.parts.append(parts)
        self.raw_line.append(raw_line)
        if self.columns is not None:
            self.columns.append(column)
        return len(self.parts) - 1

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
    m = (_LLVM_SUFFIX if sym.cls == "val" else _MLIR_SUFFIX).match(sym.name)
    return m.group(1) if m else sym.name


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
            continue
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
