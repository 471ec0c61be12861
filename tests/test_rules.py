"""One test per diagnostic rule, each on a minimal kernel compiled by the real Triton (tests/suites/diag_*.py), plus
the pure parts (op counts, occupancy) on literal text and numbers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from diag_helpers import diagnose, get, ids, texts
from hypothesis import given, settings
from hypothesis import strategies as st

from irdiff.bundle import Bundle, BundleError
from irdiff.diagnose import KEY_COUNTS, RULE_IDS, Diagnosis, count_ops
from irdiff.diagnose.facts import occupancy, sass_calls, strip_loc
from irdiff.diagnose.rules import CAUSES

SUITES = Path(__file__).parent / "suites"
COPY = str(SUITES / "diag_copy.py")
LOOP = str(SUITES / "diag_loop.py")
ADD = str(SUITES / "readme_add.py")


@pytest.fixture(scope="module")
def copy86(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(
        COPY, ["plain", "plain_twin", "annotated", "annotated_hint", "dns", "dns_align", "n64", "i64", "i32"], "sm86"
    )


@pytest.fixture(scope="module")
def add80(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(ADD, ["plain", "dns", "dns_hint", "dns_param_hint"], "sm80")


@pytest.fixture(scope="module")
def loop90(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(
        LOOP, ["stages3", "stages1", "warps8", "dot3", "dot1", "dot3w8", "tma", "flat", "nest"], "sm90"
    )


@pytest.fixture(scope="module")
def loop86(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(LOOP, ["dot3", "dot3w8"], "sm86")


def check_chain(d: Diagnosis) -> None:
    """Invariants of every diagnosis: unique ids from RULE_IDS, causes name earlier findings."""
    seen: set[str] = set()
    for f in d.findings:
        assert f.id in RULE_IDS
        assert f.id not in seen
        assert set(f.causes) <= seen, (f.id, f.causes, seen)
        assert f.evidence, f.id
        seen.add(f.id)


# ---------------------------------------------------------------------------------------------------- stage 0


def test_constexpr_one_lost_by_int_annotation(copy86: Bundle) -> None:
    d = diagnose(copy86, "annotated", "plain")
    check_chain(d)
    f = d.findings[0]
    assert f.id == "spec.constexpr-one-lost" and f.severity == "critical"
    assert "`stride`" in f.title and "`int` annotation" in f.title
    assert "stride: i32" in texts(f, "annotated", "spec")
    assert "stride: constexpr = 1" in texts(f, "plain", "spec")
    assert "%stride: i32" in texts(f, "annotated", "ttir")
    assert "stride: int" in texts(f, "annotated", "python")
    assert f.remedy and "annotation" in f.remedy
    # the hint goes on the strided offsets (on `offs` alone it does nothing: the product with a runtime value loses it)
    assert "tl.multiple_of(offs * stride, BLOCK)" in f.remedy


def test_constexpr_one_remedy_hint(copy86: Bundle) -> None:
    """The remedy spec.constexpr-one-lost names works: with the contiguity stated on `offs * stride` nothing
    downstream differs, and the stage-0 finding is kept as information only."""
    d = diagnose(copy86, "annotated_hint", "plain")
    assert ids(d)[0] == "spec.constexpr-one-lost"
    # the hint itself is a source change; it shows in TTIR (its attributes) but nothing follows from it
    assert all(x.id.startswith("source.") and x.severity == "info" for x in d.findings[1:])
    f = d.findings[0]
    assert f.severity == "info" and f.predicts is None and f.remedy is None
    assert "Nothing downstream differs" in f.explanation


def test_constexpr_one_lost_by_do_not_specialize(copy86: Bundle) -> None:
    d = diagnose(copy86, "dns", "plain")
    f = d.findings[0]
    assert f.id == "spec.constexpr-one-lost"
    assert "do_not_specialize" in f.title and "do_not_specialize" in f.explanation
    assert 'do_not_specialize=["stride"]' in texts(f, "dns", "python")


def test_divisibility_lost(copy86: Bundle) -> None:
    d = diagnose(copy86, "dns_align", "plain")
    check_chain(d)
    f = d.findings[0]
    assert f.id == "spec.divisibility-lost"
    assert "`x_ptr`" in f.title and "`y_ptr`" in f.title
    assert "`x_ptr` and `y_ptr` are listed in `do_not_specialize_on_alignment`" in f.explanation
    assert "divisibility 1 byte" in f.explanation
    # a hint on the bare pointer parameter is dropped by Triton: the remedy puts it on the pointer tensor
    assert f.remedy and "tl.multiple_of(x_ptr + offs, 16)" in f.remedy and "has no effect" in f.remedy
    assert "lower.mask-alignment" not in ids(d)  # the pointer, not the mask, limits the width here
    assert "%x_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32}" in texts(f, "plain", "ttir")
    assert "%x_ptr: !tt.ptr<f16>" in texts(f, "dns_align", "ttir")


def test_type_changed(copy86: Bundle) -> None:
    d = diagnose(copy86, "n64", "plain")
    f = get(d, "spec.type-changed")
    assert "`N` is `i64` in `n64` and `i32` in `plain`" in f.explanation
    assert "%N: i64" in texts(f, "n64", "ttir")


def test_constexpr_changed_and_loop_num_stages(loop90: Bundle) -> None:
    d = diagnose(loop90, "stages1", "stages3")
    check_chain(d)
    # The configuration is the root (config.changed); the constexpr finding names the mechanism below it.
    assert d.findings[0].id == "config.changed" and "`STAGES` (1→3)" in d.findings[0].title
    assert d.findings[1].id == "spec.constexpr-changed" and d.findings[1].causes == ["config.changed"]
    assert "`STAGES` = 1 in `stages1` vs 3 in `stages3`" in d.findings[1].title
    f = get(d, "loop.num-stages")
    assert f.causes == ["spec.constexpr-changed"]
    assert "tt.num_stages = 1" in texts(f, "stages1", "ttir")
    assert "tt.num_stages = 3" in texts(f, "stages3", "ttir")


def test_options_changed(loop90: Bundle) -> None:
    d = diagnose(loop90, "warps8", "stages3")
    # launch options alone: options.changed is the one root (no config.changed restating it)
    assert "config.changed" not in ids(d)
    f = d.findings[0]
    assert f.id == "options.changed" and "`num_warps` = 8 in `warps8` vs 4 in `stages3`" in f.title
    assert f.causes == []
    # 256 fp16 elements over 256 threads: one 2-byte element per thread, too narrow for cp.async
    vw = get(d, "coalesce.vector-width")
    assert "options.changed" in vw.causes
    assert "16 vs 32 bits" in vw.title


# ---------------------------------------------------------------------------------------------------- TTIR


def test_i64_index_math_divrem_and_calls(copy86: Bundle) -> None:
    d = diagnose(copy86, "i64", "i32")
    check_chain(d)
    f = d.findings[0]
    assert f.id == "ttir.i64-index-math"
    assert "arith.extsi" in texts(f, "i64", "ttir")
    assert ".to(tl.int64)" in texts(f, "i64", "python")
    dr = get(d, "ttir.divrem-64")
    assert dr.causes == ["ttir.i64-index-math"]
    assert "arith.divsi" in texts(dr, "i64", "ttir") or "arith.remsi" in texts(dr, "i64", "ttir")
    assert "div.s64" in texts(dr, "i64", "ptx")  # ptxas-bound PTX; `%` may be lowered as x - (x / H) * H
    calls = get(d, "sass.division-calls")
    assert calls.causes == ["ttir.divrem-64"]
    assert "CALL" in texts(calls, "i64", "sass")
    ins = get(d, "sass.instructions")
    assert ins.predicts == "i64"
    reg = get(d, "resources.registers")
    assert "Used" in texts(reg, "i64", "ptxas")


def test_loop_flattened(loop90: Bundle) -> None:
    d = diagnose(loop90, "flat", "nest")
    check_chain(d)
    f = get(d, "loop.flattened")
    assert "`flat`" in f.title
    assert "} {tt.flatten}" in texts(f, "flat", "ttir")
    assert "TritonGPUFuseNestedLoops" in f.explanation


def test_loop_nest(loop90: Bundle) -> None:
    d = diagnose(loop90, "nest", "dot3")
    f = get(d, "loop.nest")
    assert "`nest` has 2 `scf.for` in TTIR (max depth 2)" in f.explanation


# ---------------------------------------------------------------------------------------------------- TTGIR


def test_contiguity_and_vector_width(copy86: Bundle) -> None:
    d = diagnose(copy86, "annotated", "plain")
    c = get(d, "coalesce.contiguity")
    assert c.causes == ["spec.constexpr-one-lost"]
    assert "contiguity = [1]" in texts(c, "annotated", "llvm_debug")
    assert "contiguity = [1024]" in texts(c, "plain", "llvm_debug")
    v = get(d, "coalesce.vector-width")
    assert v.causes == ["coalesce.contiguity"]
    assert "load 1024xf16 16 vs 128 bits" in v.title
    assert "2-byte" in v.explanation and "16-byte" in v.explanation


def test_alignment_only(copy86: Bundle) -> None:
    d = diagnose(copy86, "dns_align", "plain")
    c = get(d, "coalesce.contiguity")
    assert c.title.startswith("Pointer alignment")
    # both variants named, in either direction
    assert re.search(r"divisibility \d+ bytes? in `dns_align` vs 16 bytes in `plain`", c.title)
    r = get(diagnose(copy86, "plain", "dns_align"), "coalesce.contiguity")
    assert re.search(r"divisibility 16 bytes in `plain` vs \d+ bytes? in `dns_align`", r.title)
    assert "divisibility = [1]" in texts(c, "dns_align", "llvm_debug") or "divisibility = [2]" in texts(
        c, "dns_align", "llvm_debug"
    )


def test_pipeline_rules(loop90: Bundle) -> None:
    d = diagnose(loop90, "stages1", "stages3")
    p = get(d, "pipeline.load-not-pipelined")
    assert p.causes == ["loop.num-stages"] and p.predicts == "stages1"
    assert "considered for pipelining" in texts(p, "stages3", "llvm_debug")
    b = get(d, "pipeline.buffers")
    assert "ttg.local_alloc" in texts(b, "stages3", "ttgir") and "2x256xf16" in texts(b, "stages3", "ttgir")
    a = get(d, "pipeline.async-copies")
    assert "ttg.async_copy_global_to_local" in texts(a, "stages3", "ttgir")
    assert "tt.load" in texts(a, "stages1", "ttgir")
    s = get(d, "resources.shared")
    assert "pipeline.buffers" in s.causes


def test_wgmma_wait(loop90: Bundle) -> None:
    d = diagnose(loop90, "dot1", "dot3")
    w = get(d, "pipeline.wgmma-wait")
    assert "pendings = 0" in texts(w, "dot1", "ttgir")
    assert "pendings = 1" in texts(w, "dot3", "ttgir")
    assert "`dot1`" in w.title


def test_tma(loop90: Bundle) -> None:
    d = diagnose(loop90, "tma", "dot3")
    t = get(d, "ttgir.tma")
    assert "ttng.async_tma_copy_global_to_local" in texts(t, "tma", "ttgir")
    assert t.predicts is None
    assert "pipeline.load-not-pipelined" not in ids(d)  # descriptor loads are pipelined too
    m = get(d, "ptx.memory-ops")
    assert "cp.async.bulk.tensor" in texts(m, "tma", "ptx")


def test_mma_layout_and_ptx_mma(loop86: Bundle) -> None:
    d = diagnose(loop86, "dot3w8", "dot3")
    lm = get(d, "layout.mma")
    assert "warpsPerCTA [2, 4]" in lm.title and "warpsPerCTA [2, 2]" in lm.title
    pm = get(d, "ptx.mma")
    assert pm.causes == ["layout.mma"]
    assert "mma.sync" in texts(pm, "dot3", "ptx")
    occ = get(d, "resources.occupancy")
    assert "warps" in occ.title


# ---------------------------------------------------------------------------------------------------- lowering


def test_mask_alignment(add80: Bundle) -> None:
    """README's vector add with `do_not_specialize=["n"]`: same coalescing (perThread 4) in both variants, but the mask
    `offs < n` is not provably constant over 4 elements, so the lowering emits 32-bit instead of 128-bit accesses."""
    d = diagnose(add80, "dns", "plain")
    check_chain(d)
    assert ids(d)[:3] == ["spec.divisibility-lost", "lower.mask-alignment", "ptx.memory-ops"]
    first = d.findings[0]
    assert "`n` is only used in masks" in first.explanation and "row * stride" not in first.explanation
    f = get(d, "lower.mask-alignment")
    assert f.stage == "llir" and f.causes == ["spec.divisibility-lost"] and f.predicts == "dns"
    assert "into 32-bit accesses in `dns` (128-bit in `plain`)" in f.title
    assert "getMaskAlignment" in f.explanation and "CmpOpAxisInfoVisitor" in f.explanation
    assert "computed from `n`" in f.explanation
    # the coalescing pass chose the same elements per thread in both variants
    assert "perThread: 4" in texts(f, "dns", "llvm_debug") and "perThread: 4" in texts(f, "plain", "llvm_debug")
    # evidence: the tt.load with its mask and the mask's definition (TTGIR), the narrow LLIR/PTX instructions
    ttgir = texts(f, "dns", "ttgir")
    assert re.search(r"tt\.load %\w+, %m\w*", ttgir) and "arith.cmpi slt" in ttgir and "tt.splat %n" in ttgir
    assert "ld.global.b32" in texts(f, "dns", "llir") and "ld.global.v4.b32" in texts(f, "plain", "llir")
    assert "8× ld.global.b32" in texts(f, "dns", "ptx") and "2× ld.global.v4.b32" in texts(f, "plain", "ptx")
    assert "st.global.b32" in texts(f, "dns", "ptx")
    assert f.remedy and "do_not_specialize" in f.remedy and "tl.full(offs.shape, n, tl.int32)" in f.remedy
    assert get(d, "ptx.memory-ops").causes == ["lower.mask-alignment"]
    assert get(d, "sass.instructions").causes == ["ptx.memory-ops"]
    # the other direction names the same variants
    r = get(diagnose(add80, "plain", "dns"), "lower.mask-alignment")
    assert r.title == f.title and r.predicts == "dns"


def test_mask_alignment_remedies(add80: Bundle) -> None:
    """The hint the remedy names restores 128-bit accesses; the same hint on the bare parameter is dropped."""
    d = diagnose(add80, "dns_hint", "plain")
    # everything is information: `n` loses its divisibility, the hint restores it (the hint's TTIR attribute is
    # the only other difference, caused by the source change that adds it)
    assert "spec.divisibility-lost" in ids(d)[:2] and all(x.severity == "info" for x in d.findings)
    rest = [x for x in d.findings if x.id != "spec.divisibility-lost"]
    assert all(x.id.startswith("source.") or x.id == "ttir.attr-changed" for x in rest), ids(d)
    assert "`tt.divisibility = dense<16>`" in get(d, "ttir.attr-changed").title
    facts = d.facts["dns_hint"]["lowered"]
    assert {x["ptx_key"] for x in facts} == {"ld.global.v4.b32", "st.global.v4.b32"}
    d = diagnose(add80, "dns_param_hint", "plain")
    assert "lower.mask-alignment" in ids(d)


def test_lowered_facts(add80: Bundle) -> None:
    """Per tt.load/tt.store: the coalescing perThread against the widths in LLIR and PTX, matched by location."""
    from irdiff.diagnose import extract_facts

    for name, bits, n in (("plain", 128, 2), ("dns", 32, 8)):
        f = extract_facts(add80.variants[name])
        assert [(x.kind, x.ptr_args[0]) for x in f.lowered] == [
            ("load", "x_ptr"),
            ("load", "y_ptr"),
            ("store", "out_ptr"),
        ]
        for x in f.lowered:
            assert (x.per_thread, x.coalesce_bits) == (4, 128)
            assert (x.llir_bits, x.llir_count, x.ptx_bits, x.ptx_count) == (bits, n, bits, n)
            assert x.mask and x.mask_args == ["n"]
        assert f.arg_roles["n"] == ["mask"] and f.arg_roles["x_ptr"] == ["pointer"]


# ---------------------------------------------------------------------------------------------------- PTX / resources


def test_ptx_memory_ops(copy86: Bundle) -> None:
    d = diagnose(copy86, "annotated", "plain")
    m = get(d, "ptx.memory-ops")
    assert m.causes == ["coalesce.vector-width"]
    assert "ld.global.b16" in texts(m, "annotated", "ptx")
    assert "ld.global.v4.b32" in texts(m, "plain", "ptx")
    assert m.predicts == "annotated"


def test_identical_variants(copy86: Bundle) -> None:
    d = diagnose(copy86, "plain_twin", "plain")
    assert d.identical and d.findings == []
    assert diagnose(copy86, "plain", "plain").identical


def test_unknown_variant(copy86: Bundle) -> None:
    with pytest.raises(BundleError, match="not in the bundle"):
        diagnose(copy86, "nope", "plain")


def test_occupancy_limits() -> None:
    # sm86, 4 warps, 255 registers: ceil(255*32/256)*256 = 8192 registers per warp -> 8 warps -> 2 CTAs
    o = occupancy(86, 4, 255, 32 * 1024)
    assert o is not None
    assert o.limits == {"registers": 2, "shared memory": 3, "warps": 12, "CTA slots": 16}
    assert (o.ctas_per_sm, o.limiter, o.warps_per_sm) == (2, "registers", 8)
    # sm90, 8 warps, 128 registers, 144 KB: 228 KB // 145 KB = 1 CTA, limited by shared memory
    o = occupancy(90, 8, 128, 144 * 1024)
    assert o is not None and (o.ctas_per_sm, o.limiter) == (1, "shared memory")
    # tiny kernel: CTA slots (16 on sm86) limit before warps (48 / 1 = 48)
    o = occupancy(86, 1, 16, 0)
    assert o is not None and (o.ctas_per_sm, o.limiter) == (16, "CTA slots")
    assert occupancy(75, 4, 32, 0) is None


def test_occupancy_rounds_registers_per_warp() -> None:
    """Registers are allocated per warp in units of 256 (CUDA occupancy calculator): 70 registers × 32 lanes = 2240,
    rounded to 2304 per warp, so 65536 // 2304 = 28 one-warp CTAs fit by registers on sm86 (29 without rounding)."""
    o = occupancy(86, 1, 70, 0)
    assert o is not None and o.limits["registers"] == 28
    o = occupancy(86, 2, 70, 0)  # 28 warps -> 14 two-warp CTAs (14 as well from 29 // 2: the rounding shows at 1 warp)
    assert o is not None and o.limits["registers"] == 14
    o = occupancy(86, 1, 72, 0)  # 72 × 32 = 2304 is already a multiple of 256
    assert o is not None and o.limits["registers"] == 28


