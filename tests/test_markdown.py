"""The Markdown summary (``--md``): GitHub-flavored Markdown checked with markdown-it-py's ``gfm-like`` parser.

Seed 000 (``matmul`` sm86, ``annotated`` against ``unannotated``) is compared with a golden file
(``pytest --update-goldens`` rewrites it).
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from irdiff.pipeline import build_comparison
from irdiff.render.markdown import LIMIT, MARKER, _code, _text, render_markdown
from irdiff.render.report import is_irdiff_report

GOLDEN = Path(__file__).parent / "golden" / "report" / "matmul_sm86.md"
XSS_SUITE = str(Path(__file__).parent / "suites" / "xss.py")
XSS_A = "<img src=x onerror=alert(4)>"
XSS_B = "<svg onload=alert(5)>&amp;"


def gfm() -> MarkdownIt:
    return MarkdownIt("gfm-like", options_update={"linkify": False})


@pytest.fixture(scope="module")
def seed0(matmul_sm86):  # type: ignore[no-untyped-def]
    return build_comparison(matmul_sm86, "annotated", "unannotated")


@pytest.fixture(scope="module")
def md0(seed0) -> str:  # type: ignore[no-untyped-def]
    return render_markdown(seed0)


def test_golden(md0: str, update_goldens: bool) -> None:
    if update_goldens or not GOLDEN.exists():
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(md0, encoding="utf-8")
        if not update_goldens:
            pytest.skip(f"wrote missing golden {GOLDEN.name}")
    assert md0 == GOLDEN.read_text(encoding="utf-8")


def test_renders_as_github_markdown(md0: str, seed0) -> None:  # type: ignore[no-untyped-def]
    assert len(md0) <= LIMIT
    assert md0.startswith(MARKER)
    tokens = gfm().parse(md0)
    out = gfm().render(md0)
    # Tables: header facts, stage 0, resources, stages.
    assert sum(t.type == "table_open" for t in tokens) == 4
    # Stage 0 row for stride_ak: runtime i32 in annotated, the constant 1 in unannotated.
    row = re.search(r"<tr>\s*<td><code>stride_ak</code></td>\s*<td>(.*?)</td>\s*<td>(.*?)</td>", out, re.S)
    assert row and row.group(1) == "i32" and row.group(2) == "constexpr = 1"
    # Every finding, with its title as the reader sees it.
    assert seed0.diagnosis.findings
    for f in seed0.diagnosis.findings:
        assert f"<code>{html.escape(f.id)}</code>" in out
    # Hunks: each inside <details> with a <summary>, followed by a diff code block.
    opens = [t for t in tokens if t.type == "html_block" and t.content.startswith("<details>")]
    fences = [t for t in tokens if t.type == "fence"]
    assert opens and len(fences) == len(opens)
    assert all(t.info == "diff" for t in fences)
    assert all("<summary>" in t.content and "</summary>" in t.content for t in opens)
    assert out.count("<details>") == out.count("</details>") == len(opens)
    # The pipelining difference is visible in a shown hunk: cp.async in unannotated (+), none in annotated (-).
    plus = "\n".join(ln for t in fences for ln in t.content.splitlines() if ln.startswith("+"))
    minus = "\n".join(ln for t in fences for ln in t.content.splitlines() if ln.startswith("-"))
    assert "async_copy_global_to_local" in plus and "async_copy_global_to_local" not in minus


def test_trims_hunks_never_findings(seed0) -> None:  # type: ignore[no-untyped-def]
    full = render_markdown(seed0)
    base = len(render_markdown(seed0, limit=1_000))  # findings and tables only: nothing fits beside them
    limit = base + 6_000
    small = render_markdown(seed0, limit=limit)
    assert len(small) <= limit < len(full)
    for f in seed0.diagnosis.findings:
        assert f.id in small
        for e in f.evidence:
            assert e.text.replace("\n", " ")[:40] in small.replace("\\|", "|")
    assert small.count("<details>") < full.count("<details>")
    assert f"left out to stay under {limit:,} characters" in small
    assert 0 < small.count("<details>")
    # Findings are never cut, even when they alone exceed the limit.
    tiny = render_markdown(seed0, limit=1_000)
    assert all(f.id in tiny for f in seed0.diagnosis.findings)
    assert "<details>" not in tiny


def test_escapes_kernel_text(compile_suite, tmp_path) -> None:  # type: ignore[no-untyped-def]
    bundle = compile_suite(XSS_SUITE, [XSS_A, XSS_B], "sm86")
    c = build_comparison(bundle, XSS_A, XSS_B)
    md = render_markdown(c)
    out = gfm().render(md)
    text_only = re.sub(r"<(pre|code)[^>]*>.*?</\1>", "", out, flags=re.S)
    assert "<img" not in text_only and "<svg" not in text_only and "<script" not in text_only
    assert html.escape(XSS_A, quote=False) in out  # shown, as text
    p = tmp_path / "s.md"
    p.write_text(md)
    assert is_irdiff_report(p)


_printable = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\u2028\u2029\x85"),
    min_size=1,
    max_size=60,
)


@given(_printable)
def test_code_span_is_literal(s: str) -> None:
    """Any text put in a code span renders as exactly that text (in a paragraph and in a table cell)."""
    if s.strip() == "":
        return
    out = gfm().render(f"x {_code(s)} y")
    m = re.search(r"<code>(.*?)</code>", out, re.S)
    assert m and html.unescape(m.group(1)) == s
    table = gfm().render(f"| a |\n|---|\n| {_code(s, True)} |\n")
    m = re.search(r"<td><code>(.*?)</code></td>", table, re.S)
    assert m and html.unescape(m.group(1)) == s


@given(_printable)
def test_text_is_literal(s: str) -> None:
    """Prose escaping: the rendered paragraph's text is the input (no markup, no HTML)."""
    s = s.strip()
    if not s:
        return
    out = gfm().render(f"x {_text(s)} y")
    assert out.startswith("<p>") and out.rstrip().endswith("</p>")
    inner = out.strip()[3:-4]
    assert "<" not in inner.replace("<br>", "")
    assert html.unescape(inner) == f"x {s} y"


def test_timing_table(seed0) -> None:  # type: ignore[no-untyped-def]
    """The runner's record from an H200 run (see tests/test_html.py) becomes a GFM table with the a/b time ratio."""
    import json

    rec = json.loads((Path(__file__).parent / "golden" / "report" / "h200_matmul_timing.json").read_text())
    assert "### Timing" not in render_markdown(seed0)
    seed0.bundle.runs["timing"] = rec
    try:
        md = render_markdown(seed0)
    finally:
        seed0.bundle.runs.pop("timing")
    out = gfm().render(md)
    assert "<td>NVIDIA H200 (sm90)</td>" in out
    tables = re.findall(r"<table>.*?</table>", out, re.S)
    timing = next(t for t in tables if "TFLOP/s" in t)
    body_rows = re.findall(r"<tr>\s*<td>(M=N=K=\d+)</td>(.*?)</tr>", timing, re.S)
    assert [r[0] for r in body_rows] == ["M=N=K=1024", "M=N=K=2048", "M=N=K=4096"]
    for (_, cells), r in zip(body_rows, rec["rows"]):
        vals = re.findall(r"<td>([^<]*)</td>", cells)
        ratio = r["variants"]["annotated"]["median_ms"] / r["variants"]["unannotated"]["median_ms"]
        assert vals[1] == f"{r['variants']['annotated']['tflops']:.1f}" and vals[-1] == f"{ratio:.2f}×"
    assert len(md) <= LIMIT
