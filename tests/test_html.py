"""The HTML report: real compiles of the seed cases, rendered and opened in a real headless Chromium.

Seed 000 is ``matmul`` on sm86 (``annotated`` against ``unannotated``), seed 001 is ``persistent-matmul`` on sm80
(``persistent`` against ``tiled``). Browser tests skip with one line when Chromium or Playwright is missing
(``apt-get install -y chromium``; ``pip install playwright``, no browser download).
"""

from __future__ import annotations

import base64
import gzip
import json
import re
import struct
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from report_browser import Browser, require_browser, wait_until

from irdiff.cli import cli
from irdiff.normalize.locations import source_map
from irdiff.pipeline import build_comparison
from irdiff.render.html import Highlighter, render_html
from irdiff.render.report import ReportError, is_irdiff_report, write_report

XSS_SUITE = str(Path(__file__).parent / "suites" / "xss.py")
XSS_A = "<img src=x onerror=alert(4)>"
XSS_B = "<svg onload=alert(5)>&amp;"
STAGES = ("python", "ttir", "ttgir", "llir", "ptx", "sass")


# ------------------------------------------------------------------------------------------------ fixtures


@pytest.fixture(scope="module")
def seed0(matmul_sm86):  # type: ignore[no-untyped-def]
    return build_comparison(matmul_sm86, "annotated", "unannotated")


@pytest.fixture(scope="module")
def seed1(compile_suite):  # type: ignore[no-untyped-def]
    bundle = compile_suite("persistent-matmul", ["persistent", "tiled"], "sm80")
    return build_comparison(bundle, "persistent", "tiled")


@pytest.fixture(scope="module")
def xss(compile_suite):  # type: ignore[no-untyped-def]
    bundle = compile_suite(XSS_SUITE, [XSS_A, XSS_B], "sm86")
    bundle.command = ["irdiff", "</script><img src=x onerror=alert(6)>"]
    return build_comparison(bundle, XSS_A, XSS_B)


@pytest.fixture(scope="module")
def reports(tmp_path_factory, seed0, seed1, xss):  # type: ignore[no-untyped-def]
    d = tmp_path_factory.mktemp("html")
    out = {}
    for name, c in (("seed0", seed0), ("seed1", seed1), ("xss", xss)):
        p = d / f"{name}.html"
        p.write_text(render_html(c), encoding="utf-8")
        out[name] = p
    return out


@pytest.fixture(scope="module")
def browser():  # type: ignore[no-untyped-def]
    b = Browser(require_browser())
    yield b
    b.close()


def _inflated(html: str) -> str:
    """The document with every compressed section (gzip + base64 in a script element) unpacked, as the page's
    script does it."""
    parts = [html]
    for m in re.finditer(r'<script type="application/octet-stream" id="[^"]+">([^<]*)</script>', html):
        parts.append(gzip.decompress(base64.b64decode(m.group(1))).decode("utf-8"))
    return "\n".join(parts)


def _line_of(source: str, needle: str) -> int:
    hits = [i for i, ln in enumerate(source.splitlines(), 1) if needle in ln]
    assert hits, needle
    return hits[0]


# ------------------------------------------------------------------------------------------------ source map


def test_source_map_follows_triton_locations(matmul_sm86) -> None:  # type: ignore[no-untyped-def]
    """The dot in every stage maps back to the ``tl.dot`` line of the suite's file (through the call-site chain:
    the tile function is inlined into the wrapper kernel)."""
    v = matmul_sm86.variants["unannotated"]
    path = v.metadata["source_path"]
    dot_line = _line_of(v.text("python"), "tl.dot(")
    checks = {"ttir": "tt.dot ", "ttgir": "tt.dot ", "llir": "mma.sync", "ptx": "mma.sync"}
    for stage, needle in checks.items():
        text = v.text(stage)
        m = source_map(stage, text, path)
        lines = text.splitlines()
        hits = [no for no, ln in enumerate(lines, 1) if needle in ln and not ln.lstrip().startswith(("//", "#", ";"))]
        assert hits, stage
        assert all(m.get(no) == dot_line for no in hits), (stage, [(no, m.get(no)) for no in hits[:5]])
    # SASS from Triton's get_sass carries no line info: nothing maps, nothing is invented.
    assert source_map("sass", v.text("sass"), path) == {}


