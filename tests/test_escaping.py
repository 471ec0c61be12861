"""Escaping invariants of the HTML report (hypothesis): whatever text a kernel, its IR or a finding carries, the
report shows it as text — no tag, attribute or script end can come out of it."""

from __future__ import annotations

import html
import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from irdiff.render.html import Highlighter, _json_data, _prose

# Text biased towards markup: tags, entities, quotes, script ends, plus arbitrary unicode.
MARKUP = st.sampled_from(["<", ">", "&", '"', "'", "</script>", "<img src=x onerror=alert(1)>", "&amp;", "`", "\n"])
TEXT = st.lists(st.one_of(MARKUP, st.text(max_size=8)), max_size=20).map("".join)
STAGES = st.sampled_from(["ttir", "ttgir", "llir", "ptx", "sass", "python", "text"])
SPAN_TAG = re.compile(r'<span class="[a-z0-9 ]*">|</span>')


@settings(max_examples=300, deadline=None)
@given(stage=STAGES, text=TEXT, spans=st.lists(st.tuples(st.integers(0, 60), st.integers(0, 60)), max_size=4))
def test_highlighted_line_is_the_text_and_only_span_tags(stage: str, text: str, spans: list[tuple[int, int]]) -> None:
    line = text.replace("\n", " ")
    hl = Highlighter()
    (tokens,) = hl.token_lines(stage, [line])
    out = str(hl.line_html(tokens, spans))
    stripped = SPAN_TAG.sub("", out)
    assert "<" not in stripped and ">" not in stripped  # every other angle bracket is escaped
    assert html.unescape(stripped) == line  # and the visible text is exactly the input


@settings(max_examples=300, deadline=None)
@given(obj=st.recursive(st.one_of(TEXT, st.integers(), st.none()), lambda c: st.lists(c, max_size=4), max_leaves=12))
def test_json_data_cannot_close_its_script_element(obj: object) -> None:
    out = str(_json_data({"k": obj}))
    assert not set("<>&") & set(out)
    assert json.loads(out) == {"k": obj}


@settings(max_examples=300, deadline=None)
@given(text=TEXT)
def test_finding_prose_only_gains_code_tags(text: str) -> None:
    out = str(_prose(text))
    stripped = re.sub(r"</?code>", "", out)
    assert "<" not in stripped and ">" not in stripped
    # Paired backticks became <code> elements; everything else is the input, escaped.
    assert html.unescape(stripped).replace("`", "") == text.replace("`", "")


# ----------------------------------------------------------------------------------------- HTML: exact escapes


def test_html_escapes_element_text_and_marks_exact_ranges() -> None:
    """``line_html``: text escaped (``&`` first, so an entity in the IR stays visible as typed), a changed range
    ``[start, end)`` gets class ``x`` exactly over its characters, classes are kept, empty ranges are no marks."""
    tokens = [("k", "a<b"), ("", "&lt;"), ("m", ">c")]
    plain = str(Highlighter.line_html(tokens))
    assert plain == '<span class="k">a&lt;b</span>&amp;lt;<span class="m">&gt;c</span>'
    assert str(Highlighter.line_html(tokens, [(4, 4), (5, 2)])) == plain  # no character in either range
    marked = str(Highlighter.line_html(tokens, [(2, 5)]))
    assert marked == (
        '<span class="k">a&lt;</span><span class="k x">b</span><span class="x">&amp;l</span>t;'
        '<span class="m">&gt;c</span>'
    )
    # A mark from the first character, and one that starts where a token ends.
    assert str(Highlighter.line_html([("", "<>"), ("k", "&")], [(0, 1), (2, 3)])) == (
        '<span class="x">&lt;</span>&gt;<span class="k x">&amp;</span>'
    )


def test_html_prose_and_json_exact() -> None:
    assert str(_prose(None)) == "" and str(_prose("")) == ""
    assert str(_prose("a `x<y` & `` <b>")) == "a <code>x&lt;y</code> &amp; `` &lt;b&gt;"
    out = str(_json_data({"s": "</script>&\u2028\u2029é"}))
    assert out == '{"s":"\\u003c/script\\u003e\\u0026\\u2028\\u2029é"}'  # compact, non-ASCII kept as is
    assert json.loads(out) == {"s": "</script>&\u2028\u2029é"}


# ------------------------------------------------------------------------------------------------- Markdown


def _gfm(text: str) -> str:
    from markdown_it import MarkdownIt

    return MarkdownIt("gfm-like", options_update={"linkify": False}).render(text)


def test_markdown_prose_keeps_code_spans_and_escapes_the_rest() -> None:
    from irdiff.render.markdown import _prose as md_prose

    assert md_prose(None) == "" and md_prose("") == ""
    src = md_prose("load `tl.load(p, mask=m)` *not* <b>bold</b> | [x](y)\nnext `a\nb` end")
    assert "\n" not in src  # one paragraph line: newlines become spaces, in text and in code
    out = _gfm(src)
    assert out == (
        "<p>load <code>tl.load(p, mask=m)</code> *not* &lt;b&gt;bold&lt;/b&gt; | [x](y) next <code>a b</code> end</p>\n"
    )
    # An unpaired backtick is text, escaped, not the start of a code span.
    assert _gfm(md_prose("a ` b")) == "<p>a ` b</p>\n"


@settings(max_examples=200, deadline=None)
@given(text=TEXT)
def test_markdown_prose_never_makes_markup(text: str) -> None:
    from irdiff.render.markdown import _prose as md_prose

    out = _gfm(f"x {md_prose(text)} y")  # prose sits inside a paragraph, as in the report
    inner = re.sub(r"</?(code|p)>", "", out)
    assert "<" not in inner and ">" not in inner
    assert out.count("<code>") <= text.count("`") // 2  # code spans only where the input pairs backticks


def test_markdown_text_and_code_exact() -> None:
    from irdiff.render.markdown import _code, _html, _text

    assert _text("a\r\nb & <c> *d* |e|") == "a  b &amp; \\<c\\> \\*d\\* \\|e\\|"
    assert _code("") == ""
    assert _code("a|b") == "`a|b`" and _code("a|b", table=True) == "`a\\|b`"
    assert _code("x`y") == "``x`y``" and _code("``a") == "``` ``a ```" and _code("a`") == "`` a` ``"
    assert _code(" a ") == "`  a  `" and _code(" a") == "` a`" and _code("a ") == "`a `"
    assert _code("a\r\nb") == "`a  b`"
    assert _html('<a href="x">\'&') == "&lt;a href=&quot;x&quot;&gt;&#x27;&amp;"


# ------------------------------------------------------------------------------------------------- terminal


def test_terminal_clean_neutralises_controls_but_keeps_text() -> None:
    from irdiff.render.terminal import _clean

    assert _clean("a\tb é") == "a\tb é"
    assert _clean("x\x1b[2Jy\x07\x9bz\u202e") == "x\ufffd[2Jy\ufffd\ufffdz\ufffd"