def test_causes_graph_names_known_ids() -> None:
    for fid, cands in CAUSES.items():
        assert fid in RULE_IDS
        assert set(cands) <= set(RULE_IDS), fid


# ---------------------------------------------------------------------------------------------------- counts


PTX = """
.visible .entry k(
)
{
	.reg .b32 %r<10>;
$L__BB0_1:
	@%p1 ld.global.b16 { %rs1 }, [ %rd1 + 0 ];
	ld.global.L1::evict_last.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd2 + 0 ];
	cp.async.cg.shared.global [ %r65 + 0 ], [ %rd15 + 0 ], 0x10, %r66;
	cp.async.ca.shared.global [ %r65 + 0 ], [ %rd15 + 0 ], 4, %r66;
	cp.async.commit_group;
	mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1}, {%r1}, {%r2}, {%f2};
	wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%f1}, %rd1, %rd2, p, 1, 1, 0, 1;
	div.s64 %rd3, %rd4, %rd5;
	@!%p2 st.global.v4.b32 [ %rd68 + 0 ], { %r330, %r331, %r332, %r333 };
	bar.sync 0;
	add.f64 %fd1, %fd2, %fd3;
	ret;
}
"""

SASS = """Function:k
--:-:-:-:2	MOV R1, c[0x0][0x28];
--:-:-:-:1	@P1 LDG.E.U16 R6, [R10.64];
--:-:-:-:1	LDGSTS.E.BYPASS.LTC128B.128 [R226], [R30.64], P0;
--:-:-:-:1	STG.E.128 [R48.64], R36;
--:-:-:-:1	@P1 CALL.REL.NOINC 0x3100;
--:-:-:-:1	HMMA.16816.F32 R4, R8, R12, R4;
--:-:-:-:1	BAR.SYNC.DEFER_BLOCKING 0x0;
.L_x_3:
--:-:-:-:5	EXIT;
"""


