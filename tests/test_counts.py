"""Operation counts per stage (irdiff/diagnose/counts.py): the keys each instruction adds, read from instruction lines
as Triton 3.6/3.9 and ptxas print them (copied from compiled kernels in the compile cache: sm80/sm86/sm90/sm100
matmuls, attention, split-k atomics, TMA copies), and the counts of one real compiled matmul, whose stages must
agree with each other (every PTX ``cp.async`` of 16 bytes is one SASS ``LDGSTS.E.BYPASS.128``, every
``mma.sync.m16n8k16`` one ``HMMA.16816``). Cheap: one cached compile."""

from __future__ import annotations

from collections import Counter

import pytest

from irdiff.bundle import Bundle
from irdiff.diagnose.counts import (
    KEY_COUNTS,
    clear_memos,
    count_ops,
    ptx_instructions,
    ptx_key,
    sass_instructions,
    sass_key,
)


@pytest.fixture(autouse=True)
def _cold_memos() -> None:
    """Each test runs the parsers and key functions themselves, not a memo filled by an earlier test (the keys per
    opcode and the parsed texts are memoized: a process that already read an opcode would not read it again)."""
    clear_memos()


def _ptx(line: str) -> list[str]:
    """The keys of one PTX instruction line (as :func:`count_ops` reads it)."""
    ((_, op, full),) = ptx_instructions("\t" + line)
    return ptx_key(op, full)


