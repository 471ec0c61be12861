"""Lookups on a Diagnosis shared by the diagnostics tests (tests/test_diagnose.py, tests/test_rules.py)."""

from __future__ import annotations

from irdiff.diagnose import Diagnosis, Finding


def ids(d: Diagnosis) -> list[str]:
    return [f.id for f in d.findings]


def get(d: Diagnosis, fid: str) -> Finding:
    f = d.finding(fid)
    assert f is not None, f"{fid} missing; got {ids(d)}"
    return f


def texts(f: Finding, variant: str | None = None, stage: str | None = None) -> str:
    return "\n".join(
        e.text for e in f.evidence if (variant is None or e.variant == variant) and (stage is None or e.stage == stage)
    )
