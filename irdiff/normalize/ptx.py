"""PTX (``make_ptx``): comments, ``.loc``/``.file``, debug labels and sections dropped; registers renumbered per
class and ``$L__BB`` labels by first appearance."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator, Sequence
from itertools import compress, count, islice
from operator import itemgetter, not_

from irdiff.normalize.builder import Builder, BulkBuilder, Sym, Symbols
from irdiff.normalize.model import LazyPerLine, NormalizedStage, Region
from irdiff.normalize.text import (
    Kernel,
    kernel_pattern,
    replace_kernel,
    strip_comment,
)

# Debug lines (dropped):
#   .loc	1 40 0                          // diag_copy.py:40:0
#   .file	1 "/work/wt/arch/tests/suites/diag_copy.py"
#   $L__tmp0:
#   $L__func_begin0:
_PTX_DROP = re.compile(r"^\s*(?:\.loc\b|\.file\b|//|\$L__(?:tmp|func_begin|func_end|info_string)\w*:|@@DWARF)")
# The virtual register classes (a class before its one-letter prefix):
_CLASSES = ("hh", "rd", "rs", "rq", "fd", "f", "h", "r", "p", "b")
_ALT = "|".join(_CLASSES)
# Virtual registers per class and block labels, renumbered:
#   @%p2 ld.global.b16 { %rs1 }, [ %rd38 + 0 ];
#   @!%p1 bra 	$L__BB0_1;
_PTX_SYM = re.compile(
    rf"""
    (?=[%$])
    (?:%({_ALT})(\d+)\b  # virtual registers by class: %rd38, %p1
    |(\$L__BB\d+_\d+)\b)                 # block labels: $L__BB0_1
    """,
    re.X,
)
# A kernel or function header:
#   .visible .entry copy_annotated(
_PTX_ENTRY = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+|\.extern\s+)*\.(entry|func)\s+(?:\([^)]*\)\s*)?([\w$]+)")


# The DWARF sections at the end (everything from the first one on is dropped):
#   .section	.debug_abbrev
_PTX_DEBUG_SECTION = re.compile(r"^\s*\.section\s+\.debug")
# A basic-block label (starts a block region):
#   $L__BB0_3:                              // =>This Inner Loop Header: Depth=1
_PTX_BLOCK_LABEL = re.compile(r"^\$L__BB\d+_\d+:")


def _ptx_make(m: re.Match[str]) -> Sym:
    if m.group(1) is not None:
        cls = m.group(1)
        return Sym("reg" + cls, m.group(2), f"%{cls}_", "%" + cls + "{n}")
    return Sym("bb", m.group(3), "$L__BB_", "$L__BB{n}")


class _Structure:
    """Functions and basic blocks of the kept lines, fed one line at a time (shared by both normalizers below)."""

    def __init__(self, regions: list[Region]) -> None:
        self.regions = regions
        self.depth = 0
        self.func: tuple[int, str] | None = None
        self.pending_func: tuple[int, str] | None = None
        self.block_start: int | None = None
        self.block_label = ""

    def line(self, idx: int, rawno: int, line: str) -> None:
        """``line``: the kept line (comment and trailing blanks stripped, kernel name replaced) at index ``idx``."""
        if (".entry" in line or ".func" in line) and (em := _PTX_ENTRY.match(line)):
            self.pending_func = (idx, f".{em.group(1)} {em.group(2)}")
        if "$L__BB" in line and self.func is not None:
            stripped = line.strip()
            if _PTX_BLOCK_LABEL.match(stripped):
                if self.block_start is not None:
                    self.regions.append(Region(self.block_start, idx - 1, "block", self.block_label, anchor=False))
                self.block_start = idx
                self.block_label = f"{stripped} (line {rawno})"
        if "{" not in line and "}" not in line:
            return  # depth unchanged, neither opens nor closes a function
        stripped = line.strip()
        opens = stripped.count("{") - stripped.count("}")
        if stripped.startswith("{") and self.depth == 0 and self.pending_func is not None:
            self.func = self.pending_func
            self.pending_func = None
        self.depth = max(0, self.depth + opens)
        if self.depth == 0 and self.func is not None and stripped.endswith("}"):
            if self.block_start is not None:
                self.regions.append(Region(self.block_start, idx - 1, "block", self.block_label, anchor=False))
                self.block_start = None
            self.regions.append(Region(self.func[0], idx, self.func[1], self.func[1], anchor=True, function=True))
            self.func = None

    def finish(self, n: int) -> None:
        """Close a function left open at the end of the text (``n`` kept lines)."""
        if self.func is not None:
            end = n - 1
            if self.block_start is not None:
                self.regions.append(Region(self.block_start, end, "block", self.block_label, anchor=False))
            self.regions.append(Region(self.func[0], end, self.func[1], self.func[1], anchor=True, function=True))


def _kept_lines(raw_lines: Sequence[str], kernel_name: str | None) -> Iterator[tuple[int, str]]:
    """``(raw line number, line)`` of the lines a PTX diff shows: up to the first debug section, debug lines and
    blank lines dropped, trailing comments and blanks stripped, the kernel's name replaced by ``KERNEL``."""
    kpat = kernel_pattern(kernel_name)
    for rawno, line in enumerate(raw_lines, start=1):
        if ".section" in line and _PTX_DEBUG_SECTION.match(line):
            return
        if _PTX_DROP.match(line):
            continue
        if "//" in line:
            line = strip_comment(line, "//")
        line = line.rstrip()
        if not line:
            continue
        yield rawno, replace_kernel(line, kpat)


