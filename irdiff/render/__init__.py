"""Renderers (terminal, HTML, Markdown, JSON) and the one object they all receive: :class:`Comparison`.

Renderers never import Triton and never re-run a pipeline step: everything they show is in the Comparison
(built by :func:`irdiff.pipeline.build_comparison`). The helpers here compute the views every renderer shares:
the stage-0 specialization table (:func:`spec_rows`) and the per-stage summary (:func:`stage_summaries`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from irdiff.bundle import ArgSpec, Bundle

if TYPE_CHECKING:
    from irdiff.align import StageDiff
    from irdiff.diagnose import Diagnosis

__all__ = ["Comparison", "SpecRow", "StageSummary", "spec_rows", "stage_summaries", "resource_rows"]


@dataclass
class Comparison:
    """Everything a renderer shows for one pair of variants.

    :ivar bundle: the bundle both variants were read from (metadata, specialization, resources, raw stage texts).
    :ivar a: the inspected variant (``--variant``); shown as ``-``/left.
    :ivar b: the baseline (``--against``); shown as ``+``/right.
    :ivar stage_diffs: one :class:`~irdiff.align.StageDiff` per stage present in both variants, in pipeline order
        (``python``, ``ttir``, ``ttgir``, ``llir``, ``ptx``, ``sass``), restricted to the stages asked for.
    :ivar diagnosis: findings from :func:`irdiff.diagnose.diagnose`, or None when diagnostics were not run.
    :ivar timing: the runner's measurements, or None when nothing was measured (no GPU).
    :ivar raw: True when the stages were diffed without normalization (``--raw``).
    :ivar context: context lines around each hunk.
    :ivar diagnosis_error: one line when :func:`irdiff.diagnose.diagnose` raised (the diffs are still shown).
    :ivar report_command: the command line of the irdiff run that writes this report (``irdiff report B -o r.html``);
        empty when not told. The bundle's own ``command``/``created`` name the run that compiled it, which a
        later run that only reads the bundle (or finds every variant cached) does not change.
    :ivar report_created: when that run wrote the report (UTC, ISO 8601, seconds); empty when not told.
    """

    bundle: Bundle
    a: str
    b: str
    stage_diffs: list[StageDiff]
    diagnosis: Diagnosis | None = None
    timing: Any | None = None
    raw: bool = False
    context: int = 3
    diagnosis_error: str | None = None
    report_command: list[str] = field(default_factory=list)
    report_created: str = ""

    @property
    def identical(self) -> bool:
        """True when every compared stage is identical after normalization (the stage-0 table may still differ)."""
        return all(d.identical for d in self.stage_diffs)


@dataclass
class SpecRow:
    """One kernel parameter in the stage-0 table, both variants side by side (None where a variant lacks it).

    :ivar differs: the JIT specialized it differently (type, divisibility or constexpr value), or only one variant
        has the parameter.
    """

    name: str
    a: ArgSpec | None
    b: ArgSpec | None

    @property
    def differs(self) -> bool:
        if self.a is None or self.b is None:
            return True
        return (self.a.type, self.a.divisibility, self.a.constexpr) != (
            self.b.type,
            self.b.divisibility,
            self.b.constexpr,
        )


def spec_rows(c: Comparison) -> list[SpecRow]:
    """Stage 0: the specialization of both variants, each parameter of ``a`` beside the parameter of ``b`` paired
    with it by role (:func:`irdiff.diagnose.params.pair_params`: pointer or scalar, element type, the loads, stores,
    masks and index expressions it feeds; ``tl.constexpr`` parameters by name), in ``a``'s parameter order; a row
    of a renamed pair is named ``a_name → b_name``; parameters only ``b`` has come last. Source:
    :attr:`irdiff.bundle.VariantResult.specialization`, recorded from the installed Triton's own binder."""
    from irdiff.diagnose.params import pair_params

    va, vb = c.bundle.variants[c.a], c.bundle.variants[c.b]
    a_specs = {s.name: s for s in va.specialization}
    b_specs = {s.name: s for s in vb.specialization}
    pairing = pair_params(
        va.specialization, va.text("ttir") or va.text("ttgir"), vb.specialization, vb.text("ttir") or vb.text("ttgir")
    )
    rows = []
    for p in pairing.pairs:
        sa = a_specs.get(p.a.name) if p.a else None
        sb = b_specs.get(p.b.name) if p.b else None
        rows.append(SpecRow(p.label, sa, sb))
    return rows


@dataclass
class StageSummary:
    """One stage's line in the one-screen summary.

    :ivar removed: normalized lines only in ``a`` (shown ``-``); :ivar added: lines only in ``b`` (``+``).
    :ivar counts: ``[(key, count in a, count in b)]`` for the stage's ``KEY_COUNTS`` keys where either count is
        non-zero, in ``KEY_COUNTS`` order (counts from :func:`irdiff.diagnose.counts.count_ops` on the raw text).
    """

    stage: str
    removed: int
    added: int
    identical: bool
    counts: list[tuple[str, int, int]]


def stage_summaries(c: Comparison) -> list[StageSummary]:
    """Per compared stage: lines changed and the key operation counts of both variants."""
    from irdiff.diagnose.counts import KEY_COUNTS

    out = []
    for d in c.stage_diffs:
        counts: list[tuple[str, int, int]] = []
        keys = KEY_COUNTS.get(d.stage, [])
        if keys:
            ca, cb = op_counts(c, c.a, d.stage, d.a.raw), op_counts(c, c.b, d.stage, d.b.raw)
            counts = [(k, ca.get(k, 0), cb.get(k, 0)) for k in keys if ca.get(k, 0) or cb.get(k, 0)]
        out.append(StageSummary(d.stage, d.removed, d.added, d.identical, counts))
    return out


def op_counts(c: Comparison, variant: str, stage: str, raw: str) -> dict[str, int]:
    """Key operation counts of one variant's stage: the ones the diagnosis already extracted (its facts), counted
    here only when there is no diagnosis (diagnostics failed or were not run)."""
    facts = c.diagnosis.facts.get(variant) if c.diagnosis is not None else None
    counts = facts.get("counts", {}).get(stage) if isinstance(facts, dict) else None
    if isinstance(counts, dict):
        return counts
    from irdiff.diagnose.counts import count_ops

    return count_ops(stage, raw)


def resource_rows(c: Comparison) -> list[tuple[str, str, str]]:
    """``[(label, a value, b value)]`` for registers, spills, shared memory (bytes) and barriers, from ptxas' ``-v``
    report and Triton's metadata (:class:`irdiff.bundle.Resources`); rows where both are unknown are left out."""
    ra = c.bundle.variants[c.a].resources
    rb = c.bundle.variants[c.b].resources

    def fmt(v: int | None, unit: str = "") -> str:
        return "?" if v is None else f"{v}{unit}"

    rows = [
        ("registers", fmt(ra.registers), fmt(rb.registers)),
        ("spill stores", fmt(ra.spill_store_bytes, " B"), fmt(rb.spill_store_bytes, " B")),
        ("spill loads", fmt(ra.spill_load_bytes, " B"), fmt(rb.spill_load_bytes, " B")),
        ("shared memory", fmt(ra.shared_bytes, " B"), fmt(rb.shared_bytes, " B")),
        ("barriers", fmt(ra.barriers), fmt(rb.barriers)),
    ]
    return [r for r in rows if r[1] != "?" or r[2] != "?"]