def test_count_ops_ptx() -> None:
    c = count_ops("ptx", PTX)
    assert c["ld.global.b16"] == 1 and c["ld.global.v4.b32"] == 1
    assert c["cp.async 16B"] == 1 and c["cp.async 4B"] == 1 and c["cp.async.commit_group"] == 1
    assert c["mma.sync"] == 1 and c["wgmma"] == 1 and c["div.s64"] == 1
    assert c["st.global.v4.b32"] == 1 and c["bar.sync"] == 1 and c["f64 ops"] == 1
    assert c["instructions"] == 12  # directives, labels and braces are not instructions
    assert all(k in c for k in KEY_COUNTS["ptx"])


def test_count_ops_sass() -> None:
    c = count_ops("sass", SASS)
    assert c["LDG.E.U16"] == 1 and c["LDGSTS"] == 1 and c["LDGSTS.E.128"] == 1
    assert c["STG.E.128"] == 1 and c["CALL"] == 1 and c["HMMA"] == 1 and c["BAR"] == 1
    assert c["instructions"] == 8


def test_sass_calls_branch_vs_subroutine() -> None:
    """A CALL into code that returns (RET) is a subroutine; ptxas' predicated CALL out of a loop into code that ends
    in EXIT is a branch (seen in the annotated matmul on sm80/sm86: no routine is called)."""
    text = (
        "Function:k\n"
        "--:-:-:-:1\t@P1 CALL.REL.NOINC 0x30;\n"  # -> instruction 3 (16-byte instructions), reaches EXIT
        "--:-:-:-:1\tBRA LBB1;\n"
        "--:-:-:-:1\tNOP;\n"
        "--:-:-:-:1\tSTG.E [R2.64], R4;\n"
        "--:-:-:-:1\tEXIT;\n"
        "--:-:-:-:1\tCALL.REL.NOINC 0x70;\n"  # -> instruction 7, reaches RET
        "--:-:-:-:1\tEXIT;\n"
        "--:-:-:-:1\tIADD3 R8, R1, R2, RZ;\n"
        "--:-:-:-:1\tRET.REL.NODEC R6 0x0;\n"
    )
    subs, branches = sass_calls(text)
    assert [r.line for r in subs] == [7] and [r.line for r in branches] == [2]
    assert sass_calls("Function:k\n--:-:-:-:1\tEXIT;\n") == ([], [])


