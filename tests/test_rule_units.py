"""Rules tested from hand-built facts (no compile): each test states the mechanism and checks the finding names the
right argument, variant and direction, in both orders of the variants."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from diag_helpers import both_orders
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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
    found = both_orders(rule_type_changed, fa, fb)
    assert [f.id for f in found] == ["spec.type-changed"]
    assert "`n`" in found[0].title and "`ptr`" not in found[0].title
    assert found[0].predicts == "wide"  # 64-bit index math is the slower side
    assert found[0].severity == "major"


def test_type_changed_silent_when_types_equal() -> None:
    args = [make_arg("n", "i32")]
    assert both_orders(rule_type_changed, make_facts("a", args=args), make_facts("b", args=args)) == []


@pytest.mark.parametrize("swap", [False, True])
def test_registers_predicts_variant_with_more(swap: bool) -> None:
    ptxas = Ref("ptxas", 3, "ptxas info    : Used 96 registers")
    many = make_facts("many", resources={"registers": 96}, resource_refs={"registers": ptxas})
    few = make_facts("few", resources={"registers": 40})
    fa, fb = (few, many) if swap else (many, few)
    (f,) = both_orders(rule_registers, fa, fb)
    assert f.id == "resources.registers" and f.predicts == "many"
    assert f.severity == "major"  # 56 more registers per thread
    ev = {e.variant: e for e in f.evidence}
    assert ev["many"].stage == "ptxas" and ev["many"].line == 3
    assert ev["few"].stage == "resources" and ev["few"].text == "40 registers"


def test_registers_small_difference_is_not_a_finding() -> None:
    fa = make_facts("a", resources={"registers": 40})
    fb = make_facts("b", resources={"registers": 44})
    assert both_orders(rule_registers, fa, fb) == []


def test_registers_with_other_num_warps_downgraded_and_explained() -> None:
    fa = make_facts("a", resources={"registers": 96}, options={"num_warps": 4})
    fb = make_facts("b", resources={"registers": 40}, options={"num_warps": 8})
    (f,) = both_orders(rule_registers, fa, fb)
    assert f.severity == "minor" and "`num_warps` is 4 in `a` and 8 in `b`" in f.explanation


def test_spills_predicts_spilling_variant() -> None:
    fa = make_facts("a", resources={"spill_store_bytes": 0, "spill_load_bytes": 0})
    fb = make_facts("b", resources={"spill_store_bytes": 128, "spill_load_bytes": 96})
    for x, y in ((fa, fb), (fb, fa)):
        (f,) = both_orders(rule_spills, x, y)
        assert f.predicts == "b" and f.severity == "major"


def test_options_lists_only_changed_keys() -> None:
    fa = make_facts("a", options={"num_warps": 4, "num_stages": 2})
    fb = make_facts("b", options={"num_warps": 4, "num_stages": 4})
    (f,) = both_orders(rule_options, fa, fb)
    assert "`num_stages` = 2 in `a` vs 4 in `b`" in f.title and "num_warps" not in f.title


def test_options_num_warps_not_an_int_gets_the_general_sentence() -> None:
    """A loaded bundle's ``options`` is any JSON object (bundle schema: ``"options": {"type": "object"}``): a
    ``num_warps`` written as ``"4"`` cannot be counted in threads, so the explanation keeps the compared values and
    ends with the general ``num_warps`` sentence, in both orders."""
    fa = make_facts("a", options={"num_warps": "4", "num_stages": 3})
    fb = make_facts("b", options={"num_warps": 8, "num_stages": 3})
    for x, y in ((fa, fb), (fb, fa)):
        (f,) = rule_options(make_context(x, y))
        assert f.explanation == (
            f"Compile options differ: `num_warps` = {x.options['num_warps']} in `{x.name}` vs "
            f"{y.options['num_warps']} in `{y.name}`. `num_warps` changes the layouts (warpsPerCTA), the work per "
            "thread, and the registers each may use."
        )


def test_identical_facts_give_no_findings() -> None:
    args = [make_arg("x_ptr", "*fp32", divisibility=16), make_arg("n", "i32", index=1, divisibility=16)]
    fa = make_facts("a", args=args, resources={"registers": 40})
    fb = dataclasses.replace(fa, name="b")
    assert both_orders(run_rules, fa, fb) == []


def test_registry_tables_are_built_from_declarations() -> None:
    ids = [e.id for r in REGISTERED for e in r.emits]
    assert len(ids) == len(set(ids)) == len(RULE_IDS)
    assert CAUSES["resources.spills"] == ["resources.registers", "options.changed"]
    regs = next(r for r in REGISTERED if "resources.registers" in r.ids)
    assert regs.fn is rule_registers and "resources" in regs.reads


def test_registry_rejects_unknown_ids_and_facts() -> None:
    with pytest.raises(ValueError, match="not in RuleId"):
        rule(Emits("ptx.no-such-finding"), reads=())(rule_options)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="declared twice"):
        rule(Emits("options.changed"), reads=())(rule_options)
    with pytest.raises(ValueError, match="unknown facts"):
        rule(Emits("time.measured"), reads=("no_such_field",))(rule_options)


# --- No finding quotes equal values as a difference (issue 16: "async copies 0/0 vs 0/0") ---------------------------


def _refs(n: int, what: str) -> list[Ref]:
    return [Ref("ttgir", 10 + i, f"%{i} = {what}") for i in range(n)]


@pytest.mark.parametrize("order", ["ab", "ba"])
def test_async_copies_silent_when_only_the_synchronous_loads_differ(order: str) -> None:
    # Neither variant pipelines its loop (no cp.async); one has one more synchronous load in the loop (e.g. a larger
    # reduction block issues one more load per iteration). That is no async-copy difference.
    more = make_facts("more", sync_loads_loop=_refs(3, "tt.load %p"))
    fewer = make_facts("fewer", sync_loads_loop=_refs(2, "tt.load %p"))
    fa, fb = (more, fewer) if order == "ab" else (fewer, more)
    found = both_orders(run_rules, fa, fb)
    assert "pipeline.async-copies" not in [f.id for f in found]


@pytest.mark.parametrize("order", ["ab", "ba"])
def test_async_copies_title_quotes_the_counts_that_differ(order: str) -> None:
    piped = make_facts("piped", async_copies_prologue=_refs(2, "ttg.async_copy_global_to_local"),
                       async_copies_loop=_refs(2, "ttg.async_copy_global_to_local"))  # fmt: skip
    plain = make_facts("plain", sync_loads_loop=_refs(2, "tt.load %p"))
    fa, fb = (piped, plain) if order == "ab" else (plain, piped)
    by_id = {f.id: f for f in both_orders(run_rules, fa, fb)}
    f = by_id["pipeline.async-copies"]
    assert ("2/2 in `piped` vs 0/0 in `plain`" if order == "ab" else "0/0 in `plain` vs 2/2 in `piped`") in f.title
    assert f.predicts == "plain"


def test_quoted_comparisons_reads_the_value_pairs_of_a_title() -> None:
    from irdiff.diagnose.rules.common import quoted_comparisons, states_no_difference

    assert quoted_comparisons("Async copies (prologue/loop): 0/0 in `a` vs 0/0 in `b`") == [("0/0", "0/0")]
    assert states_no_difference("Registers per thread: 40 in `x:k` vs 40 in `y:k`")
    assert states_no_difference("SASS instruction count 200 in `a` vs 200 in `b` (1.00×)")
    assert not states_no_difference("SASS instruction count 200 in `a` vs 408 in `b` (0.49×)")
    assert not states_no_difference("Configuration differs: `R0_BLOCK` (2048→1024)")
    assert states_no_difference("Configuration differs: `R0_BLOCK` (2048→2048)")
    # Variant names are not values; a title without a comparison states nothing of the kind.
    assert not states_no_difference("Vector width of global accesses (`a` vs `b`): `x` load 64 vs 16 bits")
    assert not states_no_difference("`ks0` is new in `dynamic`: the row stride")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_no_rule_quotes_equal_values_as_a_difference(data: st.DataObject) -> None:
    """Every rule, run on two variants whose counts, resources and copy lists are drawn at random (often equal in
    what a title shows while something else differs), states only differences it quotes: no finding's title sets
    equal values against each other. The rules are called directly, not through run_rules (which drops such
    findings as a safety net)."""
    from irdiff.diagnose.rules import RULES
    from irdiff.diagnose.rules.common import quoted_comparisons, states_no_difference

    small = st.integers(min_value=0, max_value=3)

    def facts(name: str) -> Any:
        counts = {
            "ptx": {k: data.draw(small) * 8 for k in ("instructions", "ld.global.b16", "cp.async", "f64 ops")},
            "sass": {k: data.draw(small) * 100 for k in ("instructions", "LDG.E.U16", "BAR", "DFMA")},
            "ttgir": {"tt.load": data.draw(small)},
        }
        resources = {
            "registers": data.draw(st.sampled_from([32, 40])),
            "spill_store_bytes": data.draw(st.sampled_from([0, 8])),
            "spill_load_bytes": data.draw(st.sampled_from([0, 8])),
            "shared": data.draw(st.sampled_from([0, 4096])),
        }
        return make_facts(
            name,
            counts=counts,
            resources=resources,
            options={"num_warps": data.draw(st.sampled_from([4, 8])), "num_stages": 3},
            async_copies_prologue=_refs(data.draw(small), "ttg.async_copy_global_to_local"),
            async_copies_loop=_refs(data.draw(small), "ttg.async_copy_global_to_local"),
            sync_loads_loop=_refs(data.draw(small), "tt.load %p"),
            tma_copies=_refs(data.draw(st.integers(0, 1)), "ttng.async_tma_copy_global_to_local"),
        )

    ctx = make_context(facts("a"), facts("b"))
    for fn, _ in RULES:
        for f in fn(ctx):
            assert not states_no_difference(f.title), (f.id, f.title, quoted_comparisons(f.title))