def normalize_ptx(out: Builder | BulkBuilder, raw_lines: Sequence[str], kernel_name: str | None) -> None:
    """The general normalizer (symbols found outside ``"..."`` strings, line by line); :func:`normalize_ptx_fast`
    gives the same result on texts without strings."""
    out.use(SYMBOLS)
    structure = _Structure(out.regions)
    for rawno, line in _kept_lines(raw_lines, kernel_name):
        idx = out.add_text(line, rawno)
        structure.line(idx, rawno, line)
    structure.finish(len(out))


_PTX_PLAIN = rf"[%$](?:(?<=%)(?:{_ALT})\d+\b|(?<=\$)L__BB\d+_\d+\b)"
# The symbols of _PTX_SYM as one group, to split a whole chunk of lines at once (no match spans a line break; at
# most one alternative can match at a position; the sigil first lets the regex engine skip to a ``%``/``$``):
#   @%p2 ld.global.b16 { %rs1 }, [ %rd38 + 0 ];
#   @!%p1 bra 	$L__BB0_1;
_PTX_SPLIT = re.compile(f"({_PTX_PLAIN})")


def _quick(s: str) -> tuple[str, str, str, str, str]:
    """:func:`_ptx_make` of a symbol's text (``%rd38``: class ``rd``, number ``38``) without a Sym."""
    if s[0] == "$":
        return ("bb", s, "", "$L__BB", "$L__BB_")
    k = 2 if s[2].isalpha() else 1  # the classes have one or two letters
    cls = s[1 : k + 1]
    return ("reg" + cls, s[k + 1 :], "", "%" + cls, "%" + cls + "_")


SYMBOLS = Symbols(_PTX_SYM, _ptx_make, _PTX_PLAIN, quick=_quick)
_CHUNK = 4096  # kept lines per regex pass: bounds the temporary pieces of a split to about a MB