def test_source_map_formats_of_triton_36() -> None:
    """Triton 3.6 spellings: ``.loc`` with a ``@[ … ]`` comment, MLIR ``:99:0`` columns, ``DILexicalBlockFile``."""
    ptx = (
        "\t.loc\t1 36 24                          // k.py:36:24 @[ k.py:119:63 ]\n\tadd.s32 \t%r1, %r2, 1;\n"
        "\t.loc\t2 43 17, function_name $L__info_string0, inlined_at 1 37 14\n\tmul.lo.s32 \t%r3, %r1, 2;\n"
        '\t.file\t1 "/src/k.py"\n\t.file\t2 "/site/triton/language/standard.py"\n'
    )
    assert source_map("ptx", ptx, "/src/k.py") == {2: 36, 4: 37}
    mlir = (
        '#loc = loc("/src/k.py":99:0)\n'
        "module {\n"
        "  %0 = arith.addi %a, %b : i32 loc(#loc3)\n"
        "  %1 = tt.dot %x, %y, %z : tensor<4xf32> loc(#loc4)\n"
        "}\n"
        '#loc1 = loc("/src/k.py":64:14)\n'
        '#loc2 = loc("/src/k.py":119:4)\n'
        "#loc3 = loc(callsite(#loc1 at #loc2))\n"
        '#loc4 = loc("acc"(#loc3))\n'
    )
    assert source_map("ttgir", mlir, "/src/k.py") == {3: 64, 4: 64}
    llir = (
        "  %5 = add i32 %3, %4, !dbg !12\n"
        '!1 = !DIFile(filename: "k.py", directory: "/src")\n'
        '!4 = distinct !DISubprogram(name: "k", scope: !1, file: !1, line: 99)\n'
        "!13 = distinct !DILexicalBlockFile(scope: !4, file: !1, discriminator: 0)\n"
        "!12 = !DILocation(line: 36, column: 11, scope: !13, inlinedAt: !14)\n"
        "!14 = !DILocation(line: 117, column: 5, scope: !4)\n"
    )
    assert source_map("llir", llir, "/src/k.py") == {1: 36}
    # A bundle made on another machine: matched by file name.
    assert source_map("llir", llir, "/elsewhere/k.py") == {1: 36}


@given(st.text(max_size=400))
def test_source_map_never_raises(text: str) -> None:
    for stage in STAGES:
        m = source_map(stage, text, "/x.py")
        assert all(isinstance(k, int) and isinstance(v, int) for k, v in m.items())


# ------------------------------------------------------------------------------------------------ highlighter


def test_highlighter_escapes_and_marks_spans() -> None:
    hl = Highlighter()
    line = '%x = tt.load %p : tensor<128x32x!tt.ptr<f16>> "</script><b>"'
    toks = hl.token_lines("ttgir", [line])[0]
    assert "".join(t for _, t in toks) == line
    html = str(hl.line_html(toks, [(5, 12)]))
    assert "<b>" not in html and "</script>" not in html and "&lt;/script&gt;" in html
    marked = "".join(re.findall(r'<span class="[^"]*\bx\b[^"]*">([^<]*)</span>', html))
    assert marked == "tt.load"
    assert 'class="' in str(hl.line_html(toks)) and " x" not in str(hl.line_html(toks))