# (PTX line, the keys it adds besides ``instructions``)
PTX_KEYS = [
    ("ld.global.b16 { %rs1 }, [ %rd1 + 0 ];", ["ld.global.b16"]),
    ("@%p1 ld.volatile.global.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd1 + 0 ];", ["ld.global.v4.b32", "hint volatile"]),
    ("ld.relaxed.gpu.global.b32 %r1, [%rd1];", ["ld.global.b32"]),
    (
        "@%p1 ld.global.L1::evict_first.L2::cache_hint.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd1 + 0 ], %rd2;",
        ["ld.global.v4.b32", "hint L1::evict_first", "hint L2::cache_hint"],
    ),
    ("ld.global.nc.L2::128B.v2.b32 { %r1, %r2 }, [ %rd1 + 0 ];", ["ld.global.v2.b32", "hint .nc"]),
    ("ld.global.L2::64B.b32 %r1, [ %rd1 + 0 ];", ["ld.global.b32"]),
    ("ld.global.ca.b32 %r1, [ %rd1 + 0 ];", ["ld.global.b32", "hint .ca"]),
    ("ld.global.cg.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd1 + 0 ];", ["ld.global.v4.b32", "hint .cg"]),
    ("ld.global.lu.b32 %r1, [ %rd1 + 0 ];", ["ld.global.b32", "hint .lu"]),
    ("ld.global.cv.b32 %r1, [ %rd1 + 0 ];", ["ld.global.b32", "hint .cv"]),
    ("st.global.wb.b32 [ %rd1 + 0 ], %r1;", ["st.global.b32", "hint .wb"]),
    ("st.global.wt.b32 [ %rd1 + 0 ], %r1;", ["st.global.b32", "hint .wt"]),
    ("@%p1 st.global.cs.v4.b32 [ %rd4 + 0 ], { %r9, %r10, %r11, %r12 };", ["st.global.v4.b32", "hint .cs"]),
    ("st.shared.b16 [%r5], %rs1;", ["st.shared.b16"]),
    ("ld.shared.v4.b32 \t{%r330, %r334, %r346, %r350}, [%r452];", ["ld.shared.v4.b32"]),
    ("ld.volatile.shared.b32 %r1, [%r2];", ["ld.shared.b32", "hint volatile"]),
    ("ld.param.b64 %rd1, [k_param_0];", ["ld.param.b64"]),
    ("ld.local.b32 %r1, [%rd1];", ["ld.local.b32"]),
    ("ld.const.b32 %r1, [c];", ["ld.const.b32"]),
    ("ld.b32 %r1, [%rd1];", ["ld.generic.b32"]),
    ("ld.global.f64 %fd1, [%rd1];", ["ld.global.f64", "f64 ops"]),
    ("cp.async.cg.shared.global [ %r65 + 0 ], [ %rd15 + 0 ], 0x10, %r66;", ["cp.async 16B"]),
    ("cp.async.ca.shared.global [ %r33 + 0 ], [ %rd8 + 0 ], 0x4, %r7;", ["cp.async 4B"]),
    ("cp.async.ca.shared.global [ %r33 + 0 ], [ %rd8 + 0 ], 8;", ["cp.async 8B"]),
    ("cp.async.ca.shared.global [ %r33 + 0 ], [ %rd8 + 0 ], %r7;", ["cp.async"]),
    (
        "@%p5 cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes [%r6], [%rd8, {%r12, %r13}], "
        "[%r11];",
        ["cp.async.bulk.tensor"],
    ),
    ("cp.async.bulk.commit_group;", ["cp.async.bulk"]),
    ("cp.async.commit_group;", ["cp.async.commit_group"]),
    ("cp.async.wait_group 2;", ["cp.async.wait_group"]),
    ("cp.async.wait_all;", ["cp.async.wait_group"]),
    ("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%r1];", ["cp.async.mbarrier"]),
    (
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f1}, {%r1}, {%r2}, {%f2};",
        ["mma.sync", "mma.sync.m16n8k16", "mma.sync.bf16"],
    ),
    (
        "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%fd1, %fd2}, {%fd3}, {%fd4}, {%fd5, %fd6};",
        ["mma.sync", "mma.sync.m8n8k4", "mma.sync.f64", "f64 ops"],
    ),
    (
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%r132,%r133}, %rd20, %rd21, %p4, 1, 1, 0, 1;",
        ["wgmma", "wgmma.m64n64k16", "wgmma.f16"],
    ),
    ("wgmma.fence.sync.aligned;", ["wgmma.fence"]),
    ("wgmma.commit_group.sync.aligned;", ["wgmma.commit_group"]),
    ("wgmma.wait_group.sync.aligned 1;", ["wgmma.wait_group"]),
    (
        "@%p32 tcgen05.mma.cta_group::1.kind::f16 [ %r349 + 0 ], %rd62, %rd63, %r177, %p31;",
        ["tcgen05.mma", "tcgen05.mma.f16"],
    ),
    (
        "@%p32 tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r178];",
        ["tcgen05.commit"],
    ),
    ("tcgen05.wait::ld.sync.aligned;", ["tcgen05.wait"]),
    ("tcgen05.fence::before_thread_sync;", ["tcgen05.fence"]),
    ("tcgen05.ld.sync.aligned.32x32b.x128.b32 {%r1}, [%r2];", ["tcgen05.ld"]),
    ("@%p1 atom.global.gpu.acq_rel.add.f32 %r129, [ %rd9 + 0 ], %r130;", ["atom", "atom.add.f32", "atom.acq_rel"]),
    (
        "atom.relaxed.gpu.global.cas.b32 %r1, [%rd1], %r2, %r3;",
        ["atom", "atom.cas.b32", "atom.cas", "atom.relaxed"],
    ),
    ("atom.relaxed.sys.shared.add.u32 \t%r39, [%r11], 1;", ["atom", "atom.shared.add.u32", "atom.relaxed"]),
    ("red.global.add.f32 [%rd9], %r49;", ["red", "red.add.f32"]),
    (
        "atom.global.v4.f16x2.max.noftz {%r1, %r2, %r3, %r4}, [%rd1], {%r5, %r6, %r7, %r8};",
        ["atom", "atom.max.v4.f16x2"],  # .noftz after the operation: the type is still f16x2
    ),
    ("atom.add.f32 %f1, [%rd1], %f2;", ["atom", "atom.add.f32"]),  # generic address space
    ("atom.shared.add.u32 %r1, [%r2], 1;", ["atom", "atom.shared.add.u32"]),
    (
        "atom.acquire.gpu.global.cas.b32 %r1, [%rd1], %r2, %r3;",
        ["atom", "atom.cas.b32", "atom.cas", "atom.acquire"],
    ),
    ("red.release.gpu.global.add.s32 [%rd1], %r1;", ["red", "red.add.s32", "red.release"]),
    (
        "mma.sync.aligned.m16n8k32.row.col.s32.s8.u8.s32 {%r1, %r2}, {%r3, %r4}, {%r5}, {%r6, %r7};",
        ["mma.sync", "mma.sync.m16n8k32", "mma.sync.s8"],  # A's type (B's is u8)
    ),
    (
        "red.global.gpu.relaxed.add.v4.f32 [%rd1], {%r1, %r2, %r3, %r4};",
        ["red", "red.add.v4.f32", "red.relaxed"],
    ),
    ("red.global.add.noftz.f16x2 [%rd1], %r1;", ["red", "red.add.f16x2"]),
    ("atom.global.add.f64 %fd1, [%rd1], %fd2;", ["atom", "atom.add.f64", "f64 ops"]),
    ("atom.global.exch.b32 %r1, [%rd1], %r2;", ["atom", "atom.exch.b32"]),
    ("fence.proxy.async.shared::cta;", ["fence", "fence.proxy"]),
    ("fence.acq_rel.gpu;", ["fence", "fence.acq_rel"]),
    ("membar.gl;", ["fence", "membar"]),
    ("createpolicy.fractional.L2::evict_first.b64 %rd2, 1.0;", ["createpolicy"]),
    ("cvt.rna.tf32.f32 %r513, %r129;", ["cvt.tf32.f32"]),
    ("cvt.f64.f32 %fd1, %f1;", ["cvt.f64.f32", "f64 ops"]),
    ("cvt.rn.f32.f64 %f1, %fd1;", ["cvt.f32.f64", "f64 ops"]),
    ("cvt.rn.bf16x2.f32 %r1, %f2, %f1;", ["cvt.bf16x2.f32"]),
    ("cvt.rn.satfinite.e4m3x2.f32 %rs1, %f2, %f1;", ["cvt.e4m3x2.f32"]),
    ("cvt.rn.f16x2.e5m2x2 %r1, %rs1;", ["cvt.f16x2.e5m2x2"]),
    ("cvt.rn.f16x2.f32 %r1, %f2, %f1;", []),  # fp16 packing: not a precision change the counts follow
    ("cvt.u64.u32 %rd1, %r1;", []),
    ("ex2.approx.ftz.f32 %f2, %f1;", ["ex2.approx.ftz.f32"]),
    ("ex2.approx.f32 %f2, %f1;", ["ex2.approx.f32"]),
    ("sqrt.rn.f64 %fd2, %fd1;", ["sqrt.rn.f64", "f64 ops"]),
    ("rsqrt.approx.ftz.f32 %f2, %f1;", ["rsqrt.approx.ftz.f32"]),
    ("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r63, %r64, %r65, %r66}, [%r128];", ["ldmatrix"]),
    ("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%r1], {%r2, %r3, %r4, %r5};", ["stmatrix"]),
    ("bar.sync 0;", ["bar.sync"]),
    ("barrier.sync 0;", ["bar.sync"]),
    ("barrier.cta.sync.aligned 0;", ["bar.sync"]),
    ("bar.warp.sync -1;", []),
    ("bar.arrive 1, 256;", []),
    ("div.s64 %rd3, %rd4, %rd5;", ["div.s64"]),
    ("rem.s64 %rd3, %rd4, %rd5;", ["rem.s64"]),
    ("div.u32 %r3, %r4, %r5;", ["div.u32"]),
    ("div.full.f32 %f3, %f1, %f2;", ["div.full.f32"]),
    ("div.rn.f32 %f3, %f1, %f2;", ["div.rn.f32"]),
    ("div.rn.ftz.f32 %f3, %f1, %f2;", ["div.rn.ftz.f32"]),
    ("div.approx.ftz.f32 %f3, %f1, %f2;", ["div.approx.ftz.f32"]),
    ("div.rn.f64 %fd3, %fd1, %fd2;", ["div.rn.f64", "f64 ops"]),
    ("div.rz.f32 %f3, %f1, %f2;", ["div.rz.f32"]),
    ("div.rm.f64 %fd3, %fd1, %fd2;", ["div.rm.f64", "f64 ops"]),
    ("div.rp.ftz.f32 %f3, %f1, %f2;", ["div.rp.ftz.f32"]),
    ("fma.rn.f32 %f4, %f1, %f2, %f3;", ["fma.f32"]),
    ("fma.rn.ftz.f32 %f4, %f1, %f2, %f3;", ["fma.f32"]),
    ("fma.rn.f32x2 \t%rd70, %rd58, %rd58, %rd60;", ["fma.f32x2"]),
    ("fma.rn.f64 %fd4, %fd1, %fd2, %fd3;", ["fma.f64", "f64 ops"]),
    ("call.uni (retval0), vprintf, (param0, param1);", ["call"]),
    ("add.s32 %r1, %r2, %r3;", []),
    ("add.f64 %fd1, %fd2, %fd3;", ["f64 ops"]),
    ("mbarrier.try_wait.parity.shared::cta.b64 complete, [%r418], %r417;", []),
]


