"""Helpers of ``irdiff/diagnose/facts.py`` on real IR text: element widths, SSA name hints, MLIR locations, the
LLIR/PTX global accesses a load/store was lowered to, SASS calls, the occupancy model and the target's arch.

No compile: the lines are copied from compiles of ``tests/suites/diag_loop.py`` (``rowsum`` on sm90: LLIR, PTX,
TTGIR) or written as Triton, LLVM and ptxas print them. Kept apart from ``tests/test_facts.py`` (whose tests extract
the facts of whole compiles) so that the mutation run of the helpers (``benchmarks/mutation.py``) is fast.
"""

from __future__ import annotations

from irdiff.diagnose.facts import Ref


def test_element_widths() -> None:
    from irdiff.diagnose.facts import elem_bits

    assert [elem_bits(e) for e in ("f16", "bf16", "f32", "f64", "i1", "i8", "i64", "f8E5M2", "tf32")] == [
        16, 16, 32, 64, 8, 8, 64, 8, 32,
    ]  # fmt: skip
    # not in the table: the digits after the type letters, else 32
    assert (elem_bits("i128"), elem_bits("ui16"), elem_bits("f8E4M3B11FNUZ"), elem_bits("index")) == (128, 16, 8, 32)


def test_python_name_of_an_ssa_value() -> None:
    from irdiff.diagnose.facts import _stem

    assert [_stem(s) for s in ("%a_ptrs_43", "%acc", "%acc_8#1", "%x:2", "%mask_12_3")] == [
        "a_ptrs", "acc", "acc", "x", "mask_12",
    ]  # fmt: skip
    assert [_stem(s) for s in ("%107", "%arg3", "%cst_0", "%c16_i32", "%c0", "")] == [""] * 6
    assert _stem("%argmax") == "argmax" and _stem("%count") == "count" and _stem("%X_tile_2") == "X_tile"


def test_bits_of_lowered_instructions() -> None:
    from irdiff.diagnose.facts import _global_bits, _llvm_type_bits

    assert [_global_bits(k) for k in ("ld.global.v4.b32", "ld.global.b16", "st.global.v2.b64", "ld.global.b32")] == [
        128, 16, 128, 32,
    ]  # fmt: skip
    assert _global_bits("ld.global.L1::evict_last.v2.b16") == 32 and _global_bits("st.global") == 32
    assert [_llvm_type_bits(t) for t in ("<4 x float>", " i32 ", "half", "<2 x bfloat>", "double", "<8 x i16>")] == [
        128, 32, 16, 32, 64, 128,
    ]  # fmt: skip
    assert _llvm_type_bits("ptr") is None and _llvm_type_bits("<4 x ptr>") is None


LLIR = """\
define ptx_kernel void @rowsum(ptr addrspace(1) %0, ptr addrspace(1) %1, i32 %2) local_unnamed_addr #0 !dbg !4 {
  %3 = add i32 %2, 1, !dbg !19
  %gep = getelementptr [2 x i8], ptr addrspace(1) %invariant.gep, i64 %17, !dbg !19
  %18 = tail call i32 asm sideeffect "mov.u32 $0, $1;\\0A\\09@$3 ld.global.b32 { $0 }, [ $2 + 0 ];", "=r,r,l,b"(i32 0, ptr addrspace(1) %gep, i1 %15) #2, !dbg !20
  %5 = load <4 x float>, ptr addrspace(1) %4, align 16, !dbg !21
  store <4 x float> %8, ptr addrspace(1) %7, align 16, !dbg !23
  store i16 %9, ptr addrspace(1) %7, align 2
  %6 = load ptr, ptr addrspace(1) %4, align 8, !dbg !21
  tail call void asm sideeffect "st.global.v2.b32 [ $2 + 0 ], { $0, $1 };", "r,r,l"(i32 %84, i32 %85, ptr addrspace(1) %88) #2, !dbg !23
  tail call void asm sideeffect "fence.proxy.global;", ""() #2, !dbg !23
  %10 = tail call i32 asm sideeffect "ld.global.nc.b32 $0, [ $1 + 0 ];", "=r,l"(i64 %addr) #2, !dbg !19
  %13 = tail call i32 asm sideeffect "mov.u32 $0, 0x0;\\0A\\09ld.global.b32 { $0 }, [ $1 + 0 ];", "=r,l"(ptr addrspace(1) %12) #4, !dbg !20
!19 = !DILocation(line: 33, column: 24, scope: !4)
!20 = !DILocation(line: 33, column: 16, scope: !4)
!21 = distinct !DILocation(line: 40, scope: !4)
!23 = !DILocation(line: 34, column: 5, scope: !4)
"""


def test_global_accesses_in_llir() -> None:
    from irdiff.diagnose.facts import _llir_global_accesses

    got = [(k, bits, key, pos, ref.line) for k, bits, key, pos, ref in _llir_global_accesses(LLIR)]
    assert got == [
        ("load", 32, "ld.global.b32", (33, 16), 4),  # inline PTX of a masked load
        ("load", 128, "load <4 x float>", (40, 0), 5),  # a location without a column
        ("store", 128, "store <4 x float>", (34, 5), 6),
        ("store", 16, "store i16", None, 7),  # no !dbg
        ("store", 64, "st.global.v2.b32", (34, 5), 9),
        # inline PTX (tl.inline_asm_elementwise) given the address as an integer: no addrspace(1) on the line
        ("load", 32, "ld.global.b32", (33, 24), 11),
        # an unmasked load: no predicate, the instruction right after LLVM's printed tab (`\09ld.global`)
        ("load", 32, "ld.global.b32", (33, 16), 12),
    ]
    lines = LLIR.splitlines()
    assert all(ref == Ref("llir", ref.line, lines[ref.line - 1].strip()) for *_, ref in _llir_global_accesses(LLIR))
    # a line that mentions asm and .global but holds no inline-asm string (an LLVM comment) is skipped, and the
    # accesses after it are still read
    commented = "; asm for ld.global.v4.b32 comes from the masked loads\n" + LLIR
    assert [(k, ref.line - 1) for k, _, _, _, ref in _llir_global_accesses(commented)] == [(g[0], g[4]) for g in got]


PTX = """\
	.loc	1 30 1                          // diag_loop.py:30:1
	.loc	1 32 5                          // diag_loop.py:32:5
	ld.global.b16 	%rs1, [%rd1];
	.loc	1 31 2                          // diag_loop.py:31:2
	// begin inline asm
	.loc	1 33 16                         // diag_loop.py:33:16
	mov.u32 %r7, 0x0;
	.loc	1 34 16                         // diag_loop.py:34:16
	@%p2 ld.global.v4.b32 { %r7, %r8, %r9, %r10 }, [ %rd5 + 0 ];
	// end inline asm
	.loc	1 34 5                          // diag_loop.py:34:5
	st.global.b32 [ %rd22 + 0 ], { %r49 };
	add.s32 	%r1, %r2, %r3;
"""


def test_global_accesses_in_ptx_take_the_first_loc_of_an_asm_block() -> None:
    from irdiff.diagnose.facts import _ptx_global_accesses

    got = _ptx_global_accesses(PTX)
    assert [(k, bits, key, pos) for k, bits, key, pos, _ in got] == [
        ("load", 16, "ld.global.b16", (32, 5)),  # the last .loc before it
        # inside the block LLVM advanced the line (34): the block's first .loc (33:16) is the op's, not the one
        # before the block (31:2)
        ("load", 128, "ld.global.v4.b32", (33, 16)),
        ("store", 32, "st.global.b32", (34, 5)),
    ]
    assert [r for *_, r in got] == [
        Ref("ptx", 3, "ld.global.b16 \t%rs1, [%rd1];"),
        Ref("ptx", 9, "ld.global.v4.b32 { %r7, %r8, %r9, %r10 }, [ %rd5 + 0 ];"),  # the instruction, predicate off
        Ref("ptx", 12, "st.global.b32 [ %rd22 + 0 ], { %r49 };"),
    ]
    assert _ptx_global_accesses("\tld.global.b32 %r1, [%rd1];\n")[0][3] is None  # no .loc before it


TTGIR_LOCS = """\
#loc = loc("/k.py":28:1)
#loc3 = loc("/k.py":33:16)
#loc4 = loc("/other.py":7:3)
#loc20 = loc("acc"(#loc3))
#loc21 = loc(callsite(#loc4 at #loc3))
#loc22 = loc(fused[#loc3, #loc4])
#loc23 = loc(#loc20)
#loc30 = loc(#loc31)
#loc31 = loc(#loc30)
    %acc_12 = tt.load %acc_7, %acc_11 : tensor<256x!tt.ptr<f16>> loc(#loc23)
"""


def test_locations_resolve_through_names_call_sites_and_fusions() -> None:
    from irdiff.diagnose.facts import _loc_table, _op_pos, _resolve_loc, _resolve_pos, python_ref

    table = _loc_table(TTGIR_LOCS)
    assert table["#loc"] == '"/k.py":28:1' and table["#loc21"] == "callsite(#loc4 at #loc3)" and len(table) == 9
    assert _resolve_pos("#loc20", table) == ("/k.py", 33, 16)  # a name hint wraps the position
    assert _resolve_pos(table["#loc21"], table) == ("/other.py", 7, 3)  # the call site's own (innermost) position
    assert _resolve_pos(table["#loc22"], table) == ("/k.py", 33, 16)  # a fusion: its first location
    assert _resolve_pos("#loc23", table) == ("/k.py", 33, 16) and _resolve_loc(" #loc23 ", table) == ("/k.py", 33)
    assert _resolve_pos("#loc30", table) is None  # a cycle ends after 40 steps
    assert _resolve_pos("unknown", table) is None and _resolve_loc("#loc99", table) is None
    op = TTGIR_LOCS.splitlines()[-1]
    assert _op_pos(op + "  ", table) == (33, 16) and _op_pos("%x = arith.addi %a, %b : i32", table) is None
    src = "\n".join(f"line {i}" for i in range(1, 41))
    assert python_ref(op, table, "/k.py", src) == Ref("python", 33, "line 33")
    assert python_ref(op, table, "", src) == Ref("python", 33, "line 33")
    assert python_ref(op, table, "/elsewhere.py", src) is None  # another file than the kernel's source
    assert python_ref(op, table, "/k.py", "line 1\nline 2") is None  # beyond the saved source
    assert python_ref("%x = arith.addi %a, %b : i32 loc(#loc99)", table, "/k.py", src) is None


