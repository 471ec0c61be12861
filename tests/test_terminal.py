"""Terminal rendering on the real matmul sm86 pair: goldens, the seed-000 acceptance facts, layout, CLI behaviour.

Goldens (``tests/golden/terminal/``) are whole rendered reports at a fixed width, plain and coloured (``cat`` the
``.ansi`` files to see the colours); rewrite them with ``pytest tests/test_terminal.py --update-goldens`` and review
the diff. They render the recorded matmul bundle (``tests/terminal_data``), so they are the same under every Triton
and CI runs them under both of its versions; every other test here asserts version-independent facts on
ANSI-stripped text of a live compile.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from goldens import check_golden
from hypothesis import given, settings
from hypothesis import strategies as st
from terminal_data import recorded_bundle

from irdiff.bundle import Bundle, BundleError
from irdiff.cli import cli
from irdiff.diagnose import Diagnosis, Finding
from irdiff.pipeline import build_comparison, load_pair, parse_stages
from irdiff.render import Comparison, spec_rows
from irdiff.render.order import present_findings
from irdiff.render.terminal import (
    PLAIN,
    TerminalOptions,
    _fit,
    color_enabled,
    emit,
    render,
    render_stage_text,
)

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).parent / "golden" / "terminal"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def strip(text: str) -> str:
    return ANSI.sub("", text)


def section(text: str, stage: str) -> str:
    """The ``━━ STAGE`` section of a rendered report (ANSI-stripped)."""
    plain = strip(text)
    m = re.search(rf"^━━ {stage}\b.*?(?=^━━ |\Z)", plain, re.M | re.S)
    assert m, f"no {stage} section in the output"
    return m.group(0)


def signed(text: str, sign: str) -> list[str]:
    """Bodies of the unified lines with ``sign`` (``-``, ``+`` or `` `` for context): after the gutter ``│ X ``."""
    out = []
    for ln in text.splitlines():
        m = re.match(r"^\s*\d*\s+\d*\s*│ ([-+ ]) (.*)$", ln)
        if m and m.group(1) == sign:
            out.append(m.group(2))
    return out


@pytest.fixture(scope="session")
def pair(matmul_sm86: Bundle) -> Bundle:
    """The fixture bundle with a fixed directory name, so goldens do not depend on pytest's tmp path."""
    return dataclasses.replace(matmul_sm86, directory="<bundle>")


@pytest.fixture(scope="session")
def comparison(pair: Bundle) -> Comparison:
    return build_comparison(pair, "annotated", "unannotated")


@pytest.fixture(scope="session")
def report(comparison: Comparison) -> str:
    return render(comparison, TerminalOptions(color=False, width=120))


@pytest.fixture(scope="session")
def report_color(comparison: Comparison) -> str:
    return render(comparison, TerminalOptions(color=True, width=120))


# --------------------------------------------------------------------------------------------------------------
# Seed-000 acceptance facts (Triton 3.6 and 3.9 alike)
# --------------------------------------------------------------------------------------------------------------


def test_summary_comes_first_and_fits_a_screen(report: str) -> None:
    lines = report.splitlines()
    assert lines[0].startswith("irdiff matmul")
    assert "annotated vs unannotated" in lines[0]
    findings_at = next(i for i, ln in enumerate(lines) if "findings" in ln and ln.startswith("──"))
    assert findings_at <= 24, "the summary should fit on one screen"
    summary = "\n".join(lines[:findings_at])
    # python: the two wrappers' own sources differ (their annotations), not the whole file.
    for stage in ("python", "ttir", "ttgir", "llir", "ptx", "sass"):
        assert re.search(rf"^  {stage}\s+-\d+ \+\d+", summary, re.M), f"no changed-lines entry for {stage}"
    assert "registers 255|" in summary


def test_ptx_summary_counts(report: str) -> None:
    """32 cp.async (16 B) in unannotated against 64 ld.global.b16 in annotated (a|b = annotated|unannotated)."""
    ptx = next(ln for ln in report.splitlines() if ln.startswith("  ptx "))
    cont = report.splitlines()[report.splitlines().index(ptx) + 1]
    text = ptx + " " + cont
    assert "cp.async 16B 0|32" in text
    assert "ld.global.b16 64|0" in text
    assert "st.global.v4.b32 0|16" in text


def test_python_hunk_shows_the_annotations(report: str) -> None:
    py = section(report, "python")
    minus = [ln.strip() for ln in signed(py, "-")]
    assert "stride_ak: int," in minus and "a_ptr: tl.pointer_type," in minus
    assert "stride_ak," in [ln.strip() for ln in signed(py, "+")]
    assert "def KERNEL(" in py and "_matmul_tile" not in py  # only the kernels' own lines, names replaced


def test_ttir_hunk_shows_runtime_strides(report: str) -> None:
    ttir = section(report, "ttir")
    minus = signed(ttir, "-")
    for name in ("stride_ak", "stride_bn", "stride_cn"):
        assert any(re.fullmatch(rf"\s*%{name}\.\d+: i32,?", ln) for ln in minus), f"no removed {name} argument"
        assert not any(name in ln for ln in signed(ttir, "+")), f"{name} should not exist in unannotated"
    # The offsets are multiplied by the runtime stride: splat %stride_ak → X; arith.muli ..., X.
    splat = {m.group(1) for ln in minus for m in [re.search(r"(%\S+) = tt.splat %stride_ak\.\d+", ln)] if m}
    assert splat, "no tt.splat of the runtime stride_ak"
    muli = [ln for ln in minus if "arith.muli" in ln and any(re.search(rf"{re.escape(s)}\b", ln) for s in splat)]
    assert muli, "no arith.muli by the runtime stride in the TTIR hunk"