def normalize_ptx_fast(
    stage: str, text: str, raw_lines: Sequence[str], kernel_name: str | None
) -> NormalizedStage | None:
    """The same result as :func:`normalize_ptx` in linear time and little memory on huge texts (a 10 MB function:
    ``benchmarks/bench_align_large.py``), or None when a kept line holds a ``"`` (then symbols inside strings must be
    skipped: the general normalizer does that).

    Every step runs over many lines per C call: the kept lines are selected by one regex match per line
    (:func:`_kept`), comments, the kernel's name and symbols are handled in chunks of joined lines, and only the
    lines that can open or close a function or a block go through :class:`_Structure`. Symbols are numbered by
    first appearance per class (:class:`_Numbering`: ``%rd38`` → ``%rd`` and its class's next number), so chunk by
    chunk in order gives the same numbers as line by line. Per-line :attr:`~NormalizedStage.symbols` and
    :attr:`~NormalizedStage.symbol_spans` are computed when read (:class:`~irdiff.normalize.model.LazyPerLine`)
    from the raw line, which is normalized again the same way.
    """
    kpat = kernel_pattern(kernel_name)
    if kpat is not None and '"' in kpat.name:
        return None
    raw_line, chunks = _kept(raw_lines, kpat, ".section" in text)
    regions: list[Region] = []
    structure = _Structure(regions)
    lines: list[str] = []
    shapes: list[str] = []
    shape_pool: dict[str, str] = {}  # one string per distinct shape (most lines of a big kernel share a few)
    numbering = _Numbering()
    try:
        for kept in chunks:  # in order, one chunk of kept lines at a time (little memory)
            k = len(lines)
            for idx in _structural(kept):
                structure.line(k + idx, raw_line[k + idx], kept[idx])
            parts = _PTX_SPLIT.split("\n".join(kept))
            if len(parts) > 1:
                shown, erased = numbering.rename(parts[1::2])  # new symbols named in order of appearance
                parts[1::2] = shown
                lines.extend("".join(parts).split("\n"))
                parts[1::2] = erased
                got_shapes = "".join(parts).split("\n")
            else:
                lines.extend(kept)
                got_shapes = kept
            shapes.extend(map(shape_pool.setdefault, got_shapes, got_shapes))
    except _HasStrings:
        return None
    structure.finish(len(lines))
    regions.sort(key=lambda r: (r.start, -r.end))
    both: list[tuple[list[tuple[str, ...]], list[tuple[tuple[int, int], ...]]]] = []

    def per_line() -> tuple[list[tuple[str, ...]], list[tuple[tuple[int, int], ...]]]:
        """Symbols and their spans of every line, from the raw lines normalized again the same way."""
        if both:
            return both[0]
        names = numbering.table()
        raw = text.splitlines()
        symbols: list[tuple[str, ...]] = []
        spans: list[tuple[tuple[int, int], ...]] = []
        for rawno in raw_line:
            line = raw[rawno - 1]
            if "//" in line:
                line = strip_comment(line, "//")
            parts = _PTX_SPLIT.split(replace_kernel(line.rstrip(), kpat))
            if len(parts) == 1:
                symbols.append(())
                spans.append(())
                continue
            syms = tuple(names[s] for s in parts[1::2])
            where: list[tuple[int, int]] = []
            pos = 0
            for k, new in enumerate(syms):
                pos += len(parts[2 * k])
                where.append((pos, pos + len(new)))
                pos += len(new)
            symbols.append(syms)
            spans.append(tuple(where))
        both.append((symbols, spans))
        return symbols, spans

    n = len(lines)
    return NormalizedStage(
        stage,
        lines,
        shapes,
        raw_line,
        None,
        text,
        LazyPerLine(n, lambda: per_line()[0]),
        regions,
        symbol_spans=LazyPerLine(n, lambda: per_line()[1]),
    )


# A raw line that is not kept: a debug line (_PTX_DROP), a comment alone, or blanks (nothing left once its comment
# and trailing blanks are stripped):
#   .loc	1 40 0
#   // begin inline asm
_PTX_NOT_KEPT = re.compile(_PTX_DROP.pattern[:-1] + "|$)")


def _kept(raw_lines: Sequence[str], kpat: Kernel | None, sections: bool) -> tuple[list[int], Iterator[list[str]]]:
    """The raw line numbers of :func:`_kept_lines` and its lines in chunks (computed over many lines per C call: a
    regex match per line selects them, one ``re.sub`` per chunk strips comments and replaces the kernel's name
    ``kpat``, which holds no ``"``). Reading the chunks raises :class:`_HasStrings` at a kept line that holds a
    ``"`` (the general normalizer skips strings). ``sections``: the text has a ``.section`` (the lines from the
    first DWARF section on are not kept)."""
    cut = len(raw_lines)
    if sections:
        cut = next(compress(count(), map(_PTX_DEBUG_SECTION.match, raw_lines)), cut)
    lines = raw_lines[:cut] if cut < len(raw_lines) else raw_lines
    keep = list(map(not_, map(_PTX_NOT_KEPT.match, lines)))
    raw_line = list(compress(range(1, len(lines) + 1), keep))
    kept = compress(lines, keep)
    per_line_kernel = kpat is not None and "\n" in kpat.name  # a name that a joined chunk could match across lines

    def chunks() -> Iterator[list[str]]:
        for _ in range(0, len(raw_line), _CHUNK):
            joined = "\n".join(islice(kept, _CHUNK))
            if "//" in joined:  # no string on a kept line (checked below): a comment starts at the first //
                joined = _COMMENT.sub("", joined)
            got = list(map(str.rstrip, joined.split("\n")))
            joined = "\n".join(got)
            if '"' in joined:  # the kernel's name, replaced below, holds none
                raise _HasStrings
            if kpat is not None and kpat.name in joined:
                if per_line_kernel:
                    got = [replace_kernel(ln, kpat) for ln in got]
                else:  # lines hold no line break: the name's lookarounds read a break as the end of a line
                    got = kpat.pat.sub("KERNEL", joined).split("\n")
            yield got

    return raw_line, chunks()


