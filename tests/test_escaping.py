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
