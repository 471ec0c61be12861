"""``ptx.memory-ops`` and ``ptx.mma`` (``irdiff/diagnose/rules/ptx.py``) on the facts of real compiles, both orders.

Kernels: the README's vector add on sm80 (``plain``: 128-bit accesses; ``dns``: ``do_not_specialize`` on ``n``, 32-bit
accesses, ``tests/suites/readme_add.py``) and the dot loop of ``tests/suites/diag_loop.py`` on sm86 (``mma.sync``,
``cp.async``) and sm90 (``wgmma``), with 4 or 8 warps; from the shared compile cache.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from irdiff.diagnose.facts import VariantFacts, extract_facts
from irdiff.diagnose.rules.ptx import _width_note, rule_ptx_memory, rule_ptx_mma
from irdiff.diagnose.testing import make_context, make_facts

SUITES = Path(__file__).parent / "suites"
BOOKKEEPING = ("commit_group", "wait_group", "wait_all", "mbarrier")


def table_kinds(explanation: str) -> list[str]:
    """The instruction kinds of ``ptx.memory-ops``' table ("`ld.global.b32` 16 vs 0; ..."), in order."""
    return re.findall(r"`([^`]+)` \d+ vs \d+", explanation.split(". Global memory instructions")[0])


def kinds_in_order(kinds: list[str]) -> list[str]:
    """``kinds`` in the order the table promises: global data movement (``ld.global``, ``st.global``, ``cp.async``
    copies), then shared-memory movement (``ld.shared``, ``st.shared``, ``ldmatrix``), then ``cp.async``
    group/barrier bookkeeping; alphabetical within each group."""
    sync = sorted(k for k in kinds if any(w in k for w in BOOKKEEPING))
    moving = [k for k in kinds if k not in sync]
    glob = sorted(k for k in moving if k.startswith(("ld.global", "st.global", "cp.async")))
    return glob + sorted(k for k in moving if k not in glob) + sync


CP = "`cp.async` copies global→shared memory without passing through registers."


@pytest.fixture(scope="module")
def facts(compile_suite) -> dict[str, VariantFacts]:  # type: ignore[no-untyped-def]
    out: dict[str, VariantFacts] = {}
    for suite, variants, target, tag in (
        ("readme_add.py", ["plain", "dns"], "sm80", ""),
        ("diag_loop.py", ["dot3", "dot3w8"], "sm86", "_86"),
        ("diag_loop.py", ["dot3", "dot3w8"], "sm90", "_90"),
    ):
        for n, v in compile_suite(str(SUITES / suite), variants, target).variants.items():
            f = extract_facts(v)
            f.name = n + tag
            out[f.name] = f
    return out


def test_narrow_accesses_both_orders(facts: dict[str, VariantFacts]) -> None:
    d, p = facts["dns"], facts["plain"]
    cd, cp = d.counts["ptx"], p.counts["ptx"]
    assert (cd["ld.global.b32"], cd["st.global.b32"], cp["ld.global.v4.b32"], cp["st.global.v4.b32"]) == (16, 8, 4, 2)
    (f,) = rule_ptx_memory(make_context(d, p))
    assert (f.id, f.severity, f.stage, f.predicts) == ("ptx.memory-ops", "major", "ptx", "dns")
    assert f.title == (
        "PTX memory ops (`dns`/`plain`): ld.global.b32 16/0, ld.global.v4.b32 0/4, st.global.b32 8/0, st.global.v4.b32 0/2"
    )
    assert f.explanation == (
        "PTX memory instructions (`dns` vs `plain`): `ld.global.b32` 16 vs 0; `ld.global.v4.b32` 0 vs 4; "
        "`st.global.b32` 8 vs 0; `st.global.v4.b32` 0 vs 2. Global memory instructions in total: 24 in `dns` vs 6 in "
        "`plain` (4×). `ld.global.b32` moves 4 bytes per thread and instruction, `ld.global.v4.b32` 16, "
        "`st.global.b32` 4, `st.global.v4.b32` 16."
    )
    # each opcode's first line, on the side that has it, with its count
    assert [(e.variant, e.stage, e.text.split()[0], e.text.split("(")[-1]) for e in f.evidence] == [
        ("dns", "ptx", "ld.global.b32", "16× ld.global.b32)"),
        ("plain", "ptx", "ld.global.v4.b32", "4× ld.global.v4.b32)"),
        ("dns", "ptx", "st.global.b32", "8× st.global.b32)"),
        ("plain", "ptx", "st.global.v4.b32", "2× st.global.v4.b32)"),
    ]
    assert all(e.line == facts[e.variant].first_lines["ptx"][e.text.split()[0]].line for e in f.evidence)
    (r,) = rule_ptx_memory(make_context(p, d))
    assert r.predicts == "dns" and r.severity == "major"
    assert r.title.startswith("PTX memory ops (`plain`/`dns`): ld.global.b32 0/16, ld.global.v4.b32 4/0")
    assert "in total: 6 in `plain` vs 24 in `dns` (0.25×)" in r.explanation
    assert [e.variant for e in r.evidence] == ["dns", "plain", "dns", "plain"]
    # the same variant twice: nothing
    assert rule_ptx_memory(make_context(p, dataclasses.replace(p, name="twin"))) == []
    assert rule_ptx_mma(make_context(d, p)) == []


