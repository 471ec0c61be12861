"""The Markdown summary (``--md``): GitHub-flavored Markdown checked with markdown-it-py's ``gfm-like`` parser.

Seed 000 (``matmul`` sm86, ``annotated`` against ``unannotated``) is compared with two goldens (``pytest
tests/test_markdown.py --update-goldens`` rewrites them): the recorded bundle's whole report, exactly (the same under
every Triton), and the live compile's report normalized (``tests/goldens.py``: SSA names, line numbers and counts as
``#``) against the golden recorded for the installed Triton — a release with none fails with the update command. The
numbers the normalized golden hides are asserted against the bundle's own facts in ``test_numbers_are_the_bundles``.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from goldens import check_golden, normalize, version_golden
from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from terminal_data import recorded_bundle

from irdiff.pipeline import build_comparison
from irdiff.render.markdown import LIMIT, MARKER, _code, _text, render_markdown
from irdiff.render.report import is_irdiff_report

GOLDEN_DIR = Path(__file__).parent / "golden" / "report"
GOLDEN = GOLDEN_DIR / "matmul_sm86.md"
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


def test_golden(tmp_path_factory: pytest.TempPathFactory, update_goldens: bool) -> None:
    """The recorded bundle's report (python/TTIR/TTGIR and ptxas log, diagnosed by the current rules), exactly."""
    b = recorded_bundle(tmp_path_factory.mktemp("md-golden"))
    md = render_markdown(build_comparison(b, "annotated", "unannotated"))
    check_golden(GOLDEN, md, update_goldens, "tests/test_markdown.py")


def test_live_golden_normalized(md0: str, seed0, update_goldens: bool) -> None:  # type: ignore[no-untyped-def]
    """The live compile's report with numbers as ``#``, against the golden of the installed Triton release."""
    path = version_golden(GOLDEN_DIR, "matmul_sm86.live", seed0.bundle.triton_version, ".md")
    check_golden(path, normalize(md0), update_goldens, "tests/test_markdown.py")


def _counts(text: str, key: str) -> tuple[int, int]:
    """``(a, b)`` of "`key` A vs B" in a finding's explanation."""
    m = re.search(rf"`{re.escape(key)}` (\d+) vs (\d+)", text)
    assert m, f"no count of {key}"
    return int(m.group(1)), int(m.group(2))


def test_numbers_are_the_bundles(md0: str, seed0) -> None:  # type: ignore[no-untyped-def]
    """The exact numbers the normalized golden hides, read from the bundle: ptxas registers, Triton's shared memory,
    PTX instruction counts (from the PTX text) and the SASS instruction count."""
    va, vb = (seed0.bundle.variants[v] for v in ("annotated", "unannotated"))
    ra, rb = va.resources, vb.resources
    assert ra.registers and rb.registers and ra.shared_bytes and rb.shared_bytes
    assert f"Registers per thread: {ra.registers} in `annotated` vs {rb.registers} in `unannotated`" in md0
    assert f"ptxas info    : Used {ra.registers} registers" in va.text("ptxas")
    assert f"shared = {ra.shared_bytes} B (metadata)" in md0 and f"shared = {rb.shared_bytes} B (metadata)" in md0

    def ptx(v, op: str) -> int:  # type: ignore[no-untyped-def]
        """Instructions of ``v``'s PTX with this opcode prefix, predicated (``@%p2 ld...``) or not."""
        return len(re.findall(rf"^\s*(?:@!?%p\d+\s+)?{op}", v.text("ptx"), re.M))

    expected = {
        "cp.async 16B": r"cp\.async\.c[ag]\.shared\.global\b.*,\s*0x10\s*[,;]",
        "cp.async.commit_group": r"cp\.async\.commit_group\b",
        "ld.global.b16": r"ld\.global\.b16\b",
        "st.global.v4.b32": r"st\.global\.v4\.b32\b",
    }
    for key, op in expected.items():
        assert _counts(md0, key) == (ptx(va, op), ptx(vb, op)), key
    assert _counts(md0, "cp.async 16B")[0] == 0 < _counts(md0, "cp.async 16B")[1]
    assert _counts(md0, "ld.global.b16")[0] > 0 == _counts(md0, "ld.global.b16")[1]
    # SASS: every `ctrl<TAB>INSTR` line but the never-executed `@!PT` padding.
    m = re.search(r"SASS has (\d+) instructions in `annotated` and (\d+) in `unannotated`", md0)
    assert m
    for v, shown in ((va, int(m.group(1))), (vb, int(m.group(2)))):
        ins = re.findall(r"^[-\w]{2}:[-\w]:[-\w]:[-\w]:\w+\t(\S+)", v.text("sass"), re.M)
        assert shown == len(ins) - ins.count("@!PT") > 0, (v.name, shown, len(ins))


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