def test_sass_calls_whose_target_cannot_be_followed() -> None:
    from irdiff.diagnose.facts import sass_calls

    far = "Function:k\n--:-:-:-:1\tCALL.REL.NOINC 0x9000;\n--:-:-:-:1\tEXIT;\n"
    assert [r.line for r in sass_calls(far)[1]] == [2] and sass_calls(far)[0] == []  # no RET anywhere: a branch
    ret = far + "--:-:-:-:1\tRET.REL.NODEC R6 0x0;\n"
    subs, branches = sass_calls(ret)
    assert [(r.stage, r.line, r.text) for r in subs] == [("sass", 2, "CALL.REL.NOINC 0x9000;")] and branches == []
    # a target given without an offset (an absolute symbol) counts the same way
    sym = "Function:k\n--:-:-:-:1\tCALL.ABS.NOINC `(__internal_0);\n--:-:-:-:1\tRET.ABS R20;\n"
    assert [r.line for r in sass_calls(sym)[0]] == [2]


def test_occupancy_without_registers_or_shared_memory() -> None:
    from irdiff.diagnose.facts import occupancy

    o = occupancy(80, 8, None, None)
    assert o is not None and o.limits == {"warps": 8, "CTA slots": 32} and (o.ctas_per_sm, o.limiter) == (8, "warps")
    assert o.warps_per_sm == 64 and "CUDA C++ Programming Guide" in o.source
    assert occupancy(90, 0, 32, 0) is None and occupancy(0, 4, 32, 0) is None
    # 100 KB of shared memory per SM on sm89: 48 KB + 1 KB reserved fits twice
    o = occupancy(89, 4, 0, 48 * 1024)
    assert (
        o is not None
        and o.limits == {"shared memory": 2, "warps": 12, "CTA slots": 24}
        and o.limiter == "shared memory"
    )


def test_arch_from_target_or_metadata() -> None:
    from irdiff.diagnose.facts import arch_of

    assert arch_of("sm_90a", {}) == 90 and arch_of("sm86", {"arch": "sm80"}) == 86
    assert arch_of("", {"arch": "sm80"}) == 80 and arch_of("gfx942", {"arch": "sm89"}) == 0  # AMD: parsed, not CUDA
    assert arch_of("", {}) == 0 and arch_of("nonsense", {"arch": "nonsense"}) == 0


LONG = "%x_tile_loaded_with_a_long_python_name_from_the_kernel_source_of_a_user_0123456789"
LOG = f"""\
[tritongpu-coalesce]: axis info of pointer: contiguity = [8], divisibility = [8], constancy = [1], constant_value = <none>
[tritongpu-coalesce]: Considering op: %16 = tt.load %14, %15, %cst_0 : tensor<256x!tt.ptr<f16>, #ttg.blocked<{{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}}>>
[tritongpu-coalesce]: axis info of pointer: contiguity = [256], divisibility = [16], constancy = [1], constant_value = <none>
[tritongpu-coalesce]: order=[0]
[tritongpu-coalesce]: shapePerCTA=[256]
[tritongpu-coalesce]: perThread for op: 8
[tritongpu-coalesce]: perThread: 2
[some-other-pass]: perThread: 64
[tritongpu-coalesce]: Considering op: %15 = ttg.async_copy_global_to_local %10, %12 mask %14 other %cst {{contiguity = 2 : i32}} : tensor<256x!tt.ptr<f16>, #blocked>
[tritongpu-coalesce]: axis info of pointer: contiguity = [256], divisibility = [16], constancy = [1], constant_value = <none>
[tritongpu-coalesce]: perThread: 2
[tritongpu-coalesce]: Considering op: %20 = tt.atomic_rmw fadd, acq_rel, gpu, %18, %19 : (tensor<256x!tt.ptr<f32>, #blocked>, tensor<256xf32, #blocked>) -> tensor<256xf32, #blocked>
[tritongpu-coalesce]: axis info of pointer: contiguity = [256], divisibility = [16], constancy = [1], constant_value = <none>
[tritongpu-coalesce]: perThread: 4
[tritongpu-coalesce]: Considering op: tt.store %8, %9 : tensor<64x64x!tt.ptr<bf16>, #ttg.blocked<{{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}}>>
[tritongpu-coalesce]: axis info of pointer: contiguity = [1, 4], divisibility = [2, 4], constancy = [1, 1], constant_value = <none>
[tritongpu-coalesce]: order=[1, 0]
[tritongpu-coalesce]: perThread: 8
[tritongpu-coalesce]: Considering op: %3 = tt.load %2 : tensor<128x!tt.ptr<f32>, #blocked>
[tritongpu-coalesce]: order=[0]
[tritongpu-coalesce]: Considering op: {LONG} = tt.load %14 : tensor<256x!tt.ptr<f16>, #blocked>
[tritongpu-coalesce]: axis info of pointer: contiguity = [4], divisibility = [4], constancy = [1], constant_value = <none>
[tritongpu-coalesce]: perThread: 8
[triton-loop-pipeline]: Load ops in the loop: 3
[triton-loop-pipeline]: Load %16 = tt.load %14, %15, %cst : tensor<256x!tt.ptr<f16>, #ttg.blocked<{{sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}}>> has width 32
[triton-loop-pipeline]: Load %16 = tt.load %14, %15, %cst : tensor<256x!tt.ptr<f16>, #ttg.blocked<{{sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}}>> considered for pipelining with distance 0
[triton-loop-pipeline]: Load %16 = tt.load %14, %15, %cst {{loop.cluster = 2 : i32, loop.stage = 0 : i32}} : tensor<256x!tt.ptr<f16>, #ttg.blocked<{{sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}}>> has width 32
[triton-loop-pipeline]: Load %7 = tt.load %6 : tensor<64x!tt.ptr<i8>, #blocked> has width 8
[triton-loop-pipeline]: Load %7 = tt.load %6 : tensor<64x!tt.ptr<i8>, #blocked> is too small for pipelining
[triton-loop-pipeline]: Load %9 = tt.load %g_ptr : !tt.ptr<f32> has width 32
[triton-loop-pipeline]: Load %30 = tt.load %29 : tensor<256x!tt.ptr<f16>, #blocked> considered for pipelining with distance 1
[triton-loop-pipeline]: Pipelining loop with num_stages = 3
"""
LINES = LOG.splitlines()


def test_coalesce_log_blocks() -> None:
    from irdiff.diagnose.facts import _coalesce_accesses, coalesce_facts

    blocks = _coalesce_accesses(LOG)
    # a block cut off at the top (axis info before any op), the async copy and the atomic (not a tt.load/tt.store of
    # the pass's own) and the other pass's line are not read; an op whose result name pushes `tt.load` past the
    # first 80 characters is
    assert [(b["kind"], b["ref"]) for b in blocks] == [
        ("load", Ref("llvm_debug", 2, LINES[1])),
        ("store", Ref("llvm_debug", 15, LINES[14])),
        ("load", Ref("llvm_debug", 19, LINES[18])),
        ("load", Ref("llvm_debug", 21, LINES[20])),
    ]
    load, store, bare, long = blocks
    assert (load["contiguity"], load["divisibility"], load["order"], load["per_thread"]) == ([256], [16], [0], 2)
    assert load["axis_ref"] == Ref("llvm_debug", 3, LINES[2])
    assert load["per_thread_ref"] == Ref("llvm_debug", 7, LINES[6])
    assert (store["contiguity"], store["divisibility"], store["order"], store["per_thread"]) == (
        [1, 4],
        [2, 4],
        [1, 0],
        8,
    )
    assert "contiguity" not in bare and "per_thread" not in bare
    assert (long["contiguity"], long["per_thread"], long["op"].split(" = ")[0]) == ([4], 8, LONG)
    names = {("load", (256,), "f16"): [("x", "x_ptrs"), ("t", "t_ptrs")], ("store", (64, 64), "bf16"): [("", "out")]}
    acc = coalesce_facts(LOG, names)
    # the block without axis info is left out; widths: min(perThread, contiguity, alignment) x element bits;
    # two loads of the same shape and type take the names in order
    assert [(a.kind, a.shape, a.elem, a.elem_bits, a.name, a.pointer, a.vector_bits) for a in acc] == [
        ("load", [256], "f16", 16, "x", "x_ptrs", 32),  # 2 per thread (contiguity 256, 16-byte alignment allow 8)
        ("store", [64, 64], "bf16", 16, "", "out", 32),  # fastest dim 1: contiguity 4, 4-byte alignment = 2 bf16
        ("load", [256], "f16", 16, "t", "t_ptrs", 32),  # 8 per thread, but 4-byte alignment: 2 x 16 bits
    ]
    assert acc[0].label == "`x` load 256xf16" and acc[1].label == "store 64x64xbf16"
    assert (acc[0].ref.line, acc[0].axis_ref.line, acc[0].per_thread_ref.line) == (2, 3, 7)
    assert coalesce_facts(LOG, {})[2].name == ""