def test_async_copies_and_warps(facts: dict[str, VariantFacts]) -> None:
    w8, w4 = facts["dot3w8_86"], facts["dot3_86"]
    (f,) = rule_ptx_memory(make_context(w8, w4))
    # per-thread counts of different num_warps: minor, no prediction, the warps sentence
    assert (f.severity, f.predicts) == ("minor", None)
    assert f.title.startswith("PTX memory ops (`dot3w8_86`/`dot3_86`): cp.async 16B 6/12, st.global.v4.b32 2/4, ")
    assert "Global memory instructions in total: 8 in `dot3w8_86` vs 16 in `dot3_86` (0.5×)." in f.explanation
    assert "`cp.async 16B` moves 16 bytes per thread and instruction, `st.global.v4.b32` 16. " + CP in f.explanation
    assert f.explanation.endswith(
        "`num_warps` is 8 in `dot3w8_86` and 4 in `dot3_86`: per-thread counts scale with the work per thread "
        "(twice the threads, half the instructions each: the same work per CTA), so they do not compare directly."
    )
    (m,) = rule_ptx_mma(make_context(w8, w4))
    assert (m.id, m.severity, m.stage, m.predicts) == ("ptx.mma", "minor", "ptx", None)
    assert m.title == m.explanation == "Matrix instructions: `mma.sync` 8 vs 16."
    assert all(e.stage == "ptx" and e.line == facts[e.variant].first_lines["ptx"]["mma.sync"].line for e in m.evidence)
    assert [(e.variant, e.text.split()[0], e.text.split("(")[-1]) for e in m.evidence] == [
        ("dot3w8_86", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "8× mma.sync)"),
        ("dot3_86", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "16× mma.sync)"),
    ]
    # an opcode a record does not list counts as 0 (a bundle whose counts omit wgmma), in either position
    ptx = {k: v for k, v in w4.counts["ptx"].items() if k != "wgmma"}
    no_key = dataclasses.replace(w4, name="no_key", counts={**w4.counts, "ptx": ptx})
    assert [x.title for x in rule_ptx_mma(make_context(no_key, w8))] == ["Matrix instructions: `mma.sync` 16 vs 8."]
    assert [x.title for x in rule_ptx_mma(make_context(w8, no_key))] == ["Matrix instructions: `mma.sync` 8 vs 16."]
    # counts that omit mma.sync while the first lines list it: the table and the quoted line both say 0
    lost = dataclasses.replace(w4, name="lost", counts={**w4.counts, "ptx": {**ptx}})
    del lost.counts["ptx"]["mma.sync"]
    assert "mma.sync" in lost.first_lines["ptx"]
    for a, b in ((lost, w8), (w8, lost)):
        (x,) = rule_ptx_mma(make_context(a, b))
        n = {"lost": 0, "dot3w8_86": 8}
        assert x.title == f"Matrix instructions: `mma.sync` {n[a.name]} vs {n[b.name]}."
        assert [(e.variant, e.text.rsplit("(", 1)[1]) for e in x.evidence] == [
            (v.name, f"{n[v.name]}× mma.sync)") for v in (a, b)
        ]
    # a variant without PTX counts at all
    no_ptx = dataclasses.replace(w4, name="no_ptx", counts={}, first_lines={})
    assert [x.title for x in rule_ptx_mma(make_context(no_ptx, w8))] == ["Matrix instructions: `mma.sync` 0 vs 8."]
    assert [x.title for x in rule_ptx_mma(make_context(w8, no_ptx))] == ["Matrix instructions: `mma.sync` 8 vs 0."]
    (r,) = rule_ptx_mma(make_context(w4, w8))
    assert r.title == "Matrix instructions: `mma.sync` 16 vs 8." and [e.variant for e in r.evidence] == [
        "dot3_86",
        "dot3w8_86",
    ]