@pytest.mark.parametrize(("line", "keys"), PTX_KEYS, ids=[x[0].removeprefix("@%p1 ").split()[0] for x in PTX_KEYS])
def test_ptx_instruction_keys(line: str, keys: list[str]) -> None:
    assert _ptx(line) == keys
    c = count_ops("ptx", "\t" + line + "\n\t" + line)  # the counts add the same keys once per instruction
    assert c["instructions"] == 2 and all(c[k] == 2 * keys.count(k) for k in keys)
    assert sum(c.values()) == 2 + 2 * len(keys)


def test_bare_opcodes_add_no_keys() -> None:
    """An opcode without its qualifiers adds nothing but itself being an instruction (never a wrong family)."""
    for op in ("ld", "st", "wgmma", "tcgen05", "fence", "sin", "div", "rem", "bar", "barrier", "cvt"):
        assert ptx_key(op, op + ";") == [], op


def test_ptx_instructions_skip_what_is_not_an_instruction() -> None:
    text = (
        "//\n// Generated by LLVM NVPTX Back-End\n.version 8.7\n.target sm_90a\n"
        ".visible .entry k(\n\t.param .u64 k_param_0\n)\n.reqntid 128\n{\n"
        "\t.reg .b32 \t%r<10>;\n$L__BB0_1:\n"
        "\tld.param.u64 \t%rd1, [k_param_0]; // a comment // with two markers\n"
        "\t@!%p2 bra \t$L__BB0_3;\n"
        "\t// begin inline asm\n"
        "\t@%p1 ld.global.b16 { %rs1 }, [ %rd1 + 0 ];\n"
        "\t{ // callseq 0, 0\n"
        "\tcall.uni (retval0), vprintf, (param0, param1);\n"
        "\t} // callseq 0\n"
        "\t( %r1 )\n"
        "\tret;\n"
        "}\n"
        "\t.section\t.debug_abbrev\n\t{\n.b8 1\n\tmov.u32 %r1, 1;\n\t}\n"
    )
    got = ptx_instructions(text)
    assert got == [
        (12, "ld.param.u64", "ld.param.u64 \t%rd1, [k_param_0];"),
        (13, "bra", "bra \t$L__BB0_3;"),
        (15, "ld.global.b16", "ld.global.b16 { %rs1 }, [ %rd1 + 0 ];"),
        (17, "call.uni", "call.uni (retval0), vprintf, (param0, param1);"),
        (20, "ret", "ret;"),
    ]
    c = count_ops("ptx", text)
    assert c["instructions"] == 5 and c["ld.global.b16"] == 1 and c["call"] == 1 and c["ld.param.u64"] == 1
    assert ptx_instructions("\tadd.s32 %r1, %r2, 1;\n") == [(1, "add.s32", "add.s32 %r1, %r2, 1;")]
    assert ptx_instructions("\t%r1;\n\tADD x;\n\t\n") == []  # no lower-case opcode: not an instruction