def test_count_ops_mlir() -> None:
    text = (
        "  %a = tt.load %p, %m : tensor<128x!tt.ptr<f16>> loc(#loc3)\n"
        "  %b:3 = scf.for %i = %c0 to %n step %c1 iter_args(%x = %y) -> (i32) : i32 {\n"
        '    %0 = "tt.reduce"(%a) <{axis = 0 : i32}> ({\n'
        "    })\n"
        "  } {tt.flatten}\n"
        "  tt.store %q, %a : tensor<128x!tt.ptr<f16>>\n"
    )
    c = count_ops("ttgir", text)
    assert c["tt.load"] == 1 and c["scf.for"] == 1 and c["tt.reduce"] == 1 and c["tt.store"] == 1
    assert count_ops("python", "x = 1") == {}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(PTX.splitlines() + SASS.splitlines() + ["", "// c", "junk line ;"]), max_size=40))
def test_count_ops_invariants(lines: list[str]) -> None:
    text = "\n".join(lines)
    for stage in ("ttir", "ttgir", "llir", "ptx", "sass"):
        c = count_ops(stage, text)
        assert all(v >= 0 for v in c.values())
        assert all(k in c for k in KEY_COUNTS[stage])
        # appending the same text twice doubles every count
        d = count_ops(stage, text + "\n" + text)
        assert all(d[k] == 2 * v for k, v in c.items())


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet='abc%=:() #loc"0123', max_size=60))
def test_strip_loc_idempotent(s: str) -> None:
    """Stripping twice is stripping once; an appended location is always removed, and every ``loc(`` left is the
    end of a longer word (``0loc(``, ``#loc(``: not a location, irdiff.normalize.text.strip_locs's word boundary).
    Hypothesis found ``s = '0loc('`` in CI, where the earlier ``"loc(" not in`` failed on a correct result."""
    once = strip_loc(s)
    assert strip_loc(once) == once
    out = strip_loc(s + ' loc("f.py":1:2)')
    assert 'loc("f.py"' not in out
    assert all(
        k > 0 and (out[k - 1].isalnum() or out[k - 1] in "_$.#")
        for k in [m.start() for m in re.finditer(r"loc\(", out)]
    )