def test_hopper_vs_ampere_mma(facts: dict[str, VariantFacts]) -> None:
    h, a = facts["dot3_90"], facts["dot3_86"]
    (m,) = rule_ptx_mma(make_context(h, a))
    assert m.title == "Matrix instructions: `mma.sync` 0 vs 16; `wgmma` 2 vs 0."
    # only the side that has an instruction quotes it
    assert [(e.variant, e.text.split()[0].split(".")[0]) for e in m.evidence] == [
        ("dot3_86", "mma"),
        ("dot3_90", "wgmma"),
    ]
    (f,) = rule_ptx_memory(make_context(h, a))
    # same warps, same asynchronous copies, same global accesses: no prediction
    assert (f.severity, f.predicts) == ("major", None)
    assert "Global memory instructions in total: 16 in `dot3_90` vs 16 in `dot3_86` (1×)." in f.explanation
    keys = [k.rsplit(" ", 1)[0] for k in f.title.split(": ", 1)[1].split(", ")]
    assert len(keys) == 4
    # no global data movement differs, only shared-memory kinds (the Hopper dot reads its operands from shared memory
    # differently) and, with Triton 3.9, the cp.async wait bookkeeping: the shared-memory kinds come first
    for x, y in ((h, a), (a, h)):
        (g,) = rule_ptx_memory(make_context(x, y))
        kinds = table_kinds(g.explanation)
        sync = [k for k in kinds if any(w in k for w in BOOKKEEPING)]
        assert len(kinds) > len(sync) + 1 and kinds == kinds_in_order(kinds), kinds
        assert not any(k.startswith(("ld.global", "st.global", "cp.async ")) for k in kinds)
        title = [k.rsplit(" ", 1)[0] for k in g.title.split(": ", 1)[1].split(", ")]
        assert title == kinds[:4] and not set(title) & set(sync)


