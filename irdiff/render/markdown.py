"""The Markdown summary (``--md FILE``): GitHub-flavored Markdown to paste into a bug issue.

Sections: header, findings (every one, with its evidence), the stage-0 specialization table, resources, timing
(when measured), a per-stage summary, and the key hunks as unified diffs inside ``<details>`` blocks. GitHub
rejects issue bodies over 65,536 characters, so the summary is kept to :data:`LIMIT` characters: hunks are chosen
by priority (hunks holding a finding's evidence first, then stage order) and cut to fit; findings are never cut.

Escaping: table cells escape ``|`` and HTML-special characters; prose is escaped so that text from a kernel (names,
string constants, comments) renders as text, never as HTML; code blocks are fenced with more backticks than any
run inside them.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from irdiff import stages
from irdiff.render import Comparison, resource_rows, spec_rows, stage_summaries
from irdiff.render.order import ROLE_LABELS, present_findings, standalone_verdict
from irdiff.render.views import header, shapes_note, timing_table

__all__ = ["LIMIT", "MARKER", "render_markdown"]

LIMIT = 60_000  # characters; GitHub's issue body limit is 65,536
MARKER = "<!-- irdiff-report/1 -->"
MAX_HUNK_LINES = 60  # diff lines per hunk shown before "… N more lines"


def stage_title(stage: str) -> str:
    """The declared title of a stage (:mod:`irdiff.stages`), else its name."""
    st = stages.get(stage)
    return st.title if st is not None else stage


def _rank(stage: str) -> int:
    """Which hunks to show first after those holding evidence: ``Stage.report_rank`` (where Triton's decisions are
    visible: TTGIR, TTIR, PTX, SASS, LLIR, Python)."""
    st = stages.get(stage)
    return st.report_rank if st is not None else 9


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>#|~!])")


def _text(s: object) -> str:
    """Prose/table text: Markdown punctuation backslash-escaped, ``&`` as an entity, newlines as spaces."""
    t = str(s).replace("\r", " ").replace("\n", " ")
    t = t.replace("&", "&amp;")
    return _MD_SPECIAL.sub(r"\\\1", t)


def _code(s: object, table: bool = False) -> str:
    """An inline code span holding ``s`` literally; in a table cell ``|`` is written ``\\|`` (GFM removes that
    backslash before it parses the cell, also inside code spans; elsewhere it would show)."""
    t = str(s).replace("\r", " ").replace("\n", " ")
    if table:
        t = t.replace("|", "\\|")
    if not t:
        return ""
    ticks = max((len(m) for m in re.findall(r"`+", t)), default=0) + 1
    fence = "`" * ticks
    pad = " " if t.startswith("`") or t.endswith("`") or (t.startswith(" ") and t.endswith(" ")) else ""
    return f"{fence}{pad}{t}{pad}{fence}"


def _prose(s: str | None) -> str:
    """Findings' prose: keep their ``code`` spans as code, escape the rest."""
    if not s:
        return ""
    parts = re.split(r"`([^`]+)`", s.replace("\n", " "))
    return "".join(_code(p) if i % 2 else _text(p) for i, p in enumerate(parts))


def _html(s: object) -> str:
    return html.escape(str(s), quote=True)


