"""The one control-sequence sanitizer for text that reaches a terminal (or a report a terminal may print).

Text from a bundle or an IR file is untrusted: a kernel, variant or file name, a compiler message or an IR line can
carry terminal control sequences (``ESC[2J`` clears the screen, ``ESC]0;…BEL`` sets the window title,
``ESC]8;;URL ESC\\`` makes a hyperlink, 8-bit C1 controls such as ``\\x9b`` act as ``ESC[``). :func:`clean`
neutralizes all of them; every renderer calls it at its output boundary (``irdiff/render/terminal.py`` on every
segment it paints, Markdown and HTML on the whole document, the CLI on its one-line messages).
"""

from __future__ import annotations

import re

REPLACEMENT = "\ufffd"

# A whole escape sequence (7-bit ESC or 8-bit C1 introducer): CSI (ESC [ / \x9b … final byte), OSC / DCS / SOS /
# PM / APC strings (ESC ] P X ^ _ or \x9d \x90 \x98 \x9e \x9f … terminated by BEL or ST), or a two-byte escape.
_SEQUENCE = re.compile(
    r"(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[\x20-\x7e]?"
)
# Any remaining C0 control except tab and newline, DEL, C1 controls, and the Unicode bidirectional overrides and
# isolates (they reorder what is displayed: "Trojan source").
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x80-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_CONTROL_NL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f\x80-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_ANY = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def clean(text: str, *, newlines: bool = True) -> str:
    """``text`` with every terminal control sequence and control character made inert.

    A whole escape sequence (CSI, OSC, DCS, … in 7-bit or C1 form) becomes one U+FFFD; any other C0 control
    (except tab, and newline when ``newlines``), DEL, C1 control and bidirectional override becomes U+FFFD too.
    Printable text, tabs and (by default) newlines are unchanged; the result contains no ``\\x1b`` and no
    ``\\x80``–``\\x9f``.
    """
    if not _ANY.search(text):
        return text
    text = _SEQUENCE.sub(REPLACEMENT, text)
    return (_CONTROL if newlines else _CONTROL_NL).sub(REPLACEMENT, text)


def clean_chars(text: str, *, newlines: bool = False) -> str:
    """One U+FFFD per control character (tab kept; newline kept only when ``newlines``): the length and column
    count of the text stay the same, for layout code that has measured it already. Sequences are made inert
    because their introducer (ESC, C1) is replaced."""
    if not _ANY.search(text):
        return text
    return (_CONTROL if newlines else _CONTROL_NL).sub(REPLACEMENT, text)


def one_line(text: str) -> str:
    """A message for one terminal line: controls made inert, newlines turned into spaces."""
    return " ".join(clean(text).split("\n"))
