"""Rules tested from hand-built facts (no compile): each test states the mechanism and checks the finding names the
right argument, variant and direction, in both orders of the variants."""

from __future__ import annotations

import dataclasses

import pytest

from irdiff.diagnose.facts import Ref
from irdiff.diagnose.rules import CAUSES, REGISTERED, RULE_IDS, run_rules
from irdiff.diagnose.rules.registry import Emits, rule
from irdiff.diagnose.rules.resources import rule_registers, rule_spills
from irdiff.diagnose.rules.specialization import rule_options, rule_type_changed
from irdiff.diagnose.testing import make_arg, make_context, make_facts


@pytest.mark.parametrize("order", ["wide-first", "narrow-first"])
def test_type_changed_names_argument_and_predicts_i64_variant(order: str) -> None:
    wide = make_facts("wide", args=[make_arg("ptr", "*fp16"), make_arg("n", "i64", index=1)])
    narrow = make_facts("narrow", args=[make_arg("ptr", "*fp16"), make_arg("n", "i32", index=1)])
    fa, fb = (wide, narrow) if order == "wide-first" else (narrow, wide)
    found = rule_type_changed(make_context(fa, fb))
    assert [f.id for f in found] == ["spec.type-changed"]
    assert "`n`" in found[0].title and "`ptr`" not in found[0].title
    assert found[0].predicts == "wide"  # 64-bit index math is the slower side
    assert found[0].severity == "major"


def test_type_changed_silent_when_types_equal() -> None:
    args = [make_arg("n", "i32")]
    assert rule_type_changed(make_context(make_facts("a", args=args), make_facts("b", args=args))) == []


@pytest.mark.parametrize("swap", [False, True])
def test_registers_predicts_variant_with_more(swap: bool) -> None:
    ptxas = Ref("ptxas", 3, "ptxas info    : Used 96 registers")
    many = make_facts("many", resources={"registers": 96}, resource_refs={"registers": ptxas})
    few = make_facts("few", resources={"registers": 40})
    fa, fb = (few, many) if swap else (many, few)
    (f,) = rule_registers(make_context(fa, fb))
    assert f.id == "resources.registers" and f.predicts == "many"
    assert f.severity == "major"  # 56 more registers per thread
    ev = {e.variant: e for e in f.evidence}
    assert ev["many"].stage == "ptxas" and ev["many"].line == 3
    assert ev["few"].stage == "resources" and ev["few"].text == "40 registers"


def test_registers_small_difference_is_not_a_finding() -> None:
    fa = make_facts("a", resources={"registers": 40})
    fb = make_facts("b", resources={"registers": 44})
    assert rule_registers(make_context(fa, fb)) == []


def test_registers_with_other_num_warps_downgraded_and_explained() -> None:
    fa = make_facts("a", resources={"registers": 96}, options={"num_warps": 4})
    fb = make_facts("b", resources={"registers": 40}, options={"num_warps": 8})
    (f,) = rule_registers(make_context(fa, fb))
    assert f.severity == "minor" and "`num_warps` is 4 in `a` and 8 in `b`" in f.explanation


def test_spills_predicts_spilling_variant() -> None:
    fa = make_facts("a", resources={"spill_store_bytes": 0, "spill_load_bytes": 0})
    fb = make_facts("b", resources={"spill_store_bytes": 128, "spill_load_bytes": 96})
    for x, y in ((fa, fb), (fb, fa)):
        (f,) = rule_spills(make_context(x, y))
        assert f.predicts == "b" and f.severity == "major"


def test_options_lists_only_changed_keys() -> None:
    fa = make_facts("a", options={"num_warps": 4, "num_stages": 2})
    fb = make_facts("b", options={"num_warps": 4, "num_stages": 4})
    (f,) = rule_options(make_context(fa, fb))
    assert "`num_stages` = 2 in `a` vs 4 in `b`" in f.title and "num_warps" not in f.title


def test_identical_facts_give_no_findings() -> None:
    args = [make_arg("x_ptr", "*fp32", divisibility=16), make_arg("n", "i32", index=1, divisibility=16)]
    fa = make_facts("a", args=args, resources={"registers": 40})
    fb = dataclasses.replace(fa, name="b")
    assert run_rules(make_context(fa, fb)) == []


def test_registry_tables_are_built_from_declarations() -> None:
    ids = [e.id for r in REGISTERED for e in r.emits]
    assert len(ids) == len(set(ids)) == len(RULE_IDS)
    assert CAUSES["resources.spills"] == ["resources.registers"]
    regs = next(r for r in REGISTERED if "resources.registers" in r.ids)
    assert regs.fn is rule_registers and "resources" in regs.reads


def test_registry_rejects_unknown_ids_and_facts() -> None:
    with pytest.raises(ValueError, match="not in RuleId"):
        rule(Emits("ptx.no-such-finding"), reads=())(rule_options)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="declared twice"):
        rule(Emits("options.changed"), reads=())(rule_options)
    with pytest.raises(ValueError, match="unknown facts"):
        rule(Emits("time.measured"), reads=("no_such_field",))(rule_options)
