"""Text helpers shared by every dialect normalizer, the fact extractors and the location map (written once):
strings, trailing comments, top-level comma split, balanced parentheses, ``loc(...)`` stripping, kernel names."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

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
