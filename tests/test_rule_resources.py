"""``resources.*`` rules (``irdiff/diagnose/rules/resources.py``): registers, spills, shared memory and occupancy.

The thresholds are checked at their edges on facts built from ptxas' own report lines (no compile), every time in both
orders (:func:`diag_helpers.both_orders` checks that the two findings mirror each other); then the rules run on the
facts of real compiles of ``tests/suites/diag_loop.py`` on sm90 (shared compile cache) and must quote the numbers the
facts read from ptxas and Triton's metadata, naming the right variant.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from diag_helpers import both_orders

from irdiff.diagnose.facts import Buffer, Ref, VariantFacts, extract_facts, occupancy
from irdiff.diagnose.rules.resources import rule_occupancy, rule_registers, rule_shared, rule_spills
from irdiff.diagnose.testing import make_context, make_facts

LOOP = str(Path(__file__).parent / "suites" / "diag_loop.py")
LIMIT = " (255 is the hardware limit: ptxas had to fit the kernel under the cap)"
FEWER = ". More registers per thread mean fewer warps can be resident per SM."


def regs(name: str, n: int, warps: int = 4, line: int | None = 5) -> VariantFacts:
    ref = Ref("ptxas", line, f"ptxas info    : Used {n} registers, used 1 barriers") if line else None
    return make_facts(
        name,
        resources={"registers": n},
        resource_refs={"registers": ref} if ref else {},
        options={"num_warps": warps, "num_stages": 3},
    )


# ------------------------------------------------------------------------------------------------ registers


@pytest.mark.parametrize(
    ("ra", "rb", "severity"),
    [
        (48, 40, "minor"),  # 8 apart: the smallest difference reported; 48 < 1.5 x 40
        (132, 100, "major"),  # 32 apart (and 132 < 1.5 x 100 = 150)
        (131, 100, "minor"),  # 31 apart, 131 < 150
        (60, 40, "major"),  # 20 apart but 1.5 x as many
        (59, 40, "minor"),  # 19 apart, 59 < 60
        (255, 250, "major"),  # 5 apart, but one is at the cap
    ],
)
def test_registers_thresholds(ra: int, rb: int, severity: str) -> None:
    (f,) = both_orders(rule_registers, regs("hi", ra), regs("lo", rb))
    assert (f.id, f.severity, f.predicts, f.stage) == ("resources.registers", severity, "hi", "resources")
    assert f.title == f"Registers per thread: {ra} in `hi` vs {rb} in `lo`"
    assert f.explanation == (
        f"ptxas allocates {ra} registers per thread in `hi` and {rb} in `lo`" + (LIMIT if ra == 255 else "") + FEWER
    )
    assert [(e.variant, e.stage, e.line) for e in f.evidence] == [("hi", "ptxas", 5), ("lo", "ptxas", 5)]
    (r,) = rule_registers(make_context(regs("lo", rb), regs("hi", ra)))
    assert r.predicts == "hi" and r.title == f"Registers per thread: {rb} in `lo` vs {ra} in `hi`"


@pytest.mark.parametrize(("ra", "rb"), [(47, 40), (254, 250), (40, 40), (255, 255)])
def test_registers_too_close_or_equal_is_no_finding(ra: int, rb: int) -> None:
    assert both_orders(rule_registers, regs("a", ra), regs("b", rb)) == []


def test_registers_unknown_on_one_side_is_no_finding() -> None:
    known, unknown = regs("a", 96), make_facts("b", resources={"registers": None})
    assert both_orders(rule_registers, known, unknown) == []
    assert both_orders(rule_registers, known, make_facts("c")) == []


def test_registers_evidence_without_ptxas_line_quotes_the_count() -> None:
    (f,) = both_orders(rule_registers, regs("a", 96, line=None), regs("b", 40, line=7))
    assert [(e.variant, e.stage, e.line, e.text) for e in f.evidence] == [
        ("a", "resources", None, "96 registers"),
        ("b", "ptxas", 7, "ptxas info    : Used 40 registers, used 1 barriers"),
    ]


@pytest.mark.parametrize(
    ("ra", "rb", "severity"),
    [(96, 40, "minor"), (48, 40, "info"), (255, 250, "major"), (255, 128, "major")],
)
def test_registers_with_other_num_warps_is_one_step_weaker_unless_capped(ra: int, rb: int, severity: str) -> None:
    (f,) = both_orders(rule_registers, regs("hi", ra, warps=8), regs("lo", rb, warps=4))
    assert f.severity == severity and f.predicts == "hi"
    assert f.explanation.endswith(
        " `num_warps` is 8 in `hi` and 4 in `lo`: per-thread counts scale with the work per thread (twice the "
        "threads, half the instructions each: the same work per CTA), so they do not compare directly."
    )
    assert (LIMIT in f.explanation) == (ra == 255)


# ------------------------------------------------------------------------------------------------ spills


def spills(name: str, store: int | None, load: int | None, line: int | None = 4) -> VariantFacts:
    text = f"    0 bytes stack frame, {store or 0} bytes spill stores, {load or 0} bytes spill loads"
    return make_facts(
        name,
        resources={"spill_store_bytes": store, "spill_load_bytes": load},
        resource_refs={"spills": Ref("ptxas", line, text)} if line else {},
    )


@pytest.mark.parametrize(("store", "load", "severity"), [(40, 24, "major"), (40, 23, "minor"), (8, 0, "minor")])
def test_spills_severity_and_direction(store: int, load: int, severity: str) -> None:
    (f,) = both_orders(rule_spills, spills("spilly", store, load), spills("clean", 0, 0))
    assert (f.id, f.severity, f.predicts, f.stage) == ("resources.spills", severity, "spilly", "resources")
    assert f.title == f"Register spills: {store}/{load} B in `spilly` vs 0/0 B in `clean`"
    assert f.explanation.startswith(
        f"Register spills: {store} B stored / {load} B loaded in `spilly`, 0 B / 0 B in `clean`. Spilled values live "
        "in local memory"
    )
    assert [(e.variant, e.stage, e.line) for e in f.evidence] == [("spilly", "ptxas", 4), ("clean", "ptxas", 4)]
    (r,) = rule_spills(make_context(spills("clean", 0, 0), spills("spilly", store, load)))
    assert r.predicts == "spilly" and r.title == f"Register spills: 0/0 B in `clean` vs {store}/{load} B in `spilly`"


def test_spills_more_on_both_sides_predicts_the_larger_total() -> None:
    (f,) = both_orders(rule_spills, spills("a", 16, 16), spills("b", 64, 8))
    assert f.predicts == "b" and f.severity == "major"  # 72 B >= 64 B


def test_spills_same_total_predicts_neither() -> None:
    # 8 B stored and none loaded back vs 8 B loaded: the same local-memory traffic; the order must not pick a side
    # (it used to predict whichever variant came second)
    (f,) = both_orders(rule_spills, spills("stores", 8, 0), spills("loads", 0, 8))
    assert (f.predicts, f.severity) == (None, "minor")
    assert f.title == "Register spills: 8/0 B in `stores` vs 0/8 B in `loads`"


def test_spills_unknown_counts_as_none_and_equal_is_no_finding() -> None:
    assert both_orders(rule_spills, spills("a", None, None), spills("b", 0, 0)) == []
    assert both_orders(rule_spills, spills("a", 8, 8), spills("b", 8, 8)) == []
    (f,) = both_orders(rule_spills, spills("a", None, 16, line=None), spills("b", 0, 0))
    assert f.predicts == "a" and f.title == "Register spills: 0/16 B in `a` vs 0/0 B in `b`"
    assert (f.evidence[0].stage, f.evidence[0].line, f.evidence[0].text) == (
        "resources", None, "0 B spill stores, 16 B spill loads",
    )  # fmt: skip


# ------------------------------------------------------------------------------------------------ shared memory


def shared(name: str, n: int | None, buffers: list[Buffer] | None = None) -> VariantFacts:
    return make_facts(name, resources={"shared_bytes": n}, buffers=buffers or [])


def test_shared_lists_the_buffers_of_each_variant() -> None:
    ring = Buffer(3, [64, 32], "f16", 12288, Ref("ttgir", 40, "%a = ttg.local_alloc"))
    one = Buffer(1, [64, 32], "f16", 4096, Ref("ttgir", 41, "%b = ttg.local_alloc"))
    (f,) = both_orders(rule_shared, shared("three", 24576 + 512, [ring, ring]), shared("one", 8192, [one, one]))
    assert (f.id, f.severity, f.predicts, f.stage) == ("resources.shared", "minor", None, "resources")
    assert f.title == "Shared memory: 24.5 KB (25088 B) in `three` vs 8 KB in `one`"
    assert (
        "Explicit TTGIR buffers (`ttg.local_alloc`): `three`: 3×64x32 = 12 KB, 3×64x32 = 12 KB (total 24 KB); "
        "`one`: 1×64x32 = 4 KB, 1×64x32 = 4 KB (total 8 KB); the rest is scratch"
    ) in f.explanation
    assert [(e.variant, e.stage, e.text) for e in f.evidence] == [
        ("three", "resources", "shared = 25088 B (metadata)"),
        ("one", "resources", "shared = 8192 B (metadata)"),
    ]


def test_shared_without_buffers_and_with_a_ttgir_line() -> None:
    a = shared("a", 512)
    a.resource_refs["shared"] = Ref("ttgir", 9, "ttg.shared = 512 : i32")
    (f,) = both_orders(rule_shared, a, shared("b", 0))
    assert f.title == "Shared memory: 512 B in `a` vs 0 B in `b`"
    assert "`a`: none (total 0 B); `b`: none (total 0 B)" in f.explanation
    assert [(e.stage, e.line) for e in f.evidence] == [("ttgir", 9), ("resources", None)]


@pytest.mark.parametrize(("sa", "sb"), [(None, 1024), (1024, None), (2048, 2048)])
def test_shared_unknown_or_equal_is_no_finding(sa: int | None, sb: int | None) -> None:
    assert both_orders(rule_shared, shared("a", sa), shared("b", sb)) == []


# ------------------------------------------------------------------------------------------------ occupancy


def occ(name: str, registers: int, warps: int, smem: int = 0, target: str = "sm90") -> VariantFacts:
    arch = int(target[2:])
    return make_facts(
        name, target=target, arch=arch, options={"num_warps": warps}, occupancy=occupancy(arch, warps, registers, smem)
    )


def test_occupancy_fewer_warps_predicted_and_half_is_major() -> None:
    # sm90, 4 warps: 128 registers -> 4096 per warp -> 16 warps -> 4 CTAs; 64 registers -> 32 warps -> 8 CTAs
    (f,) = both_orders(rule_occupancy, occ("fat", 128, 4), occ("lean", 64, 4))
    assert (f.id, f.severity, f.predicts, f.stage) == ("resources.occupancy", "major", "fat", "resources")
    assert f.title == (
        "Occupancy: 4 CTAs (16 warps) per SM in `fat` vs 8 (32 warps) in `lean` (limited by registers in both)"
    )
    assert f.explanation.startswith(
        "On sm90 one SM holds 4 CTA(s) of `fat` (16 warps; limited by registers) and 8 of `lean` (32 warps; limited "
        "by registers). Fewer resident warps in `fat` leave less parallelism to hide memory latency. Limits used: "
        "CUDA C++ Programming Guide"
    )
    assert [(e.variant, e.stage, e.line, e.text) for e in f.evidence] == [
        ("fat", "resources", None, "4 CTAs/SM (16 warps), limited by registers "
         "[registers 4, shared memory 228, warps 16, CTA slots 32]"),
        ("lean", "resources", None, "8 CTAs/SM (32 warps), limited by registers "
         "[registers 8, shared memory 228, warps 16, CTA slots 32]"),
    ]  # fmt: skip
    (r,) = rule_occupancy(make_context(occ("lean", 64, 4), occ("fat", 128, 4)))
    assert r.predicts == "fat" and r.severity == "major" and "Fewer resident warps in `fat`" in r.explanation


def test_occupancy_less_than_half_fewer_is_minor() -> None:
    # 72 registers -> 2304 per warp -> 28 warps -> 7 CTAs of 4 warps; 64 -> 8 CTAs (32 warps)
    (f,) = both_orders(rule_occupancy, occ("a", 72, 4), occ("b", 64, 4))
    assert (f.severity, f.predicts) == ("minor", "a")
    assert f.title.startswith("Occupancy: 7 CTAs (28 warps) per SM in `a` vs 8 (32 warps) in `b`")
    # exactly half the warps: major
    (g,) = both_orders(rule_occupancy, occ("a", 128, 4), occ("b", 64, 4))
    assert g.severity == "major"


def test_occupancy_same_warps_in_other_ctas_is_info() -> None:
    # 4 warps x 16 CTAs (warps limit) vs 8 warps x 8 CTAs: 64 resident warps either way
    (f,) = both_orders(rule_occupancy, occ("w4", 24, 4), occ("w8", 24, 8))
    assert (f.severity, f.predicts) == ("info", None)
    assert (
        "and 8 of `w8` (64 warps; limited by warps). The resident warps are the same (64), in CTAs of different sizes:"
        " the same parallelism to hide memory latency. Limits used: CUDA C++"
    ) in f.explanation
    assert f.title == (
        "Occupancy: 16 CTAs (64 warps) per SM in `w4` vs 8 (64 warps) in `w8` (limited by warps in both)"
    )


def test_occupancy_none_fits_is_major() -> None:
    # 200 KB of shared memory plus the reserved 1 KB does not fit twice: 1 CTA; a 240 KB kernel fits none
    (f,) = both_orders(rule_occupancy, occ("huge", 32, 4, smem=240 * 1024), occ("big", 32, 4, smem=200 * 1024))
    assert (f.severity, f.predicts) == ("major", "huge")
    assert "0 CTA(s) of `huge` (0 warps; limited by shared memory)" in f.explanation


def test_occupancy_equal_or_unknown_is_no_finding() -> None:
    assert both_orders(rule_occupancy, occ("a", 64, 4), occ("b", 60, 4)) == []  # both 8 CTAs of 4 warps
    assert both_orders(rule_occupancy, occ("a", 64, 4), make_facts("b")) == []
    assert both_orders(rule_occupancy, make_facts("a"), occ("b", 64, 4)) == []


# ------------------------------------------------------------------------------------------------ real compiles


@pytest.fixture(scope="module")
def loop90(compile_suite) -> dict[str, VariantFacts]:  # type: ignore[no-untyped-def]
    b = compile_suite(LOOP, ["stages3", "stages1", "dot3", "dot1", "tma", "flat", "nest"], "sm90")
    return {n: extract_facts(b.variants[n]) for n in ("stages3", "stages1", "dot3", "flat")}


def test_real_pipelined_loop_uses_shared_memory_for_its_ring(loop90: dict[str, VariantFacts]) -> None:
    s3, s1 = loop90["stages3"], loop90["stages1"]
    (f,) = both_orders(rule_shared, s3, s1)
    assert f.title == "Shared memory: 1 KB in `stages3` vs 0 B in `stages1`"
    assert "`stages3`: 2×256 = 1 KB (total 1 KB); `stages1`: none (total 0 B)" in f.explanation
    ra, rb = s3.resources["registers"], s1.resources["registers"]
    found = rule_registers(make_context(s3, s1))
    if abs(ra - rb) >= 8:
        (r,) = found
        assert r.title == f"Registers per thread: {ra} in `stages3` vs {rb} in `stages1`"
        assert r.predicts == ("stages3" if ra > rb else "stages1")
        assert [e.line for e in r.evidence] == [s3.resource_refs["registers"].line] * 2
    else:
        assert found == []


def test_real_occupancy_limited_by_the_ring_of_the_flattened_loop(loop90: dict[str, VariantFacts]) -> None:
    d3, flat = loop90["dot3"], loop90["flat"]
    oa, ob = d3.occupancy, flat.occupancy
    assert oa is not None and ob is not None
    # the flattened tile loop keeps more shared memory live (its metadata), which caps it at fewer CTAs
    assert flat.resources["shared_bytes"] > d3.resources["shared_bytes"]
    assert ob.limits["shared memory"] == 228 * 1024 // (flat.resources["shared_bytes"] + 1024)
    found = both_orders(rule_occupancy, d3, flat)
    if (oa.ctas_per_sm, oa.warps_per_sm) == (ob.ctas_per_sm, ob.warps_per_sm):
        assert found == []
    else:
        (f,) = found
        lower = "dot3" if oa.warps_per_sm < ob.warps_per_sm else "flat"
        assert f.predicts == lower and f"Fewer resident warps in `{lower}`" in f.explanation
        la = " and ".join(k for k, n in oa.limits.items() if n == oa.ctas_per_sm)
        lb = " and ".join(k for k, n in ob.limits.items() if n == ob.ctas_per_sm)
        assert (f"limited by {la} in both" if la == lb else f"limited by {la} / {lb}") in f.title


def test_evidence_and_explanation_of_the_second_variant() -> None:
    # the fallback evidence (no ptxas line) and the explanation quote the second-named variant's own numbers
    (r,) = rule_registers(make_context(regs("b", 40, line=7), regs("a", 96, line=None)))
    assert [(e.variant, e.stage, e.line, e.text) for e in r.evidence] == [
        ("b", "ptxas", 7, "ptxas info    : Used 40 registers, used 1 barriers"),
        ("a", "resources", None, "96 registers"),
    ]
    (s,) = rule_spills(make_context(spills("a", 0, 0), spills("b", 24, 40, line=None)))
    assert s.evidence[1].text == "24 B spill stores, 40 B spill loads" and s.predicts == "b"
    assert s.explanation.startswith("Register spills: 0 B stored / 0 B loaded in `a`, 24 B / 40 B in `b`. ")
