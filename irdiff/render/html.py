"""The HTML report: one self-contained file to attach to a bug issue (``--html FILE``, ``irdiff report``).

The file needs nothing but a browser: CSS and JavaScript are inlined from ``render/static/``, there are no
external resources, and a Content-Security-Policy (``default-src 'none'``, scripts only by nonce) makes the browser
refuse any network request and any script that was not written by irdiff, even if a kernel's text tried to inject
one. Every text from the bundle goes through jinja2's autoescaping (``render/templates/report.html.j2``) or the
syntax highlighter's escaping (:meth:`Highlighter.line_html`). Stage tables larger than :data:`COMPRESS_ABOVE`
and the raw texts behind the raw/normalized toggle are stored gzip-compressed and base64-encoded in inert
``<script type="application/octet-stream">`` elements; the page's script inflates them with the browser's
``DecompressionStream`` (Chromium 80+, Firefox 113+, Safari 16.4+), which keeps the matmul report at ~0.6 MB
instead of ~3.6 MB.

Sections: header (suite, variants, target, GPU, Triton and ptxas versions, the command line to reproduce),
findings (the diagnosis chain, evidence linked to its line), stage 0 (the JIT's specialization of each
parameter), resources (ptxas ``-v``, Triton's metadata, occupancy from the diagnosis facts), timing (table and an
inline SVG chart of TFLOP/s per shape, when the runner measured), one side-by-side diff per stage (pygments colors,
intra-line changed tokens, unchanged runs folded, a raw/normalized text toggle), logs, and the kernel's Python
source. Clicking an IR line lights up the Python line it came from (Triton's location info, see
:mod:`irdiff.normalize.locations`); clicking a Python line lights up the IR lines compiled from it.

Measured by ``benchmarks/bench_html.py`` (matmul, all six stages of both variants, Triton 3.9, 2-core machine):
sm86 0.61 MB, ``render_html`` 0.9 s, Chromium ready and painted in 0.3-0.4 s; sm90 0.62 MB, 0.5 s in Chromium.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

import jinja2
from markupsafe import Markup, escape
from pygments.formatters import HtmlFormatter
from pygments.token import _TokenType

from irdiff import __version__, stages
from irdiff.normalize.locations import source_map
from irdiff.render import Comparison, resource_rows, spec_rows, stage_summaries
from irdiff.render.order import ROLE_LABELS, present_findings, standalone_verdict
from irdiff.render.views import Header, TimingTable, header, shapes_note, timing_table

__all__ = ["render_html", "REPORT_GENERATOR", "Highlighter"]

REPORT_GENERATOR = "irdiff-report/1"
LOG_TITLES = {"ptxas": "ptxas -v", "llvm_debug": "LLVM debug (coalescing, pipelining)"}


def _stage_title(stage: str) -> str:
    """A stage's heading: its declared title (:mod:`irdiff.stages`), "Python source" for the source stage."""
    st = stages.get(stage)
    if st is None:
        return stage.upper()
    return f"{st.title} source" if st.origin == "source" else st.title


# Stage tables whose rows take more HTML than this are stored gzip-compressed (base64) and inflated by the page's
# script with the browser's DecompressionStream; the raw texts behind the raw/normalized toggle always are.
COMPRESS_ABOVE = 96_000


# ----------------------------------------------------------------------------------------------- highlighting


