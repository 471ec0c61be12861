"""The shared text helpers of the normalizers (irdiff/normalize/text.py) on IR-shaped lines: strings with escapes,
trailing comments, top-level splits of MLIR signatures, balanced parentheses in nested locations, kernel-name
replacement at name boundaries, and ``loc(...)`` stripping in its fast and scanning paths. Exact outputs. Cheap."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from irdiff.normalize.text import (
    kernel_pattern,
    lines_at,
    matching_paren,
    replace_kernel,
    split_strings,
    split_top_level,
    strip_comment,
    strip_locs,
)


def test_split_strings() -> None:
    assert split_strings('a "b\\"c" d "e') == [(False, "a "), (True, '"b\\"c"'), (False, " d "), (True, '"e')]
    assert split_strings("x") == [(False, "x")]
    assert split_strings('"s"') == [(True, '"s"')]
    assert split_strings('loc("/k.py":1:2)') == [(False, "loc("), (True, '"/k.py"'), (False, ":1:2)")]


def test_strip_comment_outside_strings_only() -> None:
    assert strip_comment('mov.u32 %r1, 1; // "q"', "//") == "mov.u32 %r1, 1; "
    assert strip_comment('x = "a//b" // c', "//") == 'x = "a//b" '
    assert strip_comment('x = "//"', "//") == 'x = "//"'
    assert strip_comment("abc", "//") == "abc"
    assert strip_comment("  ; ModuleID = 'x'", ";") == "  "


def test_split_top_level() -> None:
    assert split_top_level("%a: tensor<4x!tt.ptr<f16>>, %b: i32") == ["%a: tensor<4x!tt.ptr<f16>>", " %b: i32"]
    assert split_top_level("#a at #b", " at ") == ["#a", "#b"]
    assert split_top_level('f(a, b), "x, y", [1, 2]), z') == ["f(a, b)", ' "x, y"', " [1, 2])", " z"]
    assert split_top_level("{a, b}, <c, d>") == ["{a, b}", " <c, d>"]
    assert split_top_level("") == [""]
    assert split_top_level("a,") == ["a", ""]


def test_matching_paren() -> None:
    s = 'loc(callsite("f(\\"x"(#loc1) at #loc2)) tail'
    assert matching_paren(s, 3) == 37 and s[37] == ")" and s[38:] == " tail"
    assert matching_paren("(a", 0) == -1
    assert matching_paren("([)]", 0, "([", ")]") == 3
    assert matching_paren("([)]", 0) == 2
    assert matching_paren('x("(")y)', 1) == 5
    assert matching_paren('("\\")")', 0) == 6  # an escaped quote does not end the string
    assert matching_paren("a(b(c)d)e", 1) == 7 and matching_paren("a(b(c)d)e", 3) == 5
    assert matching_paren("tl.arange(0, BLOCK_X)", 9) == 20  # only `)` closes by default, not the letters around it
    assert matching_paren('("unterminated', 0) == -1


@pytest.mark.parametrize(
    ("line", "want"),
    [
        ("tt.func public @k(%arg0", "tt.func public @KERNEL(%arg0"),
        ("ld.param.u64 %rd1, [k_param_0];", "ld.param.u64 %rd1, [KERNEL_param_0];"),
        (".entry k", ".entry KERNEL"),
        ("k", "KERNEL"),
        ("call @k2(", "call @k2("),
        ("my_k x", "my_k x"),
        ("k.x", "k.x"),
        ("$k", "$k"),
        ("k_1", "k_1"),
        ("x.k y", "x.k y"),
    ],
)
def test_kernel_name_replaced_only_as_a_whole_name(line: str, want: str) -> None:
    assert replace_kernel(line, kernel_pattern("k")) == want


def test_no_kernel_name_changes_nothing() -> None:
    assert kernel_pattern("") is None and kernel_pattern(None) is None
    assert replace_kernel("k", None) == "k"
    assert replace_kernel("@other(", kernel_pattern("k")) == "@other("


@pytest.mark.parametrize(
    ("line", "default", "keep_blanks", "unquoted"),
    [
        ("loc(#loc) x", " x", " x", " x"),
        ("%0 = a loc(#loc1)  loc(#loc2)", "%0 = a", "%0 = a   ", "%0 = a"),
        ("%0 = a  loc(#loc1", "%0 = a", "%0 = a  ", "%0 = a"),
        ('x = "a loc(" b loc(#l)', 'x = "a loc(" b', 'x = "a loc(" b ', 'x = "a'),
        ('x = "a loc( b loc(#l)', 'x = "a loc( b loc(#l)', 'x = "a loc( b loc(#l)', 'x = "a'),
        ("%1 = b : i32 loc(#loc7)", "%1 = b : i32", "%1 = b : i32 ", "%1 = b : i32"),
        ("%1 = b\t loc(#loc7)", "%1 = b", "%1 = b\t ", "%1 = b"),
        ("no locations here", "no locations here", "no locations here", "no locations here"),
    ],
)
def test_strip_locs_modes(line: str, default: str, keep_blanks: str, unquoted: str) -> None:
    assert strip_locs(line) == default
    assert strip_locs(line, eat_blanks=False) == keep_blanks
    assert strip_locs(line, quoted=False) == unquoted


def test_split_top_level_nested_and_letters() -> None:
    assert split_top_level("f(g(a, b), c), d") == ["f(g(a, b), c)", " d"]
    assert split_top_level("%X, %b") == ["%X", " %b"]
    assert split_top_level("f(X, Y), z") == ["f(X, Y)", " z"]
    assert split_top_level("tensor<2x!tt.ptr<f16, 1>>, i32") == ["tensor<2x!tt.ptr<f16, 1>>", " i32"]


@pytest.mark.parametrize(
    ("line", "want"),
    [
        ("^bb0(%in: f32 loc(#loc7), %out: f32 loc(#loc8)):", "^bb0(%in: f32, %out: f32):"),  # ends in ":"
        ("aloc(1)", "aloc(1)"),  # a name at the start of the line
        ("%x = mloc(%a)", "%x = mloc(%a)"),
        ("x loc(#l) (y)", "x (y)"),  # a location in the middle: the text after it stays
        ("x loc(#l) y)", "x y)"),
        ("%0 = op %X loc(#l)", "%0 = op %X"),
        ('x = "" loc(#l1)', 'x = ""'),
        ('x = "a\\"loc(" loc(#l1)', 'x = "a\\"loc("'),
        ('x = "s" loc(#l1)', 'x = "s"'),
        ('x = "s" loc(#l1', 'x = "s"'),  # unclosed: to the end of the line
        ('%1 = f "q" loc("/k.py":3:4) : i32', '%1 = f "q" : i32'),
        ('%1 = f "a\\n" loc(#l1)', '%1 = f "a\\n"'),  # an escape right before the closing quote: one character
        ('x = "s"loc(#l1)', 'x = "s"'),  # a location right after a string's closing quote
    ],
)
def test_strip_locs_more_shapes(line: str, want: str) -> None:
    assert strip_locs(line) == want


def test_edges_of_strings_comments_and_blanks() -> None:
    assert matching_paren('("\\"")', 0) == 5  # the escaped quote is one character; the next quote ends the string
    assert strip_comment("x; // a // b", "//") == "x; "  # the first marker starts the comment
    assert strip_comment('x = "s"// c', "//") == 'x = "s"'  # a comment right after a string
    assert strip_locs('x = "s"\tloc(#l1)') == 'x = "s"'  # tab before the location (scanning path)
    assert strip_locs('%0 = f "s" %X loc(#l1)') == '%0 = f "s" %X'
    assert strip_locs('x = "loc(" y)') == 'x = "loc(" y)'  # the only loc( is inside a string


def test_location_closed_just_before_the_last_parenthesis() -> None:
    assert strip_locs("tt.call @f(%a loc(#l1))") == "tt.call @f(%a)"
    assert strip_locs("f(%a loc(#l1)), g(%b loc(#l2))") == "f(%a), g(%b)"
    assert strip_locs("tt.call @f(%a loc())") == "tt.call @f(%a)"  # an empty location, then the call's `)`


def test_lines_at_names_each_line_once() -> None:
    text = "ab\n\ncd\nef\n"
    # lines: 0 "ab" (offsets 0-2), 1 "" (3), 2 "cd" (4-6), 3 "ef" (7-9); a line break belongs to the line it ends
    assert lines_at(text, [0, 1, 3, 4, 5, 9]) == [0, 1, 2, 3]
    assert lines_at(text, [2]) == [0]
    assert lines_at(text, [6, 7]) == [2, 3]
    assert lines_at(text, [7, 8]) == [3]
    assert lines_at(text, []) == []
    assert lines_at("x", [0]) == [0]


@given(st.text(alphabet="a\n", max_size=40), st.data())
def test_lines_at_is_the_sorted_distinct_line_numbers(text: str, data: st.DataObject) -> None:
    positions = sorted(data.draw(st.sets(st.integers(0, max(len(text) - 1, 0)))))
    assert lines_at(text, positions) == sorted({text.count("\n", 0, p) for p in positions})