def test_predictions(facts: dict[str, VariantFacts]) -> None:
    base = facts["dot3_86"]

    def with_ptx(name: str, **counts: int) -> VariantFacts:
        ptx = dict(base.counts["ptx"])
        ptx.update({k.replace("_", ".").replace(".16B", " 16B"): v for k, v in counts.items()})
        return dataclasses.replace(base, name=name, counts={**base.counts, "ptx": ptx})

    # fewer asynchronous copies: loads wait in the loop (either order)
    few = with_ptx("few", cp_async_16B=6)
    for a, b in ((few, base), (base, few)):
        (f,) = rule_ptx_memory(make_context(a, b))
        assert f.predicts == "few"
    # TMA on one side only: copies per CTA vs per thread, no prediction
    tma = with_ptx("tma", cp_async_bulk_tensor=2, cp_async_16B=0)
    for a, b in ((tma, base), (base, tma)):
        assert rule_ptx_memory(make_context(a, b))[0].predicts is None
    # TMA on both sides: fewer bulk tensor copies predict the slower side
    tma4 = with_ptx("tma4", cp_async_bulk_tensor=4)
    tma2 = with_ptx("tma2", cp_async_bulk_tensor=2)
    for a, b in ((tma4, tma2), (tma2, tma4)):
        assert rule_ptx_memory(make_context(a, b))[0].predicts == "tma2"
    # synchronous global accesses: a difference above 20 % predicts the side with more
    st = base.counts["ptx"]["st.global.v4.b32"]
    assert st == 4
    more = with_ptx("more", ld_global_v4_b32=2)  # 6 vs 4: +50 %
    assert [f.predicts for f in rule_ptx_memory(make_context(base, more))] == ["more"]
    assert [f.predicts for f in rule_ptx_memory(make_context(more, base))] == ["more"]
    five = with_ptx("five", st_global_v4_b32=5)  # 5 vs 4: 20 % of the larger count, not above
    assert [f.predicts for f in rule_ptx_memory(make_context(five, base))] == [None]
    assert [f.predicts for f in rule_ptx_memory(make_context(base, five))] == [None]
    one = dataclasses.replace(base, name="one", counts={"ptx": {"st.global.b32": 1}})
    none = dataclasses.replace(base, name="none", counts={"ptx": {"st.global.b32": 0}})
    (f,) = rule_ptx_memory(make_context(one, none))
    assert f.predicts == "one" and "in total: 1 in `one` vs 0 in `none`." in f.explanation
    # shared-memory and ldmatrix keys sort after global ones; the title names the first four, the table ten,
    # the evidence eight
    wide = with_ptx("wide", **{f"ld_shared_b{w}": 1 for w in (8, 16, 32, 64)}, ld_global_b8=3, st_global_b16=1)
    (g,) = rule_ptx_memory(make_context(wide, base))
    assert (
        g.title
        == "PTX memory ops (`wide`/`dot3_86`): ld.global.b8 3/0, st.global.b16 1/0, ld.shared.b16 1/0, ld.shared.b32 1/0"
    )
    assert g.explanation.count(" vs 0;") + g.explanation.count(" vs 0.") == 6


def test_width_note() -> None:
    assert _width_note(["ld.global.b8", "ld.global.v2.b16", "cp.async 4B", "st.shared.b32"]) == (
        "`ld.global.b8` moves 1 byte per thread and instruction, `ld.global.v2.b16` 4, `cp.async 4B` 4. " + CP
    )
    assert _width_note(["st.global.v4.b32"]) == "`st.global.v4.b32` moves 16 bytes per thread and instruction."
    assert _width_note(["cp.async.wait_group"]) == CP
    assert _width_note(["ld.shared.v2.b32", "ldmatrix"]) == ""
    assert (
        _width_note(["ld.global.nc.L1::evict_last.b64"])
        == "`ld.global.nc.L1::evict_last.b64` moves 8 bytes per thread and instruction."
    )


