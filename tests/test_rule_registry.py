"""The rule registry's checks and records (irdiff/diagnose/rules/registry.py), called directly.

Registration runs at import time, so the whole-diagnosis tests never exercise ``rule``, ``declare`` or ``_check``
after a change to them; these tests call them on fresh declarations and restore the registry afterwards.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from types import MappingProxyType

import pytest

from irdiff.diagnose.model import Finding
from irdiff.diagnose.rules import registry
from irdiff.diagnose.rules.common import Context
from irdiff.diagnose.rules.registry import DECLARED, REGISTRY, Emits, Rule, declare, rule


@pytest.fixture
def fresh_registry() -> Iterator[None]:
    """Empty REGISTRY and DECLARED for one test (ids declared by the real rules would count as taken), restored after."""
    saved = (list(REGISTRY), list(DECLARED))
    REGISTRY.clear()
    DECLARED.clear()
    try:
        yield
    finally:
        REGISTRY[:] = saved[0]
        DECLARED[:] = saved[1]


def _fn(ctx: Context) -> list[Finding]:
    return []


def test_rule_records_function_emits_reads_and_module(fresh_registry: None) -> None:
    e = Emits("resources.spills", causes=("resources.registers",))
    returned = rule(e, reads=("resources", "text.ttgir"))(_fn)
    assert returned is _fn  # the decorator gives the function back unchanged
    assert REGISTRY == [Rule(_fn, (e,), ("resources", "text.ttgir"), __name__)]
    assert REGISTRY[0].ids == ("resources.spills",)
    assert isinstance(REGISTRY[0].emits, tuple) and isinstance(REGISTRY[0].reads, tuple)
    assert DECLARED == []


def test_declare_records_without_function(fresh_registry: None) -> None:
    a, b = Emits("time.measured"), Emits("time.wrong-result", causes=("time.measured",))
    declare(a, b, reads=("runs",), module="irdiff.diagnose")
    assert DECLARED == [Rule(None, (a, b), ("runs",), "irdiff.diagnose")]
    assert DECLARED[0].ids == ("time.measured", "time.wrong-result")
    assert REGISTRY == []


def test_ids_taken_by_a_rule_or_a_declaration_cannot_be_declared_again(fresh_registry: None) -> None:
    declare(Emits("time.measured"), reads=(), module="m")
    with pytest.raises(ValueError, match=r"^m2: finding id 'time.measured' is declared twice$"):
        declare(Emits("time.measured"), reads=(), module="m2")
    rule(Emits("resources.spills"), reads=())(_fn)
    with pytest.raises(ValueError, match=r"finding id 'resources.spills' is declared twice$"):
        declare(Emits("resources.spills"), reads=(), module="m3")
    with pytest.raises(
        ValueError, match="^" + re.escape(f"{__name__}._fn: finding id 'time.measured' is declared twice") + "$"
    ):
        rule(Emits("time.measured"), reads=())(_fn)
    # a refused declaration records nothing
    assert [r.ids for r in DECLARED] == [("time.measured",)] and [r.ids for r in REGISTRY] == [("resources.spills",)]


def test_unknown_ids_causes_directions_and_facts_are_refused(fresh_registry: None) -> None:
    with pytest.raises(ValueError, match=r"^m: finding id 'ptx.no-such' is not in RuleId$"):
        declare(Emits("ptx.no-such"), reads=(), module="m")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^m: resources.spills names unknown causes \['no.such'\]$"):
        declare(Emits("resources.spills", causes=("resources.registers", "no.such")), reads=(), module="m")  # type: ignore[arg-type]
    direction = MappingProxyType({"no.dir": 1})
    with pytest.raises(ValueError, match=r"^m: resources.spills names unknown causes \['no.dir'\]$"):
        declare(Emits("resources.spills", direction=direction), reads=(), module="m")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^m: reads unknown facts \['nope', 'text.sass'\] \(fields of VariantFacts"):
        declare(Emits("resources.spills"), reads=("resources", "nope", "text.sass"), module="m")
    assert DECLARED == [] and REGISTRY == []
    # every kind of readable name is accepted: a VariantFacts field, a stage text, runs/pairing/passes
    declare(
        Emits("resources.spills"),
        reads=("resources", "text.python", "text.ttir", "runs", "pairing", "passes"),
        module="m",
    )
    assert DECLARED[0].reads == ("resources", "text.python", "text.ttir", "runs", "pairing", "passes")


def test_known_causes_and_directions_pass(fresh_registry: None) -> None:
    e = Emits(
        "resources.spills",
        causes=("resources.registers", "options.changed"),
        direction=MappingProxyType({"resources.registers": 1}),
        effects=("time.",),
    )
    declare(e, reads=(), module="m")
    assert DECLARED[0].emits[0] is e


def test_real_registry_is_consistent() -> None:
    # every registered rule has a function, every declaration none; ids are unique across both
    assert REGISTRY and all(r.fn is not None and r.module.startswith("irdiff.diagnose.rules.") for r in REGISTRY)
    assert all(r.fn is None for r in DECLARED)
    ids = [i for r in (*REGISTRY, *DECLARED) for i in r.ids]
    assert len(ids) == len(set(ids))
    assert registry.Rule is Rule
