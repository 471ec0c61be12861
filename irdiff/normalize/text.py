"""Text helpers shared by every dialect normalizer, the fact extractors and the location map (written once):
strings, trailing comments, top-level comma split, balanced parentheses, ``loc(...)`` stripping, kernel names."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import overload

# A double-quoted string with backslash escapes (to the end of the line when unterminated):
#   #loc = loc("/work/wt/arch/tests/suites/diag_copy.py":40:1)
_STRING = re.compile(r'"(?:[^"\\]|\\.)*(?:"|$)')


def split_strings(line: str) -> list[tuple[bool, str]]:
    """Split a line into (is_string, text) segments; strings are ``"..."`` with backslash escapes."""
    if '"' not in line:
        return [(False, line)]
    out: list[tuple[bool, str]] = []
    pos = 0
    for m in _STRING.finditer(line):
        if m.start() > pos:
            out.append((False, line[pos : m.start()]))
        out.append((True, m.group(0)))
        pos = m.end()
    if pos < len(line):
        out.append((False, line[pos:]))
    return out


def strip_comment(line: str, marker: str) -> str:
    """Remove a trailing comment that starts with ``marker`` outside strings."""
    if marker not in line:
        return line
    acc: list[str] = []
    for is_str, seg in split_strings(line):
        if not is_str:
            k = seg.find(marker)
            if k >= 0:
                acc.append(seg[:k])
                return "".join(acc)
        acc.append(seg)
    return "".join(acc)


def split_top_level(s: str, sep: str = ",") -> list[str]:
    """Split ``s`` on ``sep`` where it is not nested in ()[]{}<> or inside a ``"..."`` string.

    Example: ``split_top_level("%a: tensor<4x!tt.ptr<f16>>, %b: i32")`` gives ``["%a: tensor<4x!tt.ptr<f16>>",
    " %b: i32"]``; ``split_top_level('#a at #b', " at ")`` gives ``["#a", "#b"]``. Parts are not stripped.
    """
    out: list[str] = []
    depth = 0
    cur: list[str] = []
    for is_str, seg in split_strings(s):
        if is_str:
            cur.append(seg)
            continue
        i = 0
        while i < len(seg):
            ch = seg[i]
            if ch in "([{<":
                depth += 1
            elif ch in ")]}>":
                depth = max(0, depth - 1)
            if depth == 0 and seg.startswith(sep, i):
                out.append("".join(cur))
                cur = []
                i += len(sep)
                continue
            cur.append(ch)
            i += 1
    out.append("".join(cur))
    return out


@lru_cache(maxsize=16)
def _paren_scan(opens: str, closes: str) -> re.Pattern[str]:
    """A pattern finding the next quote, opener or closer."""
    return re.compile('["' + re.escape(opens + closes) + "]")


def matching_paren(s: str, open_idx: int, opens: str = "(", closes: str = ")") -> int:
    """Index of the closer matching the opener at ``s[open_idx]`` (``(`` by default; ``opens="(["`` counts brackets
    too), skipping ``"..."`` strings with backslash escapes; -1 when it is not closed. Jumps between quotes and
    brackets with one compiled scan per bracket set (the location maps call it for every ``loc(``)."""
    pat = _paren_scan(opens, closes)
    depth = 0
    i = open_idx
    n = len(s)
    search = pat.search
    while i < n:
        m = search(s, i)
        if m is None:
            return -1
        i = m.start()
        c = s[i]
        if c == '"':
            i += 1
            while i < n and s[i] != '"':
                i += 2 if s[i] == "\\" else 1
        elif c in opens:
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


@dataclass(frozen=True)
class Kernel:
    name: str
    pat: re.Pattern[str]


def kernel_pattern(kernel_name: str | None) -> Kernel | None:
    if not kernel_name:
        return None
    return Kernel(kernel_name, re.compile(r"(?<![\w$.])" + re.escape(kernel_name) + r"(?=_param_\d|[^\w$.]|$)"))


def replace_kernel(line: str, k: Kernel | None) -> str:
    if k is None or k.name not in line:
        return line
    return k.pat.sub("KERNEL", line)


# A location ends an MLIR op and annotates block/function arguments; the word boundary keeps ``myloc(`` intact:
#   %offs = tt.get_program_id x : i32 loc(#loc14)
#   tt.func public @copy_annotated(%x_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32} loc("x_ptr"(#loc)), ...
_LOC_OPEN = "loc("
_LOC_WORD = "_$.#"
# The next quote or ``loc(`` (with ``quoted``), or the next ``loc(``: the scanner jumps between them.
#   %x = tt.load %p {tt.note = "a loc( in a string"} : tensor<128x!tt.ptr<f32>> loc(#loc12)
_SCAN_Q = re.compile(r'"|loc\(')
#   %offs = tt.get_program_id x : i32 loc(#loc14)
_SCAN = re.compile(r"loc\(")


def strip_locs(line: str, *, eat_blanks: bool = True, quoted: bool = True) -> str:
    """Remove every ``loc(...)`` (balanced, strings skipped) and, with ``eat_blanks``, the blanks before it. With
    ``quoted`` a ``loc(`` inside a ``"..."`` string outside any location is kept; without, quotes outside locations
    are plain characters (an unbalanced ``"`` in a cut line does not hide the locations after it).

    The one ``loc(...)`` scanner of irdiff: the normalizers drop locations with it and the fact extractors
    (:func:`irdiff.diagnose.facts.strip_loc`) read lines without them; :mod:`irdiff.normalize.locations` parses them
    with :func:`matching_paren`.
    """
    if _LOC_OPEN not in line:
        return line
    k = line.find(_LOC_OPEN)
    if (
        line[-1] == ")"
        and '"' not in line
        and line.find(_LOC_OPEN, k + 4) < 0
        and (k == 0 or not (line[k - 1].isalnum() or line[k - 1] in _LOC_WORD))
        and "(" not in line[k + 4 : -1]
        and ")" not in line[k + 4 : -1]
    ):
        # the common case, one trailing ``loc(#loc12)``: no scan needed
        return line[:k].rstrip(" \t") if eat_blanks else line[:k]
    search = (_SCAN_Q if quoted else _SCAN).search
    out: list[str] = []
    n = len(line)
    pos = i = 0
    while True:
        m = search(line, i)
        if m is None:
            break
        j = m.start()
        if line[j] == '"':
            k = j + 1
            while k < n and line[k] != '"':
                k += 2 if line[k] == "\\" else 1
            i = k + 1
            continue
        if j > 0 and (line[j - 1].isalnum() or line[j - 1] in _LOC_WORD):
            i = j + 1
            continue
        out.append(line[pos:j])
        close = matching_paren(line, j + 3)
        if close < 0:
            close = n - 1
        while eat_blanks and out and out[-1].endswith((" ", "\t")):
            out[-1] = out[-1].rstrip(" \t")
            if out[-1]:
                break
            out.pop()
        pos = i = close + 1
    out.append(line[pos:])
    return "".join(out)


def lines_at(joined: str, positions: list[int]) -> list[int]:
    """The 0-based line of each of ``positions`` (ascending offsets into ``joined``, whose lines end at line breaks),
    counted in one pass (in C per stretch), each line once: for the whole-text paths of the LLIR and SASS
    normalizers, which find matches in a joined chunk and need their lines."""
    out: list[int] = []
    line = prev = 0
    for p in positions:
        line += joined.count("\n", prev, p)
        prev = p
        if not out or out[-1] != line:
            out.append(line)
    return out


# Line breaks of str.splitlines other than "\n": a text without any is split at "\n" alone.
_OTHER_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e"
# A text at least this long (characters) is split into lines a piece at a time (:func:`raw_lines_of`).
LAZY_LINES_CHARS = 1 << 21
# Characters per piece of a :class:`RawLines` (each ends at a line break): ~10^4 lines of a Triton stage.
RAW_PIECE_CHARS = 1 << 19


def raw_lines_of(text: str) -> Sequence[str]:
    """``text.splitlines()``, as a :class:`RawLines` (split a piece at a time) for a text of at least
    :data:`LAZY_LINES_CHARS` characters whose only line break is ``"\\n"`` (ASCII, none of :data:`_OTHER_BREAKS`),
    else as the list."""
    if len(text) >= LAZY_LINES_CHARS and text.isascii() and not any(c in text for c in _OTHER_BREAKS):
        return RawLines(text)
    return text.splitlines()


class RawLines(Sequence[str]):
    """The lines of a text whose only line break is ``"\\n"`` (``text.splitlines()``: the same items), split a piece
    of :data:`RAW_PIECE_CHARS` characters at a time when read, so a normalizer reading them in order holds one
    piece's lines (~1 MB) rather than all of them (a 10 MB side: 150-270 thousand strings, 16-25 MB, the largest
    single item of its peak memory, ``benchmarks/bench_align_large.py``). Reading them again splits them again;
    a slice is a list."""

    def __init__(self, text: str) -> None:
        self.text = text
        starts = [0]  # character offset of each piece
        firsts = [0]  # index of each piece's first line
        n, pos = 0, 0
        while pos < len(text):
            end = text.find("\n", pos + RAW_PIECE_CHARS - 1)
            end = len(text) if end < 0 else end + 1
            n += text.count("\n", pos, end) + (text[end - 1] != "\n")
            starts.append(end)
            firsts.append(n)
            pos = end
        self._starts = starts
        self._firsts = firsts
        self._n = n
        self._cached = -1  # the piece whose lines are held
        self._lines: list[str] = []

    def _piece(self, k: int) -> list[str]:
        if k != self._cached:
            self._lines = self.text[self._starts[k] : self._starts[k + 1]].splitlines()
            self._cached = k
        return self._lines

    def __len__(self) -> int:
        return self._n

    def __iter__(self) -> Iterator[str]:
        for k in range(len(self._starts) - 1):
            yield from self.text[self._starts[k] : self._starts[k + 1]].splitlines()

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...
    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            start, stop, step = i.indices(self._n)
            if step != 1:
                return [self[j] for j in range(start, stop, step)]
            out: list[str] = []
            while start < stop:
                k = bisect_right(self._firsts, start) - 1
                first = self._firsts[k]
                got = self._piece(k)[start - first : stop - first]
                out.extend(got)
                start += len(got)
            return out
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError("line index out of range")
        k = bisect_right(self._firsts, i) - 1
        return self._piece(k)[i - self._firsts[k]]