def test_missing_counts_and_caps(facts: dict[str, VariantFacts]) -> None:
    d, w8 = facts["dns"], facts["dot3w8_86"]
    # an opcode a record does not list counts as 0, in either position: no finding for 0 vs absent
    ptx = {k: v for k, v in d.counts["ptx"].items() if k != "ld.global.b16"}
    assert d.counts["ptx"]["ld.global.b16"] == 0
    no_key = dataclasses.replace(d, name="no_key", counts={**d.counts, "ptx": ptx})
    assert rule_ptx_memory(make_context(no_key, d)) == [] and rule_ptx_memory(make_context(d, no_key)) == []
    # counts that omit a kind its first lines list (an inconsistent record): the kind counts as 0 and its line is not
    # quoted as evidence of a count it does not have; the other side's line is, with its count
    ptx = {k: v for k, v in d.counts["ptx"].items() if k != "ld.global.b32"}
    assert "ld.global.b32" in d.first_lines["ptx"]
    lost = dataclasses.replace(d, name="lost", counts={**d.counts, "ptx": ptx})
    for a, b in ((lost, d), (d, lost)):
        (f,) = rule_ptx_memory(make_context(a, b))
        assert f.title == (
            "PTX memory ops (`lost`/`dns`): ld.global.b32 0/16"
            if a is lost
            else "PTX memory ops (`dns`/`lost`): ld.global.b32 16/0"
        )
        assert [(e.variant, e.text.rsplit("(", 1)[1]) for e in f.evidence] == [("dns", "16× ld.global.b32)")]
    # a variant without PTX counts or first lines: the other side's instructions, with its evidence only
    no_ptx = dataclasses.replace(d, name="no_ptx", counts={}, first_lines={})
    for a, b in ((no_ptx, d), (d, no_ptx)):
        (f,) = rule_ptx_memory(make_context(a, b))
        assert {e.variant for e in f.evidence} == {"dns"} and f.predicts == "dns"
        x, y = ("0", "16") if a is no_ptx else ("16", "0")
        assert f"ld.global.b32 {x}/{y}" in f.title and f"`ld.global.b32` {x} vs {y};" in f.explanation
        assert all(e.stage == "ptx" and e.line for e in f.evidence)
    # at most eight opcodes quoted as evidence, ten in the table, four in the title
    base = facts["dot3_86"]
    ref = base.first_lines["ptx"]["ldmatrix"]
    extra = {f"ld.global.v{n}.b{w}": 1 for n in (2, 4) for w in (8, 16, 64, 128, 256, 512)}
    many = dataclasses.replace(
        base,
        name="many",
        counts={**base.counts, "ptx": {**base.counts["ptx"], **extra}},
        first_lines={**base.first_lines, "ptx": {**base.first_lines["ptx"], **dict.fromkeys(extra, ref)}},
    )
    (g,) = rule_ptx_memory(make_context(many, base))
    assert len(g.evidence) == 8 and g.explanation.count(" vs 0") == 10
    assert len(g.title.split(": ", 1)[1].split(", ")) == 4
    assert g.explanation.count("ld.global.v") == 20  # ten in the table, the same ten in the width note
    assert rule_ptx_memory(make_context(w8, w8)) == []


def test_data_movement_is_listed_before_cp_async_bookkeeping(compile_suite) -> None:  # type: ignore[no-untyped-def]
    """The seed matmul on sm86: the unannotated side loads B with 16-bit `ld.global` and fewer `cp.async` copies.
    The title names those kinds first; `cp.async.commit_group`/`wait_group` (bookkeeping that moves no data) come
    after every data-moving kind, in both orders (they used to take two of the title's four slots ahead of
    `ld.global.b16`)."""
    b = compile_suite("matmul", ["annotated", "unannotated"], "sm86")
    fa, fu = (extract_facts(b.variants[n]) for n in ("annotated", "unannotated"))
    fa.name, fu.name = "annotated", "unannotated"
    for x, y in ((fa, fu), (fu, fa)):
        (f,) = rule_ptx_memory(make_context(x, y))
        kinds = [part.rsplit(" ", 1)[0] for part in f.title.split(": ", 1)[1].split(", ")]
        sync = [i for i, k in enumerate(kinds) if "commit_group" in k or "wait_group" in k]
        moving = [i for i, k in enumerate(kinds) if k.startswith(("ld.global", "st.global", "cp.async "))]
        assert any(k.startswith("ld.global") for k in kinds), f.title
        assert moving and (not sync or max(moving) < min(sync)), f.title
        # the table: global kinds, then shared-memory kinds (the operands' `ldmatrix`/`st.shared` traffic
        # differs too), then the bookkeeping
        table = table_kinds(f.explanation)
        assert table == kinds_in_order(table) and table[:4] == kinds, table
        shared = [k for k in table if k.startswith(("ld.shared", "st.shared", "ldmatrix"))]
        assert shared and any(w in table[-1] for w in BOOKKEEPING), table


# tests/test_rule_loops.py's variant list of the same suite: one compile per session
LOOP_VARIANTS = ["base", "u2", "u4", "st1", "st3u2", "reload", "inner"]