def test_ttgir_hunk_shows_layout_and_async_copies(report: str) -> None:
    ttgir = section(report, "ttgir")
    minus, plus = signed(ttgir, "-"), signed(ttgir, "+")
    assert any("sizePerThread = [1, 1]" in ln for ln in minus)
    assert any("sizePerThread = [1, 8]" in ln for ln in plus)
    assert not any("sizePerThread = [1, 8]" in ln for ln in minus)
    copies = [ln for ln in plus if "ttg.async_copy_global_to_local" in ln]
    assert len(copies) == 8, "unannotated has 8 async copies (prologue and loop)"
    assert not any("async_copy" in ln for ln in minus + signed(ttgir, " ")), "annotated has no async copies"


def test_intra_line_emphasis_marks_the_changed_number(report_color: str) -> None:
    """In ``sizePerThread = [1, 1]`` vs ``[1, 8]`` the changed element carries the emphasis background."""
    line_a = next(ln for ln in report_color.splitlines() if "sizePerThread" in strip(ln) and "48;5;52m" in ln)
    line_b = next(ln for ln in report_color.splitlines() if "sizePerThread" in strip(ln) and "48;5;22m" in ln)
    assert re.search(r"48;5;88m1\x1b", line_a), "the changed `1` is not emphasised on the - line"
    assert re.search(r"48;5;28m8\x1b", line_b), "the changed `8` is not emphasised on the + line"


def test_color_has_syntax_and_resets(report_color: str, report: str) -> None:
    assert re.search(r"\x1b\[0;38;5;75(;48;5;\d+)?mttg\.async_copy_global_to_local", report_color)
    for ln in report_color.splitlines():
        if "\x1b[" in ln:
            assert ANSI.findall(ln)[-1] == "\x1b[0m", f"line does not end in the default colour: {ln[-40:]!r}"
    assert strip(report_color) == report, "colour must not change the text"


def test_findings_section(comparison: Comparison, report: str) -> None:
    """Every finding of the real diagnosis is listed once, in reading order (root, effects by severity,
    unexplained: irdiff.render.order), with its severity."""
    assert comparison.diagnosis is not None and comparison.diagnosis.findings
    plain = strip(report)
    start = plain.index("── findings")
    end = plain.index("── stage 0")
    body = plain[start:end]
    at = [body.index(f" {p.finding.id} ") for p in present_findings(comparison.diagnosis)]
    assert at == sorted(at)
    for f in comparison.diagnosis.findings:
        assert re.search(rf"^  {f.severity}\s+{re.escape(f.id)} ", body, re.M)
    assert "spec.constexpr-one-lost" in body


def test_stage0_table_marks_differing_rows(report: str) -> None:
    lines = report.splitlines()
    rows = {m.group(1): ln for ln in lines for m in [re.match(r"^  [* ] (\w+)\s", ln)] if m}
    for name in ("stride_ak", "stride_bn", "stride_cn"):
        assert rows[name].startswith("  * "), f"{name} should be marked as differing"
        assert re.search(r"i32\s.*│ constexpr\s+1\b", rows[name])
    # Rows specialized alike are folded into one line naming them (--stage0 full lists them).
    fold = next(ln for ln in lines if re.match(r"^    = \d+ specialized alike: ", ln))
    for name in ("a_ptr", "M", "stride_am"):
        assert name not in rows and re.search(rf"\b{name}\b", fold), f"{name} is specialized alike"


def test_stage0_full_lists_every_row(comparison: Comparison, report: str) -> None:
    full = render(comparison, TerminalOptions(color=False, width=120, stage0_full=True))
    rows = {m.group(1): ln for ln in full.splitlines() for m in [re.match(r"^  [* ] (\w+)\s", ln)] if m}
    for name in ("a_ptr", "M", "stride_am", "BLOCK_SIZE_M", "stride_ak"):
        assert name in rows
    assert rows["a_ptr"].startswith("    ") and rows["stride_ak"].startswith("  * ")
    assert "specialized alike" not in full
    assert len(full.splitlines()) > len(report.splitlines())


@pytest.mark.parametrize("hinted", ["dns_hint", "dns_param_hint"])
def test_stage0_says_in_one_line_that_every_argument_is_alike(compile_suite, hinted: str) -> None:  # type: ignore[no-untyped-def]
    """Two variants whose arguments are all specialized alike (both ``do_not_specialize=["n"]``; one adds a hint in
    the body): stage 0 is one line saying so, not column headers over no row; ``--stage0 full`` still lists every
    row."""
    b = compile_suite(str(SUITES / "readme_add.py"), ["dns", hinted], "sm80")
    c = build_comparison(b, "dns", hinted, stages="python,ttgir")
    assert not any(r.differs for r in spec_rows(c))
    plain = strip(render(c, TerminalOptions(width=120)))
    stage0 = plain[plain.index("── stage 0") :].split("\n\n")[0].splitlines()
    assert (
        stage0[-1]
        == "    all 5 arguments specialized alike: x_ptr, y_ptr, out_ptr, n, BLOCK (--stage0 full shows them)"
    )
    assert not any("argument" in ln and "type" in ln for ln in stage0), stage0
    full = strip(render(c, TerminalOptions(width=120, stage0_full=True)))
    rows = {m.group(1) for ln in full.splitlines() for m in [re.match(r"^    (\w+)\s+(?:\*|i32|constexpr)", ln)] if m}
    assert {"x_ptr", "n", "BLOCK"} <= rows and "specialized alike" not in full
    narrow = strip(render(c, TerminalOptions(width=60)))
    assert all(len(ln) <= 60 for ln in narrow[narrow.index("── stage 0") :].split("\n\n")[0].splitlines()[1:])