def _esc(text: str) -> str:
    """Escape element content (``&``, ``<``, ``>``; quotes need no escaping outside attributes), as
    :func:`markupsafe.escape` does but without building a Markup per token."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class Highlighter:
    """Pygments highlighting, one line at a time, with intra-line change marks.

    Tokens come from the irdiff lexers (:func:`irdiff.lexers.lexer_for_stage`); class names and the style sheet
    come from pygments' :class:`~pygments.formatters.HtmlFormatter` (``style``), so the CSS is emitted once for
    the whole report (:meth:`css`). Each line is lexed as part of its whole text (multi-line tokens keep their
    state) and rendered as escaped text in ``<span class="…">``; changed character ranges get the extra class
    ``x``.
    """

    def __init__(self, style: str = "default") -> None:
        self.formatter = HtmlFormatter(style=style, nowrap=True)
        self._class: dict[_TokenType, str] = {}

    def css(self, scope: str = ".hl") -> str:
        """The token style rules, scoped under ``scope``."""
        return "\n".join(self.formatter.get_token_style_defs(scope))

    def css_class(self, ttype: _TokenType) -> str:
        """The formatter's class for a token type (walking up to the nearest styled parent; ``""`` for text)."""
        cls = self._class.get(ttype)
        if cls is None:
            t: _TokenType | None = ttype
            cls = ""
            while t is not None:
                if t in self.formatter.ttype2class:
                    cls = self.formatter.ttype2class[t]
                    break
                t = t.parent
            if cls == "w":
                cls = ""
            self._class[ttype] = cls
        return cls

    def token_lines(self, stage: str, lines: Sequence[str]) -> list[list[tuple[str, str]]]:
        """``lines`` lexed together; per line, a list of ``(css class, text)`` with adjacent same-class runs
        merged. Stages without a lexer come back as one plain run per line."""
        from irdiff.lexers import lexer_for_stage

        lexer = lexer_for_stage(stage) if lines else None
        if lexer is None:
            return [[("", ln)] for ln in lines]
        lexer.stripnl = False
        lexer.stripall = False
        lexer.ensurenl = True
        out: list[list[tuple[str, str]]] = [[]]
        for ttype, value in lexer.get_tokens("\n".join(lines)):
            cls = self.css_class(ttype)
            parts = value.split("\n")
            for k, part in enumerate(parts):
                if k:
                    out.append([])
                if part:
                    cur = out[-1]
                    if cur and cur[-1][0] == cls:
                        cur[-1] = (cls, cur[-1][1] + part)
                    else:
                        cur.append((cls, part))
        # The lexer added a final newline; drop what follows it. A lexer that lost text falls back to plain.
        out = out[: len(lines)]
        while len(out) < len(lines):
            out.append([])
        for i, ln in enumerate(lines):
            if "".join(t for _, t in out[i]) != ln:
                out[i] = [("", ln)]
        return out

    @staticmethod
    def line_html(tokens: list[tuple[str, str]], spans: Iterable[tuple[int, int]] = ()) -> Markup:
        """One line as HTML: escaped text in class spans; characters in ``spans`` (``[start, end)``) get ``x``."""
        marks = sorted((s, e) for s, e in spans if e > s)
        if not marks:
            parts = [f'<span class="{cls}">{escape(text)}</span>' if cls else str(escape(text)) for cls, text in tokens]
            return Markup("".join(parts))
        bounds = sorted({0, *(p for se in marks for p in se)})
        out: list[str] = []
        pos = 0
        for cls, text in tokens:
            end = pos + len(text)
            cuts = [b for b in bounds if pos < b < end]
            start = pos
            for stop in [*cuts, end]:
                piece = text[start - pos : stop - pos]
                changed = any(s <= start < e for s, e in marks)
                c = (cls + " x").strip() if changed else cls
                out.append(f'<span class="{c}">{_esc(piece)}</span>' if c else _esc(piece))
                start = stop
            pos = end
        return Markup("".join(out))


# ----------------------------------------------------------------------------------------------- view model


@dataclass
class Row:
    """One side-by-side row: ``kind`` is ``e`` (equal), ``d`` (only a), ``i`` (only b), ``r`` (replaced);
    ``an``/``bn`` are raw line numbers (None on the empty side)."""

    kind: str
    an: int | None
    ah: Markup
    bn: int | None
    bh: Markup


@dataclass
class Block:
    """A hunk (shown) or a fold (an unchanged run, collapsed; ``rows`` go into a ``<template>``)."""

    fold: bool
    header: str
    rows: list[Row]
    count: int = 0


@dataclass
class StageView:
    stage: str
    title: str
    identical: bool
    added: int
    removed: int
    a_lines: int
    b_lines: int
    counts: list[tuple[str, int, int]]
    blocks: list[Block]
    mapped: bool
    note: str = ""
    body: Markup = field(default_factory=Markup)  # the rows (tbody elements), when stored as plain HTML
    body_z: str = ""  # the rows gzip-compressed and base64-encoded, when larger than COMPRESS_ABOVE
    rows_total: int = 0


@dataclass
class EvidenceView:
    variant: str
    side: str  # "a", "b" or ""
    stage: str
    line: int | None
    text: str
    href: str
    target: str  # "row" (diff row, found by script), "id" (plain anchor), "" (no link)
    nth: int = 0  # which of the rows showing raw line ``line`` (a raw line split into several normalized lines)


