"""The order in which every format presents findings: the root first, then its effects by severity, then the
differences nothing explains.

The diagnosis (:mod:`irdiff.diagnose`) decides what is a root and what causes what (``Finding.causes``); this
module only decides the reading order, the same for the terminal, Markdown, HTML and JSON:

0. **result**: ``time.wrong-result`` (a variant computed a wrong result or failed to run): nothing else matters
   until that is fixed, so it comes before the chain.
1. **root**: findings that nothing causes and that cause something, or the diagnosis' first finding (its chosen
   root), in the diagnosis' order. A finding marked ``role == "root"`` by the diagnosis is always a root.
2. **effect**: findings caused by another finding, most severe first (``critical`` → ``info``); ties keep the
   diagnosis' order (cause before effect).
3. **unexplained**: findings with no cause and no effect (nothing links them to a root), most severe first. A
   finding marked ``role == "unexplained"`` by the diagnosis, or listed in its ``unexplained`` (its chain reaches no
   root, :func:`irdiff.diagnose.roots.apply_roots`), always goes here, even when it causes another finding. A
   difference the user made (a source change, stage 0, options, configuration, settings:
   :data:`irdiff.diagnose.model.ROOT_PREFIXES`) that the diagnosis did not list as unexplained is a root even when
   nothing follows from it (``source.kwarg-changed`` for ``tl.sum(x, axis=0)`` → ``axis=1`` beside another edit):
   it is what changed, not something left unexplained.

Example: ``spec.constexpr-one-lost`` (major, root) → ``coalesce.vector-width`` (critical, effect) →
``ptx.memory-ops`` (minor, effect); an isolated ``sass.calls`` (minor) comes last as unexplained.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from irdiff.diagnose.model import ROOT_PREFIXES

if TYPE_CHECKING:
    from irdiff.diagnose import Diagnosis, Finding

__all__ = ["Role", "Presented", "present_findings", "ordered_diagnosis", "standalone_verdict", "ROLE_LABELS"]

Role = Literal["result", "root", "effect", "unexplained"]

RESULT_IDS = frozenset({"time.wrong-result"})

# The heading of each group, as every format prints it.
ROLE_LABELS: dict[str, str] = {
    "result": "the result is wrong: fix this first",
    "root": "root cause",
    "effect": "effects, most severe first",
    "unexplained": "unexplained (nothing links these to a root)",
}

_RANK = {"critical": 0, "major": 1, "minor": 2, "info": 3}


@dataclass(frozen=True)
class Presented:
    """One finding and its place in the reading order."""

    finding: Finding
    role: Role


def _role(f: Finding, first: bool, caused_by_someone: set[str], unexplained: frozenset[str]) -> Role:
    if f.id in RESULT_IDS:
        return "result"
    marked = getattr(f, "role", None)
    if marked in ("root", "unexplained"):
        return marked  # type: ignore[no-any-return]
    if f.id in unexplained:
        return "unexplained"  # the diagnosis found no root its chain reaches: not a root, whatever it causes
    if f.causes:
        return "effect"
    if first or f.id in caused_by_someone:
        return "root"
    if f.id.startswith(ROOT_PREFIXES):
        return "root"  # a change the user made, with no effect of its own: still a root (not in `unexplained`)
    return "unexplained"


def present_findings(d: Diagnosis | None) -> list[Presented]:
    """The findings of ``d`` in reading order (root, effects by severity, unexplained); empty for None."""
    if d is None:
        return []
    findings = list(d.findings)
    ids = {f.id for f in findings}
    cited = {c for f in findings for c in f.causes if c in ids}
    chain = [f for f in findings if f.id not in RESULT_IDS]
    unexplained = frozenset(d.unexplained or ())
    roles = [_role(f, bool(chain) and f is chain[0], cited, unexplained) for f in findings]
    # A finding whose causes are all absent from this diagnosis links to nothing shown: not an effect here.
    for i, f in enumerate(findings):
        if roles[i] == "effect" and not any(c in ids for c in f.causes):
            roles[i] = (
                "root"
                if f.id not in unexplained and (f.id in cited or (bool(chain) and f is chain[0]))
                else "unexplained"
            )
    order = {"result": -1, "root": 0, "effect": 1, "unexplained": 2}
    idx = sorted(
        range(len(findings)),
        key=lambda i: (
            order[roles[i]],
            0 if roles[i] == "root" else _RANK.get(str(findings[i].severity), 9),
            i,
        ),
    )
    return [Presented(findings[i], roles[i]) for i in idx]


def ordered_diagnosis(d: Diagnosis) -> Diagnosis:
    """A copy of ``d`` whose ``findings`` are in reading order (for JSON and other list-shaped output)."""
    return dataclasses.replace(d, findings=[p.finding for p in present_findings(d)])


def standalone_verdict(d: Diagnosis | None) -> str | None:
    """The diagnosis' verdict sentence when no finding says it already, else None.

    The verdict is the ``time.measured`` finding's explanation when the runner timed the pair
    (:func:`irdiff.diagnose.diagnose`): every format then prints it once, inside that finding, in the reading order
    above, so a wrong result (``time.wrong-result``) is still the first thing said. Without that finding (no
    timing), the verdict, if any, is printed on its own.
    """
    if d is None or not d.verdict:
        return None
    if any(f.id == "time.measured" and f.explanation == d.verdict for f in d.findings):
        return None
    return d.verdict