def _table(head: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


@dataclass
class _HunkBlock:
    stage: str
    priority: tuple[int, int, int]
    summary: str
    lines: list[str]
    focus: list[int]  # indices into ``lines`` of evidence lines (shown with context when the hunk is cut)


def _diff_lines(h: Any, raw_a: Sequence[int], raw_b: Sequence[int]) -> list[tuple[str, str, int | None]]:
    """A hunk as unified-diff lines ``(text, side, raw line)``: ``-`` = a (``--variant``), ``+`` = b
    (``--against``); replaced runs are printed as all their ``-`` lines, then all their ``+`` lines."""
    out: list[tuple[str, str, int | None]] = []
    minus: list[tuple[str, str, int | None]] = []
    plus: list[tuple[str, str, int | None]] = []

    def raw(lines: Sequence[int], i: int | None) -> int | None:
        return lines[i] if i is not None and 0 <= i < len(lines) else None

    def flush() -> None:
        out.extend(minus)
        out.extend(plus)
        minus.clear()
        plus.clear()

    for ln in h.lines:
        if ln.tag == "equal":
            flush()
            out.append((" " + (ln.a_text if ln.a_text is not None else ln.b_text or ""), "", None))
            continue
        if ln.a_text is not None:
            minus.append(("-" + ln.a_text, "a", raw(raw_a, ln.a)))
        if ln.b_text is not None:
            plus.append(("+" + ln.b_text, "b", raw(raw_b, ln.b)))
    flush()
    return out


def _fenced(lines: list[str], lang: str = "diff") -> list[str]:
    ticks = max([3] + [len(m) + 1 for ln in lines for m in re.findall(r"`{3,}", ln)])
    fence = "`" * ticks
    return [fence + lang, *lines, fence]


def _hunk_blocks(c: Comparison) -> list[_HunkBlock]:
    evidence: dict[tuple[str, str], set[int]] = {}
    if c.diagnosis is not None:
        for f in (p.finding for p in present_findings(c.diagnosis)):
            for e in f.evidence:
                side = "a" if e.variant == c.a else "b" if e.variant == c.b else ""
                if side and e.line:
                    evidence.setdefault((e.stage, side), set()).add(e.line)
    blocks = []
    for d in c.stage_diffs:
        ev = {"a": evidence.get((d.stage, "a"), set()), "b": evidence.get((d.stage, "b"), set())}
        for k, h in enumerate(d.hunks):
            rows = _diff_lines(h, d.a.raw_line, d.b.raw_line)
            focus = [i for i, (_, side, raw) in enumerate(rows) if side and raw in ev[side]]
            hits = len({(rows[i][1], rows[i][2]) for i in focus})
            minus = sum(1 for ln in h.lines if ln.tag in ("delete", "replace") and ln.a is not None)
            plus = sum(1 for ln in h.lines if ln.tag in ("insert", "replace") and ln.b is not None)
            title = stage_title(d.stage)
            where = f"{title}: {h.header}" if h.header else title
            first_a = d.a.raw_line[h.a_start] if h.a_start < len(d.a.raw_line) else h.a_start + 1
            first_b = d.b.raw_line[h.b_start] if h.b_start < len(d.b.raw_line) else h.b_start + 1
            summary = f"{where} (−{minus} +{plus}; raw lines {first_a} / {first_b})"
            if hits:
                summary += f" · {hits} evidence line{'s' if hits != 1 else ''}"
            blocks.append(
                _HunkBlock(d.stage, (0 if hits else 1, _rank(d.stage), k), summary, [r[0] for r in rows], focus)
            )
    return blocks


def _cut(b: _HunkBlock, max_lines: int, around: int = 4) -> tuple[list[str], int]:
    """At most ``max_lines`` lines of the hunk: windows around its evidence lines (else its start); returns the
    lines (gaps marked ``…``) and how many were left out."""
    n = len(b.lines)
    if n <= max_lines:
        return b.lines, 0
    keep: set[int] = set()
    for i in b.focus:
        window = set(range(max(0, i - around), min(n, i + around + 1)))
        if len(keep | window) > max_lines:
            break
        keep |= window
    if not keep:
        keep = set(range(max_lines))
    out: list[str] = []
    prev = -1
    for i in sorted(keep):
        if i != prev + 1:
            out.append(" …")
        out.append(b.lines[i])
        prev = i
    if prev != n - 1:
        out.append(" …")
    return out, n - len(keep)


def _render_hunk(b: _HunkBlock, max_lines: int) -> list[str]:
    lines, more = _cut(b, max_lines)
    out = ["<details>", f"<summary>{_html(b.summary)}</summary>", "", *_fenced(lines)]
    if more:
        out.append(f"{more} more line{'s' if more != 1 else ''} of this hunk left out (`…`); the HTML report has all.")
    out += ["", "</details>", ""]
    return out


def render_markdown(c: Comparison, limit: int = LIMIT) -> str:
    """The Markdown summary as one string of at most ``limit`` characters (unless the findings alone are longer:
    findings are never cut). Deterministic for a given comparison (no timestamps, no paths of the bundle)."""
    h = header(c)
    out: list[str] = [MARKER]
    out.append(f"## irdiff {_code(h.suite)}: {_code(c.a)} vs {_code(c.b)} ({_text(h.target)})")
    out.append("")
    out += _table(
        ["", ""],
        [
            [
                "variants",
                f"{_code(c.a, True)} ({_code(h.kernel_a, True)}, −) against "
                f"{_code(c.b, True)} ({_code(h.kernel_b, True)}, +)",
            ],
            ["target", _text(h.target)],
            ["GPU", _text(h.gpu)],
            ["Triton", _text(h.triton)],
            ["ptxas", _text(h.ptxas)],
            ["reproduce", _code(h.reproduce, True)],
        ],
    )
    out.append("")

    # Findings: never trimmed.
    out.append("### Findings")
    out.append("")
    diag = c.diagnosis
    if diag is None:
        out.append("Diagnostics were not run.")
    elif not diag.findings:
        out.append(
            "Both variants compile to identical code after normalization."
            if c.identical
            else "No finding explains the differences."
        )
    else:
        verdict = standalone_verdict(diag)
        if verdict:  # else the time.measured finding says it, in its place: printed once
            out += [f"> {_prose(verdict)}", ""]
        role = ""
        for i, p in enumerate(present_findings(diag), 1):
            f = p.finding
            if p.role != role:  # one list per group, numbered on across groups ("3." starts the next list at 3)
                role = p.role
                if out[-1] != "":
                    out.append("")
                out += [f"**{_text(ROLE_LABELS[role]).capitalize()}**", ""]
            # Continuation lines are indented by the marker's width ("10. " is four columns): with less, CommonMark
            # (GitHub) ends the list at item 10 and starts a new one.
            pad = " " * len(f"{i}. ")
            out.append(f"{i}. **{f.severity}** · {_text(f.stage)} · **{_prose(f.title)}** ({_code(f.id)})")
            out.append(f"{pad}{_prose(f.explanation)}")
            if f.causes:
                out.append(f"{pad}*Caused by:* " + ", ".join(_code(x) for x in f.causes))
            if f.remedy:
                out.append(f"{pad}*Remedy:* {_prose(f.remedy)}")
            for e in f.evidence:
                where = f"{e.variant} · {e.stage}" + (f":{e.line}" if e.line else "")
                out.append(f"{pad}- {_text(where)}: {_code(e.text)}")
    out.append("")

    # Stage 0.
    out.append("### Stage 0: specialization")
    out.append("")
    note = shapes_note(c)
    if note:
        out += [f"*{_text(note)}*", ""]
    rows = []
    for r in spec_rows(c):
        rows.append(
            [
                _code(r.name, True),
                _text(r.a.summary()) if r.a else "—",
                _text(r.b.summary()) if r.b else "—",
                "**differs**" if r.differs else "",
            ]
        )
    for k, x, y in h.options:
        rows.append([_code(k, True), _text(x), _text(y), "**differs**" if x != y else ""])
    out += _table(["parameter", _text(c.a), _text(c.b), ""], rows)
    out.append("")

    res = resource_rows(c)
    if res:
        out.append("### Resources")
        out.append("")
        out += _table(["", _text(c.a), _text(c.b)], [[_text(x) for x in r] for r in res])
        out.append("")

    t = timing_table(c)
    if t is not None:
        out.append("### Timing")
        out.append("")
        out.append(f"{_text(t.device)} · {_text(t.method)}")
        out.append("")
        head = ["shape"]
        for s in t.series:
            head += [f"{_text(s.name)} ms", f"{_text(s.name)} TFLOP/s"]
        head.append(f"{_text(c.a)} / {_text(c.b)} time")
        ratios = t.ratios()
        trows = []
        for i, label in enumerate(t.shapes):
            row = [_text(label)]
            for s in t.series:
                ms = s.ms[i]
                tf = s.tflops[i]
                bad = " ✗" if s.correct[i] is False else ""
                row += ["—" if ms is None else f"{ms:.4f}{bad}", "—" if tf is None else f"{tf:.1f}"]
            row.append("—" if ratios[i] is None else f"{ratios[i]:.2f}×")
            trows.append(row)
        out += _table(head, trows)
        out.append("")
        for sentence in t.verdicts:
            out.append(f"- {_text(sentence)}")
        for message in t.findings:
            out.append(f"- ✗ {_text(message)}")
        if t.verdicts or t.findings:
            out.append("")

    summaries = stage_summaries(c)
    if summaries:
        out.append("### Stages")
        out.append("")
        srows = []
        for sm in summaries:
            counts = ", ".join(f"{_code(k, True)} {x} → {y}" for k, x, y in sm.counts if x != y)
            srows.append(
                [
                    stage_title(sm.stage),
                    "identical" if sm.identical else f"−{sm.removed} +{sm.added}",
                    counts or "—",
                ]
            )
        out += _table(["stage", "lines", f"key counts that differ ({_text(c.a)} → {_text(c.b)})"], srows)
        out.append("")
        for d in c.stage_diffs:  # how the alignment was made when not exactly (a huge function: irdiff/align.py)
            for note in getattr(d, "notes", None) or []:
                out += [f"> **{_text(stage_title(d.stage))}**: {_text(note)}", ""]

    # Hunks, by priority, while they fit.
    blocks = sorted(_hunk_blocks(c), key=lambda b: b.priority)
    tail = [
        "",
        f"<sub>Generated by irdiff. `-` lines are {_html(c.a)}, `+` lines are {_html(c.b)}; "
        "normalized text (SSA names, registers and locations renumbered). The HTML report "
        "(<code>--html FILE</code>) has every stage side by side.</sub>",
        "",
    ]
    text = "\n".join(out)
    used = len(text) + len("\n".join(tail)) + 400
    shown: list[str] = []
    skipped = 0
    if blocks:
        shown.append("### Key hunks")
        shown.append("")
        used += 20
    for b in blocks:
        rendered = "\n".join(_render_hunk(b, MAX_HUNK_LINES))
        if used + len(rendered) > limit:
            # Try a shorter cut of the same hunk before giving up on it.
            short = "\n".join(_render_hunk(b, 12))
            if used + len(short) > limit:
                skipped += 1
                continue
            rendered = short
        shown.append(rendered)
        used += len(rendered) + 1
    if skipped:
        shown.append("")
        shown.append(f"*{skipped} more hunk{'s' if skipped != 1 else ''} left out to stay under {limit:,} characters.*")
    result = "\n".join([text, *shown, *tail]).rstrip("\n") + "\n"
    return result
