"""Plain data passed out of the diagnostics: evidence, findings, the diagnosis (re-exported by ``irdiff.diagnose``)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Severity = Literal["info", "minor", "major", "critical"]
SEVERITIES: tuple[str, ...] = ("info", "minor", "major", "critical")
# Findings that name a change the user made (a specialization, launch option, constexpr, source line, setting or TTIR
# attribute): roots of the cause-and-effect chain (irdiff.diagnose.roots), shown as roots by the renderers.
ROOT_PREFIXES: tuple[str, ...] = ("spec.", "options.", "config.", "source.", "settings.", "ttir.attr-changed")


def finding_stages() -> tuple[str, ...]:
    """Where a finding is first visible, in pipeline order: ``settings`` (target, Triton release, compile environment
    of each side; :mod:`irdiff.diagnose.settings`), ``spec`` (stage 0), ``options``, every declared text stage
    (:mod:`irdiff.stages`), ``resources``, ``time``."""
    from irdiff import stages

    return ("settings", "spec", "options", *stages.names(), "resources", "time")


# The same, for the stages declared at import (``finding_stages()`` sees stages declared later).
FINDING_STAGES: tuple[str, ...] = finding_stages()


@dataclass
class Evidence:
    """One line that supports a finding.

    :ivar variant: variant name the line belongs to.
    :ivar stage: ``spec``, ``options``, a text stage (``python`` … ``sass``), a log (``llvm_debug``, ``ptxas``),
        ``resources``, ``metadata`` or ``time``.
    :ivar line: 1-based line in the raw text of that stage or log, or None (``spec``, ``resources``, ``time``).
    :ivar text: the raw line (stripped) or a short statement of the value.
    """

    variant: str
    stage: str
    line: int | None
    text: str


@dataclass
class Finding:
    """One difference between two variants, its mechanism, and where it came from.

    :ivar id: stable identifier (``spec.constexpr-one-lost``, ``coalesce.vector-width``, ...), unique per diagnosis.
    :ivar severity: ``info`` < ``minor`` < ``major`` < ``critical``.
    :ivar title: one line.
    :ivar explanation: plain sentences naming the mechanism (backticks for code).
    :ivar evidence: lines from both variants.
    :ivar causes: ids of findings in the same diagnosis that cause this one (the chain).
    :ivar remedy: a known way out, not tested by irdiff, or None.
    :ivar stage: earliest stage where the difference is visible (one of :data:`FINDING_STAGES`).
    :ivar predicts: the variant this difference is expected to make slower, or None (neutral/unknown).
    :ivar instructions: how many instructions this difference adds or removes, where the rule can bound it (a
        mechanism's own instructions, an instruction-count finding's change), else None. A cause that accounts for
        less than a quarter of an effect's change is not linked to it (``irdiff.diagnose._link``): it cannot explain
        it.
    """

    id: str
    severity: Severity
    title: str
    explanation: str
    evidence: list[Evidence] = field(default_factory=list)
    causes: list[str] = field(default_factory=list)
    remedy: str | None = None
    stage: str = "ttgir"
    predicts: str | None = None
    instructions: int | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Diagnosis:
    """All findings for one pair of variants.

    :ivar a: the inspected variant (``--variant``).
    :ivar b: the baseline (``--against``).
    :ivar findings: ordered as a cause→effect chain, earliest stage first.
    :ivar identical: both variants compile to identical code after normalization.
    :ivar facts: per variant name, the facts the rules compared (JSON-able).
    :ivar verdict: one sentence comparing the chain with measured time, or None when nothing was measured.
    :ivar notes: what the diagnosis could not see (e.g. a variant saved without the LLVM debug log).
    :ivar unexplained: ids of findings whose chain reaches no root (listed last, see ``irdiff.diagnose.roots``).
    :ivar source_changes: the source diff (``irdiff.diagnose.source.SourceChange.to_json()`` each), renames included.
    """

    a: str
    b: str
    findings: list[Finding] = field(default_factory=list)
    identical: bool = False
    facts: dict[str, Any] = field(default_factory=dict)
    verdict: str | None = None
    notes: list[str] = field(default_factory=list)
    unexplained: list[str] = field(default_factory=list)
    source_changes: list[dict[str, Any]] = field(default_factory=list)

    def finding(self, finding_id: str) -> Finding | None:
        """The finding with this id (exact, or a unique prefix), else None."""
        for f in self.findings:
            if f.id == finding_id:
                return f
        hits = [f for f in self.findings if f.id.startswith(finding_id)]
        return hits[0] if len(hits) == 1 else None

    def to_json(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "identical": self.identical,
            "verdict": self.verdict,
            "notes": self.notes,
            "unexplained": self.unexplained,
            "source_changes": self.source_changes,
            "findings": [f.to_json() for f in self.findings],
            "facts": self.facts,
        }
