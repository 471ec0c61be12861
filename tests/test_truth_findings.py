"""Findings state only what *these* variants show (a new user's ieee-vs-tf32 and num_warps comparisons read false
statements): the register story names the precision and lowering the two dots have, a chain that reaches no root is
never presented as a root, a buffer ring one slot deeper for an in-place ``wgmma`` is linked to the lowering, a cause
link of a count rests on a difference, narrow ``cp.async`` copies are named with the tile they move, the occupancy
link follows the limiter, and a SASS instruction is counted once.

Real compiles (shared compile cache) of ``tests/suites/truth_kmm.py``: the K-loop product ``kmm`` (fp32 operands,
``input_precision`` ieee / tf32 / tf32x3, or converted to fp16 / bf16; A and B row-major ``nn`` or column-major
``tn``) on sm90 (FMA vs ``wgmma``) and sm80 (FMA vs ``mma.sync``), and ``rowmax`` with ``num_warps`` 2, 4, 8. Every
pair is diagnosed in both orders.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from irdiff.bundle import Bundle
from irdiff.diagnose import Diagnosis, Finding, diagnose
from irdiff.diagnose.facts import Ref, extract_facts, occupancy
from irdiff.diagnose.mechfacts import DotFact
from irdiff.diagnose.roots import _dot_notes
from irdiff.diagnose.rules.resources import link_occupancy
from irdiff.diagnose.rules.sass import _count_rows, rule_sass_instructions
from irdiff.diagnose.testing import make_context, make_facts
from irdiff.render.order import present_findings

KMM = str(Path(__file__).parent / "suites" / "truth_kmm.py")


@pytest.fixture(scope="module")
def k90(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(KMM + "::truth_kmm", ["ieee", "tf32", "tf32x3", "f16", "tf32_tn"], "sm90")


@pytest.fixture(scope="module")
def k80(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(KMM + "::truth_kmm", ["ieee", "tf32", "f16", "bf16"], "sm80")


@pytest.fixture(scope="module")
def rows90(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(KMM + "::truth_rowmax", ["w2", "w4", "w8"], "sm90")


def get(d: Diagnosis, fid: str) -> Finding:
    (f,) = [f for f in d.findings if f.id == fid]
    return f


def both(b: Bundle, x: str, y: str) -> list[Diagnosis]:
    return [diagnose(b, x, y), diagnose(b, y, x)]


# ------------------------------------------------------------------------------------------------ 1: registers


def test_register_story_names_the_precisions_these_variants_have(k90: Bundle) -> None:
    for d in both(k90, "ieee", "tf32"):
        reg = get(d, "resources.registers")
        assert reg.predicts == "ieee"
        # neither variant uses tf32x3: no statement about it; the FMA variant has the registers, and is named
        assert "tf32x3" not in reg.explanation
        assert (
            "`ieee` lowers the dot to FMA: each thread keeps the operand slices of all its outputs" in reg.explanation
        )
        assert "mma.lowering" in reg.causes
    for d in both(k90, "tf32x3", "tf32"):
        reg = get(d, "resources.registers")
        assert reg.predicts == "tf32x3"
        assert "`tf32x3` uses input precision `tf32x3` (`tf32`: `tf32`): each fp32 operand is split" in reg.explanation
        assert "FMA" not in reg.explanation.split("Evidence for the difference:")[1]


def _dot(precision: str, lowering: str, **kw: object) -> DotFact:
    base: dict[str, object] = dict(
        name="acc", precision=precision, a_type="f32", b_type="f32", acc_type="f32", shape=[64, 64, 32], rank=2,
        max_imprecise_acc=None, lowering=lowering, instr_shape=[], warps=4, operands=["shared", "shared"], upcast=[],
        acc_chained=True, ttir=Ref("ttir", 1, "tt.dot"), ttgir=None, python=None,
    )  # fmt: skip
    base.update(kw)
    return DotFact(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize("order", [0, 1])
def test_dot_notes_only_where_the_dots_show_a_cost_in_the_variant_with_more(order: int) -> None:
    a, b = ("x", "y") if order == 0 else ("y", "x")

    def notes(fid: str, dx: DotFact, dy: DotFact, more: str) -> str | None:
        pair = ([dx], [dy]) if a == "x" else ([dy], [dx])
        return _dot_notes(fid, a, b, more, pair)

    fma, wg, mma = _dot("ieee", "fma"), _dot("tf32", "wgmma"), _dot("tf32", "mma_v2")
    # FMA in the variant with more registers: named; FMA in the one with fewer: no claim
    assert (
        notes("mma.lowering", fma, wg, "x")
        == "`x` lowers the dot to FMA: each thread keeps the operand slices of all its outputs"
    )
    assert notes("mma.lowering", fma, wg, "y") is None
    # two MMA kinds: what each variant has, no FMA words
    lo = notes("mma.lowering", mma, wg, "x")
    assert lo is not None and "FMA" not in lo and "`mma_v2` in `x`" in lo and "`wgmma` in `y`" in lo
    # input precision: tf32x3 named only in the variant that uses it and has more registers
    x3 = _dot("tf32x3", "wgmma")
    assert notes("precision.dot-input", x3, wg, "x") == (
        "`x` uses input precision `tf32x3` (`y`: `tf32`): each fp32 operand is split into a high and a low part, both "
        "kept in registers for several MMAs"
    )
    assert notes("precision.dot-input", x3, wg, "y") is None
    assert notes("precision.dot-input", wg, fma, "x") is None  # tf32 with more registers than ieee: no mechanism
    assert "`ieee`" in (notes("precision.dot-input", fma, wg, "x") or "")
    # accumulation: each kind only where it is the difference
    sep = _dot("tf32", "wgmma", acc_chained=False)
    assert "acc += tl.dot(a, b)" in (notes("precision.dot-accumulate", sep, wg, "x") or "")
    assert notes("precision.dot-accumulate", sep, wg, "y") is None
    promo = _dot("", "wgmma", max_imprecise_acc=32)
    assert "`max_num_imprecise_acc`" in (notes("precision.dot-accumulate", promo, _dot("", "wgmma"), "x") or "")
    assert notes("precision.dot-accumulate", promo, _dot("", "wgmma"), "y") is None
    assert (
        notes("precision.dot-input", x3, wg, "x") is not None
        and _dot_notes("precision.dot-input", a, b, "x", ([], [])) is None
    )


# ------------------------------------------------------------------------------------------------ 2: roots, buffers


def test_ring_one_slot_deeper_for_the_in_place_wgmma_is_the_lowerings(k90: Bundle) -> None:
    nstages = int(k90.variants["tf32"].options["num_stages"])
    for d in both(k90, "ieee", "tf32"):
        buf = get(d, "pipeline.buffers")
        assert f"`tf32` {nstages}×64x16xf32" in buf.title and f"`ieee` {nstages - 1}×64x16xf32" in buf.title
        assert "Each ring of `tf32` has one slot more: its `tl.dot` is an asynchronous `wgmma`" in buf.explanation
        assert "`ieee`'s dot (fma) reads an operand into registers first" in buf.explanation
        assert buf.causes[:1] == ["mma.lowering"]
        assert "pipeline.buffers" not in d.unexplained
    # another kernel of the kind: fp16 operands converted in registers feed the wgmma from registers (A) and from a
    # separate single buffer (B): both rings as deep as ieee's, so not one slot deeper than ieee
    for d in both(k90, "f16", "tf32"):
        buf = get(d, "pipeline.buffers")
        assert "Each ring of `tf32` has one slot more" in buf.explanation
        assert "mma.lowering" not in buf.causes  # both are wgmma: no lowering difference to link to
    for d in both(k90, "ieee", "f16"):
        assert not any(f.id == "pipeline.buffers" and "one slot more" in f.explanation for f in d.findings)


def test_a_finding_whose_chain_reaches_no_root_is_never_presented_as_a_root() -> None:
    root = Finding("spec.constexpr-changed", "major", "t", "e", [])
    orphan = Finding("pipeline.buffers", "major", "t", "e", [])  # causes another finding, reaches no root
    effect = Finding("resources.shared", "minor", "t", "e", [], causes=["pipeline.buffers"])
    other = Finding("ptx.mma", "minor", "t", "e", [], causes=["spec.constexpr-changed"])
    for findings in ([root, orphan, effect, other], [orphan, root, other, effect]):
        d = Diagnosis("a", "b", findings, False, {}, unexplained=["pipeline.buffers", "resources.shared"])
        roles = {p.finding.id: p.role for p in present_findings(d)}
        assert roles["pipeline.buffers"] == "unexplained" and roles["resources.shared"] == "unexplained"
        assert roles["ptx.mma"] == "effect"
        assert roles["spec.constexpr-changed"] == "root"
    # without the diagnosis' list, a finding that causes another is still a root (unchanged)
    d = Diagnosis("a", "b", [root, orphan, effect], False, {})
    assert {p.finding.id: p.role for p in present_findings(d)}["pipeline.buffers"] == "root"


# ------------------------------------------------------------------------------------------------ 3: memory ops


def test_a_count_is_not_caused_by_a_conversion_both_variants_have(k90: Bundle) -> None:
    for d in both(k90, "ieee", "tf32"):
        cv = get(d, "layout.convert-shared")
        mem = get(d, "ptx.memory-ops")
        assert (
            cv.instructions == 0
            and "`tf32` has 1 such conversion(s)" in cv.explanation
            or ("`ieee` has 1 such conversion(s)" in cv.explanation)
        )
        assert "layout.convert-shared" not in mem.causes and "mma.lowering" in mem.causes


@pytest.mark.parametrize(("tf", "tile", "op", "name", "src", "dst"), [
    ("tf32", "16x64xf32", "B", "y", 1, 0),  # B row-major (N contiguous) into K-major shared memory
    ("tf32_tn", "64x16xf32", "A", "x", 0, 1),  # A column-major (M contiguous) into K-major shared memory
])  # fmt: skip
def test_narrow_cp_async_copies_are_named_with_their_tile(
    k90: Bundle, tf: str, tile: str, op: str, name: str, src: int, dst: int
) -> None:
    for d in both(k90, "ieee", tf):
        mem = get(d, "ptx.memory-ops")
        ca = d.facts[tf]["counts"]["ptx"]
        narrow = ca.get("cp.async 4B", 0)
        assert narrow > 0 and d.facts["ieee"]["counts"]["ptx"].get("cp.async 4B", 0) == 0
        assert (
            f"In `{tf}` the operand {op} tile `{name}` ({tile}) is copied into a shared layout contiguous along "
            f"dimension {dst}"
        ) in mem.explanation
        assert f"while its global addresses run along dimension {src}" in mem.explanation
        assert f"({narrow} narrow copies in all); `wgmma` reads 32-bit (tf32) operands" in mem.explanation
        assert "operand A tile" not in mem.explanation if op == "B" else "operand B tile" not in mem.explanation
        assert any(
            e.variant == tf and e.stage == "ttgir" and "async_copy_global_to_local" in e.text for e in mem.evidence
        )


# ------------------------------------------------------------------------------------------------ 4: occupancy


def test_occupancy_link_follows_the_limiter(k90: Bundle, rows90: Bundle) -> None:
    # ieee: more registers, fewer warps, limited by registers; tf32: more shared memory, which limits tf32 only
    for d in both(k90, "ieee", "tf32"):
        occ = get(d, "resources.occupancy")
        lim = {v: d.facts[v]["occupancy"] for v in ("ieee", "tf32")}
        assert lim["ieee"]["limits"]["registers"] == lim["ieee"]["ctas_per_sm"]
        assert lim["tf32"]["limits"]["shared memory"] == lim["tf32"]["ctas_per_sm"]
        assert d.facts["tf32"]["resources"]["shared_bytes"] > d.facts["ieee"]["resources"]["shared_bytes"]
        assert occ.predicts == "ieee" and "resources.shared" in [f.id for f in d.findings]
        assert occ.causes == ["resources.registers"]
    # num_warps 4 vs 8 (options only): the same resident warps in CTAs of other sizes; the limit is per CTA
    seen = 0
    for x, y in (("w4", "w8"), ("w2", "w8")):
        for d in both(rows90, x, y):
            occ = next((f for f in d.findings if f.id == "resources.occupancy"), None)
            if occ is None:
                continue
            seen += 1
            assert "resources.shared" not in occ.causes and "options.changed" in occ.causes
            assert not re.search(r"limited by (.+) / \1\)", occ.title)  # the same limiters are said once
    assert seen >= 2


def occ_facts(name: str, registers: int, warps: int, smem: int) -> object:
    return make_facts(
        name,
        options={"num_warps": warps},
        resources={"registers": registers, "shared_bytes": smem},
        occupancy=occupancy(90, warps, registers, smem),
    )


def test_occupancy_causes_by_limiter_in_both_orders() -> None:
    from irdiff.diagnose.rules.resources import rule_occupancy

    # `fat` has more registers (limited by them), `big` more shared memory; `big` has fewer warps per SM
    fat, big = occ_facts("fat", 96, 4, 32 * 1024), occ_facts("big", 64, 4, 48 * 1024)
    for fa, fb in ((fat, big), (big, fat)):
        (occ,) = rule_occupancy(make_context(fa, fb))  # type: ignore[arg-type]
        reg = Finding("resources.registers", "major", "", "", [], predicts="fat")
        sh = Finding("resources.shared", "minor", "", "", [])
        occ.causes = ["resources.registers", "resources.shared"]
        link_occupancy([reg, sh, occ], fa, fb)  # type: ignore[arg-type]
        assert occ.causes == ["resources.shared"] and occ.predicts == "big"
    # registers limit the variant with fewer warps: registers, not shared memory
    hot, cool = occ_facts("hot", 128, 4, 8 * 1024), occ_facts("cool", 64, 4, 16 * 1024)
    for fa, fb in ((hot, cool), (cool, hot)):
        (occ,) = rule_occupancy(make_context(fa, fb))  # type: ignore[arg-type]
        reg = Finding("resources.registers", "major", "", "", [], predicts="hot")
        sh = Finding("resources.shared", "minor", "", "", [])
        opt = Finding("options.changed", "major", "", "", [])
        link_occupancy([reg, sh, opt, occ], fa, fb)  # type: ignore[arg-type]
        assert occ.causes == ["resources.registers"]
        assert occ.title.endswith("(limited by registers in both)")
    # ties are named, and the same limiters on both sides are said once
    w4, w8 = occ_facts("w4", 32, 4, 16), occ_facts("w8", 32, 8, 32)
    for fa, fb in ((w4, w8), (w8, w4)):
        (occ,) = rule_occupancy(make_context(fa, fb))  # type: ignore[arg-type]
        assert occ.title.endswith("(limited by registers and warps in both)")
        link_occupancy(
            [Finding("resources.shared", "minor", "", "", []), Finding("options.changed", "major", "", "", []), occ],
            fa,
            fb,
        )  # type: ignore[arg-type]
        assert occ.causes == ["options.changed"]


def test_occupancy_links_per_side_and_what_warps_explain() -> None:
    """``link_occupancy`` on sm90 occupancies (``facts.occupancy``: 64 K registers, 228 KB of shared memory and 1 KB
    reserved per CTA, 64 warps per SM), in both orders of the variants."""
    from irdiff.diagnose.rules.resources import rule_occupancy

    # the same occupancy (8 CTAs of 4 warps): no `resources.occupancy`, nothing to link and nothing fails
    same_a, same_b = occ_facts("a", 64, 4, 0), occ_facts("b", 60, 4, 0)
    for fa, fb in ((same_a, same_b), (same_b, same_a)):
        reg = Finding("resources.registers", "minor", "", "", [], causes=["x"])
        link_occupancy([], fa, fb)  # type: ignore[arg-type]
        link_occupancy([reg], fa, fb)  # type: ignore[arg-type]
        assert reg.causes == ["x"]
    # 12 resident warps on both sides: `regs` 3 CTAs of 4 warps (168 registers: limited by registers), `smem` 6 CTAs
    # of 2 warps (36 KB: limited by shared memory); each side links its own limiter, then the warps
    regs, smem = occ_facts("regs", 168, 4, 0), occ_facts("smem", 128, 2, 36 * 1024)
    for fa, fb in ((regs, smem), (smem, regs)):
        (occ,) = rule_occupancy(make_context(fa, fb))  # type: ignore[arg-type]
        assert occ.predicts is None
        reg = Finding("resources.registers", "major", "", "", [], predicts="regs")
        sh = Finding("resources.shared", "major", "", "", [], predicts="smem")
        opt = Finding("options.changed", "major", "", "", [])
        link_occupancy([reg, sh, opt, occ], fa, fb)  # type: ignore[arg-type]
        own = {"regs": "resources.registers", "smem": "resources.shared"}
        assert occ.causes == [own[fa.name], own[fb.name], "options.changed"]  # type: ignore[attr-defined]
    # `w4` (4 warps, 100 KB: 2 CTAs, 8 warps) is limited by shared memory but requests less of it than `w8` (8
    # warps, 110 KB: 2 CTAs, 16 warps): not `resources.shared`, only the warps
    w4, w8 = occ_facts("w4", 32, 4, 100 * 1024), occ_facts("w8", 32, 8, 110 * 1024)
    for fa, fb in ((w4, w8), (w8, w4)):
        (occ,) = rule_occupancy(make_context(fa, fb))  # type: ignore[arg-type]
        assert occ.predicts == "w4"
        sh = Finding("resources.shared", "minor", "", "", [], predicts="w8")
        opt = Finding("options.changed", "major", "", "", [])
        link_occupancy([sh, opt, occ], fa, fb)  # type: ignore[arg-type]
        assert occ.causes == ["options.changed"]
    # other warps and registers limit the variant with fewer warps (`r4`: 4 warps, 168 registers, 3 CTAs, 12 warps vs
    # `r8`: 8 warps, 64 registers, 4 CTAs, 32 warps): the registers and then the warps' finding, `options.changed`
    # before `config.changed` (one of them), `config.changed` when the options do not say it
    r4, r8 = occ_facts("r4", 168, 4, 0), occ_facts("r8", 64, 8, 0)
    for fa, fb in ((r4, r8), (r8, r4)):
        for extra, linked in (
            (["options.changed"], "options.changed"),
            (["config.changed"], "config.changed"),
            (["options.changed", "config.changed"], "options.changed"),
            (["config.changed", "options.changed"], "options.changed"),
        ):
            (occ,) = rule_occupancy(make_context(fa, fb))  # type: ignore[arg-type]
            assert occ.predicts == "r4"
            reg = Finding("resources.registers", "major", "", "", [], predicts="r4")
            more = [Finding(i, "major", "", "", []) for i in extra]
            link_occupancy([reg, *more, occ], fa, fb)  # type: ignore[arg-type]
            assert occ.causes == ["resources.registers", linked]


# ------------------------------------------------------------------------------------------------ 5: SASS counts


def test_sass_counts_each_instruction_once(k80: Bundle) -> None:
    for d in both(k80, "ieee", "tf32"):
        s = get(d, "sass.instructions")
        n = d.facts["tf32"]["counts"]["sass"]["HMMA.TF32"]
        assert n > 0 and n == d.facts["tf32"]["counts"]["sass"]["HMMA"]
        listed = s.explanation.split("differ: ")[1]
        assert "`HMMA.TF32`" in listed and "`HMMA`" not in listed and "HMMA (other)" not in listed
    # fp16 vs bf16: the same number of HMMA, of which bf16's are HMMA.BF16: each listed once, the rest as "other"
    cf = extract_facts(k80.variants["f16"]).counts["sass"]
    cb = extract_facts(k80.variants["bf16"]).counts["sass"]
    n = cb["HMMA.BF16"]
    assert n > 0 and cf["HMMA"] == cb["HMMA"] == n and cf.get("HMMA.BF16", 0) == 0
    assert [r for r in _count_rows(cf, cb) if r[0].startswith("HMMA")] == [
        ("HMMA", "HMMA (other)", n, 0),
        ("HMMA.BF16", "HMMA.BF16", 0, n),
    ]
    assert [r for r in _count_rows(cb, cf) if r[0].startswith("HMMA")] == [
        ("HMMA", "HMMA (other)", 0, n),
        ("HMMA.BF16", "HMMA.BF16", n, 0),
    ]


def test_sass_family_beside_members_is_split_in_both_orders() -> None:
    from diag_helpers import both_orders

    def sass(name: str, n: int, **ops: int) -> object:
        return make_facts(
            name, counts={"sass": {"instructions": n, **{k.replace("_", "."): v for k, v in ops.items()}}}
        )

    # a family that equals its member (the tf32 case): the member only
    (f,) = both_orders(rule_sass_instructions, sass("a", 400, HMMA=32, HMMA_TF32=32), sass("b", 200))  # type: ignore[arg-type]
    assert f.explanation.endswith("Memory/matrix ops that differ: `HMMA.TF32` 32 vs 0.")
    # a family with other members: the member and the rest, each instruction once
    (g,) = both_orders(rule_sass_instructions, sass("a", 400, HMMA=40, HMMA_TF32=32), sass("b", 200, HMMA=8))  # type: ignore[arg-type]
    assert g.explanation.endswith("Memory/matrix ops that differ: `HMMA.TF32` 32 vs 0.")
    (h,) = both_orders(rule_sass_instructions, sass("a", 400, HMMA=40, HMMA_BF16=8), sass("b", 200, HMMA=8))  # type: ignore[arg-type]
    assert h.explanation.endswith("Memory/matrix ops that differ: `HMMA (other)` 32 vs 8; `HMMA.BF16` 8 vs 0.")
    # LDS is not a family: `LDS` (32-bit) beside `LDS.128` are different instructions
    (k,) = both_orders(rule_sass_instructions, sass("a", 400, LDS=4, LDS_128=2), sass("b", 200))  # type: ignore[arg-type]
    assert k.explanation.endswith("`LDS` 4 vs 0; `LDS.128` 2 vs 0.")