def test_pipeliner_log_decisions() -> None:
    from irdiff.diagnose.facts import _pipeliner_loads, pipeliner_facts

    loads = _pipeliner_loads(LOG)
    assert [(d["width"], d["pipelined"], d["reason"], [r.line for r in d["refs"]]) for d in loads] == [
        (32, True, "considered for pipelining with distance 0", [25, 26, 27]),
        (8, False, "is too small for pipelining", [28, 29]),
        (32, None, "", [30]),  # a width and no decision
        (None, True, "considered for pipelining with distance 1", [31]),  # a decision and no width
    ]
    assert loads[0]["refs"][0] == Ref("llvm_debug", 25, LINES[24])
    names = {("load", (256,), "f16"): [("x", "x_ptrs"), ("t", "t_ptrs")]}
    got = pipeliner_facts(LOG, names)
    assert [(p.shape, p.elem, p.width_bits, p.pipelined, p.reason, p.name) for p in got] == [
        ([256], "f16", 32, True, "considered for pipelining with distance 0", "x"),
        ([64], "i8", 8, False, "is too small for pipelining", ""),
        ([], "", 32, False, "", ""),  # a scalar load: no tensor shape
        ([256], "f16", None, True, "considered for pipelining with distance 1", "t"),
    ]
    assert got[1].label == "load 64xi8" and got[0].label == "`x` load 256xf16"
    assert [r.line for r in got[0].refs] == [25, 26, 27]
    # three loads of one shape and type take the three names in order
    three = "".join(
        f"[triton-loop-pipeline]: Load %{n} = tt.load %{n - 1} : tensor<256x!tt.ptr<f16>, #blocked> has width 32\n"
        for n in (5, 7, 9)
    )
    names3 = {("load", (256,), "f16"): [("x", "x_ptrs"), ("y", "y_ptrs"), ("z", "z_ptrs")]}
    assert [p.name for p in pipeliner_facts(three, names3)] == ["x", "y", "z"]


TTIR_FUNC = (
    '  tt.func public @rowsum(%x_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32} loc("x_ptr"(#loc)), '
    '%y_ptr: !tt.ptr<f16> loc("y_ptr"(#loc)), %R: i32 {tt.divisibility = 16 : i32} loc("R"(#loc)), '
    '%n: i64 loc("n"(#loc))) attributes {noinline = false} {\n'
    "    tt.return loc(#loc9)\n"
)


def test_signature_fragments_per_parameter() -> None:
    from irdiff.diagnose.facts import _func_signature_args

    sig = _func_signature_args("module {\n" + TTIR_FUNC + "  }\n}\n")
    assert {k: (r.stage, r.line, r.text) for k, r in sig.items()} == {
        "x_ptr": ("ttir", 2, "%x_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32}"),
        "y_ptr": ("ttir", 2, "%y_ptr: !tt.ptr<f16>"),
        "R": ("ttir", 2, "%R: i32 {tt.divisibility = 16 : i32}"),
        "n": ("ttir", 2, "%n: i64"),
    }
    assert _func_signature_args("module {\n}\n") == {}
    # real TTIR declares its locations (``#loc = loc(...)``, with parentheses) before the module
    head = '#loc = loc("/k.py":28:1)\n#loc9 = loc("/k.py":40:4)\nmodule {\n'
    assert _func_signature_args(head + TTIR_FUNC + "  }\n}\n") == {k: Ref("ttir", 4, r.text) for k, r in sig.items()}


TTGIR_HEAD = """\
#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#loc = loc("/k.py":28:1)
#mma = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>
#mma1 = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], CTAsPerCGA = [1, 1], instrShape = [16, 8]}>
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
#odd = #ttg.nvidia_mma<{}>
"""


def test_layouts_declared_at_the_top_of_ttgir() -> None:
    from irdiff.diagnose.facts import ttgir_layout_facts

    blocked, mma = ttgir_layout_facts(TTGIR_HEAD)
    lines = TTGIR_HEAD.splitlines()
    assert [
        (b["alias"], b["sizePerThread"], b["threadsPerWarp"], b["warpsPerCTA"], b["order"], b["ref"]) for b in blocked
    ] == [
        ("#blocked", [1, 8], [4, 8], [4, 1], [1, 0], {"stage": "ttgir", "line": 1, "text": lines[0]}),
        ("#blocked1", [2], [32], [4], [0], {"stage": "ttgir", "line": 2, "text": lines[1]}),
    ]
    assert [(m["alias"], m["version"], m["instrShape"], m["warpsPerCTA"], m["ref"]["line"]) for m in mma] == [
        ("#mma", 3, [16, 64, 16], [4, 1], 4),
        ("#mma1", 2, [16, 8], [2, 2], 5),
        ("#odd", None, [], [], 7),
    ]
    assert mma[0]["ref"] == {"stage": "ttgir", "line": 4, "text": lines[3]}
    assert ttgir_layout_facts("#blocked = #ttg.blocked<{}>\n")[0][0]["order"] == []


LOG2 = """\
[tritongpu-coalesce]: Considering op: %5 = tt.load %4 : tensor<1024x!tt.ptr<f16>, #blocked>
[tritongpu-coalesce]: axis info of pointer: contiguity = [1024], divisibility = [64], constancy = [1], constant_value = <none>
[tritongpu-coalesce]: order=[0]
[tritongpu-coalesce]: perThread: 16
[tritongpu-coalesce]: Considering op: %7 = tt.load %6 : tensor<32x64x!tt.ptr<f32>, #blocked>
[tritongpu-coalesce]: axis info of pointer: contiguity = [1, 64]
[tritongpu-coalesce]: perThread: 8
[tritongpu-coalesce]: Considering op: %9 = tt.load %8 : tensor<32x64x!tt.ptr<f32>, #blocked>
[tritongpu-coalesce]: axis info of pointer: contiguity = [32], divisibility = [16, 8], constancy = [1, 1], constant_value = <none>
[tritongpu-coalesce]: perThread: 8
"""


def test_vector_width_caps_and_defaults() -> None:
    from irdiff.diagnose.facts import coalesce_facts

    wide, nodiv, short = coalesce_facts(LOG2, {})
    # 16 contiguous, 64-byte aligned f16 per thread would be 256 bits: one instruction moves at most 128
    assert (wide.per_thread, wide.vector_bits, wide.order) == (16, 128, [0])
    # no order line: the last dimension is the fastest; no divisibility: the element's own alignment (4 B = 1 f32)
    assert (nodiv.order, nodiv.divisibility, nodiv.contiguity, nodiv.vector_bits) == ([], [], [1, 64], 32)
    # contiguity known for fewer dimensions than the shape: the fastest one counts as 1 contiguous element
    assert (short.contiguity, short.divisibility, short.vector_bits) == ([32], [16, 8], 32)


def test_location_chains_through_every_kind_and_the_depth_limit() -> None:
    from irdiff.diagnose.facts import _ptr_tensor, _resolve_pos

    table = {
        "#loc3": '"/k.py":33:16',
        "#loc20": '"acc"(#loc41)',  # a name hint around an alias
        "#loc41": "#loc3",
        "#loc42": "callsite(#loc20 at #loc3)",  # the callee is a name hint around an alias
        "#loc43": "fused[#loc41, #loc3]",
        "#loc44": '"x"(#loc99)',  # names a location that is not in the table
    }
    assert _resolve_pos("#loc20", table) == ("/k.py", 33, 16)
    assert _resolve_pos("#loc42", table) == ("/k.py", 33, 16)
    assert _resolve_pos("#loc43", table) == ("/k.py", 33, 16)
    assert _resolve_pos("#loc44", table) is None and _resolve_pos("callsite(#loc99 at #loc3)", table) is None
    assert _resolve_pos("fused[#loc99]", table) is None

    def chain(n: int) -> dict[str, str]:  # #loc100 -> #loc101 -> ... -> #loc(100+n) = a file position
        out = {f"#loc{100 + i}": f"#loc{101 + i}" for i in range(n)}
        out[f"#loc{100 + n}"] = '"/k.py":1:2'
        return out

    # 40 steps of aliases are followed (the 40th lands on the position), then the walk stops
    assert _resolve_pos("#loc100", chain(39)) == ("/k.py", 1, 2) and _resolve_pos("#loc100", chain(40)) is None
    named = {f"#loc{100 + i}": f'"n{i}"(#loc{101 + i})' for i in range(39)} | {"#loc139": '"/k.py":1:2'}
    assert _resolve_pos("#loc100", named) == ("/k.py", 1, 2)
    cycles = {"#loc50": '"a"(#loc51)', "#loc51": '"b"(#loc50)', "#loc52": "callsite(#loc53 at #loc3)"}
    cycles |= {"#loc53": "callsite(#loc52 at #loc3)", "#loc54": "fused[#loc55]", "#loc55": "fused[#loc54]"}
    assert [_resolve_pos(x, cycles) for x in ("#loc50", "#loc52", "#loc54")] == [None] * 3  # cycles end
    # a tensor descriptor's block (TMA) and a pointer tensor
    desc = "%a = tt.descriptor_load %d[%c0_i32, %k] : !tt.tensordesc<64x32xf16> -> tensor<64x32xf16>"
    assert _ptr_tensor(desc) == ([64, 32], "f16")
    assert _ptr_tensor("tt.store %p, %v : tensor<8x16x!tt.ptr<bf16>, #blocked>") == ([8, 16], "bf16")
    assert _ptr_tensor("%g = tt.load %g_ptr : !tt.ptr<f32>") is None


