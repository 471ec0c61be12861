"""The report files (HTML, Markdown, JSON): the registry of output formats (:data:`FORMATS`, read by the CLI),
rendering one by name, and safe file writing. The views the formats share (header, timing table) are in
:mod:`irdiff.render.views`.

The report files are meant to be attached to bug issues, so they are written with care: :func:`write_report`
never overwrites a file the user made (it refuses with a one-line error unless ``force``), but it does replace an
earlier irdiff report, recognised by the marker each format carries near its start (:data:`MARKERS`).
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from irdiff.render import Comparison

__all__ = [
    "MARKERS",
    "ReportError",
    "FORMATS",
    "OutputFormat",
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


@dataclass(frozen=True)
class OutputFormat:
    """One report format: how the CLI names it and where its renderer lives.

    :ivar name: ``--format`` value and the key of :data:`FORMATS`.
    :ivar suffixes: file extensions that select it (``report.html``).
    :ivar option: the compare/diff option that writes it (``--html FILE``), with its help text.
    :ivar renderer: ``module:function`` rendering a :class:`~irdiff.render.Comparison` to text (imported on use).
    """

    name: str
    suffixes: tuple[str, ...]
    option: str
    help: str
    renderer: str

    def render(self, c: Comparison) -> str:
        module, _, function = self.renderer.partition(":")
        fn: Callable[[Comparison], str] = getattr(importlib.import_module(module), function)
        return fn(c)


# Every output format, in the order the CLI lists them. To add one: a renderer module and one entry here.
FORMATS: dict[str, OutputFormat] = {
    f.name: f
    for f in (
        OutputFormat("html", (".html", ".htm"), "--html", "Write the self-contained HTML report.", "irdiff.render.html:render_html"),
        OutputFormat("md", (".md", ".markdown"), "--md", "Write a GitHub Markdown summary (≤ 60,000 characters).", "irdiff.render.markdown:render_markdown"),
        OutputFormat("json", (".json",), "--json-report", "Write the whole comparison as JSON (schema irdiff.report/1).", "irdiff.render.json_report:render_json"),
    )
}  # fmt: skip


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
        directory; its directory does not exist (none is created); or it cannot be written.
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
    _check_parent(path)
    try:
        tmp = p.with_name(f".{p.name}.irdiff-tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, p)
    except OSError as e:
        raise ReportError(f"cannot write {path}: {e.strerror or e}") from None
    return str(p)


def render_report(c: Comparison, fmt: str) -> str:
    """Render ``c`` in the format named ``fmt`` (a key of :data:`FORMATS`: ``html``, ``md``, ``json``).

    :raises ReportError: an unknown format.
    """
    found = FORMATS.get(fmt)
    if found is None:
        raise ReportError(f"unknown report format {fmt!r} (choose from {', '.join(FORMATS)})")
    return found.render(c)


def format_for(path: str, fmt: str | None = None) -> str:
    """The report format: ``fmt`` if given, else from the file extension (``.html``/``.htm``, ``.md``, ``.json``).

    :raises ReportError: no format given and the extension is none of those.
    """
    if fmt:
        return fmt
    ext = Path(path).suffix.lower()
    found = next((f.name for f in FORMATS.values() if ext in f.suffixes), None)
    if found is None:
        raise ReportError(f"cannot tell the report format from {path!r}; use --format {'|'.join(FORMATS)}")
    return found


def _check_parent(path: str) -> None:
    """A report file goes into a directory that exists: irdiff creates none the user did not ask for.

    :raises ReportError: the parent directory is missing or is not a directory.
    """
    parent = Path(path).parent
    if not parent.exists():
        raise ReportError(f"{path}: directory {parent} does not exist (irdiff creates no directory for a report)")
    if not parent.is_dir():
        raise ReportError(f"{path}: {parent} is not a directory")


def check_outputs(paths: list[str], *, force: bool = False) -> None:
    """Refuse report destinations that would overwrite a user's file or need a directory created (call before doing
    any work).

    :raises ReportError: a path is a directory, its directory does not exist, or it exists, is not an irdiff report
        and ``force`` is False.
    """
    for path in paths:
        p = Path(path)
        if path == "-":
            continue
        if not p.exists():
            _check_parent(path)
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
