"""PTX (``make_ptx``): comments, ``.loc``/``.file``, debug labels and sections dropped; registers renumbered per
class and ``$L__BB`` labels by first appearance."""

from __future__ import annotations

import re
from collections.abc import Iterator

from irdiff.normalize.builder import Builder, BulkBuilder, Sym, Symbols, lookup_in_order
from irdiff.normalize.model import LazyPerLine, NormalizedStage, Region
from irdiff.normalize.text import (
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


def _kept_lines(raw_lines: list[str], kernel_name: str | None) -> Iterator[tuple[int, str]]:
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


def normalize_ptx(out: Builder | BulkBuilder, raw_lines: list[str], kernel_name: str | None) -> None:
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


def normalize_ptx_fast(stage: str, text: str, raw_lines: list[str], kernel_name: str | None) -> NormalizedStage | None:
    """The same result as :func:`normalize_ptx` in linear time and little memory on huge texts (a 10 MB function:
    ``benchmarks/bench_align_large.py``), or None when a kept line holds a ``"`` (then symbols inside strings must be
    skipped: the general normalizer does that).

    Symbols are found and renamed over chunks of lines with one regex split each (C speed); a symbol's new name
    depends only on its text (``%rd38`` → ``%rd`` and its class's next number), so first-appearance numbering over
    the chunks in order is the same as line by line. Per-line :attr:`~NormalizedStage.symbols` and
    :attr:`~NormalizedStage.symbol_spans` are computed when read (:class:`~irdiff.normalize.model.LazyPerLine`)
    from the raw line, which is normalized again the same way.
    """
    lines: list[str] = []
    shapes: list[str] = []
    raw_line: list[int] = []
    regions: list[Region] = []
    structure = _Structure(regions)
    names = _Names()
    shape_pool: dict[str, str] = {}  # one string per distinct shape (most lines of a big kernel share a few)
    chunk: list[str] = []

    def flush() -> None:
        joined = "\n".join(chunk)
        chunk.clear()
        if '"' in joined:
            raise _HasStrings
        parts = _PTX_SPLIT.split(joined)
        parts[1::2] = lookup_in_order(names, parts[1::2])  # new symbols named in order of appearance (_Names)
        lines.extend("".join(parts).split("\n"))
        for erase, to in _ERASE:  # the shape: each symbol erased to its class (one C pass per class)
            joined = erase(to, joined)
        got = joined.split("\n")
        shapes.extend(map(shape_pool.setdefault, got, got))

    kpat = kernel_pattern(kernel_name)
    kname = kernel_name or None
    drop = _PTX_DROP.match
    section = _PTX_DEBUG_SECTION.match
    try:  # _kept_lines and the structure, inlined: this loop runs once per line of a huge text
        for rawno, line in enumerate(raw_lines, start=1):
            if ".section" in line and section(line):
                break
            if drop(line):
                continue
            if "//" in line:
                line = strip_comment(line, "//")
            line = line.rstrip()
            if not line:
                continue
            if kname is not None and kname in line:
                line = replace_kernel(line, kpat)
            if "{" in line or "}" in line or "$L__BB" in line or ".entry" in line or ".func" in line:
                structure.line(len(raw_line), rawno, line)
            raw_line.append(rawno)
            chunk.append(line)
            if len(chunk) >= _CHUNK:
                flush()
        if chunk:
            flush()
    except _HasStrings:
        return None
    structure.finish(len(raw_line))
    regions.sort(key=lambda r: (r.start, -r.end))
    kpat = kernel_pattern(kernel_name)
    both: list[tuple[list[tuple[str, ...]], list[tuple[tuple[int, int], ...]]]] = []

    def per_line() -> tuple[list[tuple[str, ...]], list[tuple[tuple[int, int], ...]]]:
        """Symbols and their spans of every line, from the raw lines normalized again the same way."""
        if both:
            return both[0]
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


class _Names(dict[str, str]):
    """Symbol text (``%rd38``) → new name (``%rd7``): a symbol not seen before is named on its first lookup, its
    class's next number, so looking up a text's symbols in order numbers them by first appearance (the lookups
    run in C; only a new symbol costs a Python call: ~1.6 × 10^5 of ~6 × 10^5 uses in a 10 MB function)."""

    def __init__(self) -> None:
        super().__init__()
        self.counters: dict[str, int] = {}

    def __missing__(self, s: str) -> str:
        c = _quick(s)[3]  # the class: $L__BB, %r, %rd, ... (a Unicode digit is a digit too)
        n = self.counters.get(c, 0)
        self.counters[c] = n + 1
        name = self[s] = c + str(n)
        return name


# The shape of a chunk of kept lines: every symbol of _PTX_SPLIT erased to its class (``%rd38`` → ``%rd_``,
# ``$L__BB0_1`` → ``$L__BB_``), one literal-replacement pass per class (C speed; at most one class can match at a
# ``%``, and no replacement makes or breaks a match of another class):
#   @%p2 ld.global.b16 { %rs1 }, [ %rd38 + 0 ];
_ERASE = [(re.compile(f"%{c}\\d+\\b").sub, f"%{c}_") for c in _CLASSES]
_ERASE.append((re.compile(r"\$L__BB\d+_\d+\b").sub, "$L__BB_"))


class _HasStrings(Exception):
    pass
