"""Text the CLI prints for ``--json`` and ``--explain FINDING_ID``: the diagnosis alone, rendered (moved here from
``irdiff.diagnose.output``: a renderer, so diagnostics never import the renderers; stage diffs are in the formats)."""

from __future__ import annotations

import json
from typing import Any

from irdiff.bundle import Bundle
from irdiff.diagnose import Diagnosis, diagnose, explain

__all__ = ["DIAGNOSIS_SCHEMA", "diagnosis_json", "diagnosis_output", "identical_line"]

DIAGNOSIS_SCHEMA = "irdiff.diagnosis/1"


def identical_line(a: str, b: str) -> str:
    """The one line printed when two variants compile to the same code."""
    return f"{a} and {b} compile to identical code after normalization (TTIR, TTGIR, LLIR, PTX, SASS)."


def diagnosis_json(bundle: Bundle, d: Diagnosis, *, facts: bool = True) -> dict[str, Any]:
    """The diagnosis as a JSON-able dict: ``schema``, bundle identity, ``identical``, ``verdict``, ``findings``
    (id, severity, title, explanation, evidence[variant, stage, line, text], causes, remedy, stage, predicts) and,
    with ``facts``, the per-variant facts."""
    out: dict[str, Any] = {
        "schema": DIAGNOSIS_SCHEMA,
        "suite": bundle.suite,
        "target": bundle.target,
        "triton_version": bundle.triton_version,
        "bundle": bundle.directory,
    }
    from irdiff.render.order import present_findings  # the reading order every format shares

    body = d.to_json()
    body["findings"] = [{**p.finding.to_json(), "role": p.role} for p in present_findings(d)]
    if not facts:
        body.pop("facts", None)
    out.update(body)
    return out


def diagnosis_output(bundle: Bundle, a: str, b: str, *, as_json: bool = False, explain_id: str | None = None) -> str:
    """What ``irdiff SUITE --json`` / ``--explain ID`` print.

    :raises ValueError: unknown variant, a variant that failed to compile, or an unknown finding id (one line).
    """
    d = diagnose(bundle, a, b)
    if explain_id:
        if d.identical:
            return identical_line(a, b)
        try:
            text = explain(d, explain_id, bundle, context=0)
        except KeyError as e:
            raise ValueError(str(e.args[0])) from None
        if as_json:
            f = d.finding(explain_id)
            return json.dumps(f.to_json() if f else {}, indent=1)
        return text
    if as_json:
        return json.dumps(diagnosis_json(bundle, d), indent=1, default=str)
    if d.identical:
        return identical_line(a, b)
    from irdiff.render.order import present_findings

    return "\n".join(f"{p.finding.id} [{p.finding.severity}] ({p.role}) {p.finding.title}" for p in present_findings(d))
