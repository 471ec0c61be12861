"""Terminal rendering of a :class:`~irdiff.render.Comparison`: summary, findings, stage 0, then every stage's hunks.

Layout, top to bottom (what fits on one screen comes first):

1. **Summary**: suite, target, Triton/ptxas versions, which variant is ``-`` and which ``+``; per stage the lines
   removed/added after normalization and the key operation counts of both variants
   (``irdiff.diagnose.counts.KEY_COUNTS``, shown ``a|b``, differing counts emphasised); registers/spills/shared
   memory from ptxas.
2. **Findings** (when a diagnosis is present): one line each (severity, id, title), the explanation below it.
3. **Stage 0**: the JIT's specialization of each argument (type, divisibility, constexpr value, reason), both
   variants side by side, rows that differ marked ``*``.
4. **Hunks** of each stage in pipeline order, unified (``-`` = ``a`` = ``--variant``, ``+`` = ``b`` =
   ``--against``) or side by side (width-aware: long lines wrap onto at most :attr:`TerminalOptions.max_wrap`
   rows, then are cut with ``…``). Gutters show raw line numbers (the line in the stage file of the bundle), once
   per run of lines from one raw line (a split ``tt.func``/``define`` signature is numbered on its first line);
   SASS control codes are shown as a column in the unified view. Line texts are the aligner's, in which both
   sides' symbols are renamed together (``irdiff.align``), so a context line reads the same on either side.

Styling is data until the last step (delta's approach): each line becomes a list of ``(text, Style)`` segments in
which pygments' token colours (foreground, :mod:`irdiff.lexers`) and the aligner's changed-token spans (background)
are superimposed; ANSI escapes (256-colour SGR only, so ``less -R`` passes them) are emitted at the very end. With
colour off, nothing is lexed and the output is plain text.

Terminal behaviour: :func:`color_enabled` (``--color auto|always|never``, ``NO_COLOR``, ``FORCE_COLOR``,
``TERM=dumb``) and :func:`emit` (``--paging auto|always|never``, ``IRDIFF_PAGER``/``PAGER``/``less`` with
``LESS=FRX``, a quiet broken pipe), as git and delta do.

Size: over 800 lines because the terminal layout (summary, findings, stage 0, unified and side-by-side hunks,
colours, pager) is one renderer; splitting it would spread one format over several modules.
"""

from __future__ import annotations

import operator
import os
import re
import shlex
import shutil
import signal
import sys
import textwrap
import time
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, NamedTuple

from pygments.token import Comment, Error, Keyword, Name, Number, String, _TokenType

from irdiff.render import Comparison, SpecRow, resource_rows, spec_rows, stage_summaries
from irdiff.render.order import ROLE_LABELS, present_findings, standalone_verdict
from irdiff.render.views import shapes_note
from irdiff.textsafe import clean_chars

if TYPE_CHECKING:
    from irdiff.align import DiffLine, Hunk, Span, StageDiff
    from irdiff.normalize import NormalizedStage

__all__ = [
    "THEMES",
    "Theme",
    "choose_theme",
    "contrast",
    "TerminalOptions",
    "render",
    "render_stage_text",
    "paint_text",
    "color_enabled",
    "terminal_width",
    "emit",
]

# --------------------------------------------------------------------------------------------------------------
# Styles
# --------------------------------------------------------------------------------------------------------------


class Style(NamedTuple):
    """One segment's look: 256-colour foreground/background indices (None = terminal default), bold, dim."""

    fg: int | None = None
    bg: int | None = None
    bold: bool = False
    dim: bool = False


PLAIN = Style()
RESET = "\x1b[0m"

# Syntax foregrounds (xterm-256 indices), looked up along the token's parents (Keyword.Type → Keyword → ...).
TOKEN_FG: dict[_TokenType, Style] = {
    Comment: Style(fg=244),
    Keyword: Style(fg=75),
    Keyword.Type: Style(fg=80),
    Keyword.Constant: Style(fg=141),
    Keyword.Reserved: Style(fg=110),
    Name.Function: Style(fg=214, bold=True),
    Name.Label: Style(fg=214),
    Name.Constant: Style(fg=176),
    Name.Builtin: Style(fg=141),
    Name.Attribute: Style(fg=152),
    Name.Decorator: Style(fg=205),
    Number: Style(fg=179),
    String: Style(fg=114),
    Error: PLAIN,
}

# Diff backgrounds (delta's dark defaults in 256 colours): whole changed line, and its changed tokens.
MINUS_BG, MINUS_EMPH_BG = 52, 88
PLUS_BG, PLUS_EMPH_BG = 22, 28
S_MINUS_SIGN = Style(fg=203, bold=True)
S_PLUS_SIGN = Style(fg=77, bold=True)
S_GUTTER = Style(fg=242)
S_CTRL = Style(fg=244)
S_HUNK = Style(fg=73)
S_HUNK_HEADER = Style(bold=True)
S_STAGE = Style(fg=75, bold=True)
S_TITLE = Style(bold=True)
S_DIM = Style(fg=245)
S_DIFFERS = Style(fg=220, bold=True)
S_MINUS_NAME = Style(fg=203)
S_PLUS_NAME = Style(fg=77)
SEVERITY_STYLE = {
    "critical": Style(fg=196, bold=True),
    "major": Style(fg=208, bold=True),
    "minor": Style(fg=178),
    "info": Style(fg=75),
}


# --------------------------------------------------------------------------------------------------------------
# Themes: the styles above are written in the dark palette; a theme maps them to its own colours when painting
# --------------------------------------------------------------------------------------------------------------