def test_sass_call_targets_at_the_edges() -> None:
    from irdiff.diagnose.facts import sass_calls

    def listing(*ops: str) -> str:
        return "Function:k\n" + "".join(f"--:-:-:-:1\t{o};\n" for o in ops)

    # CALL to offset 0: the code from the first instruction reaches EXIT first: a branch, although a RET exists
    subs, branches = sass_calls(listing("NOP", "EXIT", "CALL.REL.NOINC 0x0", "RET.REL.NODEC R6 0x0"))
    assert (subs, [r.line for r in branches]) == ([], [4])
    # a target one past the last instruction cannot be followed: a subroutine call because the function has a RET
    subs, branches = sass_calls(listing("CALL.REL.NOINC 0x30", "RET.REL.NODEC R6 0x0", "EXIT"))
    assert ([r.line for r in subs], branches) == ([2], [])
    # a target followed by neither RET nor EXIT: not a subroutine
    subs, branches = sass_calls(listing("CALL.REL.NOINC 0x10", "NOP"))
    assert (subs, [r.line for r in branches]) == ([], [2])
    # no offset: decided by the whole function (a RET somewhere), not by the code after instruction 1
    subs, branches = sass_calls(listing("CALL.ABS.NOINC `(__internal_0)", "EXIT", "RET.ABS R20"))
    assert ([r.line for r in subs], branches) == ([2], [])


# TTGIR as Triton prints it for `x_ptr + offs_m[:, None] * 4 + offs_n[None, :]` (a 64x64 block of f32, sm80; locs
# stripped), and the other index ops address_strides models, each on its own value
_BLOCK = (
    "#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>"
)
_S1 = "tensor<64xi32, #ttg.slice<{dim = 1, parent = #blocked}>>"
_S0 = "tensor<64xi32, #ttg.slice<{dim = 0, parent = #blocked}>>"
_T1 = "tensor<64x1xi32, #blocked>"
_T0 = "tensor<1x64xi32, #blocked>"
_T2 = "tensor<64x64xi32, #blocked>"
_P2 = "tensor<64x64x!tt.ptr<f32>, #blocked>"
_STRIDES_TTGIR = f"""{_BLOCK}
module attributes {{"ttg.num-warps" = 4 : i32, ttg.target = "cuda:80", "ttg.threads-per-warp" = 32 : i32}} {{
  tt.func public @k(%x_ptr: !tt.ptr<f32> {{tt.divisibility = 16 : i32}}, %N: i32, %flag: i1) {{
    %c2_i32 = arith.constant 2 : i32
    %c4_i32 = arith.constant 4 : i32
    %cst = arith.constant dense<4> : {_T1}
    %cst_0 = arith.constant dense<4> : {_S0}
    %cst_1 = arith.constant dense<64> : {_S0}
    %cst_2 = arith.constant dense<[1, 2, 3, 5]> : tensor<4xi32, #blocked>
    %offs_m = tt.make_range {{end = 64 : i32, start = 0 : i32}} : {_S1}
    %offs_n = tt.make_range {{end = 64 : i32, start = 0 : i32}} : {_S0}
    %0 = tt.expand_dims %offs_m {{axis = 1 : i32}} : {_S1} -> {_T1}
    %1 = arith.muli %0, %cst : {_T1}
    %2 = tt.expand_dims %offs_n {{axis = 0 : i32}} : {_S0} -> {_T0}
    %3 = tt.broadcast %1 : {_T1} -> {_T2}
    %4 = tt.broadcast %2 : {_T0} -> {_T2}
    %5 = arith.addi %3, %4 : {_T2}
    %6 = tt.splat %x_ptr : !tt.ptr<f32> -> {_P2}
    %7 = tt.addptr %6, %5 : {_P2}, {_T2}
    %8 = arith.subi %4, %3 : {_T2}
    %9 = tt.splat %N : i32 -> {_S0}
    %10 = tt.splat %N : i32 -> {_T2}
    %11 = tt.splat %c4_i32 : i32 -> {_S0}
    %12 = ttg.convert_layout %11 : {_S0} -> {_S0}
    %13 = arith.shli %offs_n, %12 : {_S0}
    %14 = arith.shli %offs_n, %9 : {_S0}
    %15 = arith.muli %offs_n, %9 : {_S0}
    %16 = arith.shli %15, %12 : {_S0}
    %17 = arith.muli %15, %cst_0 : {_S0}
    %18 = arith.muli %cst_0, %offs_n : {_S0}
    %19 = arith.muli %cst_0, %15 : {_S0}
    %20 = arith.muli %9, %offs_n : {_S0}
    %21 = arith.muli %10, %4 : {_T2}
    %22 = arith.muli %4, %10 : {_T2}
    %23 = arith.muli %offs_n, %offs_n : {_S0}
    %24 = arith.muli %23, %cst_0 : {_S0}
    %25 = arith.remsi %offs_n, %cst_1 : {_S0}
    %26 = arith.muli %25, %cst_0 : {_S0}
    %27 = tt.expand_dims %25 {{axis = 0 : i32}} : {_S0} -> {_T0}
    %28 = arith.muli %9, %11 : {_S0}
    %29 = tt.expand_dims %28 {{axis = 0 : i32}} : {_S0} -> {_T0}
    %30 = arith.muli %offs_n, %cst_0 : {_S0}
    %31 = arith.addi %30, %offs_n : {_S0}
    %32 = scf.if %flag -> ({_S0}) {{
      scf.yield %offs_n : {_S0}
    }} else {{
      scf.yield %30 : {_S0}
    }}
    %offs_4 = tt.make_range {{end = 4 : i32, start = 0 : i32}} : tensor<4xi32, #blocked>
    %33 = arith.muli %offs_4, %cst_2 : tensor<4xi32, #blocked>
    tt.return
  }}
}}
"""


def _strides_of(value: str, rank: int) -> list[int | None] | None:
    from irdiff.diagnose.facts import _walk_mlir, address_strides

    ops, _ = _walk_mlir(_STRIDES_TTGIR, "ttgir")
    return address_strides({r: o for o in ops for r in o.results}, value, rank)


def test_address_strides_of_ttgir_index_ops() -> None:
    """Element strides per dimension of the values of ``_STRIDES_TTGIR`` (``offs_m``/``offs_n``: aranges, stride 1;
    ``N``: a runtime i32, unknown; 0: every element of that dimension holds the same value)."""
    assert _strides_of("%7", 2) == [4, 1]  # x_ptr + offs_m[:, None] * 4 + offs_n[None, :]
    assert _strides_of("%6", 2) == [0, 0]  # the splatted base pointer: one address
    assert _strides_of("%8", 2) == [-4, 1]  # offs_n[None, :] - offs_m[:, None] * 4
    assert _strides_of("%13", 1) == [16]  # offs_n << 4 (a splat through convert_layout)
    assert _strides_of("%14", 1) is None  # offs_n << N: the shift is not a constant
    assert _strides_of("%15", 1) == [None]  # offs_n * N
    assert _strides_of("%16", 1) == [None]  # (offs_n * N) << 4
    assert _strides_of("%17", 1) == [None]  # (offs_n * N) * 4
    assert _strides_of("%18", 1) == [4]  # 4 * offs_n
    assert _strides_of("%19", 1) == [None]  # 4 * (offs_n * N)
    assert _strides_of("%20", 1) == [None]  # N * offs_n
    assert _strides_of("%21", 2) == [0, None] and _strides_of("%22", 2) == [0, None]  # N * offs_n[None, :], both ways
    assert _strides_of("%23", 1) is None  # offs_n * offs_n: not linear
    assert _strides_of("%24", 1) is None  # (offs_n * offs_n) * 4
    assert _strides_of("%25", 1) is None  # offs_n % 64: not linear (remsi is not modelled)
    assert _strides_of("%26", 1) is None and _strides_of("%27", 2) is None  # ... times 4, expanded
    assert _strides_of("%28", 1) == [0]  # N * 4 in every element (uniform times uniform)
    assert _strides_of("%29", 2) == [0, 0]  # a uniform value expanded stays uniform
    assert _strides_of("%31", 1) == [5]  # offs_n * 4 + offs_n: offs_n reached twice
    assert _strides_of("%32", 1) is None  # an scf.if's result: not followed
    assert _strides_of("%33", 1) == [None]  # times a constant that is not one number: unknown
    assert _strides_of("%7", 1) is None and _strides_of("%13", 2) is None  # a rank that does not match


def _chain_ttgir(kinds: list[str]) -> str:
    """A TTGIR value computed from ``offs = tt.make_range`` through ``kinds`` ops, the first one computing ``%r``:
    ``cvt`` (``ttg.convert_layout``), ``add0``/``add1`` (``arith.addi`` of the chain with a splat, the chain as first
    or second operand), ``mul0``/``mul1`` (``arith.muli`` by ``dense<4>``, likewise), ``exp`` (``tt.expand_dims``
    to 64x1). The op nearest the arange comes last in ``kinds``."""
    lines = [f"%v{len(kinds)} = tt.make_range {{end = 64 : i32, start = 0 : i32}} : {_S1}"]
    ty = _S1
    for i in range(len(kinds) - 1, -1, -1):
        k, src, dst = kinds[i], f"%v{i + 1}", f"%v{i}" if i else "%r"
        if k == "exp":
            lines.append(f"{dst} = tt.expand_dims {src} {{axis = 1 : i32}} : {ty} -> {_T1}")
            ty = _T1
        elif k == "cvt":
            lines.append(f"{dst} = ttg.convert_layout {src} : {ty} -> {ty}")
        else:
            other = "%cst" if k.startswith("mul") else "%s"
            a, b = (src, other) if k.endswith("0") else (other, src)
            lines.append(f"{dst} = arith.{'muli' if k.startswith('mul') else 'addi'} {a}, {b} : {ty}")
    head = [_BLOCK, "module {", "  tt.func public @k(%n: i32) {", f"    %cst = arith.constant dense<4> : {_T1}"]
    head.append(f"    %s = tt.splat %n : i32 -> {_T1}")
    return "\n".join(head + [f"    {x}" for x in lines] + ["    tt.return", "  }", "}"])