@dataclass
class FindingView:
    id: str
    anchor: str
    severity: str
    title: str
    title_html: Markup
    explanation: Markup
    remedy: Markup | None
    stage: str
    causes: list[tuple[str, str, str]]  # (id, anchor, title)
    effects: list[tuple[str, str, str]]
    evidence: list[EvidenceView]
    role: str = "root"  # irdiff.render.order: root, effect or unexplained


@dataclass
class FindingGroup:
    """Consecutive findings of one role (root, effects, unexplained); ``start`` numbers the list on."""

    role: str
    label: str
    start: int
    findings: list[FindingView]


@dataclass
class SourceView:
    """One Python file of the report's source panel. ``rows``: what is shown, ``(line number, html)`` or None for
    a fold of lines left out (the file minus the kernels, their callees and every line the IR or a finding points
    at); every line when the bundle does not say where the kernels are."""

    key: str
    path: str
    variants: list[str]
    lines: list[Markup]
    rows: list[tuple[int, Markup] | None] = field(default_factory=list)


@dataclass
class LogView:
    variant: str
    side: str
    log: str
    title: str
    lines: list[str]


@dataclass
class ChartView:
    width: int
    height: int
    left: int
    top: int
    plot_w: int
    plot_h: int
    y_ticks: list[tuple[float, str]]
    x_labels: list[tuple[float, str]]
    lines: list[dict[str, Any]] = field(default_factory=list)


_BACKTICK = re.compile(r"`([^`]+)`")


def _prose(text: str | None) -> Markup:
    """Escape, then turn ``code`` spans into ``<code>`` (the only markup findings' prose uses)."""
    if not text:
        return Markup("")
    esc = str(escape(text))
    return Markup(_BACKTICK.sub(lambda m: f"<code>{m.group(1)}</code>", esc))


def _anchor(prefix: str, text: str) -> str:
    return prefix + re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-")


def _stage_view(hl: Highlighter, d: Any, counts: list[tuple[str, int, int]], mapped: bool) -> StageView:
    a, b = d.a, d.b
    ta = hl.token_lines(d.stage, a.lines)
    tb = hl.token_lines(d.stage, b.lines)
    ha: dict[int, Markup] = {}
    hb: dict[int, Markup] = {}

    def html_a(i: int) -> Markup:
        if i not in ha:
            ha[i] = hl.line_html(ta[i])
        return ha[i]

    def html_b(i: int) -> Markup:
        if i not in hb:
            hb[i] = hl.line_html(tb[i])
        return hb[i]

    def ra(i: int | None) -> int | None:
        return a.raw_line[i] if i is not None and i < len(a.raw_line) else None

    def rb(i: int | None) -> int | None:
        return b.raw_line[i] if i is not None and i < len(b.raw_line) else None

    def fold(a0: int, a1: int, b0: int, b1: int) -> Block | None:
        n = max(a1 - a0, b1 - b0)
        if n <= 0:
            return None
        rows = []
        for k in range(n):
            i = a0 + k if a0 + k < a1 else None
            j = b0 + k if b0 + k < b1 else None
            rows.append(
                Row(
                    "e" if i is not None and j is not None else ("d" if j is None else "i"),
                    ra(i),
                    html_a(i) if i is not None else Markup(""),
                    rb(j),
                    html_b(j) if j is not None else Markup(""),
                )
            )
        return Block(True, "", rows, n)

    blocks: list[Block] = []
    pa = pb = 0
    kinds = {"equal": "e", "delete": "d", "insert": "i", "replace": "r"}
    for h in d.hunks:
        f = fold(pa, h.a_start, pb, h.b_start)
        if f:
            blocks.append(f)
        rows = []
        for ln in h.lines:
            ah = Markup("")
            bh = Markup("")
            if ln.a is not None:
                ah = hl.line_html(ta[ln.a], [(s.start, s.end) for s in ln.a_spans]) if ln.a_spans else html_a(ln.a)
            if ln.b is not None:
                bh = hl.line_html(tb[ln.b], [(s.start, s.end) for s in ln.b_spans]) if ln.b_spans else html_b(ln.b)
            rows.append(Row(kinds.get(ln.tag, "e"), ra(ln.a), ah, rb(ln.b), bh))
        blocks.append(Block(False, h.header, rows))
        pa, pb = h.a_start + h.a_len, h.b_start + h.b_len
    f = fold(pa, len(a.lines), pb, len(b.lines))
    if f:
        blocks.append(f)
    return StageView(
        stage=d.stage,
        title=_stage_title(d.stage),
        identical=d.identical,
        added=d.added,
        removed=d.removed,
        a_lines=len(a.lines),
        b_lines=len(b.lines),
        counts=counts,
        blocks=blocks,
        mapped=mapped,
    )