# (SASS opcode, the keys it adds besides ``instructions``)
SASS_KEYS = [
    ("LDG.E.U16", ["LDG.E.U16"]),
    ("LDG.E.128.CONSTANT", ["LDG.E.128"]),
    ("LDG.E.EF.64", ["LDG.E.64", "LDG hint .EF"]),
    ("LDG.E.EL.S8", ["LDG.E.S8", "LDG hint .EL"]),
    ("LDG.E.LU.U8", ["LDG.E.U8", "LDG hint .LU"]),
    ("STG.E.NA.S16", ["STG.E.S16", "STG hint .NA"]),
    ("STG.E.EN", ["STG.E", "STG hint .EN"]),
    ("LDGSTS.E.BYPASS.LTC128B.128", ["LDGSTS.E.128", "LDGSTS"]),
    ("LDS.128", ["LDS.128"]),
    ("STS.U16", ["STS.U16"]),
    ("LDL.LU.64", ["LDL.64", "LDL hint .LU"]),
    ("STL.64", ["STL.64"]),
    ("LD.E.64", ["LD.E.64"]),
    ("ST.E", ["ST.E"]),
    ("HMMA.16816.F32", ["HMMA"]),
    ("HMMA.1688.F32.TF32", ["HMMA", "HMMA.TF32"]),
    ("HMMA.16816.F32.BF16", ["HMMA", "HMMA.BF16"]),
    ("HGMMA.64x64x16.F32", ["HGMMA"]),
    ("IMMA.16832.S8.S8", ["IMMA"]),
    ("DMMA.8x8x4", ["DMMA"]),
    ("QGMMA.64x64x32.F32.E4M3.E4M3", ["QGMMA"]),
    ("IGMMA.64x64x32.S8.S8", ["IGMMA"]),
    ("UTCHMMA", ["UTCHMMA"]),
    ("UTCQMMA", ["UTCQMMA"]),
    ("UTCIMMA", ["UTCIMMA"]),
    ("UTCOMMA", ["UTCOMMA"]),
    ("ATOMG.E.ADD.F32.FTZ.RN.STRONG.GPU", ["ATOMG", "ATOMG.ADD.F32"]),
    ("ATOMG.E.CAS.STRONG.GPU", ["ATOMG", "ATOMG.CAS"]),
    ("ATOMG.E.CAS.64.STRONG.GPU", ["ATOMG", "ATOMG.CAS.64", "ATOMG.CAS"]),
    ("ATOM.E.ADD.F16x2.RN.STRONG.GPU", ["ATOM", "ATOM.ADD.F16x2"]),
    ("ATOMS.POPC.INC.32", ["ATOMS", "ATOMS.POPC.32"]),
    ("ATOMS.EXCH", ["ATOMS", "ATOMS.EXCH"]),
    ("REDG.E.ADD.F32.FTZ.RN.STRONG.GPU", ["RED", "RED.ADD.F32"]),
    ("RED.E.ADD.BF16_V2.RN.STRONG.GPU", ["RED", "RED.ADD.BF16_V2"]),
    ("RED.E.XOR.STRONG.GPU", ["RED", "RED.XOR"]),
    ("MEMBAR.ALL.GPU", ["MEMBAR", "MEMBAR.GPU"]),
    ("MEMBAR.GPU", ["MEMBAR", "MEMBAR.GPU"]),  # one qualifier: still the scope key
    ("REDS.E.ADD.S32", ["RED", "RED.ADD.S32"]),  # the shared-memory spelling of a reduction: the RED family
    ("MEMBAR", ["MEMBAR"]),
    ("ERRBAR", ["ERRBAR"]),
    ("CCTL.IVALL", ["CCTL"]),
    ("FENCE.VIEW.ASYNC.S", ["FENCE"]),
    ("UTCBAR", ["UTCBAR"]),
    ("FFMA.FTZ", ["FFMA"]),
    ("FMUL", ["FMUL"]),
    ("FADD.FTZ", ["FADD"]),
    ("MUFU.EX2", ["MUFU.EX2"]),
    ("MUFU", ["MUFU"]),
    ("F2F.F64.F32", ["F2F", "F2F.F64"]),
    ("F2F.F16.F32", ["F2F"]),
    ("BAR.SYNC.DEFER_BLOCKING", ["BAR"]),
    ("CALL.REL.NOINC", ["CALL"]),
    ("UTMALDG.2D", ["UTMALDG"]),
    ("UTMASTG.2D", ["UTMASTG"]),
    ("UBLKCP.S.G", ["UBLKCP"]),
    ("LDSM.16.M88.4", ["LDSM"]),
    ("STSM.16.M88.4", ["STSM"]),
    ("DEPBAR.LE", ["DEPBAR"]),
    ("LDGDEPBAR", ["LDGDEPBAR"]),
    ("WARPGROUP.ARRIVE", ["WARPGROUP"]),
    ("SYNCS.ARRIVE.TRANS64.A1T0", ["SYNCS"]),
    ("DADD", ["DADD", "f64 ops"]),
    ("DMUL", ["DMUL", "f64 ops"]),
    ("DFMA", ["DFMA", "f64 ops"]),
    ("DSETP.GT.AND", ["DSETP", "f64 ops"]),
    ("DMNMX", ["DMNMX", "f64 ops"]),
    ("IADD3", []),
    ("F2FP.F16.F32.PACK_AB", []),
]