def test_address_strides_follow_60_ops_deep() -> None:
    """The walk from an address back to its arange stops 60 ops deep (a guard against deep recursion): with the
    arange 60 ops away the strides are known, 61 ops away they are not. Every kind of step counts one."""
    from irdiff.diagnose.facts import _walk_mlir, address_strides

    def strides(kinds: list[str]) -> list[int | None] | None:
        ops, _ = _walk_mlir(_chain_ttgir(kinds), "ttgir")
        return address_strides({r: o for o in ops for r in o.results}, "%r", 2)

    # every kind of step on the path: the additions and multiplications (2-D, above the expand_dims), then
    # convert_layouts down to the arange
    kinds = ["add0", "add1", "mul0", "mul1", "exp"] + ["cvt"] * 55
    assert strides(kinds) == [16, 0]  # two multiplications by 4 of the arange's stride 1
    assert strides(kinds + ["cvt"]) is None
    assert strides(["cvt"] * 59 + ["exp"]) == [1, 0] and strides(["cvt"] * 60 + ["exp"]) is None


def test_constant_factors_are_followed_8_ops_deep() -> None:
    """A factor is a constant when its value is an ``arith.constant`` reached through at most 8 splats/casts
    (``_const_int``): ``offs * c`` with ``c`` a splatted 4 behind ``k`` convert_layouts has stride 4 for k <= 7, and an
    unknown stride (a runtime factor) beyond."""
    from irdiff.diagnose.facts import _walk_mlir, address_strides

    def strides(k: int) -> list[int | None] | None:
        lines = [
            "%c4_i32 = arith.constant 4 : i32",
            f"%offs = tt.make_range {{end = 64 : i32, start = 0 : i32}} : {_S0}",
            f"%f{k} = tt.splat %c4_i32 : i32 -> {_S0}",
        ]
        lines += [f"%f{i} = ttg.convert_layout %f{i + 1} : {_S0} -> {_S0}" for i in range(k - 1, -1, -1)]
        lines.append(f"%r = arith.muli %offs, %f0 : {_S0}")
        text = "\n".join([_BLOCK, "module {", "  tt.func public @k() {", *lines, "    tt.return", "  }", "}"])
        ops, _ = _walk_mlir(text, "ttgir")
        return address_strides({r: o for o in ops for r in o.results}, "%r", 1)

    assert [strides(k) for k in (0, 1, 7)] == [[4]] * 3
    assert strides(8) == [None]


def test_loops_count_the_dots_directly_in_their_body() -> None:
    """``LoopFact.dots``: the ``tt.dot`` ops of a loop's own body (two in an attention-like K loop), none in a loop
    without them, and a dot outside every loop counts for none (TTGIR lines as Triton prints them, sm80)."""
    from irdiff.diagnose.facts import _walk_mlir

    acc = "tensor<64x64xf32, #mma>"
    a = "tensor<64x16xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>>"
    b = "tensor<16x64xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 2}>>"
    text = "\n".join(
        [
            "module {",
            "  tt.func public @k(%n: i32) {",
            f"    %a = arith.constant dense<1.000000e+00> : {a}",
            f"    %b = arith.constant dense<1.000000e+00> : {b}",
            f"    %cst = arith.constant dense<0.000000e+00> : {acc}",
            f"    %d0 = tt.dot %a, %b, %cst : {a} * {b} -> {acc}",
            f"    %acc:2 = scf.for %i = %c0_i32 to %n step %c1_i32 iter_args(%x = %cst, %y = %cst) -> ({acc}, {acc})"
            " : i32 {",
            f"      %d1 = tt.dot %a, %b, %x : {a} * {b} -> {acc}",
            f"      %d2 = tt.dot %a, %b, %y : {a} * {b} -> {acc}",
            f"      %e = arith.addf %d1, %d2 : {acc}",
            f"      scf.yield %e, %d2 : {acc}, {acc}",
            "    }",
            f"    %r = scf.for %j = %c0_i32 to %n step %c1_i32 iter_args(%z = %cst) -> ({acc}) : i32 {{",
            f"      %f = arith.addf %z, %cst : {acc}",
            f"      %g = scf.if %c -> ({acc}) {{",
            f"        scf.yield %f : {acc}",
            "      } else {",
            f"        scf.yield %z : {acc}",
            "      }",
            f"      scf.yield %g : {acc}",
            "    } loc(#loc9)",
            "    tt.return",
            "  }",
            "}",
        ]
    )
    ops, loops = _walk_mlir(text, "ttgir")
    assert [lp.dots for lp in loops] == [2, 0]
    # the second loop ends at its own closing line, after the `} else {` region of the if in it
    lines = text.splitlines()
    assert (loops[1].end_line, lines[loops[1].end_line - 1].strip(), loops[1].loc) == (
        len(lines) - 3,
        "} loc(#loc9)",
        "#loc9",
    )
    assert [o.op for o in ops if o.loop is loops[1]][-1] == "scf.yield"


_HEAVY_LINES = {  # one line of each memory/dot op kind as Triton prints it in TTGIR (sm80/sm90), locs stripped
    "tt.load": "%v{i} = tt.load %p : tensor<64x!tt.ptr<f32>, #blocked>",
    "tt.store": "tt.store %p, %c : tensor<64x!tt.ptr<f32>, #blocked>",
    "tt.dot": "%v{i} = tt.dot %a, %b, %c : tensor<64x16xf16, #dotA> * tensor<16x64xf16, #dotB> -> tensor<64x64xf32>",
    "tt.atomic_rmw": "%v{i} = tt.atomic_rmw fadd, acq_rel, gpu, %p, %c, %m : (tensor<64x!tt.ptr<f32>, #blocked>,"
    " tensor<64xf32, #blocked>, tensor<64xi1, #blocked>) -> tensor<64xf32, #blocked>",
    "tt.descriptor_load": "%v{i} = tt.descriptor_load %desc[%c0_i32, %i] : !tt.tensordesc<64x64xf16> ->"
    " tensor<64x64xf16, #blocked>",
    "ttg.async_copy_global_to_local": "%v{i} = ttg.async_copy_global_to_local %p, %buf : tensor<64x!tt.ptr<f32>,"
    " #blocked> -> <64xf32, #shared, #smem, mutable>",
}


def test_unroll_factor_counts_each_kind_of_memory_or_dot_op() -> None:
    """``tl.range(..., loop_unroll_factor=4)`` over a body of one memory/dot op: the unrolled loop holds 4 copies of
    it and the remainder loop (``tt.num_stages = 1``, same ``loc``) one, plus the loop's own index and yield ops in
    each. The factor is the ratio of those ops (4), not of all ops ((4 + 2) / (1 + 2) = 2), for every kind."""
    from irdiff.diagnose.facts import _walk_mlir

    for kind, line in _HEAVY_LINES.items():
        main = [line.format(i=i) for i in range(4)]
        text = "\n".join(
            [
                "module {",
                "  tt.func public @k(%n: i32, %m4: i32) {",
                "    scf.for %i = %c0_i32 to %m4 step %c4_i32  : i32 {",
                *(f"      {x}" for x in main),
                "      %j = arith.addi %i, %c1_i32 : i32",
                "      scf.yield",
                "    } loc(#loc7)",
                "    scf.for %i = %m4 to %n step %c1_i32  : i32 {",
                f"      {line.format(i=9)}",
                "      %j = arith.addi %i, %c1_i32 : i32",
                "      scf.yield",
                "    } {tt.num_stages = 1 : i32} loc(#loc7)",
                "    tt.return",
                "  }",
                "}",
            ]
        )
        _, loops = _walk_mlir(text, "ttgir")
        assert [(lp.unroll, lp.remainder) for lp in loops] == [(4, False), (1, True)], kind


def test_locations_at_their_limits_and_lines_without_a_location() -> None:
    """Edges of the location helpers: chains of call sites / fusions / aliases up to the 40-step limit, an alias that
    is not defined or resolves to nothing, ops on the first and last line of the saved source, and blanks kept by
    :func:`strip_loc` (MLIR location syntax: https://mlir.llvm.org/docs/Dialects/Builtin/#location-attributes)."""
    from irdiff.diagnose.facts import _op_pos, _resolve_loc, _resolve_pos, python_ref, strip_loc

    def nested(n: int, kind: str) -> dict[str, str]:  # #loc100 -> ... -> #loc(100+n) = a file position
        out = {"#loc3": '"/k.py":5:6', f"#loc{100 + n}": '"/k.py":1:2'}
        for i in range(n):
            out[f"#loc{100 + i}"] = {
                "callsite": f"callsite(#loc{101 + i} at #loc3)",
                "fused": f"fused[#loc{101 + i}, #loc3]",
                "alias": f"#loc{101 + i}",
            }[kind]
        return out

    # each call site and each fusion is one step of 40: 39 nested ones resolve, 40 do not
    for kind in ("callsite", "fused", "alias"):
        assert _resolve_pos("#loc100", nested(39, kind)) == ("/k.py", 1, 2), kind
        assert _resolve_pos("#loc100", nested(40, kind)) is None, kind
    # _resolve_loc starts at depth 0 too: 39 aliases resolve
    assert _resolve_loc("#loc100", nested(39, "alias")) == ("/k.py", 1)
    # an op whose alias is not defined, or resolves to nothing (a cycle), has no position
    table = {"#loc1": '"/k.py":1:3', "#loc2": '"/k.py":3:9', "#loc8": "#loc9", "#loc9": "#loc8"}
    assert _op_pos("%x = arith.addi %a, %b : i32 loc(#loc7)", table) is None
    assert _op_pos("%x = arith.addi %a, %b : i32 loc(#loc8)", table) is None
    assert _op_pos("%x = arith.addi %a, %b : i32 loc(#loc2)", table) == (3, 9)
    # ops on the first and the last line of the saved source keep their Python line
    src = "def k(x):\n    y = x + 1\n    return y"
    assert python_ref("%x = arith.addi %a, %b : i32 loc(#loc1)", table, "/k.py", src) == Ref("python", 1, "def k(x):")
    assert python_ref("%x = arith.addi %a, %b : i32 loc(#loc2)", table, "/k.py", src) == Ref("python", 3, "return y")
    # blanks before a location are kept (leading indentation too); trailing blanks are stripped
    assert strip_loc("    %x = arith.addi %a, %b : i32 loc(#loc3)  ") == "    %x = arith.addi %a, %b : i32"
    sig = '  tt.func @k(%x: i32 loc("x"(#loc)), %y: i32 loc("y"(#loc))) {'
    assert strip_loc(sig) == "  tt.func @k(%x: i32 , %y: i32 ) {"


