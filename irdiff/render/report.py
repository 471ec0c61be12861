"""What the file reports (HTML, Markdown, JSON) share: the header facts, the timing table, and safe file writing.

The report files are meant to be attached to bug issues, so they are written with care: :func:`write_report`
never overwrites a file the user made (it refuses with a one-line error unless ``force``), but it does replace an
earlier irdiff report, recognised by the marker each format carries near its start (:data:`MARKERS`).
"""

from __future__ import annotations

import math
import os
import shlex
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from irdiff.render import Comparison

__all__ = [
    "MARKERS",
    "ReportError",
    "Header",
    "TimingTable",
    "TimingSeries",
    "header",
    "timing_table",
    "timing_record",
    "is_irdiff_report",
    "write_report",
    "write_reports",
    "check_outputs",
    "render_report",
    "format_for",
]

# A file whose first 4 KB contain one of these was written by irdiff and may be replaced without --force.
MARKERS: tuple[str, ...] = (
    '<meta name="generator" content="irdiff-report',  # HTML
    "<!-- irdiff-report",  # Markdown
    '"schema": "irdiff.report/',  # JSON
)


class ReportError(ValueError):
    """A report cannot be written (existing user file, unwritable path); the message is one line."""


def is_irdiff_report(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` starts like a report irdiff wrote (see :data:`MARKERS`)."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096).decode("utf-8", errors="replace")
    except OSError:
        return False
    return any(m in head for m in MARKERS)


def write_report(path: str, text: str, *, force: bool = False) -> str:
    """Write a report to ``path`` (``-`` = standard output); returns where it went. Control sequences in the text
    are made inert first (:func:`irdiff.textsafe.clean`: the report may be printed on a terminal).

    :raises ReportError: ``path`` exists, is not an earlier irdiff report and ``force`` is False; it is a
        directory; or it cannot be written.
    """
    from irdiff.textsafe import clean

    text = clean(text)  # names and IR text from a bundle: no terminal control sequence survives, whatever reads it
    if path == "-":
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()
        return "<stdout>"
    p = Path(path)
    if p.is_dir():
        raise ReportError(f"{path} is a directory; give a file name for the report")
    if p.exists() and not force and not is_irdiff_report(p):
        raise ReportError(f"{path} exists and is not an irdiff report; not overwriting it (use --force)")
    try:
        if p.parent and not p.parent.exists():
            p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(f".{p.name}.irdiff-tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, p)
    except OSError as e:
        raise ReportError(f"cannot write {path}: {e.strerror or e}") from None
    return str(p)


@dataclass
class Header:
    """Header facts of a report (strings ready to show; ``—`` where unknown)."""

    suite: str
    a: str
    b: str
    kernel_a: str
    kernel_b: str
    target: str
    gpu: str
    triton: str
    ptxas: str
    reproduce: str
    command: str
    created: str
    bundle: str
    options: list[tuple[str, str, str]] = field(default_factory=list)


def _reproduce(c: Comparison) -> str:
    """The command that made this comparison: the bundle's own command line (file suites as ``path.py::name``,
    ``--shapes`` and every option kept), else one rebuilt from the bundle's facts."""
    bundle = c.bundle
    cmd = [str(x) for x in (bundle.command or [])]
    if len(cmd) > 1 and cmd[0] == "irdiff" and cmd[1] not in ("report", "diff", "show", "list"):
        return shlex.join(cmd)
    parts = ["irdiff", bundle.suite or "SUITE", "--variant", c.a, "--against", c.b]
    if bundle.target:
        parts += ["--target", bundle.target]
    if bundle.shape:
        parts += ["--shape", ",".join(f"{k}={v}" for k, v in bundle.shape.items())]
    return shlex.join(parts)


def header(c: Comparison) -> Header:
    """The facts every report opens with. GPU: the device the runner timed on, else "not run" (compiled only)."""
    bundle = c.bundle
    va, vb = bundle.variants[c.a], bundle.variants[c.b]
    rec = timing_record(c)
    gpu = "not run (compiled without a GPU)"
    if rec:
        dev = rec.get("device") or {}
        name = dev.get("name") or "?"
        cap = dev.get("capability")
        gpu = f"{name} ({cap})" if cap else str(name)
    params = {a.name for a in va.specialization} | {a.name for a in vb.specialization}
    keys = sorted((set(va.options) | set(vb.options) | set(va.config) | set(vb.config)) - params)
    options = []
    for k in keys:
        x = va.config.get(k, va.options.get(k, "—"))
        y = vb.config.get(k, vb.options.get(k, "—"))
        options.append((k, str(x), str(y)))
    return Header(
        suite=bundle.suite or "—",
        a=c.a,
        b=c.b,
        kernel_a=va.kernel or "—",
        kernel_b=vb.kernel or "—",
        target=bundle.target or "—",
        gpu=gpu,
        triton=bundle.triton_version or "—",
        ptxas=bundle.ptxas_version or va.resources.ptxas_version or "—",
        reproduce=_reproduce(c),
        command=shlex.join(bundle.command) if bundle.command else "—",
        created=bundle.created or "—",
        bundle=bundle.directory or "—",
        options=options,
    )


def timing_record(c: Comparison) -> dict[str, Any] | None:
    """The runner's record (``Comparison.timing``, else ``bundle.runs["timing"]``), or None when nothing ran."""
    rec = c.timing if c.timing is not None else c.bundle.runs.get("timing")
    if isinstance(rec, Mapping) and rec.get("rows"):
        return dict(rec)
    return None


def _num(x: Any) -> float | None:
    if isinstance(x, bool) or not isinstance(x, int | float):
        return None
    return float(x) if math.isfinite(x) else None


def shape_label(shape: Mapping[str, Any]) -> str:
    """``M=N=K=4096`` style label (equal dimensions grouped), as the runner prints it."""
    groups: dict[Any, list[str]] = {}
    for k, v in shape.items():
        groups.setdefault(v, []).append(str(k))
    return " ".join("=".join(names) + f"={v}" for v, names in groups.items()) or "—"


@dataclass
class TimingSeries:
    """One line of the chart: a variant (or the reference) over the shapes; None where not measured.

    :ivar tflops: TFLOP/s per shape; :ivar ms: median milliseconds per shape; :ivar correct: per shape, True/False
        or None (not checked).
    """

    name: str
    role: str  # "a", "b", "other" or "reference"
    ms: list[float | None]
    iqr_ms: list[float | None]
    tflops: list[float | None]
    pct_peak: list[float | None]
    correct: list[bool | None]


@dataclass
class TimingTable:
    """The runner's measurements arranged per shape (rows) and per variant (series)."""

    device: str
    method: str
    shapes: list[str]
    series: list[TimingSeries]
    verdicts: list[str]
    findings: list[str]

    def ratios(self) -> list[float | None]:
        """Per shape, a's median time over b's (``> 1``: a is slower), or None where either is missing."""
        sa = next((s for s in self.series if s.role == "a"), None)
        sb = next((s for s in self.series if s.role == "b"), None)
        if sa is None or sb is None:
            return [None] * len(self.shapes)
        return [x / y if x is not None and y else None for x, y in zip(sa.ms, sb.ms)]

    @property
    def has_tflops(self) -> bool:
        return any(v is not None for s in self.series for v in s.tflops)


def timing_table(c: Comparison) -> TimingTable | None:
    """Arrange ``bundle.runs["timing"]`` (shape documented in :mod:`irdiff.run.runner`) for the tables and chart;
    None when nothing was timed."""
    rec = timing_record(c)
    if rec is None:
        return None
    rows = [r for r in rec.get("rows", []) if isinstance(r, Mapping)]
    names: list[str] = [c.a, c.b]
    for n in rec.get("variants", []) or []:
        if n not in names:
            names.append(str(n))
    for r in rows:
        for n in r.get("variants", {}) or {}:
            if n not in names:
                names.append(str(n))
    ref_name = str(rec.get("reference_name") or "reference")

    def series(name: str, role: str, pick: Any) -> TimingSeries:
        s = TimingSeries(name, role, [], [], [], [], [])
        for r in rows:
            e = pick(r) or {}
            s.ms.append(_num(e.get("median_ms")))
            s.iqr_ms.append(_num(e.get("iqr_ms")))
            s.tflops.append(_num(e.get("tflops")))
            s.pct_peak.append(_num(e.get("pct_peak")))
            corr = e.get("correct")
            s.correct.append(corr if isinstance(corr, bool) else None)
        return s

    out: list[TimingSeries] = []
    for n in names:
        role = "a" if n == c.a else "b" if n == c.b else "other"
        s = series(n, role, lambda r, n=n: (r.get("variants") or {}).get(n))
        if any(v is not None for v in s.ms):
            out.append(s)
    if any(r.get("reference") for r in rows):
        out.append(series(ref_name, "reference", lambda r: r.get("reference")))
    dev = rec.get("device") or {}
    device = str(dev.get("name") or "?") + (f" ({dev['capability']})" if dev.get("capability") else "")
    verdicts = [
        (shape_label(v["shape"]) + ": " if isinstance(v.get("shape"), Mapping) else "") + str(v.get("sentence", ""))
        for v in rec.get("verdicts", []) or []
        if isinstance(v, Mapping) and v.get("sentence")
    ]
    findings = [str(f.get("message", "")) for f in rec.get("findings", []) or [] if isinstance(f, Mapping)]
    return TimingTable(
        device=device,
        method=str(rec.get("method") or ""),
        shapes=[shape_label(r.get("shape") or {}) for r in rows],
        series=out,
        verdicts=verdicts,
        findings=[f for f in findings if f],
    )


def render_report(c: Comparison, fmt: str) -> str:
    """Render ``c`` as ``html``, ``md`` or ``json``.

    :raises ReportError: an unknown format.
    """
    if fmt == "html":
        from irdiff.render.html import render_html

        return render_html(c)
    if fmt == "md":
        from irdiff.render.markdown import render_markdown

        return render_markdown(c)
    if fmt == "json":
        from irdiff.render.json_report import render_json

        return render_json(c)
    raise ReportError(f"unknown report format {fmt!r} (choose from html, md, json)")


def format_for(path: str, fmt: str | None = None) -> str:
    """The report format: ``fmt`` if given, else from the file extension (``.html``/``.htm``, ``.md``, ``.json``).

    :raises ReportError: no format given and the extension is none of those.
    """
    if fmt:
        return fmt
    ext = Path(path).suffix.lower()
    found = {".html": "html", ".htm": "html", ".md": "md", ".markdown": "md", ".json": "json"}.get(ext)
    if found is None:
        raise ReportError(f"cannot tell the report format from {path!r}; use --format html|md|json")
    return found


def check_outputs(paths: list[str], *, force: bool = False) -> None:
    """Refuse report destinations that would overwrite a user's file (call before doing any work).

    :raises ReportError: a path is a directory, or exists, is not an irdiff report and ``force`` is False.
    """
    for path in paths:
        p = Path(path)
        if path == "-" or not p.exists():
            continue
        if p.is_dir():
            raise ReportError(f"{path} is a directory; give a file name for the report")
        if not force and not is_irdiff_report(p):
            raise ReportError(f"{path} exists and is not an irdiff report; not overwriting it (use --force)")


def write_reports(c: Comparison, outputs: list[tuple[str, str]], *, force: bool = False) -> list[str]:
    """Render and write each ``(format, path)`` of ``outputs``; returns the paths written (``<stdout>`` for ``-``).

    Every destination is checked before anything is rendered, so a refused file costs no work.

    :raises ReportError: a destination exists and is not an irdiff report (without ``force``), or cannot be written.
    """
    check_outputs([path for _, path in outputs], force=force)
    written = []
    for fmt, path in outputs:
        written.append(write_report(path, render_report(c, fmt), force=force))
    return written