def test_unrolled_loops_name_no_slower_side(compile_suite) -> None:  # type: ignore[no-untyped-def]
    """``tests/suites/rule_loops.py``: ``u2``/``u4`` unroll the pipelined row loop 2×/4× (``loop_unroll_factor``),
    so each copy of the body has its own ``cp.async`` and PTX memory instructions for the same rows. Different
    factors: the finding names each side's factor and predicts no side, in both orders (without the note the side with
    fewer async copies would be predicted slower). The same factor (``st3u2``: 2× too, 3 stages): no note, and the
    async copies compare as before."""
    b = compile_suite(str(SUITES / "rule_loops.py"), LOOP_VARIANTS, "sm80")
    fs = {n: extract_facts(b.variants[n]) for n in ("base", "u2", "u4", "st3u2")}
    for n, f in fs.items():
        f.name = n
    say = {"base": "not", "u2": "2×", "u4": "4×"}

    def cpa(f: VariantFacts) -> int:
        return sum(v for k, v in f.counts["ptx"].items() if k.startswith("cp.async ") or k == "cp.async.bulk.tensor")

    for x, y in (("u4", "base"), ("u2", "u4")):
        assert cpa(fs[x]) != cpa(fs[y])  # the async copies differ: what would otherwise predict
        for a, c in ((x, y), (y, x)):
            (f,) = rule_ptx_memory(make_context(fs[a], fs[c]))
            assert (f.severity, f.predicts) == ("major", None)
            assert f.explanation.endswith(
                f" The loops are unrolled {say[a]} in `{a}` and {say[c]} in `{c}` (`loop_unroll_factor`): each copy of "
                "the body has its own loads, so their async copies, shared-memory rings and instructions multiply by "
                "the factor for the same elements and the same pipeline depth; the counts name no slower side."
            )
    u2, st = fs["u2"], fs["st3u2"]
    for a, c in ((u2, st), (st, u2)):
        (f,) = rule_ptx_memory(make_context(a, c))
        assert "loop_unroll_factor" not in f.explanation and "unrolled" not in f.explanation
        if cpa(u2) != cpa(st):
            assert f.predicts == ("u2" if cpa(u2) < cpa(st) else "st3u2")


# ------------------------------------------------- narrow copies and atomics on PTX text the kernels above lack


_CP = {
    4: "\tcp.async.ca.shared.global [ %r1 + 0 ], [ %rd1 + 0 ], 0x4, %r2;",
    8: "\tcp.async.ca.shared.global [ %r1 + 0 ], [ %rd1 + 0 ], 0x8, %r2;",
    16: "\tcp.async.cg.shared.global [ %r1 + 0 ], [ %rd1 + 0 ], 0x10, %r2;",
}


def ptx(*parts: tuple[str, int]) -> dict[str, dict[str, int]]:
    """``counts`` of a PTX text made of ``(line, times)`` parts, counted as the bundle's PTX is (``count_ops``)."""
    from irdiff.diagnose.counts import count_ops

    return {"ptx": count_ops("ptx", "\n".join(line for line, n in parts for _ in range(n)))}