ADDV = str(SUITES / "diag_add_variants.py")


@pytest.fixture(scope="module")
def addv80(compile_suite) -> Bundle:  # type: ignore[no-untyped-def]
    return compile_suite(ADDV, ["plain", "mis8", "w8", "i64"], "sm80")


def test_misaligned_pointer_remedy_and_width(addv80: Bundle) -> None:
    """`x_ptr` only 8-byte aligned: the remedy starts with its first alternative (an aligned tensor), and the vector
    width says 4 elements per thread issued as 32-bit accesses because of the proven alignment (not 4 × 32 = 32)."""
    d = diagnose(addv80, "mis8", "plain")
    rem = get(d, "spec.divisibility-lost").remedy
    assert rem and rem.startswith("pass a 16-byte-aligned tensor for `x_ptr`") and "; or state the alignment" in rem
    vw = get(d, "coalesce.vector-width").explanation
    assert (
        "4 elements per thread, issued as 32-bit (4-byte) accesses in `mis8` because the pointer is proven only" in vw
    )
    assert "4 elements per thread × 32 bits = 128-bit (16-byte) accesses in `plain`" in vw
    assert "4 × 32 bits = 32-bit" not in vw


def test_num_warps_ratios_and_occupancy(addv80: Bundle) -> None:
    """num_warps 8 vs 4: ratios are left/right with the variants named, per-thread counts are explained and
    downgraded, and equal resident warps are not called fewer."""
    d = diagnose(addv80, "w8", "plain")
    mem = get(d, "ptx.memory-ops")
    m = re.search(r"in total: (\d+) in `w8` vs (\d+) in `plain` \(([\d.]+)×\)", mem.explanation)
    assert m, mem.explanation
    assert float(m.group(3)) == pytest.approx(int(m.group(1)) / int(m.group(2)), rel=0.05)
    assert "twice the threads, half the instructions each" in mem.explanation
    assert mem.severity == "minor" and get(d, "sass.instructions").severity == "info"
    occ = get(d, "resources.occupancy")
    assert occ.severity == "info" and "Fewer resident warps" not in occ.explanation and occ.predicts is None


def test_i64_without_divrem_no_boilerplate(addv80: Bundle) -> None:
    """64-bit index math without div/rem: no `//`/`%` or software-division sentence; no raw SSA names in prose."""
    f = get(diagnose(addv80, "i64", "plain"), "ttir.i64-index-math")
    assert "`//` and `%`" not in f.explanation and "division" not in f.explanation
    assert "The first 64-bit value is `offs`" in f.explanation and not re.search(r"%\w", f.explanation)


def test_mask_alignment_prose_uses_python_names(add80: Bundle) -> None:
    """The mask is described by its Python source (`m = offs < n`), not by raw SSA names (`%offs_3, %m`)."""
    f = get(diagnose(add80, "dns", "plain"), "lower.mask-alignment")
    assert "`m = offs < n`" in f.explanation and not re.search(r"%\w", f.explanation)