def test_occupancy_limits_are_whole_ctas() -> None:
    """Every limit is an int count of CTAs (a rule prints ``12 CTAs``, never ``12.0``): 40 registers/thread on sm80
    round to 1280 per warp; 65536 / 1280 = 51 warps, 12 CTAs of 4 warps; 2048 threads = 64 warps = 16 CTAs."""
    from irdiff.diagnose.facts import occupancy

    o = occupancy(80, 4, 40, 0)
    assert o is not None and o.limits == {"registers": 12, "shared memory": 164, "warps": 16, "CTA slots": 32}
    assert [type(v) for v in o.limits.values()] == [int] * 4 and type(o.ctas_per_sm) is int
    assert f"{o.limits['warps']} CTAs, {o.limits['registers']} CTAs" == "16 CTAs, 12 CTAs"


LOG3 = """\
[tritongpu-coalesce]: Considering op: %7 = tt.load %6 : tensor<64x32x!tt.ptr<f32>, #blocked>
[tritongpu-coalesce]: axis info of pointer: contiguity = [4, 1], divisibility = [16, 4], constancy = [1, 1], constant_value = <none>
[tritongpu-coalesce]: order=[0, 1]
[tritongpu-coalesce]: perThread: 4
[tritongpu-coalesce]: Considering op: %9 = tt.load %8 : tensor<128x!tt.ptr<f16>, #blocked>
[tritongpu-coalesce]: axis info of pointer: contiguity = [8]
[tritongpu-coalesce]: perThread: 4
[tritongpu-coalesce]: Considering op: %11 = tt.load %10 : tensor<256x!tt.ptr<i8>, #blocked>
[tritongpu-coalesce]: axis info of pointer: contiguity = [16], divisibility = [8], constancy = [1], constant_value = <none>
[tritongpu-coalesce]: perThread: 16
[tritongpu-coalesce]: Considering op: %13 = tt.load %12 : tensor<128x!tt.ptr<f32>, #blocked>
[tritongpu-coalesce]: axis info of pointer: divisibility = [16]
[tritongpu-coalesce]: perThread: 4
[tritongpu-coalesce]: Considering op: %15 = tt.load %14 : tensor<128x!tt.ptr<f32>, #blocked>
[tritongpu-coalesce]: perThread: 4
[tritongpu-coalesce]: Considering op: %17 = tt.load %16 : tensor<128x!tt.ptr<f32>, #blocked>
[tritongpu-coalesce]: axis info of pointer: contiguity = [4], divisibility = [16], constancy = [1], constant_value = <none>
[tritongpu-coalesce]: Considering op: tt.store %18, %19 : !tt.ptr<f32>
[tritongpu-coalesce]: axis info of pointer: contiguity = [1], divisibility = [16], constancy = [1], constant_value = <none>
[tritongpu-coalesce]: perThread: 1
"""


def test_coalesce_blocks_with_odd_orders_and_missing_fields() -> None:
    """Coalesce-log blocks (``lib/Dialect/TritonGPU/Transforms/Coalesce.cpp``) at the edges: a column-major 2-D access
    (``order=[0, 1]``: dimension 0 is the fastest), an axis line without divisibility or without contiguity, 8-bit
    elements capped by alignment, blocks missing the axis or perThread line, and a scalar store (no pointer tensor).
    Vector bits = min(perThread, contiguity, alignment in elements) x element bits, at most 128."""
    from irdiff.diagnose.facts import _coalesce_accesses, coalesce_facts

    blocks = _coalesce_accesses(LOG3)
    assert [(b.get("contiguity"), b.get("divisibility"), b.get("per_thread")) for b in blocks] == [
        ([4, 1], [16, 4], 4),
        ([8], [], 4),
        ([16], [8], 16),
        ([], [16], 4),  # no contiguity printed: none known
        (None, None, 4),
        ([4], [16], None),
        ([1], [16], 1),
    ]
    acc = coalesce_facts(LOG3, {})
    assert [(a.shape, a.elem, a.order, a.vector_bits, a.name, a.pointer) for a in acc] == [
        ([64, 32], "f32", [0, 1], 128, "", ""),  # along dimension 0: 4 contiguous, 16-byte aligned f32
        ([128], "f16", [], 16, "", ""),  # no divisibility: the element's own 2-byte alignment, 1 f16
        ([256], "i8", [], 64, "", ""),  # 16 contiguous i8, but 8-byte alignment: 8 x 8 bits
        ([128], "f32", [], 32, "", ""),  # no contiguity: 1 element
    ]  # the blocks without axis info or perThread, and the scalar store, are left out


# TTGIR allocations as Triton prints them (3.5+ slices rings with ``ttg.memdesc_index``; older releases with
# ``ttg.memdesc_subview``), a TMA destination tile used whole, barriers, and a Blackwell TMA gather
_BUFFERS_TTGIR = """\
module attributes {"ttg.num-warps" = 4 : i32} {
  tt.func public @k(%desc: !tt.tensordesc<1x128xbf16>, %xs: tensor<32xi32, #blocked>, %v: tensor<2x16xf32, #blocked1>) {
    %c0_i32 = arith.constant 0 : i32
    %true = arith.constant true
    %a = ttg.local_alloc : () -> !ttg.memdesc<3x64x32xf16, #shared, #smem, mutable>
    %a0 = ttg.memdesc_subview %a[%c0_i32, %c0_i32, %c0_i32] : !ttg.memdesc<3x64x32xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x32xf16, #shared, #smem, mutable, 3x64x32>
    %t = ttg.local_alloc : () -> !ttg.memdesc<32x128xbf16, #shared, #smem, mutable>
    %bar = ttg.local_alloc : () -> !ttg.memdesc<1xi64, #shared2, #smem, mutable>
    %bars = ttg.local_alloc : () -> !ttg.memdesc<2x1xi64, #shared2, #smem, mutable>
    ttng.async_tma_gather %desc[%xs, %c0_i32] %t, %bar, %true : !tt.tensordesc<1x128xbf16>, tensor<32xi32, #blocked>, i32, !ttg.memdesc<1xi64, #shared2, #smem, mutable>, !ttg.memdesc<32x128xbf16, #shared, #smem, mutable>, i1
    %w = ttg.local_alloc %v : (tensor<2x16xf32, #blocked1>) -> !ttg.memdesc<2x16xf32, #shared1, #smem>
    %w0 = ttg.memdesc_index %w[%c0_i32] : !ttg.memdesc<2x16xf32, #shared1, #smem> -> !ttg.memdesc<16xf32, #shared1, #smem>
    %s = ttg.local_alloc : () -> !ttg.memdesc<128xf32, #shared1, #smem, mutable>
    %col = ttg.local_alloc : () -> !ttg.memdesc<64x1xf32, #shared1, #smem, mutable>
    %idx = ttg.local_alloc : () -> !ttg.memdesc<2x64xi64, #shared1, #smem, mutable>
    tt.return
  }
}
"""


def test_buffers_rings_barriers_and_tma_gathers_in_ttgir() -> None:
    """Shared-memory allocations of TTGIR (``ttg.local_alloc``) as buffers: a ring only when mutable, uninitialized,
    at least 2-D and sliced per slot (``memdesc_index``/``memdesc_subview``); ``Nx1xi64`` / ``1xi64`` allocations are
    mbarriers and left out; bytes = product of the dims x element bits / 8. A TMA gather counts as a TMA copy."""
    from irdiff.diagnose.facts import _walk_mlir, ttgir_memory_facts

    ops, _ = _walk_mlir(_BUFFERS_TTGIR, "ttgir")
    mem = ttgir_memory_facts(ops)
    assert [(b.depth, b.tile, b.elem, b.bytes, b.ref.line) for b in mem.buffers] == [
        (3, [64, 32], "f16", 12288, 5),  # a ring of 3, sliced by memdesc_subview (Triton before 3.5)
        (1, [32, 128], "bf16", 8192, 7),  # mutable but used whole (the gather's destination): one buffer
        (1, [2, 16], "f32", 128, 11),  # initialized from a tensor (immutable), even though it is indexed
        (1, [128], "f32", 512, 13),  # 1-D: never a ring
        (1, [64, 1], "f32", 256, 14),  # a data buffer whose last dimension is 1
        (1, [2, 64], "i64", 1024, 15),  # i64 data, not a barrier
    ]
    lines = _BUFFERS_TTGIR.splitlines()
    assert [(r.line, r.text) for r in mem.tma_copies] == [(10, lines[9].strip())]
    assert [r.line for r in mem.async_copies_prologue] == [10] and mem.async_copies_loop == []


_DIVS_TTIR = """\
#loc = loc("/k.py":3:0)
module {
  tt.func public @k(%a: i64 loc("a"(#loc)), %b: i64 loc("b"(#loc))) attributes {noinline = false} {
    %q = arith.floordivsi %a, %b : i64 loc(#loc1)
    %r = arith.ceildivsi %a, %b : i64 loc(#loc2)
    %s = arith.divsi %a, %b : i64 loc(#loc2)
    %t = arith.floordivsi %x, %y : i32 loc(#loc2)
    tt.return loc(#loc2)
  } loc(#loc)
} loc(#loc)
#loc1 = loc("/k.py":4:8)
#loc2 = loc("/k.py":5:8)
"""