@pytest.mark.parametrize(("op", "keys"), SASS_KEYS, ids=[x[0] for x in SASS_KEYS])
def test_sass_instruction_keys(op: str, keys: list[str]) -> None:
    assert sass_key(op) == keys
    c = count_ops("sass", f"        /*0070*/                   {op} R1, R2 ;                 /* 0x000fe2 */\n")
    assert c["instructions"] == 1 and sum(c.values()) == 1 + len(keys)


def test_sass_instructions_read_both_listings() -> None:
    """Triton's ``ctrl<TAB>INSTR`` listing and plain ``cuobjdump -sass`` lines; labels, headers, directives,
    comments and never-true padding are not instructions; guards are dropped from the text."""
    text = (
        "Function:matmul_kernel\n"
        "--:-:-:-:2\tMOV R1, c[0x0][0x28];\n"
        "--:-:-:-:1\t@P1 LDG.E.U16 R6, [R10.64];\n"
        ".L_x_3:\n"
        "--:-:-:-:1\t@!UP0 BRA `(.L_x_3);\n"
        "\t.section .text\n"
        "// a comment\n"
        "--:-:-:-:1\t@!PT LDS RZ, [RZ];\n"
        "        /*0070*/                   LDGSTS.E.BYPASS.LTC128B.128 [R226], [R30.64], P0 ;  /* 0x000fe2 */\n"
        "        /*0080*/              @!P2 EXIT ;              /* 0x000fea0003800000 */\n"
        "--:-:-:-:1\tlower.case x;\n"
        "\n"
    )
    assert sass_instructions(text) == [
        (2, "MOV", "MOV R1, c[0x0][0x28];"),
        (3, "LDG.E.U16", "LDG.E.U16 R6, [R10.64];"),
        (5, "BRA", "BRA `(.L_x_3);"),
        (9, "LDGSTS.E.BYPASS.LTC128B.128", "LDGSTS.E.BYPASS.LTC128B.128 [R226], [R30.64], P0 ;"),
        (10, "EXIT", "EXIT ;"),
    ]
    c = count_ops("sass", text)
    assert c["instructions"] == 5 and c["LDG.E.U16"] == 1 and c["LDGSTS"] == 1 and "LDS" not in c