class _HasStrings(Exception):
    """A kept line holds a ``"``: the general normalizer's job."""


# A trailing comment in a line without strings:
#   add.s32 	%r1, %r2, 1;  // c1
_COMMENT = re.compile(r"//[^\n]*")


def _structural(kept: list[str]) -> list[int]:
    """Indices of the kept lines :class:`_Structure` must see, in order: those with ``.entry``/``.func``, a block
    label (``$L__BB0_3:``) and those with braces that open or close something (unbalanced, or a line that starts
    with ``{`` or ends with ``}``). Any other line changes nothing there: a branch to a label, balanced braces
    inside a line (``ld.global.v4.b32 {%r1, %r2, %r3, %r4}, [%rd1];``)."""
    out: list[int] = []
    for i, ln in enumerate(kept):
        if "$L__BB" in ln:
            if ln.lstrip().startswith("$L__BB") or "{" in ln or "}" in ln or ".entry" in ln or ".func" in ln:
                out.append(i)
        elif ".entry" in ln or ".func" in ln:
            out.append(i)
        elif ("{" in ln or "}" in ln) and (
            ln.count("{") != ln.count("}") or ln.endswith("}") or ln.lstrip().startswith("{")
        ):
            out.append(i)
    return out


class _Numbering:
    """Symbol text (``%rd38``) → new name (``%rd7``) and shape (``%rd_``): each class (``%r``, ``%rd``, ...,
    ``$L__BB``) numbered by first appearance. The ids of a chunk's symbols come from one C pass (a ``defaultdict``
    counting first appearances), the new symbols' classes from one ``re.sub`` (the text without its digits), their
    numbers from per-class counters (``itertools.count``): no Python call per symbol."""

    def __init__(self) -> None:
        self._ids: defaultdict[str, int] = defaultdict(count().__next__)  # symbol text -> first-appearance id
        self._counters: defaultdict[str, Iterator[int]] = defaultdict(count)  # class -> its next number
        self._shown: list[str] = []  # by id
        self._erased: list[str] = []  # by id

    def rename(self, syms: list[str]) -> tuple[Sequence[str], Sequence[str]]:
        """The new names and the shapes of ``syms`` (symbol texts in order of appearance)."""
        before = len(self._ids)
        ids = list(map(self._ids.__getitem__, syms))
        new = len(self._ids) - before
        if new:
            fresh = list(islice(reversed(self._ids), new))
            fresh.reverse()
            # the class: the symbol without its digits (``%rd38`` -> ``%rd``, ``$L__BB0_1`` -> ``$L__BB_``)
            joined = "\n".join(fresh)
            joined = joined.translate(_NO_DIGITS) if joined.isascii() else _DIGITS.sub("", joined)
            classes = joined.split("\n")
            prefixes = list(map(_prefix.__getitem__, classes))
            numbers = map(str, map(next, map(self._counters.__getitem__, prefixes)))
            self._shown.extend(map(str.__add__, prefixes, numbers))
            self._erased.extend(map(_erased.__getitem__, classes))
        if len(ids) == 1:
            return [self._shown[ids[0]]], [self._erased[ids[0]]]
        get = itemgetter(*ids)  # a tuple of each list's items (in C)
        return get(self._shown), get(self._erased)

    def table(self) -> dict[str, str]:
        """Symbol text -> new name of every symbol seen."""
        return dict(zip(self._ids, self._shown, strict=True))


# The digits of symbol texts, removed to leave their class (``%rd``; Unicode digits are digits to _PTX_SPLIT too):
#   %rd38
_DIGITS = re.compile(r"\d+")
_NO_DIGITS = str.maketrans("", "", "0123456789")


class _ClassNames(dict[str, str]):
    """A symbol class without digits (``%rd``, ``$L__BB_``) -> what its symbols are named with or erased to."""

    def __init__(self, erased: bool) -> None:
        super().__init__()
        self._erased = erased

    def __missing__(self, c: str) -> str:
        if c[0] == "$":
            got = "$L__BB_" if self._erased else "$L__BB"
        else:
            got = c + "_" if self._erased else c
        self[c] = got
        return got


_prefix = _ClassNames(erased=False)
_erased = _ClassNames(erased=True)