def test_64_bit_divisions_of_every_rounding() -> None:
    """64-bit division/remainder ops in TTIR, of every rounding the arith dialect has (``floordivsi``/``ceildivsi``
    as other MLIR producers or rewrites print them, https://mlir.llvm.org/docs/Dialects/ArithOps/); a 32-bit one is
    not counted."""
    from irdiff.diagnose.facts import _walk_mlir, ttir_int_width_facts

    ops, _ = _walk_mlir(_DIVS_TTIR, "ttir")
    src = "import triton\n\ndef k(a, b):\n    q = a // b\n    r = -(-a // b)\n"
    n, first, py, divrem = ttir_int_width_facts(_DIVS_TTIR, ops, "/k.py", src)
    assert [(r.line, r.text.split(" = ")[1].split()[0]) for r in divrem] == [
        (4, "arith.floordivsi"),
        (5, "arith.ceildivsi"),
        (6, "arith.divsi"),
    ]
    assert n == 3 and first is not None and first.line == 4 and py == Ref("python", 4, "q = a // b")


def _numbered_ttir(body: list[str]) -> str:
    return (
        "module {\n  tt.func public @k(%n: i32, %x_ptr: !tt.ptr<f32>) {\n"
        + "".join(f"    {b}\n" for b in body)
        + ("    tt.return\n  }\n}\n")
    )


def test_backward_walks_40_definitions_and_past_a_diamond() -> None:
    """The definition walk behind an address's / mask's kernel parameters: 40 steps (a parameter 39 definitions away
    is reached, 40 away is not), and a value reached twice (a diamond: ``pid`` in ``pid * 4 + (pid + n)``) does not
    stop the rest of its level."""
    from irdiff.diagnose.facts import _backward, _Op, _walk_mlir

    def defs_of(text: str) -> dict[str, _Op]:
        ops, _ = _walk_mlir(text, "ttgir")
        return {r: op for op in ops for r in op.results}

    diamond = _numbered_ttir(
        [
            "%pid = tt.get_program_id x : i32",
            "%c4_i32 = arith.constant 4 : i32",
            "%a = arith.muli %pid, %c4_i32 : i32",
            "%b = arith.addi %pid, %n : i32",
            "%v = arith.addi %a, %b : i32",
        ]
    )
    ops, found = _backward(defs_of(diamond), "%v", {"n", "x_ptr"})
    assert found == ["n"] and [o.results[0] for o in ops] == ["%v", "%a", "%b", "%pid", "%c4_i32"]

    def chain(k: int) -> str:  # %v0 <- %v1 <- ... <- %v(k-1) <- %n: the parameter is k steps away
        body = [f"%v{i} = arith.addi %v{i + 1}, %v{i + 1} : i32" for i in range(k - 1)]
        return _numbered_ttir([f"%v{k - 1} = arith.addi %n, %n : i32", *body[::-1]])

    assert _backward(defs_of(chain(39)), "%v0", {"n"})[1] == ["n"]
    assert _backward(defs_of(chain(40)), "%v0", {"n"})[1] == []


def test_load_nested_in_an_expression_is_looked_for_39_ops_ahead() -> None:
    """A load whose value a later op of the same name stem uses is nested in that expression (named by its pointer);
    the later op is looked for among the next 39 ops."""
    from irdiff.diagnose.facts import _load_name, _walk_mlir

    def name_with_use_after(k: int) -> str:
        filler = [f"%f{j} = arith.addi %n, %n : i32" for j in range(k - 1)]
        body = [
            "%acc = tt.load %a_ptrs : tensor<64x!tt.ptr<f32>>",
            *filler,
            "%acc_3 = arith.addf %acc, %acc : tensor<64xf32>",
        ]
        ops, _ = _walk_mlir(
            _numbered_ttir(["%a_ptrs = tt.splat %x_ptr : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>", *body]), "ttir"
        )
        i = next(j for j, o in enumerate(ops) if o.op == "tt.load")
        assert ops[i + k].results == ["%acc_3"]
        return _load_name(ops, i, "a_ptrs")

    assert [name_with_use_after(k) for k in (1, 39, 40)] == ["a_ptrs", "a_ptrs", "acc"]


def _loops_ttgir(loops: list[tuple[str, str, list[str]]]) -> str:
    """TTGIR of consecutive top-level loops, each ``(loc, attributes after its closing brace, body lines)``."""
    out = ["module {", "  tt.func public @k(%n: i32, %m4: i32) {"]
    for loc, attrs, body in loops:
        out += [
            "    scf.for %i = %c0_i32 to %n step %c1_i32  : i32 {",
            *(f"      {b}" for b in body),
            "      scf.yield",
        ]
        out.append(f"    }} {attrs} loc({loc})" if attrs else f"    }} loc({loc})")
    return "\n".join([*out, "    tt.return", "  }", "}"])


def test_unrolled_loop_pairs_need_the_same_python_for_and_a_smaller_remainder() -> None:
    """Which consecutive loops are an unrolled loop and its remainder (``triton-loop-unroll``): the same ``loc`` (one
    Python ``for``), the second marked ``tt.num_stages = 1`` and smaller. The factor is the ratio of memory/dot ops, or
    of all ops when the remainder has none."""
    from irdiff.diagnose.facts import _walk_mlir

    load, add = "%v = tt.load %p : tensor<64x!tt.ptr<f32>, #blocked>", "%j = arith.addi %i, %c1_i32 : i32"
    one = "{tt.num_stages = 1 : i32}"

    def marks(loops: list[tuple[str, str, list[str]]]) -> list[tuple[int, bool]]:
        _, found = _walk_mlir(_loops_ttgir(loops), "ttgir")
        return [(lp.unroll, lp.remainder) for lp in found]

    # two Python `for`s (different locs): not a pair, however the second is marked and sized
    assert marks([("#loc5", "", [load, load]), ("#loc6", one, [load])]) == [(1, False), (1, False)]
    # a pair from one `for` without the mark, then an unrolled pair: the later pair is still found
    three = [("#loc5", "", [load] * 4), ("#loc5", "", [load] * 4), ("#loc5", one, [load])]
    assert marks(three) == [(1, False), (4, False), (1, True)]
    # no memory op in the remainder: all ops count ((6 + 1) / (2 + 1) = 2, with the yield)
    assert marks([("#loc5", "", [add] * 6), ("#loc5", one, [add] * 2)]) == [(2, False), (1, True)]
    # a marked second loop as large as the first is not a remainder
    assert marks([("#loc5", "", [load, add]), ("#loc5", one, [load, add])]) == [(1, False), (1, False)]


# TTGIR (sm80, locs stripped) of values that come out of loops, branches and selects, for address_strides: ``%a``/``%b``
# are the pointers ``p``/``q`` a loop carries (``p += 64``: a uniform step; ``q += offs``: moved by a tensor), ``%o`` an
# offset carried the same way as ``p``; ``%u`` starts from a load of indices, ``%t`` is moved by a tensor; ``%wt`` is
# a while loop's result; the scalars at the end (a while, an execute_region, an index_switch, an unsplat) are not
# followed through (region ops) or are uniform (scalars)
_P1 = "tensor<64x!tt.ptr<i32>, #ttg.slice<{dim = 0, parent = #blocked}>>"
_B1 = "tensor<64xi1, #ttg.slice<{dim = 0, parent = #blocked}>>"


def _cross(v: str) -> str:
    """``v[:, None] + v[None, :]`` for a 64-element ``v``: ``%<v>_q`` (``v`` is walked twice, once per axis)."""
    n = v.lstrip("%")
    return f"""    %{n}_e1 = tt.expand_dims {v} {{axis = 1 : i32}} : {_S0} -> {_T1}
    %{n}_e0 = tt.expand_dims {v} {{axis = 0 : i32}} : {_S0} -> {_T0}
    %{n}_b1 = tt.broadcast %{n}_e1 : {_T1} -> {_T2}
    %{n}_b0 = tt.broadcast %{n}_e0 : {_T0} -> {_T2}
    %{n}_q = arith.addi %{n}_b1, %{n}_b0 : {_T2}
"""