def test_mlir_counts() -> None:
    text = (
        "#blocked = #ttg.blocked<{sizePerThread = [1, 8]}>\n"
        'module attributes {"ttg.num-warps" = 4 : i32} {\n'
        "  tt.func public @k(%arg0: !tt.ptr<f16>) attributes {noinline = false} {\n"
        "    %0 = tt.get_program_id x : i32 loc(#loc1)\n"
        "    %c0_i32 = arith.constant 0 : i32\n"
        "    %a = tt.load %p, %m : tensor<128x!tt.ptr<f16>, #blocked> loc(#loc3)\n"
        "    %b:3 = scf.for %i = %c0 to %n step %c1 iter_args(%x = %y) -> (i32) : i32 {\n"
        '      %r = "tt.reduce"(%a) <{axis = 0 : i32}> ({\n'
        "      ^bb0(%q: f32, %w: f32):\n"
        "        %s = arith.addf %q, %w : f32\n"
        "        tt.reduce.return %s : f32\n"
        "      })\n"
        "      scf.yield %x : i32\n"
        "    } {tt.flatten}\n"
        "    // a comment tt.store\n"
        "    tt.store %q, %a : tensor<128x!tt.ptr<f16>>\n"
        "    tt.store %q, %a : tensor<128x!tt.ptr<f16>>\n"
        "    tt.return\n"
        "  }\n"
        "}\n"
        "{\n"
    )
    for stage in ("ttir", "ttgir"):
        c = count_ops(stage, text)
        nonzero = {k: v for k, v in c.items() if v}
        assert nonzero == {
            "tt.func": 1,
            "tt.get_program_id": 1,
            "arith.constant": 1,
            "tt.load": 1,
            "scf.for": 1,
            "tt.reduce": 1,
            "arith.addf": 1,
            "tt.reduce.return": 1,
            "scf.yield": 1,
            "tt.store": 2,
            "tt.return": 1,
        }, stage
        assert set(KEY_COUNTS[stage]) <= set(c)
    # an MLIR stage without a summary list (the source-level MLIR) counts what it sees and lists nothing else
    assert count_ops("source", text) == {k: v for k, v in count_ops("ttgir", text).items() if v}