def test_narrow_copy_note_names_every_tile(compile_suite) -> None:  # type: ignore[no-untyped-def]
    """Transposing copies as TTGIR gives them (``tests/suites/truth_kmm.py``'s ``tf32`` on sm90, the bundle of tests/test_truth_findings.py: B stored N-major,
    copied one 4-byte ``cp.async`` per element into K-major shared memory), placed in hand-built facts: each distinct
    tile is named once with its operand (A/B of the first dot's M×N×K, none for another shape or without a dot) and
    Python name; the wgmma sentence only for a 32-bit ``wgmma`` dot; evidence the TTGIR line cut at 240 characters and
    the Python line; only the side with more narrow copies is described, also against a side without PTX counts."""
    from irdiff.diagnose.facts import Ref
    from irdiff.diagnose.mechfacts import CopyFact, DotFact, MechFacts, extract_mech_facts

    b = compile_suite(
        str(SUITES / "truth_kmm.py") + "::truth_kmm", ["ieee", "tf32", "tf32x3", "f16", "tf32_tn"], "sm90"
    )
    real = extract_mech_facts(b.compiled_variant("tf32"))
    (cb,) = {(c.shape[0], c.shape[1]): c for c in real.transposing_copies}.values()
    (dot,) = real.dots
    assert dot.lowering == "wgmma" and dot.a_type == "f32" and len(dot.shape) == 3
    m, n, k = dot.shape
    assert cb.shape == [k, n] and cb.python is not None
    long = dataclasses.replace(cb.ref, text=cb.ref.text + " " + "x" * 250)
    ca = CopyFact("", [m, k], "f32", 0, 1, cb.shared, Ref("ttgir", cb.ref.line + 1, "%23 = ttg.async_copy"), None)
    cz = dataclasses.replace(cb, name="z", shape=[32, 32], ref=long, python=None)
    copies = [cb, dataclasses.replace(cb, ref=long), ca, cz]  # the second is the first tile again

    def facts(name: str, counts: dict[str, dict[str, int]], dots: list[DotFact], cps: list[CopyFact] = copies):  # type: ignore[no-untyped-def]
        return make_facts(name, counts=counts, mech=MechFacts(dots=dots, transposing_copies=cps))

    def sentence(v: str, what: str, c: CopyFact, total: int, wgmma: bool) -> str:
        tile = "x".join(map(str, c.shape)) + "xf32"
        return (
            f" In `{v}` the {what}tile" + (f" `{c.name}`" if c.name else "") + f" ({tile}) is copied into a shared "
            f"layout contiguous along dimension {c.dst_dim} (`{c.shared}`) while its global addresses run along "
            f"dimension {c.src_dim}: the elements a thread reads contiguously land at separate shared addresses, so "
            f"each `cp.async` moves one element ({total} narrow copies in all)"
            + (
                "; `wgmma` reads 32-bit (tf32) operands from shared memory only K-major (PTX ISA: the transpose flags "
                "are for 16-bit types), so a tile stored the other way round in global memory is transposed by these "
                "copies."
                if wgmma
                else "."
            )
        )

    wide = ptx((_CP[4], 32), ("\tld.global.b32 %r1, [ %rd1 + 0 ];", 4))
    fma = dataclasses.replace(dot, lowering="fma")
    other = facts("o", ptx((_CP[16], 8), ("\tld.global.b32 %r1, [ %rd1 + 0 ];", 4)), [dot], [])
    for dots, ops, wg in (
        ([dot], ("operand B ", "operand A ", ""), True),
        ([fma], ("operand B ", "operand A ", ""), False),
        ([], ("", "", ""), False),
    ):
        t = facts("t", wide, dots)
        note = "".join(sentence("t", w, c, 32, wg) for w, c in zip(ops, (cb, ca, cz), strict=True))
        for ctx in (make_context(t, other), make_context(other, t)):
            (f,) = rule_ptx_memory(ctx)
            assert f.explanation.endswith(note), f.explanation
            assert [(e.variant, e.stage, e.line, e.text) for e in f.evidence if e.stage != "ptx"] == [
                ("t", "ttgir", cb.ref.line, cb.ref.text[:240]),
                ("t", "python", cb.python.line, cb.python.text),
                ("t", "ttgir", ca.ref.line, ca.ref.text),
                ("t", "ttgir", long.line, long.text[:240]),
            ]
    # against a variant without PTX counts (a stage not captured), even with a single narrow copy
    one = facts("one", ptx((_CP[4], 1)), [dot], [cb])
    bare = make_facts("bare", counts={})
    for ctx in (make_context(one, bare), make_context(bare, one)):
        (f,) = rule_ptx_memory(ctx)
        assert f.explanation.endswith(sentence("one", "operand B ", cb, 1, True))
    # the same narrow counts (another kind differs): no note; both with narrow copies: only the side with more
    same = facts("same", ptx((_CP[4], 32)), [dot], [cb])
    fewer = facts("fewer", ptx((_CP[4], 16)), [dot], [cb])
    for x, y in ((facts("t", wide, [dot]), same), (facts("t", wide, [dot]), fewer)):
        for ctx in (make_context(x, y), make_context(y, x)):
            (f,) = rule_ptx_memory(ctx)
            assert f.explanation.count("is copied into a shared layout") == (0 if y is same else 3)
            assert "In `fewer`" not in f.explanation and "In `same`" not in f.explanation
    # records that do not list a narrow kind count it as 0 (an opcode a record does not list counts as 0)
    lacks8 = facts("lacks8", {"ptx": {"cp.async 4B": 10}}, [dot], [cb])
    has8 = facts("has8", {"ptx": {"cp.async 4B": 0, "cp.async 8B": 2}}, [dot], [])
    for ctx in (make_context(lacks8, has8), make_context(has8, lacks8)):
        (f,) = rule_ptx_memory(ctx)
        assert "(10 narrow copies in all)" in f.explanation
    lacks4 = facts("lacks4", {"ptx": {"cp.async 8B": 5}}, [dot], [cb])
    mixed = facts("mixed", {"ptx": {"cp.async 4B": 1, "cp.async 8B": 4}}, [dot], [])
    for ctx in (make_context(lacks4, mixed), make_context(mixed, lacks4)):
        (f,) = rule_ptx_memory(ctx)
        assert "narrow copies in all" not in f.explanation