_CARRIED_TTGIR = f"""{_BLOCK}
module attributes {{"ttg.num-warps" = 4 : i32, ttg.target = "cuda:80", "ttg.threads-per-warp" = 32 : i32}} {{
  tt.func public @k(%x_ptr: !tt.ptr<i32> {{tt.divisibility = 16 : i32}}, %N: i32, %flag: i1, %lo: i32, %hi: i32) {{
    %c1_i32 = arith.constant 1 : i32
    %cst = arith.constant dense<64> : {_S0}
    %cst_0 = arith.constant dense<4> : {_S0}
    %cst_1 = arith.constant dense<0> : {_S0}
    %offs = tt.make_range {{end = 64 : i32, start = 0 : i32}} : {_S0}
    %off4 = arith.muli %offs, %cst_0 : {_S0}
    %nn = tt.splat %N : i32 -> {_S0}
    %offn = arith.addi %offs, %nn : {_S0}
    %base = tt.splat %x_ptr : !tt.ptr<i32> -> {_P1}
    %p0 = tt.addptr %base, %offs : {_P1}, {_S0}
    %mask = tt.splat %flag : i1 -> {_B1}
    %idx = tt.load %p0, %mask, %cst_1 : {_P1}
    %r:3 = scf.for %i = %lo to %hi step %c1_i32 iter_args(%a = %p0, %b = %p0, %o = %offs) -> ({_P1}, {_P1}, {_S0})  : i32 {{
      %v = tt.load %a : {_P1}
      %an = tt.addptr %a, %cst : {_P1}, {_S0}
      %bn = tt.addptr %b, %offs : {_P1}, {_S0}
      %on = arith.addi %o, %cst : {_S0}
      scf.yield %an, %bn, %on : {_P1}, {_P1}, {_S0}
    }}
    %r2 = arith.addi %r#2, %r#2 : {_S0}
    %s = scf.for %i = %lo to %hi step %c1_i32 iter_args(%u = %idx) -> ({_S0})  : i32 {{
{_cross("%u")}      %un = arith.addi %u, %cst : {_S0}
      scf.yield %un : {_S0}
    }}
    %s2 = scf.for %i = %lo to %hi step %c1_i32 iter_args(%t = %offs) -> ({_S0})  : i32 {{
{_cross("%t")}      %tn = arith.addi %t, %offs : {_S0}
      scf.yield %tn : {_S0}
    }}
    %f:2 = scf.if %flag -> ({_S0}, {_S0}) {{
      scf.yield %offs, %offs : {_S0}, {_S0}
    }} else {{
      scf.yield %offn, %off4 : {_S0}, {_S0}
    }}
    %f2 = arith.addi %f#0, %f#0 : {_S0}
    %sel = arith.select %flag, %offs, %offn : {_S0}
    %sel_0 = arith.select %flag, %offs, %off4 : {_S0}
    %wt = scf.while (%wa = %offs) : ({_S0}) -> {_S0} {{
      %wc = arith.cmpi slt, %N, %N : i32
      scf.condition(%wc) %wa : {_S0}
    }} do {{
    ^bb0(%wb: {_S0}):
      scf.yield %wb : {_S0}
    }}
{_cross("%wt")}    %w = scf.while (%wa_0 = %c1_i32) : (i32) -> i32 {{
      %wc_0 = arith.cmpi slt, %wa_0, %N : i32
      scf.condition(%wc_0) %wa_0 : i32
    }} do {{
    ^bb0(%wb_0: i32):
      scf.yield %wb_0 : i32
    }}
    %er = scf.execute_region -> i32 {{
      scf.yield %c1_i32 : i32
    }}
    %ix = arith.index_cast %N : i32 to index
    %sw = scf.index_switch %ix -> i32
    case 0 {{
      scf.yield %c1_i32 : i32
    }}
    default {{
      scf.yield %N : i32
    }}
    %t1 = tt.splat %N : i32 -> tensor<1xi32, #blocked>
    %us = tt.unsplat %t1 : tensor<1xi32, #blocked> -> i32
    %hint = arith.addi %N, %N {{tt.hint = dense<1> : tensor<1xi32>}} : i32
    tt.return
  }}
}}
"""


def _carried_strides(value: str, rank: int, text: str = _CARRIED_TTGIR) -> list[int | None] | None:
    from irdiff.diagnose.facts import _walk_mlir, address_strides

    ops, _ = _walk_mlir(text, "ttgir")
    return address_strides({r: o for o in ops for r in o.results}, value, rank)


def test_address_strides_through_loops_branches_and_selects() -> None:
    """Element strides (per dimension, in elements) of the values of ``_CARRIED_TTGIR``: a loop-carried value has its
    initial value's strides when the body yields them back, an ``scf.if`` result (``%f#k``: result k) and an
    ``arith.select`` have the strides both sides agree on; None where the chain leaves what is modelled."""
    assert _carried_strides("%a", 1) == [1]  # p inside the loop: p0 = x_ptr + offs, advanced by 64 each iteration
    assert _carried_strides("%v", 1) is None  # a loaded value is not an address chain
    assert _carried_strides("%b", 1) is None  # q += offs: the strides change every iteration
    assert [_carried_strides(f"%r#{k}", 1) for k in range(3)] == [[1], None, [1]]  # the loop's results, by index
    assert _carried_strides("%r", 1) == [1]  # no index: result 0
    assert _carried_strides("%r2", 1) == [2]  # the same loop result reached twice
    assert _carried_strides("%s", 1) is None and _carried_strides("%u_q", 2) is None  # starts from loaded indices
    assert _carried_strides("%s2", 1) is None and _carried_strides("%t_q", 2) is None  # moved by a tensor
    assert [_carried_strides(f"%f#{k}", 1) for k in range(2)] == [[1], None]  # branches agree / disagree (1 vs 4)
    assert _carried_strides("%f2", 1) == [2]  # the same branch result reached twice
    assert _carried_strides("%sel", 1) == [1] and _carried_strides("%sel_0", 1) is None  # select: agree / disagree
    assert _carried_strides("%idx", 1) is None  # a load with a mask and an `other` (3 operands) is not a select
    assert _carried_strides("%wt", 1) is None and _carried_strides("%wt_q", 2) is None  # a while loop: not followed
    # region ops are not followed even when their result is a scalar; a scalar op is uniform (0 in every dimension)
    assert [_carried_strides(v, 1) for v in ("%w", "%er", "%sw")] == [None, None, None]
    assert [_carried_strides(v, 2) for v in ("%c1_i32", "%us", "%hint")] == [[0, 0]] * 3


def test_address_strides_of_malformed_regions() -> None:
    """Text that is not whole (a fragment cut inside a loop) or that names results a region op does not have:
    None, never an exception. Strides in elements."""
    head = f"    %offs = tt.make_range {{end = 64 : i32, start = 0 : i32}} : {_S0}\n"
    loop = f"    %r = scf.for %i = %lo to %hi step %c1 iter_args(%t = %offs) -> ({_S0})  : i32 {{\n"
    # cut before its yield: the body cannot be checked
    assert _carried_strides("%t", 1, head + loop + f"      %q = arith.addi %t, %offs : {_S0}\n") is None
    whole = head + loop + f"      scf.yield %t : {_S0}\n    }}\n"
    assert _carried_strides("%r", 1, whole) == [1] and _carried_strides("%r#1", 1, whole) is None
    # a yield with no value for the carried one
    assert _carried_strides("%r", 1, head + loop + "      scf.yield\n    }\n") is None
    # a result without iter_args
    assert _carried_strides("%r", 1, head + "    %r = scf.for %i = %lo to %hi step %c1 : i32 {\n    }\n") is None
    branch = f"    %f = scf.if %c -> ({_S0}) {{\n      scf.yield %offs : {_S0}\n    }} else {{\n"
    branch += f"      scf.yield %offs : {_S0}\n    }}\n"
    assert _carried_strides("%f", 1, head + branch) == [1] and _carried_strides("%f#1", 1, head + branch) is None
    # an op printed without its type: no tensor type, so a scalar
    assert _carried_strides("%n", 1, "    %n = arith.addi %a, %b\n") == [0]


def _depth_chain(kind: str, n: int) -> list[int | None] | None:
    """Strides of the top of ``n`` ``kind`` steps above ``%v0 = tt.make_range`` (stride 1): ``init`` (a loop whose
    initial value is the step below, yielded back unchanged), ``yield`` (a loop that starts from the arange and
    yields the step below), ``if`` (both branches yield the step below), ``sel1``/``sel2`` (a select with the step
    below as its first/second choice, the arange as the other)."""
    lines = [f"%v0 = tt.make_range {{end = 64 : i32, start = 0 : i32}} : {_S0}"]
    for k in range(1, n + 1):
        below = f"%v{k - 1}"
        if kind in ("init", "yield"):
            init, back = (below, f"%a{k}") if kind == "init" else ("%v0", below)
            lines.append(f"%v{k} = scf.for %i = %lo to %hi step %c1 iter_args(%a{k} = {init}) -> ({_S0}) : i32 {{")
            lines += [f"  scf.yield {back} : {_S0}", "}"]
        elif kind == "if":
            lines.append(f"%v{k} = scf.if %c -> ({_S0}) {{")
            lines += [f"  scf.yield {below} : {_S0}", "} else {", f"  scf.yield {below} : {_S0}", "}"]
        else:
            a, b = (below, "%v0") if kind == "sel1" else ("%v0", below)
            lines.append(f"%v{k} = arith.select %c, {a}, {b} : {_S0}")
    return _carried_strides(f"%v{n}", 1, "\n".join(lines) + "\n")


def test_address_strides_depth_limit() -> None:
    """A chain is followed 60 steps deep (one step per loop, branch or select), not 61: the same limit through
    every kind of step. Where the arange is reached first from the top (a loop's initial value, a select's first
    choice) the step above it is the last one counted: 61 steps."""
    for kind in ("init", "if", "sel1"):
        assert (_depth_chain(kind, 60), _depth_chain(kind, 61)) == ([1], None), kind
    for kind in ("yield", "sel2"):
        assert (_depth_chain(kind, 61), _depth_chain(kind, 62)) == ([1], None), kind


def test_walk_mlir_regions_of_fragments() -> None:
    """``_walk_mlir`` on text that is not a whole module: a fragment that starts inside a region (a ``}`` with none
    open), a branch with no function around it (its yields still belong to it), comment lines that end in a brace
    (skipped), a loop closed with its attributes right after the brace and no ``loc``, a loop never closed."""
    from irdiff.diagnose.facts import _walk_mlir

    ops, loops = _walk_mlir("  }\n}\n%x = arith.addi %a, %b : i32\n", "ttgir")
    assert ([(o.line, o.op, o.results) for o in ops], loops) == ([(3, "arith.addi", ["%x"])], [])
    branch = "%r = scf.if %c -> (i32) {\n  scf.yield %a : i32\n} else {\n  scf.yield %b : i32\n}\n"
    for text in (branch, "module {\n" + branch + "}\n"):
        ops, _ = _walk_mlir(text, "ttgir")
        assert [y.text for y in ops[0].yields] == ["scf.yield %a : i32", "scf.yield %b : i32"]
    loop = "scf.for %i = %lo to %hi step %c1 : i32 {\n  // the body {\n  # {\n  %x = arith.addi %a, %b : i32\n"
    ops, loops = _walk_mlir(loop + "}{tt.num_stages = 1 : i32}\n", "ttir")
    (lf,) = loops
    assert (lf.end_line, lf.attrs, lf.loc, lf.flatten, ops[1].loop) == (5, "{tt.num_stages = 1 : i32}", "", False, lf)
    _, (lf,) = _walk_mlir(loop, "ttir")  # cut inside the loop
    assert (lf.end_line, lf.attrs, lf.loc) == (0, "", "") and lf.flatten is False