def test_llir_counts() -> None:
    text = (
        "define ptx_kernel void @k(ptr addrspace(1) %0, i64 %1) local_unnamed_addr #0 !dbg !5 {\n"
        "  %3 = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.x(), !dbg !8\n"
        "  ; an indented comment: not an instruction, and the instructions after it still count\n"
        "  %4 = sdiv i64 %1, 7, !dbg !9\n"
        "  %5 = srem i64 %1, 7\n"
        "  %13 = srem i64 %5, 3\n"
        "  %6 = add nuw nsw i32 %3, 1\n"
        "  %7 = mul <4 x i32> %v, %w\n"
        "  %8 = udiv exact i32 %3, 2\n"
        "  %9 = fadd float %a, %b\n"
        '  tail call void asm sideeffect "@$3 cp.async.cg.shared.global [ $0 + 0 ], [ $1 + 0 ], 0x10, $2;", '
        '"r,l,r,b"(ptr addrspace(3) %x, ptr addrspace(1) %y, i32 16, i1 true)\n'
        '  %10 = tail call { i32, i32 } asm sideeffect "mov.u32 $0, 0x0;", "=r"()\n'
        '  %11 = call i32 asm "add.s32 $0, $1, 1;", "=r,r"(i32 %3)\n'
        "  %12 = load <4 x i32>, ptr addrspace(1) %0, align 16\n"
        "  store i32 %6, ptr addrspace(1) %0, align 4\n"
        "  ret void\n"
        "}\n"
        "declare i32 @llvm.nvvm.read.ptx.sreg.tid.x() #1\n"
        '!5 = distinct !DISubprogram(name: "k")\n'
    )
    c = count_ops("llir", text)
    assert {k: v for k, v in c.items() if v} == {
        "call": 4,
        "sdiv": 1,
        "sdiv i64": 1,
        "srem": 2,
        "srem i64": 2,
        "add": 1,
        "add i32": 1,
        "mul": 1,
        "mul i32": 1,
        "udiv": 1,
        "udiv i32": 1,
        "fadd": 1,
        "asm cp.async": 1,
        "asm mov.u32": 1,
        "asm add.s32": 1,
        "load": 1,
        "store": 1,
        "ret": 1,
    }
    assert set(KEY_COUNTS["llir"]) <= set(c)