@settings(deadline=None)  # the first example builds five lexers: slow on a loaded 2-core machine
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r"), max_size=80))
def test_highlighter_keeps_text(text: str) -> None:
    """Whatever the lexer does, the visible text of a rendered line is the line itself."""
    hl = Highlighter()
    for stage in ("ttgir", "ptx", "llir", "sass", "python"):
        toks = hl.token_lines(stage, [text])[0]
        html = str(hl.line_html(toks, [(0, len(text) // 2)]))
        visible = re.sub(r"<[^>]+>", "", html)
        import html as h

        assert h.unescape(visible) == text


# ------------------------------------------------------------------------------------------------ static checks


def test_report_is_self_contained_and_small(reports, seed0) -> None:  # type: ignore[no-untyped-def]
    html = reports["seed0"].read_text(encoding="utf-8")
    assert len(html.encode()) <= 2_000_000
    assert html.startswith("<!DOCTYPE html>")
    assert is_irdiff_report(reports["seed0"])
    assert "default-src 'none'" in html
    full = _inflated(html)
    # No external resource of any kind (the SVG namespace is an identifier, not a request).
    refs = re.findall(r'\s(?:src|href|action|data|srcset|poster|background)\s*=\s*"([^"]*)"', full)
    assert [r for r in refs if not r.startswith("#")] == []
    assert "<link" not in full and "@import" not in full and "url(" not in full
    assert set(re.findall(r"https?://[^\s\"'<>]+", full)) <= {"http://www.w3.org/2000/svg"}
    # Every stage of both variants is in the file.
    for stage in STAGES:
        assert f'id="st-{stage}"' in html
    for d in seed0.stage_diffs:
        if d.stage != "python":
            assert f'data-stage="{d.stage}"' in html


def test_report_text_is_escaped(reports) -> None:  # type: ignore[no-untyped-def]
    full = _inflated(reports["xss"].read_text(encoding="utf-8"))
    for frag in ("<img src=x", "<svg onload", "<script>alert", "<b>bold"):
        assert frag not in full, frag
    assert "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;" in full  # the comment / string constant, as text
    assert full.count("<script") == full.count("</script>")


def test_report_shows_findings_spec_and_resources(reports, seed0) -> None:  # type: ignore[no-untyped-def]
    html = reports["seed0"].read_text(encoding="utf-8")
    assert seed0.diagnosis is not None and seed0.diagnosis.findings
    for f in seed0.diagnosis.findings:
        assert f'id="f-{f.id}"' in html
    # Stage 0: the unit strides are constexpr = 1 in unannotated and runtime i32 in annotated.
    row = re.search(r'<tr class="differs"><td><code>stride_ak</code></td><td>([^<]*)</td><td>([^<]*)</td>', html)
    assert row and row.group(1) == "i32" and row.group(2) == "constexpr = 1"
    regs = re.search(r"<td>registers</td><td>(\d+)</td><td>(\d+)</td>", html)
    b = seed0.bundle
    assert regs and (int(regs.group(1)), int(regs.group(2))) == (
        b.variants["annotated"].resources.registers,
        b.variants["unannotated"].resources.registers,
    )


def _h200_timing() -> dict:  # type: ignore[type-arg]
    """A real runner record: ``irdiff matmul --variant annotated --against unannotated --target sm90 --shapes
    1024,2048,4096`` on an NVIDIA H200 (Triton 3.6.0, torch 2.11), ``bundle.runs["timing"]`` as saved."""
    return dict(json.loads((Path(__file__).parent / "golden" / "report" / "h200_matmul_timing.json").read_text()))


def test_timing_table_and_chart(seed0) -> None:  # type: ignore[no-untyped-def]
    """With the runner's record the report has the timing table (ms, TFLOP/s, a/b time ratio), one SVG polyline per
    series (both variants and the torch reference) and the verdicts; without one, no timing section."""
    assert 'id="timing"' not in render_html(seed0)
    rec = _h200_timing()
    seed0.bundle.runs["timing"] = rec
    try:
        html = render_html(seed0)
    finally:
        seed0.bundle.runs.pop("timing")
    start = html.index('<section id="timing">')
    section = html[start : html.index("</section>", start)]
    assert "NVIDIA H200 (sm90)" in html
    assert section.count("<polyline") == 3  # annotated, unannotated, torch_matmul
    rows = rec["rows"]
    for r in rows:
        label = "=".join(r["shape"]) + f"={r['shape']['M']}"
        assert f"<td>{label}</td>" in section
        for name in ("annotated", "unannotated"):
            assert f">{r['variants'][name]['tflops']:.1f}<" in section
        ratio = r["variants"]["annotated"]["median_ms"] / r["variants"]["unannotated"]["median_ms"]
        assert f">{ratio:.2f}×<" in section
    # The chart's points: one circle per series per shape, with a tooltip naming the value.
    assert section.count("<circle") == 3 * len(rows)
    assert f"annotated · M=N=K=4096: {rows[-1]['variants']['annotated']['tflops']:.1f} TFLOP/s" in section
    assert "M=N=K=4096: annotated is 24.9x slower than unannotated" in section


# ------------------------------------------------------------------------------------------------ files and CLI


def test_write_report_refuses_user_files(tmp_path) -> None:  # type: ignore[no-untyped-def]
    user = tmp_path / "notes.html"
    user.write_text("<p>mine</p>")
    with pytest.raises(ReportError, match="not an irdiff report"):
        write_report(str(user), "<html>")
    assert user.read_text() == "<p>mine</p>"
    write_report(str(user), '<!DOCTYPE html><meta name="generator" content="irdiff-report/1">', force=True)
    assert is_irdiff_report(user)
    write_report(str(user), '<!DOCTYPE html><meta name="generator" content="irdiff-report/1">x')  # earlier report
    assert user.read_text().endswith("x")
    with pytest.raises(ReportError, match="directory"):
        write_report(str(tmp_path), "x")


def test_cli_report_command(matmul_sm86, tmp_path) -> None:  # type: ignore[no-untyped-def]
    runner = CliRunner()
    out = tmp_path / "r.html"
    args = ["report", matmul_sm86.directory, "--variant", "annotated", "--against", "unannotated"]
    res = runner.invoke(cli, [*args, "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert is_irdiff_report(out) and out.stat().st_size > 100_000
    user = tmp_path / "user.md"
    user.write_text("my notes\n")
    res = runner.invoke(cli, [*args, "-o", str(user)])
    assert res.exit_code == 2
    assert res.output.strip().splitlines() == [
        f"error: {user} exists and is not an irdiff report; not overwriting it (use --force)"
    ]
    assert user.read_text() == "my notes\n"
    res = runner.invoke(cli, [*args, "-o", str(tmp_path / "x.txt")])
    assert res.exit_code == 2 and "use --format" in res.output and "Traceback" not in res.output
    res = runner.invoke(cli, ["report", str(tmp_path / "nope"), "-o", str(out)])
    assert res.exit_code == 2 and res.output.startswith("error: ")


# ------------------------------------------------------------------------------------------------ browser


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    w, h = struct.unpack(">II", data[16:24])
    return int(w), int(h)


def _check_loaded(page, log, comparison) -> None:  # type: ignore[no-untyped-def]
    assert page.evaluate("document.documentElement.dataset.irdiffReady") == "1"
    assert log.console_errors == []
    assert log.dialogs == []
    assert len(log.requests) == 1 and log.requests[0].startswith("file://")
    n = len(comparison.diagnosis.findings)
    assert n > 0 and page.locator("#findings li.finding").count() == n
    for d in comparison.stage_diffs:
        assert page.locator(f"#st-{d.stage}").count() == 1
        if d.stage != "python" or not d.identical:
            rows = page.locator(f'table.diff[data-stage="{d.stage}"] tr').count()
            assert rows > 0, d.stage


def _click_ir_line(page, stage: str, needle: str, source: str) -> str:  # type: ignore[no-untyped-def]
    """Click the first ``stage`` code cell (left side) containing ``needle``; return the lit source line's text."""
    cell = page.locator(f'table.diff[data-stage="{stage}"] tr > td:nth-child(2)', has_text=needle).first
    cell.scroll_into_view_if_needed()
    cell.click()
    lit = page.locator("table.src tr.hit")
    assert lit.count() == 1, page.inner_text("#srcstatus")
    return str(lit.locator("td").nth(1).inner_text())


def test_browser_seed0(browser, reports, seed0, tmp_path) -> None:  # type: ignore[no-untyped-def]
    with browser.open_report(reports["seed0"]) as (page, log):
        _check_loaded(page, log, seed0)
        src = seed0.bundle.variants["annotated"].text("python")
        assert "tl.dot(" in _click_ir_line(page, "ttgir", "tt.dot", src)
        assert "tl.load(a_ptrs" in _click_ir_line(page, "ptx", "ld.global.b16", src)
        # Clicking the Python line lights up IR lines compiled from it, in several stages.
        page.locator("table.src tr", has_text="acc = tl.dot(").first.click()
        status = page.inner_text("#srcstatus")
        assert "ttgir" in status and "ptx" in status and "llir" in status
        assert page.locator('table.diff[data-stage="ttgir"] td.rel').count() >= 1
        # An evidence link opens its row (unfolding it if needed) and lights it.
        link = page.locator('a.ev[data-stage="ttgir"]').first
        line = link.get_attribute("data-line")
        link.click()
        hit = page.locator('table.diff[data-stage="ttgir"] td.hit')
        assert hit.count() == 1
        assert hit.evaluate("td => td.previousElementSibling.textContent") == line
        assert hit.is_visible()
        # Folds open and close.
        table = page.locator('table.diff[data-stage="ttir"]')
        before = table.locator("tr").count()
        table.locator("button.unfold").first.click()
        assert table.locator("tr").count() > before
        page.click("#collapseall")
        assert table.locator("tr").count() == before
        # Raw text: MLIR lines as Triton printed them, with their locations.
        page.check("#rawtoggle")
        has_loc = (
            "() => [...document.querySelectorAll('table.diff[data-stage=ttgir] td:nth-child(2)')]"
            ".some(td => td.textContent.includes('loc(#loc'))"
        )
        wait_until(page, has_loc)
        page.uncheck("#rawtoggle")
        assert not page.evaluate(has_loc)
        shot = tmp_path / "seed0.png"
        page.evaluate("window.scrollTo(0, 0)")
        page.screenshot(path=str(shot))
        assert _png_size(shot) == (1400, 900)
        assert shot.stat().st_size > 40_000  # text, tables and colours; a blank page is a few KB
        assert log.console_errors == [] and len(log.requests) == 1


def test_browser_seed1(browser, reports, seed1, tmp_path) -> None:  # type: ignore[no-untyped-def]
    with browser.open_report(reports["seed1"]) as (page, log):
        _check_loaded(page, log, seed1)
        src = seed1.bundle.variants["persistent"].text("python")
        lit = _click_ir_line(page, "ttgir", "tt.dot", src)
        assert "tl.dot(" in lit
        shot = tmp_path / "seed1.png"
        page.screenshot(path=str(shot), full_page=False)
        assert _png_size(shot) == (1400, 900) and shot.stat().st_size > 40_000
        assert log.console_errors == [] and len(log.requests) == 1


def test_browser_escaping(browser, reports, xss) -> None:  # type: ignore[no-untyped-def]
    with browser.open_report(reports["xss"]) as (page, log):
        page.evaluate("document.getElementById('expandall').click()")
        page.check("#rawtoggle")
        wait_until(page, "() => document.body.classList.contains('raw')")
        page.locator("#source table.src tr").first.click()
        page.wait_for_timeout(200)
        assert log.dialogs == []
        assert log.console_errors == []
        injected = page.evaluate(
            "() => [document.querySelectorAll('img, iframe, object, embed').length,"
            " document.querySelectorAll('svg[onload], [onerror], [onload]').length,"
            " document.querySelectorAll('script').length]"
        )
        assert injected == [0, 0, reports["xss"].read_text(encoding="utf-8").count("<script")]  # only irdiff's own
        assert XSS_A in page.inner_text("h1") and XSS_B in page.inner_text("h1")
        body = page.inner_text("body")
        assert "</script><img src=x onerror=alert(1)>" in body  # the comment and string constant, as text
        assert len(log.requests) == 1


def test_source_panel_shows_the_kernels_not_the_whole_file(reports, seed0) -> None:  # type: ignore[no-untyped-def]
    """The suite file defines both kernels, the wrappers and the Suite: the panel shows the two kernels (and every
    line the IR maps to or a finding cites), the rest folded."""
    page = reports["seed0"].read_text(encoding="utf-8")
    shown = {int(n) for n in re.findall(r'<tr id="py-s0-(\d+)">', page)}
    src = seed0.bundle.variants["annotated"].text("python").splitlines()
    kernels = set()
    for name in ("annotated", "unannotated"):
        first, last = seed0.bundle.variants[name].metadata["kernel_lines"]
        kernels |= set(range(first, last + 1))
    assert kernels <= shown
    suite_line = _line_of("\n".join(src), "suite = Suite(")
    assert suite_line not in kernels and suite_line not in shown
    assert len(shown) < len(src) and '<tr class="gap">' in page
    # every link to a Python line and every IR → Python mapping lands on a shown row
    linked = {int(n) for n in re.findall(r'href="#py-s0-(\d+)"', page)}
    data = json.loads(re.search(r'<script type="application/json" id="irdiff-maps"[^>]*>(.*?)</script>', page, re.S)[1])
    mapped = {int(x) for stage in data["maps"].values() for side in stage.values() for x in side.values()}
    assert mapped and linked | mapped <= shown
