"""The JSON report (``--json-report FILE``, ``irdiff report BUNDLE -o FILE.json``): the whole comparison as data.

Schema ``irdiff.report/1`` (JSON Schema: ``irdiff/render/static/report.schema.json``, :func:`schema`). A reader
checks ``schema`` first: the part after ``/`` is the major version and changes only when a field is removed or
changes meaning; fields may be added within a version. Top level::

    {"schema": "irdiff.report/1", "generator": "irdiff 0.1.0",
     "suite", "target", "triton_version", "ptxas_version", "command": [...], "created", "bundle",
     "report_command": [...], "report_created",       # the run that wrote this report ([] / "" when not told;
                                                      # command/created: the run that compiled the bundle)
     "raw": bool, "context": int, "identical": bool,
     "a": VARIANT, "b": VARIANT,                      # a = --variant (shown -), b = --against (shown +)
     "specialization": [{"name", "differs", "a": ARGSPEC | null, "b": ARGSPEC | null}],
     "stages": [{"stage", "identical", "added", "removed", "lines": {"a", "b"},
                 "counts": [{"key", "a", "b"}],
                 "hunks": [{"header", "a_start", "a_len", "b_start", "b_len",      # 0-based normalized lines
                            "lines": [{"tag", "a", "b", "a_text", "b_text", "a_spans", "b_spans",
                                       "a_raw", "b_raw", "a_source", "b_source"}]}]}],
     "diagnosis": {"a", "b", "identical", "verdict", "findings": [...], "facts": {...}} | null,
     "timing": the runner's record (irdiff/run/runner.py) | null}

Per diff line: ``a``/``b`` index the normalized lines, ``a_raw``/``b_raw`` are 1-based lines of the raw stage
text in the bundle, ``a_source``/``b_source`` the Python line they were compiled from (Triton's location info, see
:mod:`irdiff.normalize.locations`), ``*_spans`` the changed ``[start, end)`` character ranges of a replaced line.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from importlib import resources
from typing import TYPE_CHECKING, Any

from irdiff import __version__
from irdiff.normalize.locations import source_map
from irdiff.render import Comparison, spec_rows, stage_summaries
from irdiff.render.order import present_findings
from irdiff.render.views import timing_record

if TYPE_CHECKING:
    from irdiff.diagnose import Diagnosis

__all__ = ["SCHEMA", "report_json", "render_json", "schema"]

SCHEMA = "irdiff.report/1"


def schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of :data:`SCHEMA` documents."""
    text = resources.files("irdiff.render").joinpath("static", "report.schema.json").read_text(encoding="utf-8")
    return dict(json.loads(text))


def _variant(c: Comparison, name: str) -> dict[str, Any]:
    v = c.bundle.variants[name]
    return {
        "name": v.name,
        "kernel": v.kernel,
        "target": v.target,
        "config": v.config,
        "options": v.options,
        "source_path": v.metadata.get("source_path"),
        "resources": asdict(v.resources),
        "error": v.error,
    }


def _get(lst: list[int], i: int | None) -> int | None:
    return lst[i] if i is not None and 0 <= i < len(lst) else None


def report_json(c: Comparison) -> dict[str, Any]:
    """The comparison as a JSON-able dict (see the module docstring for the layout)."""
    bundle = c.bundle
    va, vb = bundle.variants[c.a], bundle.variants[c.b]
    paths = {
        "a": str(va.metadata.get("source_path") or ""),
        "b": str(vb.metadata.get("source_path") or ""),
    }
    counts = {s.stage: s.counts for s in stage_summaries(c)}
    stages = []
    for d in c.stage_diffs:
        ma = source_map(d.stage, d.a.raw, paths["a"]) if paths["a"] else {}
        mb = source_map(d.stage, d.b.raw, paths["b"]) if paths["b"] else {}
        hunks = []
        for h in d.hunks:
            lines = []
            for ln in h.lines:
                ra, rb = _get(d.a.raw_line, ln.a), _get(d.b.raw_line, ln.b)
                lines.append(
                    {
                        "tag": ln.tag,
                        "a": ln.a,
                        "b": ln.b,
                        "a_text": ln.a_text,
                        "b_text": ln.b_text,
                        "a_spans": [[s.start, s.end] for s in ln.a_spans],
                        "b_spans": [[s.start, s.end] for s in ln.b_spans],
                        "a_raw": ra,
                        "b_raw": rb,
                        "a_source": ma.get(ra) if ra is not None else None,
                        "b_source": mb.get(rb) if rb is not None else None,
                    }
                )
            hunks.append(
                {
                    "header": h.header,
                    "a_start": h.a_start,
                    "a_len": h.a_len,
                    "b_start": h.b_start,
                    "b_len": h.b_len,
                    "lines": lines,
                }
            )
        stages.append(
            {
                "stage": d.stage,
                "identical": d.identical,
                "added": d.added,
                "removed": d.removed,
                "lines": {"a": len(d.a.lines), "b": len(d.b.lines)},
                "counts": [{"key": k, "a": x, "b": y} for k, x, y in counts.get(d.stage, [])],
                "hunks": hunks,
            }
        )
    spec = [
        {
            "name": r.name,
            "differs": r.differs,
            "a": asdict(r.a) if r.a else None,
            "b": asdict(r.b) if r.b else None,
        }
        for r in spec_rows(c)
    ]
    return {
        "schema": SCHEMA,
        "generator": f"irdiff {__version__}",
        "suite": bundle.suite,
        "target": bundle.target,
        "triton_version": bundle.triton_version,
        "ptxas_version": bundle.ptxas_version,
        "command": list(bundle.command),
        "created": bundle.created,
        "report_command": list(c.report_command),
        "report_created": c.report_created,
        "bundle": bundle.directory,
        "raw": c.raw,
        "context": c.context,
        "identical": c.identical,
        "a": _variant(c, c.a),
        "b": _variant(c, c.b),
        "specialization": spec,
        "stages": stages,
        "diagnosis": _diagnosis_json(c.diagnosis) if c.diagnosis is not None else None,
        "timing": timing_record(c),
    }


def _diagnosis_json(d: Diagnosis) -> dict[str, Any]:
    """The diagnosis with its findings in reading order (:mod:`irdiff.render.order`), each with its ``role``."""
    body = d.to_json()
    body["findings"] = [{**p.finding.to_json(), "role": p.role} for p in present_findings(d)]
    return body


def render_json(c: Comparison) -> str:
    """:func:`report_json` as text (``"schema"`` is the first key, so the file is recognisable from its start)."""
    return json.dumps(report_json(c), indent=1, ensure_ascii=False, default=str) + "\n"