def test_other_stages_count_nothing() -> None:
    assert count_ops("python", "x = 1\n") == {} and count_ops("sass-raw-bytes", "LDG.E R1;") == {}


def test_memos_give_the_same_instructions_after_clearing() -> None:
    ptx, sass = "\tld.global.b16 { %rs1 }, [ %rd1 + 0 ];\n", "--:-:-:-:1\tLDG.E.U16 R6, [R10.64];\n"
    before = (ptx_instructions(ptx), sass_instructions(sass))
    clear_memos()
    assert (ptx_instructions(ptx), sass_instructions(sass)) == before and before[0] and before[1]


def test_matmul_stages_agree_on_what_they_count(matmul_sm86: Bundle) -> None:
    """sm86 matmul: the unannotated variant (unit strides specialized) copies tiles with 16-byte ``cp.async`` (SASS
    ``LDGSTS.E.128``), the annotated one (runtime strides) loads 2-byte scalars (``ld.global.b16``, SASS
    ``LDG.E.U16``); both multiply with
    ``mma.sync.m16n8k16`` f16 (one SASS ``HMMA`` each, one LLIR inline-asm call each) and read shared memory with
    ``ldmatrix`` (SASS ``LDSM``)."""
    for name, v in matmul_sm86.variants.items():
        c = {st: Counter(count_ops(st, v.text(st))) for st in ("llir", "ptx", "sass")}
        ptx, sass, llir = c["ptx"], c["sass"], c["llir"]
        assert ptx["mma.sync"] == ptx["mma.sync.m16n8k16"] == ptx["mma.sync.f16"] == sass["HMMA"] > 0, name
        assert llir["asm mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"] == ptx["mma.sync"], name
        assert ptx["ldmatrix"] == sass["LDSM"] > 0 and ptx["bar.sync"] == sass["BAR"] > 0, name
        assert ptx["cp.async 16B"] == sass["LDGSTS.E.128"] == sass["LDGSTS"] == llir["asm cp.async"], name
        assert ptx["ld.global.b16"] == sass["LDG.E.U16"] and ptx["st.global.b16"] == sass["STG.E.U16"], name
        assert ptx["st.global.v4.b32"] == sass["STG.E.128"], name
        assert ptx["instructions"] == len(ptx_instructions(v.text("ptx"))) > 500, name
        assert sass["instructions"] == len(sass_instructions(v.text("sass"))) > 500, name
        assert ptx["f64 ops"] == sass["f64 ops"] == 0, name
    un, an = (
        count_ops("ptx", matmul_sm86.variants[n].text("ptx")) for n in ("unannotated", "annotated")
    )  # fmt: skip
    assert un["cp.async 16B"] > 0 and un["ld.global.b16"] == 0  # async 16-byte tile copies
    assert an["cp.async 16B"] == 0 and an["ld.global.b16"] > 0  # 2-byte scalar loads