def test_unified_soft_wraps_under_the_gutter(comparison: Comparison) -> None:
    """Long TTGIR lines wrap inside the layout width; continuation rows keep the gutter column and start with ↪,
    and joining them gives back the line."""
    out = render(comparison, TerminalOptions(color=False, width=100))
    lines = out.splitlines()
    assert max(len(ln) for ln in lines) <= 100
    cont = [i for i, ln in enumerate(lines) if re.match(r"^\s+│ ↪ ", ln)]
    assert cont, "no wrapped line"
    for i in cont:
        k = i - 1
        while k in cont:
            k -= 1
        gutter = lines[k].index("│")  # the wrapped line's own row: same gutter width (it varies by stage)
        assert lines[i].index("│") == gutter and not lines[i][:gutter].strip()
    # The first wrapped line, re-joined, is a whole (normalized) line of its stage.
    i = cont[0] - 1
    head = re.match(r"^\s*\d*\s+\d*\s*│ [-+ ] (.*)$", lines[i])
    assert head
    parts = [head.group(1)]
    j = i + 1
    while j < len(lines) and re.match(r"^\s+│ ↪ ", lines[j]):
        parts.append(lines[j].split("│ ↪ ", 1)[1])
        j += 1
    texts = {ln for d in comparison.stage_diffs for h in d.hunks for x in h.lines for ln in (x.a_text, x.b_text) if ln}
    assert any(re.sub(r"\s+", "", t) == re.sub(r"\s+", "", "".join(parts)) for t in texts)


def test_order_of_sections(report: str) -> None:
    plain = strip(report)
    order = [
        plain.index(x)
        for x in (
            "key counts",
            "── findings",
            "── stage 0",
            "━━ python",
            "━━ ttir",
            "━━ ttgir",
            "━━ llir",
            "━━ ptx",
            "━━ sass",
        )
    ]
    assert order == sorted(order)


def test_no_color_means_no_escapes(report: str) -> None:
    assert "\x1b" not in report


@pytest.mark.parametrize("width", [120, 200])
@pytest.mark.parametrize("color", [False, True])
def test_side_by_side_fits_width(comparison: Comparison, width: int, color: bool) -> None:
    out = render(comparison, TerminalOptions(color=color, width=width, side_by_side=True))
    body = strip(section(out, "ttgir")) + strip(section(out, "ptx")) + strip(section(out, "sass"))
    widths = [len(ln) for ln in body.splitlines()]
    assert max(widths) <= width
    seps = {ln.index(" │ ") for ln in body.splitlines() if " │ " in ln and not ln.startswith("@@")}
    assert len(seps) == 1, f"the column separator moves: {sorted(seps)[:5]}"
    assert next(iter(seps)) >= width // 2 - 4


def test_side_by_side_pairs_the_layout_change(comparison: Comparison) -> None:
    out = strip(render(comparison, TerminalOptions(width=200, side_by_side=True)))
    row = next(ln for ln in section(out, "ttgir").splitlines() if "sizePerThread = [1, 1]" in ln)
    left, right = row.split(" │ ")
    assert "sizePerThread = [1, 1]" in left and "sizePerThread = [1, 8]" in right


SUITES = Path(__file__).parent / "suites"


