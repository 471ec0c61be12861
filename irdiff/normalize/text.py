"""Text helpers shared by every dialect normalizer, the fact extractors and the location map (written once):
strings, trailing comments, top-level comma split, balanced parentheses, ``loc(...)`` stripping, kernel names."""

from __future__ import annotations

import re
from dataclasses import dataclass

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


def matching_paren(s: str, open_idx: int, opens: str = "(", closes: str = ")") -> int:
    """Index of the closer matching the opener at ``s[open_idx]`` (``(`` by default; ``opens="(["`` counts brackets
    too), skipping ``"..."`` strings with backslash escapes; -1 when it is not closed."""
    depth = 0
    i = open_idx
    n = len(s)
    while i < n:
        c = s[i]
        if c == '"':
            i += 1
            while i < n and s[i] != '"':
                i += 2 if s[i] == "\\" else 1
        elif c in opens:
            depth += 1
        elif c in closes:
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
    out: list[str] = []
    i = 0
    n = len(line)
    while i < n:
        c = line[i]
        if c == '"' and quoted:
            j = i + 1
            while j < n and line[j] != '"':
                j += 2 if line[j] == "\\" else 1
            out.append(line[i : j + 1])
            i = j + 1
            continue
        if line.startswith(_LOC_OPEN, i) and (i == 0 or not (line[i - 1].isalnum() or line[i - 1] in _LOC_WORD)):
            close = matching_paren(line, i + 3)
            if close < 0:
                close = n - 1
            while eat_blanks and out and out[-1].endswith((" ", "\t")):
                out[-1] = out[-1].rstrip(" \t")
                if out[-1]:
                    break
                out.pop()
            i = close + 1
            continue
        out.append(c)
        i += 1
    return "".join(out)