def _nice_step(span: float) -> float:
    raw = span / 5 or 1.0
    mag = 10 ** int(f"{raw:e}".split("e")[1])
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


def _chart(t: TimingTable) -> ChartView | None:
    """Coordinates of the TFLOP/s chart: x = shape (in run order), y = TFLOP/s from 0; one polyline per series."""
    if not t.has_tflops:
        return None
    n = len(t.shapes)
    top, left, plot_h = 16, 56, 220
    plot_w = max(240, min(880, 70 * n))
    width, height = left + plot_w + 170, top + plot_h + 64
    ymax = max(v for s in t.series for v in s.tflops if v is not None) or 1.0
    step = _nice_step(ymax)
    ytop = step * (int(ymax / step) + 1)
    y_ticks = [(top + plot_h - plot_h * k * step / ytop, f"{k * step:g}") for k in range(int(ytop / step) + 1)]

    def x(i: int) -> float:
        return left + (plot_w * (i + 0.5) / n)

    every = max(1, n // 12)
    x_labels = [(x(i), lab) for i, lab in enumerate(t.shapes) if i % every == 0]
    chart = ChartView(width, height, left, top, plot_w, plot_h, y_ticks, x_labels)
    for k, s in enumerate(t.series):
        pts = [
            (round(x(i), 1), round(top + plot_h - plot_h * v / ytop, 1), t.shapes[i], v)
            for i, v in enumerate(s.tflops)
            if v is not None
        ]
        chart.lines.append(
            {
                "name": s.name,
                "role": s.role,
                "cls": {"a": "sa", "b": "sb", "reference": "sr"}.get(s.role, f"so{k % 3}"),
                "points": " ".join(f"{px},{py}" for px, py, _, _ in pts),
                "dots": pts,
                "legend_y": top + 14 + 18 * k,
            }
        )
    return chart


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+")


def _source_rows(sv: SourceView, variants: list[Any], pointed: set[int]) -> list[tuple[int, Markup] | None]:
    """Rows of a source panel: the lines of the variants' kernels and callees (``kernel_lines``,
    ``callee_lines``: recorded by the compile driver and the capture hooks) and ``pointed`` (lines the IR maps to
    or findings cite), with None where lines are folded; the whole file when no variant records its kernel."""
    n = len(sv.lines)
    wanted: set[int] = set()
    for v in variants:
        spans = [v.metadata.get("kernel_lines"), *(v.metadata.get("callee_lines") or [])]
        for r in spans:
            if isinstance(r, list) and len(r) == 2 and all(isinstance(x, int) for x in r):
                wanted.update(range(max(1, r[0]), min(n, r[1]) + 1))
    if not wanted:
        return [(i, line) for i, line in enumerate(sv.lines, start=1)]
    wanted.update(k for k in pointed if 1 <= k <= n)
    rows: list[tuple[int, Markup] | None] = []
    prev = 0
    for k in sorted(wanted):
        if k > prev + 1:
            rows.append(None)
        rows.append((k, sv.lines[k - 1]))
        prev = k
    if prev < n:
        rows.append(None)
    return rows


def _nth_row(ns: Any, raw_line: int, text: str) -> int:
    """Among the normalized lines made from one raw line (an MLIR/LLIR signature is split one argument per line),
    the index of the one that shares the most words with the evidence text (0 = the first)."""
    cands = [i for i, r in enumerate(ns.raw_line) if r == raw_line]
    if len(cands) <= 1:
        return 0
    words = set(_WORD.findall(text))
    scores = [len(words & set(_WORD.findall(ns.lines[i]))) for i in cands]
    return scores.index(max(scores))


def _variant_side(c: Comparison, name: str) -> str:
    return "a" if name == c.a else "b" if name == c.b else ""


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("irdiff.render", "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    return env


def _static(name: str) -> str:
    return resources.files("irdiff.render").joinpath("static", name).read_text(encoding="utf-8")


def _json_data(obj: Any) -> Markup:
    """JSON for a ``<script type="application/json">`` block: ``<``, ``>``, ``&`` escaped as ``\\u003c`` etc., so
    no text can close the script element."""
    import json

    text = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return Markup(text)


def _compress(text: str) -> str:
    """gzip (deterministic: no name, mtime 0) then base64 — what ``inflate`` in ``report.js`` undoes."""
    import base64
    import gzip

    return base64.b64encode(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)).decode("ascii")


def build_view(c: Comparison) -> dict[str, Any]:
    """Everything the template shows, as plain data (rows already highlighted and escaped)."""
    bundle = c.bundle
    va, vb = bundle.variants[c.a], bundle.variants[c.b]
    hl = Highlighter()
    hdr: Header = header(c)

    # Python sources: one panel per distinct (path, text); both variants usually share the suite's file.
    sources: list[SourceView] = []
    src_key: dict[str, str] = {}
    src_path: dict[str, str] = {}
    seen: dict[tuple[str, str], SourceView] = {}
    for side, v in (("a", va), ("b", vb)):
        text = v.text("python")
        path = str(v.metadata.get("source_path") or v.stages.get("python") or "")
        src_path[side] = path
        if not text:
            continue
        if (path, text) in seen:
            seen[(path, text)].variants.append(v.name)
            src_key[side] = seen[(path, text)].key
            continue
        key = f"s{len(sources)}"
        toks = hl.token_lines("python", text.splitlines())
        sv = SourceView(key, path, [v.name], [hl.line_html(t) for t in toks])
        sources.append(sv)
        seen[(path, text)] = sv
        src_key[side] = key

    # Stages, with the IR → Python line maps (raw line → source line) for the rows shown.
    summaries = {s.stage: s for s in stage_summaries(c)}
    stages: list[StageView] = []
    maps: dict[str, dict[str, dict[str, int]]] = {}
    raws: dict[str, dict[str, dict[str, str]]] = {}
    rendered: dict[tuple[str, str], set[int]] = {}
    normalized: dict[tuple[str, str], Any] = {}
    for d in c.stage_diffs:
        m: dict[str, dict[str, int]] = {}
        r: dict[str, dict[str, str]] = {}
        for side, ns in (("a", d.a), ("b", d.b)):
            raw_lines = ns.raw.splitlines()
            shown = set(ns.raw_line)
            rendered[(d.stage, side)] = shown
            normalized[(d.stage, side)] = ns
            smap = source_map(d.stage, ns.raw, src_path[side]) if side in src_key else {}
            m[side] = {str(k): v for k, v in smap.items() if k in shown}
            r[side] = {str(k): raw_lines[k - 1] for k in sorted(shown) if 0 < k <= len(raw_lines)}
        maps[d.stage] = m
        raws[d.stage] = r
        summary = summaries.get(d.stage)
        view = _stage_view(hl, d, summary.counts if summary else [], bool(m["a"] or m["b"]))
        if d.stage == "python" and d.identical:
            view.note = "Both variants compile from the same source text; it is shown in the source panel."
            view.blocks = []
        stages.append(view)

    # Findings and their evidence links.
    findings: list[FindingView] = []
    diag = c.diagnosis
    if diag is not None:
        titles = {f.id: f.title for f in diag.findings}
        effects: dict[str, list[str]] = {}
        for f in diag.findings:
            for cause in f.causes:
                effects.setdefault(cause, []).append(f.id)
        for p in present_findings(diag):
            f = p.finding
            evs = []
            for e in f.evidence:
                side = _variant_side(c, e.variant)
                href, target = "", ""
                if e.stage == "python" and e.line and side in src_key:
                    href, target = f"#py-{src_key[side]}-{e.line}", "id"
                elif e.line and side and e.line in rendered.get((e.stage, side), set()):
                    href, target = f"#st-{e.stage}", "row"
                elif e.stage in LOG_TITLES and e.line and side:
                    href, target = f"#log-{side}-{e.stage}-{e.line}", "id"
                elif e.stage in ("spec", "options"):
                    href, target = "#spec", "id"
                elif e.stage in ("resources", "metadata"):
                    href, target = "#resources", "id"
                elif e.stage == "time":
                    href, target = "#timing", "id"
                elif any(x.stage == e.stage for x in stages):
                    href, target = f"#st-{e.stage}", "id"
                nth = _nth_row(normalized[(e.stage, side)], e.line, e.text) if target == "row" and e.line else 0
                evs.append(EvidenceView(e.variant, side, e.stage, e.line, e.text, href, target, nth))
            findings.append(
                FindingView(
                    id=f.id,
                    anchor=_anchor("f-", f.id),
                    severity=f.severity,
                    title=f.title,
                    title_html=_prose(f.title),
                    explanation=_prose(f.explanation),
                    remedy=_prose(f.remedy) if f.remedy else None,
                    stage=f.stage,
                    causes=[(x, _anchor("f-", x), titles.get(x, x)) for x in f.causes if x in titles],
                    effects=[(x, _anchor("f-", x), titles[x]) for x in effects.get(f.id, []) if x in titles],
                    evidence=evs,
                    role=p.role,
                )
            )
    groups: list[FindingGroup] = []
    for i, fv in enumerate(findings, 1):
        if not groups or groups[-1].role != fv.role:
            groups.append(FindingGroup(fv.role, ROLE_LABELS[fv.role], i, []))
        groups[-1].findings.append(fv)

    # Logs that evidence points into (short: ptxas -v and the LLVM debug reasoning).
    logs: list[LogView] = []
    for side, v in (("a", va), ("b", vb)):
        for log, title in LOG_TITLES.items():
            text = v.text(log)
            if text.strip():
                logs.append(LogView(v.name, side, log, title, text.splitlines()[:400]))

    # Resources, with occupancy from the diagnosis facts when present.
    res = [list(row) for row in resource_rows(c)]
    if diag is not None:
        occ = [(diag.facts.get(n) or {}).get("occupancy") for n in (c.a, c.b)]
        if any(occ):

            def occ_text(o: Any) -> str:
                if not o:
                    return "?"
                return f"{o.get('ctas_per_sm')} CTAs/SM ({o.get('warps_per_sm')} warps), limited by {o.get('limiter')}"

            res.append(["occupancy", occ_text(occ[0]), occ_text(occ[1])])
    for row in res:
        row.append("differs" if row[1] != row[2] else "")

    # The source panel shows the kernels and their callees (not the whole suite file), and every line pointed at.
    pointed: dict[str, set[int]] = {}
    for stage_maps in maps.values():
        for side, side_map in stage_maps.items():
            if side in src_key:
                pointed.setdefault(src_key[side], set()).update(side_map.values())
    for fv in findings:
        for ev in fv.evidence:
            if ev.stage == "python" and ev.line and ev.side in src_key:
                pointed.setdefault(src_key[ev.side], set()).add(ev.line)
    for sv in sources:
        sv.rows = _source_rows(sv, [bundle.variants[n] for n in sv.variants], pointed.get(sv.key, set()))

    timing = timing_table(c)
    return {
        "h": hdr,
        "a": c.a,
        "b": c.b,
        "raw_mode": c.raw,
        "identical": c.identical,
        "diagnosis": diag,
        "verdict": _prose(verdict) if (verdict := standalone_verdict(diag)) else None,
        "shapes": shapes_note(c),
        "findings": findings,
        "finding_groups": groups,
        "spec": spec_rows(c),
        "resources": res,
        "timing": timing,
        "chart": _chart(timing) if timing else None,
        "stages": stages,
        "sources": sources,
        "src_key": src_key,
        "logs": logs,
        "data_maps": _json_data({"maps": maps, "src": src_key}),
        "data_raw": _compress(str(_json_data(raws))),
        "version": __version__,
    }


def render_html(c: Comparison) -> str:
    """The whole report as one HTML document (UTF-8 text; see the module docstring for what it holds).

    Needs only the Comparison (bundle texts, stage diffs, diagnosis, timing); never imports Triton.
    """
    view = build_view(c)
    hl = Highlighter()
    css = _static("report.css") + "\n" + hl.css(".hl")
    nonce = secrets.token_urlsafe(16)
    tpl = _environment().get_template("report.html.j2")
    macros: Any = _environment().get_template("diff_rows.html.j2").module
    for s in view["stages"]:
        body = str(macros.stage_body(s))
        s.rows_total = sum(len(b.rows) for b in s.blocks)
        if len(body) > COMPRESS_ABOVE:
            s.body_z = _compress(body)
        else:
            s.body = Markup(body)
    return tpl.render(
        v=view,
        css=Markup(css.replace("</", "<\\/")),
        js=Markup(_static("report.js").replace("</", "<\\/")),
        nonce=nonce,
        generator=REPORT_GENERATOR,
    )