@pytest.fixture(scope="module")
def add_pair(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    """README's vector add: ``dns`` (``do_not_specialize=["n"]``) and ``plain``, sm80."""
    b = compile_suite(str(SUITES / "readme_add.py"), ["plain", "dns"], "sm80")
    return dataclasses.replace(b, directory="<bundle>")


def _cells(row: str) -> tuple[str, str]:
    """Left and right cell of a side-by-side row (a row with an empty right cell ends in `` │``)."""
    left, _, right = row.partition(" │")
    return left, right[1:]


@pytest.mark.parametrize(("a", "b"), [("dns", "plain"), ("plain", "dns")])
def test_side_by_side_pairs_a_changed_line_on_one_row(add_pair: Bundle, a: str, b: str) -> None:
    """The argument that gained `tt.divisibility` is one row (`-` left, `+` right) whichever variant is left."""
    c = build_comparison(add_pair, a, b, stages="ttir,ttgir")
    out = strip(render(c, TerminalOptions(width=160, side_by_side=True)))
    for stage in ("ttir", "ttgir"):
        rows = [_cells(ln) for ln in section(out, stage).splitlines() if "%n.0: i32" in ln]
        assert len(rows) == 1, rows
        left, right = rows[0]
        assert re.search(r"^\s*\d*\s+- +%n\.0: i32", left) and re.search(r"^\s*\d*\s+\+ +%n\.0: i32", right)
        assert ("tt.divisibility" in left) == (a == "plain") and ("tt.divisibility" in right) == (b == "plain")


@pytest.mark.parametrize(
    ("fixture", "a", "b"),
    [
        ("pair", "annotated", "unannotated"),
        ("pair", "unannotated", "annotated"),
        ("add_pair", "dns", "plain"),
        ("add_pair", "plain", "dns"),
    ],
)
def test_side_by_side_never_puts_a_plus_row_above_a_minus_row(
    request: pytest.FixtureRequest, fixture: str, a: str, b: str
) -> None:
    """Within a run of changes a `+`-only row is never followed by a `-`-only row: those two share one row."""
    c = build_comparison(request.getfixturevalue(fixture), a, b, stages="ttir,ttgir,ptx")
    out = strip(render(c, TerminalOptions(width=200, side_by_side=True)))
    body = out[out.index("━━ ttir") :]
    kinds = []
    for ln in body.splitlines():
        if " │" not in ln or ln.startswith("@@"):
            continue
        cells = [re.match(r"^\s*\d*\s([-+ ↪])", c) if c.strip() else None for c in _cells(ln)]
        kinds.append(tuple(m.group(1) if m else "" for m in cells))
    assert ("-", "+") in kinds
    for (l1, r1), (l2, r2) in zip(kinds, kinds[1:]):
        assert not (l1 == "" and r1 == "+" and l2 == "-" and r2 == ""), "a + row above a - row"


def test_sbs_rows_pair_deletions_and_insertions_in_either_order() -> None:
    from irdiff.align import DiffLine
    from irdiff.render.terminal import _sbs_rows

    ins = [DiffLine("insert", None, k, None, f"b{k}") for k in range(3)]
    dels = [DiffLine("delete", k, None, f"a{k}", None) for k in range(2)]
    rep = DiffLine("replace", 5, 5, "x", "y")
    for run in (ins + dels, dels + ins):
        assert _sbs_rows(run) == [(dels[0], ins[0]), (dels[1], ins[1]), (None, ins[2])]
    assert _sbs_rows([ins[0], rep, dels[0]]) == [(None, ins[0]), (rep, rep), (dels[0], None)]


def _gutters(text: str) -> list[tuple[str, str, str]]:
    """Unified rows as (raw line a, raw line b, body)."""
    out = []
    for ln in text.splitlines():
        m = re.match(r"^\s*(\d*)\s+(\d*) │ (.*)$", ln)
        if m:
            out.append((m.group(1), m.group(2), m.group(3)))
    return out


def test_split_signature_shows_its_raw_line_once(report: str) -> None:
    """`tt.func` arguments are split one per line, all from one raw line: the number is on the first only."""
    hunk = section(report, "ttir").split("\n@@ ")[1]
    rows = _gutters(hunk)
    first = rows[0]
    assert first[0] and first[1] and "%N.0: i32" in first[2]
    sig_end = next(k for k, r in enumerate(rows) if ") attributes" in r[2])
    assert sig_end >= 5
    assert all(r[0] == "" and r[1] == "" for r in rows[1 : sig_end + 1]), rows[: sig_end + 1]
    assert rows[sig_end + 1][0] == str(int(first[0]) + 1) and rows[sig_end + 1][1] == str(int(first[1]) + 1)
    assert sum(r[2].startswith("-") for r in rows[1:sig_end]) == 3  # stride_ak, stride_bn, stride_cn


def test_split_signature_shows_its_raw_line_once_side_by_side(comparison: Comparison) -> None:
    out = strip(render(comparison, TerminalOptions(width=200, side_by_side=True)))
    hunk = section(out, "ttir").split("\n@@ ")[1].splitlines()[1:]
    numbers = [tuple(re.match(r"^\s*(\d*)", cell).group(1) for cell in _cells(ln)) for ln in hunk]  # type: ignore[union-attr]
    sig_end = next(k for k, ln in enumerate(hunk) if ") attributes" in ln)
    assert all(x for x in numbers[0])
    assert all(n == ("", "") for n in numbers[1 : sig_end + 1]), numbers[: sig_end + 1]
    assert all(x for x in numbers[sig_end + 1])


def test_llir_hunks_use_one_numbering(report: str) -> None:
    """An LLIR value defined on an unchanged line is not also defined on a `-`/`+` line of the same hunk (both
    sides are renumbered together, so unchanged lines read the same on both sides)."""
    llir = section(report, "llir")
    hunks = llir.split("\n@@ ")[1:]
    assert hunks
    for h in hunks:
        ctx: set[str] = set()
        chg: set[str] = set()
        for _, _, body in _gutters(h):
            m = re.match(r"^([-+ ]) \s*(%[\w.$\-]+) = ", body)
            if m:
                (ctx if m.group(1) == " " else chg).add(m.group(2))
        assert not ctx & chg, sorted(ctx & chg)[:5]


@pytest.mark.parametrize(("a", "b"), [("dns", "plain"), ("plain", "dns")])
def test_summary_reads_left_to_right(add_pair: Bundle, a: str, b: str) -> None:
    """Summary direction: `-` is the --variant, `+` the --against, counts are `variant|against` in that order
    (``plain`` has the 128-bit accesses, ``dns`` none)."""
    c = build_comparison(add_pair, a, b, stages="ptx,sass")
    lines = strip(render(c, TerminalOptions(width=200, sides=("--variant", "--against")))).splitlines()
    assert re.match(rf"^  - {a}\s+add  \(--variant\)$", lines[1])
    assert re.match(rf"^  \+ {b}\s+add  \(--against\)$", lines[2])
    # Without the sides' origin (a report of a bundle, a test), no option is named that the user did not give.
    plain = strip(render(c, TerminalOptions(width=200))).splitlines()
    assert re.match(rf"^  - {a}\s+add$", plain[1]) and re.match(rf"^  \+ {b}\s+add$", plain[2])
    assert any(f"key counts ({a}|{b})" in ln for ln in lines)

    def raw_count(variant: str, stage: str, pattern: str) -> int:
        return len(re.findall(pattern, add_pair.variants[variant].text(stage)))

    n = {v: raw_count(v, "sass", r"\bLDG\.E\.128\b") for v in (a, b)}
    assert n["plain"] > 0 and n["dns"] == 0
    sass = next(ln for ln in lines if ln.startswith("  sass "))
    assert f"LDG.E.128 {n[a]}|{n[b]}" in sass
    ptx = next(ln for ln in lines if ln.startswith("  ptx "))
    d = next(x for x in c.stage_diffs if x.stage == "ptx")
    assert re.match(rf"^  ptx\s+-{d.removed} \+{d.added}\s", ptx)
    assert (d.removed > d.added) == (a == "dns"), "dns has more PTX lines: they are `-` when dns is the --variant"


def test_sass_shows_control_codes_in_unified_view(report: str) -> None:
    sass = section(report, "sass")
    assert re.search(r"│ [-0-9A-Za-z]{2}:[-\w]:[-\w]:[-\w]:[0-9a-f]+\s+[-+ ] ", sass)


# --------------------------------------------------------------------------------------------------------------
# Goldens
# --------------------------------------------------------------------------------------------------------------

# Only the first golden carries findings and the stage-0 table; its findings are a fixed Diagnosis, so the goldens
# test the rendering and do not change with the diagnostics' wording (test_findings_section checks the real one).
# Sizes are kept small by picking the stages (the PTX/SASS hunks are thousands of lines).
FIXED_DIAGNOSIS = Diagnosis(
    a="annotated",
    b="unannotated",
    findings=[
        Finding(
            id="spec.constexpr-one-lost",
            severity="critical",
            title="`stride_ak`, `stride_bn` and `stride_cn` lose the constant-1 specialization in `annotated`",
            explanation="In `annotated` the unit strides are runtime `i32` arguments; in `unannotated` the JIT made "
            "them the constant 1, so AxisInfo can prove contiguity along K and N.",
            remedy="drop the `int` annotation on the stride parameters",
            stage="spec",
        ),
        Finding(
            id="pipeline.load-not-pipelined",
            severity="major",
            title="`a` and `b` loads are not pipelined in `annotated`",
            explanation="16-bit loads are too small for cp.async.",
            causes=["spec.constexpr-one-lost"],
            stage="ttgir",
        ),
    ],
    notes=["a fixed diagnosis for the golden file"],
)
GOLDENS: dict[str, dict[str, object]] = {
    "matmul-sm86.unified.txt": dict(color=False, width=120, stages="ttir,ttgir", full=True),
    "matmul-sm86.unified.ansi": dict(color=True, width=120, stages="ttir", full=False),
    "matmul-sm86.side-by-side-120.txt": dict(color=False, width=120, stages="ttgir", side_by_side=True, full=False),
    "matmul-sm86.side-by-side-200.txt": dict(color=False, width=200, stages="ttgir", side_by_side=True, full=False),
    "matmul-sm86.side-by-side-200.ansi": dict(color=True, width=200, stages="ttir", side_by_side=True, full=False),
}


@pytest.fixture(scope="module")
def recorded_pair(tmp_path_factory: pytest.TempPathFactory) -> Bundle:
    """The recorded matmul sm86 bundle (Triton 3.9.0's python/TTIR/TTGIR): the goldens' input under any Triton."""
    return recorded_bundle(tmp_path_factory.mktemp("terminal-goldens"))


@pytest.mark.parametrize("name", sorted(GOLDENS))
def test_golden_report(name: str, recorded_pair: Bundle, update_goldens: bool) -> None:
    spec = dict(GOLDENS[name])
    full = bool(spec.pop("full"))
    c = build_comparison(recorded_pair, "annotated", "unannotated", stages=str(spec.pop("stages")))
    c = dataclasses.replace(c, diagnosis=FIXED_DIAGNOSIS if full else None)
    got = render(c, TerminalOptions(show_spec=full, **spec))  # type: ignore[arg-type]
    check_golden(GOLDEN / name, got, update_goldens, "tests/test_terminal.py")


# --------------------------------------------------------------------------------------------------------------
# Identical variants, helpers
# --------------------------------------------------------------------------------------------------------------


def test_identical_is_one_line(pair: Bundle) -> None:
    v = pair.variants["unannotated"]
    b = dataclasses.replace(
        pair, variants={"x": dataclasses.replace(v, name="x"), "y": dataclasses.replace(v, name="y")}
    )
    out = render(build_comparison(b, "x", "y"), TerminalOptions(color=True))
    assert strip(out).count("\n") == 1
    assert strip(out).startswith(
        "x and y are identical after normalization (python, ttir, ttgir, llir, ptx, sass; sm86)"
    )


def test_unknown_stage_and_variant(pair: Bundle) -> None:
    with pytest.raises(ValueError, match="unknown stage 'foo'"):
        parse_stages("ttgir,foo")
    assert parse_stages("ptx, TTGIR") == ["ttgir", "ptx"]
    with pytest.raises(BundleError, match="variant 'nope' is not in the bundle"):
        build_comparison(pair, "nope", "unannotated")


def test_control_characters_are_neutralised() -> None:
    out = render_stage_text("ttgir", 'tt.func @k() {\n  "\x1b[31mred\x07"\n}\n', color=True)
    assert "\x1b[31m" not in out and "\x07" not in out
    assert "\ufffd[31mred\ufffd" in strip(out)


def test_render_stage_text_colours_tokens(pair: Bundle) -> None:
    out = render_stage_text("ptx", pair.variants["unannotated"].text("ptx"), color=True)
    assert "\x1b[0;38;5;75mcp.async.cg.shared.global" in out
    assert strip(out) == render_stage_text("ptx", pair.variants["unannotated"].text("ptx"), color=False, tabsize=8)


@settings(max_examples=200, deadline=None)
@given(
    text=st.text(alphabet=st.sampled_from("ab ,x\t漢"), max_size=120), width=st.integers(5, 60), rows=st.integers(1, 5)
)
def test_fit_never_exceeds_width(text: str, width: int, rows: int) -> None:
    from irdiff.render.terminal import _expand_tabs, _seg_width

    segs = _expand_tabs([(text, PLAIN)], 4)
    out = _fit(segs, width, rows)
    assert 1 <= len(out) <= rows
    assert all(_seg_width(r) <= width for r in out)
    joined = "".join(t for r in out for t, _ in r)
    if not joined.endswith("…"):
        assert joined.replace(" ", "") == "".join(t for t, _ in segs).replace(" ", "")


class _Tty:
    def isatty(self) -> bool:
        return True


def test_color_enabled_rules() -> None:
    tty = _Tty()
    assert color_enabled("auto", tty, {}) is True
    assert color_enabled("auto", tty, {"NO_COLOR": "1"}) is False
    assert color_enabled("auto", tty, {"NO_COLOR": ""}) is True  # only a non-empty NO_COLOR counts
    assert color_enabled("auto", tty, {"TERM": "dumb"}) is False
    assert color_enabled("auto", object(), {}) is False
    assert color_enabled("auto", object(), {"FORCE_COLOR": "1"}) is True
    assert color_enabled("always", object(), {"NO_COLOR": "1"}) is True  # a command-line flag wins
    assert color_enabled("never", tty, {"FORCE_COLOR": "1"}) is False
    with pytest.raises(ValueError):
        color_enabled("sometimes", tty, {})


# --------------------------------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------------------------------


def invoke(args: list[str], env: dict[str, str] | None = None) -> tuple[int, str, str]:
    base = {"NO_COLOR": None, "FORCE_COLOR": None, "IRDIFF_COLOR": None, "PAGER": None, "COLUMNS": "120"}
    r = CliRunner().invoke(cli, args, env={**base, **(env or {})}, catch_exceptions=False)  # type: ignore[dict-item]
    return r.exit_code, r.stdout, r.stderr


def test_cli_diff_bundle(matmul_sm86: Bundle) -> None:
    code, out, err = invoke(
        ["diff", matmul_sm86.directory, "--variant", "annotated", "--against", "unannotated", "--stage", "ttgir"]
    )
    assert code == 0, err
    assert "\x1b" not in out  # CliRunner's stdout is not a terminal
    assert "━━ ttgir" in out and "━━ ptx" not in out
    assert "stage 0" in out  # --stage picks the hunks; the summary, findings and stage 0 always come first


@pytest.mark.parametrize(
    ("args", "env", "colored"),
    [
        ([], {"FORCE_COLOR": "1"}, True),
        ([], {"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),
        (["--color", "always"], {"NO_COLOR": "1"}, True),
        (["--color", "never"], {"FORCE_COLOR": "1"}, False),
        ([], {"IRDIFF_COLOR": "always"}, True),
    ],
)
def test_cli_color_switches(matmul_sm86: Bundle, args: list[str], env: dict[str, str], colored: bool) -> None:
    code, out, err = invoke(
        ["diff", matmul_sm86.directory, "--variant", "annotated", "--against", "unannotated", "--stage", "ttir", *args],
        env,
    )
    assert code == 0, err
    assert ("\x1b[" in out) is colored


def test_cli_unknown_stage_is_one_line(matmul_sm86: Bundle) -> None:
    code, out, err = invoke(["diff", matmul_sm86.directory, "--stage", "ttgir,tgir"])
    assert code == 2
    assert err.strip().splitlines() == [
        "error: unknown stage 'tgir'; did you mean 'ttgir' or 'ttir' or 'llir'? (choose from python, ttir, ttgir, llir, ptx, sass)"
    ]
    assert "Traceback" not in out + err


def test_cli_compare_unknown_stage_fails_before_compiling() -> None:
    code, out, err = invoke(["matmul", "--target", "sm86", "--stage", "nope"])
    assert code == 2
    assert err.strip().splitlines() == [
        "error: unknown stage 'nope' (choose from python, ttir, ttgir, llir, ptx, sass)"
    ]
    assert out == ""


def test_cli_bad_color_value(matmul_sm86: Bundle) -> None:
    code, _, err = invoke(["diff", matmul_sm86.directory, "--color", "sometimes"])
    assert code == 2 and "'sometimes' is not one of 'auto', 'always', 'never'" in err


def test_cli_diff_two_variant_dirs_and_identical(matmul_sm86: Bundle) -> None:
    d = matmul_sm86.directory
    code, out, err = invoke(["diff", f"{d}/annotated", f"{d}/unannotated", "--stage", "ptx"])
    assert code == 0, err
    assert "annotated vs unannotated" in out and "cp.async 16B 0|32" in out
    code, out, err = invoke(["diff", f"{d}/unannotated", f"{d}/unannotated"])
    assert code == 0, err
    assert out.count("\n") == 1 and "are identical after normalization" in out


def test_cli_diff_bad_path(tmp_path: Path) -> None:
    code, _, err = invoke(["diff", str(tmp_path), str(tmp_path)])
    assert code == 2
    assert err.startswith(f"error: {tmp_path} is not an irdiff bundle, variant dir or capture")
    assert "nor a Triton cache" in err and len(err.strip().splitlines()) == 1


def test_cli_show(matmul_sm86: Bundle) -> None:
    code, out, err = invoke(
        ["show", matmul_sm86.directory, "--variant", "unannotated", "--stage", "ptx", "--color", "always"]
    )
    assert code == 0, err
    assert "\x1b[0;38;5;75mcp.async.cg.shared.global" in out
    code, out, err = invoke(
        ["show", matmul_sm86.directory, "--variant", "annotated", "--stage", "ttgir", "--normalized"]
    )
    assert code == 0, err
    assert "@KERNEL" in out and "loc(" not in out
    code, _, err = invoke(["show", matmul_sm86.directory, "--stage", "cubin"])
    assert code == 2 and err.startswith("error: unknown stage 'cubin'")


def test_cli_compare_renders(matmul_sm86: Bundle) -> None:
    """The suite-first form compiles (cached) and renders: ``irdiff matmul --variant annotated --against unannotated``."""
    code, out, err = invoke(
        [
            "matmul",
            "--variant",
            "annotated",
            "--against",
            "unannotated",
            "--target",
            "sm86",
            "--stage",
            "ttgir",
            "--no-run",
        ]
    )
    assert code == 0, err
    assert "irdiff matmul" in out and "━━ ttgir" in out and "sizePerThread = [1, 8]" in out


def test_load_pair_two_bundles(matmul_sm86: Bundle, matmul_sm90: Bundle) -> None:
    b, x, y = load_pair(matmul_sm86.directory, matmul_sm90.directory, "annotated")
    assert (x, y) != ("annotated", "annotated") and x.endswith("/annotated") and y.endswith("/annotated")
    assert b.target == "sm86 | sm90"


# --------------------------------------------------------------------------------------------------------------
# Pager and broken pipe (real processes)
# --------------------------------------------------------------------------------------------------------------


def _py(code: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    full.pop("LESS", None)
    return subprocess.run([sys.executable, "-c", code], env=full, capture_output=True, text=True, timeout=60)


def test_pager_is_used_and_gets_less_r() -> None:
    code = "from irdiff.render.terminal import emit; emit('one\\ntwo\\n', paging='always')"
    r = _py(code, {"PAGER": "sed s/^/paged:/"})
    assert r.returncode == 0, r.stderr
    assert r.stdout == "paged:one\npaged:two\n"
    r = _py(code, {"PAGER": "printenv LESS"})
    assert r.stdout.strip() == "FRX"
    r = _py(code, {"PAGER": "no-such-pager-xyz"})
    assert r.stdout == "one\ntwo\n", "a pager that does not start falls back to stdout"
    r = _py(code.replace("'always'", "'auto'"), {"PAGER": "sed s/^/paged:/"})
    assert r.stdout == "one\ntwo\n", "auto never pages when stdout is not a terminal"


def test_broken_pipe_is_quiet(matmul_sm86: Bundle) -> None:
    cmd = f"{sys.executable} -m irdiff diff {matmul_sm86.directory} --variant annotated --against unannotated --color never | head -1"
    r = subprocess.run(
        ["bash", "-c", cmd], capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)}
    )
    assert r.stdout.startswith("irdiff diff · matmul")
    assert r.stderr == "", r.stderr


def test_emit_writes_to_stream_when_not_paging() -> None:
    import io

    buf = io.StringIO()
    emit("x\n", paging="auto", stream=buf, env={})
    assert buf.getvalue() == "x\n"
    with pytest.raises(ValueError):
        emit("x\n", paging="sometimes", stream=buf, env={})


def test_default_output_shows_readable_stages_and_points_at_the_rest(matmul_sm86: Bundle) -> None:
    code, out, err = invoke(["diff", matmul_sm86.directory, "--color", "never", "--paging", "never"])
    assert code == 0, err
    assert "━━ ttgir" in out and "━━ ptx" not in out and "━━ sass" not in out
    last = out.strip().splitlines()[-1]
    assert last.startswith("not shown: llir -") and "--stage all (or --stage llir,ptx,sass)" in last
    assert "ld.global.b16 0|64" in out  # the summary still counts PTX (unannotated|annotated)
    code, out, err = invoke(["diff", matmul_sm86.directory, "--color", "never", "--paging", "never", "--stage", "all"])
    assert code == 0 and "━━ ptx" in out and "━━ sass" in out and "not shown" not in out


def test_raw_python_compares_the_kernel_functions(pair: Bundle) -> None:
    """``--raw`` keeps names and text as written but still diffs the two kernel functions, not the shared file
    (where it used to say ``python identical``)."""
    c = build_comparison(pair, "annotated", "unannotated", stages="python", raw=True)
    (d,) = c.stage_diffs
    assert not d.identical and d.removed and d.added
    first, last = pair.variants["annotated"].metadata["kernel_lines"]
    assert d.a.raw_line == list(range(first, last + 1))
    assert any("def matmul_kernel_annotated" in ln for ln in d.a.lines)  # raw: the real name, not KERNEL
    assert not any("def matmul_kernel_unannotated" in ln for ln in d.a.lines)


def _ttgir_lines(tmp: Path) -> list[str]:
    """The recorded matmul's normalized TTGIR lines (a real text with long layout-annotated lines)."""
    from irdiff.normalize import normalize

    b = recorded_bundle(tmp)
    v = b.variants["annotated"]
    return normalize("ttgir", v.text("ttgir"), v.kernel or None).lines


def test_token_memo_gives_the_lexers_tokens_and_confines_what_it_reads(tmp_path: Path) -> None:
    """Syntax tokens of shown lines kept in a memo (``TerminalOptions.token_cache``) are read back as the lexer
    gives them; an entry of any other shape (damaged, another key, a token outside its line or on a line not
    shown, an unknown kind of token name) is ignored and the lines lexed again; other runs of the same lines are
    another entry."""
    import zlib

    from irdiff.render import terminal as T

    lines = _ttgir_lines(tmp_path)
    shown = list(range(3, 40)) + list(range(60, 90))
    want = T._lex_lines("ttgir", lines, shown)
    assert sum(map(len, want)) > 300
    memo = str(tmp_path / "tokens")
    assert T._lex_lines("ttgir", lines, shown, memo) == want  # lexed, and stored
    (entry,) = list((tmp_path / "tokens").iterdir())
    assert T._lex_lines("ttgir", lines, shown, memo) == want  # read back
    real = T._read_tokens
    assert real(memo, entry.name.removesuffix(".json.z"), lines, T._runs_of(shown)) is not None
    data = json.loads(zlib.decompress(entry.read_bytes()))

    def damaged(change: object) -> None:
        entry.write_bytes(zlib.compress(json.dumps(change).encode()) if not isinstance(change, bytes) else change)
        key = entry.name.removesuffix(".json.z")
        assert real(memo, key, lines, T._runs_of(shown)) is None, change
        assert T._lex_lines("ttgir", lines, shown, memo) == want  # lexed again (and stored again)
        assert real(memo, key, lines, T._runs_of(shown)) is not None

    damaged(b"not zlib")
    damaged({**data, "key": "0" * 64})
    damaged({**data, "format": 99})
    damaged({**data, "types": ["Token.Keyword", "os.system"]})
    damaged({**data, "types": [7]})
    toks = data["tokens"]
    damaged({**data, "tokens": toks[:-1]})  # not groups of four
    damaged({**data, "tokens": [50, 0, 1, 0] + toks[4:]})  # line 50 is not shown
    damaged({**data, "tokens": [3, 0, len(lines[3]) + 1, 0] + toks[4:]})  # past the end of its line
    damaged({**data, "tokens": [3, 2, 2, 0] + toks[4:]})  # empty
    damaged({**data, "tokens": [3, 0, 1, len(data["types"])] + toks[4:]})  # no such type
    damaged({**data, "tokens": [3, 0, 1, True] + toks[4:]})
    other = list(range(3, 41)) + list(range(60, 90))  # one line more: another entry
    assert T._lex_lines("ttgir", lines, other, memo) == T._lex_lines("ttgir", lines, other)
    assert len(list((tmp_path / "tokens").iterdir())) == 2


def test_token_memo_that_cannot_be_written_is_only_slower(tmp_path: Path) -> None:
    from irdiff.render import terminal as T

    lines = _ttgir_lines(tmp_path)
    (tmp_path / "tokens").write_text("a file where the directory should be")
    assert T._lex_lines("ttgir", lines, range(10), str(tmp_path / "tokens")) == T._lex_lines("ttgir", lines, range(10))


def _segments_per_char(text: str, toks: list, bg: int | None, emph_bg: int | None, spans: list) -> list:
    """The reference: foreground and emphasis decided character by character, then maximal runs."""
    from irdiff.render.terminal import PLAIN, Style

    n = len(text)
    fg = [PLAIN] * n
    for s, e, style in toks:
        for i in range(max(0, s), min(n, e)):
            fg[i] = style
    em = [False] * n
    for sp in spans:
        for i in range(max(0, sp.start), min(n, sp.end)):
            em[i] = True
    segs, i = [], 0
    while i < n:
        j = i + 1
        while j < n and fg[j] == fg[i] and em[j] == em[i]:
            j += 1
        segs.append((text[i:j], Style(fg[i].fg, emph_bg if em[i] else bg, fg[i].bold, fg[i].dim)))
        i = j
    return segs


_STYLES = st.sampled_from([(75, False), (80, True), (179, False), (None, False)])
_RANGE = st.tuples(st.integers(-3, 30), st.integers(-3, 30))


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet="ab %.\t", max_size=25),
    toks=st.lists(st.tuples(_RANGE, _STYLES), max_size=6),
    spans=st.lists(_RANGE, max_size=4),
    bg=st.sampled_from([None, 52]),
)
def test_line_segments_match_the_per_character_reference(text: str, toks: list, spans: list, bg: int | None) -> None:
    """Overlapping, empty, reversed and out-of-range tokens and spans: the same runs as deciding every character."""
    from irdiff.align import Span
    from irdiff.render.terminal import Style, _line_segments

    tk = [(s, e, Style(fg=f, bold=b)) for (s, e), (f, b) in toks]
    sp = [Span(s, e) for s, e in spans]
    assert _line_segments(text, tk, bg, 88, sp) == _segments_per_char(text, tk, bg, 88, sp)


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=st.sampled_from("ab ,\t~\u4e00\uff21é"), max_size=20), width=st.integers(-2, 25))
def test_fitting_chars_counts_columns(text: str, width: int) -> None:
    """ASCII text takes its shortcut; wide characters (CJK, fullwidth) count two columns: the same answer as
    adding up every character's width."""
    import unicodedata

    from irdiff.render.terminal import _fitting_chars

    used, want = 0, len(text)
    for i, ch in enumerate(text):
        used += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
        if used > width:
            want = i
            break
    assert _fitting_chars(text, width) == want


def test_token_memo_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past ``TOKENS_MAX_FILES`` entries the least recently written quarter goes; what was just written stays."""
    from irdiff.render import terminal as T

    monkeypatch.setattr(T, "TOKENS_MAX_FILES", 8)
    memo = tmp_path / "tokens"
    memo.mkdir()
    for k in range(8):
        (memo / f"{k:064x}.json.z").write_bytes(b"x")
        os.utime(memo / f"{k:064x}.json.z", ns=(10**18 + k, 10**18 + k))
    (memo / "notes.txt").write_text("not an entry")
    lines = _ttgir_lines(tmp_path)
    T._lex_lines("ttgir", lines, range(5), str(memo))  # a ninth entry, written now
    left = sorted(p.name for p in memo.iterdir())
    assert len(left) == 7 and "notes.txt" in left  # 9 entries -> 6
    assert f"{0:064x}.json.z" not in left and f"{7:064x}.json.z" in left
    assert T._lex_lines("ttgir", lines, range(5), str(memo)) == T._lex_lines("ttgir", lines, range(5))