def test_memory_op_prediction_counts_global_atomics_only() -> None:
    """PTX text counted as the bundle's is: global ``red``/``atom`` count as memory operations like the stores they
    replace (2 ``red.global`` + 2 loads vs 2 ``st.global`` + 2 loads: no slower side); shared-memory atomics
    (``tl.histogram``'s ``atom.shared``, ``red.shared``) do not. A side without PTX counts has none: one store
    against it predicts the storing side."""
    ld = ("\tld.global.v2.b32 { %r1, %r2 }, [ %rd1 + 0 ];", 2)
    red = make_facts("red", counts=ptx(ld, ("\tred.global.gpu.relaxed.add.f32 [ %rd1 + 0 ], %r1;", 2)))
    st = make_facts("st", counts=ptx(ld, ("\tst.global.b32 [ %rd1 + 0 ], { %r1 };", 2)))
    hist = make_facts(
        "hist",
        counts=ptx(
            ("\tld.global.b32 %r1, [ %rd1 + 0 ];", 10),
            ("\tld.shared.b32 %r1, [%r2];", 2),
            ("\tatom.relaxed.sys.shared.add.u32 %r5, [%r4], %r6;", 4),
            ("\tred.shared.add.u32 [%r4], %r6;", 4),
        ),
    )
    plain = make_facts("plain", counts=ptx(("\tld.global.b32 %r1, [ %rd1 + 0 ];", 10)))
    for x, y in ((red, st), (hist, plain)):
        for ctx in (make_context(x, y), make_context(y, x)):
            (f,) = rule_ptx_memory(ctx)
            assert f.predicts is None, (x.name, y.name)
    one = make_facts("one", counts=ptx(("\tst.global.b32 [ %rd1 + 0 ], { %r1 };", 1)))
    bare = make_facts("bare", counts={})
    for ctx in (make_context(one, bare), make_context(bare, one)):
        (f,) = rule_ptx_memory(ctx)
        assert f.predicts == "one"


def test_equal_global_counts_below_zero_predict_nothing() -> None:
    """Counts written out by hand (not counted by ``count_ops``, which adds every atomic to ``atom``): one shared-memory
    atomic listed without its ``atom`` total, so each side's global loads, stores and atomics net to -1; the sides
    differ only in shared loads (1 vs 2). Equal global counts name no slower side, in both orders, whatever their
    sign (the threshold's floor of 1 keeps a zero difference from exceeding it)."""
    one = make_facts("one", counts={"ptx": {"atom.shared.add.u32": 1, "ld.shared.b32": 1}})
    two = make_facts("two", counts={"ptx": {"atom.shared.add.u32": 1, "ld.shared.b32": 2}})
    for ctx in (make_context(one, two), make_context(two, one)):
        (f,) = rule_ptx_memory(ctx)
        n = {"one": 1, "two": 2}
        assert f.title == f"PTX memory ops (`{ctx.a}`/`{ctx.b}`): ld.shared.b32 {n[ctx.a]}/{n[ctx.b]}"
        assert f.predicts is None