def xterm_rgb(index: int) -> tuple[int, int, int]:
    """The RGB value (0-255 each) xterm shows for a 256-colour index (16 system colours, 6×6×6 cube, 24 greys)."""
    if index < 16:
        return _SYSTEM_RGB[index]
    if index < 232:
        i = index - 16
        return (_CUBE[i // 36], _CUBE[(i // 6) % 6], _CUBE[i % 6])
    v = 8 + 10 * (index - 232)
    return (v, v, v)


_SYSTEM_RGB = [
    (0, 0, 0), (205, 0, 0), (0, 205, 0), (205, 205, 0), (0, 0, 238), (205, 0, 205), (0, 205, 205), (229, 229, 229),
    (127, 127, 127), (255, 0, 0), (0, 255, 0), (255, 255, 0), (92, 92, 255), (255, 0, 255), (0, 255, 255),
    (255, 255, 255),
]  # fmt: skip
_CUBE = (0, 95, 135, 175, 215, 255)


def _luminance(rgb: tuple[float, float, float]) -> float:
    def ch(x: float) -> float:
        x /= 255
        return x / 12.92 if x <= 0.03928 else ((x + 0.055) / 1.055) ** 2.4

    r, g, b = rgb
    return 0.2126 * ch(r) + 0.7152 * ch(g) + 0.0722 * ch(b)


def contrast(fg: int, bg: int) -> float:
    """WCAG contrast ratio (1 … 21) of two xterm-256 colours; 4.5 is the minimum for body text (WCAG AA)."""
    a, b = _luminance(xterm_rgb(fg)), _luminance(xterm_rgb(bg))
    return (max(a, b) + 0.05) / (min(a, b) + 0.05)


# Text with no syntax colour on a diff background gets a foreground of at least MIN_CONTRAST (WCAG AA for body
# text); a syntax colour is kept on a diff background down to MIN_TOKEN_CONTRAST (WCAG AA for large text and UI
# components), so changed lines stay highlighted; below that it is replaced like plain text.
MIN_CONTRAST = 4.5
MIN_TOKEN_CONTRAST = 3.0


@dataclass(frozen=True)
class Theme:
    """A palette: how the dark-palette styles of this module are painted.

    :ivar name: ``dark``, ``light`` or ``mono``.
    :ivar fg: dark-palette foreground index → this theme's index (missing: unchanged).
    :ivar bg: dark-palette background index → this theme's index (missing: unchanged).
    :ivar text: foregrounds for text on a diff background whose own colour (or the terminal's default, which irdiff
        cannot know) would read below :data:`MIN_CONTRAST`; the one with the best contrast is used.
    :ivar mono: no colours at all: bold and dim kept, changed tokens in reverse video.
    """

    name: str
    fg: Mapping[int, int]
    bg: Mapping[int, int]
    text: tuple[int, ...] = (253, 234)
    mono: bool = False


DARK = Theme("dark", {}, {}, (253, 234, 231, 16))
LIGHT = Theme(
    "light",
    fg={
        244: 241, 75: 25, 80: 30, 141: 91, 110: 24, 214: 130, 176: 127, 152: 31, 205: 161, 179: 94, 114: 28,
        203: 160, 77: 28, 242: 244, 73: 30, 245: 243, 220: 130, 196: 160, 208: 166, 178: 136,
    },
    bg={MINUS_BG: 224, MINUS_EMPH_BG: 217, PLUS_BG: 194, PLUS_EMPH_BG: 157},
    text=(235, 16, 253),
)  # fmt: skip
MONO = Theme("mono", {}, {}, (), mono=True)
THEMES: dict[str, Theme] = {t.name: t for t in (DARK, LIGHT, MONO)}
# The palette in use and its escapes made so far (a style's escape depends only on the style and the palette).
_THEME: ContextVar[tuple[Theme, dict[Style, str]]] = ContextVar("irdiff_terminal_theme", default=(DARK, {}))


@contextmanager
def _using(theme: str | Theme) -> Iterator[None]:
    token = _THEME.set((theme if isinstance(theme, Theme) else THEMES[theme], {}))
    try:
        yield
    finally:
        _THEME.reset(token)


def _sgr(st: Style) -> str:
    theme, made = _THEME.get()
    code = made.get(st)
    if code is None:
        code = made[st] = _make_sgr(st, theme)
    return code


def _make_sgr(st: Style, theme: Theme) -> str:
    if st == PLAIN:
        return RESET
    codes = ["0"]
    if st.bold:
        codes.append("1")
    if st.dim:
        codes.append("2")
    if theme.mono:
        if st.bg in (MINUS_EMPH_BG, PLUS_EMPH_BG):
            codes.append("7")
        return "\x1b[" + ";".join(codes) + "m"
    fg = theme.fg.get(st.fg, st.fg) if st.fg is not None else None
    bg = theme.bg.get(st.bg, st.bg) if st.bg is not None else None
    if bg is not None and (fg is None or contrast(fg, bg) < MIN_TOKEN_CONTRAST) and theme.text:
        fg = next((c for c in theme.text if contrast(c, bg) >= MIN_CONTRAST), None)
        if fg is None:
            fg = max(theme.text, key=lambda c: contrast(c, bg))
    if fg is not None:
        codes.append(f"38;5;{fg}")
    if bg is not None:
        codes.append(f"48;5;{bg}")
    return "\x1b[" + ";".join(codes) + "m"


Seg = tuple[str, Style]


def _paint(segs: Iterable[Seg], color: bool) -> str:
    """Segments → text; with colour, one SGR per style change and a reset at the end."""
    if not color:
        return "".join(clean_chars(t, newlines=True) for t, _ in segs)
    out: list[str] = []
    cur = RESET  # compared as escape codes: styles a theme paints alike (mono) need no new escape
    segs = list(segs)
    joined = "".join(t for t, _ in segs)
    inert = clean_chars(joined, newlines=True) is joined  # no control character in any segment (the usual case)
    for text, st in segs:
        if not text:
            continue
        if not inert:
            text = clean_chars(text, newlines=True)  # the output boundary: every segment, whatever produced it
        code = _sgr(st)
        if code != cur:
            out.append(code)
            cur = code
        out.append(text)
    if cur != RESET:
        out.append(RESET)
    return "".join(out)


# Roles of :func:`paint_text` (pieces of text outside a diff: headers, tables, status words).
TEXT_ROLES: dict[str, Style] = {
    "title": S_TITLE,
    "minus": S_MINUS_NAME,
    "plus": S_PLUS_NAME,
    "differs": S_DIFFERS,
    "error": Style(fg=196, bold=True),
    "dim": S_DIM,
}


def paint_text(text: str, role: str, *, color: bool, theme: str = "dark") -> str:
    """``text`` in the style ``role`` (:data:`TEXT_ROLES`: ``title``, ``minus``, ``plus``, ``differs``, ``error``,
    ``dim``) of the palette ``theme`` (``dark``, ``light``, ``mono``), for other renderers' tables and headers, so
    that they follow ``--theme`` like the diff does. Control characters are made visible as everywhere else.

    :raises KeyError: an unknown role or theme.
    """
    style = TEXT_ROLES[role]
    if not color:
        return _paint([_s(text, style)], False)
    with _using(theme):
        return _paint([_s(text, style)], True)


def _line(segs: list[Seg], color: bool) -> str:
    """Paint one output line without trailing blanks (blanks on a background stay: they are visible)."""
    segs = list(segs)
    while segs:
        text, st = segs[-1]
        if st.bg is not None:
            break
        stripped = text.rstrip()
        if stripped:
            segs[-1] = (stripped, st)
            break
        segs.pop()
    return _paint(segs, color)


def _s(text: str, st: Style = PLAIN) -> Seg:
    return (text, st)


def _clean(text: str) -> str:
    """Control characters (C0 but tab, DEL, C1, bidi overrides) shown as U+FFFD, one column each
    (:func:`irdiff.textsafe.clean_chars`): text from a bundle or an IR file never moves the cursor or injects
    escapes."""
    return clean_chars(text)


def _char_width(ch: str) -> int:
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def _width(text: str) -> int:
    return len(text) if text.isascii() else sum(_char_width(c) for c in text)


def _seg_width(segs: Sequence[Seg]) -> int:
    return sum(_width(t) for t, _ in segs)


def _expand_tabs(segs: list[Seg], tabsize: int) -> list[Seg]:
    if not any("\t" in t for t, _ in segs):
        return segs
    out: list[Seg] = []
    col = 0
    for text, st in segs:
        buf: list[str] = []
        for ch in text:
            if ch == "\t":
                n = tabsize - col % tabsize
                buf.append(" " * n)
                col += n
            else:
                buf.append(ch)
                col += _char_width(ch)
        out.append(("".join(buf), st))
    return out


def _split_chars(segs: Sequence[Seg], n: int) -> tuple[list[Seg], list[Seg]]:
    """Split segments after ``n`` characters: (head, rest)."""
    head: list[Seg] = []
    for i, (text, st) in enumerate(segs):
        if n >= len(text):
            head.append((text, st))
            n -= len(text)
            continue
        if n:
            head.append((text[:n], st))
        rest = [(text[n:], st), *segs[i + 1 :]]
        return head, [x for x in rest if x[0]]
    return head, []


def _fitting_chars(text: str, width: int) -> int:
    """How many leading characters of ``text`` fit in ``width`` columns."""
    if text.isascii():  # one column each (IR lines nearly always)
        return max(0, min(len(text), width))
    used = 0
    for i, ch in enumerate(text):
        used += _char_width(ch)
        if used > width:
            return i
    return len(text)


def _split_at(segs: Sequence[Seg], width: int, soft: bool = True) -> tuple[list[Seg], list[Seg]]:
    """Split segments to fit ``width`` columns: (head, rest). With ``soft``, break after the last space or comma
    in the last 40% of the row rather than inside a word."""
    text = "".join(t for t, _ in segs)
    n = _fitting_chars(text, width)
    if soft and n < len(text):
        cut = max(text.rfind(" ", 0, n), text.rfind(",", 0, n)) + 1
        if cut >= max(1, int(n * 0.6)):
            head, rest = _split_chars(segs, cut)
            if rest and rest[0][0].startswith(" "):  # the space at the break is not carried to the next row
                rest = [(rest[0][0][1:], rest[0][1]), *rest[1:]] if len(rest[0][0]) > 1 else rest[1:]
            return head, rest
    return _split_chars(segs, max(1, n) if width > 0 else 0)


def _fit(segs: list[Seg], width: int, max_rows: int) -> list[list[Seg]]:
    """Wrap segments into rows of at most ``width`` columns; past ``max_rows`` the last row ends with ``…``."""
    if width <= 1:
        return [[]]
    rows: list[list[Seg]] = []
    rest = segs
    while True:
        if _seg_width(rest) <= width:
            rows.append(rest)
            return rows
        if len(rows) >= max_rows - 1:
            head, _ = _split_at(rest, width - 1, soft=False)
            rows.append([*head, ("…", S_DIM)])
            return rows
        head, rest = _split_at(rest, width)
        rows.append(head)


def _rstrip(segs: list[Seg]) -> list[Seg]:
    """Segments without trailing blanks (the space a soft wrap broke at), whatever their background."""
    segs = list(segs)
    while segs and not segs[-1][0].rstrip():
        segs.pop()
    if segs:
        segs[-1] = (segs[-1][0].rstrip(), segs[-1][1])
    return segs


def _pad(segs: list[Seg], width: int) -> list[Seg]:
    n = width - _seg_width(segs)
    return [*segs, (" " * n, PLAIN)] if n > 0 else segs


# --------------------------------------------------------------------------------------------------------------
# Syntax + diff emphasis → segments
# --------------------------------------------------------------------------------------------------------------


_STYLE_CACHE: dict[_TokenType, Style] = {}


def _token_style(ttype: _TokenType) -> Style:
    st = _STYLE_CACHE.get(ttype)
    if st is None:
        t: _TokenType | None = ttype
        st = PLAIN
        while t is not None:
            found = TOKEN_FG.get(t)
            if found is not None:
                st = found
                break
            t = t.parent
        _STYLE_CACHE[ttype] = st
    return st


LineTokens = list[tuple[int, int, Style]]


def _runs_of(indices: Iterable[int]) -> list[tuple[int, int]]:
    """Sorted indices → ``[(first, last + 1)]`` runs of consecutive indices."""
    out: list[tuple[int, int]] = []
    for i in sorted(set(indices)):
        if out and out[-1][1] == i:
            out[-1] = (out[-1][0], i + 1)
        else:
            out.append((i, i + 1))
    return out


def _lex_lines(
    stage: str, lines: Sequence[str], only: Iterable[int] | None = None, memo: str | None = None
) -> list[LineTokens]:
    """Lex the (normalized) lines of one side; return per line ``[(start, end, style)]``.

    :param only: indices of the lines that will be shown; each run of consecutive shown lines is lexed as one text
        (so constructs spanning lines keep their state), the rest is skipped. None lexes everything.
    :param memo: a directory of lexed lines (:class:`TerminalOptions` ``token_cache``): the tokens of these very
        runs of lines, lexed before by this lexer, are read from there instead (a warm coloured run imports no
        lexer); None lexes every time.
    """
    runs = _runs_of(range(len(lines)) if only is None else only)
    out: list[LineTokens] = [[] for _ in lines]
    if not lines:
        return out
    key = _token_key(stage, lines, runs) if memo is not None else None
    if memo is not None and key is not None:
        found = _read_tokens(memo, key, lines, runs)
        if found is not None:
            for i, s, e, ttype in found:
                st = _token_style(ttype)
                if st != PLAIN:
                    out[i].append((s, e, st))
            return out
    from irdiff.lexers import lexer_for_stage  # pygments' lexers: only a coloured report needs them

    lexer = lexer_for_stage(stage)
    if lexer is None:
        return out
    seen: list[tuple[int, int, int, _TokenType]] = []
    for first, stop in runs:
        chunk = lines[first:stop]
        starts = [0]
        for ln in chunk[:-1]:
            starts.append(starts[-1] + len(ln) + 1)
        li = 0
        for pos, ttype, value in lexer.get_tokens_unprocessed("\n".join(chunk)):
            st = _token_style(ttype)
            end = pos + len(value)
            while pos < end:
                while li + 1 < len(starts) and starts[li + 1] <= pos:
                    li += 1
                line_end = starts[li] + len(chunk[li])
                stop_at = min(end, line_end)
                if stop_at > pos and st != PLAIN:
                    out[first + li].append((pos - starts[li], stop_at - starts[li], st))
                    seen.append((first + li, pos - starts[li], stop_at - starts[li], ttype))
                pos = stop_at if stop_at > pos else pos + 1  # skip the newline between lines
    if memo is not None and key is not None:
        _write_tokens(memo, key, seen)
    return out


TOKENS_FORMAT = 1  # of the files in a token memo; part of their key
_TOKEN_NAME = re.compile(r"Token(?:\.[A-Z][A-Za-z0-9_]{0,40}){0,8}")
_LEXERS_DIGEST: list[str] = []


def _token_key(stage: str, lines: Sequence[str], runs: list[tuple[int, int]]) -> str | None:
    """sha256 over what lexing these runs depends on: the memo format, pygments' version, irdiff's lexers
    (``irdiff/lexers.py``, its content) and the stage's lexer alias, and the runs of lines; None when that cannot
    be read (then nothing is memoized)."""
    import hashlib

    import pygments

    from irdiff import stages

    if not _LEXERS_DIGEST:
        try:
            with open(
                os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lexers.py"), "rb"
            ) as f:
                _LEXERS_DIGEST.append(hashlib.sha256(f.read()).hexdigest())
        except OSError:
            return None
    st = stages.get(stage)
    h = hashlib.sha256(
        f"irdiff-tokens/{TOKENS_FORMAT}\0{pygments.__version__}\0{_LEXERS_DIGEST[0]}\0{stage}\0"
        f"{st.lexer if st is not None else None}\0".encode()
    )
    for first, stop in runs:
        h.update(f"\0{first}:{stop}\0".encode())
        h.update("\n".join(lines[first:stop]).encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def _read_tokens(
    memo: str, key: str, lines: Sequence[str], runs: list[tuple[int, int]]
) -> list[tuple[int, int, int, _TokenType]] | None:
    """The tokens stored under ``key``, or None when missing or of any unexpected shape (the memo is untrusted
    cache data: every token must lie inside a shown line and name a pygments token type)."""
    import json
    import zlib

    from pygments.token import Token

    try:
        with open(os.path.join(memo, key + ".json.z"), "rb") as f:
            data = json.loads(zlib.decompress(f.read()).decode("utf-8"))
    except (OSError, ValueError, zlib.error, UnicodeDecodeError, RecursionError):
        return None
    if not (type(data) is dict and data.get("format") == TOKENS_FORMAT and data.get("key") == key):
        return None
    names, flat = data.get("types"), data.get("tokens")
    if not (type(names) is list and type(flat) is list and len(flat) % 4 == 0):
        return None
    types: list[_TokenType] = []
    for name in names:
        if type(name) is not str or not _TOKEN_NAME.fullmatch(name):
            return None
        t = Token
        for part in name.split(".")[1:]:
            t = getattr(t, part)
        types.append(t)
    if not flat:
        return []
    if set(map(type, flat)) != {int}:  # checked in bulk: a shown TTGIR hunk has thousands of tokens
        return None
    li, starts, ends, ti = flat[0::4], flat[1::4], flat[2::4], flat[3::4]
    if min(li) < 0 or max(li) >= len(lines) or min(starts) < 0 or min(ti) < 0 or max(ti) >= len(types):
        return None
    shown = bytearray(len(lines))
    for first, stop in runs:
        shown[first:stop] = b"\x01" * (stop - first)
    widths = [len(ln) for ln in lines]
    if not all(map(shown.__getitem__, li)) or not all(map(operator.lt, starts, ends)):
        return None
    if not all(map(operator.le, ends, map(widths.__getitem__, li))):
        return None
    return list(zip(li, starts, ends, map(types.__getitem__, ti), strict=True))


def _write_tokens(memo: str, key: str, seen: list[tuple[int, int, int, _TokenType]]) -> None:
    """Store the tokens of one call (best effort: the memo is only an accelerator)."""
    import json
    import zlib
    from pathlib import Path

    from irdiff.bundle import atomic_write

    index: dict[_TokenType, int] = {}
    flat: list[int] = []
    for i, s, e, t in seen:
        flat += (i, s, e, index.setdefault(t, len(index)))
    data = {"format": TOKENS_FORMAT, "key": key, "types": [str(t) for t in index], "tokens": flat}
    try:
        os.makedirs(memo, exist_ok=True)
        atomic_write(Path(memo) / f"{key}.json.z", zlib.compress(json.dumps(data).encode(), 1))
    except OSError:
        return
    _prune_tokens(memo)


TOKENS_MAX_FILES = 4096  # the token memo's bound (entries are ~0.2-10 kB: a few MB at most)


def _prune_tokens(memo: str) -> None:
    """Above :data:`TOKENS_MAX_FILES` entries, remove the least recently written quarter (best effort)."""
    try:
        names = [n for n in os.listdir(memo) if n.endswith(".json.z")]
        if len(names) <= TOKENS_MAX_FILES:
            return
        dated = sorted((os.stat(os.path.join(memo, n)).st_mtime_ns, n) for n in names)
    except OSError:
        return
    for _, n in dated[: len(names) - TOKENS_MAX_FILES * 3 // 4]:
        try:
            os.unlink(os.path.join(memo, n))
        except OSError:
            pass


def _line_segments(
    text: str, toks: LineTokens | None, bg: int | None, emph_bg: int | None, spans: Sequence[Span]
) -> list[Seg]:
    """Superimpose syntax foregrounds and diff backgrounds over one line."""
    text = _clean(text)
    if toks is None:  # colour off
        return [(text, PLAIN)]
    n = len(text)
    fg: list[Style] = [PLAIN] * n
    cuts = {0, n}  # foreground and emphasis change only at a token's or a span's ends
    for s, e, st in toks:
        s, e = max(0, s), min(n, e)
        if s < e:
            fg[s:e] = [st] * (e - s)
            cuts.update((s, e))
    em = bytearray(n)
    for sp in spans:
        s, e = max(0, sp.start), min(n, sp.end)
        if s < e:
            em[s:e] = b"\x01" * (e - s)
            cuts.update((s, e))
    segs: list[Seg] = []
    i = 0
    for j in sorted(cuts):  # runs of equal (foreground, emphasis), as long as they go
        if j == i or (j < n and fg[j] == fg[i] and em[j] == em[i]):
            continue
        base = fg[i]
        segs.append((text[i:j], Style(base.fg, emph_bg if em[i] else bg, base.bold, base.dim)))
        i = j
    return segs


# --------------------------------------------------------------------------------------------------------------
# Options and the whole rendering
# --------------------------------------------------------------------------------------------------------------


@dataclass
class TerminalOptions:
    """How to render.

    :ivar color: emit ANSI colours (decide with :func:`color_enabled`).
    :ivar width: terminal width in columns (side-by-side layout, wrapping of the summary and findings).
    :ivar side_by_side: two columns (``a`` left, ``b`` right) instead of a unified diff.
    :ivar tabsize: tab stops for tabs inside IR lines (PTX, SASS).
    :ivar max_wrap: side-by-side: rows one long line may take before it is cut with ``…``.
    :ivar show_spec: print the stage-0 specialization table.
    :ivar stage0_full: print every stage-0 row; by default rows specialized alike (same type, divisibility and
        constexpr) are folded into one line naming them (``--stage0 full``).
    :ivar theme: palette: ``dark``, ``light`` or ``mono`` (:data:`THEMES`).
    :ivar token_cache: a directory where the syntax tokens of shown lines are kept, so that the same lines are not
        lexed again (the CLI passes ``<irdiff cache>/tokens``); None lexes every time.
    :ivar hunk_stages: stages whose hunks are printed (None: all); the others get one line in the summary and a
        pointer at the end, so the default output stays readable (LLIR/PTX/SASS diffs run to thousands of lines).
    :ivar sides: where each side came from, as the user gave it (a path as typed, ``--variant``, ``default pair``),
        shown in brackets after each side's kernel name; None: nothing is shown.
    :ivar title: the header's first words (``irdiff diff · matmul``); None: ``irdiff SUITE``, the main command.
    """

    color: bool = False
    width: int = 120
    side_by_side: bool = False
    tabsize: int = 4
    max_wrap: int = 4
    show_spec: bool = True
    hunk_stages: tuple[str, ...] | None = None
    theme: str = "dark"
    stage0_full: bool = False
    token_cache: str | None = None
    sides: tuple[str, str] | None = None
    title: str | None = None


def render(c: Comparison, opts: TerminalOptions | None = None) -> str:
    """The whole terminal report for a comparison (a string ending in a newline; ANSI only if ``opts.color``, in
    the palette ``opts.theme``: ``dark``, ``light`` or ``mono``).

    When every compared stage is identical after normalization the report is a single line saying so.

    :raises KeyError: unknown ``opts.theme``.
    """
    opts = opts or TerminalOptions()
    with _using(opts.theme):
        return _render(c, opts)


def _render(c: Comparison, opts: TerminalOptions) -> str:
    if c.stage_diffs and c.identical and not _spec_differs(c):
        return _paint([_s(_identical_line(c), S_TITLE)], opts.color) + "\n"
    out: list[str] = []
    out += _summary(c, opts)
    out += _findings(c, opts)
    if opts.show_spec:
        out += _spec_table(c, opts)
    hidden: list[StageDiff] = []
    for d in c.stage_diffs:
        if opts.hunk_stages is None or d.stage in opts.hunk_stages or d.identical:
            out += _stage(d, c, opts)
        else:
            hidden.append(d)
    if hidden:
        what = " · ".join(f"{d.stage} -{d.removed} +{d.added}" for d in hidden)
        names = ",".join(d.stage for d in hidden)
        out.append(
            _paint([_s(f"not shown: {what} changed lines; add --stage all (or --stage {names})", S_DIM)], opts.color)
        )
    return "\n".join(out) + "\n"


def _spec_differs(c: Comparison) -> bool:
    return any(r.differs for r in spec_rows(c))


def _identical_line(c: Comparison) -> str:
    """The one-line report of identical stages. When the variants' launch options differ (``num_warps``,
    ``num_stages``, ...: compile options, not part of the kernel's source), the line says the shown stages are
    identical but names the options that differ, since the compiled code below them does not have to be: with
    ``--stage python`` alone, identical sources launched with other options are not "identical"."""
    stages = ", ".join(d.stage for d in c.stage_diffs)
    how = "without normalization" if c.raw else "after normalization"
    va, vb = c.bundle.variants.get(c.a), c.bundle.variants.get(c.b)
    oa = dict(va.options) if va is not None else {}
    ob = dict(vb.options) if vb is not None else {}
    differ = [k for k in sorted(set(oa) | set(ob)) if oa.get(k) != ob.get(k)]
    if not differ:
        return f"{c.a} and {c.b} are identical {how} ({stages}; {c.bundle.target})"
    what = "sources" if [d.stage for d in c.stage_diffs] == ["python"] else "stages shown"
    opts = "; ".join(
        f"`{k}` = {'—' if oa.get(k) is None else oa.get(k)} in {c.a} vs {'—' if ob.get(k) is None else ob.get(k)} "
        f"in {c.b}"
        for k in differ
    )
    return (
        f"{c.a} and {c.b}: the {what} are identical {how} ({stages}; {c.bundle.target}), but the launch options "
        f"differ: {opts}"
    )


def _rule(title: list[Seg], width: int, color: bool, ch: str = "─") -> str:
    while len(title) > 1 and _seg_width(title) + 6 > width:  # a narrow terminal: the title's trailing parts go
        title = title[:-1]
    used = _seg_width(title)
    return _paint([_s(ch * 2 + " ", S_STAGE), *title, _s(" " + ch * max(2, width - used - 4), S_STAGE)], color)


def _wrap_items(prefix: list[Seg], items: list[list[Seg]], width: int, indent: int, sep: str = "  ") -> list[list[Seg]]:
    """Lay out items left to right, wrapping to ``width`` with a hanging indent (items are never split)."""
    rows: list[list[Seg]] = []
    cur = list(prefix)
    col = _seg_width(cur)
    first = True
    for it in items:
        w = _seg_width(it)
        if not first and col + len(sep) + w > width:
            rows.append(cur)
            cur, col, first = [_s(" " * indent)], indent, True
        if not first:
            cur.append(_s(sep))
            col += len(sep)
        cur += it
        col += w
        first = False
    rows.append(cur)
    return rows


def _summary(c: Comparison, opts: TerminalOptions) -> list[str]:
    b = c.bundle
    va, vb = b.variants[c.a], b.variants[c.b]
    color, width = opts.color, opts.width
    versions = " · ".join(
        x for x in (b.target, f"Triton {b.triton_version}" if b.triton_version else "", b.ptxas_version) if x
    )
    lines = [
        _paint([_s(opts.title or f"irdiff {b.suite}", S_TITLE), _s(f"  {c.a} vs {c.b}  ·  {versions}", S_DIM)], color),
    ]
    for sign, name, v, src, s_sign, s_name in (
        ("-", c.a, va, opts.sides[0] if opts.sides else "", S_MINUS_SIGN, S_MINUS_NAME),
        ("+", c.b, vb, opts.sides[1] if opts.sides else "", S_PLUS_SIGN, S_PLUS_NAME),
    ):
        tail = f" {v.kernel}" + (f"  ({src})" if src else "")
        lines.append(_line([_s(f"  {sign} ", s_sign), _s(f"{name:<14}", s_name), _s(tail, S_DIM)], color))
    if b.directory:
        lines.append(_paint([_s(f"    bundle {b.directory}", S_DIM)], color))
    lines.append("")
    sums = stage_summaries(c)
    how = "raw lines" if c.raw else "normalized lines"
    lines.append(_paint([_s(f"  {'stage':<7} {'-/+ ' + how:<24} key counts ({c.a}|{c.b})", S_DIM)], color))
    col0 = 2 + 7 + 1
    for s in sums:
        changes = "identical" if s.identical else f"-{s.removed} +{s.added}"
        prefix = [_s("  "), _s(f"{s.stage:<7} ", S_TITLE), _s(f"{changes:<24} ", S_DIM if s.identical else PLAIN)]
        items = [_count_item(k, x, y) for k, x, y in s.counts]
        for row in _wrap_items(prefix, items, width, col0 + 25):
            lines.append(_line(row, color))
    res = resource_rows(c)
    if res:
        items = [_count_item(k, x, y) for k, x, y in res]
        prefix = [_s("  "), _s(f"{'ptxas':<7} ", S_TITLE), _s(" " * 25)]
        for row in _wrap_items(prefix, items, width, col0 + 25):
            lines.append(_line(row, color))
    lines.append("")
    return lines


def _count_item(key: str, x: object, y: object) -> list[Seg]:
    st = S_DIFFERS if x != y else PLAIN
    return [_s(f"{key} ", S_DIM), _s(f"{x}|{y}", st)]


def _findings(c: Comparison, opts: TerminalOptions) -> list[str]:
    d = c.diagnosis
    if d is None:
        if c.diagnosis_error:
            return [_line([_s("findings unavailable: ", S_DIFFERS), _s(_clean(c.diagnosis_error))], opts.color), ""]
        return []
    color, width = opts.color, opts.width
    presented = present_findings(d)
    findings = [p.finding for p in presented]
    lines = [_rule([_s(f"findings ({len(findings)}: root → effects → unexplained)", S_TITLE)], width, color)]
    if not findings:
        lines.append(
            "  no findings: the compiled code is identical after normalization"
            if d.identical
            else "  no findings: the diagnostics found no known cause for the differences"
        )
    id_w = max((len(f.id) for f in findings), default=0)
    role = ""
    for p in presented:
        f = p.finding
        if p.role != role:
            role = p.role
            lines.append(_paint([_s(f"  {ROLE_LABELS[role]}", S_HUNK)], color))
        sev = str(f.severity)
        title_x = 2 + 8 + 1 + id_w + 2
        titles = textwrap.wrap(_clean(f.title), max(30, width - title_x)) or [""]
        lines.append(
            _line(
                [
                    _s("  "),
                    _s(f"{sev:<8}", SEVERITY_STYLE.get(sev, PLAIN)),
                    _s(f" {f.id:<{id_w}}  ", S_DIM),
                    _s(titles[0], S_TITLE),
                ],
                color,
            )
        )
        lines += [_paint([_s(" " * title_x), _s(t, S_TITLE)], color) for t in titles[1:]]
        body = _clean(" ".join(str(f.explanation).split()))
        wrap = max(40, width - 6)
        lines += ["      " + ln for ln in textwrap.wrap(body, wrap)]
        if f.causes:
            lines.append(_paint([_s("      caused by: ", S_DIM), _s(", ".join(f.causes))], color))
        if f.remedy:
            rem = textwrap.wrap(_clean(" ".join(str(f.remedy).split())), wrap - 8)
            lines += [
                _paint([_s("      remedy: " if i == 0 else "              ", S_DIM), _s(r)], color)
                for i, r in enumerate(rem)
            ]
    for note in getattr(d, "notes", None) or []:
        for i, ln in enumerate(textwrap.wrap(_clean(str(note)), max(40, width - 8))):
            lines.append(_line([_s("  note: " if i == 0 else "        ", S_DIM), _s(ln, S_DIM)], color))
    verdict = standalone_verdict(d)
    if verdict:  # else the timing finding says it: printed once
        lines += ["  " + ln for ln in textwrap.wrap(_clean(str(verdict)), max(40, width - 2))]
    lines.append("")
    return lines


def _spec_cells(s: Any) -> tuple[str, str, str]:
    if s is None:
        return ("—", "", "")
    return (s.type, str(s.divisibility) if s.divisibility else "", s.constexpr if s.constexpr is not None else "")


def _spec_table(c: Comparison, opts: TerminalOptions) -> list[str]:
    rows = spec_rows(c)
    if not rows:
        return []
    color, width = opts.color, opts.width
    cells = [(_spec_cells(r.a), _spec_cells(r.b)) for r in rows]
    name_w = max(8, *(len(r.name) for r in rows))
    tw = max(4, *(len(x[0]) for pair in cells for x in pair))
    dw = 3
    cw = max(9, *(len(x[2]) for pair in cells for x in pair))
    side_w = tw + 1 + dw + 1 + cw
    left = 4 + name_w + 1
    reason_x = left + side_w + 3 + side_w + 2
    reason_w = width - reason_x
    below = reason_w < 30
    out = [
        _rule(
            [_s("stage 0 · specialization", S_TITLE), _s(" (the JIT's binder: type, divisibility, constexpr)", S_DIM)],
            width,
            color,
        )
    ]
    note = shapes_note(c)
    if note:  # which shape and config the IR comes from, and which shapes the runner timed
        for part in textwrap.wrap(_clean(note), max(40, width - 2), initial_indent="  ", subsequent_indent="    "):
            out.append(_line([_s(part, S_DIM)], color))
    if not opts.stage0_full and rows and not any(r.differs for r in rows):
        # Nothing differs: one line instead of column headers over no row.
        head_all = f"    all {len(rows)} arguments specialized alike: "
        out.append(_paint(_fold_line([r.name for r in rows], width, head_all), color))
        out.append("")
        return out
    out.append(
        _line(
            [
                _s(" " * left),
                _s(f"{c.a:<{side_w}}", S_MINUS_NAME),
                _s(" │ ", S_GUTTER),
                _s(f"{c.b:<{side_w}}", S_PLUS_NAME),
            ],
            color,
        )
    )
    head = f"{'type':<{tw}} {'div':<{dw}} {'constexpr':<{cw}}"
    out.append(
        _line(
            [
                _s(f"    {'argument':<{name_w}} "),
                _s(head),
                _s(" │ ", S_GUTTER),
                _s(head),
                _s("  reason" if not below else ""),
            ],
            color,
        )
    )
    alike: list[str] = []
    for r, (ca, cb) in zip(rows, cells):
        differs = r.differs
        st = S_DIFFERS if differs else PLAIN
        mark = "  * " if differs else "    "
        side_a = f"{ca[0]:<{tw}} {ca[1]:<{dw}} {ca[2]:<{cw}}"
        side_b = f"{cb[0]:<{tw}} {cb[1]:<{dw}} {cb[2]:<{cw}}"
        reasons = _spec_reasons(c, r)
        if not opts.stage0_full and not differs:
            alike.append(r.name)  # specialized alike (type, divisibility, constexpr): folded into one line below
            continue
        if below:
            out.append(
                _line(
                    [_s(mark, st), _s(f"{r.name:<{name_w}} ", st), _s(side_a, st), _s(" │ ", S_GUTTER), _s(side_b, st)],
                    color,
                )
            )
            for txt in reasons:
                for ln in textwrap.wrap(txt, max(20, width - 8)):
                    out.append(_paint([_s("        "), _s(ln, S_DIM if not differs else PLAIN)], color))
            continue
        wrapped = [w for txt in reasons for w in (textwrap.wrap(txt, reason_w) or [""])]
        first = wrapped[0] if wrapped else ""
        out.append(
            _line(
                [
                    _s(mark, st),
                    _s(f"{r.name:<{name_w}} ", st),
                    _s(side_a, st),
                    _s(" │ ", S_GUTTER),
                    _s(side_b, st),
                    _s("  "),
                    _s(first, S_DIM if not differs else PLAIN),
                ],
                color,
            )
        )
        for ln in wrapped[1:]:
            out.append(_paint([_s(" " * reason_x), _s(ln, S_DIM if not differs else PLAIN)], color))
    if alike:
        out.append(_paint(_fold_line(alike, width), color))
    out.append("")
    return out


def _fold_line(names: list[str], width: int, head: str = "") -> list[Seg]:
    """One line for the arguments specialized alike: ``    = 13 alike: a_ptr, b_ptr, … 4 more (--stage0 full)``;
    ``head`` replaces the ``    = 13 specialized alike: `` opening."""
    head = head or f"    = {len(names)} specialized alike: "
    tail = " (--stage0 full shows them)"
    if _width(head + names[0] + f", … {len(names) - 1} more" + tail) > width:
        tail = " (--stage0 full)"
        if _width(head + names[0] + f", … {len(names) - 1} more" + tail) > width:
            return [_s(head.rstrip(": ") + tail, S_DIM)]
    shown: list[str] = []
    for i, n in enumerate(names):
        rest = len(names) - i - 1
        more = f", … {rest} more" if rest else ""
        if _width(head + ", ".join([*shown, n]) + more + tail) > width and shown:
            shown.append(f"… {len(names) - i} more")
            break
        shown.append(n)
    return [_s(head, S_DIM), _s(", ".join(shown)), _s(tail, S_DIM)]


def _spec_reasons(c: Comparison, r: SpecRow) -> list[str]:
    ra = _clean(r.a.reason) if r.a and r.a.reason else ""
    rb = _clean(r.b.reason) if r.b and r.b.reason else ""
    if ra == rb or not (ra and rb) and not r.differs:
        return [ra or rb]
    # Same outcome for different reasons (``M: int`` annotated on one side only) still shows both reasons.
    return [f"{c.a}: {ra or '(not a parameter)'}", f"{c.b}: {rb or '(not a parameter)'}"]


# --------------------------------------------------------------------------------------------------------------
# Stage hunks
# --------------------------------------------------------------------------------------------------------------


class _Side:
    """Per-side lookups for one stage: raw line numbers, control codes, lexed tokens (when colour is on)."""

    def __init__(
        self, stage: str, ns: NormalizedStage, color: bool, shown: Iterable[int] = (), memo: str | None = None
    ) -> None:
        self.ns = ns
        self.toks: list[LineTokens] | None = _lex_lines(stage, ns.lines, shown, memo) if color else None
        self.columns = ns.columns

    def raw(self, i: int | None, first: int = 0) -> str:
        """Raw line number of normalized line ``i`` for the gutter; blank when line ``i - 1`` (shown above it, i.e.
        ``i > first``, the hunk's first line on this side) comes from the same raw line: a ``tt.func``/``define``
        signature split one argument per line is numbered once, on its first line."""
        rl = self.ns.raw_line
        if i is None or i >= len(rl):
            return ""
        if first < i and rl[i] == rl[i - 1]:
            return ""
        return str(rl[i])

    def ctrl(self, i: int | None) -> str:
        if self.columns is None or i is None or i >= len(self.columns):
            return ""
        return self.columns[i]

    def segs(
        self, i: int, text: str, bg: int | None, emph: int | None, spans: Sequence[Span], tabsize: int
    ) -> list[Seg]:
        toks = self.toks[i] if self.toks is not None and i < len(self.toks) else (None if self.toks is None else [])
        return _expand_tabs(_line_segments(text, toks, bg, emph, spans), tabsize)


def _stage(d: StageDiff, c: Comparison, opts: TerminalOptions) -> list[str]:
    color, width = opts.color, opts.width
    fallback = getattr(d.a, "fallback", False) or getattr(d.b, "fallback", False)
    counts = [_s(f"{d.stage}", S_STAGE)]
    if d.identical:
        counts.append(_s("  identical", S_DIM))
    else:
        counts += [_s("  "), _s(f"-{d.removed}", S_MINUS_SIGN), _s(" "), _s(f"+{d.added}", S_PLUS_SIGN)]
    counts.append(_s(f"  ({len(d.a.lines)} | {len(d.b.lines)} {'raw' if c.raw else 'normalized'} lines)", S_DIM))
    if fallback:
        counts.append(_s("  normalizer fell back to raw lines", S_DIFFERS))
    out = [_rule(counts, width, color, "━")]
    for note in getattr(d, "notes", None) or []:  # how the alignment was made (a function too large: align.py)
        out += [_line([_s("  note: ", S_DIFFERS), _s(ln, S_DIM)], color) for ln in textwrap.wrap(note, width - 8)]
    if d.identical:
        out.append("")
        return out
    shown_a = [ln.a for h in d.hunks for ln in h.lines if ln.a is not None]
    shown_b = [ln.b for h in d.hunks for ln in h.lines if ln.b is not None]
    memo = opts.token_cache
    sa, sb = _Side(d.stage, d.a, color, shown_a, memo), _Side(d.stage, d.b, color, shown_b, memo)
    num_w = max(3, len(str(max(max(d.a.raw_line, default=0), max(d.b.raw_line, default=0)))))
    for h in d.hunks:
        out.append(_paint(_hunk_header(h, sa, sb), color))
        if opts.side_by_side:
            out += _hunk_side_by_side(h, sa, sb, num_w, opts)
        else:
            out += _hunk_unified(h, sa, sb, num_w, opts)
    out.append("")
    return out


def _hunk_header(h: Hunk, sa: _Side, sb: _Side) -> list[Seg]:
    def start(side: _Side, i: int, n: int) -> str:
        rl = side.ns.raw_line
        if not rl:
            return "0"
        if n == 0:  # git: the line before the insertion point
            return str(rl[min(i, len(rl)) - 1]) if i > 0 else "0"
        return str(rl[min(i, len(rl) - 1)])

    meta = f"@@ -{start(sa, h.a_start, h.a_len)},{h.a_len} +{start(sb, h.b_start, h.b_len)},{h.b_len} @@"
    segs = [_s(meta, S_HUNK)]
    if h.header:
        segs += [_s(" "), _s(_clean(h.header), S_HUNK_HEADER)]
    return segs


def _runs(lines: Sequence[DiffLine]) -> Iterable[tuple[bool, list[DiffLine]]]:
    """Consecutive equal lines / consecutive changed lines."""
    run: list[DiffLine] = []
    eq = True
    for ln in lines:
        is_eq = ln.tag == "equal"
        if run and is_eq != eq:
            yield eq, run
            run = []
        eq = is_eq
        run.append(ln)
    if run:
        yield eq, run


def _hunk_unified(h: Hunk, sa: _Side, sb: _Side, num_w: int, opts: TerminalOptions) -> list[str]:
    color = opts.color
    ctrl_w = max((len(sa.ctrl(ln.a)) for ln in h.lines), default=0)
    ctrl_w = max(ctrl_w, max((len(sb.ctrl(ln.b)) for ln in h.lines), default=0))
    out: list[str] = []

    # Long lines are soft-wrapped here, under the gutter (a pager would wrap them through it): continuation rows
    # keep a blank gutter and start with ``↪``.
    body_w = opts.width - (2 * num_w + 2 + 1 + (ctrl_w + 1 if ctrl_w else 0) + 3)

    def row(sign: str, ai: int | None, bi: int | None, segs: list[Seg]) -> str:
        sign_st = S_MINUS_SIGN if sign == "-" else S_PLUS_SIGN if sign == "+" else PLAIN
        ra, rb = sa.raw(ai, h.a_start), sb.raw(bi, h.b_start)
        gutter = [_s(f"{ra:>{num_w}} {rb:>{num_w}} ", S_GUTTER), _s("│", S_GUTTER)]
        ctrl: list[Seg] = []
        if ctrl_w:
            side, idx = (sa, ai) if ai is not None else (sb, bi)
            ctrl = [_s(f" {side.ctrl(idx):<{ctrl_w}}", S_CTRL)]
        if body_w < 20 or _seg_width(segs) <= body_w:
            return _paint([*gutter, *ctrl, _s(f" {sign} ", sign_st), *segs], color)
        parts = [_rstrip(p) for p in _fit(segs, body_w, max_rows=1 << 20)]
        blank = [_s(" " * (2 * num_w + 2), S_GUTTER), _s("│", S_GUTTER), _s(" " * (ctrl_w + 1) if ctrl_w else "")]
        lines = [_line([*gutter, *ctrl, _s(f" {sign} ", sign_st), *parts[0]], color)]
        lines += [_line([*blank, _s(" ↪ ", S_DIM), *p], color) for p in parts[1:]]
        return "\n".join(lines)

    for eq, run in _runs(h.lines):
        if eq:
            for ln in run:
                assert ln.a is not None
                out.append(row(" ", ln.a, ln.b, sa.segs(ln.a, ln.a_text or "", None, None, (), opts.tabsize)))
            continue
        for ln in run:
            if ln.tag in ("delete", "replace") and ln.a is not None:
                segs = sa.segs(ln.a, ln.a_text or "", MINUS_BG, MINUS_EMPH_BG, ln.a_spans, opts.tabsize)
                out.append(row("-", ln.a, None, segs))
        for ln in run:
            if ln.tag in ("insert", "replace") and ln.b is not None:
                segs = sb.segs(ln.b, ln.b_text or "", PLUS_BG, PLUS_EMPH_BG, ln.b_spans, opts.tabsize)
                out.append(row("+", None, ln.b, segs))
    return out


def _sbs_rows(run: list[DiffLine]) -> list[tuple[DiffLine | None, DiffLine | None]]:
    """Changed lines → (left, right) rows: a replacement is one row; the deletions and insertions between two
    replacements are paired top to bottom whichever side the aligner listed first (delta's subhunk pairing), the
    longer side padded with blank cells, so a ``+`` line never sits above the ``-`` line it replaces."""
    rows: list[tuple[DiffLine | None, DiffLine | None]] = []
    dels: list[DiffLine] = []
    ins: list[DiffLine] = []

    def flush() -> None:
        for i in range(max(len(dels), len(ins))):
            rows.append((dels[i] if i < len(dels) else None, ins[i] if i < len(ins) else None))
        dels.clear()
        ins.clear()

    for ln in run:
        if ln.tag == "replace":
            flush()
            rows.append((ln, ln))
        elif ln.tag == "delete":
            dels.append(ln)
        else:
            ins.append(ln)
    flush()
    return rows


def _hunk_side_by_side(h: Hunk, sa: _Side, sb: _Side, num_w: int, opts: TerminalOptions) -> list[str]:
    color = opts.color
    col_w = max(10, (opts.width - 3 - 2 * (num_w + 3)) // 2)
    out: list[str] = []

    def cell(
        side: _Side, i: int | None, text: str | None, sign: str, bg: int | None, emph: int | None, spans: Sequence[Span]
    ) -> list[list[Seg]]:
        sign_st = S_MINUS_SIGN if sign == "-" else S_PLUS_SIGN if sign == "+" else PLAIN
        if i is None or text is None:
            return [[_s(" " * (num_w + 3 + col_w))]]
        first = h.a_start if side is sa else h.b_start
        body = _fit(side.segs(i, text, bg, emph, spans, opts.tabsize), col_w, opts.max_wrap)
        rows = []
        for k, part in enumerate(body):
            gutter = _s(f"{side.raw(i, first) if k == 0 else '':>{num_w}} ", S_GUTTER)
            mark = _s(f"{sign} " if k == 0 else "↪ ", sign_st if k == 0 else S_DIM)
            rows.append([gutter, mark, *_pad(part, col_w)])
        return rows

    def emit_row(left: list[list[Seg]], right: list[list[Seg]]) -> None:
        blank_l = [_s(" " * (num_w + 3 + col_w))]
        for k in range(max(len(left), len(right))):
            lseg = left[k] if k < len(left) else blank_l
            rseg = right[k] if k < len(right) else []
            out.append(_line([*lseg, _s(" │ ", S_GUTTER), *rseg], color))

    for eq, run in _runs(h.lines):
        if eq:
            for ln in run:
                emit_row(
                    cell(sa, ln.a, ln.a_text, " ", None, None, ()),
                    cell(sb, ln.b, ln.b_text, " ", None, None, ()),
                )
            continue
        for lft, rgt in _sbs_rows(run):
            left = (
                cell(sa, lft.a, lft.a_text, "-", MINUS_BG, MINUS_EMPH_BG, lft.a_spans)
                if lft
                else cell(sa, None, None, "", None, None, ())
            )
            right = cell(sb, rgt.b, rgt.b_text, "+", PLUS_BG, PLUS_EMPH_BG, rgt.b_spans) if rgt else []
            emit_row(left, right)
    return out


# --------------------------------------------------------------------------------------------------------------
# One stage, colored (irdiff show)
# --------------------------------------------------------------------------------------------------------------


def render_stage_text(
    stage: str, text: str, *, color: bool, tabsize: int = 8, line_numbers: bool = False, theme: str = "dark"
) -> str:
    """One stage text with syntax colours in ``theme`` (``irdiff show``); plain text when ``color`` is False."""
    with _using(theme):
        return _render_stage_text(stage, text, color=color, tabsize=tabsize, line_numbers=line_numbers)


def _render_stage_text(stage: str, text: str, *, color: bool, tabsize: int, line_numbers: bool) -> str:
    lines = text.splitlines()
    toks = _lex_lines(stage, lines) if color else None
    num_w = len(str(len(lines)))
    out = []
    for i, ln in enumerate(lines):
        segs = _expand_tabs(_line_segments(ln, toks[i] if toks is not None else None, None, None, ()), tabsize)
        if line_numbers:
            segs = [_s(f"{i + 1:>{num_w}} ", S_GUTTER), *segs]
        out.append(_paint(segs, color))
    return "\n".join(out) + ("\n" if out else "")


# --------------------------------------------------------------------------------------------------------------
# Terminal behaviour: colour, width, pager
# --------------------------------------------------------------------------------------------------------------


def _isatty(stream: IO[str] | Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def color_enabled(choice: str = "auto", stream: IO[str] | Any = None, env: Mapping[str, str] | None = None) -> bool:
    """Decide colour: ``always``/``never`` win; ``auto`` is off under a non-empty ``NO_COLOR`` or ``TERM=dumb``,
    on under a non-empty ``FORCE_COLOR``, else on only when ``stream`` (stdout) is a terminal.

    :raises ValueError: ``choice`` is not ``auto``, ``always`` or ``never``.
    """
    env = os.environ if env is None else env
    choice = choice.lower()
    if choice == "always":
        return True
    if choice == "never":
        return False
    if choice != "auto":
        raise ValueError(f"--color {choice!r}: expected auto, always or never")
    if env.get("NO_COLOR", ""):
        return False
    if env.get("FORCE_COLOR", ""):
        return True
    if env.get("TERM", "") == "dumb":
        return False
    return _isatty(sys.stdout if stream is None else stream)


def theme_from_colorfgbg(value: str) -> str | None:
    """``COLORFGBG`` (rxvt, Konsole, iTerm2: ``"15;0"`` = white on black; the last field is the background's
    system colour) → ``"dark"``/``"light"``, or None when it does not say (``"default;default"``)."""
    bg = value.strip().split(";")[-1] if value.strip() else ""
    if not bg.isdigit():
        return None
    n = int(bg)
    return "light" if n == 7 or 9 <= n <= 15 else "dark"


_OSC_RGB = re.compile(rb"\]11;rgb:([0-9a-fA-F]{1,4})/([0-9a-fA-F]{1,4})/([0-9a-fA-F]{1,4})")


def theme_from_osc11(reply: bytes) -> str | None:
    """A terminal's answer to ``OSC 11 ; ?`` (``ESC ] 11 ; rgb:ffff/ffff/ffff BEL``) → ``"dark"``/``"light"``
    by the background's relative luminance; None if the reply is not one."""
    m = _OSC_RGB.search(reply)
    if not m:
        return None
    rgb = tuple(int(x, 16) / (16 ** len(x) - 1) * 255 for x in m.groups())
    return "light" if _luminance((rgb[0], rgb[1], rgb[2])) > 0.4 else "dark"


def query_background(fd: int, timeout: float = 0.1) -> bytes:
    """Ask the terminal on ``fd`` for its background colour (``OSC 11 ; ?``) and return the raw reply (b"" when it
    does not answer within ``timeout`` seconds). The terminal is put in non-canonical, no-echo mode meanwhile, so the
    reply never shows; the previous mode is restored."""
    import select
    import termios

    try:
        old = termios.tcgetattr(fd)
    except termios.error:
        return b""
    new = list(old)
    new[3] = new[3] & ~(termios.ICANON | termios.ECHO)
    reply = b""
    try:
        termios.tcsetattr(fd, termios.TCSANOW, new)
        os.write(fd, b"\x1b]11;?\x07")
        deadline = time.monotonic() + timeout
        while not (reply.endswith(b"\x07") or reply.endswith(b"\x1b\\")):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                break
            chunk = os.read(fd, 64)
            if not chunk:
                break
            reply += chunk
    except OSError:
        pass
    finally:
        termios.tcsetattr(fd, termios.TCSANOW, old)
    return reply


def choose_theme(
    choice: str = "auto", env: Mapping[str, str] | None = None, stream: IO[str] | Any = None, query: bool = True
) -> str:
    """Decide the palette: ``dark``, ``light`` and ``mono`` are taken as given; ``auto`` reads ``COLORFGBG``, then
    (only when stdin and ``stream`` are terminals and ``TERM`` is not ``dumb``) asks the terminal for its background
    with :func:`query_background` (100 ms at most), else ``dark``.

    :raises ValueError: ``choice`` is none of ``auto``, ``dark``, ``light``, ``mono``.
    """
    env = os.environ if env is None else env
    choice = choice.lower()
    if choice in THEMES:
        return choice
    if choice != "auto":
        raise ValueError(f"--theme {choice!r}: expected auto, dark, light or mono")
    told = theme_from_colorfgbg(env.get("COLORFGBG", ""))
    if told:
        return told
    stream = sys.stdout if stream is None else stream
    if query and env.get("TERM", "") != "dumb" and _isatty(stream) and _isatty(sys.stdin):
        try:
            fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
        except OSError:
            return "dark"
        try:
            return theme_from_osc11(query_background(fd)) or "dark"
        finally:
            os.close(fd)
    return "dark"


def terminal_width(explicit: int | None = None, default: int = 120) -> int:
    """Columns to lay out for: ``explicit`` (``--width``), else ``COLUMNS``/the terminal's size, else ``default``;
    never below 60."""
    if explicit:
        return max(60, explicit)
    return max(60, shutil.get_terminal_size((default, 24)).columns)


def _pager_command(env: Mapping[str, str]) -> str | None:
    for key in ("IRDIFF_PAGER", "PAGER"):
        if key in env:
            cmd = env[key].strip()
            return cmd if cmd and cmd != "cat" else None
    return "less"


def _should_page(paging: str, text: str, stream: Any, env: Mapping[str, str]) -> bool:
    paging = paging.lower()
    if paging not in ("auto", "always", "never"):
        raise ValueError(f"--paging {paging!r}: expected auto, always or never")
    if paging == "never":
        return False
    if paging == "always":
        return True
    if not _isatty(stream) or not _isatty(sys.stdin) or env.get("TERM", "") == "dumb":
        return False
    rows = shutil.get_terminal_size((120, 24)).lines
    return text.count("\n") >= rows


def _run_pager(cmd: str, text: str, env: Mapping[str, str]) -> bool:
    """Pipe ``text`` into the pager; False if it could not be started (the caller prints to stdout instead)."""
    try:
        argv0 = shlex.split(cmd)[0]
    except (ValueError, IndexError):
        return False
    if shutil.which(argv0) is None:
        return False
    penv = dict(env)
    penv.setdefault("LESS", "FRX")  # quit if one screen, raw colour escapes, keep the screen (git's default)
    penv.setdefault("LV", "-c")
    import subprocess  # not at import time: most runs start no pager (piped, or --paging never)

    try:
        proc = subprocess.Popen(cmd, shell=True, stdin=subprocess.PIPE, env=penv)
    except OSError:
        return False
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C belongs to the pager; don't orphan it
    try:
        assert proc.stdin is not None
        try:
            proc.stdin.write(text.encode("utf-8", "replace"))
            proc.stdin.close()
        except (BrokenPipeError, OSError):  # the user quit the pager early
            pass
        proc.wait()
    finally:
        signal.signal(signal.SIGINT, old)
    return True


def emit(
    text: str, *, paging: str = "auto", stream: IO[str] | Any = None, env: Mapping[str, str] | None = None
) -> None:
    """Write rendered output: through a pager (``--paging``; ``IRDIFF_PAGER``, then ``PAGER``, then ``less`` with
    ``LESS=FRX``) or straight to ``stream``; a closed pipe (``irdiff … | head``) ends quietly.

    :raises ValueError: ``paging`` is not ``auto``, ``always`` or ``never``.
    """
    stream = sys.stdout if stream is None else stream
    env = os.environ if env is None else env
    if _should_page(paging, text, stream, env):
        cmd = _pager_command(env)
        if cmd and _run_pager(cmd, text, env):
            return
    try:
        stream.write(text)
        stream.flush()
    except BrokenPipeError:
        # Python would complain again when flushing stdout at exit: point it at /dev/null.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, stream.fileno())
        except (OSError, AttributeError, ValueError):
            pass
