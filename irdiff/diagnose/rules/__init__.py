"""Rules: compare the facts of two variants and turn each difference into a :class:`Finding` that names its mechanism.

One topic module per kind of fact (``parameters``, ``specialization``, ``hints``, ``precision``, ``index_math``,
``loops``, ``coalescing``, ``mma``, ``mma_lowering``, ``pipelining``, ``atomics``, ``lowering``, ``ptx``, ``sass``,
``resources``, ``timing``). Each rule is a function decorated with
:func:`~irdiff.diagnose.rules.registry.rule`, which declares next to its code the finding ids it emits (a
:data:`~irdiff.diagnose.rules.registry.RuleId`), the facts it reads and, per finding, what may cause it. ``a`` is the
inspected variant (``--variant``), ``b`` the baseline (``--against``); explanations name both.

The tables below are built from those declarations: :data:`RULES` (rules in chain order, earliest stage first: the
import order of the topic modules), :data:`RULE_IDS`, :data:`CAUSES`, :data:`DIRECTION` and
:data:`EFFECTS`; ``irdiff.diagnose`` uses them to link the chain.
"""

from __future__ import annotations

from irdiff.diagnose.model import Finding
from irdiff.diagnose.rules import (
    atomics,
    coalescing,
    hints,
    index_math,
    loops,
    lowering,
    mma,
    mma_lowering,
    origins,
    parameters,
    pipelining,
    precision,
    ptx,
    resources,
    sass,
    specialization,
    timing,
)
from irdiff.diagnose.rules.common import Context, states_no_difference
from irdiff.diagnose.rules.registry import DECLARED, REGISTRY, Emits, Rule, RuleFn, RuleId, declare, rule

__all__ = [
    "CAUSES",
    "DIRECTION",
    "EFFECTS",
    "RULES",
    "REGISTERED",
    "RULE_IDS",
    "TOPICS",
    "Context",
    "Emits",
    "Rule",
    "RuleFn",
    "RuleId",
    "declare",
    "rule",
    "run_rules",
]

# Topic modules in chain order (earliest stage first): the rule order before linking, and the order of ties after it.
TOPICS = (
    parameters,
    origins,
    specialization,
    hints,
    precision,
    index_math,
    loops,
    coalescing,
    mma,
    mma_lowering,
    pipelining,
    atomics,
    lowering,
    ptx,
    sass,
    resources,
    timing,
)
_RANK = {m.__name__: i for i, m in enumerate(TOPICS)}
# Within a module, rules keep their definition order (sorted() is stable).
REGISTERED: list[Rule] = sorted([*REGISTRY, *DECLARED], key=lambda r: _RANK[r.module])

# Rules in chain order (earliest stage first); ids each may emit.
RULES: list[tuple[RuleFn, tuple[str, ...]]] = [(r.fn, r.ids) for r in REGISTERED if r.fn is not None]
RULE_IDS: tuple[str, ...] = tuple(i for r in REGISTERED for i in r.ids)

# Which findings can cause which (candidates in priority order); used to link the chain.
CAUSES: dict[str, list[str]] = {e.id: list(e.causes) for r in REGISTERED for e in r.emits if e.causes}
# Causes used only when none of a finding's CAUSES is present (weaker, structural explanations).
# (cause, effect) → +1 when both must predict the same variant, -1 when opposite ones.
DIRECTION: dict[tuple[str, str], int] = {
    (c, e.id): s for r in REGISTERED for e in r.emits for c, s in e.direction.items()
}
# Stage-0 findings whose explanation predicts effects downstream, and the id prefixes of those effects.
EFFECTS: dict[str, tuple[str, ...]] = {e.id: e.effects for r in REGISTERED for e in r.emits if e.effects}


def run_rules(ctx: Context) -> list[Finding]:
    """Run every rule; findings in rule order (the chain order before linking)."""
    out: list[Finding] = []
    for fn, _ in RULES:
        # A finding whose title sets only equal values against each other ("0/0 vs 0/0") states no difference: the
        # rule fired on something it does not show, and the finding is left out rather than shown as a change.
        out.extend(f for f in fn(ctx) if not states_no_difference(f.title))
    return out
