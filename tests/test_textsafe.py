"""The control-sequence sanitizer (irdiff/textsafe.py) on the sequences a hostile bundle can carry: exact outputs, so
that a sanitizer that keeps a newline it should drop, or drops a sequence's tail, fails here."""

from __future__ import annotations

import pytest

from irdiff.textsafe import REPLACEMENT, clean, clean_chars, one_line

R = REPLACEMENT


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        ("tt.load %ptr : !tt.ptr<f16>\tok", "tt.load %ptr : !tt.ptr<f16>\tok"),  # nothing to do: same object back
        ("a\x1b[2Jb", f"a{R}b"),  # CSI: the whole sequence is one U+FFFD
        ("a\x9b31mb", f"a{R}b"),  # 8-bit CSI
        ("\x1b]0;title\x07x", f"{R}x"),  # OSC set-title, BEL-terminated
        ("\x1b]8;;http://e.x\x1b\\link\x1b]8;;\x1b\\", f"{R}link{R}"),  # hyperlink, ST-terminated
        ("a\x1b7b", f"a{R}b"),  # two-byte escape
        ("bell\x07 del\x7f nul\x00", f"bell{R} del{R} nul{R}"),
        ("bidi \u202egnp.exe", f"bidi {R}gnp.exe"),
        ("one\ntwo\r\n", f"one\ntwo{R}\n"),
    ],
)
def test_clean_exact(raw: str, want: str) -> None:
    assert clean(raw) == want
    assert clean(raw, newlines=True) == want


def test_clean_without_newlines_replaces_them_too() -> None:
    assert clean("a\nb\x1b[1mc") == f"a\nb{R}c"
    assert clean("a\nb\x1b[1mc", newlines=False) == f"a{R}b{R}c"
    assert clean("plain\ttext", newlines=False) == "plain\ttext"


def test_clean_chars_keeps_the_length() -> None:
    raw = "x\x1b[2Jy\nz\t"
    assert clean_chars(raw) == f"x{R}[2Jy{R}z\t"  # one U+FFFD per control; newline replaced by default
    assert clean_chars(raw, newlines=True) == f"x{R}[2Jy\nz\t"
    assert len(clean_chars(raw)) == len(raw)
    assert clean_chars("plain text") == "plain text"


def test_one_line_joins_lines_with_spaces_after_cleaning() -> None:
    assert one_line("error: bad\nbundle \x1b[31mred\x1b[0m") == f"error: bad bundle {R}red{R}"
    assert one_line("a\n\nb") == "a  b"
    assert one_line("plain") == "plain"
