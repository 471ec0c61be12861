"""The rule registry: each rule declares, next to its code, the finding ids it emits, the facts it reads and the
findings that may cause each of its findings; the tables the linker uses (:data:`CAUSES`,
:data:`DIRECTION`, :data:`EFFECTS`) are built from those declarations, never written by hand.

Adding a rule::

    # irdiff/diagnose/rules/<topic>.py
    @rule(Emits("ptx.new-thing", causes=("coalesce.vector-width",)), reads=("counts",))
    def rule_new_thing(ctx: Context) -> list[Finding]: ...

plus the id in :data:`RuleId` (so a typo anywhere is a mypy error) and, for a new topic module, one import line in
``irdiff/diagnose/rules/__init__.py`` (module order is the rule order: earliest stage first).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Literal, get_args

from irdiff.diagnose.facts import VariantFacts
from irdiff.diagnose.model import Finding
from irdiff.diagnose.rules.common import Context

__all__ = ["DECLARED", "REGISTRY", "Emits", "Rule", "RuleFn", "RuleId", "declare", "rule"]

# Every finding id, grouped by topic module. A rule declaring an id missing here, or a cause naming one, fails mypy.
RuleId = Literal[
    # parameters.py (stage 0: the parameter lists, paired by role; the configuration)
    "spec.param-added",
    "config.changed",
    # origins.py (written by irdiff.diagnose.roots: what the user changed)
    "source.call-added",
    "source.call-removed",
    "source.call-changed",
    "source.kwarg-changed",
    "source.args-reordered",
    "source.op-changed",
    "source.dtype-changed",
    "source.constant-changed",
    "source.moved",
    "source.annotation",
    "source.statement",
    "ttir.attr-changed",
    "settings.changed",
    "pass.first-diverging",
    # specialization.py (stage 0) and options
    "spec.constexpr-one-lost",
    "spec.divisibility-lost",
    "spec.type-changed",
    "spec.constexpr-changed",
    "options.changed",
    # index_math.py (TTIR)
    "ttir.i64-index-math",
    "ttir.divrem-64",
    # loops.py
    "loop.flattened",
    "loop.nest",
    "loop.num-stages",
    "loop.unrolled",
    "loop.invariant-load",
    # coalescing.py
    "coalesce.contiguity",
    "coalesce.vector-width",
    # mma.py
    "layout.mma",
    # pipelining.py
    "pipeline.load-not-pipelined",
    "pipeline.buffers",
    "pipeline.async-copies",
    "pipeline.wgmma-wait",
    "ttgir.tma",
    # lowering.py
    "lower.mask-alignment",
    # ptx.py
    "ptx.memory-ops",
    "ptx.mma",
    # sass.py
    "sass.division-calls",
    "sass.calls",
    "sass.instructions",
    # precision.py
    "precision.dot-input",
    "precision.dot-accumulate",
    "precision.dot-upcast",
    "precision.fp64",
    "precision.division",
    "precision.math",
    # mma_lowering.py
    "mma.lowering",
    "mma.blackwell-wait",
    # atomics.py (atomics and layout conversions)
    "atomic.ordering",
    "atomic.cas-loop",
    "atomic.ops",
    "atomic.result-used",
    "layout.convert-shared",
    # hints.py (memory hints, compiler messages, wait depth)
    "hint.cache",
    "hint.axis-info",
    "compiler.messages",
    "pipeline.wait-depth",
    # resources.py
    "resources.registers",
    "resources.spills",
    "resources.shared",
    "resources.occupancy",
    # timing.py (written by irdiff.diagnose from the runner's record)
    "time.measured",
    "time.wrong-result",
]

RuleFn = Callable[[Context], list[Finding]]

# What a rule may read: a field of VariantFacts, or a raw stage text the Context carries.
_READABLE: frozenset[str] = frozenset(
    {f.name for f in fields(VariantFacts)}
    | {"text.ttgir", "text.python", "runs", "pairing"}
    | {"text.ttir", "passes"}  # the root engine (irdiff.diagnose.roots) reads these
)


@dataclass(frozen=True)
class Emits:
    """One finding id a rule may emit and how it links into the cause graph.

    :ivar id: the finding id.
    :ivar causes: findings that may cause this one, most direct first (the linker keeps the first present one and
        other present ones that are not already its ancestors).
    :ivar direction: per cause, +1 when cause and effect must predict the same variant to link, -1 when opposite ones
        (e.g. more pipeline buffers, predicted for the variant with fewer, explain more registers in the other one).
    :ivar effects: for a stage-0 finding, id prefixes of the downstream findings it predicts; when none is present the
        finding is kept as information only.
    """

    id: RuleId
    causes: tuple[RuleId, ...] = ()
    direction: Mapping[RuleId, Literal[1, -1]] = field(default_factory=lambda: MappingProxyType({}))
    effects: tuple[str, ...] = ()


@dataclass(frozen=True)
class Rule:
    """A registered rule: its function, the findings it may emit and the facts it reads (documentation and tests)."""

    fn: RuleFn | None
    emits: tuple[Emits, ...]
    reads: tuple[str, ...]
    module: str

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(e.id for e in self.emits)


# Rules in registration order (= import order of the topic modules = chain order before linking).
REGISTRY: list[Rule] = []
# Findings declared without a rule function here (``time.measured`` is written by irdiff.diagnose itself).
DECLARED: list[Rule] = []


def _check(emits: tuple[Emits, ...], reads: tuple[str, ...], where: str) -> None:
    unread = [r for r in reads if r not in _READABLE]
    if unread:
        raise ValueError(f"{where}: reads unknown facts {unread} (fields of VariantFacts or text.<stage>)")
    known = set(get_args(RuleId))
    taken = {e.id for r in (*REGISTRY, *DECLARED) for e in r.emits}
    for e in emits:
        if e.id not in known:
            raise ValueError(f"{where}: finding id {e.id!r} is not in RuleId")
        if e.id in taken:
            raise ValueError(f"{where}: finding id {e.id!r} is declared twice")
        bad = [c for c in (*e.causes, *e.direction) if c not in known]
        if bad:
            raise ValueError(f"{where}: {e.id} names unknown causes {bad}")


def rule(*emits: Emits, reads: tuple[str, ...]) -> Callable[[RuleFn], RuleFn]:
    """Register the decorated function as a rule emitting ``emits`` from the facts named in ``reads``.

    :raises ValueError: an id outside :data:`RuleId`, an id declared twice, or an unknown fact in ``reads``.
    """

    def wrap(fn: RuleFn) -> RuleFn:
        _check(emits, reads, f"{fn.__module__}.{fn.__name__}")
        REGISTRY.append(Rule(fn, tuple(emits), tuple(reads), fn.__module__))
        return fn

    return wrap


def declare(*emits: Emits, reads: tuple[str, ...], module: str) -> None:
    """Declare findings produced outside a rule function (so they take part in ids, causes and tests)."""
    _check(emits, reads, module)
    DECLARED.append(Rule(None, tuple(emits), tuple(reads), module))
